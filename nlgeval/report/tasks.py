"""Stages 2-3 of the validation study for every criterion, one task per criterion, on the
serial, process or Dask backend (:mod:`nlgeval.parallel`): correlations with bootstrap
intervals (Deutsch et al. 2021), metric comparisons and clusters, the WMT meta-evaluation
statistics and leaderboards. Every random draw is seeded from the settings alone, so the
numbers do not depend on the backend or the number of workers.
"""

from __future__ import annotations

import multiprocessing as mp
import os
import sys
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, as_completed, wait
from dataclasses import dataclass
from typing import Any

import pandas as pd

from nlgeval.parallel import ProcessPoolBackend, get_backend, map_tasks, single_blas_thread
from nlgeval.parallel.backends import one_numba_thread
from nlgeval.progress import is_quiet, progress_bar
from nlgeval.report.criterion_split import fork_split, split_criteria
from nlgeval.report.meta import wanted
from nlgeval.report.prepare import PreparedScores
from nlgeval.report.settings import AUTO_PROCESS_MAX_OUTPUTS, ValidationSettings
from nlgeval.report.stages import (
    CLUSTER_COLUMNS,
    COMPARISON_COLUMNS,
    CORRELATION_COLUMNS,
    CriterionMatrices,
    correlation_rows,
    criterion_matrices,
    meta_evaluation,
    metric_comparisons,
)

#: What stages 2-3 give: correlations, comparisons, clusters, leaderboards, missing counts.
Correlated = tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame, dict[str, pd.DataFrame],
                   dict[str, Any]]


def correlate_criteria(prep: PreparedScores, settings: ValidationSettings) -> Correlated:
    """Stages 2-3 for every criterion: correlations, comparisons, clusters, leaderboards, and
    the missing-output counts per ``metric|criterion``.

    One task per criterion, run on ``settings.backend`` (serial, process or Dask; see
    :mod:`nlgeval.parallel`). Every random draw inside a task is seeded from ``settings.seed``
    alone, so the numbers do not depend on the backend or the number of workers. Rows are kept
    criterion by criterion (coefficients first, then the meta-evaluation statistics), the
    order of the correlations table and comparisons.csv.
    """
    return start_criteria(prep, settings).result()


class PendingCriteria:
    """Stages 2-3 started by :func:`start_criteria`: :meth:`result` waits for them (and shuts
    the worker processes down), :meth:`cancel` drops them."""

    def __init__(self, prep: PreparedScores, settings: ValidationSettings,
                 futures: list[Any] | None = None, pool: Any = None,
                 parts: list[_CriterionPart] | None = None, workers: int = 1,
                 assemble: Callable[[list[Any]], list[_CriterionPart]] | None = None,
                 description: str = "correlations + bootstrap (criteria)") -> None:
        self._prep, self._settings = prep, settings
        self._futures, self._pool, self._parts = futures or [], pool, parts
        self._workers, self._assemble, self._description = workers, assemble, description
        self._large = assemble is not None and AUTO_PROCESS_MAX_OUTPUTS < \
            len(prep.systems) * len(prep.rated_items) * len(prep.metrics)

    @property
    def running(self) -> bool:
        """Whether worker processes are computing (else the tables are already there)."""
        return self._pool is not None

    def wait_for_a_free_core(self) -> None:
        """When the criteria do not divide evenly among the workers (5 criteria on 2), return
        once fewer criteria are being computed than there are cores: work done here meanwhile
        then runs on the core the last criterion leaves idle, instead of slowing down the
        worker that finishes last. Else (4 criteria on 2 workers, or more cores than workers)
        return at once: no core would be idle before the end. Pieces of criteria on forked
        workers (:func:`~nlgeval.report.criterion_split.fork_split`): at once, unless the
        study has more than :data:`~nlgeval.report.settings.AUTO_PROCESS_MAX_OUTPUTS` scored
        outputs: then once the workers are done and shut down, so that the memory of Table 9
        and the human references does not come on top of the workers' arrays."""
        if self._assemble is not None:  # pieces handed out largest first: no idle core
            if self._large:  # ... but the other stages' arrays would add to the workers'
                self.result()  # the tables, kept; the workers (and their memory) are gone
            return
        if not self._futures or len(self._futures) % self._workers == 0:
            return
        cores = os.cpu_count() or 1
        busy = [f for f in self._futures if not f.done()]
        while self._pool is not None and min(len(busy), self._workers) >= cores:
            wait(busy, return_when=FIRST_COMPLETED)
            busy = [f for f in busy if not f.done()]

    def result(self) -> Correlated:
        """The tables of :func:`correlate_criteria` (waits for the workers)."""
        if self._pool is not None:
            try:
                with progress_bar(len(self._futures), self._description) as bar:
                    for _ in as_completed(self._futures):
                        bar.advance(1)
                results = [f.result() for f in self._futures]
                self._parts = results if self._assemble is None else self._assemble(results)
            finally:
                self.cancel()
        return _combine(self._parts or [])

    def cancel(self) -> None:
        """Shut the worker processes down (idempotent)."""
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None


