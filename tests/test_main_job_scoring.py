"""The corpus-level scores that need the texts (NIST's corpus-wide information weights) are
kept in the score cache: a warm run reads them, with the same floats as computing them."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from nlgeval.corpus import Corpus, CorpusInfo
from nlgeval.metrics import scoring
from nlgeval.metrics.nist import NISTMetric
from nlgeval.metrics.scoring import score_corpus

WORDS = "the a cat dog sat ran on mat home quickly red big small house tree".split()


def _corpus(seed: int, n_systems: int = 4, n_items: int = 12) -> Corpus:
    """Random texts (repeated outputs, one- and two-reference items, empty-ish outputs)."""
    rng = np.random.default_rng(seed)

    def text(lo: int) -> str:
        return " ".join(rng.choice(WORDS, size=int(rng.integers(lo, 9))))

    items = [f"i{k}" for k in range(n_items)]
    refs = [{"item": it, "ref_id": j, "text": text(2)} for it in items
            for j in range(1 + int(rng.integers(0, 2)))]
    outs = [{"system": f"s{s}", "item": it, "text": text(1)}
            for s in range(n_systems) for it in items]
    outs[3]["text"] = outs[0]["text"]  # identical outputs
    return Corpus.build(CorpusInfo("synthetic"), pd.DataFrame(outs), pd.DataFrame(refs))


@pytest.mark.parametrize("seed", range(6))
def test_warm_corpus_scores_equal_the_computed_ones(tmp_path: Path, seed: int) -> None:
    corpus = _corpus(seed)
    metrics = ["nist", "bleu", "nist:max_ngram_order=3"]
    fresh = score_corpus(corpus, metrics, cache=False)
    first = score_corpus(corpus, metrics, cache_dir=tmp_path / "new")
    second = score_corpus(corpus, metrics, cache_dir=tmp_path / "new")
    for res in (first, second):
        pd.testing.assert_frame_equal(res.corpus_scores, fresh.corpus_scores, check_exact=True)
        pd.testing.assert_frame_equal(res.segments, fresh.segments, check_exact=True)
    # the cache use reported is that of the segment statistics alone, as without the
    # corpus entries (the previous code path: no metric's corpus score cached)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(scoring, "_needs_texts", lambda m: False)
        old_first = score_corpus(corpus, metrics, cache_dir=tmp_path / "old")
        old_second = score_corpus(corpus, metrics, cache_dir=tmp_path / "old")
    assert (first.cache, second.cache) == (old_first.cache, old_second.cache)
    assert second.cache["misses"] == 0


def test_warm_run_does_not_recompute_nist(tmp_path: Path,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    corpus = _corpus(11)
    first = score_corpus(corpus, ["nist"], cache_dir=tmp_path)

    def fail(*args: object, **kwargs: object) -> float:
        raise AssertionError("corpus-level NIST recomputed on a warm run")

    monkeypatch.setattr(NISTMetric, "corpus_from_stats", fail)
    second = score_corpus(corpus, ["nist"], cache_dir=tmp_path)
    pd.testing.assert_frame_equal(second.corpus_scores, first.corpus_scores, check_exact=True)
    # the check can fail: a cold run does call it
    with pytest.raises(AssertionError, match="recomputed"):
        score_corpus(corpus, ["nist"], cache=False)


def test_other_system_grouping_is_another_entry(tmp_path: Path) -> None:
    """Scoring a subset of the systems (other outputs per system) never reads the entry of
    the whole corpus, and the texts of a system enter the key."""
    corpus = _corpus(3)
    score_corpus(corpus, ["nist"], cache_dir=tmp_path)
    sub = score_corpus(corpus, ["nist"], systems=["s1", "s2"], cache_dir=tmp_path)
    fresh = score_corpus(corpus, ["nist"], systems=["s1", "s2"], cache=False)
    pd.testing.assert_frame_equal(sub.corpus_scores, fresh.corpus_scores, check_exact=True)
    outs = corpus.outputs.copy()
    outs.loc[outs["system"] == "s0", "text"] = "red tree"
    other = Corpus.build(CorpusInfo("synthetic"), outs, corpus.references)
    got = score_corpus(other, ["nist"], cache_dir=tmp_path)
    want = score_corpus(other, ["nist"], cache=False)
    pd.testing.assert_frame_equal(got.corpus_scores, want.corpus_scores, check_exact=True)
