"""``nlgeval items`` commands, in process (CliRunner) and once as a subprocess."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from nlgeval.cli import app
from nlgeval.items.discanova import disc_anova

runner = CliRunner()


def _ratings(path: Path, seed: int = 0) -> Path:
    rng = np.random.default_rng(seed)
    lines = ["rater,item,system,criterion,score"]
    for rater, probs in (("r1", [0.1, 0.2, 0.3, 0.2, 0.2]), ("r2", [0.3, 0.3, 0.2, 0.1, 0.1])):
        for item in range(24):
            lines.append(f"{rater},{item},s,quality,{rng.choice(5, p=probs) + 1}")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_discanova_json_matches_library(tmp_path: Path) -> None:
    f = _ratings(tmp_path / "r.csv")
    res = runner.invoke(app, ["items", "discanova", str(f), "--group", "rater", "--score",
                              "score", "--nboot", "500", "--seed", "1", "--json"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert {"statistic", "pvalue", "nboot"} <= set(out)
    import pandas as pd

    ref = disc_anova(pd.read_csv(f), "rater", "score", n_resamples=500, seed=1)
    assert out["statistic"] == ref.statistic and out["pvalue"] == ref.pvalue
    assert out["nboot"] == 500


def test_discanova_compare_and_chisq(tmp_path: Path) -> None:
    f = _ratings(tmp_path / "r.csv")
    res = runner.invoke(app, ["items", "discanova", str(f), "--group", "rater", "--score",
                              "score", "--compare", "--nboot", "100"])
    assert res.exit_code == 0 and "chi-square (asymptotic)" in res.stdout
    res = runner.invoke(app, ["items", "chisq", str(f), "--group", "rater", "--score", "score",
                              "--method", "montecarlo", "--resamples", "999", "--json"])
    assert res.exit_code == 0
    assert json.loads(res.stdout)["method"] == "montecarlo"


def test_chisquare_lives_in_the_library(tmp_path: Path) -> None:
    """``items chisq`` and ``discanova --compare`` call nlgeval.items.chisquare: the asymptotic
    test equals scipy's chi2_contingency on the crosstab, the exact one (two groups, two score
    values) the sum of scipy's hypergeometric probabilities of the 2 x 2 tables with the same
    margins whose X^2 is at least the observed one."""
    import pandas as pd
    from scipy import stats

    from nlgeval.items.chisquare import chi2_companions, chi2_from_ratings

    f = _ratings(tmp_path / "r.csv")
    df = pd.read_csv(f)
    res = chi2_from_ratings(df, "rater", "score")
    ref = stats.chi2_contingency(pd.crosstab(df["score"], df["rater"]), correction=False)
    assert res.statistic == pytest.approx(ref.statistic, rel=1e-12)
    assert res.pvalue == pytest.approx(ref.pvalue, rel=1e-12) and res.dof == ref.dof
    cli = runner.invoke(app, ["items", "chisq", str(f), "--group", "rater", "--score", "score",
                              "--json"])
    assert json.loads(cli.stdout)["statistic"] == res.statistic

    two = pd.DataFrame({"rater": ["a"] * 10 + ["b"] * 10,
                        "score": [1] * 8 + [2] * 2 + [1] * 3 + [2] * 7})
    comps = chi2_companions(disc_anova(two, "rater", "score", n_resamples=50, seed=1), seed=1)
    assert [c.method for c in comps] == ["asymptotic", "montecarlo", "exact"]
    # score 1: 8 of a's 10, 3 of b's 10; margins 11 (score 1) and 10 (group a) of 20
    def x2(k: int) -> float:
        t = np.array([[k, 11 - k], [10 - k, k - 1]], dtype=float)
        return stats.chi2_contingency(t, correction=False).statistic

    ks = range(1, 11)  # every table with these margins (all cells >= 0)
    exact = sum(stats.hypergeom.pmf(k, 20, 11, 10) for k in ks if x2(k) >= x2(8) - 1e-9)
    assert comps[2].pvalue == pytest.approx(exact, rel=1e-9)


def test_study_json_contract(tmp_path: Path) -> None:
    res = runner.invoke(app, ["items", "study", "--profiles", "positive", "--counts",
                              "mine=3,4,5,6", "--replications", "40", "--nboot", "40",
                              "--alpha", "0.1", "--seed", "1", "--max-size", "8",
                              "--workers", "1", "--out", str(tmp_path / "out"), "--json",
                              "--quiet"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert set(out["curves"][0]) == {"distribution", "method", "size", "reject_share"}
    assert len(out["curves"]) == 2 * 2 * 7
    assert set(out["thresholds"][0]) == {"distribution", "method", "threshold", "min_items"}
    assert (tmp_path / "out" / "rejection_curves.png").exists()


def test_plan_gives_a_recommendation(tmp_path: Path) -> None:
    f = _ratings(tmp_path / "pilot.csv")
    res = runner.invoke(app, ["items", "plan", str(f), "--replications", "60", "--nboot", "60",
                              "--workers", "1", "--json", "--quiet"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert "recommendation" in out and out["method"] == "bootstrap"
    assert out["recommended_items"] is None or 2 <= out["recommended_items"] <= 23
    res = runner.invoke(app, ["items", "plan", str(f), "--criterion", "nope", "--workers", "1"])
    assert res.exit_code != 0


def test_bad_input_exits_2_with_one_line(tmp_path: Path) -> None:
    f = tmp_path / "bad.csv"
    f.write_text("rater,score\na,1\na,2\nb,x\nb,2\n", encoding="utf-8")
    exe = Path(sys.executable).with_name("nlgeval")
    proc = subprocess.run([str(exe), "items", "discanova", str(f), "--group", "rater",
                           "--score", "score", "--json"], capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "row 4" in lines[0] and "score" in lines[0]
    assert proc.stdout == ""
