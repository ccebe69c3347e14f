"""Score every output of a :class:`~nlgeval.corpus.Corpus` with one or more metrics.

``score_corpus(corpus, ["bleu", "rougeL:use_stemmer=true"])`` returns tidy segment scores
(``metric, system, item, score``) and corpus-level scores per system
(``system, metric, score, signature``). All systems are scored in one batch per metric, so each
item's references are preprocessed once and shared by the systems (see
:mod:`nlgeval.metrics.base`), identical outputs are scored once, statistics are cached on disk
(:mod:`nlgeval.metrics.cache`) and large batches use all cores.

With ``backend=`` (:mod:`nlgeval.parallel`: ``"serial"``, ``"process"``, ``"dask"``) the outputs
are cut into chunks (grouped by item, so a chunk prepares each item's references once for all
systems) and every chunk is one task; each worker scores with its own statistics cache (the
SQLite file at ``cache_dir`` as that worker sees it, or none) and only sufficient statistics
come back. Segment and corpus scores are then computed here from the statistics in output
order, exactly as in a one-process run, so the numbers are bit for bit the same whatever the
backend, the number of workers or the chunking.
"""

from __future__ import annotations

import contextlib
import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from nlgeval.corpus import Corpus
from nlgeval.errors import InputError
from nlgeval.metrics.base import Metric, _validate_inputs
from nlgeval.metrics.cache import StatsCache
from nlgeval.metrics.registry import get_metric, metric_labels
from nlgeval.parallel import ExecutionBackend, chunks, execution_record, get_backend, map_tasks
from nlgeval.progress import progress_bar
from nlgeval.results import Result


@dataclass(frozen=True)
class ScoreResult(Result):
    """Result of :func:`score_corpus`.

    ``segments``: one row per (metric, system, item) -- columns ``metric, system, item, score``.
    ``corpus_scores``: one row per (system, metric) -- ``system, metric, score, signature``.
    ``signatures``: metric label -> reproducibility signature.
    ``specs``: metric label -> canonical spec string (with options).
    ``higher_is_better``: metric label -> direction.
    ``execution``: backend, workers and chunks when a backend was given (else empty).

    ``to_dict()`` (the ``--json`` output) leaves out the segments and reports the cache as
    ``{"hits": ..., "misses": ...}``.

    Examples
    --------
    >>> from nlgeval.corpora import load_corpus
    >>> res = score_corpus(load_corpus("e2e"), ["chrf"], systems=["adapt"], cache=False)
    >>> sorted(res.to_dict())
    ['cache', 'corpus_scores', 'higher_is_better', 'signatures', 'specs']
    >>> round(float(res.corpus_scores["score"].iloc[0]), 2)
    65.59
    """

    _aliases = {"cache": "cache"}
    _omit = frozenset({"segments", "cache_hits", "cache_misses", "execution"})

    segments: pd.DataFrame
    corpus_scores: pd.DataFrame
    signatures: dict[str, str]
    specs: dict[str, str] = field(default_factory=dict)
    higher_is_better: dict[str, bool] = field(default_factory=dict)
    cache_hits: int = 0
    cache_misses: int = 0
    execution: dict[str, Any] = field(default_factory=dict)

    @property
    def cache(self) -> dict[str, int]:
        """Statistics-cache use: ``{"hits": ..., "misses": ...}``."""
        return {"hits": self.cache_hits, "misses": self.cache_misses}

    def wide(self) -> pd.DataFrame:
        """Segment scores with one column per metric: ``system, item, <metric>...``."""
        return (
            self.segments.pivot_table(
                index=["system", "item"], columns="metric", values="score", sort=False
            )
            .reset_index()
            .rename_axis(columns=None)
        )


def _labels(metrics: Sequence[Metric]) -> list[str]:
    """Metric names as labels; the spec where the same name appears twice (with a local model
    folder shown by its public name: :func:`nlgeval.metrics.registry.metric_labels`)."""
    labels = metric_labels(metrics)
    if len(set(labels)) != len(labels):
        dup = sorted({x for x in labels if labels.count(x) > 1})
        raise InputError(f"metric(s) requested twice: {', '.join(dup)}")
    return labels


