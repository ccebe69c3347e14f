"""Pearson, Spearman, Kendall tau-b and Stuart's tau-c as statistics of the registry.

Their kernels are those of :mod:`nlgeval.correlation.coefficients` (point and batch),
:mod:`nlgeval.correlation.bootstrap` (resamples) and :mod:`nlgeval.correlation.permutation.compare`
(PERM-BOTH draws from sufficient statistics for Pearson); the validation study reports them in
its correlation stage, with scipy's p-values (``coefficient = True``).
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from nlgeval.correlation.bootstrap import bootstrap_distribution
from nlgeval.correlation.levels import level_statistic
from nlgeval.correlation.statistics.base import (
    Statistic,
    StatisticOptions,
    StatisticValue,
    level_units,
)


class CorrelationCoefficient(Statistic):
    """A correlation coefficient at any level (Pearson 1896; Spearman 1904; Kendall 1945;
    Stuart 1953), defined from 3 units on.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[1.0, 2.0], [3.0, 5.0], [2.0, 2.5]])
    >>> round(Spearman().value(X, X ** 2, "system").statistic, 3)
    1.0
    """

    coefficient: ClassVar[bool] = True
    min_n: ClassVar[int] = 3
    order: ClassVar[float] = 0.0

    def batch(self, Xs: np.ndarray, Ys: np.ndarray, level: str) -> np.ndarray:
        return np.asarray(level_statistic(Xs, Ys, level, self.name))

    def value(self, X: np.ndarray, Y: np.ndarray, level: str,
              options: StatisticOptions | None = None, metric: str = "") -> StatisticValue:
        return StatisticValue(float(level_statistic(X, Y, level, self.name)),
                              level_units(X, Y, level))

    def resampled(self, X: np.ndarray, Y: np.ndarray, level: str, sys_idx: np.ndarray,
                  item_idx: np.ndarray, options: StatisticOptions | None = None) -> np.ndarray:
        return bootstrap_distribution(X, Y, level, self.name, sys_idx, item_idx)

    def swapped(self, XA: np.ndarray, XB: np.ndarray, Y: np.ndarray, level: str,
                options: StatisticOptions, metric_a: str = "", metric_b: str = ""
                ) -> tuple[float, float, np.ndarray, np.ndarray]:
        from nlgeval.correlation.permutation.compare import permutation_test

        if level == "system-grouped":  # the item level of the transposed matrices
            XA, XB, Y, level = XA.T, XB.T, Y.T, "item"
        res = permutation_test(XA, XB, Y, level, self.name, n_resamples=options.permutations,
                               seed=options.seed)
        return res.statistic_a, res.statistic_b, res.draws_a, res.draws_b


class Pearson(CorrelationCoefficient):
    name = "pearson"
    aliases = ("r",)
    description = "Pearson's r"
    order = 0.0


class Spearman(CorrelationCoefficient):
    name = "spearman"
    aliases = ("rho",)
    description = "Spearman's rho"
    order = 1.0


class KendallTauB(CorrelationCoefficient):
    name = "kendall"
    aliases = ("tau", "tau_b", "kendall_b")
    description = "Kendall's tau-b"
    order = 2.0


class KendallTauC(CorrelationCoefficient):
    name = "kendall_c"
    aliases = ("tau_c",)
    description = "Stuart's tau-c"
    order = 3.0


STATISTICS: tuple[Statistic, ...] = (Pearson(), Spearman(), KendallTauB(), KendallTauC())
