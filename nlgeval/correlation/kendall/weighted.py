"""Rank coefficients of bootstrap resamples from integer weights, without re-sorting.

A bootstrap resample of the pooled (segment-level) cells is a multiset of the original cells:
cell ``c`` appears ``w_c = ws[s] * wi[i]`` times (``ws``/``wi``: how often its system and item
were drawn). Both rank coefficients can be computed from these weights on the cells sorted once:

* **Spearman**: in a resample, a group of equal x values with total weight ``G`` preceded by
  weight ``C`` occupies ranks ``C + 1 .. C + G``, so each member's average rank is
  ``C + (G + 1) / 2`` -- exactly what ranking the expanded resample gives; rho is the weighted
  Pearson correlation of these ranks (Spearman 1904; average ranks for ties as in
  ``scipy.stats.spearmanr``).
* **Kendall** (Kendall 1945; Knight 1966, "A computer method for calculating Kendall's tau with
  ungrouped data", JASA 61): ties in x are ``sum_g W_g (W_g - 1) / 2`` over groups ``g`` of equal
  x (``W_g`` = total weight), the same for y and for equal (x, y); ``S = C - D``: with the cells
  sorted by x once, groups of equal x are visited in increasing order; each cell ``d`` adds
  ``w_d * (weight of earlier cells with y < y_d - weight with y > y_d)``, read from a Fenwick
  tree over the ranks of y; then the group is inserted.

The Kendall counts are the pair counts of :mod:`.kernels` (one count definition,
computed directly or with multiplicities; one formula): they go through the same
:func:`~nlgeval.correlation.kendall.kernels._tau_from_counts` as every other tau-b / tau-c of
nlgeval, so a resample gives bit for bit the tau of the expanded data (tested). Their compiled
loop (``kernels._taus``) sits beside that formula, on the sort plans made here: numba's cache
of a kernel does not notice a change to a compiled helper in another file.

So each resample costs O(n) (Spearman) or O(n log n) (Kendall) with no sort, no gathered copy
of the data and no scipy call, and the weights are formed inside the kernel (memory O(B (S + I))).
Spearman visits only the drawn cells (about 40 % when systems and items are both resampled)
after a branch-free packing pass (their positions and weights, 12 bytes per cell). Kendall
takes the resamples in blocks of 8: one pass over all cells updates a Fenwick tree whose nodes
hold one count per resample of the block (a cell not drawn in a resample adds weight 0 there),
so the tree walks, their branches and the reads of the cells are shared by 8 resamples (1.4x
less CPU than one resample at a time over the drawn cells, 1 M cells; 1.5x less again with
the block's counts in int32 arrays of the call's own and the items' counts in uint8). The
Kendall counts are integers (int64; below 2**53, so the float of each count is the one the
float sums of the earlier kernel gave, tested bit for bit). The Spearman sums are sums of
integer or half-integer floats (quarter-integer for the squares), exact while they stay below
2**53 -- the sums of squares pass it from about 470,000 drawn cells on (they grow as n**3 /
12) -- and taken in the cells' order whatever the number of threads, so the same numbers.

The sort and the ranks depend only on the data, not on the resample: they are computed once per
(X, Y) and kept for the next call with the same content (the bootstrap calls these functions
once per chunk of resamples; the content is compared by a SHA-1 digest of both matrices, so
changed data is never served an old sort). Resamples are independent, so numba runs them on
``numba.get_num_threads()`` lanes (``prange``; lane ``t`` takes resamples -- Kendall: blocks
-- ``t, t + T, ...``) with one set of work buffers per lane (Kendall: none the size of the
data); each value depends only on its own weights, so the result does not depend on the
number of threads (tested).
Written by hand because no library takes per-observation integer weights. The degenerate-input
rule (NaN below 3 cells or for a constant variable) is nlgeval's one rule, see
:mod:`nlgeval.correlation.coefficients`.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import Any

import numpy as np
from numba import get_num_threads, njit, prange

from nlgeval.correlation.coefficients import pearson_from_sums
from nlgeval.correlation.kendall.kernels import _LANES, _taus
from nlgeval.errors import InputError

#: the last sort plan per coefficient: (SHA-1 of X and Y, plan); see the module docstring
_PLANS: dict[str, tuple[bytes, tuple[Any, ...]]] = {}


@njit(cache=True)
def _pack(si: np.ndarray, ii: np.ndarray, ws: np.ndarray, wi: np.ndarray, idx: np.ndarray,
          w: np.ndarray) -> int:
    """Positions and weights of the drawn cells (weight > 0), packed without branches."""
    d = 0
    for k in range(si.shape[0]):  # overwritten unless the cell was drawn
        wk = np.int64(ws[si[k]]) * np.int64(wi[ii[k]])
        idx[d] = k
        w[d] = wk
        d += wk != 0
    return d


def _complete_cells(X: np.ndarray, Y: np.ndarray) -> tuple[np.ndarray, ...]:
    ok = np.isfinite(X) & np.isfinite(Y)
    si, ii = np.nonzero(ok)
    return si, ii, X[si, ii], Y[si, ii]


def _digest(X: np.ndarray, Y: np.ndarray) -> bytes:
    """SHA-1 of the shapes and contents of both matrices (what a sort plan depends on)."""
    h = hashlib.sha1(usedforsecurity=False)
    for A in (X, Y):
        a = np.ascontiguousarray(A, dtype=np.float64)
        h.update(repr(a.shape).encode())
        h.update(a.data)
    return h.digest()


def _plan(kind: str, X: np.ndarray, Y: np.ndarray,
          build: Callable[[np.ndarray, np.ndarray], tuple[Any, ...]]
          ) -> tuple[Any, ...]:
    """``build(X, Y)``, or the plan kept from the last call with the same content."""
    key = _digest(X, Y)
    hit = _PLANS.get(kind)
    if hit is not None and hit[0] == key:
        return hit[1]
    _PLANS.pop(kind, None)  # free the old plan before building the new one
    plan = build(X, Y)
    _PLANS[kind] = (key, plan)
    return plan


def _kendall_plan(X: np.ndarray, Y: np.ndarray) -> tuple[Any, ...]:
    """Complete cells sorted by (x, y): x group ids, y ranks, systems, items (int32), n_y."""
    si, ii, x, y = _complete_cells(X, Y)
    order = np.lexsort((y, x))
    si, ii, x, y = si[order], ii[order], x[order], y[order]
    _, yr = np.unique(y, return_inverse=True)
    _, gid = np.unique(x, return_inverse=True)
    n_y = int(yr.max()) + 1 if yr.size else 0
    return (gid.astype(np.int32), yr.astype(np.int32), n_y, si.astype(np.int32),
            ii.astype(np.int32))


def _counts(ws: np.ndarray, wi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The resample counts as contiguous int32 (they are counts of draws)."""
    return (np.ascontiguousarray(ws).astype(np.int32, copy=False),
            np.ascontiguousarray(wi).astype(np.int32, copy=False))


