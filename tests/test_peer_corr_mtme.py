"""nlgeval's meta-evaluation statistics against the test suite of MTME.

Reference: google-research/mt-metrics-eval (MTME), commit
68a481aea1a787392d55af8f76ac8ef40c5f4664 (2026-04-22), files ``mt_metrics_eval/stats_test.py``,
``tau_optimization_test.py`` and ``data_test.py``. Every input and expected value below is
copied from the MTME test named in the comment above it; nothing was computed with nlgeval.
MTME's ``stats.Correlation(num_sys, gold, metric)`` takes flat vectors ordered system by
system (``None`` = no gold score); :func:`_matrix` turns one into nlgeval's (systems x items)
matrix. MTME's groupings map to nlgeval's levels: ``average_by="none"`` is ``segment``,
``"item"`` is ``item``, ``"sys"`` is ``system-grouped``.

Where nlgeval deliberately differs (documented in docs/methods.md, "Every deliberate
difference from MTME"), the test pins both behaviours: MTME's value through the option that
reproduces it, nlgeval's default through an independent closed form.
"""

from __future__ import annotations

import itertools
import math
import warnings
from fractions import Fraction
from typing import Any

import numpy as np
import pytest
from scipy import stats

from nlgeval.correlation import (
    acc_eq,
    assign_ranks,
    grouped_kendall,
    kendall_variant,
    level_statistic,
    pairwise_accuracy_from_scores,
    soft_pairwise_accuracy,
    tie_calibration,
    williams_from_scores,
    williams_test,
)


def _matrix(num_sys: int, flat: list[Any]) -> np.ndarray:
    """MTME's flat system-by-system vector as a (systems x items) matrix, None -> NaN."""
    arr = np.array([math.nan if v is None else float(v) for v in flat])
    return arr.reshape(num_sys, -1)


def _level(metric: np.ndarray, gold: np.ndarray, level: str, coefficient: str) -> float:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return float(level_statistic(metric, gold, level, coefficient))


# ------------------------------------------------ stats_test.py, CorrelationTest (two systems)
# stats.Correlation(2, [1, 2, 3, 4, 5, 6], [2, 1, 4, 3, 3, 7])
GOLD_2x3 = _matrix(2, [1, 2, 3, 4, 5, 6])
METRIC_2x3 = _matrix(2, [2, 1, 4, 3, 3, 7])


@pytest.mark.parametrize(("level", "coefficient", "expected"), [
    # testPearson: average_by none / sys
    ("segment", "pearson", 0.776), ("system-grouped", "pearson", 0.760),
    # testKendall (scipy's tau-b)
    ("segment", "kendall", 0.552), ("system-grouped", "kendall", 0.575),
    # testKendallC (variant='c')
    ("segment", "kendall_c", 0.556), ("system-grouped", "kendall_c", 0.611),
])
def test_grouped_correlations_match_mtme(level: str, coefficient: str, expected: float) -> None:
    # MTME asserts 3 places (assertAlmostEqual(..., places=3))
    assert round(_level(METRIC_2x3, GOLD_2x3, level, coefficient) - expected, 3) == 0


@pytest.mark.parametrize("variant", ["tau_b", "tau_c"])
def test_kendall_variants_by_item_with_two_systems_match_mtme(variant: str) -> None:
    # testKendall / testKendallC, average_by='item': each item has 2 systems and MTME's
    # correlation of two points is +-1 (here +1 for all three items), mean 1.00. The Kendall
    # variants of nlgeval skip only groups with fewer than 2 cells, as MTME.
    assert grouped_kendall(METRIC_2x3, GOLD_2x3, variant, "item").statistic == 1.0


