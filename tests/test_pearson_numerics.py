"""Pearson at extreme magnitudes: every Pearson kernel agrees with scipy's ``pearsonr``.

scipy centres and scales the data before summing (``scipy.stats.pearsonr``), so its r does not
depend on the magnitude of the values; before nlgeval did the same, x = 1e90 * [0,0,0,1,1,1,1]
against y = 1e90 * [0..6] gave r = 0.0 (the product of the two sums of squares overflowed) and
values near 1e200 or 1e-200 gave NaN with a "zero variance" warning. The references here are
scipy's ``pearsonr`` on the same vectors (the point estimate, each level's vectors, every
explicit bootstrap resample and every swapped matrix of a PERM-BOTH test), and the same kernel
on the same data at magnitude 1 (nlgeval scales by a power of two, which is exact).
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from scipy import stats

from nlgeval.correlation.bootstrap import bootstrap_distribution, resample_indices
from nlgeval.correlation.coefficients import (
    DegenerateInputWarning,
    batch_correlation,
    correlation,
)
from nlgeval.correlation.levels import level_correlation, level_statistic, system_means
from nlgeval.correlation.permutation.compare import _permutation_draws, permutation_test
from nlgeval.correlation.permutation.draws import swap_masks

TOL = 1e-12
SCALES = (1e90, 1e200, 1e300, 1e-200, 1e-300, 1e-310)


def test_issue_case_equals_scipy() -> None:
    x = 1e90 * np.array([0, 0, 0, 1, 1, 1, 1.0])
    y = 1e90 * np.arange(7.0)
    ref = stats.pearsonr(x, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error", DegenerateInputWarning)
        res = correlation(x, y)
    assert res.statistic == pytest.approx(ref.statistic, abs=TOL)
    assert res.statistic == pytest.approx(math.sqrt(3) / 2, abs=TOL)  # closed form
    assert res.pvalue == pytest.approx(ref.pvalue, rel=1e-9)
    assert float(batch_correlation(x, y)) == pytest.approx(ref.statistic, abs=TOL)


@pytest.mark.parametrize("scale", SCALES)
def test_point_and_batch_at_extreme_scales(scale: float) -> None:
    rng = np.random.default_rng(1)
    a = rng.normal(size=30)
    b = a + rng.normal(size=30)
    ref = stats.pearsonr(a * scale, b * scale).statistic
    with warnings.catch_warnings():
        warnings.simplefilter("error", DegenerateInputWarning)
        assert correlation(a * scale, b * scale).statistic == pytest.approx(ref, abs=TOL)
        # one variable extreme, the other at magnitude 1
        assert correlation(a * scale, b).statistic == pytest.approx(
            stats.pearsonr(a, b).statistic, abs=TOL)
    stack = np.stack([a * scale, a * 1e-3, a])
    got = batch_correlation(stack, np.stack([b * scale, b, b * 1e300]))
    assert np.allclose(got, stats.pearsonr(a, b).statistic, atol=TOL, rtol=0)


@pytest.mark.parametrize("scale", (1e200, 1e-200))
@pytest.mark.parametrize("level", ("system", "segment", "item", "system-grouped"))
def test_levels_at_extreme_scales(scale: float, level: str) -> None:
    rng = np.random.default_rng(2)
    H = rng.normal(size=(6, 9))
    X = H + rng.normal(size=(6, 9))
    if level == "system":
        mx, my = system_means(X * scale, H * scale)
        ref = stats.pearsonr(mx, my).statistic
    elif level == "segment":
        ref = stats.pearsonr((X * scale).ravel(), (H * scale).ravel()).statistic
    else:
        A, B = (X * scale, H * scale) if level == "item" else ((X * scale).T, (H * scale).T)
        ref = np.mean([stats.pearsonr(A[:, i], B[:, i]).statistic for i in range(A.shape[1])])
    assert float(level_statistic(X * scale, H * scale, level, "pearson")) == pytest.approx(
        ref, abs=TOL)
    with warnings.catch_warnings():
        warnings.simplefilter("error", DegenerateInputWarning)
        res = level_correlation(X * scale, H * scale, level, n_resamples=0)
    assert res.statistic == pytest.approx(ref, abs=TOL)


def _explicit_bootstrap(X: np.ndarray, Y: np.ndarray, level: str, si: np.ndarray,
                        ii: np.ndarray) -> np.ndarray:
    """scipy's pearsonr on every explicitly gathered resample (the definition)."""
    out = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for b in range(si.shape[0]):
            Xs, Ys = X[si[b]][:, ii[b]], Y[si[b]][:, ii[b]]
            if level == "segment":
                out.append(stats.pearsonr(Xs.ravel(), Ys.ravel()).statistic)
            elif level == "system":
                out.append(stats.pearsonr(Xs.mean(axis=1), Ys.mean(axis=1)).statistic)
            else:
                per = [stats.pearsonr(Xs[:, i], Ys[:, i]).statistic for i in range(Xs.shape[1])
                       if np.ptp(Xs[:, i]) > 0 and np.ptp(Ys[:, i]) > 0]
                out.append(np.mean(per) if per else math.nan)
    return np.array(out)


