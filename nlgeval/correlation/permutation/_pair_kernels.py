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

The einsum-order system sums live here too, beside the fused system level that runs the same
loop (numba's cache of a kernel does not notice a change to a compiled helper in another file):

* :func:`system_mask_sums`: ``einsum("psi,ksi->psk", masks, D)`` (the per-system sums of the
  swapped differences, for the streamed draws of ``_pair_stream``) in the order numpy's einsum
  adds them: per output, the item axis in blocks of ``block`` items (einsum's buffer when it
  reduces over more items than that with more than one pair, or one block), each block with
  einsum's two-lane loop (per lane, groups of four products added last to first, then the
  rest two at a time, then the two lanes), the blocks added in order to 0. The callers compare
  these sums with einsum's bit for bit before using them (``_pair_stream``). 0/1 masks make
  every product exact.
* :func:`einsum_dots`: that loop for one system and pair and a range of draws, the one loop of
  the system sums of :func:`system_mask_sums`, :func:`einsum_system_sums` and the fused
  :func:`system_swap_r_masks` (the last two take the item axis as one block).

Threads: each element of these sums is computed by one thread alone, in a fixed order, so
the numbers do not depend on the thread count.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from nlgeval.correlation._numpy_sums import pairwise_sum
from nlgeval.correlation.coefficients import MIN_PAIRS

# numba cache pin: nlgeval.correlation._numpy_sums 68948fc567010a42  (see that module)

ONE_BLOCK = 1 << 62  #: ``block`` of :func:`einsum_dots` for the whole item axis


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
    return (0.0 + pairwise_sum(buf, 0, v.size)) / cnt


@njit(cache=True, parallel=True, error_model="numpy")
def item_swap_means(m: np.ndarray, D: np.ndarray, E: np.ndarray, F: np.ndarray,
                    n: np.ndarray, sa: np.ndarray, saa: np.ndarray, sah: np.ndarray,
                    sb: np.ndarray, sbb: np.ndarray, sbh: np.ndarray, sy: np.ndarray,
                    syy: np.ndarray, ra: np.ndarray, rb: np.ndarray) -> None:
    """Mean item-level r of A* and B* (``ra``/``rb``, (pairs, draws)) for the (draws,
    systems, items) 0/1 masks ``m`` (float or bytes); ``D``/``E``/``F`` (pairs, systems,
    items) the swap differences, the sums (pairs, items) the unswapped per-item sums of each
    pair."""
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
                    w = float(m[p, s, i])
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
    return 0.0 + pairwise_sum(v, 0, v.size)


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


@njit(cache=True, error_model="numpy")
def einsum_system_sums(mT: np.ndarray, D: np.ndarray, out: np.ndarray) -> None:
    """``einsum("psi,ksi->psk", masks, D)`` into ``out`` (P, S, K) from the (S, I, P)
    transposed masks ``mT``, by ``einsum_dots`` over the item axis as one block (numpy's
    two-lane SIMD loop over the contiguous item axis; to check it against einsum)."""
    S, _, P = mT.shape
    K = D.shape[0]
    acc0, acc1, col = np.empty(P), np.empty(P), np.empty(P)
    for j in range(K):
        for s in range(S):
            einsum_dots(mT, s, D, j, 0, P, ONE_BLOCK, acc0, acc1, col)
            for p in range(P):
                out[p, s, j] = col[p]


