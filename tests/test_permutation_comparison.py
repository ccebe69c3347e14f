"""One result class for "metric A vs metric B" (issue #16): ``permutation_test`` returns a
``PermutationComparison`` (the old names ``PermutationResult`` and ``PairedPermutationResult``
are gone: nothing needed them at version 0.1.0).

The p-value, ``n_at_least`` and MTME's ``n_at_least / K`` are checked against a brute-force
enumeration of all 2^8 swaps with ``scipy.stats.pearsonr`` (Deutsch, Dror & Roth 2021,
PERM-BOTH; p = (1 + #) / (1 + K), Phipson & Smyth 2010), for each ``alternative``.
"""

from __future__ import annotations

import itertools
import json
import math

import numpy as np
import pytest
from scipy import stats

from nlgeval.correlation import (
    PermutationComparison,
    comparison_from_draws,
    pairwise_accuracy_test,
    permutation_test,
)
from nlgeval.errors import InputError
from nlgeval.results import dumps

#: The keys of ``permutation_test(...).to_dict()`` before the two classes were merged.
LEGACY_KEYS = {"statistic", "pvalue", "r_a", "r_b", "permutations", "scheme", "alternative",
               "seed", "statistic_a", "statistic_b"}


def _case() -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    A, B = rng.normal(size=(2, 4)), rng.normal(size=(2, 4))
    H = A + 0.3 * rng.normal(size=(2, 4))
    masks = np.array([np.array(bits, bool).reshape(2, 4)
                      for bits in itertools.product([0, 1], repeat=8)])
    return A, B, H, masks


def _brute_force(A: np.ndarray, B: np.ndarray, H: np.ndarray,
                 masks: np.ndarray) -> tuple[float, np.ndarray]:
    """Observed r(A) - r(B) and every swapped difference, with scipy's Pearson r."""
    def z(M: np.ndarray) -> np.ndarray:
        return (M - M.mean()) / M.std()

    def r(M: np.ndarray) -> float:
        return stats.pearsonr(M.ravel(), H.ravel())[0]

    za, zb = z(A), z(B)
    deltas = np.array([r(np.where(m, zb, za)) - r(np.where(m, za, zb)) for m in masks])
    return r(za) - r(zb), deltas


@pytest.mark.parametrize("alternative", ["two-sided", "greater", "less"])
def test_pvalue_and_counts_equal_exact_enumeration(alternative: str) -> None:
    A, B, H, masks = _case()
    obs, deltas = _brute_force(A, B, H, masks)
    tol = 1e-12
    extreme = {"two-sided": np.abs(deltas) >= abs(obs) - tol, "greater": deltas >= obs - tol,
               "less": deltas <= obs + tol}[alternative]
    hits, K = int(extreme.sum()), len(masks)
    res = permutation_test(A, B, H, "segment", masks=masks, alternative=alternative)
    assert isinstance(res, PermutationComparison)
    assert (res.alternative, res.permutations, res.name) == (alternative, K, "pearson")
    assert res.statistic == pytest.approx(obs)
    assert res.n_at_least == hits
    assert res.pvalue == pytest.approx((1 + hits) / (1 + K))
    np.testing.assert_allclose(res.draws_a - res.draws_b, deltas, atol=1e-12)
    if alternative == "two-sided":  # MTME's PermutationSigDiff is one-sided: no such number
        assert math.isnan(res.pvalue_mtme) and res.to_dict()["pvalue_mtme"] is None
    else:
        assert res.pvalue_mtme == pytest.approx(hits / K)
    assert 0 < hits < K  # the case separates the three alternatives


def test_less_is_greater_with_the_metrics_exchanged() -> None:
    A, B, H, _ = _case()
    less = permutation_test(A, B, H, "segment", n_resamples=300, seed=2, alternative="less")
    greater = permutation_test(B, A, H, "segment", n_resamples=300, seed=2,
                               alternative="greater")
    assert less.pvalue == greater.pvalue and less.n_at_least == greater.n_at_least
    assert less.pvalue_mtme == greater.pvalue_mtme == greater.n_at_least / 300
    np.testing.assert_array_equal(less.draws_a, greater.draws_b)


def test_one_class_old_names_and_legacy_keys() -> None:
    import nlgeval.correlation as corr

    assert not hasattr(corr, "PermutationResult") and not hasattr(corr, "PairedPermutationResult")
    A, B, H, _ = _case()
    res = permutation_test(A, B, H, "segment", n_resamples=40, seed=1)
    assert (res.r_a, res.r_b) == (res.statistic_a, res.statistic_b)
    assert res.statistic == res.r_a - res.r_b
    d = res.to_dict()
    assert LEGACY_KEYS <= set(d) and not {"draws_a", "draws_b"} & set(d)
    assert (d["r_a"], d["r_b"], d["seed"], d["scheme"]) == (res.r_a, res.r_b, 1, "both")
    assert json.loads(dumps(res))["r_a"] == res.r_a
    with pytest.raises(AttributeError):
        res.r_a = 0.0  # read-only: an alias of statistic_a
    # the other tests of the family carry the same keys
    pa = pairwise_accuracy_test(A, B, H, n_resamples=20, seed=0).to_dict()
    assert LEGACY_KEYS <= set(pa) and pa["r_a"] == pa["statistic_a"]


def test_comparison_from_draws_counts_the_draws() -> None:
    rng = np.random.default_rng(5)
    da, db = rng.normal(0.5, 0.2, 99), rng.normal(0.5, 0.2, 99)
    da[3] = np.nan  # a draw without a value is left out of K
    res = comparison_from_draws(0.62, 0.41, da, db)
    d = da - db
    hits = int(np.sum(d[np.isfinite(d)] >= 0.62 - 0.41 - 1e-12))
    assert res.n_at_least == hits and res.pvalue == (1 + hits) / 99
    assert res.pvalue_mtme == hits / 99 and res.alternative == "greater"


def test_unknown_alternative_is_an_input_error() -> None:
    A, B, H, _ = _case()
    with pytest.raises(InputError, match="alternative must be one of two-sided, greater"):
        permutation_test(A, B, H, "segment", n_resamples=10, alternative="larger")
