"""BLEU, chrF, chrF++ and TER through sacrebleu (Post, 2018).

The adapters call sacrebleu's own building blocks -- ``_preprocess_segment``,
``_extract_reference_info``, ``_compute_segment_statistics`` and ``_aggregate_and_compute`` --
exactly as ``sacrebleu.sentence_bleu``/``corpus_bleu`` do, so scores are identical to sacrebleu's,
but each distinct reference list is tokenised and n-gram-counted once and shared by all systems
(sacrebleu's ``references=`` caching, generalised to any order of segments).

* BLEU (Papineni et al., 2002). Segment level = ``sacrebleu.sentence_bleu`` defaults
  (exponential smoothing, *effective order*); corpus level = ``sacrebleu.corpus_bleu`` defaults
  (no effective order), from the summed segment statistics.
* chrF (Popovic, 2015) and chrF++ (Popovic, 2017; ``word_order=2``): character (and word) n-gram
  F-beta, beta = 2; multi-reference = the reference with the best segment F. All outputs of an
  item are matched against all its references at once (:mod:`nlgeval.metrics._chrf_fast`).
* TER (Snover et al., 2006), sacrebleu's Tercom reimplementation: minimum edits over the
  references divided by the average reference length.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from itertools import chain
from typing import Any, ClassVar

import numpy as np
from sacrebleu.metrics import BLEU, CHRF, TER
from sacrebleu.metrics.bleu import _TOKENIZERS
from sacrebleu.metrics.helpers import extract_word_ngrams
from sacrebleu.metrics.lib_ter import translation_edit_rate
from sacrebleu.tokenizers.tokenizer_re import TokenizerRegexp

from nlgeval.metrics._chrf_fast import group_statistics
from nlgeval.metrics.base import Metric, Option


def _signature(lib: Any, nrefs: str | None) -> str:
    """sacrebleu's signature string for ``lib`` (without ``nrefs`` when unknown)."""
    args = dict(lib.__dict__)
    args["num_refs"] = 1
    sig = lib._SIGNATURE_TYPE(args)
    if nrefs is None:
        sig.info.pop("nrefs", None)
    else:
        sig.info["nrefs"] = nrefs
    return sig.format()


class _SacreMetric(Metric):
    """Common machinery of the sacrebleu adapters.

    ``_lib_seg`` is the sacrebleu object configured for segment scores (sentence_* defaults),
    ``_lib_corpus`` the one for corpus scores (corpus_* defaults).
    """

    _lib_seg: Any = None
    _lib_corpus: Any = None

    def _make(self, segment: bool) -> Any:  # pragma: no cover - abstract
        raise NotImplementedError

    @property
    def lib_segment(self) -> Any:
        if self._lib_seg is None:
            self._lib_seg = self._make(segment=True)
        return self._lib_seg

    @property
    def lib_corpus(self) -> Any:
        if self._lib_corpus is None:
            self._lib_corpus = self._make(segment=False)
        return self._lib_corpus

    @property
    def config_signature(self) -> str:
        seg = _signature(self.lib_segment, None)
        corp = _signature(self.lib_corpus, None)
        extra = "" if seg == corp else f"|segment:[{seg}]"
        return f"{self.name}|{corp}{extra}"

    @property
    def signature(self) -> str:
        """sacrebleu's signature of the corpus-level score, e.g.
        ``nrefs:4|case:mixed|eff:no|tok:13a|smooth:exp|version:2.6.0``."""
        return _signature(self.lib_corpus, self._nrefs_label())

    @property
    def segment_signature(self) -> str:
        """sacrebleu's signature of the segment-level scores (e.g. ``eff:yes`` for BLEU)."""
        return _signature(self.lib_segment, self._nrefs_label())

    def _prepare_refs(self, refs: Sequence[str]) -> Any:
        lib = self.lib_segment
        return lib._extract_reference_info([lib._preprocess_segment(r) for r in refs])

    def _segment_stats(self, hyp: str, ref_info: Any) -> Sequence[float]:
        lib = self.lib_segment
        return lib._compute_segment_statistics(lib._preprocess_segment(hyp), ref_info)

    def _rows(self, stats: np.ndarray) -> list[list[Any]]:
        if self.integer_stats:
            return np.rint(stats).astype(np.int64).tolist()
        return stats.tolist()

    def _segment_from_stats(self, stats: np.ndarray) -> np.ndarray:
        agg = self.lib_segment._aggregate_and_compute
        return np.array([agg([row]).score for row in self._rows(stats)], dtype=np.float64)

    def _corpus_from_stats(self, stats: np.ndarray) -> float:
        if self.integer_stats:
            # integer counts: numpy's sum is exact, so this equals sacrebleu's sum_of_lists
            total = np.rint(stats.sum(axis=0)).astype(np.int64).tolist()
            return float(self.lib_corpus._compute_score_from_stats(total).score)
        # float statistics (TER): sacrebleu's own summation order
        return float(self.lib_corpus._aggregate_and_compute(self._rows(stats)).score)


