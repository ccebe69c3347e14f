"""The bootstrap's resample counts and resampled system means drawn once per study (issue 29).

``bootstrap_correlation`` now takes the counts of Pearson (segment and system level) and of the
segment-level rank coefficients from ``count_chunks``, which keeps them (as small integers) for
the next metric and coefficient with the same shape and seed, and hands them to the kernels as
integers. The distributions must be those of the previous code path, kept below as the
reference (float counts from the index chunks, per call), bit for bit: random cases with ties,
missing cells, constant and near-constant items, a constant metric, values near 1e200 and
1e-200 (drawn by ``_random_cases``), numbers of resamples around the Pearson block of 32 and
the index chunks, served from the kept counts or drawn afresh, with 1 or 2 threads. The
system-level rank coefficients now take the resampled system means of all resamples,
remembered by study and content, and must give the numbers of the previous path
(``bootstrap_distribution`` chunk by chunk) as well.
"""

from __future__ import annotations

import numba
import numpy as np
import pytest
from _random_cases import KINDS, random_case

from nlgeval.correlation import bootstrap as bs
from nlgeval.correlation._pearson_counts import pearson_counts_plan
from nlgeval.correlation._resampled_means import PEARSON_BLOCK
from nlgeval.correlation.bootstrap import bootstrap_correlation, count_chunks, resample_counts
from nlgeval.correlation.kendall.weighted import (
    weighted_kendall_segment,
    weighted_spearman_segment,
)

# ------------------------------------------------------------------ the previous code path


def _previous_pearson(X, Y, level, sys_idx, item_idx):  # noqa: ANN001, ANN202
    B = sys_idx.shape[0]
    out = np.empty(B)
    of_counts = pearson_counts_plan(X, Y, level)
    ws_all, wi_all = resample_counts(sys_idx, X.shape[0]), resample_counts(item_idx, X.shape[1])
    for b0 in range(0, B, PEARSON_BLOCK):
        ws, wi = ws_all[b0:b0 + PEARSON_BLOCK].copy(), wi_all[b0:b0 + PEARSON_BLOCK].copy()
        k = ws.shape[0]
        if k < PEARSON_BLOCK:
            ws, wi = (np.concatenate([a, np.repeat(a[:1], PEARSON_BLOCK - k, axis=0)])
                      for a in (ws, wi))
        out[b0:b0 + k] = of_counts(ws, wi)[:k]
    return out


def _previous_chunk(X, Y, level, coefficient, si, ii):  # noqa: ANN001, ANN202
    if coefficient == "pearson":
        return _previous_pearson(X, Y, level, si, ii)
    ws, wi = resample_counts(si, X.shape[0]), resample_counts(ii, X.shape[1])
    if coefficient == "spearman":
        return weighted_spearman_segment(X, Y, ws, wi)
    return weighted_kendall_segment(X, Y, ws, wi,
                                    "tau_b" if coefficient == "kendall" else "tau_c")


def previous_distribution(X, Y, level, coefficient, resamples, resample, seed):  # noqa: ANN001, ANN201
    return np.concatenate([_previous_chunk(X, Y, level, coefficient, si, ii)
                           for si, ii in bs._index_chunks(X.shape, resamples, resample, seed)])


# ------------------------------------------------------------------ random cases


