"""The previous tie-calibration search (bucketed histogram passes over the pairs), kept as the
baseline of ``bench_tie_calibration.py``: the same epsilon as the current search, O(pairs) time
per histogram pass. A copy of nlgeval's search before the sort-based branch-and-bound (issue 31);
not part of the library, not cached.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np
from numba import njit

from nlgeval.correlation.kendall.kernels import _csr_counts
from nlgeval.correlation.kendall.results import DIRECT_MAX, Groups

# --------------------------------------------------------------------------------------------
# the search: histogram pass, collection pass, exact sweep
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
    return _calibrate(groups, max_buckets, budget, max_levels, integer_weights)


def _calibrate(groups: Groups, max_buckets: int, budget: int, max_levels: int,
               integer_weights: bool) -> _Search:
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
    tol = 0.0 if exact else _LOOSE * G
    starts = groups.off[:-1]
    spread = np.maximum.reduceat(groups.x, starts) - np.minimum.reduceat(groups.x, starts)
    dmax_all = float(spread.max())
    if not dmax_all > 0:
        return _Search(0.0, 0, 0, exact)
    eps_all, val_all, levels, collected = _candidates(
        groups, w, a_base, a_zero, dmax_all, tol, max_buckets, budget, max_levels)
    return _choose(groups, eps_all, val_all, exact, tol, levels, collected)


def _histogram(x: np.ndarray, cstart: np.ndarray, gcls: np.ndarray, w: np.ndarray,
               iv: tuple[np.ndarray, ...]) -> tuple[np.ndarray, ...]:
    """One histogram pass (step 2): per bucket the positive and negative increments, the pair
    count and the smallest and largest ``|dm|``."""
    ilo, ihi, scale, base, nsub = iv
    nb = int(nsub.sum())
    pos, neg = np.zeros(nb), np.zeros(nb)
    cnt = np.zeros(nb, dtype=np.int64)
    dmin, dmax = np.full(nb, np.inf), np.full(nb, -np.inf)
    empty_f = np.empty(0)
    _tc_scan(x, cstart, gcls, w, ilo, ihi, scale, base, nsub, False,
             np.zeros(0, dtype=np.bool_), pos, neg, cnt, dmin, dmax, empty_f, empty_f,
             np.empty(0, dtype=np.int64))
    return pos, neg, cnt, dmin, dmax


def _candidates(groups: Groups, w: np.ndarray, a_base: float, a_zero: float, dmax_all: float,
                tol: float, max_buckets: int, budget: int, max_levels: int
                ) -> tuple[np.ndarray, np.ndarray, int, int]:
    """Candidate thresholds and their objective values (steps 1-3 of the module docstring),
    with the number of histogram levels and of pairs collected for the exact sweep."""
    x, cstart, gcls = _by_class(groups)
    lo, hi = np.array([0.0]), np.array([dmax_all])
    nsub = np.array([int(min(max_buckets, max(1, int(groups.n_pairs.sum()) // 64)))])
    s_before = np.array([a_base])
    cand_eps, cand_val = [np.array([0.0])], [np.array([a_zero])]
    best, levels, collected = a_zero, 0, 0
    empty_f, empty_i = np.empty(0), np.empty(0, dtype=np.int64)
    while True:
        levels += 1
        iv = _intervals(lo, hi, nsub)
        _, _, _, base, nsub = iv
        pos, neg, cnt, dmin, dmax = _histogram(x, cstart, gcls, w, iv)
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
            m = _tc_scan(x, cstart, gcls, w, *iv, True, flag, empty_f,  # type: ignore[call-arg, arg-type]  # numba
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
    return np.concatenate(cand_eps), np.concatenate(cand_val), levels, collected


def _choose(groups: Groups, eps_all: np.ndarray, val_all: np.ndarray, exact: bool, tol: float,
            levels: int, collected: int) -> _Search:
    """The smallest candidate at the maximum; in float mode the near-maximal candidates are
    re-evaluated with exact rational arithmetic (at most ``_MAX_EXACT_CHECKS`` of them)."""
    top = float(val_all.max())
    if exact:
        return _Search(float(eps_all[val_all == top].min()), levels, collected, True)
    near = np.unique(eps_all[val_all >= top - tol])
    if near.size <= _MAX_EXACT_CHECKS:
        exact_vals = [_exact_value(groups, float(e)) for e in near]
        vmax = max(exact_vals)
        chosen = min(float(e) for e, v in zip(near, exact_vals, strict=True) if v == vmax)
        return _Search(chosen, levels, collected, True)
    close = val_all >= top - 1e-12 * int(groups.sizes.size)
    return _Search(float(eps_all[close].min()), levels, collected, False)
