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
                   coefficients=["pearson"], resamples=300, permutations=0,
                   table9=False)
    serial = run_validation(corpus, **options)
    dask = run_validation(corpus, **options, backend="dask", scheduler="local:2")
    assert len(serial.correlations) == 2 * 2 * 2  # metrics x criteria x levels
    assert serial.correlations["ci_low"].notna().all()
    pd.testing.assert_frame_equal(serial.correlations, dask.correlations, check_exact=True)
