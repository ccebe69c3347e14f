"""A score-file column named like a key is refused as a misspelt key only on evidence.

The rule before (a header within difflib ratio 0.75 of 'item' in a file without an item column
is a misspelt 'item') refused a metric called ``iter`` with float scores. Now a column is the
key when its name is the key's up to case, plural, id suffix and separators (``Item``,
``item_id``, ``segment``, ``Segment ID``), or when it is close by spelling and its values are
not scores: text, or integers that repeat across systems as item ids do.
"""

from __future__ import annotations

import difflib
import gzip
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from nlgeval.errors import InputError
from nlgeval.scores import read_scores, tidy_scores
from nlgeval.scores._columns import META_COLUMNS, misspelt_key
from tests._cli import run_cli

DEMO = Path(__file__).resolve().parents[1] / "corpora" / "demo"


def _write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    if name.endswith(".gz"):
        path.write_bytes(gzip.compress(text.encode("utf-8")))
    else:
        path.write_text(text, encoding="utf-8")
    return path


def _rows(frame: pd.DataFrame) -> list[tuple[str, str, str, float]]:
    return sorted((str(m), str(s), str(i), float(v)) for m, s, i, v in
                  frame[["metric", "system", "item", "score"]].itertuples(index=False))


def old_misspelt_key(cols: list[str]) -> tuple[str, str] | None:
    """The rule of commit c857e1f, verbatim: spelling alone."""
    wanted = [k for k, absent in (("item", "item" not in cols),
                                  ("score", "metric" in cols and "score" not in cols),
                                  ("metric", "score" in cols and "metric" not in cols)) if absent]
    others = [c for c in cols if c not in ("system", "item", "metric", "score", *META_COLUMNS)]
    for key in wanted:
        for c in others:
            low = c.strip().lower()
            if low == key or difflib.SequenceMatcher(None, key, low).ratio() >= 0.75:
                return key, c
    return None


# a metric whose name is close to 'item': floats, own integers per system, extreme magnitudes
METRIC_ITER = [
    ("system,iter,comet\nA,0.31,0.5\nB,0.52,0.7\n",
     [("comet", "A", "", 0.5), ("comet", "B", "", 0.7), ("iter", "A", "", 0.31),
      ("iter", "B", "", 0.52)]),
    ("system,iter,comet\nA,3,0.5\nB,5,0.7\n",
     [("comet", "A", "", 0.5), ("comet", "B", "", 0.7), ("iter", "A", "", 3.0),
      ("iter", "B", "", 5.0)]),
    ("system,Iter\nA,1e200\nB,1e200\n", [("Iter", "A", "", 1e200), ("Iter", "B", "", 1e200)]),
    ("system,iter\nA,1e-200\nB,1e-200\n", [("iter", "A", "", 1e-200),
                                           ("iter", "B", "", 1e-200)]),
    ("system,iter,comet\nA,,0.5\nB,NA,0.7\n",
     [("comet", "A", "", 0.5), ("comet", "B", "", 0.7), ("iter", "A", "", np.nan),
      ("iter", "B", "", np.nan)]),
    # a long file whose metric column holds numbers is a wide file of two metrics
    ("system,item,metrc,score\nA,1,0.2,0.5\n", [("metrc", "A", "1", 0.2),
                                                ("score", "A", "1", 0.5)]),
]


@pytest.mark.parametrize("name", ["scores.csv", "scores.csv.gz"])  # typed and checking reader
@pytest.mark.parametrize(("text", "expected"), METRIC_ITER)
def test_metric_named_like_item_is_a_metric(tmp_path: Path, name: str, text: str,
                                            expected: list[tuple[str, str, str, float]]) -> None:
    got = _rows(read_scores(_write(tmp_path, name, text)))
    assert [g[:3] for g in got] == [e[:3] for e in expected]
    np.testing.assert_array_equal([g[3] for g in got], [e[3] for e in expected])


def test_metric_named_like_item_from_python_frame() -> None:
    frame = pd.DataFrame({"system": ["A", "B"], "iter": [0.31, 0.52]})
    assert tidy_scores(frame)["metric"].tolist() == ["iter", "iter"]
    # pandas' nullable integers: a missing cell is missing, not an error
    frame = pd.DataFrame({"system": ["A", "B"], "iter": pd.array([3, None], dtype="Int64")})
    got = tidy_scores(frame)
    assert got["metric"].tolist() == ["iter", "iter"] and got["score"].isna().tolist() == [
        False, True]
    frame["itme"] = pd.array([1, 1], dtype="Int64")  # the same id under A and B
    with pytest.raises(InputError, match=r"column 'itme': no 'item' column: did you mean"):
        tidy_scores(frame.drop(columns="iter"))


