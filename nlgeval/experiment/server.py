"""``nlgeval serve``: the experiment app on waitress, a multi-threaded pure-Python WSGI server,
in one process or several (``processes``; :mod:`nlgeval.experiment.prefork`).

Examples
--------
>>> from nlgeval.experiment.sandbox import example_study_folder
>>> with example_study_folder() as made:
...     server, app = make_server(made.directory, port=0, announce=None)  # any free port
...     int(server.effective_port) > 0
...     server.close(); app.extensions["nlgeval_experiment"]["store"].dispose()
True
"""

from __future__ import annotations

import errno
import logging
import os
import signal
import socket
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from flask import Flask

from nlgeval.errors import InputError
from nlgeval.experiment.app import create_app
from nlgeval.experiment.prefork import (
    check_processes,
    default_processes,
    listening_socket,
    run_workers,
)
from nlgeval.experiment.timing import RequestTimer, timer_from_env

SWITCH_INTERVAL_S = 0.0005  # see run_server()
# Worker threads per process. They only run the app (waitress's I/O thread buffers the
# sockets), and more of them mostly contend for the GIL: benchmarks/bench_experiment_load.py,
# 50 evaluators, 2 processes, idle 2-core host, p95 on SQLite / PostgreSQL: 16 threads
# 198-215 / 218-318 ms, 8 threads 117-154 / 155-293 ms, 4 threads 128-185 / 127-197 ms.
DEFAULT_THREADS = 4


def ready_app(
    directory: str | Path, *, database: str | None = None, threads: int = DEFAULT_THREADS,
    secure_cookies: bool = False, base_url: str | None = None, proxies: int = 0,
) -> Flask:
    """The validated app with every template compiled: compiled on first use instead, the
    first burst of evaluators made each worker thread compile the same templates at once (a
    tenth of the server's CPU time in a profile of the load benchmark's first seconds).

    Examples
    --------
    >>> from nlgeval.experiment.sandbox import example_study_folder
    >>> with example_study_folder() as made:
    ...     app = ready_app(made.directory)
    ...     "evaluator/trial.html" in app.jinja_env.cache.keys().__repr__()
    ...     app.extensions["nlgeval_experiment"]["store"].dispose()
    True
    """
    app = create_app(directory, database=database, threads=threads,
                     secure_cookies=secure_cookies, base_url=base_url, proxies=proxies)
    for name in app.jinja_env.list_templates():
        app.jinja_env.get_template(name)
    return app


def public_base(directory: str | Path, host: str, port: int, override: str | None) -> str:
    """Where participants reach the server: ``--base-url``, else the one ``create``
    remembered, else this host and port (links are never built from a request's Host).

    Examples
    --------
    >>> public_base("a directory without settings", "0.0.0.0", 8000, None)
    'http://127.0.0.1:8000'
    """
    from nlgeval.experiment.settings import check_base_url, load_settings

    if override:
        return check_base_url(override)
    shown = "127.0.0.1" if host in ("0.0.0.0", "") else host
    return load_settings(directory).base_url or f"http://{shown}:{port}"


def announce_links(app: Flask, announce: Callable[[str], None]) -> None:
    """Pass the server's public links (site, dashboard, open sign-up) and warnings about
    readable secret files to ``announce``. The researcher token's link is not printed (it
    would end up in terminal logs): ``nlgeval experiment status DIR`` shows it.

    Examples
    --------
    >>> from nlgeval.experiment.sandbox import example_app
    >>> with example_app() as (app, made):
    ...     announce_links(app, print)  # doctest: +ELLIPSIS
    serving 'Weather forecast quality' on http://127.0.0.1:8000/
    researcher view: `nlgeval experiment status DIR` shows its link; ...
    evaluator links: `nlgeval experiment status DIR` or the researcher view
    """
    from nlgeval.experiment.settings import permission_warnings

    ext = app.extensions["nlgeval_experiment"]
    x, meta, cfg = ext["experiment"], ext["store"].meta(), ext["config"]
    base = x.base_url
    for warning in permission_warnings(cfg.directory, x.store.sqlite_path()):
        announce(warning)
    announce(f"serving '{cfg.title}' on {base}/")
    if meta.get("researcher_password"):
        announce(f"researcher dashboard: {base}/dashboard")
    else:
        announce("researcher view: `nlgeval experiment status DIR` shows its link; set a "
                 "password (`nlgeval experiment password DIR`) for the dashboard at /login")
    if cfg.crowd is not None and cfg.crowd.open_link and meta.get("join_token"):
        announce(f"open sign-up link: {base}/join/{meta['join_token']}")
    announce("evaluator links: `nlgeval experiment status DIR` or the researcher view")


