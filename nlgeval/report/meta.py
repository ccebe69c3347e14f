"""The WMT meta-evaluation statistics as a stage of the validation study.

``nlgeval validate --statistics ...`` may ask, next to the correlation coefficients (Pearson,
Spearman, Kendall tau-b/tau-c, handled by :mod:`nlgeval.correlation.levels`), for any statistic
of the registry (:mod:`nlgeval.correlation.statistics`, open to plugins through the
``nlgeval.statistics`` entry-point group): values, intervals and PERM-BOTH tests come from the
statistic's protocol, with no list of statistics here. Built in are Kendall's tau-a (Kendall
1938) and the statistics the WMT metrics task ranks metrics with today
(google-research/mt-metrics-eval, "MTME"):

``tau_23``, ``acc_23``   Kendall-like variants of Deutsch, Foster & Freitag (2023, "Ties
                          Matter"), :mod:`nlgeval.correlation.kendall`;
``acc_eq``               acc_23 with tie calibration (ibid.): the epsilon below which metric
                          differences count as ties is the one maximising acc_23,
                          :mod:`nlgeval.correlation.kendall.tie_calibration`;
``pairwise_accuracy``    system-level pairwise accuracy (Kocmi et al. 2021, "To Ship or Not to
                          Ship"), :mod:`nlgeval.correlation.pairwise`;
``soft_pairwise_accuracy``  SPA (Thompson et al. 2024), ibid.

Levels map to MTME's groupings: ``segment`` = no grouping, ``item`` = grouped by item,
``system-grouped`` = grouped by system; ``system`` = the statistic on system means. Every
statistic has a PERM-BOTH test between two metrics (Deutsch, Dror & Roth 2021) whose per-draw
values feed the significance clusters (MTME ``AssignRanks``) and the WMT23/WMT24-style
leaderboard (:func:`nlgeval.correlation.ranking.overall_score`).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from nlgeval.correlation.statistics import perm_both_test
from nlgeval.report.meta_statistics import (
    GROUPING,
    PRESETS,
    STATISTICS,
    MetaSettings,
    Statistic,
    check_statistic,
    expand_statistics,
    is_coefficient,
    statistic_row,
    wanted,
)
from nlgeval.results import Result

__all__ = [
    "GROUPING", "PRESETS", "STATISTICS", "WMT_TASKS", "CriterionMeta", "MetaSettings",
    "Statistic", "as_comparison_table", "check_statistic", "clusters", "compare_metrics",
    "compare_pair",
    "criterion_stage", "expand_statistics", "is_coefficient", "leaderboard", "statistic_row",
    "verdict", "verdict_line", "wanted",
]


# ----------------------------------------------------------------------------- comparisons


def as_comparison_table(frame: pd.DataFrame, criterion: str, level: str,
                        statistic: str) -> pd.DataFrame:
    """A metric-comparison frame as the study's comparisons table: the test's own
    ``statistic`` becomes ``test_statistic`` and ``statistic`` names the agreement statistic
    compared (Pearson, acc_eq...), beside ``criterion`` and ``level``.

    >>> f = pd.DataFrame({"metric_a": ["a"], "metric_b": ["b"], "statistic": [2.1],
    ...                   "pvalue": [0.03], "method": ["williams"]})
    >>> as_comparison_table(f, "q", "system", "pearson").columns.tolist()[2:]
    ['test_statistic', 'pvalue', 'method', 'criterion', 'level', 'statistic']
    """
    return frame.rename(columns={"statistic": "test_statistic"}).assign(
        criterion=criterion, level=level, statistic=statistic)


def compare_pair(
    XA: np.ndarray, XB: np.ndarray, Y: np.ndarray, level: str, statistic: str,
    settings: MetaSettings, metric_a: str = "", metric_b: str = "",
) -> Any:
    """PERM-BOTH test "A is better than B" on one statistic and level (result with draws);
    None where the statistic has no cell-swap test at that level
    (:func:`nlgeval.correlation.statistics.perm_both_test`)."""
    return perm_both_test(STATISTICS[statistic], XA, XB, Y, level, settings, metric_a,
                          metric_b)


def compare_metrics(
    oriented: Mapping[str, np.ndarray], Y: np.ndarray, level: str, statistic: str,
    settings: MetaSettings,
) -> tuple[pd.DataFrame, dict[tuple[str, str], tuple[np.ndarray, np.ndarray]]]:
    """Every ordered pair of metrics: one-sided PERM-BOTH p-values, and the draws.

    One test per unordered pair: the reverse direction is read from the same draws,
    ``p(B > A) = (1 + #{-d* >= -d}) / (1 + K)``.
    """
    names = list(oriented)
    sign = 1.0 if STATISTICS[statistic].higher_is_better else -1.0  # d > 0: A is better
    prepare = getattr(STATISTICS[statistic], "prepare_comparisons", None)
    if prepare is not None:  # shared work of all pairs done once (soft pairwise accuracy)
        prepare(oriented, Y, level, settings)
    rows, draws = [], {}
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)
                res = compare_pair(oriented[a], oriented[b], Y, level, statistic, settings, a, b)
            if res is None:
                continue
            da, db = np.asarray(res.draws_a, float), np.asarray(res.draws_b, float)
            draws[(a, b)] = (da, db)
            d = sign * (float(res.statistic_a) - float(res.statistic_b))
            null = sign * (da - db)
            for x, y, obs, nul in ((a, b, d, null), (b, a, -d, -null)):
                rows.append({"metric_a": x, "metric_b": y,
                             "r_a": res.statistic_a if x == a else res.statistic_b,
                             "r_b": res.statistic_b if x == a else res.statistic_a,
                             "statistic": obs, "pvalue": _p_greater(obs, nul),
                             "method": "perm-both"})
    return pd.DataFrame(rows, columns=["metric_a", "metric_b", "r_a", "r_b", "statistic",
                                       "pvalue", "method"]), draws


def _p_greater(observed: float, null: np.ndarray) -> float:
    """(1 + #{d* >= d}) / (1 + K), with a float tolerance (Phipson & Smyth 2010)."""
    null = null[np.isfinite(null)]
    if not np.isfinite(observed) or null.size == 0:
        return math.nan
    tol = 1e-12 * max(1.0, abs(observed))
    return float((1 + np.count_nonzero(null >= observed - tol)) / (1 + null.size))


# ----------------------------------------------------------------------------- leaderboard

#: The WMT overall scores (MTME ``tasks.py``): (task name, level, statistic).
WMT_TASKS: dict[str, tuple[tuple[str, str, str], ...]] = {
    "wmt24": (("system SPA", "system", "soft_pairwise_accuracy"),
              ("item acc_eq", "item", "acc_eq")),
    "wmt23": (("system pairwise accuracy", "system", "pairwise_accuracy"),
              ("system Pearson", "system", "pearson"),
              ("segment Pearson", "segment", "pearson"),
              ("item acc_eq", "item", "acc_eq")),
}


def leaderboard(
    values: Mapping[tuple[str, str], Mapping[str, float]],
    draws: Mapping[tuple[str, str], Mapping[tuple[str, str], tuple[np.ndarray, np.ndarray]]],
    style: str = "wmt24",
    alpha: float = 0.05,
) -> pd.DataFrame | None:
    """The WMT23/WMT24-style overall ranking from per-(level, statistic) values and draws.

    ``values[(level, statistic)]`` maps metric -> statistic; ``draws[(level, statistic)]``
    the PERM-BOTH draws per metric pair. Returns None when a task is missing.
    """
    from nlgeval.correlation.ranking import TaskResult, overall_score

    tasks = []
    for name, level, stat in WMT_TASKS[style]:
        key = (level, stat)
        if key not in values or key not in draws:
            return None
        tasks.append(TaskResult(name, STATISTICS[stat].statistic_range, dict(values[key]),
                                dict(draws[key])))
    return overall_score(tasks, alpha=alpha)


def clusters(
    values: Mapping[str, float], comparisons: pd.DataFrame, alpha: float = 0.05
) -> pd.DataFrame:
    """Rank clusters (MTME ``AssignRanks``) from one-sided pairwise p-values."""
    from nlgeval.correlation.ranking import assign_ranks

    pv = {(str(a), str(b)): float(p) for a, b, p in
          zip(comparisons["metric_a"], comparisons["metric_b"], comparisons["pvalue"],
              strict=True)}
    finite = {m: v for m, v in values.items() if np.isfinite(v)}
    return assign_ranks(finite, pv, alpha)


# ----------------------------------------------------------------------------- the stage


@dataclass(frozen=True)
class CriterionMeta(Result):
    """What the meta-evaluation stage found for one human criterion."""

    rows: list[dict[str, Any]]
    comparisons: pd.DataFrame
    clusters: pd.DataFrame
    leaderboards: dict[str, pd.DataFrame]


def criterion_stage(
    criterion: str,
    oriented: Mapping[str, np.ndarray],
    Y: np.ndarray,
    statistics: Sequence[str],
    levels: Sequence[str],
    settings: MetaSettings,
    *,
    system_only: Sequence[str] = (),
    labels: Mapping[str, str] | None = None,
    alpha: float = 0.05,
    coefficient_draws: bool = False,
    progress: Any = None,
) -> CriterionMeta:
    """Statistics, PERM-BOTH comparisons, rank clusters and leaderboards for one criterion.

    ``oriented``: metric -> (systems x items) matrix, oriented (higher = better). ``statistics``
    are canonical names; the coefficients among them are only used here for the WMT23
    leaderboard draws (``coefficient_draws``) since the correlation stage reports them.
    ``labels`` maps a canonical name to the user's spelling, used in the ``statistic``
    column.
    """
    labels = dict(labels or {})
    rows: list[dict[str, Any]] = []
    comps, clus = [], []
    values: dict[tuple[str, str], dict[str, float]] = {}
    draws: dict[tuple[str, str], dict[tuple[str, str], tuple[np.ndarray, np.ndarray]]] = {}
    per_output = {m: v for m, v in oriented.items() if m not in system_only}
    todo = wanted([s for s in statistics if not is_coefficient(s)], levels)
    if coefficient_draws:
        for key in (("system", "pearson"), ("segment", "pearson")):
            if key not in todo:
                todo.append(key)
    for level, stat in todo:
        label = labels.get(stat, stat)
        is_coef = is_coefficient(stat)
        metrics = oriented if (level == "system" and STATISTICS[stat].all_metrics_at_system
                               ) else per_output
        vals, new_rows = _values(metrics, Y, level, stat, settings, progress)
        rows += [{"metric": m, "criterion": criterion, "level": level, "statistic": label,
                  **row} for m, row in new_rows]
        values[(level, stat)] = vals
        if settings.permutations > 0 and len(per_output) >= 2:
            cmp_df, dr = compare_metrics(per_output, Y, level, stat, settings)
            draws[(level, stat)] = dr
            if not is_coef and len(cmp_df):
                comps.append(as_comparison_table(cmp_df, criterion, level, label))
                cl = clusters({m: vals[m] for m in per_output}, cmp_df, alpha)
                clus.append(pd.DataFrame({
                    "metric": cl["metric"], "value": cl["statistic"], "cluster": cl["rank"],
                    "criterion": criterion, "level": level, "statistic": label,
                    "method": "perm-both (WMT ranks)"}))
    boards = {}
    for style in WMT_TASKS:
        b = leaderboard(values, draws, style, alpha)
        if b is not None:
            boards[style] = b.assign(criterion=criterion)
    return CriterionMeta(rows,
                         pd.concat(comps, ignore_index=True) if comps else pd.DataFrame(),
                         pd.concat(clus, ignore_index=True) if clus else pd.DataFrame(),
                         boards)


def _values(
    metrics: Mapping[str, np.ndarray], Y: np.ndarray, level: str, stat: str,
    settings: MetaSettings, progress: Any = None,
) -> tuple[dict[str, float], list[tuple[str, dict[str, Any]]]]:
    """Each metric's value of ``stat`` on ``level``, and its table row (none for the
    coefficients, which the correlation stage reports)."""
    vals: dict[str, float] = {}
    rows = []
    for m, X in metrics.items():
        if is_coefficient(stat):  # the correlation stage reports it; the value is kept
            vals[m] = float(STATISTICS[stat].value(X, Y, level, settings, m).statistic)
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            row = statistic_row(X, Y, level, stat, settings, m)
        vals[m] = float(row["value"])
        rows.append((m, row))
        if progress is not None:
            progress.advance(1)
    return vals, rows


def verdict(
    leaderboards: Mapping[str, pd.DataFrame], clusters_df: pd.DataFrame,
    correlations: pd.DataFrame, criteria: Sequence[str], levels: Sequence[str],
) -> list[dict[str, Any]]:
    """Per criterion, the metrics in the top cluster and the statistic/level it rests on.

    Uses the WMT24 leaderboard when it was computed, else the WMT23 one, else the rank
    clusters of the first statistic on the first level that has them.
    """
    out = []
    for crit in criteria:
        found = None
        for style in ("wmt24", "wmt23"):
            b = leaderboards.get(style)
            if b is not None and len(b) and (b["criterion"] == crit).any():
                sub = b[(b["criterion"] == crit) & (b["rank"] == 1)]
                if len(sub):
                    tasks = " + ".join(name for name, _, _ in WMT_TASKS[style])
                    found = {"criterion": crit, "top": sub["metric"].tolist(),
                             "statistic": f"{style.upper()} overall ({tasks})",
                             "level": "system+item", "value": float(sub["overall"].iloc[0])}
                    break
        if found is None and len(clusters_df):
            c = clusters_df[clusters_df["criterion"] == crit]
            for lv in levels:
                cl = c[(c["level"] == lv) & (c["cluster"] == 1)]
                if len(cl):
                    coef = cl["statistic"].iloc[0]
                    cl = cl[cl["statistic"] == coef]
                    found = {"criterion": crit, "top": cl["metric"].tolist(),
                             "statistic": str(coef), "level": lv,
                             "value": float(cl["value"].max())}
                    break
        if found is not None:
            out.append(found)
    return out


def verdict_line(v: Mapping[str, Any]) -> str:
    if v.get("line"):  # the verdict's own sentence (withheld verdicts say why)
        return str(v["line"])
    return (f"{v['criterion']}: top cluster {', '.join(v['top'])} "
            f"({v['statistic']}, {v['level']} level)")