@pytest.mark.parametrize("coefficient", ["pearson", "kendall", "kendall_c"])
def test_item_level_coefficients_need_three_systems_unlike_mtme(coefficient: str) -> None:
    # testPearson / testKendall / testKendallC, average_by='item': MTME 1.00 from three
    # two-point correlations. nlgeval's coefficient levels need 3 complete pairs per item (a
    # two-point correlation is +-1 whatever the data; documented difference), so every item is
    # undefined and the level is NaN; the Kendall variants above keep MTME's rule.
    assert math.isnan(_level(METRIC_2x3, GOLD_2x3, "item", coefficient))
    # with a third system the items are defined and the rule is MTME's mean over items
    X = np.vstack([METRIC_2x3, [[0.0, 5.0, 1.0]]])
    Y = np.vstack([GOLD_2x3, [[2.0, 9.0, 0.0]]])
    ref = {"pearson": lambda a, b: stats.pearsonr(a, b)[0],
           "kendall": lambda a, b: stats.kendalltau(a, b)[0],
           "kendall_c": lambda a, b: stats.kendalltau(a, b, variant="c")[0]}[coefficient]
    expected = np.mean([ref(X[:, j], Y[:, j]) for j in range(3)])
    assert _level(X, Y, "item", coefficient) == pytest.approx(expected, abs=1e-12)


# ------------------------------------------ stats_test.py, AverageCorrelationTest (no None)
def test_average_by_system_and_item_match_mtme() -> None:
    # testAverageBySystem: g, m = [1..6], [2, 1, 8, 3, 5, 6], num_sys=2, average_by='sys'
    g, m = _matrix(2, [1, 2, 3, 4, 5, 6]), _matrix(2, [2, 1, 8, 3, 5, 6])
    p1 = stats.pearsonr([1, 2, 3], [2, 1, 8])[0]
    p2 = stats.pearsonr([4, 5, 6], [3, 5, 6])[0]
    assert _level(m, g, "system-grouped", "pearson") == pytest.approx((p1 + p2) / 2, abs=1e-12)
    # testAverageByNone (pearson of the pooled vectors)
    g1, m1 = [1, 2, 3, 4, 5, 6], [2, 1, 4, 3, 5, 6]
    assert _level(_matrix(1, m1), _matrix(1, g1), "segment", "pearson") == pytest.approx(
        stats.pearsonr(g1, m1)[0], abs=1e-12)


def test_missing_gold_is_dropped_pairwise_as_mtme() -> None:
    # testMissingEntries: g = [1, None, 3, 4, 5, 6]: pearson of the 5 complete pairs
    g, m = _matrix(1, [1, None, 3, 4, 5, 6]), _matrix(1, [2, 1, 4, 3, 5, 6])
    assert _level(m, g, "segment", "pearson") == pytest.approx(
        stats.pearsonr([1, 3, 4, 5, 6], [2, 4, 3, 5, 6])[0], abs=1e-12)


def test_constant_group_is_left_out_of_the_mean_as_mtme() -> None:
    # testNaNHandling: g, m = [1..6], [2, 2, 2, 4, 5, 6], num_sys=2, average_by='sys',
    # replace_nans_with_zeros=False -> 1.0 (system 1's metric is constant: NaN, dropped)
    g, m = _matrix(2, [1, 2, 3, 4, 5, 6]), _matrix(2, [2, 2, 2, 4, 5, 6])
    assert _level(m, g, "system-grouped", "pearson") == pytest.approx(1.0, abs=1e-12)
    assert grouped_kendall(m, g, "tau_b", "system-grouped").statistic == pytest.approx(1.0)


# ------------------------------------------------------- Kendall variants (Deutsch et al. 2023)
def test_kendall_variants_match_mtme() -> None:
    # CorrelationTest.testKendallVariants: stats.Correlation(1, [1, 2, 2, 3, 4],
    # [2, 1, 1.5, 5, 3]) -- gold first, metric second
    gold, metric = [1, 2, 2, 3, 4], [2, 1, 1.5, 5, 3]
    assert kendall_variant(metric, gold, "tau_b").statistic == pytest.approx(0.316227766)
    assert kendall_variant(metric, gold, "tau_c").statistic == pytest.approx(0.32, abs=1e-15)
    assert kendall_variant(metric, gold, "tau_23").statistic == pytest.approx(0.2, abs=1e-15)
    assert kendall_variant(metric, gold, "acc_23").statistic == pytest.approx(0.6, abs=1e-15)
    res = kendall_variant(metric, gold, "acc_23", epsilon=2)
    assert res.statistic == pytest.approx(0.4, abs=1e-15)


