"""Kendall's tau variants from pair counts: tau-b, tau-c, tau_23 and acc_23, on any grouping.

Deutsch, Foster & Freitag (2023), "Ties Matter: Meta-Evaluating Modern Metrics with Pairwise
Accuracy and Tie Calibration" (EMNLP), Table 1, classify every pair of outputs (i, j) by the
metric difference ``dm = m_i - m_j`` and the human difference ``dh = h_i - h_j``:

==========  =================================================================
``C``       concordant: ``|dm| > epsilon``, ``dh != 0`` and the signs agree
``D``       discordant: ``|dm| > epsilon``, ``dh != 0`` and the signs differ
``T_h``     tied in the human scores only: ``dh == 0``, ``|dm| > epsilon``
``T_m``     tied in the metric scores only: ``|dm| <= epsilon``, ``dh != 0``
``T_hm``    tied in both: ``dh == 0`` and ``|dm| <= epsilon``
``N``       all pairs, ``n (n - 1) / 2``
==========  =================================================================

(``epsilon = 0`` by default: a metric tie is then an exact tie.) The variants, exactly as
google-research/mt-metrics-eval ("MTME", ``stats.KendallVariants``) computes them:

* tau-b (Kendall 1945): ``(C - D) / sqrt((N - T_x)(N - T_y))`` with ``T_x = T_m + T_hm`` and
  ``T_y = T_h + T_hm``; NaN when all pairs are tied in either variable (as scipy).
* tau-c (Stuart 1953): ``2 (C - D) / (n^2 (k - 1) / k)``, ``k`` = the smaller number of distinct
  values; NaN as tau-b. Only for ``epsilon = 0`` (MTME: "not clear how to define minclasses").
* tau_23 (Deutsch et al. 2023, eq. 3): ``(C + T_hm - D - T_h - T_m) / N``.
* acc_23 (Deutsch et al. 2023, eq. 4; "pairwise accuracy"): ``(C + T_hm) / N``. Note
  ``tau_23 = 2 acc_23 - 1``.

Groupings (MTME's ``average_by``, named by level): ``"segment"`` (MTME ``none``) pools every
complete (system, item) cell; ``"item"`` computes the variant within each item across systems
and averages over items; ``"system-grouped"`` (MTME ``sys``) within each system across items,
then the mean. Groups with fewer than 2 complete cells are skipped and groups whose value is
NaN are left out of the mean (MTME's ``AverageCorrelation``). A cell takes part only when both
its metric and its human score are finite.

Algorithms (written here because no library returns the five counts, nor takes an epsilon):
the counts of one vector come from sorting (Knight 1966, "A computer method for calculating
Kendall's tau with ungrouped data", JASA 61): after sorting by the metric, ``T_m`` and ``T_hm``
are two-pointer sweeps and ``C`` is a dominance count with a Fenwick tree over metric ranks,
processing the human scores in increasing order -- O(n log n) time and O(n) memory for every
epsilon (the tie predicate ``|m_i - m_j| <= epsilon`` is evaluated in floating point exactly as
written, so results equal pair-by-pair enumeration). Short vectors (the item grouping: one value
per system) use the O(n^2) enumeration, which is faster there. tau-b and tau-c go through the
one formula of every tau in nlgeval (``kernels._tau_from_counts``: the point estimate
and batch coefficients of :mod:`nlgeval.correlation.coefficients` and the weighted bootstrap use
it too); the variants differ from those coefficients only in being defined from 2 values on, as
in MTME and scipy (the coefficients need 3). All loops are numba-compiled;
:func:`batch_grouped_kendall` and :func:`kendall_resample_distribution` compute the statistic
for a whole stack of resampled matrices in one call (bootstrap, permutation tests).

:func:`kendall_permutation_test` is the PERM-BOTH test (Deutsch, Dror & Roth 2021) between two
metrics for any variant and grouping.
"""


from __future__ import annotations

import math
from typing import Any

import numpy as np

