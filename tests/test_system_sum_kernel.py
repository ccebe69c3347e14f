"""One compiled loop for the system sums of PERM-BOTH (Deutsch, Dror & Roth 2021).

The streamed draws (``_pair_kernels.system_mask_sums``: einsum's blocks of items) and the
pair kernels (``_pair_kernels.einsum_system_sums`` and the fused ``system_swap_r_masks``: one
block, a chunk of draws at a time) both add ``einsum("psi,ksi->psk")``'s sums by
``_pair_kernels.einsum_dots``. The two loops they had before are kept below verbatim (only
``cache=True`` dropped: they are compiled for this test) as the reference: the new kernels must
give the same numbers bit for bit on random cases -- ties, constant items, NaN, magnitudes near
1e200 and 1e-200, item counts around the lanes (8) and the blocks, draws around the chunks.
"""

from __future__ import annotations

import numpy as np
import pytest
from numba import njit, prange

from nlgeval.correlation.permutation import _pair_kernels


# ------------------------------------------------------- the previous kernels, verbatim
@njit(nogil=True, parallel=True, error_model="numpy")
def old_system_mask_sums(mT: np.ndarray, D: np.ndarray, block: int,
                         out: np.ndarray) -> None:  # pragma: no cover - compiled
    """``out[p, s, j]`` = sum over items of ``mT[s, i, p] * D[j, s, i]`` in einsum's order
    (see the module docstring); ``mT`` the (systems, items, draws) 0/1 masks as bytes."""
    S, n_items, P = mT.shape
    K = D.shape[0]
    for t in prange(S * K):
        s, j = t // K, t % K
        acc0, acc1, tot = np.empty(P), np.empty(P), np.zeros(P)
        for lo in range(0, n_items, block):
            hi = min(n_items, lo + block)
            acc0[:] = 0.0
            acc1[:] = 0.0
            i = lo
            while hi - i >= 8:
                d0, d1, d2, d3 = D[j, s, i], D[j, s, i + 1], D[j, s, i + 2], D[j, s, i + 3]
                d4, d5, d6, d7 = D[j, s, i + 4], D[j, s, i + 5], D[j, s, i + 6], D[j, s, i + 7]
                for q in range(P):
                    acc0[q] = (((acc0[q] + mT[s, i + 6, q] * d6) + mT[s, i + 4, q] * d4)
                               + mT[s, i + 2, q] * d2) + mT[s, i, q] * d0
                    acc1[q] = (((acc1[q] + mT[s, i + 7, q] * d7) + mT[s, i + 5, q] * d5)
                               + mT[s, i + 3, q] * d3) + mT[s, i + 1, q] * d1
                i += 8
            while i < hi:
                d0 = D[j, s, i]
                for q in range(P):
                    acc0[q] = acc0[q] + mT[s, i, q] * d0
                if i + 1 < hi:
                    d1 = D[j, s, i + 1]
                    for q in range(P):
                        acc1[q] = acc1[q] + mT[s, i + 1, q] * d1
                i += 2
            for q in range(P):
                tot[q] = tot[q] + (acc0[q] + acc1[q])
        for q in range(P):
            out[q, s, j] = tot[q]


