"""Discrete ANOVA against values computed by WRS2's own discANOVA code in R.

Provenance of the reference values (computed once on 2026-11-22, recorded here; R is not needed
to run this test):
* R 4.2.2 (Debian bookworm ``r-base-core`` 4.2.2.20221110-2);
* WRS2's ``discANOVA``, ``discANOVA.sub`` (R/discANOVA.R, R/utilities.R, github.com/cran/WRS2 at
  commit 3b231d60299f735b6a8f40e4e611629d3a041e89) and ``rmultinomial`` (R/rmultinomial.R at
  1443605908ff1327466a196f862958b291bf6e90), run unchanged on list input except that the
  bootstrap statistics ``TB`` were also returned, so their ties could be counted;
* ``set.seed(20261122)`` before each case, ``nboot = 100000``; ratings are the scale points
  ``rep(1:K, counts)`` of each group.

Per case: WRS2's statistic (printed with 17 significant digits), its p-value, the share of
bootstrap statistics that WRS2's ``==`` saw as ties (``float_ties``) and the share within 1e-12
of the observed statistic, i.e. the true ties (``true_ties``; distinct values of these statistics
differ by far more than 1e-12), and the share strictly greater (``greater``).

nlgeval counts ties exactly (see :mod:`nlgeval.items.discanova`), so its p-value estimates
``greater + true_ties / 2``; WRS2's estimates ``greater + float_ties / 2``. Where the two tie
shares agree the p-values must agree within Monte Carlo error; case E (tiny groups, half the
bootstrap statistics tie) shows the documented difference.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from nlgeval.items.discanova import disc_anova

WRS2_NBOOT = 100_000
OURS_NBOOT = 200_000

# name: (counts per group, statistic, p.value, float_ties, true_ties, greater)
WRS2 = {
    "A": ([[4, 85, 35, 61, 61], [0, 10, 2, 5, 3]],
          0.017757452574525746, 0.414620, 0.000020, 0.000020, 0.414610),
    "B": ([[3, 6, 8, 9, 4], [5, 7, 6, 4, 3], [2, 4, 10, 14, 10]],
          0.028962962962962961, 0.338820, 0.000020, 0.000040, 0.338790),
    "C": ([[2, 4, 2], [5, 3, 2], [1, 4, 7], [3, 3, 3]],
          0.067222222222222225, 0.450945, 0.000130, 0.000220, 0.450860),
    "D": ([[10, 20, 30, 25, 15], [4, 85, 35, 61, 61]],
          0.031334688346883466, 0.000300, 0.000000, 0.000000, 0.000300),
    "E": ([[2, 1, 0], [1, 1, 1]],
          0.1111111111111111, 0.642760, 0.400380, 0.509800, 0.333150),
    "F": ([[1, 2, 1], [3, 1, 0], [0, 2, 2]],
          0.22916666666666669, 0.256715, 0.069970, 0.069970, 0.221730),
}


def _groups(counts: list[list[int]]) -> list[np.ndarray]:
    return [np.repeat(np.arange(1, len(c) + 1), c) for c in counts]


def _mc_se(p: float) -> float:
    """Standard error of the difference of two independent bootstrap mid-p estimates (bounded
    by the Bernoulli variance, which is conservative for mid-p values)."""
    v = max(p * (1 - p), 1e-4)
    return math.sqrt(v * (1 / WRS2_NBOOT + 1 / OURS_NBOOT))


@pytest.mark.parametrize("name", sorted(WRS2))
def test_statistic_equals_wrs2(name: str) -> None:
    counts, stat, *_ = WRS2[name]
    res = disc_anova(_groups(counts), n_resamples=10, seed=0)
    assert res.statistic == pytest.approx(stat, rel=4e-16, abs=0)


@pytest.mark.parametrize("name", ["A", "B", "C", "D", "F"])
def test_pvalue_within_monte_carlo_error_of_wrs2(name: str) -> None:
    counts, _, p_wrs2, float_ties, true_ties, _ = WRS2[name]
    res = disc_anova(_groups(counts), n_resamples=OURS_NBOOT, seed=11)
    tie_rule = 0.5 * abs(true_ties - float_ties)  # at most 5e-5 here
    assert abs(res.pvalue - p_wrs2) <= 4 * _mc_se(p_wrs2) + tie_rule


def test_tie_rule_is_the_only_difference_when_ties_are_common() -> None:
    counts, _, p_wrs2, _, true_ties, greater = WRS2["E"]
    res = disc_anova(_groups(counts), n_resamples=OURS_NBOOT, seed=12)
    p_exact_ties = greater + 0.5 * true_ties  # WRS2's own draws, ties counted exactly
    assert abs(res.pvalue - p_exact_ties) <= 4 * _mc_se(0.5)
    assert res.n_ties / res.nboot == pytest.approx(true_ties, abs=4 * math.sqrt(0.25 / 5e4))
    # WRS2's floating-point == misses a fifth of the true ties: its p-value is 0.055 higher
    assert p_wrs2 - res.pvalue > 0.04