def start_criteria(prep: PreparedScores, settings: ValidationSettings) -> PendingCriteria:
    """Start stages 2-3 of every criterion (:func:`correlate_criteria`). On the process backend
    the criteria are handed to the worker processes and this returns at once, so the caller
    can run the stages that do not need the correlations (the human references, Table 9)
    while the workers compute; on the other backends they are computed here, now. The
    numbers are the same either way (each task is seeded from the settings alone)."""
    tasks = [_CriterionTask(prep, settings, crit) for crit in prep.criteria]
    if settings.backend == "serial":
        per_criterion = len(prep.metrics) * (
            len(settings.levels) * len(settings.coefficients)
            + len(wanted(settings.meta_statistics, settings.levels)))
        with progress_bar(len(tasks) * per_criterion, "correlations + bootstrap") as bar:
            return PendingCriteria(prep, settings, parts=[task(bar) for task in tasks])
    backend = get_backend(settings.backend, settings.workers, settings.scheduler,
                          announce=None if is_quiet() else _announce)
    if settings.backend == "dask":  # pieces below the criterion (criterion_split.py)
        return PendingCriteria(prep, settings, parts=[
            _CriterionPart(*r) for r in split_criteria(prep, settings, backend)])
    if not isinstance(backend, ProcessPoolBackend) or not tasks:
        return PendingCriteria(prep, settings, parts=map_tasks(
            _run_criterion, tasks, backend, description="correlations + bootstrap (criteria)"))
    _warm_kernels(settings)  # before the workers are forked: they inherit them
    if len(tasks) < backend.workers and sys.platform.startswith("linux"):
        # fewer criteria than workers (one MQM score): pieces of the criteria on every worker
        split = fork_split(prep, settings, backend.workers)
        return PendingCriteria(prep, settings, split.futures, split, workers=backend.workers,
                               assemble=lambda res: [_CriterionPart(*r)
                                                     for r in split.assemble(res)],
                               description="correlations + bootstrap (pieces)")
    # the workers are forked at the first submit, before the pool starts its threads
    workers = min(backend.workers, len(tasks))
    pool = ProcessPoolExecutor(max_workers=workers, initializer=one_numba_thread,
                               mp_context=mp.get_context(
                                   "fork" if sys.platform.startswith("linux") else "spawn"))
    try:
        futures = [pool.submit(_run_criterion, task) for task in tasks]
    except BaseException:
        pool.shutdown(cancel_futures=True)
        raise
    return PendingCriteria(prep, settings, futures, pool, workers=workers)