# a key column by name (any values), or by spelling with values that are ids
KEY_COLUMNS = [
    ("system,Item,comet\nA,1,0.5\nB,1,0.7\n", "item", "Item"),
    ("system,itme,comet\nA,1,0.5\nB,1,0.7\n", "item", "itme"),   # the same integer id under A, B
    ("system,itme,comet\nA,1,0.5\nA,2,0.7\n", "item", "itme"),   # two rows of A
    ("system,itme,comet\nA,w1,0.5\nB,w2,0.7\n", "item", "itme"),  # text ids
    ("system,iter,comet\nA,w1,0.5\nB,w1,0.7\n", "item", "iter"),
    ("system,segment,comet\nA,0.5,0.5\nB,0.7,0.7\n", "item", "segment"),  # by name alone
    ("system,seg_id,comet\nA,1,0.5\nB,2,0.7\n", "item", "seg_id"),
    ("system,Segment ID,comet\nA,1,0.5\nB,2,0.7\n", "item", "Segment ID"),
    ("system,item_id,comet\nA,1,0.5\nB,2,0.7\n", "item", "item_id"),
    ("system,ITEMS,metric,score\nA,1,x,0.5\nA,2,x,0.7\n", "item", "ITEMS"),
    ("system,itme,metric,score\nA,1,x,0.5\nA,2,x,0.7\n", "item", "itme"),  # long: A and x twice
    ("system,item,metric,Scores\nA,1,x,0.5\n", "score", "Scores"),
    ("system,item,metric,scor\nA,1,x,0.5\n", "score", "scor"),
    ("system,item,metrc,score\nA,1,x,0.5\n", "metric", "metrc"),
    ("system,item,metric_name,score\nA,1,x,0.5\n", "metric", "metric_name"),
]


@pytest.mark.parametrize("name", ["scores.csv", "scores.csv.gz"])
@pytest.mark.parametrize(("text", "key", "column"), KEY_COLUMNS)
def test_misspelt_key_refused(tmp_path: Path, name: str, text: str, key: str,
                              column: str) -> None:
    path = _write(tmp_path, name, text)
    with pytest.raises(InputError) as err:
        read_scores(path)
    assert str(err.value).startswith(f"{path}, row 1, column '{column}': no '{key}' column: "
                                     f"did you mean '{key}'?")


def test_validate_reads_a_metric_called_iter(tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    scores = _write(tmp_path, "iter.csv", "system,iter\ntemplate,0.31\nneural,0.52\n"
                                          "baseline,0.47\n")
    out = tmp_path / "out"
    code, _, err = run_cli(["validate", str(DEMO), "--scores", str(scores), "--metrics", "none",
                            "--resamples", "0", "--permutations", "0", "--figures", "none",
                            "--quiet", "--out", str(out)], capsys)
    assert code == 0, err
    corr = pd.read_csv(out / "correlations.csv")
    assert set(corr["metric"]) == {"iter"} and set(corr["level"]) == {"system"}


_NAMES = ["item", "Item", "itme", "iter", "items", "iten", "comet", "bleu", "metric", "metrc",
          "score", "Score", "scor", "segment", "seg_id", "time"]


def _random_frame(rng: np.random.Generator) -> pd.DataFrame:
    n_sys, n_rows = int(rng.integers(1, 4)), int(rng.integers(1, 7))
    cols = list(dict.fromkeys(rng.choice(_NAMES, size=int(rng.integers(1, 4)))))
    frame = {"system": [f"S{k}" for k in rng.integers(0, n_sys, n_rows)]}
    for c in cols:
        kind = rng.integers(0, 5)
        if kind == 0:
            vals = [f"w{k}" for k in rng.integers(0, 3, n_rows)]
        elif kind == 1:
            vals = [str(k) for k in rng.integers(0, 3, n_rows)]
        elif kind == 2:
            vals = [repr(v) for v in rng.normal(size=n_rows)]
        elif kind == 3:
            vals = [rng.choice(["", "NA", "1e200", "-1e-200", "7"]) for _ in range(n_rows)]
        else:
            vals = [repr(float(v)) for v in rng.integers(0, 3, n_rows)]
        frame[c] = vals
    return pd.DataFrame(frame)


def test_randomised_new_rule_refuses_less_than_the_old_one() -> None:
    # the old rule is the reference: the new one refuses only what it refused or a key's own
    # name (segment, seg_id), and still refuses every lookalike whose values are text ids
    rng = np.random.default_rng(20261126)
    refused_both = kept_now = 0
    for _ in range(1000):
        frame = _random_frame(rng)
        cols = list(frame.columns)
        old, new = old_misspelt_key(cols), misspelt_key(frame, cols)
        if new is not None and old is None:
            assert new[1] in ("segment", "seg_id"), (cols, new)
        if old is not None and old[0] == "item" and frame[old[1]].str.startswith("w").any() \
                and not {"segment", "seg_id"} & set(cols):
            assert new is not None and new[0] == "item", (frame, old, new)
        refused_both += old is not None and new is not None
        kept_now += old is not None and new is None
    assert refused_both > 200 and kept_now > 20  # both sides exercised
