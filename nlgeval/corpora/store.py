"""Where corpus files live: a local folder, or a verified download cache.

Resolution order for a published corpus (first match wins, no mixing):

1. the ``data_dir`` argument (``--data-dir``): a folder laid out like the bundled corpora (see
docs/corpora.md)
   (``<data_dir>/<folder>/...``), or the corpus folder itself;
2. the ``NLGEVAL_DATA`` environment variable, same layout;
3. the download cache ``$NLGEVAL_CACHE`` or ``~/.cache/nlgeval``, as ``<cache>/corpora/<folder>/``.
   Files missing there are downloaded (``download=True``) from their public repositories at the
   pinned commits, as raw-file URLs ``<base>/<owner>/<repo>/<commit>/<path>`` with
   ``base = $NLGEVAL_DOWNLOAD_BASE`` or ``https://raw.githubusercontent.com``, and kept only if
   their SHA-256 matches the descriptor.

A local folder given explicitly (1 or 2) is never silently completed by a download: a missing
file there is an error naming it, because mixing two sources would make results depend on which
copy was read.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

from nlgeval.corpora.descriptor import Descriptor, PinnedFile
from nlgeval.errors import DataNotFoundError, NlgevalError
from nlgeval.progress import progress_bar

DEFAULT_DOWNLOAD_BASE = "https://raw.githubusercontent.com"
_CHUNK = 1 << 16


class ChecksumError(NlgevalError):
    """A downloaded (or local) file does not have the pinned SHA-256.

    Examples
    --------
    >>> from nlgeval.errors import NlgevalError
    >>> issubclass(ChecksumError, NlgevalError)
    True
    """


@dataclass(frozen=True)
class Location:
    """A resolved corpus folder and how it was found (``data_dir``, ``NLGEVAL_DATA``, ``cache``).

    Examples
    --------
    >>> from nlgeval.corpora.descriptor import descriptor
    >>> loc = locate(descriptor("e2e"))
    >>> loc.origin in ("data_dir", "NLGEVAL_DATA", "cache"), loc.folder.name
    (True, 'e2e_nlg_challenge')
    """

    folder: Path
    origin: str


def cache_root() -> Path:
    """``$NLGEVAL_CACHE`` or ``~/.cache/nlgeval``.

    Examples
    --------
    >>> from nlgeval.corpora.descriptor import descriptor
    >>> cache_folder(descriptor("e2e")) == cache_root() / "corpora" / "e2e_nlg_challenge"
    True
    """
    env = os.environ.get("NLGEVAL_CACHE")
    return Path(env).expanduser() if env else Path.home() / ".cache" / "nlgeval"


def cache_folder(desc: Descriptor) -> Path:
    """The cache folder of a published corpus: ``cache_root()/corpora/<folder>``.

    Examples
    --------
    >>> from nlgeval.corpora.descriptor import descriptor
    >>> cache_folder(descriptor("e2e")).relative_to(cache_root()).as_posix()
    'corpora/e2e_nlg_challenge'
    """
    return cache_root() / "corpora" / desc.folder


def download_base() -> str:
    """``$NLGEVAL_DOWNLOAD_BASE`` (a mirror) or :data:`DEFAULT_DOWNLOAD_BASE`, no trailing slash.

    Examples
    --------
    >>> import os
    >>> from unittest import mock
    >>> DEFAULT_DOWNLOAD_BASE
    'https://raw.githubusercontent.com'
    >>> with mock.patch.dict(os.environ, {"NLGEVAL_DOWNLOAD_BASE": "https://mirror.example.org/"}):
    ...     download_base()
    'https://mirror.example.org'
    """
    return os.environ.get("NLGEVAL_DOWNLOAD_BASE", DEFAULT_DOWNLOAD_BASE).rstrip("/")


def url_for(f: PinnedFile, base: str | None = None) -> str:
    """Raw-file URL of a pinned file: ``<base>/<owner>/<repo>/<commit>/<path>``.

    Examples
    --------
    >>> from nlgeval.corpora.descriptor import descriptor
    >>> url_for(descriptor("e2e").files[0], base="https://mirror.example.org/")
    'https://mirror.example.org/tuetschek/e2e-dataset/ab0d967dd5729ce455ef14ba9ffafc456a335264/testset_w_refs.csv'
    """
    base = download_base() if base is None else base.rstrip("/")
    return f"{base}/{f.repository}/{f.commit}/{quote(f.source_path)}"


def sha256_of(path: Path) -> str:
    """The SHA-256 of a file's bytes, read in chunks (hex digest).

    Examples
    --------
    >>> import pathlib, tempfile
    >>> tmp = tempfile.TemporaryDirectory()
    >>> path = pathlib.Path(tmp.name) / "x.txt"
    >>> _ = path.write_bytes(b"abc")
    >>> sha256_of(path)                    # the FIPS 180-2 test vector for "abc"
    'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad'
    >>> tmp.cleanup()
    """
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(_CHUNK), b""):
            h.update(chunk)
    return h.hexdigest()


def missing_files(desc: Descriptor, folder: Path, *, include_optional: bool = False) -> list[str]:
    """Required files of ``desc`` absent from ``folder`` (optional ones too if asked).

    Examples
    --------
    >>> from nlgeval.corpora.descriptor import descriptor
    >>> d = descriptor("e2e")
    >>> missing_files(d, locate(d).folder)
    []
    """
    return [
        f.path
        for f in desc.files
        if (include_optional or not f.optional) and not (folder / f.path).is_file()
    ]


def _corpus_folder_in(root: Path, desc: Descriptor) -> Path:
    """``root/<folder>`` or, if ``root`` already is the corpus folder, ``root``."""
    if (root / desc.folder).is_dir():
        return root / desc.folder
    first = next(f for f in desc.files if not f.optional)
    if (root / first.path).is_file():
        return root
    return root / desc.folder


def _what_to_do(desc: Descriptor) -> str:
    return (
        f"point --data-dir (or the NLGEVAL_DATA environment variable) at a folder laid out like "
        f"the bundled corpora that holds '{desc.folder}/' (see docs/corpora.md), or run "
        f"`nlgeval corpora fetch {desc.name}` "
        "on a machine with network access"
    )


def locate(
    desc: Descriptor, data_dir: str | Path | None = None, *, download: bool = True
) -> Location:
    """Find (or download into the cache) the folder holding ``desc``'s files.

    Examples
    --------
    >>> from nlgeval.corpora.descriptor import descriptor
    >>> loc = locate(descriptor("e2e"))      # data_dir, else $NLGEVAL_DATA, else the cache
    >>> loc.folder.name
    'e2e_nlg_challenge'
    """
    for origin, root in (("data_dir", data_dir), ("NLGEVAL_DATA", os.environ.get("NLGEVAL_DATA"))):
        if root is None or str(root) == "":
            continue
        root = Path(root).expanduser()
        if not root.is_dir():
            raise DataNotFoundError(
                f"{'--data-dir' if origin == 'data_dir' else 'NLGEVAL_DATA'} '{root}' is not a "
                f"directory; {_what_to_do(desc)}"
            )
        folder = _corpus_folder_in(root, desc)
        missing = missing_files(desc, folder)
        if missing:
            raise DataNotFoundError(
                f"corpus '{desc.name}' is incomplete in {folder}: missing {missing[0]}"
                + (f" and {len(missing) - 1} more file(s)" if len(missing) > 1 else "")
                + f" (from {origin}); {_what_to_do(desc)}"
            )
        return Location(folder, origin)
    folder = cache_folder(desc)
    missing = missing_files(desc, folder)
    if missing:
        if not download:
            raise DataNotFoundError(
                f"corpus '{desc.name}' is not available locally (looked in --data-dir, "
                f"NLGEVAL_DATA and the cache {folder}) and downloading is off; "
                + _what_to_do(desc)
            )
        fetch(desc)
    return Location(folder, "cache")


def _download(url: str, dest: Path, timeout: float = 60.0) -> None:
    req = urllib.request.Request(url, headers={"User-Agent": "nlgeval"})
    with urllib.request.urlopen(req, timeout=timeout) as resp, open(dest, "wb") as out:
        shutil.copyfileobj(resp, out, _CHUNK)


def fetch(desc: Descriptor, *, force: bool = False) -> Path:
    """Download every downloadable file of ``desc`` missing from the cache; verify SHA-256.

    Files are written to a temporary name and moved into place only after their checksum
    matches, so an interrupted or corrupted download never leaves a bad file in the cache.
    Returns the cache folder.

    Examples
    --------
    >>> from nlgeval.corpora.descriptor import descriptor
    >>> folder = fetch(descriptor("e2e"))  # doctest: +SKIP
    """
    folder = cache_folder(desc)
    todo = [
        f for f in desc.files if f.download and (force or not (folder / f.path).is_file())
    ]
    if not todo:
        return folder
    folder.mkdir(parents=True, exist_ok=True)
    with progress_bar(len(todo), f"downloading {desc.name}") as bar:
        for f in todo:
            url = url_for(f)
            dest = folder / f.path
            dest.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp_name = tempfile.mkstemp(dir=dest.parent, prefix=".part-")
            os.close(fd)
            tmp = Path(tmp_name)
            try:
                try:
                    _download(url, tmp)
                except urllib.error.HTTPError as exc:
                    raise DataNotFoundError(
                        f"could not download {url} (HTTP {exc.code} {exc.reason}); "
                        + _what_to_do(desc)
                    ) from None
                except (urllib.error.URLError, OSError, TimeoutError) as exc:
                    reason = getattr(exc, "reason", None) or exc
                    raise DataNotFoundError(
                        f"could not download {url} ({reason}); {_what_to_do(desc)}"
                    ) from None
                got = sha256_of(tmp)
                if got not in f.accepted_sha256:
                    raise ChecksumError(
                        f"checksum mismatch for {url}: expected SHA-256 "
                        f"{' or '.join(f.accepted_sha256)}, "
                        f"got {got}; the file was not kept. The pinned commit should never "
                        "change, so this means a corrupted download or a wrong "
                        f"NLGEVAL_DOWNLOAD_BASE; otherwise {_what_to_do(desc)}"
                    )
                os.replace(tmp, dest)
            finally:
                tmp.unlink(missing_ok=True)
            bar.advance(1)
    return folder


def verify(desc: Descriptor, folder: Path) -> list[dict[str, str]]:
    """Check every present file against its pinned SHA-256 (shared copy or original).

    Returns one dict per file with ``path`` and ``status`` (``ok``, ``missing`` or
    ``mismatch``); used by ``nlgeval corpora fetch --verify``.

    Examples
    --------
    >>> from nlgeval.corpora.descriptor import descriptor
    >>> d = descriptor("e2e")
    >>> verify(d, locate(d).folder)[0]
    {'path': 'dataset/testset_w_refs.csv', 'status': 'ok'}
    """
    report = []
    for f in desc.files:
        p = folder / f.path
        if not p.is_file():
            status = "missing"
        else:
            got = sha256_of(p)
            status = "ok" if got in f.accepted_sha256 else "mismatch"
        report.append({"path": f.path, "status": status})
    return report


def available_locally(desc: Descriptor, data_dir: str | Path | None = None) -> str | None:
    """Where the corpus would be read from without downloading, or ``None``.

    Examples
    --------
    >>> from nlgeval.corpora.descriptor import descriptor
    >>> available_locally(descriptor("e2e")) is not None   # a local copy is configured
    True
    """
    try:
        return str(locate(desc, data_dir, download=False).folder)
    except DataNotFoundError:
        return None
