"""The published-corpus loaders on the real shared corpora.

Expected counts come from each corpus's SOURCE.md; every reshaping is re-derived here
independently with the standard library (csv/json), not with the loader's own code.
"""

from __future__ import annotations

import csv
import json
from collections import Counter, defaultdict
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from nlgeval.corpora import list_corpora, load_corpus
from nlgeval.corpora.descriptor import descriptor
from nlgeval.corpora.e2e import read_judgements
from nlgeval.corpora.novikova2017 import METRIC_COLUMNS, precomputed_metrics
from nlgeval.corpora.webnlg2020 import REFERENCE_SYSTEM, read_published_means
from nlgeval.corpus import Corpus


# The loaders are tested on fresh parses (cache=False); the parsed cache is tested separately.
@pytest.fixture(scope="module")
def webnlg(data_dir: Path) -> Corpus:
    return load_corpus("webnlg2020", data_dir, cache=False)


@pytest.fixture(scope="module")
def e2e(data_dir: Path) -> Corpus:
    return load_corpus("e2e", data_dir, cache=False)


@pytest.fixture(scope="module")
def novikova(data_dir: Path) -> Corpus:
    return load_corpus("novikova2017", data_dir, cache=False)


@pytest.fixture(autouse=True)
def _private_cache(monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory):
    monkeypatch.setenv("NLGEVAL_CACHE", str(tmp_path_factory.getbasetemp() / "nlgeval-cache"))


def test_list_corpora_names_and_criteria(data_dir: Path) -> None:
    rows = {r["name"]: r for r in list_corpora(data_dir)}
    assert set(rows) == {"webnlg2020", "e2e", "novikova2017", "wmt21-ted-ende", "wmt21-ted-zhen",
                         "realsumm"}
    crit = {n: [c["name"] for c in r["criteria"]] for n, r in rows.items()}
    assert crit["webnlg2020"] == [
        "Correctness", "DataCoverage", "Fluency", "Relevance", "TextStructure"
    ]
    assert crit["e2e"] == ["quality", "naturalness"]
    assert crit["novikova2017"] == ["informativeness", "naturalness", "quality"]
    assert all(r["available_locally"] for r in rows.values())
    assert all(r["description"] for r in rows.values())


def test_descriptor_checksums_match_shared_sha256sums(data_dir: Path) -> None:
    sums = {}
    for line in (data_dir / "SHA256SUMS").read_text().splitlines():
        h, p = line.split(maxsplit=1)
        sums[p.strip()] = h
    covered = set()
    for name in ("webnlg2020", "e2e", "novikova2017", "wmt21-ted-ende", "wmt21-ted-zhen",
                 "realsumm"):
        d = descriptor(name)
        for f in d.files:
            key = f"{d.folder}/{f.path}"
            assert sums[key] == f.sha256, key
            covered.add(key)
    assert covered == set(sums)  # every shared data file is pinned, none invented


# ---------------------------------------------------------------- WebNLG+ 2020
def test_webnlg_counts(webnlg: Corpus) -> None:
    r = webnlg.ratings
    rated = r[["system", "item"]].drop_duplicates()
    assert len(rated) == 3025
    assert rated["system"].nunique() == 17
    assert r["rater"].nunique() == 88
    assert len(webnlg.human_scores()) == 15125
    per_system = rated.groupby("system").size()
    assert per_system["Baseline-FORGE2020"] == 177
    assert (per_system.drop("Baseline-FORGE2020") == 178).all()
    raters_per_output = r.groupby(["system", "item"])["rater"].nunique().value_counts()
    # SOURCE.md: 3 raters for 2,448 outputs, 2 for 532, 1 for 45 (0 for the one unrated)
    assert raters_per_output.to_dict() == {3: 2448, 2: 532, 1: 45}
    assert webnlg.summary()["n_items"] == 1779
    assert len(webnlg.outputs) == 17 * 1779


def test_webnlg_means_equal_published_all_teams_file(webnlg: Corpus, data_dir: Path) -> None:
    """The organisers' per-output means equal the mean of the raw per-rater scores."""
    published = read_published_means(data_dir / "webnlg2020_en_humeval")
    assert len(published) == 15125
    mine = webnlg.human_scores()
    merged = published.merge(mine, on=["system", "item", "criterion"], validate="1:1")
    assert len(merged) == 15125
    np.testing.assert_allclose(merged["score_x"], merged["score_y"], rtol=0, atol=1e-9)


