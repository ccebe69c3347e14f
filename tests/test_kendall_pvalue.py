"""Kendall's point p-values from nlgeval's pair counts (``kendall_pvalue``) against
``scipy.stats.kendalltau(...).pvalue`` itself (the reference, and the previous code path of
``correlation``), compared with ``==``: n = 2..60 around scipy's exact/asymptotic switch
(n <= 33 without ties), no ties, a few ties, many ties, one discordant pair, values near 1e200
and 1e-200, both variants (b and c share the p-value) and all three alternatives."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from scipy import stats

from nlgeval.correlation.coefficients import KENDALL_COUNTS_MAX, correlation, kendall_pvalue

ALTERNATIVES = ("two-sided", "less", "greater")


def _pair(rng: np.random.Generator, n: int, kind: str) -> tuple[np.ndarray, np.ndarray]:
    x = rng.normal(size=n)
    y = x + rng.normal(scale=rng.choice([0.1, 1.0, 5.0]), size=n)
    if kind == "ties":
        x, y = np.round(x * 2), np.round(y)
    elif kind == "few_ties":
        x[: n // 4] = x[0]
    elif kind == "many_ties":
        x, y = rng.integers(0, 3, n).astype(float), rng.integers(0, 2, n).astype(float)
    elif kind == "sorted":  # C or D of 0 or 1: scipy's other exact case
        x = np.sort(x)
        y = np.sort(y) if rng.random() < 0.5 else -np.sort(y)
        if n > 3 and rng.random() < 0.5:
            y[[1, 2]] = y[[2, 1]]
    scale = rng.choice([1.0, 1e200, 1e-200])
    return x * scale, y


def _scipy(x, y, variant, alternative):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return stats.kendalltau(x, y, variant=variant, alternative=alternative).pvalue


@pytest.mark.parametrize("kind", ["none", "few_ties", "ties", "many_ties", "sorted"])
def test_equals_scipy_bit_for_bit(kind: str) -> None:
    rng = np.random.default_rng(sum(map(ord, kind)))
    checked = 0
    for n in range(2, 61):
        for _ in range(3):
            x, y = _pair(rng, n, kind)
            for alternative in ALTERNATIVES:
                got = kendall_pvalue(x, y, alternative)
                for variant in ("b", "c"):
                    want = _scipy(x, y, variant, alternative)
                    assert (np.isnan(got) and np.isnan(want)) or got == want, \
                        (kind, n, alternative, variant, got, want)
                    checked += not np.isnan(want)
    assert checked > 500


def test_long_vectors_and_the_asymptotic_branch() -> None:
    rng = np.random.default_rng(1)
    for n in (34, 61, 200, 3000, 20_000):
        for kind in ("none", "ties", "many_ties"):
            x, y = _pair(rng, n, kind)
            for alternative in ALTERNATIVES:
                assert kendall_pvalue(x, y, alternative) == _scipy(x, y, "b", alternative)


def test_correlation_p_values_unchanged() -> None:
    """correlation()'s Kendall p-value is scipy's, as it was when scipy computed it, on both
    sides of the size up to which it comes from the pair counts."""
    rng = np.random.default_rng(2)
    for n in (3, 5, 20, 33, 34, 100, KENDALL_COUNTS_MAX, KENDALL_COUNTS_MAX + 1, 2000):
        for kind in ("none", "ties"):
            x, y = _pair(rng, n, kind)
            for coefficient, variant in (("kendall", "b"), ("kendall_c", "c")):
                for alternative in ALTERNATIVES:
                    got = correlation(x, y, coefficient, alternative=alternative).pvalue
                    assert got == float(_scipy(x, y, variant, alternative))


def test_constant_and_bad_alternative() -> None:
    x = np.array([1.0, 1.0, 1.0, 1.0])
    y = np.array([1.0, 2.0, 3.0, 4.0])
    assert np.isnan(kendall_pvalue(x, y)) and np.isnan(_scipy(x, y, "b", "two-sided"))
    with pytest.raises(ValueError, match="alternative"):
        kendall_pvalue(y, y, "bigger")
