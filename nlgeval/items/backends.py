"""Pluggable execution backends for embarrassingly parallel simulation tasks.

A backend maps a picklable, module-level function over picklable tasks and yields results as
they finish (in any order; every result carries its task's key, and every task carries its own
random stream, so results do not depend on the backend or the number of workers). nlgeval ships
three: ``serial`` (this process), ``process`` (a local process pool) and ``dask`` (a Dask
``distributed`` cluster: a ``LocalCluster`` on this machine or any running scheduler). Another
engine (Ray, ...) only needs the same two members, ``workers`` and ``imap_unordered``.

The Dask backend relies on the scheduler for faults: when a worker dies, the tasks it was
running or holding results for are run again elsewhere (the function is pure, so the answer is
the same); see docs/scale.md.
"""

from __future__ import annotations

import multiprocessing as mp
import os
import sys
import uuid
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from typing import Any, Protocol, runtime_checkable

from nlgeval.errors import InputError

BACKENDS = ("serial", "process", "dask")


@runtime_checkable
class ExecutionBackend(Protocol):
    """What the study needs from an execution engine."""

    workers: int

    def imap_unordered(self, fn: Callable[[Any], Any], tasks: Iterable[Any]) -> Iterator[Any]:
        """Yield ``fn(task)`` for every task, in completion order."""
        ...


class SerialBackend:
    """Run tasks one after the other in this process."""

    name = "serial"
    workers = 1

    def imap_unordered(self, fn: Callable[[Any], Any], tasks: Iterable[Any]) -> Iterator[Any]:
        for task in tasks:
            yield fn(task)


class ProcessPoolBackend:
    """Run tasks in a pool of local worker processes (``fork`` on Linux: workers inherit the
    parent's compiled kernels; elsewhere ``spawn``). At most ``2 * workers`` tasks are in flight,
    so memory stays bounded however many tasks there are.
    """

    name = "process"

    def __init__(self, workers: int | None = None) -> None:
        self.workers = max(1, int(workers or os.cpu_count() or 1))

    def imap_unordered(self, fn: Callable[[Any], Any], tasks: Iterable[Any]) -> Iterator[Any]:
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
    spec)``; ``None`` -> ``("local", None)``."""
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


def _require_distributed():
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
    ``timeout`` (seconds) bounds connecting to a scheduler and waiting for its first worker.

    Use as a context manager to keep one connection over several maps (``run_study`` does);
    otherwise each :meth:`imap_unordered` connects and disconnects. Tasks are submitted all at
    once with explicit keys (``fn`` and the tasks are pickled once each; nothing is hashed) and
    results are gathered as they complete; closing the iterator early cancels what is left.
    """

    name = "dask"

    def __init__(self, scheduler: str | None = None, *, client: Any = None,
                 announce: Callable[[str], None] | None = None,
                 dashboard: bool = True, timeout: float = 60.0) -> None:
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
            # single-threaded worker processes: the kernels hold the GIL; loopback only
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
        futures = self._client.map(fn, tasks, key=[f"{prefix}-{i}" for i in range(len(tasks))],
                                   pure=False)
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
    object, returned as is."""
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
