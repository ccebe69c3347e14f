"""One kernel per coefficient (issue #16): every tau-b / tau-c, point estimate, batch, variant and
weighted bootstrap resample, comes from the same pair counts and the same formula, and agrees
with scipy (``kendalltau``, ``pearsonr``, ``spearmanr``) and with brute-force pair counting.

References: scipy.stats (independent implementations of the three coefficients and of their
p-values); an O(n^2) enumeration of the pairs written here from the definitions (Kendall 1945,
tau-b; Stuart 1953, tau-c); the expanded (explicitly repeated) data for the weighted kernel.
"""

from __future__ import annotations

import itertools
import math
import warnings

import numpy as np
import pytest
from scipy import stats

from nlgeval.correlation.bootstrap import resample_counts, resample_indices
from nlgeval.correlation.coefficients import (
    MIN_PAIRS,
    DegenerateInputWarning,
    batch_correlation,
    correlation,
)
from nlgeval.correlation.kendall import kendall_variant
from nlgeval.correlation.kendall.weighted import weighted_kendall_segment

TOL = 1e-12
SCIPY_VARIANT = {"kendall": "b", "kendall_c": "c"}
ALTERNATIVES = ("two-sided", "less", "greater")


def _close(a: float, b: float, tol: float = TOL) -> bool:
    return (math.isnan(a) and math.isnan(b)) or abs(a - b) <= tol


def brute_tau(x: list[float], y: list[float], variant: str) -> float:
    """tau-b / tau-c by enumerating every pair (Kendall 1945; Stuart 1953), NaN below 3 pairs."""
    n = len(x)
    c = d = tx = ty = 0
    for i, j in itertools.combinations(range(n), 2):
        sx = (x[i] > x[j]) - (x[i] < x[j])
        sy = (y[i] > y[j]) - (y[i] < y[j])
        tx += sx == 0
        ty += sy == 0
        c += sx * sy > 0
        d += sx * sy < 0
    tot = n * (n - 1) // 2
    if n < 3 or tx == tot or ty == tot:
        return math.nan
    if variant == "kendall":
        return (c - d) / math.sqrt((tot - tx) * (tot - ty))
    k = min(len(set(x)), len(set(y)))
    return 2 * (c - d) / (n * n * (k - 1) / k)


def scipy_ref(x: np.ndarray, y: np.ndarray, coefficient: str) -> float:
    """scipy's coefficient on the complete pairs; NaN under nlgeval's rule (n < 3, constant)."""
    ok = np.isfinite(x) & np.isfinite(y)
    x, y = x[ok], y[ok]
    if x.size < MIN_PAIRS or np.ptp(x) == 0 or np.ptp(y) == 0:
        return math.nan
    if coefficient == "pearson":
        return float(stats.pearsonr(x, y).statistic)
    if coefficient == "spearman":
        return float(stats.spearmanr(x, y).statistic)
    return float(stats.kendalltau(x, y, variant=SCIPY_VARIANT[coefficient]).statistic)


