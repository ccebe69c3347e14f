"""REALSumm (Bhandari et al. 2020): the loader, the restricted unpickler, the pinned download and
``nlgeval validate realsumm``.

References: the pickles read with the standard :mod:`pickle` module (only after their SHA-256
matched the pinned one, so they are the published files), counts from the paper (25 systems:
14 abstractive, 11 extractive; 100 documents), scipy's Pearson and Kendall on system means
computed here from those pickles, and Google's rouge-score for nlgeval's ROUGE.
"""

from __future__ import annotations

import copyreg
import json
import os
import pickle
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from typer.testing import CliRunner

from nlgeval.cli import app
from nlgeval.corpora import REGISTRY, list_corpora, load_corpus
from nlgeval.corpora import realsumm as R
from nlgeval.corpora.descriptor import descriptor
from nlgeval.corpora.extras import default_levels, default_metrics, published_scores
from nlgeval.corpora.safe_pickle import load_data_pickle, loads_data_pickle
from nlgeval.corpora.store import ChecksumError, cache_folder, sha256_of, verify
from nlgeval.correlation.levels import LEVELS
from nlgeval.errors import InputError

runner = CliRunner()


@pytest.fixture(scope="module")
def folder() -> Path:
    env = os.environ.get("NLGEVAL_DATA")
    path = Path(env) / "realsumm" if env else None
    if path is None or not (path / "abs.pkl").is_file():
        pytest.skip("REALSumm is not in the corpora folder (NLGEVAL_DATA/realsumm)")
    return path


@pytest.fixture(scope="module")
def raw(folder: Path) -> dict[str, dict]:
    """The two pickles read with the standard unpickler, after checking their pinned SHA-256."""
    out = {}
    for f in descriptor("realsumm").files:
        if f.path.endswith(".pkl"):
            assert sha256_of(folder / f.path) == f.sha256
            with open(folder / f.path, "rb") as fh:
                out[f.path] = pickle.load(fh)  # noqa: S301 - the checksummed published file
    return out


@pytest.fixture(scope="module")
def corpus(folder: Path):
    return load_corpus("realsumm", folder.parent)


# ------------------------------------------------------------------ the restricted unpickler
class _System:
    def __reduce__(self):
        return (os.system, ("echo should-not-run",))


class _Touch:
    def __init__(self, path: Path) -> None:
        self.path = path

    def __reduce__(self):
        return (Path.touch, (self.path,))


