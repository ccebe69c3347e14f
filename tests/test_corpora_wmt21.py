"""WMT21 TED MQM loaders (``wmt21-ted-ende``, ``wmt21-ted-zhen``) on the real files and on small
files built here.

References: the repository's own per-segment averages (``mqm_ted_LP.avg_seg_scores.tsv``, parsed
here with the standard library), the error file re-read here with :mod:`csv` and summed in plain
Python, counts from the corpus SOURCE.md, and hand arithmetic written out in the tests.
"""

from __future__ import annotations

import csv
import functools
import inspect
import json
import re
from collections import defaultdict
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from nlgeval.cli import app
from nlgeval.corpora import REGISTRY, list_corpora, load_corpus
from nlgeval.corpora import wmt21_ted as W
from nlgeval.corpora.descriptor import descriptor
from nlgeval.corpora.store import ChecksumError, cache_folder, url_for, verify
from nlgeval.corpus import Corpus
from nlgeval.errors import InputError

NAMES = {"ende": "wmt21-ted-ende", "zhen": "wmt21-ted-zhen"}
LPS = {"ende": "en-de", "zhen": "zh-en"}
FOLDER = "wmt21_ted_mqm"
HUMAN = {"ref": "refA", "refB": "refB"}


@pytest.fixture(autouse=True)
def _private_cache(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("NLGEVAL_CACHE", str(tmp_path / "nlgeval-cache"))


@functools.cache
def _fresh(data_dir: Path, code: str, **options: object) -> Corpus:
    return W.load(data_dir / FOLDER, lp=LPS[code], **options)  # type: ignore[arg-type]


def _file_rows(data_dir: Path, code: str) -> list[dict[str, str]]:
    """The error file read independently: csv module, quoting disabled, file row numbers."""
    path = data_dir / FOLDER / code / f"mqm_ted_{code}.tsv"
    with open(path, encoding="utf-8", newline="") as fh:
        rows = list(csv.DictReader(fh, delimiter="\t", quoting=csv.QUOTE_NONE))
    for k, r in enumerate(rows, start=2):
        r["file_row"] = str(k)
    return rows


def _published(data_dir: Path, code: str) -> tuple[dict[tuple[str, str], float], set]:
    """The repository's averaged scores, parsed with str.split (header by spaces, data by tabs
    and a space); ``None`` = not rated."""
    path = data_dir / FOLDER / code / f"mqm_ted_{code}.avg_seg_scores.tsv"
    lines = path.read_text(encoding="utf-8").splitlines()
    assert lines[0] == "system mqm_avg_score seg_id"
    rated: dict[tuple[str, str], float] = {}
    unrated: set[tuple[str, str]] = set()
    for line in lines[1:]:
        system, score, seg = line.split()
        system = {"ref-A": "refA", "ref-B": "refB"}.get(system, system)
        if score == "None":
            unrated.add((system, seg))
        else:
            rated[(system, seg)] = float(score)
    return rated, unrated


def _scores(corpus: Corpus, criterion: str = "MQM") -> dict[tuple[str, str], float]:
    r = corpus.ratings[corpus.ratings["criterion"] == criterion]
    return {(s, i): float(v) for s, i, v in zip(r["system"], r["item"], r["score"], strict=True)}


# ---------------------------------------------------------------- the core check
@pytest.mark.parametrize("code", ["ende", "zhen"])
def test_mqm_equals_repository_averages_exactly(data_dir: Path, code: str) -> None:
    """Every (system, segment): our MQM from the error rows == the repository's average.

    With human_systems="all" every rated output, human translations included, is in the corpus.
    """
    corpus = _fresh(data_dir, code, human_systems="all")
    hs = corpus.human_scores(criteria=["MQM"])
    ours = {(s, i): v for s, i, v in zip(hs["system"], hs["item"], hs["score"], strict=True)}
    rated, unrated = _published(data_dir, code)
    assert len(rated) == {"ende": 14 * 529, "zhen": 15 * 529}[code]
    assert set(ours) == set(rated)  # nothing missing, nothing extra
    assert not set(ours) & unrated  # "None" rows are not rated and absent here
    worst = max(abs(ours[k] - rated[k]) for k in rated)
    assert worst <= 1e-9, worst
    assert (hs["n_raters"] == 1).all()  # SOURCE.md: one rater per rated (system, segment)
    # the module's own reader of the averaged file agrees with the independent parse
    pub = W.read_published_scores(data_dir / FOLDER, LPS[code])
    got = pub.dropna(subset=["score"])
    assert dict(zip(zip(got["system"], got["item"], strict=True), got["score"], strict=True)) \
        == rated
    assert set(zip(pub.loc[pub["score"].isna(), "system"], pub.loc[pub["score"].isna(), "item"],
                   strict=True)) == unrated


@pytest.mark.parametrize("code", ["ende", "zhen"])
def test_default_corpus_ratings_are_the_published_scores(data_dir: Path, code: str) -> None:
    corpus = load_corpus(NAMES[code], data_dir, cache=False)
    assert "MQM" in corpus.criteria
    rated, _ = _published(data_dir, code)
    ours = _scores(corpus)
    systems = set(corpus.systems)
    assert set(ours) == {k for k in rated if k[0] in systems}
    assert max(abs(v - rated[k]) for k, v in ours.items()) <= 1e-9
    # every output in the corpus is rated (it carries its MQM ratings)
    assert len(corpus.rated_outputs()) == len(corpus.outputs)


@pytest.mark.parametrize("code", ["ende", "zhen"])
def test_breakdowns_equal_plain_python_sums(data_dir: Path, code: str) -> None:
    """Per-category criteria re-derived row by row from the csv-read file; they sum to MQM."""
    groups = {"accuracy": "MQM-Accuracy", "fluency": "MQM-Fluency",
              "terminology": "MQM-Terminology", "style": "MQM-Style",
              "locale convention": "MQM-Locale"}
    expected: dict[str, dict[tuple[str, str], float]] = defaultdict(lambda: defaultdict(float))
    judged = set()
    for r in _file_rows(data_dir, code):
        key = (HUMAN.get(r["system"], r["system"]), r["seg_id"])
        judged.add(key)
        sev, cat = r["severity"], r["category"]
        if sev == "No-error":
            continue
        w = {"Major": 5.0, "Minor": 1.0, "Neutral": 0.0}[sev]
        if sev == "Minor" and cat == "Fluency/Punctuation":
            w = 0.1
        expected[groups.get(cat.split("/")[0].lower(), "MQM-Other")][key] -= w
    corpus = _fresh(data_dir, code, human_systems="all")
    present = [c for c in corpus.criteria if c != "MQM"]
    assert set(present) == {c for c, v in expected.items() if any(x != 0 for x in v.values())}
    for crit in present:
        got = _scores(corpus, crit)
        assert set(got) == judged
        assert max(abs(got[k] - expected[crit].get(k, 0.0)) for k in judged) <= 1e-9, crit
    total = _scores(corpus)
    parts = [_scores(corpus, c) for c in present]
    assert max(abs(total[k] - sum(p[k] for p in parts)) for k in judged) <= 1e-9
    if code == "ende":
        assert "MQM-Locale" not in present  # no Locale errors in en-de: left out, with a note
        assert any("MQM-Locale" in n for n in corpus.notes)


# ---------------------------------------------------------------- counts and texts
def test_counts_ende(data_dir: Path) -> None:
    everything = _fresh(data_dir, "ende", human_systems="all")  # SOURCE.md: 14 x 529
    assert len(everything.systems) == 14 and len(everything.items) == 529
    assert len(everything.outputs) == 14 * 529 and "refA" in everything.systems
    default = load_corpus("wmt21-ted-ende", data_dir, cache=False)
    assert len(default.systems) == 13 and "refA" not in default.systems  # refA is the reference
    assert len(default.outputs) == 13 * 529
    assert set(default.references["ref_id"]) == {"A"} and len(default.references) == 529
    assert default.ratings["rater"].nunique() == 4
    assert sorted(set(default.ratings["criterion"])) == sorted(
        ["MQM", "MQM-Accuracy", "MQM-Fluency", "MQM-Terminology", "MQM-Style", "MQM-Other"])
    assert any("refA" in n and "not kept" in n for n in default.notes)


def test_counts_and_human_systems_zhen(data_dir: Path) -> None:
    default = load_corpus("wmt21-ted-zhen", data_dir, cache=False)
    # MTME's convention: refB is the standard reference; refA is evaluated as a system
    assert len(default.systems) == 14 and "refA" in default.systems
    assert "refB" not in default.systems and len(default.items) == 529
    assert set(default.references["ref_id"]) == {"B"}
    assert any("reference(s): B (refB)" in n and "refA" in n for n in default.notes)
    none = _fresh(data_dir, "zhen", human_systems="none")
    assert len(none.systems) == 13 and not {"refA", "refB"} & set(none.systems)
    both = _fresh(data_dir, "zhen", reference="both")
    assert len(both.systems) == 13  # both human translations are references now
    assert both.references.groupby("item").size().eq(2).all()
    a = _fresh(data_dir, "zhen", reference="A")
    assert "refB" in a.systems and "refA" not in a.systems
    assert set(a.references["ref_id"]) == {"A"}
    # the texts: reference A of item i == system refA's output for i in the "B" corpus
    ref_a = a.references.set_index("item")["text"]
    out_a = default.outputs[default.outputs["system"] == "refA"].set_index("item")["text"]
    pd.testing.assert_series_equal(ref_a.sort_index(), out_a.sort_index(), check_names=False)


def test_options_are_checked(data_dir: Path) -> None:
    with pytest.raises(InputError, match="no human translation B"):
        W.load(data_dir / FOLDER, lp="en-de", reference="B")
    with pytest.raises(InputError, match="human_systems"):
        W.load(data_dir / FOLDER, lp="en-de", human_systems="yes")  # type: ignore[arg-type]
    with pytest.raises(InputError, match="language pair"):
        W.load(data_dir / FOLDER, lp="de-en")
    with pytest.raises(InputError, match="en-de corpus"):
        load_corpus("wmt21-ted-ende", data_dir, cache=False, lp="zh-en")


@pytest.mark.parametrize("code", ["ende", "zhen"])
def test_texts_are_the_file_targets_without_span_markup(data_dir: Path, code: str) -> None:
    corpus = _fresh(data_dir, code, human_systems="all")
    plain = defaultdict(set)
    sources = defaultdict(set)
    for r in _file_rows(data_dir, code):
        plain[(HUMAN.get(r["system"], r["system"]), r["seg_id"])].add(
            re.sub(r"</?v>", "", r["target"]))
        sources[r["seg_id"]].add(re.sub(r"</?v>", "", r["source"]))
    assert all(len(v) == 1 for v in plain.values())  # all rows of an output agree
    out = corpus.outputs
    got = dict(zip(zip(out["system"], out["item"], strict=True), out["text"], strict=True))
    assert got == {k: next(iter(v)) for k, v in plain.items()}
    src = dict(zip(out["item"], out["source"], strict=True))
    assert src == {k: next(iter(v)) for k, v in sources.items()}
    for frame, col in ((out, "text"), (out, "source"), (corpus.references, "text")):
        assert not frame[col].str.contains("<v>|</v>", regex=True).any()
    # the markup was there to remove (an output with an error span, and a source span)
    assert any("<v>" in r["target"] for r in _file_rows(data_dir, code))
    assert any("<v>" in r["source"] for r in _file_rows(data_dir, code))


# ---------------------------------------------------------------- weights
def test_weights_on_real_rows_by_hand(data_dir: Path) -> None:
    rows = _file_rows(data_dir, "zhen")

    def errors_of(system: str, seg: str) -> list[tuple[str, str]]:
        return [(r["category"], r["severity"]) for r in rows
                if r["system"] == system and r["seg_id"] == seg]

    # zh-en refA (file name "ref"), segment 110: the premise of the arithmetic below
    assert errors_of("ref", "110") == [
        ("Accuracy/Mistranslation", "Major"), ("Fluency/Grammar", "Minor"),
        ("Terminology/Inappropriate for context", "Major"), ("Fluency/Punctuation", "Minor"),
        ("Fluency/Punctuation", "Minor"),
    ]
    # MiSS, segment 91: a Source error among Minor grammar errors
    assert errors_of("MiSS", "91") == [
        ("Source error", "Minor"), *[("Fluency/Grammar", "Minor")] * 3
    ]

    default = _scores(_fresh(data_dir, "zhen"))
    assert default[("refA", "110")] == pytest.approx(-(5 + 1 + 5 + 0.1 + 0.1), abs=1e-12)  # -11.2
    assert default[("MiSS", "91")] == pytest.approx(-(1 + 1 + 1 + 1), abs=1e-12)  # -4

    heavy = W.MQMWeights(major=10, minor_punctuation=0.5, source_error=0.0)
    c = _fresh(data_dir, "zhen", weights=heavy)
    s = _scores(c)
    assert s[("refA", "110")] == pytest.approx(-(10 + 1 + 10 + 0.5 + 0.5), abs=1e-12)  # -22
    assert s[("MiSS", "91")] == pytest.approx(-(0 + 1 + 1 + 1), abs=1e-12)  # -3
    # zh-en's only MQM-Other errors are the 38 Source errors: weighing 0, the criterion would
    # be constant 0, so it is left out (with a note)
    assert "MQM-Other" not in c.criteria and "MQM-Other" in _fresh(data_dir, "zhen").criteria
    assert any("left out: MQM-Other" in n for n in c.notes)
    assert _scores(c, "MQM-Fluency")[("refA", "110")] == pytest.approx(-2.0, abs=1e-12)
    # the same weights as a dict give the same corpus
    d = W.load(data_dir / FOLDER, lp="zh-en",
               weights={"major": 10, "minor_punctuation": 0.5, "source_error": 0.0})
    assert _scores(d) == s
    # a wider scale for heavier weights: 5 Major errors x 10
    assert c.info.criterion("MQM").min == -50 and any("widened" in n for n in c.notes)


def _synthetic_folder(root: Path) -> Path:
    """A tiny en-de error file: quotes, spans, every weighting rule, two raters on one output."""
    head = "system\tdoc\tdoc_id\tseg_id\trater\tsource\ttarget\tcategory\tseverity\tcomment"
    src1 = 'He said "hello.'  # an unbalanced quote: read with quoting disabled
    rows = [
        ("sysX", "1", "r1", src1, 'Er sagte "<v>hallo</v>.', "Accuracy/Mistranslation", "Major"),
        ("sysX", "1", "r1", src1, 'Er sagte "hallo<v>.</v>', "Fluency/Punctuation", "Minor"),
        ("sysX", "1", "r1", src1, '<v>Er</v> sagte "hallo.', "Fluency/Punctuation", "Major"),
        ("sysX", "1", "r1", src1, 'Er <v>sagte</v> "hallo.', "Style/Awkward", "Minor"),
        ("sysX", "2", "r1", "Two.", "<v>Zzz qqq</v>", "Non-translation!", "Major"),
        ("sysX", "3", "r2", "Three.", "Drei.", "No-error", "No-error"),
        ("sysX", "4", "r2", "<v>Fuor</v>.", "Vier.", "Source error", "Major"),
        ("sysX", "4", "r2", "Fuor.", "<v>Vier</v>.", "Terminology/Inconsistent", "Neutral"),
        ("sysX", "4", "r3", "Fuor.", "Vier.", "Fluency/Spelling", "minor"),  # 2nd rater
        ("ref", "1", "r2", src1, 'Er sagte: "Hallo."', "No-error", "No-error"),
        ("ref", "2", "r2", "Two.", "Zwei.", "No-error", "No-error"),
        ("ref", "3", "r2", "Three.", "Drei.", "No-error", "No-error"),
        ("ref", "4", "r2", "Fuor.", "<v>Vier</v>", "Locale convention/Number format", "Minor"),
    ]
    lines = [head] + [
        f"{sy}\ttalk.1\t{seg}\t{seg}\t{ra}\t{so}\t{ta}\t{ca}\t{se}\t" for
        sy, seg, ra, so, ta, ca, se in rows
    ]
    folder = root / FOLDER
    (folder / "ende").mkdir(parents=True)
    (folder / "ende" / "mqm_ted_ende.tsv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return folder


def test_weights_on_a_small_file_by_hand(tmp_path_factory: pytest.TempPathFactory) -> None:
    folder = _synthetic_folder(tmp_path_factory.mktemp("synthetic"))
    c = W.load(folder, lp="en-de", human_systems="all")
    s = _scores(c)
    # segment 1: Major 5 + Minor punctuation 0.1 + Major punctuation 5 + Minor 1
    assert s[("sysX", "1")] == pytest.approx(-11.1, abs=1e-12)
    assert s[("sysX", "2")] == -25.0  # Non-translation!
    assert s[("sysX", "3")] == 0.0 and str(s[("sysX", "3")]) == "0.0"  # not -0.0
    assert s[("refA", "4")] == -1.0
    r = c.ratings.set_index(["system", "item", "rater", "criterion"])["score"]
    assert r[("sysX", "4", "r2", "MQM")] == -5.0  # Source error by severity + Neutral 0
    assert r[("sysX", "4", "r3", "MQM")] == -1.0  # "minor" matched case-insensitively
    hs = c.human_scores(criteria=["MQM"]).set_index(["system", "item"])
    assert hs.loc[("sysX", "4"), "score"] == -3.0 and hs.loc[("sysX", "4"), "n_raters"] == 2
    assert r[("sysX", "1", "r1", "MQM-Fluency")] == pytest.approx(-5.1, abs=1e-12)
    assert r[("sysX", "1", "r1", "MQM-Accuracy")] == -5.0
    assert r[("sysX", "1", "r1", "MQM-Style")] == -1.0
    assert r[("sysX", "2", "r1", "MQM-Other")] == -25.0
    assert r[("sysX", "4", "r2", "MQM-Other")] == -5.0
    # the only Terminology error is Neutral (weight 0): MQM-Terminology would be constant
    assert "MQM-Terminology" not in c.criteria
    n = c.ratings.set_index(["system", "item", "rater", "criterion"])
    assert n.loc[("sysX", "4", "r2", "MQM"), ["n_major", "n_neutral"]].tolist() == [1, 1]
    assert n.loc[("sysX", "1", "r1", "MQM"), ["n_major", "n_minor"]].tolist() == [2, 2]
    assert r[("refA", "4", "r2", "MQM-Locale")] == -1.0

    custom = W.MQMWeights(major=10, minor=2, neutral=0.5, minor_punctuation=0.5,
                          non_translation=50, source_error=0.0)
    s2 = _scores(W.load(folder, lp="en-de", human_systems="all", weights=custom))
    assert s2[("sysX", "1")] == pytest.approx(-(10 + 0.5 + 10 + 2), abs=1e-12)
    assert s2[("sysX", "2")] == -50.0
    assert s2[("sysX", "3")] == 0.0
    # the output's score is the mean over its two raters: r2 (0 + 0.5), r3 (2)
    hs2 = W.load(folder, lp="en-de", weights=custom).human_scores(criteria=["MQM"])
    assert hs2.set_index(["system", "item"]).loc[("sysX", "4"), "score"] == -1.25

    # texts: markup gone, quotes kept as they are
    out = c.outputs.set_index(["system", "item"])["text"]
    assert out[("sysX", "1")] == 'Er sagte "hallo.'
    assert c.outputs.set_index(["system", "item"])["source"][("sysX", "4")] == "Fuor."
    assert c.references.set_index("item")["text"]["1"] == 'Er sagte: "Hallo."'


def test_weights_are_validated() -> None:
    with pytest.raises(InputError, match="'major'"):
        W.MQMWeights(major=-1)
    with pytest.raises(InputError, match="finite"):
        W.MQMWeights(minor=float("nan"))
    with pytest.raises(InputError, match="unknown MQM weight"):
        W.MQMWeights.coerce({"majr": 5})
    assert W.MQMWeights.coerce({"major": 7}) == W.MQMWeights(major=7)
    assert W.MQMWeights().floor == -25 and W.MQMWeights(non_translation=40).floor == -40


# ---------------------------------------------------------------- bad files
def _write(folder: Path, lines: list[str]) -> Path:
    path = folder / "ende" / "mqm_ted_ende.tsv"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("row", "edit", "message", "column"),
    [
        (100, lambda f: f[:6] + [f[6] + "\textra"] + f[7:], "11 tab-separated fields", None),
        (7, lambda f: f[:8] + ["Majr"] + f[9:], "unknown severity 'Majr'", "severity"),
        (50, lambda f: f[:3] + ["x1"] + f[4:], "not a segment number", "seg_id"),
        (30, lambda f: f[:7] + ["No-error", "Major"] + f[9:], "No-error", "severity"),
        (12, lambda f: f[:4] + [""] + f[5:], "empty rater", "rater"),
    ],
)
def test_bad_file_names_file_and_row(
    data_dir: Path, tmp_path: Path, row: int, edit, message: str, column: str | None
) -> None:
    src = data_dir / FOLDER / "ende" / "mqm_ted_ende.tsv"
    lines = src.read_text(encoding="utf-8").split("\n")[:-1]
    lines[row - 1] = "\t".join(edit(lines[row - 1].split("\t")))
    path = _write(tmp_path / FOLDER, lines)
    with pytest.raises(InputError) as exc:
        W.load(tmp_path / FOLDER, lp="en-de")
    err = exc.value
    assert Path(err.file) == path and err.row == row and err.column == column
    assert message in err.message and f"row {row}" in str(err)


def test_inconsistent_translation_is_an_error(tmp_path: Path) -> None:
    folder = _synthetic_folder(tmp_path)
    path = folder / "ende" / "mqm_ted_ende.tsv"
    lines = path.read_text(encoding="utf-8").split("\n")
    lines[2] = lines[2].replace('Er sagte "hallo<v>.</v>', 'Er sagt "hallo<v>.</v>')
    path.write_text("\n".join(lines), encoding="utf-8")
    with pytest.raises(InputError) as exc:
        W.load(folder, lp="en-de")
    assert exc.value.row == 3 and exc.value.column == "target"
    assert "segment 1 of system 'sysX'" in exc.value.message


def test_missing_column_names_the_file(tmp_path: Path) -> None:
    path = _write(tmp_path, ["system\tdoc\tseg_id", "a\tb\t1"])
    with pytest.raises(InputError) as exc:
        W.load(tmp_path, lp="en-de")
    assert Path(exc.value.file) == path and "doc_id" in exc.value.message


# ---------------------------------------------------------------- registry, cache, CLI
def test_registered_and_listed(data_dir: Path) -> None:
    rows = {r["name"]: r for r in list_corpora(data_dir)}
    for name in NAMES.values():
        assert rows[name]["available_locally"]
        assert [c["name"] for c in rows[name]["criteria"]][0] == "MQM"
        assert rows[name]["licence"].startswith("Apache-2.0")
        assert "Freitag" in rows[name]["citation"] and "2021" in rows[name]["citation"]
        # the parsed cache keys on the module with the parsing code, not a thin wrapper
        assert inspect.getmodule(REGISTRY[name].loader) is W
    assert load_corpus("wmt21-ted-en-de", data_dir, cache=False).name == "wmt21-ted-ende"


def test_descriptor_files_and_checksums(data_dir: Path) -> None:
    sums = {}
    for line in (data_dir / "SHA256SUMS").read_text().splitlines():
        h, p = line.split(maxsplit=1)
        sums[p.strip()] = h
    covered = set()
    for code, name in NAMES.items():
        d = descriptor(name)
        assert d.folder == FOLDER
        for f in d.files:
            assert f.repository == "google/wmt-mqm-human-evaluation"
            assert f.commit == "7fadea281aff8db61cc72fc3d469a4dca78b82a6"
            assert f.source_path == f"ted/{f.path}" and f.path.startswith(f"{code}/")
            assert sums[f"{FOLDER}/{f.path}"] == f.sha256
            covered.add(f"{FOLDER}/{f.path}")
    assert covered == {k for k in sums if k.startswith(f"{FOLDER}/")}


def test_parsed_cache_returns_identical_corpus(data_dir: Path) -> None:
    fresh = load_corpus("wmt21-ted-zhen", data_dir, cache=False)
    first = load_corpus("wmt21-ted-zhen", data_dir)
    second = load_corpus("wmt21-ted-zhen", data_dir)  # from Parquet
    for c in (first, second):
        for attr in ("outputs", "references", "ratings"):
            pd.testing.assert_frame_equal(getattr(c, attr), getattr(fresh, attr))
        assert c.notes == fresh.notes and c.info == fresh.info
    other = load_corpus("wmt21-ted-zhen", data_dir, reference="both")  # options key the cache
    assert len(other.references) == 2 * 529


def test_cli_list_and_info(data_dir: Path) -> None:
    runner = CliRunner()
    res = runner.invoke(app, ["corpora", "list", "--json", "--data-dir", str(data_dir)])
    assert res.exit_code == 0, res.output
    names = {r["name"] for r in json.loads(res.stdout)}
    assert {"wmt21-ted-ende", "wmt21-ted-zhen"} <= names
    res = runner.invoke(app, ["corpora", "info", "wmt21-ted-ende", "--json",
                              "--data-dir", str(data_dir)])
    assert res.exit_code == 0, res.output
    s = json.loads(res.stdout)
    assert s["n_systems"] == 13 and s["n_items"] == 529 and s["n_outputs"] == 13 * 529
    assert s["rated_criteria"][0] == "MQM" and s["location"].endswith(FOLDER)
    assert s["sources"][0]["commit"] == "7fadea281aff8db61cc72fc3d469a4dca78b82a6"


# ---------------------------------------------------------------- download
def test_download_verify_and_load(download_env, publish, data_dir: Path) -> None:
    base, root, requests = download_env
    for name in NAMES.values():
        publish(root, data_dir, name, downloadable_only=False)
    downloaded = load_corpus("wmt21-ted-ende")  # no data_dir, no NLGEVAL_DATA: fetch
    d = descriptor("wmt21-ted-ende")
    assert sorted(requests) == sorted(url_for(f, "") for f in d.files)
    assert all(r["status"] == "ok" for r in verify(d, cache_folder(d)))
    local = load_corpus("wmt21-ted-ende", data_dir, cache=False)
    for attr in ("outputs", "references", "ratings"):
        pd.testing.assert_frame_equal(getattr(downloaded, attr), getattr(local, attr))
    n = len(requests)
    load_corpus("wmt21-ted-ende")  # cached: no new request
    assert len(requests) == n
    zh = load_corpus("wmt21-ted-zhen")  # same cache folder, the zh-en files are added
    assert len(zh.items) == 529 and len(requests) == n + len(descriptor("wmt21-ted-zhen").files)


def test_download_with_wrong_checksum_is_rejected(download_env, publish, data_dir: Path) -> None:
    base, root, requests = download_env
    publish(root, data_dir, "wmt21-ted-ende", downloadable_only=False)
    d = descriptor("wmt21-ted-ende")
    f = d.file("ende/mqm_ted_ende.tsv")
    served = root / f.repository / f.commit / f.source_path
    served.write_bytes(served.read_bytes().replace(b"\tMajor", b"\tMinor", 1))
    with pytest.raises(ChecksumError) as exc:
        load_corpus("wmt21-ted-ende")
    assert url_for(f) in str(exc.value) and f.sha256 in str(exc.value)
    assert not (cache_folder(d) / f.path).exists()
