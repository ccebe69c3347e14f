"""Pairwise Wilcoxon tests and the Friedman test on human ratings.

Independent references used here:
* the exact null distribution of the signed-rank statistic by full enumeration of the 2^n sign
  assignments (no scipy), for small n without ties;
* pingouin 0.7.0 ``pingouin.wilcoxon`` (its ``RBC`` column: matched-pairs rank-biserial) for the
  effect size (pingouin is a test-only dependency);
* Bonferroni / Holm adjustments written out by hand (Holm 1979 step-down);
* Friedman's chi-square from its textbook formula (no ties), and pingouin.friedman;
* the 2009 paper's worked example of the LSED pairing (subject AG: SUMTIME 5, 6; Template 4, 6).
"""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from nlgeval.errors import InputError
from nlgeval.human.compare import (
    correct_pvalues,
    friedman,
    pairwise_wilcoxon,
    signed_rank,
    wilcoxon_method,
)
from nlgeval.human.ratings import read_ratings

DATA = Path(__file__).parent / "data" / "human_lsed_ratings.csv"


def exact_signed_rank_p(d: np.ndarray) -> float:
    """Two-sided exact p of the signed-rank test by enumerating all sign vectors (no ties)."""
    d = d[d != 0]
    ranks = stats.rankdata(np.abs(d))
    w_plus = ranks[d > 0].sum()
    total = ranks.sum()
    t_obs = min(w_plus, total - w_plus)
    count = 0
    for signs in itertools.product([0, 1], repeat=len(d)):
        w = ranks[np.array(signs, dtype=bool)].sum()
        if min(w, total - w) <= t_obs + 1e-12:
            count += 1
    return count / 2 ** len(d)


def test_signed_rank_exact_matches_enumeration() -> None:
    rng = np.random.default_rng(0)
    for _ in range(5):
        a = rng.normal(size=9)
        b = a + rng.normal(0.5, 1, size=9)
        res = signed_rank(a, b)
        assert res.method == "exact"
        assert res.pvalue == pytest.approx(exact_signed_rank_p(a - b), abs=1e-12)


def test_signed_rank_with_ties_and_zeros_small_n() -> None:
    # ties and zeros, n <= 13: scipy enumerates the permutation distribution exactly;
    # check against the full enumeration with the tied (mid)ranks.
    a = np.array([5, 6, 4, 7, 3, 5, 6, 2, 4, 5], dtype=float)
    b = np.array([4, 6, 3, 5, 3, 4, 4, 2, 2, 4], dtype=float)
    res = signed_rank(a, b)
    assert res.method == "exact-permutation"
    assert res.n_zero == 3
    assert res.pvalue == pytest.approx(exact_signed_rank_p(a - b), abs=1e-12)


def test_effect_size_vs_pingouin() -> None:
    pg = pytest.importorskip("pingouin")
    rng = np.random.default_rng(1)
    a = rng.integers(1, 8, size=30).astype(float)
    b = np.clip(a + rng.integers(-2, 3, size=30), 1, 7).astype(float)
    res = signed_rank(a, b)
    ref = pg.wilcoxon(a, b)
    assert res.effect_size == pytest.approx(float(ref["RBC"].iloc[0]), abs=1e-12)
    # pingouin passes its kwargs to scipy; same options as nlgeval -> same p-value
    ref = pg.wilcoxon(a, b, zero_method="wilcox", correction=False, method="auto")
    assert res.pvalue == pytest.approx(float(ref["p_val"].iloc[0]), rel=1e-9)


def test_all_zero_differences_documented() -> None:
    res = signed_rank(np.array([3.0, 4.0]), np.array([3.0, 4.0]))
    assert res.pvalue == 1.0 and res.effect_size == 0.0 and res.method == "all-zero"


def test_wilcoxon_method_rule() -> None:
    assert wilcoxon_method(np.arange(1, 60, dtype=float)) == "normal"
    assert wilcoxon_method(np.arange(1, 20, dtype=float)) == "exact"
    assert wilcoxon_method(np.array([1.0, 1.0, 2.0])) == "exact-permutation"
    assert wilcoxon_method(np.r_[np.zeros(1), np.arange(1, 20.0)]) == "normal"


