"""What the sacrebleu adapters share: the signature, the configured sacrebleu objects, and the
list of sacrebleu's private parts they still rely on.

sacrebleu (Post, 2018) scores from per-segment *sufficient statistics*, but its public API only
takes texts. To tokenise and count each reference list once for every system (and to cache the
statistics on disk) the adapters need the steps in between. Wherever sacrebleu offers a public
function or attribute for a step (``BLEU.compute_bleu``, ``BLEU.TOKENIZERS``, ``tokenizer``,
``get_signature``) the adapters use it; the remaining private parts are listed in
:data:`PRIVATE_API`, pinned by an upper bound on sacrebleu in ``pyproject.toml`` and checked by
:func:`check_private_api` (a test calls it, so a sacrebleu release that renames or drops one of
them fails loudly, naming it).
"""

from __future__ import annotations

import copy
import inspect
from collections.abc import Callable
from typing import Any, TypeVar

import numpy as np
import sacrebleu
from sacrebleu.metrics import BLEU, CHRF, TER
from sacrebleu.tokenizers.tokenizer_re import TokenizerRegexp

from nlgeval.errors import InputError
from nlgeval.metrics.base import Metric

_T = TypeVar("_T")

#: sacrebleu's private parts used by the adapters: (owner, attribute, parameters it must take).
#: ``TokenizerRegexp._re``: the 13a rules (``bleu.Fast13a``); chrF's n-gram matching, F-score
#: and best-reference rule; chrF's and TER's score from summed statistics (their own
#: summation order keeps float TER statistics bit-identical).
PRIVATE_API: tuple[tuple[type, str, tuple[str, ...]], ...] = (
    (TokenizerRegexp, "_re", ()),
    (CHRF, "_remove_punctuation", ("sent",)),
    (CHRF, "_get_match_statistics", ("hyp_ngrams", "ref_ngrams")),
    (CHRF, "_compute_f_score", ("statistics",)),
    (CHRF, "_aggregate_and_compute", ("stats",)),
    (CHRF, "_compute_score_from_stats", ("stats",)),
    (TER, "_aggregate_and_compute", ("stats",)),
    (TER, "_compute_score_from_stats", ("stats",)),
)

#: sacrebleu versions the private parts were checked against (the bound in pyproject.toml).
TESTED_VERSIONS = ">=2.4,<2.7"


def check_private_api() -> None:
    """Raise ``RuntimeError`` naming every private sacrebleu attribute that changed.

    Examples:
        >>> check_private_api()  # passes with a sacrebleu release this version was tested with
    """
    problems = []
    for owner, attr, params in PRIVATE_API:
        where = f"sacrebleu {owner.__module__}.{owner.__name__}.{attr}"
        if attr == "_re":  # an instance attribute, set by the constructor
            if not isinstance(getattr(owner(), attr, None), list):
                problems.append(f"{where} (a list of (pattern, replacement) rules) is missing")
            continue
        fn = getattr(owner, attr, None)
        if not callable(fn):
            problems.append(f"{where} is missing")
            continue
        got = [p for p in inspect.signature(fn).parameters if p != "self"]
        if tuple(got) != params:
            problems.append(f"{where} takes ({', '.join(got)}), expected ({', '.join(params)})")
    if problems:
        raise RuntimeError(
            f"sacrebleu {sacrebleu.__version__} changed parts nlgeval's adapters rely on "
            f"(tested: sacrebleu{TESTED_VERSIONS}): " + "; ".join(problems))


#: sacrebleu's tokenizers that need no optional package (the others need MeCab or
#: sentencepiece, and the flores ones a model file)
PLAIN_TOKENIZERS = ("none", "zh", "13a", "intl", "char")

#: every tokenizer name sacrebleu knows, in its order (its public ``BLEU.TOKENIZERS``)
TOKENIZERS: tuple[str, ...] = tuple(BLEU.TOKENIZERS)


def sacrebleu_tokenizer(metric: str, tokenize: str) -> Callable[[str], str]:
    """sacrebleu's tokenizer ``tokenize`` (a name in :data:`TOKENIZERS`): the object BLEU
    itself tokenises with (its public ``BLEU(tokenize=...).tokenizer``), with a missing optional
    package turned into one :class:`InputError` line by :func:`with_tokenizer`.

    Examples:
        >>> sacrebleu_tokenizer("length", "13a")("Hello, world!")
        'Hello , world !'
        >>> sacrebleu_tokenizer("length", "char")("ab")
        'a b'
    """
    return with_tokenizer(metric, tokenize, lambda: BLEU(tokenize=tokenize).tokenizer)


