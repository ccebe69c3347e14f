"""Agreement coefficients checked against the peer libraries' OWN test values.

Each case feeds a peer's test input to nlgeval and compares with the value the peer's test
suite asserts (the peer's number came from another program, named beside it). Provenance:

* ``krippendorff`` 0.9.0 (pln-fing-udelar/fast-krippendorff), ``tests/test_krippendorff.py``:
  ``test_nominal_metric_reliability_data`` (0.691358), ``test_interval_metric`` (0.810845),
  ``test_ratio_metric`` (0.797, Krippendorff 2011's 4 x 12 example), ``test_ratio_metric_with_
  zeros`` (1.0), ``test_perfect_agreement``, ``test_error_single_value_in_domain``,
  ``test_error_insufficient_coders_per_unit``;
* statsmodels 0.15.0, ``statsmodels/stats/tests/test_inter_rater.py``: ``UnweightedCohens`` /
  ``TestWeightedCohens`` (a SAS printout: kappa 0.4842, weighted kappa 0.4701 with scores
  0, 1, 2), ``test_cohens_kappa_irr`` (R ``irr::kappa2`` on the ``anxiety`` data: -0.006289308
  unweighted, 0.1459075 "equal", 0.2520325 "squared"), ``test_fleiss_kappa_irr`` (R
  ``irr::kappam.fleiss`` on Fleiss 1971's ``diagnoses``: 0.4302445);
* pingouin 0.7.0, ``tests/test_reliability.py::test_intraclass_corr``, second example (8 wines x
  4 judges from real-statistics.com, pingouin's ``icc`` dataset; values rounded by pingouin, the
  first six checked against R ``psych::ICC``), and its ``nan_policy="omit"`` case;
* the R package ICC (Wolak, Fairbairn & Paulsen 2012), ``ICCest`` with its default
  ``CI.type = "THD"`` (Thomas & Hultquist 1978), transcribed in this file: the unbalanced
  one-way ICC(1,1) and interval, written with R's n.not where nlgeval writes k0 (the same number).

Documented differences (see docs/human.md, "Agreement"): irr's weighted kappa drops a category
nobody used and weights the remaining categories by their *position*; nlgeval weights by the
category *value* (Cohen 1968), so a skipped scale point still counts as a step. pingouin drops a
target with a missing rating (listwise); nlgeval keeps every rating and reports the one-way
ICC(1) forms for an incomplete design (Shrout & Fleiss 1979; Donner 1986).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from nlgeval.errors import InputError
from nlgeval.human.agreement import (
    agreement_report,
    cohen_kappas,
    fleiss_kappa,
    icc,
    krippendorff_alpha,
    pairwise_cohen_kappa,
)

nan = np.nan


def to_long(matrix: np.ndarray) -> pd.DataFrame:
    """coders x units matrix (NaN = not rated) -> tidy ratings, units = items of one system."""
    r, u = np.nonzero(~np.isnan(matrix))
    return pd.DataFrame({"rater": [f"r{i}" for i in r], "item": [f"u{j:02d}" for j in u],
                         "system": "s", "score": matrix[r, u]})


# krippendorff tests/test_krippendorff.py: 3 coders x 15 units (nominal / interval cases)
KRIPP_3x15 = np.array([
    [nan, nan, nan, nan, nan, 3, 4, 1, 2, 1, 1, 3, 3, nan, 3],
    [1, nan, 2, 1, 3, 3, 4, 3, nan, nan, nan, nan, nan, nan, nan],
    [nan, nan, 2, 1, 3, 4, 4, nan, 2, 1, 1, 3, 3, nan, 4],
])
# the same suite's ordinal / ratio case: Krippendorff (2011), 4 observers x 12 units
KRIPP_4x12 = np.array([
    [1, 2, 3, 3, 2, 1, 4, 1, 2, nan, nan, nan],
    [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, nan, 3],
    [nan, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, nan],
    [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, nan],
])


@pytest.mark.parametrize(("matrix", "level", "digits", "expected"), [
    (KRIPP_3x15, "nominal", 6, 0.691358),
    (KRIPP_3x15, "interval", 6, 0.810845),
    (KRIPP_4x12, "ordinal", 3, 0.815),
    (KRIPP_4x12, "ratio", 3, 0.797),
    (np.array([[0.0, 1, 2], [0, 1, 2]]), "ratio", 12, 1.0),
    (np.array([[1.0, 2, 3, 4]] * 3), "nominal", 12, 1.0),
    (np.array([[1.0, 2, 3, 4]] * 3), "interval", 12, 1.0),
])
def test_krippendorff_package_test_values(matrix: np.ndarray, level: str, digits: int,
                                          expected: float) -> None:
    res = krippendorff_alpha(to_long(matrix), level)
    assert round(res.statistic, digits) == expected
    assert res.n_units == int(((~np.isnan(matrix)).sum(axis=0) >= 2).sum())


def test_krippendorff_ordinal_unused_scale_points_do_not_change_alpha() -> None:
    # the package's test_string_labels_ordinal_with_domain: a declared domain gives 0.815 too;
    # the ordinal metric sums frequencies between two values, so unused points add nothing
    long = to_long(KRIPP_4x12)
    assert krippendorff_alpha(long, "ordinal", scale=(1, 9)).statistic == pytest.approx(
        krippendorff_alpha(long, "ordinal").statistic, abs=1e-12)


def test_krippendorff_package_errors_become_input_errors() -> None:
    # test_error_single_value_in_domain: every rating the same value
    with pytest.raises(InputError, match="more than one value"):
        krippendorff_alpha(to_long(np.array([[1.0, 1], [1, 1]])), "nominal")
    # test_error_insufficient_coders_per_unit: no unit rated twice (also: a single rater)
    with pytest.raises(InputError, match="at least 2 raters"):
        krippendorff_alpha(to_long(np.array([[1.0, nan], [nan, 2]])), "interval")
    with pytest.raises(InputError, match="at least 2 raters"):
        krippendorff_alpha(to_long(np.array([[1.0, 2, 3]])), "interval")


def pairs_from_table(table: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Two raters' category codes (0, 1, ...) from their contingency table."""
    i, j = np.indices(table.shape)
    counts = np.asarray(table, dtype=int).ravel()
    return np.repeat(i.ravel(), counts).astype(float), np.repeat(j.ravel(), counts).astype(float)