def holm_by_hand(p: np.ndarray) -> np.ndarray:
    m = len(p)
    order = np.argsort(p)
    adj = np.empty(m)
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p[i]))
        adj[i] = running
    return adj


def test_corrections_by_hand() -> None:
    p = np.array([0.01, 0.04, 0.03, 0.2, 0.005, 0.5])
    adj, rej = correct_pvalues(p, "bonferroni", 0.05)
    np.testing.assert_allclose(adj, np.minimum(1, p * 6))
    np.testing.assert_array_equal(rej, p * 6 <= 0.05)
    adj, rej = correct_pvalues(p, "holm", 0.05)
    np.testing.assert_allclose(adj, holm_by_hand(p))
    np.testing.assert_array_equal(rej, holm_by_hand(p) <= 0.05)
    adj, rej = correct_pvalues(p, "none", 0.05)
    np.testing.assert_allclose(adj, p)
    with pytest.raises(InputError):
        correct_pvalues(p, "sidak")


def test_lsed_pairing_paper_example() -> None:
    # Reiter & Belz (2009): AG rated SUMTIME 5 and 6, Template 4 and 6 -> pairs (5,4), (6,6)
    r = pd.DataFrame({
        "rater": ["AG"] * 4 + ["BB"] * 4,
        "item": ["d1", "d2", "d3", "d4", "d1", "d2", "d3", "d4"],
        "system": ["SUMTIME", "Template", "SUMTIME", "Template"] * 2,
        "score": [6, 4, 5, 6, 7, 3, 5, 5],
    })
    out = pairwise_wilcoxon(r, pairing="lsed")
    row = out.iloc[0]
    # pairs: AG (5,4), (6,6); BB lowest 5 vs 3, highest 7 vs 5 -> d = 1, 0, 2, 2
    d = np.array([1.0, 0.0, 2.0, 2.0])
    ref = stats.wilcoxon(d, zero_method="wilcox")
    assert row["n"] == 4
    assert row["statistic"] == pytest.approx(ref.statistic)
    assert row["pvalue"] == pytest.approx(ref.pvalue)
    assert row["direction"] == ">" and row["higher"] == "SUMTIME"
    assert row["mean_a"] == pytest.approx(np.mean([5, 6, 5, 7]))


def test_lsed_pairing_needs_equal_counts() -> None:
    r = pd.DataFrame({"rater": ["x", "x", "x"], "item": ["1", "2", "3"],
                      "system": ["A", "A", "B"], "score": [1, 2, 3]})
    with pytest.raises(InputError, match="rater 'x' rated 'A' 2 time"):
        pairwise_wilcoxon(r, pairing="lsed")


def test_item_pairing_against_scipy_on_lsed_file() -> None:
    df = read_ratings(DATA, criterion="accuracy", scale=(1, 7))
    out = pairwise_wilcoxon(df, pairing="item", correction="bonferroni")
    assert len(out) == 6
    means = df.groupby(["item", "system"])["score"].mean().unstack()
    for row in out.itertuples():
        both = means[[row.system_a, row.system_b]].dropna()
        ref = stats.wilcoxon(both[row.system_a], both[row.system_b])
        assert row.n == len(both)
        assert row.statistic == pytest.approx(ref.statistic)
        assert row.pvalue == pytest.approx(ref.pvalue)
        assert row.pvalue_adjusted == pytest.approx(min(1.0, 6 * ref.pvalue))
    # LSED pairing on the same file: 8 raters x 2 pairs each
    lsed = pairwise_wilcoxon(df, pairing="lsed", correction="holm")
    assert (lsed["n"] == 16).all()
    np.testing.assert_allclose(lsed["pvalue_adjusted"], holm_by_hand(lsed["pvalue"].to_numpy()))


def test_item_pairing_unbalanced_counts_unpaired() -> None:
    r = pd.DataFrame({"item": ["1", "2", "3", "1", "2", "4"],
                      "system": ["A", "A", "A", "B", "B", "B"],
                      "score": [3, 4, 5, 1, 2, 2]})
    out = pairwise_wilcoxon(r)
    assert out["n"].iloc[0] == 2 and out["n_unpaired"].iloc[0] == 2


