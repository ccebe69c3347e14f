"""The :class:`Metric` base class: segment- and corpus-level scoring over multiple references.

Modelled on sacrebleu's ``metrics/`` package (Post, 2018, "A Call for Clarity in Reporting BLEU
Scores"): one class per metric, template methods over *sufficient statistics*, and a
reproducibility signature. A metric computes a small vector of statistics per (hypothesis,
references) pair; the segment score and the corpus score are both functions of those statistics
(for BLEU: n-gram matches and totals, hypothesis and closest reference length). That makes three
things cheap:

* references are preprocessed once per distinct reference list (``_prepare_refs``) and reused
  for every system that shares the item,
* identical (hypothesis, references) pairs are scored once,
* statistics can be cached on disk (:mod:`nlgeval.metrics.cache`) keyed by the metric's
  configuration + the texts, and the corpus score recomputed from cached statistics.

Subclasses implement ``_prepare_refs``, ``_segment_stats``, ``_segment_from_stats`` and
``_corpus_from_stats`` (and may override :meth:`Metric.corpus_score` when the corpus score is not
a function of per-segment statistics, as for NIST's corpus-wide information weights).

Options come from a spec string ``name:key=value[,key=value]`` (see
:mod:`nlgeval.metrics.options`); inputs are checked by :mod:`nlgeval.metrics._inputs`.
"""

from __future__ import annotations

import os
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from nlgeval.errors import InputError
from nlgeval.metrics._inputs import (
    Groups,
    RefsLayout,
    _group_pairs,
    _validate_inputs,
    per_hypothesis_refs,
)
from nlgeval.metrics.options import Option as Option
from nlgeval.metrics.options import parse_metric_list as parse_metric_list
from nlgeval.metrics.options import parse_spec as parse_spec

if TYPE_CHECKING:  # pragma: no cover
    from nlgeval.metrics.cache import StatsCache


def _stats_worker(metric: Metric, groups: Groups) -> list[np.ndarray]:
    """Process-pool entry point: statistics for a chunk of (references, hypotheses) groups."""
    return metric._stats_for_groups(groups)


