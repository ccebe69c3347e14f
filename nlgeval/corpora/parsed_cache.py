"""A cache of parsed published corpora (Parquet), so repeated loads take a fraction of a second.

Parsing WebNLG's XML and E2E's 23 tables takes about a second on an idle machine and several
under load; analyses and tests load the same corpus many times. The parsed frames are stored
under ``<cache>/parsed/<name>-<key>/`` as Parquet (never pickle: nothing executable is read back).
The key hashes everything the result depends on: nlgeval's and pandas' versions, the source
code of the loader (its module and the modules it lists in ``PARSED_WITH``),
:mod:`nlgeval.corpus` and :mod:`nlgeval.io`, the descriptor, the loader options, and the
resolved path, size and modification time of every input file. Set ``NLGEVAL_PARSED_CACHE=0``
(or pass ``cache=False`` to ``load_corpus``) to disable it.
Any problem with the cache (unwritable, corrupt) falls back to parsing; it never changes results.
"""

from __future__ import annotations

import hashlib
import importlib
import inspect
import json
import os
import pkgutil
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import pandas as pd

import nlgeval
from nlgeval import corpus as corpus_module
from nlgeval import io as io_module
from nlgeval.corpora.descriptor import Descriptor
from nlgeval.corpora.store import cache_root
from nlgeval.corpus import Corpus

FRAMES = ("outputs", "references", "ratings")


def enabled() -> bool:
    """Whether the parsed cache is on (``$NLGEVAL_PARSED_CACHE`` not ``0``/``false``/``no``).

    Examples
    --------
    >>> import os
    >>> from unittest import mock
    >>> with mock.patch.dict(os.environ, {"NLGEVAL_PARSED_CACHE": "no"}):
    ...     enabled()
    False
    >>> with mock.patch.dict(os.environ, {"NLGEVAL_PARSED_CACHE": "1"}):
    ...     enabled()
    True
    """
    return os.environ.get("NLGEVAL_PARSED_CACHE", "1").strip().lower() not in {"0", "false", "no"}


def _loader_source(loader: Callable[..., Corpus]) -> str:
    """The source of the loader's module and of the modules it names in ``PARSED_WITH``."""
    module = inspect.getmodule(loader)
    names = getattr(module, "PARSED_WITH", ())
    return "".join(inspect.getsource(m)  # type: ignore[arg-type]  # a loader's module is never None
                   for m in (module, *map(importlib.import_module, names)))


def _modules_of(*packages: ModuleType) -> list[ModuleType]:
    """Each module or package, with every module of a package (the data model and the readers
    are packages: a change in any of their modules changes the key)."""
    out = []
    for p in packages:
        out.append(p)
        for info in pkgutil.iter_modules(getattr(p, "__path__", []), p.__name__ + "."):
            out.append(importlib.import_module(info.name))
    return out


def _key(desc: Descriptor, folder: Path, loader: Callable[..., Corpus], options: dict) -> str:
    files = []
    for f in desc.files:
        p = folder / f.path
        if p.is_file():
            st = p.stat()
            files.append([f.path, st.st_size, st.st_mtime_ns])
    payload = {
        "version": nlgeval.__version__,
        "loader": hashlib.sha256(_loader_source(loader).encode()).hexdigest(),
        "corpus": [
            hashlib.sha256(inspect.getsource(m).encode()).hexdigest()
            for m in _modules_of(corpus_module, io_module)
        ],
        "pandas": pd.__version__,
        "descriptor": repr(desc),
        "options": options,
        "folder": str(folder.resolve()),
        "files": files,
    }
    return hashlib.sha256(json.dumps(payload, sort_keys=True, default=str).encode()).hexdigest()


def load_cached(
    desc: Descriptor, folder: Path, loader: Callable[..., Corpus], options: dict[str, Any]
) -> Corpus:
    """``loader(folder, **options)``, served from / stored in the parsed cache when possible.

    Examples
    --------
    >>> from nlgeval.corpora import REGISTRY
    >>> from nlgeval.corpora.store import locate
    >>> reg = REGISTRY["e2e"]
    >>> corpus = load_cached(reg.descriptor, locate(reg.descriptor).folder, reg.loader, {})
    >>> len(corpus.systems)
    21
    """
    if not enabled():
        return loader(folder, **options)
    try:
        key = _key(desc, folder, loader, options)
    except (OSError, TypeError):
        return loader(folder, **options)
    target = cache_root() / "parsed" / f"{desc.name}-{key[:24]}"
    if (target / "meta.json").is_file():
        try:
            meta = json.loads((target / "meta.json").read_text(encoding="utf-8"))
            frames = {n: pd.read_parquet(target / f"{n}.parquet") for n in FRAMES}
            for n, cols in meta["object_columns"].items():  # Parquet reads them back as str
                frames[n] = frames[n].astype({c: object for c in cols})
            return Corpus(info=desc.info(), notes=tuple(meta["notes"]), **frames)
        except Exception:  # a corrupt cache entry: parse again (and overwrite it)
            shutil.rmtree(target, ignore_errors=True)
    corpus = loader(folder, **options)
    tmp: Path | None = None
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(dir=target.parent, prefix=".tmp-"))
        for n in FRAMES:
            getattr(corpus, n).to_parquet(tmp / f"{n}.parquet", index=False)
        meta = {
            "notes": list(corpus.notes),
            "object_columns": {
                n: [
                    c for c, t in getattr(corpus, n).dtypes.items()
                    if pd.api.types.is_object_dtype(t)
                ]
                for n in FRAMES
            },
        }
        (tmp / "meta.json").write_text(json.dumps(meta), "utf-8")
        os.replace(tmp, target)  # atomic; fails if another process stored it first
        tmp = None
    except Exception:  # read-only home, disk full, a race...: caching is an optimisation only
        pass
    finally:
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)
    return corpus