def test_kendall_variants_23_pair_counts_match_mtme() -> None:
    # CorrelationFunctionsTest.testKendallVariants_23 and ..WithPositiveEpsilon:
    # x (gold) = [1, 1, 1, 2, 2, 3, 4], y (metric) = [1, 1, 2, 2, 4, 3, 3]; 21 pairs,
    # discordant 2, ties in x only 3, in y only 2, in both 1 -> concordant 13
    x, y = [1, 1, 1, 2, 2, 3, 4], [1, 1, 2, 2, 4, 3, 3]
    res = kendall_variant(y, x, "tau_23")
    c = res.counts
    assert (c.n_pairs, c.discordant, c.ties_human, c.ties_metric, c.ties_both) == (21, 2, 3, 2, 1)
    assert res.statistic == (13 + 1 - 2 - 3 - 2) / 21
    assert kendall_variant(y, x, "acc_23").statistic == (13 + 1) / 21
    for eps in (0.0, 0.1):  # too small to add ties
        assert kendall_variant(y, x, "tau_23", epsilon=eps).statistic == (14 - 7) / 21
    # epsilon = 1 (MTME's comment counts ties in x 13, in y 3, in both 3, discordant 1,
    # concordant 7; here the tie rule of the thresholded variable gives the same value)
    assert kendall_variant(y, x, "tau_23", epsilon=1.0).statistic == (7 + 3 - 1 - 10 - 0) / 21


@pytest.mark.parametrize("variant", ["tau_b", "tau_c"])
def test_kendall_b_and_c_equal_scipy_as_mtme_checks(variant: str) -> None:
    # CorrelationFunctionsTest.testKendallVariants_b_and_c: equal to scipy's kendalltau
    gold, metric = [7, 1, 2, 7, 4, 3, 2], [4, 1, 3, 6, 1, 5, 6]
    ref = stats.kendalltau(gold, metric, variant=variant[-1])[0]
    assert kendall_variant(metric, gold, variant).statistic == pytest.approx(ref, abs=1e-15)


# ------------------------------------------------ tie calibration (Deutsch et al. 2023, sec. 5)
def test_tie_calibration_of_a_vector_matches_mtme() -> None:
    # CorrelationTest.testKendallWithTiesOpt: Correlation(1, [1, 2, 2, 3, 4],
    # [2, 1, 1.5, 5, 3]).KendallWithTiesOpt(variant='acc23', sample_rate=1.0) -> 0.7
    gold, metric = _matrix(1, [1, 2, 2, 3, 4]), _matrix(1, [2, 1, 1.5, 5, 3])
    res = tie_calibration(metric, gold, "segment")
    assert res.statistic == pytest.approx(0.7, abs=1e-15)
    # and, as MTME's CorrelationFunctionsTest.testKendallWithTiesOpt checks, the statistic is
    # acc_23 at the chosen epsilon
    assert kendall_variant(metric.ravel(), gold.ravel(), "acc_23",
                           epsilon=res.epsilon).statistic == res.statistic


@pytest.mark.parametrize("grouping", ["segment", "system-grouped", "item"])
def test_tie_calibration_grouped_is_the_mean_at_its_epsilon(grouping: str) -> None:
    # CorrelationFunctionsTest.testKendallWithTiesOpt: gold [1, 2, 2, 3, 3, 4], metric
    # [2, 1, 1.5, 5, 3, 2]; num_sys=1 'none', num_sys=2 'sys' and 'item': the calibrated value
    # equals the mean over groups of acc_23 at the returned epsilon
    num_sys = 1 if grouping == "segment" else 2
    gold = _matrix(num_sys, [1, 2, 2, 3, 3, 4])
    metric = _matrix(num_sys, [2, 1, 1.5, 5, 3, 2])
    res = tie_calibration(metric, gold, grouping)
    if grouping == "segment":
        groups = [(metric.ravel(), gold.ravel())]
    elif grouping == "system-grouped":
        groups = list(zip(metric, gold, strict=True))
    else:
        groups = list(zip(metric.T, gold.T, strict=True))
    per = [kendall_variant(m, g, "acc_23", epsilon=res.epsilon).statistic for m, g in groups]
    assert res.statistic == pytest.approx(float(np.mean(per)), abs=1e-15)


