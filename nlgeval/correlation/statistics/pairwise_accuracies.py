"""System-level pairwise accuracy (Kocmi et al. 2021) and soft pairwise accuracy (Thompson et
al. 2024) in the registry, with their PERM-BOTH tests (:mod:`nlgeval.correlation.pairwise`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar

import numpy as np

from nlgeval.correlation.levels import system_means
from nlgeval.correlation.statistics.base import Statistic, StatisticOptions, StatisticValue


class PairwiseAccuracy(Statistic):
    """Share of system pairs ordered as the humans order them (system level only).

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[0.9, 0.8], [0.5, 0.6], [0.2, 0.3]])
    >>> PairwiseAccuracy().value(X, X * 2, "system").statistic
    1.0
    """

    name = "pairwise_accuracy"
    aliases = ("pa", "accuracy")
    description = "system-level pairwise accuracy (Kocmi et al. 2021)"
    levels: ClassVar[tuple[str, ...]] = ("system",)
    statistic_range = (0.0, 1.0)
    interval = False
    all_metrics_at_system = True
    order = 7.0

    def batch(self, Xs: np.ndarray, Ys: np.ndarray, level: str) -> np.ndarray:
        from nlgeval.correlation.pairwise import pairwise_accuracy_from_scores

        mx, my = system_means(Xs, Ys)
        lead = mx.shape[:-1]
        mx, my = mx.reshape(-1, mx.shape[-1]), my.reshape(-1, my.shape[-1])
        out = []
        for a, b in zip(mx, my, strict=True):
            ok = np.isfinite(a) & np.isfinite(b)
            out.append(pairwise_accuracy_from_scores(a[ok], b[ok]).statistic)
        return np.asarray(out, dtype=float).reshape(lead)

    def value(self, X: np.ndarray, Y: np.ndarray, level: str,
              options: StatisticOptions | None = None, metric: str = "") -> StatisticValue:
        from nlgeval.correlation.pairwise import pairwise_accuracy

        res = pairwise_accuracy(X, Y)
        return StatisticValue(res.statistic, res.n_systems, res.note)

    def swapped(self, XA: np.ndarray, XB: np.ndarray, Y: np.ndarray, level: str,
                options: StatisticOptions, metric_a: str = "", metric_b: str = ""
                ) -> tuple[float, float, np.ndarray, np.ndarray]:
        from nlgeval.correlation.pairwise import pairwise_accuracy_test

        res = pairwise_accuracy_test(XA, XB, Y, n_resamples=options.permutations,
                                     seed=options.seed)
        return res.statistic_a, res.statistic_b, res.draws_a, res.draws_b


class SoftPairwiseAccuracy(Statistic):
    """Soft pairwise accuracy, from sign-flip permutation p-values per system pair (system
    level only; ``options.spa_permutations`` permutations, seed ``options.seed``; :meth:`batch`
    uses 1000 permutations and seed 0).

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> H = rng.normal(size=(4, 30)) + np.arange(4)[:, None]
    >>> v = SoftPairwiseAccuracy().value(H, H, "system", StatisticOptions(spa_permutations=200))
    >>> v.statistic
    1.0
    """

    name = "soft_pairwise_accuracy"
    aliases = ("spa", "soft_pa")
    description = "soft pairwise accuracy (Thompson et al. 2024)"
    levels: ClassVar[tuple[str, ...]] = ("system",)
    statistic_range = (0.0, 1.0)
    interval = False
    order = 8.0

    def batch(self, Xs: np.ndarray, Ys: np.ndarray, level: str) -> np.ndarray:
        from nlgeval.correlation.pairwise import soft_pairwise_accuracy

        lead = Xs.shape[:-2]
        X2, Y2 = Xs.reshape(-1, *Xs.shape[-2:]), Ys.reshape(-1, *Ys.shape[-2:])
        out = [soft_pairwise_accuracy(x, y).statistic for x, y in zip(X2, Y2, strict=True)]
        return np.asarray(out, dtype=float).reshape(lead)

    def value(self, X: np.ndarray, Y: np.ndarray, level: str,
              options: StatisticOptions | None = None, metric: str = "") -> StatisticValue:
        from nlgeval.correlation.pairwise import soft_pairwise_accuracy

        options = options or StatisticOptions()
        res = soft_pairwise_accuracy(X, Y, n_resamples=options.spa_permutations,
                                     seed=options.seed)
        perms = f"{options.spa_permutations} sign-flip permutations (seed {options.seed})"
        return StatisticValue(res.statistic, res.n_systems,
                              f"{res.note}; {perms}" if res.note else perms)

    def swapped(self, XA: np.ndarray, XB: np.ndarray, Y: np.ndarray, level: str,
                options: StatisticOptions, metric_a: str = "", metric_b: str = ""
                ) -> tuple[float, float, np.ndarray, np.ndarray]:
        from nlgeval.correlation.pairwise import soft_pairwise_accuracy_test

        res = soft_pairwise_accuracy_test(XA, XB, Y, n_resamples=options.permutations,
                                          seed=options.seed,
                                          spa_permutations=options.spa_permutations,
                                          spa_seed=options.seed)
        return res.statistic_a, res.statistic_b, res.draws_a, res.draws_b

    def prepare_comparisons(self, metrics: Mapping[str, np.ndarray], Y: np.ndarray, level: str,
                            options: StatisticOptions) -> None:
        """Compute the PERM-BOTH draws of every pair of ``metrics`` at once (one product per
        metric rather than per pair); :meth:`swapped` then reads them (same numbers)."""
        from nlgeval.correlation._spa_perm import prime_pairs

        if level == "system" and options.permutations > 0:
            prime_pairs([np.asarray(X, dtype=float) for X in metrics.values()],
                        np.asarray(Y, dtype=float), n_resamples=options.permutations,
                        seed=options.seed, spa_permutations=options.spa_permutations,
                        spa_seed=options.seed)


STATISTICS: tuple[Statistic, ...] = (PairwiseAccuracy(), SoftPairwiseAccuracy())
