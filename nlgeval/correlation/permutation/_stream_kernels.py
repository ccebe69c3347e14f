"""Compiled swap masks of the streamed PERM-BOTH draws.

:func:`draw_masks` / :func:`draw_masks_transposed`: the 0/1 swap masks of PERM-BOTH (Deutsch,
Dror & Roth 2021), ``rng.random(shape) < 0.5`` drawn one number at a time from the same
``numpy.random.Generator`` (numba calls its bit generator: the same stream, advanced in place)
and written straight in the layout a level reads, without the (draws, cells) doubles and the
boolean copy. The einsum-order system sums of the streamed draws (``system_mask_sums``) are in
``_pair_kernels``, beside the fused system level that runs the same loop: numba's cache of a
kernel does not notice a change to a compiled helper in another file.
"""

from __future__ import annotations

import numpy as np
from numba import njit


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
