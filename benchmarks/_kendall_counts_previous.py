"""The previous Kendall pair count for long vectors (argsorts + tie sweeps + Fenwick tree with a
binary search per element), kept as a baseline of ``bench_kendall_long.py``: a copy of
``_counts_sorted`` of nlgeval 3e72fac (nlgeval/correlation/kendall/kernels.py), which still
counts the pairs when eps > 0; not part of the library, not cached. ``argsorts`` is its first
step alone (where the time goes).
"""

from __future__ import annotations

import numpy as np
from numba import njit


@njit
def argsorts(x: np.ndarray, y: np.ndarray) -> int:
    """The two stable argsorts the previous count starts with (numba's merge sort)."""
    ox = np.argsort(x, kind="mergesort")
    oy = ox[np.argsort(y[ox], kind="mergesort")]
    return int(oy[0])


# shape: one O(n log n) numba pass; its three counts share the sorted orders built at its start
@njit
def counts_sorted(x: np.ndarray, y: np.ndarray, eps: float) -> tuple[int, int, int, int, int]:
    """C, D, T_h, T_m, T_hm in O(n log n): sort + two pointers + Fenwick dominance count."""
    n = x.shape[0]
    ox = np.argsort(x, kind="mergesort")
    xs = x[ox]
    pos = np.empty(n, dtype=np.int64)
    for k in range(n):
        pos[ox[k]] = k
    # M: pairs with |dm| <= eps. fl(xs[r] - xs[i]) is monotone in r and in i, so the last r
    # with a tie never moves back as i grows.
    m_ties = 0
    r = 0
    for i in range(n):
        if r < i:
            r = i
        while r + 1 < n and xs[r + 1] - xs[i] <= eps:
            r += 1
        m_ties += r - i
    # order by human score, metric score as tie-breaker (stable sort of the metric order)
    oy = ox[np.argsort(y[ox], kind="mergesort")]
    h_ties = 0
    both = 0
    s = 0
    while s < n:
        e = s + 1
        ys = y[oy[s]]
        while e < n and y[oy[e]] == ys:
            e += 1
        m = e - s
        h_ties += m * (m - 1) // 2
        r = s
        for i in range(s, e):
            if r < i:
                r = i
            xi = x[oy[i]]
            while r + 1 < e and x[oy[r + 1]] - xi <= eps:
                r += 1
            both += r - i
        s = e
    # C: pairs with h_j < h_i and fl(m_i - m_j) > eps, humans in increasing order; the
    # metric values m_j satisfying the predicate form a prefix of xs (binary search on the
    # predicate itself, so floating point agrees with enumeration).
    tree = np.zeros(n + 1, dtype=np.int64)
    con = 0
    s = 0
    while s < n:
        e = s + 1
        ys = y[oy[s]]
        while e < n and y[oy[e]] == ys:
            e += 1
        for t in range(s, e):
            xi = x[oy[t]]
            lo = 0
            hi = n
            while lo < hi:
                mid = (lo + hi) // 2
                if xi - xs[mid] > eps:
                    lo = mid + 1
                else:
                    hi = mid
            q = lo  # prefix sum of inserted positions < q
            acc = 0
            while q > 0:
                acc += tree[q]
                q -= q & (-q)
            con += acc
        for t in range(s, e):
            q = pos[oy[t]] + 1
            while q <= n:
                tree[q] += 1
                q += q & (-q)
        s = e
    total = n * (n - 1) // 2
    dis = total - m_ties - h_ties + both - con
    return con, dis, h_ties - both, m_ties - both, both
