"""An error about a user corpus's ``corpus.json``/``corpus.toml`` names the key at fault
("corpus.json, key 'criteria[1].min': ..."), not a column: these files have keys. The message
text is otherwise the one it was."""

from __future__ import annotations

from pathlib import Path

import pytest

from nlgeval.corpora.user import load_user_corpus
from nlgeval.errors import InputError


def _folder(tmp_path: Path, name: str, meta: str) -> Path:
    folder = tmp_path / "corpus"
    folder.mkdir()
    (folder / "outputs.csv").write_text("system,item,text\nA,1,a cat\nB,1,the cat\n",
                                        encoding="utf-8")
    (folder / "references.csv").write_text("item,ref_id,text\n1,0,the cat\n", encoding="utf-8")
    (folder / name).write_text(meta, encoding="utf-8")
    return folder


@pytest.mark.parametrize(("name", "meta", "key", "message"), [
    ("corpus.json", '{"criteria": 3}', "criteria", "'criteria' must be a list of objects"),
    ("corpus.json", '{"criteria": [{"min": 1}]}', "criteria[1]",
     "criteria[1] must be an object with a 'name'"),
    ("corpus.json", '{"criteria": [{"name": "q", "max": 5}]}', "criteria[1].min",
     "criteria[1] ('q') needs 'min' (the rating scale)"),
    ("corpus.toml", '[[criteria]]\nname = "q"\nmin = "1"\nmax = 5\n', "criteria[1].min",
     "criteria[1] ('q'): 'min' must be a number, got '1'"),
    ("corpus.toml", '[criteria.q]\nmin = 5\nmax = 1\n', "criteria[1]",
     "criteria[1] ('q'): min 5 must be below max 1"),
    ("corpus.json", '{"criteria": {"q": {"min": 1, "max": 5, "type": "odd"}}}',
     "criteria[1].type", "criteria[1] ('q'): type must be one of interval, ordinal, nominal, "
     "ratio, got 'odd'"),
    ("corpus.json", '{"empty_outputs": "drop"}', "empty_outputs",
     "empty_outputs must be 'error' or 'keep', got 'drop'"),
])
def test_metadata_errors_name_the_key(tmp_path, name, meta, key, message):
    folder = _folder(tmp_path, name, meta)
    with pytest.raises(InputError) as err:
        load_user_corpus(folder)
    assert (err.value.key, err.value.column, err.value.row) == (key, None, None)
    assert str(err.value) == f"{folder / name}, key '{key}': {message}"