def _case(kind: str, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """One random case of this file's sizes (the shared generator, _random_cases)."""
    return random_case(kind, seed, systems=(3, 10), items=(4, 50))


CASES = [("segment", c) for c in ("pearson", "spearman", "kendall", "kendall_c")] + [
    ("system", "pearson")]


@pytest.fixture(autouse=True)
def _small_chunks(monkeypatch: pytest.MonkeyPatch) -> None:
    """Index chunks of 64 resamples or fewer (a few hundred cells), as a large study's."""
    monkeypatch.setattr(bs, "DRAW_CELLS", 4096)
    bs._COUNTS_CACHE.clear()


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("resample", ["both", "items", "systems"])
def test_same_distributions_as_the_previous_code_path(kind: str, resample: str) -> None:
    for seed in range(3):
        X, Y = _case(kind, seed)
        B = (1, 31, 33, 97, 200)[(seed + len(kind)) % 5]
        for level, coef in CASES:
            ref = previous_distribution(X, Y, level, coef, B, resample, seed)
            for _ in range(2):  # drawn, then served from the kept counts
                got = bootstrap_correlation(X, Y, level, coef, n_resamples=B,
                                            resample=resample, seed=seed).distribution
                np.testing.assert_array_equal(got, ref, err_msg=f"{level} {coef} B={B}")


def test_counts_not_kept_and_threads(monkeypatch: pytest.MonkeyPatch) -> None:
    """Without room to keep the counts, and with 1 or 2 threads: the same numbers."""
    X, Y = _case("nan", 4)
    ref = {(lv, c): previous_distribution(X, Y, lv, c, 150, "both", 4) for lv, c in CASES}
    monkeypatch.setattr(bs, "_COUNTS_CACHE_BYTES", 0)
    before = numba.get_num_threads()
    try:
        for threads in sorted({1, min(2, numba.config.NUMBA_NUM_THREADS), before}):
            numba.set_num_threads(threads)
            for lv, c in CASES:
                got = bootstrap_correlation(X, Y, lv, c, n_resamples=150, seed=4).distribution
                np.testing.assert_array_equal(got, ref[lv, c])
    finally:
        numba.set_num_threads(before)
    assert not bs._COUNTS_CACHE


def test_kept_counts_are_those_of_the_indices_and_keyed_by_study() -> None:
    shape = (5, 30)
    for seed, resample in [(0, "both"), (1, "both"), (0, "items"), (0, "both")]:
        for _ in range(2):
            chunks = list(count_chunks(shape, 100, resample, seed))
            ref = list(bs._index_chunks(shape, 100, resample, seed))
            assert [c[0].shape[0] for c in chunks] == [r[0].shape[0] for r in ref]
            for (ws, wi), (si, ii) in zip(chunks, ref, strict=True):
                np.testing.assert_array_equal(ws, resample_counts(si, shape[0]))
                np.testing.assert_array_equal(wi, resample_counts(ii, shape[1]))
                assert ws.dtype.kind == "u" and wi.dtype.kind == "u"
    assert len(bs._COUNTS_CACHE) <= 2
    kept = next(iter(bs._COUNTS_CACHE.values()))
    with pytest.raises(ValueError):
        kept[1][0, 0] = 7  # read-only: a caller cannot change the next study's counts


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("resample", ["both", "items", "systems"])
def test_system_rank_coefficients_as_the_previous_code_path(kind: str, resample: str) -> None:
    for seed in range(2):
        X, Y = _case(kind, seed + 10)
        B = (33, 130)[seed]
        for coef in ("spearman", "kendall", "kendall_c"):
            ref = np.concatenate([bs.bootstrap_distribution(X, Y, "system", coef, si, ii)
                                  for si, ii in bs._index_chunks(X.shape, B, resample, seed)])
            for _ in range(2):  # means computed, then remembered
                got = bootstrap_correlation(X, Y, "system", coef, n_resamples=B,
                                            resample=resample, seed=seed).distribution
                np.testing.assert_array_equal(got, ref, err_msg=f"{coef} B={B}")
        # the same human scores with another metric: the human means are found, not redrawn
        X2 = np.round(X * 0.5 + 1.0, 1)
        for coef in ("spearman", "kendall"):
            ref = np.concatenate([bs.bootstrap_distribution(X2, Y, "system", coef, si, ii)
                                  for si, ii in bs._index_chunks(X.shape, B, resample, seed)])
            got = bootstrap_correlation(X2, Y, "system", coef, n_resamples=B,
                                        resample=resample, seed=seed).distribution
            np.testing.assert_array_equal(got, ref)


def test_remembered_means_follow_the_content() -> None:
    X, Y = _case("nan", 21)
    first = bootstrap_correlation(X, Y, "system", "spearman", n_resamples=70, seed=2)
    X[:] = -X  # same object, other content
    flipped = bootstrap_correlation(X, Y, "system", "spearman", n_resamples=70, seed=2)
    np.testing.assert_array_equal(flipped.distribution, -first.distribution)
    assert len(bs._STUDY_MEANS) >= 2