@njit(cache=True, error_model="numpy")
def _column_sums(X: np.ndarray, n: int, c: int, out: np.ndarray) -> None:
    """``0.0 +`` numpy's sum of a block (:func:`_block_sum`) of each column ``q < c``
    of ``X[:n]`` (n <= 128): the row sums of the (draws, systems) arrays, for ``c`` draws at
    once."""
    if n < 8:
        for q in range(c):
            res = 0.0
            for s in range(n):
                res += X[s, q]
            out[q] = 0.0 + res
        return
    for q in range(c):
        r0, r1, r2, r3 = X[0, q], X[1, q], X[2, q], X[3, q]
        r4, r5, r6, r7 = X[4, q], X[5, q], X[6, q], X[7, q]
        i = 8
        while i < n - (n % 8):
            r0 += X[i, q]
            r1 += X[i + 1, q]
            r2 += X[i + 2, q]
            r3 += X[i + 3, q]
            r4 += X[i + 4, q]
            r5 += X[i + 5, q]
            r6 += X[i + 6, q]
            r7 += X[i + 7, q]
            i += 8
        res = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
        while i < n:
            res += X[i, q]
            i += 1
        out[q] = 0.0 + res


_DRAW_CHUNK = 256  # draws of one pass of system_swap_r_masks


@njit(cache=True, parallel=True, error_model="numpy")
def system_swap_r_masks(mT: np.ndarray, D: np.ndarray, cnt: np.ndarray, sa: np.ndarray,
                        sb: np.ndarray, sh: np.ndarray, ra: np.ndarray, rb: np.ndarray
                        ) -> None:
    """:func:`system_swap_r` fused with the einsum of its permuted system sums: the
    (S, I, P) transposed masks ``mT`` and the swap differences ``D`` (pairs, S, I) in, the
    same ``ra``/``rb`` out, without the (draws, systems, pairs) sums in memory; the work is
    vectorised over draws (S <= 128)."""
    S, _, P = mT.shape
    K = D.shape[0]
    for j in prange(K):
        w, safe, mh = np.empty(S), np.empty(S), np.empty(S)
        for s in range(S):
            w[s] = 1.0 if cnt[j, s] > 0 else 0.0
            safe[s] = cnt[j, s] if cnt[j, s] >= 1.0 else 1.0
            mh[s] = sh[j, s] / safe[s]
        n = _row_sum(w)
        t = np.empty(S)
        for s in range(S):
            t[s] = w[s] * mh[s]
        sy = _row_sum(t)
        for s in range(S):
            t[s] = w[s] * mh[s] * mh[s]
        syy = _row_sum(t)
        C = _DRAW_CHUNK
        acc0, acc1 = np.empty(C), np.empty(C)
        mD = np.empty((S, C))
        t1, t2, t3 = np.empty((S, C)), np.empty((S, C)), np.empty((S, C))
        u1, u2, u3 = np.empty(C), np.empty(C), np.empty(C)
        for lo in range(0, P, C):
            c = min(C, P - lo)
            for s in range(S):
                einsum_dots(mT, s, D, j, lo, c, ONE_BLOCK, acc0, acc1, mD[s])
            for half in range(2):
                for s in range(S):
                    for q in range(c):
                        x = (sa[j, s] + mD[s, q]) / safe[s] if half == 0 \
                            else (sb[j, s] - mD[s, q]) / safe[s]
                        t1[s, q] = w[s] * x
                        t2[s, q] = w[s] * x * x
                        t3[s, q] = w[s] * x * mh[s]
                _column_sums(t1, S, c, u1)
                _column_sums(t2, S, c, u2)
                _column_sums(t3, S, c, u3)
                for q in range(c):
                    r = _pearson_one(n, u1[q], u2[q], u3[q], sy, syy)
                    if half == 0:
                        ra[j, lo + q] = r
                    else:
                        rb[j, lo + q] = r


@njit(cache=True, error_model="numpy")
def segment_swap_r(prod: np.ndarray, n: np.ndarray, sa: np.ndarray, saa: np.ndarray,
                   sah: np.ndarray, sb: np.ndarray, sbb: np.ndarray, sbh: np.ndarray,
                   sy: np.ndarray, syy: np.ndarray, ra: np.ndarray, rb: np.ndarray,
                   d0: int) -> None:
    """Segment-level r of A* and B* of pair ``j`` and draw ``d0 + q`` from the mask
    products ``prod`` (3 pairs, draws: D, E, F of each pair) and the pair's unswapped sums:
    ``_pearson_swaps._r_of`` element by element (the same operations as its arrays)."""
    K = n.size
    c = prod.shape[1]
    for j in range(K):
        for q in range(c):
            mD, mE, mF = prod[3 * j, q], prod[3 * j + 1, q], prod[3 * j + 2, q]
            ra[j, d0 + q] = _pearson_one(n[j], sa[j] + mD, saa[j] + mE, sah[j] + mF,
                                         sy[j], syy[j])
            rb[j, d0 + q] = _pearson_one(n[j], sb[j] - mD, sbb[j] - mE, sbh[j] - mF,
                                         sy[j], syy[j])