def test_cohen_kappa_sas_printout() -> None:
    # statsmodels UnweightedCohens / TestWeightedCohens: SAS, table10, weights = scores 0, 1, 2
    a, b = pairs_from_table(np.array([[0, 4, 1], [0, 8, 0], [0, 1, 5]]))
    k = cohen_kappas(a, b, np.array([0.0, 1.0, 2.0]))
    assert round(k["unweighted"], 4) == 0.4842
    assert round(k["linear"], 4) == 0.4701


ANXIETY = np.array([
    3, 3, 3, 4, 5, 5, 2, 3, 5, 2, 2, 6, 1, 5, 2, 2, 1, 2, 4, 3, 3, 6, 4,
    6, 2, 4, 2, 4, 3, 3, 2, 3, 3, 3, 2, 2, 1, 3, 3, 4, 2, 1, 4, 4, 3, 2,
    1, 6, 1, 1, 1, 2, 3, 3, 1, 1, 3, 3, 2, 2,
], dtype=float).reshape(20, 3, order="F")  # irr's ``anxiety`` data: 20 subjects x 3 raters


def test_cohen_kappa_irr_anxiety_unweighted_agrees() -> None:
    # R irr::kappa2(anxiety[, 2:3]) = -0.006289308 (statsmodels test_cohens_kappa_irr)
    x, y = ANXIETY[:, 1], ANXIETY[:, 2]
    for cats in (np.arange(1.0, 7.0), np.unique(np.r_[x, y])):
        assert cohen_kappas(x, y, cats)["unweighted"] == pytest.approx(-0.006289308, abs=1e-9)


def test_cohen_kappa_irr_weights_by_position_nlgeval_by_value() -> None:
    # raters 2 and 3 never use 5 on the 1..6 scale. irr::kappa2(, "equal") = 0.1459075 and
    # (, "squared") = 0.2520325 weight the five used categories by position (4 -> 6 is one
    # step); nlgeval weights by value (4 -> 6 is two steps), with or without the scale.
    x, y = ANXIETY[:, 1], ANXIETY[:, 2]
    used = np.unique(np.r_[x, y])
    assert 5.0 not in used
    position = {v: float(i) for i, v in enumerate(used)}
    xp, yp = np.array([position[v] for v in x]), np.array([position[v] for v in y])
    irr_like = cohen_kappas(xp, yp, np.arange(float(len(used))))
    assert irr_like["linear"] == pytest.approx(0.1459075, abs=1e-7)
    assert irr_like["quadratic"] == pytest.approx(0.2520325, abs=1e-7)
    by_value = cohen_kappas(x, y, np.arange(1.0, 7.0))
    assert by_value == cohen_kappas(x, y, used)  # the skipped point counts either way
    assert by_value["linear"] != pytest.approx(0.1459075, abs=1e-3)
    # the value weights are sklearn's with the scale's labels (an independent implementation)
    sk = pytest.importorskip("sklearn.metrics")
    assert by_value["linear"] == pytest.approx(
        sk.cohen_kappa_score(x, y, weights="linear", labels=np.arange(1.0, 7.0)), abs=1e-12)
    # and through the tidy interface, with the declared scale
    long = pd.DataFrame({"rater": ["r2"] * 20 + ["r3"] * 20, "item": list(range(20)) * 2,
                         "system": "s", "score": np.r_[x, y]})
    row = pairwise_cohen_kappa(long, scale=(1, 6)).iloc[0]
    assert row["linear"] == pytest.approx(by_value["linear"], abs=1e-12)


