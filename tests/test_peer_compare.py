"""Comparing systems on ratings, checked against the peer libraries' OWN test values.

Provenance of every expected number (the peer's test and where the peer took it from):

* scipy 1.17, ``scipy/stats/tests/test_morestats.py``, ``TestWilcoxon.test_accuracy_wilcoxon``
  (56 differences with 8 zeros, ``zero_method="wilcox"``: T = 327, p = 0.00641346115861) and
  the R values beside it, ``wilcox.test(x, y, paired=TRUE, exact=FALSE, correct=FALSE)`` =
  0.6948866; ``test_wilcoxon_tie``: R ``wilcox.test(rep(0.1, 10), exact=FALSE,
  correct=FALSE)`` = 0.001565402;
* pingouin 0.7.0, ``tests/test_nonparametric.py``: ``test_wilcoxon`` (W = 20.5 and
  rank-biserial r = -0.379, both from JASP), ``test_friedman`` (R ``friedman.test``: Q = 2,
  p = 0.3678794; Kendall's W = 0.08333333 from R ``DescTools::KendallW(correct = TRUE)``);
* statsmodels 0.15.0, ``statsmodels/stats/tests/test_multi.py`` (``pval0`` and
  ``res_multtest1``: R ``multtest::mt.rawp2adjp`` Bonferroni and Holm columns);
  ``statsmodels/stats/tests/test_pairwise.py``: ``TestTuckeyHSD2s`` (R ``TukeyHSD`` on the
  unbalanced stress-reduction data, groups of 7, 10 and 9, alpha = 0.01) and
  ``TestTuckeyHSD3`` (a SAS printout, 3 brands x 5, alpha = 0.05).

Documented difference (docs/human.md, "Compare generators"): for n <= 13 pairs with ties or
zero differences nlgeval (scipy ``method="auto"``) enumerates the exact permutation
distribution, where R's ``wilcox.test`` falls back to the normal approximation (with continuity
correction by default); for n > 50, or 14..50 pairs with ties or zeros, both use the normal
approximation, nlgeval without continuity correction (as ``correct=FALSE``).
"""

from __future__ import annotations

import warnings
from typing import Literal

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from nlgeval.human.compare import correct_pvalues, friedman, signed_rank
from nlgeval.human.glm import glm_tukey


def test_wilcoxon_scipy_accuracy_case_normal_approximation() -> None:
    freq = [1, 4, 16, 15, 8, 4, 5, 1, 2]
    x = np.concatenate([[u] * v for u, v in zip(range(-4, 5), freq, strict=True)]).astype(float)
    res = signed_rank(x, np.zeros_like(x))
    assert res.method == "normal" and res.n == 56 and res.n_zero == 8
    assert res.statistic == 327
    assert res.pvalue == pytest.approx(0.00641346115861, rel=1e-10)
    assert (res.w_plus, res.w_minus) == (327.0, 849.0)


def test_wilcoxon_r_values_without_ties_are_the_normal_approximation_not_ours() -> None:
    x = np.array([120, 114, 181, 188, 180, 146, 121, 191, 132, 113, 127, 112], float)
    y = np.array([133, 143, 119, 189, 112, 199, 198, 113, 115, 121, 142, 187], float)
    res = signed_rank(x, y)
    assert res.statistic == 34 and res.method == "exact"
    # R's approximation (exact=FALSE, correct=FALSE) is 0.6948866; nlgeval reports the exact
    # null distribution, which R's default (exact for n < 50 without ties) also uses
    d = x - y
    ranks = stats.rankdata(np.abs(d))
    z = (34 - ranks.sum() / 2) / np.sqrt((ranks ** 2).sum() / 4)
    assert 2 * stats.norm.sf(abs(z)) == pytest.approx(0.6948866, rel=1e-6)
    signs = (np.arange(2 ** 12)[:, None] >> np.arange(12)) & 1  # every sign pattern
    t_all = signs @ ranks
    t_obs = min(34, ranks.sum() - 34)
    exact = np.mean((t_all <= t_obs) | (t_all >= ranks.sum() - t_obs))
    assert res.pvalue == pytest.approx(exact, abs=1e-12)
    assert res.pvalue != pytest.approx(0.6948866, abs=1e-3)


