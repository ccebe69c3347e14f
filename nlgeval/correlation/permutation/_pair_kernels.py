"""Compiled item-level PERM-BOTH draws of Pearson's r for many metric pairs at once.

For every pair and swap mask the item-level statistic is the mean over items of Pearson's r
across systems after the swap (Deutsch, Dror & Roth 2021). The array code of
:mod:`nlgeval.correlation.permutation._pearson_swaps` takes, per pair and block of masks, the
swapped sums with ``einsum("psi,si->pi")`` (per item, the masked terms added in system order from
0), Pearson's r from them with :func:`nlgeval.correlation.coefficients.pearson_from_sums`
and the mean with ``np.nanmean`` (numpy's pairwise sum). :func:`item_swap_means` does the
same operations in the same order for all pairs and masks in one compiled pass, without the
(pairs, draws, items) intermediate arrays; IEEE arithmetic without contraction or
reassociation, so the numbers are the same (tests/test_pair_swaps.py).
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from nlgeval.correlation.coefficients import MIN_PAIRS


@njit(cache=True, error_model="numpy")
def _block_sum(a: np.ndarray, lo: int, n: int) -> float:
    """numpy's pairwise summation of at most 128 values: 8 accumulators (sequential below 8)."""
    if n < 8:
        res = 0.0
        for i in range(n):
            res += a[lo + i]
        return res
    r0, r1, r2, r3 = a[lo], a[lo + 1], a[lo + 2], a[lo + 3]
    r4, r5, r6, r7 = a[lo + 4], a[lo + 5], a[lo + 6], a[lo + 7]
    i = 8
    while i < n - (n % 8):
        r0 += a[lo + i]
        r1 += a[lo + i + 1]
        r2 += a[lo + i + 2]
        r3 += a[lo + i + 3]
        r4 += a[lo + i + 4]
        r5 += a[lo + i + 5]
        r6 += a[lo + i + 6]
        r7 += a[lo + i + 7]
        i += 8
    res = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
    while i < n:
        res += a[lo + i]
        i += 1
    return res


@njit(cache=True, error_model="numpy")
def _pairwise_sum(a: np.ndarray, lo: int, n: int) -> float:
    """numpy's pairwise summation of ``a[lo:lo + n]`` (``np.add.reduce`` on a contiguous
    row): blocks of at most 128 values, larger ranges split in two halves (the first a
    multiple of 8) and the halves added. numpy's recursion is run on an explicit stack (a
    recursive compiled function does not survive numba's on-disk cache)."""
    if n <= 128:
        return _block_sum(a, lo, n)
    f_lo = np.empty(64, dtype=np.int64)
    f_n = np.empty(64, dtype=np.int64)
    f_state = np.empty(64, dtype=np.int64)
    vals = np.empty(64)
    top, nv = 0, 0
    f_lo[0], f_n[0], f_state[0] = lo, n, 0
    while top >= 0:
        lo_t, n_t = f_lo[top], f_n[top]
        if n_t <= 128:
            vals[nv] = _block_sum(a, lo_t, n_t)
            nv += 1
            top -= 1
            continue
        n2 = n_t // 2
        n2 -= n2 % 8
        if f_state[top] == 0:
            f_state[top] = 1
            top += 1
            f_lo[top], f_n[top], f_state[top] = lo_t, n2, 0
        elif f_state[top] == 1:
            f_state[top] = 2
            top += 1
            f_lo[top], f_n[top], f_state[top] = lo_t + n2, n_t - n2, 0
        else:
            vals[nv - 2] = vals[nv - 2] + vals[nv - 1]
            nv -= 1
            top -= 1
    return vals[0]


@njit(cache=True, error_model="numpy")
def _floor300(x: float) -> float:
    """``np.maximum(x, 1e-300)`` (NaN propagates)."""
    return x if (x != x or x > 1e-300) else 1e-300


@njit(cache=True, error_model="numpy")
def _pearson_row(n: np.ndarray, n1: np.ndarray, sx: np.ndarray, sxx: np.ndarray,
                 sxy: np.ndarray, sy: np.ndarray, cyy: np.ndarray, bad_y: np.ndarray,
                 out: np.ndarray) -> None:
    """``_pearson_swaps._r_of`` (:func:`pearson_from_sums` with the mean squares as scales)
    of one row of items, operation for operation; the y side (``cyy`` and its constancy
    test ``bad_y``, the same on every draw) computed once by the caller. Branch-free, so
    the loop is vectorised."""
    for i in range(out.size):
        cxx = sxx[i] - sx[i] * sx[i] / n[i]
        cxy = sxy[i] - sx[i] * sy[i] / n[i]
        r = cxy / np.sqrt(cxx * cyy[i])
        bad = bad_y[i] | (cxx <= 1e-10 * _floor300(sxx[i] / n1[i]) * n1[i])
        r = -1.0 if r < -1.0 else r
        r = 1.0 if r > 1.0 else r
        out[i] = np.nan if bad else r


