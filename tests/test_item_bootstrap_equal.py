"""The compiled item-level bootstrap gives the numbers of the array path it replaced, bit for bit.

The reference is the previous code path, called directly: gather every resample as a
(B, S, I) stack and take :func:`nlgeval.correlation.levels.level_statistic` of it (ranks,
masked Pearson / Kendall pair counts, ``np.nanmean`` over the drawn items). Hundreds of random
cases: ties, integer scores, NaN cells, constant and near-constant items and systems, values
near 1e200 and 1e-200, every resampling scheme, item and system-grouped levels, Spearman,
Kendall tau-b and tau-c (and Pearson, whose path is unchanged).
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from nlgeval.correlation._item_bootstrap import fits, item_rank_bootstrap
from nlgeval.correlation.bootstrap import bootstrap_distribution, resample_indices
from nlgeval.correlation.levels import level_statistic

RANK_COEFFICIENTS = ("spearman", "kendall", "kendall_c")


def gathered(X: np.ndarray, Y: np.ndarray, sys_idx: np.ndarray, item_idx: np.ndarray,
             coefficient: str, chunk: int = 7) -> np.ndarray:
    """The previous item-level bootstrap: (b, S, I) stacks, ``level_statistic`` of each."""
    out = np.empty(sys_idx.shape[0])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        for b0 in range(0, sys_idx.shape[0], chunk):
            si = sys_idx[b0:b0 + chunk, :, None]
            ii = item_idx[b0:b0 + chunk, None, :]
            out[b0:b0 + chunk] = level_statistic(X[si, ii], Y[si, ii], "item", coefficient)
    return out


def random_case(rng: np.random.Generator, kind: int, S: int, n_it: int
                ) -> tuple[np.ndarray, np.ndarray]:
    """Metric and human matrices of one of 8 kinds of awkward data."""
    Y = rng.integers(1, 6, size=(S, n_it)).astype(float)  # human ratings: many ties
    if kind == 0:  # continuous, independent
        X, Y = rng.normal(size=(S, n_it)), rng.normal(size=(S, n_it))
    elif kind == 1:  # integer scores on both sides
        X = rng.integers(0, 3, size=(S, n_it)).astype(float)
    elif kind == 2:  # near 1e200 / 1e-200
        X = rng.normal(size=(S, n_it)) * 1e200
        Y = (Y + rng.normal(size=(S, n_it))) * 1e-200
    elif kind == 3:  # near-constant items (differ by rounding), some exactly constant
        X = 0.3 + rng.integers(0, 2, size=(S, n_it)) * 5e-17
        X[:, ::3] = Y[:, ::3] + rng.normal(size=(S, (n_it + 2) // 3))
    elif kind == 4:  # missing cells on both sides
        X = Y + rng.normal(size=(S, n_it))
        X[rng.random((S, n_it)) < 0.2] = np.nan
        Y[rng.random((S, n_it)) < 0.15] = np.nan
    elif kind == 5:  # constant systems and items, tiny values (1e-318 .. 1e-170)
        X = np.repeat(rng.normal(size=(S, 1)), n_it, axis=1)
        X[:, ::2] = 1.0
        X[:, 1::4] = 10.0 ** rng.uniform(-318, -170, size=(S, len(range(1, n_it, 4))))
    elif kind == 6:  # correlated with ties in the metric
        X = np.round(Y + rng.normal(size=(S, n_it)), 1)
    else:  # signed zeros and a whole missing item / system
        X = rng.choice([-0.0, 0.0, 1.0, -1.0], size=(S, n_it))
        X[:, 0] = np.nan
        Y[-1, :] = np.nan
    return X, Y


@pytest.mark.parametrize("scheme", ["systems", "items", "both"])
def test_random_cases_equal_the_gathered_stacks(scheme: str) -> None:
    rng = np.random.default_rng({"systems": 1, "items": 2, "both": 3}[scheme])
    for case in range(100):
        S, n_it = int(rng.integers(2, 15)), int(rng.integers(1, 30))
        X, Y = random_case(rng, case % 8, S, n_it)
        si, ii = resample_indices(S, n_it, int(rng.integers(1, 40)), scheme, case)
        for coefficient in RANK_COEFFICIENTS:
            new = item_rank_bootstrap(X, Y, si, ii, coefficient)
            old = gathered(X, Y, si, ii, coefficient)
            assert np.array_equal(new, old, equal_nan=True), (scheme, case, coefficient)


def test_long_vectors_and_many_items() -> None:
    """More than 40 systems (the pair counts switch to sort + Fenwick), more than 32 (ranks
    switch from insertion sort), batches of 20,000+ values (compiled ranks instead of scipy),
    and more than 128 items (numpy's pairwise sum splits in halves)."""
    rng = np.random.default_rng(4)
    for case, (S, n_it, B) in enumerate([(45, 12, 40), (64, 9, 35), (12, 300, 9), (35, 140, 6),
                                      (3, 700, 5)]):
        X, Y = random_case(rng, case % 8, S, n_it)
        si, ii = resample_indices(S, n_it, B, "both", case)
        for coefficient in RANK_COEFFICIENTS:
            assert fits(S, S, n_it, coefficient)
            new = item_rank_bootstrap(X, Y, si, ii, coefficient)
            old = gathered(X, Y, si, ii, coefficient, chunk=B)
            assert np.array_equal(new, old, equal_nan=True), (S, n_it, coefficient)


@pytest.mark.parametrize("level", ["item", "system-grouped"])
def test_bootstrap_distribution_keeps_its_numbers(level: str) -> None:
    """Through the public function (item and the transposed system-grouped level), for every
    coefficient; Pearson, whose item level comes from resample counts, is unchanged."""
    rng = np.random.default_rng(5)
    for case in range(24):
        S, n_it = int(rng.integers(3, 12)), int(rng.integers(3, 25))
        X, Y = random_case(rng, case % 8, S, n_it)
        si, ii = resample_indices(S, n_it, 30, ("systems", "items", "both")[case % 3], case)
        for coefficient in (*RANK_COEFFICIENTS, "pearson"):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)
                new = bootstrap_distribution(X, Y, level, coefficient, si, ii)
            if coefficient == "pearson":  # the counts path, not a gather
                from nlgeval.correlation.bootstrap import _pearson_in_blocks

                Xl, Yl = (X.T, Y.T) if level == "system-grouped" else (X, Y)
                sil, iil = (ii, si) if level == "system-grouped" else (si, ii)
                old = _pearson_in_blocks(Xl, Yl, "item", sil, iil)
            elif level == "system-grouped":
                old = gathered(X.T, Y.T, ii, si, coefficient)
            else:
                old = gathered(X, Y, si, ii, coefficient)
            assert np.array_equal(new, old, equal_nan=True), (level, case, coefficient)


