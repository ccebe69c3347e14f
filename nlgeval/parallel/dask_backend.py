"""The Dask backend of :mod:`nlgeval.parallel`: a ``distributed`` cluster (a ``LocalCluster``
started here, or a running scheduler), with the worker settings used for the benchmarks in
docs/scale.md."""

from __future__ import annotations

import os
import uuid
import warnings
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from nlgeval.errors import InputError, NlgevalError


def parse_scheduler(spec: str | None) -> tuple[str, int | str | None]:
    """``"local"`` / ``"local:N"`` -> ``("local", N or None)``; anything else is a scheduler
    address (``tcp://host:8786``, ``host:8786``, a scheduler file ``*.json``) -> ``("address",
    spec)``; ``None`` -> ``("local", None)``.

    Examples
    --------
    >>> parse_scheduler("local:4")
    ('local', 4)
    >>> parse_scheduler("tcp://10.0.0.5:8786")
    ('address', 'tcp://10.0.0.5:8786')
    """
    if spec is None or spec.strip() in ("", "local"):
        return "local", None
    spec = spec.strip()
    if spec.startswith("local:"):
        raw = spec[len("local:"):]
        try:
            n = int(raw)
        except ValueError:
            raise InputError(f"--scheduler {spec!r}: expected local:N with N a whole number of "
                             "workers") from None
        if n < 1:
            raise InputError(f"--scheduler {spec!r}: a LocalCluster needs at least 1 worker")
        return "local", n
    return "address", spec


# Worker settings of the LocalClusters started here. Dask's statistical profiler samples the
# running task's Python stack every 10 ms (holding the GIL), and the system monitor polls
# twice a second; on pure-Python tasks (metric scoring) that cost ~20 % of a worker's CPU in
# benchmarks/bench_dask_scoring.py, and nothing here reads those profiles. The same settings
# for a cluster started elsewhere are environment variables of its workers (docs/scale.md).
LEAN_WORKER_CONFIG = {
    "distributed.worker.profile.enabled": False,
    "distributed.admin.system-monitor.gil.enabled": False,
    "distributed.admin.system-monitor.interval": "2s",
    # Dask's default MALLOC_TRIM_THRESHOLD_=65536 makes glibc return memory after every large
    # free, so numpy-heavy tasks pay page faults on each allocation: the chrF statistics of a
    # chunk took ~1.9x the CPU time of the same call in the main process. Single-threaded
    # BLAS as in Dask's defaults.
    "distributed.nanny.pre-spawn-environ": {
        "OMP_NUM_THREADS": 1, "MKL_NUM_THREADS": 1, "OPENBLAS_NUM_THREADS": 1,
    },
}


def _require_distributed() -> Any:
    try:
        import distributed
    except ImportError:  # pragma: no cover - exercised only without the extra
        raise InputError("the dask backend needs dask and distributed: "
                         "pip install 'nlgeval[dask]' (or 'dask[distributed]')") from None
    return distributed


class LocalClusterTarget:
    """Where a :class:`DaskBackend` runs: a ``LocalCluster`` of ``workers`` single-threaded
    worker processes on 127.0.0.1 with :data:`LEAN_WORKER_CONFIG`, started on connecting and
    stopped by :meth:`DaskBackend.close` (``dashboard``: serve one on a free port)."""

    owns_client = True

    def __init__(self, workers: int, dashboard: bool = True) -> None:
        self.workers = workers
        self.dashboard = dashboard

    def connect(self, distributed: Any) -> tuple[Any, Any]:
        """Start the cluster; its client and the cluster."""
        import dask

        # single-threaded worker processes: the kernels hold the GIL; loopback only; the
        # nannies pass the lean settings on to their workers (also to restarted ones)
        with dask.config.set(LEAN_WORKER_CONFIG):
            cluster = distributed.LocalCluster(
                n_workers=self.workers, threads_per_worker=1, processes=True,
                host="127.0.0.1",
                dashboard_address="127.0.0.1:0" if self.dashboard else None,
                silence_logs=40,
            )
        try:
            return distributed.Client(cluster, set_as_default=False), cluster
        except BaseException:
            cluster.close()  # no backend holds it yet: stop it here
            raise


