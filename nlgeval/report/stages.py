"""The stages of the validation study after :mod:`nlgeval.report.prepare`, each data in, data out.

1. :func:`criterion_matrices`: per criterion, the (systems x items) metric matrices, oriented
   so that larger is better (lower-is-better metrics negated), and the human matrix;
2. :func:`correlation_rows`: every metric x level x statistic: value, pvalue, n, a percentile
   bootstrap interval (Deutsch et al. 2021) and, for Pearson, the Fisher-z interval;
3. :func:`metric_comparisons`: metric-vs-metric tests (Williams 1959 as in Graham & Baldwin
   2014; PERM-BOTH, Deutsch, Dror & Roth 2021) with significance clusters;
4. :func:`meta_evaluation`: the WMT meta-evaluation statistics (:mod:`nlgeval.report.meta`);
5. :func:`human_references`: correlations between the human criteria and the
   leave-one-rater-out bound.
"""

from __future__ import annotations

import dataclasses
import math
import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from nlgeval.correlation.bootstrap import bootstrap_correlation
from nlgeval.correlation.coefficients import DegenerateInputWarning
from nlgeval.correlation.human import criterion_correlations, rater_agreement_bound
from nlgeval.correlation.levels import (
    FrameCodes,
    frame_codes,
    frame_codes_by,
    level_correlation,
    score_matrices,
)
from nlgeval.correlation.permutation import comparison_matrix
from nlgeval.correlation.significance import significance_clusters
from nlgeval.errors import InputError
from nlgeval.report.binding import metrics_for
from nlgeval.report.meta import CriterionMeta, as_comparison_table, criterion_stage
from nlgeval.report.prepare import PreparedScores, z_ratings
from nlgeval.report.settings import ValidationSettings
from nlgeval.report.verdict import rater_ceiling, rater_icc
from nlgeval.results import Result

#: at most this many score rows are coded in one pass for all metrics (criterion_matrices)
ONE_PASS_ROWS = 2_000_000

CORRELATION_COLUMNS = ["metric", "criterion", "level", "statistic", "value", "pvalue", "ci_low",
                       "ci_high", "n", "epsilon", "fisher_low", "fisher_high", "oriented",
                       "n_missing", "note"]
COMPARISON_COLUMNS = ["metric_a", "metric_b", "r_a", "r_b", "test_statistic", "pvalue",
                      "method", "criterion", "level", "statistic"]
CLUSTER_COLUMNS = ["metric", "value", "cluster", "criterion", "level", "statistic", "method"]


@dataclass(frozen=True)
class CriterionMatrices(Result):
    """One criterion's aligned matrices: ``oriented`` metric -> (systems x items) scores
    (larger = better), ``human`` the mean human scores, ``missing`` metric -> the counts of
    :func:`nlgeval.correlation.levels.score_matrices`.

    Examples
    --------
    >>> import numpy as np
    >>> CriterionMatrices("q", {"m": np.ones((2, 3))}, np.zeros((2, 3)), {}).oriented["m"].shape
    (2, 3)
    """

    criterion: str
    oriented: dict[str, np.ndarray]
    human: np.ndarray
    missing: dict[str, dict[str, int]]

    _omit = frozenset({"oriented", "human"})


