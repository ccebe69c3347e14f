"""The main job's scheduling (issue 29): the criteria on the worker processes while this process
computes the human references and Table 9, and the figures drawn by a process started before
the study. Neither may change a number or a file: each is compared with the code path it
replaces, kept here as the reference."""

from __future__ import annotations

import os
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from _validate_synth import synthetic_corpus

from nlgeval.parallel import map_tasks
from nlgeval.report import ValidationSettings, run_validation, writer
from nlgeval.report import tasks as tasks_module
from nlgeval.report.prepare import ScoreInputs, prepare_scores
from nlgeval.report.study import example_study

FRAMES = ("correlations", "comparisons", "clusters", "human_correlations", "rater_agreement",
          "metric_system_scores", "human_system_scores", "segments")


def _scores(seed: int) -> tuple:
    """The synthetic corpus with awkward metric scores: ties, missing cells, a constant and a
    near-constant metric, values near 1e200 and 1e-200."""
    corpus, seg = synthetic_corpus(n_systems=5, n_items=12, seed=seed)
    rng = np.random.default_rng(seed)
    good = seg[seg["metric"] == "good"]
    extra = [good.assign(metric="tied", score=np.round(good["score"] / 10)),
             good.assign(metric="const", score=1.0),
             good.assign(metric="near", score=1.0 + 1e-13 * rng.integers(0, 2, len(good))),
             good.assign(metric="huge", score=good["score"] * 1e200),
             good.assign(metric="tiny", score=good["score"] * 1e-200)]
    seg = pd.concat([seg, *extra], ignore_index=True)
    seg = seg.drop(index=rng.choice(len(seg), 15, replace=False))  # missing outputs
    seg.loc[seg.sample(5, random_state=seed).index, "score"] = np.nan
    return corpus, seg


def _study(corpus, seg, backend: str):
    metrics = sorted(set(seg["metric"]))
    with warnings.catch_warnings():  # the constant metric is degenerate
        warnings.simplefilter("ignore")
        return run_validation(corpus, metrics=metrics, segment_scores=seg,
                              higher_is_better=dict.fromkeys(metrics, True),
                              lower_is_better=["ter_like"], n_resamples=60, permutations=40,
                              levels=["segment", "item", "system"], backend=backend)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_overlapped_criteria_equal_the_old_paths(seed: int) -> None:
    corpus, seg = _scores(seed)
    serial = _study(corpus, seg, "serial")
    pool = _study(corpus, seg, "process")
    assert pool.config.backend == "process" and len(pool.criteria) == 2
    for name in FRAMES:
        pd.testing.assert_frame_equal(getattr(serial, name), getattr(pool, name),
                                      check_exact=True)
    pd.testing.assert_frame_equal(serial.significant_differences,
                                  pool.significant_differences, check_exact=True)
    assert serial.notes == pool.notes and serial.verdict == pool.verdict
    # the previous process path: one map_tasks over the criteria, then the tables
    settings = pool.config
    metrics = sorted(set(seg["metric"]))
    prep = prepare_scores(corpus, settings, ScoreInputs(
        segment_scores=seg, higher_is_better=dict.fromkeys(metrics, True)))
    old = tasks_module._combine(map_tasks(
        tasks_module._run_criterion,
        [tasks_module._CriterionTask(prep, settings, c) for c in prep.criteria], "process"))
    new = tasks_module.start_criteria(prep, settings)
    assert new.running
    for a, b in zip(old[:3], new.result()[:3], strict=True):
        pd.testing.assert_frame_equal(a, b, check_exact=True)
    assert not new.running


def test_timings_keep_the_stage_order() -> None:
    corpus, seg = synthetic_corpus(n_systems=5, n_items=12)
    for backend in ("serial", "process"):
        study = run_validation(corpus, metrics=["good", "noisy"], segment_scores=seg,
                               higher_is_better={"good": True, "noisy": True}, n_resamples=20,
                               permutations=20, backend=backend)
        assert list(study.timings) == ["scoring", "correlations", "tables",
                                       "human references", "significant differences"]
        # overlapped, the correlation stage's wall time contains the stages run meanwhile
        if backend == "process":
            assert study.timings["correlations"] >= study.timings["human references"]


def test_cancel_shuts_the_workers_down() -> None:
    corpus, seg = synthetic_corpus(n_systems=5, n_items=12)
    settings = ValidationSettings(n_resamples=20, permutations=20, backend="process")
    prep = prepare_scores(corpus, settings, ScoreInputs(
        segment_scores=seg, higher_is_better={"good": True, "noisy": True}))
    pending = tasks_module.start_criteria(prep, settings)
    pending.cancel()
    pending.cancel()
    assert not pending.running


def _files(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


def test_drawer_draws_the_same_files(tmp_path: Path) -> None:
    if "fork" not in __import__("multiprocessing").get_all_start_methods():
        pytest.skip("the drawer needs fork")
    study = example_study()
    writer.study_figures(study, tmp_path / "old", workers=1, formats="png,svg")
    drawer = writer.figure_drawer(("png", "svg"))
    assert drawer is not None
    got = writer.start_figures(study, tmp_path / "new", formats="png,svg", drawer=drawer)()
    assert list(got) == list(writer.study_figures(study, tmp_path / "again", workers=2))
    old, new = _files(tmp_path / "old"), _files(tmp_path / "new")
    assert sorted(old) == sorted(new) and len(old) == 2 * len(got)
    png = [k for k in old if k.endswith(".png")]
    assert all(old[k] == new[k] for k in png)  # SVGs carry a date; PNGs are byte-identical
    drawer.close()


def test_drawer_reports_a_failed_drawing(tmp_path: Path) -> None:
    drawer = writer.figure_drawer(("png",))
    if drawer is None:
        pytest.skip("the drawer needs fork")
    bad = [("a", "no-such-kind", {}, str(tmp_path), ("png",)),
           ("b", "no-such-kind", {}, str(tmp_path), ("png",))]
    with pytest.raises(RuntimeError, match="no-such-kind"):
        drawer.draw(bad)()
    assert drawer._process is None  # ended after drawing


def test_drawer_closed_unused_leaves_no_process() -> None:
    drawer = writer.figure_drawer(("png",))
    if drawer is None:
        pytest.skip("the drawer needs fork")
    pid = drawer._process.pid
    drawer.close()
    drawer.close()
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)
    assert writer.figure_drawer(()) is None


def test_waits_for_a_free_core_only_when_the_criteria_do_not_divide(
        monkeypatch: pytest.MonkeyPatch) -> None:
    import threading
    from concurrent.futures import Future

    monkeypatch.setattr(os, "cpu_count", lambda: 2)

    def pending(n: int, done: int) -> tuple[tasks_module.PendingCriteria, list[Future]]:
        futures: list[Future] = [Future() for _ in range(n)]
        for f in futures[:done]:
            f.set_result(None)
        return tasks_module.PendingCriteria(None, None, futures, pool=object(),
                                            workers=2), futures

    even, _ = pending(4, 0)
    even.wait_for_a_free_core()  # 4 on 2 workers: at once, nothing done
    one_left, _ = pending(5, 4)
    one_left.wait_for_a_free_core()  # one running: a core is free
    two_left, futures = pending(5, 3)
    timer = threading.Timer(0.3, futures[3].set_result, args=(None,))
    timer.start()
    two_left.wait_for_a_free_core()  # returns only once the fourth is done
    assert futures[3].done() and not futures[4].done()
    timer.join()
