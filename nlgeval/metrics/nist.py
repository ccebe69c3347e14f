"""NIST (Doddington, 2002) as computed by the official ``mteval-v13a.pl``.

Written by hand rather than calling ``nltk.translate.nist_score`` because NLTK's version differs
from mteval on multiple references: NLTK scores each segment against its single *best*
reference and sums that reference's length, while mteval (what the E2E challenge and the
literature report) clips each hypothesis n-gram by its maximum count over *all* references and
uses the average reference length in the length penalty. With several references the two give
different numbers (e.g. E2E TGen: mteval 8.6094).

mteval-v13a, step by step (``compute_ngram_info``, ``score_segment``, ``nist_score``):

1. Text is normalised with the v13a tokenizer (sacrebleu's ``13a``) and lowercased as mteval
   does by default, ASCII letters only (``tr/[A-Z]/[a-z]/``: ``É`` stays ``É``);
   ``lowercase=false`` is mteval's ``-c``.
2. Information weights from every reference n-gram of the scored corpus (n = 1..5):
   ``info(w1..wn) = -log2(count(w1..wn) / count(w1..wn-1))``, the unigram denominator being the
   total number of reference words.
3. Per segment, each hypothesis n-gram earns ``info * min(count in hyp, max count in any ref)``.
4. Score = sum over n of (total info of order n / number of hypothesis n-grams of order n),
   times the length penalty ``exp(-beta log^2(min(1, L_sys / L_ref)))`` with
   ``beta = -log(0.5) / log(1.5)^2``, ``L_ref`` = total reference words / number of references.
   mteval needs every segment to have the same number of references; where they differ (E2E)
   the shorter lists are padded with empty references (as e2e-metrics does), so the number of
   references is the largest per-segment count.

Segment scores use the same formula with information weights from that segment's own references
(mteval itself prints no per-segment NIST; this keeps each segment score a function of its own
texts, so it can be cached). The corpus score is always computed with corpus-wide weights.
"""

from __future__ import annotations

import math
import string
from collections import Counter
from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np
import sacrebleu

from nlgeval.metrics._sacrebleu import TOKENIZERS, sacrebleu_tokenizer
from nlgeval.metrics.base import Metric, Option

_BETA = -math.log(0.5) / math.log(1.5) / math.log(1.5)
#: mteval-v13a's ``tr/[A-Z]/[a-z]/``
_ASCII_LOWER = str.maketrans(string.ascii_uppercase, string.ascii_lowercase)


def nist_length_penalty(ratio: float) -> float:
    """mteval's ``nist_length_penalty``.

    Examples:
        >>> nist_length_penalty(1.2)
        1.0
        >>> round(nist_length_penalty(2 / 3), 4)
        0.5
    """
    if ratio >= 1:
        return 1.0
    if ratio <= 0:
        return 0.0
    return math.exp(-_BETA * math.log(ratio) * math.log(ratio))


def _ngrams(tokens: Sequence[str], max_n: int) -> Counter[tuple[str, ...]]:
    c: Counter[tuple[str, ...]] = Counter()
    for n in range(1, max_n + 1):
        for i in range(len(tokens) - n + 1):
            c[tuple(tokens[i : i + n])] += 1
    return c


def information_weights(
    ngram_count: Counter[tuple[str, ...]], total_words: int
) -> dict[tuple[str, ...], float]:
    """mteval's ``compute_ngram_info`` (Doddington, 2002, eq. 2).

    Examples:
        Doddington (2002): a bigram seen once after a unigram seen twice carries log2(2) = 1
        bit:

        >>> from collections import Counter
        >>> w = information_weights(Counter({("a",): 2, ("b",): 2, ("a", "b"): 1}), 4)
        >>> w[("a",)], w[("a", "b")]
        (1.0, 1.0)
    """
    out = {}
    for g, c in ngram_count.items():
        denom = ngram_count[g[:-1]] if len(g) > 1 else total_words
        out[g] = -math.log(c / denom) / math.log(2)
    return out


