"""Rank-coefficient bootstraps from integer weights == scipy on the expanded resamples."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from nlgeval.correlation.bootstrap import resample_counts, resample_indices
from nlgeval.correlation.kendall.weighted import weighted_kendall_segment


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize(("variant", "scipy_variant"), [("tau_b", "b"), ("tau_c", "c")])
def test_equals_scipy_on_expanded_resamples(seed, variant, scipy_variant):
    rng = np.random.default_rng(seed)
    S, n_items = 5, 9
    Y = rng.integers(0, 4, size=(S, n_items)).astype(float)  # many ties
    X = np.round(Y + rng.normal(size=(S, n_items)))
    X[rng.random((S, n_items)) < 0.15] = np.nan
    si, ii = resample_indices(S, n_items, 60, "both", seed)
    got = weighted_kendall_segment(X, Y, resample_counts(si, S), resample_counts(ii, n_items),
                                   variant)
    for b in range(60):
        xs, ys = X[si[b]][:, ii[b]].ravel(), Y[si[b]][:, ii[b]].ravel()
        ok = np.isfinite(xs) & np.isfinite(ys)
        want = stats.kendalltau(xs[ok], ys[ok], variant=scipy_variant).statistic
        if np.isnan(want):
            assert np.isnan(got[b])
        else:
            assert got[b] == pytest.approx(want, abs=1e-12)


def test_constant_resample_is_nan():
    X = np.array([[1.0, 1.0], [1.0, 1.0]])
    Y = np.array([[1.0, 2.0], [3.0, 4.0]])
    got = weighted_kendall_segment(X, Y, np.ones((1, 2)), np.ones((1, 2)))
    assert np.isnan(got[0])


def _tied_matrices(seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    S, n_items = 6, 11
    Y = rng.integers(0, 4, size=(S, n_items)).astype(float) / 3  # many ties, inexact means
    X = np.round(Y * 3 + rng.normal(size=(S, n_items)))
    X[rng.random((S, n_items)) < 0.15] = np.nan
    return X, Y


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_weighted_spearman_equals_scipy_on_expanded_resamples(seed):
    from nlgeval.correlation.kendall.weighted import weighted_spearman_segment

    X, Y = _tied_matrices(seed)
    S, n_items = X.shape
    si, ii = resample_indices(S, n_items, 60, "both", seed)
    got = weighted_spearman_segment(X, Y, resample_counts(si, S), resample_counts(ii, n_items))
    for b in range(60):
        xs, ys = X[si[b]][:, ii[b]].ravel(), Y[si[b]][:, ii[b]].ravel()
        ok = np.isfinite(xs) & np.isfinite(ys)
        if ok.sum() < 3 or np.ptp(xs[ok]) == 0 or np.ptp(ys[ok]) == 0:
            assert np.isnan(got[b])
        else:
            assert got[b] == pytest.approx(stats.spearmanr(xs[ok], ys[ok]).statistic, abs=1e-12)


@pytest.mark.parametrize("coef", ["spearman", "kendall", "kendall_c"])
def test_system_level_rank_bootstrap_is_bitwise_the_stacked_resamples(coef):
    """Resampled means per distinct system == system means of the gathered (B, S, I) stack,
    bit for bit, so ties between systems (equal means in exact arithmetic) rank the same."""
    from nlgeval.correlation.bootstrap import bootstrap_distribution
    from nlgeval.correlation.levels import level_statistic

    X, Y = _tied_matrices(5)
    si, ii = resample_indices(*X.shape, 200, "both", 3)
    got = bootstrap_distribution(X, Y, "system", coef, si, ii)
    want = level_statistic(X[si[:, :, None], ii[:, None, :]], Y[si[:, :, None], ii[:, None, :]],
                           "system", coef)
    np.testing.assert_array_equal(got, want)


def test_rank_kernels_do_not_depend_on_the_number_of_threads():
    import numba

    from nlgeval.correlation.kendall.weighted import weighted_spearman_segment

    X, Y = _tied_matrices(7)
    si, ii = resample_indices(*X.shape, 300, "both", 0)
    ws, wi = resample_counts(si, X.shape[0]), resample_counts(ii, X.shape[1])
    before = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        one = (weighted_kendall_segment(X, Y, ws, wi), weighted_spearman_segment(X, Y, ws, wi))
        numba.set_num_threads(numba.config.NUMBA_NUM_THREADS)
        many = (weighted_kendall_segment(X, Y, ws, wi), weighted_spearman_segment(X, Y, ws, wi))
    finally:
        numba.set_num_threads(before)
    for a, b in zip(one, many, strict=True):
        np.testing.assert_array_equal(a, b)