@pytest.mark.parametrize("scale", (1e90, 1e200, 1e-200))
@pytest.mark.parametrize("level", ("segment", "system", "item"))
def test_bootstrap_kernel_at_extreme_scales(scale: float, level: str) -> None:
    rng = np.random.default_rng(3)
    H = rng.normal(size=(5, 7))
    X = H + rng.normal(size=(5, 7))
    si, ii = resample_indices(5, 7, 40, "both", seed=4)
    got = bootstrap_distribution(X * scale, H * scale, level, "pearson", si, ii)
    ref = _explicit_bootstrap(X * scale, H * scale, level, si, ii)
    assert np.isfinite(got).sum() == np.isfinite(ref).sum() > 30
    assert np.allclose(got, ref, atol=1e-10, rtol=0, equal_nan=True)


@pytest.mark.parametrize("scale", (1e200, 1e-200))
@pytest.mark.parametrize("level", ("segment", "system", "item"))
def test_perm_both_kernel_at_extreme_scales(scale: float, level: str) -> None:
    rng = np.random.default_rng(5)
    H = rng.normal(size=(4, 6)) + 3.0
    A = H + rng.normal(size=(4, 6))
    B = H + 2 * rng.normal(size=(4, 6))
    masks = swap_masks((4, 6), 30, "both", 6)
    fast = _permutation_draws(A * scale, B * scale, H * scale, level, "pearson", masks)
    slow = _permutation_draws(A * scale, B * scale, H * scale, level, "pearson", masks,
                              fast=False)
    unit = _permutation_draws(A, B, H, level, "pearson", masks)
    for got, ref in ((fast, slow), (fast, unit)):
        assert got[0] == pytest.approx(ref[0], abs=TOL)
        assert np.allclose(got[2], ref[2], atol=TOL, rtol=0)
        assert np.allclose(got[3], ref[3], atol=TOL, rtol=0)
    if level == "segment":  # scipy on the swapped matrices (z-scored as the test does)
        for k in range(3):
            m = masks[k].astype(bool)
            za = (A - A.mean()) / A.std()
            zb = (B - B.mean()) / B.std()
            ref_a = stats.pearsonr(np.where(m, zb, za).ravel(), (H * scale).ravel()).statistic
            assert fast[2][k] == pytest.approx(ref_a, abs=TOL)
    res = permutation_test(A * scale, B * scale, H * scale, level, n_resamples=30, seed=6)
    assert np.isfinite(res.pvalue)


# ----------------------------------------------------------------------------- near-constant input
# One rule for every coefficient (issue 26): constant = all values equal, or a spread of at most
# CONSTANT_RTOL of the values' own magnitude. Scale-free, so a metric whose values on some items
# are 1e-318..1e-170 is not constant there for any coefficient.


def _tiny_item_study() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """8 systems x 12 items; metric values 1e-318..1e-170 on items 0-3, exactly constant on 4,
    numerically constant (rounding only) on 5, ordinary values elsewhere."""
    rng = np.random.default_rng(7)
    H = rng.normal(size=(8, 12))
    X = H + rng.normal(size=(8, 12))
    X[:, :4] = 10.0 ** rng.uniform(-318, -170, size=(8, 4))
    X[:, 4] = 0.25
    X[:, 5] = 0.3
    X[::2, 5] = 0.1 + 0.2  # 0.30000000000000004
    return X, H, np.array([True] * 4 + [False, False] + [True] * 6)


def test_every_coefficient_uses_the_same_items() -> None:
    X, H, expected = _tiny_item_study()
    item_sets = {}
    for coef in ("pearson", "spearman", "kendall", "kendall_c"):
        per_item = batch_correlation(X.T, H.T, coef)
        item_sets[coef] = np.isfinite(per_item)
        # the point estimate of each item agrees (defined or not) with the batch kernel
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DegenerateInputWarning)
            point = [correlation(X[:, i], H[:, i], coef).statistic for i in range(12)]
        assert np.array_equal(np.isfinite(point), item_sets[coef])
        res = level_correlation(X, H, "item", coef, n_resamples=0)
        assert res.n == expected.sum()
    for coef, used in item_sets.items():
        assert np.array_equal(used, expected), coef
    # scipy computes every coefficient on the tiny items (scale-free), and nlgeval equals it
    for i in range(4):
        assert batch_correlation(X[:, i], H[:, i], "pearson") == pytest.approx(
            stats.pearsonr(X[:, i], H[:, i]).statistic, abs=TOL)
        assert batch_correlation(X[:, i], H[:, i], "spearman") == pytest.approx(
            stats.spearmanr(X[:, i], H[:, i]).statistic, abs=TOL)
        assert batch_correlation(X[:, i], H[:, i], "kendall") == pytest.approx(
            stats.kendalltau(X[:, i], H[:, i]).statistic, abs=TOL)