from nlgeval.correlation._constant import snap_near_constant
from nlgeval.correlation.kendall.kernels import (
    _csr_counts,
    _indexed_statistic,
    _stack_statistic,
    _stat_from_counts,
    _vector_counts,
)
from nlgeval.correlation.kendall.results import (
    _GROUPING_CODE,
    _VARIANT_CODE,
    DIRECT_MAX,
    GroupedResult,
    KendallResult,
    PairCounts,
    _as_float,
    _check_matrices,
    _counts_from_row,
    build_groups,
    check_epsilon,
    check_grouping,
    check_variant,
    snap_groups,
)
from nlgeval.errors import InputError

__all__ = [
    "batch_grouped_kendall", "grouped_kendall", "kendall_resample_distribution",
    "kendall_variant", "pair_counts",
]


# --------------------------------------------------------------------------------------------
# public functions
# --------------------------------------------------------------------------------------------

def pair_counts(metric: Any, human: Any, epsilon: float = 0.0) -> PairCounts:
    """C, D, T_h, T_m, T_hm and N for two paired vectors (Deutsch et al. 2023, Table 1).

    Positions where either value is NaN/infinite are dropped. A metric pair is tied when
    ``|m_i - m_j| <= epsilon``, a human pair when ``h_i == h_j``. O(n log n) time, O(n) memory.

    Parameters
    ----------
    metric, human : array-like
        The paired metric and human scores, same length.
    epsilon : float, default 0.0
        Metric differences ``<= epsilon`` count as ties (>= 0).

    Returns
    -------
    PairCounts
        The pair counts C, D, T_h, T_m, T_hm, the number of pairs and of complete positions.

    Examples
    --------
    >>> pair_counts([1, 2, 3], [3, 2, 1]).discordant
    3
    """
    eps = check_epsilon(epsilon)
    m = _as_float(metric, "metric").ravel()
    h = _as_float(human, "human").ravel()
    if m.shape != h.shape:
        raise InputError(f"metric and human must have the same length, got {np.size(metric)} "
                         f"and {np.size(human)}")
    ok = np.isfinite(m) & np.isfinite(h)
    out = np.zeros(8, dtype=np.int64)
    m, h = snap_near_constant(m[ok]), snap_near_constant(h[ok])  # the one degenerate rule
    _vector_counts(np.ascontiguousarray(m), np.ascontiguousarray(h), eps, DIRECT_MAX,
                   True, out)
    return _counts_from_row(out, eps)


def kendall_variant(metric: Any, human: Any, variant: str = "tau_b", *,
                    epsilon: float = 0.0) -> KendallResult:
    """One Kendall variant (tau_b, tau_c, tau_23, acc_23) of two paired vectors.

    Equals ``scipy.stats.kendalltau(metric, human, variant="b"/"c")`` for tau_b/tau_c (the same
    counts and formula as every tau of nlgeval, clipped to [-1, 1] as scipy; defined from 2
    values on) and MTME's ``stats.KendallVariants`` for all four.
    ``epsilon``: metric differences ``<= epsilon`` count as ties (not for tau_c).

    Parameters
    ----------
    metric, human : array-like
        The paired metric and human scores, same length.
    variant : str, default "tau_b"
        ``tau_b``, ``tau_c``, ``tau_23`` or ``acc_23``.
    epsilon : float, default 0.0
        Metric tie threshold (keyword-only; must be 0 for tau_c).

    Returns
    -------
    KendallResult
        The statistic, the variant, epsilon, the pair counts, the number of incomplete
        positions and a note when undefined.

    Examples
    --------
    >>> round(kendall_variant([1, 2, 3, 4], [1, 3, 2, 4], "tau_c").statistic, 3)
    0.667
    """
    variant = check_variant(variant)
    eps = check_epsilon(epsilon, variant)
    counts = pair_counts(metric, human, eps)
    m = _as_float(metric, "metric").ravel()
    h = _as_float(human, "human").ravel()
    n_missing = int((~(np.isfinite(m) & np.isfinite(h))).sum())
    value = counts.statistic(variant)
    note = ""
    if not np.isfinite(value):
        note = (f"{variant} undefined: fewer than 2 complete pairs of values"
                if counts.n < 2 else f"{variant} undefined: every pair is tied in one variable")
    return KendallResult(value, variant, eps, counts, n_missing, math.nan, note)


