"""The pieces of ``nlgeval.report.criterion_split`` run and assemble themselves (one class per
kind of piece, no dispatch on a kind string). The reference is the dispatch they replaced,
kept here as it was (a ``kind`` of "rows", "comparisons" or "meta" read from the piece's
class): the same results, the same tables, costs and progress weights, bit for bit, on
random studies with ties, missing cells, constant and near-constant items and scores near
1e200 and 1e-200."""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import numpy as np
import pandas as pd
import pytest

from nlgeval.report import criterion_split as cs
from nlgeval.report.meta import wanted
from nlgeval.report.meta_statistics import check_statistic
from nlgeval.report.prepare import ScoreInputs, prepare_scores
from nlgeval.report.settings import ValidationSettings
from nlgeval.report.stages import correlation_rows, meta_evaluation, metric_comparisons
from nlgeval.scores import ratings_corpus

# ---- the previous code path, the reference ---------------------------------------------------


def _kind(piece: cs._Piece) -> str:
    return {cs._Correlations: "rows", cs._Comparisons: "comparisons",
            cs._MetaEvaluation: "meta"}[type(piece)]


def _old_run_piece(cm: Any, piece: Any) -> Any:
    if _kind(piece) == "rows":
        one = dataclasses.replace(cm, oriented={piece.metric: cm.oriented[piece.metric]})
        return correlation_rows(one, piece.prep,
                                cs._narrowed(piece.settings, piece.level, piece.coefficient))
    if _kind(piece) == "comparisons":
        return metric_comparisons(cm, piece.prep, cs._narrowed(piece.settings, piece.level))
    return meta_evaluation(cm, piece.prep, piece.settings), dict(cm.missing)


def _old_assemble(criterion: str, pieces: list[Any], results: list[Any]) -> Any:
    rows: list[dict[str, Any]] = []
    comps: list[pd.DataFrame] = []
    clus: list[pd.DataFrame] = []
    for piece, res in zip(pieces, results[:-1], strict=False):
        if _kind(piece) == "rows":
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
    return (rows, comps, clus, boards, {f"{m}|{criterion}": v for m, v in missing.items()})


_ROW_COST = {("segment", "kendall"): 6.5, ("segment", "spearman"): 3.3,
             ("segment", "pearson"): 1.0, ("system", "kendall"): 1.6,
             ("system", "spearman"): 1.6, ("system", "pearson"): 0.3}
_PAIR_COST = {"segment": 3.2, "system": 1.65}


def _old_cost(piece: Any, cm: Any) -> float:
    s = piece.settings
    cells = float(cm.human.size) / 1e6
    if _kind(piece) == "rows":
        coef = check_statistic(piece.coefficient) if piece.coefficient else "kendall"
        per = _ROW_COST.get((piece.level, coef), 1.6 if piece.level == "system" else 6.5)
        return cells * (s.n_resamples + s.permutations + 1) / 1e3 * per
    if _kind(piece) == "comparisons":
        pairs = len(cm.oriented) * (len(cm.oriented) - 1) / 2
        return cells * s.permutations / 1e3 * pairs * _PAIR_COST.get(piece.level, 3.2)
    return cells * max(s.spa_permutations, 1) / 1e3 * len(s.meta_statistics) * len(cm.oriented)


def _old_weights(settings: ValidationSettings, metrics: list[str],
                 by_coefficient: bool) -> list[float]:
    n_rows = len(metrics) * len(settings.levels) * (
        len(settings.coefficients) if by_coefficient else 1)
    weights = [1.0 if by_coefficient else float(len(settings.coefficients))] * n_rows
    weights += [1.0] * len(settings.levels)
    weights.append(float(len(metrics) * len(wanted(settings.meta_statistics, settings.levels))))
    return weights


# ---- exact equality of nested results ---------------------------------------------------------


def _same(a: Any, b: Any) -> None:
    assert type(a) is type(b)
    if isinstance(a, pd.DataFrame):
        pd.testing.assert_frame_equal(a, b, check_exact=True)
    elif isinstance(a, np.ndarray):
        np.testing.assert_array_equal(a, b, strict=True)
    elif isinstance(a, list | tuple):
        assert len(a) == len(b)
        for x, y in zip(a, b, strict=True):
            _same(x, y)
    elif isinstance(a, dict):
        assert list(a) == list(b)
        for key in a:
            _same(a[key], b[key])
    elif dataclasses.is_dataclass(a):
        for f in dataclasses.fields(a):
            _same(getattr(a, f.name), getattr(b, f.name))
    elif isinstance(a, float) and math.isnan(a):
        assert math.isnan(b)
    else:
        assert a == b


