"""Segment-level Kendall bootstrap from integer weights == scipy on the expanded resamples."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from nlgeval.correlation._kendall_weighted import weighted_kendall_segment
from nlgeval.correlation.bootstrap import resample_counts, resample_indices


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
