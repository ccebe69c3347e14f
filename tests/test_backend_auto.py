"""``validate --backend auto`` (the default, issue 29): the process pool for studies with two or
more criteria and enough resampling work on two or more cores, serial otherwise, and the same
numbers either way (the workers inherit kernels compiled in the parent first)."""

from __future__ import annotations

import os

import pandas as pd
import pytest
from _validate_synth import synthetic_corpus

from nlgeval.report import ValidationSettings, run_validation
from nlgeval.report import settings as settings_module


def test_auto_resolves_by_cores_criteria_and_work(monkeypatch: pytest.MonkeyPatch) -> None:
    s = ValidationSettings()
    assert s.backend == "auto"
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    assert s.for_study(5, 16 * 178, 8).backend == "process"      # WebNLG 2020's shape
    assert s.for_study(1, 16 * 178, 8).backend == "serial"       # one criterion: one task
    assert s.for_study(5, 5 * 12, 2).backend == "serial"         # too little work
    assert s.for_study(5, 20 * 50_000, 3).backend == "serial"   # too large to hold twice
    assert ValidationSettings(backend="serial").for_study(5, 16 * 178, 8).backend == "serial"
    monkeypatch.setattr(os, "cpu_count", lambda: 1)
    assert s.for_study(5, 16 * 178, 8).backend == "serial"


def test_auto_on_the_pool_equals_serial(monkeypatch: pytest.MonkeyPatch) -> None:
    corpus, seg = synthetic_corpus(n_systems=5, n_items=12)

    def study(**options):
        return run_validation(corpus, metrics=["good", "noisy"], segment_scores=seg,
                              higher_is_better={"good": True, "noisy": True},
                              permutations=100, table9=False, **options)

    serial = study(backend="serial")
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    monkeypatch.setattr(settings_module, "AUTO_PROCESS_WORK", 0)  # any work: the pool
    auto = study()
    assert len(serial.criteria) >= 2 and auto.config.backend == "process"
    assert auto.settings()["backend"] == "process"
    for name in ("correlations", "comparisons", "clusters"):
        pd.testing.assert_frame_equal(getattr(serial, name), getattr(auto, name),
                                      check_exact=True)
