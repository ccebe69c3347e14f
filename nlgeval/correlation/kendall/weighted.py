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
computed directly there or with multiplicities here; one formula): they go through the same
:func:`~nlgeval.correlation.kendall.kernels._tau_from_counts` as every other tau-b / tau-c of
nlgeval, so a resample gives bit for bit the tau of the expanded data (tested).

So each resample costs O(n) (Spearman) or O(n log n) (Kendall) with no sort, no gathered copy
of the data and no scipy call, and the weights are formed inside the kernel (memory O(B (S + I))).
Only the drawn cells (about 40 % when systems and items are both resampled) are visited after a
branch-free packing pass, and every sum is of integer-valued (or half-integer) floats, so exact
in any order. Resamples are independent, so numba spreads fixed chunks of them over the cores
(``prange``, work buffers allocated once per chunk); each value depends only on its own
weights, so the result does not depend on the number of threads.
Written by hand because no library takes per-observation integer weights. The degenerate-input
rule (NaN below 3 cells or for a constant variable) is nlgeval's one rule, see
:mod:`nlgeval.correlation.coefficients`.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from nlgeval.correlation.coefficients import MIN_PAIRS, pearson_from_sums
from nlgeval.correlation.kendall.kernels import _tau_from_counts

_CHUNK = 32  # resamples per parallel task: buffers allocated once per task, fixed chunks


@njit(cache=True)
def _tau_from_weights(gid: np.ndarray, yr: np.ndarray, n_y: int, si: np.ndarray,
                      ii: np.ndarray, ws: np.ndarray, wi: np.ndarray, variant: int,
                      w: np.ndarray, r_: np.ndarray, g_: np.ndarray, tree: np.ndarray,
                      at: np.ndarray) -> float:
    """tau-b (variant 0) or tau-c (1) for one resample; cells pre-sorted by (x, y).

    ``gid``: the rank of each cell's x (its group of equal x), ``yr`` that of its y; ``ws`` /
    ``wi``: this resample's system / item counts; ``w, r_, g_, tree, at``: work buffers. The
    drawn cells (weight > 0) are first packed without branches; then one Fenwick prefix query
    per drawn cell, the weight at its own y rank read from ``at`` (the point values of the
    tree). Every quantity is a sum of integer-valued floats below 2**53, hence exact and
    independent of the order of summation: the integers the unweighted kernel counts on the
    repeated data, turned into tau by the same ``_tau_from_counts``.
    """
    d = 0
    for k in range(si.shape[0]):  # branch-free packing: overwritten unless the cell was drawn
        wk = ws[si[k]] * wi[ii[k]]
        w[d] = wk
        r_[d] = yr[k]
        g_[d] = gid[k]
        d += wk != 0.0
    tree[:] = 0.0
    at[:] = 0.0  # weight inserted so far at each y rank
    s = tx = inserted = 0.0
    nx_distinct = 0
    i = 0
    while i < d:
        # query the group of equal x against earlier groups (strictly smaller x):
        # weight below minus weight above = 2 below + at[r] - inserted
        j = i
        gw = 0.0
        while j < d and g_[j] == g_[i]:
            r = r_[j]
            below = 0.0
            q = r  # prefix sum over ranks < r (1-based tree: indices 1..r)
            while q > 0:
                below += tree[q]
                q -= q & (-q)
            s += w[j] * (2.0 * below + at[r] - inserted)
            gw += w[j]
            j += 1
        nx_distinct += 1
        tx += gw * (gw - 1.0) / 2.0
        for k in range(i, j):  # then insert the group
            at[r_[k]] += w[k]
            q = r_[k] + 1
            while q <= n_y:
                tree[q] += w[k]
                q += q & (-q)
        inserted += gw
        i = j
    ty = 0.0
    ny_distinct = 0
    for r in range(n_y):
        v = at[r]
        if v > 0:
            ny_distinct += 1
            ty += v * (v - 1.0) / 2.0
    # the one formula and degenerate-input rule of every tau in nlgeval
    return _tau_from_counts(s, inserted * (inserted - 1.0) / 2.0, tx, ty, inserted,
                            float(nx_distinct), float(ny_distinct), variant, float(MIN_PAIRS))


