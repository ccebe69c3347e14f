"""Scoring on the execution backends (``score_corpus(..., backend=)``, ``nlgeval score --backend
dask --scheduler local:2``): chunks of outputs per task, each worker with its own statistics
cache or none. The reference is always the one-process run (``backend=None``, ``n_jobs=1``) on
the bundled E2E corpus (Dušek et al. 2020), compared exactly: segment scores, corpus scores and
signatures, the JSON of the CLI and the segment file byte for byte. A worker killed mid-run does
not change the result."""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

pytest.importorskip("distributed", reason="the Dask backend needs the optional extra "
                    "nlgeval[dask] (dask[distributed])")

from nlgeval.cli import app  # noqa: E402
from nlgeval.corpora import load_corpus  # noqa: E402
from nlgeval.metrics.scoring import score_corpus  # noqa: E402
from nlgeval.parallel import DaskBackend  # noqa: E402

runner = CliRunner()
SYSTEMS = ["adapt", "tgen"]
METRICS = ["chrf", "bleu"]


@pytest.fixture(autouse=True)
def _private_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("NLGEVAL_CACHE", str(tmp_path / "cache"))


@pytest.fixture(scope="module")
def e2e():
    return load_corpus("e2e")


@pytest.fixture(scope="module")
def cluster():
    """Two single-threaded worker processes on 127.0.0.1 (a killed worker is restarted by its
    nanny), shared by the tests of this module."""
    with DaskBackend("local:2") as be:
        yield be


@pytest.fixture(scope="module")
def reference(e2e):
    return score_corpus(e2e, METRICS, systems=SYSTEMS, cache=False, n_jobs=1)


def _same(a, b) -> None:
    pd.testing.assert_frame_equal(a.segments, b.segments, check_exact=True)
    pd.testing.assert_frame_equal(a.corpus_scores, b.corpus_scores, check_exact=True)
    assert a.signatures == b.signatures


def test_every_backend_and_chunking_gives_the_same_scores(e2e, reference, cluster) -> None:
    n = 2 * 630
    for backend, chunk in (("serial", 97), ("process", 400), (cluster, 150), (cluster, 2000)):
        res = score_corpus(e2e, METRICS, systems=SYSTEMS, cache=False, backend=backend,
                           workers=2, chunk_size=chunk)
        _same(reference, res)
        assert res.execution["chunks"] == len(METRICS) * -(-n // chunk)
    # the workers the scheduler knows when the run ends: on a loaded 2-core machine one of
    # the two was once not counted at that moment (CI, 2026-11-26), so 1 is accepted too;
    # the scores above are what must not change
    assert res.execution["backend"] == "dask" and res.execution["workers"] in (1, 2)
    # the comparison can fail: another system's scores differ
    other = score_corpus(e2e, ["chrf"], systems=["sheff1", "sheff2"], cache=False)
    chrf = reference.segments[reference.segments["metric"] == "chrf"]["score"]
    assert not other.segments["score"].equals(chrf.reset_index(drop=True))


def test_each_worker_uses_its_own_cache(e2e, reference, cluster, tmp_path: Path) -> None:
    where = tmp_path / "worker-cache"
    first = score_corpus(e2e, METRICS, systems=SYSTEMS, cache_dir=where, backend=cluster,
                         chunk_size=300)
    _same(reference, first)
    assert first.cache_hits == 0 and first.cache_misses > 0
    assert (where / "scores.sqlite").exists()
    # a different chunking: no batch-cache hit, every segment from the workers' cache
    second = score_corpus(e2e, METRICS, systems=SYSTEMS, cache_dir=where, backend=cluster,
                          chunk_size=250)
    _same(reference, second)
    assert second.cache_hits > 0 and second.cache_misses == 0


def _args(*extra: str) -> list[str]:
    return ["score", "e2e", "--metrics", "chrf,bleu", "--systems", ",".join(SYSTEMS),
            "--no-cache", "--json", *extra]


@pytest.mark.slow
def test_cli_local_cluster_is_bit_identical_to_serial(tmp_path: Path) -> None:
    serial = runner.invoke(app, _args("--out", str(tmp_path / "serial.csv")))
    assert serial.exit_code == 0, serial.output
    dask = runner.invoke(app, _args("--backend", "dask", "--scheduler", "local:2",
                                    "--chunk-size", "300", "--out", str(tmp_path / "dask.csv")))
    assert dask.exit_code == 0, dask.output
    a, b = json.loads(serial.stdout), json.loads(dask.stdout)
    assert {k: v for k, v in a.items() if k != "out"} == {k: v for k, v in b.items()
                                                           if k != "out"}
    assert len(a["corpus_scores"]) == 4
    assert (tmp_path / "serial.csv").read_bytes() == (tmp_path / "dask.csv").read_bytes()


def test_cli_prints_the_dashboard_on_stderr(cluster) -> None:
    addr = cluster.client.scheduler.address
    res = runner.invoke(app, ["score", "e2e", "--metrics", "chrf", "--systems", "adapt",
                              "--no-cache", "--scheduler", addr])
    assert res.exit_code == 0, res.output
    assert "dashboard: http://127.0.0.1:" in res.stderr and addr in res.stderr
    assert "dashboard" not in res.stdout and "adapt" in res.stdout


class KillAWorker:
    """The cluster's backend, but once the first task is back, SIGKILL a worker process that is
    running tasks (the scheduler re-runs its tasks on the other worker or the restarted one)."""

    name = "dask"

    def __init__(self, inner: DaskBackend) -> None:
        self.inner, self.workers = inner, inner.workers
        self.killed: int | None = None

    def imap_unordered(self, fn, tasks):
        client = self.inner.client
        for out in self.inner.imap_unordered(fn, tasks):
            if self.killed is None:
                busy = [w for w, keys in client.processing().items() if keys]
                assert busy, "scoring finished too fast to kill a worker in the middle"
                self.killed = client.run(os.getpid, workers=[busy[0]])[busy[0]]
                os.kill(self.killed, signal.SIGKILL)
            yield out


def test_a_worker_killed_mid_scoring_does_not_change_the_scores(e2e, reference,
                                                                 cluster) -> None:
    killer = KillAWorker(cluster)
    res = score_corpus(e2e, METRICS, systems=SYSTEMS, cache=False, backend=killer,
                       chunk_size=40)
    assert killer.killed is not None
    _same(reference, res)
