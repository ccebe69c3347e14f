"""Server-side time per request, for the load benchmark (off unless asked for).

``nlgeval serve`` wraps the app in :class:`RequestTimer` when the environment variable
``NLGEVAL_SERVER_TIMING`` names a file: each worker thread records, per request, the wall time
spent inside the app and the CPU time the thread used (``time.thread_time``), and every server
process writes them as JSON to that name plus ``.<process id>`` when it stops. The difference
between what a client measures and the app's wall time is the time a request waited for a
worker thread or for the server's I/O loop; the difference between the app's wall and CPU
time is waiting (for the GIL, the database, a lock).

Examples
--------
>>> def hello(environ, start_response):
...     start_response("200 OK", [("Content-Type", "text/plain")])
...     return [b"ok"]
>>> timer = RequestTimer(hello)
>>> timer({}, lambda status, headers: None)
[b'ok']
>>> s = timer.times()
>>> len(s["app_wall_ms"]), s["app_cpu_ms"][0] >= 0
(1, True)
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

ENV_VAR = "NLGEVAL_SERVER_TIMING"


class RequestTimer:
    """WSGI middleware recording the app's wall and thread-CPU time per request.

    Examples
    --------
    >>> RequestTimer(lambda e, s: [b""]).times()
    {'app_wall_ms': [], 'app_cpu_ms': []}
    """

    def __init__(self, app: Callable[..., Iterable[bytes]]) -> None:
        self.app = app
        self._lock = threading.Lock()
        self._wall: list[float] = []
        self._cpu: list[float] = []

    def __call__(self, environ: dict[str, Any], start_response: Callable[..., Any]
                 ) -> Iterable[bytes]:
        t0, c0 = time.perf_counter(), time.thread_time()
        try:
            return self.app(environ, start_response)
        finally:
            wall, cpu = time.perf_counter() - t0, time.thread_time() - c0
            with self._lock:
                self._wall.append(wall)
                self._cpu.append(cpu)

    def times(self) -> dict[str, list[float]]:
        """The app's wall and CPU milliseconds of every request timed so far."""
        with self._lock:
            return {"app_wall_ms": [round(t * 1000, 3) for t in self._wall],
                    "app_cpu_ms": [round(t * 1000, 3) for t in self._cpu]}

    def write(self, path: str | Path) -> None:
        """Write :meth:`times` to ``path`` as JSON."""
        Path(path).write_text(json.dumps(self.times()) + "\n", encoding="utf-8")


def timer_from_env() -> str | None:
    """The file named by ``NLGEVAL_SERVER_TIMING`` (``None``: no timing).

    Examples
    --------
    >>> timer_from_env() is None or isinstance(timer_from_env(), str)
    True
    """
    return os.environ.get(ENV_VAR) or None
