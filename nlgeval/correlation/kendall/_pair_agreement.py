"""Pairs both metrics get right, by sorting: the pairs test's counts for large groups.

MTME's pairs test (Deutsch, Foster & Freitag 2023; :func:`.tie_calibration.
acc_eq_permutation_test`) needs, per group, the pairs A gets right, B gets right and both get
right. The first two are acc_23 numerators (pair counts of :mod:`.kernels`, O(n log n)). A pair
is right for both metrics when it is a human tie that both metrics tie (``|dA| <= eA`` and
``|dB| <= eB``: a two-dimensional window count inside each run of equal human scores), or when
the human scores differ and both metrics order it the same way beyond their thresholds
(``A_j - A_i > eA`` and ``B_j - B_i > eB`` for ``h_i < h_j``: a three-dimensional dominance
count, by divide and conquer over the human-score runs with a Fenwick tree inside, Bentley
1980). Every comparison is the floating-point predicate of the pair loop (a threshold becomes a
position in the sorted scores by binary search on the computed differences), so the counts are
the loop's integers: O(n log^2 n) instead of O(n^2).
"""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True)
def _first_above(xs: np.ndarray, v: float, e: float) -> int:
    """First p with fl(xs[p] - v) > e (xs ascending); len(xs) if none."""
    a, b = 0, xs.shape[0]
    while a < b:
        mid = (a + b) // 2
        if xs[mid] - v > e:
            b = mid
        else:
            a = mid + 1
    return a


@njit(cache=True)
def _first_within(xs: np.ndarray, v: float, e: float) -> int:
    """First p with fl(v - xs[p]) <= e (xs ascending)."""
    a, b = 0, xs.shape[0]
    while a < b:
        mid = (a + b) // 2
        if v - xs[mid] <= e:
            b = mid
        else:
            a = mid + 1
    return a


@njit(cache=True)
def _fen_add(tree: np.ndarray, r: int, v: int) -> None:
    k = r + 1
    while k < tree.shape[0]:
        tree[k] += v
        k += k & (-k)


@njit(cache=True)
def _fen_below(tree: np.ndarray, r: int) -> int:
    s = 0
    k = r
    while k > 0:
        s += tree[k]
        k -= k & (-k)
    return s


@njit(cache=True)
def _tied_both(pa: np.ndarray, pb: np.ndarray, la: np.ndarray, ha: np.ndarray,
               lb: np.ndarray, hb: np.ndarray) -> int:
    """Unordered pairs of one run of equal human scores inside both windows: point j is in
    i's window when ``la[i] <= pa[j] < ha[i]`` and ``lb[i] <= pb[j] < hb[i]`` (symmetric)."""
    m = pa.shape[0]
    pbs = np.sort(pb)
    order = np.argsort(pa)
    corners_a = np.empty(4 * m, dtype=np.int64)
    corners_b = np.empty(4 * m, dtype=np.int64)
    sign = np.empty(4 * m, dtype=np.int64)
    for i in range(m):
        bl = np.searchsorted(pbs, lb[i])  # points with pb below lb[i]
        bh = np.searchsorted(pbs, hb[i])
        for k, (ca, cb, sg) in enumerate(((ha[i], bh, 1), (la[i], bh, -1), (ha[i], bl, -1),
                                          (la[i], bl, 1))):
            corners_a[4 * i + k] = ca
            corners_b[4 * i + k] = cb
            sign[4 * i + k] = sg
    corder = np.argsort(corners_a)
    tree = np.zeros(m + 1, dtype=np.int64)
    p = 0
    total = 0
    for t in range(4 * m):
        c = corder[t]
        while p < m and pa[order[p]] < corners_a[c]:
            _fen_add(tree, np.searchsorted(pbs, pb[order[p]]), 1)
            p += 1
        total += sign[c] * _fen_below(tree, corners_b[c])
    return (total - m) // 2  # ordered pairs, each point with itself included


@njit(cache=True)
def _cross(sa: np.ndarray, sb: np.ndarray, pa: np.ndarray, pb: np.ndarray, lo: int, mid: int,
           hi: int, tree: np.ndarray) -> int:
    """Pairs (i in [lo, mid), j in [mid, hi)) with pa[j] >= sa[i] and pb[j] >= sb[i]."""
    qi = np.arange(lo, mid)
    qi = qi[np.argsort(-sa[lo:mid])]
    pj = np.arange(mid, hi)
    pj = pj[np.argsort(-pa[mid:hi])]
    total = 0
    p = 0
    inserted = 0
    for t in range(qi.shape[0]):
        i = qi[t]
        while p < pj.shape[0] and pa[pj[p]] >= sa[i]:
            _fen_add(tree, pb[pj[p]], 1)
            inserted += 1
            p += 1
        total += inserted - _fen_below(tree, sb[i])
    for t in range(p):
        _fen_add(tree, pb[pj[t]], -1)
    return total


@njit(cache=True)
def both_right(xa: np.ndarray, xb: np.ndarray, y: np.ndarray, ea: float, eb: float) -> int:
    """Pairs of one group that metric A (threshold ``ea``) and metric B (``eb``) both get right
    against the human scores ``y``: the pair loop's count in O(n log^2 n)."""
    n = xa.shape[0]
    oy = np.argsort(y, kind="mergesort")
    xa, xb, y = xa[oy], xb[oy], y[oy]
    oa = np.argsort(xa, kind="mergesort")
    ob = np.argsort(xb, kind="mergesort")
    sxa, sxb = xa[oa], xb[ob]
    pa = np.empty(n, dtype=np.int64)
    pb = np.empty(n, dtype=np.int64)
    pa[oa] = np.arange(n)
    pb[ob] = np.arange(n)
    sa = np.empty(n, dtype=np.int64)
    sb = np.empty(n, dtype=np.int64)
    la = np.empty(n, dtype=np.int64)
    lb = np.empty(n, dtype=np.int64)
    for i in range(n):
        sa[i] = _first_above(sxa, xa[i], ea)
        sb[i] = _first_above(sxb, xb[i], eb)
        la[i] = _first_within(sxa, xa[i], ea)
        lb[i] = _first_within(sxb, xb[i], eb)
    # runs of equal human scores (y ascending)
    starts = [0]
    for i in range(1, n):
        if y[i] != y[i - 1]:
            starts.append(i)
    starts.append(n)
    runs = np.array(starts, dtype=np.int64)
    total = 0
    for r in range(runs.shape[0] - 1):
        a, e = runs[r], runs[r + 1]
        if e - a > 1:
            total += _tied_both(pa[a:e], pb[a:e], la[a:e], sa[a:e], lb[a:e], sb[a:e])
    # concordant for both: divide and conquer over the runs (lower runs against higher ones)
    tree = np.zeros(n + 1, dtype=np.int64)
    stack = [(0, runs.shape[0] - 1)]
    while len(stack) > 0:
        c0, c1 = stack.pop()
        if c1 - c0 < 2:
            continue
        cm = (c0 + c1) // 2
        total += _cross(sa, sb, pa, pb, runs[c0], runs[cm], runs[c1], tree)
        stack.append((c0, cm))
        stack.append((cm, c1))
    return total
