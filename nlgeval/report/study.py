"""The metric-validation study of Reiter & Belz (2009) as one function: :func:`run_validation`.

Steps: score every metric on the rated outputs (``nlgeval.metrics.scoring.score_corpus``, with its
cache); aggregate the human ratings per output (mean over raters, optionally per-rater z-scores
first, as WMT Direct Assessment); drop systems whose outputs *are* the references (a metric
scores them perfectly by construction); orient lower-is-better metrics (negate, so a larger r
always means better agreement); then, for every metric x criterion x level x coefficient, the
correlation with p, n, a bootstrap interval (Deutsch et al. 2021) and, for Pearson, the Fisher-z
interval; metric-vs-metric tests (Williams, PERM-BOTH) with significance clusters; human-human
references; and the 2009 paper's Table 9 when ``nlgeval.human.metric_agreement`` is available.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from nlgeval.corpus import Corpus
from nlgeval.correlation.bootstrap import bootstrap_correlation, check_resample
from nlgeval.correlation.coefficients import DegenerateInputWarning, check_coefficient
from nlgeval.correlation.compare import comparison_matrix, significance_clusters
from nlgeval.correlation.human import criterion_correlations, rater_agreement_bound
from nlgeval.correlation.levels import check_level, level_correlation, score_matrices
from nlgeval.errors import InputError
from nlgeval.progress import progress_bar
from nlgeval.provenance import Timings
from nlgeval.report.meta import (
    PRESETS,
    MetaSettings,
    check_statistic,
    criterion_stage,
    expand_statistics,
    is_coefficient,
    verdict,
)
from nlgeval.report.meta import (
    wanted as meta_wanted,
)
from nlgeval.report.published import is_webnlg2020

#: The default metric set of ``nlgeval validate`` (those of them the metrics package offers).
DEFAULT_METRICS: tuple[str, ...] = (
    "bleu", "chrf", "chrf++", "ter", "rouge1", "rouge2", "rougeL", "nist",
)

CORRELATION_COLUMNS = ["metric", "criterion", "level", "coefficient", "r", "p", "ci_low",
                       "ci_high", "n", "epsilon", "fisher_low", "fisher_high", "oriented",
                       "n_missing", "note"]


@dataclass
class ValidationStudy:
    """Everything :func:`run_validation` computed; :mod:`nlgeval.report.writer` writes it out."""

    corpus: str
    metrics: list[str]
    criteria: list[str]
    levels: list[str]
    coefficients: list[str]
    resamples: int
    resample: str
    seed: int
    normalise: str
    confidence_level: float
    alpha: float
    systems: list[str]
    excluded_systems: list[str]
    correlations: pd.DataFrame
    metric_system_scores: pd.DataFrame
    human_system_scores: pd.DataFrame
    comparisons: pd.DataFrame
    clusters: pd.DataFrame
    human_correlations: pd.DataFrame
    rater_agreement: pd.DataFrame
    segments: pd.DataFrame
    signatures: dict[str, str]
    higher_is_better: dict[str, bool]
    missing: dict[str, Any]
    significant_differences: pd.DataFrame | None = None
    published: pd.DataFrame | None = None
    notes: list[str] = field(default_factory=list)
    timings: dict[str, float] = field(default_factory=dict)
    permutations: int = 0
    external: dict[str, dict[str, Any]] = field(default_factory=dict)
    system_only: list[str] = field(default_factory=list)
    min_coverage: float = 0.5
    statistics: list[str] = field(default_factory=list)
    leaderboards: dict[str, pd.DataFrame] = field(default_factory=dict)
    verdict: list[dict[str, Any]] = field(default_factory=list)
    spa_permutations: int = 0
    epsilon: dict[str, float] = field(default_factory=dict)

    def correlation_records(self) -> list[dict[str, Any]]:
        """JSON contract: ``metric, criterion, level, coefficient, r, p, ci_low, ci_high, n``."""
        cols = ["metric", "criterion", "level", "coefficient", "r", "p", "ci_low", "ci_high", "n",
                "epsilon"]
        df = self.correlations[cols].astype(object)
        return df.where(df.notna(), None).to_dict(orient="records")

    def settings(self) -> dict[str, Any]:
        return {
            "corpus": self.corpus, "metrics": self.metrics, "criteria": self.criteria,
            "levels": self.levels, "coefficients": self.coefficients,
            "resamples": self.resamples, "resample": self.resample, "seed": self.seed,
            "normalise": self.normalise, "confidence_level": self.confidence_level,
            "alpha": self.alpha, "permutations": self.permutations,
            "systems": self.systems, "excluded_systems": self.excluded_systems,
            "lower_is_better": [m for m in self.metrics
                                if not self.higher_is_better.get(m, True)],
            "external_scores": self.external, "system_level_only": self.system_only,
            "min_coverage": self.min_coverage, "statistics": self.statistics,
            "spa_permutations": self.spa_permutations, "fixed_epsilon": self.epsilon,
        }

    def to_dict(self) -> dict[str, Any]:
        return {
            "settings": self.settings(),
            "correlations": self.correlation_records(),
            "verdict": self.verdict,
            "leaderboards": {k: v.to_dict(orient="records")
                             for k, v in self.leaderboards.items()},
            "signatures": self.signatures,
            "higher_is_better": self.higher_is_better,
            "missing": self.missing,
            "notes": self.notes,
            "timings": self.timings,
        }


def _score_metrics(
    corpus: Corpus, metrics: Sequence[str], cache: bool, cache_dir: Any
) -> tuple[pd.DataFrame, pd.DataFrame, dict[str, str], dict[str, bool], list[str]]:
    from nlgeval.metrics import get_metric
    from nlgeval.metrics.scoring import score_corpus

    objs = [get_metric(m) for m in metrics]
    res = score_corpus(corpus, objs, rated_only=True, cache=cache, cache_dir=cache_dir)
    seg = res.segments.copy()
    # score_corpus labels a metric by its name, or by its full spec when two share a name;
    # show the user's own spelling where the name is unambiguous
    names = [o.name for o in objs]
    shown = {}
    for o, spec in zip(objs, metrics, strict=True):
        key = o.name if names.count(o.name) == 1 else o.spec
        shown[key] = spec if names.count(o.name) == 1 else o.spec
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
) -> tuple[pd.DataFrame, pd.DataFrame, list[str], list[str], dict[str, dict[str, Any]]]:
    """Join checked external scores to the computed ones (see :mod:`nlgeval.scores`).

    A system-level-only metric gets its system score copied into every rated output of the
    system, so that the system-level mean over complete cells is exactly that score; it is
    never used at segment or item level.
    """
    from nlgeval.metrics import available_metrics
    from nlgeval.scores import check_scores, tidy_scores

    if "_source" not in scores.columns:
        scores = tidy_scores(scores)
    checked = check_scores(scores, corpus.outputs, corpus.rated_outputs(),
                           builtin=[*metrics, *available_metrics()],
                           min_coverage=min_coverage)
    notes.extend(checked.notes)
    frames = [seg[["metric", "system", "item", "score"]], checked.segments]
    rated = corpus.rated_outputs()[["system", "item"]].astype(str)
    for m in checked.system_only:
        sysv = checked.systems[checked.systems["metric"] == m].set_index("system")["score"]
        filled = rated.assign(metric=m, score=rated["system"].map(sysv).astype(float))
        frames.append(filled[["metric", "system", "item", "score"]])
    seg = pd.concat([f for f in frames if len(f)], ignore_index=True)
    if len(checked.systems):
        extra = checked.systems.assign(signature="external")
        cs = pd.concat([c for c in (cs, extra) if c is not None and len(c)],
                       ignore_index=True)
    external: dict[str, dict[str, Any]] = {}
    for m in checked.metrics:
        src = checked.sources.get(m, "")
        sigs[m] = f"external scores from {Path(src).name}" if src else "external scores"
        hib.setdefault(m, True)
        external[m] = {"source": Path(src).name if src else "", "coverage":
                       checked.coverage[m], "n_missing": checked.n_missing[m],
                       "system_level_only": m in checked.system_only}
    return seg, cs, [*metrics, *checked.metrics], list(checked.system_only), external


def reference_systems(corpus: Corpus, threshold: float = 0.9) -> list[str]:
    """Systems whose outputs equal one of the item's references for >= ``threshold`` of items.

    Such a "system" is the human reference itself (WebNLG's ``WebNLG-2020-reference``): a
    reference-based metric gives it a perfect score by construction, so it is excluded from
    metric-human correlations (as the WebNLG organisers did).
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


def _z_ratings(ratings: pd.DataFrame) -> pd.DataFrame:
    g = ratings.groupby(["rater", "criterion"])["score"]
    z = (ratings["score"] - g.transform("mean")) / g.transform(lambda s: s.std(ddof=1))
    return ratings.assign(score=z)[np.isfinite(z)]


def run_validation(
    corpus: Corpus,
    metrics: Sequence[str] | None = None,
    *,
    criteria: Sequence[str] | None = None,
    levels: Sequence[str] = ("segment", "system"),
    coefficients: Sequence[str] = ("pearson", "spearman", "kendall"),
    resamples: int = 1000,
    resample: str = "both",
    normalise: str = "none",
    seed: int = 0,
    confidence_level: float = 0.95,
    alpha: float = 0.05,
    permutations: int = 1000,
    exclude_systems: Sequence[str] | None = None,
    segment_scores: pd.DataFrame | None = None,
    corpus_scores: pd.DataFrame | None = None,
    higher_is_better: Mapping[str, bool] | None = None,
    signatures: Mapping[str, str] | None = None,
    cache: bool = True,
    cache_dir: Any = None,
    table9: bool = True,
    scores: pd.DataFrame | None = None,
    lower_is_better: Sequence[str] = (),
    min_coverage: float = 0.5,
    statistics: Sequence[str] | None = None,
    spa_permutations: int = 1000,
    epsilon: Mapping[str, float] | None = None,
) -> ValidationStudy:
    """Run the whole metric-validation study on ``corpus`` (see the module docstring).

    ``segment_scores`` (``metric, system, item, score``) may be given instead of scoring
    (then ``higher_is_better`` defaults to True for every metric). ``exclude_systems=None``
    excludes the systems found by :func:`reference_systems`; pass ``[]`` to keep all.
    Comparisons between metrics (Williams, PERM-BOTH with ``permutations`` permutations; 0
    skips it) use the first of ``coefficients`` that is Pearson or Spearman, else the first.
    ``table9=False`` skips the 2009 Table 9 (pairwise Wilcoxon tests for every system pair).

    ``scores``: metric scores computed elsewhere (COMET, BLEURT, an LLM judge, ...), as read by
    :func:`nlgeval.scores.read_scores` or any wide/long frame :func:`nlgeval.scores.tidy_scores`
    accepts. They join the metrics nlgeval computes (``metrics=[]`` computes none) and go
    through the whole study; a metric with system-level scores only is correlated at system
    level only. ``lower_is_better`` names metrics (built-in or external) to negate before any
    correlation; ``min_coverage`` is the least share of rated outputs an external metric must
    score (see :func:`nlgeval.scores.check_scores`).

    ``statistics`` (overrides ``coefficients``): any of the coefficients plus the WMT
    meta-evaluation statistics ``tau_23``, ``acc_23``, ``acc_eq``, ``pairwise_accuracy``,
    ``soft_pairwise_accuracy`` (see :mod:`nlgeval.report.meta`), each reported under the name
    given; ``spa_permutations`` sign flips per soft pairwise accuracy; ``epsilon`` fixes the
    acc_eq tie threshold per metric (e.g. calibrated on a development set) instead of
    calibrating it on these data.
    """
    timings = Timings()
    notes: list[str] = list(corpus.notes)
    levels = list(dict.fromkeys(check_level(v) for v in levels))
    labels: dict[str, str] = {}
    if statistics is not None:
        if any(n.strip().lower() in PRESETS for n in statistics):
            statistics = expand_statistics(statistics)
            # the WMT leaderboards rest on system-level and item-grouped statistics
            levels = list(dict.fromkeys([*levels, "system", "item"]))
        canon = []
        for name in statistics:
            c = check_statistic(name)
            labels.setdefault(c, name.strip())
            canon.append(c)
        canon = list(dict.fromkeys(canon))
        coefficients = [c for c in canon if is_coefficient(c)]
        extra = [c for c in canon if not is_coefficient(c)]
    else:
        coefficients = list(dict.fromkeys(check_coefficient(c) for c in coefficients))
        extra = []
    if not coefficients and not extra:
        raise InputError("no statistics to compute")
    resample = check_resample(resample)
    if normalise not in ("none", "z"):
        raise InputError(f"normalise must be 'none' or 'z', got {normalise!r}")
    if resamples < 0:
        raise InputError(f"resamples must be >= 0, got {resamples}")
    if corpus.ratings.empty:
        raise InputError(f"corpus '{corpus.name}' has no human ratings to validate against")
    all_criteria = corpus.criteria
    if criteria is None:
        criteria = all_criteria
    else:
        unknown = [c for c in criteria if c not in all_criteria]
        if unknown:
            raise InputError(f"unknown criterion/criteria {', '.join(unknown)} for corpus "
                             f"'{corpus.name}' (rated criteria: {', '.join(all_criteria)})")
        criteria = list(criteria)

    # ---------------------------------------------------------------- metric scores
    with timings.step("scoring"):
        if segment_scores is None:
            if metrics is None:
                from nlgeval.metrics import available_metrics

                avail = set(available_metrics())
                metrics = [m for m in DEFAULT_METRICS if m in avail]
            if metrics:
                seg, cs, sigs, hib, metrics = _score_metrics(corpus, list(metrics), cache,
                                                             cache_dir)
            else:
                seg = pd.DataFrame(columns=["metric", "system", "item", "score"])
                cs = pd.DataFrame(columns=["system", "metric", "score", "signature"])
                sigs, hib, metrics = {}, {}, []
        else:
            seg = segment_scores.copy()
            miss = [c for c in ("metric", "system", "item", "score") if c not in seg.columns]
            if miss:
                raise InputError(f"segment_scores needs columns metric, system, item, score; "
                                 f"missing {miss}")
            if metrics is None:
                metrics = list(dict.fromkeys(seg["metric"]))
            seg = seg[seg["metric"].isin(list(metrics))]
            cs = corpus_scores if corpus_scores is not None else pd.DataFrame(
                columns=["system", "metric", "score", "signature"])
            sigs = dict(signatures or {})
            hib = {m: True for m in metrics}
        if higher_is_better:
            hib.update({k: bool(v) for k, v in higher_is_better.items()})
    metrics = list(metrics)
    external: dict[str, dict[str, Any]] = {}
    system_only: list[str] = []
    if scores is not None:
        seg, cs, metrics, system_only, external = _add_external(
            corpus, scores, seg, cs, metrics, sigs, hib, min_coverage, notes)
    if not metrics:
        raise InputError("no metrics to validate: name metrics to compute (--metrics) or give "
                         "metric scores (--scores)")
    for name in lower_is_better:
        if name not in metrics:
            raise InputError(f"--lower-is-better names '{name}', which is not a metric of this "
                             f"study (metrics: {', '.join(metrics)})")
        hib[name] = False
    seg = seg.assign(system=seg["system"].astype(str), item=seg["item"].astype(str))
    bad = ~np.isfinite(seg["score"].astype(float))
    if bad.any():
        notes.append(f"{int(bad.sum())} metric score(s) were missing/NaN and were left out")

    # ---------------------------------------------------------------- systems, human scores
    if exclude_systems is None:
        excluded = reference_systems(corpus)
        if excluded:
            notes.append("excluded from metric-human correlations because their outputs are "
                          f"the references: {', '.join(excluded)}")
    else:
        excluded = [str(s) for s in exclude_systems]
    # canonical (sorted) order of systems and items: resampling and permutation draws index
    # the (systems x items) matrices, so this makes every number independent of row order
    systems = sorted(s for s in corpus.systems if s not in excluded)
    human = corpus.human_scores(normalise=normalise, criteria=criteria)  # type: ignore[arg-type]
    human = human.assign(system=human["system"].astype(str), item=human["item"].astype(str))
    rated_items = sorted(set(human.loc[human["system"].isin(systems), "item"]))

    correlations = []
    comparisons = []
    clusters = []
    missing: dict[str, Any] = {}
    cmp_coef = next((c for c in coefficients if c in ("pearson", "spearman")),
                    coefficients[0] if coefficients else "pearson")
    meta_settings = MetaSettings(permutations=permutations, spa_permutations=spa_permutations,
                                 resamples=resamples, resample=resample,
                                 confidence_level=confidence_level, seed=seed,
                                 epsilon=dict(epsilon) if epsilon else None)
    leaderboards: dict[str, list[pd.DataFrame]] = {}
    wmt23 = {"pairwise_accuracy", "acc_eq"} <= set(extra) and {"system", "item"} <= set(levels)
    tasks = len(criteria) * len(metrics) * (len(levels) * len(coefficients)
                                            + len(meta_wanted(extra, levels)))
    with timings.step("correlations"), progress_bar(tasks, "correlations + bootstrap") as bar:
        for crit in criteria:
            hcrit = human.loc[human["criterion"] == crit, ["system", "item", "score"]]
            oriented: dict[str, np.ndarray] = {}
            Y = None
            for metric in metrics:
                ms = seg.loc[seg["metric"] == metric, ["system", "item", "score"]]
                mats = score_matrices(ms, hcrit, systems=systems, items=rated_items)
                sign = 1.0 if hib.get(metric, True) else -1.0
                X = sign * mats.metric
                Y = mats.human
                oriented[metric] = X
                missing[f"{metric}|{crit}"] = mats.missing
                for level in levels:
                    if metric in system_only and level != "system":
                        bar.advance(len(coefficients))
                        continue
                    for coef in coefficients:
                        label = f"{metric} x {crit} ({level}, {coef})"
                        with warnings.catch_warnings(record=True) as caught:
                            warnings.simplefilter("always", DegenerateInputWarning)
                            lc = level_correlation(X, Y, level, coef,
                                                   confidence_level=confidence_level,
                                                   label=label, permutations=permutations,
                                                   seed=seed)
                            if resamples > 0:
                                bs = bootstrap_correlation(
                                    X, Y, level, coef, resamples=resamples, resample=resample,
                                    seed=seed, confidence_level=confidence_level, label=label)
                                ci = bs.confidence_interval
                            else:
                                ci = (math.nan, math.nan)
                        msgs = sorted({str(w.message) for w in caught})
                        for m in msgs:
                            warnings.warn(m, DegenerateInputWarning, stacklevel=2)
                        parts = list(msgs)
                        if lc.note and lc.note not in parts:
                            parts.append(lc.note)
                        note = "; ".join(parts)
                        correlations.append({
                            "metric": metric, "criterion": crit, "level": level,
                            "coefficient": labels.get(coef, coef), "r": lc.statistic,
                            "p": lc.pvalue, "epsilon": None,
                            "ci_low": float(ci[0]), "ci_high": float(ci[1]), "n": lc.n,
                            "fisher_low": lc.confidence_interval.low,
                            "fisher_high": lc.confidence_interval.high,
                            "oriented": sign < 0, "n_missing": lc.n_missing, "note": note,
                        })
                        bar.advance(1)
            # metric-vs-metric comparisons for this criterion
            if len(metrics) >= 2 and Y is not None and coefficients:
                for level in levels:
                    # system-level-only metrics: Williams' test at system level only; a
                    # cell-swapping permutation has no per-output scores to swap
                    per_output = {m: v for m, v in oriented.items() if m not in system_only}
                    # system-grouped = the item level of the transposed matrices
                    lv, Yl = (("item", Y.T) if level == "system-grouped" else (level, Y))
                    if level == "system-grouped":
                        per_output = {m: v.T for m, v in per_output.items()}
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore", DegenerateInputWarning)
                        frames = []
                        if lv != "item" and len(oriented if level == "system"
                                                else per_output) >= 2:
                            w = comparison_matrix(oriented if level == "system" else per_output,
                                                  Yl, lv, cmp_coef, method="williams")
                            frames.append(w)
                        if permutations > 0 and len(per_output) >= 2:
                            pm = comparison_matrix(per_output, Yl, lv, cmp_coef,
                                                   method="permutation",
                                                   permutations=permutations, seed=seed)
                            frames.append(pm)
                    for f in frames:
                        f = f.assign(criterion=crit, level=level,
                                     coefficient=labels.get(cmp_coef, cmp_coef))
                        comparisons.append(f)
                    if frames:
                        main = frames[0]
                        rs = {m: float(main.loc[main["metric_a"] == m, "r_a"].iloc[0])
                              for m in metrics if (main["metric_a"] == m).any()}
                        cl = significance_clusters(main, rs, alpha=alpha)
                        clusters.append(cl.assign(criterion=crit, level=level,
                                                  coefficient=labels.get(cmp_coef, cmp_coef),
                                                  method=str(main["method"].iloc[0])))
            # the WMT meta-evaluation statistics (tau_23, acc_eq, pairwise accuracy, SPA)
            if extra and Y is not None:
                cm = criterion_stage(crit, oriented, Y, extra, levels, meta_settings,
                                     system_only=system_only, labels=labels, alpha=alpha,
                                     coefficient_draws=wmt23, progress=bar)
                correlations.extend(cm.rows)
                if len(cm.comparisons):
                    comparisons.append(cm.comparisons)
                if len(cm.clusters):
                    clusters.append(cm.clusters)
                for style, board in cm.leaderboards.items():
                    leaderboards.setdefault(style, []).append(board)

    for crit in criteria:
        counts = [v for k, v in missing.items() if k.endswith(f"|{crit}")]
        if counts:
            worst = max(counts, key=lambda d: d["unscored"] + d["nan_metric"])
            notes.append(
                f"{crit}: {worst['complete']} outputs with both a metric and a human score; "
                f"{worst['unrated']} scored but unrated and {worst['unscored']} rated but "
                "without a metric score were left out")
    corr_df = pd.DataFrame(correlations, columns=CORRELATION_COLUMNS)
    boards = {k: pd.concat(v, ignore_index=True) for k, v in leaderboards.items()}
    tied = corr_df[corr_df["note"].astype(str).str.contains("no better than predicting a tie")]
    if len(tied):
        notes.append(
            "acc_eq no better than a constant metric that ties every pair "
            f"for {len(tied)} metric x criterion x level: "
            + ", ".join(f"{r.metric}/{r.criterion}/{r.level}" for r in tied.head(8).itertuples())
            + (" ..." if len(tied) > 8 else ""))
    comp_df = (pd.concat(comparisons, ignore_index=True) if comparisons else pd.DataFrame(
        columns=["metric_a", "metric_b", "r_a", "r_b", "statistic", "pvalue", "method",
                 "criterion", "level", "coefficient"]))
    clus_df = (pd.concat(clusters, ignore_index=True) if clusters else pd.DataFrame(
        columns=["metric", "r", "cluster", "criterion", "level", "coefficient", "method"]))

    # ---------------------------------------------------------------- per-system tables
    with timings.step("tables"):
        metric_sys = _metric_system_table(seg, cs, metrics, corpus.systems, human)
        human_sys = _human_system_table(human, criteria, excluded)

    # ---------------------------------------------------------------- human-human
    with timings.step("human references"), warnings.catch_warnings():
        warnings.simplefilter("ignore", DegenerateInputWarning)
        hsub = human[human["system"].isin(systems)]
        hum_corr = criterion_correlations(
            hsub, levels=[lv for lv in levels if lv in ("segment", "system")] or ["segment"],
            coefficients=coefficients[:1] or ["pearson"], criteria=criteria)
        ratings = corpus.ratings[corpus.ratings["system"].isin(systems)]
        if normalise == "z":
            ratings = _z_ratings(ratings)
        rater_rows = [rater_agreement_bound(ratings, c, (coefficients or ["pearson"])[0])
                      .to_dict()
                      for c in criteria]
        rater_df = pd.DataFrame(rater_rows)

    # ---------------------------------------------------------------- 2009 Table 9
    sig_df = None
    if table9:
        with timings.step("significant differences"):
            sig_df = _table9(seg[seg["system"].isin(systems) & ~seg["metric"].isin(system_only)],
                             human[human["system"].isin(systems)], criteria, hib, alpha, notes)

    segments_wide = _segments_frame(seg[~seg["metric"].isin(system_only)], human, systems,
                                    [m for m in metrics if m not in system_only], criteria)
    study = ValidationStudy(
        corpus=corpus.name, metrics=metrics, criteria=list(criteria), levels=levels,
        coefficients=[labels.get(c, c) for c in coefficients], resamples=resamples,
        resample=resample, seed=seed,
        normalise=normalise, confidence_level=confidence_level, alpha=alpha,
        systems=systems, excluded_systems=excluded, correlations=corr_df,
        metric_system_scores=metric_sys, human_system_scores=human_sys,
        comparisons=comp_df, clusters=clus_df, human_correlations=hum_corr,
        rater_agreement=rater_df, segments=segments_wide, signatures=dict(sigs),
        higher_is_better=dict(hib), missing=_missing_summary(missing),
        significant_differences=sig_df, notes=notes, timings=dict(timings),
        permutations=permutations, external=external, system_only=list(system_only),
        min_coverage=min_coverage,
        statistics=[labels.get(c, c) for c in [*coefficients, *extra]],
        leaderboards=boards, spa_permutations=spa_permutations,
        epsilon=dict(epsilon or {}),
        verdict=verdict(boards, clus_df, corr_df, list(criteria), levels),
    )
    if is_webnlg2020(corpus.name):
        study.published = _published(corpus, seg, systems, metrics, criteria, normalise, human)
    return study


def _published(
    corpus: Corpus, seg: pd.DataFrame, systems: Sequence[str], metrics: Sequence[str],
    criteria: Sequence[str], normalise: str, human: pd.DataFrame,
) -> pd.DataFrame | None:
    """Our segment-level Pearson r as the WebNLG organisers computed theirs (z-normalised)."""
    from nlgeval.report.published import WEBNLG2020_METRIC_MAP, published_comparison

    todo = [m for m in metrics if m in WEBNLG2020_METRIC_MAP]
    if not todo:
        return None
    hz = human if normalise == "z" else corpus.human_scores(normalise="z", criteria=criteria)
    hz = hz.assign(system=hz["system"].astype(str), item=hz["item"].astype(str))
    rows = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DegenerateInputWarning)
        for m in todo:
            ms = seg.loc[seg["metric"] == m, ["system", "item", "score"]]
            for crit in criteria:
                mats = score_matrices(ms, hz.loc[hz["criterion"] == crit,
                                                 ["system", "item", "score"]],
                                      systems=systems)
                lc = level_correlation(mats.metric, mats.human, "segment", "pearson")
                rows.append({"metric": m, "criterion": crit, "r": lc.statistic})
    return published_comparison(corpus.name, pd.DataFrame(rows))