def test_wilcoxon_all_tied_differences_exact_not_r_approximation() -> None:
    res = signed_rank([0.1] * 10, [0.0] * 10)
    # R (exact=FALSE, correct=FALSE): 0.001565402; the exact permutation p-value is 2 / 2^10
    assert res.method == "exact-permutation"
    assert res.pvalue == pytest.approx(2 / 2 ** 10, abs=1e-15)
    assert res.effect_size == 1.0


def test_wilcoxon_pingouin_jasp_statistic_and_rank_biserial_with_a_zero() -> None:
    x2 = [20, 22, 19, 20, 22, 18, 24, 20, 19, 24, 26, 13]
    y2 = [38, 37, 33, 29, 14, 12, 20, 22, 17, 25, 26, 16]
    res = signed_rank(x2, y2)
    assert res.statistic == 20.5  # JASP
    assert round(res.effect_size, 3) == -0.379  # JASP's rank-biserial (zero dropped)
    assert res.n_zero == 1 and res.method == "exact-permutation"


PVAL0 = np.array([0.838541367553, 0.642193923795, 0.680845947633, 0.967833824309,
                  0.71626938238, 0.177096952723, 5.23656777208e-005, 0.0202732688798,
                  0.00028140506198, 0.0149877310796])
# R multtest, rows sorted by raw p: (Bonferroni, Holm)
R_MULTTEST = np.array([
    [5.2365677720800005e-04, 5.2365677720800005e-04],
    [2.8140506197999998e-03, 2.5326455578199999e-03],
    [1.4987731079600000e-01, 1.1990184863680001e-01],
    [2.0273268879799999e-01, 1.4191288215860001e-01],
    [1.0, 1.0], [1.0, 1.0], [1.0, 1.0], [1.0, 1.0], [1.0, 1.0], [1.0, 1.0],
])


@pytest.mark.parametrize(("column", "method"), [(0, "bonferroni"), (1, "holm")])
def test_corrections_match_r_multtest(column: int, method: str) -> None:
    order = np.argsort(PVAL0)
    adjusted, reject = correct_pvalues(PVAL0, method, alpha=0.05)
    np.testing.assert_allclose(adjusted[order], R_MULTTEST[:, column], rtol=1e-10)
    assert reject.tolist() == (adjusted <= 0.05).tolist()


WINE = {"white": [10, 8, 7, 9, 7, 4, 5, 6, 5, 10, 4, 7],
        "red": [7, 5, 8, 6, 5, 7, 9, 6, 4, 6, 7, 3],
        "rose": [8, 5, 6, 4, 7, 5, 3, 7, 6, 4, 4, 3]}


@pytest.mark.parametrize("block", ["item", "rater"])
def test_friedman_and_kendalls_w_match_r(block: Literal["item", "rater"]) -> None:
    rows = [{"rater": f"j{i}", "item": f"i{i}", "system": s, "score": float(v[i])}
            for i in range(12) for s, v in WINE.items()]
    res = friedman(pd.DataFrame(rows), block=block)
    assert res.statistic == pytest.approx(2.0, abs=1e-12)
    assert res.pvalue == pytest.approx(0.3678794, abs=5e-8)
    assert res.kendalls_w == pytest.approx(0.08333333, abs=5e-9)
    assert (res.df, res.n_blocks, res.k) == (2, 12, 3)


