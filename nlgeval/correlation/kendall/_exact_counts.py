"""Kendall's pair counts of plain Kendall (no tie threshold) in O(n log n), as scipy counts them.

The pairs of two finite vectors ordered by (x, y): a radix sort of order-preserving integer
keys by x carrying y, y sorted within each run of equal x; the discordant pairs D are then the
inversions of y (Knight 1966), counted by a natural merge sort, or, when y takes at most
:data:`_FEW` distinct values (a human rating scale), by a Fenwick tree over their ranks; the
ties from run lengths. The same integers as the sort + Fenwick count of
:mod:`nlgeval.correlation.kendall.kernels`, which calls :func:`_counts_exact` for eps = 0 (and
pins this module: numba's cache of a kernel does not notice an edit of a helper in another file).
"""

from __future__ import annotations

import numpy as np
from numba import njit

_SIGN_BIT = np.int64(-9223372036854775808)  # 1 << 63 as int64
_LOW_BITS = np.int64(9223372036854775807)  # every bit but the sign
_INSERTION_MAX = 32  # runs of equal metric values up to this long: insertion sort
_BLOCK = 16  # the merge count starts from blocks this long, sorted by insertion
_FEW = 256  # y with at most this many distinct values: D from a Fenwick tree over their ranks
_SLOTS = 1024  # slots of the hash set that finds them (a power of 2, > 2 _FEW)
_HASH_MUL = np.int64(-7046029254386353131)  # 0x9E3779B97F4A7C15 (Fibonacci hashing)


@njit(cache=True)
def _order_keys(v: np.ndarray) -> np.ndarray:
    """int64 keys of finite floats: the same order and equality as the floats (-0.0 == 0.0).

    The IEEE bits as an int64 keep the order of the non-negative floats; flipping every bit
    but the sign of a negative one reverses its order below zero.
    """
    n = v.shape[0]
    w = np.empty(n)
    for i in range(n):
        a = v[i]
        w[i] = 0.0 if a == 0.0 else a  # -0.0 and 0.0: one key
    k = w.view(np.int64)
    for i in range(n):
        if k[i] < 0:
            k[i] ^= _LOW_BITS
    return k


@njit(cache=True)
def _radix_sort(key: np.ndarray, pay: np.ndarray, kb: np.ndarray, pb: np.ndarray) -> None:
    """Sort int64 ``key`` in place, stably, moving ``pay`` alongside (unless it is empty).

    LSD radix sort on the 8 bytes of ``key ^ sign bit`` (the unsigned order of those bits is
    the signed order of ``key``), all byte histograms from one pass; a byte that is the same
    in every key is skipped. ``kb`` / ``pb``: work buffers of the same length.
    """
    n = key.shape[0]
    if n < 2:
        return
    carry = pay.shape[0] > 0
    hist = np.zeros((8, 256), dtype=np.int64)
    for i in range(n):
        u = key[i] ^ _SIGN_BIT
        for d in range(8):
            hist[d, (u >> (8 * d)) & 255] += 1
    src_k, src_p, dst_k, dst_p = key, pay, kb, pb
    moved = False
    for d in range(8):
        sh = 8 * d
        h = hist[d]
        if h[((key[0] ^ _SIGN_BIT) >> sh) & 255] == n:
            continue
        tot = 0
        for b in range(256):
            c = h[b]
            h[b] = tot
            tot += c
        for i in range(n):
            k = src_k[i]
            b = ((k ^ _SIGN_BIT) >> sh) & 255
            j = h[b]
            h[b] = j + 1
            dst_k[j] = k
            if carry:
                dst_p[j] = src_p[i]
        src_k, dst_k = dst_k, src_k
        src_p, dst_p = dst_p, src_p
        moved = not moved
    if moved:  # the sorted keys are in the buffers (loops: slice copies compile slowly)
        for i in range(n):
            key[i] = src_k[i]
            if carry:
                pay[i] = src_p[i]


