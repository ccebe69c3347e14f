"""Stages 2-3 of one criterion cut into pieces for a Dask cluster (``--backend dask``).

A study with one criterion (an MQM score) is a single task at the level of criteria, so a
cluster could not help it. Here every criterion is a group of :func:`nlgeval.parallel.map_split`:
its matrices (:func:`~nlgeval.report.stages.criterion_matrices`) are made once, as one Dask
task, and the pieces that use them run as tasks of their own on any worker:

* one metric's correlations at one level (every coefficient, with its bootstrap interval);
* one level's metric comparisons (Williams, PERM-BOTH) and significance clusters;
* the WMT meta-evaluation statistics (one piece).

Each kind of piece is a small frozen dataclass (:class:`_Correlations`, :class:`_Comparisons`,
:class:`_MetaEvaluation`) that runs itself on the criterion's matrices (``run``), adds its
result to the criterion's tables (``add_to``) and states its expected cost (``cost``) and its
share of the progress bar (``weight``): a new kind of piece is one new class, and its place in
the serial order (:func:`_pieces`).

Each piece calls the same stage function as the serial run, on the same matrices, with its
random draws seeded from the study's seed alone and one BLAS thread, and the pieces are put
back in the serial order (metric, then level; levels in order; the meta-evaluation last), so
the tables are the same bit for bit (``tests/test_scale_dask.py``).

On the local process pool (``--backend process``), a study with fewer criteria than worker
processes is cut the same way (:func:`fork_split`), one step finer (a metric's
correlations at one level with one coefficient): the parent makes every criterion's matrices
once and forks the workers after that, so the workers read the matrices (and the rest of the
study) from the parent's memory pages instead of receiving copies, and the pieces go to the
workers largest first (longest-processing-time order), so the two cores finish together.
"""

from __future__ import annotations

import copy
import dataclasses
import gc
import multiprocessing as mp
from abc import ABC, abstractmethod
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from nlgeval.parallel import SplitGroup, map_split, single_blas_thread
from nlgeval.parallel.backends import one_numba_thread
from nlgeval.report.meta import CriterionMeta, wanted
from nlgeval.report.meta_statistics import check_statistic
from nlgeval.report.prepare import PreparedScores
from nlgeval.report.settings import ValidationSettings
from nlgeval.report.stages import (
    CriterionMatrices,
    correlation_rows,
    criterion_matrices,
    meta_evaluation,
    metric_comparisons,
)

#: What one criterion gives: correlation rows, comparison frames, cluster frames,
#: leaderboards, missing-output counts per ``metric|criterion``.
CriterionResult = tuple[list[dict[str, Any]], list[pd.DataFrame], list[pd.DataFrame],
                        dict[str, pd.DataFrame], dict[str, Any]]


def _matrices(prep: PreparedScores, criterion: str) -> CriterionMatrices:
    with single_blas_thread():
        return criterion_matrices(prep, criterion)


def _narrowed(settings: ValidationSettings, level: str,
              coefficient: str = "") -> ValidationSettings:
    """The settings with ``levels`` narrowed to one level (and ``coefficients`` to one, when
    given), nothing else re-derived (a ``dataclasses.replace`` would re-expand a WMT preset's
    levels)."""
    out = copy.copy(settings)
    object.__setattr__(out, "levels", (level,))
    if coefficient:
        object.__setattr__(out, "coefficients", (coefficient,))
    return out


@dataclass
class _Tables:
    """One criterion's tables, filled piece by piece in the serial order (:meth:`_Piece.add_to`)."""

    rows: list[dict[str, Any]] = field(default_factory=list)
    comparisons: list[pd.DataFrame] = field(default_factory=list)
    clusters: list[pd.DataFrame] = field(default_factory=list)
    leaderboards: dict[str, pd.DataFrame] = field(default_factory=dict)
    missing: dict[str, Any] = field(default_factory=dict)  # metric -> missing-output counts

    def result(self, criterion: str) -> CriterionResult:
        """The tables, the missing-output counts keyed ``metric|criterion``."""
        return (self.rows, self.comparisons, self.clusters, self.leaderboards,
                {f"{m}|{criterion}": v for m, v in self.missing.items()})


#: CPU seconds per million cells and 1,000 draws of a piece, measured in a worker process (one
#: numba and one BLAS thread) at 20 x 10,000 items with 3 metrics and default statistics: a
#: metric's correlations at one level with one coefficient (point estimate, permutations and
#: bootstrap draws), and the PERM-BOTH comparisons at one level per pair of metrics
_ROW_COST = {("segment", "kendall"): 6.5, ("segment", "spearman"): 3.3,
             ("segment", "pearson"): 1.0, ("system", "kendall"): 1.6,
             ("system", "spearman"): 1.6, ("system", "pearson"): 0.3}
_PAIR_COST = {"segment": 3.2, "system": 1.65}


