"""Ordinal (cumulative-logit) model: system contrasts and the proportional-odds check.

Reference values come from R 4.x with package ``ordinal`` 2022.11.16 (Christensen), run on
``tests/data/human_ordinal_ratings.csv`` (simulated by a seeded numpy generator: 4 systems,
10 raters, a 1-5 scale; criterion ``po`` follows a proportional-odds model, criterion ``nonpo``
gives system ``delta`` polarised ratings, so proportional odds fails)::

    d <- read.csv("human_ordinal_ratings.csv"); d$score <- factor(d$score, ordered = TRUE)
    f <- clm(score ~ system + rater, data = x)             # coef(f), vcov(f), logLik(f)
    n <- clm(score ~ rater, nominal = ~ system, data = x)  # logLik(n); anova(f, n)
    nominal_test(f)                                        # the 'system' row

Both factors are treatment-coded with the first level (alpha, r00) as reference, as here.
"""

from __future__ import annotations

from itertools import combinations
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import optimize, stats

from nlgeval.errors import InputError
from nlgeval.human.ordinal import _nominal_negloglik, nominal_system_llf, ordinal_model

DATA = Path(__file__).parent / "data" / "human_ordinal_ratings.csv"

# R ordinal::clm values (see the module docstring)
R_REF = {
    "po": {
        "coef": {"beta": 0.6278265644, "delta": 0.1191813579, "gamma": 1.0114213169},
        "vcov": [[0.06510981871, 0.03234345089, 0.03351820681],
                 [0.03234345089, 0.06520048046, 0.03245185011],
                 [0.03351820681, 0.03245185011, 0.06970761306]],
        "llf": -569.9209505, "llf_nominal": -568.2284208, "llf_reduced": -579.4684471,
        "po_lr": 3.385060, "po_p": 0.94706,
        "llf_nofactor": -594.6790009, "llf_nominal_nofactor": -593.2633651,
    },
    "nonpo": {
        "coef": {"beta": 0.6841472812, "delta": 0.3215759440, "gamma": 0.9308742289},
        "vcov": [[0.06311478617, 0.03038073438, 0.03092244524],
                 [0.03038073438, 0.07290407049, 0.03026255875],
                 [0.03092244524, 0.03026255875, 0.06516114686]],
        "llf": -560.8231291, "llf_nominal": -530.0605365, "llf_reduced": -568.5351704,
        "po_lr": 61.525185, "po_p": 6.8073e-10,
        "llf_nofactor": -593.9818626, "llf_nominal_nofactor": -563.5415333,
    },
}
R_ORDER = ["beta", "delta", "gamma"]


def _data(criterion: str) -> pd.DataFrame:
    d = pd.read_csv(DATA)
    return d[d["criterion"] == criterion]


@pytest.mark.parametrize("criterion", ["po", "nonpo"])
def test_matches_r_clm(criterion: str) -> None:
    ref = R_REF[criterion]
    res = ordinal_model(_data(criterion))
    assert res.llf == pytest.approx(ref["llf"], abs=1e-5)
    coef = dict(zip(res.coefficients["term"], res.coefficients["coef"], strict=True))
    for s, v in ref["coef"].items():
        assert coef[f"system_{s}"] == pytest.approx(v, abs=1e-4)
    lr_sys = 2 * (ref["llf"] - ref["llf_reduced"])
    assert res.lr_statistic == pytest.approx(lr_sys, abs=1e-4)
    assert res.lr_pvalue == pytest.approx(stats.chi2.sf(lr_sys, 3), rel=1e-3)
    # every pairwise contrast from R's coefficients and covariance matrix
    beta = {"alpha": 0.0, **ref["coef"]}
    cov = pd.DataFrame(ref["vcov"], index=R_ORDER, columns=R_ORDER)
    c = res.contrasts.set_index(["system_a", "system_b"])
    raw = []
    for a, b in combinations(["alpha", "beta", "gamma", "delta"], 2):
        var = sum(cov.loc[s, t] * sa * sb for s, sa in ((a, 1), (b, -1)) if s != "alpha"
                  for t, sb in ((a, 1), (b, -1)) if t != "alpha")
        est, se = beta[a] - beta[b], np.sqrt(var)
        row = c.loc[(a, b)]
        assert row["estimate"] == pytest.approx(est, abs=1e-4)
        assert row["se"] == pytest.approx(se, rel=1e-3)
        assert row["ci_low"] == pytest.approx(est - stats.norm.ppf(0.975) * se, abs=1e-3)
        assert row["odds_ratio"] == pytest.approx(np.exp(est), rel=1e-4)
        raw.append(2 * stats.norm.sf(abs(est / se)))
    # Holm by hand: sorted p-values times (m - rank), running maximum, capped at 1
    order = np.argsort(raw)
    holm = np.empty(6)
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (6 - rank) * raw[i]))
        holm[i] = running
    assert res.contrasts["pvalue_adjusted"].to_numpy() == pytest.approx(holm, rel=1e-3)


