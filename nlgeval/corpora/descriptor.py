"""Corpus descriptors: the pinned file list, checksums and metadata of each published corpus.

A descriptor is a JSON file in ``nlgeval/corpora/descriptors/`` (package data; its format is
described in ``corpora/README.md``). It lists, for every file a loader reads, the path inside
the local corpus folder (a folder laid out like the bundled corpora, ``<folder>/``), the public
repository,
the pinned commit and the path there (so the raw-file URL can be rebuilt), and the SHA-256.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from typing import Any

from nlgeval.corpus import CorpusInfo, Criterion, Source
from nlgeval.results import Result


@dataclass(frozen=True)
class PinnedFile(Result):
    """One file of a published corpus, pinned to a commit of its public repository.

    Examples
    --------
    >>> f = descriptor("e2e").files[0]
    >>> f.path, f.repository, f.commit[:10]
    ('dataset/testset_w_refs.csv', 'tuetschek/e2e-dataset', 'ab0d967dd5')
    >>> f.accepted_sha256 == (f.sha256,)     # no privacy-reduced copy for this file
    True
    """

    path: str  # relative to the corpus folder
    repository: str  # "owner/name" on GitHub
    commit: str
    source_path: str  # path inside the repository
    sha256: str  # of the reference copy of the file
    sha256_original: str | None = None  # of the repository's file when it differs (E2E ratings)
    drop_columns: tuple[str, ...] = ()  # columns of the original that nlgeval never reads
    download: bool = True  # False for derived files that exist nowhere public
    optional: bool = False  # the loader copes without it (with a note)
    note: str = ""

    @property
    def accepted_sha256(self) -> tuple[str, ...]:
        """Checksums a file may have: the repository's original and, where nlgeval's reference
        copy differs (E2E ratings without the raters' IP columns), that copy too -- so a mirror
        serving the privacy-reduced copy (``NLGEVAL_DOWNLOAD_BASE``) is accepted as well."""
        return tuple(h for h in (self.sha256_original, self.sha256) if h)

    # what `nlgeval corpora info --json` shows: the loader-only fields are left out
    _omit = frozenset({"drop_columns", "note"})


@dataclass(frozen=True)
class Descriptor:
    """Metadata and pinned files of one published corpus.

    Examples
    --------
    >>> d = descriptor("e2e")
    >>> d.name, d.folder, len(d.files), [c.name for c in d.criteria]
    ('e2e', 'e2e_nlg_challenge', 26, ['quality', 'naturalness'])
    >>> d.file("dataset/testset.csv").source_path
    'testset.csv'
    """

    name: str
    folder: str
    title: str
    description: str
    task: str
    licence: str
    citation: str
    criteria: tuple[Criterion, ...]
    files: tuple[PinnedFile, ...] = field(default=())
    #: the levels the corpus's paper reports (``nlgeval validate``'s default when ``--levels``
    #: is not given); empty: nlgeval's general default, segment and system
    levels: tuple[str, ...] = ()

    def file(self, path: str) -> PinnedFile:
        for f in self.files:
            if f.path == path:
                return f
        raise KeyError(path)

    @property
    def sources(self) -> tuple[Source, ...]:
        """One :class:`Source` per (repository, commit), listing the paths used from it."""
        groups: dict[tuple[str, str], list[str]] = {}
        for f in self.files:
            groups.setdefault((f.repository, f.commit), []).append(f.source_path)
        return tuple(
            Source(
                repository=f"https://github.com/{repo}",
                commit=commit,
                paths=tuple(dict.fromkeys(paths)),
                licence=self.licence,
                citation=self.citation,
            )
            for (repo, commit), paths in groups.items()
        )

    def info(self) -> CorpusInfo:
        """The :class:`~nlgeval.corpus.CorpusInfo` a loaded corpus carries (with its sources).

        Examples
        --------
        >>> info = descriptor("e2e").info()
        >>> info.name, [s.repository for s in info.sources]
        ('e2e', ['https://github.com/tuetschek/e2e-dataset', 'https://github.com/tuetschek/e2e-eval'])
        """
        return CorpusInfo(
            name=self.name,
            description=self.description,
            criteria=self.criteria,
            licence=self.licence,
            sources=self.sources,
            task=self.task,
        )


def _parse(data: dict[str, Any]) -> Descriptor:
    crits = tuple(
        Criterion(
            name=c["name"],
            min=float(c["min"]),
            max=float(c["max"]),
            type=c.get("type", "interval"),
            description=c.get("description", ""),
            higher_is_better=bool(c.get("higher_is_better", True)),
        )
        for c in data["criteria"]
    )
    files = tuple(
        PinnedFile(
            path=f["path"],
            repository=f["repository"],
            commit=f["commit"],
            source_path=f["source_path"],
            sha256=f["sha256"],
            sha256_original=f.get("sha256_original"),
            drop_columns=tuple(f.get("drop_columns", ())),
            download=bool(f.get("download", True)),
            optional=bool(f.get("optional", False)),
            note=f.get("note", ""),
        )
        for f in data["files"]
    )
    return Descriptor(
        name=data["name"],
        folder=data["folder"],
        title=data.get("title", data["name"]),
        description=data["description"],
        task=data.get("task", ""),
        licence=data.get("licence", ""),
        citation=data.get("citation", ""),
        criteria=crits,
        files=files,
        levels=tuple(data.get("levels", ())),
    )


@cache
def descriptor(name: str) -> Descriptor:
    """The packaged descriptor of a published corpus (``webnlg2020``, ``e2e``, ...).

    Examples
    --------
    >>> descriptor("webnlg2020").citation[:40]
    'Castro Ferreira, T., Gardent, C., Ilinyk'
    """
    res = resources.files("nlgeval.corpora").joinpath("descriptors", f"{name}.json")
    return _parse(json.loads(res.read_text(encoding="utf-8")))