def _combine(parts: list[_CriterionPart]) -> Correlated:
    """The criteria's parts as the tables of :func:`correlate_criteria`, in criterion order."""
    rows: list[dict[str, Any]] = []
    comps: list[pd.DataFrame] = []
    clus: list[pd.DataFrame] = []
    boards: dict[str, list[pd.DataFrame]] = {}
    missing: dict[str, Any] = {}
    for part in parts:
        rows += part.rows
        comps += part.comparisons
        clus += part.clusters
        missing.update(part.missing)
        for style, board in part.leaderboards.items():
            boards.setdefault(style, []).append(board)
    return (pd.DataFrame(rows, columns=CORRELATION_COLUMNS),
            pd.concat(comps, ignore_index=True) if comps else
            pd.DataFrame(columns=COMPARISON_COLUMNS),
            pd.concat(clus, ignore_index=True) if clus else pd.DataFrame(columns=CLUSTER_COLUMNS),
            {k: pd.concat(v, ignore_index=True) for k, v in boards.items()}, missing)


@dataclass(frozen=True)
class _CriterionPart:
    rows: list[dict[str, Any]]
    comparisons: list[pd.DataFrame]
    clusters: list[pd.DataFrame]
    leaderboards: dict[str, pd.DataFrame]
    missing: dict[str, Any]


@dataclass(frozen=True)
class _CriterionTask:
    """Stages 2-3 for one criterion: a picklable task for :func:`nlgeval.parallel.map_tasks`."""

    prep: PreparedScores
    settings: ValidationSettings
    criterion: str

    def __call__(self, bar: Any = None) -> _CriterionPart:
        # one BLAS thread on every backend: OpenBLAS sums a matrix product in another order
        # with another number of threads (the main process has several, Dask workers one)
        with single_blas_thread():
            return self._run(bar)

    def _run(self, bar: Any) -> _CriterionPart:
        cm = criterion_matrices(self.prep, self.criterion)
        rows = correlation_rows(cm, self.prep, self.settings, bar)
        comps, clus = metric_comparisons(cm, self.prep, self.settings)
        boards: dict[str, pd.DataFrame] = {}
        meta = meta_evaluation(cm, self.prep, self.settings, bar)
        if meta is not None:
            rows += meta.rows
            comps += [meta.comparisons] if len(meta.comparisons) else []
            clus += [meta.clusters] if len(meta.clusters) else []
            boards = dict(meta.leaderboards)
        return _CriterionPart(rows, comps, clus, boards,
                              {f"{m}|{self.criterion}": v for m, v in cm.missing.items()})


def _run_criterion(task: _CriterionTask) -> _CriterionPart:
    return task()


def _warm_kernels(settings: ValidationSettings) -> None:
    """Compile (first run after an install) or load (later runs) the compiled kernels of
    stages 2-3 once, here, on a small random criterion with the study's statistics: forked
    workers inherit them instead of each compiling or loading its own copy. Nothing computed
    here is kept; the caches it touches are keyed by content, so no number changes."""
    import warnings

    import numpy as np

    rng = np.random.default_rng(0)
    Y = rng.normal(size=(6, 12))
    mats = {"a": Y + rng.normal(size=Y.shape), "b": np.round(Y + rng.normal(size=Y.shape))}
    prep = PreparedScores(None, None, list(mats), {}, dict.fromkeys(mats, True),
                          [], [], [], [], None, [], ["q"])
    small = settings.replace(backend="serial", n_resamples=min(settings.n_resamples, 40),
                             permutations=min(settings.permutations, 40),
                             spa_permutations=min(settings.spa_permutations, 40))
    cm = CriterionMatrices("q", mats, Y, {})
    with warnings.catch_warnings(), single_blas_thread():
        warnings.simplefilter("ignore")
        correlation_rows(cm, prep, small)
        metric_comparisons(cm, prep, small)
        meta_evaluation(cm, prep, small)


def _announce(line: str) -> None:
    """Where a Dask backend prints its dashboard address (stderr, like progress bars)."""
    print(line, file=sys.stderr)
