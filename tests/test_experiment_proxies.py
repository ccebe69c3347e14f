"""``nlgeval serve --proxies N`` on a real waitress server (127.0.0.1, a free port): the app
sees the client's address from ``X-Forwarded-For`` only when told that proxies are in front
(waitress removes the header by default, so without the setting every client would count as
the proxy); without ``--proxies`` a client cannot claim another address by sending the header."""

from __future__ import annotations

import http.client
import threading
from collections.abc import Iterator
from contextlib import contextmanager

from flask import request

from nlgeval.experiment.sandbox import example_study_folder
from nlgeval.experiment.server import ready_app, waitress_server


@contextmanager
def _served(proxies: int) -> Iterator[int]:
    """The example study served by waitress with ``proxies``, plus a route that answers
    the client address and forwarded header the app sees; yields the port."""
    with example_study_folder() as made:
        app = ready_app(made.directory, threads=2, proxies=proxies)
        app.add_url_rule("/_seen", "seen", lambda: (
            f"{request.remote_addr}|{request.headers.get('X-Forwarded-For', '-')}"))
        server = waitress_server(app, 2, host="127.0.0.1", port=0)
        thread = threading.Thread(target=server.run, daemon=True)
        thread.start()
        try:
            yield int(server.effective_port)
        finally:  # as the simulator closes it: workers, then the server from its own loop
            server.task_dispatcher.shutdown()
            server.trigger.pull_trigger(server.close)
            thread.join(10)
            app.extensions["nlgeval_experiment"]["store"].dispose()


def _seen(port: int, forwarded: str | None) -> str:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)  # a loaded machine
    try:
        conn.request("GET", "/_seen", headers={"X-Forwarded-For": forwarded} if forwarded
                     else {})
        r = conn.getresponse()
        assert r.status == 200
        return r.read().decode()
    finally:
        conn.close()


def test_one_proxy_the_app_sees_the_forwarded_address() -> None:
    with _served(1) as port:
        assert _seen(port, "203.0.113.7").split("|")[0] == "203.0.113.7"
        # a client-supplied entry before the proxy's own is not believed: the proxy appends
        # the address it saw, and only that last entry is trusted
        assert _seen(port, "198.51.100.9, 203.0.113.7").split("|")[0] == "203.0.113.7"
        assert _seen(port, None).split("|")[0] == "127.0.0.1"  # no header: the peer


def test_two_proxies_the_second_entry_from_the_right() -> None:
    with _served(2) as port:
        assert _seen(port, "198.51.100.9, 203.0.113.7").split("|")[0] == "198.51.100.9"


def test_without_proxies_the_header_is_ignored_and_removed() -> None:
    with _served(0) as port:
        assert _seen(port, "203.0.113.7") == "127.0.0.1|-"
