"""TER (Snover et al., 2006) as computed by sacrebleu's Tercom reimplementation (Post, 2018).

Minimum edits (insertions, deletions, substitutions and block shifts) over the references divided
by the average reference length; lower is better. The shift search runs compiled
(:mod:`nlgeval.metrics._ter_fast`) or in sacrebleu's own Python code, with identical numbers.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np
from sacrebleu.metrics import TER
from sacrebleu.metrics.lib_ter import translation_edit_rate

from nlgeval.metrics._sacrebleu import SacreMetric
from nlgeval.metrics.base import Option


class TERMetric(SacreMetric):
    """Translation Edit Rate (Snover et al., 2006) as computed by sacrebleu (Post, 2018); 0-100+,
    lower is better.

    ``engine="fast"`` (default) runs sacrebleu's Tercom-style shift search compiled
    (:mod:`nlgeval.metrics._ter_fast`, same edits for every pair); ``engine="sacrebleu"`` calls
    sacrebleu's own ``translation_edit_rate``. The numbers are identical, so the engine is not
    part of the signature (nor of the score-cache key).

    Examples:
        Equal to ``sacrebleu.corpus_ter`` / ``sacrebleu.sentence_ter``:

        >>> m = TERMetric()
        >>> hyps = ["the cat sat on the mat", "a dog runs"]
        >>> refs = [["the cat sat on the mat"], ["the dog runs fast"]]
        >>> round(m.corpus_score(hyps, refs), 2)
        20.0
        >>> [round(float(s), 2) for s in m.segment_scores(hyps, refs)]
        [0.0, 50.0]
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

    def _preprocess(self, text: str) -> str:
        # TER._preprocess_segment: sacrebleu's Tercom normaliser (its public ``tokenizer``)
        return self.lib_segment.tokenizer(text.rstrip())

    # sacrebleu computes Tercom's shift search against every reference (pure Python, slow with
    # 45 references). We visit references in order of a lower bound on their edit count and
    # stop once the bound reaches the best count found. The result is exactly sacrebleu's:
    # shifts keep the bag of words, so ins/del/sub edits >= max(|h|, |r|) - |bag(h) & bag(r)|,
    # and sacrebleu's beam edit distance can only exceed the exact one, so a skipped reference
    # could never have had strictly fewer edits (sacrebleu keeps the first strict minimum; only
    # the count is used). The fast engine does the same in compiled code.
    def _prepare_refs(self, refs: Sequence[str]) -> Any:
        words = [self._preprocess(r).split() for r in refs]
        ref_lengths = 0
        for w in words:  # same summation as sacrebleu's TER._compute_segment_statistics
            ref_lengths += len(w)
        return words, [Counter(w) for w in words], ref_lengths / len(words)

    def _segment_stats(self, hyp: str, ref_info: Any) -> Sequence[float]:
        words, bags, avg_ref_len = ref_info
        h = self._preprocess(hyp).split()
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

        pre = self._preprocess
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
