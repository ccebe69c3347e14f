"""The canonical data model and input validation (nlgeval.corpus, nlgeval.io)."""

from __future__ import annotations

import pandas as pd
import pytest

from nlgeval.corpus import Corpus, CorpusInfo, Criterion
from nlgeval.errors import InputError
from nlgeval.io import read_table

INFO = CorpusInfo("t", criteria=(Criterion("fluency", 1, 5),))


def _outputs() -> pd.DataFrame:
    return pd.DataFrame({"system": ["a", "b"], "item": ["1", "1"], "text": ["x y", "y z"]})


def _refs() -> pd.DataFrame:
    return pd.DataFrame({"item": ["1"], "ref_id": ["0"], "text": ["x y"]})


def test_valid_corpus_and_human_scores() -> None:
    ratings = pd.DataFrame(
        {"rater": ["r1", "r2"], "item": ["1", "1"], "system": ["a", "a"],
         "criterion": ["fluency"] * 2, "score": ["4", "2"]}
    )
    c = Corpus.build(INFO, _outputs(), _refs(), ratings)
    hs = c.human_scores()
    assert hs.loc[0, "score"] == pytest.approx(3.0)
    assert hs.loc[0, "n_raters"] == 2
    assert c.systems == ["a", "b"]


def test_out_of_scale_score_names_row_and_column() -> None:
    ratings = pd.DataFrame(
        {"rater": ["r"], "item": ["1"], "system": ["a"], "criterion": ["fluency"], "score": ["7"]}
    )
    with pytest.raises(InputError, match=r"row 2, column 'score'.*outside the scale"):
        Corpus.build(INFO, _outputs(), _refs(), ratings)


def test_duplicate_output_and_missing_reference() -> None:
    dup = pd.concat([_outputs(), _outputs().iloc[:1]])
    with pytest.raises(InputError, match="duplicate output"):
        Corpus.build(INFO, dup, _refs())
    orphan = pd.DataFrame({"system": ["a"], "item": ["2"], "text": ["q"]})
    with pytest.raises(InputError, match="has no reference"):
        Corpus.build(INFO, orphan, _refs())


def test_read_table_errors(tmp_path) -> None:
    p = tmp_path / "r.csv"
    p.write_text("rater,item,sytem,criterion,score\nr,1,a,fluency,3\n", encoding="utf-8")
    with pytest.raises(InputError, match="did you mean 'sytem'"):
        read_table(p, ["rater", "item", "system", "criterion", "score"])
    p.write_bytes(b"system,item,text\na,1,ok\nb,1,caf\xe9\n")
    with pytest.raises(InputError, match=r"row 3.*not valid UTF-8"):
        read_table(p, ["system", "item", "text"])
    p.write_text('system,item,text\na,1,"multi\nline"\nb,1,x,extra\n', encoding="utf-8")
    with pytest.raises(InputError, match=r"row 4.*4 fields"):
        read_table(p, ["system", "item", "text"])


def test_read_table_refuses_duplicate_column_names(tmp_path) -> None:
    """A repeated header name used to reach the validators as a two-column frame and fail
    deep in pandas; it is now an error naming the file, row 1 and the column."""
    from nlgeval.scores import read_scores

    f = tmp_path / "scores.csv"
    f.write_text("system,item,bleu,bleu\nA,1,0.5,0.6\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"row 1: the header names column 'bleu' 2 times"):
        read_table(f)
    with pytest.raises(InputError, match="column 'bleu' 2 times"):
        read_scores(f)
    tsv = tmp_path / "ok.tsv"
    tsv.write_text("system\titem\tbleu\nA\t1\t0.5\n", encoding="utf-8")
    assert list(read_table(tsv).columns) == ["system", "item", "bleu", "_row"]


def test_toy_corpus_and_split_build_steps_keep_their_errors() -> None:
    """Corpus.build in named steps: the same checks, in the same order, as before."""
    from nlgeval.corpus import toy_corpus

    c = toy_corpus()
    assert (c.systems, c.items) == (["A", "B"], ["1", "2"])
    info = CorpusInfo("t", criteria=(Criterion("q", 1, 5),))
    out = pd.DataFrame({"system": ["A"], "item": ["1"], "text": ["x"]})
    ref = pd.DataFrame({"item": ["2"], "ref_id": ["0"], "text": ["y"]})
    with pytest.raises(InputError, match="item '1' has no reference"):
        Corpus.build(info, out, ref)
    rat = pd.DataFrame({"rater": ["r"], "item": ["1"], "system": ["B"], "criterion": ["q"],
                        "score": [3]})
    ok_ref = pd.DataFrame({"item": ["1"], "ref_id": ["0"], "text": ["y"]})
    with pytest.raises(InputError, match="system 'B', item '1' has no matching output"):
        Corpus.build(info, out, ok_ref, rat)
    with pytest.raises(InputError, match="criterion 'z' has no declared scale"):
        Corpus.build(info, out, ok_ref, rat.assign(criterion="z", system="A"))