def test_numerically_constant_is_constant_everywhere() -> None:
    from nlgeval.correlation.coefficients import near_constant
    from nlgeval.correlation.kendall import grouped_kendall, kendall_variant

    x = np.array([0.3, 0.1 + 0.2, 0.3, 0.3, 0.1 + 0.2])
    y = np.arange(5.0)
    assert np.ptp(x) > 0  # distinct floats ...
    assert bool(near_constant(x))  # ... that differ by rounding only
    assert not near_constant(np.array([1e-318, 1e-300, 1e-170]))
    assert not near_constant(np.array([1.0, 1.0 + 1e-12]))
    with pytest.warns(DegenerateInputWarning, match="numerically constant"):
        assert math.isnan(correlation(x, y, "spearman").statistic)
    # the Kendall variants count every pair as tied, as for an exactly constant metric
    const = np.full(5, 0.3)
    for variant in ("tau_b", "tau_23", "acc_23"):
        a = kendall_variant(x, y, variant).statistic
        b = kendall_variant(const, y, variant).statistic
        assert (math.isnan(a) and math.isnan(b)) or a == b
        X, H, _ = _tiny_item_study()
        Xc = X.copy()
        Xc[:, 5] = 0.3
        assert grouped_kendall(X, H, variant, "item").statistic == pytest.approx(
            grouped_kendall(Xc, H, variant, "item").statistic, abs=1e-15)


def test_perm_both_standardisation_is_scale_free() -> None:
    """z-scores (PERM-BOTH swaps z-scored metrics) do not overflow: data scaled by 2^700 (an
    exact scaling) give exactly the draws of the data themselves, for the Kendall variants and
    pairwise accuracy as for Pearson."""
    from nlgeval.correlation.kendall import kendall_permutation_test
    from nlgeval.correlation.pairwise import pairwise_accuracy_test

    rng = np.random.default_rng(8)
    H = rng.normal(size=(5, 6))
    A, B = H + rng.normal(size=H.shape), H + 2 * rng.normal(size=H.shape)
    big = 2.0 ** 700
    for test in (lambda a, b: kendall_permutation_test(a, b, H, "tau_b", "item",
                                                       n_resamples=25, seed=3),
                 lambda a, b: pairwise_accuracy_test(a, b, H, n_resamples=25, seed=3),
                 lambda a, b: permutation_test(a, b, H, "segment", n_resamples=25, seed=3)):
        ref, got = test(A, B), test(A * big, B)
        assert np.array_equal(ref.draws_a, got.draws_a) and np.array_equal(ref.draws_b,
                                                                            got.draws_b)


def test_item_bootstrap_uses_the_items_of_the_point_estimate() -> None:
    """The item-level Pearson bootstrap (weighted sums, each item centred and scaled on its own)
    keeps items whose values are tiny next to the others' and drops the numerically constant
    one, as the point kernel does on every explicitly gathered resample. (Here each tiny item's
    values lie within a factor of 10 of each other; a resample whose values are all 1e13 times
    smaller than its item's largest counts as constant in the sums -- see the kernel.)"""
    rng = np.random.default_rng(10)
    H = rng.normal(size=(8, 12))
    X = H + rng.normal(size=(8, 12))
    X[:, :4] = 10.0 ** rng.uniform(-300, -170, size=4) * rng.uniform(1, 10, size=(8, 4))
    X[:, 4] = 0.25
    X[:, 5] = 0.3
    X[::2, 5] = 0.1 + 0.2
    si, ii = resample_indices(8, 12, 40, "both", seed=9)
    got = bootstrap_distribution(X, H, "item", "pearson", si, ii)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        want = np.array([level_statistic(X[si[b]][:, ii[b]], H[si[b]][:, ii[b]], "item",
                                         "pearson") for b in range(40)])
    assert np.allclose(got, want, atol=1e-10, rtol=0, equal_nan=True)
    # the point estimate uses the tiny items 0-3 and not the constant items 4-5
    per_item = batch_correlation(X.T, H.T, "pearson")
    assert np.isfinite(per_item[:4]).all() and np.isnan(per_item[4:6]).all()
