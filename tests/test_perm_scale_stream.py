"""The streamed PERM-BOTH draws equal the chunk-by-chunk code bit for bit (issue 29, scale).

The reference below is the code the streamed path replaced in ``comparison_matrix``: the swap
masks drawn a chunk at a time by ``iter_swap_masks`` and every chunk handed to
``_all_pair_deltas`` (which prepares every metric and pair again per chunk). The streamed path
(:mod:`nlgeval.correlation.permutation._pair_stream`) prepares once, draws the masks in a
compiled loop and re-adds einsum's system sums in a compiled pass; it must give the same
r(A), r(B) and the same delta on every draw (``assert_array_equal``, NaN positions included) on
data with ties, missing cells, constant and near-constant items and values near 1e200 and
1e-200, with one or two threads, for short last chunks and chunks of one draw.
"""

from __future__ import annotations

import numba
import numpy as np
import pytest

from nlgeval.correlation.permutation import _pair_kernels, _pair_stream, compare
from nlgeval.correlation.permutation.draws import iter_swap_masks


# ------------------------------------------------------------------ the replaced code, verbatim
def _reference(metrics, Y, level, n, scheme, seed, size):
    parts = [compare._all_pair_deltas(metrics, Y, level, "pearson", m) for m in
             iter_swap_masks(np.shape(Y), n, scheme, seed, chunk=size)]
    return {key: (r_a, r_b, np.concatenate([p[key][2] for p in parts]))
            for key, (r_a, r_b, _) in parts[0].items()} if parts else {}