class Fast13a:
    """sacrebleu's ``13a`` tokenizer (mteval-v13a), same output, about 3x faster on CPython 3.11.

    sacrebleu's first rule puts spaces around every character of a fixed ASCII class (including
    the space itself) with ``re.sub(..., r' \\1 ')``, which calls a Python-level template
    expansion for every match. A single-character rule with no context is exactly
    ``str.translate``; the table is built by asking sacrebleu's own compiled pattern about every
    ASCII character. The other three rules (context-dependent) use sacrebleu's patterns as is.
    Equality with sacrebleu is tested on every text of the E2E and WebNLG corpora and on random
    strings (tests/test_metrics.py).
    """

    def __init__(self) -> None:
        rules = TokenizerRegexp()._re
        first, _ = rules[0]
        self._table = str.maketrans(
            {chr(i): f" {chr(i)} " for i in range(128) if first.fullmatch(chr(i))}
        )
        self._rules = rules[1:]

    def __call__(self, line: str) -> str:
        # Tokenizer13a.__call__
        line = line.replace("<skipped>", "")
        line = line.replace("-\n", "")
        line = line.replace("\n", " ")
        if "&" in line:
            line = line.replace("&quot;", '"')
            line = line.replace("&amp;", "&")
            line = line.replace("&lt;", "<")
            line = line.replace("&gt;", ">")
        # TokenizerRegexp.__call__
        line = f" {line} ".translate(self._table)
        for pattern, repl in self._rules:
            line = pattern.sub(repl, line)
        return " ".join(line.split())


def char_ngrams(
    line: str, max_order: int, include_whitespace: bool = False
) -> list[Counter[str]]:
    """sacrebleu's ``extract_all_char_ngrams`` (same counts) with C-level slicing."""
    if not include_whitespace:
        line = "".join(line.split())
    size = len(line)
    out = [Counter(line)]
    for n in range(2, max_order + 1):
        starts, ends = range(size - n + 1), range(n, size + 1)
        out.append(Counter(map(line.__getitem__, map(slice, starts, ends))))
    return out[:max_order]


def word_ngrams(tokens: list[str], max_order: int) -> Counter[tuple[str, ...]]:
    """sacrebleu's ``extract_all_word_ngrams`` (same keys, counts and order) with C-level zips."""
    return Counter(
        chain.from_iterable(
            zip(*[tokens[k:] for k in range(n)], strict=False) for n in range(1, max_order + 1)
        )
    )


