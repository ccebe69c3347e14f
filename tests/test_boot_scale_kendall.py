"""The segment-level Kendall bootstrap kernel at scale (issue 29): the block kernel now keeps
its per-resample counts in int32 arrays of its own and the items' counts in uint8 when they fit
(1.5x less CPU at 1 M cells). Its numbers
must be those of the previous block kernel, which is kept below verbatim as the reference
(compiled here without a cache), bit for bit, on random cases with ties, missing cells,
constant and near-constant items, a constant metric, values near 1e200 and 1e-200 (drawn by
``_random_cases``), numbers of resamples on both
sides of the block boundaries, and 1 or 2 threads.
"""

from __future__ import annotations

import numba
import numpy as np
import pytest
from _random_cases import KINDS, random_case
from numba import njit, prange

from nlgeval.correlation.bootstrap import resample_counts, resample_indices
from nlgeval.correlation.coefficients import MIN_PAIRS
from nlgeval.correlation.kendall import weighted
from nlgeval.correlation.kendall.kernels import _tau_from_counts
from nlgeval.correlation.kendall.weighted import weighted_kendall_segment

_LANES = 8

# ------------------------------------------------------------------ the previous kernel (verbatim)


@njit
def _prev_tau_block(gid: np.ndarray, yr: np.ndarray, n_y: int, si: np.ndarray, ii: np.ndarray,
               wsT: np.ndarray, wiT: np.ndarray, variant: int, out: np.ndarray, b0: int,
               nk: int, tree: np.ndarray, at: np.ndarray, acc: np.ndarray) -> None:
    """tau-b (variant 0) or tau-c (1) of the ``nk <= _LANES`` resamples ``b0, b0 + 1, ...``.

    Cells pre-sorted by (x, y); ``gid``: the rank of each cell's x (its group of equal x),
    ``yr`` that of its y; ``wsT`` / ``wiT``: (systems / items x _LANES) counts of the block's
    resamples (zero columns beyond ``nk``). Group of equal x by group, each cell adds
    ``w * (weight below its y - weight above)`` over the earlier groups, read from a Fenwick
    tree over the y ranks whose nodes hold one count per resample of the block (``tree``;
    ``at``: the point values), then the group is inserted. A cell not drawn in a resample has
    weight 0 there and changes none of its counts. Every count is an integer (int64), exact
    and independent of the order of summation: the integers the unweighted kernel counts on
    the repeated data, turned into tau by the same ``_tau_from_counts``.
    """
    tree[:, :] = 0
    at[:, :] = 0
    acc[:, :] = 0  # rows: S = C - D, x ties, inserted weight, distinct x, group weight, w, below
    s, tx, ins, nxd, gw, w, below = acc[0], acc[1], acc[2], acc[3], acc[4], acc[5], acc[6]
    m = si.shape[0]
    i = 0
    while i < m:
        j = i
        gw[:] = 0
        while j < m and gid[j] == gid[i]:  # query the group against the earlier groups
            r = yr[j]
            for k in range(_LANES):
                w[k] = np.int64(wsT[si[j], k]) * np.int64(wiT[ii[j], k])
            below[:] = 0
            q = r  # prefix sum over ranks < r (1-based tree: indices 1..r)
            while q > 0:
                for k in range(_LANES):
                    below[k] += tree[q, k]
                q -= q & (-q)
            for k in range(_LANES):  # weight below minus weight above: 2 below + at - inserted
                s[k] += w[k] * (2 * below[k] + at[r, k] - ins[k])
                gw[k] += w[k]
            j += 1
        for k in range(_LANES):
            tx[k] += gw[k] * (gw[k] - 1) // 2
            nxd[k] += gw[k] > 0
            ins[k] += gw[k]
        for c in range(i, j):  # then insert the group
            r = yr[c]
            for k in range(_LANES):
                w[k] = np.int64(wsT[si[c], k]) * np.int64(wiT[ii[c], k])
                at[r, k] += w[k]
            q = r + 1
            while q <= n_y:
                for k in range(_LANES):
                    tree[q, k] += w[k]
                q += q & (-q)
        i = j
    for k in range(nk):
        ty = np.int64(0)
        nyd = 0
        for r in range(n_y):
            v = np.int64(at[r, k])
            if v > 0:
                nyd += 1
                ty += v * (v - 1) // 2
        n = ins[k]  # the one formula and degenerate-input rule of every tau in nlgeval
        out[b0 + k] = _tau_from_counts(float(s[k]), float(n * (n - 1) // 2), float(tx[k]),
                                       float(ty), float(n), float(nxd[k]), float(nyd),
                                       variant, float(MIN_PAIRS))


@njit(parallel=True)
def _prev_taus(gid: np.ndarray, yr: np.ndarray, n_y: int, si: np.ndarray, ii: np.ndarray,
          ws: np.ndarray, wi: np.ndarray, variant: int, lanes: int) -> np.ndarray:
    """tau of every resample, in blocks of _LANES resamples; thread t takes the blocks t,
    t + lanes, ..., with one set of work buffers (none the size of the data)."""
    B = ws.shape[0]
    n_blocks = (B + _LANES - 1) // _LANES
    out = np.empty(B)
    for t in prange(lanes):
        tree, at = np.empty((n_y + 1, _LANES), np.int32), np.empty((n_y, _LANES), np.int32)
        acc = np.empty((7, _LANES), np.int64)
        wsT = np.empty((ws.shape[1], _LANES), np.int32)
        wiT = np.empty((wi.shape[1], _LANES), np.int32)
        for blk in range(t, n_blocks, lanes):
            b0 = blk * _LANES
            nk = min(_LANES, B - b0)
            wsT[:, :] = 0
            wiT[:, :] = 0
            for k in range(nk):
                wsT[:, k] = ws[b0 + k]
                wiT[:, k] = wi[b0 + k]
            _prev_tau_block(gid, yr, n_y, si, ii, wsT, wiT, variant, out, b0, nk, tree, at, acc)
    return out



def previous_kendall(X, Y, ws, wi, variant="tau_b"):  # noqa: ANN001, ANN201
    gid, yr, n_y, si, ii = weighted._kendall_plan(X, Y)
    ws32, wi32 = weighted._counts(ws, wi)
    return _prev_taus(gid, yr, n_y, si, ii, ws32, wi32, 0 if variant == "tau_b" else 1,
                      max(1, min(numba.get_num_threads(), -(-ws.shape[0] // _LANES))))


# ------------------------------------------------------------------ random cases


def _case(kind: str, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """One random case of this file's sizes (the shared generator, _random_cases)."""
    return random_case(kind, seed, systems=(3, 12), items=(4, 60))


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("resample", ["both", "items", "systems"])
def test_same_numbers_as_the_previous_block_kernel(kind: str, resample: str) -> None:
    for seed in range(4):
        X, Y = _case(kind, seed)
        B = (1, 7, 8, 9, 17, 40)[seed % 6]  # both sides of a block of 8
        si, ii = resample_indices(*X.shape, B, resample, seed)
        ws, wi = resample_counts(si, X.shape[0]), resample_counts(ii, X.shape[1])
        for variant in ("tau_b", "tau_c"):
            got = weighted_kendall_segment(X, Y, ws, wi, variant)
            np.testing.assert_array_equal(got, previous_kendall(X, Y, ws, wi, variant))
            assert got.shape == (B,)


def test_large_weights_and_one_or_two_threads() -> None:
    """A few systems and items drawn many times (weights far from 0/1), 1 and 2 threads."""
    rng = np.random.default_rng(11)
    X, Y = _case("nan", 5)
    S, n_items = X.shape
    B = 45
    si = rng.integers(0, 2, size=(B, S))  # two systems only: counts up to S
    ii = rng.integers(0, 3, size=(B, n_items))
    ws, wi = resample_counts(si, S), resample_counts(ii, n_items)
    before = numba.get_num_threads()
    try:
        got = []
        for threads in sorted({1, 2, before}):
            numba.set_num_threads(min(threads, numba.config.NUMBA_NUM_THREADS))
            got.append((weighted_kendall_segment(X, Y, ws, wi),
                        previous_kendall(X, Y, ws, wi)))
    finally:
        numba.set_num_threads(before)
    for new, old in got:
        np.testing.assert_array_equal(new, old)
        np.testing.assert_array_equal(new, got[0][0])
    assert np.isfinite(got[0][0]).any()


def test_item_counts_above_255() -> None:
    """Items drawn more than 255 times (the int32 table of item counts instead of uint8)."""
    rng = np.random.default_rng(3)
    X = np.round(rng.normal(size=(4, 300)), 1)
    Y = np.round(X + rng.normal(size=X.shape), 0)
    ii = rng.integers(0, 300, size=(11, 300))
    ii[:5] = rng.integers(0, 2, size=(5, 300))  # two items drawn ~150 times
    ii[5] = 7  # one item drawn 300 times
    si = rng.integers(0, 4, size=(11, 4))
    ws, wi = resample_counts(si, 4), resample_counts(ii, 300)
    assert wi.max() > 255
    for variant in ("tau_b", "tau_c"):
        np.testing.assert_array_equal(weighted_kendall_segment(X, Y, ws, wi, variant),
                                      previous_kendall(X, Y, ws, wi, variant))
        np.testing.assert_array_equal(weighted_kendall_segment(X, Y, ws[5:], wi[5:], variant),
                                      previous_kendall(X, Y, ws[5:], wi[5:], variant))
