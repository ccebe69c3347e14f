"""Rows in errors about Parquet (and JSONL) files: the record's number, never "row 1" for a
problem with a whole column.

A CSV/TSV file's header is its row 1 (the first data row is row 2); JSONL and Parquet have no
header row, so their first record is row 1. An error about a whole column (a missing one, a
column named twice) named "row 1" in every format; for Parquet and JSONL that is a data record
that has nothing wrong with it. It now names no row there, and row 1 (the header) in CSV/TSV.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from nlgeval.errors import InputError
from nlgeval.io import read_table, to_numeric

RECORDS = [{"system": "A", "item": "1", "score": "4"},
           {"system": "A", "item": "2", "score": "5"},
           {"system": "B", "item": "1", "score": "abc"}]


def _write(tmp_path: Path, fmt: str, records: list[dict[str, str]]) -> Path:
    path = tmp_path / f"ratings.{fmt}"
    frame = pd.DataFrame(records)
    if fmt == "parquet":
        frame.to_parquet(path)
    elif fmt == "jsonl":
        path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    else:
        frame.to_csv(path, index=False, sep="\t" if fmt == "tsv" else ",")
    return path


@pytest.mark.parametrize(("fmt", "row"), [("csv", 1), ("tsv", 1), ("jsonl", None),
                                          ("parquet", None)])
def test_missing_column_names_the_header_row_only_where_there_is_one(
        tmp_path: Path, fmt: str, row: int | None) -> None:
    path = _write(tmp_path, fmt, [{k: v for k, v in r.items() if k != "score"}
                                  for r in RECORDS])
    with pytest.raises(InputError) as err:
        read_table(path, ["system", "item", "score"])
    assert err.value.row == row
    assert ("row 1" in str(err.value)) == (row == 1)
    assert "missing required column 'score'" in str(err.value)


def test_header_row() -> None:
    from nlgeval.io import header_row

    assert [header_row(f) for f in ("a.csv", "a.TSV", "a.csv.gz", "a.jsonl", "a.parquet")] \
        == [1, 1, 1, None, None]
    assert header_row(None) is None


@pytest.mark.parametrize(("fmt", "row"), [("csv", 4), ("tsv", 4), ("jsonl", 3),
                                          ("parquet", 3)])
def test_bad_cell_names_its_record(tmp_path: Path, fmt: str, row: int) -> None:
    """The third record: line 4 of a CSV/TSV file (after the header), record 3 of JSONL and
    Parquet -- as documented, and unchanged."""
    table = read_table(_write(tmp_path, fmt, RECORDS), ["system", "item", "score"])
    with pytest.raises(InputError) as err:
        to_numeric(table, "score", file=f"ratings.{fmt}")
    assert (err.value.row, err.value.column) == (row, "score")


def test_parquet_column_named_twice_names_no_row(tmp_path: Path) -> None:
    path = tmp_path / "ratings.parquet"
    pq.write_table(pa.Table.from_arrays([pa.array(["A"]), pa.array(["1"])],
                                        names=["system", "system"]), path)
    with pytest.raises(InputError) as err:
        read_table(path, ["system"])
    assert err.value.row is None
    assert "names column 'system' 2 times" in str(err.value) and "row" not in str(err.value)


def test_parquet_column_in_another_case(tmp_path: Path) -> None:
    path = _write(tmp_path, "parquet", [{**r, "Score": r["score"]} for r in RECORDS])
    frame = pd.read_parquet(path).drop(columns="score")
    frame.to_parquet(path)
    with pytest.raises(InputError) as err:
        read_table(path, ["system", "item", "score"])
    assert str(err.value) == (f"{path}: missing required column 'score' (found: system, item, "
                              "Score); did you mean 'Score'? (column names are case-sensitive)")


def test_cli_line_for_a_parquet_file_without_a_column(tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str]
                                                      ) -> None:
    from nlgeval.cli import main

    path = _write(tmp_path, "parquet", [{"rater": "r1", "criterion": "fluency", "system": "A",
                                         "item": "1"}])
    with pytest.raises(SystemExit) as exc:
        main(["compare", str(path)])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: {path}: missing required column 'score'")
    assert "row" not in err and err.count("\n") == 1


def test_unreadable_parquet_is_one_line(tmp_path: Path) -> None:
    path = tmp_path / "scores.parquet"
    path.write_text("system,item,score\nA,1,4\n", encoding="utf-8")
    with pytest.raises(InputError) as err:
        read_table(path, ["system"])
    assert str(err.value).startswith(f"{path}: cannot read as Parquet: ")
    assert "\n" not in str(err.value)


@pytest.mark.parametrize(("fmt", "row"), [("csv", 1), ("parquet", None)])
def test_score_and_ratings_files_name_the_header_row_only_where_there_is_one(
        tmp_path: Path, fmt: str, row: int | None) -> None:
    from nlgeval.scores import ratings_corpus, read_scores

    no_metric = _write(tmp_path, fmt, [{"system": "A", "item": "1"}])
    with pytest.raises(InputError, match="no metric columns") as err:
        read_scores(no_metric)
    assert err.value.row == row
    no_score = _write(tmp_path, fmt, [{"system": "A", "item": "1", "criterion": "fluency"}])
    with pytest.raises(InputError, match="missing score") as err:
        ratings_corpus(no_score)
    assert err.value.row == row


@pytest.mark.parametrize(("fmt", "row"), [("csv", 1), ("parquet", None)])
def test_triangle_responses_without_an_answer_column(tmp_path: Path, fmt: str,
                                                     row: int | None) -> None:
    from nlgeval.triangle.analysis import responses_to_correct

    path = _write(tmp_path, fmt, [{"judge": "j1", "answer": "1"}])
    with pytest.raises(InputError, match="expected a 0/1 'correct' column") as err:
        responses_to_correct(read_table(path), file=path)
    assert err.value.row == row


@pytest.mark.parametrize(("fmt", "row"), [("csv", 1), ("parquet", None), ("jsonl", None)])
def test_items_pilot_without_a_criterion_column(tmp_path: Path, fmt: str,
                                                row: int | None) -> None:
    """``items plan --criterion`` on a pilot file without a criterion column: the header row
    of a CSV, no row of a Parquet/JSONL file (its row 1 is a rating)."""
    from nlgeval.items.plan import load_pilot

    path = _write(tmp_path, fmt, [{"rater": "r1", "score": "4"}, {"rater": "r2", "score": "5"}])
    with pytest.raises(InputError, match="no 'criterion' column") as err:
        load_pilot(path, criterion="fluency")
    assert err.value.row == row
