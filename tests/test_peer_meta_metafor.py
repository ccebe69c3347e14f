"""Random-effects pooling against metafor and R ``meta`` values from statsmodels' test suite.

References (values copied, not recomputed; statsmodels 0.15.0,
``statsmodels/stats/tests/results/results_meta.py``, used by ``test_meta.py``):

* Kacker (2004), nine measurements of one quantity ("exk1"), Table 1; fitted with R metafor
  ``rma(y, v, method=..., control=list(tol=1e-9))``: ``exk1_dl`` (DerSimonian & Laird 1986),
  ``exk1_metafor`` (Paule & Mandel 1982), ``exk1_dl_hksj`` (DL with ``test="knha"``, Hartung &
  Knapp 2001). Kacker's own Table 1 (p. 135) prints tau = 0.8399 (PM) and 0.5359 (DL).
* Fine (1993), 17 trials as log odds ratios (metafor ``dat.fine1993``), fitted with R meta
  ``metabin(..., sm="OR", method="Inverse", method.tau="DL", hakn=TRUE)``:
  ``results_or_dl_hk`` -- effects ``TE`` and standard errors ``seTE`` are the inputs; the
  prediction interval is meta's (Higgins, Thompson & Spiegelhalter 2009: t on k - 2 df
  around the Hartung-Knapp standard error), nlgeval's ``prediction="riley"``.

The edge cases (k = 2 studies, tau^2 = 0 truncation) are checked against the closed forms of
DerSimonian & Laird (1986) and Hartung & Knapp (2001).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from nlgeval.errors import InputError
from nlgeval.meta_analysis import estimate_tau2, random_effects

# Kacker (2004): y and v as in statsmodels' TestMetaK1 / results_meta.exk1_*
KACKER_Y = np.array([61.00, 61.40, 62.21, 62.30, 62.34, 62.60, 62.70, 62.84, 65.90])
KACKER_V = np.array([0.2025, 1.2100, 0.0900, 0.2025, 0.3844, 0.5625, 0.0676, 0.0225, 1.8225])


def test_kacker_dl_matches_metafor() -> None:
    # results_meta.exk1_dl
    res = random_effects(KACKER_Y, KACKER_V, method="dl", prediction="metafor")
    assert res.tau2 == pytest.approx(0.288049246973751, abs=1e-10)
    assert res.statistic == pytest.approx(62.3901386044504, abs=1e-12)
    assert res.se == pytest.approx(0.245749668040304, abs=1e-10)
    assert (res.ci_low, res.ci_high) == pytest.approx(
        (61.9084781058787, 62.8717991030221), abs=1e-10)
    assert res.q == pytest.approx(24.801897741835, abs=1e-10)
    assert res.q_pvalue == pytest.approx(0.00167935146372742, abs=1e-12)
    assert res.q_df == 8
    assert res.i2 == pytest.approx(67.744403741711 / 100, abs=1e-12)   # metafor: percent
    assert res.h2 == pytest.approx(3.10023721772938, abs=1e-10)
    # Kacker's Table 1 prints tau to 4 places (statsmodels allows 1e-3 for DL)
    assert res.tau == pytest.approx(0.5359, abs=1e-3)


def test_kacker_pm_matches_metafor_and_kacker() -> None:
    # results_meta.exk1_metafor (method="PM"); statsmodels matches it to 1e-10 with atol=1e-7
    res = random_effects(KACKER_Y, KACKER_V, method="pm", prediction="metafor")
    assert res.tau2 == pytest.approx(0.705395309224248, abs=1e-9)
    assert res.statistic == pytest.approx(62.4076199113286, abs=1e-9)
    assert res.se == pytest.approx(0.338030602684471, abs=1e-9)
    assert (res.ci_low, res.ci_high) == pytest.approx(
        (61.7450921043947, 63.0701477182625), abs=1e-9)
    # I^2 and H^2 at the PM tau^2 (metafor: I2 = 83.72 %, H2 = 6.143); statsmodels' own
    # combine_effects does not match these ("does not pass yet" in its test)
    assert res.i2 == pytest.approx(83.7218626490482 / 100, abs=1e-9)
    assert res.h2 == pytest.approx(6.14320900751909, abs=1e-8)
    assert res.tau == pytest.approx(0.8399, abs=6e-5)   # Kacker (2004), Table 1


def test_kacker_dl_hartung_knapp_matches_metafor() -> None:
    # results_meta.exk1_dl_hksj: metafor rma(..., method="DL", test="knha")
    res = random_effects(KACKER_Y, KACKER_V, method="dl", hartung_knapp=True,
                         prediction="metafor")
    assert res.statistic == pytest.approx(62.3901386044504, abs=1e-12)
    assert res.se == pytest.approx(0.29477605699879, abs=1e-10)
    assert (res.ci_low, res.ci_high) == pytest.approx(
        (61.710383798052, 63.0698934108488), abs=1e-10)
    assert res.pvalue == pytest.approx(2.77938607433693e-16, rel=1e-6)


# Fine (1993) log odds ratios: results_meta.results_or_dl_hk.TE / .seTE
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


def test_fine_dl_hartung_knapp_matches_r_meta() -> None:
    res = random_effects(FINE_TE, FINE_SE ** 2, method="dl", hartung_knapp=True,
                         prediction="riley")
    assert res.tau2 == pytest.approx(0.0016783981912744, rel=1e-9)
    assert res.statistic == pytest.approx(0.429520368698268, rel=1e-12)
    assert res.se == pytest.approx(0.0915952752397692, rel=1e-10)
    assert (res.ci_low, res.ci_high) == pytest.approx(
        (0.235347059333852, 0.623693678062684), rel=1e-10)
    assert res.pvalue == pytest.approx(0.000246175101510513, rel=1e-8)
    assert res.q == pytest.approx(16.181374262823, rel=1e-12)
    assert res.q_pvalue == pytest.approx(0.440375456698129, rel=1e-10)
    assert res.i2 == pytest.approx(0.0112088293538659, rel=1e-9)
    assert res.h2 == pytest.approx(1.00565197331206 ** 2, rel=1e-10)   # meta prints H
    # meta's prediction interval: t(k - 2) * sqrt(seTE_random^2 + tau^2), seTE_predict 0.10034
    assert (res.pi_low, res.pi_high) == pytest.approx(
        (0.215650965184522, 0.643389772212014), rel=1e-9)
    weights = np.array([
        0.806082838403413, 3.8868480814364, 6.47501150011912, 2.15158503393154,
        5.24227532998639, 14.1675952027965, 4.12660238520421, 6.95867952431796,
        3.54187734484692, 4.72100880622866, 25.6483453428049, 22.4942390635843,
        5.0869781966579, 1.95718594121596, 0.714270384745876, 2.72070780232418,
        9.06541462543771])   # results_or_dl_hk.w_random (unnormalised 1 / (v + tau^2))
    assert np.array(res.weights) == pytest.approx(weights / weights.sum(), rel=1e-9)


# ------------------------------------------------------------------------ edge cases
def test_two_studies_dl_closed_form_and_no_riley_interval() -> None:
    # k = 2: DL tau^2 = max(0, (Q - 1) / (sum w - sum w^2 / sum w)) (DerSimonian & Laird 1986);
    # Hartung-Knapp on t(1); the Riley prediction interval (t on k - 2 df) is undefined
    y, v = np.array([0.1, 0.9]), np.array([0.02, 0.05])
    w = 1 / v
    q = float(np.sum(w * (y - np.sum(w * y) / w.sum()) ** 2))
    tau2 = max(0.0, (q - 1) / (w.sum() - np.sum(w ** 2) / w.sum()))
    assert tau2 > 0
    res = random_effects(y, v, method="dl", hartung_knapp=True)
    assert res.tau2 == pytest.approx(tau2, rel=1e-12)
    ws = 1 / (v + tau2)
    mu = float(np.sum(ws * y) / ws.sum())
    se = math.sqrt(np.sum(ws * (y - mu) ** 2) / ws.sum())     # / (k - 1) with k - 1 = 1
    assert res.statistic == pytest.approx(mu, rel=1e-12)
    assert res.se == pytest.approx(se, rel=1e-12)
    assert res.ci_high == pytest.approx(mu + stats.t.isf(0.025, 1) * se, rel=1e-12)
    assert math.isnan(res.pi_low) and math.isnan(res.pi_high)
    with pytest.raises(InputError, match="at least 2 studies"):
        random_effects([0.1], [0.02])


@pytest.mark.parametrize("method", ["dl", "reml", "pm"])
def test_homogeneous_studies_truncate_tau2_at_zero(method: str) -> None:
    # Q < k - 1: the DL moment estimate is negative and truncated at 0 (DerSimonian & Laird
    # 1986); REML and PM have their optimum on the boundary; the pooled estimate is then the
    # fixed-effect (inverse-variance) mean and I^2 = 0
    y, v = np.array([0.30, 0.31, 0.29, 0.305]), np.array([0.01, 0.02, 0.015, 0.03])
    w = 1 / v
    q = float(np.sum(w * (y - np.sum(w * y) / w.sum()) ** 2))
    assert q < len(y) - 1
    assert estimate_tau2(y, v, method) == 0.0
    res = random_effects(y, v, method=method)
    assert res.statistic == pytest.approx(float(np.sum(w * y) / w.sum()), rel=1e-14)
    assert res.se == pytest.approx(1 / math.sqrt(w.sum()), rel=1e-14)
    assert res.i2 == 0.0 and res.h2 == 1.0