@njit(error_model="numpy")
def old_einsum_dots(mT: np.ndarray, s: int, D: np.ndarray, j: int, lo: int, c: int,
                    acc0: np.ndarray, acc1: np.ndarray, out: np.ndarray) -> None:
    """``out[q]`` = ``einsum("psi,ksi->psk")``'s sum over items of mask ``lo + q`` of system
    ``s`` times ``D[j, s]``, for ``q < c``, in numpy's order (its two-lane SIMD loop over
    the contiguous item axis: per lane, chunks of four vectors added last to first, then
    the rest two at a time, then the two lanes; ``_pair_swaps`` checks it against einsum).
    The 0/1 mask products are exact, so a fused multiply-add gives the same sums."""
    n_items = D.shape[2]
    for q in range(c):
        acc0[q] = 0.0
        acc1[q] = 0.0
    i = 0
    while n_items - i >= 8:
        d0, d1, d2, d3 = D[j, s, i], D[j, s, i + 1], D[j, s, i + 2], D[j, s, i + 3]
        d4, d5, d6, d7 = D[j, s, i + 4], D[j, s, i + 5], D[j, s, i + 6], D[j, s, i + 7]
        for q in range(c):
            p = lo + q
            acc0[q] = (((acc0[q] + mT[s, i + 6, p] * d6) + mT[s, i + 4, p] * d4)
                       + mT[s, i + 2, p] * d2) + mT[s, i, p] * d0
            acc1[q] = (((acc1[q] + mT[s, i + 7, p] * d7) + mT[s, i + 5, p] * d5)
                       + mT[s, i + 3, p] * d3) + mT[s, i + 1, p] * d1
        i += 8
    while i < n_items:
        d0 = D[j, s, i]
        for q in range(c):
            acc0[q] = acc0[q] + mT[s, i, lo + q] * d0
        if i + 1 < n_items:
            d1 = D[j, s, i + 1]
            for q in range(c):
                acc1[q] = acc1[q] + mT[s, i + 1, lo + q] * d1
        i += 2
    for q in range(c):
        out[q] = 0.0 + (acc0[q] + acc1[q])


@njit(error_model="numpy")
def old_einsum_system_sums(mT: np.ndarray, D: np.ndarray, out: np.ndarray) -> None:
    """``einsum("psi,ksi->psk", masks, D)`` into ``out`` (P, S, K) from the (S, I, P)
    transposed masks ``mT``, by :func:`_einsum_dots` (to check it against einsum)."""
    S, _, P = mT.shape
    K = D.shape[0]
    acc0, acc1, col = np.empty(P), np.empty(P), np.empty(P)
    for j in range(K):
        for s in range(S):
            old_einsum_dots(mT, s, D, j, 0, P, acc0, acc1, col)
            for p in range(P):
                out[p, s, j] = col[p]


# ------------------------------------------------------------------------------- the cases
KINDS = ("wide", "ties", "constant", "nan", "huge", "tiny", "signed_zero")