def waitress_server(app: Flask, threads: int, **where: Any) -> Any:
    """A waitress server (not yet serving) for ``app`` on ``host``/``port`` or on already
    bound ``sockets``; wrapped in :class:`~nlgeval.experiment.timing.RequestTimer` when
    ``NLGEVAL_SERVER_TIMING`` asks for server-side timing.

    Proxy headers follow the app's ``proxies`` (:func:`~nlgeval.experiment.app.create_app`):
    waitress removes ``X-Forwarded-*`` headers from every request by default
    (``clear_untrusted_proxy_headers``), so the app's ``ProxyFix`` would never see
    ``X-Forwarded-For`` and every client behind a proxy would count as the proxy's address.
    With ``proxies`` the headers are passed on and ``ProxyFix`` alone takes the client's
    address from the ``proxies``-th entry from the right; without, waitress keeps clearing
    them, so a client cannot claim another address. Waitress settings passed in ``where``
    (the simulator makes waitress itself trust its one proxy) take precedence.

    Examples
    --------
    >>> from flask import Flask
    >>> server = waitress_server(Flask("x"), 2, host="127.0.0.1", port=0)
    >>> int(server.effective_port) > 0
    True
    >>> server.close()
    """
    from waitress import create_server

    # waitress logs "Task queue depth is N" from its I/O thread for every request that waits
    # for a worker. With a crowd of evaluators that is most requests, and profiling the server
    # under 50 evaluators showed these log writes holding up the I/O loop (a write per request);
    # a queue is expected at that load (latency is what the benchmark measures), so only
    # errors are logged.
    logging.getLogger("waitress.queue").setLevel(logging.ERROR)
    wsgi: Any = app
    if timer_from_env() is not None:  # the load benchmark's server-side timing
        wsgi = app.extensions.setdefault("nlgeval_timer", RequestTimer(app))
    if app.extensions.get("nlgeval_experiment", {}).get("proxies"):
        where = {"clear_untrusted_proxy_headers": False, **where}
    return create_server(wsgi, threads=threads, ident="nlgeval", **where)


def make_server(
    directory: str | Path,
    *,
    host: str = "127.0.0.1",
    port: int = 8000,
    database: str | None = None,
    threads: int = DEFAULT_THREADS,
    secure_cookies: bool = False,
    announce: Callable[[str], None] | None = print,
    base_url: str | None = None,
    proxies: int = 0,
) -> tuple[Any, Flask]:
    """Validate the experiment and bind a waitress server to it (not yet serving); returns
    ``(server, app)`` and passes the links to ``announce``. See the module's example."""
    app = ready_app(directory, database=database, threads=threads,
                    secure_cookies=secure_cookies, base_url=base_url, proxies=proxies)
    server = waitress_server(app, threads, host=host, port=port)
    x = app.extensions["nlgeval_experiment"]["experiment"]
    x.base_url = public_base(directory, host, int(server.effective_port), base_url)
    if announce is not None:
        announce_links(app, announce)
    return server, app


