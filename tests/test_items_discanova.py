"""Discrete ANOVA (WRS2 discANOVA port) and chi-square homogeneity tests.

References used here (WRS2's own results, computed in R, are in test_items_wrs2_reference.py;
every number below is computed independently in this file):
* statistic: a literal transcription of WRS2's ``discANOVA.sub`` in exact rational arithmetic
  (``fractions.Fraction``) and a hand-worked case;
* p-value: exact enumeration of the parametric-bootstrap null (all multinomial outcomes of every
  group) with the mid-p rule, compared with the Monte Carlo p-value within 4 standard errors;
* chi-square: scipy.stats.chi2_contingency (asymptotic), brute-force enumeration of all group
  labelings and scipy's exact permutation test (exact), and the exact value (Monte Carlo).
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from nlgeval.errors import InputError
from nlgeval.items.chisquare import chi2_homogeneity, enumerate_two_group_tables
from nlgeval.items.discanova import (
    disc_anova,
    disc_anova_counts,
    disc_statistic,
    scaled_statistic,
)


def wrs2_statistic(groups: list[list[int]]) -> Fraction:
    """WRS2 discANOVA.sub, line by line, in exact arithmetic."""
    vals = sorted({v for g in groups for v in g})
    J = len(groups)
    total = Fraction(0)
    for v in vals:
        row = [Fraction(sum(1 for x in g if x == v), len(g)) for g in groups]
        mean = sum(row) / J
        total += sum((c - mean) ** 2 for c in row) / (J - 1)
    return total


def test_statistic_hand_worked() -> None:
    # shares: value 1: 2/3 vs 0; value 2: 1/3 vs 3/4; value 3: 0 vs 1/4; var of two = d^2 / 2
    expected = Fraction(4, 9) / 2 + Fraction(5, 12) ** 2 / 2 + Fraction(1, 4) ** 2 / 2
    assert expected == Fraction(98, 288)
    res = disc_anova([[1, 1, 2], [2, 2, 2, 3]], n_resamples=10, seed=0)
    assert res.statistic == pytest.approx(float(expected), abs=1e-15)
    assert res.categories == (1.0, 2.0, 3.0)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_statistic_matches_exact_transcription(seed: int) -> None:
    rng = np.random.default_rng(seed)
    groups = [list(rng.integers(1, 6, size=n)) for n in (7, 12, 5)]
    exact = wrs2_statistic(groups)
    res = disc_anova(groups, n_resamples=10, seed=0)
    assert res.statistic == pytest.approx(float(exact), rel=1e-13)
    counts = np.array([[g.count(v) for g in groups] for v in sorted({*sum(groups, [])})])
    q, div = scaled_statistic(counts, [len(g) for g in groups])
    assert Fraction(int(q), div) == exact  # integer scaling is exact


def test_null_is_unweighted_mean_of_shares() -> None:
    res = disc_anova({"a": [1, 1, 1, 2], "b": [1, 2, 2, 2, 2, 2, 2, 2]}, n_resamples=10, seed=0)
    # shares a: (3/4, 1/4), b: (1/8, 7/8): unweighted mean (7/16, 9/16); pooled would be 4/12
    np.testing.assert_allclose(res.null_probabilities, [7 / 16, 9 / 16])


def _multinomial_outcomes(n: int, k: int):
    for cut in itertools.combinations(range(n + k - 1), k - 1):
        bounds = (-1, *cut, n + k - 1)
        yield tuple(bounds[i + 1] - bounds[i] - 1 for i in range(k))


def exact_mid_p(groups: list[list[int]]) -> tuple[float, float]:
    """Exact mid-p of the parametric bootstrap and the SD of one bootstrap indicator."""
    vals = sorted({v for g in groups for v in g})
    K, J = len(vals), len(groups)
    sizes = [len(g) for g in groups]
    shares = [[Fraction(g.count(v), len(g)) for g in groups] for v in vals]
    h = [sum(r) / J for r in shares]
    t_obs = wrs2_statistic(groups)
    per_group = []
    for n in sizes:
        outs = []
        for x in _multinomial_outcomes(n, K):
            prob = Fraction(math.factorial(n))
            for xk, hk in zip(x, h, strict=True):
                prob *= hk**xk / math.factorial(xk)
            outs.append((x, prob))
        per_group.append(outs)
    greater = equal = Fraction(0)
    for combo in itertools.product(*per_group):
        prob = Fraction(1)
        for _, pr in combo:
            prob *= pr
        t = Fraction(0)
        for k in range(K):
            row = [Fraction(c[0][k], n) for c, n in zip(combo, sizes, strict=True)]
            mean = sum(row) / J
            t += sum((r - mean) ** 2 for r in row) / (J - 1)
        if t > t_obs:
            greater += prob
        elif t == t_obs:
            equal += prob
    p = greater + equal / 2
    second = greater + equal / 4
    return float(p), math.sqrt(float(second - p * p))


@pytest.mark.parametrize(
    "groups",
    [
        [[1, 1, 2, 3], [2, 3, 3, 3, 3]],  # many exact ties in the null
        [[1, 2, 2], [1, 1, 1, 2], [2, 2, 3]],  # three groups
        [[1, 1, 1, 1, 2], [2, 2, 2, 3, 3, 3]],  # small p
    ],
)
def test_pvalue_matches_exact_enumeration(groups: list[list[int]]) -> None:
    p_exact, sd = exact_mid_p(groups)
    nboot = 40_000
    res = disc_anova(groups, n_resamples=nboot, seed=11)
    assert abs(res.pvalue - p_exact) <= 4 * sd / math.sqrt(nboot) + 1e-12, (res.pvalue, p_exact)


def test_seeded_and_counts_interface() -> None:
    a = disc_anova([[1, 2, 2, 3], [1, 1, 3, 3, 3]], n_resamples=300, seed=5)
    b = disc_anova([[1, 2, 2, 3], [1, 1, 3, 3, 3]], n_resamples=300, seed=5)
    assert a.pvalue == b.pvalue
    c = disc_anova_counts(np.array([[1, 2], [2, 0], [1, 3], [0, 0]]), n_resamples=300, seed=5)
    assert c.statistic == pytest.approx(a.statistic)
    assert c.pvalue == a.pvalue
    assert set(a.to_dict()) >= {"statistic", "pvalue", "nboot"}


def test_dataframe_input_drops_missing_and_orders_levels() -> None:
    df = pd.DataFrame({"g": ["b", "a", "a", "b", "a", "b", None],
                       "s": [1, 2, None, 1, 1, 2, 3]})
    res = disc_anova(df, "g", "s", n_resamples=50, seed=1)
    assert res.groups == ("a", "b")
    assert res.group_sizes == (2, 3)


def test_bad_input_errors() -> None:
    with pytest.raises(InputError, match="at least 2"):
        disc_anova([[1], [1, 2]], n_resamples=10)
    with pytest.raises(InputError, match="two groups"):
        disc_anova([[1, 2, 3]], n_resamples=10)
    df = pd.DataFrame({"g": ["a", "b", "a"], "s": ["1", "x", "2"], "_row": [2, 3, 4]})
    with pytest.raises(InputError) as err:
        disc_anova(df, "g", "s", file="f.csv")
    assert err.value.row == 3 and err.value.column == "s"


def test_statistic_function_agrees() -> None:
    counts = np.array([[3, 1, 0], [1, 2, 5], [0, 4, 1]])
    groups = [list(np.repeat([1, 2, 3], counts[:, j])) for j in range(3)]
    assert disc_statistic(counts) == pytest.approx(float(wrs2_statistic(groups)), rel=1e-13)


# ---------------------------------------------------------------- chi-square of homogeneity

def brute_force_exact_chi2(counts: np.ndarray) -> float:
    """Enumerate every assignment of the N ratings to the two groups (equally likely)."""
    labels = np.repeat(np.arange(counts.shape[0]), counts.sum(axis=1))
    n1 = int(counts[:, 0].sum())
    x2_obs = stats.chi2_contingency(counts, correction=False).statistic
    hits = total = 0
    for idx in itertools.combinations(range(len(labels)), n1):
        col1 = np.bincount(labels[list(idx)], minlength=counts.shape[0])
        table = np.stack([col1, counts.sum(axis=1) - col1], axis=1)
        x2 = stats.chi2_contingency(table, correction=False).statistic
        hits += x2 >= x2_obs - 1e-9
        total += 1
    return hits / total


def test_chi2_asymptotic_matches_scipy() -> None:
    counts = np.array([[10, 4, 7], [3, 9, 2], [5, 5, 8]])
    ref = stats.chi2_contingency(counts, correction=False)
    res = chi2_homogeneity(counts)
    assert res.statistic == pytest.approx(ref.statistic)
    assert res.pvalue == pytest.approx(ref.pvalue)
    assert res.dof == ref.dof


@pytest.mark.parametrize("counts", [
    np.array([[3, 1], [2, 4], [1, 3]]),
    np.array([[4, 0], [1, 3], [0, 2], [1, 1]]),
    np.array([[2, 1], [1, 2], [0, 2]]),
])
def test_chi2_exact_matches_brute_force_and_scipy_permutation(counts: np.ndarray) -> None:
    exact = chi2_homogeneity(counts, method="exact")
    assert exact.pvalue == pytest.approx(brute_force_exact_chi2(counts), abs=1e-12)
    # scipy's exact permutation test permutes the N individual ratings (N! orderings), so it is
    # only feasible for tiny N (scipy >= 1.15)
    if hasattr(stats, "PermutationMethod") and counts.sum() <= 8:
        ref = stats.chi2_contingency(counts, correction=False,
                                     method=stats.PermutationMethod(n_resamples=np.inf))
        assert exact.pvalue == pytest.approx(ref.pvalue, abs=1e-9)


def test_chi2_montecarlo_within_error_of_exact() -> None:
    counts = np.array([[6, 2], [3, 7], [2, 5]])
    exact = chi2_homogeneity(counts, method="exact").pvalue
    b = 20_000
    mc = chi2_homogeneity(counts, method="montecarlo", n_resamples=b, seed=3)
    assert abs(mc.pvalue - exact) <= 4 * math.sqrt(exact * (1 - exact) / b) + 1 / b
    again = chi2_homogeneity(counts, method="montecarlo", n_resamples=b, seed=3)
    assert again.pvalue == mc.pvalue


def test_enumerated_tables_are_all_tables() -> None:
    c = np.array([2, 3, 1])
    tables = enumerate_two_group_tables(c, 3, 10_000)
    brute = {x for x in itertools.product(range(3), range(4), range(2)) if sum(x) == 3}
    assert {tuple(map(int, t)) for t in tables} == brute


def test_chi2_errors() -> None:
    with pytest.raises(InputError):
        chi2_homogeneity(np.array([[1, 2], [3, 4]]), method="nope")
    with pytest.raises(InputError):
        chi2_homogeneity(np.array([[1, 2, 3], [3, 4, 5]]), method="exact")
    with pytest.raises(InputError, match="enumerate"):
        chi2_homogeneity(np.array([[400, 400], [300, 300], [200, 200], [300, 100]]),
                         method="exact", max_tables=1000)


def test_result_follows_the_result_protocol() -> None:
    """DiscAnovaResult is a StatResult: ``stat, p = result`` and the documented JSON keys."""
    res = disc_anova({"A": [1, 2, 2, 3, 3, 3], "B": [3, 4, 4, 5, 5, 5]}, n_resamples=200, seed=3)
    stat, p = res
    assert (stat, p) == (res.statistic, res.pvalue)
    assert stat == pytest.approx(disc_statistic(np.array(
        [[1, 0], [2, 0], [3, 1], [0, 2], [0, 3]])), abs=1e-15)
    d = res.to_dict()
    assert list(d) == ["statistic", "pvalue", "nboot", "seed", "groups", "group_sizes",
                       "categories", "proportions", "null_probabilities", "n_greater",
                       "n_ties", "method"]
    assert d["groups"] == ["A", "B"] and np.allclose(d["proportions"], res.proportions)