def _differences(rng: np.random.Generator, kind: str, shape: tuple[int, int, int]
                 ) -> np.ndarray:
    """Swap differences (pairs, systems, items) of one kind."""
    if kind == "wide":  # magnitudes over many orders: the order of the sums shows
        return rng.normal(size=shape) * np.exp(5 * rng.normal(size=shape))
    if kind == "ties":
        return np.round(rng.normal(size=shape) * 2) / 2
    if kind == "constant":  # every item of a system the same value
        return np.broadcast_to(rng.normal(size=shape[:2])[:, :, None], shape).copy()
    if kind == "nan":  # a missing cell: NaN propagates as in einsum
        D = rng.normal(size=shape)
        if D.size:
            D.flat[rng.integers(0, D.size, max(1, D.size // 50))] = np.nan
        return D
    if kind == "huge":  # near 1e200, some sums overflow to +-inf (1e306 * 8 items)
        return rng.normal(size=shape) * np.where(rng.random(shape) < 0.1, 1e306, 1e200)
    if kind == "tiny":  # near 1e-200 and subnormal
        return rng.normal(size=shape) * np.where(rng.random(shape) < 0.5, 1e-200, 1e-310)
    return np.where(rng.random(shape) < 0.5, -0.0, 0.0)  # signed zeros


def _masks(rng: np.random.Generator, S: int, n_items: int, P: int) -> np.ndarray:
    """(systems, items, draws) 0/1 byte masks, C-contiguous, as the callers pass them."""
    return np.ascontiguousarray((rng.random((S, n_items, P)) < 0.5).astype(np.uint8))


def _same_bits(a: np.ndarray, b: np.ndarray) -> bool:
    """Equal bit for bit: the values (NaN where NaN) and the sign of every zero."""
    return bool(np.array_equal(a, b, equal_nan=True)
                and np.array_equal(np.signbit(a), np.signbit(b)))


ITEM_COUNTS = (0, 1, 2, 3, 7, 8, 9, 15, 16, 17, 31, 100)


@pytest.mark.parametrize("kind", KINDS)
def test_stream_system_sums_equal_the_previous_kernel(kind: str) -> None:
    rng = np.random.default_rng([1, KINDS.index(kind)])
    for n_items in ITEM_COUNTS:
        S, K, P = int(rng.integers(1, 6)), int(rng.integers(1, 4)), int(rng.integers(1, 40))
        mT, D = _masks(rng, S, n_items, P), _differences(rng, kind, (K, S, n_items))
        for block in (1, 2, 3, 7, 8, 9, 16, max(n_items - 1, 1), max(n_items, 1),
                      n_items + 1, _pair_kernels.ONE_BLOCK):
            want, got = np.empty((P, S, K)), np.empty((P, S, K))
            old_system_mask_sums(mT, D, block, want)
            _pair_kernels.system_mask_sums(mT, D, block, got)
            assert _same_bits(got, want), (kind, n_items, block)


@pytest.mark.parametrize("kind", KINDS)
def test_pair_system_sums_equal_the_previous_kernel(kind: str) -> None:
    rng = np.random.default_rng([2, KINDS.index(kind)])
    for n_items in ITEM_COUNTS:
        S, K, P = int(rng.integers(1, 6)), int(rng.integers(1, 4)), int(rng.integers(1, 40))
        mT, D = _masks(rng, S, n_items, P), _differences(rng, kind, (K, S, n_items))
        want, got = np.empty((P, S, K)), np.empty((P, S, K))
        old_einsum_system_sums(mT, D, want)
        _pair_kernels.einsum_system_sums(mT, D, got)
        assert _same_bits(got, want), (kind, n_items)


@pytest.mark.parametrize("kind", ["wide", "nan", "huge"])
def test_draw_chunks_equal_the_previous_loop(kind: str) -> None:
    # the fused system level's call: draws lo .. lo + c of a longer mask, one block
    rng = np.random.default_rng([3, KINDS.index(kind)])
    P = 2 * _pair_kernels._DRAW_CHUNK + 3
    for n_items in (5, 8, 17, 40):
        mT, D = _masks(rng, 3, n_items, P), _differences(rng, kind, (2, 3, n_items))
        for lo in range(0, P, _pair_kernels._DRAW_CHUNK):
            c = min(_pair_kernels._DRAW_CHUNK, P - lo)
            for s in range(3):
                for j in range(2):
                    a0, a1 = np.empty(c), np.empty(c)
                    want, got = np.full(c, 7.0), np.full(c, 7.0)
                    old_einsum_dots(mT, s, D, j, lo, c, a0, a1, want)
                    _pair_kernels.einsum_dots(mT, s, D, j, lo, c,
                                              _pair_kernels.ONE_BLOCK, a0, a1, got)
                    assert _same_bits(got, want), (kind, n_items, lo, s, j)


def test_einsums_block_boundary_and_the_comparison_can_fail() -> None:
    # around numpy's buffer of 8,192 items (the streamed order), and the test's sensitivity:
    # on these magnitudes another blocking gives other sums, which the comparison sees
    rng = np.random.default_rng(8192)
    block = 8192
    for n_items in (block - 1, block, block + 1, 2 * block + 9):
        mT, D = _masks(rng, 2, n_items, 5), _differences(rng, "wide", (2, 2, n_items))
        want, got = np.empty((5, 2, 2)), np.empty((5, 2, 2))
        old_system_mask_sums(mT, D, block, want)
        _pair_kernels.system_mask_sums(mT, D, block, got)
        assert _same_bits(got, want), n_items
        np.testing.assert_array_equal(got, np.einsum(
            "psi,ksi->psk", np.ascontiguousarray(mT.transpose(2, 0, 1), dtype=float), D))
    other = np.empty_like(got)
    _pair_kernels.system_mask_sums(mT, D, _pair_kernels.ONE_BLOCK, other)
    assert not _same_bits(other, want)