class BLEUMetric(_SacreMetric):
    """BLEU (Papineni et al., 2002) via sacrebleu; 0-100."""

    name = "bleu"
    description = "BLEU (sacrebleu): segment = sentence_bleu, corpus = corpus_bleu"
    integer_stats = True
    options: ClassVar[dict[str, Option]] = {
        "lowercase": Option(bool, False, "lowercase hypotheses and references"),
        "tokenize": Option(str, "13a", "sacrebleu tokenizer", tuple(_TOKENIZERS)),
        "smooth_method": Option(str, "exp", "smoothing", ("exp", "floor", "add-k", "none")),
        "smooth_value": Option(float, None, "value for floor / add-k smoothing"),
        "max_ngram_order": Option(int, 4, "maximum n-gram order"),
        "effective_order": Option(bool, False, "effective order for the corpus score"),
        "sentence_effective_order": Option(
            bool, True, "effective order for segment scores (sacrebleu.sentence_bleu default)"
        ),
    }

    def _make(self, segment: bool) -> BLEU:
        o = self.opts
        return BLEU(
            lowercase=o["lowercase"],
            tokenize=o["tokenize"],
            smooth_method=o["smooth_method"],
            smooth_value=o["smooth_value"],
            max_ngram_order=o["max_ngram_order"],
            effective_order=o["sentence_effective_order"] if segment else o["effective_order"],
            force=True,  # no "tokenized period" warnings; does not change the numbers
        )

    _lib_fasttok: Any = None

    def _tokens(self, text: str) -> list[str]:
        # BLEU._preprocess_segment, with the faster identical 13a tokenizer
        if self.opts["lowercase"]:
            text = text.lower()
        if self.opts["tokenize"] == "13a":
            if self._lib_fasttok is None:
                self._lib_fasttok = Fast13a()
            return self._lib_fasttok(text.rstrip()).split()
        return self.lib_segment.tokenizer(text.rstrip()).split()

    def _prepare_refs(self, refs: Sequence[str]) -> Any:
        # BLEU._extract_reference_info
        n_max = self.opts["max_ngram_order"]
        ngrams: Counter[tuple[str, ...]] | None = None
        ref_lens = []
        for ref in refs:
            toks = self._tokens(ref)
            this = word_ngrams(toks, n_max)
            ref_lens.append(len(toks))
            if ngrams is None:
                ngrams = this
            else:
                for g, c in this.items():
                    ngrams[g] = max(ngrams[g], c)
        return {"ref_ngrams": ngrams, "ref_lens": ref_lens}

    def _segment_stats(self, hyp: str, ref_info: Any) -> Sequence[float]:
        # BLEU._compute_segment_statistics
        n_max = self.opts["max_ngram_order"]
        ref_ngrams, ref_lens = ref_info["ref_ngrams"], ref_info["ref_lens"]
        toks = self._tokens(hyp)
        ref_len = self.lib_segment._get_closest_ref_len(len(toks), ref_lens)
        correct = [0] * n_max
        total = [0] * n_max
        for g, c in word_ngrams(toks, n_max).items():
            n = len(g) - 1
            total[n] += c
            if g in ref_ngrams:
                correct[n] += min(c, ref_ngrams[g])
        return [len(toks), ref_len, *correct, *total]

    def _check_options(self) -> None:
        if self.opts["max_ngram_order"] < 1:
            from nlgeval.errors import InputError

            raise InputError("metric 'bleu', option 'max_ngram_order': must be at least 1")


class CHRFMetric(_SacreMetric):
    """chrF (Popovic, 2015) via sacrebleu; 0-100."""

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
            ref = lib._preprocess_segment(ref)
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
            for r, ref in enumerate(ref_ngrams):
                grams = ref[o]
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
            all_hyp = self._hyp_ngrams(lib._preprocess_segment(hyp))
            best_stats: list[int] = []
            best_f = -1.0
            for ref_ngrams in ref_info["ref_ngrams"]:
                stats = []
                for h, r in zip(all_hyp, ref_ngrams, strict=True):
                    stats.extend(lib._get_match_statistics(h, r))
                f = lib._compute_f_score(stats)
                if f > best_f:
                    best_f, best_stats = f, stats
            return best_stats
        vocabs, mat, col_order, ref_tot, eye = ref_info["matrix"]
        grams = self._hyp_ngrams(lib._preprocess_segment(hyp))
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
        pre = lib._preprocess_segment
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
    """chrF++ (Popovic, 2017): chrF with word unigrams and bigrams (``word_order=2``)."""

    name = "chrf++"
    description = "chrF++ (sacrebleu): chrF plus word 1-2-grams"
    options: ClassVar[dict[str, Option]] = {
        **CHRFMetric.options,
        "word_order": Option(int, 2, "word n-gram order (2 = chrF++)"),
    }