def criterion_matrices(prep: PreparedScores, criterion: str) -> CriterionMatrices:
    """The oriented metric matrices and the human matrix of one criterion (stage 1).

    Examples
    --------
    >>> from nlgeval.corpora import load_corpus
    >>> from nlgeval.report.prepare import prepare_scores
    >>> c = load_corpus("e2e")
    >>> c = c.subset(items=c.items[:40])  # 40 inputs, every system: a quick example
    >>> p = prepare_scores(c, ValidationSettings(metrics=["bleu"]))
    >>> cm = criterion_matrices(p, p.criteria[0])
    >>> cm.oriented["bleu"].shape == cm.human.shape == (len(p.systems), len(p.rated_items))
    True
    """
    hcrit = prep.human.loc[prep.human["criterion"] == criterion, ["system", "item", "score"]]
    metrics = metrics_for(criterion, prep.metrics, prep.bound)
    # every metric's codes from one pass over the scores, the human codes once (not once per
    # metric); the errors of score_matrices in its order (a metric's, then the humans'). The
    # one pass holds codes of all the metrics' rows at once (~100 bytes a row): beyond
    # ONE_PASS_ROWS each metric is coded on its own, the same codes with a smaller peak
    try:
        hcodes: FrameCodes | None = frame_codes(hcrit, "human")
    except InputError:
        hcodes = None
    one_pass = bool(metrics) and len(prep.segments) <= ONE_PASS_ROWS
    by = frame_codes_by(prep.segments, "metric", metrics) if one_pass else {}
    oriented, missing = {}, {}
    human = None
    for metric in metrics:
        # each metric's codes let go once used (taken out of `by`; no name kept into the
        # next metric's coding): one metric's codes alive at a time, not two
        mcodes = by.pop(metric, None)
        if mcodes is None:  # coded on its own (a large study, or the error of a duplicate)
            seg = prep.segments
            mcodes = frame_codes(seg.loc[seg["metric"] == metric, ["system", "item", "score"]])
        mats = mcodes.matrices(hcodes or frame_codes(hcrit, "human"), prep.systems,
                               prep.rated_items)
        del mcodes
        X = mats.metric  # a new matrix of mats' own: oriented in place, not copied
        if not prep.higher_is_better.get(metric, True):
            np.multiply(X, -1.0, out=X)  # sign * X, the same floats
        oriented[metric], missing[metric] = X, mats.missing
        if human is None:  # every metric's human matrix is the same: the first one kept
            human = mats.human
        del mats, X
    if human is None:  # every metric is bound to another criterion
        human = score_matrices(prep.segments.iloc[:0][["system", "item", "score"]], hcrit,
                               systems=prep.systems, items=prep.rated_items).human
    return CriterionMatrices(criterion, oriented, human, missing)


def correlation_rows(
    cm: CriterionMatrices, prep: PreparedScores, settings: ValidationSettings,
    progress: Any = None,
) -> list[dict[str, Any]]:
    """Rows of the correlations table (:data:`CORRELATION_COLUMNS`) for one criterion (stage 2).

    Degenerate input (a constant metric, too few systems) is noted in the row and re-issued
    as a :class:`~nlgeval.correlation.coefficients.DegenerateInputWarning`.

    Examples
    --------
    >>> import numpy as np
    >>> from nlgeval.report.prepare import PreparedScores
    >>> X = np.arange(12.0).reshape(3, 4); Y = X ** 2
    >>> p = PreparedScores(None, None, ["m"], {}, {"m": True}, [], [], [], [], None, [], ["q"])
    >>> rows = correlation_rows(CriterionMatrices("q", {"m": X}, Y, {}), p,
    ...                         ValidationSettings(coefficients=["spearman"], n_resamples=0))
    >>> [(r["level"], r["value"]) for r in rows]
    [('segment', 1.0), ('system', 1.0)]
    """
    labels, rows = settings.labels, []
    coefficients = settings.canonical_coefficients
    for metric, X in cm.oriented.items():
        for level in settings.levels:
            if metric in prep.system_only and level != "system":
                if progress is not None:
                    progress.advance(len(coefficients))
                continue
            for coef in coefficients:
                row = _correlation_row(X, cm.human, level, coef, settings,
                                       f"{metric} x {cm.criterion} ({level}, {coef})")
                rows.append({"metric": metric, "criterion": cm.criterion, "level": level,
                             "statistic": labels.get(coef, coef), **row,
                             "oriented": not prep.higher_is_better.get(metric, True)})
                if progress is not None:
                    progress.advance(1)
    return [{k: r[k] for k in CORRELATION_COLUMNS} for r in rows]


