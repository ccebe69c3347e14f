"""The validation studies to pool: report folders of ``nlgeval validate``, or corpora run now.

A study is what :func:`nlgeval.report.run_validation` computed on one corpus: the correlations
(``metric, criterion, level, statistic, value, n, ci_low, ci_high``) and the per-output scores
(``system, item, <metric>..., <criterion>...``). :func:`read_study` reads them back from a
report folder (``run.json``, ``correlations.csv``, ``segments.csv``); folders written before
the columns were renamed (``coefficient, r, p, p_corrected`` for ``statistic, value, pvalue,
pvalue_corrected``) are read too, as are frames with those names. :func:`run_corpus_study`
runs the study (Pearson only, no permutation tests) on a named corpus (Reiter & Belz 2009).

:func:`study_effects` turns studies into one tidy table of effects, one row per metric,
construct and study, using the criterion map (:mod:`nlgeval.meta_analysis.criteria`), and
:func:`comparison_table` the paired correlations two metrics need for
:func:`nlgeval.meta_analysis.compare.compare_metrics` (Steiger 1980).
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from nlgeval.deprecation import renamed_keyword
from nlgeval.errors import InputError
from nlgeval.meta_analysis.criteria import CriterionMap
from nlgeval.meta_analysis.effects import fisher_z_variance, variance_from_interval
from nlgeval.results import Result

__all__ = ["LEVELS", "Study", "comparison_table", "read_study", "run_corpus_studies",
           "run_corpus_study", "study_effects"]

#: levels a meta-analysis can pool (correlations of ``nlgeval validate``)
LEVELS = ("segment", "system", "item")
_CORR_COLUMNS = ("metric", "criterion", "level", "statistic", "value", "n")
#: the earlier names of the correlations table's columns, still accepted on input
_EARLIER_NAMES = {"coefficient": "statistic", "r": "value", "p": "pvalue",
                  "p_corrected": "pvalue_corrected"}


def _current_names(corr: pd.DataFrame) -> pd.DataFrame:
    """``corr`` with a column of an earlier name renamed (when the current one is absent)."""
    old = {a: b for a, b in _EARLIER_NAMES.items() if a in corr.columns and b not in corr.columns}
    return corr.rename(columns=old) if old else corr


@dataclass(frozen=True)
class Study(Result):
    """One validation study: its name, corpus, correlations and per-output scores.

    Examples
    --------
    >>> corr = pd.DataFrame({"metric": ["bleu"], "criterion": ["quality"], "level": ["system"],
    ...                      "statistic": ["pearson"], "value": [0.47], "n": [21]})
    >>> Study("e2e", "e2e", corr).corpus
    'e2e'
    """

    name: str
    corpus: str
    correlations: pd.DataFrame
    segments: pd.DataFrame | None = None
    confidence_level: float = 0.95
    source: str = ""
    notes: list[str] = field(default_factory=list)

    _omit = frozenset({"correlations", "segments"})


def read_study(folder: str | Path) -> Study:
    """A report folder written by ``nlgeval validate`` (``run.json``, ``correlations.csv``,
    and ``segments.csv`` when present). A ``correlations.csv`` with the earlier column names
    (``coefficient, r, p, p_corrected``) is read under the current ones (``statistic, value,
    pvalue, pvalue_corrected``).

    Parameters
    ----------
    folder : str or Path
        Output folder of ``nlgeval validate``.

    Returns
    -------
    Study
        The study's name, corpus, correlations and segment scores.

    Examples
    --------
    >>> read_study("no/such/folder")
    Traceback (most recent call last):
    ...
    nlgeval.errors.InputError: no/such/folder/run.json: not a validation study folder \
