"""Execution backends for embarrassingly parallel work, shared by the whole package.

A backend maps a picklable, module-level function over picklable tasks and yields results as
they finish (in any order). nlgeval ships three: ``serial`` (this process), ``process`` (a local
process pool) and ``dask`` (a Dask ``distributed`` cluster: a ``LocalCluster`` on this machine
or any running scheduler). Another engine (Ray, ...) only needs the same two members,
``workers`` and ``imap_unordered``.

Three rules make every result independent of the backend, the number of workers and the
chunking of the work into tasks:

* a task's function is pure (module level, no global state that changes its answer);
* a task that draws random numbers takes its own stream, :func:`task_seed` (``SeedSequence``
  with a spawn key naming the task, as ``SeedSequence(seed).spawn`` would), never a shared
  generator;
* results are put back in task order (:func:`map_tasks`), whatever order they finish in.

Faults: on Dask a task whose worker dies is run again elsewhere by the scheduler (the function
is pure, so the answer is the same); ``retries`` also re-runs tasks that raised. Progress: the
same bar as a local run (:func:`map_tasks`: units of work done / total), and
:class:`DaskBackend` announces the scheduler and dashboard addresses. See docs/scale.md.
"""

from __future__ import annotations

import contextlib
import multiprocessing as mp
import os
import sys
import uuid
import warnings
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from typing import Any, Protocol, runtime_checkable

import numpy as np

from nlgeval.errors import InputError
from nlgeval.progress import progress_bar

BACKENDS = ("serial", "process", "dask")


@runtime_checkable
class ExecutionBackend(Protocol):
    """What a parallel routine needs from an execution engine.

    Examples
    --------
    >>> isinstance(SerialBackend(), ExecutionBackend)
    True
    """

    workers: int

    def imap_unordered(self, fn: Callable[[Any], Any], tasks: Iterable[Any]) -> Iterator[Any]:
        """Yield ``fn(task)`` for every task, in completion order."""
        ...


def task_seed(seed: int, *key: int) -> np.random.SeedSequence:
    """The random stream of the task named ``key`` (non-negative integers) in a run seeded
    with ``seed``: ``SeedSequence(seed, spawn_key=key)``, i.e. what ``SeedSequence(seed)``
    yields after ``.spawn`` at each level of the key (O'Neill 2015's PCG seeding; numpy's
    parallel-streams recipe). Independent of every other task's stream and of how tasks are
    scheduled.

    Examples
    --------
    >>> root = np.random.SeedSequence(7)
    >>> child = root.spawn(3)[2].spawn(5)[4]
    >>> task_seed(7, 2, 4).generate_state(2).tolist() == child.generate_state(2).tolist()
    True
    """
    return np.random.SeedSequence(int(seed), spawn_key=tuple(int(k) for k in key))


class SerialBackend:
    """Run tasks one after the other in this process.

    Examples
    --------
    >>> list(SerialBackend().imap_unordered(abs, [-1, 2, -3]))
    [1, 2, 3]
    """

    name = "serial"
    workers = 1

    def imap_unordered(self, fn: Callable[[Any], Any], tasks: Iterable[Any]) -> Iterator[Any]:
        """Yield ``fn(task)`` for every task, in order."""
        for task in tasks:
            yield fn(task)


class ProcessPoolBackend:
    """Run tasks in a pool of local worker processes (``fork`` on Linux: workers inherit the
    parent's compiled kernels; elsewhere ``spawn``). At most ``2 * workers`` tasks are in flight,
    so memory stays bounded however many tasks there are.

    Examples
    --------
    >>> be = ProcessPoolBackend(2)
    >>> be.workers
    2
    >>> sorted(be.imap_unordered(abs, [-1, 2, -3]))
    [1, 2, 3]
    """

    name = "process"

    def __init__(self, workers: int | None = None) -> None:
        self.workers = max(1, int(workers or os.cpu_count() or 1))

    def imap_unordered(self, fn: Callable[[Any], Any], tasks: Iterable[Any]) -> Iterator[Any]:
        """Yield ``fn(task)`` for every task, in completion order."""
        ctx = mp.get_context("fork" if sys.platform.startswith("linux") else "spawn")
        it = iter(tasks)
        with ProcessPoolExecutor(max_workers=self.workers, mp_context=ctx) as pool:
            pending = set()
            for task in it:
                pending.add(pool.submit(fn, task))
                if len(pending) >= 2 * self.workers:
                    break
            while pending:
                done, pending = wait(pending, return_when=FIRST_COMPLETED)
                for fut in done:
                    yield fut.result()
                    nxt = next(it, None)
                    if nxt is not None:
                        pending.add(pool.submit(fn, nxt))


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
        self._kind, self._target = ("client", None) if client is not None else \
            parse_scheduler(scheduler)
        self._client = client
        self._cluster: Any = None
        self._own = client is None
        self._depth = 0
        self._announce = announce
        self._dashboard = dashboard
        self._timeout = float(timeout)
        self.retries = int(retries)
        if self._kind == "local":
            self._local_workers = int(self._target or os.cpu_count() or 1)
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
        if self._kind == "local":
            return self._local_workers
        return 1

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
        distributed = _require_distributed()
        if self._kind == "local":
            import dask

            # single-threaded worker processes: the kernels hold the GIL; loopback only; the
            # nannies pass the lean settings on to their workers (also to restarted ones)
            with dask.config.set(LEAN_WORKER_CONFIG):
                self._cluster = distributed.LocalCluster(
                    n_workers=self._local_workers, threads_per_worker=1, processes=True,
                    host="127.0.0.1",
                    dashboard_address="127.0.0.1:0" if self._dashboard else None,
                    silence_logs=40,
                )
            self._client = distributed.Client(self._cluster, set_as_default=False)
        else:
            target = str(self._target)
            try:
                if target.endswith(".json") and os.path.exists(target):
                    self._client = distributed.Client(scheduler_file=target, set_as_default=False,
                                                      timeout=self._timeout)
                else:
                    self._client = distributed.Client(target, set_as_default=False,
                                                      timeout=self._timeout)
            except (OSError, TimeoutError, ValueError) as exc:
                raise InputError(f"could not reach the Dask scheduler at {target!r} ({exc}; "
                                 f"timeout {self._timeout:g} s)") from None
            try:
                self._client.wait_for_workers(1, timeout=self._timeout)
            except TimeoutError:
                self.close()
                raise InputError(f"the Dask scheduler at {target!r} has no workers (waited "
                                 f"{self._timeout:g} s)") from None
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
        finally:
            if pending:
                self._client.cancel(list(pending))


