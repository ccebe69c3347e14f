"""``validate`` on the execution backends (issue 17): one task per criterion, and the same
numbers on every backend, whatever the number of workers.

The reference is the serial run itself: every random draw is seeded from the study's seed
alone, so the process pool and a Dask LocalCluster must reproduce it bit for bit.
"""

from __future__ import annotations

import pandas as pd
import pytest
from _validate_synth import synthetic_corpus

from nlgeval.errors import InputError
from nlgeval.report import ValidationSettings, run_validation


def _study(**options):
    corpus, seg = synthetic_corpus(n_systems=5, n_items=12)
    return run_validation(corpus, metrics=["good", "noisy"], segment_scores=seg,
                          higher_is_better={"good": True, "noisy": True},
                          n_resamples=200, permutations=100, table9=False, **options)


def _same(a, b) -> None:
    pd.testing.assert_frame_equal(a.correlations, b.correlations, check_exact=True)
    pd.testing.assert_frame_equal(a.comparisons, b.comparisons, check_exact=True)
    pd.testing.assert_frame_equal(a.clusters, b.clusters, check_exact=True)


def test_process_pool_reproduces_the_serial_study() -> None:
    serial = _study()
    assert len(serial.correlations) > 0 and serial.correlations["ci_low"].notna().all()
    _same(serial, _study(backend="process", workers=2))
    assert _study(backend="process", workers=2).settings()["backend"] == "process"


@pytest.mark.slow
def test_dask_local_cluster_reproduces_the_serial_study() -> None:
    pytest.importorskip("distributed")
    _same(_study(), _study(scheduler="local:2"))


def test_backend_settings_are_checked() -> None:
    assert ValidationSettings(scheduler="local:2").backend == "dask"
    with pytest.raises(InputError, match="backend must be one of"):
        ValidationSettings(backend="gpu")
    with pytest.raises(InputError, match="workers must be"):
        ValidationSettings(backend="process", workers=0)