@njit(cache=True)
def _block_inversions(a: np.ndarray) -> int:
    """Sort each block of :data:`_BLOCK` values of ``a`` by insertion; return the inversions
    within the blocks (each shift passes one strictly greater value)."""
    n = a.shape[0]
    inv = 0
    for lo in range(0, n, _BLOCK):
        hi = min(n, lo + _BLOCK)
        for i in range(lo + 1, hi):
            v = a[i]
            j = i - 1
            while j >= lo and a[j] > v:
                a[j + 1] = a[j]
                j -= 1
            a[j + 1] = v
            inv += i - 1 - j
    return inv


@njit(cache=True)
def _merge_count(a: np.ndarray, buf: np.ndarray, starts: np.ndarray) -> int:
    """Sort int64 ``a`` in place; return its inversions (pairs i < j with a[i] > a[j]).

    Natural bottom-up merge sort: blocks sorted by :func:`_block_inversions`, then the
    ascending runs of ``a`` merged pairwise until one is left, each element taken from a
    right half counting the elements still in the left half that are strictly greater
    (Knight 1966; equal values are taken from the left, so ties are no inversions).
    ``buf``: work array of ``a``'s length; ``starts``: of length + 1.
    """
    n = a.shape[0]
    inv = _block_inversions(a)
    r = 1
    starts[0] = 0
    for i in range(1, n):
        if a[i] < a[i - 1]:
            starts[r] = i
            r += 1
    starts[r] = n
    src, dst = a, buf
    moved = False
    while r > 1:
        q = 0
        for t in range(0, r, 2):
            lo = starts[t]
            if t + 1 == r:  # the odd run out: copied
                for k in range(lo, starts[t + 1]):
                    dst[k] = src[k]
            else:
                i = lo
                j = mid = starts[t + 1]
                hi = starts[t + 2]
                k = lo
                while i < mid and j < hi:  # branch-free: the comparison is a coin toss
                    u = src[i]
                    v = src[j]
                    right = v < u
                    dst[k] = v if right else u
                    inv += (mid - i) if right else 0
                    j += right
                    i += 1 - right
                    k += 1
                while i < mid:
                    dst[k] = src[i]
                    i += 1
                    k += 1
                while j < hi:
                    dst[k] = src[j]
                    j += 1
                    k += 1
            starts[q] = lo
            q += 1
        starts[q] = n
        r = q
        src, dst = dst, src
        moved = not moved
    if moved:
        for i in range(n):
            a[i] = src[i]
    return inv


@njit(cache=True)
def _few_ranks(a: np.ndarray, rank: np.ndarray, vals: np.ndarray) -> int:
    """Dense ranks of ``a``'s values (into ``rank``) and the sorted distinct values (``vals[:k]``)
    when ``a`` has at most :data:`_FEW` distinct values; returns k, or -1 when there are more.

    One pass with a small open-addressing hash set (stops at the first value too many), the
    distinct values sorted by insertion, then each slot's rank.
    """
    n = a.shape[0]
    keys = np.empty(_SLOTS, dtype=np.int64)
    used = np.zeros(_SLOTS, dtype=np.bool_)
    k = 0
    for i in range(n):
        v = a[i]
        h = ((v * _HASH_MUL) >> 50) & (_SLOTS - 1)
        while used[h] and keys[h] != v:
            h = (h + 1) & (_SLOTS - 1)
        if not used[h]:
            if k == _FEW:
                return -1
            used[h] = True
            keys[h] = v
            k += 1
        rank[i] = h  # the slot, for now
    slots = np.empty(k, dtype=np.int64)
    m = 0
    for h in range(_SLOTS):
        if used[h]:
            j = m - 1  # insertion by value
            while j >= 0 and keys[slots[j]] > keys[h]:
                slots[j + 1] = slots[j]
                j -= 1
            slots[j + 1] = h
            m += 1
    of_slot = np.empty(_SLOTS, dtype=np.int64)
    for r in range(k):
        of_slot[slots[r]] = r
        vals[r] = keys[slots[r]]
    for i in range(n):
        rank[i] = of_slot[rank[i]]
    return k


