"""Stages 2-3 of one criterion cut into pieces for a Dask cluster (``--backend dask``).

A study with one criterion (an MQM score) is a single task at the level of criteria, so a
cluster could not help it. Here every criterion is a group of :func:`nlgeval.parallel.map_split`:
its matrices (:func:`~nlgeval.report.stages.criterion_matrices`) are made once, as one Dask
task, and the pieces that use them run as tasks of their own on any worker:

* one metric's correlations at one level (every coefficient, with its bootstrap interval);
* one level's metric comparisons (Williams, PERM-BOTH) and significance clusters;
* the WMT meta-evaluation statistics (one piece).

Each piece calls the same stage function as the serial run, on the same matrices, with its
random draws seeded from the study's seed alone and one BLAS thread, and the pieces are put
back in the serial order (metric, then level; levels in order; the meta-evaluation last), so
the tables are the same bit for bit (``tests/test_scale_dask.py``).
"""

from __future__ import annotations

import copy
import dataclasses
from dataclasses import dataclass
from typing import Any

import pandas as pd

from nlgeval.parallel import SplitGroup, map_split, single_blas_thread
from nlgeval.report.meta import wanted
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


@dataclass(frozen=True)
class _Piece:
    kind: str  # "rows", "comparisons" or "meta"
    prep: PreparedScores  # without its score frames: the pieces need the names only
    settings: ValidationSettings
    metric: str = ""
    level: str = ""


def _matrices(prep: PreparedScores, criterion: str) -> CriterionMatrices:
    with single_blas_thread():
        return criterion_matrices(prep, criterion)


def _one_level(settings: ValidationSettings, level: str) -> ValidationSettings:
    """The settings with ``levels`` narrowed to one level, nothing else re-derived (a
    ``dataclasses.replace`` would re-expand a WMT preset's levels)."""
    out = copy.copy(settings)
    object.__setattr__(out, "levels", (level,))
    return out


def _run_piece(cm: CriterionMatrices, piece: _Piece) -> Any:
    with single_blas_thread():
        if piece.kind == "rows":
            one = dataclasses.replace(cm, oriented={piece.metric: cm.oriented[piece.metric]})
            return correlation_rows(one, piece.prep, _one_level(piece.settings, piece.level))
        if piece.kind == "comparisons":
            return metric_comparisons(cm, piece.prep, _one_level(piece.settings, piece.level))
        return meta_evaluation(cm, piece.prep, piece.settings), dict(cm.missing)


def _group(prep: PreparedScores, light: PreparedScores, settings: ValidationSettings,
           criterion: str, metrics: list[str]) -> SplitGroup:
    pieces = [_Piece("rows", light, settings, m, lv) for m in metrics for lv in settings.levels]
    weights = [float(len(settings.coefficients))] * len(pieces)
    pieces += [_Piece("comparisons", light, settings, level=lv) for lv in settings.levels]
    weights += [1.0] * len(settings.levels)
    pieces.append(_Piece("meta", light, settings))
    weights.append(float(len(metrics) * len(wanted(settings.meta_statistics, settings.levels))))
    return SplitGroup(_matrices, (prep, criterion), tuple(pieces), tuple(weights))


def split_criteria(prep: PreparedScores, settings: ValidationSettings,
                   backend: Any) -> list[CriterionResult]:
    """Stages 2-3 of every criterion, each cut into pieces (module docstring), in the
    serial order of :func:`nlgeval.report.tasks.correlate_criteria`."""
    from nlgeval.report.binding import metrics_for

    light = dataclasses.replace(prep, segments=prep.segments.iloc[:0],
                                human=prep.human.iloc[:0])
    groups = [_group(prep, light, settings, c, list(metrics_for(c, prep.metrics, prep.bound)))
              for c in prep.criteria]
    done = map_split(_run_piece, groups, backend,
                     description="correlations + bootstrap (pieces)")
    out: list[CriterionResult] = []
    for criterion, group, results in zip(prep.criteria, groups, done, strict=True):
        rows: list[dict[str, Any]] = []
        comps: list[pd.DataFrame] = []
        clus: list[pd.DataFrame] = []
        for piece, res in zip(group.pieces, results[:-1], strict=False):
            if piece.kind == "rows":
                rows += res
            else:
                comps += res[0]
                clus += res[1]
        meta, missing = results[-1]
        boards: dict[str, pd.DataFrame] = {}
        if meta is not None:
            rows += meta.rows
            comps += [meta.comparisons] if len(meta.comparisons) else []
            clus += [meta.clusters] if len(meta.clusters) else []
            boards = dict(meta.leaderboards)
        out.append((rows, comps, clus, boards,
                    {f"{m}|{criterion}": v for m, v in missing.items()}))
    return out