@njit(cache=True, error_model="numpy")
def _y_side(n: np.ndarray, sy: np.ndarray, syy: np.ndarray
            ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """max(n, 1), the centred sum of squares of y and the rule's verdict on y (and on n)."""
    n1 = np.empty(n.size)
    cyy = np.empty(n.size)
    bad = np.empty(n.size, dtype=np.bool_)
    for i in range(n.size):
        n1[i] = n[i] if n[i] >= 1.0 else 1.0
        cyy[i] = syy[i] - sy[i] * sy[i] / n[i]
        bad[i] = (not (n[i] >= MIN_PAIRS)) | (cyy[i] <= 1e-10 * _floor300(syy[i] / n1[i]) * n1[i])
    return n1, cyy, bad


@njit(cache=True, error_model="numpy")
def _nanmean(v: np.ndarray, buf: np.ndarray) -> float:
    """``np.nanmean`` of a row: NaN as 0, numpy's sum, divided by the count."""
    cnt = 0
    for i in range(v.size):
        if v[i] != v[i]:
            buf[i] = 0.0
        else:
            buf[i] = v[i]
            cnt += 1
    return (0.0 + _pairwise_sum(buf, 0, v.size)) / cnt


@njit(cache=True, parallel=True, error_model="numpy")
def item_swap_means(m: np.ndarray, D: np.ndarray, E: np.ndarray, F: np.ndarray,
                    n: np.ndarray, sa: np.ndarray, saa: np.ndarray, sah: np.ndarray,
                    sb: np.ndarray, sbb: np.ndarray, sbh: np.ndarray, sy: np.ndarray,
                    syy: np.ndarray, ra: np.ndarray, rb: np.ndarray) -> None:
    """Mean item-level r of A* and B* (``ra``/``rb``, (pairs, draws)) for the (draws,
    systems, items) 0/1 masks ``m``; ``D``/``E``/``F`` (pairs, systems, items) the swap
    differences, the sums (pairs, items) the unswapped per-item sums of each pair."""
    K, S, n_items = D.shape
    P = m.shape[0]
    for j in prange(K):  # pairs in parallel: each output is computed by one thread alone
        n1, cyy, bad_y = _y_side(n[j], sy[j], syy[j])
        mD, mE, mF = np.empty(n_items), np.empty(n_items), np.empty(n_items)
        xa, xb, xc = np.empty(n_items), np.empty(n_items), np.empty(n_items)
        va, vb, buf = np.empty(n_items), np.empty(n_items), np.empty(n_items)
        for p in range(P):
            mD[:] = 0.0
            mE[:] = 0.0
            mF[:] = 0.0
            for s in range(S):
                for i in range(n_items):
                    w = m[p, s, i]
                    mD[i] += w * D[j, s, i]
                    mE[i] += w * E[j, s, i]
                    mF[i] += w * F[j, s, i]
            for i in range(n_items):
                xa[i] = sa[j, i] + mD[i]
                xb[i] = saa[j, i] + mE[i]
                xc[i] = sah[j, i] + mF[i]
            _pearson_row(n[j], n1, xa, xb, xc, sy[j], cyy, bad_y, va)
            for i in range(n_items):
                xa[i] = sb[j, i] - mD[i]
                xb[i] = sbb[j, i] - mE[i]
                xc[i] = sbh[j, i] - mF[i]
            _pearson_row(n[j], n1, xa, xb, xc, sy[j], cyy, bad_y, vb)
            ra[j, p] = _nanmean(va, buf)
            rb[j, p] = _nanmean(vb, buf)


@njit(cache=True, error_model="numpy")
def _pearson_one(n: float, sx: float, sxx: float, sxy: float, sy: float, syy: float
                 ) -> float:
    """``_pearson_swaps._r_of`` of one set of sums, operation for operation."""
    n1 = n if n >= 1.0 else 1.0
    cxx = sxx - sx * sx / n
    cyy = syy - sy * sy / n
    cxy = sxy - sx * sy / n
    r = cxy / np.sqrt(cxx * cyy)
    bad = (not (n >= MIN_PAIRS)) | (cxx <= 1e-10 * _floor300(sxx / n1) * n1)
    bad |= cyy <= 1e-10 * _floor300(syy / n1) * n1
    r = -1.0 if r < -1.0 else r
    r = 1.0 if r > 1.0 else r
    return np.nan if bad else r


@njit(cache=True, error_model="numpy")
def _row_sum(v: np.ndarray) -> float:
    return 0.0 + _pairwise_sum(v, 0, v.size)


@njit(cache=True, parallel=True, error_model="numpy")
def system_swap_r(mD: np.ndarray, cnt: np.ndarray, sa: np.ndarray, sb: np.ndarray,
                  sh: np.ndarray, ra: np.ndarray, rb: np.ndarray) -> None:
    """System-level r of A* and B* (``ra``/``rb``, (pairs, draws)) from the permuted
    system sums ``mD`` (draws, systems, pairs) of the swap differences and each pair's
    complete-cell counts and sums per system (pairs, systems): the array code's
    system means, weights and row sums (numpy's pairwise order) in one compiled pass."""
    P, S, K = mD.shape
    for j in prange(K):
        w, safe, mh = np.empty(S), np.empty(S), np.empty(S)
        t1, t2, t3 = np.empty(S), np.empty(S), np.empty(S)
        for s in range(S):
            w[s] = 1.0 if cnt[j, s] > 0 else 0.0
            safe[s] = cnt[j, s] if cnt[j, s] >= 1.0 else 1.0
            mh[s] = sh[j, s] / safe[s]
        n = _row_sum(w)
        for s in range(S):
            t1[s] = w[s] * mh[s]
            t2[s] = w[s] * mh[s] * mh[s]
        sy, syy = _row_sum(t1), _row_sum(t2)
        for p in range(P):
            for half in range(2):
                for s in range(S):
                    x = (sa[j, s] + mD[p, s, j]) / safe[s] if half == 0 \
                        else (sb[j, s] - mD[p, s, j]) / safe[s]
                    t1[s] = w[s] * x
                    t2[s] = w[s] * x * x
                    t3[s] = w[s] * x * mh[s]
                r = _pearson_one(n, _row_sum(t1), _row_sum(t2), _row_sum(t3), sy, syy)
                if half == 0:
                    ra[j, p] = r
                else:
                    rb[j, p] = r
