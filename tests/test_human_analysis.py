"""``compare_systems``: the library call behind ``nlgeval compare``.

The CLI is parse -> ``compare_systems`` -> render, so its ``--json`` output must be the
library's ``to_dict()`` plus the run record, with the documented keys of issue 14; the numbers
themselves are tested against independent references in the other test_human_* files (and
here the Wilcoxon p-values against scipy directly).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from typer.testing import CliRunner

from nlgeval.cli import app
from nlgeval.errors import InputError
from nlgeval.human import compare_systems, read_ratings
from nlgeval.human.analysis import default_method

DATA = Path(__file__).parent / "data" / "human_lsed_ratings.csv"
ORDINAL = Path(__file__).parent / "data" / "human_ordinal_ratings.csv"
runner = CliRunner()


def _cli(args: list[str]) -> dict:
    res = runner.invoke(app, args)
    assert res.exit_code == 0, (res.output, res.exception)
    out = json.loads(res.stdout)
    out.pop("run")
    return out


def test_wilcoxon_bonferroni_interface_and_scipy() -> None:
    out = _cli(["compare", str(DATA), "--criterion", "accuracy", "--method", "wilcoxon",
                "--pairing", "item", "--correction", "bonferroni", "--json"])
    df = read_ratings(DATA, criterion="accuracy")
    assert out == compare_systems(df, criterion="accuracy", method="wilcoxon",
                                  correction="bonferroni").to_dict()
    wide = df.groupby(["item", "system"])["score"].mean().unstack()
    for p in out["pairs"]:
        assert {"system_a", "system_b", "statistic", "pvalue", "pvalue_adjusted",
                "significant"} <= set(p)
        ref = stats.wilcoxon(wide[p["system_a"]], wide[p["system_b"]])
        assert p["pvalue"] == pytest.approx(ref.pvalue)
        assert p["pvalue_adjusted"] == pytest.approx(min(1.0, 6 * ref.pvalue))


def test_mixed_interface_is_the_library_result() -> None:
    out = _cli(["compare", str(DATA), "--criterion", "accuracy", "--method", "mixed", "--json"])
    lib = compare_systems(read_ratings(DATA, criterion="accuracy"), criterion="accuracy",
                          method="mixed")
    assert out == lib.to_dict()
    assert out["method"] == "mixed" and set(out["variance"]) >= {"rater", "item", "residual"}
    assert all({"system_a", "system_b", "estimate", "ci_low", "ci_high", "p", "p_adjusted"}
               <= set(c) for c in out["contrasts"])


def test_bradley_terry_on_relative_export(tmp_path: Path) -> None:
    rng = np.random.default_rng(5)
    names = ["A", "B", "C"]
    rows = []
    for t in range(90):
        i, j = rng.choice(3, 2, replace=False)
        rows.append({"rater": f"r{t % 6}", "item": f"i{t}", "system": names[i],
                     "system_b": names[j], "criterion": "q",
                     "score": float(rng.choice([-2, 0, 2], p=[0.3, 0.2, 0.5]))})
    path = tmp_path / "rel.csv"
    pd.DataFrame(rows).to_csv(path, index=False)
    df = read_ratings(path)
    assert default_method(df) == "bradley-terry"
    out = _cli(["compare", str(path), "--scale", "-2,2", "--n-boot", "50", "--json"])
    assert out["method"] == "bradley-terry"
    assert [set(r) >= {"system", "strength", "ci_low", "ci_high"} for r in out["ranking"]] \
        == [True] * 3
    lib = compare_systems(df, criterion="q", scale=(-2, 2), n_resamples=50)
    assert out == lib.to_dict()


def test_ordinal_interface_has_contrasts_and_check() -> None:
    out = _cli(["compare", str(ORDINAL), "--criterion", "nonpo", "--method", "ordinal",
                "--json"])
    o = out["ordinal"]
    assert {"lr_statistic", "lr_df", "lr_pvalue", "reference", "coefficients"} <= set(o)
    assert len(o["contrasts"]) == 6 and o["proportional_odds"]["holds"] is False
    res = runner.invoke(app, ["compare", str(ORDINAL), "--criterion", "nonpo", "--method",
                              "ordinal"])
    assert "proportional-odds assumption fails" in res.stderr
    assert "REJECTED" in res.stdout


def test_wrong_method_for_the_data_is_refused() -> None:
    df = read_ratings(DATA, criterion="accuracy")
    with pytest.raises(InputError, match="pairwise judgements"):
        compare_systems(df, method="sign")
    with pytest.raises(InputError, match="unknown method"):
        compare_systems(df, method="anova")


def test_constant_ratings_glm_tukey_refused() -> None:
    df = read_ratings(DATA, criterion="accuracy").assign(score=4.0)
    with pytest.raises(InputError, match="no variation"):
        compare_systems(df, method="glm-tukey")