class SchedulerAddress:
    """Where a :class:`DaskBackend` runs: a running scheduler, by address (``tcp://host:8786``)
    or scheduler file (``*.json``); ``timeout`` (seconds) bounds connecting and waiting for its
    first worker. The cluster is left running; one worker is assumed before connecting."""

    owns_client = True
    workers = 1

    def __init__(self, target: str, timeout: float) -> None:
        self.target = target
        self.timeout = timeout

    def connect(self, distributed: Any) -> tuple[Any, None]:
        """Connect and wait for a worker; the client (no cluster of ours)."""
        target, timeout = self.target, self.timeout
        try:
            if target.endswith(".json") and os.path.exists(target):
                client = distributed.Client(scheduler_file=target, set_as_default=False,
                                            timeout=timeout)
            else:
                client = distributed.Client(target, set_as_default=False, timeout=timeout)
        except (OSError, TimeoutError, ValueError) as exc:
            raise InputError(f"could not reach the Dask scheduler at {target!r} ({exc}; "
                             f"timeout {timeout:g} s)") from None
        try:
            client.wait_for_workers(1, timeout=timeout)
        except TimeoutError:
            client.close()
            raise InputError(f"the Dask scheduler at {target!r} has no workers (waited "
                             f"{timeout:g} s)") from None
        return client, None


class ExistingClient:
    """Where a :class:`DaskBackend` runs: a ``distributed.Client`` connected by the caller,
    used as it is and never closed here."""

    owns_client = False

    def __init__(self, client: Any) -> None:
        self.client = client

    @property
    def workers(self) -> int:
        """The workers its scheduler knows now (at least 1)."""
        return max(1, len(self.client.scheduler_info()["workers"]))

    def connect(self, distributed: Any) -> tuple[Any, None]:
        """The caller's client (no cluster of ours)."""
        return self.client, None


DaskTarget = LocalClusterTarget | SchedulerAddress | ExistingClient


def dask_target(scheduler: str | None = None, *, client: Any = None, dashboard: bool = True,
                timeout: float = 60.0) -> DaskTarget:
    """The target of ``DaskBackend(scheduler, client=..., dashboard=..., timeout=...)``:
    ``client`` if given, else from :func:`parse_scheduler` a :class:`LocalClusterTarget`
    (``local``: one worker per core) or a :class:`SchedulerAddress`.

    Examples
    --------
    >>> dask_target("local:3").workers
    3
    >>> t = dask_target(" tcp://10.0.0.5:8786 ", timeout=5)
    >>> type(t).__name__, t.target, t.timeout, t.workers
    ('SchedulerAddress', 'tcp://10.0.0.5:8786', 5.0, 1)
    """
    timeout = float(timeout)
    if client is not None:
        return ExistingClient(client)
    kind, target = parse_scheduler(scheduler)
    if kind == "local":
        return LocalClusterTarget(int(target or os.cpu_count() or 1), dashboard)
    return SchedulerAddress(str(target), timeout)


