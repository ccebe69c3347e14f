"""The statistics of the meta-evaluation stage: names, presets and point values.

Every statistic comes from the registry of :mod:`nlgeval.correlation.statistics` (built-ins and
the ``nlgeval.statistics`` entry-point group): :data:`STATISTICS` is a live view of it by
canonical name, :func:`check_statistic` resolves a user's spelling, the presets ``wmt23``/
``wmt24`` name what the WMT metrics tasks rank metrics with, and :func:`statistic_row` is one
row of the correlations table for any statistic that is not a correlation coefficient (the
coefficients have their own stage, with scipy's p-values). The comparisons, clusters and
leaderboards built on them are in :mod:`nlgeval.report.meta`, which re-exports these names.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from nlgeval.correlation.bootstrap import percentile_interval, resample_indices
from nlgeval.correlation.levels import check_level
from nlgeval.correlation.statistics import (
    Statistic,
    StatisticOptions,
    available_statistics,
    get_statistic,
)
from nlgeval.correlation.statistics.base import MTME_GROUPING

#: level -> MTME grouping for the segment-level statistics
GROUPING = MTME_GROUPING


class _Registry(Mapping[str, Statistic]):
    """Canonical name -> statistic, read from the registry at each access (plugins included)."""

    def __getitem__(self, name: str) -> Statistic:
        return get_statistic(name)

    def __iter__(self) -> Iterator[str]:
        return iter(available_statistics())

    def __len__(self) -> int:
        return len(available_statistics())


#: Every statistic by canonical name (a live view of the registry).
STATISTICS: Mapping[str, Statistic] = _Registry()

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
    """Canonical name of a statistic (any registered one; coefficients keep their names)."""
    return get_statistic(name).name


def is_coefficient(name: str) -> bool:
    """Whether the statistic is a correlation coefficient (reported by the correlation stage)."""
    return get_statistic(name).coefficient


@dataclass(frozen=True)
class MetaSettings(StatisticOptions):
    """Options of the meta-evaluation stage (recorded in run.json): the
    :class:`~nlgeval.correlation.statistics.StatisticOptions` every statistic takes."""


# ----------------------------------------------------------------------------- point values


def statistic_row(
    X: np.ndarray, Y: np.ndarray, level: str, statistic: str, settings: MetaSettings,
    metric: str = "",
) -> dict[str, Any]:
    """One row of the correlations table for a statistic that is not a coefficient.

    Returns ``r`` (the statistic), ``p`` (NaN: these statistics have no test of "no
    association"; metrics are compared with PERM-BOTH instead), ``ci_low``/``ci_high``
    (percentile bootstrap of the statistic's resamples where it declares an interval, else
    NaN), ``n`` (units of the level), ``epsilon`` (acc_eq) and a ``note``.
    """
    level = check_level(level)
    stat = get_statistic(statistic)
    value = stat.value(X, Y, level, settings, metric)
    ci = (math.nan, math.nan)
    if stat.interval and settings.n_resamples > 0:
        si, ii = resample_indices(X.shape[0], X.shape[1], settings.n_resamples,
                                  settings.resample, settings.seed)
        ci = percentile_interval(stat.resampled(X, Y, level, si, ii, settings),
                                 settings.confidence_level)
    return {"value": value.statistic, "pvalue": math.nan, "ci_low": float(ci[0]),
            "ci_high": float(ci[1]), "n": value.n, "epsilon": value.epsilon,
            "note": value.note}


def wanted(statistics: Sequence[str], levels: Sequence[str]) -> list[tuple[str, str]]:
    """The (level, statistic) combinations to compute: each statistic on its levels."""
    out = []
    for lv in levels:
        for s in statistics:
            if lv in STATISTICS[s].levels:
                out.append((lv, s))
    return out
