"""``nlgeval triangle ...``: the interface the acceptance checks use, end to end."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from nlgeval.cli import app
from nlgeval.errors import InputError

runner = CliRunner()
ROOT = Path(__file__).resolve().parents[1]


def _json(args: list[str]) -> dict:
    res = runner.invoke(app, ["triangle", *args, "--json"])
    assert res.exit_code == 0, (res.output, res.exception)
    return json.loads(res.stdout)


def test_critical_difference_and_similarity():
    out = _json(["critical", "--n", "24", "--alpha", "0.05"])
    assert out["min_correct"] == 13
    out = _json(["critical", "--n", "30", "--beta", "0.05", "--pd", "0.3", "--test", "similarity"])
    assert out["max_correct"] == 11
    out = _json(["critical", "--n", "24", "--alpha", "0.05", "--method", "normal"])
    assert out["min_correct"] == 12 and out["method"] == "normal"
    out = _json(["critical", "--n", "6", "--alpha", "0.001"])
    assert out["min_correct"] is None


def test_critical_json_keys_and_library_function():
    """``triangle critical`` renders nlgeval.triangle.planning.critical_value: the documented
    keys, in order, per test; the numbers from the exact binomial (scipy)."""
    from scipy import stats

    from nlgeval.triangle.planning import critical_value

    out = _json(["critical", "--n", "24", "--alpha", "0.05"])
    assert list(out) == ["test", "n", "method", "alpha", "min_correct", "pvalue_at_critical"]
    assert out["pvalue_at_critical"] == pytest.approx(stats.binom.sf(12, 24, 1 / 3), rel=1e-12)
    out = _json(["critical", "--n", "24", "--alpha", "0.05", "--pd", "0.3"])
    assert list(out)[-4:] == ["pd", "beta", "pd_true", "power"]
    assert out["power"] == pytest.approx(stats.binom.sf(12, 24, 1 / 3 + 2 / 3 * 0.3), rel=1e-12)
    out = _json(["critical", "--n", "30", "--beta", "0.05", "--pd", "0.3", "--test",
                 "similarity"])
    assert list(out) == ["test", "n", "method", "beta", "pd", "max_correct",
                         "pvalue_at_critical", "pd_true", "power"]
    assert out["power"] == pytest.approx(stats.binom.cdf(11, 30, 1 / 3), rel=1e-12)
    assert critical_value(30, beta=0.05, pd=0.3, test="similarity").to_dict() == out
    with pytest.raises(InputError, match="needs pd"):
        critical_value(30, test="similarity")


def test_plan_and_inverse_plan(tmp_path):
    out = _json(["plan", "--alpha", "0.05", "--beta", "0.05", "--pd", "0.5"])
    assert out["judges"] == 23 and out["judges_stable"] == 29
    out = _json(["plan", "--alpha", "0.05", "--beta", "0.2", "--pd", "0.3",
                 "--plot", str(tmp_path / "saw")])
    assert (out["judges"], out["judges_stable"]) == (40, 42)
    assert (tmp_path / "saw.png").stat().st_size > 0 and (tmp_path / "saw.pdf").exists()
    inv = _json(["plan", "--judges", "24"])
    assert len(inv["designs"]) == 125
    assert all(d["power"] >= d["target_power"] for d in inv["supported"])


def test_analyse_similarity_example():
    out = _json(["analyse", "--correct", "36", "--n", "98", "--test", "similarity",
                 "--beta", "0.01", "--pd", "0.3"])
    for key in ("pvalue", "pc", "pd", "d_prime", "pd_upper", "pd_upper_normal"):
        assert key in out
    assert round(out["pd_upper_normal"], 3) == 0.221
    assert out["significant"] is True


def test_design_then_analyse_responses(tmp_path):
    q = tmp_path / "q.csv"
    out = _json(["design", "--judges", "98", "--seed", "1", "--test", "similarity",
                 "--items", "30", "--out", str(q)])
    assert sorted(out["summary"]["order_counts"].values()) == [16, 16, 16, 16, 17, 17]
    df = pd.read_csv(q, dtype=str)
    df["correct"] = [1 if i % 3 == 0 else 0 for i in range(len(df))]
    answers = tmp_path / "answers.csv"
    df.to_csv(answers, index=False)
    res = _json(["analyse", "--responses", str(answers), "--test", "similarity",
                 "--beta", "0.01", "--pd", "0.3"])
    assert res["n"] == 98 and res["correct"] == 33
    tidy = pd.DataFrame({"rater": df["judge"], "item": df["item"], "system": df["odd_source"],
                         "criterion": "odd_one_out", "score": df["correct"]})
    tidy_path = tmp_path / "ratings.csv"
    tidy.to_csv(tidy_path, index=False)
    res2 = _json(["analyse", "--responses", str(tidy_path), "--test", "similarity",
                  "--beta", "0.01", "--pd", "0.3"])
    assert res2["pvalue"] == res["pvalue"]
    jq = tmp_path / "q.json"
    runner.invoke(app, ["triangle", "design", "--judges", "4", "-r", "6", "--seed", "2",
                        "--out", str(jq)])
    assert len(json.loads(jq.read_text())) == 24


def test_design_with_pool_file(tmp_path):
    pool = tmp_path / "pool.csv"
    pd.DataFrame({"source": ["h"] * 4 + ["s"] * 4, "item": list("abcd") * 2,
                  "text": [f"t{i}" for i in range(8)]}).to_csv(pool, index=False)
    out = _json(["design", "--judges", "6", "--seed", "3", "--pool", str(pool)])
    assert {"text_1", "text_2", "text_3"} <= set(out["trials"][0])


def test_tables_written(tmp_path):
    out = _json(["tables", "--out", str(tmp_path), "--n2", "6-30", "--n3", "18,50"])
    assert len(out["files"]) == 9
    t2 = pd.read_csv(tmp_path / "triangle_table2.csv")
    assert list(t2["n"]) == list(range(6, 31))
    assert t2.loc[t2["n"] == 24, "alpha=0.05"].item() == 13
    tex = (tmp_path / "triangle_table3.tex").read_text()
    assert "\\toprule" in tex and "pd=30\\%" in tex
    md = (tmp_path / "triangle_table1.md").read_text()
    assert "| 50% | 0.05 | 16 | 20 | 23 | 35 | 48 |" in md


@pytest.mark.parametrize(
    "args",
    [
        ["analyse", "--correct", "31", "--n", "30"],
        ["analyse", "--correct", "3", "--n", "0"],
        ["critical", "--n", "20", "--alpha", "1.5"],
        ["plan", "--alpha", "0.05", "--beta", "0.05", "--pd", "0"],
        ["critical", "--n", "20", "--test", "similarity"],
        ["design", "--judges", "30", "--seed", "1", "-r", "2", "--test", "similarity"],
        ["tables", "--out", "x", "--n2", "a-b"],
    ],
)
def test_bad_input_raises_input_error(args):
    res = runner.invoke(app, ["triangle", *args])
    assert isinstance(res.exception, InputError), res.output


def test_bad_responses_file_one_line_error_exit_2(tmp_path):
    bad = tmp_path / "answers.csv"
    bad.write_text("judge,correct\n1,1\n2,maybe\n", encoding="utf-8")
    exe = Path(sys.executable).parent / "nlgeval"
    proc = subprocess.run([str(exe), "triangle", "analyse", "--responses", str(bad)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "row 3" in lines[0] and "'correct'" in lines[0]
    assert proc.stdout == ""


@pytest.mark.parametrize("args", [["--n2", ""], ["--pds", ""], ["--n3", "0-2"],
                                  ["--which", "last"], ["--method", "poisson"]])
def test_tables_bad_ranges(tmp_path, args):
    res = runner.invoke(app, ["triangle", "tables", "--out", str(tmp_path), *args])
    assert isinstance(res.exception, InputError), res.output


def test_every_option_has_a_help_text():
    """Issue 16: every option of the triangle, items, score, metrics and corpora commands says
    what it does (defaults are shown by typer)."""
    import click
    import typer.main

    def walk(cmd, path):
        if isinstance(cmd, click.Group):
            for name, sub in cmd.commands.items():
                yield from walk(sub, [*path, name])
        else:
            yield path, cmd

    missing = [
        " ".join([*path, p.name])
        for path, cmd in walk(typer.main.get_command(app), [])
        if path and path[0] in {"triangle", "items", "score", "metrics", "corpora"}
        for p in cmd.params
        if p.name != "help" and not getattr(p, "help", None)
    ]
    assert missing == []
