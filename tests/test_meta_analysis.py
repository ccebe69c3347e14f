"""Meta-analysis of correlations (issue 30): every number against a published reference.

References and where the numbers were read (metafor, Viechtbauer 2010, repository
wviechtb/metafor):

* BCG vaccine trials (Colditz et al. 1994; metafor ``dat.bcg``), log risk ratios of
  ``escalc(measure="RR")``: REML fit printed in metafor 5.1-12 ``docs/reference/rma.uni.html``
  (and ``dat.bcg.html``): tau^2 = 0.3132, estimate -0.7145, se 0.1798, CI [-1.0669, -0.3622],
  Q(df = 12) = 152.2330, I^2 = 92.22 %, H^2 = 12.86, ``predict(res, transf=exp)`` prediction
  interval [0.1546, 1.5490]. DL fit: metafor ``tests/testthat/test_misc_metan_vs_rma.uni_with_
  dat.bcg.r`` (checked against Stata's metan): estimate -0.7141, CI [-1.0644, -0.3638],
  tau^2 = 0.3088, I^2 = 92.1173 %.
* Moderator ``alloc`` on the same data, ``docs/reference/rma.uni.html``: ``rma(yi, vi, mods =
  ~ factor(alloc))`` tau^2 = 0.3615, QE(df = 10) = 132.3676, QM(df = 2) = 1.7675, p = 0.4132;
  ``mods = ~ 0 + factor(alloc)``: alternate -0.5180 (se 0.4412), random -0.9658 (0.2672),
  systematic -0.4289 (0.3449); subgroup fits (REML): alternate tau^2 0.1326, -0.5408 (0.2816),
  Q 5.5625; random 0.3925, -0.9710 (0.2760), Q 110.2133; systematic 0.4003, -0.4242 (0.3597),
  Q 16.5919.
* CLASP trials (DerSimonian & Kacker 2007, Tables 3-4, as metafor's
  ``tests/testthat/test_analysis_example_dersimonian2007.r`` records them), log odds ratios:
  PM tau = 0.3681, mu = -0.3811, se 0.2060; DL 0.2323, -0.3240, 0.1540; REML 0.1843, -0.2980,
  0.1343.
* Conscientiousness and medication adherence (Molloy et al. 2014; metafor ``dat.molloy2014``,
  ``escalc(measure="ZCOR")``), metafor 2.2.7 ``docs/reference/dat.molloy2014.html``: REML
  tau^2 = 0.0081, estimate 0.1499, se 0.0316, CI [0.0881, 0.2118], Q(df = 15) = 38.1595,
  I^2 = 61.73 %; ``predict(res, transf=transf.ztor)``: 0.149 [0.088, 0.209], prediction
  interval [-0.037, 0.325].
* statsmodels' ``combine_effects`` (DL, PM, and its HKSJ "random effect wls" interval).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from nlgeval.errors import InputError
from nlgeval.meta_analysis import (
    correlation_effects,
    estimate_tau2,
    fisher_z,
    fisher_z_variance,
    inverse_fisher_z,
    meta_regression,
    random_effects,
    subgroup_analysis,
    variance_from_interval,
)
from nlgeval.meta_analysis.analysis import meta_analyse, verdict_line
from nlgeval.meta_analysis.compare import compare_metrics, dependent_difference_variance
from nlgeval.meta_analysis.estimators import _dl, _pm
from nlgeval.meta_analysis.forest import forest_data, forest_plot

# dat.bcg: tpos, tneg, cpos, cneg, alloc (metafor docs/reference/dat.bcg.html)
BCG = [(4, 119, 11, 128, "random"), (6, 300, 29, 274, "random"), (3, 228, 11, 209, "random"),
       (62, 13536, 248, 12619, "random"), (33, 5036, 47, 5761, "alternate"),
       (180, 1361, 372, 1079, "alternate"), (8, 2537, 10, 619, "random"),
       (505, 87886, 499, 87892, "random"), (29, 7470, 45, 7232, "random"),
       (17, 1699, 65, 1600, "systematic"), (186, 50448, 141, 27197, "systematic"),
       (5, 2493, 3, 2338, "systematic"), (27, 16886, 29, 17825, "systematic")]
# dat.molloy2014: ri, ni (metafor docs/reference/dat.molloy2014.html)
MOLLOY_R = [0.187, 0.162, 0.34, 0.32, 0.27, 0.0, 0.175, 0.05, 0.26, 0.01, -0.09, 0.37, 0.0,
            0.15, 0.24, 0.04]
MOLLOY_N = [109, 749, 55, 107, 72, 65, 174, 326, 58, 771, 56, 91, 116, 537, 158, 65]
# CLASP (DerSimonian & Kacker 2007): n1i, n2i, ai, ci
CLASP = ([156, 303, 565, 1570, 103, 4659], [74, 303, 477, 1565, 105, 4650],
         [5, 5, 12, 69, 9, 313], [8, 17, 9, 94, 11, 352])


def bcg() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """escalc(measure="RR"): log risk ratio and its variance (closed form)."""
    a, b, c, d = (np.array([row[i] for row in BCG], dtype=float) for i in range(4))
    y = np.log(a / (a + b)) - np.log(c / (c + d))
    v = 1 / a - 1 / (a + b) + 1 / c - 1 / (c + d)
    return y, v, np.array([row[4] for row in BCG])


def test_escalc_rr_matches_the_printed_effects() -> None:
    y, v, _ = bcg()
    assert np.round(y[:3], 4).tolist() == [-0.8893, -1.5854, -1.3481]
    assert np.round(v[:3], 4).tolist() == [0.3256, 0.1946, 0.4154]


def test_bcg_reml_matches_metafor() -> None:
    y, v, _ = bcg()
    res = random_effects(y, v, method="reml", prediction="metafor")
    assert res.tau2 == pytest.approx(0.3132, abs=5e-5)
    assert res.statistic == pytest.approx(-0.7145, abs=5e-5)
    assert res.se == pytest.approx(0.1798, abs=5e-5)
    assert (res.ci_low, res.ci_high) == pytest.approx((-1.0669, -0.3622), abs=5e-5)
    assert res.q == pytest.approx(152.2330, abs=5e-5) and res.q_df == 12
    assert 100 * res.i2 == pytest.approx(92.22, abs=5e-3)
    assert res.h2 == pytest.approx(12.86, abs=5e-3)
    assert (math.exp(res.pi_low), math.exp(res.pi_high)) == pytest.approx((0.1546, 1.5490),
                                                                           abs=5e-5)


def test_bcg_dl_matches_metafor_and_metan() -> None:
    y, v, _ = bcg()
    res = random_effects(y, v, method="dl")
    assert res.tau2 == pytest.approx(0.3088, abs=5e-5)
    assert res.statistic == pytest.approx(-0.7141, abs=5e-5)
    assert (res.ci_low, res.ci_high) == pytest.approx((-1.0644, -0.3638), abs=5e-5)
    assert 100 * res.i2 == pytest.approx(92.1173, abs=5e-5)


@pytest.mark.parametrize(("method", "tau", "mu", "se"), [
    ("pm", 0.3681, -0.3811, 0.2060), ("dl", 0.2323, -0.3240, 0.1540),
    ("reml", 0.1843, -0.2980, 0.1343)])
def test_clasp_matches_dersimonian_kacker_2007(method: str, tau: float, mu: float,
                                               se: float) -> None:
    n1, n2, a, c = (np.array(x, dtype=float) for x in CLASP)
    b, d = n1 - a, n2 - c
    y, v = np.log(a * d / (b * c)), 1 / a + 1 / b + 1 / c + 1 / d
    res = random_effects(y, v, method=method)
    assert res.tau == pytest.approx(tau, abs=5e-5)
    assert res.statistic == pytest.approx(mu, abs=5e-5)
    assert res.se == pytest.approx(se, abs=5e-5)


@pytest.mark.parametrize("method", ["dl", "pm"])
def test_tau2_equals_statsmodels_and_the_general_formula(method: str) -> None:
    from statsmodels.stats.meta_analysis import combine_effects

    y, v, _ = bcg()
    ones = np.ones((len(y), 1))
    ours = estimate_tau2(y, v, method)
    sm = combine_effects(y, v, method_re=method, atol=1e-12, maxiter=1000)
    assert ours == pytest.approx(max(0.0, float(sm.tau2)), rel=1e-8)
    general = _dl(y, v, ones) if method == "dl" else _pm(y, v, ones)
    assert general == pytest.approx(ours, rel=1e-8)
    res = random_effects(y, v, method=method)
    frame = sm.summary_frame()
    assert res.statistic == pytest.approx(frame.loc["random effect", "eff"], rel=1e-8)
    assert (res.ci_low, res.ci_high) == pytest.approx(
        (frame.loc["random effect", "ci_low"], frame.loc["random effect", "ci_upp"]), rel=1e-6)


def test_dl_is_truncated_at_zero_where_statsmodels_is_not() -> None:
    from statsmodels.stats.meta_analysis import combine_effects

    y, v = np.array([0.10, 0.11, 0.12]), np.array([0.05, 0.05, 0.05])
    assert float(combine_effects(y, v, method_re="dl").tau2) < 0
    assert estimate_tau2(y, v, "dl") == 0.0


def test_reml_solves_the_restricted_score_equation() -> None:
    y, v, _ = bcg()
    tau2 = estimate_tau2(y, v, "reml")
    w = 1 / (v + tau2)
    P = np.diag(w) - np.outer(w, w) / w.sum()
    assert float(y @ P @ P @ y) == pytest.approx(float(np.trace(P)), rel=1e-8)


def test_hartung_knapp_matches_statsmodels_and_closed_form() -> None:
    from statsmodels.stats.meta_analysis import combine_effects

    y, v, _ = bcg()
    res = random_effects(y, v, method="dl", hartung_knapp=True)
    sm = combine_effects(y, v, method_re="dl")
    low, high = sm.conf_int(use_t=True)[3]
    assert (res.ci_low, res.ci_high) == pytest.approx((low, high), rel=1e-8)
    w = 1 / (v + res.tau2)
    se = math.sqrt(np.sum(w * (y - res.statistic) ** 2) / (12 * w.sum()))
    t = stats.t.isf(0.025, 12)
    assert res.se == pytest.approx(se, rel=1e-12)
    assert res.ci_high - res.ci_low == pytest.approx(2 * t * se, rel=1e-12)


def test_riley_prediction_interval_closed_form() -> None:
    y, v, _ = bcg()
    res = random_effects(y, v, method="reml")
    half = stats.t.isf(0.025, 11) * math.sqrt(res.se ** 2 + res.tau2)
    assert (res.pi_low, res.pi_high) == pytest.approx(
        (res.statistic - half, res.statistic + half), rel=1e-12)
    two = random_effects(y[:2], v[:2])
    assert math.isnan(two.pi_low) and math.isnan(two.pi_high)


def test_molloy2014_correlations_match_metafor() -> None:
    eff = correlation_effects(pd.DataFrame({"study": range(16), "r": MOLLOY_R, "n": MOLLOY_N}))
    assert eff["yi"].round(4).tolist()[:3] == [0.1892, 0.1634, 0.3541]
    res = random_effects(eff["yi"], eff["vi"], method="reml", prediction="metafor")
    assert res.tau2 == pytest.approx(0.0081, abs=5e-5)
    assert (res.statistic, res.se) == pytest.approx((0.1499, 0.0316), abs=5e-5)
    assert (res.ci_low, res.ci_high) == pytest.approx((0.0881, 0.2118), abs=5e-5)
    assert res.q == pytest.approx(38.1595, abs=5e-5)
    assert 100 * res.i2 == pytest.approx(61.73, abs=5e-3)
    back = np.tanh([res.statistic, res.ci_low, res.ci_high, res.pi_low, res.pi_high])
    assert back == pytest.approx([0.149, 0.088, 0.209, -0.037, 0.325], abs=5e-4)


def test_fisher_z_closed_form() -> None:
    assert fisher_z(0.5) == pytest.approx(0.5 * math.log(3.0), rel=1e-15)
    r = np.linspace(-0.99, 0.99, 41)
    assert inverse_fisher_z(fisher_z(r)) == pytest.approx(r, abs=1e-14)
    assert inverse_fisher_z(1.0) == pytest.approx((math.e ** 2 - 1) / (math.e ** 2 + 1))
    assert fisher_z_variance(53) == pytest.approx(1 / 50)
    z, se = 0.3, 0.12
    crit = stats.norm.isf(0.05)
    lo, hi = math.tanh(z - crit * se), math.tanh(z + crit * se)
    assert variance_from_interval(lo, hi, 0.9) == pytest.approx(se * se, rel=1e-12)


def test_meta_regression_on_a_factor_matches_metafor() -> None:
    y, v, alloc = bcg()
    order = np.argsort([["alternate", "random", "systematic"].index(a) for a in alloc],
                       kind="stable")
    res = meta_regression(y[order], v[order], alloc[order], method="reml")
    assert res.tau2 == pytest.approx(0.3615, abs=5e-5)
    assert res.qe == pytest.approx(132.3676, abs=5e-5) and res.df_residual == 10
    assert (res.statistic, res.pvalue, res.df) == pytest.approx((1.7675, 0.4132, 2), abs=5e-5)
    levels = res.levels.set_index("level")
    assert levels["estimate"].tolist() == pytest.approx([-0.5180, -0.9658, -0.4289], abs=5e-5)
    assert levels["se"].tolist() == pytest.approx([0.4412, 0.2672, 0.3449], abs=5e-5)


def test_subgroup_analysis_matches_metafor_subgroup_fits() -> None:
    y, v, alloc = bcg()
    res = subgroup_analysis(y, v, alloc, method="reml")
    sub = res.subgroups.set_index("level").loc[["alternate", "random", "systematic"]]
    assert sub["tau2"].tolist() == pytest.approx([0.1326, 0.3925, 0.4003], abs=5e-5)
    assert sub["estimate"].tolist() == pytest.approx([-0.5408, -0.9710, -0.4242], abs=5e-5)
    assert sub["se"].tolist() == pytest.approx([0.2816, 0.2760, 0.3597], abs=5e-5)
    assert sub["q"].tolist() == pytest.approx([5.5625, 110.2133, 16.5919], abs=5e-5)
    # Q_between from the published subgroup estimates (Borenstein et al. 2009, ch. 19)
    est, se = np.array([-0.5408, -0.9710, -0.4242]), np.array([0.2816, 0.2760, 0.3597])
    w = 1 / se ** 2
    q_between = float(np.sum(w * (est - np.sum(w * est) / w.sum()) ** 2))
    assert res.statistic == pytest.approx(q_between, abs=2e-3) and res.df == 2
    assert res.pvalue == pytest.approx(stats.chi2.sf(res.statistic, 2))


def test_dependent_difference_variance_matches_simulation() -> None:
    rng = np.random.default_rng(7)
    corr = np.array([[1.0, 0.7, 0.5], [0.7, 1.0, 0.3], [0.5, 0.3, 1.0]])  # a, b, human
    chol, n = np.linalg.cholesky(corr), 150
    draws = []
    for _ in range(3000):
        x = rng.standard_normal((n, 3)) @ chol.T
        r = np.corrcoef(x.T)
        draws.append(math.atanh(r[0, 2]) - math.atanh(r[1, 2]))
    expected = float(dependent_difference_variance(0.5, 0.3, 0.7, n))
    assert np.var(draws) == pytest.approx(expected, rel=0.08)
    # independent metrics: twice the variance of one z
    assert float(dependent_difference_variance(0.4, 0.4, 0.16, 103)) < 2 / 100


def test_compare_metrics_pools_per_study_differences() -> None:
    t = pd.DataFrame({"study": ["a", "b", "c"], "r_a": [0.5, 0.45, 0.6],
                      "r_b": [0.4, 0.42, 0.41], "r_ab": [0.8, 0.7, 0.75], "n": [300, 200, 250]})
    res = compare_metrics(t, "chrf", "bleu", method="dl")
    d = np.arctanh(t["r_a"]) - np.arctanh(t["r_b"])
    vi = dependent_difference_variance(t["r_a"], t["r_b"], t["r_ab"], t["n"])
    direct = random_effects(d, vi, method="dl")
    assert res.statistic == pytest.approx(direct.statistic, rel=1e-12)
    assert res.statistic > 0 and res.k == 3


def test_forest_plot_draws_the_known_coordinates() -> None:
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.patches import Polygon

    t = pd.DataFrame({"study": ["a", "b", "c"], "r": [0.3, 0.5, 0.4], "n": [53, 103, 28]})
    fit = random_effects(np.arctanh(t["r"]), 1 / (t["n"] - 3), method="dl")
    data = forest_data(t, fit)
    crit = stats.norm.isf(0.025)
    assert [row["y"] for row in data["rows"]] == [3, 2, 1]
    first = data["rows"][0]
    assert (first["low"], first["high"]) == pytest.approx(
        (math.tanh(math.atanh(0.3) - crit / math.sqrt(50)),
         math.tanh(math.atanh(0.3) + crit / math.sqrt(50))), rel=1e-12)
    assert data["diamond"]["x"] == pytest.approx(
        [math.tanh(fit.ci_low), math.tanh(fit.statistic), math.tanh(fit.ci_high),
         math.tanh(fit.statistic)], rel=1e-12)
    fig = forest_plot(t, fit)
    ax = fig.axes[0]
    diamonds = [p for p in ax.patches if isinstance(p, Polygon)]
    assert len(ax.patches) == 4 and len(diamonds) == 1
    corners = diamonds[0].get_xy()[:4]
    assert corners[:, 0] == pytest.approx(data["diamond"]["x"], rel=1e-12)
    assert corners[:, 1] == pytest.approx([0.0, 0.3, 0.0, -0.3])
    ci_lines = [line.get_xdata() for line in ax.lines if list(line.get_ydata()) == [3, 3]]
    assert list(ci_lines[0]) == pytest.approx([first["low"], first["high"]])
    assert [t.get_text() for t in ax.get_yticklabels()] == ["a", "b", "c", "Random effects"]


@pytest.mark.parametrize(("column", "value", "message"), [
    ("r", 1.0, "strictly between -1 and 1"), ("r", -1.2, "strictly between -1 and 1"),
    ("n", 3, "above 3"), ("n", 10.5, "whole number"), ("r", "abc", "finite number")])
def test_bad_effects_name_row_and_column(column: str, value: object, message: str) -> None:
    table = pd.DataFrame({"study": ["a", "b"], "r": [0.5, 0.3], "n": [40, 50]}, dtype=object)
    table.loc[1, column] = value
    with pytest.raises(InputError) as exc:
        correlation_effects(table, file="mine.csv")
    assert exc.value.row == 3 and exc.value.column == column and message in str(exc.value)
    assert str(exc.value).startswith("mine.csv, row 3")


def test_missing_columns_and_duplicate_studies_are_errors() -> None:
    with pytest.raises(InputError, match="missing column"):
        correlation_effects(pd.DataFrame({"study": ["a"], "r": [0.5]}))
    dup = pd.DataFrame({"study": ["a", "a", "b"], "r": [0.5, 0.4, 0.3], "n": [40, 50, 60]})
    with pytest.raises(InputError, match="appears twice"):
        meta_analyse(dup)


def test_verdicts_read_the_prediction_interval() -> None:
    row = {"metric": "m", "construct": "c", "k": 6, "r_pooled": 0.5, "ci_low": 0.3,
           "ci_high": 0.6, "pi_low": 0.1, "pi_high": 0.8, "i2": 0.7}
    assert verdict_line(row).endswith("positive in any comparable data set")
    assert verdict_line({**row, "pi_low": -0.2}).endswith("validity depends on the data set")
    assert "too few data sets to say" in verdict_line({**row, "pi_low": -0.2, "i2": 0.1})
    assert verdict_line({**row, "ci_low": -0.1, "pi_low": -0.5}).endswith("on average")
    assert "too few data sets for a prediction interval" in verdict_line(
        {**row, "k": 2, "pi_low": float("nan"), "pi_high": float("nan")})


def test_meta_analyse_groups_by_metric_and_construct() -> None:
    eff = pd.DataFrame({"metric": ["a"] * 3 + ["b"] * 3, "construct": "fluency",
                        "study": ["s1", "s2", "s3"] * 2, "r": [0.5, 0.3, 0.4, 0.2, 0.1, 0.3],
                        "n": [50, 80, 60] * 2, "task": ["x", "x", "y"] * 2})
    res = meta_analyse(eff, tau2="pm", moderator="task")
    assert res.pooled["metric"].tolist() == ["a", "b"]
    direct = random_effects(np.arctanh([0.2, 0.1, 0.3]), 1 / (np.array([50, 80, 60]) - 3),
                            method="pm")
    assert res.pooled["r_pooled"].iloc[1] == pytest.approx(math.tanh(direct.statistic))
    assert set(res.moderators["level"]) == {"x", "y"}
    assert res.effects.groupby("metric")["weight"].sum().tolist() == pytest.approx([1, 1])


# Computed for these tests with R 4.2.2 (Debian bookworm): robumeta 2.0 ``robu(y ~ 1 | y ~ x,
# studynum = study, var.eff.size = v, modelweights = "CORR", rho = 0.8 | 0.3, small = FALSE)``
# and metafor 3.8.1 ``rma(yi, vi, data = escalc("RR", ... dat.bcg), method = "REML",
# test = "knha")`` and ``method = "PM"`` (2026-11-25).
RVE_STUDY = "s1 s1 s2 s3 s3 s3 s4 s5 s5 s6 s7 s7 s8 s9 s9 s10".split()
RVE_Y = [0.31, 0.42, 0.12, 0.55, 0.48, 0.61, 0.05, 0.27, 0.22, 0.38, 0.15, 0.09, 0.44, 0.33,
         0.29, 0.18]
RVE_V = [0.010, 0.012, 0.020, 0.008, 0.009, 0.008, 0.030, 0.015, 0.014, 0.011, 0.025, 0.022,
         0.009, 0.013, 0.012, 0.018]
RVE_X = [1, 1, 0, 1, 1, 1, 0, 0, 0, 1, 0, 0, 1, 1, 1, 0]


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_robust_variance_matches_robumeta() -> None:
    from nlgeval.meta_analysis.robust import robust_variance

    res = robust_variance(RVE_Y, RVE_V, RVE_STUDY, rho=0.8)
    assert res.tau2 == pytest.approx(0.0113207472, abs=1e-10)
    assert (res.statistic, res.se) == pytest.approx((0.3081330146, 0.0495989453), abs=1e-10)
    assert res.df == 9 and res.m == 10 and res.k == 16
    assert 100 * res.i2 == pytest.approx(45.1473729284, abs=1e-8)
    X = np.column_stack([np.ones(16), RVE_X])
    reg = robust_variance(RVE_Y, RVE_V, RVE_STUDY, X, rho=0.8)
    assert reg.tau2 == 0.0 and reg.df == 8
    assert reg.coefficients["estimate"].tolist() == pytest.approx([0.1584201188, 0.2615511927],
                                                                  abs=1e-10)
    assert reg.coefficients["se"].tolist() == pytest.approx([0.0335651079, 0.0541830011],
                                                            abs=1e-10)
    low_rho = robust_variance(RVE_Y, RVE_V, RVE_STUDY, rho=0.3)
    assert (low_rho.tau2, low_rho.statistic, low_rho.se) == pytest.approx(
        (0.0110948392, 0.3084002590, 0.0495961204), abs=1e-10)


def test_robust_variance_with_one_effect_per_study_is_dl_with_a_sandwich() -> None:
    from nlgeval.meta_analysis.robust import robust_variance

    y, v, _ = bcg()
    res = robust_variance(y, v, [str(i) for i in range(len(y))])
    assert res.tau2 == pytest.approx(estimate_tau2(y, v, "dl"), rel=1e-12)
    w = 1 / (v + res.tau2)
    mu = np.sum(w * y) / w.sum()
    se = math.sqrt(np.sum(w ** 2 * (y - mu) ** 2) / w.sum() ** 2 * 13 / 12)
    assert (res.statistic, res.se) == pytest.approx((mu, se), rel=1e-12)


def test_hartung_knapp_and_pm_match_metafor() -> None:
    y, v, _ = bcg()
    res = random_effects(y, v, method="reml", hartung_knapp=True, prediction="metafor")
    assert (res.se, res.ci_low, res.ci_high) == pytest.approx(
        (0.1807917455, -1.1084437230, -0.3206209737), abs=1e-7)
    assert (res.pi_low, res.pi_high) == pytest.approx((-1.9960169670, 0.5669522703), abs=1e-6)
    pm = random_effects(y, v, method="pm")
    # metafor finds the PM root with uniroot's default tolerance (about 1e-4)
    assert pm.tau2 == pytest.approx(0.3180937119, abs=1e-4)
    assert pm.statistic == pytest.approx(-0.7149704056, abs=1e-5)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_meta_analyse_with_rve_pools_several_effects_per_study() -> None:
    from nlgeval.meta_analysis.robust import robust_variance

    r = np.tanh(RVE_Y)
    n = np.round(1 / np.array(RVE_V) + 3).astype(int)
    eff = pd.DataFrame({"study": RVE_STUDY, "r": r, "n": n,
                        "criterion": [f"c{i}" for i in range(16)]})
    res = meta_analyse(eff, dependence="rve", rho=0.8)
    direct = robust_variance(np.arctanh(r), 1 / (n - 3), RVE_STUDY, rho=0.8)
    row = res.pooled.iloc[0]
    assert (row.k, row.n_effects) == (10, 16)
    assert row.z_pooled == pytest.approx(direct.statistic, rel=1e-12)
    assert row.se == pytest.approx(direct.se, rel=1e-12)
    with pytest.raises(InputError, match="appears twice"):
        meta_analyse(eff)  # several effects per study need dependence="rve"