def test_malicious_reduce_is_refused_before_running(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    for obj in (_System(), {"doc": [_Touch(marker)]}):
        with pytest.raises(InputError) as exc:
            loads_data_pickle(pickle.dumps(obj), "evil.pkl")
        assert "refused to load" in str(exc.value) and "evil.pkl" in str(exc.value)
    assert not marker.exists()
    with pytest.raises(InputError, match=r"global '(posix|nt)\.system'"):
        loads_data_pickle(pickle.dumps(_System()))


def test_copyreg_extension_codes_go_through_the_allow_list(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    cls = type(marker).__name__  # PosixPath or WindowsPath
    copyreg.add_extension("pathlib", cls, 0xBEEF)
    try:
        data = pickle.dumps(marker, protocol=2)
        assert b"\x83" in data  # EXT2: the class is named by an extension code, not by name
        with pytest.raises(InputError, match=f"pathlib.{cls}"):
            loads_data_pickle(data)
    finally:
        copyreg.remove_extension("pathlib", cls, 0xBEEF)


def test_numpy_scalars_and_plain_data_load(tmp_path: Path) -> None:
    data = {1: {"s": "x", "v": [np.float64(0.25), np.float32(0.5), 3, 1.5, None, True]}}
    for protocol in (3, pickle.HIGHEST_PROTOCOL):  # the data files are protocol 3
        back = loads_data_pickle(pickle.dumps(data, protocol=protocol))
        assert back == data and type(back[1]["v"][1]) is np.float32
    with pytest.raises(InputError, match="numpy.ndarray|_reconstruct"):
        loads_data_pickle(pickle.dumps(np.arange(3)))  # arrays are not on the allow-list


def test_broken_pickles_are_input_errors(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="not a readable data pickle"):
        loads_data_pickle(pickle.dumps({"a": 1})[:-3], "cut.pkl")
    with pytest.raises(InputError, match="not a readable data pickle"):
        loads_data_pickle(b"P0\n.")  # a persistent id: no persistent_load, nothing resolved
    with pytest.raises(InputError, match="file not found"):
        load_data_pickle(tmp_path / "missing.pkl")


def test_loader_refuses_a_malicious_corpus_file(tmp_path: Path) -> None:
    (tmp_path / "abs.pkl").write_bytes(pickle.dumps({0: _System()}))
    with pytest.raises(InputError, match="refused to load"):
        R.load(tmp_path)


def test_loader_names_the_file_and_document_of_a_bad_entry(tmp_path: Path) -> None:
    doc = {"doc_id": 0, "ref_summ": "<t> a . </t>",
           "system_summaries": {"s.txt": {"system_summary": "<t> a . </t>",
                                          "scores": {"litepyramid_recall": "high"}}}}
    (tmp_path / "abs.pkl").write_bytes(pickle.dumps({0: doc}))
    with pytest.raises(InputError) as exc:
        R.read_pickles(tmp_path, "abstractive")
    assert "abs.pkl" in str(exc.value) and "document '0'" in str(exc.value)
    assert "litepyramid_recall" in str(exc.value)


# ------------------------------------------------------------------ the corpus
def test_counts_and_names(corpus, raw) -> None:
    assert len(corpus.systems) == 25 and len(corpus.items) == 100 and len(corpus.outputs) == 2500
    assert corpus.criteria == ["LitePyramid"] and len(corpus.ratings) == 2500
    fam = corpus.outputs.drop_duplicates("system")["family"].value_counts().to_dict()
    assert fam == {"abstractive": 14, "extractive": 11}
    names = {(f, s) for f, d in (("abstractive", raw["abs.pkl"]), ("extractive", raw["ext.pkl"]))
             for s in d[0]["system_summaries"]}
    expect = {R.DUPLICATED.get(s, {}).get(f, s) for f, s in names}
    assert set(corpus.systems) == expect
    assert {"bart_out.txt", "bart_out_ext.txt"} <= set(corpus.systems)
    fam = corpus.outputs.drop_duplicates("system").set_index("system")["family"]
    assert fam["bart_out.txt"] == "abstractive" and fam["bart_out_ext.txt"] == "extractive"
    assert any("bart_out_ext.txt" in n for n in corpus.notes)
    assert any("<t>" in n and "newlines" in n for n in corpus.notes)


def test_texts_and_scores_equal_the_pickles(corpus, raw) -> None:
    ratings = corpus.ratings.set_index(["system", "item"])["score"]
    outputs = corpus.outputs.set_index(["system", "item"])["text"]
    for file, family in R.FILES.items():
        for doc_id, doc in raw[file].items():
            for sysname, entry in doc["system_summaries"].items():
                key = (R.DUPLICATED.get(sysname, {}).get(family, sysname), str(doc_id))
                assert ratings[key] == entry["scores"]["litepyramid_recall"]
                sents = [s.replace("<t>", "").strip()
                         for s in entry["system_summary"].split("</t>")]
                assert outputs[key] == "\n".join(s for s in sents if s)
    refs = corpus.references.set_index("item")["text"]
    assert refs["52"].splitlines()[0] == "manchester united take on manchester city on sunday ."


def test_family_subset(folder: Path) -> None:
    ext = load_corpus("realsumm", folder.parent, systems="extractive")
    assert len(ext.systems) == 11 and "bart_out_ext.txt" in ext.systems
    with pytest.raises(InputError, match="systems must be"):
        R.load(folder, systems="neural")  # type: ignore[arg-type]


def test_external_scores_are_the_authors_numbers(folder: Path, raw) -> None:
    ext = R.external_scores(folder)
    metrics = set(ext["metric"])
    assert {"rouge_1_recall", "rouge_2_recall", "rouge_l_f_score", "bert_f_score",
            "mover_score", "js-2"} <= metrics and "litepyramid_recall" not in metrics
    assert len(metrics) == 14 and len(ext) == 14 * 2500
    got = ext.set_index(["metric", "system", "item"])["score"]
    entry = raw["ext.pkl"][52]["system_summaries"]["bart_out.txt"]["scores"]
    for m in metrics:
        assert got[(m, "bart_out_ext.txt", "52")] == float(entry[m])
    assert [len(f) for f in published_scores("realsumm", folder.parent)] == [35000]


def test_listed_and_cited(folder: Path) -> None:
    row = next(r for r in list_corpora(folder.parent) if r["name"] == "realsumm")
    assert row["available_locally"] and "Bhandari" in row["citation"]
    assert default_metrics("realsumm")[:4] == ["rouge1", "rouge2", "rougeL", "rougeLsum"]


def test_default_levels_are_the_papers() -> None:
    """Bhandari et al. (2020) report system-level and summary-level correlations; summary
    level = per document across the systems, then averaged = nlgeval's ``item`` level."""
    assert descriptor("realsumm").levels == ("system", "item")
    assert default_levels("realsumm") == ["system", "item"]
    assert default_levels("REALSumm ") == ["system", "item"]
    assert default_levels(Path("realsumm")) is None  # a directory: no published defaults
    for name in REGISTRY:  # every descriptor's levels are levels nlgeval knows
        assert set(descriptor(name).levels) <= set(LEVELS), name
        if name != "realsumm":
            assert default_levels(name) is None, name


# ------------------------------------------------------------------ download
def test_download_with_checksum_from_local_server(download_env, publish, folder: Path) -> None:
    base, root, requests = download_env
    publish(root, folder.parent, "realsumm")
    downloaded = load_corpus("realsumm", cache=False)
    d = descriptor("realsumm")
    assert len(requests) == 4  # the two pickles, LICENSE.txt, annotation_instructions.txt
    assert all(r["status"] == "ok" for r in verify(d, cache_folder(d)))
    local = load_corpus("realsumm", folder.parent, cache=False)
    for attr in ("outputs", "references", "ratings"):
        pd.testing.assert_frame_equal(getattr(downloaded, attr), getattr(local, attr))


def test_download_checksum_mismatch_is_rejected(download_env, publish, folder: Path) -> None:
    base, root, requests = download_env
    publish(root, folder.parent, "realsumm")
    f = descriptor("realsumm").file("ext.pkl")
    served = root / f.repository / f.commit / f.source_path
    served.write_bytes(served.read_bytes() + b"\n")
    with pytest.raises(ChecksumError, match="checksum mismatch"):
        load_corpus("realsumm", cache=False)
    assert not (cache_folder(descriptor("realsumm")) / "ext.pkl").exists()


# ------------------------------------------------------------------ validate
def _system_means(raw: dict[str, dict], key: str) -> pd.Series:
    rows = [(R.DUPLICATED.get(s, {}).get(fam, s), e["scores"][key])
            for file, fam in R.FILES.items() for doc in raw[file].values()
            for s, e in doc["system_summaries"].items()]
    return pd.DataFrame(rows, columns=["system", "v"]).groupby("system")["v"].mean()


def test_validate_end_to_end(folder: Path, raw, tmp_path: Path) -> None:
    """Without --levels: the corpus's default levels, the paper's system and summary level."""
    res = runner.invoke(app, ["validate", "realsumm", "--data-dir", str(folder.parent),
                              "--statistics", "pearson,kendall",
                              "--resamples", "20", "--permutations", "0", "--figures", "none",
                              "--out", str(tmp_path / "report"), "--json", "--quiet"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    corr = pd.DataFrame(out["correlations"])
    assert set(corr["criterion"]) == {"LitePyramid"}
    assert sorted(set(corr["level"])) == ["item", "system"]
    run = json.loads((tmp_path / "report" / "run.json").read_text())
    assert run["settings"]["levels"] == ["system", "item"]
    metrics = set(corr["metric"])
    assert {"rouge_2_recall", "rouge_1_recall", "bert_f_score", "mover_score", "js-2"} <= metrics
    assert set(R.DEFAULT_METRICS) <= metrics  # nlgeval's own ROUGE beside the authors' scores
    # the scores come from both pickles: the signature names the corpus folder, not one file
    assert out["signatures"]["rouge_2_recall"] == "external scores from realsumm"
    # system level = correlation of the 25 system means (scipy on the pickles)
    human = _system_means(raw, "litepyramid_recall")
    for metric in ("rouge_2_recall", "bert_f_score"):
        m = _system_means(raw, metric).reindex(human.index)
        sel = corr[(corr["metric"] == metric) & (corr["level"] == "system")]
        r = sel.set_index("coefficient")["r"]
        assert r["pearson"] == pytest.approx(stats.pearsonr(m, human)[0], abs=1e-12)
        assert r["kendall"] == pytest.approx(stats.kendalltau(m, human)[0], abs=1e-12)
        assert int(sel["n"].iloc[0]) == 25
    # item level (the paper's "summary level") = per-document Kendall tau over the 25 systems,
    # averaged over all 100 documents
    per_doc = _per_document_tau(raw, "rouge_2_recall")
    item = corr[(corr["metric"] == "rouge_2_recall") & (corr["level"] == "item")
                & (corr["coefficient"] == "kendall")]
    assert item["r"].iloc[0] == pytest.approx(np.mean([t for t, _ in per_doc]), abs=1e-12)


def test_levels_option_overrides_the_corpus_default(folder: Path, tmp_path: Path) -> None:
    res = runner.invoke(app, ["validate", "realsumm", "--data-dir", str(folder.parent),
                              "--levels", "segment", "--metrics", "none",
                              "--statistics", "pearson", "--resamples", "0", "--permutations",
                              "0", "--figures", "none", "--out", str(tmp_path / "r"), "--json",
                              "--quiet"])
    assert res.exit_code == 0, res.output
    assert {r["level"] for r in json.loads(res.stdout)["correlations"]} == {"segment"}


def test_a_study_without_corpus_defaults_keeps_segment_and_system(tmp_path: Path) -> None:
    """Ratings and scores without a published corpus: nlgeval's general default levels."""
    rng = np.random.default_rng(5)
    grid = pd.DataFrame([(s, str(i)) for s in "ABCDE" for i in range(8)],
                        columns=["system", "item"])
    human = grid.assign(criterion="q", score=rng.integers(1, 6, len(grid)))
    scores = grid.assign(m=rng.normal(size=len(grid)))
    human.to_csv(tmp_path / "h.csv", index=False)
    scores.to_csv(tmp_path / "s.csv", index=False)
    res = runner.invoke(app, ["validate", "--human", str(tmp_path / "h.csv"), "--scores",
                              str(tmp_path / "s.csv"), "--metrics", "none", "--statistics",
                              "pearson", "--resamples", "0", "--permutations", "0",
                              "--figures", "none", "--out", str(tmp_path / "r"), "--json",
                              "--quiet"])
    assert res.exit_code == 0, res.output
    assert {r["level"] for r in json.loads(res.stdout)["correlations"]} == {"segment", "system"}


def _per_document_tau(raw: dict[str, dict], metric: str) -> list[tuple[float, float]]:
    """scipy's Kendall tau-b (and p) between ``metric`` and LitePyramid per document."""
    out = []
    for doc_id in sorted(raw["abs.pkl"]):
        entries = [e["scores"] for f in R.FILES for e in raw[f][doc_id]["system_summaries"]
                   .values()]
        out.append(tuple(stats.kendalltau([e[metric] for e in entries],
                                          [e["litepyramid_recall"] for e in entries])))
    return out


#: the authors' summary-level Kendall taus with LitePyramid, all 25 systems: the output of
#: ``utils.print_ktau_matrix`` in analysis/analysis.ipynb ("Summary level analysis - Exp IV")
#: of github.com/neulab/REALSumm at commit a5900e3e, which averages only the documents whose
#: tau has p <= 0.05
AUTHORS_SUMMARY_LEVEL = {"bert_recall_score": 0.4684, "mover_score": 0.4360,
                         "rouge_1_recall": 0.4891, "rouge_2_recall": 0.4860,
                         "rouge_l_recall": 0.4871, "js-2": 0.4255}


def test_authors_summary_level_needs_the_significance_filter(raw) -> None:
    """Why nlgeval's item level is lower than the authors' summary level (docs/corpora.md)."""
    for metric, published in AUTHORS_SUMMARY_LEVEL.items():
        per_doc = _per_document_tau(raw, metric)
        significant = [t for t, p in per_doc if p <= 0.05]
        assert round(float(np.mean(significant)), 4) == published
        assert np.mean([t for t, _ in per_doc]) < published - 0.05  # all 100 documents


# ------------------------------------------------------------------ rouge-score vs ROUGE-1.5.5
@pytest.mark.parametrize(("stem", "mad", "exact"), [(False, 0.0075, 0.71), (True, 0.0027, 0.86)])
def test_rouge_score_vs_authors_rouge155_as_documented(corpus, folder: Path, stem: bool,
                                                       mad: float, exact: float) -> None:
    """The numbers of docs/corpora.md: nlgeval's ROUGE-2 recall vs the authors' ROUGE-1.5.5."""
    from nlgeval.metrics import get_metric

    ext = R.external_scores(folder)
    theirs = ext[ext["metric"] == "rouge_2_recall"].set_index(["system", "item"])["score"]
    out = corpus.outputs
    refs = dict(zip(corpus.references["item"], corpus.references["text"], strict=True))
    ours = get_metric("rouge2", score="recall", scale=1, use_stemmer=stem).segment_scores(
        list(out["text"]), [[refs[i]] for i in out["item"]])
    diff = ours - theirs.reindex(pd.MultiIndex.from_frame(out[["system", "item"]])).to_numpy()
    assert round(float(np.mean(np.abs(diff))), 4) == mad
    assert round(float(np.mean(np.abs(diff) < 5e-6)), 2) == exact
    assert float(np.mean(diff)) < 0  # rouge-score counts fewer matches on average
    if stem:  # the rest is per document, not per system
        same = pd.DataFrame({"system": out["system"].to_numpy(), "item": out["item"].to_numpy(),
                             "exact": np.abs(diff) < 5e-6})
        assert int((same.groupby("item")["exact"].mean() == 1).sum()) == 61
        per_system = same.groupby("system")["exact"].mean().round(2)
        assert per_system.min() == 0.82 and per_system.max() == 0.90


def test_bertscore_columns_hold_what_their_names_say(folder: Path) -> None:
    """docs/corpora.md: F between P and R; P falls and R rises with the summary's length."""
    rows = R.read_pickles(folder)
    p, r, f = (rows[f"bert_{k}_score"] for k in ("precision", "recall", "f"))
    between = ((f >= np.minimum(p, r)) & (f <= np.maximum(p, r))).mean()
    assert round(float(between), 3) == 0.986
    length = rows["text"].str.split().str.len()
    assert stats.spearmanr(length, p)[0] < -0.25 and stats.spearmanr(length, r)[0] > 0.25
