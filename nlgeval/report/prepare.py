"""First stage of the validation study: metric scores and human scores, ready to correlate.

:func:`prepare_scores` scores every metric on the rated outputs
(:func:`nlgeval.metrics.scoring.score_corpus`, with its cache) or takes given segment scores,
joins metric scores computed elsewhere (:mod:`nlgeval.scores`), records which metrics are
lower-is-better, drops the systems whose outputs *are* the references (a reference-based metric
scores them perfectly by construction) and aggregates the human ratings per output (mean over
raters, optionally of per-rater z-scores, as WMT Direct Assessment; Graham et al. 2013).
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from nlgeval.corpus import Corpus
from nlgeval.errors import InputError
from nlgeval.report.binding import bind_metrics
from nlgeval.report.exclusions import (
    check_systems,
    exclusion_line,
    has_texts,
    human_ceiling_notes,
    left_out,
    match_name,
    reference_check_text,
    reference_like,
    reference_like_notes,
)
from nlgeval.report.settings import ValidationSettings
from nlgeval.results import Result

#: The default metric set of ``nlgeval validate`` (those of them the metrics package offers).
DEFAULT_METRICS: tuple[str, ...] = (
    "bleu", "chrf", "chrf++", "ter", "rouge1", "rouge2", "rougeL", "nist",
)


@dataclass(frozen=True)
class ScoreInputs(Result):
    """Data given to the study instead of (or next to) nlgeval's own metrics.

    ``segment_scores`` (``metric, system, item, score``) replaces scoring (then every metric
    counts as higher-is-better unless ``higher_is_better`` says otherwise), optionally with
    ``corpus_scores`` (``system, metric, score``) and ``signatures``; ``scores`` are metric
    scores computed elsewhere (COMET, BLEURT, an LLM judge, ...) in any frame
    :func:`nlgeval.scores.tidy_scores` accepts.

    Examples
    --------
    >>> ScoreInputs(higher_is_better={"ter": False}).higher_is_better
    {'ter': False}
    """

    segment_scores: pd.DataFrame | None = None
    corpus_scores: pd.DataFrame | None = None
    higher_is_better: Mapping[str, bool] = field(default_factory=dict)
    signatures: Mapping[str, str] = field(default_factory=dict)
    scores: pd.DataFrame | None = None


@dataclass(frozen=True)
class PreparedScores(Result):
    """Output of :func:`prepare_scores`: everything the later stages correlate.

    ``segments``: ``metric, system, item, score`` (system/item as text); ``corpus_scores``:
    corpus-level scores where a metric has them; ``systems``: the systems correlated (sorted,
    references excluded); ``human``: ``system, item, criterion, score`` per output;
    ``rated_items``: sorted items rated for those systems.

    Examples
    --------
    >>> import pandas as pd
    >>> p = PreparedScores(pd.DataFrame(), pd.DataFrame(), ["m"], {}, {"m": True}, [], [],
    ...                    ["A"], [], pd.DataFrame(), [], ["x"])
    >>> p.metrics, p.criteria
    (['m'], ['x'])
    """

    segments: pd.DataFrame
    corpus_scores: pd.DataFrame
    metrics: list[str]
    signatures: dict[str, str]
    higher_is_better: dict[str, bool]
    system_only: list[str]
    notes: list[str]
    systems: list[str]
    excluded: list[str]
    human: pd.DataFrame
    rated_items: list[str]
    criteria: list[str]
    external: dict[str, dict[str, Any]] = field(default_factory=dict)
    bound: dict[str, str] = field(default_factory=dict)  # metric -> its only criterion
    human_systems: list[str] = field(default_factory=list)
    exclusions: list[dict[str, Any]] = field(default_factory=list)
    reference_check: str = ""


def prepare_scores(
    corpus: Corpus, settings: ValidationSettings, inputs: ScoreInputs | None = None
) -> PreparedScores:
    """Metric and human scores of ``corpus`` as the study uses them (module docstring).

    Examples
    --------
    >>> from nlgeval.corpora import load_corpus
    >>> c = load_corpus("e2e")
    >>> c = c.subset(items=c.items[:40])  # 40 inputs, every system: a quick example
    >>> p = prepare_scores(c, ValidationSettings(metrics=["bleu"]))
    >>> p.metrics, len(p.systems) > 1, sorted(p.human.columns)
    (['bleu'], True, ['criterion', 'item', 'n_raters', 'score', 'system'])
    """
    inputs = inputs or ScoreInputs()
    notes: list[str] = list(corpus.notes)
    criteria = _criteria(corpus, settings)
    seg, cs, sigs, hib, metrics = _metric_scores(corpus, settings, inputs)
    hib.update({k: bool(v) for k, v in inputs.higher_is_better.items()})
    external: dict[str, dict[str, Any]] = {}
    system_only: list[str] = []
    ext = None
    if inputs.scores is not None:
        seg, cs, metrics, system_only, external, ext = _add_external(
            corpus, inputs.scores, seg, cs, metrics, sigs, hib, settings.min_coverage, notes)
    if not metrics:
        raise InputError("no metrics to validate: name metrics to compute (--metrics) or give "
                         "metric scores (--scores)")
    for name in settings.lower_is_better:
        hib[match_name(name, metrics, "metric", "--lower-is-better")] = False
    for name in settings.epsilon:  # looked up by exact name: a typo would calibrate silently
        if match_name(name, metrics, "metric", "--epsilon") != name:
            raise InputError(f"--epsilon: metric '{name}' is spelt "
                             f"'{match_name(name, metrics, 'metric')}' in this study")
    seg = seg.assign(system=_as_text(seg["system"]), item=_as_text(seg["item"]))
    bad = ~np.isfinite(seg["score"].astype(float))
    if bad.any():
        notes.append(f"{int(bad.sum())} metric score(s) were missing/NaN and were left out")
    bound = bind_metrics(ext.bound if ext is not None else {}, settings.bind, metrics,
                         corpus.criteria, criteria, notes)
    sign = seg["metric"].map(lambda m: 1.0 if hib.get(m, True) else -1.0).astype(float)
    left = _left_out(corpus, settings, ext, seg.assign(score=seg["score"] * sign), metrics,
                     system_only, notes)  # (oriented: a reference scores like the best)
    excluded = [r["system"] for r in left.records]
    # canonical (sorted) order of systems and items: resampling and permutation draws index
    # the (systems x items) matrices, so this makes every number independent of row order
    systems = sorted(s for s in corpus.systems if s not in excluded)
    human = corpus.human_scores(normalise=settings.normalise,  # type: ignore[arg-type]  # checked by the settings
                                criteria=criteria)
    human = human.assign(system=_as_text(human["system"]), item=_as_text(human["item"]))
    notes += human_ceiling_notes(human, criteria, left.human, systems)
    rated_items = sorted(pd.unique(human.loc[human["system"].isin(systems), "item"]).tolist())
    return PreparedScores(seg, cs, list(metrics), dict(sigs), hib, list(system_only), notes,
                          systems, excluded, human, rated_items, criteria, external, bound,
                          left.human, left.records, left.check)


def _as_text(column: pd.Series) -> pd.Series:
    """``column.astype(str)``; a categorical without missing values by taking each row's
    category string (one string per category, then one array take: the typed score files of
    millions of rows), the same values and dtype."""
    if isinstance(column.dtype, pd.CategoricalDtype):
        codes = column.cat.codes.to_numpy()
        if len(codes) and codes.min() >= 0:
            names = column.cat.categories.astype(str)
            return pd.Series(names.take(codes), index=column.index, name=column.name)
    return column.astype(str)


@dataclass(frozen=True)
class _LeftOut:
    records: list[dict[str, Any]]
    human: list[str]
    check: str


def _left_out(
    corpus: Corpus, settings: ValidationSettings, ext: Any, seg: pd.DataFrame,
    metrics: list[str], system_only: list[str], notes: list[str],
) -> _LeftOut:
    """The systems left out of the correlations and why (:mod:`nlgeval.report.exclusions`);
    warns about systems scored like references that nobody left out."""
    known = list(corpus.systems)
    human = check_systems(settings.human_systems, known, "--human-systems")
    human = sorted(set(human) | set(ext.human_systems if ext is not None else ()))
    asked = check_systems(settings.exclude_systems or (), known, "--exclude-systems")
    keep = settings.keep_reference_systems or settings.exclude_systems == ()
    ran = has_texts(corpus.outputs, corpus.references)
    found = reference_systems(corpus) if ran else []
    records = left_out(known, None if keep else found, asked, human)
    check = reference_check_text(ran, found, keep)
    notes.append(exclusion_line(records, check))
    gone = {r["system"] for r in records}
    per_output = [m for m in metrics if m not in system_only]
    flagged = reference_like(seg, [s for s in known if s not in gone], per_output)
    for msg in reference_like_notes(flagged):
        warnings.warn(msg, UserWarning, stacklevel=4)
        notes.append(msg)
    return _LeftOut(records, human, check)


def _criteria(corpus: Corpus, settings: ValidationSettings) -> list[str]:
    if corpus.ratings.empty:
        raise InputError(f"corpus '{corpus.name}' has no human ratings to validate against")
    all_criteria = corpus.criteria
    if settings.criteria is None:
        return list(all_criteria)
    return list(dict.fromkeys(match_name(c, all_criteria, "criterion", "--criteria")
                              for c in settings.criteria))


def _metric_scores(
    corpus: Corpus, settings: ValidationSettings, inputs: ScoreInputs
) -> tuple[pd.DataFrame, pd.DataFrame, dict[str, str], dict[str, bool], list[str]]:
    """nlgeval's own metric scores, or the given segment scores."""
    metrics = settings.metrics
    if inputs.segment_scores is None:
        if metrics is None:
            from nlgeval.metrics import available_metrics

            avail = set(available_metrics())
            metrics = tuple(m for m in DEFAULT_METRICS if m in avail)
        if metrics:
            return _score_metrics(corpus, list(metrics), settings.cache, settings.cache_dir)
        return (pd.DataFrame(columns=["metric", "system", "item", "score"]),
                pd.DataFrame(columns=["system", "metric", "score", "signature"]), {}, {}, [])
    seg = inputs.segment_scores.copy()
    miss = [c for c in ("metric", "system", "item", "score") if c not in seg.columns]
    if miss:
        raise InputError(f"segment_scores needs columns metric, system, item, score; "
                         f"missing {miss}")
    if metrics is None:
        metrics = tuple(dict.fromkeys(seg["metric"]))
    seg = seg[seg["metric"].isin(list(metrics))]
    cs = inputs.corpus_scores if inputs.corpus_scores is not None else pd.DataFrame(
        columns=["system", "metric", "score", "signature"])
    return seg, cs, dict(inputs.signatures), {m: True for m in metrics}, list(metrics)


