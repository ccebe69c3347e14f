"""A lone UTF-16 surrogate in a JSONL file (the JSON escape ``\\ud800`` without its pair, which
Python's json accepts) is refused in one line naming the file, row and column, instead of a
pyarrow traceback; every other JSONL file reads as before (the reader of 3e72fac is kept below
as the reference)."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from _cli import run_cli

from nlgeval.errors import InputError
from nlgeval.io import read_table
from nlgeval.io.text import ROW, read_text_utf8


def _old_read_jsonl(path: Path) -> pd.DataFrame:
    """nlgeval.io._formats._read_jsonl as of 3e72fac (before the surrogate check)."""
    records, rows = [], []
    for i, line in enumerate(read_text_utf8(path).splitlines(), start=1):
        if not line.strip():
            continue
        rec = json.loads(line)
        records.append({k: "" if v is None else str(v) for k, v in rec.items()})
        rows.append(i)
    df = pd.DataFrame.from_records(records)
    df[ROW] = rows
    return df


def _write(tmp_path: Path, lines: list[str], name: str = "outputs.jsonl") -> Path:
    path = tmp_path / name
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.mark.parametrize(("escape", "code"), [("\\ud800", "D800"), ("\\uDBFF", "DBFF"),
                                              ("\\udc00", "DC00"), ("\\uDFFF", "DFFF")])
def test_lone_surrogate_is_refused_naming_row_and_column(tmp_path, escape, code):
    path = _write(tmp_path, ['{"system": "A", "item": "1", "text": "fine"}', "",
                             '{"system": "B", "item": "1", "text": "ab' + escape + 'c"}'])
    with pytest.raises(InputError) as err:
        read_table(path, ["system", "item", "text"])
    assert (err.value.file, err.value.row, err.value.column) == (path, 3, "text")
    assert err.value.message.startswith(
        f"not valid Unicode: a lone surrogate U+{code} at character 3 ")
    str(err.value).encode("utf-8")  # the message itself can be printed


def test_surrogate_in_a_field_name_or_name_column(tmp_path):
    path = _write(tmp_path, ['{"system": "A", "item": "1", "te\\ud800xt": "x"}'])
    with pytest.raises(InputError) as err:
        read_table(path)
    assert (err.value.row, err.value.column) == (1, None)
    assert err.value.message.startswith("a field name is not valid Unicode: a lone surrogate")
    gz = tmp_path / "refs.jsonl.gz"
    gz.write_bytes(gzip.compress(b'{"item": "\\udfff", "ref_id": "0", "text": "x"}\n'))
    with pytest.raises(InputError) as err:
        read_table(gz)
    assert (err.value.file, err.value.row, err.value.column) == (gz, 1, "item")


def test_pairs_and_escaped_backslashes_are_kept(tmp_path):
    """A surrogate pair is one character (as Python's json reads it); ``\\\\ud800`` is a
    backslash followed by text; a high surrogate followed by a low one is a pair."""
    path = _write(tmp_path, ['{"text": "smile \\ud83d\\ude00", "n": 1}',
                             '{"text": "\\\\ud800 is an escape", "n": null}',
                             '{"text": "\\uD83D\\uDE00\\u00e9", "n": 2.5}'])
    df = read_table(path, ["text"])
    assert df["text"].tolist() == ["smile \U0001F600", "\\ud800 is an escape", "\U0001F600\u00e9"]
    assert df["n"].tolist() == ["1", "", "2.5"]
    pd.testing.assert_frame_equal(df, _old_read_jsonl(path))


def test_lone_surrogate_helper():
    from nlgeval.io.text import lone_surrogate

    assert lone_surrogate("") is None
    assert lone_surrogate("\U0001F600") is None
    assert lone_surrogate("x\udc80y") == "not valid Unicode: a lone surrogate U+DC80 at character 2"


_PIECES = ["a", " ", "\u00e9", "\\\\", "\\\"", "\\u00e9", "\\ud83d\\ude00", "\U0001F600",
           "\\\\ud800", "0", "\\n", "\\t", "\u4e2d", "\\u0000", "\\/"]


def test_random_jsonl_reads_as_before(tmp_path):
    """Random JSONL files without lone surrogates (texts with escapes, pairs, emoji, numbers,
    nulls, nested values, blank lines) read exactly as the reader of 3e72fac read them."""
    rng = np.random.default_rng(20261126)
    for trial in range(40):
        lines = []
        for _ in range(int(rng.integers(1, 30))):
            if rng.random() < 0.1:
                lines.append("")
                continue
            text = "".join(rng.choice(_PIECES, size=int(rng.integers(0, 12))))
            number = [None, 1, -0.0, 1e200, 1e-200, 3.5, True, [1, "x"], {"a": None}][
                int(rng.integers(0, 9))]
            lines.append(f'{{"system": "S{rng.integers(0, 3)}", "text": "{text}", '
                         f'"v": {json.dumps(number)}}}')
        if not any(lines):
            lines.append('{"system": "S0", "text": "", "v": 0}')
        path = _write(tmp_path, lines, f"t{trial}.jsonl")
        pd.testing.assert_frame_equal(read_table(path), _old_read_jsonl(path))


def _corpus(tmp_path: Path, text: str) -> Path:
    folder = tmp_path / "corpus"
    folder.mkdir()
    _write(folder, [f'{{"system": "A", "item": "1", "text": "{text}"}}',
                    '{"system": "B", "item": "1", "text": "the cat sat on the mat"}'])
    ref = "the cat sat on the mat \\ud83d\\ude00"
    _write(folder, [f'{{"item": "1", "ref_id": "0", "text": "{ref}"}}'], "references.jsonl")
    return folder


def test_score_refuses_a_lone_surrogate_in_one_line(tmp_path, capsys):
    folder = _corpus(tmp_path, "the cat \\ud800 sat")
    code, out, err = run_cli(["score", str(folder), "--metrics", "bleu", "--no-cache",
                              "--quiet"], capsys)
    assert code == 2
    assert out == ""
    assert len(err.strip().splitlines()) == 1
    assert "outputs.jsonl, row 1, column 'text': not valid Unicode: a lone surrogate U+D800 " \
           "at character 9" in err
    assert "Traceback" not in err


def test_score_reads_a_surrogate_pair(tmp_path, capsys):
    """A pair is a real character: the corpus scores as sacrebleu scores the decoded texts."""
    import sacrebleu

    folder = _corpus(tmp_path, "the \\ud83d\\ude00 cat sat on the mat")
    code, out, err = run_cli(["score", str(folder), "--metrics", "bleu", "--no-cache",
                              "--quiet", "--json"], capsys)
    assert code == 0, err
    got = {r["system"]: r["score"] for r in json.loads(out)["corpus_scores"]}
    refs = [["the cat sat on the mat \U0001F600"]]
    want = {"A": sacrebleu.corpus_bleu(["the \U0001F600 cat sat on the mat"], refs).score,
            "B": sacrebleu.corpus_bleu(["the cat sat on the mat"], refs).score}
    assert 0 < want["A"] < 100 and 0 < want["B"] < 100
    assert got == pytest.approx(want, rel=1e-12)


@pytest.mark.parametrize(("meta", "key", "code"), [
    ('{"name": "bad \\ud800 name"}', "name", "D800"),
    ('{"criteria": [{"name": "fluency", "min": 1, "max": 5}, {"name": "x\\udfff"}]}',
     "criteria[2].name", "DFFF"),
    ('{"criteria": {"flu\\udbffency": {"min": 1, "max": 5}}}', "criteria", "DBFF"),
])
def test_corpus_json_with_a_lone_surrogate_is_refused(tmp_path, capsys, meta, key, code):
    """A user corpus's ``corpus.json`` is JSON too: its name was printed with a
    UnicodeEncodeError traceback, a criterion's name reached the tables."""
    folder = _corpus(tmp_path, "the cat sat")
    (folder / "corpus.json").write_text(meta, encoding="utf-8")
    code_, out, err = run_cli(["score", str(folder), "--metrics", "bleu", "--no-cache",
                               "--quiet"], capsys)
    assert (code_, out) == (2, "")
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert f"corpus.json, key '{key}': " in err and f"lone surrogate U+{code} " in err


def test_corpus_json_with_a_surrogate_pair_loads(tmp_path):
    from nlgeval.corpora.user import load_user_corpus

    folder = _corpus(tmp_path, "the cat sat")
    (folder / "corpus.json").write_text('{"name": "cats \\ud83d\\ude00"}', encoding="utf-8")
    assert load_user_corpus(folder).info.name == "cats \U0001F600"