@pytest.mark.parametrize(("human", "thresholds", "taus", "best"), [
    # tau_optimization_test.py test_zero_threshold_is_best
    ([1, 2, 3, 4], [0, 2, 4, 6, 8], [6 / 6, 4 / 6, 3 / 6, 1 / 6, 0 / 6], (0, 1.0)),
    # test_nonzero_threshold_is_best
    ([1, 1, 1, 4], [0, 2, 4, 6, 8], [3 / 6, 3 / 6, 4 / 6, 4 / 6, 3 / 6], (4, 4 / 6)),
])
def test_tau_optimization_sweep_matches_mtme(human: list[float], thresholds: list[float],
                                             taus: list[float], best: tuple[float, float]
                                             ) -> None:
    metric = np.array([[0.0, 2.0, 6.0, 8.0]])
    Y = np.array([human], dtype=float)
    for eps, tau in zip(thresholds, taus, strict=True):
        assert acc_eq(metric, Y, "system-grouped", epsilon=eps).statistic == pytest.approx(
            tau, abs=1e-15)
    res = tie_calibration(metric, Y, "system-grouped")
    assert (res.epsilon, res.statistic) == pytest.approx(best, abs=1e-15)


def test_tau_optimization_regression_example_with_missing_cells() -> None:
    # tau_optimization_test.py test_regression_example: 5 x 5 matrices, rows are the groups,
    # None = missing (a pair needs both scores); the last row is empty
    metric = [[0, 5, 2, 3, 2], [None, 2, 1, 5, 3], [9, 1, 5, 3, 8], [9, 3, 4, 4, 1],
              [None] * 5]
    human = [[1, 5, 2, 1, 1], [4, 2, 2, 1, 4], [5, 9, 2, 8, 7], [7, 6, None, 3, 2],
             [None] * 5]
    X, Y = _matrix(5, sum(metric, [])), _matrix(5, sum(human, []))
    expected_taus = [0.4666666666666667, 0.4916666666666668, 0.38333333333333347,
                     0.29166666666666674, 0.2666666666666667, 0.2, 0.15833333333333335,
                     0.15833333333333335, 0.1166666666666667]
    for eps, tau in enumerate(expected_taus):   # thresholds 0, 1, ..., 8
        got = acc_eq(X, Y, "system-grouped", epsilon=float(eps)).statistic
        assert got == pytest.approx(tau, abs=1e-14)
    res = tie_calibration(X, Y, "system-grouped")
    assert res.epsilon == 1.0
    assert res.statistic == pytest.approx(0.4916666666666668, abs=1e-14)
    assert res.n_groups == 4


# ------------------------------------------------------------ pairwise accuracy (Kocmi 2021)
def test_pairwise_agreement_matches_mtme() -> None:
    # CorrelationFunctionsTest.testAgreement: gold [1, 2, 3, 3, 4], metric [1, 1, 2, 1, 2]
    # -> 5 of 10 pairs agree (a tie agrees only with a tie)
    res = pairwise_accuracy_from_scores([1, 1, 2, 1, 2], [1, 2, 3, 3, 4])
    assert (res.n_agree, res.n_pairs) == (5, 10)


# ----------------------------------------------- soft pairwise accuracy (Thompson et al. 2024)
def test_soft_pairwise_accuracy_matches_mtme() -> None:
    # CorrelationTest.testPairwiseConfidenceError: Correlation(2, [1, 2, 3, 2, 3, 4],
    # [2, 2, 4, 1, 3, 5]).PairwiseConfidenceError() -> 0.872 (3 places). MTME draws its
    # sign masks from a fixed internal seed, which nlgeval reproduces with seed=4, and uses
    # the pairs i < j in row order (orientation="given").
    gold, metric = _matrix(2, [1, 2, 3, 2, 3, 4]), _matrix(2, [2, 2, 4, 1, 3, 5])
    res = soft_pairwise_accuracy(metric, gold, seed=4, orientation="given")
    assert round(res.statistic - 0.872, 3) == 0


