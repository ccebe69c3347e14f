"""Where a :class:`~nlgeval.parallel.DaskBackend` runs (``dask_target``): a LocalCluster
started here, a running scheduler (address or scheduler file) or the caller's client -- chosen
once from the ``scheduler`` string and the ``client`` argument. The contract checked here:
the workers known before connecting, what each target hands to ``distributed`` (the lean
worker settings, loopback, one thread per worker, the dashboard on or off), the exact error
messages, who closes what, and the announced line. ``distributed`` is replaced by a recording
stand-in except in the last tests, which use a real scheduler without workers (no worker
processes are started)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("distributed", reason="the Dask backend needs the optional extra "
                    "nlgeval[dask] (dask[distributed])")

import dask  # noqa: E402

from nlgeval.errors import InputError  # noqa: E402
from nlgeval.parallel import LEAN_WORKER_CONFIG, DaskBackend  # noqa: E402
from nlgeval.parallel import dask_backend as db  # noqa: E402


class FakeClient:
    def __init__(self, *args: Any, fake: FakeDistributed, **kwargs: Any) -> None:
        self.args, self.kwargs, self.closed = args, kwargs, False
        self.fake = fake
        if fake.refuse is not None:
            raise fake.refuse
        self.scheduler = type("S", (), {"address": "tcp://127.0.0.1:1234"})()
        fake.clients.append(self)

    def wait_for_workers(self, n: int, timeout: float) -> None:
        self.fake.waited.append((n, timeout))
        if not self.fake.workers:
            raise TimeoutError("no workers")

    def scheduler_info(self) -> dict:
        return {"workers": dict.fromkeys(range(self.fake.workers))}

    @property
    def dashboard_link(self) -> str:
        return "http://127.0.0.1:8787/status"

    def close(self) -> None:
        self.closed = True


class FakeCluster:
    def __init__(self, **kwargs: Any) -> None:
        self.kwargs, self.closed = kwargs, False
        # the settings in force while the cluster (and its nannies) start
        self.config = {k: dask.config.get(k) for k in LEAN_WORKER_CONFIG}

    def close(self) -> None:
        self.closed = True


class FakeDistributed:
    """The parts of ``distributed`` the targets call, recording what they were given."""

    def __init__(self, workers: int = 2, refuse: BaseException | None = None) -> None:
        self.workers, self.refuse = workers, refuse
        self.clients: list[FakeClient] = []
        self.clusters: list[FakeCluster] = []
        self.waited: list[tuple[int, float]] = []

    def Client(self, *args: Any, **kwargs: Any) -> FakeClient:  # noqa: N802 - as distributed
        return FakeClient(*args, fake=self, **kwargs)

    def LocalCluster(self, **kwargs: Any) -> FakeCluster:  # noqa: N802 - as distributed
        self.clusters.append(FakeCluster(**kwargs))
        return self.clusters[-1]


@pytest.fixture
def fake(monkeypatch) -> FakeDistributed:
    f = FakeDistributed()
    monkeypatch.setattr(db, "_require_distributed", lambda: f)
    return f


@pytest.mark.parametrize(("spec", "kind", "workers", "target"), [
    (None, db.LocalClusterTarget, os.cpu_count() or 1, None),
    ("", db.LocalClusterTarget, os.cpu_count() or 1, None),
    (" local ", db.LocalClusterTarget, os.cpu_count() or 1, None),
    ("local:3", db.LocalClusterTarget, 3, None),
    (" local:1 ", db.LocalClusterTarget, 1, None),
    ("tcp://10.0.0.5:8786", db.SchedulerAddress, 1, "tcp://10.0.0.5:8786"),
    (" host:8786 ", db.SchedulerAddress, 1, "host:8786"),
    ("cluster/scheduler.json", db.SchedulerAddress, 1, "cluster/scheduler.json"),
])
def test_the_target_is_chosen_from_the_scheduler_string(spec, kind, workers, target) -> None:
    t = db.dask_target(spec, timeout=7)
    assert type(t) is kind and t.workers == workers and t.owns_client
    if target is not None:
        assert (t.target, t.timeout) == (target, 7.0)
    be = DaskBackend(spec)
    assert (be.scheduler, be.workers, be.client, be.dashboard_link) == (spec, workers, None, None)


def test_a_client_is_used_as_given_and_never_closed(fake) -> None:
    client = fake.Client()
    be = DaskBackend("local:5", client=client)  # the client wins over the scheduler string
    assert type(be._target) is db.ExistingClient and not be._target.owns_client
    assert (be.client, be.scheduler, be.workers) == (client, "tcp://127.0.0.1:1234", 2)
    fake.workers = 0
    assert be.workers == 1  # never fewer than one
    with be:
        assert be.client is client
    be.close()
    assert not client.closed and be.client is client and fake.clusters == []


@pytest.mark.parametrize(("spec", "message"), [
    ("local:x", "--scheduler 'local:x': expected local:N with N a whole number of workers"),
    ("local:0", "--scheduler 'local:0': a LocalCluster needs at least 1 worker"),
])
def test_a_bad_local_spec_is_an_input_error(spec, message) -> None:
    with pytest.raises(InputError) as err:
        DaskBackend(spec)
    assert err.value.message == message


@pytest.mark.parametrize("dashboard", [True, False])
def test_a_local_cluster_is_lean_on_loopback_and_stopped_on_close(fake, dashboard) -> None:
    lines: list[str] = []
    be = DaskBackend("local:3", announce=lines.append, dashboard=dashboard, timeout=0.5)
    with be:
        (cluster,), (client,) = fake.clusters, fake.clients
        assert cluster.kwargs == dict(n_workers=3, threads_per_worker=1, processes=True,
                                      host="127.0.0.1", silence_logs=40,
                                      dashboard_address="127.0.0.1:0" if dashboard else None)
        assert cluster.config == LEAN_WORKER_CONFIG
        assert client.args == (cluster,) and client.kwargs == {"set_as_default": False}
        assert fake.waited == []  # its workers are there: no waiting, no timeout
        assert be.client is client and be.workers == 2
        with be:  # nested use keeps the one connection
            pass
        assert not client.closed and fake.clusters == [cluster]
    assert client.closed and cluster.closed and be.client is None
    assert lines == ["Dask scheduler tcp://127.0.0.1:1234 with 2 worker(s); dashboard: "
                     "http://127.0.0.1:8787/status"]
    assert dask.config.get("distributed.worker.profile.enabled") is not False


def test_a_cluster_whose_client_fails_is_stopped(fake) -> None:
    fake.refuse = OSError("refused")
    with pytest.raises(OSError, match="refused"):
        DaskBackend("local:1").__enter__()
    assert fake.clusters[0].closed


def test_an_address_or_a_scheduler_file(fake, tmp_path: Path) -> None:
    with DaskBackend("tcp://h:8786", timeout=3) as be:
        assert fake.clients[-1].args == ("tcp://h:8786",)
        assert fake.clients[-1].kwargs == {"set_as_default": False, "timeout": 3.0}
    assert fake.waited == [(1, 3.0)] and fake.clients[-1].closed and be.client is None
    missing = str(tmp_path / "gone.json")  # not a file (yet): taken as an address
    with DaskBackend(missing):
        assert fake.clients[-1].args == (missing,)
    path = tmp_path / "scheduler.json"
    path.write_text("{}")
    with DaskBackend(str(path), timeout=4):
        assert fake.clients[-1].args == ()
        assert fake.clients[-1].kwargs == {"scheduler_file": str(path),
                                           "set_as_default": False, "timeout": 4.0}
    assert fake.clusters == []


@pytest.mark.parametrize("error", [OSError("refused"), TimeoutError("slow"),
                                   ValueError("bad address")])
def test_an_unreachable_scheduler_is_an_input_error(fake, error) -> None:
    fake.refuse = error
    with pytest.raises(InputError) as err:
        DaskBackend("tcp://h:8786", timeout=2.5).__enter__()
    assert err.value.message == (f"could not reach the Dask scheduler at 'tcp://h:8786' "
                                 f"({error}; timeout 2.5 s)")


def test_a_scheduler_without_workers_is_an_input_error(fake) -> None:
    fake.workers = 0
    be = DaskBackend("tcp://h:8786", timeout=2)
    with pytest.raises(InputError) as err:
        be.__enter__()
    assert err.value.message == ("the Dask scheduler at 'tcp://h:8786' has no workers "
                                 "(waited 2 s)")
    assert fake.clients[-1].closed and be.client is None


@pytest.fixture(scope="module")
def idle_scheduler():
    """A real scheduler in this process, without workers (nothing is started beside it)."""
    import distributed

    with distributed.LocalCluster(n_workers=0, processes=False, protocol="tcp://",
                                  host="127.0.0.1",
                                  dashboard_address=None) as cluster:
        yield cluster


def test_a_real_scheduler_without_workers(idle_scheduler, tmp_path: Path) -> None:
    import distributed

    addr = idle_scheduler.scheduler_address
    with pytest.raises(InputError) as err:
        # 3 s, not 0.5: connecting to this scheduler must not time out on a loaded machine
        # (that would be the other error, "could not reach"), only the wait for a worker
        DaskBackend(addr, timeout=3).__enter__()
    assert err.value.message == f"the Dask scheduler at {addr!r} has no workers (waited 3 s)"
    with distributed.Client(idle_scheduler, set_as_default=False) as client:
        path = str(tmp_path / "scheduler.json")
        client.write_scheduler_file(path)
        with pytest.raises(InputError) as err:
            DaskBackend(path, timeout=3).__enter__()
        assert err.value.message == f"the Dask scheduler at {path!r} has no workers (waited 3 s)"
        with DaskBackend(client=client) as be:
            assert be.scheduler == addr and be.workers == 1 and be.client is client
        assert client.status == "running"
