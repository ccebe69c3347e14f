"""The execution backends and the map over tasks: serial, a local process pool and Dask, and
:func:`map_tasks`, which puts results back in task order. Re-exported by :mod:`nlgeval.parallel`
(see its docstring for the three rules that make results independent of the backend)."""

from __future__ import annotations

import contextlib
import multiprocessing as mp
import os
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from typing import Any, Protocol, runtime_checkable

import numpy as np

from nlgeval.errors import InputError
from nlgeval.parallel._threads import single_blas_thread as single_blas_thread
from nlgeval.parallel.dask_backend import LEAN_WORKER_CONFIG as LEAN_WORKER_CONFIG
from nlgeval.parallel.dask_backend import DaskBackend as DaskBackend
from nlgeval.parallel.dask_backend import parse_scheduler as parse_scheduler
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

    @property
    def workers(self) -> int:
        """How many tasks run at once."""
        ...

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


def one_numba_thread() -> None:
    """Initializer of the process pools' workers: one numba thread per worker process.

    Two workers on two cores with numba's default thread count (one per core) would run 2 x 2
    threads that compete for the cores. The parallel kernels give the same numbers for any
    thread count (each thread writes its own slots; sums run in a fixed order), so this changes
    CPU time only. When numba is already imported (a forked worker inherits the parent's
    modules) the count is set with ``numba.set_num_threads``; otherwise ``NUMBA_NUM_THREADS``
    is set before numba is imported, so importing this does not import numba.

    Examples
    --------
    >>> from concurrent.futures import ProcessPoolExecutor
    >>> with ProcessPoolExecutor(1, initializer=one_numba_thread) as pool:
    ...     pool.submit(os.getenv, "NUMBA_NUM_THREADS").result() in ("1", None)
    True
    """
    numba = sys.modules.get("numba")
    if numba is None:
        os.environ["NUMBA_NUM_THREADS"] = "1"
    else:
        numba.set_num_threads(1)


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
        with ProcessPoolExecutor(max_workers=self.workers, mp_context=ctx,
                                 initializer=one_numba_thread) as pool:
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
        if isinstance(be, contextlib.AbstractContextManager) and len(tasks):
            stack.enter_context(be)
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
