"""Several server processes on one listening socket (``nlgeval serve --processes N``).

One Python process runs one thread at a time (the global interpreter lock), so a single server
process uses one core however many worker threads it has. Under a crowd of evaluators the
experiment server is CPU-bound in Python (page rendering, HTTP parsing, database drivers), so
on a machine with several cores N processes serve up to N times as many requests. This is the
"pre-fork" model of Apache's prefork MPM and of gunicorn: the parent binds the socket, forks
the workers, and the kernel hands each new connection to one of them; every worker runs its
own waitress server (threads and database connections of its own) around a copy of the app.

Nothing that can change while serving is kept in a worker's memory: the evaluators' state,
the open sign-up assignment and the idempotent answer claims live in the database, whose
transactions serialise them across processes (SQLite takes its write lock at ``BEGIN
IMMEDIATE``; see :class:`~nlgeval.experiment.storage.Store`). POSIX only (``os.fork``).

Examples
--------
>>> s = listening_socket("127.0.0.1", 0)
>>> s.getsockname()[1] > 0
True
>>> s.close()
"""

from __future__ import annotations

import logging
import os
import signal
import socket
import sys
import traceback
from collections.abc import Callable

from nlgeval.errors import InputError

log = logging.getLogger("nlgeval.experiment")
_STOP_SIGNALS = {signal.SIGINT, signal.SIGTERM}


def listening_socket(host: str, port: int, backlog: int = 1024) -> socket.socket:
    """A TCP socket bound to ``host:port`` and listening (``port=0``: any free port), with
    ``SO_REUSEADDR`` as waitress sets it.

    Examples
    --------
    >>> s = listening_socket("127.0.0.1", 0, backlog=16)
    >>> s.type == socket.SOCK_STREAM
    True
    >>> s.close()
    """
    family, kind, proto, _name, addr = socket.getaddrinfo(
        host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)[0]
    sock = socket.socket(family, kind, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(addr)
        sock.listen(backlog)
    except OSError:
        sock.close()
        raise
    return sock


MAX_DEFAULT_PROCESSES = 4


def default_processes() -> int:
    """``serve``'s default number of processes: one per core this process may run on (one
    Python process uses one core; at most :data:`MAX_DEFAULT_PROCESSES`), 1 without
    ``os.fork``.

    Examples
    --------
    >>> 1 <= default_processes() <= MAX_DEFAULT_PROCESSES
    True
    """
    if not hasattr(os, "fork"):
        return 1
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return max(1, min(MAX_DEFAULT_PROCESSES, cores or 1))


def check_processes(processes: int) -> None:
    """Refuse a number of processes this system cannot run.

    Examples
    --------
    >>> check_processes(1)
    >>> check_processes(0)
    Traceback (most recent call last):
    ...
    nlgeval.errors.InputError: --processes must be at least 1, got 0
    """
    if processes < 1:
        raise InputError(f"--processes must be at least 1, got {processes}")
    if processes > 1 and not hasattr(os, "fork"):
        raise InputError("--processes above 1 needs a POSIX system (os.fork); use 1 here")


def _raise_interrupt(_signum: int, _frame: object) -> None:
    raise KeyboardInterrupt


def _die_with_parent(parent: int) -> None:
    """On Linux, have the kernel send this worker SIGTERM when the parent dies, even by
    SIGKILL (``prctl(PR_SET_PDEATHSIG)``), so no orphaned worker goes on serving the port;
    elsewhere the parent's signal handlers are all there is."""
    if sys.platform.startswith("linux"):
        import ctypes

        try:
            ctypes.CDLL(None).prctl(1, signal.SIGTERM)  # 1 = PR_SET_PDEATHSIG
        except (OSError, AttributeError):
            pass
    if os.getppid() != parent:  # the parent died before the call above
        raise KeyboardInterrupt


def run_workers(n: int, work: Callable[[int], None]) -> int:
    """Fork ``n`` workers running ``work(i)`` and wait for them; SIGINT/SIGTERM to the parent
    stop them all (each gets SIGTERM, raised in it as ``KeyboardInterrupt`` so that its
    clean-up runs). If a worker dies on its own, the others are stopped too, rather than
    serving on with fewer. Returns 0, or the exit status of the first worker that died.

    Examples
    --------
    >>> run_workers(2, lambda i: None)  # workers that return at once
    0
    """
    pids: set[int] = set()
    stopping = False

    def stop(_signum: int = 0, _frame: object = None) -> None:
        nonlocal stopping
        stopping = True
        for pid in pids:
            try:
                os.kill(pid, signal.SIGTERM)
            except ProcessLookupError:
                pass

    old = {s: signal.signal(s, stop) for s in _STOP_SIGNALS}
    parent = os.getpid()
    try:
        for i in range(n):
            sys.stdout.flush()
            sys.stderr.flush()
            # a stop signal arriving between fork and the worker's own handlers would run the
            # parent's handler in the worker: held back until the handlers are in place
            signal.pthread_sigmask(signal.SIG_BLOCK, _STOP_SIGNALS)
            pid = os.fork()
            if pid == 0:  # the worker: never return into the parent's code
                code = 0
                try:
                    signal.signal(signal.SIGINT, _raise_interrupt)
                    signal.signal(signal.SIGTERM, _raise_interrupt)
                    signal.pthread_sigmask(signal.SIG_UNBLOCK, _STOP_SIGNALS)
                    _die_with_parent(parent)
                    work(i)
                except KeyboardInterrupt:
                    pass
                except BaseException:
                    traceback.print_exc()
                    code = 1
                finally:
                    os._exit(code)
            pids.add(pid)
            signal.pthread_sigmask(signal.SIG_UNBLOCK, _STOP_SIGNALS)
        status = 0
        while pids:
            pid, raw = os.wait()
            pids.discard(pid)
            code = os.waitstatus_to_exitcode(raw)
            if not stopping and code != 0:
                log.error("server worker %d exited with status %d; stopping", pid, code)
                status = status or code
            if not stopping and pids:
                stop()
        return status
    finally:
        for s, h in old.items():
            signal.signal(s, h)