def test_one_system_and_no_overlap_errors() -> None:
    r = pd.DataFrame({"item": ["1", "2"], "system": ["A", "A"], "score": [1, 2]})
    with pytest.raises(InputError, match="at least 2 systems"):
        pairwise_wilcoxon(r)
    r = pd.DataFrame({"item": ["1", "2"], "system": ["A", "B"], "score": [1, 2]})
    with pytest.raises(InputError, match="no item in common"):
        pairwise_wilcoxon(r)


def friedman_by_hand(table: np.ndarray) -> float:
    n, k = table.shape
    ranks = np.apply_along_axis(stats.rankdata, 1, table)
    r = ranks.sum(axis=0)
    return 12.0 / (n * k * (k + 1)) * np.sum(r ** 2) - 3 * n * (k + 1)


def test_friedman_formula_and_pingouin() -> None:
    rng = np.random.default_rng(4)
    table = rng.normal(size=(12, 4)) + np.array([0, 0.5, 1.0, 0.2])
    long = pd.DataFrame([
        {"item": str(i), "system": f"s{j}", "score": table[i, j]}
        for i in range(12) for j in range(4)
    ])
    res = friedman(long)
    assert res.statistic == pytest.approx(friedman_by_hand(table))
    assert res.pvalue == pytest.approx(stats.chi2.sf(friedman_by_hand(table), 3))
    assert res.df == 3 and res.n_blocks == 12
    pg = pytest.importorskip("pingouin")
    ref = pg.friedman(data=long, dv="score", within="system", subject="item")
    assert res.statistic == pytest.approx(float(ref["Q"].iloc[0]))
    assert res.kendalls_w == pytest.approx(float(ref["W"].iloc[0]))


def test_friedman_incomplete() -> None:
    long = pd.DataFrame({"item": ["1", "1", "1", "2", "2", "3", "3", "3"],
                         "system": ["a", "b", "c", "a", "b", "a", "b", "c"],
                         "score": [1, 2, 3, 2, 1, 1, 3, 2]})
    with pytest.raises(InputError, match="item '2' has no rating for c"):
        friedman(long)
    res = friedman(long, drop_incomplete=True)
    assert res.n_blocks == 2 and res.n_dropped_blocks == 1
    with pytest.raises(InputError, match="at least 3 systems"):
        friedman(long[long["system"] != "c"])


def test_friedman_with_ties_matches_scipy() -> None:
    df = read_ratings(DATA, criterion="clarity")
    res = friedman(df)
    t = df.groupby(["item", "system"])["score"].mean().unstack()
    ref = stats.friedmanchisquare(*(t[c] for c in t.columns))
    assert res.statistic == pytest.approx(ref.statistic)
    assert res.pvalue == pytest.approx(ref.pvalue)


@pytest.mark.parametrize("a,b", [([3.0], [1.0]), ([3.0, 2.0], [1.0, 1.0]),
                                 ([5.0, 1.0, 4.0], [2.0, 3.0, 1.0])])
def test_tiny_n_exact(a: list[float], b: list[float]) -> None:
    res = signed_rank(np.array(a), np.array(b))
    assert res.pvalue == pytest.approx(exact_signed_rank_p(np.array(a) - np.array(b)))
    assert res.n == len(a)


def test_old_import_paths_name_the_split_modules() -> None:
    """The signed-rank kernel moved to ``wilcoxon``, the Friedman test to ``friedman_test`` and
    the reading of pairwise judgements to ``judgements``; ``nlgeval.human.compare`` and
    ``nlgeval.human.pairwise`` still export the very same objects (old imports keep working)."""
    from nlgeval.human import compare, friedman_test, judgements, pairwise, wilcoxon

    for name in ("SignedRankResult", "rank_biserial_ci", "signed_rank", "wilcoxon_method"):
        assert getattr(compare, name) is getattr(wilcoxon, name), name
    for name in ("FriedmanResult", "friedman"):
        assert getattr(compare, name) is getattr(friedman_test, name), name
    for name in ("TIE_WORDS", "pairwise_outcomes", "preference_midpoint", "_system_order"):
        assert getattr(pairwise, name) is getattr(judgements, name), name
