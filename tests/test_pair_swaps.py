"""The batched PERM-BOTH draws of every metric pair equal the block-by-block code bit for bit.

The reference below is the code the batched path replaced (issue 26, "Size and speed"):
``_all_pair_deltas``'s Pearson loop over fixed blocks of 8 masks and pair groups, each block
preparing every pair's swap terms and taking its contractions and coefficients on its own.
The batched path (:mod:`nlgeval.correlation.permutation._pair_swaps`, with the compiled
item-level kernel of :mod:`nlgeval.correlation.permutation._pair_kernels`) must give the same
r(A), r(B) and the same delta on every draw (``assert_array_equal``, which also compares NaN
positions), on data with missing cells, ties, constant and near-constant items and values near
1e200 and 1e-200.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from nlgeval.correlation.levels import level_statistic
from nlgeval.correlation.permutation import compare
from nlgeval.correlation.permutation._pearson_swaps import _r_of, _swap_terms


# ------------------------------------------------------------------ the replaced code, verbatim
def _reference_draws_many(triples, level, masks):
    P = masks.shape[0]
    m = masks.reshape(P, -1) if masks.dtype == float else masks.reshape(P, -1).astype(float)
    terms = [_swap_terms(A, B, H) for A, B, H in triples]
    if level == "segment":
        cols = np.concatenate([np.stack([D, E, F]).reshape(3, -1) for *_, D, E, F in terms])
        prod = (m @ cols.T).T
        out = []
        for j, (V, A0, B0, H0, *_) in enumerate(terms):
            mD, mE, mF = prod[3 * j:3 * j + 3]
            n, sy, syy = V.sum(), H0.sum(), (H0 * H0).sum()
            ra = _r_of(n, A0.sum() + mD, (A0 * A0).sum() + mE, (A0 * H0).sum() + mF, sy, syy)
            rb = _r_of(n, B0.sum() - mD, (B0 * B0).sum() - mE, (B0 * H0).sum() - mF, sy, syy)
            out.append((ra, rb))
        return out
    if level == "system":
        mDs = np.einsum("psi,ksi->psk", m.reshape(masks.shape), np.stack([t[4] for t in terms]))
        return [_reference_system(t, mDs[:, :, j]) for j, t in enumerate(terms)]
    return [_reference_item(t, m.reshape(masks.shape)) for t in terms]


def _reference_system(terms, mD):
    V, A0, B0, H0 = terms[:4]
    cnt = V.sum(axis=1)
    w = (cnt > 0).astype(float)
    safe = np.maximum(cnt, 1)
    ma = (A0.sum(axis=1) + mD) / safe
    mb = (B0.sum(axis=1) - mD) / safe
    mh = H0.sum(axis=1) / safe
    n, sy, syy = w.sum(), (w * mh).sum(), (w * mh * mh).sum()
    ra = _r_of(n, (w * ma).sum(1), (w * ma * ma).sum(1), (w * ma * mh).sum(1), sy, syy)
    rb = _r_of(n, (w * mb).sum(1), (w * mb * mb).sum(1), (w * mb * mh).sum(1), sy, syy)
    return ra, rb


def _reference_item(terms, m3):
    V, A0, B0, H0, D, E, F = terms
    mD, mE, mF = (np.einsum("psi,si->pi", m3, M) for M in (D, E, F))
    n, sy, syy = V.sum(axis=0), H0.sum(axis=0), (H0 * H0).sum(axis=0)
    ra = _r_of(n, A0.sum(0) + mD, (A0 * A0).sum(0) + mE, (A0 * H0).sum(0) + mF, sy, syy)
    rb = _r_of(n, B0.sum(0) - mD, (B0 * B0).sum(0) - mE, (B0 * H0).sum(0) - mF, sy, syy)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return np.nanmean(ra, axis=1), np.nanmean(rb, axis=1)


def _reference_all_pairs(metrics, Y, level, masks, group_cells=8_000_000, block=8):
    names = list(metrics)
    pairs = [(a, b) for i, a in enumerate(names) for b in names[i + 1:]]
    out = {}
    group = max(1, group_cells // max(1, 3 * np.size(Y)))
    for g0 in range(0, len(pairs), group):
        chunk = pairs[g0:g0 + group]
        triples = [compare._standardised_pair(metrics[a], metrics[b], Y) for a, b in chunk]
        parts = [[] for _ in chunk]
        for b0 in range(0, masks.shape[0], block):
            blk = masks[b0:b0 + block]
            k = blk.shape[0]
            if k < block:
                blk = np.concatenate([blk, np.repeat(blk[:1], block - k, axis=0)])
            draws = _reference_draws_many(triples, level, blk.astype(float))
            for part, (da, db) in zip(parts, draws, strict=True):
                part.append((np.asarray(da, float) - np.asarray(db, float))[:k])
        for (a, b), (A, B, H), part in zip(chunk, triples, parts, strict=True):
            r_a = float(level_statistic(A, H, level, "pearson"))
            r_b = float(level_statistic(B, H, level, "pearson"))
            out[(a, b)] = (r_a, r_b, np.concatenate(part) if part else np.empty(0))
    return out


# ------------------------------------------------------------------------------------ data
def _zoo(seed: int, S: int, n_items: int, k: int, kind: str):
    """A human matrix and ``k`` metrics of one of several awkward kinds."""
    rng = np.random.default_rng(seed)
    H = np.round(3 + rng.normal(size=(S, n_items)))  # ties, like a 1-5 scale
    mets = {}
    for j in range(k):
        X = H + rng.normal(scale=0.5 + j, size=H.shape)
        if j % 4 == 1:
            X = np.round(X)  # a judge: ties
        if j % 4 == 2:
            X = 0.8 + 0.05 * np.tanh(X)
        mets[f"m{j}"] = X
    if kind == "constant-items":
        H[:, 0] = 2.0  # a constant human item
        mets["m0"][:, 1] = 0.5  # a constant metric item
        mets["m1"][:, 2] = 0.5 + 1e-17 * np.arange(S)  # near-constant
    elif kind == "scales":
        mets["m0"] = mets["m0"] * 1e200
        mets["m2"] = mets["m2"] * 1e-200
        H = H * 1e-150
    elif kind == "missing":  # cells missing for one metric: the pair-by-pair preparation
        mets["m1"][0, 3] = np.nan
        H[2, 1] = np.nan
    elif kind == "missing-human":  # the same cells missing everywhere: shared preparation
        H[1, :2] = np.nan
        H[3, 4] = np.nan
    return H, mets


CASES = [("plain", 6, 9, 4), ("constant-items", 5, 12, 5), ("scales", 7, 10, 4),
         ("missing", 6, 9, 4), ("missing-human", 6, 9, 4), ("plain", 11, 130, 6),
         ("plain", 3, 300, 3)]


@pytest.mark.parametrize("level", ["segment", "system", "item"])
@pytest.mark.parametrize("case", CASES, ids=[f"{c[0]}-{c[1]}x{c[2]}" for c in CASES])
def test_batched_pairs_equal_block_by_block(level: str, case: tuple) -> None:
    kind, S, n_items, k = case
    H, mets = _zoo(7 + S + n_items, S, n_items, k, kind)
    masks = compare.swap_masks(H.shape, 45, "both", seed=3)  # 45: the last block is padded
    want = _reference_all_pairs(mets, H, level, masks)
    got = compare._all_pair_deltas(mets, H, level, "pearson", masks)
    assert list(got) == list(want)
    for key, (r_a, r_b, deltas) in want.items():
        assert got[key][:2] == (r_a, r_b) or np.isnan([r_a, r_b]).any()
        np.testing.assert_array_equal(np.array(got[key][:2]), np.array([r_a, r_b]))
        np.testing.assert_array_equal(got[key][2], deltas)


@pytest.mark.parametrize("level", ["segment", "system", "item"])
def test_pair_groups_do_not_change_the_draws(level: str, monkeypatch) -> None:
    H, mets = _zoo(1, 6, 20, 5, "plain")
    masks = compare.swap_masks(H.shape, 30, "both", seed=2)
    want = _reference_all_pairs(mets, H, level, masks)
    for cells in (1, 3 * H.size * 3):  # one pair, three pairs per group
        monkeypatch.setattr(compare, "_PAIR_GROUP_CELLS", cells)
        got = compare._all_pair_deltas(mets, H, level, "pearson", masks)
        for key, (_, _, deltas) in want.items():
            np.testing.assert_array_equal(got[key][2], deltas)


def test_comparison_matrix_p_values_unchanged() -> None:
    # the p-values comparison_matrix reports, from the reference draws
    H, mets = _zoo(4, 8, 25, 5, "plain")
    for level in ("segment", "system", "item"):
        frame = compare.comparison_matrix(mets, H, level, "pearson", method="permutation",
                                          n_resamples=100, seed=5)
        masks = compare.swap_masks(H.shape, 100, "both", seed=5)
        ref = _reference_all_pairs(mets, H, level, masks)
        for (a, b), (r_a, r_b, d) in ref.items():
            row = frame[(frame.metric_a == a) & (frame.metric_b == b)].iloc[0]
            back = frame[(frame.metric_a == b) & (frame.metric_b == a)].iloc[0]
            assert row.pvalue == compare._permutation_p(r_a - r_b, d, "greater")
            assert back.pvalue == compare._permutation_p(r_a - r_b, d, "less")


@pytest.mark.parametrize("whole", [True, False])
def test_segment_products_whole_or_by_block(whole: bool, monkeypatch) -> None:
    # a study big enough for one product of all draws; and the fallback to one product per
    # block when the check of the first and last block finds a difference
    from nlgeval.correlation.permutation import _pair_swaps

    if not whole:
        monkeypatch.setattr(_pair_swaps, "_same", lambda a, b: False)
    H, mets = _zoo(11, 11, 100, 12, "plain")
    masks = compare.swap_masks(H.shape, 100, "both", seed=0)
    got = compare._all_pair_deltas(mets, H, "segment", "pearson", masks)
    monkeypatch.undo()
    want = _reference_all_pairs(mets, H, "segment", masks)
    for key, (_, _, deltas) in want.items():
        np.testing.assert_array_equal(got[key][2], deltas)


def test_segment_draws_in_chunks(monkeypatch) -> None:
    # the draws taken a chunk at a time (a multiple of the block size; the last one short)
    from nlgeval.correlation.permutation import _pair_swaps

    monkeypatch.setattr(_pair_swaps, "_SEGMENT_DRAWS", 16)
    H, mets = _zoo(3, 7, 30, 5, "plain")
    masks = compare.swap_masks(H.shape, 45, "both", seed=9)
    got = compare._all_pair_deltas(mets, H, "segment", "pearson", masks)
    want = _reference_all_pairs(mets, H, "segment", masks)
    for key, (_, _, deltas) in want.items():
        np.testing.assert_array_equal(got[key][2], deltas)


@pytest.mark.parametrize("S", [1, 2, 11, 16, 25])
def test_system_kernel_adds_in_einsums_order(S: int) -> None:
    # the fused system level re-adds einsum's sums over items in numpy's order: equal bit
    # for bit on every item count around its chunks of 8 and pairs of lanes
    from nlgeval.correlation.permutation._pair_kernels import einsum_system_sums

    rng = np.random.default_rng(S)
    for n_items in (1, 2, 7, 8, 9, 15, 16, 17, 100, 178, 1001):
        m3 = (rng.random((9, S, n_items)) < 0.5).astype(float)
        D = rng.normal(size=(3, S, n_items)) * np.exp(3 * rng.normal(size=(3, S, n_items)))
        got = np.empty((9, S, 3))
        einsum_system_sums(np.ascontiguousarray(m3.transpose(1, 2, 0).astype(np.uint8)), D, got)
        np.testing.assert_array_equal(got, np.einsum("psi,ksi->psk", m3, D))
    # and the comparison can fail: a plain sequential sum differs on these magnitudes
    seq = np.zeros((9, S, 3))
    for i in range(n_items):
        seq = seq + m3[:, :, None, i] * D[:, :, i].T[None]
    assert not np.array_equal(seq, got)


@pytest.mark.parametrize("fused", [True, False])
def test_system_level_fused_or_einsum(fused: bool, monkeypatch) -> None:
    # the fused pass is taken on a zoo-shaped study (the einsum path would raise), and a
    # failed check against einsum falls back to it: the same draws both ways
    from nlgeval.correlation.permutation import _pair_swaps

    H, mets = _zoo(12, 11, 100, 6, "constant-items")
    masks = compare.swap_masks(H.shape, 300, "both", seed=4)
    want = _reference_all_pairs(mets, H, "system", masks)
    if fused:
        monkeypatch.setattr(_pair_swaps, "_system_part", None)
    else:
        monkeypatch.setattr(_pair_swaps, "_same", lambda a, b: False)
    got = compare._all_pair_deltas(mets, H, "system", "pearson", masks)
    monkeypatch.undo()
    for key, (_, _, deltas) in want.items():
        np.testing.assert_array_equal(got[key][2], deltas)


def test_segment_small_group_padded(monkeypatch) -> None:
    # a group too narrow for one product of all draws is padded with zero columns, not
    # computed block by block, and gives the blocks' numbers
    from nlgeval.correlation.permutation import _pair_swaps

    H, mets = _zoo(13, 11, 100, 17, "plain")  # 136 pairs: 408 columns, padded to 1024
    masks = compare.swap_masks(H.shape, 200, "both", seed=6)
    calls = []
    real = _pair_swaps._block_product
    monkeypatch.setattr(_pair_swaps, "_block_product",
                        lambda *a: calls.append(1) or real(*a))
    got = compare._all_pair_deltas(mets, H, "segment", "pearson", masks)
    monkeypatch.undo()
    want = _reference_all_pairs(mets, H, "segment", masks)
    for key, (_, _, deltas) in want.items():
        np.testing.assert_array_equal(got[key][2], deltas)
    # the two checked blocks (padded product taken), or those and every block (fallback)
    assert len(calls) in (2, 2 + 200 // 8)


@pytest.mark.parametrize("level", ["system", "item"])
def test_masks_other_than_zero_one_take_the_float_path(level: str) -> None:
    # the byte masks are only for 0/1 masks; other weights keep the float kernels (and
    # their numbers)
    H, mets = _zoo(14, 6, 20, 4, "plain")
    masks = compare.swap_masks(H.shape, 24, "both", seed=8).astype(float)
    masks[3, 2, 5] = 0.5
    want = _reference_all_pairs(mets, H, level, masks)
    got = compare._all_pair_deltas(mets, H, level, "pearson", masks)
    for key, (_, _, deltas) in want.items():
        np.testing.assert_array_equal(got[key][2], deltas)
