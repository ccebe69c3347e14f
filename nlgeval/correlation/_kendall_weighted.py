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

So each resample costs O(n) (Spearman) or O(n log n) (Kendall) with no sort, no gathered copy
of the data and no scipy call, and the weights are formed inside the kernel (memory O(B (S + I))).
Resamples are independent, so numba spreads them over the cores (``prange``); each value
depends only on its own weights, so the result does not depend on the number of threads.
Written by hand because no library takes per-observation integer weights. The degenerate-input
rule (NaN below 3 cells or for a constant variable) is nlgeval's one rule, see
:mod:`nlgeval.correlation.coefficients`.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from nlgeval.correlation.coefficients import pearson_from_sums


@njit(cache=True)
def _tau_from_weights(xs: np.ndarray, yr: np.ndarray, n_y: int, w: np.ndarray,
                      variant: int) -> float:
    """tau-b (variant 0) or tau-c (1) for one weight vector; cells pre-sorted by (x, y)."""
    n = xs.shape[0]
    tree = np.zeros(n_y + 1)
    total_w = 0.0
    s = 0.0
    tx = 0.0
    txy = 0.0
    ty_acc = np.zeros(n_y)
    nx_distinct = 0
    i = 0
    inserted = 0.0
    while i < n:
        j = i
        while j < n and xs[j] == xs[i]:
            j += 1
        # query the group against earlier groups (strictly smaller x)
        gw = 0.0
        for k in range(i, j):
            wk = w[k]
            if wk == 0.0:
                continue
            r = yr[k]
            below = 0.0
            q = r  # prefix sum over ranks < r (1-based tree: indices 1..r)
            while q > 0:
                below += tree[q]
                q -= q & (-q)
            at_or_below = 0.0
            q = r + 1
            while q > 0:
                at_or_below += tree[q]
                q -= q & (-q)
            above = inserted - at_or_below
            s += wk * (below - above)
            gw += wk
        if gw > 0:
            nx_distinct += 1
            tx += gw * (gw - 1.0) / 2.0
            # joint ties within the group: runs of equal y (cells sorted by y inside the group)
            k = i
            while k < j:
                m = k
                jw = 0.0
                while m < j and yr[m] == yr[k]:
                    jw += w[m]
                    m += 1
                txy += jw * (jw - 1.0) / 2.0
                k = m
            for k in range(i, j):
                wk = w[k]
                if wk == 0.0:
                    continue
                ty_acc[yr[k]] += wk
                q = yr[k] + 1
                while q <= n_y:
                    tree[q] += wk
                    q += q & (-q)
            inserted += gw
            total_w += gw
        i = j
    ty = 0.0
    ny_distinct = 0
    for r in range(n_y):
        v = ty_acc[r]
        if v > 0:
            ny_distinct += 1
            ty += v * (v - 1.0) / 2.0
    if total_w < 3.0:  # nlgeval's rule: fewer than 3 cells -> undefined
        return np.nan
    tot = total_w * (total_w - 1.0) / 2.0
    if variant == 0:
        if tot - tx <= 0.0 or tot - ty <= 0.0:
            return np.nan
        return s / np.sqrt(tot - tx) / np.sqrt(tot - ty)
    k_min = min(nx_distinct, ny_distinct)
    if k_min < 2 or tot - tx <= 0.0 or tot - ty <= 0.0:
        return np.nan
    return 2.0 * s / (total_w * total_w * (k_min - 1.0) / k_min)


@njit(cache=True, parallel=True)
def _taus(xs: np.ndarray, yr: np.ndarray, n_y: int, si: np.ndarray, ii: np.ndarray,
          ws: np.ndarray, wi: np.ndarray, variant: int) -> np.ndarray:
    out = np.empty(ws.shape[0])
    for b in prange(ws.shape[0]):  # resamples are independent: one per core
        w = np.empty(si.shape[0])
        for k in range(si.shape[0]):
            w[k] = ws[b, si[k]] * wi[b, ii[k]]
        out[b] = _tau_from_weights(xs, yr, n_y, w, variant)
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
    n_y = int(yr.max()) + 1 if yr.size else 0
    return _taus(x, yr.astype(np.int64), n_y, si.astype(np.int64), ii.astype(np.int64),
                 np.ascontiguousarray(ws, dtype=np.float64),
                 np.ascontiguousarray(wi, dtype=np.float64), 0 if variant == "tau_b" else 1)


@njit(cache=True)
def _centred_ranks(group: np.ndarray, n_groups: int, w: np.ndarray, mean: float) -> np.ndarray:
    """Average rank minus the mean rank of every cell; ``group`` = rank of its value."""
    G = np.zeros(n_groups)
    for k in range(group.shape[0]):
        G[group[k]] += w[k]
    rank = np.empty(n_groups)
    before = 0.0
    for g in range(n_groups):
        rank[g] = before + (G[g] + 1.0) / 2.0 - mean
        before += G[g]
    out = np.empty(group.shape[0])
    for k in range(group.shape[0]):
        out[k] = rank[group[k]]
    return out


@njit(cache=True, parallel=True)
def _spearman_sums(gx: np.ndarray, ngx: int, gy: np.ndarray, ngy: int, si: np.ndarray,
                   ii: np.ndarray, ws: np.ndarray, wi: np.ndarray) -> np.ndarray:
    """(B, 6): n and the weighted sums x, y, xx, yy, xy of the centred average ranks."""
    out = np.zeros((ws.shape[0], 6))
    for b in prange(ws.shape[0]):
        w = np.empty(si.shape[0])
        n = 0.0
        for k in range(si.shape[0]):
            w[k] = ws[b, si[k]] * wi[b, ii[k]]
            n += w[k]
        rx = _centred_ranks(gx, ngx, w, (n + 1.0) / 2.0)
        ry = _centred_ranks(gy, ngy, w, (n + 1.0) / 2.0)
        sx = sy = sxx = syy = sxy = 0.0
        for k in range(si.shape[0]):
            wk = w[k]
            sx += wk * rx[k]
            sy += wk * ry[k]
            sxx += wk * rx[k] * rx[k]
            syy += wk * ry[k] * ry[k]
            sxy += wk * rx[k] * ry[k]
        out[b, 0] = n
        out[b, 1] = sx
        out[b, 2] = sy
        out[b, 3] = sxx
        out[b, 4] = syy
        out[b, 5] = sxy
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
    n = sums[:, 0]
    scale = ((n + 1.0) / 2.0) ** 2  # the raw mean square of ranks: the zero-variance yardstick
    return pearson_from_sums(*sums.T, scale, scale)