class _RefData:
    __slots__ = ("counts", "max_counts", "words", "n_refs")

    def __init__(self, ref_tokens: list[list[str]], max_n: int) -> None:
        self.counts: Counter[tuple[str, ...]] = Counter()
        self.max_counts: dict[tuple[str, ...], int] = {}
        self.words = 0
        self.n_refs = len(ref_tokens)
        for toks in ref_tokens:
            c = _ngrams(toks, max_n)
            self.counts.update(c)
            self.words += len(toks)
            mc = self.max_counts
            for g, k in c.items():
                if k > mc.get(g, 0):
                    mc[g] = k


class NISTMetric(Metric):
    """NIST, mteval-v13a compatible (see module docstring).

    Examples:
        Equal to nltk's ``corpus_nist`` with one reference per segment :

        >>> hyps = ["the cat sat on the mat", "a dog runs"]
        >>> refs = [["the cat sat on the mat"], ["the dog runs fast"]]
        >>> round(NISTMetric().corpus_score(hyps, refs), 4)
        2.9138
        >>> from nltk.translate.nist_score import corpus_nist
        >>> round(corpus_nist([[r[0].split()] for r in refs], [h.split() for h in hyps], 5), 4)
        2.9138
    """

    name = "nist"
    description = "NIST (mteval-v13a compatible): information-weighted n-gram precision"
    options: ClassVar[dict[str, Option]] = {
        "max_ngram_order": Option(int, 5, "maximum n-gram order"),
        "lowercase": Option(bool, True, "lowercase (mteval default; false = mteval -c)"),
        "tokenize": Option(str, "13a", "sacrebleu tokenizer (13a = mteval-v13a)"),
    }
    _lib_tok: Any = None
    _lib_refcache: Any = None
    _lib_weightcache: Any = None

    def _check_options(self) -> None:
        from nlgeval.errors import InputError

        if self.opts["max_ngram_order"] < 1:
            raise InputError("metric 'nist', option 'max_ngram_order': must be at least 1")
        if self.opts["tokenize"] not in TOKENIZERS:
            raise InputError(
                f"metric 'nist', option 'tokenize': expected one of {', '.join(TOKENIZERS)}"
            )

    @property
    def config_signature(self) -> str:
        o = self.opts
        case = "lc" if o["lowercase"] else "mixed"
        # version 2: lowercasing is mteval's (ASCII letters only); a new cache key
        return (
            f"nist|n:{o['max_ngram_order']}|case:{case}|tok:{o['tokenize']}|info:mteval-v13a"
            f"|version:nlgeval-nist-2+sacrebleu-{sacrebleu.__version__}"
        )

    @property
    def signature(self) -> str:
        n = self._nrefs_label()
        return (f"nrefs:{n}|" if n else "") + self.config_signature

    def tokenize(self, text: str) -> list[str]:
        """mteval-v13a's ``NormalizeText``: SGML entities, then ``tr/[A-Z]/[a-z]/`` (ASCII
        letters only: ``É`` stays ``É``) unless ``lowercase=false``, then the punctuation rules.
        Lowercasing ASCII letters after sacrebleu's 13a rules is the same (no rule looks at
        letter case).

        Examples:
            >>> NISTMetric().tokenize("MÜNCHEN &QUOT;Éric&quot; sat.")
            ['mÜnchen', '&', 'quot', ';', 'Éric', '"', 'sat', '.']
        """
        if self._lib_tok is None:
            self._lib_tok = sacrebleu_tokenizer(self.name, self.opts["tokenize"])
        line = self._lib_tok(text.rstrip())
        if self.opts["lowercase"]:
            line = line.translate(_ASCII_LOWER)
        return line.split()

    def _ref_data(self, refs: Sequence[str]) -> _RefData:
        if self._lib_refcache is None:
            self._lib_refcache = {}
        key = tuple(refs)
        d = self._lib_refcache.get(key)
        if d is None:
            d = _RefData([self.tokenize(r) for r in refs], self.opts["max_ngram_order"])
            if len(self._lib_refcache) > 50_000:
                self._lib_refcache.clear()
            self._lib_refcache[key] = d
        return d

    def _hyp_stats(
        self, hyp: str, d: _RefData, weights: dict[tuple[str, ...], float]
    ) -> list[float]:
        n_max = self.opts["max_ngram_order"]
        toks = self.tokenize(hyp)
        info = [0.0] * n_max
        for g, c in _ngrams(toks, n_max).items():
            m = d.max_counts.get(g)
            if m:
                info[len(g) - 1] += weights[g] * min(c, m)
        counts = [float(max(len(toks) - n + 1, 0)) for n in range(1, n_max + 1)]
        return info + counts + [float(d.words), float(d.n_refs)]

    def _score(self, row: Sequence[float], n_refs: float | None = None) -> float:
        n_max = self.opts["max_ngram_order"]
        info, counts = row[:n_max], row[n_max : 2 * n_max]
        ref_words = row[2 * n_max]
        nref = row[2 * n_max + 1] if n_refs is None else n_refs
        score = 0.0
        for n in range(n_max):
            score += info[n] / max(counts[n], 1)
        ref_len = ref_words / nref if nref else 0.0
        ratio = counts[0] / ref_len if ref_len > 0 else (1.0 if counts[0] > 0 else 0.0)
        return score * nist_length_penalty(ratio)

    # -- segment level: weights from the segment's own references
    def _prepare_refs(self, refs: Sequence[str]) -> Any:
        d = self._ref_data(refs)
        return d, information_weights(d.counts, d.words)

    def _segment_stats(self, hyp: str, ref_info: Any) -> Sequence[float]:
        d, weights = ref_info
        return self._hyp_stats(hyp, d, weights)

    def _segment_from_stats(self, stats: np.ndarray) -> np.ndarray:
        return np.array([self._score(row) for row in stats.tolist()], dtype=np.float64)

    def _corpus_from_stats(self, stats: np.ndarray) -> float:  # pragma: no cover - unused
        raise NotImplementedError("NIST needs the texts for corpus-wide information weights")

    # -- corpus level: corpus-wide weights (mteval)
    def _corpus_weights(self, data: list[_RefData]) -> dict[tuple[str, ...], float]:
        """Information weights of these references, remembered: every system of a corpus
        rated on the same items has the same references (one computation, not one per
        system). The entry keeps its ``_RefData`` objects alive, so their ids stay theirs.

        Examples:
            One metric object scoring several reference sets gives what fresh objects give:

            >>> m, hyps = NISTMetric(), ["the cat ran"]
            >>> [m.corpus_from_stats(None, hyps, r) == NISTMetric().corpus_from_stats(None, hyps, r)
            ...  for r in ([["the cat sat"]], [["a dog ran fast"]], [["the cat sat"]])]
            [True, True, True]
        """
        if self._lib_weightcache is None:
            self._lib_weightcache = {}
        key = tuple(map(id, data))
        hit = self._lib_weightcache.get(key)
        if hit is None:
            counts: Counter[tuple[str, ...]] = Counter()
            words = 0
            for d in data:
                counts.update(d.counts)
                words += d.words
            if len(self._lib_weightcache) >= 64:
                self._lib_weightcache.clear()
            hit = self._lib_weightcache[key] = (tuple(data), information_weights(counts, words))
        return hit[1]

    def corpus_from_stats(
        self, stats: np.ndarray, hyps: Sequence[str], refs: Sequence[Sequence[str]]
    ) -> float:
        data = [self._ref_data(r) for r in refs]
        weights = self._corpus_weights(data)
        total = np.zeros(2 * self.opts["max_ngram_order"] + 2)
        for h, d in zip(hyps, data, strict=True):
            total += np.asarray(self._hyp_stats(h, d, weights))
        n_refs = max(len(r) for r in refs)
        return float(self._score(total.tolist(), n_refs=n_refs))