def test_webnlg_reference_means_match_organisers_notebook(webnlg: Corpus) -> None:
    """Per-rater means of the human reference, from the organisers' notebook.

    Provenance: WebNLG/challenge-2020, evaluation/human-evaluation/eval-scripts/en/english.ipynb
    (commit 28a72513596560bb9c41c4617beaf188b33440a3), the "Human Evaluation" cell output
    (pandas 1.2.3 groupby mean over per-rater records), rounded to 3 decimals there.
    """
    r = webnlg.ratings
    means = r[r["system"] == REFERENCE_SYSTEM].groupby("criterion")["score"].mean()
    expected = {"Correctness": 94.231, "DataCoverage": 95.470, "Fluency": 90.025,
                "Relevance": 94.509, "TextStructure": 92.213}
    for crit, value in expected.items():
        assert round(means[crit], 3) == pytest.approx(value, abs=5e-4)
    bt5 = r[r["system"] == "bt5"].groupby("criterion")["score"].mean()
    assert round(bt5["Correctness"], 3) == pytest.approx(93.595, abs=5e-4)
    assert round(bt5["Fluency"], 3) == pytest.approx(88.632, abs=5e-4)


def test_webnlg_sample_id_k_is_line_k(webnlg: Corpus, data_dir: Path) -> None:
    folder = data_dir / "webnlg2020_en_humeval"
    out = webnlg.outputs.set_index(["system", "item"])["text"]
    for team in ("NILC", "bt5", "Baseline-FORGE2017"):
        raw = (folder / "system_outputs" / team / "primary.en").read_bytes().decode("utf-8")
        lines = raw.split("\n")
        for k in (1, 789, 1124, 1779):
            assert out[(team, f"Id{k}")] == lines[k - 1].strip()
    empty = webnlg.outputs[webnlg.outputs["text"] == ""]
    assert set(empty["system"]) == {"Baseline-FORGE2017"} and len(empty) == 15
    assert any("15 empty" in n for n in webnlg.notes)


def test_webnlg_references_and_reference_system(webnlg: Corpus, data_dir: Path) -> None:
    import xml.etree.ElementTree as ET

    test_data = data_dir / "webnlg2020_en_humeval" / "test_data"
    xml = test_data / "rdf-to-text-generation-test-data-with-refs-en.xml"
    root = ET.parse(xml).getroot()
    lexes = {e.get("eid"): [x.text.strip() for x in e.iter("lex")] for e in root.iter("entry")}
    assert len(lexes) == 1779
    refs = webnlg.references.groupby("item", sort=False)["text"].agg(list)
    assert {len(v) for v in refs} <= {1, 2, 3, 4, 5}
    for eid in ("Id1", "Id2", "Id1779"):
        assert refs[eid] == lexes[eid]
    ref_out = webnlg.outputs[webnlg.outputs["system"] == REFERENCE_SYSTEM].set_index("item")
    assert ref_out.loc["Id2", "text"] == lexes["Id2"][0]
    rated = set((test_data / "humaneval_ids.txt").read_text().split())
    assert {i.removeprefix("Id") for i in webnlg.ratings["item"]} == rated
    comments = webnlg.ratings[webnlg.ratings["comment"] != ""]
    assert len(comments) == 365 * 5  # 365 judgements carry free-text feedback


# ---------------------------------------------------------------- E2E
def test_e2e_counts(e2e: Corpus, data_dir: Path) -> None:
    folder = data_dir / "e2e_nlg_challenge"
    nat = read_judgements(folder, "naturalness")
    qual = read_judgements(folder, "quality")
    assert nat["file_row"].nunique() == 4239 and len(nat) == 5 * 4239
    assert qual["file_row"].nunique() == 2979 and len(qual) == 5 * 2979
    assert nat["unit"].nunique() == qual["unit"].nunique() == 1413
    assert nat["rater"].nunique() == 107 and qual["rater"].nunique() == 112
    assert len(e2e.systems) == 21 and len(e2e.items) == 630
    assert len(e2e.outputs) == 21 * 630
    per_unit = qual.groupby("unit")["file_row"].nunique().value_counts().to_dict()
    assert per_unit == {3: 783, 1: 630}
    refs = e2e.references.groupby("item").size()
    assert refs.max() == 45 and len(e2e.references) == 4693


