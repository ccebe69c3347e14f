"""Defects found by walking the guides as a new user (README, docs/validate.md, metrics.md,
corpora.md, mtme.md, pairwise.md, ties.md, meta-analysis.md), each with the step that hit it."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from nlgeval.cli import app
from nlgeval.errors import InputError
from nlgeval.scores import read_scores, tidy_scores
from tests._cli import run_cli

DEMO = Path(__file__).resolve().parents[1] / "corpora" / "demo"


def _write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


# docs/validate.md, "Score files": a misspelt key column of a score file was read as a metric
# (or its rows as system-level scores), so the error named a score cell, a duplicate or a
# coverage share -- or, for one row per system with numeric item ids, nothing at all.
MISSPELT = [
    ("system,itme,comet\ntemplate,w01,0.5\nneural,w01,0.6\n", "item", "itme"),
    ("system,Item,metric,score\ntemplate,w01,x,1\ntemplate,w02,x,2\n", "item", "Item"),
    ("system,items,comet\ntemplate,w01,0.5\n", "item", "items"),
    ("system,item,metric,Score\ntemplate,w01,x,1\n", "score", "Score"),
    ("system,item,metrc,score\ntemplate,w01,x,1\n", "metric", "metrc"),
]


@pytest.mark.parametrize(("text", "key", "column"), MISSPELT)
def test_misspelt_key_column_is_named(tmp_path: Path, text: str, key: str, column: str) -> None:
    path = _write(tmp_path, "scores.csv", text)
    with pytest.raises(InputError) as err:
        read_scores(path)
    msg = str(err.value)
    assert msg.startswith(f"{path}, row 1, column '{column}': no '{key}' column")
    assert f"did you mean '{key}'?" in msg


def test_one_row_per_system_with_misspelt_item_is_not_read_silently(tmp_path: Path) -> None:
    # numeric item ids under 'Item': the fast typed reader took 'Item' for a second metric of
    # system-level scores and returned them without a word
    path = _write(tmp_path, "scores.csv", "system,Item,comet\nA,1,0.5\nB,1,0.7\n")
    with pytest.raises(InputError, match="did you mean 'item'"):
        read_scores(path)


def test_misspelt_item_from_python_frame() -> None:
    frame = pd.DataFrame({"system": ["A", "B"], "Item": ["1", "1"], "m": [0.5, 0.7]})
    with pytest.raises(InputError, match=r"column 'Item': no 'item' column"):
        tidy_scores(frame)


@pytest.mark.parametrize(("text", "expected"), [
    # system-level scores (no item column), wide and long files: read as before
    ("system,comet\nA,0.5\nB,0.7\n", [("comet", "A", "", 0.5), ("comet", "B", "", 0.7)]),
    ("system,item,comet,time\nA,1,0.5,3\n", [("comet", "A", "1", 0.5), ("time", "A", "1", 3.0)]),
    ("system,item,metric,score\nA,1,x,2\n", [("x", "A", "1", 2.0)]),
    ("system,item,score\nA,1,2\n", [("score", "A", "1", 2.0)]),
])
def test_well_formed_files_unchanged(tmp_path: Path, text: str,
                                     expected: list[tuple[str, str, str, float]]) -> None:
    got = read_scores(_write(tmp_path, "scores.csv", text))
    rows = [(str(m), str(s), str(i), float(v)) for m, s, i, v in
            got[["metric", "system", "item", "score"]].itertuples(index=False)]
    assert sorted(rows) == sorted(expected)


def test_validate_misspelt_item_one_line_exit_2(tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    scores = _write(tmp_path, "comet.csv",
                    "system,itme,comet\ntemplate,w01,0.5\nneural,w01,0.6\n")
    out = tmp_path / "out"
    code, _, err = run_cli(["validate", str(DEMO), "--scores", str(scores), "--metrics", "none",
                            "--quiet", "--out", str(out)], capsys)
    assert code == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1
    assert "comet.csv, row 1, column 'itme'" in lines[0]
    assert "did you mean 'item'?" in lines[0]
    assert not out.exists()


# docs/meta-analysis.md, "Your own table": a misspelt --moderator listed the computed columns
# (yi, vi, weight, _row) as if they were moderators, with no "did you mean".
def test_meta_analyse_misspelt_moderator(tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    effects = _write(tmp_path, "effects.csv",
                     "study,r,n,task\nA,0.3,100,d2t\nB,0.4,80,d2t\nC,0.1,200,mt\nD,0.35,50,mt\n")
    code, _, err = run_cli(["meta-analyse", "--effects", str(effects), "--moderator", "taks",
                            "--quiet"], capsys)
    assert code == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1
    assert "column 'taks'" in lines[0] and "did you mean 'task'?" in lines[0]
    listed = lines[0].split("have: ")[1]
    assert "task" in listed and not {"yi", "vi", "weight", "_row"} & set(
        listed.rstrip(")").split(", "))
    code, out, _ = run_cli(["meta-analyse", "--effects", str(effects), "--moderator", "task",
                            "--json"], capsys)
    assert code == 0 and '"moderators"' in out


# docs/metrics.md scores every published corpus (and docs/corpora.md lists six); score --help
# named three of them as if they were all.
def test_score_help_points_to_the_corpus_list() -> None:
    res = CliRunner().invoke(app, ["score", "--help"], env={"COLUMNS": "200"})
    assert res.exit_code == 0, res.output
    assert "see `nlgeval corpora list`" in res.output
    assert "(webnlg2020, e2e, novikova2017)" not in res.output


# docs/meta-analysis.md, "Criterion harmonisation": a criterion misspelt in a --criterion-map
# file left one note per metric ("bleu x Fluncy: no Pearson correlation in the study") that did
# not say the criterion itself is not in the study, nor which criteria are.
def test_criterion_map_misspelt_criterion_noted_once_with_did_you_mean(tmp_path: Path) -> None:
    from nlgeval.meta_analysis import Study, study_effects
    from nlgeval.meta_analysis.criteria import load_criterion_map

    cmap_file = _write(tmp_path, "map.csv", "corpus,construct,criterion\n"
                                            "e2e,fluency,naturalnes\ne2e,overall,quality\n")
    corr = pd.DataFrame({"metric": ["bleu", "chrf", "bleu", "chrf"],
                         "criterion": ["naturalness", "naturalness", "quality", "quality"],
                         "level": ["segment"] * 4, "statistic": ["pearson"] * 4,
                         "value": [0.2, 0.3, 0.25, 0.35], "n": [100] * 4})
    notes: list[str] = []
    eff = study_effects([Study("e2e", "e2e", corr)], load_criterion_map(cmap_file), notes=notes)
    assert sorted(eff["criterion"]) == ["quality", "quality"]   # the rest is pooled as before
    assert notes == ["e2e: criterion 'naturalnes' (fluency) of the criterion map is not in the "
                     "study (did you mean 'naturalness'?; criteria: naturalness, quality): "
                     "left out"]


# docs/validate.md lists `--lp LP (for mtme:PATH)`: with a named corpus it was ignored without a
# word, so `validate wmt21-ted-ende --lp zh-en` ran en-de.
@pytest.mark.parametrize("source", [["demo"], ["--human", "ratings"]])
def test_lp_without_mtme_is_refused(source: list[str], tmp_path: Path,
                                    capsys: pytest.CaptureFixture[str]) -> None:
    scores = _write(tmp_path, "comet.csv", "system,item,comet\ntemplate,w01,0.5\n")
    args = ([str(DEMO)] if source == ["demo"]
            else ["--human", str(DEMO / "ratings.csv"), "--scores", str(scores)])
    out = tmp_path / "out"
    code, _, err = run_cli(["validate", *args, "--lp", "zh-en", "--quiet", "--out", str(out)],
                           capsys)
    assert code == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "--lp applies only to an mtme:PATH test set" in lines[0]
    assert not out.exists()


# docs/validate.md, "Validate any metric": a score file with a header and no rows ended in a
# traceback ("No objects to concatenate") with --human, and was passed over without a word
# beside computed metrics.
@pytest.mark.parametrize("header", ["system,item,comet\n", "system,item,metric,score\n\n"])
def test_header_only_score_file_is_one_line(header: str, tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    scores = _write(tmp_path, "comet.csv", header)
    out = tmp_path / "out"
    code, _, err = run_cli(["validate", "--human", str(DEMO / "ratings.csv"), "--scores",
                            str(scores), "--quiet", "--out", str(out)], capsys)
    assert code == 2
    lines = err.strip().splitlines()
    assert lines == [f"error: {scores}, row 2: no scores: the file has a header but no rows"]
    assert not out.exists()


def test_empty_score_frame_from_python_is_an_input_error() -> None:
    from nlgeval.corpora import load_corpus
    from nlgeval.report import run_validation

    empty = pd.DataFrame({"system": [], "item": [], "metric": [], "score": []})
    with pytest.raises(InputError, match="no metrics to validate"):
        run_validation(load_corpus(DEMO), [], scores=empty, n_resamples=0, permutations=0)


# docs/validate.md's options: values that named nothing gave a study without a correlation, or
# a calibrated epsilon where a fixed one was asked for, with exit status 0 and no word.
@pytest.mark.parametrize(("options", "expected"), [
    (["--criteria", ","], "error: --criteria names no criterion"),
    (["--levels", ","], "error: --levels names no level (',')"),
    (["--statistics", "acc_eq", "--levels", "system"],
     "error: --statistics: 'acc_eq' is not defined at the level(s) asked for (system); "
     "it is at: segment, item, system-grouped"),
    (["--statistics", "soft_pairwise_accuracy", "--levels", "segment"],
     "error: --statistics: 'soft_pairwise_accuracy' is not defined at the level(s) asked for "
     "(segment); it is at: system"),
    (["--statistics", "acc_eq", "--epsilon", "blue=0.5"],
     "error: --epsilon: unknown metric 'blue' (did you mean 'bleu'?"),
    (["--statistics", "acc_eq", "--epsilon", "BLEU=0.5"],
     "error: --epsilon: metric 'BLEU' is spelt 'bleu' in this study"),
])
def test_options_that_name_nothing_are_refused(options: list[str], expected: str,
                                               tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out"
    code, _, err = run_cli(["validate", str(DEMO), "--metrics", "bleu", *options, "--resamples",
                            "0", "--permutations", "0", "--quiet", "--out", str(out)], capsys)
    assert code == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(expected), lines
    assert not out.exists()


def test_statistic_at_one_of_its_levels_still_runs(tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    # acc_eq is not defined at system level, but is at segment level: computed there only
    out = tmp_path / "out"
    code, _, err = run_cli(["validate", str(DEMO), "--metrics", "bleu", "--statistics",
                            "pearson,acc_eq", "--levels", "segment,system", "--epsilon",
                            "bleu=0.5", "--resamples", "0", "--permutations", "0", "--figures",
                            "none", "--quiet", "--out", str(out)], capsys)
    assert code == 0, err
    corr = pd.read_csv(out / "correlations.csv")
    assert set(zip(corr["level"], corr["statistic"], strict=True)) == {
        ("segment", "pearson"), ("system", "pearson"), ("segment", "acc_eq")}
    assert set(corr.loc[corr["statistic"] == "acc_eq", "epsilon"]) == {0.5}


# docs/corpora.md: "`nlgeval corpora info NAME` prints the licence, citation and pinned
# sources" -- the citation was only in --json.
def test_corpora_info_prints_the_citation(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_cli(["corpora", "info", "e2e"], capsys)
    assert code == 0, err
    lines = out.splitlines()
    assert any(line.startswith("licence: ") for line in lines)
    assert any(line.startswith("source: https://github.com/") for line in lines)
    assert [line for line in lines if line.startswith("cite: ")] == [
        "cite: Dusek, O., Novikova, J. and Rieser, V. (2020). Evaluating the state-of-the-art of "
        "End-to-End Natural Language Generation: The E2E NLG Challenge. Computer Speech & "
        "Language 59, 123-156. arXiv:1901.07931."]
