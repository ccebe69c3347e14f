"""What ``nlgeval experiment create`` remembers for ``serve``, ``status`` and ``export``.

``create --database URL --base-url URL`` writes both to ``DIR/.nlgeval-server.json`` (mode 0600:
a database URL can hold a password), so later commands find the same database and print the
links under the same public address without the options being repeated. An option given
again on the command line still wins. The default SQLite database (``DIR/experiment.db``) is
not written down, so the experiment directory can be moved.

Examples
--------
>>> import tempfile
>>> tmp = tempfile.TemporaryDirectory()
>>> _ = save_settings(tmp.name, database=None, base_url="https://eval.example.org/study/")
>>> load_settings(tmp.name)
ServerSettings(database=None, base_url='https://eval.example.org/study')
>>> base_url_for(tmp.name), base_url_for(tmp.name, "http://10.0.0.5:9000")
('https://eval.example.org/study', 'http://10.0.0.5:9000')
>>> tmp.cleanup()
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

from nlgeval.errors import InputError
from nlgeval.results import Result

SETTINGS_NAME = ".nlgeval-server.json"
DEFAULT_BASE_URL = "http://127.0.0.1:8000"


@dataclass(frozen=True)
class ServerSettings(Result):
    """Remembered ``database`` URL (``None``: the config's, else SQLite in the directory) and
    public ``base_url`` of the server (``None``: ``http://127.0.0.1:8000``).

    Examples
    --------
    >>> ServerSettings(base_url="https://eval.example.org").to_dict()
    {'database': None, 'base_url': 'https://eval.example.org'}
    """

    database: str | None = None
    base_url: str | None = None


def settings_path(directory: str | Path) -> Path:
    """Where the settings are kept.

    Examples
    --------
    >>> settings_path("study").name
    '.nlgeval-server.json'
    """
    return Path(directory) / SETTINGS_NAME


def load_settings(directory: str | Path) -> ServerSettings:
    """The remembered settings (empty when ``create`` remembered nothing).

    Examples
    --------
    >>> load_settings("a directory without settings")
    ServerSettings(database=None, base_url=None)
    """
    path = settings_path(directory)
    if not path.is_file():
        return ServerSettings()
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise InputError(f"cannot read the remembered server settings: {exc}", file=path) from None
    if not isinstance(raw, dict):
        raise InputError("must hold a JSON object", file=path)
    out: dict[str, str | None] = {}
    for key in ("database", "base_url"):
        v = raw.get(key)
        if v is not None and not isinstance(v, str):
            raise InputError(f"must be a string or null, got {v!r}", file=path, key=key)
        out[key] = v or None
    return ServerSettings(**out)


def check_base_url(url: str) -> str:
    """``http(s)://host[:port][/prefix]`` without a trailing slash.

    Examples
    --------
    >>> check_base_url("https://eval.example.org/study/")
    'https://eval.example.org/study'
    >>> check_base_url("eval.example.org")
    Traceback (most recent call last):
    ...
    nlgeval.errors.InputError: --base-url must look like https://host[:port][/path], got ...
    """
    from urllib.parse import urlsplit

    u = url.strip().rstrip("/")
    parts = urlsplit(u)
    if parts.scheme not in ("http", "https") or not parts.netloc or parts.query or parts.fragment:
        raise InputError(f"--base-url must look like https://host[:port][/path], got {url!r}")
    return u


def save_settings(
    directory: str | Path, *, database: str | None, base_url: str | None
) -> Path:
    """Write the settings (readable by the owner only); ``None`` keeps nothing for that key.

    Examples
    --------
    >>> import stat, tempfile
    >>> tmp = tempfile.TemporaryDirectory()
    >>> path = save_settings(tmp.name, database="postgresql+psycopg://me:pw@db/x", base_url=None)
    >>> stat.filemode(path.stat().st_mode), load_settings(tmp.name).database
    ('-rw-------', 'postgresql+psycopg://me:pw@db/x')
    >>> tmp.cleanup()
    """
    path = settings_path(directory)
    data = ServerSettings(database=database or None,
                          base_url=check_base_url(base_url) if base_url else None)
    tmp = path.with_suffix(".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        json.dump(data.to_dict(), fh, indent=2)
        fh.write("\n")
    os.replace(tmp, path)
    return path


def base_url_for(directory: str | Path, override: str | None = None) -> str:
    """The base URL for printed links: ``override``, else the remembered one, else the default.

    Examples
    --------
    >>> base_url_for("a directory without settings")
    'http://127.0.0.1:8000'
    """
    if override:
        return check_base_url(override)
    return load_settings(directory).base_url or DEFAULT_BASE_URL


# ------------------------------------------------------------------ secrets and file modes
SECRET_NAME = ".nlgeval-secret"


def make_private(path: str | Path) -> None:
    """Create ``path`` empty and owner-only (0600) if it is missing, else make it owner-only.

    Examples
    --------
    >>> import stat, tempfile
    >>> tmp = tempfile.TemporaryDirectory()
    >>> p = Path(tmp.name) / "experiment.db"
    >>> make_private(p); stat.filemode(p.stat().st_mode)
    '-rw-------'
    >>> tmp.cleanup()
    """
    path = Path(path)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        os.close(fd)
    except FileExistsError:
        os.chmod(path, 0o600)


def new_secret_key(directory: str | Path) -> str:
    """Write a new random signing key (session cookies, signed time stamps, completion
    codes) to ``DIR/.nlgeval-secret``, owner-only, and return it. It is kept out of the
    database, so whoever can read the database (a backup, a shared PostgreSQL) cannot forge
    a researcher's session.

    Examples
    --------
    >>> import stat, tempfile
    >>> tmp = tempfile.TemporaryDirectory()
    >>> key = new_secret_key(tmp.name)
    >>> len(key), secret_key(tmp.name) == key
    (64, True)
    >>> stat.filemode((Path(tmp.name) / SECRET_NAME).stat().st_mode)
    '-rw-------'
    >>> tmp.cleanup()
    """
    import secrets

    path = Path(directory) / SECRET_NAME
    key = secrets.token_hex(32)
    tmp = path.with_suffix(".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(key + "\n")
    os.replace(tmp, path)
    return key


def secret_key(directory: str | Path) -> str:
    """The experiment's signing key (made by :func:`new_secret_key` when missing, e.g. for
    an experiment created by an older version, which kept it in the database).

    Examples
    --------
    >>> import tempfile
    >>> tmp = tempfile.TemporaryDirectory()
    >>> secret_key(tmp.name) == secret_key(tmp.name)  # made once, then read
    True
    >>> tmp.cleanup()
    """
    path = Path(directory) / SECRET_NAME
    try:
        key = path.read_text(encoding="utf-8").strip()
    except FileNotFoundError:
        key = ""
    except OSError as exc:
        raise InputError(f"cannot read the signing key: {exc}", file=path) from None
    if len(key) < 32:
        try:
            key = new_secret_key(directory)
        except OSError as exc:
            raise InputError(f"cannot write the signing key: {exc}", file=path) from None
    return key


def permission_warnings(directory: str | Path, database: Path | None) -> list[str]:
    """One line per secret file that users other than its owner can read or write: the
    SQLite database (and its WAL files), the signing key and the remembered settings.

    Examples
    --------
    >>> import tempfile
    >>> tmp = tempfile.TemporaryDirectory()
    >>> db = Path(tmp.name) / "experiment.db"
    >>> _ = db.write_text(""); db.chmod(0o644)
    >>> print(*permission_warnings(tmp.name, db))  # doctest: +ELLIPSIS
    warning: .../experiment.db can be read by other users (mode 644): chmod 600 ...
    >>> tmp.cleanup()
    """
    paths = [Path(directory) / SECRET_NAME, settings_path(directory)]
    if database is not None:
        paths[:0] = [database, database.with_name(database.name + "-wal"),
                     database.with_name(database.name + "-shm")]
    out = []
    for p in paths:
        try:
            mode = p.stat().st_mode & 0o777
        except OSError:
            continue
        if mode & 0o077:
            out.append(f"warning: {p} can be read by other users (mode {mode:o}): chmod 600 "
                       f"'{p}' (it holds participants' data or secrets)")
    return out