# ---- the study --------------------------------------------------------------------------------


def _prepared(seed: int, settings: ValidationSettings) -> Any:
    rng = np.random.default_rng(seed)
    n_systems, n_items = 6, 40
    q = rng.normal(size=n_systems)[:, None] + rng.normal(size=(n_systems, n_items))
    system = np.repeat([f"s{i}" for i in range(n_systems)], n_items)
    item = np.tile([f"i{j:03d}" for j in range(n_items)], n_systems)
    h = np.round(q + rng.normal(size=q.shape))  # ties
    h[:, 0] = 3.0  # a constant item
    h[:, 1] = 3.0 + 1e-13 * np.arange(n_systems)  # a near-constant one
    human = pd.DataFrame({"system": system, "item": item, "criterion": "c0",
                          "score": h.ravel()})
    metrics = {"tiny": (q + rng.normal(size=q.shape)) * 1e-200,
               "huge": (q + 2 * rng.normal(size=q.shape)) * 1e200,
               "ties": np.round(q + rng.normal(size=q.shape)),
               "flat": np.full(q.shape, 2.0)}  # a constant metric
    scores = pd.concat([pd.DataFrame({"metric": m, "system": system, "item": item,
                                      "score": v.ravel()}) for m, v in metrics.items()],
                       ignore_index=True)
    keep = rng.random(len(scores)) > 0.05  # missing cells
    scores = scores[keep].reset_index(drop=True)
    return prepare_scores(ratings_corpus(human, name="synthetic"), settings,
                          ScoreInputs(scores=scores))


@pytest.mark.parametrize(("seed", "statistics", "by_coefficient"), [
    (0, None, False),
    (1, None, True),
    (2, ("pearson", "kendall", "pairwise_accuracy", "acc_eq"), False),
    (3, ("pearson", "kendall", "pairwise_accuracy", "acc_eq"), True),
    (4, ("wmt23",), True),
])
def test_pieces_give_what_the_kind_dispatch_gave(
        seed: int, statistics: tuple[str, ...] | None, by_coefficient: bool) -> None:
    settings = ValidationSettings(metrics=(), n_resamples=30, permutations=20,
                                  statistics=statistics)
    prep = _prepared(seed, settings)
    light = cs._light(prep)
    metrics = cs._metrics(prep, "c0")
    cm = cs._matrices(prep, "c0")
    pieces, weights = cs._pieces(light, settings, metrics, by_coefficient=by_coefficient)
    assert weights == _old_weights(settings, metrics, by_coefficient)
    assert [piece.cost(cm) for piece in pieces] == [_old_cost(p, cm) for p in pieces]
    new = [cs._run_piece(cm, piece) for piece in pieces]
    old = [_old_run_piece(cm, piece) for piece in pieces]
    _same(new, old)
    tables, reference = cs._assemble("c0", pieces, new), _old_assemble("c0", pieces, old)
    _same(tables, reference)
    rows, comps, _, boards, missing = tables
    values = pd.DataFrame(rows)["value"]
    assert values.notna().sum() >= 6 and values.isna().any()  # the constant metric: NaN
    assert len(comps) > 0 and set(missing) == {f"{m}|c0" for m in metrics}
    meta_rows = {row["statistic"] for row in rows} - set(settings.coefficients)
    assert bool(meta_rows) == (statistics is not None)  # the meta-evaluation piece's rows
    assert bool(boards) == (statistics == ("wmt23",))  # ... and its leaderboards


def test_a_new_kind_of_piece_must_say_how_it_runs_and_joins_the_tables() -> None:
    @dataclasses.dataclass(frozen=True)
    class Incomplete(cs._Piece):
        def run(self, cm: Any) -> Any:
            return None

    with pytest.raises(TypeError, match="abstract"):
        Incomplete(None, ValidationSettings())  # type: ignore[abstract, arg-type]