def _metrics_of(metrics: Sequence[str | Metric] | str) -> list[Metric]:
    """Metric objects from specs (a list, or one comma-separated string) or instances."""
    if isinstance(metrics, str):
        metrics = [m for m in metrics.split(",") if m.strip()]
    if not metrics:
        raise InputError("no metric given (e.g. metrics=['bleu', 'rougeL'])")
    return [get_metric(m) for m in metrics]


def _open_cache(
    cache: bool, cache_dir: str | Path | None, hyps: list[str], refs: list[list[str]]
) -> tuple[StatsCache | None, bytes | None]:
    """The statistics cache (None: off) and the digest of the validated texts (batch key)."""
    if not cache:
        return None, None
    store = StatsCache(cache_dir)
    _validate_inputs(hyps, refs)
    return store, store.texts_digest(hyps, refs)


def _selected_outputs(
    corpus: Corpus, systems: Sequence[str] | None, rated_only: bool
) -> pd.DataFrame:
    """The outputs to score (all, or the rated ones, of the chosen systems), in corpus order."""
    outputs = corpus.rated_outputs() if rated_only else corpus.outputs
    if systems is not None:
        systems = list(systems)
        unknown = sorted(set(systems) - set(corpus.systems))
        if unknown:
            raise InputError(
                f"unknown system(s) {', '.join(unknown)} in corpus '{corpus.name}' "
                f"(systems: {', '.join(corpus.systems)})"
            )
        outputs = outputs[outputs["system"].isin(systems)]
    if outputs.empty:
        what = "rated outputs" if rated_only else "outputs"
        raise InputError(f"corpus '{corpus.name}' has no {what} to score for these systems")
    return outputs.reset_index(drop=True)


def _references_of(corpus: Corpus, items: list[str]) -> list[list[str]]:
    """The reference list of every output's item, one shared list object per item (the metric
    groups by reference content)."""
    ref_map: dict[str, list[str]] = {}
    ref_items = corpus.references["item"].tolist()
    for it, text in zip(ref_items, corpus.references["text"].tolist(), strict=True):
        ref_map.setdefault(it, []).append(text)
    missing = sorted(set(items) - set(ref_map))
    if missing:
        raise InputError(
            f"corpus '{corpus.name}': no reference for item(s) {', '.join(missing[:5])}"
            + (" ..." if len(missing) > 5 else "")
            + " (reference-based metrics need at least one reference per item)"
        )
    per_item = {i: ref_map[i] for i in dict.fromkeys(items)}
    return [per_item[i] for i in items]


_BySystem = dict[str, tuple[np.ndarray, list[str], list[list[str]]]]


def _by_system(outputs: pd.DataFrame, hyps: list[str], refs: list[list[str]]) -> _BySystem:
    """Segment positions, hypotheses and references of each system, in order of appearance."""
    codes, system_names = pd.factorize(outputs["system"])
    by_system: _BySystem = {}
    for code, sysname in enumerate(system_names):
        idx = np.flatnonzero(codes == code)
        by_system[sysname] = (idx, [hyps[i] for i in idx], [refs[i] for i in idx])
    return by_system


def _corpus_rows(
    m: Metric, label: str, stats: np.ndarray, by_system: _BySystem,
    cached: np.ndarray | None = None,
) -> list[dict[str, Any]]:
    """One corpus-score row per system, from that system's own segment statistics (or the
    per-system scores read from the score cache, :func:`_cached_corpus_scores`)."""
    sig = m.signature
    if cached is not None:
        return [{"system": sysname, "metric": label, "score": float(score), "signature": sig}
                for sysname, score in zip(by_system, cached.tolist(), strict=True)]
    return [
        {"system": sysname, "metric": label,
         "score": m.corpus_from_stats(stats[idx], sys_hyps, sys_refs), "signature": sig}
        for sysname, (idx, sys_hyps, sys_refs) in by_system.items()
    ]


def _needs_texts(m: Metric) -> bool:
    """Whether ``m``'s corpus score is computed from the texts, not from the summed segment
    statistics alone (NIST: corpus-wide information weights), so worth caching."""
    return type(m).corpus_from_stats is not Metric.corpus_from_stats


