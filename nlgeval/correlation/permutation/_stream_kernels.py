"""Compiled steps of the streamed PERM-BOTH draws: the swap masks and the system sums.

* :func:`draw_masks` / :func:`draw_masks_transposed`: the 0/1 swap masks of PERM-BOTH
  (Deutsch, Dror & Roth 2021), ``rng.random(shape) < 0.5`` drawn one number at a time from
  the same ``numpy.random.Generator`` (numba calls its bit generator: the same stream,
  advanced in place) and written straight in the layout a level reads, without the
  (draws, cells) doubles and the boolean copy.
* :func:`system_mask_sums`: ``einsum("psi,ksi->psk", masks, D)`` (the per-system sums of the
  swapped differences) in the order numpy's einsum adds them: per output, the item axis in
  blocks of ``block`` items (einsum's buffer when it reduces over more items than that with
  more than one pair, or one block), each block with einsum's two-lane loop (per lane,
  groups of four products added last to first, then the rest two at a time, then the two
  lanes), the blocks added in order to 0. The callers compare these sums with einsum's bit
  for bit before using them (``_pair_stream``). 0/1 masks make every product exact.
* :func:`einsum_dots`: that loop for one system and pair and a range of draws, the one
  loop of the system sums of this module and of ``_pair_kernels`` (its fused system level
  and its check against einsum take the item axis as one block).

Threads: each output element is computed by one thread alone, in a fixed order, so the
numbers do not depend on the thread count.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

ONE_BLOCK = 1 << 62  #: ``block`` of :func:`einsum_dots` for the whole item axis


@njit(cache=True, nogil=True, error_model="numpy")
def draw_masks(rng: np.random.Generator, out: np.ndarray) -> None:  # pragma: no cover
    """``out.flat[k] = rng.random() < 0.5`` (as 1/0 of ``out``'s type), in order: the masks
    of ``rng.random(out.shape) < 0.5``, from the same stream (``rng`` is advanced)."""
    flat = out.reshape(-1)
    for k in range(flat.size):
        flat[k] = 1 if rng.random() < 0.5 else 0


@njit(cache=True, nogil=True, error_model="numpy")
def draw_masks_transposed(rng: np.random.Generator, out: np.ndarray) -> None:  # pragma: no cover
    """The same masks into ``out`` of shape (cells, draws): draw after draw, cell after cell
    (``rng.random((draws, cells)) < 0.5`` transposed)."""
    cells, c = out.shape
    for p in range(c):
        for r in range(cells):
            out[r, p] = 1 if rng.random() < 0.5 else 0


@njit(cache=True, nogil=True, error_model="numpy")
def einsum_dots(mT: np.ndarray, s: int, D: np.ndarray, j: int, lo: int, c: int, block: int,
                acc0: np.ndarray, acc1: np.ndarray, out: np.ndarray) -> None:  # pragma: no cover
    """``out[q]`` = the sum over items of ``mT[s, i, lo + q] * D[j, s, i]``, ``q < c``, in
    einsum's order (see the module docstring): the item axis in blocks of ``block`` items
    (``block`` >= the item count: one block), each block with the two-lane loop, the blocks
    added in order to 0; ``acc0``/``acc1`` scratch of at least ``c`` values. The one loop of
    the system sums of both the streamed draws (:func:`system_mask_sums`) and the pair
    kernels (``_pair_kernels``: one block, a chunk of ``c`` draws from draw ``lo``). numba's
    cache of ``_pair_kernels`` does not notice a change here: after editing this function,
    clear its ``__pycache__`` folder."""
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
