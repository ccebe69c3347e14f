"""chrF (Popovic, 2015) and chrF++ (Popovic, 2017) through sacrebleu (Post, 2018).

Character (and word) n-gram F-beta, beta = 2; with several references the score is that of the
reference with the best segment F, as in sacrebleu. All outputs of an item are matched against
all its references at once (:mod:`nlgeval.metrics._chrf_fast`); sacrebleu's own F-score and
best-reference rule decide, so the numbers are sacrebleu's.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from itertools import chain
from typing import Any, ClassVar

import numpy as np
from sacrebleu.metrics import CHRF
from sacrebleu.metrics.helpers import extract_word_ngrams

from nlgeval.metrics._chrf_fast import group_statistics
from nlgeval.metrics._sacrebleu import SacreMetric
from nlgeval.metrics.base import Option


def char_ngrams(
    line: str, max_order: int, include_whitespace: bool = False
) -> list[Counter[str]]:
    """sacrebleu's ``extract_all_char_ngrams`` (same counts) with C-level slicing.

    Examples:
        >>> [dict(c) for c in char_ngrams("ab a", 2)]
        [{'a': 2, 'b': 1}, {'ab': 1, 'ba': 1}]
    """
    if not include_whitespace:
        line = "".join(line.split())
    size = len(line)
    out = [Counter(line)]
    for n in range(2, max_order + 1):
        starts, ends = range(size - n + 1), range(n, size + 1)
        out.append(Counter(map(line.__getitem__, map(slice, starts, ends))))
    return out[:max_order]



class CHRFMetric(SacreMetric):
    """chrF (Popovic, 2015) via sacrebleu; 0-100.

    Examples:
        Equal to ``sacrebleu.corpus_chrf`` / ``sacrebleu.sentence_chrf``:

        >>> m = CHRFMetric()
        >>> hyps = ["the cat sat on the mat", "a dog runs"]
        >>> refs = [["the cat sat on the mat"], ["the dog runs fast"]]
        >>> round(m.corpus_score(hyps, refs), 2)
        76.73
        >>> [round(float(s), 2) for s in m.segment_scores(hyps, refs)]
        [100.0, 43.48]
    """

    name = "chrf"
    description = "chrF (sacrebleu): character n-gram F-score"
    integer_stats = True
    _word_order_default: ClassVar[int] = 0
    options: ClassVar[dict[str, Option]] = {
        "char_order": Option(int, 6, "character n-gram order"),
        "word_order": Option(int, 0, "word n-gram order (2 = chrF++)"),
        "beta": Option(int, 2, "recall weight beta"),
        "lowercase": Option(bool, False, "case-insensitive"),
        "whitespace": Option(bool, False, "keep whitespace in character n-grams"),
        "eps_smoothing": Option(bool, False, "chrF++.py / Moses / NLTK epsilon smoothing"),
    }

    def _make(self, segment: bool) -> CHRF:
        o = self.opts
        return CHRF(
            char_order=o["char_order"],
            word_order=o["word_order"],
            beta=o["beta"],
            lowercase=o["lowercase"],
            whitespace=o["whitespace"],
            eps_smoothing=o["eps_smoothing"],
        )

    # Batches go through _stats_for_groups (all hypotheses of a reference list at once, see
    # nlgeval.metrics._chrf_fast). The per-hypothesis _prepare_refs/_segment_stats below remain
    # the Metric API (and the path for degenerate settings: char_order 0, beta 0).
    # sacrebleu matches the hypothesis against each reference in a Python loop and keeps the
    # reference with the best F (the first on ties). With many references we compute the match
    # counts against all references at once (n-gram count matrices, numpy minimum), find the
    # references whose F is within 1e-9 of the best, and let sacrebleu's own _compute_f_score
    # decide among those, so the chosen statistics -- and the score -- are exactly sacrebleu's.
    _VECTOR_MIN_REFS: ClassVar[int] = 4

    def _preprocess(self, text: str) -> str:
        # CHRF._preprocess_segment: optional lowercasing, nothing else
        return text.lower() if self.opts["lowercase"] else text

    def _hyp_ngrams(self, hyp: str) -> list[Counter[str]]:
        lib = self.lib_segment
        grams = char_ngrams(hyp, lib.char_order, lib.whitespace)
        if lib.word_order > 0:
            words = lib._remove_punctuation(hyp)
            grams.extend(extract_word_ngrams(words, n) for n in range(1, lib.word_order + 1))
        return grams

    def _prepare_refs(self, refs: Sequence[str]) -> Any:
        # CHRF._extract_reference_info with the faster identical n-gram extraction
        lib = self.lib_segment
        ref_list = []
        for ref in refs:
            ref = self._preprocess(ref)
            stats = char_ngrams(ref, lib.char_order, lib.whitespace)
            if lib.word_order > 0:
                words = lib._remove_punctuation(ref)
                stats.extend(extract_word_ngrams(words, n + 1) for n in range(lib.word_order))
            ref_list.append(stats)
        info = {"ref_ngrams": ref_list}
        if len(refs) < self._VECTOR_MIN_REFS:
            return info
        # one count matrix (references x n-grams of every order), column blocks per order
        ref_ngrams = info["ref_ngrams"]
        n_orders = len(ref_ngrams[0])
        vocabs: list[dict[str, int]] = []
        offset = 0
        for o in range(n_orders):
            keys = dict.fromkeys(chain.from_iterable(ref[o] for ref in ref_ngrams))
            vocabs.append(dict(zip(keys, range(offset, offset + len(keys)), strict=True)))
            offset += len(keys)
        mat = np.zeros((len(refs), max(offset, 1)), dtype=np.int64)
        col_order = np.zeros(max(offset, 1), dtype=np.int64)
        ref_tot = np.zeros((len(refs), n_orders), dtype=np.int64)
        rows: list[int] = []
        cols: list[int] = []
        vals: list[int] = []
        for o, vocab in enumerate(vocabs):
            col_order[list(vocab.values())] = o
            for r, ref_grams in enumerate(ref_ngrams):
                grams = ref_grams[o]
                if grams:
                    rows.extend([r] * len(grams))
                    cols.extend(map(vocab.__getitem__, grams))
                    vals.extend(grams.values())
                    ref_tot[r, o] = sum(grams.values())
        mat[rows, cols] = vals
        eye = np.eye(n_orders, dtype=np.int64)
        return {**info, "matrix": (vocabs, mat, col_order, ref_tot, eye)}

    def _segment_stats(self, hyp: str, ref_info: Any) -> Sequence[float]:
        lib = self.lib_segment
        if "matrix" not in ref_info:
            # CHRF._compute_segment_statistics with the faster identical n-gram extraction
            all_hyp = self._hyp_ngrams(self._preprocess(hyp))
            best_stats: list[int] = []
            best_f = -1.0
            for ref_ngrams in ref_info["ref_ngrams"]:
                seg_stats: list[int] = []
                for h, r in zip(all_hyp, ref_ngrams, strict=True):
                    seg_stats.extend(lib._get_match_statistics(h, r))
                f = lib._compute_f_score(seg_stats)
                if f > best_f:
                    best_f, best_stats = f, seg_stats
            return best_stats
        vocabs, mat, col_order, ref_tot, eye = ref_info["matrix"]
        grams = self._hyp_ngrams(self._preprocess(hyp))
        cols: list[int] = []
        counts: list[int] = []
        hyp_tot = []
        for g, vocab in zip(grams, vocabs, strict=True):
            hyp_tot.append(sum(g.values()))
            common = g.keys() & vocab.keys()
            cols.extend(map(vocab.__getitem__, common))
            counts.extend(map(g.__getitem__, common))
        stats = np.empty((len(ref_tot), 3 * len(grams)), dtype=np.int64)
        stats[:, 0::3] = np.where(ref_tot > 0, hyp_tot, 0)
        stats[:, 1::3] = ref_tot
        if cols:
            stats[:, 2::3] = np.minimum(mat[:, cols], counts) @ eye[col_order[cols]]
        else:
            stats[:, 2::3] = 0
        return self._pick(stats, self._f_vector(stats))

    def _stats_for_groups(self, groups: Any) -> list[np.ndarray]:
        """All distinct hypotheses of a reference list at once (``_chrf_fast``): each
        reference's n-grams counted once per item, matches of every (hypothesis, reference)
        pair from count matrices, sacrebleu's F and best-reference rule evaluated exactly."""
        lib = self.lib_segment
        if lib.char_order < 1 or lib.beta == 0:  # degenerate settings: sacrebleu's own loop
            return super()._stats_for_groups(groups)
        pre = self._preprocess
        out = []
        for refs, hyps in groups:
            stats = group_statistics(
                [pre(h) for h in hyps],
                [pre(r) for r in refs],
                char_order=lib.char_order,
                word_order=lib.word_order,
                beta=lib.beta,
                whitespace=lib.whitespace,
                eps_smoothing=lib.eps_smoothing,
                split_words=lib._remove_punctuation,
            )
            out.append(stats.astype(np.float64))
        return out

    def _pick(self, stats: np.ndarray, f: np.ndarray) -> list[int]:
        """The statistics sacrebleu would keep: first reference with the maximum exact F."""
        candidates = np.flatnonzero(f >= f.max() - 1e-9)
        best: list[int] = stats[int(candidates[0])].tolist()
        best_f = -1.0
        for r in candidates.tolist():
            row = stats[r].tolist()
            exact = self.lib_segment._compute_f_score(row)
            if exact > best_f:
                best, best_f = row, exact
        return best

    def _f_vector(self, stats: np.ndarray) -> np.ndarray:
        """sacrebleu's CHRF._compute_f_score for many rows at once (approximate: used only
        to shortlist references; the final choice uses sacrebleu's own function)."""
        eps = 1e-16
        factor = self.opts["beta"] ** 2
        st = stats.astype(float)
        n_hyp, n_ref, n_match = st[:, 0::3], st[:, 1::3], st[:, 2::3]
        hyp_pos, ref_pos = n_hyp > 0, n_ref > 0
        prec = np.divide(n_match, n_hyp, out=np.full_like(n_hyp, eps), where=hyp_pos)
        rec = np.divide(n_match, n_ref, out=np.full_like(n_ref, eps), where=ref_pos)
        if self.opts["eps_smoothing"]:
            denom = factor * prec + rec
            per = np.divide(
                (1 + factor) * prec * rec, denom, out=np.full_like(denom, eps), where=denom > 0
            )
            return 100 * per.sum(axis=1) / n_hyp.shape[1]
        eff = hyp_pos & ref_pos
        k = np.maximum(eff.sum(axis=1), 1)
        ap = (prec * eff).sum(axis=1) / k  # 0 when no effective order, as in sacrebleu
        ar = (rec * eff).sum(axis=1) / k
        denom = factor * ap + ar
        return np.divide(
            100 * (1 + factor) * ap * ar, denom, out=np.zeros_like(denom), where=(ap + ar) > 0
        )


class CHRFPlusPlusMetric(CHRFMetric):
    """chrF++ (Popovic, 2017): chrF with word unigrams and bigrams (``word_order=2``).

    Examples:
        >>> CHRFPlusPlusMetric().opts["word_order"]
        2
    """

    name = "chrf++"
    description = "chrF++ (sacrebleu): chrF plus word 1-2-grams"
    options: ClassVar[dict[str, Option]] = {
        **CHRFMetric.options,
        "word_order": Option(int, 2, "word n-gram order (2 = chrF++)"),
    }