(run.json of `nlgeval validate` is missing)
    """
    folder = Path(folder)
    run_json = folder / "run.json"
    if not run_json.is_file():
        raise InputError("not a validation study folder (run.json of `nlgeval validate` is "
                         "missing)", file=run_json)
    try:
        record = json.loads(run_json.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise InputError(f"not valid JSON: {exc.msg}", file=run_json, row=exc.lineno) from None
    corr_path = folder / "correlations.csv"
    if not corr_path.is_file():
        raise InputError("missing: a validation study folder has correlations.csv",
                         file=corr_path)
    corr = _current_names(pd.read_csv(corr_path))
    missing = [c for c in _CORR_COLUMNS if c not in corr.columns]
    if missing:
        raise InputError(f"missing column(s) {', '.join(missing)}", file=corr_path,
                         column=missing[0])
    seg_path = folder / "segments.csv"
    segments = pd.read_csv(seg_path) if seg_path.is_file() else None
    settings = record.get("settings", {})
    corpus = str(record.get("corpus") or settings.get("corpus") or folder.name)
    return Study(name=folder.name, corpus=corpus, correlations=corr, segments=segments,
                 confidence_level=float(settings.get("confidence_level", 0.95)),
                 source=str(folder))


def run_corpus_study(corpus: str, metrics: Sequence[str], levels: Sequence[str], *,
                     data_dir: str | Path | None = None, n_resamples: int = 0, seed: int = 0,
                     confidence_level: float = 0.95, cache: bool = True,
                     corpus_obj: Any = None, name: str | None = None,
                     resamples: int | None = None) -> Study:
    """Run the validation study of ``corpus`` now: Pearson correlations at ``levels``,
    ``n_resamples`` bootstrap resamples of items and systems (Deutsch et al. 2021) for the
    intervals, no permutation tests. ``corpus_obj``: an already loaded (sub)corpus of
    ``corpus`` to use instead, pooled as study ``name``. ``resamples``: the earlier name of
    ``n_resamples`` (deprecated).

    Parameters
    ----------
    corpus : str
        Corpus name (see :func:`nlgeval.load_corpus`).
    metrics, levels : sequence of str
        Metrics to score and levels to correlate at.
    data_dir : str or Path, optional
        Folder of the corpora (overrides ``$NLGEVAL_DATA``).
    n_resamples, seed : int, default 0
        Bootstrap resamples and their seed.
    confidence_level : float, default 0.95
        Level of the bootstrap intervals.
    cache : bool, default True
        Reuse cached parsed corpora and scores.
    corpus_obj : Corpus, optional
        Corpus to use instead of loading ``corpus``.
    name : str, optional
        Study name for ``corpus_obj``.
    resamples : int, optional
        Deprecated name of ``n_resamples``.

    Returns
    -------
    Study
        The study with its correlations and segment scores.

    Examples
    --------
    >>> study = run_corpus_study("e2e", ["bleu"], ["system"])
    >>> study.corpus, sorted(set(study.correlations["criterion"]))
    ('e2e', ['naturalness', 'quality'])
    """
    from nlgeval.corpora import load_corpus
    from nlgeval.report import run_validation

    n_resamples = renamed_keyword("run_corpus_study", "resamples", resamples, "n_resamples",
                                  n_resamples)
    corp = corpus_obj if corpus_obj is not None else \
        load_corpus(corpus, Path(data_dir) if data_dir is not None else None)
    study = run_validation(corp, list(metrics), levels=list(levels), coefficients=["pearson"],
                           n_resamples=n_resamples, permutations=0, table9=False, seed=seed,
                           confidence_level=confidence_level, cache=cache)
    return Study(name=name or corpus, corpus=corpus, correlations=study.correlations,
                 segments=study.segments, confidence_level=confidence_level,
                 source=f"corpus {name or corpus}", notes=list(study.notes))


def run_corpus_studies(corpus: str, metrics: Sequence[str], levels: Sequence[str], *,
                       split_by: str | None = None, data_dir: str | Path | None = None,
                       **options: Any) -> list[Study]:
    """:func:`run_corpus_study` on the whole corpus, or (``split_by``, an output column) on
    each of its data sets, named ``corpus:value`` (e.g. the BAGEL, SF-Hotel and
    SF-Restaurant sets of Novikova et al. 2017, rated separately on different inputs).

    Examples
    --------
    >>> [s.name for s in run_corpus_studies("novikova2017", ["bleu"], ["segment"],
    ...                                     split_by="dataset")]
    ['novikova2017:BAGEL', 'novikova2017:SFHOT', 'novikova2017:SFRES']
    """
    if split_by is None:
        return [run_corpus_study(corpus, metrics, levels, data_dir=data_dir, **options)]
    from nlgeval.corpora import load_corpus

    corp = load_corpus(corpus, Path(data_dir) if data_dir is not None else None)
    if split_by not in corp.outputs.columns:
        raise InputError(f"corpus {corpus!r} has no output column {split_by!r} to split by "
                         "(criterion map 'split_by')")
    groups = corp.outputs.groupby(split_by, sort=True)["item"].unique()
    return [run_corpus_study(corpus, metrics, levels, data_dir=data_dir,
                             corpus_obj=corp.subset(items=list(items)),
                             name=f"{corpus}:{value}", **options)
            for value, items in groups.items()]


def study_effects(studies: Sequence[Study], cmap: CriterionMap, *, level: str = "segment",
                  metrics: Sequence[str] | None = None, variance: str = "fisher",
                  related: bool = False, notes: list[str] | None = None) -> pd.DataFrame:
    """One row per metric x construct x study: ``metric, construct, study, corpus, task,
    language, criterion, level, r, n, vi``.

    ``variance="fisher"`` uses ``1/(n - 3)`` (Fisher 1921); ``"bootstrap"`` the study's
    bootstrap interval (which resampled items and systems; needs resamples), as the item level
    always does (its r is a mean of per-item correlations, for which ``1/(n - 3)`` does not
    hold). ``related=True`` adds the map's related criteria of each construct (several
    dependent effects per study, for robust variance estimation). Correlations that cannot be
    pooled are left out with a line in ``notes``; so, without ``metrics``, is a metric that a
    study has no Pearson correlation for at ``level`` (e.g. system-level scores only, pooled
    at segment level) while it has one at another level or another study has it at ``level``.
    A study's correlations may name their columns ``statistic, value`` or, as earlier versions
    did, ``coefficient, r``.

    Parameters
    ----------
    studies : sequence of Study
        The validation studies.
    cmap : CriterionMap
        Which criterion of each corpus measures each construct.
    level : str, default "segment"
        Level of the correlations pooled.
    metrics : sequence of str, optional
        Metrics to keep (default all).
    variance : {"fisher", "bootstrap"}, default "fisher"
        Source of ``vi`` (above).
    related : bool, default False
        Add related criteria (above).
    notes : list of str, optional
        Receives a line per correlation left out.

    Returns
    -------
    DataFrame
        One row per metric, construct and study (columns above).

    Examples
    --------
    >>> from nlgeval.meta_analysis.criteria import load_criterion_map
    >>> corr = pd.DataFrame({"metric": ["bleu"], "criterion": ["naturalness"],
    ...                      "level": ["system"], "statistic": ["pearson"], "value": [0.23],
    ...                      "n": [21]})
    >>> eff = study_effects([Study("e2e", "e2e", corr)], load_criterion_map(), level="system")
    >>> eff[["metric", "construct", "criterion", "r", "n"]].to_dict("records")
    [{'metric': 'bleu', 'construct': 'fluency', 'criterion': 'naturalness', 'r': 0.23, 'n': 21}]
    """
    notes = notes if notes is not None else []
    rows: list[dict[str, Any]] = []
    shared = None if metrics is not None else _metrics_at(studies, cmap, level)
    for study in studies:
        entry = cmap.corpora.get(study.corpus)
        if entry is None:
            notes.append(f"{study.name}: corpus {study.corpus!r} is not in the criterion map "
                         "(give --criterion-map FILE): left out")
            continue
        every = _current_names(study.correlations)
        corr = every[(every["level"] == level) & (every["statistic"] == "pearson")]
        wanted = metrics if metrics is not None else list(dict.fromkeys(corr["metric"]))
        if shared is not None:
            notes += _left_out_metrics(study.name, every, wanted, shared, level)
        absent: list[str] = []  # noted after the study's correlations
        mapped = _rated_criteria(study.name, every, cmap.criteria_of(study.corpus, related),
                                 absent)
        for metric in wanted:
            for construct, criterion in mapped:
                hit = corr[(corr["metric"] == metric) & (corr["criterion"] == criterion)]
                row = _effect_row(study, hit, metric, construct, criterion, level, variance,
                                  notes)
                if row is not None:
                    rows.append({**row, "task": entry.task, "language": entry.language})
        notes += absent
    cols = ["metric", "construct", "study", "corpus", "task", "language", "criterion", "level",
            "r", "n", "vi"]
    return pd.DataFrame(rows, columns=cols)


def _rated_criteria(name: str, every: pd.DataFrame, mapped: Sequence[tuple[str, str]],
                    notes: list[str]) -> list[tuple[str, str]]:
    """The map's ``(construct, criterion)`` pairs whose criterion the study has correlations
    for; one note for each other (a criterion the map names but the study does not rate, e.g.
    misspelt in a ``--criterion-map`` file), with a "did you mean" among the study's criteria,
    instead of one note per metric."""
    have = list(dict.fromkeys(map(str, every["criterion"])))
    kept = []
    for construct, criterion in mapped:
        if criterion in have:
            kept.append((construct, criterion))
            continue
        close = difflib.get_close_matches(criterion.lower(), [h.lower() for h in have], n=1)
        hint = (f"did you mean {have[[h.lower() for h in have].index(close[0])]!r}?; "
                if close else "")
        notes.append(f"{name}: criterion {criterion!r} ({construct}) of the criterion map is not "
                     f"in the study ({hint}criteria: {', '.join(have) or 'none'}): left out")
    return kept


def _metrics_at(studies: Sequence[Study], cmap: CriterionMap, level: str) -> list[str]:
    """The metrics with a Pearson correlation at ``level`` in any study the map knows."""
    seen: dict[str, None] = {}
    for study in studies:
        if study.corpus in cmap.corpora:
            corr = _current_names(study.correlations)
            seen.update(dict.fromkeys(corr.loc[(corr["level"] == level)
                                               & (corr["statistic"] == "pearson"), "metric"]))
    return list(seen)


def _left_out_metrics(name: str, every: pd.DataFrame, wanted: Sequence[str],
                      shared: Sequence[str], level: str) -> list[str]:
    """A note for each metric of the study (``every``: its correlations) or of another study
    at ``level`` (``shared``) that the study has no Pearson correlation for at ``level``."""
    pearson = every[every["statistic"] == "pearson"]
    out = []
    for metric in dict.fromkeys([*shared, *every["metric"]]):
        if metric in wanted:
            continue
        at = ", ".join(map(str, dict.fromkeys(pearson.loc[pearson["metric"] == metric,
                                                          "level"])))
        why = (f"no Pearson correlation at the {level} level (only at: {at})" if at
               else "no Pearson correlation in the study")
        out.append(f"{name}: {metric} ({level}): {why}: left out")
    return out


def _effect_row(study: Study, hit: pd.DataFrame, metric: str, construct: str, criterion: str,
                level: str, variance: str, notes: list[str]) -> dict[str, Any] | None:
    where = f"{study.name}: {metric} x {criterion} ({level})"
    if hit.empty:
        notes.append(f"{where}: no Pearson correlation in the study: left out")
        return None
    rec = hit.iloc[0]
    r, n = float(rec["value"]), int(rec["n"]) if pd.notna(rec["n"]) else 0
    if not np.isfinite(r) or abs(r) >= 1 or n <= 3:
        notes.append(f"{where}: r = {r:.3g} with n = {n} cannot be pooled (needs |r| < 1 and "
                     "n > 3): left out")
        return None
    if variance == "bootstrap" or level == "item":
        lo, hi = float(rec.get("ci_low", np.nan)), float(rec.get("ci_high", np.nan))
        if not (np.isfinite(lo) and np.isfinite(hi) and -1 < lo < hi < 1):
            notes.append(f"{where}: no bootstrap interval to take the variance from (run with "
                         "resamples > 0): left out")
            return None
        vi = variance_from_interval(lo, hi, study.confidence_level)
    else:
        vi = float(fisher_z_variance(n))
    return {"metric": metric, "construct": construct, "study": study.name,
            "corpus": study.corpus, "criterion": criterion, "level": level, "r": r, "n": n,
            "vi": vi}


def comparison_table(studies: Sequence[Study], cmap: CriterionMap, metric_a: str,
                     metric_b: str, *, level: str = "segment") -> pd.DataFrame:
    """``construct, study, r_a, r_b, r_ab, n`` from each study's per-output scores, on the
    outputs (segment level) or system means (system level) where both metrics and the
    criterion are present. The item level has no such table (left out).

    Examples
    --------
    >>> from nlgeval.meta_analysis.criteria import load_criterion_map
    >>> rng = np.random.default_rng(0)
    >>> h = rng.normal(size=50)
    >>> seg = pd.DataFrame({"system": ["s"] * 50, "item": range(50), "a": h + rng.normal(size=50),
    ...                     "b": h + 2 * rng.normal(size=50), "naturalness": h})
    >>> t = comparison_table([Study("e2e", "e2e", pd.DataFrame(), seg)], load_criterion_map(),
    ...                      "a", "b")
    >>> list(t["construct"]), int(t["n"].iloc[0])
    (['fluency'], 50)
    """
    rows = []
    for study in studies:
        seg = study.segments
        if seg is None or level == "item" or metric_a not in seg or metric_b not in seg:
            continue
        for construct, criterion in cmap.constructs_of(study.corpus).items():
            if criterion not in seg:
                continue
            cols = [metric_a, metric_b, criterion]
            data = seg[["system", *cols]].dropna()
            if level == "system":
                data = data.groupby("system")[cols].mean()
            if len(data) <= 3:
                continue
            r = np.corrcoef(data[cols].to_numpy(dtype=float).T)
            rows.append({"construct": construct, "study": study.name, "r_a": r[0, 2],
                         "r_b": r[1, 2], "r_ab": r[0, 1], "n": len(data)})
    return pd.DataFrame(rows, columns=["construct", "study", "r_a", "r_b", "r_ab", "n"])
