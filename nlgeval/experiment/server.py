"""``nlgeval serve``: the experiment app on waitress, a multi-threaded pure-Python WSGI server."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from nlgeval.experiment.app import create_app


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
    """Validate the experiment, then serve it until interrupted."""
    from waitress import create_server

    app = create_app(
        directory, database=database, threads=threads, secure_cookies=secure_cookies
    )
    store = app.extensions["nlgeval_experiment"]["store"]
    meta = store.meta()
    rtoken = meta["researcher_token"]
    cfg = app.extensions["nlgeval_experiment"]["config"]
    server = create_server(app, host=host, port=port, threads=threads, ident="nlgeval")
    real_port = server.effective_port  # type: ignore[union-attr]
    shown = "127.0.0.1" if host in ("0.0.0.0", "") else host
    if announce is not None:
        announce(f"serving '{app.extensions['nlgeval_experiment']['config'].title}' on "
                 f"http://{shown}:{real_port}/")
        announce(f"researcher view: http://{shown}:{real_port}/r/{rtoken}")
        if meta.get("researcher_password"):
            announce(f"researcher dashboard: http://{shown}:{real_port}/dashboard")
        if cfg.crowd is not None and cfg.crowd.open_link and meta.get("join_token"):
            announce(f"open sign-up link: http://{shown}:{real_port}/join/{meta['join_token']}")
        announce("evaluator links: `nlgeval experiment status DIR` or the researcher view")
    try:
        server.run()
    finally:
        store.dispose()
