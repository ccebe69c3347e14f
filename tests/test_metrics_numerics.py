"""Metric-side numerics against the peers (issue 27): reference layouts as sacrebleu takes them,
ROUGE precision and recall as rouge-score reports them, options as keywords.

References: sacrebleu (``corpus_bleu``, ``sentence_chrf``) for the stream layout and Google's
rouge-score (``RougeScorer.score_multi``) for ROUGE precision/recall/F.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import sacrebleu
from rouge_score import rouge_scorer

import nlgeval.metrics
from nlgeval.corpus import toy_corpus
from nlgeval.errors import InputError
from nlgeval.metrics import get_metric, score_corpus

HYPS = ["the cat sat on the mat .", "a dog ran to the park", "it is raining today",
        "he reads a book"]
STREAMS = [  # sacrebleu's layout: STREAMS[j][i] = j-th reference of HYPS[i]
    ["the cat sat on a mat .", "the dog ran to the park", "it rains today", "he is reading"],
    ["a cat was on the mat", "a dog went to a park", "today it is raining",
     "he reads books"],
]
PER_HYP = [[s[i] for s in STREAMS] for i in range(len(HYPS))]


# ------------------------------------------------------------------ references layout
def test_streams_layout_equals_sacrebleu() -> None:
    bleu = get_metric("bleu")
    assert bleu.corpus_score(HYPS, STREAMS, refs_layout="streams") == pytest.approx(
        sacrebleu.corpus_bleu(HYPS, STREAMS).score, abs=1e-12)
    chrf = get_metric("chrf").segment_scores(HYPS, STREAMS, refs_layout="streams")
    expect = [sacrebleu.sentence_chrf(h, [s[i] for s in STREAMS]).score
              for i, h in enumerate(HYPS)]
    np.testing.assert_allclose(chrf, expect, atol=1e-12)


def test_both_layouts_give_the_same_numbers() -> None:
    for spec in ("bleu", "chrf", "ter", "rouge2", "nist"):
        m = get_metric(spec)
        a = m.segment_stats(HYPS, STREAMS, refs_layout="streams")
        b = m.segment_stats(HYPS, PER_HYP)  # 4 hypotheses, 2 references each: unambiguous
        np.testing.assert_array_equal(a, b)
        assert m.corpus_score(HYPS, STREAMS, refs_layout="streams") == m.corpus_score(HYPS,
                                                                                       PER_HYP)
    stats, scores = get_metric("chrf").score_batch(HYPS, STREAMS, refs_layout="streams")
    np.testing.assert_array_equal(scores, get_metric("chrf").segment_scores(HYPS, PER_HYP))


def test_sacrebleu_shaped_refs_are_never_silently_misread() -> None:
    bleu = get_metric("bleu")
    # 2 streams of 4 (sacrebleu's shape) where nlgeval expects 4 lists: the error says so
    with pytest.raises(InputError, match="refs_layout='streams'"):
        bleu.corpus_score(HYPS, STREAMS)
    # 2 hypotheses, 2 streams of 2: both readings are possible and differ -- refused
    hyps, square = HYPS[:2], [STREAMS[0][:2], STREAMS[1][:2]]
    with pytest.raises(InputError, match="ambiguous"):
        bleu.segment_scores(hyps, square)
    as_streams = bleu.segment_scores(hyps, square, refs_layout="streams")
    as_lists = bleu.segment_scores(hyps, square, refs_layout="per_hypothesis")
    assert not np.array_equal(as_streams, as_lists)  # the two readings really differ
    np.testing.assert_array_equal(
        as_streams, bleu.segment_scores(hyps, [[STREAMS[0][0], STREAMS[1][0]],
                                               [STREAMS[0][1], STREAMS[1][1]]],
                                        refs_layout="per_hypothesis"))
    # one hypothesis, one reference: both layouts coincide, nothing to refuse
    assert bleu.corpus_score(HYPS[:1], [[STREAMS[0][0]]]) == pytest.approx(
        sacrebleu.corpus_bleu(HYPS[:1], [[STREAMS[0][0]]]).score)


def test_bad_layouts_are_refused() -> None:
    chrf = get_metric("chrf")
    with pytest.raises(InputError, match="one reference per hypothesis"):
        chrf.segment_scores(HYPS, [STREAMS[0][:3]], refs_layout="streams")
    with pytest.raises(InputError, match="refs_layout must be one of"):
        chrf.segment_scores(HYPS, PER_HYP, refs_layout="sacrebleu")  # type: ignore[arg-type]


def test_score_corpus_is_not_affected_by_square_corpora() -> None:
    # score_corpus builds per-hypothesis lists itself; a corpus whose shape happens to be
    # square (2 outputs, 2 references each) must score, not be refused as ambiguous
    c = toy_corpus().subset(items=["2"])  # 2 systems; item 2 has 2 references
    hyps, refs = list(c.outputs["text"]), c.reference_lists(list(c.outputs["item"]))
    assert len(hyps) == 2 and [len(r) for r in refs] == [2, 2]
    with pytest.raises(InputError, match="ambiguous"):
        get_metric("chrf").segment_scores(hyps, refs)
    res = score_corpus(c, ["chrf"], cache=False)
    np.testing.assert_array_equal(
        res.segments["score"].to_numpy(),
        get_metric("chrf").segment_scores(hyps, refs, refs_layout="per_hypothesis"))


# ------------------------------------------------------------------ ROUGE precision / recall
ROUGE_HYPS = ["the cat sat on the mat .\nit slept all day", "dogs are running in parks",
              "nothing matches here"]
ROUGE_REFS = [["a cat sat on a mat .\nthe cat slept", "the cat was sleeping on the mat"],
              ["the dog runs in the park", "dogs run in parks every day"],
              ["completely different words"]]


@pytest.mark.parametrize("rouge_type", ["rouge1", "rouge2", "rougeL", "rougeLsum"])
@pytest.mark.parametrize("stem", [False, True])
def test_rouge_precision_recall_equal_rouge_score(rouge_type: str, stem: bool) -> None:
    scorer = rouge_scorer.RougeScorer([rouge_type], use_stemmer=stem)
    ref = [scorer.score_multi(r, h)[rouge_type] for h, r in zip(ROUGE_HYPS, ROUGE_REFS,
                                                                strict=True)]
    for field in ("precision", "recall", "fmeasure"):
        m = get_metric(rouge_type, score=field, scale=1, use_stemmer=stem)
        got = m.segment_scores(ROUGE_HYPS, ROUGE_REFS)
        np.testing.assert_allclose(got, [getattr(s, field) for s in ref], rtol=0, atol=1e-15)
    prf = get_metric(rouge_type, use_stemmer=stem).segment_prf(ROUGE_HYPS, ROUGE_REFS)
    np.testing.assert_allclose(prf[["precision", "recall", "fmeasure"]].to_numpy(),
                               [[s.precision, s.recall, s.fmeasure] for s in ref], atol=1e-15)


def test_rouge_score_option_in_specs_signatures_and_cache(tmp_path: Path) -> None:
    rec = get_metric("rouge2:score=recall")
    assert rec.spec == "rouge2:score=recall" and "score:recall" in rec.signature
    assert "score:" not in get_metric("rouge2").signature  # F keeps its old signature
    with pytest.raises(InputError, match="expected one of"):
        get_metric("rouge2:score=f1")
    # the batch cache keys on the score: F and recall of the same texts stay apart
    c = toy_corpus()
    f = score_corpus(c, ["rouge1"], cache=True, cache_dir=tmp_path).segments["score"]
    r = score_corpus(c, ["rouge1:score=recall"], cache=True, cache_dir=tmp_path)
    direct = get_metric("rouge1", score="recall").segment_scores(
        list(c.outputs["text"]), c.reference_lists(list(c.outputs["item"])))
    np.testing.assert_allclose(r.segments["score"].to_numpy(), direct)
    assert not np.allclose(f.to_numpy(), direct)


# ------------------------------------------------------------------ options as keywords
def test_get_metric_options_as_keywords() -> None:
    kw = get_metric("bleu", lowercase=True, max_ngram_order=3)
    spec = get_metric("bleu:lowercase=true,max_ngram_order=3")
    assert kw.spec == spec.spec and kw.signature == spec.signature
    assert kw.corpus_score(HYPS, PER_HYP) == spec.corpus_score(HYPS, PER_HYP)
    assert get_metric("bleu:lowercase=true", tokenize="intl").spec == (
        "bleu:lowercase=true,tokenize=intl")
    with pytest.raises(InputError, match="both in the spec and as a keyword"):
        get_metric("bleu:lowercase=true", lowercase=False)
    with pytest.raises(InputError, match="no option 'lowercased'"):
        get_metric("bleu", lowercased=True)
    with pytest.raises(InputError, match="already configured"):
        get_metric(spec, lowercase=False)


def test_score_corpus_is_exported() -> None:
    from nlgeval.metrics.scoring import score_corpus as home

    assert score_corpus is home and "score_corpus" in nlgeval.metrics.__all__
    assert "score_corpus" in dir(nlgeval.metrics)
