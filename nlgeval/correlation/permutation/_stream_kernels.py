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

Threads: each output element is computed by one thread alone, in a fixed order, so the
numbers do not depend on the thread count.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange


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


@njit(cache=True, nogil=True, parallel=True, error_model="numpy")
def system_mask_sums(mT: np.ndarray, D: np.ndarray, block: int,
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