def get_backend(backend: str | ExecutionBackend | None = None, workers: int | None = None,
                scheduler: str | None = None,
                announce: Callable[[str], None] | None = None) -> ExecutionBackend:
    """``"serial"``, ``"process"`` (default when ``workers != 1``), ``"dask"`` (default when a
    ``scheduler`` is given; ``workers`` sizes a LocalCluster when no scheduler is) or a backend
    object, returned as is.

    Examples
    --------
    >>> get_backend("serial").name, get_backend(workers=2).name
    ('serial', 'process')
    >>> get_backend(scheduler="local:2").workers
    2
    """
    if backend is None:
        backend = "dask" if scheduler else ("serial" if workers == 1 else "process")
    if isinstance(backend, str):
        if backend != "dask" and scheduler:
            raise InputError(f"--scheduler is for the dask backend, not {backend!r}")
        if backend == "serial":
            return SerialBackend()
        if backend == "process":
            return ProcessPoolBackend(workers)
        if backend == "dask":
            if scheduler is None and workers:
                scheduler = f"local:{int(workers)}"
            return DaskBackend(scheduler, announce=announce)
        raise InputError(f"unknown backend {backend!r}; use one of {', '.join(BACKENDS)}")
    return backend


def execution_record(backend: ExecutionBackend, **extra: Any) -> dict[str, Any]:
    """What a run record says about its execution: backend name, workers, Dask scheduler.

    Examples
    --------
    >>> execution_record(SerialBackend(), chunks=3)
    {'backend': 'serial', 'workers': 1, 'chunks': 3}
    """
    out: dict[str, Any] = {"backend": getattr(backend, "name", type(backend).__name__),
                           "workers": backend.workers}
    if out["backend"] == "dask":
        out["scheduler"] = getattr(backend, "scheduler", None) or "local"
    return {**out, **extra}


class _Indexed:
    """``(i, task) -> (i, fn(task))``: lets results be put back in task order."""

    def __init__(self, fn: Callable[[Any], Any]) -> None:
        self.fn = fn
        self.__name__ = getattr(fn, "__name__", "task")

    def __call__(self, pair: tuple[int, Any]) -> tuple[int, Any]:
        return pair[0], self.fn(pair[1])


def map_tasks(fn: Callable[[Any], Any], tasks: Sequence[Any],
              backend: str | ExecutionBackend | None = "serial", *,
              description: str = "tasks", weights: Sequence[float] | None = None,
              advance: Callable[[float], None] | None = None) -> list[Any]:
    """``[fn(task) for task in tasks]`` on a backend, in task order, with a progress bar.

    The bar counts ``weights`` (default 1 per task: e.g. outputs per chunk) and is the same on
    every backend; with ``advance`` given, progress is reported to it instead (a caller's own
    bar). A backend with ``__enter__`` (Dask) is kept connected for the whole map.

    Examples
    --------
    >>> map_tasks(abs, [-3, 1, -2], "process", description="abs")
    [3, 1, 2]
    """
    be = get_backend("serial" if backend is None else backend)
    w = [1.0] * len(tasks) if weights is None else [float(x) for x in weights]
    if len(w) != len(tasks):
        raise ValueError("weights must have one entry per task")
    out: list[Any] = [None] * len(tasks)
    with contextlib.ExitStack() as stack:
        if advance is None:
            advance = stack.enter_context(progress_bar(sum(w), description)).advance
        if hasattr(be, "__enter__") and len(tasks):
            stack.enter_context(be)  # type: ignore[arg-type]
        for i, result in be.imap_unordered(_Indexed(fn), list(enumerate(tasks))):
            out[i] = result
            advance(w[i])
    return out


def chunks(n: int, size: int) -> list[range]:
    """Positions ``0..n-1`` cut into consecutive ranges of at most ``size``.

    Examples
    --------
    >>> chunks(5, 2)
    [range(0, 2), range(2, 4), range(4, 5)]
    """
    if size < 1:
        raise InputError(f"chunk size must be positive, got {size}")
    return [range(i, min(i + size, n)) for i in range(0, n, size)]