def _corpus_key(store: StatsCache, m: Metric, digest: bytes, by_system: _BySystem) -> bytes:
    """Score-cache key of a metric's corpus scores per system: the batch key (configuration
    and every text, in order) plus which outputs each system has, in order."""
    h = hashlib.sha256(b"corpus\x00" + store.batch_key(m, digest))
    for sysname, (idx, _, _) in by_system.items():
        h.update(sysname.encode("utf-8") + b"\x1f")
        h.update(np.ascontiguousarray(idx, dtype=np.int64).tobytes() + b"\x1e")
    return h.digest()


def _cached_corpus_scores(
    mets: Sequence[Metric], labels: list[str], by_system: _BySystem, batches: _Batches,
    store: StatsCache | None, digest: bytes | None,
) -> dict[str, np.ndarray]:
    """label -> corpus score of every system (in ``by_system`` order) for the metrics whose
    corpus score needs the texts (:func:`_needs_texts`): read from the score cache, or
    computed once and stored there. A warm run of NIST is then a read instead of tokenising
    and counting every hypothesis again. The same floats either way (stored as float64
    bytes); these rows do not count as cache hits or misses (those count outputs)."""
    out: dict[str, np.ndarray] = {}
    if store is None or digest is None:
        return out
    for m, label in zip(mets, labels, strict=True):
        if not _needs_texts(m):
            continue
        key = _corpus_key(store, m, digest, by_system)
        counts = store.hits, store.misses
        hit = store.get_batch(key)
        store.hits, store.misses = counts
        if hit is not None and len(hit[1]) == len(by_system):
            out[label] = hit[1]
            continue
        rows = _corpus_rows(m, label, batches[label][0], by_system)
        scores = np.array([r["score"] for r in rows], dtype=np.float64)
        store.put_batch(key, scores[:, None], scores)
        out[label] = scores
    return out


def score_corpus(
    corpus: Corpus,
    metrics: Sequence[str | Metric],
    *,
    systems: Sequence[str] | None = None,
    rated_only: bool = False,
    cache: bool = True,
    cache_dir: str | Path | None = None,
    n_jobs: int | None = None,
    backend: str | ExecutionBackend | None = None,
    workers: int | None = None,
    scheduler: str | None = None,
    chunk_size: int | None = None,
) -> ScoreResult:
    """Score the corpus's outputs with each metric, per segment and per system.

    Parameters
    ----------
    corpus : Corpus
        A :class:`~nlgeval.corpus.Corpus` with references for every scored output.
    metrics : sequence of str or Metric
        Specs like ``"bleu"``, ``"bleu:lowercase=true"`` or :class:`Metric` instances.
    systems : sequence of str, optional
        Restrict to these systems (default: all).
    rated_only : bool
        Score only outputs that have at least one human rating.
    cache, cache_dir : bool, str or pathlib.Path
        Use the on-disk statistics cache (default ``$NLGEVAL_CACHE`` or
        ``~/.cache/nlgeval/scores``).
    n_jobs : int, optional
        Worker processes for large batches (default: all cores; 1 = no processes).
    backend, workers, scheduler, chunk_size : optional
        Score chunks of ``chunk_size`` outputs (default: about 4 chunks per worker, at least
        500 outputs) as tasks on a backend of :mod:`nlgeval.parallel` (``"serial"``,
        ``"process"``, ``"dask"`` with ``scheduler`` ``"local:N"`` or an address, or a backend
        object); see the module docstring. ``None`` (default): this process and ``n_jobs``.

    Returns
    -------
    ScoreResult
        ``segments`` (``metric, system, item, score``), ``corpus_scores`` (``system, metric,
        score, signature``), the signatures, specs and directions of the metrics. The corpus
        score of a system is computed from its own segments (e.g. corpus BLEU from the summed
        n-gram statistics, not the mean of sentence BLEU).

    Examples
    --------
    >>> from nlgeval.corpora import load_corpus
    >>> e2e = load_corpus("e2e")
    >>> one = score_corpus(e2e, ["chrf"], systems=["adapt"], cache=False)
    >>> two = score_corpus(e2e, ["chrf"], systems=["adapt"], cache=False, backend="process",
    ...                    workers=2, chunk_size=200)
    >>> one.segments.equals(two.segments), two.execution["chunks"]
    (True, 4)
    """
    mets = _metrics_of(metrics)
    labels = _labels(mets)
    outputs = _selected_outputs(corpus, systems, rated_only)
    items = outputs["item"].tolist()
    refs = _references_of(corpus, items)
    hyps = outputs["text"].astype(str).tolist()
    store, digest = _open_cache(cache, cache_dir, hyps, refs)
    by_system = _by_system(outputs, hyps, refs)
    try:
        scored = _score_batches(
            mets, labels, hyps, refs, items, store, digest, n_jobs=n_jobs, backend=backend,
            workers=workers, scheduler=scheduler, chunk_size=chunk_size,
            cache_dir=cache_dir if cache else _NO_CACHE)
        cached = _cached_corpus_scores(mets, labels, by_system, scored[0], store, digest)
    finally:
        if store is not None:
            store.close()
    return _score_result(mets, labels, outputs, by_system, scored, store, cached)