def with_tokenizer(metric: str, tokenize: str, build: Callable[[], _T]) -> _T:
    """``build()`` -- a sacrebleu object or tokenizer using sacrebleu's tokenizer ``tokenize``
    -- with sacrebleu's multi-line error for a tokenizer whose optional packages are missing
    (``ImportError``; ``RuntimeError`` for MeCab) turned into one :class:`InputError` line.

    Examples:
        >>> from sacrebleu.metrics import BLEU
        >>> with_tokenizer("bleu", "13a", lambda: BLEU(tokenize="13a").tokenizer)("a,b")
        'a , b'
        >>> def missing():
        ...     raise RuntimeError("\\nJapanese tokenization requires extra dependencies.\\n"
        ...                        "\\n    pip install sacrebleu[ja]\\n")
        >>> try:
        ...     with_tokenizer("bleu", "ja-mecab", missing)
        ... except InputError as err:
        ...     msg = str(err)
        >>> msg[:56]
        "metric 'bleu', option 'tokenize': sacrebleu's 'ja-mecab'"
        >>> msg.endswith("cannot be used: Japanese tokenization requires extra dependencies. "
        ...              "pip install sacrebleu[ja]")
        True
    """
    try:
        return build()
    except (ImportError, RuntimeError) as exc:
        if tokenize in PLAIN_TOKENIZERS:
            raise
        text = " ".join(line.strip() for line in str(exc).splitlines() if line.strip())
        raise InputError(f"metric '{metric}', option 'tokenize': sacrebleu's '{tokenize}' "
                         f"tokenizer cannot be used: {text}") from None


def sacrebleu_signature(lib: Any, nrefs: str | None) -> str:
    """sacrebleu's signature string for the configured object ``lib`` (``nrefs`` left out
    when unknown).

    Examples:
        >>> from sacrebleu.metrics import BLEU
        >>> sacrebleu_signature(BLEU(), "1").split("|")[:3]
        ['nrefs:1', 'case:mixed', 'eff:no']
    """
    probe = copy.copy(lib)  # get_signature reads the number of references from the object
    probe.num_refs = 1
    sig = probe.get_signature()
    if nrefs is None:
        sig.info.pop("nrefs", None)
    else:
        sig.info["nrefs"] = nrefs
    return sig.format()


class SacreMetric(Metric):
    """Common machinery of the sacrebleu adapters (BLEU, chrF, TER).

    ``lib_segment`` is the sacrebleu object configured for segment scores (``sentence_*``
    defaults), ``lib_corpus`` the one for corpus scores (``corpus_*`` defaults). The cache key
    (:attr:`config_signature`) is the metric name plus both sacrebleu signatures.

    Examples:
        >>> from nlgeval.metrics.chrf import CHRFMetric
        >>> CHRFMetric().config_signature.split("|")[:3]
        ['chrf', 'case:mixed', 'eff:yes']
    """

    _lib_seg: Any = None
    _lib_corpus: Any = None

    def _make(self, segment: bool) -> Any:  # pragma: no cover - abstract
        raise NotImplementedError

    @property
    def lib_segment(self) -> Any:
        """The sacrebleu object configured like ``sacrebleu.sentence_*``."""
        if self._lib_seg is None:
            self._lib_seg = self._make(segment=True)
        return self._lib_seg

    @property
    def lib_corpus(self) -> Any:
        """The sacrebleu object configured like ``sacrebleu.corpus_*``."""
        if self._lib_corpus is None:
            self._lib_corpus = self._make(segment=False)
        return self._lib_corpus

    @property
    def config_signature(self) -> str:
        seg = sacrebleu_signature(self.lib_segment, None)
        corp = sacrebleu_signature(self.lib_corpus, None)
        extra = "" if seg == corp else f"|segment:[{seg}]"
        return f"{self.name}|{corp}{extra}"

    @property
    def signature(self) -> str:
        """sacrebleu's signature of the corpus-level score, e.g.
        ``nrefs:4|case:mixed|eff:no|tok:13a|smooth:exp|version:2.6.0``."""
        return sacrebleu_signature(self.lib_corpus, self._nrefs_label())

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