class TERMetric(_SacreMetric):
    """Translation Edit Rate (Snover et al., 2006) as computed by sacrebleu (Post, 2018); 0-100+,
    lower is better.

    ``engine="fast"`` (default) runs sacrebleu's Tercom-style shift search compiled
    (:mod:`nlgeval.metrics._ter_fast`, same edits for every pair); ``engine="sacrebleu"`` calls
    sacrebleu's own ``translation_edit_rate``. The numbers are identical, so the engine is not
    part of the signature (nor of the score-cache key).
    """

    name = "ter"
    higher_is_better = False
    description = "TER (sacrebleu): edits per reference word, lower is better"
    parallel_threshold = 300
    options: ClassVar[dict[str, Option]] = {
        "normalized": Option(bool, False, "Tercom normalisation"),
        "no_punct": Option(bool, False, "remove punctuation"),
        "asian_support": Option(bool, False, "CJK support"),
        "case_sensitive": Option(bool, False, "do not lowercase"),
        "engine": Option(
            str,
            "fast",
            "shift search: fast (compiled) or sacrebleu (its Python code); identical numbers",
            ("fast", "sacrebleu"),
        ),
    }

    def _check_options(self) -> None:
        if self.opts["engine"] == "fast":
            # the compiled search is >100x faster per pair (~0.3-0.5 ms per hypothesis), so a
            # process pool (each worker loads numba and the kernels, ~0.5-1 s) pays off only
            # from a few thousand distinct hypotheses on
            self.parallel_threshold = 4000

    def _make(self, segment: bool) -> TER:
        return TER(**{k: v for k, v in self.opts.items() if k != "engine"})

    # sacrebleu computes Tercom's shift search against every reference (pure Python, slow with
    # 45 references). We visit references in order of a lower bound on their edit count and
    # stop once the bound reaches the best count found. The result is exactly sacrebleu's:
    # shifts keep the bag of words, so ins/del/sub edits >= max(|h|, |r|) - |bag(h) & bag(r)|,
    # and sacrebleu's beam edit distance can only exceed the exact one, so a skipped reference
    # could never have had strictly fewer edits (sacrebleu keeps the first strict minimum; only
    # the count is used). The fast engine does the same in compiled code.
    def _prepare_refs(self, refs: Sequence[str]) -> Any:
        lib = self.lib_segment
        words = [lib._preprocess_segment(r).split() for r in refs]
        ref_lengths = 0
        for w in words:  # same summation as sacrebleu's TER._compute_segment_statistics
            ref_lengths += len(w)
        return words, [Counter(w) for w in words], ref_lengths / len(words)

    def _segment_stats(self, hyp: str, ref_info: Any) -> Sequence[float]:
        words, bags, avg_ref_len = ref_info
        h = self.lib_segment._preprocess_segment(hyp).split()
        if self.opts["engine"] == "fast":
            from nlgeval.metrics._ter_fast import group_min_edits  # numba: imported on use

            return [int(group_min_edits([(words, [h])])[0][0]), avg_ref_len]
        hb = Counter(h)
        bounds = [
            max(len(h), len(w)) - sum((hb & b).values()) for w, b in zip(words, bags, strict=True)
        ]
        best = int(1e16)
        for k in sorted(range(len(words)), key=bounds.__getitem__):
            if bounds[k] >= best:
                break
            num_edits, _ = translation_edit_rate(h, words[k])
            if num_edits < best:
                best = num_edits
        return [best, avg_ref_len]

    def _stats_for_groups(self, groups: Any) -> list[np.ndarray]:
        """Fast engine: every (references, hypotheses) group tokenised by sacrebleu, then one
        compiled call for all pairs (:func:`nlgeval.metrics._ter_fast.group_min_edits`)."""
        if self.opts["engine"] != "fast":
            return super()._stats_for_groups(groups)
        from nlgeval.metrics._ter_fast import group_min_edits  # numba: imported on use

        pre = self.lib_segment._preprocess_segment
        tokenised = []
        avg_lens = []
        for refs, hyps in groups:
            words = [pre(r).split() for r in refs]
            ref_lengths = 0
            for w in words:  # same summation as sacrebleu's TER._compute_segment_statistics
                ref_lengths += len(w)
            avg_lens.append(ref_lengths / len(words))
            tokenised.append((words, [pre(h).split() for h in hyps]))
        out = []
        for edits, avg in zip(group_min_edits(tokenised), avg_lens, strict=True):
            stats = np.empty((len(edits), 2), dtype=np.float64)
            stats[:, 0] = edits
            stats[:, 1] = avg
            out.append(stats)
        return out
