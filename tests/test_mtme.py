"""MTME directory layout (google-research/mt-metrics-eval): reader, writer, round trips.

The reference for the reader is MTME's README ("File organization and naming convention") and
its ``data.py`` (``EvalSet._ReadDataset``, ``ReadScoreFile``, ``ParseMetricName``,
``GetCorrelations``): the hand-written fixture below is typed out as that specification
describes, and every expected value is written out literally in the test.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from nlgeval.corpora.mtme import (
    NO_TRANSLATION,
    MTMEData,
    parse_mtme_spec,
    read_mtme,
    write_mtme,
)
from nlgeval.corpus import Corpus, CorpusInfo, Criterion
from nlgeval.errors import InputError
from nlgeval.scores import check_scores

# ------------------------------------------------------------------------------ helpers


def _write(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(text.encode("utf-8"))
    return root


def hand_written_layout(root: Path, *, with_none_in_metric: bool = True) -> Path:
    """A tiny en-de test set typed out as MTME's README specifies it.

    3 segments in 2 documents; references refA and refB, both also copied into
    system-outputs/ (README: "the reference files should be copied into the system-outputs
    directory with matching names"); systems sys1 and sys2 (sys2 has no translation for
    segment 3). Fields are separated by tabs in some files and spaces in others ("Blanks
    designate any amount of whitespace").
    """
    chrf_sys2_2 = "None" if with_none_in_metric else "0.5"
    return _write(root, {
        "sources/en-de.txt": "Hello world.\nHow are you?\nGood bye.\n",
        "documents/en-de.docs": "news doc1\nnews doc1\nspeech doc2\n",
        "references/en-de.refA.txt": "Hallo Welt.\nWie geht es dir?\nAuf Wiedersehen.\n",
        "references/en-de.refB.txt": "Hallo, Welt.\nWie geht's?\nTschüss.\n",
        "system-outputs/en-de/refA.txt": "Hallo Welt.\nWie geht es dir?\nAuf Wiedersehen.\n",
        "system-outputs/en-de/refB.txt": "Hallo, Welt.\nWie geht's?\nTschüss.\n",
        "system-outputs/en-de/sys1.txt": "Hallo Welt\nWie bist du?   \nGute Tschüss.\n",
        "system-outputs/en-de/sys2.txt": f"Hallo Erde.\nWie geht es?\n{NO_TRANSLATION}\n",
        # seg: a block per system, one line per segment, None = missing
        "human-scores/en-de.mqm.seg.score": (
            "sys1\t-1.0\nsys1\t-5.0\nsys1\tNone\n"
            "sys2\t0\nsys2\t-0.1\nsys2\tNone\n"
            "refB\t-2\nrefB\t0\nrefB\t-1.5\n"
            "refA\t0\nrefA\t0\nrefA\t-1\n"),
        "human-scores/en-de.mqm.sys.score": "sys1 -3.0\nsys2 -0.05\nrefB -1.25\nrefA -0.5\n",
        "human-scores/en-de.wmt-z.sys.score": "sys1 0.1\nsys2 -0.2\n",
        # a system-level-only metric with the standard reference
        "metric-scores/en-de/BLEU-refA.sys.score": "sys1\t30.5\nsys2\t12.25\nrefB\t40\n",
        # segment level, reference refA; MTME forbids None here, we read it as missing
        "metric-scores/en-de/chrF-refA.seg.score": (
            "sys1 0.25\nsys1 0.5\nsys1 1e-3\n"
            f"sys2 0.125\nsys2 {chrf_sys2_2}\nsys2 0.75\n"
            "refB 0.9\nrefB 0.8\nrefB 0.7\n"),
        # computed with refB: not usable when refA is the reference
        "metric-scores/en-de/COMET-refB.seg.score": (
            "sys1 0.1\nsys1 0.2\nsys1 0.3\nsys2 0.4\nsys2 0.5\nsys2 0.6\n"
            "refA 0.7\nrefA 0.8\nrefA 0.9\n"),
        # reference-free (src): usable whatever the reference; scores refA too
        "metric-scores/en-de/CometKiwi-src.seg.score": (
            "sys1 -0.5\nsys1 -0.25\nsys1 0\nsys2 1\nsys2 2\nsys2 3\n"
            "refB 4\nrefB 5\nrefB 6\nrefA 7\nrefA 8\nrefA 9\n"),
        # all references (= refA.refB here): not usable with refA alone
        "metric-scores/en-de/BLEU-all.sys.score": "sys1 31\nsys2 13\n",
        # document level: listed, not loaded
        "metric-scores/en-de/chrF-refA.doc.score": (
            "sys1 0.4\nsys1 0.75\nsys2 0.1\nsys2 0.5\nrefB 0.9\nrefB 0.8\n"),
    })


def synthetic_corpus() -> Corpus:
    """3 systems x 6 items in 2 documents, item ids that are not line numbers, two criteria,
    two raters on some outputs, an empty output and a missing rating."""
    systems = ["sysA", "sysB", "Online-C.1557"]
    items = ["t1-1", "t1-2", "t1-3", "t2-1", "t2-2", "t2-3"]
    rows = []
    for s in systems:
        for k, it in enumerate(items):
            text = f"{s} übersetzt Satz {k} „mit Anführungszeichen“"
            if (s, it) == ("sysB", "t1-3"):
                text = ""
            rows.append((s, it, text, f"source sentence {k} with \"quotes\"", it[:2]))
    outputs = pd.DataFrame(rows, columns=["system", "item", "text", "source", "doc"])
    refs = pd.DataFrame({"item": items, "ref_id": "refA",
                         "text": [f"Referenz {k}" for k in range(6)]})
    rng = np.random.default_rng(7)
    rat = []
    for s in systems:
        for it in items:
            if (s, it) == ("sysA", "t2-2"):
                continue  # not rated
            rat.append(("r1", it, s, "mqm", -float(rng.integers(0, 10))))
            rat.append(("r1", it, s, "fluency", float(rng.integers(1, 7))))
    rat.append(("r2", "t1-1", "sysA", "mqm", -3.0))  # a second rater on one output
    ratings = pd.DataFrame(rat, columns=["rater", "item", "system", "criterion", "score"])
    info = CorpusInfo("synthetic", criteria=(Criterion("mqm", -25, 0),
                                             Criterion("fluency", 1, 6)))
    return Corpus.build(info, outputs, refs, ratings, empty_outputs="keep")


def _sorted(df: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    return df.sort_values(keys, kind="stable").reset_index(drop=True)


# ------------------------------------------------------------------------------ reader vs spec


def test_reads_hand_written_layout_as_mtme_specifies(tmp_path: Path) -> None:
    folder = hand_written_layout(tmp_path / "wmt99")
    d = read_mtme(folder, "en-de")
    c = d.corpus
    assert isinstance(d, MTMEData)
    # refA is the reference (MTME's usual standard reference) and not a system; refB, the
    # other human translation, stays a system (MTME tasks.Task default human=True)
    assert d.reference == "refA"
    assert c.systems == ["refB", "sys1", "sys2"]
    assert d.human_systems == ("refB",)
    assert list(c.references["ref_id"].unique()) == ["refA"]
    assert list(c.references["text"]) == ["Hallo Welt.", "Wie geht es dir?", "Auf Wiedersehen."]
    # items = 1-based segment numbers; trailing whitespace stripped (MTME rstrips lines);
    # the "[No translation supplied]" line is no output
    out = c.outputs.set_index(["system", "item"])["text"]
    assert out[("sys1", "2")] == "Wie bist du?"
    assert ("sys2", "3") not in out.index
    assert len(c.outputs) == 3 * 3 - 1
    assert list(c.outputs.loc[c.outputs["system"] == "sys1", "source"]) == [
        "Hello world.", "How are you?", "Good bye."]
    assert list(d.documents["doc"]) == ["doc1", "doc1", "doc2"]
    assert list(d.documents["domain"]) == ["news", "news", "speech"]
    # human seg scores -> ratings, None left out, refA's scores left out (it is the reference)
    got = _sorted(c.ratings[["system", "item", "criterion", "score", "rater"]],
                  ["system", "item"])
    expected = pd.DataFrame({
        "system": ["refB", "refB", "refB", "sys1", "sys1", "sys2", "sys2"],
        "item": ["1", "2", "3", "1", "2", "1", "2"],
        "criterion": "mqm",
        "score": [-2.0, 0.0, -1.5, -1.0, -5.0, 0.0, -0.1],
        "rater": "aggregate"})
    pd.testing.assert_frame_equal(got, expected)
    assert c.info.criterion("mqm").min == -5.0 and c.info.criterion("mqm").max == 0.0
    hs = d.human_system_scores.set_index("system")["score"]
    assert hs.to_dict() == {"sys1": -3.0, "sys2": -0.05, "refB": -1.25}
    # metric scores: refA- and src-variants only; seg -> scores, sys -> system_scores
    assert sorted(d.scores["metric"].unique()) == ["CometKiwi-src", "chrF-refA"]
    assert list(d.system_scores["metric"].unique()) == ["BLEU-refA"]
    sysm = d.system_scores.set_index("system")["score"].to_dict()
    assert sysm == {"sys1": 30.5, "sys2": 12.25, "refB": 40.0}
    chrf = d.scores[d.scores["metric"] == "chrF-refA"].set_index(["system", "item"])["score"]
    assert chrf[("sys1", "3")] == 0.001 and chrf[("sys2", "1")] == 0.125
    assert math.isnan(chrf[("sys2", "2")])  # None -> NaN, kept and counted
    assert ("sys2", "3") not in chrf.index  # sys2 has no output for segment 3
    kiwi = d.scores[d.scores["metric"] == "CometKiwi-src"]
    assert sorted(kiwi["system"].unique()) == ["refB", "sys1", "sys2"]  # refA's rows dropped
    assert kiwi.set_index(["system", "item"])["score"][("refB", "3")] == 6.0
    assert d.higher_is_better == {"BLEU-refA": True, "CometKiwi-src": True, "chrF-refA": True}
    notes = " | ".join(d.notes)
    assert "1 metric score(s) None/nan" in notes
    assert "2 metric score(s) of outputs marked '[No translation supplied]' left out" in notes
    assert "1 human score(s) of outputs marked" not in notes  # sys2's was None anyway
    assert "2 metric file(s) computed with another reference" in notes
    assert "1 doc/domain-level metric file(s) not loaded" in notes
    assert "other human scores not loaded: wmt-z" in notes
    assert "human translation(s) refB kept as systems" in notes
    json.dumps(d.to_dict())


def test_external_scores_fit_nlgeval_scores(tmp_path: Path) -> None:
    d = read_mtme(hand_written_layout(tmp_path / "wmt99"), "en-de")
    ext = d.external_scores()
    assert list(ext.columns) == ["metric", "system", "item", "score", "_source", "_row"]
    bleu = ext[ext["metric"] == "BLEU-refA"]
    assert set(bleu["item"]) == {""}  # system level
    # _row is the line in the MTME file: sys2's second chrF line is line 5
    row = ext[(ext["metric"] == "chrF-refA") & (ext["system"] == "sys2") & (ext["item"] == "2")]
    assert int(row["_row"].iloc[0]) == 5 and row["_source"].iloc[0].endswith(
        "chrF-refA.seg.score")
    chk = check_scores(ext, d.corpus.outputs, d.corpus.rated_outputs(), min_coverage=0.0)
    assert chk.system_only == ("BLEU-refA",)


def test_other_reference_and_human_system_choices(tmp_path: Path) -> None:
    folder = hand_written_layout(tmp_path / "wmt99")
    d = read_mtme(folder, "en-de", reference="refB")
    assert d.corpus.systems == ["refA", "sys1", "sys2"]
    assert sorted(d.scores["metric"].unique()) == ["COMET-refB", "CometKiwi-src"]
    assert d.system_scores.empty
    comet = d.scores[d.scores["metric"] == "COMET-refB"].set_index(["system", "item"])["score"]
    assert comet[("refA", "1")] == 0.7
    no_h = read_mtme(folder, "en-de", include_human_systems=False)
    assert no_h.corpus.systems == ["sys1", "sys2"]
    assert "refB" not in set(no_h.scores["system"]) | set(no_h.system_scores["system"])
    ex = read_mtme(folder, "en-de", exclude_systems=["sys2"], human=None)
    assert ex.corpus.systems == ["refB", "sys1"] and ex.corpus.ratings.empty
    lower = read_mtme(folder, "en-de", lower_is_better=["chrF-refA"])
    assert lower.higher_is_better["chrF-refA"] is False
    with pytest.raises(InputError, match="unknown reference 'refC'"):
        read_mtme(folder, "en-de", reference="refC")
    upper = read_mtme(folder, "en-de", human="MQM")  # only a case difference: found
    assert upper.corpus.criteria == ["mqm"]
    with pytest.raises(InputError, match="no human scores 'da-sqm'.*mqm .seg/sys.*wmt-z .sys."):
        read_mtme(folder, "en-de", human="da-sqm")


def test_standard_reference_from_meta_info(tmp_path: Path) -> None:
    # MTME meta_info: wmt21.tedtalks zh-en uses refB; with refA and refB present, refB wins
    root = tmp_path / "wmt21.tedtalks"
    _write(root, {"sources/zh-en.txt": "a\nb\n", "references/zh-en.refA.txt": "x\ny\n",
                  "references/zh-en.refB.txt": "u\nv\n", "system-outputs/zh-en/s.txt": "p\nq\n"})
    d = read_mtme(root, "zh-en", human=None)
    assert d.reference == "refB"
    assert list(d.corpus.references["text"]) == ["u", "v"]
    # an unknown test set with two references and neither refA/ref/posteditA: must choose
    other = tmp_path / "mine"
    _write(other, {"sources/en-fr.txt": "a\n", "references/en-fr.x.txt": "x\n",
                   "references/en-fr.y.txt": "y\n", "system-outputs/en-fr/s.txt": "p\n"})
    with pytest.raises(InputError, match="choose one with reference="):
        read_mtme(other, "en-fr", human=None)
    assert read_mtme(other, "en-fr", human=None, reference="y").reference == "y"


def test_universal_newlines_and_jsonl(tmp_path: Path) -> None:
    # MTME opens text files in text mode: \r\n and \r end lines too
    root = _write(tmp_path / "t", {
        "sources/en-de.jsonl": '{"source": "a b"}\n{"source": "c"}\n',
        "references/en-de.refA.txt": "x\r\ny\r\n",
        "system-outputs/en-de/s1.txt": "p  \rq\r",
        "system-outputs/en-de/s2.jsonl": '{"hypothesis": "h1 "}\n{"hypothesis": null}\n',
    })
    d = read_mtme(root, "en-de", human=None)
    out = d.corpus.outputs.set_index(["system", "item"])["text"]
    assert out[("s1", "1")] == "p" and out[("s1", "2")] == "q"
    assert out[("s2", "1")] == "h1 "  # JSONL fields are not stripped (as in MTME)
    assert ("s2", "2") not in out.index
    assert list(d.sources["text"]) == ["a b", "c"]
    assert list(d.corpus.references["text"]) == ["x", "y"]


# ------------------------------------------------------------------------------ reader errors


@pytest.mark.parametrize(
    ("rel", "text", "message", "row", "column"),
    [
        ("system-outputs/en-de/sys1.txt", "a\nb\n", "has only 2 lines but the source", 2, None),
        ("system-outputs/en-de/sys1.txt", "a\nb\nc\nd\n", "line 4 is one too many", 4, None),
        ("references/en-de.refB.txt", "a\n", "has only 1 lines", 1, None),
        ("documents/en-de.docs", "news d1\nnews d2\nnews d1\n", "not a contiguous", 3, None),
        ("human-scores/en-de.mqm.seg.score", "sys1 1\nsys1 2\nsys1 x\n", "'x' is not a number",
         3, "score"),
        ("human-scores/en-de.mqm.seg.score", "sys1 1\nsys1 2\nsys1 3\nsys1 4\n",
         "more than 3 segment score", 4, "system"),
        ("human-scores/en-de.mqm.seg.score", "sys1 1\nsys2 2\nsys2 3\nsys2 4\n",
         "'sys1' has only 1 segment scores", 1, "system"),
        ("human-scores/en-de.mqm.seg.score", "sys1 1\n\nsys1 2\n", "an empty line", 2, None),
        ("metric-scores/en-de/chrF-refA.seg.score", "sys1 1\nsys1 inf\n", "infinite", 2,
         "score"),
        ("metric-scores/en-de/chrF-refA.seg.score", "sys1 1\nnobody 1\n", "unknown system",
         2, "system"),
        ("metric-scores/en-de/BLEU-refA.sys.score", "sys1 1\nsys1 2\n", "more than 1 score", 2,
         "system"),
        ("metric-scores/en-de/BLEU-refA.sys.score", "sys1 1 2\n", "3 fields", 1, None),
    ],
)
def test_reader_errors_name_file_and_line(tmp_path: Path, rel: str, text: str, message: str,
                                          row: int, column: str | None) -> None:
    folder = hand_written_layout(tmp_path / "wmt99")
    (folder / rel).write_text(text, encoding="utf-8")
    with pytest.raises(InputError, match=message) as err:
        read_mtme(folder, "en-de")
    assert Path(str(err.value.file)).name == Path(rel).name
    assert err.value.row == row
    assert err.value.column == column


def test_reader_errors_missing_things(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="test-set folder not found"):
        read_mtme(tmp_path / "nope", "en-de")
    folder = hand_written_layout(tmp_path / "wmt99")
    with pytest.raises(InputError, match=r"no source file for de-en \(language pairs here: "
                                         "en-de\\)"):
        read_mtme(folder, "de-en")
    bad = folder / "metric-scores/en-de/chrF.seg.score"
    bad.write_text("sys1 1\n", encoding="utf-8")
    with pytest.raises(InputError, match="NAME-REF.LEVEL.score") as err:
        read_mtme(folder, "en-de")
    assert err.value.file == bad
    bad.unlink()
    (folder / "references/en-de.ref-C.txt").write_text("a\nb\nc\n", encoding="utf-8")
    with pytest.raises(InputError, match="invalid reference name 'ref-C'"):
        read_mtme(folder, "en-de")
    (folder / "references/en-de.ref-C.txt").unlink()
    for p in (folder / "system-outputs/en-de").iterdir():
        p.unlink()
    with pytest.raises(InputError, match="holds no output files"):
        read_mtme(folder, "en-de")
    with pytest.raises(InputError, match="exclude_systems names unknown"):
        read_mtme(hand_written_layout(tmp_path / "w2"), "en-de", exclude_systems=["zz"])


# ------------------------------------------------------------------------------ round trips


def test_round_trip_synthetic(tmp_path: Path) -> None:
    corpus = synthetic_corpus()
    folder = tmp_path / "mine"
    seg = corpus.outputs[["system", "item"]].assign(
        metric="chrf", score=np.linspace(0.0, 1.0, len(corpus.outputs)))
    seg.loc[3, "score"] = np.nan  # a missing metric score
    sysl = pd.DataFrame({"system": corpus.systems, "item": "", "metric": "corpusBLEU",
                         "score": [10.5, 20.25, 1 / 3]})
    written = write_mtme(corpus, folder, "en-de", scores=pd.concat([seg, sysl]))
    assert "item-ids/en-de.txt" in written.files
    assert any("written as None" in n for n in written.notes)
    # two metric-score files added by hand, as a user dropping MTME files in would do:
    # items in corpus order t1-1 .. t2-3 are lines 1..6
    items = corpus.items
    kiwi = {s: [0.5 * k + j for k in range(6)] for j, s in enumerate(corpus.systems)}
    (folder / "metric-scores/en-de/Kiwi-src.seg.score").write_text(
        "".join(f"{s}\t{v}\n" for s in corpus.systems for v in kiwi[s]), encoding="utf-8")
    (folder / "metric-scores/en-de/LLMrank-refA.sys.score").write_text(
        "sysA 3\nsysB 1\nOnline-C.1557 2\n", encoding="utf-8")

    d = read_mtme(folder, "en-de", human=["mqm", "fluency"])
    cols = ["system", "item", "text", "source"]
    pd.testing.assert_frame_equal(_sorted(d.corpus.outputs[cols], ["system", "item"]),
                                  _sorted(corpus.outputs[cols], ["system", "item"]),
                                  check_dtype=False)
    pd.testing.assert_frame_equal(_sorted(d.corpus.references, ["item"]),
                                  _sorted(corpus.references, ["item"]))
    # ratings: the mean over raters of each output; sysA/t1-1 had r1 and r2 (-3)
    mean = corpus.human_scores()
    r1 = corpus.ratings[(corpus.ratings["rater"] == "r1") & (corpus.ratings["system"] == "sysA")
                        & (corpus.ratings["item"] == "t1-1")
                        & (corpus.ratings["criterion"] == "mqm")]["score"].iloc[0]
    assert mean.set_index(["system", "item", "criterion"])["score"][
        ("sysA", "t1-1", "mqm")] == (r1 + -3.0) / 2
    got = d.corpus.ratings[["system", "item", "criterion", "score"]]
    pd.testing.assert_frame_equal(_sorted(got, ["criterion", "system", "item"]),
                                  _sorted(mean[["system", "item", "criterion", "score"]],
                                          ["criterion", "system", "item"]))
    # human system scores: mean of the system's segment scores
    for (s, crit), g in mean.groupby(["system", "criterion"]):
        hs = d.human_system_scores
        v = hs[(hs["system"] == s) & (hs["criterion"] == crit)]["score"].iloc[0]
        assert v == pytest.approx(g["score"].sum() / len(g), abs=1e-12)
    # metric scores: names get the reference suffix; values exact (NaN stays NaN)
    back = d.scores[d.scores["metric"] == "chrf-refA"]
    merged = seg.merge(back, on=["system", "item"], suffixes=("", "_back"))
    assert len(merged) == len(seg)
    np.testing.assert_array_equal(merged["score"], merged["score_back"])
    kb = d.scores[d.scores["metric"] == "Kiwi-src"].set_index(["system", "item"])["score"]
    for s in corpus.systems:
        assert [kb[(s, it)] for it in items] == kiwi[s]
    sb = d.system_scores.set_index(["metric", "system"])["score"]
    assert sb[("corpusBLEU-refA", "Online-C.1557")] == 1 / 3
    assert sb[("LLMrank-refA", "sysB")] == 1.0
    assert list(d.documents["doc"]) == ["t1", "t1", "t1", "t2", "t2", "t2"]
    assert list(d.documents["item"]) == items


def test_writer_regroups_documents_and_orders_items(tmp_path: Path) -> None:
    corpus = synthetic_corpus()
    order = ["t2-1", "t1-1", "t2-2", "t1-2", "t2-3", "t1-3"]
    w = write_mtme(corpus, tmp_path / "x", "en-de", item_order=order)
    # documents must be contiguous: stable regrouping by first appearance of the document
    ids = (tmp_path / "x/item-ids/en-de.txt").read_text(encoding="utf-8").split()
    assert ids == ["t2-1", "t2-2", "t2-3", "t1-1", "t1-2", "t1-3"]
    assert any("regrouped" in n for n in w.notes)
    src = (tmp_path / "x/sources/en-de.txt").read_text(encoding="utf-8").splitlines()
    assert src[0] == 'source sentence 3 with "quotes"'
    d = read_mtme(tmp_path / "x", "en-de")
    assert d.corpus.items == ["t2-1", "t2-2", "t2-3", "t1-1", "t1-2", "t1-3"]
    # without document information, the given order is kept as is
    w2 = write_mtme(corpus, tmp_path / "y", "en-de", item_order=order,
                    documents=pd.DataFrame({"item": order, "doc": "one", "domain": "d"}))
    assert not any("regrouped" in n for n in w2.notes)
    ids2 = (tmp_path / "y/item-ids/en-de.txt").read_text(encoding="utf-8").split()
    assert ids2 == order


def test_writer_lower_is_better_is_negated(tmp_path: Path) -> None:
    info = CorpusInfo("e", criteria=(Criterion("errors", 0, 10, higher_is_better=False),))
    outputs = pd.DataFrame({"system": ["a", "a"], "item": ["1", "2"], "text": ["x", "y"]})
    refs = pd.DataFrame({"item": ["1", "2"], "ref_id": "r", "text": ["x", "z"]})
    rat = pd.DataFrame({"rater": "h", "item": ["1", "2"], "system": "a",
                        "criterion": "errors", "score": [2.0, 0.0]})
    corpus = Corpus.build(info, outputs, refs, rat)
    sc = pd.DataFrame({"system": "a", "item": ["1", "2"], "metric": "TER", "score": [0.5, 0.0]})
    write_mtme(corpus, tmp_path / "t", "xx-yy", scores=sc, lower_is_better=["TER"])
    assert (tmp_path / "t/human-scores/xx-yy.errors.seg.score").read_text() == "a\t-2.0\na\t-0.0\n"
    assert (tmp_path / "t/human-scores/xx-yy.errors.sys.score").read_text() == "a\t-1.0\n"
    assert (tmp_path / "t/metric-scores/xx-yy/TER-r.seg.score").read_text() == "a\t-0.5\na\t-0.0\n"
    assert not (tmp_path / "t/item-ids").exists()  # items are 1..N: no id file needed


def test_writer_errors_and_overwrite(tmp_path: Path) -> None:
    corpus = synthetic_corpus()
    bad_text = Corpus.build(corpus.info, corpus.outputs.assign(
        text=corpus.outputs["text"].where(corpus.outputs.index != 0, "two\nlines")),
        corpus.references, corpus.ratings, empty_outputs="keep")
    with pytest.raises(InputError, match="contains a line break"):
        write_mtme(bad_text, tmp_path / "a", "en-de")
    assert not (tmp_path / "a").exists()  # nothing half-written
    spaced = Corpus.build(corpus.info, corpus.outputs.assign(
        system=corpus.outputs["system"].replace("sysA", "sys A")), corpus.references,
        corpus.ratings.assign(system=corpus.ratings["system"].replace("sysA", "sys A")),
        empty_outputs="keep")
    with pytest.raises(InputError, match="system name 'sys A'"):
        write_mtme(spaced, tmp_path / "b", "en-de")
    with pytest.raises(InputError, match="reference name .*'ref-1'"):
        write_mtme(corpus, tmp_path / "c", "en-de", reference_names={"refA": "ref-1"})
    with pytest.raises(InputError, match="not a ref_id"):
        write_mtme(corpus, tmp_path / "c", "en-de", reference="refZ",
                   scores=pd.DataFrame({"system": ["sysA"], "item": ["t1-1"], "metric": ["m"],
                                        "score": [1.0]}))
    with pytest.raises(InputError, match="scores name item"):
        write_mtme(corpus, tmp_path / "c", "en-de",
                   scores=pd.DataFrame({"system": ["sysA"], "item": ["zz"], "metric": ["m"],
                                        "score": [1.0]}))
    with pytest.raises(InputError, match="would both be written as 'm-refA'"):
        write_mtme(corpus, tmp_path / "c", "en-de",
                   scores=pd.DataFrame({"system": "sysA", "item": ["t1-1", "t1-1"],
                                        "metric": ["m", "m-refA"], "score": [1.0, 2.0]}))
    assert not (tmp_path / "c").exists()
    write_mtme(corpus, tmp_path / "d", "en-de",
               scores=pd.DataFrame({"system": ["sysA"], "item": ["t1-1"], "metric": ["old"],
                                    "score": [1.0]}))
    # only systems with scores get a block; the others are absent (missing), not None
    assert (tmp_path / "d/metric-scores/en-de/old-refA.seg.score").read_text() == (
        "sysA\t1.0\n" + "sysA\tNone\n" * 5)
    # reference given by its corpus name is renamed like the reference file
    write_mtme(corpus, tmp_path / "e", "en-de", reference_names={"refA": "R"}, reference="refA",
               scores=pd.DataFrame({"system": ["sysA"], "item": [""], "metric": ["m"],
                                    "score": [2.5]}))
    assert (tmp_path / "e/references/en-de.R.txt").exists()
    assert (tmp_path / "e/metric-scores/en-de/m-R.sys.score").read_text() == "sysA\t2.5\n"
    with pytest.raises(InputError, match="overwrite=True"):
        write_mtme(corpus, tmp_path / "d", "en-de")
    sub = corpus.subset(systems=["sysA", "sysB"])
    write_mtme(sub, tmp_path / "d", "en-de", overwrite=True)
    assert sorted(p.name for p in (tmp_path / "d/system-outputs/en-de").iterdir()) == [
        "sysA.txt", "sysB.txt"]
    assert not list((tmp_path / "d/metric-scores/en-de").iterdir())  # stale file removed
    assert read_mtme(tmp_path / "d", "en-de").corpus.systems == ["sysA", "sysB"]


def test_parse_mtme_spec() -> None:
    assert parse_mtme_spec("mtme:data/wmt23") == Path("data/wmt23")
    assert parse_mtme_spec("MTME:data/wmt23") == Path("data/wmt23")
    assert parse_mtme_spec("mtme:~/wmt23") == Path("~/wmt23").expanduser()
    assert parse_mtme_spec("webnlg2020") is None
    assert parse_mtme_spec("data/mtme:x") is None
    with pytest.raises(InputError, match="needs the path"):
        parse_mtme_spec("mtme:")


# ------------------------------------------------------------------------------ real TED data


@pytest.mark.parametrize(("name", "lp"), [("wmt21-ted-ende", "en-de"),
                                          ("wmt21-ted-zhen", "zh-en")])
def test_round_trip_ted(tmp_path: Path, data_dir: Path, name: str, lp: str) -> None:
    pytest.importorskip("nlgeval.corpora.wmt21_ted")
    from nlgeval.corpora import load_corpus

    full = load_corpus(name, data_dir)
    humans = [s for s in full.systems if s.startswith("ref")]
    systems = full.systems[:3] + humans
    corpus = full.subset(systems=systems, items=full.items[:20])
    crits = ["MQM", "MQM-Accuracy"]
    folder = tmp_path / "wmt21.tedtalks"
    names = {"A": "refA", "B": "refB"}
    write_mtme(corpus, folder, lp, human_criterion=crits, reference_names=names)
    mtme_ref = names[corpus.references["ref_id"].iloc[0]]
    # a couple of metric files by hand: a segment-level one and a system-level one
    items = list(dict.fromkeys(corpus.outputs["item"]))
    seg_vals = {s: [round(0.01 * (k + 1) * (j + 1), 6) for k in range(20)]
                for j, s in enumerate(systems)}
    (folder / f"metric-scores/{lp}").mkdir(parents=True)
    (folder / f"metric-scores/{lp}/toy-{mtme_ref}.seg.score").write_text(
        "".join(f"{s}\t{v}\n" for s in systems for v in seg_vals[s]), encoding="utf-8")
    (folder / f"metric-scores/{lp}/corpus-src.sys.score").write_text(
        "".join(f"{s} {j}.5\n" for j, s in enumerate(systems)), encoding="utf-8")

    d = read_mtme(folder, lp, human=crits)
    assert d.reference == mtme_ref
    assert d.corpus.systems == sorted(systems)
    cols = ["system", "item", "text", "source"]
    pd.testing.assert_frame_equal(_sorted(d.corpus.outputs[cols], ["system", "item"]),
                                  _sorted(corpus.outputs[cols], ["system", "item"]),
                                  check_dtype=False)
    pd.testing.assert_frame_equal(
        _sorted(d.corpus.references, ["item"]),
        _sorted(corpus.references.assign(ref_id=corpus.references["ref_id"].map(names)),
                ["item"]))
    mean = corpus.human_scores(criteria=crits)[["system", "item", "criterion", "score"]]
    pd.testing.assert_frame_equal(
        _sorted(d.corpus.ratings[["system", "item", "criterion", "score"]],
                ["criterion", "system", "item"]),
        _sorted(mean, ["criterion", "system", "item"]))
    assert list(d.documents["doc"]) == list(
        corpus.outputs.drop_duplicates("item").set_index("item")["doc"].loc[items])
    toy = d.scores.set_index(["system", "item"])["score"]
    for s in systems:
        assert [toy[(s, it)] for it in items] == seg_vals[s]
    assert d.system_scores.set_index("system")["score"].to_dict() == {
        s: j + 0.5 for j, s in enumerate(systems)}
    # a human translation that is a system but not a reference of the corpus (zh-en: refA)
    # is written as a system only, so MTME (and the reader) see an ordinary system
    assert d.human_systems == ()