def grouped_kendall(X: Any, Y: Any, variant: str = "acc_23", grouping: str = "item", *,
                    epsilon: float = 0.0) -> GroupedResult:
    """A Kendall variant of (systems x items) matrices under a grouping, as MTME averages it.

    ``grouping="segment"``: one statistic over all complete cells; ``"item"``: per item across
    systems, then the mean; ``"system-grouped"``: per system across items, then the mean
    (the level names of :mod:`nlgeval.correlation.levels`). Groups with
    fewer than 2 complete cells are skipped; NaN group values are dropped from the (unweighted)
    mean, as in MTME's ``AverageCorrelation``. NaN (with a note) when no group is defined.

    Parameters
    ----------
    X, Y : array-like
        Metric and human scores, (systems x items), NaN for a missing cell.
    variant : str, default "acc_23"
        ``tau_b``, ``tau_c``, ``tau_23`` or ``acc_23``.
    grouping : str, default "item"
        ``segment``, ``item`` or ``system-grouped``.
    epsilon : float, default 0.0
        Metric tie threshold (keyword-only).

    Returns
    -------
    GroupedResult
        The mean statistic, the groups used and skipped, the summed pair counts, a note when
        undefined and the value of every group (NaN where skipped).

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[1.0, 2.0], [2.0, 1.0], [3.0, 3.0]])
    >>> Y = np.array([[1.0, 1.0], [2.0, 2.0], [3.0, 3.0]])
    >>> round(grouped_kendall(X, Y, "tau_b", "segment").statistic, 3)
    0.6
    """
    variant = check_variant(variant)
    grouping = check_grouping(grouping)
    eps = check_epsilon(epsilon, variant)
    Xa, Ya = _check_matrices(X, Y)
    groups = build_groups(Xa, Ya, grouping)
    counts = _csr_counts(groups.x, groups.y, groups.off, eps, DIRECT_MAX,
                         variant == "tau_c" or grouping == "segment")
    code = _VARIANT_CODE[variant]
    vals = np.array([_stat_from_counts(*(int(v) for v in row), code)  # type: ignore[call-arg]  # numba
                     for row in counts], dtype=np.float64)
    defined = np.isfinite(vals)
    per_group = np.full(groups.n_total, np.nan)
    per_group[groups.index] = vals
    if defined.any():
        stat = float(np.mean(vals[defined]))
        note = ""
    else:
        stat = math.nan
        note = f"{variant} undefined in every group ({groups.n_total} group(s))"
    tot = counts[defined].sum(axis=0)
    summed = PairCounts(int(tot[0]), int(tot[1]), int(tot[2]), int(tot[3]), int(tot[4]),
                        int(tot[:5].sum()), int(tot[5]),
                        int(counts[defined, 6].max()) if defined.any() else 0,
                        int(counts[defined, 7].max()) if defined.any() else 0, eps)
    if grouping != "segment":  # distinct counts are per group; sums of them mean nothing
        summed = PairCounts(summed.concordant, summed.discordant, summed.ties_human,
                            summed.ties_metric, summed.ties_both, summed.n_pairs, summed.n, 0, 0,
                            eps)
    skipped = groups.n_total - int(defined.sum())
    return GroupedResult(stat, variant, grouping, eps, int(defined.sum()), summed.n_pairs,
                         skipped, summed, math.nan, note, per_group)