def run_server(server: Any, app: Flask) -> None:
    """Serve until interrupted (Ctrl-C, SIGINT or SIGTERM), then close the database
    connections (and write the server-side timing when asked for).

    Examples
    --------
    >>> import inspect
    >>> list(inspect.signature(run_server).parameters)  # blocks, so not run here
    ['server', 'app']
    """
    # The server process is ours alone: hand the GIL over every 0.5 ms instead of Python's
    # 5 ms. A thread that waited for I/O (a SQLite statement, a socket) must win the GIL back
    # from threads rendering pages; on SQLite the one holding the write lock (group commit)
    # otherwise waits up to 5 ms per statement while every other writer queues behind it.
    # Measured with benchmarks/bench_experiment_load.py (50 evaluators, loaded 2-core host):
    # p95 ~1.1 s -> ~0.7-0.9 s on SQLite at the same throughput or better.
    sys.setswitchinterval(SWITCH_INTERVAL_S)
    if threading.current_thread() is threading.main_thread():
        # SIGTERM (a service manager, `kill`) stops the server as Ctrl-C does: connections
        # closed and timing written, instead of the process vanishing mid-statement
        signal.signal(signal.SIGTERM, _stop_serving)
    try:
        server.run()
    except KeyboardInterrupt:
        pass
    finally:
        app.extensions["nlgeval_experiment"]["store"].dispose()
        timing = timer_from_env()
        if timing is not None and "nlgeval_timer" in app.extensions:
            app.extensions["nlgeval_timer"].write(f"{timing}.{os.getpid()}")


def serve(
    directory: str | Path,
    *,
    host: str = "127.0.0.1",
    port: int = 8000,
    database: str | None = None,
    threads: int = DEFAULT_THREADS,
    processes: int | None = None,
    secure_cookies: bool = False,
    announce: Callable[[str], None] | None = print,
    base_url: str | None = None,
    proxies: int = 0,
) -> None:
    """Validate the experiment, then serve it until interrupted: one waitress process with
    ``threads`` worker threads, or ``processes`` such processes forked after binding the
    socket (:mod:`nlgeval.experiment.prefork`; POSIX only; default: one per core, at most 4,
    :func:`~nlgeval.experiment.prefork.default_processes`).

    Examples
    --------
    >>> import inspect
    >>> list(inspect.signature(serve).parameters)[:3]  # blocks, so not run here
    ['directory', 'host', 'port']
    """
    processes = default_processes() if processes is None else processes
    check_processes(processes)
    if processes == 1:
        with _binding(host, port):
            server, app = make_server(directory, host=host, port=port, database=database,
                                      threads=threads, secure_cookies=secure_cookies,
                                      announce=announce, base_url=base_url, proxies=proxies)
        run_server(server, app)
        return
    with _binding(host, port):
        sock = listening_socket(host, port)
    try:
        base = public_base(directory, host, sock.getsockname()[1], base_url)
        app = ready_app(directory, database=database, threads=threads,
                        secure_cookies=secure_cookies, base_url=base, proxies=proxies)
        if announce is not None:
            announce_links(app, announce)
            announce(f"{processes} server processes of {threads} threads each")
        store = app.extensions["nlgeval_experiment"]["store"]
        store.share_writes()
        store.dispose()  # no connection may cross the fork: every worker opens its own
        status = run_workers(processes, lambda _i: _worker(app, threads, sock))
    finally:
        sock.close()
    if status:
        raise RuntimeError(f"a server process exited with status {status}")


@contextmanager
def _binding(host: str, port: int) -> Iterator[None]:
    """Turn a failure to listen on ``host:port`` (taken, not allowed, not an address of this
    machine) into one clear error naming the option, not the socket's traceback."""
    try:
        yield
    except OSError as err:
        if err.errno not in (errno.EADDRINUSE, errno.EACCES, errno.EADDRNOTAVAIL):
            raise
        raise InputError(f"cannot listen on {host}:{port}: {err.strerror}; choose another "
                         "--port (or --host), or stop the program that uses it",
                         option="--port") from None


def _stop_serving(_signum: int, _frame: object) -> None:
    raise KeyboardInterrupt


def _worker(app: Flask, threads: int, sock: socket.socket) -> None:
    run_server(waitress_server(app, threads, sockets=[sock]), app)
