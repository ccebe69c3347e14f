"""Pearson's and Spearman's p-values under each alternative, == scipy's, for both signs of r.

:func:`nlgeval.correlation.coefficients.pearson_pvalue` (the exact beta null distribution,
Pearson 1896; Fisher 1915) and :func:`~nlgeval.correlation.coefficients.spearman_pvalue` (the
t approximation, Spearman 1904) take their tails through one three-way branch; the reference is
``scipy.stats.pearsonr`` / ``spearmanr`` with the same ``alternative``, compared with ``==``.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from scipy import stats

from nlgeval.correlation.coefficients import (
    correlation,
    near_constant,
    pearson_pvalue,
    spearman_pvalue,
)

ALTERNATIVES = ("two-sided", "less", "greater")


def _pair(rng: np.random.Generator, kind: int, n: int, sign: float
          ) -> tuple[np.ndarray, np.ndarray]:
    """Paired values whose correlation has the sign of ``sign`` (or is about 0 / +-1)."""
    x = rng.normal(size=n)
    noise = rng.normal(size=n)
    if kind == 0:  # clear correlation
        y = sign * x + 0.5 * noise
    elif kind == 1:  # weak correlation, r near 0 of either sign
        y = sign * 0.05 * x + noise
    elif kind == 2:  # exact linear relation: r = +-1
        y = sign * 3.0 * x + 1.0
    elif kind == 3:  # heavy ties (integer ratings)
        x = np.round(x * 1.5)
        y = np.round(sign * x + noise)
    elif kind == 4:  # magnitudes near 1e200 and 1e-200
        x, y = x * 1e200, (sign * x + noise) * 1e-200
    else:
        x, y = x * 1e-200, (sign * x + noise) * 1e200
    return x, y


def _same(a: float, b: float) -> bool:
    return bool((np.isnan(a) and np.isnan(b)) or a == b)


@pytest.mark.parametrize("alternative", ALTERNATIVES)
def test_pvalues_equal_scipy_for_both_signs(alternative: str) -> None:
    rng = np.random.default_rng(ALTERNATIVES.index(alternative))
    seen = {"pearson": set(), "spearman": set()}
    for k in range(360):
        n = int(rng.choice([3, 4, 5, 9, 30, 250]))
        x, y = _pair(rng, k % 6, n, 1.0 if k % 12 < 6 else -1.0)
        if near_constant(x) or near_constant(y):
            continue
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            p_ref = stats.pearsonr(x, y, alternative=alternative)
            s_ref = stats.spearmanr(x, y, alternative=alternative)
        p = pearson_pvalue(x, y, alternative)
        s = spearman_pvalue(stats.rankdata(x), stats.rankdata(y), alternative)
        assert _same(p, float(p_ref.pvalue)), (k, n, alternative)
        assert _same(s, float(s_ref.pvalue)), (k, n, alternative)
        seen["pearson"].add(float(np.sign(p_ref.statistic)))
        seen["spearman"].add(float(np.sign(s_ref.statistic)))
        # the public entry point passes the alternative through to the same numbers
        for name, ref in (("pearson", p_ref), ("spearman", s_ref)):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                assert _same(correlation(x, y, name, alternative=alternative).pvalue,
                             float(ref.pvalue)), (k, name)
    # both signs of r (and the tails that go with them) were exercised
    assert {-1.0, 1.0} <= seen["pearson"] and {-1.0, 1.0} <= seen["spearman"]


def test_one_sided_pvalues_are_the_two_tails() -> None:
    # a closed-form check independent of scipy's wrappers: for a strong positive r,
    # "greater" is small, "less" is near 1, and two-sided = 2 * min(tail) (symmetric null)
    x = np.arange(12.0)
    y = x + np.array([0.3, -0.2, 0.1, 0.4, -0.5, 0.2, -0.1, 0.3, -0.4, 0.1, 0.2, -0.3])
    for fun, args in ((pearson_pvalue, (x, y)),
                      (spearman_pvalue, (stats.rankdata(x), stats.rankdata(y)))):
        g, le, two = (fun(*args, alt) for alt in ("greater", "less", "two-sided"))
        assert g < 1e-6 and le > 1 - 1e-6
        assert two == pytest.approx(2 * g, rel=1e-12)
        # and with the sign of r flipped, the tails swap
        flipped = (args[0], -args[1]) if fun is pearson_pvalue else (
            args[0], stats.rankdata(-y))
        assert fun(*flipped, "less") == pytest.approx(g, rel=1e-12)
        assert fun(*flipped, "greater") == pytest.approx(le, rel=1e-12)


@pytest.mark.parametrize("fun", [pearson_pvalue, spearman_pvalue])
def test_unknown_alternative_raises_scipys_error(fun) -> None:
    x, y = np.array([1.0, 2.0, 3.0, 4.0]), np.array([1.0, 3.0, 2.0, 4.0])
    with pytest.raises(ValueError) as ref:
        stats.pearsonr(x, y, alternative="larger")
    with pytest.raises(ValueError) as got:
        fun(x, y, "larger")
    assert str(got.value) == str(ref.value)