@njit(cache=True)
def _rank_count(a: np.ndarray, rank: np.ndarray, vals: np.ndarray, k: int) -> int:
    """Inversions of ``a`` from its dense ranks (``k`` values: a Fenwick tree that stays in
    cache), then ``a`` sorted from the count of each rank."""
    tree = np.zeros(k + 1, dtype=np.int64)
    cnt = np.zeros(k, dtype=np.int64)
    inv = 0
    for i in range(a.shape[0]):
        r = rank[i]
        q = r + 1  # values <= a[i] inserted so far
        le = 0
        while q > 0:
            le += tree[q]
            q -= q & (-q)
        inv += i - le
        cnt[r] += 1
        q = r + 1
        while q <= k:
            tree[q] += 1
            q += q & (-q)
    s = 0
    for r in range(k):
        for i in range(s, s + cnt[r]):
            a[i] = vals[r]
        s += cnt[r]
    return inv


@njit(cache=True)
def _tied_pairs(k: np.ndarray, lo: int, hi: int) -> tuple[int, int]:
    """Pairs within runs of equal values of the sorted ``k[lo:hi]``, and the number of runs."""
    ties = 0
    runs = 0
    s = lo
    while s < hi:
        e = s + 1
        while e < hi and k[e] == k[s]:
            e += 1
        ties += (e - s) * (e - s - 1) // 2
        runs += 1
        s = e
    return ties, runs


@njit(cache=True)
def _counts_exact(x: np.ndarray, y: np.ndarray) -> tuple[int, int, int, int, int, int, int]:
    """C, D, T_h, T_m, T_hm and the distinct x and y values of finite vectors, for eps == 0.

    The pairs ordered by (x, y): a radix sort by x carrying y, then y sorted within each run
    of equal x. D is then the number of inversions of y (Knight 1966): a merge count, which
    leaves y sorted for its ties. The same integers as ``kernels._counts_sorted`` with eps = 0
    (which compares the same floats: for finite a, b, fl(a - b) is 0 exactly when a == b and
    has the sign of a - b).
    """
    n = x.shape[0]
    kx = _order_keys(x)
    ky = _order_keys(y)
    kb = np.empty(n, dtype=np.int64)
    pb = np.empty(n, dtype=np.int64)
    _radix_sort(kx, ky, kb, pb)
    tx = 0
    txy = 0
    nx = 0
    s = 0
    while s < n:  # runs of equal x: their ties, y sorted within them, the ties in both
        e = s + 1
        while e < n and kx[e] == kx[s]:
            e += 1
        m = e - s
        nx += 1
        tx += m * (m - 1) // 2
        if m > _INSERTION_MAX:
            _radix_sort(ky[s:e], kb[:0], kb[s:e], kb[:0])
        else:
            for i in range(s + 1, e):
                v = ky[i]
                j = i - 1
                while j >= s and ky[j] > v:
                    ky[j + 1] = ky[j]
                    j -= 1
                ky[j + 1] = v
        if m > 1:
            txy += _tied_pairs(ky, s, e)[0]
        s = e
    vals = np.empty(_FEW, dtype=np.int64)
    k = _few_ranks(ky, kb, vals)  # a human rating scale: few distinct values
    if k >= 0:
        dis = _rank_count(ky, kb, vals, k)
    else:
        dis = _merge_count(ky, kb, np.empty(n + 1, dtype=np.int64))
    ty, ny = _tied_pairs(ky, 0, n)
    con = n * (n - 1) // 2 - tx - ty + txy - dis
    return con, dis, ty - txy, tx - txy, txy, nx, ny


@njit(cache=True)
def _all_finite(x: np.ndarray, y: np.ndarray) -> bool:
    for i in range(x.shape[0]):
        if not (np.isfinite(x[i]) and np.isfinite(y[i])):
            return False
    return True
