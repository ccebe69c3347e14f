"""The ``system-grouped`` level (MTME ``average_by="sys"``): within each system, then the mean."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from nlgeval.correlation import bootstrap_correlation, level_correlation, level_statistic


def _data(seed=5, S=5, n_items=12):
    rng = np.random.default_rng(seed)
    Y = rng.normal(size=(S, n_items))
    X = Y + rng.normal(size=(S, n_items))
    X[1, 3] = np.nan
    Y[2, 7] = np.nan
    return X, Y


@pytest.mark.parametrize("coef", ["pearson", "spearman", "kendall"])
def test_mean_of_per_system_scipy_coefficients(coef):
    X, Y = _data()
    fn = {"pearson": stats.pearsonr, "spearman": stats.spearmanr,
          "kendall": stats.kendalltau}[coef]
    per = []
    for s in range(X.shape[0]):
        ok = np.isfinite(X[s]) & np.isfinite(Y[s])
        per.append(fn(X[s, ok], Y[s, ok]).statistic)
    want = float(np.mean(per))
    assert float(level_statistic(X, Y, "system-grouped", coef)) == pytest.approx(want, abs=1e-12)
    res = level_correlation(X, Y, "system-grouped", coef, n_resamples=50, seed=1)
    assert res.level == "system-grouped" and res.n == X.shape[0]
    assert res.statistic == pytest.approx(want, abs=1e-12)
    assert 0 < res.pvalue <= 1


def test_bootstrap_is_the_item_level_of_the_transpose():
    X, Y = _data()
    a = bootstrap_correlation(X, Y, "system-grouped", "pearson", n_resamples=200, seed=3)
    # the same draws, with the roles of systems and items swapped, on the transposed matrices
    from nlgeval.correlation import bootstrap_distribution, resample_indices

    si, ii = resample_indices(X.shape[0], X.shape[1], 200, "both", 3)
    b = bootstrap_distribution(X.T, Y.T, "item", "pearson", ii, si)
    np.testing.assert_allclose(a.distribution, b, rtol=0, atol=1e-12)
    # and equal to recomputing the statistic on each explicitly gathered resample
    for k in range(5):
        sub_x, sub_y = X[si[k]][:, ii[k]], Y[si[k]][:, ii[k]]
        want = float(level_statistic(sub_x, sub_y, "system-grouped", "pearson"))
        assert a.distribution[k] == pytest.approx(want, abs=1e-10)
