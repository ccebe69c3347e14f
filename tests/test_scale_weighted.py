"""The segment-level weighted Spearman / Kendall bootstrap kernels at scale (issue 29).

The kernels now keep their sort plan across calls with the same data, count Kendall's pairs in
int64 and run on one set of work buffers per thread. The numbers must be the same, bit for bit,
as those of the previous float kernels, which are kept below as the reference (verbatim, compiled
here without a cache), on random cases with ties, missing cells, constant and near-constant
items, a constant metric and values near 1e200 and 1e-200 (drawn by ``_random_cases``);
and the same whatever the number of threads.
"""

from __future__ import annotations

import numba
import numpy as np
import pytest
from _random_cases import KINDS, random_case
from numba import njit

from nlgeval.correlation.bootstrap import resample_counts, resample_indices
from nlgeval.correlation.coefficients import MIN_PAIRS, pearson_from_sums
from nlgeval.correlation.kendall import weighted
from nlgeval.correlation.kendall.kernels import _tau_from_counts
from nlgeval.correlation.kendall.weighted import (
    weighted_kendall_segment,
    weighted_spearman_segment,
)

# ------------------------------------------------------------------ the previous kernels


@njit
def _old_tau(gid, yr, n_y, si, ii, ws, wi, variant):  # noqa: ANN001, ANN202
    m = si.shape[0]
    w, r_, g_ = np.empty(m), np.empty(m, np.int64), np.empty(m, np.int64)
    tree, at = np.zeros(n_y + 1), np.zeros(n_y)
    d = 0
    for k in range(m):
        wk = ws[si[k]] * wi[ii[k]]
        w[d] = wk
        r_[d] = yr[k]
        g_[d] = gid[k]
        d += wk != 0.0
    s = tx = inserted = 0.0
    nx_distinct = 0
    i = 0
    while i < d:
        j = i
        gw = 0.0
        while j < d and g_[j] == g_[i]:
            r = r_[j]
            below = 0.0
            q = r
            while q > 0:
                below += tree[q]
                q -= q & (-q)
            s += w[j] * (2.0 * below + at[r] - inserted)
            gw += w[j]
            j += 1
        nx_distinct += 1
        tx += gw * (gw - 1.0) / 2.0
        for k in range(i, j):
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
    return _tau_from_counts(s, inserted * (inserted - 1.0) / 2.0, tx, ty, inserted,
                            float(nx_distinct), float(ny_distinct), variant, float(MIN_PAIRS))


@njit
def _old_ranks(group, n_groups, w, mean):  # noqa: ANN001, ANN202
    G = np.zeros(n_groups)
    for k in range(group.shape[0]):
        G[group[k]] += w[k]
    rank = np.empty(n_groups)
    before = 0.0
    for g in range(n_groups):
        rank[g] = before + (G[g] + 1.0) / 2.0 - mean
        before += G[g]
    return rank


@njit
def _old_spearman(gx, ngx, gy, ngy, si, ii, ws, wi, out):  # noqa: ANN001, ANN202
    m = si.shape[0]
    w, cx, cy = np.empty(m), np.empty(m, np.int64), np.empty(m, np.int64)
    n = 0.0
    d = 0
    for k in range(m):
        wk = ws[si[k]] * wi[ii[k]]
        w[d] = wk
        cx[d] = gx[k]
        cy[d] = gy[k]
        n += wk
        d += wk != 0.0
    rx = _old_ranks(cx[:d], ngx, w[:d], (n + 1.0) / 2.0)
    ry = _old_ranks(cy[:d], ngy, w[:d], (n + 1.0) / 2.0)
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
    out[0], out[1], out[2], out[3], out[4], out[5] = n, sx, sy, sxx, syy, sxy


def _cells(X: np.ndarray, Y: np.ndarray) -> tuple[np.ndarray, ...]:
    ok = np.isfinite(X) & np.isfinite(Y)
    si, ii = np.nonzero(ok)
    return si, ii, X[si, ii], Y[si, ii]