def test_vectors_too_long_for_the_kernel_take_the_gathered_path() -> None:
    """Kendall on more than 64 systems is not enumerated pair by pair: the array path runs,
    and gives its own numbers (the guard is not a silent change of method)."""
    rng = np.random.default_rng(6)
    X, Y = random_case(rng, 6, 70, 4)
    si, ii = resample_indices(70, 4, 6, "both", 0)
    assert not fits(70, 70, 4, "kendall")
    assert fits(70, 70, 4, "spearman")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        new = bootstrap_distribution(X, Y, "item", "kendall", si, ii)
    assert np.array_equal(new, gathered(X, Y, si, ii, "kendall"), equal_nan=True)


def test_the_comparison_can_fail() -> None:
    """A one-ulp change of one metric value on a tie changes the reference's ranks, and the
    kernel sees it too: the equality above is not vacuous."""
    X = np.array([[1.0, 2.0], [1.0, 1.0], [3.0, 0.5], [2.0, 4.0]])
    Y = np.array([[1.0, 3.0], [2.0, 1.0], [3.0, 2.0], [4.0, 4.0]])
    si, ii = resample_indices(4, 2, 20, "both", 0)
    a = item_rank_bootstrap(X, Y, si, ii, "spearman")
    X2 = X.copy()
    X2[1, 0] = np.nextafter(1.0, 2.0)
    b = item_rank_bootstrap(X2, Y, si, ii, "spearman")
    assert not np.array_equal(a, b, equal_nan=True)
    assert np.array_equal(b, gathered(X2, Y, si, ii, "spearman"), equal_nan=True)


@pytest.mark.parametrize("scheme", ["systems", "items", "both"])
def test_system_level_spearman_equals_ranking_the_batch(scheme: str) -> None:
    """The compiled system-level Spearman bootstrap against the previous path (the drawn
    systems' rows of the resampled means, ranked by ``batch_correlation``) and against the
    gathered stacks' ``level_statistic``."""
    from nlgeval.correlation._resampled_means import _resampled_system_means
    from nlgeval.correlation.coefficients import batch_correlation

    rng = np.random.default_rng({"systems": 7, "items": 8, "both": 9}[scheme])
    for case in range(80):
        S = int(rng.integers(2, 40)) if case % 10 else 45
        n_it = int(rng.integers(1, 25))
        X, Y = random_case(rng, case % 8, S, n_it)
        if case % 8 == 1:  # equal system means are common with integer scores
            X[:, :] = rng.integers(0, 2, size=(S, 1))
        si, ii = resample_indices(S, n_it, int(rng.integers(1, 40)), scheme, case)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            new = bootstrap_distribution(X, Y, "system", "spearman", si, ii)
            mx, my = _resampled_system_means(X, Y, ii)
            rows = np.arange(si.shape[0])[:, None]
            old = batch_correlation(mx[rows, si], my[rows, si], "spearman")
            stacked = level_statistic(X[si[:, :, None], ii[:, None, :]],
                                      Y[si[:, :, None], ii[:, None, :]], "system", "spearman")
        assert np.array_equal(new, old, equal_nan=True), (scheme, case)
        assert np.array_equal(new, stacked, equal_nan=True), (scheme, case)


def test_resampled_system_means_equal_the_gathered_sums() -> None:
    """The compiled resampled system means against the previous numpy expression (the
    (b, S, I) gather, ``sum(axis=-1) / cnt``), including rows of more than 128 and more
    than 8,192 items (numpy's pairwise summation and its blocks)."""
    from nlgeval.correlation._resampled_means import _system_means_of_resamples, resample_counts

    rng = np.random.default_rng(10)
    for case, (S, n_it, B) in enumerate([(11, 100, 50), (5, 7, 30), (3, 300, 20),
                                         (2, 9000, 3), (6, 1, 10), (14, 129, 12)]):
        X, _ = random_case(rng, case % 8, S, n_it)
        ok = np.isfinite(X) & (rng.random((S, n_it)) > 0.1)
        Zz = np.where(ok, X, 0.0)
        _, ii = resample_indices(S, n_it, B, "both", case)
        new = _system_means_of_resamples(Zz, ok, ii)
        cnt = resample_counts(ii, n_it) @ ok.T.astype(float)
        with np.errstate(invalid="ignore", divide="ignore"):
            old = Zz[np.arange(S)[None, :, None], ii[:, None, :]].sum(axis=-1) / cnt
        old = np.where(cnt > 0, old, np.nan)
        assert np.array_equal(new, old, equal_nan=True), (S, n_it)
