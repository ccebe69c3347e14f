"""PERM-BOTH swap masks drawn once per process and shared (``iter_swap_masks``' kept draws).

The segment, system and item levels of a comparison (and the criteria of a study) ask for the
same masks from the same seed; ``iter_swap_masks`` draws them once and hands out copies. The
reference here is the previous code path, kept in the test: ``default_rng(seed)`` drawn a chunk
at a time (Deutsch, Dror & Roth 2021's coins, one per cell / system / item).
"""

from __future__ import annotations

import numpy as np
import pytest

from nlgeval.correlation.permutation import comparison_matrix, draws
from nlgeval.correlation.permutation._pair_stream import mask_chunks
from nlgeval.correlation.permutation.draws import iter_swap_masks, swap_masks


def _old_chunks(shape, permutations, scheme, seed, chunk):
    """The masks as ``iter_swap_masks`` drew them before they were kept (one stream, in
    chunks)."""
    rng = np.random.default_rng(seed)
    S, n_items = shape
    done = 0
    while done < permutations:
        c = min(chunk, permutations - done)
        if scheme == "both":
            yield rng.random((c, S, n_items)) < 0.5
        elif scheme == "systems":
            yield np.broadcast_to(rng.random((c, S, 1)) < 0.5, (c, S, n_items))
        else:
            yield np.broadcast_to(rng.random((c, 1, n_items)) < 0.5, (c, S, n_items))
        done += c


@pytest.fixture(autouse=True)
def _empty_store(monkeypatch):
    monkeypatch.setattr(draws, "_kept", {})


def _same_chunks(got, want) -> None:
    got, want = list(got), list(want)
    assert [g.shape for g in got] == [w.shape for w in want]
    for g, w in zip(got, want, strict=True):
        assert g.dtype == w.dtype == bool
        assert np.array_equal(g, w)


@pytest.mark.parametrize("scheme", ["both", "systems", "items"])
def test_kept_masks_are_the_drawn_masks(scheme: str) -> None:
    rng = np.random.default_rng(2026)
    for _ in range(25):
        shape = (int(rng.integers(1, 9)), int(rng.integers(1, 40)))
        seed = int(rng.integers(0, 10))  # repeated seeds and shapes: the store is hit
        for P in rng.integers(0, 70, size=3):  # shorter and longer requests, in any order
            chunk = int(rng.integers(1, 80))
            _same_chunks(iter_swap_masks(shape, int(P), scheme, seed, chunk=chunk),
                         _old_chunks(shape, int(P), scheme, seed, chunk))
    assert draws._kept  # the store was used


def test_copies_are_fresh_and_writable() -> None:
    first = next(iter_swap_masks((3, 5), 10, "both", 1, chunk=10))
    want = first.copy()
    first[:] = ~first  # a caller that writes into its masks
    again = next(iter_swap_masks((3, 5), 10, "both", 1, chunk=10))
    assert again.flags.writeable and np.array_equal(again, want)


def test_too_large_or_unseeded_is_not_kept(monkeypatch) -> None:
    monkeypatch.setattr(draws, "_KEPT_MASK_CELLS", 100)
    _same_chunks(iter_swap_masks((4, 5), 6, "both", 3, chunk=4),
                 _old_chunks((4, 5), 6, "both", 3, 4))
    assert not draws._kept  # 120 cells > 100
    _same_chunks(iter_swap_masks((4, 5), 5, "both", 3, chunk=4),
                 _old_chunks((4, 5), 5, "both", 3, 4))
    assert list(draws._kept) == [(4, 5, "both", 3)]
    _same_chunks(iter_swap_masks((2, 5), 8, "both", 4, chunk=3),
                 _old_chunks((2, 5), 8, "both", 4, 3))  # 80 cells: the older 100 go
    assert list(draws._kept) == [(2, 5, "both", 4)]
    a = [m.copy() for m in iter_swap_masks((2, 3), 4, "both", None)]
    assert len(a) == 1 and a[0].shape == (4, 2, 3)
    assert list(draws._kept) == [(2, 5, "both", 4)]  # seed None: fresh entropy, not kept


@pytest.mark.parametrize("layout", ["rows", "bytes", "transposed"])
def test_mask_chunks_layouts_from_kept_masks(layout: str) -> None:
    want = list(_old_chunks((4, 9), 37, "both", 5, 16))
    for _ in range(2):  # drawn, then taken from the store
        got = list(mask_chunks((4, 9), 37, "both", 5, 16, layout))
        for g, w in zip(got, want, strict=True):
            if layout == "rows":
                assert np.array_equal(g, w.reshape(w.shape[0], -1).astype(float))
            elif layout == "bytes":
                assert np.array_equal(g, w.astype(np.uint8))
            else:
                assert np.array_equal(g, w.transpose(1, 2, 0).astype(np.uint8))


def _study(rng, S=5, n_items=13, n_metrics=3):
    Y = rng.normal(size=(S, n_items))
    Y[0, 0] = np.nan
    mats = {}
    for k in range(n_metrics):
        X = Y + rng.normal(scale=k + 1.0, size=Y.shape)
        X[rng.random(X.shape) < 0.1] = np.nan
        mats[f"m{k}"] = X
    mats["ties"] = np.round(Y * 2) / 2  # many ties
    mats["const_item"] = np.where(np.arange(n_items) == 3, 1.0, Y + rng.normal(size=Y.shape))
    mats["huge"] = 1e200 * (Y + rng.normal(size=Y.shape))
    mats["tiny"] = 1e-200 * (Y + rng.normal(size=Y.shape))
    return mats, Y


@pytest.mark.parametrize("coefficient", ["pearson", "spearman", "kendall"])
def test_comparisons_equal_with_and_without_the_store(coefficient: str, monkeypatch) -> None:
    """Every level's comparison table is the same, bit for bit, when its masks are drawn
    (store empty / store off) and when they come from the store."""
    rng = np.random.default_rng(7)
    mats, Y = _study(rng)
    levels = ["segment", "system", "item"]

    def run():
        return [comparison_matrix(mats, Y, lv, coefficient, method="permutation",
                                  n_resamples=64, seed=3) for lv in levels]

    monkeypatch.setattr(draws, "_KEPT_MASK_CELLS", 0)  # store off: every level draws
    off = run()
    assert not draws._kept
    monkeypatch.setattr(draws, "_KEPT_MASK_CELLS", 1 << 24)
    first, second = run(), run()  # drawn once, then every level from the store
    assert list(draws._kept) == [(5, 13, "both", 3)]
    for a, b, c in zip(off, first, second, strict=True):
        for frame in (b, c):
            assert frame.columns.tolist() == a.columns.tolist()
            for col in ("r_a", "r_b", "statistic", "pvalue"):
                assert np.array_equal(frame[col].to_numpy(), a[col].to_numpy(),
                                      equal_nan=True), col


def test_swap_masks_unchanged() -> None:
    for scheme in ("both", "systems", "items"):
        want = np.concatenate(list(_old_chunks((3, 4), 9, scheme, 8, 9)))
        assert np.array_equal(swap_masks((3, 4), 9, scheme, 8), want)
        assert np.array_equal(swap_masks((3, 4), 9, scheme, 8), want)  # from the store