def _missing_summary(missing: dict[str, dict[str, int]]) -> dict[str, Any]:
    if not missing:
        return {}
    first = next(iter(missing.values()))
    total = {k: int(v) for k, v in first.items()}
    return {"per_metric_criterion": missing, "example": total}


def _metric_system_table(
    seg: pd.DataFrame, cs: pd.DataFrame, metrics: Sequence[str], systems: Sequence[str],
    human: pd.DataFrame,
) -> pd.DataFrame:
    """Metric scores per system (2009 Tables 5/7): corpus-level score, else the segment mean."""
    table = pd.DataFrame({"system": list(systems)})
    for m in metrics:
        col = None
        if cs is not None and len(cs) and "metric" in cs.columns:
            sub = cs[cs["metric"] == m].set_index("system")["score"]
            if len(sub):
                col = table["system"].map(sub).astype(float)
        if col is None:
            sub = seg[seg["metric"] == m].groupby("system")["score"].mean()
            col = table["system"].map(sub).astype(float)
        table[m] = col
    return table


def _human_system_table(
    human: pd.DataFrame, criteria: Sequence[str], excluded: Sequence[str]
) -> pd.DataFrame:
    """Mean human score per system and criterion with its rank (1 = best)."""
    means = human.pivot_table(index="system", columns="criterion", values="score",
                              aggfunc="mean", sort=False)
    means = means.reindex(columns=list(criteria))
    n = human.groupby("system")["item"].nunique()
    out = pd.DataFrame({"system": means.index.astype(str)})
    out["n_outputs"] = out["system"].map(n).astype(int)
    for c in criteria:
        vals = means[c].to_numpy(float)
        out[c] = vals
        out[f"{c} rank"] = pd.Series(vals).rank(ascending=False, method="min").astype("Int64")
    out["reference"] = out["system"].isin(list(excluded))
    sort_col = criteria[0] if criteria else "system"
    return out.sort_values(sort_col, ascending=False).reset_index(drop=True)