DIAGNOSES = np.array([
    [4, 4, 4, 4, 4, 4], [2, 2, 2, 5, 5, 5], [2, 3, 3, 3, 3, 5], [5, 5, 5, 5, 5, 5],
    [2, 2, 2, 4, 4, 4], [1, 1, 3, 3, 3, 3], [3, 3, 3, 3, 5, 5], [1, 1, 3, 3, 3, 4],
    [1, 1, 4, 4, 4, 4], [5, 5, 5, 5, 5, 5], [1, 4, 4, 4, 4, 4], [1, 2, 4, 4, 4, 4],
    [2, 2, 2, 3, 3, 3], [1, 4, 4, 4, 4, 4], [2, 2, 4, 4, 4, 5], [3, 3, 3, 3, 3, 5],
    [1, 1, 1, 4, 5, 5], [1, 1, 1, 1, 1, 2], [2, 2, 4, 4, 4, 4], [1, 3, 3, 5, 5, 5],
    [5, 5, 5, 5, 5, 5], [2, 4, 4, 4, 4, 4], [2, 2, 4, 5, 5, 5], [1, 1, 4, 4, 4, 4],
    [1, 4, 4, 4, 4, 5], [2, 2, 2, 2, 2, 4], [1, 1, 1, 1, 5, 5], [2, 2, 4, 4, 4, 4],
    [1, 3, 3, 3, 3, 3], [5, 5, 5, 5, 5, 5],
], dtype=float)  # Fleiss (1971): 30 patients x 6 psychiatrists, 5 diagnoses


def test_fleiss_kappa_irr_diagnoses() -> None:
    # R irr::kappam.fleiss(diagnoses) = 0.4302445 (statsmodels test_fleiss_kappa_irr)
    res = fleiss_kappa(to_long(DIAGNOSES.T), scale=(1, 5))
    assert res.statistic == pytest.approx(0.4302445, abs=5e-8)
    assert (res.n_units, res.ratings_per_unit, res.n_units_dropped) == (30, 6, 0)


# pingouin's ``icc`` dataset (real-statistics.com): scores of wines 1..8 by judge A, B, C, D
WINE = np.array([1, 1, 3, 6, 6, 7, 8, 9, 2, 3, 8, 4, 5, 5, 7, 9, 0, 3, 1, 3, 5, 6, 7, 9,
                 1, 2, 4, 3, 6, 2, 9, 8], dtype=float).reshape(4, 8)


def wine_long() -> pd.DataFrame:
    return pd.DataFrame({"rater": np.repeat(list("ABCD"), 8), "item": np.tile(range(1, 9), 4),
                         "system": "wine", "score": WINE.ravel()})


def test_icc_pingouin_wine_example() -> None:
    forms, design = icc(wine_long())
    assert design == "complete"
    got = {f.type: f for f in forms}
    order = ["ICC(1,1)", "ICC(2,1)", "ICC(3,1)", "ICC(1,k)", "ICC(2,k)", "ICC(3,k)"]
    # pingouin: ICC, F, df1, df2, p-value, CI95 (as its test asserts them)
    exp_icc = [0.73, 0.73, 0.73, 0.91, 0.91, 0.92]
    exp_df2 = [24, 21, 21, 24, 21, 21]
    exp_p = [2.2e-06, 5.0e-06, 5.0e-06, 2.2e-06, 5.0e-06, 5.0e-06]
    exp_lo = [0.43, 0.43, 0.43, 0.75, 0.75, 0.75]
    exp_hi = [0.93, 0.93, 0.93, 0.98, 0.98, 0.98]
    for i, name in enumerate(order):
        f = got[name]
        assert round(f.icc, 2) == exp_icc[i], name
        assert round(f.F) == 12 and f.df1 == 7 and f.df2 == exp_df2[i], name
        np.testing.assert_almost_equal(f.pvalue, exp_p[i], decimal=7)
        np.testing.assert_almost_equal(f.ci_low, exp_lo[i], decimal=2)
        np.testing.assert_almost_equal(f.ci_high, exp_hi[i], decimal=2)


