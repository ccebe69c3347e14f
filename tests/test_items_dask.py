"""The Dask backend of the number-of-items study: serial == process == Dask (LocalCluster on
127.0.0.1), bit for bit; the CLI contract (same JSON as the serial backend); a worker process
killed mid-study does not change the result; resume across backends. The reference is always the
serial backend with one cell per task (the study's definition), compared exactly."""

from __future__ import annotations

import json
import os
import signal
import socket
import time
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

pytest.importorskip("distributed", reason="the Dask backend needs the optional extra "
                    "nlgeval[dask] (dask[distributed])")

from nlgeval.cli import app  # noqa: E402
from nlgeval.errors import InputError  # noqa: E402
from nlgeval.items.backends import DaskBackend  # noqa: E402
from nlgeval.items.checkpoint import FILENAME  # noqa: E402
from nlgeval.items.profiles import distribution_from_counts  # noqa: E402
from nlgeval.items.study import run_study  # noqa: E402

runner = CliRunner()
DISTS = [distribution_from_counts("d", [3, 5, 4, 8]),
         distribution_from_counts("e", [6, 2, 2, 0, 10])]
KW = dict(replications=120, n_resamples=60, alpha=0.1, seed=4, sizes=[2, 3, 5, 8, 12])


@pytest.fixture(scope="module")
def cluster():
    """Two single-threaded worker processes on 127.0.0.1 (nanny-supervised: a killed worker is
    restarted), shared by the tests of this module."""
    be = DaskBackend("local:2")
    with be:
        yield be


@pytest.fixture(scope="module")
def reference():
    return run_study(DISTS, backend="serial", chunk_size=1, **KW)


def _same(a, b) -> None:
    pd.testing.assert_frame_equal(a.curves, b.curves, check_exact=True)
    pd.testing.assert_frame_equal(a.thresholds, b.thresholds, check_exact=True)