def _segments_frame(
    seg: pd.DataFrame, human: pd.DataFrame, systems: Sequence[str], metrics: Sequence[str],
    criteria: Sequence[str],
) -> pd.DataFrame:
    """Wide per-output frame (system, item, one column per metric and criterion) for plots."""
    m = seg[seg["system"].isin(systems)].pivot_table(
        index=["system", "item"], columns="metric", values="score", aggfunc="first")
    h = human[human["system"].isin(systems)].pivot_table(
        index=["system", "item"], columns="criterion", values="score", aggfunc="first")
    h = h.rename(columns={c: f"{c} (human)" for c in h.columns if c in m.columns})
    wide = m.join(h, how="inner").reset_index()
    keep = ["system", "item", *[c for c in metrics if c in wide.columns],
            *[c for c in criteria if c in wide.columns]]
    return wide[keep]


def _table9(
    seg: pd.DataFrame, human: pd.DataFrame, criteria: Sequence[str], hib: Mapping[str, bool],
    alpha: float, notes: list[str],
) -> pd.DataFrame | None:
    """The 2009 paper's Table 9 via the human-ratings package, when it is installed."""
    try:
        from nlgeval.human.metric_agreement import significant_difference_agreement
    except ImportError:
        notes.append("Table 9 (significant differences predicted by each metric) skipped: "
                     "nlgeval.human.metric_agreement is not available")
        return None
    frames = []
    cache: dict[Any, pd.DataFrame] = {}  # a metric's tests, shared by criteria on the same outputs
    # the Wilcoxon tests pair outputs, so use the outputs every metric scored
    scored = seg[np.isfinite(seg["score"].astype(float))]
    n_metrics = scored["metric"].nunique()
    full = scored.groupby(["system", "item"])["metric"].nunique()
    keep = full[full == n_metrics].index
    for crit in criteria:
        h = human.loc[human["criterion"] == crit, ["system", "item", "score"]]
        inside = pd.MultiIndex.from_frame(h[["system", "item"]]).isin(keep)
        if not inside.all():
            notes.append(f"Table 9 for '{crit}': {int((~inside).sum())} rated output(s) "
                         "without a score from every metric left out")
            h = h[inside]
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                t = significant_difference_agreement(
                    h, scored[["metric", "system", "item", "score"]],
                    higher_is_better=dict(hib), alpha=alpha, correction="bonferroni",
                    cache=cache)
        except Exception as exc:  # a bug there must not sink the whole report
            notes.append(f"Table 9 for '{crit}' failed: {type(exc).__name__}: {exc}")
            continue
        frames.append(t.assign(criterion=crit))
    if not frames:
        return None
    out = pd.concat(frames, ignore_index=True)
    cols = ["criterion", *[c for c in out.columns if c != "criterion"]]
    return out[cols]