def batch_grouped_kendall(X: Any, Y: Any, variant: str = "acc_23", grouping: str = "item", *,
                          epsilon: float = 0.0) -> np.ndarray:
    """The grouped variant for every matrix of a stack: ``X``, ``Y`` shaped (..., systems, items).

    Returns an array of the leading shape. One numba call for the whole stack (no per-matrix
    Python overhead); the same numbers as :func:`grouped_kendall` on each matrix (up to the
    order in which group values are summed).

    Parameters
    ----------
    X, Y : array-like
        Stacks of metric and human matrices, shape (..., systems, items).
    variant, grouping : str
        As in :func:`grouped_kendall` (defaults ``acc_23``, ``item``).
    epsilon : float, default 0.0
        Metric tie threshold (keyword-only).

    Returns
    -------
    numpy.ndarray
        The statistic of each matrix pair, of the leading shape (...).

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[[1.0, 2.0], [2.0, 1.0], [3.0, 3.0]]] * 2); Y = np.ones((2, 3, 2)).cumsum(1)
    >>> batch_grouped_kendall(X, Y, "tau_b", "item").round(3)
    array([0.667, 0.667])
    """
    variant = check_variant(variant)
    grouping = check_grouping(grouping)
    eps = check_epsilon(epsilon, variant)
    Xa, Ya = _as_float(X, "X"), _as_float(Y, "Y")
    if Xa.ndim < 2 or Xa.shape != Ya.shape:
        raise InputError(f"X and Y must be stacks of (systems x items) matrices of the same "
                         f"shape, got {Xa.shape} and {Ya.shape}")
    lead = Xa.shape[:-2]
    Xa, Ya = snap_groups(Xa, Ya, grouping)
    Xs = np.ascontiguousarray(Xa.reshape(-1, *Xa.shape[-2:]))
    Ys = np.ascontiguousarray(Ya.reshape(-1, *Ya.shape[-2:]))
    out = _stack_statistic(Xs, Ys, _GROUPING_CODE[grouping], _VARIANT_CODE[variant], eps,
                           DIRECT_MAX)
    return out.reshape(lead)


def kendall_resample_distribution(X: Any, Y: Any, variant: str, grouping: str,
                                  sys_idx: np.ndarray, item_idx: np.ndarray, *,
                                  epsilon: float = 0.0) -> np.ndarray:
    """The grouped variant on every resample ``X[sys_idx[b]][:, item_idx[b]]`` (bootstrap).

    ``sys_idx`` (B x systems) and ``item_idx`` (B x items) as drawn by
    :func:`nlgeval.correlation.bootstrap.resample_indices`; no (B, S, I) stack is materialised.
    A resample that draws a cell twice contains the pair (cell, copy), tied in both variables,
    exactly as the statistic of the expanded matrix.

    Parameters
    ----------
    X, Y : array-like
        Metric and human scores, (systems x items).
    variant, grouping : str
        As in :func:`grouped_kendall`.
    sys_idx, item_idx : numpy.ndarray
        (B x systems) row and (B x items) column indices of the B resamples.
    epsilon : float, default 0.0
        Metric tie threshold (keyword-only).

    Returns
    -------
    numpy.ndarray
        The statistic of each resample, shape (B,).

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> H = rng.normal(size=(4, 6)); M = H + rng.normal(size=(4, 6))
    >>> si, ii = rng.integers(0, 4, (5, 4)), rng.integers(0, 6, (5, 6))
    >>> kendall_resample_distribution(M, H, "tau_b", "segment", si, ii).shape
    (5,)
    """
    variant = check_variant(variant)
    grouping = check_grouping(grouping)
    eps = check_epsilon(epsilon, variant)
    Xa, Ya = _check_matrices(X, Y)
    si = np.asarray(sys_idx, dtype=np.int64)
    ii = np.asarray(item_idx, dtype=np.int64)
    if si.ndim != 2 or ii.ndim != 2 or si.shape[0] != ii.shape[0]:
        raise InputError("sys_idx and item_idx must be (B x systems) and (B x items) matrices")
    if si.size and (si.min() < 0 or si.max() >= Xa.shape[0]):
        raise InputError("sys_idx holds a row index outside the matrix")
    if ii.size and (ii.min() < 0 or ii.max() >= Xa.shape[1]):
        raise InputError("item_idx holds a column index outside the matrix")
    Xa, Ya = snap_groups(Xa, Ya, grouping)  # resamples of the data as the rule sees them
    return _indexed_statistic(np.ascontiguousarray(Xa), np.ascontiguousarray(Ya),
                              np.ascontiguousarray(si), np.ascontiguousarray(ii),
                              _GROUPING_CODE[grouping], _VARIANT_CODE[variant], eps, DIRECT_MAX)