_Batches = dict[str, tuple[np.ndarray, np.ndarray]]
#: label -> (statistics, segment scores); workers' cache hits and misses; execution record
_Scored = tuple[_Batches, int, int, dict[str, Any]]


def _score_batches(
    mets: Sequence[Metric], labels: list[str], hyps: list[str], refs: list[list[str]],
    items: list[str], store: StatsCache | None, digest: bytes | None, *, n_jobs: int | None,
    backend: str | ExecutionBackend | None, workers: int | None, scheduler: str | None,
    chunk_size: int | None, cache_dir: str | Path | None,
) -> _Scored:
    """Every metric's statistics and segment scores, under one progress bar: in this process
    (:meth:`Metric.score_batch`, ``n_jobs`` processes for large batches) or, with a backend
    (a ``scheduler`` alone implies Dask), as chunk tasks (:func:`_score_on_backend`)."""
    if backend is None and scheduler is not None:
        backend = "dask"
    with progress_bar(len(hyps) * len(mets), "scoring") as bar:
        if backend is not None:
            be = get_backend(backend, workers, scheduler=scheduler)
            return _score_on_backend(mets, hyps, refs, items, store, digest, be, chunk_size,
                                     cache_dir, bar.advance)
        batches: _Batches = {}
        for m, label in zip(mets, labels, strict=True):
            bar.update(description=f"scoring {label}")
            batches[label] = m.score_batch(hyps, refs, cache=store, n_jobs=n_jobs,
                                           advance=bar.advance, texts_digest=digest,
                                           refs_layout="per_hypothesis")
        return batches, 0, 0, {}


def _score_result(mets: Sequence[Metric], labels: list[str], outputs: pd.DataFrame,
                  by_system: _BySystem, scored: _Scored, store: StatsCache | None,
                  cached: dict[str, np.ndarray] | None = None) -> ScoreResult:
    """Segment scores in output order, corpus scores per system (from each system's own
    statistics, or ``cached``: :func:`_cached_corpus_scores`), the metrics' signatures and the
    cache use of this process and the workers."""
    batches, hits, misses, execution = scored
    seg_frames: list[pd.DataFrame] = []
    corpus_rows: list[dict[str, Any]] = []
    for m, label in zip(mets, labels, strict=True):
        stats, scores = batches[label]
        seg_frames.append(pd.DataFrame({"metric": label, "system": outputs["system"],
                                        "item": outputs["item"], "score": scores}))
        corpus_rows += _corpus_rows(m, label, stats, by_system, (cached or {}).get(label))
    named = list(zip(labels, mets, strict=True))
    return ScoreResult(
        segments=pd.concat(seg_frames, ignore_index=True),
        corpus_scores=pd.DataFrame(corpus_rows, columns=["system", "metric", "score", "signature"]),
        signatures={label: m.signature for label, m in named},
        specs={label: m.spec for label, m in named},
        higher_is_better={label: m.higher_is_better for label, m in named},
        cache_hits=hits + (store.hits if store is not None else 0),
        cache_misses=misses + (store.misses if store is not None else 0),
        execution=execution,
    )


_NO_CACHE = "<no cache>"


