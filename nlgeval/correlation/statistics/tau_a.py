"""Kendall's tau-a (Kendall 1938): concordant minus discordant pairs over all n(n-1)/2 pairs.

``tau_a = (C - D) / N`` with ``N = n (n - 1) / 2``: ties in either variable count in the
denominator and in neither C nor D. It is computed with the one pair-count kernel of the Kendall
variants, through an identity with tau_23 (Deutsch, Foster & Freitag 2023, eq. 3:
``tau_23 = (C + T_hm - D - T_h - T_m) / N``): negating the human scores swaps C and D and leaves
every tie a tie, so ``tau_23(x, y) - tau_23(x, -y) = 2 (C - D) / N`` and

    tau_a(x, y) = (tau_23(x, y) - tau_23(x, -y)) / 2

for every vector, every group of a grouping (so also for the mean over groups), every bootstrap
resample and every PERM-BOTH draw (the same swap masks for y and -y). Defined from 2 values on,
as the Kendall variants; levels and groupings as tau_23 (:mod:`.kendall_variants`).
"""

from __future__ import annotations

import numpy as np

from nlgeval.correlation.statistics.base import Statistic, StatisticOptions, StatisticValue
from nlgeval.correlation.statistics.kendall_variants import Tau23


class TauA(Tau23):
    """Kendall's tau-a at every level (system means; MTME's groupings below).

    Examples
    --------
    >>> import numpy as np
    >>> x = np.array([[1.0, 2.0, 3.0, 3.0]])      # one system, four items: the pairs of the
    >>> y = np.array([[1.0, 3.0, 2.0, 4.0]])      # segment level (no grouping)
    >>> TauA().value(x, y, "segment").statistic   # C = 4, D = 1, one tie: (4 - 1) / 6
    0.5
    """

    name = "tau_a"
    aliases = ("taua", "kendall_a")
    description = "Kendall's tau-a: (concordant - discordant) / all pairs (Kendall 1938)"
    order = 3.5

    def batch(self, Xs: np.ndarray, Ys: np.ndarray, level: str) -> np.ndarray:
        return (super().batch(Xs, Ys, level) - super().batch(Xs, -Ys, level)) / 2

    def value(self, X: np.ndarray, Y: np.ndarray, level: str,
              options: StatisticOptions | None = None, metric: str = "") -> StatisticValue:
        a = super().value(X, Y, level, options, metric)
        b = super().value(X, -Y, level, options, metric)
        return StatisticValue((a.statistic - b.statistic) / 2, a.n,
                              a.note.replace("tau_23", "tau_a"))

    def resampled(self, X: np.ndarray, Y: np.ndarray, level: str, sys_idx: np.ndarray,
                  item_idx: np.ndarray, options: StatisticOptions | None = None) -> np.ndarray:
        return (super().resampled(X, Y, level, sys_idx, item_idx, options)
                - super().resampled(X, -Y, level, sys_idx, item_idx, options)) / 2

    def swapped(self, XA: np.ndarray, XB: np.ndarray, Y: np.ndarray, level: str,
                options: StatisticOptions, metric_a: str = "", metric_b: str = ""
                ) -> tuple[float, float, np.ndarray, np.ndarray]:
        pos = super().swapped(XA, XB, Y, level, options, metric_a, metric_b)
        neg = super().swapped(XA, XB, -Y, level, options, metric_a, metric_b)
        return (float((pos[0] - neg[0]) / 2), float((pos[1] - neg[1]) / 2),
                np.asarray((pos[2] - neg[2]) / 2), np.asarray((pos[3] - neg[3]) / 2))


STATISTICS: tuple[Statistic, ...] = (TauA(),)