def _streamed(metrics, Y, level, n, scheme, seed, size):
    names = list(metrics)
    pairs = [(a, b) for i, a in enumerate(names) for b in names[i + 1:]]
    group = max(1, compare._PAIR_GROUP_CELLS // max(1, 3 * np.size(Y)))
    return _pair_stream.streamed_pair_deltas(metrics, Y, level, pairs, group, n, scheme, seed,
                                             size, compare._standardised_pair)


def _assert_same(got, want):
    assert list(got) == list(want)
    for key, (r_a, r_b, deltas) in want.items():
        np.testing.assert_array_equal(np.array(got[key][:2]), np.array([r_a, r_b]))
        np.testing.assert_array_equal(got[key][2], deltas)


# ------------------------------------------------------------------------------------ data
def _zoo(seed: int, S: int, n_items: int, k: int, kind: str):
    """A human matrix and ``k`` metrics of one of several awkward kinds."""
    rng = np.random.default_rng(seed)
    H = np.round(3 + rng.normal(size=(S, n_items)))  # ties, like a 1-5 scale
    mets = {}
    for j in range(k):
        X = H + rng.normal(scale=0.5 + j, size=H.shape)
        if j % 3 == 1:
            X = np.round(X)  # ties
        if j % 3 == 2:
            X = 0.8 + 0.05 * np.tanh(X)
        mets[f"m{j}"] = X
    if kind == "constant":
        H[:, 0] = 2.0  # a constant human item
        mets["m0"][:, 1] = 0.5  # a constant metric item
        mets["m1"][:, 2] = 0.5 + 1e-17 * np.arange(S)  # near-constant
        mets["m2"][1] = 0.25  # a constant system
    elif kind == "scales":
        mets["m0"] = mets["m0"] * 1e200
        mets["m2"] = mets["m2"] * 1e-200
        H = H * 1e-150
    elif kind == "missing":  # cells missing for one metric: each pair prepared on its own
        mets["m1"][0, 3] = np.nan
        mets["m2"][1, :5] = np.nan
        H[2, 1] = np.nan
    elif kind == "missing-human":  # the same cells missing everywhere: shared preparation
        H[1, :2] = np.nan
        H[0, 4] = np.nan
    return H, mets


KINDS = ["plain", "constant", "scales", "missing", "missing-human"]


@pytest.fixture(autouse=True)
def _compiled_masks(monkeypatch):
    # the compiled mask loops even on these small studies (numpy draws those of a small
    # study; test_numpy_masks_for_small_studies covers that path)
    monkeypatch.setattr(_pair_stream, "_NUMPY_MASKS", 0)


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("level", ["segment", "system", "item"])
@pytest.mark.parametrize("kind", KINDS)
def test_streamed_equals_chunk_by_chunk(kind: str, level: str, threads: int) -> None:
    # small studies (the compiled system pass checked per chunk), chunks of 16 draws with a
    # short last one, and chunks of one draw (einsum's own shape, checked once per shape)
    H, mets = _zoo(len(kind) + 3 * threads, 6, 23, 4, kind)
    numba.set_num_threads(threads)
    try:
        for n, size in ((45, 16), (5, 1), (45, 45)):
            want = _reference(mets, H, level, n, "both", 11, size)
            _assert_same(_streamed(mets, H, level, n, "both", 11, size), want)
    finally:
        numba.set_num_threads(numba.config.NUMBA_NUM_THREADS)


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("kind", ["plain", "constant", "scales", "missing-human", "missing"])
@pytest.mark.parametrize("level", ["segment", "system", "item"])
def test_streamed_many_items(level: str, kind: str, threads: int) -> None:
    # beyond 8,192 items: einsum adds the system sums in blocks of 8,192 items with several
    # pairs per group (one block with one pair); the item level takes its array path
    H, mets = _zoo(40 + len(kind), 3, 9_001, 3, kind)
    numba.set_num_threads(threads)
    try:
        want = _reference(mets, H, level, 20, "both", 5, 8)
        _assert_same(_streamed(mets, H, level, 20, "both", 5, 8), want)
    finally:
        numba.set_num_threads(numba.config.NUMBA_NUM_THREADS)


def test_many_items_one_pair_per_group(monkeypatch) -> None:
    H, mets = _zoo(3, 3, 9_001, 3, "plain")
    monkeypatch.setattr(compare, "_PAIR_GROUP_CELLS", 1)  # one pair per group (as at 5 M)
    want = _reference(mets, H, "system", 20, "both", 5, 8)
    _assert_same(_streamed(mets, H, "system", 20, "both", 5, 8), want)


@pytest.mark.parametrize("scheme", ["systems", "items"])
@pytest.mark.parametrize("level", ["segment", "system", "item"])
def test_other_schemes(scheme: str, level: str) -> None:
    H, mets = _zoo(8, 5, 30, 3, "constant")
    want = _reference(mets, H, level, 37, scheme, 2, 8)
    _assert_same(_streamed(mets, H, level, 37, scheme, 2, 8), want)


@pytest.mark.parametrize("level", ["system", "segment"])
def test_failed_checks_fall_back_to_einsum(level: str, monkeypatch) -> None:
    # every bit-for-bit check failing: einsum's (and the block code's) own sums, same draws
    from nlgeval.correlation.permutation import _pair_swaps

    monkeypatch.setattr(_pair_stream, "_same", lambda a, b: False)
    monkeypatch.setattr(_pair_swaps, "_same", lambda a, b: False)
    for n_items in (23, 9_001):
        H, mets = _zoo(n_items, 3, n_items, 3, "missing-human")
        want = _reference(mets, H, level, 20, "both", 1, 8)
        _assert_same(_streamed(mets, H, level, 20, "both", 1, 8), want)


@pytest.mark.parametrize("layout", ["rows", "bytes", "transposed"])
@pytest.mark.parametrize("scheme", ["both", "systems", "items"])
def test_mask_chunks_are_iter_swap_masks(layout: str, scheme: str) -> None:
    for shape, n, chunk in (((3, 5), 23, 4), ((1, 1), 3, 2), ((4, 9), 8, 8), ((2, 3), 0, 4),
                            ((7, 1_001), 17, 8)):
        want = list(iter_swap_masks(shape, n, scheme, 9, chunk=chunk))
        got = list(_pair_stream.mask_chunks(shape, n, scheme, 9, chunk, layout))
        assert len(got) == len(want)
        for g, w in zip(got, want, strict=True):
            if layout == "rows":
                g = g.reshape(w.shape)
            elif layout == "transposed":
                g = g.transpose(2, 0, 1)
            assert g.dtype == (float if layout == "rows" else np.uint8)
            np.testing.assert_array_equal(g, w.astype(g.dtype))


def test_system_sums_follow_einsums_blocks() -> None:
    # the candidate orders: the one einsum takes matches bit for bit, the other does not
    rng = np.random.default_rng(0)
    m3 = (rng.random((8, 4, 20_000)) < 0.5).astype(float)
    D = rng.normal(size=(2, 4, 20_000)) * np.exp(5 * rng.normal(size=(2, 4, 20_000)))
    mT = np.ascontiguousarray(m3.transpose(1, 2, 0), dtype=np.uint8)
    want = np.einsum("psi,ksi->psk", m3, D)
    got = {}
    for block in (_pair_stream._EINSUM_BLOCK, _pair_kernels.ONE_BLOCK):
        got[block] = np.empty_like(want)
        _pair_kernels.system_mask_sums(mT, D, block, got[block])
    np.testing.assert_array_equal(got[_pair_stream._EINSUM_BLOCK], want)
    assert not np.array_equal(got[_pair_kernels.ONE_BLOCK], want)


def test_comparison_matrix_p_values_unchanged() -> None:
    from nlgeval.correlation.permutation.draws import _permutation_p

    H, mets = _zoo(4, 8, 25, 4, "plain")
    for level in ("segment", "system", "item"):
        frame = compare.comparison_matrix(mets, H, level, "pearson", method="permutation",
                                          n_resamples=100, seed=5)
        ref = _reference(mets, H, level, 100, "both", 5, 8 * (compare._MASK_CELLS // H.size // 8))
        for (a, b), (r_a, r_b, d) in ref.items():
            row = frame[(frame.metric_a == a) & (frame.metric_b == b)].iloc[0]
            back = frame[(frame.metric_a == b) & (frame.metric_b == a)].iloc[0]
            assert row.pvalue == _permutation_p(r_a - r_b, d, "greater")
            assert back.pvalue == _permutation_p(r_a - r_b, d, "less")


@pytest.mark.parametrize(("pairs", "block"), [(2, _pair_stream._EINSUM_BLOCK),
                                                (1, _pair_kernels.ONE_BLOCK)])
def test_the_compiled_order_is_taken(pairs: int, block: int) -> None:
    # beyond 8,192 items the checked order serves the later chunks (not einsum's fallback)
    rng = np.random.default_rng(pairs)
    D = rng.normal(size=(pairs, 3, 9_001)) * np.exp(5 * rng.normal(size=(pairs, 3, 9_001)))
    checked: dict = {}
    for _ in range(2):
        mT = (rng.random((3, 9_001, 8)) < 0.5).astype(np.uint8)
        got = _pair_stream._system_sums(mT, D, False, checked)
        want = np.einsum("psi,ksi->psk", _pair_stream._float_masks(mT), D)
        np.testing.assert_array_equal(got, want)
    assert checked == {(8, pairs): block}


@pytest.mark.parametrize("agree", [True, False])
def test_segment_groups_joined(agree: bool, monkeypatch) -> None:
    # several pair groups of one block of draws per chunk (a large study): one product of
    # all pairs' columns, checked against each group's own on the first chunk; a failed
    # check keeps the groups apart. The same draws both ways.
    monkeypatch.setattr(compare, "_PAIR_GROUP_CELLS", 1)  # one pair per group
    if not agree:
        monkeypatch.setattr(_pair_stream, "_same", lambda a, b: False)
    H, mets = _zoo(21, 6, 40, 4, "scales")
    want = _reference(mets, H, "segment", 21, "both", 3, 8)
    calls = []
    real = _pair_stream._joined_draws
    monkeypatch.setattr(_pair_stream, "_joined_draws", lambda *a: calls.append(1) or real(*a))
    _assert_same(_streamed(mets, H, "segment", 21, "both", 3, 8), want)
    assert len(calls) == (3 if agree else 0)


def test_reused_buffers_hold_each_chunk_until_the_next_but_one() -> None:
    want = list(iter_swap_masks((3, 7), 29, "both", 4, chunk=8))
    got = _pair_stream.mask_chunks((3, 7), 29, "both", 4, 8, "bytes", reuse=True)
    previous = None
    for w, g in zip(want, got, strict=True):
        np.testing.assert_array_equal(g, w)
        if previous is not None:  # the previous chunk is intact while this one is in use
            np.testing.assert_array_equal(previous[1], previous[0])
        previous = (w, g)


@pytest.mark.parametrize("level", ["segment", "system", "item"])
def test_numpy_masks_for_small_studies(level: str, monkeypatch) -> None:
    monkeypatch.setattr(_pair_stream, "_NUMPY_MASKS", 1 << 24)
    H, mets = _zoo(30, 6, 23, 4, "missing-human")
    want = _reference(mets, H, level, 45, "both", 7, 16)
    _assert_same(_streamed(mets, H, level, 45, "both", 7, 16), want)
    for layout in ("rows", "bytes", "transposed"):
        drawn = list(_pair_stream.mask_chunks(H.shape, 45, "both", 7, 16, layout))
        monkeypatch.setattr(_pair_stream, "_NUMPY_MASKS", 0)
        compiled = list(_pair_stream.mask_chunks(H.shape, 45, "both", 7, 16, layout))
        monkeypatch.setattr(_pair_stream, "_NUMPY_MASKS", 1 << 24)
        for a, b in zip(drawn, compiled, strict=True):
            assert a.dtype == b.dtype and a.shape == b.shape
            np.testing.assert_array_equal(a, b)
