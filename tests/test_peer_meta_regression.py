"""Meta-regression on a categorical moderator against R metafor, with tau^2 > 0 and tau^2 = 0.

Reference values computed for these tests with R 4.2.2 (Debian bookworm) and metafor 3.8.1
(2026-11-26): ``rma(y, v, mods = ~ g, method = "DL" | "REML" | "PM", test = "z" | "knha",
control = list(threshold = 1e-12, maxiter = 1000))`` with ``g`` a factor of three levels:

* Kacker's (2004) nine measurements (statsmodels' ``exk1`` data), ``g`` = a, a, a, b, b, b,
  c, c, c: tau^2 > 0 for every estimator;
* Fine's (1993) 17 log odds ratios (statsmodels' ``results_or_dl_hk`` inputs), ``g`` = 6 x a,
  6 x b, 5 x c: Q_E < k - p, so tau^2 is truncated at 0 and the Hartung-Knapp factor
  ``Q_E / (k - p) < 1`` shrinks the standard errors (neither metafor nor nlgeval truncates it
  at 1).

``b`` and ``se`` of metafor are the intercept (level a) and the two contrasts; nlgeval reports
each level's estimate, so level a's estimate and se are metafor's intercept's.
"""

from __future__ import annotations

import numpy as np
import pytest

from nlgeval.meta_analysis import meta_regression

KACKER_Y = np.array([61.00, 61.40, 62.21, 62.30, 62.34, 62.60, 62.70, 62.84, 65.90])
KACKER_V = np.array([0.2025, 1.2100, 0.0900, 0.2025, 0.3844, 0.5625, 0.0676, 0.0225, 1.8225])
KACKER_G = ["a"] * 3 + ["b"] * 3 + ["c"] * 3

# method, test: tau2, QM, QMp, b (intercept, b - a, c - a), se of the intercept
KACKER_METAFOR = {
    ("dl", False): (0.12779776028139, 7.28978579406509, 0.0261242076842529,
                    (61.6997696601221, 0.679981842640516, 1.20963006566896),
                    0.345723190430464),
    ("dl", True): (0.12779776028139, 2.84761573750652, 0.135029072783217,
                   (61.6997696601221, 0.679981842640516, 1.20963006566896),
                   0.391138175485911),
    ("reml", False): (0.0852751065962519, 8.31201157420814, 0.01567002249446,
                      (61.7246823110546, 0.652024923483437, 1.15742370874211),
                      0.316984849629153),
    ("reml", True): (0.0852751065962519, 2.9835873095351, 0.126031430853547,
                     (61.7246823110546, 0.652024923483437, 1.15742370874211),
                     0.374116792014158),
}


@pytest.mark.parametrize(("method", "hk"), list(KACKER_METAFOR))
def test_kacker_factor_moderator_matches_metafor(method: str, hk: bool) -> None:
    tau2, qm, qmp, b, se_a = KACKER_METAFOR[(method, hk)]
    res = meta_regression(KACKER_Y, KACKER_V, KACKER_G, method=method, hartung_knapp=hk)
    assert res.tau2 == pytest.approx(tau2, abs=1e-10)
    assert res.statistic == pytest.approx(qm, rel=1e-9)        # chi2 (z) or F (knha)
    assert res.pvalue == pytest.approx(qmp, rel=1e-8)
    assert (res.df, res.df_residual) == (2, 6)
    assert res.qe == pytest.approx(10.7017507191671, rel=1e-12)
    assert res.qe_pvalue == pytest.approx(0.0980432687225581, rel=1e-10)
    est = res.levels.set_index("level")
    assert est.loc["a", "estimate"] == pytest.approx(b[0], abs=1e-9)
    assert (est.loc["b", "estimate"] - est.loc["a", "estimate"]) == pytest.approx(b[1], abs=1e-9)
    assert (est.loc["c", "estimate"] - est.loc["a", "estimate"]) == pytest.approx(b[2], abs=1e-9)
    assert est.loc["a", "se"] == pytest.approx(se_a, abs=1e-9)


def test_kacker_pm_moderator_solves_the_generalised_q_equation() -> None:
    # metafor's PM: tau2 0.306500461487358, QM 5.25333467299724 -- it finds the root with
    # uniroot's tolerance, and its generalised Q_E(tau2) - (k - p) is 5.2e-6 there; nlgeval's
    # root is exact to 1e-12, 8e-7 away in tau^2, so the two agree to about 1e-6
    res = meta_regression(KACKER_Y, KACKER_V, KACKER_G, method="pm")
    assert res.tau2 == pytest.approx(0.306500461487358, abs=2e-6)
    assert res.statistic == pytest.approx(5.25333467299724, abs=1e-5)
    X = np.column_stack([np.ones(9), np.repeat([0, 1, 0], 3), np.repeat([0, 0, 1], 3)])
    w = 1 / (KACKER_V + res.tau2)
    beta = np.linalg.solve(X.T @ (X * w[:, None]), X.T @ (w * KACKER_Y))
    q_gen = float(np.sum(w * (KACKER_Y - X @ beta) ** 2))
    assert q_gen == pytest.approx(9 - 3, abs=1e-9)


FINE_TE = np.array([
    2.70805020110221, 1.25672336971146, 0.374938517449009, 1.65822807660353,
    0.784954729813068, 0.361663949151077, 0.575364144903562, 0.250542525502324,
    0.650587566141149, 0.0918075492531229, 0.273865253802803, 0.485755524477543,
    0.182321556793955, 0.980829253011726, 1.31218638896617, -0.259511195485085,
    0.138402322859119])
FINE_SE = np.array([
    1.1130538571376, 0.505568465186247, 0.390847133738078, 0.680511012471685,
    0.434831536798166, 0.26249802054503, 0.490562645746402, 0.376864733063505,
    0.529771411128472, 0.458411099840008, 0.193159187510219, 0.206827050443269,
    0.441477021807833, 0.713624032148063, 1.18251919576455, 0.604874380241894,
    0.329592099997789])


@pytest.mark.parametrize("method", ["dl", "reml", "pm"])
@pytest.mark.parametrize(("hk", "qm", "qmp", "se_a"), [
    (False, 3.18404002573969, 0.203514095148351, 0.173483096933721),
    (True, 1.7148347325397, 0.215710949722641, 0.167155354205824),
])
def test_fine_moderator_with_tau2_zero_matches_metafor(method: str, hk: bool, qm: float,
                                                       qmp: float, se_a: float) -> None:
    # DL and PM: tau2 0; REML: 2.4e-13 (its boundary); QE 12.9973342370833 (p 0.5267...)
    g = ["a"] * 6 + ["b"] * 6 + ["c"] * 5
    res = meta_regression(FINE_TE, FINE_SE ** 2, g, method=method, hartung_knapp=hk)
    assert res.tau2 == pytest.approx(0.0, abs=1e-12)
    assert res.statistic == pytest.approx(qm, rel=1e-9)
    assert res.pvalue == pytest.approx(qmp, rel=1e-9)
    assert res.qe == pytest.approx(12.9973342370833, rel=1e-12)
    assert res.qe_pvalue == pytest.approx(0.526733539359664, rel=1e-10)
    est = res.levels.set_index("level")
    assert est.loc["a", "estimate"] == pytest.approx(0.678311896402566, abs=1e-9)
    assert est.loc["a", "se"] == pytest.approx(se_a, abs=1e-9)
