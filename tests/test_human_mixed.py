"""Linear mixed model with crossed random rater and item effects (issue 14).

Independent references:

* **R lme4** values, computed once and written here. Provenance: R 4.2.2 (Debian bookworm
  ``r-base-core`` 4.2.2.20221110-2), lme4 1.1-31 (``r-cran-lme4`` 1.1-31-1), on the frame
  ``unbalanced()`` below written to CSV, with::

      d <- read.csv("unbalanced.csv")
      d$system <- factor(d$system, levels = unique(d$system))
      m <- lmer(score ~ system + (1 | rater) + (1 | item), data = d, REML = TRUE)
      fixef(m); as.matrix(vcov(m)); as.data.frame(VarCorr(m)); logLik(m)

* statsmodels ``MixedLM`` fitted directly in the test (variance components named explicitly);
* a closed form: in a complete crossed design (every rater rates every item for every system)
  the rater and item effects cancel in a system contrast, so the estimate is the difference of
  raw means and its variance 2 sigma2_residual / (raters x items);
* a simulation with known fixed effects and variance components.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from nlgeval.cli import app
from nlgeval.human.mixed import mixed_model
from nlgeval.human.ratings import read_ratings

DATA = Path(__file__).parent / "data" / "human_lsed_ratings.csv"
runner = CliRunner()

# lme4 1.1-31, REML (see the module docstring)
LME4_LEVELS = ["Template", "pCRU-random", "SUMTIME", "pCRU-greedy"]
LME4_FIXEF = np.array([4.3804955484, -1.3871492186, 0.6820044516, 0.0703444497])
LME4_VCOV = np.array([
    [0.1426122235, -0.0670930261, -0.0667497855, -0.0674455993],
    [-0.0670930261, 0.1278277431, 0.0670930261, 0.0681016253],
    [-0.0667497855, 0.0670930261, 0.1226025563, 0.0674455993],
    [-0.0674455993, 0.0681016253, 0.0674455993, 0.1335162893],
])
LME4_VC = {"rater": 0.3253363390, "item": 0.2815631651, "residual": 0.8936443330}
LME4_LOGLIK = -89.0220855516


def unbalanced() -> pd.DataFrame:
    df = read_ratings(DATA, criterion="accuracy")
    return df.drop(index=[0, 5, 17, 40, 41]).reset_index(drop=True)


def test_matches_lme4() -> None:
    df = unbalanced()
    assert list(dict.fromkeys(df["system"])) == LME4_LEVELS
    res = mixed_model(df)
    assert res.reference == "Template"
    # contrasts a - b and their SEs from lme4's fixef and vcov (treatment coding)
    for row in res.contrasts.itertuples():
        ell = np.zeros(4)
        ia, ib = LME4_LEVELS.index(row.system_a), LME4_LEVELS.index(row.system_b)
        if ia:
            ell[ia] += 1
        if ib:
            ell[ib] -= 1
        assert row.estimate == pytest.approx(ell @ LME4_FIXEF, abs=2e-4)
        assert row.se == pytest.approx(np.sqrt(ell @ LME4_VCOV @ ell), rel=2e-4)
    means = res.means.set_index("system")
    for i, s in enumerate(LME4_LEVELS):
        ell = np.zeros(4)
        ell[0] = 1
        if i:
            ell[i] = 1
        assert means.loc[s, "mean"] == pytest.approx(ell @ LME4_FIXEF, abs=2e-4)
        assert means.loc[s, "se"] == pytest.approx(np.sqrt(ell @ LME4_VCOV @ ell), rel=2e-4)
    for k, v in LME4_VC.items():
        assert res.variance[k] == pytest.approx(v, rel=1e-3)
    assert res.llf == pytest.approx(LME4_LOGLIK, abs=1e-4)
    total = sum(LME4_VC.values())
    assert res.variance["share_rater"] == pytest.approx(LME4_VC["rater"] / total, rel=1e-3)


def test_matches_statsmodels_fitted_directly() -> None:
    import statsmodels.formula.api as smf
    from scipy import stats
    from statsmodels.stats.multitest import multipletests

    df = unbalanced().assign(g=1)
    m = smf.mixedlm("score ~ C(system, Treatment('Template'))", df, groups="g",
                    re_formula="0", vc_formula={"rater": "0 + C(rater)",
                                                "item": "0 + C(item)"}).fit(reml=True)
    vc = dict(zip(m.model.exog_vc.names, m.vcomp, strict=True))
    res = mixed_model(df)
    assert res.variance["rater"] == pytest.approx(vc["rater"], rel=1e-4)
    assert res.variance["item"] == pytest.approx(vc["item"], rel=1e-4)
    assert res.variance["residual"] == pytest.approx(m.scale, rel=1e-4)
    effect = {"Template": 0.0}
    for name, value in m.fe_params.items():
        if "[T." in name:
            effect[name.split("[T.")[1].rstrip("]")] = float(value)
    assert len(effect) == 4
    est = np.array([effect[a] - effect[b] for a, b in zip(res.contrasts["system_a"],
                                                          res.contrasts["system_b"],
                                                          strict=True)])
    np.testing.assert_allclose(res.contrasts["estimate"], est, atol=1e-5)
    # Holm over the six Wald p-values, and the Westfall-Kenny-Judd d
    p = 2 * stats.norm.sf(np.abs(res.contrasts["estimate"] / res.contrasts["se"]))
    np.testing.assert_allclose(res.contrasts["p"], p)
    np.testing.assert_allclose(res.contrasts["p_adjusted"],
                               multipletests(p, method="holm")[1])
    sd = np.sqrt(vc["rater"] + vc["item"] + m.scale)
    np.testing.assert_allclose(res.contrasts["smd"], est / sd, rtol=1e-4)
    np.testing.assert_allclose(res.contrasts["smd_low"], res.contrasts["ci_low"] / sd,
                               rtol=1e-4)


def _complete(seed: int, effects: dict[str, float], raters: int, items: int,
              sd_rater: float, sd_item: float, sd_resid: float) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    u = rng.normal(0, sd_rater, raters)
    v = rng.normal(0, sd_item, items)
    rows = []
    for r in range(raters):
        for i in range(items):
            for s, b in effects.items():
                rows.append({"rater": f"r{r}", "item": f"i{i}", "system": s,
                             "score": 3 + b + u[r] + v[i] + rng.normal(0, sd_resid)})
    return pd.DataFrame(rows)


def test_complete_crossed_design_closed_form() -> None:
    df = _complete(5, {"A": 0.0, "B": 0.4, "C": -0.3}, raters=6, items=10, sd_rater=0.7,
                   sd_item=0.5, sd_resid=1.0)
    res = mixed_model(df)
    means = df.groupby("system")["score"].mean()
    s2 = res.variance["residual"]
    for row in res.contrasts.itertuples():
        assert row.estimate == pytest.approx(means[row.system_a] - means[row.system_b],
                                             abs=1e-8)
        assert row.se == pytest.approx(np.sqrt(2 * s2 / 60), rel=1e-6)
    # balanced: REML = the ANOVA (moment) estimators when they are positive, from the
    # additive OLS score ~ system + rater + item (Searle, Casella & McCulloch 1992, ch. 4)
    import statsmodels.formula.api as smf
    from statsmodels.stats.anova import anova_lm

    ols = smf.ols("score ~ C(system) + C(rater) + C(item)", data=df).fit()
    tab = anova_lm(ols, typ=2)
    ms = tab["sum_sq"] / tab["df"]
    mse = ols.mse_resid
    assert s2 == pytest.approx(mse, rel=1e-4)
    assert res.variance["rater"] == pytest.approx((ms["C(rater)"] - mse) / (10 * 3), rel=1e-3)
    assert res.variance["item"] == pytest.approx((ms["C(item)"] - mse) / (6 * 3), rel=1e-3)


def test_simulation_recovers_known_effects() -> None:
    # a Latin-square-like incomplete design: each rater rates each item for one system only
    rng = np.random.default_rng(2024)
    effects = {"A": 0.0, "B": 0.5, "C": -0.5, "D": 1.0}
    names = list(effects)
    raters, items = 30, 40
    u = rng.normal(0, 0.6, raters)
    v = rng.normal(0, 0.4, items)
    rows = []
    for r in range(raters):
        for i in range(items):
            if rng.random() < 0.5:
                continue
            s = names[(r + i) % 4]
            rows.append({"rater": f"r{r}", "item": f"i{i}", "system": s,
                         "score": 4 + effects[s] + u[r] + v[i] + rng.normal(0, 0.8)})
    df = pd.DataFrame(rows)
    res = mixed_model(df)
    for row in res.contrasts.itertuples():
        true = effects[row.system_a] - effects[row.system_b]
        assert abs(row.estimate - true) < 3 * row.se
    assert res.variance["residual"] == pytest.approx(0.64, rel=0.1)
    assert res.variance["rater"] == pytest.approx(0.36, rel=0.5)
    assert res.variance["item"] == pytest.approx(0.16, rel=0.6)
    assert res.warnings == ()


def test_few_raters_warn_and_cli_contract(tmp_path: Path) -> None:
    df = read_ratings(DATA, criterion="accuracy")
    few = df[df["rater"].isin(["subj1", "subj2", "subj3"])]
    res = mixed_model(few)
    assert any("only 3 raters" in w for w in res.warnings)
    out = runner.invoke(app, ["compare", str(DATA), "--criterion", "accuracy", "--method",
                              "mixed", "--json", "--out-dir", str(tmp_path)])
    assert out.exit_code == 0, out.output
    d = json.loads(out.stdout)
    assert d["method"] == "mixed" and d["correction"] == "holm"
    assert len(d["contrasts"]) == 6
    for c in d["contrasts"]:
        assert {"system_a", "system_b", "estimate", "ci_low", "ci_high", "p",
                "p_adjusted"} <= set(c)
        assert c["ci_low"] < c["estimate"] < c["ci_high"]
        assert c["p_adjusted"] >= c["p"]
    assert {"rater", "item", "residual", "share_rater", "share_item"} <= set(d["variance"])
    assert (tmp_path / "mixed_contrasts_accuracy.tex").exists()
    # the explained mismatch between per-comparison CIs and Holm-adjusted significance
    lib = mixed_model(df)
    for c in d["contrasts"]:
        excl = c["ci_low"] > 0 or c["ci_high"] < 0
        if excl and not c["significant"]:
            assert any(f"{c['system_a']}-{c['system_b']}" in w for w in lib.warnings)