class DaskBackend:
    """Run tasks on a Dask ``distributed`` cluster.

    ``scheduler`` is ``"local:N"`` (a ``LocalCluster`` of N single-threaded worker processes on
    127.0.0.1, started and stopped here; ``"local"`` = one per core), the address of a running
    scheduler (``tcp://host:8786``; the cluster is left running), or a scheduler file. A ready
    ``distributed.Client`` can be given instead (``client=``; it is not closed here).
    ``announce`` receives one line with the scheduler and dashboard addresses once connected;
    ``timeout`` (seconds) bounds connecting to a scheduler and waiting for its first worker;
    ``retries`` re-runs a task that raised that many times (a task whose worker died is
    re-run by the scheduler in any case).

    Use as a context manager to keep one connection over several maps; otherwise each
    :meth:`imap_unordered` connects and disconnects. Tasks are submitted all at once with
    explicit keys (``fn`` and the tasks are pickled once each; nothing is hashed) and results
    are gathered as they complete; closing the iterator early cancels what is left.

    Examples
    --------
    Nothing starts before the backend is used (a LocalCluster takes a few seconds):

    >>> be = DaskBackend("local:2")
    >>> be.workers, be.client is None
    (2, True)
    """

    name = "dask"

    def __init__(self, scheduler: str | None = None, *, client: Any = None,
                 announce: Callable[[str], None] | None = None,
                 dashboard: bool = True, timeout: float = 60.0, retries: int = 0) -> None:
        self.scheduler = scheduler if client is None else str(client.scheduler.address)
        self._target = dask_target(scheduler, client=client, dashboard=dashboard,
                                   timeout=timeout)
        self._client = client
        self._cluster: Any = None
        self._own = self._target.owns_client
        self._depth = 0
        self._announce = announce
        self.retries = int(retries)
        _require_distributed()

    # -- connection ----------------------------------------------------------------------
    @property
    def client(self) -> Any:
        """The ``distributed.Client`` (``None`` before connecting)."""
        return self._client

    @property
    def workers(self) -> int:
        """Workers known now (a LocalCluster's size before it starts)."""
        if self._client is not None:
            return max(1, len(self._client.scheduler_info()["workers"]))
        return self._target.workers

    @property
    def dashboard_link(self) -> str | None:
        """The dashboard's address (``None`` before connecting or without a dashboard)."""
        if self._client is None:
            return None
        try:
            return str(self._client.dashboard_link)
        except Exception:  # noqa: BLE001 - no dashboard service on this scheduler
            return None

    def __enter__(self) -> DaskBackend:
        if self._depth == 0 and self._client is None:
            self._connect()
        self._depth += 1
        return self

    def __exit__(self, *exc: object) -> None:
        self._depth -= 1
        if self._depth == 0 and self._own:
            self.close()

    def _connect(self) -> None:
        self._client, self._cluster = self._target.connect(_require_distributed())
        if self._announce is not None:
            dash = self.dashboard_link
            self._announce(
                f"Dask scheduler {self._client.scheduler.address} with {self.workers} "
                f"worker(s); dashboard: {dash or 'not available'}")

    def close(self) -> None:
        """Disconnect; stop the LocalCluster if this backend started it."""
        if self._own and self._client is not None:
            self._client.close()
            self._client = None
        if self._cluster is not None:
            self._cluster.close()
            self._cluster = None

    # -- mapping -------------------------------------------------------------------------
    def imap_unordered(self, fn: Callable[[Any], Any], tasks: Iterable[Any]) -> Iterator[Any]:
        """Yield ``fn(task)`` for every task, in completion order."""
        tasks = list(tasks)
        if not tasks:
            return
        if self._client is None:
            with self:
                yield from self._map(fn, tasks)
        else:
            yield from self._map(fn, tasks)

    def _map(self, fn: Callable[[Any], Any], tasks: list[Any]) -> Iterator[Any]:
        distributed = _require_distributed()
        prefix = f"{getattr(fn, '__name__', 'task')}-{uuid.uuid4().hex[:12]}"
        with warnings.catch_warnings():
            # the task data travels inside the graph on purpose: the scheduler keeps it, so a
            # task can be re-run when its worker dies (scattered data would die with it)
            warnings.filterwarnings("ignore", message="Sending large graph")
            futures = self._client.map(fn, tasks,
                                       key=[f"{prefix}-{i}" for i in range(len(tasks))],
                                       pure=False, retries=self.retries or None)
        pending = set(futures)
        try:
            for fut, result in distributed.as_completed(futures, loop=self._client.loop,
                                                          with_results=True):
                pending.discard(fut)
                fut.release()
                yield result
        except distributed.KilledWorker as exc:
            # the scheduler gave up after the task's workers died one after the other: on
            # large data nearly always the nanny killing a worker over its memory limit
            raise NlgevalError(
                f"Dask workers died while running a task ({exc}); most often a worker ran out "
                "of memory: give the workers more memory, or validate a sample of the items"
            ) from None
        finally:
            if pending:
                self._client.cancel(list(pending))
