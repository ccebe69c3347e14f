"""Loaders for published human-evaluation corpora and for users' own corpora.

>>> from nlgeval.corpora import load_corpus, list_corpora
>>> corpus = load_corpus("e2e")                     # a published corpus, by name
>>> corpus = load_corpus("path/to/my_corpus")  # doctest: +SKIP

Published corpora (``webnlg2020``, ``e2e``, ``novikova2017``) are read from ``data_dir``, else
from ``$NLGEVAL_DATA`` (a folder laid out like the bundled corpora: see docs/corpora.md), else from
the download cache
(``$NLGEVAL_CACHE`` or ``~/.cache/nlgeval``), downloading the pinned original files and
verifying their SHA-256 when needed (see :mod:`nlgeval.corpora.store`). A user corpus is a
directory with ``outputs.*``, ``references.*``, optional ``ratings.*`` and optional
``corpus.json``/``corpus.toml`` (see :mod:`nlgeval.corpora.user`).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from nlgeval.corpora.descriptor import Descriptor, descriptor
from nlgeval.corpora.store import available_locally, locate
from nlgeval.corpus import Corpus
from nlgeval.errors import InputError


@dataclass(frozen=True)
class RegisteredCorpus:
    """A published corpus: its descriptor name and the function ``module.function(folder)``
    that parses it (``load`` by default; one module may hold the loaders of several corpora).

    Examples
    --------
    >>> from nlgeval.corpora import REGISTRY
    >>> REGISTRY["e2e"]
    RegisteredCorpus(name='e2e', module='nlgeval.corpora.e2e', function='load')
    >>> REGISTRY["wmt21-ted-zhen"].loader.__name__
    'load_zhen'
    >>> REGISTRY["e2e"].descriptor.citation[:31]
    'Dusek, O., Novikova, J. and Rie'
    """

    name: str
    module: str
    function: str = "load"

    @property
    def descriptor(self) -> Descriptor:
        return descriptor(self.name)

    @property
    def loader(self) -> Callable[..., Corpus]:
        return getattr(importlib.import_module(self.module), self.function)


REGISTRY: dict[str, RegisteredCorpus] = {
    r.name: r
    for r in (
        RegisteredCorpus("webnlg2020", "nlgeval.corpora.webnlg2020"),
        RegisteredCorpus("e2e", "nlgeval.corpora.e2e"),
        RegisteredCorpus("novikova2017", "nlgeval.corpora.novikova2017"),
        RegisteredCorpus("wmt21-ted-ende", "nlgeval.corpora.wmt21_ted", "load_ende"),
        RegisteredCorpus("wmt21-ted-zhen", "nlgeval.corpora.wmt21_ted", "load_zhen"),
        RegisteredCorpus("realsumm", "nlgeval.corpora.realsumm"),
    )
}
ALIASES = {
    "webnlg": "webnlg2020",
    "novikova": "novikova2017",
    "e2e_nlg": "e2e",
    "wmt21-ted-en-de": "wmt21-ted-ende",
    "wmt21-ted-zh-en": "wmt21-ted-zhen",
    "wmt21_ted_ende": "wmt21-ted-ende",
    "wmt21_ted_zhen": "wmt21-ted-zhen",
}


def registered_corpus(name: str) -> RegisteredCorpus | None:
    """The published corpus called ``name`` (any case, or an alias), or ``None``.

    Parameters
    ----------
    name : str
        A corpus name or alias (case-insensitive), or anything else (e.g. a path).

    Returns
    -------
    RegisteredCorpus or None
        The registry entry, or ``None`` when ``name`` is not a published corpus.

    Examples
    --------
    >>> registered_corpus("WMT21-TED-en-de").name
    'wmt21-ted-ende'
    >>> registered_corpus("path/to/my_corpus") is None
    True
    """
    key = name.strip().lower()
    return REGISTRY.get(ALIASES.get(key, key))


def load_corpus(
    name_or_path: str | Path,
    data_dir: str | Path | None = None,
    *,
    download: bool = True,
    cache: bool = True,
    **options: Any,
) -> Corpus:
    """Load a published corpus by name, or a user corpus directory by path.

    Parameters
    ----------
    name_or_path : str or pathlib.Path
        ``webnlg2020``, ``e2e``, ``novikova2017`` (see :func:`list_corpora`), or the path of a
        directory in the canonical format (a :class:`~pathlib.Path`, or a string that is not a
        corpus name: write ``./e2e`` for a directory called ``e2e``).
    data_dir : str or pathlib.Path, optional
        Folder laid out like the bundled corpora (overrides ``$NLGEVAL_DATA``).
    download : bool
        Allow downloading the pinned files into the cache when there is no local copy.
    cache : bool
        Reuse / store the parsed frames of a published corpus (Parquet, keyed by the input
        files and the loader code; see :mod:`nlgeval.corpora.parsed_cache`).
    **options
        Passed to the corpus loader (e.g. ``out_of_scale="clip"`` for ``e2e``).

    Returns
    -------
    Corpus
        The corpus in the canonical tidy format (:class:`~nlgeval.corpus.Corpus`): outputs,
        references, ratings and metadata.

    Examples
    --------
    >>> corpus = load_corpus("e2e")          # Dusek et al. (2020), read from the local copy
    >>> len(corpus.systems), len(corpus.items), corpus.criteria
    (21, 630, ['quality', 'naturalness'])

    >>> import tempfile
    >>> from nlgeval.corpus import write_toy_folder
    >>> tmp = tempfile.TemporaryDirectory()
    >>> folder = write_toy_folder(tmp.name)  # outputs, references, ratings, corpus.json
    >>> load_corpus(folder).systems          # your own folder (a Path, or "./name")
    ['A', 'B']
    >>> tmp.cleanup()
    """
    reg = registered_corpus(str(name_or_path)) if not isinstance(name_or_path, Path) else None
    if reg is not None:
        loc = locate(reg.descriptor, data_dir, download=download)
        if cache:
            from nlgeval.corpora.parsed_cache import load_cached

            return load_cached(reg.descriptor, loc.folder, reg.loader, options)
        return reg.loader(loc.folder, **options)
    path = Path(name_or_path).expanduser()
    if path.is_dir():
        from nlgeval.corpora.user import load_user_corpus

        return load_user_corpus(path, **options)
    known = ", ".join(REGISTRY)
    raise InputError(
        f"'{name_or_path}' is neither a known corpus ({known}) nor a corpus directory "
        "(a folder with outputs.csv/tsv/jsonl and references.*)"
    )


def list_corpora(data_dir: str | Path | None = None) -> list[dict[str, Any]]:
    """The published corpora: name, title, description, task, licence, criteria, local copy.

    Parameters
    ----------
    data_dir : str or Path, optional
        Where to look for local copies; default ``None``: the data directory in use.

    Returns
    -------
    list of dict
        One dict per published corpus, in registry order.

    Examples
    --------
    >>> [c["name"] for c in list_corpora()]
    ['webnlg2020', 'e2e', 'novikova2017', 'wmt21-ted-ende', 'wmt21-ted-zhen', 'realsumm']
    """
    rows = []
    for name, reg in REGISTRY.items():
        d = reg.descriptor
        rows.append(
            {
                "name": name,
                "title": d.title,
                "description": d.description,
                "task": d.task,
                "licence": d.licence,
                "criteria": [c.to_dict() for c in d.criteria],
                "citation": d.citation,
                "local_path": available_locally(d, data_dir),
                "available_locally": available_locally(d, data_dir) is not None,
                "n_files": len(d.files),
            }
        )
    return rows


__all__ = ["REGISTRY", "RegisteredCorpus", "list_corpora", "load_corpus", "registered_corpus"]