def test_e2e_output_quirks(e2e: Corpus, data_dir: Path) -> None:
    out = e2e.outputs
    for system in ("tnt1", "tnt2"):
        texts = out.loc[out["system"] == system, "text"]
        assert not texts.str.startswith("'").any() and not texts.str.endswith("'").any()
        raw = (data_dir / f"e2e_nlg_challenge/system_outputs_primary/{system}.tsv").read_text()
        assert raw.splitlines()[1].startswith("'")  # the quirk is really in the file
    harv = out[out["system"] == "harv"]
    assert len(harv) == 630 and harv["item"].nunique() == 630
    raw = (data_dir / "e2e_nlg_challenge/system_outputs_primary/harv.tsv").read_bytes()
    assert b"\r\r\n" in raw
    # first record of harv: MR 1
    assert harv.set_index("item").loc["mr001", "text"] == (
        "Blue Spice is a coffee shop located in the city centre."
    )
    # the texts shown to raters (refN) are exactly the system outputs
    assert not any("judged texts differ" in n for n in e2e.notes)


def _independent_e2e(path: Path, prefix: str) -> dict[tuple[str, str, str], float]:
    """Tidy ratings re-derived with csv.DictReader: drop screens with any score outside
    0-100, average a worker's repeated scores of the same output."""
    acc: dict[tuple[str, str, str], list[float]] = defaultdict(list)
    with open(path, newline="", encoding="utf-8") as fh:
        for row in csv.DictReader(fh):
            scores = [float(row[f"{prefix}{i}"]) for i in range(1, 6)]
            if any(s > 100 or s < 0 for s in scores):
                continue
            for i, s in enumerate(scores, start=1):
                key = (row["_worker_id"], f"mr{int(row['mr_id']):03d}", row[f"sys{i}"])
                acc[key].append(s)
    return {k: sum(v) / len(v) for k, v in acc.items()}


@pytest.mark.parametrize("criterion,prefix", [("quality", "quality"), ("naturalness", "natur")])
def test_e2e_ratings_equal_independent_reshaping(
    e2e: Corpus, data_dir: Path, criterion: str, prefix: str
) -> None:
    expected = _independent_e2e(
        data_dir / f"e2e_nlg_challenge/human_ratings/{criterion}.csv", prefix
    )
    r = e2e.ratings[e2e.ratings["criterion"] == criterion]
    got = dict(zip(zip(r["rater"], r["item"], r["system"], strict=True), r["score"], strict=True))
    assert set(got) == set(expected)
    assert all(got[k] == pytest.approx(v) for k, v in expected.items())
    assert set(r["n_judgements"]) == {1, 2}


def test_e2e_out_of_scale_options(e2e: Corpus, data_dir: Path) -> None:
    clip = load_corpus("e2e", data_dir, out_of_scale="clip", cache=False)
    drop = load_corpus("e2e", data_dir, out_of_scale="drop", cache=False)
    screen = e2e
    assert clip.ratings["score"].max() == 100
    # clip keeps every judgement; drop_screen drops the most
    assert len(clip.ratings) > len(drop.ratings) > len(screen.ratings)
    raw_total = 5 * (4239 + 2979)
    assert len(clip.ratings) == raw_total - 90 - 62  # only the repeated scores merged


def test_e2e_ignores_ip_columns_of_the_originals(
    e2e: Corpus, data_dir: Path, tmp_path: Path
) -> None:
    """The repository's rating files carry _ip/_city/_region; loading them gives the same."""
    import shutil

    src = data_dir / "e2e_nlg_challenge"
    dst = tmp_path / "e2e_nlg_challenge"
    shutil.copytree(src, dst)
    for name in ("quality.csv", "naturalness.csv"):
        df = pd.read_csv(dst / "human_ratings" / name, dtype=str, keep_default_na=False)
        df.insert(3, "_ip", "192.0.2.1")
        df["_city"] = "Nowhere"
        df["_region"] = "XX"
        df.to_csv(dst / "human_ratings" / name, index=False)
    a = load_corpus("e2e", tmp_path, cache=False)
    pd.testing.assert_frame_equal(a.ratings, e2e.ratings)
    assert "_ip" not in a.ratings.columns


# ---------------------------------------------------------------- Novikova 2017
def test_novikova_counts(novikova: Corpus, data_dir: Path) -> None:
    out = novikova.outputs
    assert len(out) == 2460
    counts = out.groupby(["dataset", "system"]).size().to_dict()
    assert counts == {
        ("BAGEL", "TGen"): 202, ("BAGEL", "LOLS"): 202, ("SFHOT", "RNNLG"): 477,
        ("SFHOT", "LOLS"): 398, ("SFRES", "RNNLG"): 600, ("SFRES", "LOLS"): 581,
    }
    assert set(novikova.ratings["rater"]) == {"median"}
    assert len(novikova.ratings) == 3 * 2460