def test_tukey_kramer_matches_r_tukeyhsd_unbalanced() -> None:
    mental = [4, 4, 5, 3, 4, 4, 4]
    physical = [4, 4, 3, 5, 4, 1, 1, 2, 3, 3]
    medical = [1, 2, 2, 2, 3, 2, 3, 1, 3]
    df = pd.DataFrame({"system": ["mental"] * 7 + ["physical"] * 10 + ["medical"] * 9,
                       "score": np.array(mental + physical + medical, float)})
    res = glm_tukey(df, factors=(), alpha=0.01)
    t = res.tukey.set_index(["system_a", "system_b"])
    # R: (diff, lwr, upr, p adj) for mental-medical, physical-medical, physical-mental
    r_rows = {("medical", "mental"): (1.8888888888888889, 0.2658549, 3.511923, 0.002837638),
              ("medical", "physical"): (0.888888888888889, -0.5908785, 2.368656, 0.150456),
              ("mental", "physical"): (-1.0, -2.587133, 0.5871331, 0.1266072)}
    for (a, b), (diff, lwr, upr, p) in r_rows.items():
        sign = 1.0 if (a, b) in t.index else -1.0  # nlgeval: diff = mean(system_b) - mean(a)
        row = t.loc[(a, b)] if sign > 0 else t.loc[(b, a)]
        assert sign * row["diff"] == pytest.approx(diff, abs=1e-12)
        lo, hi = sorted((sign * row["low"], sign * row["high"]))
        assert (lo, hi) == (pytest.approx(lwr, abs=5e-7), pytest.approx(upr, abs=5e-7))
        assert row["pvalue_adjusted"] == pytest.approx(p, abs=5e-6)
        assert bool(row["reject"]) == (p < 0.01)
    assert any("Tukey-Kramer" in n for n in res.notes)
    assert res.n_harmonic == pytest.approx(3 / (1 / 7 + 1 / 10 + 1 / 9))


def test_tukey_matches_sas_printout_and_its_grouping() -> None:
    relief = {"1": [24.5, 23.5, 26.4, 27.1, 29.9], "2": [28.4, 34.2, 29.5, 32.2, 30.1],
              "3": [26.1, 28.3, 24.3, 26.2, 27.8]}
    df = pd.DataFrame([(b, v) for b, vs in relief.items() for v in vs],
                      columns=["system", "score"])
    res = glm_tukey(df, factors=(), alpha=0.05)
    t = res.tukey.set_index(["system_a", "system_b"])
    # SAS: "2 - 1" 4.600 (0.951, 8.249) ***; "3 - 1" 0.260 (-3.389, 3.909); "2 - 3" 4.340
    # (0.691, 7.989) ***   (nlgeval's diff is system_b - system_a)
    for (a, b), (diff, lo, hi, sig) in {("1", "2"): (4.600, 0.951, 8.249, True),
                                        ("1", "3"): (0.260, -3.389, 3.909, False),
                                        ("2", "3"): (-4.340, -7.989, -0.691, True)}.items():
        row = t.loc[(a, b)]
        assert round(row["diff"], 3) == diff
        assert (round(row["low"], 3), round(row["high"], 3)) == (lo, hi)
        assert bool(row["reject"]) is sig
    # balanced, so the homogeneous subsets are SAS's Tukey grouping: {1, 3} and {2}
    assert res.subsets == [["1", "3"], ["2"]]
    assert res.letters == {"1": "a", "2": "b", "3": "a"}


