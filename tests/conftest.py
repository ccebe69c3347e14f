"""Shared fixtures: where the real corpora live (``NLGEVAL_DATA``), and a local download
server standing in for GitHub in the corpus-download tests."""

from __future__ import annotations

import functools
import http.server
import os
import shutil
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def shared_corpora_dir() -> Path | None:
    env = os.environ.get("NLGEVAL_DATA")
    if env and Path(env).is_dir():
        return Path(env)
    cand = ROOT.parent / "shared" / "corpora"
    return cand if cand.is_dir() else None


@pytest.fixture(scope="session")
def data_dir() -> Path:
    """The folder laid out like the bundled corpora (skips the test when there is none)."""
    d = shared_corpora_dir()
    if d is None:
        pytest.skip("no corpora folder: set NLGEVAL_DATA")
    return d


# ---------------------------------------------------------------- local download server
class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:  # noqa: A002
        pass


@pytest.fixture()
def server(tmp_path: Path) -> Iterator[tuple[str, Path, list[str]]]:
    """A local HTTP server over ``tmp_path/srv``: ``(base URL, root folder, requested paths)``."""
    root = tmp_path / "srv"
    root.mkdir()
    requests: list[str] = []

    class Handler(_QuietHandler):
        def do_GET(self) -> None:  # noqa: N802
            requests.append(self.path)
            super().do_GET()

    httpd = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(Handler, directory=str(root))
    )
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}", root, requests
    finally:
        httpd.shutdown()
        httpd.server_close()


@pytest.fixture()
def download_env(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, server: tuple[str, Path, list[str]]
) -> tuple[str, Path, list[str]]:
    """:func:`server` as the download base, with a private cache and no local corpora."""
    base, root, requests = server
    monkeypatch.delenv("NLGEVAL_DATA", raising=False)
    monkeypatch.setenv("NLGEVAL_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("NLGEVAL_DOWNLOAD_BASE", base)
    return base, root, requests


def _publish(root: Path, data_dir: Path, name: str, *, downloadable_only: bool = True) -> None:
    from nlgeval.corpora.descriptor import descriptor

    d = descriptor(name)
    for f in d.files:
        if downloadable_only and not f.download:
            continue
        dest = root / f.repository / f.commit / f.source_path
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(data_dir / d.folder / f.path, dest)


@pytest.fixture()
def publish() -> Callable[..., None]:
    """``publish(root, data_dir, name, downloadable_only=True)`` lays a corpus's files out as
    ``<owner>/<repo>/<commit>/<source_path>`` under ``root`` (raw.githubusercontent.com's
    layout), copied from ``data_dir``; files the descriptor marks as not downloadable are left
    out unless ``downloadable_only=False``."""
    return _publish