def test_novikova_medians_and_metrics_equal_csv(novikova: Corpus, data_dir: Path) -> None:
    path = data_dir / "novikova2017_emnlp/emnlp_data_medians.csv"
    with open(path, newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    r = novikova.ratings.set_index(["item", "criterion"])["score"]
    halves = Counter()
    for line, row in enumerate(rows, start=2):
        item = f"{row['dataset']}-{line:04d}"
        for crit in ("informativeness", "naturalness", "quality"):
            assert r[(item, crit)] == float(row[crit])
            halves[crit] += float(row[crit]) % 1 == 0.5
    assert halves["informativeness"] == 283  # SOURCE.md: 283 half-point medians
    assert sum(halves.values()) == int((novikova.ratings["score"] % 1 == 0.5).sum())
    pm = precomputed_metrics(novikova)
    assert set(pm["metric"]) == set(METRIC_COLUMNS) and len(pm) == 2460 * len(METRIC_COLUMNS)
    bleu = pm[pm["metric"] == "Bleu_4"].set_index("item")["score"]
    assert bleu["BAGEL-0002"] == float(rows[0]["Bleu_4"])
    assert bleu["SFRES-2461"] == float(rows[-1]["Bleu_4"])


def test_data_dir_may_be_the_corpus_folder_itself(novikova: Corpus, data_dir: Path) -> None:
    c = load_corpus("novikova2017", data_dir / "novikova2017_emnlp", cache=False)
    pd.testing.assert_frame_equal(c.ratings, novikova.ratings)


def test_novikova_references_from_jsonl(novikova: Corpus, data_dir: Path) -> None:
    recs = [
        json.loads(line)
        for ds in ("BAGEL", "SFHOT", "SFRES")
        for line in (data_dir / "novikova2017_emnlp" / "references" / f"{ds}.jsonl")
        .read_text()
        .splitlines()
    ]
    assert len(recs) == 2460
    refs = novikova.references.groupby("item", sort=False)["text"].agg(list)
    for rec in recs[:: 97]:
        item = f"{rec['dataset']}-{rec['csv_row']:04d}"
        assert refs[item] == rec["refs"]
        out = novikova.outputs.set_index("item").loc[item]
        assert out["text"] == rec["sys_output_tokenized"]
    assert len(novikova.references) == sum(len(r["refs"]) for r in recs)


@pytest.mark.parametrize("name", ["webnlg2020", "e2e", "novikova2017"])
def test_parsed_cache_returns_identical_corpus(
    name: str, data_dir: Path, webnlg: Corpus, e2e: Corpus, novikova: Corpus
) -> None:
    fresh = {"webnlg2020": webnlg, "e2e": e2e, "novikova2017": novikova}[name]
    from nlgeval.corpora.parsed_cache import cache_root

    first = load_corpus(name, data_dir)  # parses and stores
    stored = list((cache_root() / "parsed").glob(f"{name}-*"))
    assert len(stored) == 1 and (stored[0] / "ratings.parquet").is_file()
    second = load_corpus(name, data_dir)  # read back from Parquet
    for c in (first, second):
        for attr in ("outputs", "references", "ratings"):
            pd.testing.assert_frame_equal(getattr(c, attr), getattr(fresh, attr))
        assert c.notes == fresh.notes and c.info == fresh.info


def test_e2e_join_reproduces_published_tgen_bleu(e2e: Corpus) -> None:
    """Outputs joined to all references on the MR string reproduce the published TGen BLEU.

    Reference value: 65.93 (Dusek, Novikova & Rieser 2020, e2e-metrics scripts; quoted in the
    corpus SOURCE.md). Computed here with sacrebleu directly (lowercased, all references per
    MR; shorter reference lists padded with None, which sacrebleu skips).
    """
    import sacrebleu

    tgen = e2e.subset(systems=["tgen"])
    refs = tgen.reference_lists()
    width = max(map(len, refs))
    streams = [[r[k] if k < len(r) else None for r in refs] for k in range(width)]
    bleu = sacrebleu.corpus_bleu(tgen.outputs["text"].tolist(), streams, lowercase=True)
    assert round(bleu.score, 2) == 65.93