def _case(kind: str, n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """One random (x, y) of the given kind."""
    if kind == "continuous":
        x = rng.normal(size=n)
        y = 0.5 * x + rng.normal(size=n)
    elif kind == "heavy_ties":
        x = rng.integers(0, 3, n).astype(float)
        y = np.round(x + rng.normal(size=n))
    elif kind == "integers":  # large integer-valued scores (e.g. counts)
        x = rng.integers(-10**6, 10**6, n).astype(float)
        y = x + rng.integers(-10**6, 10**6, n)
    elif kind == "nans":
        x = np.round(rng.normal(size=n), 1)
        y = np.round(x + rng.normal(size=n), 1)
        x[rng.random(n) < 0.2] = np.nan
        y[rng.random(n) < 0.2] = np.nan
    elif kind == "constant":
        x = np.full(n, 2.5)
        y = rng.normal(size=n)
    else:  # "one_value_left": a single non-tied value in a constant vector
        x = np.zeros(n)
        x[rng.integers(max(n, 1)):][:1] = 1.0
        y = rng.integers(0, 2, n).astype(float)
    return x, y


KINDS = ("continuous", "heavy_ties", "integers", "nans", "constant", "one_value_left")


# ----------------------------------------------------------------------------- brute force
@pytest.mark.parametrize("coefficient", ["kendall", "kendall_c"])
def test_tiny_cases_equal_brute_force_pair_counts(coefficient: str) -> None:
    rng = np.random.default_rng(20261123)
    cases = [([1, 2, 3], [1, 3, 2]), ([1, 1, 2, 2], [1, 2, 1, 2]),
             ([3, 1, 2, 2, 5], [1, 1, 1, 2, 3]), ([1, 2], [2, 1]), ([4, 4, 4], [1, 2, 3])]
    for _ in range(60):
        n = int(rng.integers(0, 9))
        cases.append((rng.integers(0, 4, n).tolist(), rng.integers(0, 3, n).tolist()))
    for x, y in cases:
        want = brute_tau([float(v) for v in x], [float(v) for v in y], coefficient)
        got = float(batch_correlation(np.array(x, float), np.array(y, float), coefficient))
        assert _close(got, want), (x, y, got, want)


# ----------------------------------------------------------------------------- kernel vs scipy
@pytest.mark.parametrize("coefficient", ["pearson", "spearman", "kendall", "kendall_c"])
@pytest.mark.parametrize("n", [0, 1, 2, 3, 5, 17, 40, 41, 150, 2500])
def test_batch_kernel_equals_scipy_1d_and_batched(coefficient: str, n: int) -> None:
    rng = np.random.default_rng([n, len(coefficient)])
    reps = 2 if n > 500 else 6
    rows = [_case(kind, n, rng) for kind in KINDS for _ in range(reps)]
    X = np.array([r[0] for r in rows]).reshape(len(rows), n)
    Y = np.array([r[1] for r in rows]).reshape(len(rows), n)
    batched = batch_correlation(X, Y, coefficient)
    half = len(rows) // 2
    stacked = batch_correlation(X.reshape(2, half, n), Y.reshape(2, half, n), coefficient)
    for b, (x, y) in enumerate(rows):
        want = scipy_ref(x, y, coefficient)
        one = float(batch_correlation(x, y, coefficient))
        assert _close(one, want), (coefficient, n, KINDS[b // reps], one, want)
        assert _close(float(batched[b]), one, 0.0)  # 1-D and batched: the same number
        assert _close(float(stacked.ravel()[b]), one, 0.0)


def test_degenerate_rule_is_the_same_everywhere() -> None:
    """n < 3 or a constant variable: NaN in the point estimate, the batch and the bootstrap."""
    assert MIN_PAIRS == 3
    for coefficient in ("pearson", "spearman", "kendall", "kendall_c"):
        assert np.isnan(batch_correlation([1.0, 2.0], [2.0, 1.0], coefficient))
        assert np.isnan(batch_correlation([1.0, 2.0, np.nan], [2.0, 1.0, 3.0], coefficient))
        assert np.isnan(batch_correlation([1.0, 1.0, 1.0], [2.0, 1.0, 3.0], coefficient))
        with pytest.warns(DegenerateInputWarning):
            assert math.isnan(correlation([1.0, 2.0], [2.0, 1.0], coefficient).statistic)
    # the bootstrap kernel: a resample of 2 cells, and one with a constant metric
    X = np.array([[1.0, 2.0], [3.0, 3.0]])
    Y = np.array([[1.0, 3.0], [2.0, 4.0]])
    for variant in ("tau_b", "tau_c"):
        two = weighted_kendall_segment(X, Y, np.array([[1.0, 0.0]]), np.ones((1, 2)), variant)
        const = weighted_kendall_segment(X, Y, np.array([[0.0, 3.0]]), np.ones((1, 2)), variant)
        assert np.isnan(two[0]) and np.isnan(const[0])
    # the MTME variants are defined from 2 values on (documented exception), like scipy
    assert kendall_variant([1.0, 2.0], [2.0, 1.0], "tau_b").statistic == -1.0


# ----------------------------------------------------------------------------- point estimates
@pytest.mark.parametrize("coefficient", ["pearson", "spearman", "kendall", "kendall_c"])
@pytest.mark.parametrize("alternative", ALTERNATIVES)
def test_point_estimate_statistic_and_pvalue_equal_scipy(coefficient: str,
                                                         alternative: str) -> None:
    rng = np.random.default_rng([7, len(coefficient), len(alternative)])
    for n in (3, 4, 10, 30, 34, 200, 1500):
        for kind in ("continuous", "heavy_ties", "integers", "nans"):
            x, y = _case(kind, n, rng)
            ok = np.isfinite(x) & np.isfinite(y)
            if ok.sum() < 3 or np.ptp(x[ok]) == 0 or np.ptp(y[ok]) == 0:
                continue
            if coefficient == "pearson":
                ref = stats.pearsonr(x[ok], y[ok], alternative=alternative)
            elif coefficient == "spearman":
                ref = stats.spearmanr(x[ok], y[ok], alternative=alternative)
            else:
                ref = stats.kendalltau(x[ok], y[ok], variant=SCIPY_VARIANT[coefficient],
                                       alternative=alternative)
            res = correlation(x, y, coefficient, alternative=alternative)
            assert res.statistic == pytest.approx(float(ref.statistic), rel=TOL, abs=TOL)
            assert res.pvalue == pytest.approx(float(ref.pvalue), rel=TOL, abs=TOL)
            assert res.n == int(ok.sum()) and res.n_missing == n - int(ok.sum())
            # the point estimate is the batch kernel's number on the complete pairs, bit for
            # bit (with the NaNs masked in place: the same up to the order of float sums)
            assert res.statistic == float(batch_correlation(x[ok], y[ok], coefficient))
            masked = float(batch_correlation(x, y, coefficient))
            assert res.statistic == pytest.approx(masked, rel=TOL, abs=TOL)


def test_point_estimate_equals_the_kendall_variants_and_their_counts() -> None:
    rng = np.random.default_rng(11)
    for n in (3, 12, 41, 300):
        x, y = _case("heavy_ties", n, rng)
        for coefficient, variant in (("kendall", "tau_b"), ("kendall_c", "tau_c")):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", DegenerateInputWarning)
                point = correlation(x, y, coefficient).statistic
            assert _close(point, kendall_variant(x, y, variant).statistic, 0.0)


# ----------------------------------------------------------------------------- weighted kernel
@pytest.mark.parametrize("variant", ["tau_b", "tau_c"])
@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_weighted_kernel_equals_kernel_on_repeated_data_exactly(variant: str, seed: int) -> None:
    rng = np.random.default_rng([seed, 99])
    S, n_items = int(rng.integers(2, 7)), int(rng.integers(3, 30))
    Y = rng.integers(0, 4, (S, n_items)).astype(float)
    X = np.round(Y + rng.normal(size=(S, n_items)), int(rng.integers(0, 2)))
    X[rng.random((S, n_items)) < 0.1] = np.nan
    if seed == 3:
        X[0] = 1.0  # a constant system: resamples of it alone are constant
    si, ii = resample_indices(S, n_items, 80, "both", seed)
    ws, wi = resample_counts(si, S), resample_counts(ii, n_items)
    ws[:5] *= 3  # multiplicities beyond a bootstrap's, and whole systems left out
    got = weighted_kendall_segment(X, Y, ws, wi, variant)
    coefficient = "kendall" if variant == "tau_b" else "kendall_c"
    for b in range(ws.shape[0]):
        w = np.outer(ws[b], wi[b]).ravel().astype(int)
        xs, ys = np.repeat(X.ravel(), w), np.repeat(Y.ravel(), w)
        want = float(batch_correlation(xs, ys, coefficient))
        assert _close(float(got[b]), want, 0.0), (b, got[b], want)  # exactly
        assert _close(want, scipy_ref(xs, ys, coefficient))