def _score_metrics(
    corpus: Corpus, metrics: Sequence[str], cache: bool, cache_dir: Any
) -> tuple[pd.DataFrame, pd.DataFrame, dict[str, str], dict[str, bool], list[str]]:
    from nlgeval.metrics import get_metric
    from nlgeval.metrics.registry import metric_labels
    from nlgeval.metrics.scoring import score_corpus

    objs = [get_metric(m) for m in metrics]
    res = score_corpus(corpus, objs, rated_only=True, cache=cache, cache_dir=cache_dir)
    seg = res.segments.copy()
    # score_corpus labels a metric by its name, or by its spec when two share a name; show the
    # user's own spelling where the name is unambiguous -- never a local model folder's path
    # (metric_labels shows it by its public name; the specs as given stay in run.json)
    shown = dict(zip(metric_labels(objs), metric_labels(objs, list(metrics)), strict=True))
    seg["metric"] = seg["metric"].map(lambda n: shown.get(n, n))
    cs = res.corpus_scores.copy()
    cs["metric"] = cs["metric"].map(lambda n: shown.get(n, n))
    sigs = {shown.get(k, k): v for k, v in dict(res.signatures).items()}
    hib = {lab: bool(o.higher_is_better) for o, lab in zip(objs, shown.values(), strict=True)}
    return seg, cs, sigs, hib, list(shown.values())


