"""tau_23 and acc_23 (Deutsch, Foster & Freitag 2023) as statistics of the registry.

Per level: ``system`` = the variant on system means; ``segment``/``item``/``system-grouped`` =
MTME's groupings none/item/system (:func:`nlgeval.correlation.kendall.grouped_kendall`). The
bootstrap uses the weighted pair-count kernel (:func:`~nlgeval.correlation.kendall.
kendall_resample_distribution`) and PERM-BOTH :func:`~nlgeval.correlation.kendall.
kendall_permutation_test`; a cell swap is not defined at the system level.
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from nlgeval.correlation.levels import system_means
from nlgeval.correlation.statistics.base import (
    MTME_GROUPING,
    Statistic,
    StatisticOptions,
    StatisticValue,
)


class KendallVariant(Statistic):
    """A Kendall variant of :mod:`nlgeval.correlation.kendall` at every level.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[1.0, 2.0], [2.0, 1.0], [3.0, 3.0]])
    >>> Y = np.array([[1.0, 1.0], [2.0, 2.0], [3.0, 3.0]])
    >>> Acc23().value(X, Y, "item").statistic
    0.8333333333333333
    """

    variant: ClassVar[str] = ""
    perm_levels: ClassVar[tuple[str, ...] | None] = ("segment", "item", "system-grouped")
    all_metrics_at_system: ClassVar[bool] = True

    def batch(self, Xs: np.ndarray, Ys: np.ndarray, level: str) -> np.ndarray:
        from nlgeval.correlation.kendall import batch_grouped_kendall

        if level == "system":
            mx, my = system_means(Xs, Ys)
            return batch_grouped_kendall(mx[..., None, :], my[..., None, :], self.variant,
                                         "segment")
        return batch_grouped_kendall(Xs, Ys, self.variant, MTME_GROUPING[level])

    def value(self, X: np.ndarray, Y: np.ndarray, level: str,
              options: StatisticOptions | None = None, metric: str = "") -> StatisticValue:
        from nlgeval.correlation.kendall import grouped_kendall, kendall_variant

        if level == "system":
            mx, my = system_means(X, Y)
            ok = np.isfinite(mx) & np.isfinite(my)
            res = kendall_variant(mx[ok], my[ok], self.variant)
            return StatisticValue(res.statistic, int(ok.sum()), res.note)
        g = grouped_kendall(X, Y, self.variant, MTME_GROUPING[level])
        n = g.n_groups if level != "segment" else int((np.isfinite(X) & np.isfinite(Y)).sum())
        return StatisticValue(g.statistic, n, g.note)

    def resampled(self, X: np.ndarray, Y: np.ndarray, level: str, sys_idx: np.ndarray,
                  item_idx: np.ndarray, options: StatisticOptions | None = None) -> np.ndarray:
        from nlgeval.correlation.kendall import kendall_resample_distribution

        if level == "system":  # system means of the gathered resamples
            return super().resampled(X, Y, level, sys_idx, item_idx, options)
        return kendall_resample_distribution(X, Y, self.variant, MTME_GROUPING[level],
                                             sys_idx, item_idx)

    def swapped(self, XA: np.ndarray, XB: np.ndarray, Y: np.ndarray, level: str,
                options: StatisticOptions, metric_a: str = "", metric_b: str = ""
                ) -> tuple[float, float, np.ndarray, np.ndarray]:
        from nlgeval.correlation.kendall import kendall_permutation_test

        res = kendall_permutation_test(XA, XB, Y, self.variant, MTME_GROUPING[level],
                                       n_resamples=options.permutations, seed=options.seed)
        return res.statistic_a, res.statistic_b, res.draws_a, res.draws_b


class Tau23(KendallVariant):
    name = "tau_23"
    aliases: ClassVar[tuple[str, ...]] = ("tau23",)
    variant = "tau_23"
    description = "tau_23 (Deutsch et al. 2023): ties in both count as agreement"
    order = 4.0


class Acc23(KendallVariant):
    name = "acc_23"
    aliases = ("acc23",)
    variant = "acc_23"
    statistic_range = (0.0, 1.0)
    description = "acc_23 (Deutsch et al. 2023): share of pairs ordered or tied alike"
    order = 5.0


STATISTICS: tuple[Statistic, ...] = (Tau23(), Acc23())
