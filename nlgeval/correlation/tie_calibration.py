"""Tie calibration: acc_eq, the pairwise accuracy of a metric with its best tie threshold.

Deutsch, Foster & Freitag (2023), "Ties Matter: Meta-Evaluating Modern Metrics with Pairwise
Accuracy and Tie Calibration" (EMNLP), Section 5: a metric rarely outputs two exactly equal
scores, while humans often do (e.g. MQM 0 for two error-free translations), so acc_23 (see
:mod:`nlgeval.correlation.kendall`) punishes metrics for never predicting a tie. Tie
calibration treats every metric difference ``|m_i - m_j| <= epsilon`` as a tie and picks the
epsilon that maximises acc_23; the maximum is ``acc_eq``. WMT23/24 rank segment-level metrics
by acc_eq with the item grouping.

As google-research/mt-metrics-eval ("MTME", ``tau_optimization.tau_optimization`` with
``sample_rate=1``): the candidate thresholds are 0 and every distinct ``|m_i - m_j|`` over the
pairs of every group; the objective is the mean over groups (items, systems, or the single
pooled group) of acc_23, with one epsilon shared by all groups; the chosen epsilon is the
smallest candidate reaching the maximum (``np.nanargmax``).

Algorithm (written here because no library does it). Within a group,
``acc_23(eps) = [#{concordant, |dm| > eps} + #{human tie, |dm| <= eps}] / N``, so as eps grows
past a pair's ``|dm|`` the objective goes up by ``1 / (G N_g)`` for a human-tied pair, down by
as much for a concordant pair, and is unchanged for the others; the first candidate reaching the
maximum is 0 or the ``|dm|`` of a human-tied pair. MTME materialises all pairs as Python objects,
sorts them and sweeps in a Python loop (about 30 s for 2,200 segments). Here, without ever
storing all pairs:

1. the cells of every group are ordered by (human score, metric score): human-tied pairs are
   the pairs inside a run of equal human scores, concordant pairs pair a cell with a suffix of
   each higher run (larger metric score); discordant and metric-only pairs are never visited,
   and along a run ``|dm|`` grows, so any window of thresholds is a contiguous stretch;
2. one numba pass over those pairs builds a histogram of the increments on (up to 65,536)
   buckets of ``|dm|``, giving the exact objective at every bucket end and an upper bound
   inside each bucket (the value at its start plus all its positive increments);
3. only buckets holding human-tied pairs whose upper bound reaches the best exact value found
   can hold the first maximum; if they hold few pairs (<= 2 M) these are collected, sorted and
   swept exactly, otherwise those buckets are split into finer buckets and step 2 repeats on
   them alone (pairs outside are skipped by binary search, thanks to 1).

Time is one or two passes over the pairs plus a sort of the few pairs near the optimum; memory
is O(cells + buckets + collected pairs). Ties at the maximum are decided exactly: increments
are weighted by ``L / N_g`` with ``L = lcm(N_g)`` whenever ``G * L < 2^53``, which makes all
arithmetic integer; otherwise by ``1 / N_g`` in floating point, and the candidates within 1e-9
of the maximum are re-evaluated with exact rational arithmetic.

:func:`acc_eq_permutation_test` is MTME's ``perm_test='pairs'`` significance test between two
metrics (``stats.PairwisePermutationSigDiff``).
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import numpy as np
from numba import njit

from nlgeval.correlation.coefficients import DegenerateInputWarning
from nlgeval.correlation.kendall import (
    DIRECT_MAX,
    Groups,
    PairedPermutationResult,
    _check_matrices,
    _csr_counts,
    build_groups,
    check_epsilon,
    check_grouping,
    check_variant,
)
from nlgeval.errors import InputError
from nlgeval.results import StatResult

#: buckets per histogram pass
MAX_BUCKETS = 65_536
#: collect and sort the pairs of the candidate buckets once they are at most this many
COLLECT_BUDGET = 2_000_000
#: refinement passes before collecting whatever is left
MAX_LEVELS = 12
#: float mode only: candidates this close (relative to the number of groups) to the maximum
#: are re-evaluated exactly
_LOOSE = 1e-9
#: float mode only: at most this many candidates are re-evaluated exactly
_MAX_EXACT_CHECKS = 64


# --------------------------------------------------------------------------------------------
# numba kernels: histogram pass, collection pass, exact sweep
# --------------------------------------------------------------------------------------------

@njit(cache=True)
def _first_at_least(x: np.ndarray, xi: float, a: int, b: int, lo: float) -> int:
    """First j in [a, b) with fl(x[j] - xi) >= lo (x[a:b] ascending); b if none."""
    while a < b:
        mid = (a + b) // 2
        if x[mid] - xi < lo:
            a = mid + 1
        else:
            b = mid
    return a


@njit(cache=True)
def _first_above(x: np.ndarray, xi: float, a: int, b: int) -> int:
    """First j in [a, b) with x[j] > xi (x[a:b] ascending); b if none."""
    while a < b:
        mid = (a + b) // 2
        if x[mid] <= xi:
            a = mid + 1
        else:
            b = mid
    return a


@njit(cache=True)
def _first_interval(d: float, ihi: np.ndarray) -> int:
    """First interval k with ihi[k] >= d (len(ihi) if none)."""
    a = 0
    b = ihi.shape[0]
    while a < b:
        mid = (a + b) // 2
        if ihi[mid] < d:
            a = mid + 1
        else:
            b = mid
    return a


@njit(cache=True)
def _run(x: np.ndarray, xi: float, j: int, e: int, v: float, ilo: np.ndarray,
         ihi: np.ndarray, scale: np.ndarray, base: np.ndarray, nsub: np.ndarray,
         collect: bool, flag: np.ndarray, pos: np.ndarray, neg: np.ndarray, cnt: np.ndarray,
         dmin: np.ndarray, dmax: np.ndarray, dd: np.ndarray, inc: np.ndarray, bk: np.ndarray,
         m: int) -> int:
    """Visit the pairs (i, j..e) -- |dm| = x[j] - xi ascending, increment v each -- whose |dm|
    falls in an interval: histogram them, or (collect) store those in flagged buckets."""
    hi_all = ihi[ihi.shape[0] - 1]
    if j >= e or x[j] - xi > hi_all:
        return m
    k = _first_interval(x[j] - xi, ihi)
    while j < e:
        d = x[j] - xi
        if d > hi_all:
            break
        while ihi[k] < d:
            k += 1
        if d < ilo[k]:  # in a gap between intervals: jump to the next interval
            j = _first_at_least(x, xi, j, e, ilo[k])
            continue
        j += 1
        t = (d - ilo[k]) * scale[k]  # monotone in d; scale is finite
        s = nsub[k] - 1
        if t < s:
            s = int(t)
        b = base[k] + s
        if collect:
            if flag[b] and m < dd.shape[0]:
                dd[m] = d
                inc[m] = v
                bk[m] = b
                m += 1
        else:
            if v > 0:
                pos[b] += v
            else:
                neg[b] -= v
            cnt[b] += 1
            if d < dmin[b]:
                dmin[b] = d
            if d > dmax[b]:
                dmax[b] = d
    return m


@njit(cache=True)
def _tc_scan(x: np.ndarray, cstart: np.ndarray, gcls: np.ndarray, w: np.ndarray,
             ilo: np.ndarray, ihi: np.ndarray, scale: np.ndarray, base: np.ndarray,
             nsub: np.ndarray, collect: bool, flag: np.ndarray, pos: np.ndarray,
             neg: np.ndarray, cnt: np.ndarray, dmin: np.ndarray, dmax: np.ndarray,
             dd: np.ndarray, inc: np.ndarray, bk: np.ndarray) -> int:
    """One pass over the pairs that move the objective, in their |dm| window.

    Groups are stored as runs of equal human score ("classes", increasing) with metric scores
    ascending inside each class; class c of group g is ``x[cstart[c]:cstart[c + 1]]`` for
    ``gcls[g] <= c < gcls[g + 1]``. Human-tied pairs are the pairs inside a class (increment
    +w); concordant pairs pair i with the members of a higher class whose metric score is
    larger (increment -w). Discordant and metric-only pairs are never visited.
    """
    m = 0
    lo_all = ilo[0]
    for g in range(gcls.shape[0] - 1):
        wg = w[g]
        c_end = gcls[g + 1]
        for c in range(gcls[g], c_end):
            e = cstart[c + 1]
            for i in range(cstart[c], e):
                xi = x[i]
                j = i + 1
                if lo_all > 0.0:
                    j = _first_at_least(x, xi, j, e, lo_all)
                m = _run(x, xi, j, e, wg, ilo, ihi, scale, base, nsub, collect, flag, pos,
                         neg, cnt, dmin, dmax, dd, inc, bk, m)
                for c2 in range(c + 1, c_end):
                    a2 = cstart[c2]
                    e2 = cstart[c2 + 1]
                    j = _first_above(x, xi, a2, e2)
                    if lo_all > 0.0:
                        j = _first_at_least(x, xi, j, e2, lo_all)
                    m = _run(x, xi, j, e2, -wg, ilo, ihi, scale, base, nsub, collect, flag,
                             pos, neg, cnt, dmin, dmax, dd, inc, bk, m)
    return m


@njit(cache=True)
def _tc_sweep(dd: np.ndarray, inc: np.ndarray, bk: np.ndarray,
              s_start: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Exact objective at every distinct |dm| of the collected pairs (sorted by |dm|)."""
    order = np.argsort(dd)
    n = dd.shape[0]
    eps = np.empty(n)
    val = np.empty(n)
    m = 0
    cur = -1
    s = 0.0
    for t in range(n):
        p = order[t]
        if bk[p] != cur:
            cur = bk[p]
            s = s_start[cur]
        s += inc[p]
        if t == n - 1 or dd[order[t + 1]] != dd[p]:
            eps[m] = dd[p]
            val[m] = s
            m += 1
    return eps[:m], val[:m]