def _add_external(
    corpus: Corpus, scores: pd.DataFrame, seg: pd.DataFrame, cs: pd.DataFrame,
    metrics: list[str], sigs: dict[str, str], hib: dict[str, bool], min_coverage: float,
    notes: list[str],
) -> tuple[pd.DataFrame, pd.DataFrame, list[str], list[str], dict[str, dict[str, Any]], Any]:
    """Join checked external scores to the computed ones (see :mod:`nlgeval.scores`).

    A system-level-only metric gets its system score copied into every rated output of the
    system, so that the system-level mean over complete cells is exactly that score; it is
    never used at segment or item level.
    """
    from nlgeval.scores import check_scores, tidy_scores

    if "_source" not in scores.columns:
        scores = tidy_scores(scores)
    checked = check_scores(scores, corpus.outputs, corpus.rated_outputs(),
                           builtin=metrics,  # only a metric computed here can clash
                           min_coverage=min_coverage)
    notes.extend(checked.notes)
    frames = [seg[["metric", "system", "item", "score"]], checked.segments]
    rated = corpus.rated_outputs()[["system", "item"]].astype(str)
    for m in checked.system_only:
        sysv = checked.systems[checked.systems["metric"] == m].set_index("system")["score"]
        filled = rated.assign(metric=m, score=rated["system"].map(sysv).astype(float))
        frames.append(filled[["metric", "system", "item", "score"]])
    kept = [f for f in frames if len(f)]
    seg = pd.concat(kept, ignore_index=True) if kept else frames[0]  # none: no metric (below)
    if len(checked.systems):
        extra = checked.systems.assign(signature="external")
        cs = pd.concat([c for c in (cs, extra) if c is not None and len(c)],
                       ignore_index=True)
    external: dict[str, dict[str, Any]] = {}
    for m in checked.metrics:
        src = checked.sources.get(m, "")
        sigs[m] = f"external scores from {Path(src).name}" if src else "external scores"
        if m in checked.higher_is_better:  # the file's higher_is_better column
            hib[m] = checked.higher_is_better[m]
        hib.setdefault(m, True)
        external[m] = {"source": Path(src).name if src else "", "coverage":
                       checked.coverage[m], "n_missing": checked.n_missing[m],
                       "system_level_only": m in checked.system_only}
    return (seg, cs, [*metrics, *checked.metrics], list(checked.system_only), external,
            checked)


