"""acc_eq: acc_23 with tie calibration (Deutsch, Foster & Freitag 2023) in the registry.

The value calibrates the tie threshold epsilon on the data (or takes the metric's fixed
epsilon from ``StatisticOptions.epsilon``, e.g. calibrated on a development set) and notes when
the calibrated metric is no better than a constant one; PERM-BOTH is MTME's pairs test with the
epsilon calibrated once (:func:`nlgeval.correlation.kendall.acc_eq_permutation_test`).
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from nlgeval.correlation.statistics.base import (
    MTME_GROUPING,
    Statistic,
    StatisticOptions,
    StatisticValue,
)


class AccEq(Statistic):
    """acc_eq at the segment (no grouping), item and system-grouped levels.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[0.0, 1.0], [0.01, 2.0], [3.0, 3.0]])
    >>> Y = np.array([[1.0, 1.0], [1.0, 2.0], [3.0, 3.0]])
    >>> v = AccEq().value(X, Y, "item")
    >>> v.statistic, v.epsilon
    (1.0, 0.01)
    """

    name = "acc_eq"
    aliases = ("acceq", "acc_eq_item")
    description = "acc_23 with tie calibration (Deutsch et al. 2023)"
    levels: ClassVar[tuple[str, ...]] = ("segment", "item", "system-grouped")
    statistic_range = (0.0, 1.0)
    interval = False
    order = 6.0

    def batch(self, Xs: np.ndarray, Ys: np.ndarray, level: str) -> np.ndarray:
        """acc_eq of every matrix of the stacks, each calibrated on itself (a loop)."""
        from nlgeval.correlation.kendall import acc_eq

        lead = Xs.shape[:-2]
        X2, Y2 = Xs.reshape(-1, *Xs.shape[-2:]), Ys.reshape(-1, *Ys.shape[-2:])
        out = [acc_eq(x, y, MTME_GROUPING[level]).statistic for x, y in zip(X2, Y2,
                                                                             strict=True)]
        return np.asarray(out, dtype=float).reshape(lead)

    def value(self, X: np.ndarray, Y: np.ndarray, level: str,
              options: StatisticOptions | None = None, metric: str = "") -> StatisticValue:
        from nlgeval.correlation.kendall import acc_eq, grouped_kendall

        fixed = options.epsilon if options is not None else None
        eps = fixed.get(metric) if fixed else None
        res = acc_eq(X, Y, MTME_GROUPING[level], epsilon=eps)
        # the constant metric (every pair a tie) scores the share of human-tied pairs; a
        # metric whose calibrated epsilon ties (nearly) everything is no better than that
        const = np.where(np.isfinite(X), 0.0, np.nan)
        base = grouped_kendall(const, Y, "acc_23", MTME_GROUPING[level]).statistic
        note = res.note
        if np.isfinite(base) and res.statistic <= base + 1e-12:
            extra = (f"no better than predicting a tie for every pair (acc_eq of a constant "
                     f"metric: {base:.4f}; Deutsch et al. 2023)")
            note = f"{note}; {extra}" if note else extra
        n = res.n_groups if level != "segment" else int((np.isfinite(X) & np.isfinite(Y)).sum())
        return StatisticValue(res.statistic, n, note, res.epsilon)

    def swapped(self, XA: np.ndarray, XB: np.ndarray, Y: np.ndarray, level: str,
                options: StatisticOptions, metric_a: str = "", metric_b: str = ""
                ) -> tuple[float, float, np.ndarray, np.ndarray]:
        from nlgeval.correlation.kendall import acc_eq_permutation_test

        eps = options.epsilon or {}
        res = acc_eq_permutation_test(XA, XB, Y, MTME_GROUPING[level],
                                      n_resamples=options.permutations, seed=options.seed,
                                      epsilon_a=eps.get(metric_a), epsilon_b=eps.get(metric_b))
        return res.statistic_a, res.statistic_b, res.draws_a, res.draws_b


STATISTICS: tuple[Statistic, ...] = (AccEq(),)
