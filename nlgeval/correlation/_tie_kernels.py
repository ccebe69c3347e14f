"""numba kernels of tie calibration (Deutsch, Foster & Freitag 2023, Section 5).

The histogram pass, collection pass and exact sweep of the calibration search
(:mod:`nlgeval.correlation.tie_search`, whose docstring describes the algorithm), and the
pair-agreement counts of the permutation test
(:func:`nlgeval.correlation.tie_calibration.acc_eq_permutation_test`). Compiled loops because
the number of pairs grows with the square of the group size.
"""

from __future__ import annotations

import numpy as np
from numba import njit

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
    return tie_m * tie_h + (1 - tie_m) * (1 - tie_h) * same  # type: ignore[return-value]  # int64 in numba


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