def _correlation_row(
    X: np.ndarray, Y: np.ndarray, level: str, coef: str, settings: ValidationSettings,
    label: str,
) -> dict[str, Any]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", DegenerateInputWarning)
        lc = level_correlation(X, Y, level, coef, confidence_level=settings.confidence_level,
                               label=label, n_resamples=settings.permutations,
                               seed=settings.seed)
        ci: tuple[float, float] = (math.nan, math.nan)
        if settings.n_resamples > 0:
            ci = bootstrap_correlation(X, Y, level, coef, n_resamples=settings.n_resamples,
                                       resample=settings.resample, seed=settings.seed,
                                       confidence_level=settings.confidence_level,
                                       label=label).confidence_interval()
    msgs = sorted({str(w.message) for w in caught})
    for m in msgs:
        warnings.warn(m, DegenerateInputWarning, stacklevel=3)
    parts = list(msgs)
    if lc.note and lc.note not in parts:
        parts.append(lc.note)
    return {"value": lc.statistic, "pvalue": lc.pvalue, "epsilon": None, "ci_low": float(ci[0]),
            "ci_high": float(ci[1]), "n": lc.n, "fisher_low": lc.ci_low,
            "fisher_high": lc.ci_high, "n_missing": lc.n_missing,
            "note": "; ".join(parts)}


def metric_comparisons(
    cm: CriterionMatrices, prep: PreparedScores, settings: ValidationSettings
) -> tuple[list[pd.DataFrame], list[pd.DataFrame]]:
    """Williams and PERM-BOTH tests between metrics, and significance clusters (stage 3).

    Metrics are compared on :attr:`ValidationSettings.comparison_coefficient`; Williams' test
    at segment and system level, PERM-BOTH (``settings.permutations`` draws; 0 skips it) at
    every level. A system-level-only metric is compared at system level only. Returns the
    comparison frames and the cluster frames (empty lists with fewer than two metrics).

    Examples
    --------
    >>> import numpy as np
    >>> from nlgeval.report.prepare import PreparedScores
    >>> rng = np.random.default_rng(0); Y = rng.normal(size=(5, 8))
    >>> cm = CriterionMatrices("q", {"a": Y + rng.normal(size=Y.shape), "b": -Y}, Y, {})
    >>> p = PreparedScores(None, None, ["a", "b"], {}, {}, [], [], [], [], None, [], ["q"])
    >>> comps, clus = metric_comparisons(cm, p, ValidationSettings(
    ...     levels=["system"], permutations=0))
    >>> comps[0][["metric_a", "method"]].iloc[0].tolist(), clus[0]["metric"].tolist()
    (['a', 'williams'], ['a', 'b'])
    """
    if len(prep.metrics) < 2 or not settings.canonical_coefficients:
        return [], []
    coef = settings.comparison_coefficient
    label = settings.labels.get(coef, coef)
    comparisons, clusters = [], []
    for level in settings.levels:
        frames = _comparison_frames(cm, prep, settings, level, coef)
        comparisons += [as_comparison_table(f, cm.criterion, level, label) for f in frames]
        if frames:
            main = frames[0]
            first: dict[Any, Any] = {}  # each metric's r: its first row as metric_a
            for name, r_a in zip(main["metric_a"].tolist(), main["r_a"].tolist(), strict=True):
                first.setdefault(name, r_a)
            rs = {m: float(first[m]) for m in prep.metrics if m in first}
            cl = significance_clusters(main, rs, alpha=settings.alpha)
            clusters.append(cl.rename(columns={"r": "value"}).assign(
                criterion=cm.criterion, level=level, statistic=label,
                method=str(main["method"].iloc[0])))
    return comparisons, clusters


def _comparison_frames(
    cm: CriterionMatrices, prep: PreparedScores, settings: ValidationSettings, level: str,
    coef: str,
) -> list[pd.DataFrame]:
    # system-level-only metrics: Williams' test at system level only; a cell-swapping
    # permutation has no per-output scores to swap
    per_output = {m: v for m, v in cm.oriented.items() if m not in prep.system_only}
    # system-grouped = the item level of the transposed matrices
    lv, Y = ("item", cm.human.T) if level == "system-grouped" else (level, cm.human)
    if level == "system-grouped":
        per_output = {m: v.T for m, v in per_output.items()}
    frames = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DegenerateInputWarning)
        williams = cm.oriented if level == "system" else per_output
        if lv != "item" and len(williams) >= 2:
            frames.append(comparison_matrix(williams, Y, lv, coef, method="williams"))
        if settings.permutations > 0 and len(per_output) >= 2:
            frames.append(comparison_matrix(per_output, Y, lv, coef, method="permutation",
                                            n_resamples=settings.permutations,
                                            seed=settings.seed))
    return frames


