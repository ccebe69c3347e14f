"""GLM + ANOVA + Tukey HSD with the model's error term; homogeneous subsets; letters.

Independent references:
* the textbook Latin-square ANOVA decomposition (e.g. Montgomery, Design and Analysis of
  Experiments, ch. 4): in a complete, balanced LSED every factor's sum of squares is
  n_per_level * sum (level mean - grand mean)^2 and the residual is what is left;
* statsmodels' ``anova_lm(typ=3)`` with sum-to-zero contrasts (SPSS's default Type III) on an
  unbalanced design: equal to our Type II for a main-effects model;
* statsmodels' ``pairwise_tukeyhsd`` in the one-way special case (no rater/item factors);
* statsmodels' sandbox ``homogeneous_subsets`` (SPSS-style step-down) on the same means and
  critical range;
* the 2009 paper's reported pattern is not reproducible (its ratings are not public), so the
  GLM is checked on the simulated LSED file ``tests/data/human_lsed_ratings.csv``.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from nlgeval.errors import InputError
from nlgeval.human.glm import glm_tukey, homogeneous_subsets, letter_display
from nlgeval.human.ordinal import ordinal_model
from nlgeval.human.ratings import read_ratings

DATA = Path(__file__).parent / "data" / "human_lsed_ratings.csv"


def test_balanced_lsed_anova_matches_textbook_decomposition() -> None:
    df = read_ratings(DATA, criterion="accuracy")
    res = glm_tukey(df)
    y = df["score"].to_numpy(float)
    grand = y.mean()
    expected = {}
    for f in ("system", "rater", "item"):
        g = df.groupby(f)["score"]
        expected[f] = float((g.size() * (g.mean() - grand) ** 2).sum())
    ss_total = float(((y - grand) ** 2).sum())
    a = res.anova.set_index("factor")
    for f, ss in expected.items():
        assert a.loc[f, "sum_sq"] == pytest.approx(ss, rel=1e-9)
    ss_resid = ss_total - sum(expected.values())
    assert a.loc["Residual", "sum_sq"] == pytest.approx(ss_resid, rel=1e-9)
    # df: 3 systems, 7 raters, 7 items; residual 64 - 1 - 3 - 7 - 7 = 46
    assert a.loc["system", "df"] == 3 and a.loc["Residual", "df"] == 46
    mse = ss_resid / 46
    assert res.mse == pytest.approx(mse)
    f_sys = expected["system"] / 3 / mse
    assert a.loc["system", "F"] == pytest.approx(f_sys)
    assert a.loc["system", "pvalue"] == pytest.approx(stats.f.sf(f_sys, 3, 46))
    # Tukey with the model MSE: balanced, n = 16 per system
    means = df.groupby("system")["score"].mean()
    for row in res.tukey.itertuples():
        diff = means[row.system_b] - means[row.system_a]
        q = abs(diff) / np.sqrt(mse / 16)
        assert row.diff == pytest.approx(diff)
        assert row.q == pytest.approx(q)
        assert row.pvalue_adjusted == pytest.approx(stats.studentized_range.sf(q, 4, 46),
                                                    rel=1e-6)
    assert res.n_harmonic == pytest.approx(16)
    assert res.critical_range == pytest.approx(
        stats.studentized_range.ppf(0.95, 4, 46) * np.sqrt(mse / 16), rel=1e-6)


def test_type2_equals_spss_type3_unbalanced() -> None:
    import statsmodels.formula.api as smf
    from statsmodels.stats.anova import anova_lm

    df = read_ratings(DATA, criterion="clarity")
    df = df.drop(index=[0, 5, 17, 40, 41]).reset_index(drop=True)  # unbalanced
    res = glm_tukey(df)
    m = smf.ols("score ~ C(system, Sum) + C(rater, Sum) + C(item, Sum)", data=df).fit()
    t3 = anova_lm(m, typ=3)
    a = res.anova.set_index("factor")
    for f in ("system", "rater", "item"):
        assert a.loc[f, "sum_sq"] == pytest.approx(t3.loc[f"C({f}, Sum)", "sum_sq"], rel=1e-9)
        assert a.loc[f, "pvalue"] == pytest.approx(t3.loc[f"C({f}, Sum)", "PR(>F)"], rel=1e-9)
    assert any("Tukey-Kramer" in n for n in res.notes)


def test_oneway_special_case_matches_pairwise_tukeyhsd() -> None:
    from statsmodels.stats.multicomp import pairwise_tukeyhsd

    rng = np.random.default_rng(11)
    groups = {"A": 20, "B": 15, "C": 25, "D": 18}
    shift = {"A": 0.0, "B": 0.4, "C": 1.0, "D": 0.1}
    df = pd.DataFrame([
        {"system": g, "score": rng.normal(shift[g], 1)} for g, n in groups.items()
        for _ in range(n)
    ])
    res = glm_tukey(df, factors=())
    ref = pairwise_tukeyhsd(df["score"], df["system"], alpha=0.05)
    tab = pd.DataFrame(ref.summary().data[1:], columns=ref.summary().data[0])
    for row in res.tukey.itertuples():
        r = tab[(tab["group1"] == row.system_a) & (tab["group2"] == row.system_b)]
        if r.empty:  # statsmodels orders pairs alphabetically
            r = tab[(tab["group1"] == row.system_b) & (tab["group2"] == row.system_a)]
            sign = -1
        else:
            sign = 1
        assert sign * row.diff == pytest.approx(float(r["meandiff"].iloc[0]), abs=1e-4)
        assert row.pvalue_adjusted == pytest.approx(float(r["p-adj"].iloc[0]), abs=1e-4)
        assert bool(row.reject) == bool(r["reject"].iloc[0])
    # and the exact (unrounded) statsmodels values
    np.testing.assert_allclose(
        np.sort(np.abs(res.tukey["diff"].to_numpy())), np.sort(np.abs(ref.meandiffs)))


def test_homogeneous_subsets_by_hand_and_vs_statsmodels_sandbox() -> None:
    means = pd.Series({"a": 1.0, "b": 1.5, "c": 2.2, "d": 4.0})
    subs = homogeneous_subsets(means, 1.0)
    assert subs == [["a", "b"], ["b", "c"], ["d"]]
    assert letter_display(subs, ["a", "b", "c", "d"]) == {"a": "a", "b": "ab", "c": "b",
                                                          "d": "c"}
    from statsmodels.sandbox.stats.multicomp import homogeneous_subsets as sm_hs
    from statsmodels.sandbox.stats.multicomp import set_remove_subs

    rng = np.random.default_rng(3)
    for _ in range(20):
        vals = np.sort(rng.uniform(0, 5, size=7))
        crit = float(rng.uniform(0.3, 2.0))
        ours = homogeneous_subsets(pd.Series(vals, index=[f"s{i}" for i in range(7)]), crit)
        _, _, lli, _ = sm_hs(vals, crit)
        ref = set_remove_subs([tuple(x) for x in lli] + [(i,) for i in range(7)])
        ref_names = sorted(sorted(f"s{i}" for i in s) for s in ref)
        assert sorted(sorted(s) for s in ours) == ref_names


def test_glm_errors() -> None:
    with pytest.raises(InputError, match="at least 2 systems"):
        glm_tukey(pd.DataFrame({"system": ["a", "a"], "score": [1, 2], "rater": ["1", "2"],
                                "item": ["1", "2"]}))
    tiny = pd.DataFrame({"system": ["a", "b", "a", "b"], "score": [1, 2, 2, 3],
                         "rater": ["1", "1", "2", "2"], "item": ["1", "2", "3", "4"]})
    with pytest.raises(InputError, match="no residual degrees of freedom"):
        glm_tukey(tiny)


def test_single_level_factor_is_dropped_with_note() -> None:
    df = read_ratings(DATA, criterion="accuracy")
    one = df.assign(rater="only-rater")
    res = glm_tukey(one)
    assert "rater" not in set(res.anova["factor"])
    assert any("single level" in n for n in res.notes)


def test_ordinal_model_runs_and_detects_effect() -> None:
    df = read_ratings(DATA, criterion="accuracy")
    res = ordinal_model(df)
    assert res.lr_df == 3
    assert 0 <= res.lr_pvalue < 0.05  # strong simulated system effect
    # pCRU-random is much worse than SUMTIME (the reference level, first in the file order?)
    assert len(res.coefficients) == 3


def test_ordinal_model_binary_equals_log_odds_ratio_and_g_test() -> None:
    # with 2 categories the cumulative-logit model is logistic regression: the system effect is
    # the log odds ratio of the 2x2 table and the LR statistic is the G-test (closed forms)
    table = np.array([[12, 8], [5, 15]])  # rows: systems a, b; columns: score 0, 1
    rows = []
    for i, s in enumerate(["a", "b"]):
        for y in (0, 1):
            rows += [{"system": s, "score": float(y)}] * int(table[i, y])
    res = ordinal_model(pd.DataFrame(rows), factors=())
    log_or = np.log((table[1, 1] * table[0, 0]) / (table[1, 0] * table[0, 1]))
    assert res.coefficients["coef"].iloc[0] == pytest.approx(log_or, abs=1e-4)
    g, p, dof, _ = stats.chi2_contingency(table, correction=False, lambda_="log-likelihood")
    assert res.lr_statistic == pytest.approx(g, abs=1e-5)
    assert res.lr_pvalue == pytest.approx(p, rel=1e-4)