def test_friedman_every_block_tied_is_nan_with_a_named_reason() -> None:
    # R's friedman.test gives NaN here too; nlgeval used to pass on scipy's bare "invalid value
    # encountered in scalar divide" instead of saying why
    rows = [{"rater": "r", "item": i, "system": s, "score": float(i % 2)}
            for i in range(6) for s in "abc"]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no other warning (numpy's) may escape
        with pytest.raises(RuntimeWarning, match="every item gives all 3 systems the same"):
            friedman(pd.DataFrame(rows))
    with pytest.warns(RuntimeWarning, match="no ranking to compare"):
        res = friedman(pd.DataFrame(rows))
    assert np.isnan(res.statistic) and np.isnan(res.pvalue) and np.isnan(res.kendalls_w)
    assert res.mean_ranks == {"a": 2.0, "b": 2.0, "c": 2.0}


@pytest.mark.parametrize("seed", range(40))
def test_friedman_equals_the_previous_scipy_path(seed: int) -> None:
    # reference: the code before the tied-blocks check (scipy on the block x system table),
    # on ties, tied blocks, near-constant data and values near 1e200 / 1e-200
    rng = np.random.default_rng(seed)
    n, k = int(rng.integers(2, 15)), int(rng.integers(3, 6))
    table = rng.integers(1, 4, size=(n, k)).astype(float)
    table[: int(rng.integers(0, n))] = 2.0  # some blocks fully tied (not all)
    table[-1, 0] = 3.0 if table[-1, 1] != 3.0 else 1.0
    scale = [1.0, 1e200, 1e-200, 1 + 1e-12][seed % 4]
    table = table * scale if scale != 1 + 1e-12 else 1.0 + (table - 2.0) * 1e-12
    rows = [{"rater": "r", "item": f"i{i}", "system": f"s{j}", "score": table[i, j]}
            for i in range(n) for j in range(k)]
    res = friedman(pd.DataFrame(rows))
    ref = stats.friedmanchisquare(*table.T)
    assert res.statistic == float(ref.statistic) and res.pvalue == float(ref.pvalue)
    assert res.kendalls_w == float(ref.statistic) / (n * (k - 1))


# statsmodels test_pairwise.py TestTuckeyHSD4 ("unbalanced case verified in Matlab"): cylinders
# of 99 cars by country (France 4, Germany 9, Japan 15, Sweden 2, USA 69), alpha = 0.05
CYLINDERS = ("888888888848888888884666444444688884444888866664444666644444846688884444444444444444"
             "444664644444444")
COUNTRY = ("UUUUUUUUUUFUUUUUUUUUJUUUJGFGSGUUUUUGUUFUUUUUUUUUUGJUUUUGJJUSUFJGUUUUUUUUUUUUGJJUUJJJJJ"
           "JUUUUJUUUGUUU")
MATLAB_PAIRS = ["FG", "FJ", "FS", "FU", "GJ", "GS", "GU", "JS", "JU", "SU"]
MATLAB_DIFF = [0.22222222222222232, 0.13333333333333375, 0.0, 2.2898550724637685,
               -0.088888888888888573, -0.22222222222222232, 2.0676328502415462,
               -0.13333333333333375, 2.1565217391304348, 2.2898550724637685]
MATLAB_CI = [(-2.32022210717, 2.76466655161), (-2.247517583, 2.51418424967),
             (-3.66405224956, 3.66405224956), (0.113960166573, 4.46574997835),
             (-1.87278583908, 1.6950080613), (-3.529655688, 3.08521124356),
             (0.568180988881, 3.5670847116), (-3.31822643175, 3.05155976508),
             (0.951206924521, 3.36183655374), (-0.74487911754, 5.32458926247)]
MATLAB_REJECT = [False, False, False, True, False, False, True, False, True, False]


def test_tukey_kramer_matches_matlab_five_unequal_groups() -> None:
    df = pd.DataFrame({"system": list(COUNTRY), "score": [float(c) for c in CYLINDERS]})
    assert df["system"].value_counts().to_dict() == {"U": 69, "J": 15, "G": 9, "F": 4, "S": 2}
    t = glm_tukey(df, factors=(), alpha=0.05).tukey.set_index(["system_a", "system_b"])
    for pair, diff, (lo, hi), rej in zip(MATLAB_PAIRS, MATLAB_DIFF, MATLAB_CI, MATLAB_REJECT,
                                         strict=True):
        a, b = pair
        if (a, b) in t.index:
            row, sign = t.loc[(a, b)], 1.0
        else:
            row, sign = t.loc[(b, a)], -1.0
        assert sign * row["diff"] == pytest.approx(diff, abs=1e-12)
        got = sorted((sign * row["low"], sign * row["high"]))
        # Matlab's q_{0.95; 5, 94} is 3.9335848 (Gleason's approximation, as statsmodels'
        # qsturng); scipy's studentized_range gives 3.9335454, and the CDF written as its
        # double integral (quadrature, checked once) is 0.95 there to 1e-14 but 0.9500036 at
        # Matlab's q: half-widths differ by 1.0e-5 relative, in Matlab's disfavour
        np.testing.assert_allclose(got, [lo, hi], atol=1.1e-5 * (hi - lo) / 2)
        assert bool(row["reject"]) is rej