def old_kendall(X, Y, ws, wi, variant="tau_b"):  # noqa: ANN001, ANN201
    si, ii, x, y = _cells(X, Y)
    order = np.lexsort((y, x))
    si, ii, x, y = si[order], ii[order], x[order], y[order]
    _, yr = np.unique(y, return_inverse=True)
    _, gid = np.unique(x, return_inverse=True)
    n_y = int(yr.max()) + 1 if yr.size else 0
    code = 0 if variant == "tau_b" else 1
    return np.array([_old_tau(gid.astype(np.int64), yr.astype(np.int64), n_y,
                              si.astype(np.int64), ii.astype(np.int64),
                              ws[b].astype(float), wi[b].astype(float), code)
                     for b in range(ws.shape[0])])


def old_spearman(X, Y, ws, wi):  # noqa: ANN001, ANN201
    si, ii, x, y = _cells(X, Y)
    _, gx = np.unique(x, return_inverse=True)
    _, gy = np.unique(y, return_inverse=True)
    sums = np.zeros((ws.shape[0], 6))
    for b in range(ws.shape[0]):
        _old_spearman(gx.astype(np.int64), int(gx.max(initial=-1)) + 1, gy.astype(np.int64),
                      int(gy.max(initial=-1)) + 1, si.astype(np.int64), ii.astype(np.int64),
                      ws[b].astype(float), wi[b].astype(float), sums[b])
    n, sx, sy, sxx, syy, sxy = sums.T
    scale = ((n + 1.0) / 2.0) ** 2
    return pearson_from_sums(n, sx, sy, sxx, syy, sxy, scale, scale)


# ------------------------------------------------------------------ random cases


def _case(kind: str, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """One random case of this file's sizes (the shared generator, _random_cases)."""
    return random_case(kind, seed, systems=(3, 9), items=(4, 40))


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("resample", ["both", "items", "systems"])
def test_same_numbers_as_the_previous_kernels(kind: str, resample: str) -> None:
    for seed in range(4):
        X, Y = _case(kind, seed)
        si, ii = resample_indices(*X.shape, 40, resample, seed)
        ws, wi = resample_counts(si, X.shape[0]), resample_counts(ii, X.shape[1])
        for variant in ("tau_b", "tau_c"):
            np.testing.assert_array_equal(weighted_kendall_segment(X, Y, ws, wi, variant),
                                          old_kendall(X, Y, ws, wi, variant))
        np.testing.assert_array_equal(weighted_spearman_segment(X, Y, ws, wi),
                                      old_spearman(X, Y, ws, wi))


def test_the_same_whatever_the_number_of_threads() -> None:
    X, Y = _case("nan", 7)
    si, ii = resample_indices(*X.shape, 97, "both", 7)
    ws, wi = resample_counts(si, X.shape[0]), resample_counts(ii, X.shape[1])
    before = numba.get_num_threads()
    try:
        got = []
        for threads in sorted({1, before}):
            numba.set_num_threads(threads)
            got.append((weighted_kendall_segment(X, Y, ws, wi),
                        weighted_spearman_segment(X, Y, ws, wi)))
    finally:
        numba.set_num_threads(before)
    for k, s in got[1:]:
        np.testing.assert_array_equal(k, got[0][0])
        np.testing.assert_array_equal(s, got[0][1])
    # and the same as one call per resample (the lanes split the resamples, not the work)
    one = [weighted_kendall_segment(X, Y, ws[b:b + 1], wi[b:b + 1])[0] for b in range(97)]
    np.testing.assert_array_equal(got[0][0], one)


def test_a_kept_sort_plan_is_never_served_for_changed_data() -> None:
    """The plan is keyed by content: changing the matrix in place gives new numbers."""
    X, Y = _case("ties", 3)
    si, ii = resample_indices(*X.shape, 20, "both", 3)
    ws, wi = resample_counts(si, X.shape[0]), resample_counts(ii, X.shape[1])
    first = weighted_kendall_segment(X, Y, ws, wi)
    np.testing.assert_array_equal(weighted_kendall_segment(X, Y, ws, wi), first)  # kept
    X[:] = -X  # the same array object, other content: tau changes sign
    flipped = weighted_kendall_segment(X, Y, ws, wi)
    np.testing.assert_array_equal(flipped, old_kendall(X, Y, ws, wi))
    assert np.nanmax(np.abs(flipped + first)) < 1e-12
    Y[:] = Y[:, ::-1]
    np.testing.assert_array_equal(weighted_spearman_segment(X, Y, ws, wi),
                                  old_spearman(X, Y, ws, wi))
    assert set(weighted._PLANS) == {"kendall", "spearman"}  # one plan per coefficient