@njit(cache=True, nogil=True, error_model="numpy")
def einsum_dots(mT: np.ndarray, s: int, D: np.ndarray, j: int, lo: int, c: int, block: int,
                acc0: np.ndarray, acc1: np.ndarray, out: np.ndarray) -> None:  # pragma: no cover
    """``out[q]`` = the sum over items of ``mT[s, i, lo + q] * D[j, s, i]``, ``q < c``, in
    einsum's order (see the module docstring): the item axis in blocks of ``block`` items
    (``block`` >= the item count: one block), each block with the two-lane loop, the blocks
    added in order to 0; ``acc0``/``acc1`` scratch of at least ``c`` values. The one loop of
    the system sums of both the streamed draws (:func:`system_mask_sums`) and the pair
    kernels (:func:`einsum_system_sums`, :func:`system_swap_r_masks`: one block, a chunk of
    ``c`` draws from draw ``lo``)."""
    n_items = D.shape[2]
    for q in range(c):
        out[q] = 0.0
    for b0 in range(0, n_items, block):
        hi = min(n_items, b0 + block)
        for q in range(c):
            acc0[q] = 0.0
            acc1[q] = 0.0
        i = b0
        while hi - i >= 8:
            d0, d1, d2, d3 = D[j, s, i], D[j, s, i + 1], D[j, s, i + 2], D[j, s, i + 3]
            d4, d5, d6, d7 = D[j, s, i + 4], D[j, s, i + 5], D[j, s, i + 6], D[j, s, i + 7]
            for q in range(c):
                p = lo + q
                acc0[q] = (((acc0[q] + mT[s, i + 6, p] * d6) + mT[s, i + 4, p] * d4)
                           + mT[s, i + 2, p] * d2) + mT[s, i, p] * d0
                acc1[q] = (((acc1[q] + mT[s, i + 7, p] * d7) + mT[s, i + 5, p] * d5)
                           + mT[s, i + 3, p] * d3) + mT[s, i + 1, p] * d1
            i += 8
        while i < hi:
            d0 = D[j, s, i]
            for q in range(c):
                acc0[q] = acc0[q] + mT[s, i, lo + q] * d0
            if i + 1 < hi:
                d1 = D[j, s, i + 1]
                for q in range(c):
                    acc1[q] = acc1[q] + mT[s, i + 1, lo + q] * d1
            i += 2
        for q in range(c):
            out[q] = out[q] + (acc0[q] + acc1[q])


@njit(cache=True, nogil=True, parallel=True, error_model="numpy")
def system_mask_sums(mT: np.ndarray, D: np.ndarray, block: int,
                     out: np.ndarray) -> None:  # pragma: no cover - compiled
    """``out[p, s, j]`` = sum over items of ``mT[s, i, p] * D[j, s, i]`` in einsum's order
    (see the module docstring; :func:`einsum_dots` for each system and pair); ``mT`` the
    (systems, items, draws) 0/1 masks as bytes."""
    S, _, P = mT.shape
    K = D.shape[0]
    for t in prange(S * K):
        s, j = t // K, t % K
        acc0, acc1, tot = np.empty(P), np.empty(P), np.empty(P)
        einsum_dots(mT, s, D, j, 0, P, block, acc0, acc1, tot)
        for q in range(P):
            out[q, s, j] = tot[q]
