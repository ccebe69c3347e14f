"""Two simple descriptive metrics: normalised edit distance and output length.

* ``edit_distance``: Levenshtein distance (Levenshtein, 1966) divided by the length of the
  longer string, i.e. in [0, 1]; minimum over the references; lower is better. Computed with
  RapidFuzz (``rapidfuzz.distance.Levenshtein.normalized_distance``), at character level by
  default or over 13a tokens with ``level=word``. Corpus score = mean segment distance.
  (Novikova et al. 2017 report a similar ``lev.dist`` column.)
* ``length``: number of tokens of the output (sacrebleu 13a tokenizer by default, whitespace
  with ``tokenize=none``); corpus score = mean length. It ignores the references. It has no
  "better" direction; ``higher_is_better`` is set to True only because the interface needs a
  value -- do not read a ranking into it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np

from nlgeval.metrics._sacrebleu import TOKENIZERS, sacrebleu_tokenizer
from nlgeval.metrics.base import Metric, Option


class _Tokenising(Metric):
    _lib_tok: Any = None

    def _tokens(self, text: str) -> list[str]:
        if self.opts.get("lowercase"):
            text = text.lower()
        name = self.opts["tokenize"]
        if name == "none":
            return text.split()
        if self._lib_tok is None:
            self._lib_tok = sacrebleu_tokenizer(self.name, name)
        return self._lib_tok(text.rstrip()).split()


class EditDistanceMetric(_Tokenising):
    """Normalised Levenshtein distance to the closest reference (0 = identical).

    Examples:
        >>> hyps = ["the cat sat on the mat", "a dog runs"]
        >>> refs = [["the cat sat on the mat"], ["the dog runs fast"]]
        >>> [round(float(s), 4) for s in EditDistanceMetric().segment_scores(hyps, refs)]
        [0.0, 0.4706]
        >>> words = EditDistanceMetric(level="word")
        >>> [round(float(s), 4) for s in words.segment_scores(hyps, refs)]
        [0.0, 0.5]
    """

    name = "edit_distance"
    higher_is_better = False
    description = "normalised Levenshtein distance to the closest reference (lower is better)"
    parallel_threshold = 20_000  # RapidFuzz is C++; processes rarely pay off
    options: ClassVar[dict[str, Option]] = {
        "level": Option(str, "char", "char or word", ("char", "word")),
        "lowercase": Option(bool, False, "case-insensitive"),
        "tokenize": Option(str, "13a", "tokenizer for level=word", ("none", *TOKENIZERS)),
    }

    @property
    def config_signature(self) -> str:
        import rapidfuzz  # on first use: a run that never asks for edit_distance never loads it

        o = self.opts
        tok = o["tokenize"] if o["level"] == "word" else "none"
        return (
            f"edit_distance|level:{o['level']}|case:{'lc' if o['lowercase'] else 'mixed'}"
            f"|tok:{tok}|norm:max-len|multiref:min|version:rapidfuzz-{rapidfuzz.__version__}"
        )

    @property
    def signature(self) -> str:
        n = self._nrefs_label()
        return (f"nrefs:{n}|" if n else "") + self.config_signature

    def _prep(self, text: str) -> Any:
        if self.opts["level"] == "word":
            return self._tokens(text)
        return text.lower() if self.opts["lowercase"] else text

    def _prepare_refs(self, refs: Sequence[str]) -> Any:
        return [self._prep(r) for r in refs]

    def _segment_stats(self, hyp: str, ref_info: Any) -> Sequence[float]:
        from rapidfuzz.distance import Levenshtein

        h = self._prep(hyp)
        return [min(Levenshtein.normalized_distance(h, r) for r in ref_info)]

    def _segment_from_stats(self, stats: np.ndarray) -> np.ndarray:
        return stats[:, 0].copy()

    def _corpus_from_stats(self, stats: np.ndarray) -> float:
        return float(np.mean(stats[:, 0]))


class LengthMetric(_Tokenising):
    """Output length in tokens (descriptive; references ignored).

    Examples:
        >>> hyps = ["the cat sat on the mat.", "a dog runs"]
        >>> refs = [["x"], ["y"]]
        >>> LengthMetric().segment_scores(hyps, refs).tolist()
        [7.0, 3.0]
        >>> LengthMetric().corpus_score(hyps, refs)
        5.0
    """

    name = "length"
    description = "output length in tokens (descriptive; references are ignored)"
    parallel_threshold = 10**9  # cheaper than starting processes
    options: ClassVar[dict[str, Option]] = {
        "tokenize": Option(str, "13a", "tokenizer (none = whitespace)", ("none", *TOKENIZERS)),
    }

    @property
    def config_signature(self) -> str:
        return f"length|tok:{self.opts['tokenize']}|unit:tokens|corpus:mean"

    def _prepare_refs(self, refs: Sequence[str]) -> Any:
        return None

    def _segment_stats(self, hyp: str, ref_info: Any) -> Sequence[float]:
        return [float(len(self._tokens(hyp)))]

    def _segment_from_stats(self, stats: np.ndarray) -> np.ndarray:
        return stats[:, 0].copy()

    def _corpus_from_stats(self, stats: np.ndarray) -> float:
        return float(np.mean(stats[:, 0]))
