"""The bootstrap in chunks of resamples (issue 29 section 2): the same numbers as in one piece.

A large bootstrap draws its item indices in chunks of rows and computes Pearson's matrix
products in fixed blocks of resamples, so memory does not grow with the number of resamples.
The reference is the computation in one piece (every index drawn at once, every coefficient in
one call): the chunked one must equal it bit for bit, for every level, coefficient and scheme.
"""

from __future__ import annotations

import numpy as np
import pytest

import nlgeval.correlation.bootstrap as bs
from nlgeval.correlation._resampled_means import PEARSON_BLOCK, index_chunks
from nlgeval.correlation.bootstrap import (
    _draw_indices,
    bootstrap_correlation,
    bootstrap_distribution,
)
from nlgeval.parallel import single_blas_thread


@pytest.fixture(autouse=True)
def _one_blas_thread():
    # as validate runs its statistics; the products' rounding also depends on the thread count
    with single_blas_thread():
        yield


def _data(S: int = 7, n: int = 300) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(4)
    q = rng.normal(size=S)[:, None] + rng.normal(size=(S, n))
    X, Y = q + rng.normal(size=q.shape), np.round(q + rng.normal(size=q.shape), 1)
    X[1, :5] = np.nan  # missing cells take another path through every kernel
    return X, Y


@pytest.mark.parametrize("scheme", ["both", "items", "systems"])
@pytest.mark.parametrize("cells", [1, 300 * 32, 300 * 96, 10**9])
def test_chunked_indices_are_the_indices_of_one_draw(scheme: str, cells: int) -> None:
    si, ii = _draw_indices(7, 300, 200, scheme, 11)
    parts = list(index_chunks(7, 300, 200, scheme, 11, cells=cells))
    assert all(p[1].shape[0] % PEARSON_BLOCK == 0 for p in parts[:-1])
    np.testing.assert_array_equal(np.concatenate([p[0] for p in parts]), si)
    np.testing.assert_array_equal(np.concatenate([p[1] for p in parts]), ii)


CASES = [(lv, c) for lv in ("segment", "system") for c in ("pearson", "spearman", "kendall")] \
    + [("item", "pearson"), ("item", "kendall"), ("system-grouped", "pearson")]


@pytest.mark.parametrize(("level", "coef"), CASES)
def test_chunked_bootstrap_equals_one_piece(monkeypatch: pytest.MonkeyPatch, level: str,
                                            coef: str) -> None:
    # Pearson's products round differently with another shape at this size (not at 7 x 300)
    S, n = (10, 5_000) if coef == "pearson" else (7, 300)
    X, Y = _data(S, n)
    # 129 = 4 x 32 + 1 = 2 x 64 + 1: a last chunk of one resample (a matrix-vector product)
    whole = bootstrap_correlation(X, Y, level, coef, n_resamples=129, seed=5).distribution
    # the one-piece reference, without the chunked drawing: every index at once, one call
    si, ii = _draw_indices(S, n, 129, "both", 5)
    np.testing.assert_array_equal(bootstrap_distribution(X, Y, level, coef, si, ii), whole)
    for cells in (n * 32, n * 64):  # 32 and 64 resamples a chunk
        monkeypatch.setattr(bs, "DRAW_CELLS", cells)
        monkeypatch.setattr("nlgeval.correlation._resampled_means.DRAW_CELLS", cells)
        chunked = bootstrap_correlation(X, Y, level, coef, n_resamples=129, seed=5).distribution
        np.testing.assert_array_equal(chunked, whole)


def test_pearson_blocks_do_not_depend_on_the_number_of_resamples() -> None:
    # k resamples are the first k of 100 (same stream); with fixed blocks the first k
    # coefficients are the same numbers (a product of another shape rounds differently)
    X, Y = _data(10, 5_000)
    for level in ("segment", "system", "item"):
        a = bootstrap_correlation(X, Y, level, "pearson", n_resamples=100, seed=2,
                                  resample="items").distribution
        for k in (1, 3, 40):
            b = bootstrap_correlation(X, Y, level, "pearson", n_resamples=k, seed=2,
                                      resample="items").distribution
            np.testing.assert_array_equal(a[:k], b)


def test_pearson_blocks_equal_the_explicit_resamples() -> None:
    # an independent reference: numpy's corrcoef on every materialised resample
    X, Y = _data(6, 40)
    X, Y = np.nan_to_num(X), Y
    si, ii = _draw_indices(6, 40, 70, "both", 9)
    got = bootstrap_distribution(X, Y, "segment", "pearson", si, ii)
    want = [np.corrcoef(X[s][:, i].ravel(), Y[s][:, i].ravel())[0, 1] for s, i in zip(si, ii,
                                                                                      strict=True)]
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("level", ["segment", "system"])
def test_chunked_perm_both_equals_one_piece(monkeypatch: pytest.MonkeyPatch, level: str) -> None:
    # PERM-BOTH draws its swap masks a chunk at a time; the p-values and deltas are the same
    import nlgeval.correlation.permutation.compare as compare

    X, Y = _data(10, 5_000)
    rng = np.random.default_rng(8)
    mets = {"a": X, "b": X + rng.normal(size=X.shape), "c": np.round(X, 1)}
    seen = []
    real = compare.streamed_pair_deltas  # every chunk's deltas, concatenated

    def recorded(*args, **kwargs):  # type: ignore[no-untyped-def]
        out = real(*args, **kwargs)
        seen.append({k: v[2] for k, v in out.items()})
        return out

    monkeypatch.setattr(compare, "streamed_pair_deltas", recorded)
    runs = []
    for cells in (10**12, X.size * 8, X.size * 16):  # one piece; 8 and 16 draws a chunk
        monkeypatch.setattr(compare, "_MASK_CELLS", cells)
        seen.clear()
        frame = compare.comparison_matrix(mets, Y, level, "pearson", method="permutation",
                                          n_resamples=41, seed=3)
        deltas = {k: np.concatenate([s[k] for s in seen]) for k in seen[0]}
        runs.append((frame, deltas))
    for frame, deltas in runs[1:]:
        assert frame.equals(runs[0][0])
        for key, d in deltas.items():
            np.testing.assert_array_equal(d, runs[0][1][key])