@pytest.mark.parametrize("criterion", ["po", "nonpo"])
def test_proportional_odds_check_matches_r_nominal_test(criterion: str) -> None:
    ref = R_REF[criterion]
    po = ordinal_model(_data(criterion)).proportional_odds
    assert po is not None and po.df == 9
    assert po.llf_nominal == pytest.approx(ref["llf_nominal"], abs=1e-4)
    assert po.statistic == pytest.approx(ref["po_lr"], abs=1e-3)
    assert po.pvalue == pytest.approx(ref["po_p"], rel=1e-3)


def test_check_says_clearly_when_proportional_odds_fails() -> None:
    good = ordinal_model(_data("po"))
    bad = ordinal_model(_data("nonpo"))
    assert good.proportional_odds.holds and not good.warnings
    assert not bad.proportional_odds.holds
    assert any("proportional-odds assumption fails" in w for w in bad.warnings)
    d = bad.to_dict()
    assert d["proportional_odds"]["holds"] is False and d["warnings"]


@pytest.mark.parametrize("criterion", ["po", "nonpo"])
def test_without_factors_nominal_model_is_saturated_multinomial(criterion: str) -> None:
    # closed form: separate cut-points per system = one free multinomial per system
    df = _data(criterion)
    res = ordinal_model(df, factors=())
    counts = pd.crosstab(df["system"], df["score"]).to_numpy(dtype=float)
    p = counts / counts.sum(axis=1, keepdims=True)
    llf_sat = float(np.sum(counts[counts > 0] * np.log(p[counts > 0])))
    assert res.proportional_odds.llf_nominal == pytest.approx(llf_sat, abs=1e-5)
    assert res.proportional_odds.llf_nominal == pytest.approx(
        R_REF[criterion]["llf_nominal_nofactor"], abs=1e-5)
    assert res.llf == pytest.approx(R_REF[criterion]["llf_nofactor"], abs=1e-5)


def test_nominal_likelihood_gradient_is_exact() -> None:
    df = _data("nonpo")
    codes = df["score"].to_numpy() - 1
    groups = pd.Categorical(df["system"]).codes.astype(np.intp)
    x = pd.get_dummies(df["rater"], drop_first=True, dtype=float).to_numpy()
    rng = np.random.default_rng(3)
    p0 = rng.normal(0, 0.5, 4 + 4 * 3 + x.shape[1])
    err = optimize.check_grad(lambda p: _nominal_negloglik(p, codes, groups, x, 4, 5)[0],
                              lambda p: _nominal_negloglik(p, codes, groups, x, 4, 5)[1], p0)
    assert err < 1e-4


def test_nominal_llf_closed_form_small() -> None:
    codes = np.array([0, 1, 1, 2, 0, 0, 1, 2, 2, 2])
    groups = np.array([0, 0, 0, 0, 0, 1, 1, 1, 1, 1])
    expected = sum(n * np.log(n / 5) for n in (2, 2, 1, 1, 1, 3))
    assert nominal_system_llf(codes, groups, np.zeros((10, 0)), 3) == pytest.approx(
        expected, abs=1e-6)


def test_rejects_continuous_scores_and_single_system() -> None:
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"system": ["a", "b"] * 50, "rater": "r", "score": rng.normal(size=100)})
    with pytest.raises(InputError, match="distinct scores"):
        ordinal_model(df)
    with pytest.raises(InputError, match="at least 2 systems"):
        ordinal_model(df.assign(system="a", score=np.arange(100) % 5))