def reference_systems(corpus: Corpus, threshold: float = 0.9) -> list[str]:
    """Systems whose outputs equal one of the item's references for >= ``threshold`` of items.

    Such a "system" is the human reference itself (WebNLG's ``WebNLG-2020-reference``): a
    reference-based metric gives it a perfect score by construction, so it is excluded from
    metric-human correlations (as the WebNLG organisers did).

    Parameters
    ----------
    corpus : Corpus
        The corpus (outputs and references).
    threshold : float, default 0.9
        Minimum share of a system's outputs equal (after stripping) to a reference.

    Returns
    -------
    list of str
        The reference-like systems, in sorted order.

    Examples
    --------
    >>> from nlgeval.corpora import load_corpus
    >>> reference_systems(load_corpus("e2e"))
    []
    """
    if corpus.references.empty:
        return []
    refs = corpus.references.assign(norm=corpus.references["text"].str.strip())
    ref_set = set(zip(refs["item"], refs["norm"], strict=True))
    out = corpus.outputs
    hit = np.array([(i, t.strip()) in ref_set for i, t in zip(out["item"], out["text"],
                                                              strict=True)])
    share = pd.Series(hit).groupby(out["system"].to_numpy()).mean()
    return [str(s) for s, v in share.items() if v >= threshold]


def z_ratings(ratings: pd.DataFrame) -> pd.DataFrame:
    """Each rater's scores as z-scores per criterion (WMT Direct Assessment; Graham et al.
    2013); raters with a single score or no spread are left out.

    Examples
    --------
    >>> import pandas as pd
    >>> r = pd.DataFrame({"rater": ["a", "a", "b"], "criterion": "q", "score": [1.0, 3.0, 5.0]})
    >>> z_ratings(r)["score"].tolist()
    [-0.7071067811865475, 0.7071067811865475]
    """
    g = ratings.groupby(["rater", "criterion"])["score"]
    z = (ratings["score"] - g.transform("mean")) / g.transform(lambda s: s.std(ddof=1))
    return ratings.assign(score=z)[np.isfinite(z)]
