"""The statistics of the WMT meta-evaluation stage: names, presets and point values.

The registry :data:`STATISTICS` (what each statistic is, the levels it applies to, its range),
name checking (:func:`check_statistic`), the presets ``wmt23``/``wmt24`` and one row of the
correlations table per statistic (:func:`statistic_row`). The comparisons, clusters and
leaderboards built on them are in :mod:`nlgeval.report.meta`, which re-exports these names.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from nlgeval.correlation.bootstrap import percentile_interval, resample_indices
from nlgeval.correlation.coefficients import COEFFICIENTS, check_coefficient
from nlgeval.correlation.levels import check_level, system_means
from nlgeval.errors import InputError
from nlgeval.results import Result

#: level -> MTME grouping for the segment-level statistics
GROUPING = {"segment": "none", "item": "item", "system-grouped": "system"}


@dataclass(frozen=True)
class Statistic(Result):
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
class MetaSettings(Result):
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
    from nlgeval.correlation.pairwise import pairwise_accuracy, soft_pairwise_accuracy

    level = check_level(level)
    spec = STATISTICS[statistic]
    nan = math.nan
    row: dict[str, Any] = {"r": nan, "p": nan, "ci_low": nan, "ci_high": nan, "n": 0,
                           "epsilon": None, "note": ""}
    if spec.family == "kendall":
        row.update(_kendall_row(X, Y, level, statistic, settings))
    elif spec.family == "acc_eq":
        row.update(_acc_eq_row(X, Y, level, settings, metric))
    elif spec.family == "pairwise":
        res = pairwise_accuracy(X, Y)
        row.update(r=res.statistic, n=res.n_systems, note=res.note)
    elif spec.family == "spa":
        res = soft_pairwise_accuracy(X, Y, permutations=settings.spa_permutations,
                                     seed=settings.seed)
        row.update(r=res.statistic, n=res.n_systems,
                   note=_join(res.note, f"{settings.spa_permutations} sign-flip permutations "
                                        f"(seed {settings.seed})"))
    row["ci_low"], row["ci_high"] = float(row["ci_low"]), float(row["ci_high"])
    return row


def _kendall_row(
    X: np.ndarray, Y: np.ndarray, level: str, statistic: str, settings: MetaSettings
) -> dict[str, Any]:
    """tau_23/acc_23 on one level with a percentile bootstrap interval."""
    from nlgeval.correlation.kendall import (
        batch_grouped_kendall,
        grouped_kendall,
        kendall_resample_distribution,
        kendall_variant,
    )

    ci = (math.nan, math.nan)
    if level == "system":
        mx, my = system_means(X, Y)
        ok = np.isfinite(mx) & np.isfinite(my)
        res = kendall_variant(mx[ok], my[ok], statistic)
        row = {"r": res.statistic, "n": int(ok.sum()), "note": res.note}
        if settings.resamples > 0:
            si, ii = resample_indices(X.shape[0], X.shape[1], settings.resamples,
                                      settings.resample, settings.seed)
            dist = _system_level_kendall_distribution(X, Y, statistic, si, ii,
                                                      batch_grouped_kendall)
            ci = percentile_interval(dist, settings.confidence_level)
    else:
        g = grouped_kendall(X, Y, statistic, GROUPING[level])
        row = {"r": g.statistic, "n": g.n_groups if level != "segment" else
               int((np.isfinite(X) & np.isfinite(Y)).sum()), "note": g.note}
        if settings.resamples > 0:
            si, ii = resample_indices(X.shape[0], X.shape[1], settings.resamples,
                                      settings.resample, settings.seed)
            dist = kendall_resample_distribution(X, Y, statistic, GROUPING[level], si, ii)
            ci = percentile_interval(dist, settings.confidence_level)
    return {**row, "ci_low": ci[0], "ci_high": ci[1]}


def _acc_eq_row(
    X: np.ndarray, Y: np.ndarray, level: str, settings: MetaSettings, metric: str
) -> dict[str, Any]:
    """acc_eq (tie-calibrated unless the settings fix epsilon for ``metric``)."""
    from nlgeval.correlation.kendall import grouped_kendall
    from nlgeval.correlation.tie_calibration import acc_eq

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
    return {"r": res.statistic, "epsilon": res.epsilon, "note": note,
            "n": res.n_groups if level != "segment" else
            int((np.isfinite(X) & np.isfinite(Y)).sum())}


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


def wanted(statistics: Sequence[str], levels: Sequence[str]) -> list[tuple[str, str]]:
    """The (level, statistic) combinations to compute: each statistic on its levels."""
    out = []
    for lv in levels:
        for s in statistics:
            if lv in STATISTICS[s].levels:
                out.append((lv, s))
    return out
