"""``nlgeval serve``: the experiment app on waitress, a multi-threaded pure-Python WSGI server.

Examples
--------
>>> import tempfile
>>> from nlgeval.experiment.build import create_experiment
>>> from nlgeval.experiment.example import write_example
>>> tmp = tempfile.TemporaryDirectory()
>>> made = create_experiment(write_example(tmp.name + "/study"), evaluators=3)
>>> server, app = make_server(made.directory, port=0, announce=None)  # any free port
>>> int(server.effective_port) > 0
True
>>> server.close(); app.extensions["nlgeval_experiment"]["store"].dispose()
>>> tmp.cleanup()
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from flask import Flask

from nlgeval.experiment.app import create_app

SWITCH_INTERVAL_S = 0.0005  # see serve()


def make_server(
    directory: str | Path,
    *,
    host: str = "127.0.0.1",
    port: int = 8000,
    database: str | None = None,
    threads: int = 16,
    secure_cookies: bool = False,
    announce: Callable[[str], None] | None = print,
) -> tuple[Any, Flask]:
    """Validate the experiment and bind a waitress server to it (not yet serving); returns
    ``(server, app)`` and passes the links to ``announce``. See the module's example."""
    from waitress import create_server

    # waitress logs "Task queue depth is N" from its I/O thread for every request that waits
    # for a worker. With a crowd of evaluators that is most requests, and profiling the server
    # under 50 evaluators showed these log writes holding up the I/O loop (a write per request);
    # a queue is expected at that load (latency is what the benchmark measures), so only
    # errors are logged.
    logging.getLogger("waitress.queue").setLevel(logging.ERROR)
    app = create_app(
        directory, database=database, threads=threads, secure_cookies=secure_cookies
    )
    ext = app.extensions["nlgeval_experiment"]
    meta, cfg = ext["store"].meta(), ext["config"]
    server = create_server(app, host=host, port=port, threads=threads, ident="nlgeval")
    real_port = server.effective_port  # type: ignore[union-attr]
    shown = "127.0.0.1" if host in ("0.0.0.0", "") else host
    if announce is not None:
        announce(f"serving '{cfg.title}' on http://{shown}:{real_port}/")
        announce(f"researcher view: http://{shown}:{real_port}/r/{meta['researcher_token']}")
        if meta.get("researcher_password"):
            announce(f"researcher dashboard: http://{shown}:{real_port}/dashboard")
        if cfg.crowd is not None and cfg.crowd.open_link and meta.get("join_token"):
            announce(f"open sign-up link: http://{shown}:{real_port}/join/{meta['join_token']}")
        announce("evaluator links: `nlgeval experiment status DIR` or the researcher view")
    return server, app


def serve(
    directory: str | Path,
    *,
    host: str = "127.0.0.1",
    port: int = 8000,
    database: str | None = None,
    threads: int = 16,
    secure_cookies: bool = False,
    announce: Callable[[str], None] | None = print,
) -> None:
    """Validate the experiment, then serve it until interrupted (:func:`make_server`, then
    waitress's main loop; the database connections are closed on the way out).

    Examples
    --------
    >>> import inspect
    >>> list(inspect.signature(serve).parameters)[:3]  # blocks, so not run here
    ['directory', 'host', 'port']
    """
    server, app = make_server(directory, host=host, port=port, database=database, threads=threads,
                         secure_cookies=secure_cookies, announce=announce)
    # The server process is ours alone: hand the GIL over every 0.5 ms instead of Python's
    # 5 ms. A thread that waited for I/O (a SQLite statement, a socket) must win the GIL back
    # from threads rendering pages; on SQLite the one holding the write lock (group commit)
    # otherwise waits up to 5 ms per statement while every other writer queues behind it.
    # Measured with benchmarks/bench_experiment_load.py (50 evaluators, loaded 2-core host):
    # p95 ~1.1 s -> ~0.7-0.9 s on SQLite at the same throughput or better.
    sys.setswitchinterval(SWITCH_INTERVAL_S)
    try:
        server.run()
    finally:
        app.extensions["nlgeval_experiment"]["store"].dispose()
