"""The real server (``nlgeval serve`` on waitress, SQLite WAL) under load and after a crash.

Bounded and self-stopping: every client loop has a step limit and a wall-clock deadline, and
all traffic goes to 127.0.0.1.
"""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest
from experiment_helpers import (
    HttpEvaluator,
    ServerProcess,
    race_submit,
    write_experiment,
)
from sqlalchemy import func, select

from nlgeval.experiment import create_experiment
from nlgeval.experiment.storage import Judgement, Store, Trial, default_url

N_EVALUATORS = 50
N_SYSTEMS = 5
N_ITEMS = 5  # + 1 practice trial each
N_CRITERIA = 2
DEADLINE_S = 120


def _make(tmp_path: Path):  # noqa: ANN202
    d = write_experiment(tmp_path / "load", systems=N_SYSTEMS, items=N_ITEMS,
                         evaluators=N_EVALUATORS, practice=1)
    made = create_experiment(d)
    return d, list(made.evaluators["token"])


def _run_all(evs: list[HttpEvaluator], stop: threading.Event, seed: int) -> list[BaseException]:
    """Each evaluator in its own thread until done, stopped, failed or past the deadline."""
    deadline = time.monotonic() + DEADLINE_S
    errors: list[BaseException] = []

    def work(k: int) -> None:
        rng = np.random.default_rng([seed, k])
        for _ in range(100):  # bounded: 13 steps are enough to finish
            if stop.is_set() or time.monotonic() > deadline:
                return
            try:
                if evs[k].step(rng) == "done":
                    return
            except Exception as exc:  # connection refused after a kill, etc.
                if not stop.is_set():
                    errors.append(exc)
                return

    with ThreadPoolExecutor(len(evs)) as pool:
        list(pool.map(work, range(len(evs))))
    return errors


def _stored(d: Path) -> dict[int, int]:
    """Judgement rows per trial id, read straight from the database file."""
    store = Store(default_url(d))
    try:
        with store.read() as s:
            rows = s.execute(
                select(Judgement.trial_id, func.count()).group_by(Judgement.trial_id)).all()
        return {int(t): int(n) for t, n in rows}
    finally:
        store.dispose()


def _n_trials(d: Path) -> int:
    store = Store(default_url(d))
    try:
        with store.read() as s:
            return int(s.scalar(select(func.count()).select_from(Trial)))
    finally:
        store.dispose()


@pytest.mark.slow
def test_load_50_concurrent_evaluators_no_lost_or_duplicated_judgements(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    d, tokens = _make(tmp_path)
    srv = ServerProcess(d, 0, threads=8).start()
    try:
        evs = [HttpEvaluator(srv.base, t) for t in tokens]
        # a frantic 8-fold submit of one trial: all redirected, stored once
        assert evs[0].step(np.random.default_rng(0)) == "start"
        assert race_submit(evs[0], np.random.default_rng(0), 8) == [303] * 8
        t0 = time.perf_counter()
        errors = _run_all(evs, threading.Event(), seed=1)
        wall = time.perf_counter() - t0
    finally:
        srv.stop()
    assert not errors, errors[:3]
    acked = [t for e in evs for t in e.acked]
    assert len(acked) == len(set(acked)) == N_EVALUATORS * (N_ITEMS + 1)
    stored = _stored(d)
    assert set(stored) == set(acked)  # nothing lost, nothing extra
    assert set(stored.values()) == {N_CRITERIA}  # nothing duplicated
    lat = np.array([x for e in evs for x in e.latencies]) * 1000
    p50, p95, p99 = np.percentile(lat, [50, 95, 99])
    with capsys.disabled():
        print(f"\n[load] {N_EVALUATORS} concurrent evaluators, {len(lat)} requests in "
              f"{wall:.1f} s ({len(lat) / wall:.0f} req/s), {len(acked)} trials judged, "
              f"{sum(stored.values())} judgements stored, 0 lost, 0 duplicated; latency "
              f"p50 {p50:.0f} ms, p95 {p95:.0f} ms, p99 {p99:.0f} ms")
    assert p95 < 10_000  # generous bound for a loaded 2-core CI machine


@pytest.mark.slow
def test_crash_sigkill_mid_load_keeps_every_acknowledged_judgement_and_50_resume(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    d, tokens = _make(tmp_path)
    srv = ServerProcess(d, 0, threads=8).start()  # a free port, kept for the restart
    port = srv.port
    evs = [HttpEvaluator(srv.base, t) for t in tokens]
    stop = threading.Event()

    def killer() -> None:  # kill once about a third of all trials are acknowledged
        target = N_EVALUATORS * (N_ITEMS + 1) // 3
        end = time.monotonic() + DEADLINE_S
        while time.monotonic() < end and sum(len(e.acked) for e in evs) < target:
            time.sleep(0.01)
        stop.set()
        srv.kill()

    k = threading.Thread(target=killer)
    k.start()
    _run_all(evs, stop, seed=2)
    k.join()
    assert srv.proc is not None and srv.proc.returncode == -9
    acked_before = {t for e in evs for t in e.acked}
    assert 0 < len(acked_before) < N_EVALUATORS * (N_ITEMS + 1)
    stored = _stored(d)
    missing = acked_before - set(stored)
    assert not missing, f"{len(missing)} acknowledged trial(s) lost in the crash"
    assert set(stored.values()) == {N_CRITERIA}
    in_flight = len(set(stored) - acked_before)  # committed, but the reply never arrived

    # restart on the same port; every evaluator resumes with the browser state they had
    srv2 = ServerProcess(d, port, threads=8).start()
    try:
        errors = _run_all(evs, threading.Event(), seed=3)
    finally:
        srv2.stop()
    assert not errors, errors[:3]
    stored = _stored(d)
    assert len(stored) == _n_trials(d) == N_EVALUATORS * (N_ITEMS + 1)
    assert set(stored.values()) == {N_CRITERIA}
    acked_all = [t for e in evs for t in e.acked]
    assert len(acked_all) == len(set(acked_all))  # no trial was judged twice
    with capsys.disabled():
        print(f"\n[crash] SIGKILL after {len(acked_before)} acknowledged trials: all "
              f"{len(acked_before)} present after restart ({in_flight} more committed in "
              f"flight); {N_EVALUATORS} evaluators resumed and finished: "
              f"{len(stored)} trials, {sum(stored.values())} judgements, 0 duplicated")


@pytest.mark.parametrize("processes", ["1", "2"])
def test_serve_on_a_port_in_use_is_one_line(tmp_path: Path, processes: str) -> None:
    """``nlgeval serve --port P`` when P is taken: one error line naming the option
    and exit 2 (was the socket's OSError traceback), in one process and pre-forked alike."""
    import socket
    import subprocess
    import sys

    d = write_experiment(tmp_path / "busy", systems=2, items=2, evaluators=2, practice=0)
    create_experiment(d)
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        res = subprocess.run(
            [sys.executable, "-c", "from nlgeval.cli import main; main()", "serve",
             str(d), "--port", str(port), "--processes", processes],
            capture_output=True, text=True, timeout=120)
    assert res.returncode == 2, res.stderr
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in res.stderr, res.stderr
    assert f"option '--port': cannot listen on 127.0.0.1:{port}" in lines[0]
    assert "Address already in use" in lines[0]