def meta_evaluation(
    cm: CriterionMatrices, prep: PreparedScores, settings: ValidationSettings,
    progress: Any = None,
) -> CriterionMeta | None:
    """The WMT meta-evaluation statistics of one criterion (stage 4), or None when the
    settings ask for none (see :func:`nlgeval.report.meta.criterion_stage`).

    Examples
    --------
    >>> import numpy as np
    >>> from nlgeval.report.prepare import PreparedScores
    >>> p = PreparedScores(None, None, ["m"], {}, {}, [], [], [], [], None, [], ["q"])
    >>> X = np.arange(12.0).reshape(3, 4)
    >>> cm = CriterionMatrices("q", {"m": X}, X, {})
    >>> meta_evaluation(cm, p, ValidationSettings()) is None
    True
    >>> res = meta_evaluation(cm, p, ValidationSettings(statistics=["pairwise_accuracy"],
    ...                                                 levels=["system"]))
    >>> res.rows[0]["statistic"], res.rows[0]["value"]
    ('pairwise_accuracy', 1.0)
    """
    extra = settings.meta_statistics
    if not extra:
        return None
    wmt23 = {"pairwise_accuracy", "acc_eq"} <= set(extra) and \
        {"system", "item"} <= set(settings.levels)
    return criterion_stage(cm.criterion, cm.oriented, cm.human, extra, settings.levels,
                           settings.meta_settings(), system_only=prep.system_only,
                           labels=settings.labels, alpha=settings.alpha,
                           coefficient_draws=wmt23, progress=progress)


def human_references(
    corpus_ratings: pd.DataFrame, prep: PreparedScores, settings: ValidationSettings
) -> tuple[pd.DataFrame, pd.DataFrame, dict[str, dict[str, float]]]:
    """Correlations between the human criteria, each criterion's leave-one-rater-out
    agreement bound and the human ceiling at every level of the study (one rater vs the
    others, :func:`nlgeval.report.verdict.rater_ceiling`; columns ``one_vs_rest_<level>``)
    and the raters' ICC(1,1) (``icc_1_1``, ``icc_p``; Shrout & Fleiss 1979), on the systems
    the metrics are correlated on (stage 5).

    Examples
    --------
    >>> from nlgeval.corpora import load_corpus
    >>> from nlgeval.report.prepare import prepare_scores
    >>> c = load_corpus("e2e")
    >>> c = c.subset(items=c.items[:40])  # 40 inputs, every system: a quick example
    >>> p = prepare_scores(c, ValidationSettings(metrics=["bleu"]))
    >>> between, raters, ceilings = human_references(c.ratings, p, ValidationSettings())
    >>> len(raters) == len(p.criteria), sorted(ceilings[p.criteria[0]])
    (True, ['segment', 'system'])
    """
    coefficients = settings.canonical_coefficients
    levels = [lv for lv in settings.levels if lv in ("segment", "system")] or ["segment"]
    coef = (coefficients or ["pearson"])[0]
    ceilings: dict[str, dict[str, float]] = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DegenerateInputWarning)
        hsub = prep.human[prep.human["system"].isin(prep.systems)]
        between = criterion_correlations(hsub, levels=levels,
                                         coefficients=coefficients[:1] or ["pearson"],
                                         criteria=prep.criteria)
        ratings = corpus_ratings[corpus_ratings["system"].isin(prep.systems)]
        if settings.normalise == "z":
            ratings = z_ratings(ratings)
        # the fields themselves (NaN kept as NaN for the table; to_dict() is JSON-ready)
        rows = []
        for c in prep.criteria:
            row = dataclasses.asdict(rater_agreement_bound(ratings, c, coef))
            ceilings[c] = rater_ceiling(ratings, c, prep.systems, settings.levels, coef,
                                        settings.seed)
            icc_value, icc_p = rater_icc(ratings, c, settings.alpha)
            rows.append({**row, **{f"one_vs_rest_{lv}": v for lv, v in ceilings[c].items()},
                         "icc_1_1": icc_value, "icc_p": icc_p})
    return between, pd.DataFrame(rows), ceilings