@dataclass(frozen=True)
class _Piece(ABC):
    """One piece of a criterion's stages 2-3. Each kind of piece knows how to run itself on
    the criterion's matrices, how its result joins the criterion's tables, and what it costs,
    so a new kind of piece is one new class (and its place in the serial order, :func:`_pieces`).
    """

    prep: PreparedScores  # without its score frames: the pieces need the names only
    settings: ValidationSettings

    @abstractmethod
    def run(self, cm: CriterionMatrices) -> Any:
        """The piece's result, computed by the stage function of the serial run."""

    @abstractmethod
    def add_to(self, tables: _Tables, result: Any) -> None:
        """Add ``result`` (of :meth:`run`) to the criterion's ``tables``."""

    @abstractmethod
    def cost(self, cm: CriterionMatrices) -> float:
        """The expected CPU cost (:data:`_ROW_COST`, :data:`_PAIR_COST`; other levels and
        statistics as the dearest measured), to hand the pieces out largest first."""

    @abstractmethod
    def weight(self, n_metrics: int) -> float:
        """The piece's share of the progress bar (correlations counted per coefficient)."""


@dataclass(frozen=True)
class _Correlations(_Piece):
    """One metric's correlations at one level: every coefficient, or only ``coefficient``."""

    metric: str
    level: str
    coefficient: str = ""  # "": every coefficient of the settings

    def run(self, cm: CriterionMatrices) -> list[dict[str, Any]]:
        one = dataclasses.replace(cm, oriented={self.metric: cm.oriented[self.metric]})
        return correlation_rows(one, self.prep,
                                _narrowed(self.settings, self.level, self.coefficient))

    def add_to(self, tables: _Tables, result: list[dict[str, Any]]) -> None:
        tables.rows += result

    def cost(self, cm: CriterionMatrices) -> float:
        s = self.settings
        cells = float(cm.human.size) / 1e6
        coef = check_statistic(self.coefficient) if self.coefficient else "kendall"
        per = _ROW_COST.get((self.level, coef), 1.6 if self.level == "system" else 6.5)
        return cells * (s.n_resamples + s.permutations + 1) / 1e3 * per

    def weight(self, n_metrics: int) -> float:
        return 1.0 if self.coefficient else float(len(self.settings.coefficients))


@dataclass(frozen=True)
class _Comparisons(_Piece):
    """One level's metric comparisons (Williams, PERM-BOTH) and significance clusters."""

    level: str

    def run(self, cm: CriterionMatrices) -> tuple[list[pd.DataFrame], list[pd.DataFrame]]:
        return metric_comparisons(cm, self.prep, _narrowed(self.settings, self.level))

    def add_to(self, tables: _Tables,
               result: tuple[list[pd.DataFrame], list[pd.DataFrame]]) -> None:
        tables.comparisons += result[0]
        tables.clusters += result[1]

    def cost(self, cm: CriterionMatrices) -> float:
        cells = float(cm.human.size) / 1e6
        pairs = len(cm.oriented) * (len(cm.oriented) - 1) / 2
        return cells * self.settings.permutations / 1e3 * pairs * _PAIR_COST.get(self.level, 3.2)

    def weight(self, n_metrics: int) -> float:
        return 1.0


@dataclass(frozen=True)
class _MetaEvaluation(_Piece):
    """The WMT meta-evaluation statistics (rows, comparisons, clusters, leaderboards); it
    also brings the criterion's missing-output counts."""

    def run(self, cm: CriterionMatrices) -> tuple[CriterionMeta | None, dict[str, Any]]:
        return meta_evaluation(cm, self.prep, self.settings), dict(cm.missing)

    def add_to(self, tables: _Tables,
               result: tuple[CriterionMeta | None, dict[str, Any]]) -> None:
        meta, missing = result
        tables.missing = missing
        if meta is not None:
            tables.rows += meta.rows
            tables.comparisons += [meta.comparisons] if len(meta.comparisons) else []
            tables.clusters += [meta.clusters] if len(meta.clusters) else []
            tables.leaderboards = dict(meta.leaderboards)

    def cost(self, cm: CriterionMatrices) -> float:
        s, cells = self.settings, float(cm.human.size) / 1e6
        return cells * max(s.spa_permutations, 1) / 1e3 * len(s.meta_statistics) * len(cm.oriented)

    def weight(self, n_metrics: int) -> float:
        return float(n_metrics * len(wanted(self.settings.meta_statistics,
                                            self.settings.levels)))


def _run_piece(cm: CriterionMatrices, piece: _Piece) -> Any:
    with single_blas_thread():
        return piece.run(cm)


def _pieces(light: PreparedScores, settings: ValidationSettings, metrics: list[str],
            by_coefficient: bool = False) -> tuple[list[_Piece], list[float]]:
    """The pieces of one criterion in the serial order (the meta-evaluation last) and their
    weights for the progress bar (correlations counted per coefficient)."""
    coefs = list(settings.coefficients) if by_coefficient else [""]
    pieces: list[_Piece] = [_Correlations(light, settings, m, lv, c)
                            for m in metrics for lv in settings.levels for c in coefs]
    pieces += [_Comparisons(light, settings, lv) for lv in settings.levels]
    pieces.append(_MetaEvaluation(light, settings))
    return pieces, [piece.weight(len(metrics)) for piece in pieces]