def test_soft_pairwise_accuracy_both_orientations_on_the_same_case() -> None:
    # nlgeval's default averages both directions of each pair (documented difference): with 3
    # segments there are only 8 sign patterns, so null deltas equal to the observed one are
    # frequent and p_ji = 1 - p_ij + #{null == observed} / K differs from 1 - p_ij. Closed
    # form on the exact enumeration of the 8 masks:
    gold, metric = _matrix(2, [1, 2, 3, 2, 3, 4]), _matrix(2, [2, 2, 4, 1, 3, 5])
    masks = np.array([[a, b, c] for a in (1, -1) for b in (1, -1) for c in (1, -1)], float)

    def p_values(S: np.ndarray) -> tuple[float, float]:
        d = S[0] - S[1]
        null = masks @ d
        return float(np.mean(null >= d.sum())), float(np.mean(-null >= -d.sum()))

    (h01, h10), (m01, m10) = p_values(gold), p_values(metric)
    given = 1 - abs(h01 - m01)
    both = 1 - (abs(h01 - m01) + abs(h10 - m10)) / 2
    res_given = soft_pairwise_accuracy(metric, gold, masks=masks, orientation="given")
    res_both = soft_pairwise_accuracy(metric, gold, masks=masks)
    assert res_given.statistic == pytest.approx(given, abs=1e-15)
    assert res_both.statistic == pytest.approx(both, abs=1e-15)
    assert given != both


# ------------------------------------------------------------------ Williams (Williams 1959)
def test_williams_matches_mtme() -> None:
    # WilliamsSigDiffTest.testSigDiff: 5 segments of one system, one-sided -> p 0.019,
    # r1 0.999, r2 0.987
    gold = _matrix(1, [1, 2, 3, 4, 5]).T
    m1, m2 = _matrix(1, [1.1, 2, 3.1, 4, 5.1]).T, _matrix(1, [1.5, 2, 3.1, 4, 5.5]).T
    res = williams_from_scores(m1, m2, gold, "segment", alternative="greater")
    assert round(res.pvalue - 0.019, 3) == 0
    assert (round(res.r12, 3), round(res.r13, 3)) == (0.999, 0.987)
    assert res.df == 2


def test_williams_formula_on_mtme_item_averaged_case() -> None:
    # WilliamsSigDiffTest.testSigDiffWithAvgAndNones: 3 systems x 2 items, gold [1, None, 3,
    # 4, 5, 6], metric1 [1, 2, 3, 3, 7, 3], metric2 [2, 1, 2, 6, 8, 8]; item-averaged Pearson;
    # MTME's n counts every cell (6, None included). Expected p 0.121, r1 0.982, r2 0.933.
    # MTME's r's by its rule (2-point items included, constant ones dropped), from scipy:
    r1 = stats.pearsonr([1, 3, 5], [1, 3, 7])[0]            # item 2: metric1 [3, 3] constant
    r2 = np.mean([stats.pearsonr([1, 3, 5], [2, 2, 8])[0], 1.0])   # item 2: [4, 6] vs [6, 8]
    r12 = np.mean([stats.pearsonr([1, 3, 7], [2, 2, 8])[0],
                   stats.pearsonr([2, 3, 3], [1, 6, 8])[0]])
    assert (round(r1, 3), round(r2, 3)) == (0.982, 0.933)
    assert round(williams_test(r1, r2, r12, 6, "greater").pvalue - 0.121, 3) == 0


# ----------------------------------------------------------- rank clusters (MTME AssignRanks)
@pytest.mark.parametrize(("upper", "alpha", "expected"), [
    # data_test.py DataTest.testAssignRanks: sig_matrix[i, j] (i < j) is the p-value of
    # "metric i beats metric j"; metrics in decreasing order of the statistic
    ([[1, 1, 1], [1, 1], [1]], 0.5, [1, 1, 1, 1]),
    ([[1, 0, 1], [1, 1], [1]], 0.5, [1, 1, 2, 2]),
    ([[0, 1, 1], [1, 1], [0]], 0.5, [1, 2, 2, 3]),
])
def test_assign_ranks_matches_mtme(upper: list[list[int]], alpha: float,
                                   expected: list[int]) -> None:
    names = ["m0", "m1", "m2", "m3"]
    pvalues = {(names[i], names[i + 1 + k]): float(p)
               for i, row in enumerate(upper) for k, p in enumerate(row)}
    statistics = {n: 1.0 - 0.1 * i for i, n in enumerate(names)}
    df = assign_ranks(statistics, pvalues, alpha=alpha)
    assert df["metric"].tolist() == names
    assert df["rank"].tolist() == expected


def test_assign_ranks_alpha_one_is_refused() -> None:
    # MTME's testAssignRanks also calls AssignRanks(sig_matrix, 1.0) -> [1, 2, 3, 4] (every
    # p <= 1 is "significant"); nlgeval accepts alpha only in (0, 1)
    from nlgeval.errors import InputError
    with pytest.raises(InputError, match="alpha"):
        assign_ranks({"a": 1.0, "b": 0.5}, {("a", "b"): 1.0}, alpha=1.0)


