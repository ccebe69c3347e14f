"""numpy's pairwise summation, compiled once for the kernels that must add as numpy adds.

``np.add.reduce`` of a contiguous float64 row (and so ``np.sum``, ``np.mean``,
``np.nanmean``) does not add left to right: it sums blocks of at most 128 values with 8
accumulators and splits a longer range in two halves (the first a multiple of 8) whose sums
are added. The compiled kernels of the item-level bootstrap (``_item_bootstrap``), of the
item-level permutation test (``_item_permutation``) and of PERM-BOTH's item level
(``permutation._pair_kernels``) take means over items in that order so that their numbers
equal the array code's bit for bit; they all call :func:`pairwise_sum` (and
:func:`_block_sum` where a row is known to fit one block).

numpy's recursion runs on an explicit stack: a recursive compiled function does not survive
numba's on-disk cache. numpy adds the row's sum to the reduction's identity ``0.0``, which
turns a sum of ``-0.0`` into ``0.0``; the callers that mirror a reduction write
``0.0 + pairwise_sum(...)``. Imported only by those kernels (numba start-up time).

numba's on-disk cache of a kernel is keyed on the kernel's own file, so it would not notice a
change to this module and would keep the old sums' machine code. Each calling module therefore
carries a pin, ``# numba cache pin: nlgeval.correlation._numpy_sums <hash>``, the first 16 hex
digits of this file's SHA-256: after an edit here, tests/test_numba_cache_locality.py fails
until the pins are updated, and updating a pin edits the caller, which renews its cache.
"""

from __future__ import annotations

import numpy as np
from numba import njit

#: numpy's block: a range of at most this many values is summed with 8 accumulators
BLOCK = 128


@njit(cache=True, error_model="numpy")
def _block_sum(a: np.ndarray, lo: int, n: int) -> float:  # pragma: no cover - compiled
    """numpy's sum of ``a[lo:lo + n]``, ``n <= 128``: 8 accumulators (sequential below 8)."""
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
def pairwise_sum(a: np.ndarray, lo: int, n: int) -> float:  # pragma: no cover - compiled
    """numpy's pairwise sum of ``a[lo:lo + n]`` (``0.0 + pairwise_sum(a, 0, a.size)`` is
    ``np.add.reduce(a)`` of a contiguous float64 row).

    Parameters
    ----------
    a : numpy.ndarray
        1-d float64 array.
    lo, n : int
        First index and number of values to add (``lo + n <= a.size``).

    Returns
    -------
    float
        The sum, in numpy's order: blocks of at most 128 values (:func:`_block_sum`), a
        longer range split in two halves (the first a multiple of 8) and the halves' sums
        added.
    """
    if n <= BLOCK:
        return _block_sum(a, lo, n)
    frames = np.empty((64, 3), dtype=np.int64)  # (first index, length, state) of each range
    vals = np.empty(64)  # sums of the finished ranges still waiting for their sibling
    top, nv = 0, 0
    frames[0, 0], frames[0, 1], frames[0, 2] = lo, n, 0
    while top >= 0:
        lo_t, n_t = frames[top, 0], frames[top, 1]
        if n_t <= BLOCK:
            vals[nv] = _block_sum(a, lo_t, n_t)
            nv += 1
            top -= 1
            continue
        n2 = n_t // 2
        n2 -= n2 % 8
        state = frames[top, 2]
        if state == 0:  # first half next
            frames[top, 2] = 1
            top += 1
            frames[top, 0], frames[top, 1], frames[top, 2] = lo_t, n2, 0
        elif state == 1:  # then the second half
            frames[top, 2] = 2
            top += 1
            frames[top, 0], frames[top, 1], frames[top, 2] = lo_t + n2, n_t - n2, 0
        else:  # both halves done: add them
            vals[nv - 2] = vals[nv - 2] + vals[nv - 1]
            nv -= 1
            top -= 1
    return vals[0]