def _lanes(B: int) -> int:
    return max(1, min(int(get_num_threads()), B))


def weighted_kendall_segment(
    X: np.ndarray, Y: np.ndarray, ws: np.ndarray, wi: np.ndarray, variant: str = "tau_b"
) -> np.ndarray:
    """Segment-level (all complete cells pooled) Kendall tau of every resample.

    ``ws`` (B, systems) and ``wi`` (B, items): how often each system / item was drawn. Returns
    (B,) values; NaN where the resample has fewer than 3 cells or a constant variable.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[1.0, 2.0], [3.0, 5.0]]); Y = np.array([[1.0, 3.0], [2.0, 4.0]])
    >>> weighted_kendall_segment(X, Y, np.ones((1, 2)), np.ones((1, 2))).round(4)
    array([0.6667])
    """
    if np.size(X) >= 2**31:  # the tree's int32 counts hold at most 2**31 - 1 cells
        raise InputError(f"weighted_kendall_segment: at most 2**31 - 1 cells, got {np.size(X)}")
    gid, yr, n_y, si, ii = _plan("kendall", X, Y, _kendall_plan)
    ws, wi = _counts(ws, wi)
    if wi.size and wi.max() <= 255:  # the items' table in a quarter of the cache (1.1x faster)
        wi = wi.astype(np.uint8)
    return _taus(gid, yr, n_y, si, ii, ws, wi, 0 if variant == "tau_b" else 1,
                 _lanes(-(-ws.shape[0] // _LANES)))


@njit(cache=True)
def _centred_ranks(group: np.ndarray, idx: np.ndarray, n_groups: int, w: np.ndarray,
                   mean: float) -> np.ndarray:
    """Average rank minus the mean rank of every group; ``group[idx[k]]`` = rank of the value
    of the ``k``-th drawn cell."""
    G = np.zeros(n_groups)
    for k in range(idx.shape[0]):
        G[group[idx[k]]] += float(w[k])
    rank = np.empty(n_groups)
    before = 0.0
    for g in range(n_groups):
        rank[g] = before + (G[g] + 1.0) / 2.0 - mean
        before += G[g]
    return rank


@njit(cache=True)
def _spearman_one(gx: np.ndarray, ngx: int, gy: np.ndarray, ngy: int, si: np.ndarray,
                  ii: np.ndarray, ws: np.ndarray, wi: np.ndarray, out: np.ndarray,
                  idx: np.ndarray, w: np.ndarray) -> None:
    """n and the weighted sums x, y, xx, yy, xy of the centred average ranks of one resample.

    Only the drawn cells (weight > 0) are visited (packed without branches into the buffers
    ``idx, w``). The ranks are multiples of 1/2 and the weights integers, so every sum is
    exact while below 2**53 (the sums of squares pass it from ~470,000 drawn cells on), and
    the sums are taken in the cells' order.
    """
    d = _pack(si, ii, ws, wi, idx, w)
    n = 0.0
    for k in range(d):
        n += float(w[k])
    rx = _centred_ranks(gx, idx[:d], ngx, w[:d], (n + 1.0) / 2.0)
    ry = _centred_ranks(gy, idx[:d], ngy, w[:d], (n + 1.0) / 2.0)
    sx = sy = sxx = syy = sxy = 0.0
    for k in range(d):
        wk = float(w[k])
        a = rx[gx[idx[k]]]
        c = ry[gy[idx[k]]]
        sx += wk * a
        sy += wk * c
        sxx += wk * a * a
        syy += wk * c * c
        sxy += wk * a * c
    out[0] = n
    out[1] = sx
    out[2] = sy
    out[3] = sxx
    out[4] = syy
    out[5] = sxy


@njit(cache=True, parallel=True)
def _spearman_sums(gx: np.ndarray, ngx: int, gy: np.ndarray, ngy: int, si: np.ndarray,
                   ii: np.ndarray, ws: np.ndarray, wi: np.ndarray, lanes: int) -> np.ndarray:
    """(B, 6): :func:`_spearman_one` of every resample, on ``lanes`` lanes (as ``_taus``)."""
    B, m = ws.shape[0], si.shape[0]
    out = np.zeros((B, 6))
    for t in prange(lanes):
        idx, w = np.empty(m, np.int32), np.empty(m, np.int64)
        for b in range(t, B, lanes):
            _spearman_one(gx, ngx, gy, ngy, si, ii, ws[b], wi[b], out[b], idx, w)
    return out


def _spearman_plan(X: np.ndarray, Y: np.ndarray) -> tuple[Any, ...]:
    """Complete cells: ranks of x and of y among the distinct values, systems, items."""
    si, ii, x, y = _complete_cells(X, Y)
    _, gx = np.unique(x, return_inverse=True)
    _, gy = np.unique(y, return_inverse=True)
    return (gx.astype(np.int32), int(gx.max(initial=-1)) + 1, gy.astype(np.int32),
            int(gy.max(initial=-1)) + 1, si.astype(np.int32), ii.astype(np.int32))


def weighted_spearman_segment(
    X: np.ndarray, Y: np.ndarray, ws: np.ndarray, wi: np.ndarray
) -> np.ndarray:
    """Segment-level (all complete cells pooled) Spearman rho of every resample.

    Same arguments as :func:`weighted_kendall_segment`; NaN where the resample has fewer than
    3 cells or constant ranks.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[1.0, 2.0], [3.0, 5.0]]); Y = np.array([[1.0, 3.0], [2.0, 4.0]])
    >>> weighted_spearman_segment(X, Y, np.ones((1, 2)), np.ones((1, 2))).round(4)
    array([0.8])
    """
    gx, ngx, gy, ngy, si, ii = _plan("spearman", X, Y, _spearman_plan)
    ws, wi = _counts(ws, wi)
    sums = _spearman_sums(gx, ngx, gy, ngy, si, ii, ws, wi, _lanes(ws.shape[0]))
    n, sx, sy, sxx, syy, sxy = sums.T
    scale = ((n + 1.0) / 2.0) ** 2  # the raw mean square of ranks: the zero-variance yardstick
    return pearson_from_sums(n, sx, sy, sxx, syy, sxy, scale, scale)