class Metric(ABC):
    """An automatic evaluation metric over one or more references per hypothesis.

    Attributes
    ----------
    name:
        Registry name (``"bleu"``, ``"rougeL"``...).
    higher_is_better:
        Direction of the metric (False for TER and edit distance).
    options:
        The options a spec may set, with types and defaults.
    signature:
        A reproducibility string: library + version + every setting that changes the numbers.

    Use :meth:`segment_scores` and :meth:`corpus_score`; :meth:`segment_stats` exposes the
    sufficient statistics (and takes a disk cache).

    Examples:
        Every adapter scores segments and the corpus from the same sufficient statistics; here
        BLEU on two sentences:

        >>> from nlgeval.metrics import get_metric
        >>> m = get_metric("bleu")
        >>> hyps = ["the cat sat on the mat", "a dog runs"]
        >>> refs = [["the cat sat on the mat"], ["the dog runs fast", "a dog is running"]]
        >>> m.segment_stats(hyps, refs).shape
        (2, 10)
        >>> round(m.corpus_score(hyps, refs), 2)
        84.63
        >>> m.spec, m.higher_is_better
        ('bleu', True)
    """

    name: ClassVar[str] = ""
    higher_is_better: ClassVar[bool] = True
    description: ClassVar[str] = ""
    options: ClassVar[Mapping[str, Option]] = {}
    #: number of segments above which statistics are computed in a process pool (a class
    #: default; an instance may change it with its options, as TER's compiled engine does).
    #: Measured on WebNLG 2020 (3,025 outputs, 2 cores): a pool per metric (fork, pickling,
    #: ROUGE's workers importing nltk again) made `validate --no-cache`'s scoring 12.3 s
    #: against 3.4 s in one process, so small corpora are scored in this process
    parallel_threshold: int = 20_000
    #: whether the statistics are integer counts (restored as ints from the float64 cache)
    integer_stats: ClassVar[bool] = False

    def __init__(self, **opts: Any) -> None:
        unknown = sorted(set(opts) - set(self.options))
        if unknown:
            valid = ", ".join(sorted(self.options)) or "none"
            raise InputError(
                f"metric '{self.name}' has no option {', '.join(repr(u) for u in unknown)} "
                f"(valid options: {valid})"
            )
        self.opts: dict[str, Any] = {
            k: (o.parse(self.name, k, opts[k]) if k in opts else o.default)
            for k, o in self.options.items()
        }
        self.n_refs_seen: set[int] = set()
        self._check_options()

    # ------------------------------------------------------------------ configuration
    def _check_options(self) -> None:  # noqa: B027 - optional hook
        """Hook for cross-option validation (raise :class:`InputError`)."""

    @property
    def spec(self) -> str:
        """Canonical spec string: the name plus every option that differs from its default."""
        changed = [
            f"{k}={o.format(self.opts[k])}"
            for k, o in self.options.items()
            if self.opts[k] != o.default
        ]
        return self.name + (":" + ",".join(changed) if changed else "")

    @property
    @abstractmethod
    def config_signature(self) -> str:
        """Signature of everything that determines the numbers, except the reference count.

        Used as the disk-cache key (the texts themselves are hashed separately).
        """

    @property
    def signature(self) -> str:
        """Reproducibility signature; includes ``nrefs`` once data has been scored."""
        return self.config_signature

    def _nrefs_label(self) -> str | None:
        if not self.n_refs_seen:
            return None
        if len(self.n_refs_seen) == 1:
            return str(next(iter(self.n_refs_seen)))
        return "var"

    def __repr__(self) -> str:
        return f"<Metric {self.spec}>"

    def __getstate__(self) -> dict[str, Any]:
        # Underlying library objects are rebuilt lazily in worker processes.
        state = self.__dict__.copy()
        for k in [k for k in state if k.startswith("_lib")]:
            state[k] = None
        return state

    # ------------------------------------------------------------------ template methods
    @abstractmethod
    def _prepare_refs(self, refs: Sequence[str]) -> Any:
        """Preprocess one segment's references (tokenise, count n-grams) once."""

    @abstractmethod
    def _segment_stats(self, hyp: str, ref_info: Any) -> Sequence[float]:
        """Sufficient statistics of one hypothesis against its prepared references."""

    @abstractmethod
    def _segment_from_stats(self, stats: np.ndarray) -> np.ndarray:
        """Segment scores from an ``(n, k)`` array of statistics."""

    @abstractmethod
    def _corpus_from_stats(self, stats: np.ndarray) -> float:
        """Corpus score from the ``(n, k)`` statistics of all segments (in corpus order)."""

    # ------------------------------------------------------------------ machinery
    def _stats_for_groups(self, groups: Groups) -> list[np.ndarray]:
        out = []
        for refs, hyps in groups:
            info = self._prepare_refs(refs)
            out.append(np.array([self._segment_stats(h, info) for h in hyps], dtype=np.float64))
        return out

    def _compute_groups(
        self,
        groups: Groups,
        n_jobs: int | None,
        advance: Callable[[int], None] | None,
    ) -> list[np.ndarray]:
        n_pairs = sum(len(h) for _, h in groups)
        jobs = n_jobs if n_jobs is not None else (os.cpu_count() or 1)
        if jobs <= 1 or n_pairs < self.parallel_threshold or len(groups) < 2:
            out = []
            # chunks so that the progress bar moves
            step = max(1, len(groups) // 20)
            for start in range(0, len(groups), step):
                chunk = groups[start : start + step]
                out.extend(self._stats_for_groups(chunk))
                if advance:
                    advance(sum(len(h) for _, h in chunk))
            return out
        # Balance chunks by work (hypotheses x references) and keep order.
        n_chunks = jobs * 8
        weights = np.array([len(h) * (1 + len(r)) for r, h in groups], dtype=float)
        bounds = np.searchsorted(np.cumsum(weights), np.linspace(0, weights.sum(), n_chunks + 1))
        chunks: list[Groups] = []
        start = 0
        for b in bounds[1:]:
            end = min(len(groups), max(start, int(b) + 1))
            if end > start:
                chunks.append(groups[start:end])
                start = end
        if start < len(groups):
            chunks.append(groups[start:])
        out = []
        with ProcessPoolExecutor(max_workers=jobs) as pool:
            for chunk, res in zip(
                chunks, pool.map(_stats_worker, [self] * len(chunks), chunks), strict=True
            ):
                out.extend(res)
                if advance:
                    advance(sum(len(h) for _, h in chunk))
        return out

    def segment_stats(
        self,
        hyps: Sequence[str],
        refs: Sequence[Sequence[str]],
        *,
        cache: StatsCache | None = None,
        n_jobs: int | None = None,
        advance: Callable[[int], None] | None = None,
        refs_layout: RefsLayout | None = None,
    ) -> np.ndarray:
        """Sufficient statistics, one row per hypothesis (``(len(hyps), k)`` float array).

        References are prepared once per distinct reference list, identical (hypothesis,
        references) pairs are computed once, ``cache`` (a :class:`StatsCache`) skips pairs
        scored before with the same configuration, and large batches use ``n_jobs`` processes
        (default: all cores). ``advance(n)`` is called as pairs complete (progress bars).
        ``refs_layout`` as in :meth:`segment_scores`.
        """
        refs = per_hypothesis_refs(hyps, refs, refs_layout)
        _validate_inputs(hyps, refs)
        n = len(hyps)
        self.n_refs_seen.update(map(len, refs))
        if n == 0:
            return np.zeros((0, 0))
        groups, where = _group_pairs(hyps, refs)
        if advance:  # duplicates are free
            advance(n - sum(len(h) for _, h in groups))
        results: list[list[np.ndarray | None]]
        if cache is not None:
            results = cache.lookup(self, groups)
        else:
            results = [[None] * len(h) for _, h in groups]
        # what is still to compute, per group
        todo = [[j for j, row in enumerate(res) if row is None] for res in results]
        missing: Groups = [
            (r, [h[j] for j in t]) for (r, h), t in zip(groups, todo, strict=True) if t
        ]
        if advance:
            advance(sum(len(h) - len(t) for (_, h), t in zip(groups, todo, strict=True)))
        if missing:
            computed = iter(self._compute_groups(missing, n_jobs, advance))
            fresh = []
            for g, t in enumerate(todo):
                if t:
                    arr = next(computed)
                    fresh.append(arr)
                    for j, row in zip(t, arr, strict=True):
                        results[g][j] = row
            if cache is not None:
                cache.store(self, missing, fresh)
        stacked = [np.vstack(res) for res in results]  # type: ignore[arg-type]  # no None left
        k = stacked[0].shape[1]
        out = np.empty((n, k), dtype=np.float64)
        offsets = np.cumsum([0] + [len(a) for a in stacked])
        out[:] = np.vstack(stacked)[offsets[where[:, 0]] + where[:, 1]]
        return out

    def score_batch(
        self,
        hyps: Sequence[str],
        refs: Sequence[Sequence[str]],
        *,
        cache: StatsCache | None = None,
        n_jobs: int | None = None,
        advance: Callable[[int], None] | None = None,
        texts_digest: bytes | None = None,
        refs_layout: RefsLayout | None = None,
    ) -> tuple[np.ndarray, np.ndarray]:
        """``(statistics, segment scores)`` for a whole batch.

        With a cache, the batch as a whole is cached too (keyed by configuration and every
        text), so re-running the same job costs one hash and one lookup; otherwise this is
        :meth:`segment_stats` (which caches per segment) plus :meth:`segment_from_stats`.
        ``texts_digest`` (:meth:`StatsCache.texts_digest` of the same, already validated
        texts) saves re-hashing and re-validating when several metrics score the same batch.
        ``refs_layout`` as in :meth:`segment_scores`.
        """
        refs = per_hypothesis_refs(hyps, refs, refs_layout)
        key = None
        if cache is not None and len(hyps):
            if texts_digest is None:
                _validate_inputs(hyps, refs)
                texts_digest = cache.texts_digest(hyps, refs)
            # else: the caller validated these texts when it computed their digest
            key = cache.batch_key(self, texts_digest)
            hit = cache.get_batch(key)
            if hit is not None:
                self.n_refs_seen.update(map(len, refs))
                if advance:
                    advance(len(hyps))
                return hit
        stats = self.segment_stats(hyps, refs, cache=cache, n_jobs=n_jobs, advance=advance,
                                   refs_layout="per_hypothesis")
        scores = self.segment_from_stats(stats)
        if cache is not None and key is not None:
            cache.put_batch(key, stats, scores)
        return stats, scores

    def segment_scores(
        self,
        hyps: Sequence[str],
        refs: Sequence[Sequence[str]],
        *,
        cache: StatsCache | None = None,
        n_jobs: int | None = None,
        refs_layout: RefsLayout | None = None,
    ) -> np.ndarray:
        """One score per hypothesis.

        ``refs[i]`` is the list of references of ``hyps[i]`` (``refs_layout="per_hypothesis"``),
        or, with ``refs_layout="streams"``, ``refs`` is sacrebleu's list of reference streams
        (``refs[j][i]`` is the j-th reference of ``hyps[i]``). Left out, the layout is
        ``per_hypothesis`` except for the shape both layouts share (n hypotheses and n lists
        of n references, n > 1), which is refused as ambiguous.

        Examples:
            >>> from nlgeval.metrics import get_metric
            >>> hyps = ["the cat sat", "a dog ran"]
            >>> streams = [["the cat sat", "the dog ran"], ["a cat sat", "a dog ran"]]
            >>> m = get_metric("chrf")
            >>> a = m.segment_scores(hyps, streams, refs_layout="streams")
            >>> per_hyp = [["the cat sat", "a cat sat"], ["the dog ran", "a dog ran"]]
            >>> b = m.segment_scores(hyps, per_hyp, refs_layout="per_hypothesis")
            >>> bool((a == b).all())
            True
        """
        refs = per_hypothesis_refs(hyps, refs, refs_layout)
        stats = self.segment_stats(hyps, refs, cache=cache, n_jobs=n_jobs,
                                   refs_layout="per_hypothesis")
        if len(hyps) == 0:
            return np.zeros(0)
        return np.asarray(self._segment_from_stats(stats), dtype=np.float64)

    def corpus_score(
        self,
        hyps: Sequence[str],
        refs: Sequence[Sequence[str]],
        *,
        cache: StatsCache | None = None,
        n_jobs: int | None = None,
        refs_layout: RefsLayout | None = None,
    ) -> float:
        """The corpus-level score of all hypotheses (e.g. BLEU from summed n-gram statistics);
        ``refs_layout`` as in :meth:`segment_scores`.

        Examples:
            >>> from nlgeval.metrics import get_metric
            >>> import sacrebleu
            >>> hyps = ["the cat sat on the mat", "a dog ran home"]
            >>> streams = [["the cat sat on a mat", "the dog ran home"]]   # sacrebleu's layout
            >>> ours = get_metric("bleu").corpus_score(hyps, streams, refs_layout="streams")
            >>> ours == sacrebleu.corpus_bleu(hyps, streams).score
            True
        """
        if len(hyps) == 0:
            raise InputError("cannot compute a corpus score of zero segments")
        refs = per_hypothesis_refs(hyps, refs, refs_layout)
        stats = self.segment_stats(hyps, refs, cache=cache, n_jobs=n_jobs,
                                   refs_layout="per_hypothesis")
        return self.corpus_from_stats(stats, hyps, refs)

    def corpus_from_stats(
        self, stats: np.ndarray, hyps: Sequence[str], refs: Sequence[Sequence[str]]
    ) -> float:
        """Corpus score given the segment statistics (the texts are there for metrics like NIST
        whose corpus score needs corpus-wide information)."""
        return float(self._corpus_from_stats(stats))

    def segment_from_stats(self, stats: np.ndarray) -> np.ndarray:
        """Segment scores from statistics returned by :meth:`segment_stats`."""
        if len(stats) == 0:
            return np.zeros(0)
        return np.asarray(self._segment_from_stats(stats), dtype=np.float64)
