"""Quality control of raters (Graham et al. 2013/2017, as Appraise for WMT DA).

The per-rater test is checked against scipy's one-sided paired Wilcoxon and, for small n
without ties, against exact enumeration of the 2^n sign assignments; the end-to-end tests build
an export with attention-check rows (the layout of ``nlgeval experiment export``) and check that
``--qc drop`` gives the same analysis as removing the failing raters by hand.
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from typer.testing import CliRunner

from nlgeval.cli import app
from nlgeval.errors import InputError
from nlgeval.human.analysis import compare_systems
from nlgeval.human.qc import apply_qc, degraded_test, rater_quality
from nlgeval.human.ratings import read_ratings

runner = CliRunner()


def _exact_signed_rank_greater(d: np.ndarray) -> float:
    """P(W+ >= observed) over all 2^n equally likely sign patterns (no ties, no zeros)."""
    ranks = stats.rankdata(np.abs(d))
    w_obs = ranks[d > 0].sum()
    hits = sum(ranks[np.array(s, dtype=bool)].sum() >= w_obs - 1e-9
               for s in itertools.product((0, 1), repeat=len(d)))
    return hits / 2 ** len(d)


@pytest.mark.parametrize("seed", range(5))
def test_degraded_test_matches_enumeration_and_scipy(seed: int) -> None:
    rng = np.random.default_rng(seed)
    orig = rng.permutation(np.arange(7, dtype=float)) + 10
    degr = orig - rng.permutation(np.arange(1, 8, dtype=float)) * rng.choice([-1, 1], 7,
                                                                          p=[0.3, 0.7])
    stat, p = degraded_test(orig, degr)
    assert p == pytest.approx(_exact_signed_rank_greater(orig - degr), abs=1e-12)
    ref = stats.wilcoxon(orig, degr, alternative="greater")
    assert (stat, p) == pytest.approx((ref.statistic, ref.pvalue))


def test_degraded_test_too_few_pairs_is_not_tested() -> None:
    stat, p = degraded_test([5, 6, 7, 8], [1, 1, 1, 1])
    assert np.isnan(stat) and np.isnan(p)  # 1/2^4 > 0.05: cannot pass, so not tested


def _export(tmp_path: Path) -> Path:
    """Ratings of 4 raters x 12 items x 2 systems on a 1-7 scale, with 6 degraded and 4
    repeat checks per rater; 'lazy' gives degraded copies the same scores, 'erratic' answers
    repeats far from the first answer, 'flagged' was flagged by the experiment (speeder)."""
    rng = np.random.default_rng(11)
    rows = []
    for rater in ("good", "lazy", "erratic", "flagged"):
        for i in range(12):
            for system, base in (("A", 5.0), ("B", 3.0)):
                s = float(np.clip(base + rng.integers(-1, 2), 1, 7))
                rows.append((rater, f"i{i}", system, s, ""))
                if system == "A" and i < 6:
                    rows.append((rater, f"i{i}", system, s if rater == "lazy" else 1.0,
                                 "degraded"))
                if system == "B" and i < 4:
                    rows.append((rater, f"i{i}", system,
                                 7.0 if rater == "erratic" and s < 5 else s, "repeat"))
    df = pd.DataFrame(rows, columns=["rater", "item", "system", "score", "qc_check"])
    df.insert(3, "criterion", "quality")
    df["qc_passed"] = df["rater"] != "flagged"
    df["qc_flags"] = np.where(df["rater"] == "flagged", "speeder", "")
    path = tmp_path / "export.csv"
    df.to_csv(path, index=False)
    return path


def test_rater_quality_finds_each_failure_and_says_why(tmp_path: Path) -> None:
    df = read_ratings(_export(tmp_path), keep_checks=True)
    qc = rater_quality(df, scale=(1, 7))
    assert set(qc.removed) == {"lazy", "erratic", "flagged"}
    assert "degraded outputs not scored lower" in qc.reasons["lazy"]
    assert "inconsistent on repeated items" in qc.reasons["erratic"]
    assert "speeder" in qc.reasons["flagged"]
    t = qc.raters.set_index("rater")
    # the good rater: 6 degraded pairs all lower -> exact one-sided p = 1/64
    assert t.loc["good", "degraded_pvalue"] == pytest.approx(1 / 64)
    assert t.loc["good", "passed"] and t.loc["good", "repeat_mean_abs_diff"] == 0
    real = df[df["qc_check"] == ""]
    z = (real["score"] - real["score"].mean()) / real["score"].std(ddof=1)
    assert t.loc["good", "z_mean"] == pytest.approx(z[real["rater"] == "good"].mean())
    assert "3 of 4 raters removed" in qc.summary()


def test_repeat_tolerance_boundary() -> None:
    rows = [("r", "1", "a", 3.0, ""), ("r", "1", "a", 4.5, "repeat")]
    df = pd.DataFrame(rows, columns=["rater", "item", "system", "score", "qc_check"])
    assert rater_quality(df, scale=(1, 7), repeat_tolerance=0.25).removed == ()  # 1.5 <= 1.5
    assert rater_quality(df, scale=(1, 7), repeat_tolerance=0.2).removed == ("r",)


def test_no_qc_information_is_an_error() -> None:
    df = pd.DataFrame({"rater": ["r"], "item": ["1"], "system": ["a"], "score": [3.0]})
    with pytest.raises(InputError, match="no quality-control information"):
        apply_qc(df, "drop")
    kept, rep = apply_qc(df, "keep")
    assert rep is None and len(kept) == 1


def test_checks_are_left_out_unless_asked(tmp_path: Path) -> None:
    path = _export(tmp_path)
    plain = read_ratings(path)
    assert (plain["qc_check"] == "").all() and len(plain) == 4 * 24
    assert len(read_ratings(path, keep_checks=True)) == 4 * (24 + 6 + 4)


def test_compare_qc_drop_equals_manual_removal(tmp_path: Path) -> None:
    path = _export(tmp_path)
    res = runner.invoke(app, ["compare", str(path), "--qc", "drop", "--json"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert out["qc"]["n_removed"] == 3 and out["qc"]["removed"] == ["erratic", "flagged",
                                                                   "lazy"]
    manual = read_ratings(path)
    manual = manual[manual["rater"] == "good"]
    ref = compare_systems(manual, criterion="quality").to_dict()
    assert out["pairs"] == ref["pairs"]
    assert out["run"]["qc"] == "drop"
    text = runner.invoke(app, ["compare", str(path), "--qc", "drop"])
    assert "3 of 4 raters removed" in text.stderr


def test_agreement_qc_drop_reports_removed(tmp_path: Path) -> None:
    path = _export(tmp_path)
    res = runner.invoke(app, ["agreement", str(path), "--qc", "drop", "--json"])
    # only one rater left: agreement needs 2, said clearly (exit 2 through the entry point)
    assert isinstance(res.exception, InputError) and "at least 2 raters" in str(res.exception)
    df = pd.read_csv(path)
    df.loc[df["rater"] == "erratic", "qc_check"] = df.loc[df["rater"] == "erratic",
                                                          "qc_check"].where(
        df["qc_check"] != "repeat", "")
    df = df[~((df["rater"] == "erratic") & df.duplicated(["rater", "item", "system"]))]
    df.to_csv(path, index=False)
    res = runner.invoke(app, ["agreement", str(path), "--qc", "drop", "--json"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert out["qc"]["removed"] == ["flagged", "lazy"] and out["n_raters"] == 2


def test_relative_exports_use_the_experiments_verdict_only() -> None:
    # a relative degraded check pits an output against its own degraded copy (no original row
    # to pair with): only qc_passed is used, and the check rows never reach the analysis
    df = pd.DataFrame({"rater": ["r1", "r1", "r2", "r2"], "item": ["1", "1", "1", "1"],
                       "system": ["A", "A", "A", "A"], "system_b": ["B", "A", "B", "A"],
                       "score": [1.0, 2.0, -1.0, 0.0],
                       "qc_check": ["", "degraded", "", "degraded"],
                       "qc_passed": [True, True, False, False]})
    kept, rep = apply_qc(df, "drop")
    assert rep.removed == ("r2",) and rep.sources == ("the experiment's checks",)
    assert kept[["rater", "system_b"]].values.tolist() == [["r1", "B"]]
