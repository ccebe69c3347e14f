"""The WMT meta-evaluation statistics as a stage of the validation study.

``nlgeval validate --statistics ...`` may ask, next to the correlation coefficients (Pearson,
Spearman, Kendall tau-b/tau-c, handled by :mod:`nlgeval.correlation.levels`), for the statistics
the WMT metrics task ranks metrics with today (google-research/mt-metrics-eval, "MTME"):

``tau_23``, ``acc_23``   Kendall-like variants of Deutsch, Foster & Freitag (2023, "Ties
                          Matter"), :mod:`nlgeval.correlation.kendall`;
``acc_eq``               acc_23 with tie calibration (ibid.): the epsilon below which metric
                          differences count as ties is the one maximising acc_23,
                          :mod:`nlgeval.correlation.tie_calibration`;
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

from nlgeval.correlation.bootstrap import percentile_interval, resample_indices
from nlgeval.correlation.coefficients import COEFFICIENTS, check_coefficient
from nlgeval.correlation.levels import check_level, system_means
from nlgeval.errors import InputError

#: level -> MTME grouping for the segment-level statistics
GROUPING = {"segment": "none", "item": "item", "system-grouped": "system"}


@dataclass(frozen=True)
class Statistic:
    """A meta-evaluation statistic: its family, the levels it applies to, its range."""

    name: str
    family: str
    levels: tuple[str, ...]
    statistic_range: tuple[float, float]
    description: str


_ALL = ("system", "segment", "item", "system-grouped")
STATISTICS: dict[str, Statistic] = {s.name: s for s in (
    Statistic("pearson", "correlation", _ALL, (-1, 1), "Pearson's r"),
    Statistic("spearman", "correlation", _ALL, (-1, 1), "Spearman's rho"),
    Statistic("kendall", "correlation", _ALL, (-1, 1), "Kendall's tau-b"),
    Statistic("kendall_c", "correlation", _ALL, (-1, 1), "Stuart's tau-c"),
    Statistic("tau_23", "kendall", _ALL, (-1, 1),
              "tau_23 (Deutsch et al. 2023): ties in both count as agreement"),
    Statistic("acc_23", "kendall", _ALL, (0, 1),
              "acc_23 (Deutsch et al. 2023): share of pairs ordered or tied alike"),
    Statistic("acc_eq", "acc_eq", ("segment", "item", "system-grouped"), (0, 1),
              "acc_23 with tie calibration (Deutsch et al. 2023)"),
    Statistic("pairwise_accuracy", "pairwise", ("system",), (0, 1),
              "system-level pairwise accuracy (Kocmi et al. 2021)"),
    Statistic("soft_pairwise_accuracy", "spa", ("system",), (0, 1),
              "soft pairwise accuracy (Thompson et al. 2024)"),
)}
_ALIASES = {
    "tau23": "tau_23", "acc23": "acc_23", "acceq": "acc_eq", "acc_eq_item": "acc_eq",
    "pa": "pairwise_accuracy", "accuracy": "pairwise_accuracy",
    "spa": "soft_pairwise_accuracy", "soft_pa": "soft_pairwise_accuracy",
    "tau_b": "kendall", "tau_c": "kendall_c",
}


#: Named sets of statistics: what the WMT23 / WMT24 metrics tasks rank metrics with.
PRESETS: dict[str, tuple[str, ...]] = {
    "wmt24": ("soft_pairwise_accuracy", "acc_eq"),
    "wmt23": ("pairwise_accuracy", "pearson", "acc_eq"),
}


def expand_statistics(names: Sequence[str]) -> list[str]:
    """Replace the presets ``wmt23``/``wmt24`` by their statistics (order kept, no repeats)."""
    out: list[str] = []
    for n in names:
        key = n.strip().lower()
        for s in PRESETS.get(key, (n.strip(),)):
            if s not in out:
                out.append(s)
    return out


def check_statistic(name: str) -> str:
    """Canonical name of a statistic (coefficients keep :func:`check_coefficient`'s names)."""
    key = name.strip().lower().replace("-", "_")
    key = _ALIASES.get(key, key)
    if key in STATISTICS:
        return key
    try:
        return check_coefficient(key)
    except InputError:
        raise InputError(f"unknown statistic '{name}' (use one of: "
                         f"{', '.join(STATISTICS)})") from None


def is_coefficient(name: str) -> bool:
    return check_statistic(name) in COEFFICIENTS


@dataclass(frozen=True)
class MetaSettings:
    """Options of the meta-evaluation stage (recorded in run.json)."""

    permutations: int = 1000
    spa_permutations: int = 1000
    resamples: int = 1000
    resample: str = "both"
    confidence_level: float = 0.95
    seed: int = 0
    epsilon: Mapping[str, float] | None = None  # fixed acc_eq epsilon per metric (dev set)


# ----------------------------------------------------------------------------- point values


def statistic_row(
    X: np.ndarray, Y: np.ndarray, level: str, statistic: str, settings: MetaSettings,
    metric: str = "",
) -> dict[str, Any]:
    """One row of the correlations table for a non-coefficient statistic.

    Returns ``r`` (the statistic), ``p`` (NaN: these statistics have no test of "no
    association"; metrics are compared with PERM-BOTH instead), ``ci_low``/``ci_high``
    (percentile bootstrap for tau_23/acc_23, else NaN), ``n`` (units of the level),
    ``epsilon`` (acc_eq) and a ``note``.
    """
    from nlgeval.correlation.kendall import (
        batch_grouped_kendall,
        grouped_kendall,
        kendall_resample_distribution,
        kendall_variant,
    )
    from nlgeval.correlation.pairwise import pairwise_accuracy, soft_pairwise_accuracy
    from nlgeval.correlation.tie_calibration import acc_eq

    level = check_level(level)
    spec = STATISTICS[statistic]
    nan = math.nan
    row: dict[str, Any] = {"r": nan, "p": nan, "ci_low": nan, "ci_high": nan, "n": 0,
                           "epsilon": None, "note": ""}
    ci = (nan, nan)
    if spec.family == "kendall":
        if level == "system":
            mx, my = system_means(X, Y)
            ok = np.isfinite(mx) & np.isfinite(my)
            res = kendall_variant(mx[ok], my[ok], statistic)
            row.update(r=res.statistic, n=int(ok.sum()), note=res.note)
            if settings.resamples > 0:
                si, ii = resample_indices(X.shape[0], X.shape[1], settings.resamples,
                                          settings.resample, settings.seed)
                dist = _system_level_kendall_distribution(X, Y, statistic, si, ii,
                                                          batch_grouped_kendall)
                ci = percentile_interval(dist, settings.confidence_level)
        else:
            g = grouped_kendall(X, Y, statistic, GROUPING[level])
            row.update(r=g.statistic, n=g.n_groups if level != "segment" else
                       int((np.isfinite(X) & np.isfinite(Y)).sum()), note=g.note)
            if settings.resamples > 0:
                si, ii = resample_indices(X.shape[0], X.shape[1], settings.resamples,
                                          settings.resample, settings.seed)
                dist = kendall_resample_distribution(X, Y, statistic, GROUPING[level], si, ii)
                ci = percentile_interval(dist, settings.confidence_level)
    elif spec.family == "acc_eq":
        eps = None if not settings.epsilon else settings.epsilon.get(metric)
        res = acc_eq(X, Y, GROUPING[level], epsilon=eps)
        # the constant metric (every pair a tie) scores the share of human-tied pairs; a metric
        # whose calibrated epsilon ties (nearly) everything is no better than that baseline
        const = np.where(np.isfinite(X), 0.0, np.nan)
        base = grouped_kendall(const, Y, "acc_23", GROUPING[level]).statistic
        note = res.note
        if np.isfinite(base) and res.statistic <= base + 1e-12:
            note = _join(note, f"no better than predicting a tie for every pair (acc_eq of a "
                               f"constant metric: {base:.4f}; Deutsch et al. 2023)")
        row.update(r=res.statistic, epsilon=res.epsilon, note=note,
                   n=res.n_groups if level != "segment" else
                   int((np.isfinite(X) & np.isfinite(Y)).sum()))
    elif spec.family == "pairwise":
        res = pairwise_accuracy(X, Y)
        row.update(r=res.statistic, n=res.n_systems, note=res.note)
    elif spec.family == "spa":
        res = soft_pairwise_accuracy(X, Y, permutations=settings.spa_permutations,
                                     seed=settings.seed)
        row.update(r=res.statistic, n=res.n_systems,
                   note=_join(res.note, f"{settings.spa_permutations} sign-flip permutations "
                                        f"(seed {settings.seed})"))
    row["ci_low"], row["ci_high"] = float(ci[0]), float(ci[1])
    return row


def _system_level_kendall_distribution(
    X: np.ndarray, Y: np.ndarray, statistic: str, si: np.ndarray, ii: np.ndarray,
    batch: Any,
) -> np.ndarray:
    """tau_23/acc_23 of the system means of every bootstrap resample (chunked)."""
    out = np.empty(si.shape[0])
    chunk = max(1, 2_000_000 // max(1, X.size))
    for s in range(0, si.shape[0], chunk):
        sub_s, sub_i = si[s:s + chunk, :, None], ii[s:s + chunk, None, :]
        mx, my = system_means(X[sub_s, sub_i], Y[sub_s, sub_i])
        out[s:s + chunk] = batch(mx[:, None, :], my[:, None, :], statistic, "none")
    return out


def _join(*parts: str) -> str:
    return "; ".join(p for p in parts if p)


# ----------------------------------------------------------------------------- comparisons


def compare_pair(
    XA: np.ndarray, XB: np.ndarray, Y: np.ndarray, level: str, statistic: str,
    settings: MetaSettings, metric_a: str = "", metric_b: str = "",
) -> Any:
    """PERM-BOTH test "A is better than B" on one statistic and level (result with draws)."""
    from nlgeval.correlation.kendall import kendall_permutation_test
    from nlgeval.correlation.pairwise import pairwise_accuracy_test, soft_pairwise_accuracy_test
    from nlgeval.correlation.tie_calibration import acc_eq_permutation_test

    spec = STATISTICS[statistic]
    P, seed = settings.permutations, settings.seed
    if spec.family == "correlation":
        from nlgeval.correlation.compare import permutation_test

        if level == "system-grouped":  # the item level of the transposed matrices
            XA, XB, Y, level = XA.T, XB.T, Y.T, "item"
        return permutation_test(XA, XB, Y, level, statistic, permutations=P, seed=seed)
    if spec.family == "kendall":
        if level == "system":
            return None  # a cell swap at system level is not defined for these counts
        return kendall_permutation_test(XA, XB, Y, statistic, GROUPING[level],
                                        permutations=P, seed=seed)
    if spec.family == "acc_eq":
        eps = settings.epsilon or {}
        return acc_eq_permutation_test(XA, XB, Y, GROUPING[level], permutations=P, seed=seed,
                                       epsilon_a=eps.get(metric_a), epsilon_b=eps.get(metric_b))
    if spec.family == "pairwise":
        return pairwise_accuracy_test(XA, XB, Y, permutations=P, seed=seed)
    if spec.family == "spa":
        return soft_pairwise_accuracy_test(XA, XB, Y, permutations=P, seed=seed,
                                           spa_permutations=settings.spa_permutations,
                                           spa_seed=seed)
    raise InputError(f"no PERM-BOTH test for '{statistic}' here (coefficients are compared "
                     "by nlgeval.correlation.compare)")


def compare_metrics(
    oriented: Mapping[str, np.ndarray], Y: np.ndarray, level: str, statistic: str,
    settings: MetaSettings,
) -> tuple[pd.DataFrame, dict[tuple[str, str], tuple[np.ndarray, np.ndarray]]]:
    """Every ordered pair of metrics: one-sided PERM-BOTH p-values, and the draws.

    One test per unordered pair: the reverse direction is read from the same draws,
    ``p(B > A) = (1 + #{-d* >= -d}) / (1 + K)``.
    """
    names = list(oriented)
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
            d = float(res.statistic_a) - float(res.statistic_b)
            null = da - db
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


def wanted(statistics: Sequence[str], levels: Sequence[str]) -> list[tuple[str, str]]:
    """The (level, statistic) combinations to compute: each statistic on its levels."""
    out = []
    for lv in levels:
        for s in statistics:
            if lv in STATISTICS[s].levels:
                out.append((lv, s))
    return out


# ----------------------------------------------------------------------------- the stage


@dataclass(frozen=True)
class CriterionMeta:
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
    ``labels`` maps a canonical name to the user's spelling, used in the ``coefficient``
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
        metrics = oriented if (level == "system" and STATISTICS[stat].family
                               in ("kendall", "pairwise")) else per_output
        vals: dict[str, float] = {}
        for m, X in metrics.items():
            if is_coef:
                from nlgeval.correlation.levels import level_statistic

                vals[m] = float(level_statistic(X, Y, level, stat))
                continue
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)
                row = statistic_row(X, Y, level, stat, settings, m)
            vals[m] = float(row["r"])
            rows.append({"metric": m, "criterion": criterion, "level": level,
                         "coefficient": label, **row})
            if progress is not None:
                progress.advance(1)
        values[(level, stat)] = vals
        if settings.permutations > 0 and len(per_output) >= 2:
            cmp_df, dr = compare_metrics(per_output, Y, level, stat, settings)
            draws[(level, stat)] = dr
            if not is_coef and len(cmp_df):
                comps.append(cmp_df.assign(criterion=criterion, level=level,
                                           coefficient=label))
                cl = clusters({m: vals[m] for m in per_output}, cmp_df, alpha)
                clus.append(pd.DataFrame({
                    "metric": cl["metric"], "r": cl["statistic"], "cluster": cl["rank"],
                    "criterion": criterion, "level": level, "coefficient": label,
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
                    coef = cl["coefficient"].iloc[0]
                    cl = cl[cl["coefficient"] == coef]
                    found = {"criterion": crit, "top": cl["metric"].tolist(),
                             "statistic": str(coef), "level": lv,
                             "value": float(cl["r"].max())}
                    break
        if found is not None:
            out.append(found)
    return out


def verdict_line(v: Mapping[str, Any]) -> str:
    return (f"{v['criterion']}: top cluster {', '.join(v['top'])} "
            f"({v['statistic']}, {v['level']} level)")
