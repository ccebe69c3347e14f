"""ROUGE-1/2/L/Lsum (Lin, 2004) via Google's ``rouge-score`` package.

Multiple references are handled like ``RougeScorer.score_multi``: the reference with the highest
F-measure wins (first one on ties, as ``numpy.argmax``). Segment score = that F-measure x 100
(0-100, like the other adapters; ``scale=1`` gives 0-1); corpus score = mean segment score.
``score=precision`` or ``score=recall`` (``rouge2:score=recall``) reports that reference's
precision or recall instead of F, and :meth:`_Rouge.segment_prf` gives all three as columns.

Speed without changing a single number:

* every reference list is tokenised (and stemmed) once, not once per system;
* ROUGE-N calls rouge-score's own ``_create_ngrams`` / ``_score_ngrams``;
* ROUGE-L needs only the *length* of the longest common subsequence. rouge-score fills a Python
  O(m n) table; we compute the same integer with the bit-parallel LCS algorithm of Allison & Dix
  (1986) / Hyyro (2004) on Python integers (one machine-word operation per hypothesis token), then
  precision, recall and F exactly as rouge-score does. Written by hand because no maintained
  library exposes token-level LCS length over arbitrary token sequences.
* ROUGE-Lsum with one sentence on each side equals ROUGE-L (the union LCS of one sentence is its
  LCS); with several sentences rouge-score's ``_summary_level_lcs`` is called on pre-tokenised
  sentences.
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from importlib import metadata
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
import pandas as pd

from nlgeval.metrics.base import Metric, Option


class _LazyModule:
    """A module imported on first use: rouge-score imports nltk (about 0.5-1 s), which a run
    that reads every ROUGE score from the score cache never needs."""

    def __init__(self, name: str) -> None:
        self._name = name

    def __getattr__(self, attr: str) -> Any:
        value = getattr(importlib.import_module(self._name), attr)
        setattr(self, attr, value)  # later look-ups are plain attributes
        return value


if TYPE_CHECKING:
    from rouge_score import rouge_scorer, scoring, tokenizers
else:
    rouge_scorer, scoring, tokenizers = (_LazyModule(f"rouge_score.{name}") for name in
                                         ("rouge_scorer", "scoring", "tokenizers"))



def lcs_length(masks: dict[str, int], m: int, hyp_tokens: Sequence[str]) -> int:
    """Length of the longest common subsequence, bit-parallel (Hyyro, 2004).

    ``masks[token]`` has bit ``i`` set when reference token ``i`` equals ``token``; ``m`` is the
    reference length. V starts all ones; for each hypothesis token with match mask M:
    ``U = V & M; V = (V + U) | (V - U)``; the LCS length is the number of zero bits of V.

    Examples:
        >>> ref = "a b c d".split()
        >>> lcs_length(_masks(ref), len(ref), "a c x d".split())
        3
    """
    full = (1 << m) - 1
    v = full
    for tok in hyp_tokens:
        mask = masks.get(tok)
        if mask:
            u = v & mask
            v = ((v + u) | (v - u)) & full
    return m - v.bit_count()


def _masks(tokens: Sequence[str]) -> dict[str, int]:
    masks: dict[str, int] = {}
    for i, t in enumerate(tokens):
        masks[t] = masks.get(t, 0) | (1 << i)
    return masks


#: the three scores of rouge-score's ``Score`` tuple, in the order of the statistics columns
SCORES: tuple[str, ...] = ("precision", "recall", "fmeasure")


class _Rouge(Metric):
    rouge_type: ClassVar[str] = ""
    options: ClassVar[dict[str, Option]] = {
        "use_stemmer": Option(bool, False, "Porter stemmer (ROUGE-1.5.5 -m)"),
        "scale": Option(int, 100, "report the score x 100 (100) or as 0-1 (1)", None),
        "score": Option(str, "fmeasure", "which score: fmeasure, precision or recall (of the "
                        "reference with the highest F, as score_multi)", SCORES),
    }
    _lib_tok: Any = None

    def _check_options(self) -> None:
        if self.opts["scale"] not in (1, 100):
            from nlgeval.errors import InputError

            raise InputError(f"metric '{self.name}', option 'scale': expected 1 or 100")

    @property
    def tokenizer(self) -> tokenizers.Tokenizer:
        if self._lib_tok is None:
            self._lib_tok = tokenizers.DefaultTokenizer(self.opts["use_stemmer"])
        return self._lib_tok

    @property
    def config_signature(self) -> str:
        ver = metadata.version("rouge-score")
        stem = "porter" if self.opts["use_stemmer"] else "no"
        extra = ""
        if self.opts.get("split_summaries"):
            extra = "|split:nltk"
        if self.opts["score"] != "fmeasure":  # F keeps its old signature (and cache keys)
            extra += f"|score:{self.opts['score']}"
        return (
            f"{self.name}|variant:{self.rouge_type}|multiref:max-f|stemmer:{stem}"
            f"|tok:rouge-score-default{extra}|scale:{self.opts['scale']}|version:rouge-score-{ver}"
        )

    @property
    def signature(self) -> str:
        n = self._nrefs_label()
        return (f"nrefs:{n}|" if n else "") + self.config_signature

    def _tok(self, text: str) -> list[str]:
        return self.tokenizer.tokenize(text)

    def _segment_from_stats(self, stats: np.ndarray) -> np.ndarray:
        f = stats[:, SCORES.index(self.opts["score"])]
        return f * 100.0 if self.opts["scale"] == 100 else f.copy()

    def segment_prf(self, hyps: Sequence[str], refs: Sequence[Sequence[str]]) -> pd.DataFrame:
        """Precision, recall and F-measure of every hypothesis (0-1, rouge-score's ``Score``
        fields), from the reference with the highest F (``RougeScorer.score_multi``).

        Examples:
            >>> prf = Rouge1().segment_prf(["a dog runs"], [["the dog runs fast"]])
            >>> prf.round(4).to_dict("records")
            [{'precision': 0.6667, 'recall': 0.5, 'fmeasure': 0.5714}]
            >>> from rouge_score import rouge_scorer
            >>> rouge_scorer.RougeScorer(["rouge1"]).score_multi(["the dog runs fast"],
            ...                                                  "a dog runs")["rouge1"].recall
            0.5
        """
        stats = self.segment_stats(hyps, refs)
        return pd.DataFrame(stats.reshape(len(hyps), 3), columns=list(SCORES))

    def _corpus_from_stats(self, stats: np.ndarray) -> float:
        return float(np.mean(self._segment_from_stats(stats)))

    @staticmethod
    def _best(scores: list[tuple[float, float, float]]) -> tuple[float, float, float]:
        # score_multi: np.argmax over F, i.e. the first reference with the maximum F
        best = scores[0]
        for s in scores[1:]:
            if s[2] > best[2]:
                best = s
        return best


class _RougeN(_Rouge):
    n: ClassVar[int] = 1
    higher_is_better = True

    def _prepare_refs(self, refs: Sequence[str]) -> Any:
        out = []
        for r in refs:
            grams = rouge_scorer._create_ngrams(self._tok(r), self.n)
            out.append((grams, sum(grams.values())))
        return out

    def _segment_stats(self, hyp: str, ref_info: Any) -> Sequence[float]:
        # rouge_scorer._score_ngrams with the reference totals precomputed and the intersection
        # summed over common n-grams only (same integers, same divisions, same fmeasure)
        pred = rouge_scorer._create_ngrams(self._tok(hyp), self.n)
        pred_count = max(sum(pred.values()), 1)
        pred_keys = pred.keys()
        scores = []
        for target, target_count in ref_info:
            inter = sum(min(target[g], pred[g]) for g in target.keys() & pred_keys)
            precision = inter / pred_count
            recall = inter / max(target_count, 1)
            scores.append((precision, recall, scoring.fmeasure(precision, recall)))
        return self._best(scores)


class Rouge1(_RougeN):
    """ROUGE-1: unigram overlap F-measure.

    Examples:
        Equal to Google's rouge-score (``RougeScorer.score_multi``):

        >>> hyps = ["the cat sat on the mat", "a dog runs"]
        >>> refs = [["the cat sat on the mat"], ["the dog runs fast"]]
        >>> [round(float(s), 4) for s in Rouge1().segment_scores(hyps, refs)]
        [100.0, 57.1429]
        >>> from rouge_score import rouge_scorer
        >>> sc = rouge_scorer.RougeScorer(["rouge1"])
        >>> [round(sc.score_multi(r, h)["rouge1"].fmeasure, 4) for h, r in zip(hyps, refs)]
        [1.0, 0.5714]
    """

    name = "rouge1"
    rouge_type = "rouge1"
    n = 1
    description = "ROUGE-1 F (rouge-score), max over references"


class Rouge2(_RougeN):
    """ROUGE-2: bigram overlap F-measure.

    Examples:
        >>> hyps = ["the cat sat on the mat", "a dog runs"]
        >>> refs = [["the cat sat on the mat"], ["the dog runs fast"]]
        >>> [round(float(s), 4) for s in Rouge2().segment_scores(hyps, refs)]
        [100.0, 40.0]
    """

    name = "rouge2"
    rouge_type = "rouge2"
    n = 2
    description = "ROUGE-2 F (rouge-score), max over references"


def _lcs_score(masks: dict[str, int], m: int, pred: list[str]) -> tuple[float, float, float]:
    # identical arithmetic to rouge_score.rouge_scorer._score_lcs
    if not m or not pred:
        return (0, 0, 0)
    lcs = lcs_length(masks, m, pred)
    precision = lcs / len(pred)
    recall = lcs / m
    return (precision, recall, scoring.fmeasure(precision, recall))


class RougeL(_Rouge):
    """ROUGE-L: longest-common-subsequence F-measure (sentence level).

    Examples:
        >>> hyps = ["the cat sat on the mat", "a dog runs"]
        >>> refs = [["the cat sat on the mat"], ["the dog runs fast"]]
        >>> [round(float(s), 4) for s in RougeL().segment_scores(hyps, refs)]
        [100.0, 57.1429]
        >>> round(RougeL().corpus_score(hyps, refs), 4)
        78.5714
    """

    name = "rougeL"
    rouge_type = "rougeL"
    description = "ROUGE-L F (rouge-score), max over references"

    def _prepare_refs(self, refs: Sequence[str]) -> Any:
        out = []
        for r in refs:
            toks = self._tok(r)
            out.append((_masks(toks), len(toks)))
        return out

    def _segment_stats(self, hyp: str, ref_info: Any) -> Sequence[float]:
        pred = self._tok(hyp)
        return self._best([_lcs_score(masks, m, pred) for masks, m in ref_info])


def sentence_split(text: str) -> list[str]:
    """``nltk.sent_tokenize``, what rouge-score's ``split_summaries`` calls, with NLTK's
    page-long ``LookupError`` for missing tokenizer data turned into one line
    (:class:`nlgeval.errors.DataNotFoundError`, naming the resource to install).

    Examples:
        >>> from nlgeval.errors import DataNotFoundError
        >>> try:
        ...     sents = sentence_split("The cat sat. It slept.")
        ... except DataNotFoundError as err:  # no punkt data: one line naming it
        ...     sents = "punkt" in str(err) and ["The cat sat.", "It slept."]
        >>> sents
        ['The cat sat.', 'It slept.']
    """
    import re

    import nltk

    try:
        return list(nltk.sent_tokenize(text))
    except LookupError as exc:
        from nlgeval.errors import DataNotFoundError

        found = re.search(r"Resource '?([\w./-]+)'? not found", str(exc))
        name = found.group(1) if found else "punkt_tab"
        raise DataNotFoundError(
            f"metric 'rougeLsum', option 'split_summaries': NLTK's sentence tokenizer data "
            f"'{name}' is not installed (python -m nltk.downloader {name}); or put one "
            "sentence per line and leave split_summaries off") from None


class RougeLsum(_Rouge):
    """ROUGE-Lsum: summary-level LCS over newline-separated sentences (Lin, 2004, sec. 3.2).

    Examples:
        >>> hyps = ["the cat sat.\\nit slept.", "a dog runs"]
        >>> refs = [["the cat sat.\\nit slept."], ["the dog runs fast"]]
        >>> [round(float(s), 4) for s in RougeLsum().segment_scores(hyps, refs)]
        [100.0, 57.1429]
    """

    name = "rougeLsum"
    rouge_type = "rougeLsum"
    description = "ROUGE-Lsum F (rouge-score; sentences split on newlines), max over references"
    options: ClassVar[dict[str, Option]] = {
        **_Rouge.options,
        "split_summaries": Option(bool, False, "split sentences with nltk.sent_tokenize"),
    }

    def _sents(self, text: str) -> list[list[str]]:
        # rouge_score.RougeScorer.score, rougeLsum branch
        if self.opts["split_summaries"]:
            sents = sentence_split(text)
        else:
            sents = text.split("\n")
        return [self._tok(s) for s in sents if len(s)]

    def _prepare_refs(self, refs: Sequence[str]) -> Any:
        out = []
        for r in refs:
            sents = self._sents(r)
            single = _masks(sents[0]) if len(sents) == 1 else None
            out.append((sents, single))
        return out

    def _segment_stats(self, hyp: str, ref_info: Any) -> Sequence[float]:
        pred = self._sents(hyp)
        scores = []
        for sents, single in ref_info:
            if single is not None and len(pred) == 1:
                scores.append(_lcs_score(single, len(sents[0]), pred[0]))
            else:
                scores.append(tuple(rouge_scorer._summary_level_lcs(sents, pred)))
        return self._best(scores)