def test_icc_missing_rating_listwise_vs_all_ratings() -> None:
    df = wine_long().drop(index=3)  # judge A's rating of wine 4, as pingouin's test does
    # pingouin (nan_policy="omit") drops wine 4: ICC .75 / .92, F 13, df1 6 -- nlgeval gives
    # the same numbers when handed the same complete table ...
    forms, design = icc(df[df["item"] != 4])
    assert design == "complete"
    assert [round(f.icc, 2) for f in forms] == [0.75, 0.75, 0.75, 0.92, 0.92, 0.92]
    assert [round(f.F) for f in forms] == [13] * 6
    assert [f.df2 for f in forms] == [21, 18, 18, 21, 18, 18]
    # ... and by default keeps wine 4's three ratings: the one-way ICC(1) forms of all 8 wines
    forms, design = icc(df)
    assert design == "one-way" and [f.type for f in forms] == ["ICC(1,1)", "ICC(1,k)"]
    assert (forms[0].df1, forms[0].df2) == (7, 23)
    rep = agreement_report(df, scale=(0, 10))
    assert rep.icc_design == "one-way"


def r_icc_iccest_thd(groups: list[np.ndarray], alpha: float = 0.05) -> tuple[float, float, float]:
    """R package ICC (Wolak, Fairbairn & Paulsen 2012), ``ICCest(x, y, CI.type = "THD")``, its
    arithmetic transcribed step by step from its source (``ICCest.R``): mean squares from
    ``anova(aov(y ~ x))`` (here statsmodels' ``anova_lm``), var.a = (MSa - MSw) / k, the
    interval of Thomas & Hultquist (1978) with n.not = n.bar - sum((n_i - n.bar)^2) / ((a - 1)
    N)."""
    import statsmodels.formula.api as smf
    from scipy import stats
    from statsmodels.stats.anova import anova_lm

    df = pd.DataFrame([(f"g{i}", v) for i, g in enumerate(groups) for v in g], columns=["x", "y"])
    tab = anova_lm(smf.ols("y ~ C(x)", df).fit())
    num_df, denom_df = tab["df"].iloc[0], tab["df"].iloc[1]
    msa, msw = tab["mean_sq"].iloc[0], tab["mean_sq"].iloc[1]
    n_j = np.array([len(g) for g in groups], float)
    a, big_n = len(groups), n_j.sum()
    k = (1 / (a - 1)) * (n_j.sum() - (n_j ** 2).sum() / n_j.sum())
    var_a = (msa - msw) / k
    r = var_a / (msw + var_a)
    n_bar = big_n / a
    n_not = n_bar - ((n_j - n_bar) ** 2 / ((a - 1) * big_n)).sum()
    low_f = stats.f.isf(alpha / 2, num_df, denom_df)
    up_f = stats.f.isf(alpha / 2, denom_df, num_df)
    fl, fu = (msa / msw) / low_f, (msa / msw) * up_f
    return r, (fl - 1) / (fl + n_not - 1), (fu - 1) / (fu + n_not - 1)


@pytest.mark.parametrize("seed", range(5))
def test_icc_oneway_unbalanced_equals_r_icc_package(seed: int) -> None:
    # a Latin-square-like design: outputs rated by 1 to 4 different raters
    rng = np.random.default_rng(seed)
    sizes = rng.integers(1, 5, size=25)
    sizes[:2] = [3, 2]
    rows = []
    for u, m in enumerate(sizes):
        truth = rng.normal(3, 1)
        for r in rng.choice(12, size=m, replace=False):
            rows.append({"rater": f"r{r}", "item": f"u{u}", "system": "s",
                         "score": float(np.clip(np.round(truth + rng.normal(0, 0.8)), 1, 5))})
    df = pd.DataFrame(rows)
    forms, design = icc(df)
    assert design == "one-way"
    groups = [g["score"].to_numpy() for _, g in df.groupby("item", sort=False)]
    r, lo, hi = r_icc_iccest_thd(groups)
    one = forms[0]
    assert one.type == "ICC(1,1)"
    assert one.icc == pytest.approx(r, abs=1e-12)
    assert (one.ci_low, one.ci_high) == (pytest.approx(lo, abs=1e-12), pytest.approx(hi, abs=1e-12))
