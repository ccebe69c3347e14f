"""The ``Statistic`` protocol, one generic bootstrap and one generic PERM-BOTH test.

A meta-evaluation statistic measures how well a metric's scores agree with human scores, given
two aligned (systems x items) matrices ``X`` (metric, oriented so that higher is better) and
``Y`` (human), NaN where a cell is missing. A statistic declares

* ``name`` (and ``aliases``), ``description``, the ``levels`` it supports (``system``,
  ``segment``, ``item``, ``system-grouped``; see :mod:`nlgeval.correlation.levels`), its
  direction (``higher_is_better``: a higher value means better agreement), its minimum number
  of units ``min_n`` and its ``statistic_range``;
* a point value (:meth:`Statistic.value`) and a batched value over a stack of matrices
  (:meth:`Statistic.batch`), from which the batched values over bootstrap resamples
  (:meth:`Statistic.resampled`) and over PERM-BOTH draws (:meth:`Statistic.swapped`) follow by
  default; a statistic with a faster kernel overrides those two.

:func:`bootstrap_statistic` (percentile bootstrap resampling systems, items or both; Deutsch,
Dror & Roth 2021) and :func:`perm_both_test` (PERM-BOTH, ibid.: the two metrics' scores swapped
per cell with probability 1/2; one-sided p = (1 + #{d* >= d}) / (1 + K), Phipson & Smyth 2010)
are the only two procedures, and work for any statistic. A new statistic is one subclass in one
module: in :mod:`nlgeval.correlation.statistics` (discovered by the registry) or in another
package, registered through the ``nlgeval.statistics`` entry-point group.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from dataclasses import InitVar, dataclass
from typing import Any, ClassVar

import numpy as np

from nlgeval.correlation.bootstrap import (
    BootstrapResult,
    check_resample,
    percentile_interval,
    resample_indices,
)
from nlgeval.correlation.levels import LEVELS, check_level
from nlgeval.correlation.permutation.draws import (
    PermutationComparison,
    comparison_from_draws,
    iter_swap_masks,
    standardise,
    swap_draws,
)
from nlgeval.deprecation import renamed_keyword
from nlgeval.errors import InputError
from nlgeval.results import Result

_CELLS_PER_CHUNK = 2_000_000  # cells of one gathered stack of resamples or swapped matrices

#: level -> grouping of the Kendall variants and acc_eq (MTME's ``average_by`` none/item/sys;
#: the Kendall functions take the level names)
MTME_GROUPING = {"segment": "segment", "item": "item", "system-grouped": "system-grouped"}


@dataclass(frozen=True)
class StatisticOptions(Result):
    """Options of the resampling procedures: PERM-BOTH draws, bootstrap resamples, seeds.

    ``epsilon`` fixes acc_eq's tie threshold per metric (else it is calibrated);
    ``permutations`` are the PERM-BOTH draws (the tests' ``n_resamples``: a distinct name here,
    as these options also hold the bootstrap's count);
    ``spa_permutations`` are soft pairwise accuracy's sign-flip permutations; ``n_resamples``
    the bootstrap resamples (``resamples``: its earlier name, deprecated, still accepted for
    one release with a :class:`DeprecationWarning`).

    Examples
    --------
    >>> StatisticOptions(n_resamples=200).n_resamples
    200
    """

    permutations: int = 1000
    spa_permutations: int = 1000
    n_resamples: int = 1000
    resample: str = "both"
    confidence_level: float = 0.95
    seed: int = 0
    epsilon: Mapping[str, float] | None = None
    #: the earlier name of ``n_resamples`` (deprecated; not a field, so not in ``to_dict``)
    resamples: InitVar[int | None] = None

    def __post_init__(self, resamples: int | None = None) -> None:
        object.__setattr__(self, "n_resamples", renamed_keyword(
            type(self).__name__, "resamples", resamples, "n_resamples", self.n_resamples,
            stacklevel=4))


@dataclass(frozen=True)
class StatisticValue(Result):
    """A statistic's value on one level: the value, the number of units, a note, and the tie
    threshold where the statistic has one (acc_eq).

    Examples
    --------
    >>> StatisticValue(0.5, 10).statistic
    0.5
    """

    statistic: float
    n: int
    note: str = ""
    epsilon: float | None = None


class Statistic:
    """The protocol of a meta-evaluation statistic (subclass it; see the module docstring).

    Required: ``name`` and :meth:`batch`. Everything else has a default: all four levels,
    higher is better, ``min_n = 2``, range [-1, 1], the point value from :meth:`batch`, the
    bootstrap by gathering resampled matrices and PERM-BOTH by swapping z-scored cells (as
    MTME's ``PermutationSigDiff``). ``coefficient = True`` marks the correlation coefficients,
    which the validation study reports with p-values in its correlation stage; ``interval``
    says whether the validation tables show a bootstrap interval; ``all_metrics_at_system``
    lets metrics that only have system-level scores take part at the system level;
    ``perm_levels`` are the levels with a PERM-BOTH test (default: all of ``levels``);
    ``order`` sorts the registry's listing.

    Examples
    --------
    >>> import numpy as np
    >>> class MeanAgreement(Statistic):
    ...     name = "mean_sign"
    ...     def batch(self, Xs, Ys, level):
    ...         return np.nanmean(np.sign(Xs - np.nanmean(Xs)) == np.sign(Ys - np.nanmean(Ys)),
    ...                           axis=(-1, -2))
    >>> X = np.array([[1.0, 2.0], [3.0, 4.0]])
    >>> MeanAgreement().value(X, X, "segment").statistic
    1.0
    """

    name: ClassVar[str] = ""
    description: ClassVar[str] = ""
    aliases: ClassVar[tuple[str, ...]] = ()
    levels: ClassVar[tuple[str, ...]] = LEVELS
    perm_levels: ClassVar[tuple[str, ...] | None] = None
    higher_is_better: ClassVar[bool] = True
    min_n: ClassVar[int] = 2
    statistic_range: ClassVar[tuple[float, float]] = (-1.0, 1.0)
    coefficient: ClassVar[bool] = False
    interval: ClassVar[bool] = True
    all_metrics_at_system: ClassVar[bool] = False
    order: ClassVar[float] = 100.0  # where the registry lists it (built-ins first)

    def __repr__(self) -> str:
        return f"<statistic {self.name}: {self.description}>"

    # ----------------------------------------------------------------- what a statistic defines
    def batch(self, Xs: np.ndarray, Ys: np.ndarray, level: str) -> np.ndarray:
        """The statistic of every (systems x items) matrix pair of two stacks.

        Parameters
        ----------
        Xs, Ys : numpy.ndarray
            Metric and human scores, shape (..., systems, items), NaN for a missing cell.
        level : str
            ``system``, ``segment``, ``item`` or ``system-grouped``.

        Returns
        -------
        numpy.ndarray
            The statistic of each pair, of the leading shape (...), NaN where undefined.
        """
        raise NotImplementedError(f"statistic '{self.name}' defines no batch()")

    def value(self, X: np.ndarray, Y: np.ndarray, level: str,
              options: StatisticOptions | None = None, metric: str = "") -> StatisticValue:
        """The point value on ``level`` (default: :meth:`batch` of the one pair of matrices).

        Parameters
        ----------
        X, Y : numpy.ndarray
            Metric and human scores, (systems x items), NaN for a missing cell.
        level : str
            The level (see :mod:`nlgeval.correlation.levels`).
        options : StatisticOptions, optional
            Resampling options and acc_eq's fixed ``epsilon`` (statistics that need them).
        metric : str
            The metric's name (to look up a per-metric option such as ``epsilon``).

        Returns
        -------
        StatisticValue
            The value and the number of units of the level (systems, complete cells, items
            or systems); NaN with a note below ``min_n`` units.
        """
        n = level_units(X, Y, level)
        if n < self.min_n:
            return StatisticValue(math.nan, n, f"{self.name} undefined: {n} unit(s) at the "
                                               f"{level} level, need at least {self.min_n}")
        v = float(np.asarray(self.batch(X[None], Y[None], level)).reshape(-1)[0])
        return StatisticValue(v, n)

    def resampled(self, X: np.ndarray, Y: np.ndarray, level: str, sys_idx: np.ndarray,
                  item_idx: np.ndarray, options: StatisticOptions | None = None) -> np.ndarray:
        """The statistic on every bootstrap resample (default: the resampled matrices
        gathered in chunks and handed to :meth:`batch`).

        Parameters
        ----------
        X, Y : numpy.ndarray
            Metric and human scores, (systems x items).
        level : str
            The level.
        sys_idx, item_idx : numpy.ndarray
            (B x systems) and (B x items) indices: resample ``b`` is
            ``X[sys_idx[b]][:, item_idx[b]]`` (see
            :func:`~nlgeval.correlation.bootstrap.resample_indices`).
        options : StatisticOptions, optional
            The options (statistics that need them).

        Returns
        -------
        numpy.ndarray
            The B values, NaN where a resample leaves the statistic undefined.
        """
        out = np.empty(sys_idx.shape[0])
        chunk = max(1, _CELLS_PER_CHUNK // max(1, sys_idx.shape[1] * item_idx.shape[1]))
        for s in range(0, sys_idx.shape[0], chunk):
            si, ii = sys_idx[s:s + chunk, :, None], item_idx[s:s + chunk, None, :]
            out[s:s + chunk] = self.batch(X[si, ii], Y[si, ii], level)
        return out

    def swapped(self, XA: np.ndarray, XB: np.ndarray, Y: np.ndarray, level: str,
                options: StatisticOptions, metric_a: str = "", metric_b: str = ""
                ) -> tuple[float, float, np.ndarray, np.ndarray]:
        """The observed values of A and B and their values after every PERM-BOTH swap.

        Parameters
        ----------
        XA, XB, Y : numpy.ndarray
            The scores of metrics A and B and the human scores, (systems x items).
        level : str
            The level.
        options : StatisticOptions
            ``permutations`` (the number of swaps) and ``seed``.
        metric_a, metric_b : str
            The metrics' names (to look up per-metric options).

        Returns
        -------
        tuple of (float, float, numpy.ndarray, numpy.ndarray)
            A's and B's observed values and their ``options.permutations`` swapped values.

        Default: A and B z-scored on the cells all three matrices have (so that swapped
        values share a scale), ``options.permutations`` swap masks from
        ``default_rng(options.seed)`` (one coin per cell), :meth:`batch` on the swapped stacks;
        the observed values are those of the z-scored matrices (the identity swap), as in
        MTME's ``PermutationSigDiff``, so that observed and null differences are alike.
        """
        ok = np.isfinite(XA) & np.isfinite(XB) & np.isfinite(Y)
        A = np.where(ok, standardise(np.where(ok, XA, np.nan)), np.nan)
        B = np.where(ok, standardise(np.where(ok, XB, np.nan)), np.nan)
        H = np.where(ok, Y, np.nan)
        obs = np.asarray(self.batch(np.stack([A, B]), np.stack([H, H]), level), dtype=float)
        chunk = max(1, _CELLS_PER_CHUNK // max(1, A.size))
        K = int(options.permutations)
        masks = iter_swap_masks(A.shape, K, "both", options.seed, chunk=chunk)
        da, db = swap_draws(A, B, H, masks, K, lambda Xs, Hs: self.batch(Xs, Hs, level))
        return float(obs[0]), float(obs[1]), da, db


def level_units(X: np.ndarray, Y: np.ndarray, level: str) -> int:
    """How many units a level has: systems / complete cells / items / systems with a complete
    cell (``system``, ``segment``, ``item``, ``system-grouped``).

    Examples
    --------
    >>> import numpy as np
    >>> level_units(np.array([[1.0, np.nan], [2.0, 3.0]]), np.ones((2, 2)), "segment")
    3
    """
    ok = np.isfinite(X) & np.isfinite(Y)
    level = check_level(level)
    if level == "segment":
        return int(ok.sum())
    axis = 0 if level == "item" else 1
    return int(ok.any(axis=axis).sum())


def _check_supported(stat: Statistic, level: str) -> str:
    level = check_level(level)
    if level not in stat.levels:
        raise InputError(f"statistic '{stat.name}' is not defined at the {level} level (its "
                         f"levels: {', '.join(stat.levels)})")
    return level


def bootstrap_statistic(
    stat: Statistic, X: Any, Y: Any, level: str, options: StatisticOptions | None = None,
    *, label: str = "",
) -> BootstrapResult:
    """Percentile bootstrap interval of any statistic (Deutsch, Dror & Roth 2021).

    Resamples systems, items or both (``options.resample``) ``options.n_resamples`` times from
    ``default_rng(options.seed)`` (:func:`~nlgeval.correlation.bootstrap.resample_indices`)
    and takes the percentile interval of :meth:`Statistic.resampled`, NaN resamples left out
    and counted.

    Parameters
    ----------
    stat : Statistic
        The statistic (e.g. from :func:`~nlgeval.correlation.statistics.get_statistic`).
    X, Y : array_like
        Metric and human scores, (systems x items) matrices of the same shape, NaN for a
        missing cell.
    level : str
        A level the statistic supports (``stat.levels``).
    options : StatisticOptions, optional
        ``n_resamples``, ``resample``, ``seed``, ``confidence_level`` (default: the defaults).
    label : str
        The metric's name, for per-metric options.

    Returns
    -------
    BootstrapResult
        The point value, the percentile interval, the distribution and the number of
        undefined resamples.

    Examples
    --------
    >>> import numpy as np
    >>> from nlgeval.correlation.statistics import get_statistic
    >>> rng = np.random.default_rng(0)
    >>> H = rng.normal(size=(6, 20)); M = H + rng.normal(size=(6, 20))
    >>> res = bootstrap_statistic(get_statistic("tau_a"), M, H, "segment",
    ...                           StatisticOptions(n_resamples=200, seed=1))
    >>> res.ci_low < res.statistic < res.ci_high
    True
    """
    options = options or StatisticOptions()
    X, Y = np.asarray(X, dtype=float), np.asarray(Y, dtype=float)
    if X.shape != Y.shape or X.ndim != 2:
        raise InputError(f"X and Y must be matrices of the same shape, got {X.shape}, {Y.shape}")
    level = _check_supported(stat, level)
    resample = check_resample(options.resample)
    observed = stat.value(X, Y, level, options, label).statistic
    si, ii = resample_indices(X.shape[0], X.shape[1], options.n_resamples, resample,
                              options.seed)
    dist = np.asarray(stat.resampled(X, Y, level, si, ii, options), dtype=float)
    ci = percentile_interval(dist, options.confidence_level)
    return BootstrapResult(statistic=float(observed), ci_low=ci.low, ci_high=ci.high,
                           level=level, coefficient=stat.name, resample=resample,
                           resamples=options.n_resamples, seed=options.seed,
                           confidence_level=options.confidence_level,
                           n_undefined=int((~np.isfinite(dist)).sum()), distribution=dist)


def perm_both_test(
    stat: Statistic, XA: Any, XB: Any, Y: Any, level: str,
    options: StatisticOptions | None = None, metric_a: str = "", metric_b: str = "",
) -> PermutationComparison | None:
    """PERM-BOTH test of "metric A agrees with humans better than metric B" on any statistic.

    Deutsch, Dror & Roth (2021): :meth:`Statistic.swapped` gives both metrics' values after
    every swap; the one-sided p-value is ``(1 + #{d* >= d}) / (1 + K)`` (Phipson & Smyth
    2010) with ``d`` = A - B (or B - A for a lower-is-better statistic). None at a level where
    the statistic has no cell-swap test (``perm_levels``).

    Parameters
    ----------
    stat : Statistic
        The statistic.
    XA, XB, Y : array_like
        The scores of metrics A and B and the human scores, (systems x items) matrices of the
        same shape.
    level : str
        A level the statistic supports.
    options : StatisticOptions, optional
        ``permutations`` (at least 1) and ``seed``.
    metric_a, metric_b : str
        The metrics' names (reported, and used for per-metric options).

    Returns
    -------
    PermutationComparison or None
        The difference d (``statistic``), its one-sided p-value and both metrics' swapped
        values (``draws_a``, ``draws_b``); None where the statistic has no PERM-BOTH test at
        ``level``.

    Examples
    --------
    >>> import numpy as np
    >>> from nlgeval.correlation.statistics import get_statistic
    >>> rng = np.random.default_rng(0)
    >>> H = rng.normal(size=(4, 8)); A = H + 0.1 * rng.normal(size=(4, 8))
    >>> res = perm_both_test(get_statistic("tau_a"), A, rng.normal(size=(4, 8)), H, "segment",
    ...                      StatisticOptions(permutations=99))
    >>> res.statistic > 0, res.pvalue < 0.05
    (True, True)
    """
    options = options or StatisticOptions()
    XA, XB, Y = (np.asarray(m, dtype=float) for m in (XA, XB, Y))
    if not (XA.shape == XB.shape == Y.shape) or XA.ndim != 2:
        raise InputError(f"the two metrics and the human scores must be matrices of the same "
                         f"shape, got {XA.shape}, {XB.shape}, {Y.shape}")
    level = _check_supported(stat, level)
    if level not in (stat.perm_levels if stat.perm_levels is not None else stat.levels):
        return None
    if options.permutations < 1:
        raise InputError(f"permutations must be >= 1, got {options.permutations}")
    sa, sb, da, db = stat.swapped(XA, XB, Y, level, options, metric_a, metric_b)
    da, db = np.asarray(da, dtype=float), np.asarray(db, dtype=float)
    if stat.higher_is_better:
        return comparison_from_draws(sa, sb, da, db, name=stat.name, seed=options.seed)
    # lower is better: the test of the negated statistic, reported with the statistic itself
    neg = comparison_from_draws(-sa, -sb, -da, -db, name=stat.name, seed=options.seed)
    return dataclasses.replace(neg, statistic=sa - sb, statistic_a=sa, statistic_b=sb,
                               draws_a=da, draws_b=db)
