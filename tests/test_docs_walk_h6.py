"""What a reader of docs/human.md, triangle.md, items.md and experiment.md meets when running
the pages' commands: help texts, examples and errors that agree with the pages."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from nlgeval.cli import app, main
from nlgeval.errors import InputError
from nlgeval.human import read_ratings
from nlgeval.human.qc import rater_quality

_COMMANDS = [["design", "latin-square"], ["design", "bws"], ["compare"], ["agreement"],
             ["plan", "power"], ["spans", "score"], ["bws", "score"]]


@pytest.mark.parametrize("command", _COMMANDS, ids=" ".join)
def test_help_shows_no_doctest(command: list[str]) -> None:
    # the docstrings' doctests are for the test suite; in --help Rich also ate their
    # [...] lines ("rows =" with nothing after it in compare and agreement)
    res = CliRunner().invoke(app, [*command, "--help"], env={"COLUMNS": "100"})
    assert res.exit_code == 0, res.output
    assert ">>>" not in res.output and "Examples" not in res.output
    assert "Usage" in res.output


def _export_with_two_copies(tmp_path: Path) -> Path:
    """An export with --include-checks where two degraded copies copy the same output (as
    the online experiment allocates them: five copies of six trials may repeat one)."""
    rows = ["rater,item,system,criterion,score,position,qc_check"]
    outputs = [(i, s) for i in range(3) for s in ("S0", "S1")]
    for r, good in (("r1", True), ("r2", False)):
        for pos, (i, s) in enumerate(outputs):
            rows.append(f"{r},w{i},{s},fluency,{4 if good else 2},{pos + 1},")
        for k, (i, s) in enumerate([outputs[j] for j in (0, 1, 1, 2, 3)]):  # (w0, S1) twice
            rows.append(f"{r},w{i},{s},fluency,{1 if good else 3},{7 + k},degraded")
    path = tmp_path / "export.csv"
    path.write_text("\n".join(rows) + "\n")
    return path


def test_two_degraded_copies_of_one_output_are_two_checks(tmp_path: Path) -> None:
    path = _export_with_two_copies(tmp_path)
    df = read_ratings(path, keep_checks=True)
    assert (df["qc_check"].fillna("") == "degraded").sum() == 10
    qc = rater_quality(df)
    t = qc.raters.set_index("rater")
    assert t.loc["r1", "n_degraded_pairs"] == 5 and t.loc["r1", "degraded_ok"]
    assert not t.loc["r2", "degraded_ok"]
    # the same check row twice (same trial position) and a repeated real judgement still fail
    text = path.read_text().splitlines()
    dup_check = tmp_path / "dup_check.csv"
    dup_check.write_text("\n".join([*text, text[-1]]) + "\n")
    with pytest.raises(InputError, match="duplicate judgement"):
        read_ratings(dup_check, keep_checks=True)
    dup_main = tmp_path / "dup_main.csv"
    dup_main.write_text("\n".join([*text, text[1].replace(",1,", ",20,")]) + "\n")
    with pytest.raises(InputError, match="duplicate judgement"):
        read_ratings(dup_main, keep_checks=True)


def test_compare_qc_drop_on_an_export_with_two_copies(tmp_path: Path) -> None:
    path = _export_with_two_copies(tmp_path)
    res = CliRunner().invoke(app, ["compare", str(path), "--qc", "drop", "--json"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["qc"]["removed"] == ["r2"]


@pytest.mark.parametrize(("edit", "column", "count"), [
    (("evaluators = 3 ", "evaluators = 4 "), "evaluators", "4 evaluators"),
    (None, "items", "7 items"),
])
def test_create_names_the_config_key_when_counts_do_not_fit(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], edit: tuple[str, str] | None,
        column: str, count: str) -> None:
    # docs/experiment.md: create fails with one line naming the file and key, with the
    # nearest counts that fit; create has no --allow-incomplete to suggest
    d = tmp_path / "study"
    assert CliRunner().invoke(app, ["experiment", "init", str(d)]).exit_code == 0
    toml = d / "experiment.toml"
    if edit is not None:
        toml.write_text(toml.read_text().replace(*edit))
    else:  # a seventh item every system has an output for
        with (d / "outputs.csv").open("a") as f:
            f.write("human,w7,x\nneural,w7,y\ntemplate,w7,z\n")
    capsys.readouterr()
    with pytest.raises(SystemExit) as exc:
        main(["experiment", "create", str(d)])
    assert exc.value.code == 2
    line = capsys.readouterr().err.strip()
    assert "\n" not in line and "Traceback" not in line
    assert f"experiment.toml, key '{column}'" in line and count in line
    assert "nearest that fit" in line and "allow" not in line and "scenario" not in line


@pytest.mark.parametrize(("command", "keep", "expected"), [
    (["compare"], lambda r: r.startswith("r1,i1,A") or r.startswith("r2,i1,A"),
     "one.csv, column 'system': comparing systems needs at least 2 systems"),
    (["agreement"], lambda r: r.startswith("r1,"),
     "one.csv, column 'rater': agreement needs at least 2 raters"),
])
def test_errors_about_the_whole_file_name_it(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], command: list[str],
        keep: Callable[[str], bool], expected: str) -> None:
    # docs/human.md's awkward-input table: one system (compare), one rater (agreement)
    rows = [f"r{r},i{i},{s},q,{(r + i + k) % 5 + 1}"
            for r in (1, 2) for i in range(4) for k, s in enumerate("AB")]
    path = tmp_path / "one.csv"
    path.write_text("rater,item,system,criterion,score\n"
                    + "\n".join(r for r in rows if keep(r)) + "\n")
    capsys.readouterr()
    with pytest.raises(SystemExit) as exc:
        main([*command, str(path)])
    err = capsys.readouterr().err.strip()
    assert exc.value.code == 2 and "\n" not in err and expected in err


def test_triangle_design_names_the_pool_file_for_an_unknown_source(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # docs/triangle.md: design --pool texts.csv --source-a meteorologist ...; a typo in the
    # source is one line naming the pool file and column
    pool = tmp_path / "texts.csv"
    pool.write_text("source,item,text\n" + "".join(
        f"{s},i{i},{s} text {i}\n" for i in range(6) for s in ("meteorologist", "system")))
    capsys.readouterr()
    with pytest.raises(SystemExit) as exc:
        main(["triangle", "design", "--judges", "6", "--seed", "1", "--pool", str(pool),
              "--source-a", "meteorologst", "--source-b", "system"])
    err = capsys.readouterr().err.strip()
    assert exc.value.code == 2 and "\n" not in err
    assert f"{pool}, column 'source': source 'meteorologst' is not in the pool" in err


@pytest.mark.parametrize("name", ["ratings.csv.gz", "ratings.xlsx", "ratings.json"])
def test_a_missing_ratings_file_is_not_found_not_a_corpus(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str) -> None:
    # docs/human.md: ratings.csv.gz is read directly; a mistyped path to it is "file not
    # found", not "neither a known corpus nor a corpus directory"
    capsys.readouterr()
    with pytest.raises(SystemExit) as exc:
        main(["compare", str(tmp_path / name)])
    err = capsys.readouterr().err.strip()
    assert exc.value.code == 2 and err.endswith(f"{name}: file not found"), err


def test_items_plan_names_the_file_and_evaluator_with_too_few_ratings(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # docs/items.md: items plan pilot.csv; an evaluator with 2 ratings was "distribution 'a':
    # needs at least 3 ratings", without the file or the column
    pilot = tmp_path / "pilot.csv"
    pilot.write_text("rater,score\na,1\na,2\nb,3\nb,2\nb,1\n")
    capsys.readouterr()
    with pytest.raises(SystemExit) as exc:
        main(["items", "plan", str(pilot)])
    err = capsys.readouterr().err.strip()
    assert exc.value.code == 2 and "\n" not in err
    assert f"{pilot}, column 'rater': rater 'a' has 2 rating(s)" in err


def test_signed_rank_pvalues_equal_scipy_bit_for_bit() -> None:
    # docs/human.md's plan power example (--test wilcoxon --scale 1,7) took 4 min 22 s: with
    # rounded ratings scipy's wilcoxon runs its exact permutation test one sign flip at a
    # time. The vectorised enumeration must give scipy's numbers exactly (the old code path
    # is the reference): ties, zeros, near-constant rows, no ties, values near 1e200/1e-200
    from scipy import stats

    from nlgeval.human.power import signed_rank_pvalues

    rng = np.random.default_rng(7)
    for trial in range(96):  # n up to 14: the permutation branch (<= 13) and past it
        n = int(rng.integers(1, 15)) if trial % 8 == 0 else int(rng.integers(1, 10))
        rows, kind = int(rng.integers(1, 5)), trial % 6
        if kind == 0:  # means of rounded ratings: ties and zeros
            k = int(rng.integers(1, 4))
            d = (rng.integers(1, 8, (rows, n, k)).mean(2)
                 - rng.integers(1, 8, (rows, n, k)).mean(2))
        elif kind == 1:
            d = rng.normal(size=(rows, n))
        elif kind == 2:
            d = rng.normal(size=(rows, n)) * 1e200
        elif kind == 3:
            d = np.round(rng.normal(size=(rows, n)), 1) * 1e-200
        elif kind == 4:  # near-constant: mostly zeros
            d = np.where(rng.random((rows, n)) < 0.8, 0.0,
                         rng.integers(-2, 3, (rows, n)).astype(float))
        else:
            d = rng.integers(-3, 4, (rows, n)).astype(float) / 3
        d = d[(d != 0).any(axis=1)]
        if len(d) == 0:
            continue
        ref = stats.wilcoxon(d, axis=1, zero_method="wilcox", method="auto").pvalue
        new = signed_rank_pvalues(d, chunk=int(rng.integers(1, 4)))
        assert np.array_equal(np.asarray(ref), new), (kind, d)