def test_serial_process_and_dask_agree_bit_for_bit(cluster, reference) -> None:
    _same(reference, run_study(DISTS, backend="process", workers=2, chunk_size=3, **KW))
    for chunk in (1, 6):
        res = run_study(DISTS, backend=cluster, chunk_size=chunk, **KW)
        _same(reference, res)
        assert res.run["execution"]["backend"] == "dask"
        assert res.run["execution"]["workers"] == 2
        assert res.run["execution"]["chunks"] == -(-20 // chunk)
    # a different seed gives different numbers, so the comparisons above can fail
    other = run_study(DISTS, backend="serial", **{**KW, "seed": 5})
    assert not reference.curves["rejections"].equals(other.curves["rejections"])


def test_on_dask_a_distribution_beside_others_in_reverse_order_equals_it_alone(cluster) -> None:
    # streams are keyed by the distribution's name: the other distributions, their order and
    # the backend change nothing (serial alone vs Dask beside the others, reversed)
    extra = distribution_from_counts("évaluatrice", [9, 0, 4, 7, 2])
    beside = run_study([extra, *DISTS[::-1]], backend=cluster, chunk_size=4, **KW)
    for d in DISTS:
        alone = run_study([d], backend="serial", **KW).curves
        mine = beside.curves[beside.curves["distribution"] == d.name].reset_index(drop=True)
        pd.testing.assert_frame_equal(mine, alone, check_exact=True)


def _cli(*extra: str) -> list[str]:
    return ["items", "study", "--profiles", "positive", "--max-size", "25", "--replications",
            "50", "--nboot", "100", "--seed", "1", *extra]


def _strip(out: dict) -> dict:
    # what may differ between runs: wall-clock seconds and the run record (time, execution)
    return {k: v for k, v in out.items() if k not in ("seconds", "run")}


def test_cli_json_is_the_same_as_serial(cluster) -> None:
    serial = runner.invoke(app, _cli("--backend", "serial", "--json"))
    assert serial.exit_code == 0, serial.output
    addr = cluster.client.scheduler.address
    dask = runner.invoke(app, _cli("--backend", "dask", "--scheduler", addr, "--json"))
    assert dask.exit_code == 0, dask.output
    a, b = json.loads(serial.stdout), json.loads(dask.stdout)
    assert _strip(a) == _strip(b)
    assert len(a["curves"]) == 2 * 24
    assert b["run"]["execution"]["scheduler"] == addr
    assert "dashboard" not in dask.stderr  # --json: no chatter
    # without --json the scheduler and dashboard addresses go to stderr, the table to stdout
    text = runner.invoke(app, _cli("--scheduler", addr))
    assert text.exit_code == 0, text.output
    assert "dashboard: http://127.0.0.1:" in text.stderr and addr in text.stderr
    assert "dashboard" not in text.stdout and "bootstrap 10%" in text.stdout
    quiet = runner.invoke(app, _cli("--scheduler", addr, "--quiet"))
    assert quiet.exit_code == 0 and "dashboard" not in quiet.stderr


@pytest.mark.slow
def test_plan_on_a_local_cluster(tmp_path: Path) -> None:
    """``items plan --backend dask --scheduler local:1`` (its own LocalCluster) == serial."""
    lines = ["rater,score"] + [f"r1,{v}" for v in [1, 2, 2, 3, 3, 3, 4, 4, 5, 5, 5, 5]] + \
        [f"r2,{v}" for v in [1, 1, 2, 2, 3, 3, 3, 4, 5, 5]]
    f = tmp_path / "pilot.csv"
    f.write_text("\n".join(lines) + "\n", encoding="utf-8")
    args = ["items", "plan", str(f), "--replications", "40", "--nboot", "40", "--json"]
    serial = runner.invoke(app, [*args, "--backend", "serial"])
    dask = runner.invoke(app, [*args, "--backend", "dask", "--scheduler", "local:1"])
    assert serial.exit_code == 0 and dask.exit_code == 0, (serial.output, dask.output)
    a, b = json.loads(serial.stdout), json.loads(dask.stdout)
    assert _strip(a) == _strip(b)
    assert b["run"]["execution"] == {**b["run"]["execution"], "backend": "dask", "workers": 1,
                                     "scheduler": "local:1"}


def test_resume_on_dask_what_serial_started(cluster, reference, tmp_path: Path) -> None:
    ck = tmp_path / FILENAME

    class StopAfter2:
        name, workers = "serial", 1

        def imap_unordered(self, fn, tasks):
            for i, t in enumerate(tasks):
                if i == 2:
                    raise KeyboardInterrupt
                yield fn(t)

    with pytest.raises(KeyboardInterrupt):
        run_study(DISTS, backend=StopAfter2(), chunk_size=4, checkpoint=ck, **KW)
    res = run_study(DISTS, backend=cluster, checkpoint=ck, resume=True, **KW)
    _same(reference, res)
    assert res.run["execution"]["resumed_cells"] == 8


class KillAWorker:
    """The cluster's backend, but once the first chunk is back, SIGKILL a worker process that
    is running chunks (the nanny restarts it; the scheduler re-runs its tasks elsewhere)."""

    name = "dask"

    def __init__(self, inner: DaskBackend) -> None:
        self.inner, self.workers = inner, inner.workers
        self.killed: tuple[str, int] | None = None

    def imap_unordered(self, fn, tasks):
        client = self.inner.client
        for out in self.inner.imap_unordered(fn, tasks):
            if self.killed is None:
                busy = [w for w, keys in client.processing().items() if keys]
                assert busy, "the study finished too fast to kill a worker in the middle"
                pid = client.run(os.getpid, workers=[busy[0]])[busy[0]]
                os.kill(pid, signal.SIGKILL)
                self.killed = (busy[0], pid)
            yield out


def test_a_worker_killed_mid_study_does_not_change_the_result(cluster, reference) -> None:
    big = {**KW, "sizes": list(range(2, 20)), "replications": 400}  # ~144 one-cell tasks
    expected = run_study(DISTS, backend="serial", **big)
    killer = KillAWorker(cluster)
    res = run_study(DISTS, backend=killer, chunk_size=1, **big)
    assert killer.killed is not None
    _same(expected, res)
    # the worker really died: its process is gone and the nanny brought up a new one
    addr, pid = killer.killed
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        pids = cluster.client.run(os.getpid)
        if len(pids) == 2 and pid not in pids.values():
            break
        time.sleep(0.5)
    assert len(pids) == 2 and pid not in pids.values()


def test_an_unreachable_scheduler_is_an_input_error() -> None:
    with socket.socket() as s:  # a free port on the loopback interface, nobody listening
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(InputError) as err:
        run_study(DISTS, backend=DaskBackend(f"tcp://127.0.0.1:{port}", timeout=2), **KW)
    assert "could not reach the Dask scheduler" in err.value.message