def test_tie_calibration_ties_at_the_maximum_are_decided_exactly() -> None:
    # Values from MTME's own code (commit 68a481a, stats.KendallWithTiesOpt(gold, metric,
    # variant='acc23', num_sys=3, average_by='item', sample_rate=1.0), run for this test):
    # (0.4444444444444446, epsilon 2.0). Thresholds 0 and 2 both give 4/9 exactly; MTME's
    # float sums put eps = 2 two ulps higher, so its argmax ("the smallest maximiser")
    # takes 2. nlgeval decides ties at the maximum in exact arithmetic (documented) and
    # returns the smallest, 0.
    gold = np.array([[3.0, 1.0, 1.0], [2.0, 3.0, 3.0], [3.0, 1.0, 1.0]])
    metric = np.array([[1.0, 2.0, 2.0], [0.0, 2.0, 2.0], [3.0, 2.0, 0.0]])

    def exact_acc23(eps: float) -> Fraction:   # pairs enumerated per item (column)
        per_item = []
        for j in range(3):
            agree = n = 0
            for a, b in itertools.combinations(range(3), 2):
                dh, dm = gold[a, j] - gold[b, j], metric[a, j] - metric[b, j]
                tied_m = abs(dm) <= eps
                agree += (dh == 0 and tied_m) or (not tied_m and dh * dm > 0)
                n += 1
            per_item.append(Fraction(agree, n))
        return sum(per_item, Fraction(0)) / 3

    assert exact_acc23(0.0) == exact_acc23(2.0) == Fraction(4, 9)
    assert exact_acc23(1.0) < Fraction(4, 9)
    res = tie_calibration(metric, gold, "item")
    assert res.epsilon == 0.0
    assert res.statistic == pytest.approx(4 / 9, abs=1e-15)
    assert acc_eq(metric, gold, "item", epsilon=2.0).statistic == pytest.approx(4 / 9,
                                                                                abs=1e-15)


# ------------------------------------------------------------ fewer systems than a statistic needs
@pytest.mark.filterwarnings("ignore::nlgeval.correlation.DegenerateInputWarning")
def test_one_system_gives_nan_not_a_traceback() -> None:
    # MTME: PairwiseConfidenceError(num_sys=1) is NaN and Agreement of one system counts
    # (0, 0) pairs; WilliamsTest with n = 3 divides by zero. nlgeval: NaN with a note. The SPA
    # functions raised a ValueError from their kernels on one system before (fixed).
    from nlgeval.correlation import soft_pairwise_accuracy_test

    X, Y = np.array([[1.0, 2.0, 3.0]]), np.array([[1.0, 2.0, 3.0]])
    spa = soft_pairwise_accuracy(X, Y)
    assert math.isnan(spa.statistic) and spa.n_pairs == 0 and spa.n_systems == 1
    assert "fewer than 2 systems" in spa.note
    test = soft_pairwise_accuracy_test(X, X + 1, Y, n_resamples=20, spa_permutations=20)
    assert math.isnan(test.statistic) and math.isnan(test.pvalue)
    acc = pairwise_accuracy_from_scores([1.0], [2.0])
    assert math.isnan(acc.statistic) and acc.n_pairs == 0
    assert math.isnan(williams_test(0.5, 0.4, 0.3, 3).pvalue)
    assert math.isnan(tie_calibration(X, Y, "item").statistic)


def test_two_systems_are_enough_for_the_pairwise_statistics() -> None:
    # one system pair: pairwise accuracy is 0 or 1 and SPA is defined (1 when the metric is the
    # human score), while the coefficients at system level need 3 systems
    from nlgeval.correlation import pairwise_accuracy

    X = np.array([[1.0, 2.0, 3.0], [0.0, 1.0, 1.0]])
    Y = np.array([[3.0, 2.0, 3.0], [2.0, 1.0, 0.0]])
    assert pairwise_accuracy(X, Y).statistic == 1.0
    assert soft_pairwise_accuracy(Y, Y, seed=4, orientation="given").statistic == 1.0
    assert math.isnan(_level(X, Y, "system", "pearson"))
