"""Average ranks of many short vectors in one compiled loop (the Spearman batch kernel).

``masked_average_ranks(x, valid)`` is ``scipy.stats.rankdata(method="average")`` of the valid
entries of each row (NaN elsewhere), the ranks :func:`nlgeval.correlation.coefficients.
batch_correlation` feeds to its Pearson kernel for Spearman (Spearman 1904). Ties get the mean
of the positions they occupy, ``(first + last) / 2`` with 1-based positions: a half-integer,
exact in floating point, so these are the same numbers as scipy's, bit for bit, whatever the
algorithm. scipy sorts every row of the stack with a Python-level pipeline of whole-array
passes; for the item-level bootstrap (thousands of rows of about ten systems) a per-row
insertion sort in one numba loop over the rows (both cores) is several times faster.
Imported only when a large batch asks for it (numba start-up time).
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

#: Rows longer than this are sorted with numpy's argsort instead of by insertion.
_INSERTION_MAX = 32


@njit(cache=True)
def _row_ranks(x: np.ndarray, valid: np.ndarray, out: np.ndarray,
               idx: np.ndarray, vals: np.ndarray) -> None:  # pragma: no cover - compiled
    m = x.shape[0]
    k = 0
    for j in range(m):
        if valid[j]:
            idx[k] = j
            vals[k] = x[j]
            k += 1
        else:
            out[j] = np.nan
    if k > _INSERTION_MAX:
        order = np.argsort(vals[:k], kind="mergesort")
        sorted_idx = idx[:k][order].copy()
        sorted_vals = vals[:k][order].copy()
        idx[:k] = sorted_idx
        vals[:k] = sorted_vals
    else:
        for i in range(1, k):
            v, t = vals[i], idx[i]
            j = i - 1
            while j >= 0 and vals[j] > v:
                vals[j + 1] = vals[j]
                idx[j + 1] = idx[j]
                j -= 1
            vals[j + 1] = v
            idx[j + 1] = t
    i = 0
    while i < k:
        j = i + 1
        while j < k and vals[j] == vals[i]:
            j += 1
        rank = 0.5 * (i + 1 + j)  # positions i+1 .. j (1-based) share their mean
        for t in range(i, j):
            out[idx[t]] = rank
        i = j


@njit(cache=True, parallel=True)
def _batch_ranks(x: np.ndarray, valid: np.ndarray) -> np.ndarray:  # pragma: no cover
    rows, m = x.shape
    out = np.empty((rows, m))
    chunk = 256
    for c in prange((rows + chunk - 1) // chunk):
        idx = np.empty(m, np.int64)
        vals = np.empty(m)
        for r in range(c * chunk, min(rows, (c + 1) * chunk)):
            _row_ranks(x[r], valid[r], out[r], idx, vals)
    return out


def masked_average_ranks(x: np.ndarray, valid: np.ndarray) -> np.ndarray:
    """Average ranks along the last axis among the ``valid`` entries (NaN elsewhere).

    Examples
    --------
    >>> import numpy as np
    >>> x = np.array([[3.0, 1.0, 3.0, 2.0], [5.0, np.nan, 4.0, 4.0]])
    >>> masked_average_ranks(x, np.isfinite(x)).tolist()[0]
    [3.5, 1.0, 3.5, 2.0]
    """
    x, valid = np.broadcast_arrays(np.asarray(x, dtype=float), np.asarray(valid, dtype=bool))
    lead, m = x.shape[:-1], x.shape[-1]
    rows = int(np.prod(lead, dtype=np.int64))
    x2 = np.ascontiguousarray(x.reshape(rows, m))
    v2 = np.ascontiguousarray(valid.reshape(rows, m))
    return _batch_ranks(x2, v2).reshape(x.shape)