@dataclass(frozen=True)
class _Chunk:
    """One task: a metric (by spec, rebuilt once per worker process) and a chunk of outputs."""

    spec: str
    hyps: list[str]
    refs: list[list[str]]
    cache_dir: str | None  # None: the worker's default cache; _NO_CACHE: none


@lru_cache(maxsize=16)
def _worker_metric(spec: str) -> Metric:
    return get_metric(spec)


def _score_chunk(task: _Chunk) -> tuple[np.ndarray, int, int]:
    """Statistics of one chunk, with the worker's own cache (what a backend runs)."""
    metric = _worker_metric(task.spec)
    if task.cache_dir == _NO_CACHE:
        return metric.segment_stats(task.hyps, task.refs, n_jobs=1,
                                    refs_layout="per_hypothesis"), 0, 0
    with StatsCache(task.cache_dir) as store:
        stats = metric.segment_stats(task.hyps, task.refs, cache=store, n_jobs=1,
                                 refs_layout="per_hypothesis")
        return stats, store.hits, store.misses


def _make_tasks(specs: Sequence[str], hyps: list[str], refs: list[list[str]], items: list[str],
                size: int, cache_dir: str | Path | None) -> tuple[list[np.ndarray], list[_Chunk]]:
    """Output positions of each chunk, and one task per (metric, chunk). Outputs are grouped
    by item: a chunk prepares an item's references once for all systems."""
    order = np.argsort(pd.factorize(pd.Series(items))[0], kind="stable")
    parts = [order[r.start:r.stop] for r in chunks(len(hyps), size)]
    where = None if cache_dir is None or cache_dir == _NO_CACHE else str(cache_dir)
    tasks = [_Chunk(spec, [hyps[i] for i in p], [refs[i] for i in p],
                    _NO_CACHE if cache_dir == _NO_CACHE else where)
             for spec in specs for p in parts]
    return parts, tasks


def _score_on_backend(
    mets: Sequence[Metric], hyps: list[str], refs: list[list[str]], items: list[str],
    store: StatsCache | None, digest: bytes | None, be: ExecutionBackend,
    chunk_size: int | None, cache_dir: str | Path | None, advance: Callable[[float], None],
) -> _Scored:
    """``label -> (stats, segment scores)`` for every metric, the chunks of every metric not in
    the batch cache run as tasks on ``be``; plus cache hits/misses of the workers and the
    execution record. Statistics are scattered back to output order before any score is
    computed, so nothing depends on the chunking."""
    labels = _labels(mets)
    out: _Batches = {}
    keys: dict[str, bytes] = {}
    for m, label in zip(mets, labels, strict=True):
        if store is not None and digest is not None:
            keys[label] = store.batch_key(m, digest)
            hit = store.get_batch(keys[label])
            if hit is not None:
                m.n_refs_seen.update(map(len, refs))  # as Metric.score_batch does on a hit
                out[label] = hit
                advance(len(hyps))
    todo = [(m, label) for m, label in zip(mets, labels, strict=True) if label not in out]
    size = chunk_size or max(500, -(-len(hyps) // (4 * max(1, be.workers))))
    parts, tasks = _make_tasks([m.spec for m, _ in todo], hyps, refs, items, size, cache_dir)
    with contextlib.ExitStack() as stack:
        if isinstance(be, contextlib.AbstractContextManager) and tasks:
            stack.enter_context(be)
        results = map_tasks(_score_chunk, tasks, be, weights=[len(t.hyps) for t in tasks],
                            advance=advance)
        execution = execution_record(be, chunk_size=size, chunks=len(tasks))
    hits = sum(r[1] for r in results)
    misses = sum(r[2] for r in results)
    for j, (m, label) in enumerate(todo):
        done = results[j * len(parts):(j + 1) * len(parts)]
        stats = np.empty((len(hyps), done[0][0].shape[1]), dtype=done[0][0].dtype)
        for p, (st, _, _) in zip(parts, done, strict=True):
            stats[p] = st
        m.n_refs_seen.update(map(len, refs))  # what the workers' copies saw (signature)
        scores = m.segment_from_stats(stats)
        if store is not None and label in keys:
            store.put_batch(keys[label], stats, scores)
        out[label] = (stats, scores)
    return out, hits, misses, execution