@njit(cache=True)
def _bucket_prefix(net: np.ndarray, base: np.ndarray, nsub: np.ndarray,
                   s_before: np.ndarray) -> np.ndarray:
    """Objective at the start of every bucket (exclusive prefix sums within each interval)."""
    out = np.empty(net.shape[0])
    for k in range(base.shape[0]):
        s = s_before[k]
        for b in range(base[k], base[k] + nsub[k]):
            out[b] = s
            s += net[b]
    return out


# --------------------------------------------------------------------------------------------
# the search
# --------------------------------------------------------------------------------------------

def group_weights(n_pairs: np.ndarray) -> tuple[np.ndarray, float, bool]:
    """Per-group weights of one pair: ``(L / N_g, L, True)`` when integer arithmetic is exact
    (``G * L < 2^53`` for ``L = lcm(N_g)``), else ``(1 / N_g, 1.0, False)``.

    Examples
    --------
    >>> import numpy as np
    >>> group_weights(np.array([3, 6, 1]))     # L = lcm(3, 6, 1) = 6
    (array([2., 1., 6.]), 6.0, True)
    """
    G = int(n_pairs.size)
    L = 1
    limit = (1 << 53) // max(G, 1)
    for v in np.unique(n_pairs):
        L = math.lcm(L, int(v))
        if L > limit:
            return 1.0 / n_pairs.astype(float), 1.0, False
    return (L // n_pairs).astype(float), float(L), True


@dataclass(frozen=True)
class _Search:
    epsilon: float
    levels: int
    collected: int
    exact: bool


def _intervals(lo: np.ndarray, hi: np.ndarray, nsub: np.ndarray) -> tuple[np.ndarray, ...]:
    nsub = nsub.astype(np.int64).copy()
    width = hi - lo
    with np.errstate(divide="ignore", over="ignore"):
        scale = np.where(width > 0, nsub / np.where(width > 0, width, 1.0), 0.0)
    bad = ~np.isfinite(scale)
    nsub[bad | (width <= 0)] = 1
    scale[bad | (width <= 0)] = 0.0
    base = np.zeros(nsub.size, dtype=np.int64)
    np.cumsum(nsub[:-1], out=base[1:])
    return (np.ascontiguousarray(lo, dtype=float), np.ascontiguousarray(hi, dtype=float),
            scale.astype(float), base, nsub)


def _exact_value(groups: Groups, eps: float) -> Fraction:
    counts = _csr_counts(groups.x, groups.y, groups.off, eps, DIRECT_MAX, False)
    n_pairs = groups.n_pairs
    return sum((Fraction(int(c[0] + c[4]), int(n)) for c, n in zip(counts, n_pairs,
                                                                   strict=True)), Fraction(0))


def _by_class(groups: Groups) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Metric scores re-ordered by (group, human score, metric score), with class boundaries."""
    sizes = groups.sizes
    gid = np.repeat(np.arange(sizes.size), sizes)
    order = np.lexsort((groups.x, groups.y, gid))
    x, y = groups.x[order], groups.y[order]
    new = np.ones(x.size, dtype=bool)
    new[1:] = (gid[1:] != gid[:-1]) | (y[1:] != y[:-1])
    starts = np.flatnonzero(new)
    cstart = np.append(starts, x.size).astype(np.int64)
    gcls = np.searchsorted(starts, groups.off).astype(np.int64)
    return np.ascontiguousarray(x), cstart, gcls


def calibrate_groups(
    groups: Groups,
    *,
    max_buckets: int = MAX_BUCKETS,
    budget: int = COLLECT_BUDGET,
    max_levels: int = MAX_LEVELS,
    integer_weights: bool = True,
) -> _Search:
    """The smallest epsilon maximising the mean acc_23 over the groups.

    ``max_buckets``, ``budget`` and ``max_levels`` tune the search (see the module docstring);
    ``integer_weights=False`` forces the floating-point weights (for tests).

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[0.9, 0.81, 0.7, 0.6], [0.5, 0.8, 0.4, 0.52], [0.2, 0.3, 0.71, 0.2]])
    >>> Y = np.array([[5, 4, 4, 5], [3, 4, 3, 5], [4, 2, 4, 2]], dtype=float)  # 3 systems x 4 items
    >>> from nlgeval.correlation.kendall import build_groups
    >>> round(calibrate_groups(build_groups(X, Y, "item")).epsilon, 6)
    0.08
    """
    G = int(groups.sizes.size)
    if G == 0:
        return _Search(math.nan, 0, 0, True)
    n_pairs = groups.n_pairs
    w, _, exact = group_weights(n_pairs)
    if not integer_weights:
        w, exact = 1.0 / n_pairs.astype(float), False
    # objective below every threshold: all concordant pairs count; at eps = 0 add exact ties
    c0 = _csr_counts(groups.x, groups.y, groups.off, 0.0, DIRECT_MAX, False)
    a_base = float(np.dot(w, c0[:, 0].astype(float)))
    a_zero = float(np.dot(w, (c0[:, 0] + c0[:, 4]).astype(float)))
    cand_eps = [np.array([0.0])]
    cand_val = [np.array([a_zero])]
    tol = 0.0 if exact else _LOOSE * G
    best = a_zero
    starts = groups.off[:-1]
    spread = np.maximum.reduceat(groups.x, starts) - np.minimum.reduceat(groups.x, starts)
    dmax_all = float(spread.max())
    if not dmax_all > 0:
        return _Search(0.0, 0, 0, exact)
    x, cstart, gcls = _by_class(groups)
    lo = np.array([0.0])
    hi = np.array([dmax_all])
    nsub = np.array([int(min(max_buckets, max(1, int(n_pairs.sum()) // 64)))])
    s_before = np.array([a_base])
    levels = 0
    collected = 0
    empty_f = np.empty(0)
    empty_i = np.empty(0, dtype=np.int64)
    while True:
        levels += 1
        ilo, ihi, scale, base, nsub = _intervals(lo, hi, nsub)
        nb = int(nsub.sum())
        pos, neg = np.zeros(nb), np.zeros(nb)
        cnt = np.zeros(nb, dtype=np.int64)
        dmin, dmax = np.full(nb, np.inf), np.full(nb, -np.inf)
        _tc_scan(x, cstart, gcls, w, ilo, ihi, scale, base, nsub, False,
                 np.zeros(0, dtype=np.bool_), pos, neg, cnt, dmin, dmax, empty_f, empty_f,
                 empty_i)
        s_start = _bucket_prefix(pos - neg, base, nsub, s_before)
        s_end = s_start + pos - neg
        upper = s_start + pos
        full = cnt > 0
        if full.any():
            cand_eps.append(dmax[full])
            cand_val.append(s_end[full])
            best = max(best, float(s_end[full].max()))
        # a bucket without human-tied pairs cannot hold a first-time maximum (its values are
        # at most its start value, reached at an earlier candidate)
        flag = full & (pos > 0) & (dmin < dmax) & (upper >= best - tol)
        n_flag = int(cnt[flag].sum())
        if n_flag == 0:
            break
        if n_flag <= budget or levels >= max_levels:
            dd, inc = np.empty(n_flag), np.empty(n_flag)
            bk = np.empty(n_flag, dtype=np.int64)
            m = _tc_scan(x, cstart, gcls, w, ilo, ihi, scale, base, nsub, True, flag, empty_f,
                         empty_f, empty_i, empty_f, empty_f, dd, inc, bk)
            e, v = _tc_sweep(dd[:m], inc[:m], bk[:m], s_start)
            cand_eps.append(e)
            cand_val.append(v)
            collected = m
            break
        # refine: split every candidate bucket into sub-buckets proportional to its pairs
        lo, hi, s_before = dmin[flag], dmax[flag], s_start[flag]
        share = cnt[flag] / n_flag
        nsub = np.maximum(2, np.floor(share * max_buckets)).astype(np.int64)
    eps_all = np.concatenate(cand_eps)
    val_all = np.concatenate(cand_val)
    top = float(val_all.max())
    if exact:
        return _Search(float(eps_all[val_all == top].min()), levels, collected, True)
    near = np.unique(eps_all[val_all >= top - tol])
    if near.size <= _MAX_EXACT_CHECKS:
        exact_vals = [_exact_value(groups, float(e)) for e in near]
        vmax = max(exact_vals)
        chosen = min(float(e) for e, v in zip(near, exact_vals, strict=True) if v == vmax)
        return _Search(chosen, levels, collected, True)
    close = val_all >= top - 1e-12 * G
    return _Search(float(eps_all[close].min()), levels, collected, False)


# --------------------------------------------------------------------------------------------
# results and public functions
# --------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class TieCalibrationResult(StatResult):
    """acc_eq (or tau_eq): the grouped acc_23 (tau_23) of a metric at threshold ``epsilon``.

    ``calibrated`` is True when ``epsilon`` was chosen on these same data -- then the statistic
    is optimistically biased (the threshold was fitted to the test set; Deutsch et al. 2023
    recommend calibrating on held-out data when there is any) and ``note`` says so.
    ``n_groups`` groups (items, systems, or 1 for no grouping) with ``n_pairs`` pairs in all
    entered the mean; ``n_skipped`` groups had fewer than 2 complete cells.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[0.9, 0.81, 0.7, 0.6], [0.5, 0.8, 0.4, 0.52], [0.2, 0.3, 0.71, 0.2]])
    >>> Y = np.array([[5, 4, 4, 5], [3, 4, 3, 5], [4, 2, 4, 2]], dtype=float)  # 3 systems x 4 items
    >>> res = acc_eq(X, Y, epsilon=0.05)
    >>> acc, p = res                            # no single-metric p-value: p is NaN
    >>> round(acc, 4), res.n_groups, res.n_pairs, res.calibrated
    (0.8333, 4, 12, False)
    >>> sorted(res.to_dict())[:4]
    ['calibrated', 'ci_high', 'ci_low', 'epsilon']
    """

    statistic: float
    epsilon: float
    grouping: str
    n_groups: int
    n_pairs: int
    calibrated: bool
    variant: str = "acc_23"
    n_skipped: int = 0
    pvalue: float = math.nan
    note: str = ""
    group_values: np.ndarray = field(default_factory=lambda: np.empty(0), repr=False)
    ci_low: float = math.nan
    ci_high: float = math.nan

    _omit = frozenset({"group_values"})


_OPTIMISTIC = ("epsilon was calibrated on these same data, so the statistic is optimistic "
               "(calibrate on a development set and pass epsilon= for an unbiased estimate)")


def _check_tc_variant(variant: str) -> str:
    v = check_variant(variant)
    if v not in ("acc_23", "tau_23"):
        raise InputError(f"tie calibration is defined for acc_23 and tau_23, not {variant!r}")
    return v


def _evaluate(groups: Groups, eps: float, variant: str, grouping: str, calibrated: bool,
              note: str) -> TieCalibrationResult:
    n_total = groups.n_total
    if groups.sizes.size == 0:
        msg = (f"acc_eq undefined: no group has 2 or more complete cells ({n_total} group(s), "
               f"grouping {grouping})")
        warnings.warn(msg, DegenerateInputWarning, stacklevel=3)
        return TieCalibrationResult(math.nan, eps if not calibrated else math.nan, grouping, 0,
                                    0, calibrated, variant, groups.n_skipped, math.nan, msg,
                                    np.full(n_total, np.nan))
    counts = _csr_counts(groups.x, groups.y, groups.off, eps, DIRECT_MAX, False)
    acc = (counts[:, 0] + counts[:, 4]) / groups.n_pairs
    vals = acc if variant == "acc_23" else 2.0 * acc - 1.0
    per_group = np.full(n_total, np.nan)
    per_group[groups.index] = vals
    return TieCalibrationResult(float(np.mean(vals)), float(eps), grouping,
                                int(groups.sizes.size), int(groups.n_pairs.sum()), calibrated,
                                variant, groups.n_skipped, math.nan, note, per_group)


def tie_calibration(X: Any, Y: Any, grouping: str = "item", *,
                    variant: str = "acc_23") -> TieCalibrationResult:
    """acc_eq with tie calibration (Deutsch, Foster & Freitag 2023, Section 5).

    ``X`` (metric) and ``Y`` (human): (systems x items) matrices, NaN = missing, both oriented
    so that higher is better. Searches every candidate threshold (0 and each distinct metric
    difference ``|m_i - m_j|`` within a group) for the one maximising the mean over groups of
    acc_23 (``variant="tau_23"``: tau_23 = 2 acc_23 - 1, same epsilon) and returns the
    smallest such epsilon with the statistic there -- MTME's
    ``KendallWithTiesOpt(..., sample_rate=1.0)``. The result is flagged ``calibrated``: it is
    optimistic (see :class:`TieCalibrationResult`).

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[0.9, 0.81, 0.7, 0.6], [0.5, 0.8, 0.4, 0.52], [0.2, 0.3, 0.71, 0.2]])
    >>> Y = np.array([[5, 4, 4, 5], [3, 4, 3, 5], [4, 2, 4, 2]], dtype=float)  # 3 systems x 4 items
    >>> res = tie_calibration(X, Y)             # item grouping, as WMT23/24
    >>> round(res.statistic, 4), round(res.epsilon, 6), res.calibrated
    (0.9167, 0.08, True)
    """
    variant = _check_tc_variant(variant)
    grouping = check_grouping(grouping)
    Xa, Ya = _check_matrices(X, Y)
    groups = build_groups(Xa, Ya, grouping)
    search = calibrate_groups(groups)
    note = _OPTIMISTIC
    if not search.exact:
        note += ("; ties at the maximum decided to 1e-12 (too many near-equal candidates for "
                 "exact arithmetic)")
    return _evaluate(groups, search.epsilon, variant, grouping, True, note)


def acc_eq(X: Any, Y: Any, grouping: str = "item", epsilon: float | None = None, *,
           variant: str = "acc_23") -> TieCalibrationResult:
    """acc_eq: acc_23 at a tie threshold -- calibrated on ``X``/``Y`` when ``epsilon`` is None.

    With a fixed ``epsilon`` (e.g. calibrated on a development set with
    :func:`tie_calibration`) this is simply the grouped acc_23 with metric differences
    ``<= epsilon`` counted as ties, and ``calibrated`` is False. Without it, see
    :func:`tie_calibration`.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[0.9, 0.81, 0.7, 0.6], [0.5, 0.8, 0.4, 0.52], [0.2, 0.3, 0.71, 0.2]])
    >>> Y = np.array([[5, 4, 4, 5], [3, 4, 3, 5], [4, 2, 4, 2]], dtype=float)  # 3 systems x 4 items
    >>> round(acc_eq(X, Y, epsilon=0.05).statistic, 4)   # a threshold fixed beforehand
    0.8333
    >>> round(acc_eq(X, Y).statistic, 4)                # calibrated on X, Y (optimistic)
    0.9167
    """
    if epsilon is None:
        return tie_calibration(X, Y, grouping, variant=variant)
    variant = _check_tc_variant(variant)
    grouping = check_grouping(grouping)
    eps = check_epsilon(epsilon)
    Xa, Ya = _check_matrices(X, Y)
    groups = build_groups(Xa, Ya, grouping)
    return _evaluate(groups, eps, variant, grouping, False,
                     "epsilon given by the caller (not calibrated on these data)")


# --------------------------------------------------------------------------------------------
# the pairwise-comparison permutation test (MTME perm_test='pairs')
# --------------------------------------------------------------------------------------------

@njit(cache=True)
def _agree(dx: float, dy: float, eps: float) -> int:
    """1 if the metric comparison (ties within eps) matches the human one, else 0 (acc_23's
    numerator); arithmetic rather than branches so that the pair loops vectorise."""
    tie_m = np.int64(abs(dx) <= eps)
    tie_h = np.int64(dy == 0.0)
    same = np.int64((dx > 0.0) == (dy > 0.0))
    return tie_m * tie_h + (1 - tie_m) * (1 - tie_h) * same


@njit(cache=True)
def _agreement_counts(xa: np.ndarray, xb: np.ndarray, y: np.ndarray, off: np.ndarray,
                      eps_a: float, eps_b: float) -> np.ndarray:
    """Per group: pairs A gets right, B gets right, only B right (n+), only A right (n-)."""
    G = off.shape[0] - 1
    out = np.zeros((G, 4), dtype=np.int64)
    for g in range(G):
        e = off[g + 1]
        ka = 0
        kb = 0
        both = 0
        for i in range(off[g], e):
            xai = xa[i]
            xbi = xb[i]
            yi = y[i]
            for j in range(i + 1, e):
                dy = yi - y[j]
                a = _agree(xai - xa[j], dy, eps_a)
                b = _agree(xbi - xb[j], dy, eps_b)
                ka += a
                kb += b
                both += a * b
        out[g, 0] = ka
        out[g, 1] = kb
        out[g, 2] = kb - both
        out[g, 3] = ka - both
    return out


@njit(cache=True)
def _pair_deltas(xa: np.ndarray, xb: np.ndarray, y: np.ndarray, off: np.ndarray, eps_a: float,
                 eps_b: float, total: int) -> np.ndarray:
    """agree_B - agree_A for every pair, group by group, (i, j) with i < j in stored order."""
    out = np.empty(total, dtype=np.int8)
    m = 0
    for g in range(off.shape[0] - 1):
        e = off[g + 1]
        for i in range(off[g], e):
            for j in range(i + 1, e):
                dy = y[i] - y[j]
                out[m] = _agree(xb[i] - xb[j], dy, eps_b) - _agree(xa[i] - xa[j], dy, eps_a)
                m += 1
    return out


def acc_eq_permutation_test(
    X_a: Any,
    X_b: Any,
    Y: Any,
    grouping: str = "item",
    *,
    permutations: int = 1000,
    seed: int = 0,
    epsilon_a: float | None = None,
    epsilon_b: float | None = None,
    variant: str = "acc_23",
    pair_masks: np.ndarray | None = None,
) -> PairedPermutationResult:
    """Is metric A's acc_eq higher than metric B's? MTME's pairwise-comparison permutation test.

    MTME (``stats.PairwisePermutationSigDiff``, used by WMT23/24 with ``perm_test='pairs'``):
    each metric's threshold is calibrated **once** on the observed data (or given as
    ``epsilon_a``/``epsilon_b``) and is **not** re-calibrated per draw; each draw then swaps the
    two metrics' pairwise-comparison outcomes (metric tie within its epsilon / same order as
    humans or not) independently for every pair within every group with probability 1/2, and
    recomputes both grouped acc_23 values. No z-scoring is needed since outcomes, not scores,
    are swapped. Only cells where ``Y``, ``X_a`` and ``X_b`` are all finite take part (the
    thresholds are calibrated on those cells).

    Since a swap changes a group's acc_23 only through pairs where exactly one metric is right,
    a draw is fully described, per group, by how many of the ``n+`` pairs only B gets right and
    of the ``n-`` pairs only A gets right were swapped: independent Binomial(n+, 1/2) and
    Binomial(n-, 1/2) counts. nlgeval draws those (``numpy.random.default_rng(seed)``; groups in
    a canonical order, so the result does not depend on the order of systems or items) -- the
    same distribution as MTME's per-pair coin flips at O(groups) cost per draw. The comparison
    ``draw >= observed`` is made in exact integer arithmetic where possible.

    ``pair_masks`` (K, n_pairs) booleans (True = swap) may be given instead of random draws
    (e.g. all 2^pairs masks of a tiny case): pairs are enumerated group by group (items for
    ``"item"``, systems for ``"system"``, one pooled group for ``"none"``), within a group as
    (i, j), i < j, over its complete cells in row-major order.

    Differences from MTME: p = (1 + #{d* >= d}) / (1 + K) (MTME: #/K, see ``pvalue_mtme``); no
    early stopping (MTME's check sits inside the large-delta branch); tau_23 is supported as
    2 acc_23 - 1 (same p-value).

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[0.9, 0.81, 0.7, 0.6], [0.5, 0.8, 0.4, 0.52], [0.2, 0.3, 0.71, 0.2]])
    >>> Y = np.array([[5, 4, 4, 5], [3, 4, 3, 5], [4, 2, 4, 2]], dtype=float)  # 3 systems x 4 items
    >>> res = acc_eq_permutation_test(X, X[[1, 0, 2]], Y, permutations=200, seed=1)
    >>> round(res.statistic_a, 4), round(res.statistic_b, 4), round(res.pvalue, 3)
    (0.9167, 0.5833, 0.09)
    """
    variant = _check_tc_variant(variant)
    grouping = check_grouping(grouping)
    Xa, Ya = _check_matrices(X_a, Y, ("X_a", "Y"))
    Xb, _ = _check_matrices(X_b, Y, ("X_b", "Y"))
    ok = np.isfinite(Xa) & np.isfinite(Xb) & np.isfinite(Ya)
    Ha = np.where(ok, Ya, np.nan)
    ga = build_groups(np.where(ok, Xa, np.nan), Ha, grouping)
    gb = build_groups(np.where(ok, Xb, np.nan), Ha, grouping)
    calibrated = epsilon_a is None or epsilon_b is None
    notes = []
    if epsilon_a is None:
        eps_a = calibrate_groups(build_groups(np.where(ok, Xa, np.nan), Ha,
                                              grouping)).epsilon
        notes.append("epsilon_a calibrated on these data")
    else:
        eps_a = check_epsilon(epsilon_a)
    if epsilon_b is None:
        eps_b = calibrate_groups(build_groups(np.where(ok, Xb, np.nan), Ha,
                                              grouping)).epsilon
        notes.append("epsilon_b calibrated on these data")
    else:
        eps_b = check_epsilon(epsilon_b)
    res_a = _evaluate(ga, eps_a, variant, grouping, epsilon_a is None, "")
    res_b = _evaluate(gb, eps_b, variant, grouping, epsilon_b is None, "")
    stat_a, stat_b = res_a.statistic, res_b.statistic
    G = int(ga.sizes.size)
    if pair_masks is None and (not isinstance(permutations, int | np.integer)
                               or permutations < 1):
        raise InputError(f"permutations must be an integer >= 1, got {permutations!r}")
    if G == 0:
        K = int(pair_masks.shape[0]) if pair_masks is not None else int(permutations)
        return PairedPermutationResult(
            math.nan, math.nan, stat_a, stat_b, K, 0, variant, grouping, "pairs", int(seed),
            eps_a, eps_b, calibrated, 0, 0, "no group has 2 or more complete cells",
            np.full(K, np.nan), np.full(K, np.nan))
    n_pairs = ga.n_pairs
    w, W, exact = group_weights(n_pairs)
    agree = _agreement_counts(ga.x, gb.x, ga.y, ga.off, eps_a, eps_b)
    if pair_masks is not None:
        masks = np.asarray(pair_masks, dtype=bool)
        total = int(n_pairs.sum())
        if masks.ndim != 2 or masks.shape[1] != total:
            raise InputError(f"pair_masks must have shape (K, {total})")
        delta = _pair_deltas(ga.x, gb.x, ga.y, ga.off, eps_a, eps_b, total).astype(np.int64)
        starts = np.concatenate([[0], np.cumsum(n_pairs)[:-1]])
        S = np.add.reduceat(masks.astype(np.int64) * delta, starts, axis=1)  # (K, G)
        T = S.astype(float) @ w
        K = int(masks.shape[0])
    else:
        K = int(permutations)
        # canonical group order: sort by the sufficient statistics, draw only where it matters
        key = np.lexsort((agree[:, 3], agree[:, 2], agree[:, 1], agree[:, 0], n_pairs))
        active = key[(agree[key, 2] + agree[key, 3]) > 0]
        n_plus, n_minus, w_act = agree[active, 2], agree[active, 3], w[active]
        rng = np.random.default_rng(seed)
        T = np.zeros(K)
        if active.size:
            chunk = max(1, 1_000_000 // active.size)
            for start in range(0, K, chunk):
                k = min(chunk, K - start)
                S = (rng.binomial(n_plus, 0.5, size=(k, active.size))
                     - rng.binomial(n_minus, 0.5, size=(k, active.size)))
                T[start:start + k] = S.astype(float) @ w_act
    # d* - d = 2 T / (W G): compare T with 0 (exact when the weights are integers)
    hits = int(np.count_nonzero(T >= (0.0 if exact else -1e-12 * G)))
    scale = 1.0 / (W * G)
    draws_a = stat_a + T * scale
    draws_b = stat_b - T * scale
    if variant == "tau_23":  # tau_23 = 2 acc_23 - 1 moves twice as far
        draws_a = stat_a + 2 * T * scale
        draws_b = stat_b - 2 * T * scale
    p = (1 + hits) / (1 + K)
    notes.append("thresholds fixed across draws (MTME perm_test='pairs')")
    return PairedPermutationResult(
        stat_a - stat_b, p, stat_a, stat_b, K, hits, variant, grouping, "pairs", int(seed),
        float(eps_a), float(eps_b), calibrated, G, int(n_pairs.sum()), "; ".join(notes),
        draws_a, draws_b)