@njit(cache=True, parallel=True)
def _taus(gid: np.ndarray, yr: np.ndarray, n_y: int, si: np.ndarray, ii: np.ndarray,
          ws: np.ndarray, wi: np.ndarray, variant: int) -> np.ndarray:
    B, m = ws.shape[0], si.shape[0]
    out = np.empty(B)
    for c in prange((B + _CHUNK - 1) // _CHUNK):  # independent resamples over the cores
        w, r_, g_ = np.empty(m), np.empty(m, np.int64), np.empty(m, np.int64)
        tree, at = np.empty(n_y + 1), np.empty(n_y)
        for b in range(c * _CHUNK, min(B, (c + 1) * _CHUNK)):
            out[b] = _tau_from_weights(gid, yr, n_y, si, ii, ws[b], wi[b], variant,
                                       w, r_, g_, tree, at)
    return out


def _complete_cells(X: np.ndarray, Y: np.ndarray) -> tuple[np.ndarray, ...]:
    ok = np.isfinite(X) & np.isfinite(Y)
    si, ii = np.nonzero(ok)
    return si, ii, X[si, ii], Y[si, ii]


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
    si, ii, x, y = _complete_cells(X, Y)
    order = np.lexsort((y, x))
    si, ii, x, y = si[order], ii[order], x[order], y[order]
    _, yr = np.unique(y, return_inverse=True)
    _, gid = np.unique(x, return_inverse=True)
    n_y = int(yr.max()) + 1 if yr.size else 0
    return _taus(gid.astype(np.int64), yr.astype(np.int64), n_y,
                 si.astype(np.int64), ii.astype(np.int64),
                 np.ascontiguousarray(ws, dtype=np.float64),
                 np.ascontiguousarray(wi, dtype=np.float64), 0 if variant == "tau_b" else 1)


@njit(cache=True)
def _centred_ranks(group: np.ndarray, n_groups: int, w: np.ndarray, mean: float) -> np.ndarray:
    """Average rank minus the mean rank of every group; ``group`` = rank of a cell's value."""
    G = np.zeros(n_groups)
    for k in range(group.shape[0]):
        G[group[k]] += w[k]
    rank = np.empty(n_groups)
    before = 0.0
    for g in range(n_groups):
        rank[g] = before + (G[g] + 1.0) / 2.0 - mean
        before += G[g]
    return rank


@njit(cache=True)
def _spearman_one(gx: np.ndarray, ngx: int, gy: np.ndarray, ngy: int, si: np.ndarray,
                  ii: np.ndarray, ws: np.ndarray, wi: np.ndarray, out: np.ndarray,
                  w: np.ndarray, cx: np.ndarray, cy: np.ndarray) -> None:
    """n and the weighted sums x, y, xx, yy, xy of the centred average ranks of one resample.

    Only the drawn cells (weight > 0) are visited (packed without branches into the buffers
    ``w, cx, cy``). The ranks are multiples of 1/2 and the weights integers, so every sum is
    exact (below 2**53) whatever the order of summation.
    """
    n = 0.0
    d = 0
    for k in range(si.shape[0]):
        wk = ws[si[k]] * wi[ii[k]]
        w[d] = wk
        cx[d] = gx[k]
        cy[d] = gy[k]
        n += wk
        d += wk != 0.0
    rx = _centred_ranks(cx[:d], ngx, w[:d], (n + 1.0) / 2.0)
    ry = _centred_ranks(cy[:d], ngy, w[:d], (n + 1.0) / 2.0)
    sx = sy = sxx = syy = sxy = 0.0
    for k in range(d):
        wk = w[k]
        a = rx[cx[k]]
        c = ry[cy[k]]
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
                   ii: np.ndarray, ws: np.ndarray, wi: np.ndarray) -> np.ndarray:
    """(B, 6): :func:`_spearman_one` of every resample, in fixed chunks over the cores."""
    B, m = ws.shape[0], si.shape[0]
    out = np.zeros((B, 6))
    for c in prange((B + _CHUNK - 1) // _CHUNK):
        w, cx, cy = np.empty(m), np.empty(m, np.int64), np.empty(m, np.int64)
        for b in range(c * _CHUNK, min(B, (c + 1) * _CHUNK)):
            _spearman_one(gx, ngx, gy, ngy, si, ii, ws[b], wi[b], out[b], w, cx, cy)
    return out


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
    si, ii, x, y = _complete_cells(X, Y)
    _, gx = np.unique(x, return_inverse=True)
    _, gy = np.unique(y, return_inverse=True)
    sums = _spearman_sums(gx.astype(np.int64), int(gx.max(initial=-1)) + 1,
                          gy.astype(np.int64), int(gy.max(initial=-1)) + 1,
                          si.astype(np.int64), ii.astype(np.int64),
                          np.ascontiguousarray(ws, dtype=np.float64),
                          np.ascontiguousarray(wi, dtype=np.float64))
    n, sx, sy, sxx, syy, sxy = sums.T
    scale = ((n + 1.0) / 2.0) ** 2  # the raw mean square of ranks: the zero-variance yardstick
    return pearson_from_sums(n, sx, sy, sxx, syy, sxy, scale, scale)
