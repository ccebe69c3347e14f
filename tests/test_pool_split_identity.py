"""A study with fewer criteria than worker processes is cut into pieces on the local process
pool (``nlgeval.report.criterion_split.fork_split``): the workers are forked after the
criteria's matrices are made, take the pieces largest first, and the tables must be the
serial ones bit for bit. The reference is the serial path (one task per criterion, the code
that ran before the split), on random studies with ties, missing cells, constant and
near-constant items and scores near 1e200 and 1e-200."""

from __future__ import annotations

import sys
from typing import Any

import numpy as np
import pandas as pd
import pytest

from nlgeval.report import criterion_split, run_validation
from nlgeval.report.settings import ValidationSettings
from nlgeval.scores import ratings_corpus

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"),
                                reason="the split forks its workers (Linux)")


def _inputs(seed: int, n_criteria: int, n_systems: int = 7,
            n_items: int = 120) -> tuple[pd.DataFrame, pd.DataFrame]:
    rng = np.random.default_rng(seed)
    q = rng.normal(size=n_systems)[:, None] + rng.normal(size=(n_systems, n_items))
    system = np.repeat([f"s{i}" for i in range(n_systems)], n_items)
    item = np.tile([f"i{j:04d}" for j in range(n_items)], n_systems)
    humans = []
    for c in range(n_criteria):
        h = np.round(q + rng.normal(size=q.shape))  # ties
        h[:, 0] = 3.0  # a constant item
        h[:, 1] = 3.0 + 1e-13 * np.arange(n_systems)  # a near-constant one
        humans.append(pd.DataFrame({"system": system, "item": item, "criterion": f"c{c}",
                                    "score": h.ravel()}))
    metrics = {"tiny": (q + rng.normal(size=q.shape)) * 1e-200,
               "huge": (q + 2 * rng.normal(size=q.shape)) * 1e200,
               "ties": np.round(q + rng.normal(size=q.shape))}
    scores = pd.concat([pd.DataFrame({"metric": m, "system": system, "item": item,
                                      "score": v.ravel()}) for m, v in metrics.items()],
                       ignore_index=True)
    keep = rng.random(len(scores)) > 0.03  # missing cells
    return pd.concat(humans, ignore_index=True), scores[keep].reset_index(drop=True)


def _run(human: pd.DataFrame, scores: pd.DataFrame, **options: Any) -> Any:
    return run_validation(ratings_corpus(human, name="synthetic"), metrics=[], scores=scores,
                          n_resamples=60, permutations=40, **options)


@pytest.mark.parametrize(("seed", "n_criteria", "workers", "statistics", "large"), [
    (0, 1, 2, None, False),
    (1, 1, 3, ("pearson", "kendall", "pairwise_accuracy", "acc_eq"), False),
    (2, 2, 3, None, False),
    (4, 1, 2, None, True),  # a large study: the pieces are done before Table 9 starts
])
def test_pieces_on_forked_workers_give_the_serial_tables(
        monkeypatch: pytest.MonkeyPatch, seed: int, n_criteria: int, workers: int,
        statistics: tuple[str, ...] | None, large: bool) -> None:
    human, scores = _inputs(seed, n_criteria)
    if large:
        monkeypatch.setattr("nlgeval.report.tasks.AUTO_PROCESS_MAX_OUTPUTS", 0)
    extra = {} if statistics is None else {"statistics": statistics}
    serial = _run(human, scores, backend="serial", **extra)
    splits: list[criterion_split.ForkedSplit] = []
    real = criterion_split.fork_split

    def spy(*args: object) -> criterion_split.ForkedSplit:
        splits.append(real(*args))  # type: ignore[arg-type]
        return splits[-1]

    monkeypatch.setattr("nlgeval.report.tasks.fork_split", spy)
    pool = _run(human, scores, backend="process", workers=workers, **extra)
    assert len(splits) == 1 and len(splits[0].futures) > workers  # the split path ran
    assert criterion_split._FORKED is None  # the parent let the matrices go
    corr = serial.correlations
    assert corr["value"].notna().sum() >= 9 and corr["ci_low"].notna().any()
    assert len(serial.comparisons) > 0
    for name in ("correlations", "comparisons", "clusters", "significant_differences"):
        pd.testing.assert_frame_equal(getattr(serial, name), getattr(pool, name),
                                      check_exact=True)
    assert serial.leaderboards.keys() == pool.leaderboards.keys()
    for key, board in serial.leaderboards.items():
        pd.testing.assert_frame_equal(board, pool.leaderboards[key], check_exact=True)
    assert serial.missing == pool.missing and serial.notes == pool.notes


def test_pieces_go_out_largest_first() -> None:
    human, scores = _inputs(3, 1)
    from nlgeval.report.prepare import ScoreInputs, prepare_scores

    settings = ValidationSettings(metrics=(), n_resamples=50, permutations=30)
    prep = prepare_scores(ratings_corpus(human, name="synthetic"), settings,
                          ScoreInputs(scores=scores))
    split = criterion_split.fork_split(prep, settings, 2)
    try:
        results = [f.result() for f in split.futures]
    finally:
        split.shutdown()
    assert criterion_split._FORKED is None
    mats = criterion_split._matrices(prep, "c0")
    (_, pieces), = split._groups
    costs = [pieces[k].cost(mats) for k in split._order]
    assert costs == sorted(costs, reverse=True) and costs[0] > costs[-1]
    first = pieces[split._order[0]]
    assert isinstance(first, criterion_split._Correlations | criterion_split._Comparisons)
    assert first.level == "segment"
    # 3 metrics x 2 levels x 3 coefficients, 2 levels of comparisons, the meta-evaluation
    assert len(pieces) == 18 + 2 + 1 and sorted(split._order) == list(range(21))
    (rows, comps, _, _, missing), = split.assemble(results)
    assert [(r["metric"], r["level"], r["statistic"]) for r in rows] == [
        (m, lv, c) for m in ("tiny", "huge", "ties") for lv in ("segment", "system")
        for c in ("pearson", "spearman", "kendall")]
    assert len(comps) > 0 and set(missing) == {f"{m}|c0" for m in ("tiny", "huge", "ties")}