def _light(prep: PreparedScores) -> PreparedScores:
    """``prep`` without its score frames (what a piece needs: the names)."""
    return dataclasses.replace(prep, segments=prep.segments.iloc[:0], human=prep.human.iloc[:0])


def _metrics(prep: PreparedScores, criterion: str) -> list[str]:
    from nlgeval.report.binding import metrics_for

    return list(metrics_for(criterion, prep.metrics, prep.bound))


def _assemble(criterion: str, pieces: list[_Piece], results: list[Any]) -> CriterionResult:
    """One criterion's tables from its pieces' results, in the serial order."""
    tables = _Tables()
    for piece, result in zip(pieces, results, strict=True):
        piece.add_to(tables, result)
    return tables.result(criterion)


def _group(prep: PreparedScores, light: PreparedScores, settings: ValidationSettings,
           criterion: str, metrics: list[str]) -> SplitGroup:
    pieces, weights = _pieces(light, settings, metrics)
    return SplitGroup(_matrices, (prep, criterion), tuple(pieces), tuple(weights))


def split_criteria(prep: PreparedScores, settings: ValidationSettings,
                   backend: Any) -> list[CriterionResult]:
    """Stages 2-3 of every criterion, each cut into pieces (module docstring), in the
    serial order of :func:`nlgeval.report.tasks.correlate_criteria`."""
    light = _light(prep)
    groups = [_group(prep, light, settings, c, _metrics(prep, c)) for c in prep.criteria]
    done = map_split(_run_piece, groups, backend,
                     description="correlations + bootstrap (pieces)")
    return [_assemble(c, list(g.pieces), results)
            for c, g, results in zip(prep.criteria, groups, done, strict=True)]


#: The matrices and pieces of the split running on forked workers (:func:`fork_split`): set
#: in the parent just before the workers are forked, read by them; nothing is pickled
_FORKED: tuple[list[CriterionMatrices], list[tuple[int, _Piece]]] | None = None


def _run_forked(index: int) -> Any:
    """Piece ``index`` of the forked split (a worker process)."""
    assert _FORKED is not None, "the split's matrices are set before the workers are forked"
    mats, pieces = _FORKED
    criterion, piece = pieces[index]
    return _run_piece(mats[criterion], piece)


class ForkedSplit:
    """The pieces of :func:`fork_split` running on forked worker processes."""

    def __init__(self, pool: ProcessPoolExecutor, futures: list[Future[Any]],
                 order: list[int], groups: list[tuple[str, list[_Piece]]]) -> None:
        self.pool, self.futures, self._order, self._groups = pool, futures, order, groups

    def assemble(self, results: list[Any]) -> list[CriterionResult]:
        """The criteria's tables from the results of :attr:`futures` (in their order)."""
        flat: list[Any] = [None] * len(results)
        for k, res in zip(self._order, results, strict=True):
            flat[k] = res
        out, start = [], 0
        for criterion, pieces in self._groups:
            out.append(_assemble(criterion, pieces, flat[start:start + len(pieces)]))
            start += len(pieces)
        return out

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        """Stop the workers and drop the matrices they read (idempotent)."""
        global _FORKED
        self.pool.shutdown(wait=wait, cancel_futures=cancel_futures)
        _FORKED = None


def fork_split(prep: PreparedScores, settings: ValidationSettings, workers: int) -> ForkedSplit:
    """Start stages 2-3 of every criterion as pieces on ``workers`` forked processes (Linux):
    the matrices are made here, once, before the workers are forked, and the pieces are
    submitted largest first. :meth:`ForkedSplit.assemble` puts the results back in the serial
    order of :func:`nlgeval.report.tasks.correlate_criteria`."""
    global _FORKED
    light = _light(prep)
    mats = [_matrices(prep, c) for c in prep.criteria]
    flat: list[tuple[int, _Piece]] = []
    groups: list[tuple[str, list[_Piece]]] = []
    for i, criterion in enumerate(prep.criteria):
        pieces, _ = _pieces(light, settings, _metrics(prep, criterion), by_coefficient=True)
        groups.append((criterion, pieces))
        flat += [(i, p) for p in pieces]
    # largest first: a stable sort, so equal costs keep the serial order
    order = sorted(range(len(flat)), key=lambda k: -flat[k][1].cost(mats[flat[k][0]]))
    _FORKED = (mats, flat)
    pool = ProcessPoolExecutor(max_workers=max(1, min(workers, len(flat))),
                               initializer=one_numba_thread, mp_context=mp.get_context("fork"))
    # the workers are forked at the first submit; with the parent's objects frozen, their
    # garbage collector does not touch (and so copy) the pages of the study they inherit
    gc.freeze()
    try:
        futures = [pool.submit(_run_forked, k) for k in order]
    except BaseException:
        pool.shutdown(cancel_futures=True)
        _FORKED = None
        raise
    finally:
        gc.unfreeze()
    return ForkedSplit(pool, futures, order, groups)
