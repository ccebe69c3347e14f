"""``validate`` gives the serial numbers bit for bit on a Dask LocalCluster at a size where they
used to differ (issue 31): 10 systems x 10,000 items, 2 criteria.

The cause was the BLAS thread count: the bootstrap's system-level Pearson statistics are a
(resamples x items) @ (items x 3 systems) product, which OpenBLAS sums in another order with 2
threads (the main process on a 2-core machine) than with 1 (a Dask worker); 442 of 1,000
resampled coefficients moved in the last digits, and so did 7 of the 36 interval bounds of
`nlgeval validate` (6 of the 8 system-level Pearson bounds of the study below at 300 resamples, with
the main process left at 2 BLAS threads). Every criterion task now runs with one BLAS thread
(:func:`nlgeval.parallel.single_blas_thread`).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from nlgeval.correlation.bootstrap import bootstrap_correlation
from nlgeval.parallel import single_blas_thread
from nlgeval.report import run_validation
from nlgeval.scores import ratings_corpus


def _study_inputs(n_systems: int = 10, n_items: int = 10_000) -> tuple[pd.DataFrame,
                                                                       pd.DataFrame]:
    rng = np.random.default_rng(1)
    q = rng.normal(size=n_systems)[:, None] + rng.normal(size=(n_systems, n_items))
    system = np.repeat([f"s{i}" for i in range(n_systems)], n_items)
    item = np.tile([f"i{j:05d}" for j in range(n_items)], n_systems)
    human = pd.concat([pd.DataFrame({"system": system, "item": item, "criterion": f"c{c}",
                                     "score": (q + rng.normal(size=q.shape)).ravel()})
                       for c in range(2)], ignore_index=True)
    scores = pd.concat([pd.DataFrame({"metric": f"m{m}", "system": system, "item": item,
                                      "score": (q + (m + 1) * rng.normal(size=q.shape)).ravel()})
                        for m in range(2)], ignore_index=True)
    return human, scores


def _matrices() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(1)
    q = rng.normal(size=10)[:, None] + rng.normal(size=(10, 10_000))
    return q + rng.normal(size=q.shape), q + rng.normal(size=q.shape)


def test_one_blas_thread_gives_the_same_sums_whatever_the_process_had() -> None:
    threadpoolctl = pytest.importorskip("threadpoolctl")
    X, Y = _matrices()
    runs = []
    for threads in (1, 2):
        with threadpoolctl.threadpool_limits(threads, "blas"), single_blas_thread():
            runs.append(bootstrap_correlation(X, Y, "system", "pearson", n_resamples=300,
                                              seed=3).distribution)
    np.testing.assert_array_equal(runs[0], runs[1])


@pytest.mark.slow
def test_dask_reproduces_the_serial_study_at_10_systems_x_10000_items() -> None:
    pytest.importorskip("distributed")
    human, scores = _study_inputs()
    corpus = ratings_corpus(human, name="synthetic")
    options = dict(metrics=[], scores=scores, levels=["segment", "system"],
                   coefficients=["pearson"], n_resamples=300, permutations=0,
                   table9=False)
    serial = run_validation(corpus, **options)
    dask = run_validation(corpus, **options, backend="dask", scheduler="local:2")
    assert len(serial.correlations) == 2 * 2 * 2  # metrics x criteria x levels
    assert serial.correlations["ci_low"].notna().all()
    pd.testing.assert_frame_equal(serial.correlations, dask.correlations, check_exact=True)


def test_a_criterion_is_cut_into_pieces_below_it() -> None:
    from nlgeval.report.criterion_split import (
        _Comparisons,
        _Correlations,
        _group,
        _MetaEvaluation,
    )
    from nlgeval.report.prepare import PreparedScores
    from nlgeval.report.settings import ValidationSettings

    p = PreparedScores(pd.DataFrame(), pd.DataFrame(), ["a", "b", "c"], {}, {}, [], [], [],
                       [], pd.DataFrame(), [], ["q"])
    group = _group(p, p, ValidationSettings(), "q", ["a", "b", "c"])
    kinds = [(type(piece), getattr(piece, "metric", ""), getattr(piece, "level", ""))
             for piece in group.pieces]
    assert kinds == [(_Correlations, m, lv) for m in "abc" for lv in ("segment", "system")] + [
        (_Comparisons, "", "segment"), (_Comparisons, "", "system"), (_MetaEvaluation, "", "")]
    assert group.weights == (3.0,) * 6 + (1.0, 1.0, 0.0)  # 3 coefficients; no WMT statistics


@pytest.mark.slow
def test_dask_pieces_of_a_one_criterion_study_give_the_serial_tables() -> None:
    """One criterion, 3 metrics, default coefficients, bootstrap and PERM-BOTH: the study is
    cut into 9 Dask tasks below the criterion (one metric at one level, one level's
    comparisons, the meta-evaluation) and must still give the serial tables bit for bit."""
    pytest.importorskip("distributed")
    human, scores = _study_inputs(n_systems=10, n_items=2_000)
    human = human[human["criterion"] == "c0"]
    extra = scores[scores["metric"] == "m1"].assign(
        metric="m2", score=lambda d: d["score"].to_numpy()[::-1].copy())
    scores = pd.concat([scores, extra], ignore_index=True)
    corpus = ratings_corpus(human, name="synthetic")
    options = dict(metrics=[], scores=scores, n_resamples=200, permutations=100, table9=False)
    serial = run_validation(corpus, **options)
    dask = run_validation(corpus, **options, backend="dask", scheduler="local:2")
    assert len(serial.correlations) == 3 * 2 * 3  # metrics x levels x coefficients
    assert serial.correlations["ci_low"].notna().all() and len(serial.comparisons) > 0
    pd.testing.assert_frame_equal(serial.correlations, dask.correlations, check_exact=True)
    pd.testing.assert_frame_equal(serial.comparisons, dask.comparisons, check_exact=True)
    pd.testing.assert_frame_equal(serial.clusters, dask.clusters, check_exact=True)
