"""Robust variance estimation and REML against R robumeta and metafor.

Reference values computed for these tests with R 4.2.2 (Debian bookworm), robumeta 2.0 and
metafor 3.8.1 (2026-11-26):

* ``robu(y ~ 1 | y ~ x, studynum = study, var.eff.size = v, modelweights = "CORR",
  rho = 0.8, small = TRUE)`` on the 16 effects of 10 studies below (the data of
  tests/test_meta_analysis.py's robumeta test, which pins ``small = FALSE``): the small-sample
  corrections of Tipton (2015), robumeta's default;
* ``rma(y, v, method = "REML", control = list(threshold = 1e-12, maxiter = 1000))`` (and
  ``test = "knha"``, ``predict()``) on Kacker's (2004) nine measurements, and
  ``rma(c(0.1, 0.9), c(0.02, 0.05), method = "DL" | "REML" | "PM")`` for k = 2 studies.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from nlgeval.meta_analysis import random_effects, robust_variance
from nlgeval.meta_analysis.robust import _tau2

STUDY = "s1 s1 s2 s3 s3 s3 s4 s5 s5 s6 s7 s7 s8 s9 s9 s10".split()
Y = [0.31, 0.42, 0.12, 0.55, 0.48, 0.61, 0.05, 0.27, 0.22, 0.38, 0.15, 0.09, 0.44, 0.33,
     0.29, 0.18]
V = [0.010, 0.012, 0.020, 0.008, 0.009, 0.008, 0.030, 0.015, 0.014, 0.011, 0.025, 0.022,
     0.009, 0.013, 0.012, 0.018]
X1 = [1, 1, 0, 1, 1, 1, 0, 0, 0, 1, 0, 0, 1, 1, 1, 0]


def test_small_sample_intercept_matches_robumeta() -> None:
    # robu(y ~ 1, ..., small = TRUE): b 0.308133014589178, SE 0.0498484103703794,
    # dfs 8.55093313117263, prob 0.000201163459985665, CI [0.19445885680992,
    # 0.421807172368436], tau.sq 0.0113207471784291
    res = robust_variance(Y, V, STUDY, rho=0.8, small_sample=True)
    assert res.small_sample
    assert res.statistic == pytest.approx(0.308133014589178, abs=1e-12)
    assert res.se == pytest.approx(0.0498484103703794, abs=1e-12)
    assert res.coefficients["df"].iloc[0] == pytest.approx(8.55093313117263, abs=1e-10)
    assert res.pvalue == pytest.approx(0.000201163459985665, rel=1e-8)
    assert (res.ci_low, res.ci_high) == pytest.approx(
        (0.19445885680992, 0.421807172368436), abs=1e-11)
    assert res.tau2 == pytest.approx(0.0113207471784291, abs=1e-12)
    assert res.df == 9   # studies minus coefficients, as before (Q's degrees of freedom)


def test_small_sample_meta_regression_matches_robumeta() -> None:
    # robu(y ~ x, ..., small = TRUE): SE 0.0343415952440938 0.055099640974312,
    # dfs 3.74538953457699 6.82515080967693, prob 0.0115958936888421 0.00223987328577158,
    # CI.L 0.0604610968078329 0.130581546693926, CI.U 0.256379140841715 0.392520838607345
    X = np.column_stack([np.ones(16), X1])
    with pytest.warns(RuntimeWarning, match="Satterthwaite degrees of freedom 3.75 < 4"):
        res = robust_variance(Y, V, STUDY, X, rho=0.8, small_sample=True)
    c = res.coefficients
    assert c["estimate"].tolist() == pytest.approx([0.158420118824774, 0.261551192650636],
                                                   abs=1e-12)
    assert c["se"].tolist() == pytest.approx([0.0343415952440938, 0.055099640974312], abs=1e-12)
    assert c["df"].tolist() == pytest.approx([3.74538953457699, 6.82515080967693], abs=1e-10)
    assert c["pvalue"].tolist() == pytest.approx([0.0115958936888421, 0.00223987328577158],
                                                 rel=1e-8)
    assert c["ci_low"].tolist() == pytest.approx([0.0604610968078329, 0.130581546693926],
                                                 abs=1e-10)
    assert c["ci_high"].tolist() == pytest.approx([0.256379140841715, 0.392520838607345],
                                                  abs=1e-10)


def test_small_sample_with_one_effect_per_study_is_the_hc2_sandwich() -> None:
    # one effect per study and an intercept: A_j = (1 - h_j)^(-1/2) with leverage
    # h_j = w_j / sum(w), so the CR2 variance is sum w_j^2 e_j^2 / (1 - h_j) / (sum w)^2
    # (MacKinnon & White 1985, HC2), and B = G G' gives the closed-form Satterthwaite df
    y = np.array([0.1, 0.5, 0.3, 0.7, 0.2, 0.45])
    v = np.array([0.02, 0.03, 0.01, 0.04, 0.025, 0.015])
    res = robust_variance(y, v, list("abcdef"), small_sample=True)
    w = 1 / (v + res.tau2)
    h = w / w.sum()
    e = y - np.sum(w * y) / w.sum()
    assert res.se ** 2 == pytest.approx(np.sum(w ** 2 * e ** 2 / (1 - h)) / w.sum() ** 2,
                                        rel=1e-12)
    G = (np.eye(6) - h[None, :]).T @ np.diag(w / np.sqrt(1 - h)) / w.sum()
    G = G / np.sqrt(w)[:, None]
    B = G @ G.T
    assert res.coefficients["df"].iloc[0] == pytest.approx(np.trace(B) ** 2 / np.sum(B * B),
                                                           rel=1e-12)


def _old_robust_variance(y: np.ndarray, v: np.ndarray, studies: list[str], X: np.ndarray,
                         rho: float) -> tuple[np.ndarray, ...]:
    """robust_variance's arithmetic before small_sample existed (commit 3e72fac), kept as the
    reference: the default path must give the same bits."""
    g = np.asarray(studies, dtype=object)
    labels = list(dict.fromkeys(g))
    idx = [np.flatnonzero(g == s) for s in labels]
    m, p = len(labels), X.shape[1]
    k_j, vbar = np.empty(len(y)), np.empty(len(y))
    for ix in idx:
        k_j[ix], vbar[ix] = len(ix), v[ix].mean()
    tau2, _, _ = _tau2(y, X, k_j, vbar, idx, rho)
    w = 1.0 / (k_j * (vbar + tau2))
    bread = np.linalg.inv(X.T @ (X * w[:, None]))
    beta = bread @ (X.T @ (w * y))
    e = y - X @ beta
    meat = sum(np.outer(u, u) for u in (X[ix].T @ (w[ix] * e[ix]) for ix in idx))
    cov = bread @ meat @ bread * m / (m - p)
    se = np.sqrt(np.diag(cov))
    df = m - p
    crit = float(stats.t.isf((1 - 0.95) / 2, df))
    t = beta / se
    return beta, se, t, 2 * stats.t.sf(np.abs(t), df), beta - crit * se, beta + crit * se


@pytest.mark.parametrize("seed", range(8))
def test_default_is_bit_identical_to_the_previous_code(seed: int) -> None:
    rng = np.random.default_rng(seed)
    m = int(rng.integers(4, 12))
    sizes = rng.integers(1, 4, m)
    studies = [f"s{j}" for j, s in enumerate(sizes) for _ in range(s)]
    n = len(studies)
    scale = [1.0, 1e-100, 1e100, 1e-3][seed % 4]
    y = rng.normal(size=n) * scale
    if seed % 3 == 0:
        y = np.round(y / scale, 1) * scale     # ties
    v = rng.uniform(0.005, 0.05, n) * scale ** 2 if scale < 1e50 else rng.uniform(0.005, 0.05, n)
    X = np.ones((n, 1)) if seed % 2 else np.column_stack([np.ones(n), rng.integers(0, 2, n)])
    if np.linalg.matrix_rank(X) < X.shape[1] or m <= X.shape[1]:
        X = np.ones((n, 1))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        new = robust_variance(y, v, studies, X, rho=0.8)
        old = _old_robust_variance(y, v, studies, X, 0.8)
    c = new.coefficients
    for col, ref in zip(["estimate", "se", "t", "pvalue", "ci_low", "ci_high"], old,
                        strict=True):
        assert np.array_equal(c[col].to_numpy(), ref, equal_nan=True), col
    assert (c["df"] == new.df).all() and not new.small_sample


# ------------------------------------------------------------------------ REML (metafor)
KACKER_Y = np.array([61.00, 61.40, 62.21, 62.30, 62.34, 62.60, 62.70, 62.84, 65.90])
KACKER_V = np.array([0.2025, 1.2100, 0.0900, 0.2025, 0.3844, 0.5625, 0.0676, 0.0225, 1.8225])


def test_kacker_reml_matches_metafor() -> None:
    # rma(y, v, method="REML", control=list(threshold=1e-12, maxiter=1000)): tau2
    # 0.294342866862854, b 62.390065273811, se 0.247508091248695, CI [61.9049583290813,
    # 62.8751722185407], I2 68.2148728829392 %, H2 3.14612553323169; predict(): pi
    # [61.2212903810093, 63.5588401666128]. metafor's default Fisher-scoring threshold (1e-5
    # on the change of tau2) stops at 0.2943445142799, 1.6e-6 from the root of the REML score
    # equation that both reach with a tight threshold.
    res = random_effects(KACKER_Y, KACKER_V, method="reml", prediction="metafor")
    assert res.tau2 == pytest.approx(0.294342866862854, abs=1e-10)
    assert res.statistic == pytest.approx(62.390065273811, abs=1e-10)
    assert res.se == pytest.approx(0.247508091248695, abs=1e-10)
    assert (res.ci_low, res.ci_high) == pytest.approx((61.9049583290813, 62.8751722185407),
                                                      abs=1e-9)
    assert res.i2 == pytest.approx(0.682148728829392, abs=1e-10)
    assert res.h2 == pytest.approx(3.14612553323169, abs=1e-9)
    assert (res.pi_low, res.pi_high) == pytest.approx((61.2212903810093, 63.5588401666128),
                                                      abs=1e-9)
    # test = "knha": se 0.295726690071988, CI [61.7081183036148, 63.0720122440073],
    # pval 2.85192233099225e-16; predict(): pi [60.9651914166166, 63.8149391310055]
    hk = random_effects(KACKER_Y, KACKER_V, method="reml", hartung_knapp=True,
                        prediction="metafor")
    assert hk.se == pytest.approx(0.295726690071988, abs=1e-10)
    assert (hk.ci_low, hk.ci_high) == pytest.approx((61.7081183036148, 63.0720122440073),
                                                    abs=1e-9)
    assert hk.pvalue == pytest.approx(2.85192233099225e-16, rel=1e-6)
    assert (hk.pi_low, hk.pi_high) == pytest.approx((60.9651914166166, 63.8149391310055),
                                                    abs=1e-9)


@pytest.mark.parametrize("method", ["dl", "reml", "pm"])
def test_two_studies_match_metafor(method: str) -> None:
    # rma(c(0.1, 0.9), c(0.02, 0.05), method = ...) with metafor's default control: tau2 0.285
    # (all three; the closed form for k = 2: Q(tau2) = 0.64 / (0.07 + 2 tau2) = 1 for PM),
    # b 0.48125, se 0.399560305210615, CI [-0.301873807864637, 1.26437380786464]
    res = random_effects([0.1, 0.9], [0.02, 0.05], method=method, prediction="metafor")
    assert res.tau2 == pytest.approx(0.285, abs=1e-9)
    assert res.statistic == pytest.approx(0.48125, abs=1e-9)
    assert res.se == pytest.approx(0.399560305210615, abs=1e-9)
    assert (res.ci_low, res.ci_high) == pytest.approx(
        (-0.301873807864637, 1.26437380786464), abs=1e-8)
    if method == "reml":
        # test = "knha": CI [-4.59564504245453, 5.55814504245453], pval 0.441125877909979
        hk = random_effects([0.1, 0.9], [0.02, 0.05], method=method, hartung_knapp=True)
        assert (hk.ci_low, hk.ci_high) == pytest.approx(
            (-4.59564504245453, 5.55814504245453), abs=1e-9)
        assert hk.pvalue == pytest.approx(0.441125877909979, abs=1e-12)


def test_coefficients_frame_columns() -> None:
    res = robust_variance(Y, V, STUDY)
    assert isinstance(res.coefficients, pd.DataFrame)
    assert list(res.coefficients.columns) == ["estimate", "se", "t", "df", "pvalue", "ci_low",
                                              "ci_high"]
