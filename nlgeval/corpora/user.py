"""Users' own corpora: a directory of tidy CSV/TSV/JSONL files, no code needed.

Layout::

    my_corpus/
        outputs.csv      system, item, text            (required; .tsv or .jsonl also accepted)
        references.csv   item, ref_id, text            (required unless require_references=false)
        ratings.csv      rater, item, system, criterion, score   (optional; extra columns kept)
        corpus.json      metadata and rating scales    (optional; or corpus.toml)

``corpus.json`` (every key optional except that each rated criterion needs a scale)::

    {"name": "my_corpus", "description": "...", "task": "...", "licence": "CC BY 4.0",
     "criteria": [{"name": "fluency", "min": 1, "max": 5, "type": "ordinal",
                   "description": "...", "higher_is_better": true}],
     "sources": [{"repository": "...", "commit": "...", "paths": ["..."], "citation": "..."}],
     "empty_outputs": "error",        # or "keep": empty system outputs scored as ""
     "require_references": true}

``criteria`` may also be a mapping ``{"fluency": {"min": 1, "max": 5}}``. Every problem is an
:class:`~nlgeval.errors.InputError` naming the file, the 1-based row and the column (the key,
such as ``criteria[1].min``, in ``corpus.json``/``corpus.toml``).
"""

from __future__ import annotations

import json
import tomllib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from nlgeval.corpus import Corpus, CorpusInfo, Criterion, Source
from nlgeval.errors import InputError
from nlgeval.io import read_table, read_text_utf8
from nlgeval.io.text import lone_surrogate_in

TABLE_SUFFIXES = (".csv", ".tsv", ".jsonl")
SCALE_TYPES = ("interval", "ordinal", "nominal", "ratio")
_KNOWN_KEYS = {
    "name", "description", "task", "licence", "license", "criteria", "sources",
    "empty_outputs", "require_references",
}


def _find_table(folder: Path, stem: str, required: bool) -> Path | None:
    found = [folder / f"{stem}{s}" for s in TABLE_SUFFIXES if (folder / f"{stem}{s}").is_file()]
    if len(found) > 1:
        raise InputError(
            f"more than one {stem} file ({', '.join(p.name for p in found)}); keep only one",
            file=folder,
        )
    if not found:
        if required:
            raise InputError(
                f"no {stem} file: expected {stem}.csv, {stem}.tsv or {stem}.jsonl "
                f"(found: {', '.join(sorted(p.name for p in folder.iterdir())) or 'nothing'})",
                file=folder,
            )
        return None
    return found[0]


def _read_metadata(folder: Path) -> tuple[dict[str, Any], Path | None]:
    jpath, tpath = folder / "corpus.json", folder / "corpus.toml"
    if jpath.is_file() and tpath.is_file():
        raise InputError("both corpus.json and corpus.toml exist; keep only one", file=folder)
    if jpath.is_file():
        try:
            meta = json.loads(read_text_utf8(jpath))
        except json.JSONDecodeError as exc:
            raise InputError(f"not valid JSON: {exc.msg}", file=jpath, row=exc.lineno) from None
        bad = lone_surrogate_in(meta)  # json reads "\ud800" without its pair; UTF-8 cannot
        if bad is not None:
            raise InputError(f"{bad[1]} (a JSON escape such as \\ud800 without the other half "
                             "of its UTF-16 pair)", file=jpath, key=bad[0] or None)
        path = jpath
    elif tpath.is_file():
        try:
            meta = tomllib.loads(read_text_utf8(tpath))
        except tomllib.TOMLDecodeError as exc:
            raise InputError(f"not valid TOML: {exc}", file=tpath) from None
        path = tpath
    else:
        return {}, None
    if not isinstance(meta, dict):
        raise InputError("expected an object with keys such as name, criteria", file=path)
    unknown = sorted(set(meta) - _KNOWN_KEYS)
    if unknown:
        raise InputError(
            f"unknown key(s) {', '.join(unknown)} (known: {', '.join(sorted(_KNOWN_KEYS))})",
            file=path,
        )
    return meta, path


def _criteria(meta: dict[str, Any], path: Path | None) -> tuple[Criterion, ...]:
    raw = meta.get("criteria", [])
    if isinstance(raw, dict):
        raw = [{"name": k, **(v if isinstance(v, dict) else {})} for k, v in raw.items()]
    if not isinstance(raw, list):
        raise InputError("'criteria' must be a list of objects", file=path, key="criteria")
    out = []
    for k, c in enumerate(raw, start=1):
        where = f"criteria[{k}]"
        if not isinstance(c, dict) or "name" not in c:
            raise InputError(f"{where} must be an object with a 'name'", file=path, key=where)
        for key in ("min", "max"):
            if key not in c:
                raise InputError(
                    f"{where} ('{c['name']}') needs '{key}' (the rating scale)", file=path,
                    key=f"{where}.{key}",
                )
            if isinstance(c[key], bool) or not isinstance(c[key], int | float):
                raise InputError(
                    f"{where} ('{c['name']}'): '{key}' must be a number, got {c[key]!r}",
                    file=path, key=f"{where}.{key}",
                )
        if c["min"] >= c["max"]:
            raise InputError(
                f"{where} ('{c['name']}'): min {c['min']} must be below max {c['max']}",
                file=path, key=where,
            )
        typ = c.get("type", "interval")
        if typ not in SCALE_TYPES:
            raise InputError(
                f"{where} ('{c['name']}'): type must be one of {', '.join(SCALE_TYPES)}, "
                f"got {typ!r}", file=path, key=f"{where}.type",
            )
        out.append(
            Criterion(
                name=str(c["name"]),
                min=float(c["min"]),
                max=float(c["max"]),
                type=typ,
                description=str(c.get("description", "")),
                higher_is_better=bool(c.get("higher_is_better", True)),
            )
        )
    return tuple(out)


def _sources(meta: dict[str, Any], licence: str) -> tuple[Source, ...]:
    return tuple(
        Source(
            repository=str(s.get("repository", "")),
            commit=str(s.get("commit", "")),
            paths=tuple(map(str, s.get("paths", ()))),
            licence=str(s.get("licence", licence)),
            citation=str(s.get("citation", "")),
        )
        for s in meta.get("sources", [])
        if isinstance(s, dict)
    )


def _check_declared(
    ratings: pd.DataFrame, criteria: Sequence[Criterion], meta_path: Path, rat_path: Path | None
) -> None:
    """Every rated criterion has a scale declared in the corpus metadata."""
    declared = {c.name for c in criteria}
    crit = ratings["criterion"].astype(str).str.strip()
    undeclared = ~crit.isin(declared)
    if undeclared.any():
        pos = int(np.flatnonzero(undeclared.to_numpy())[0])
        raise InputError(
            f"criterion '{crit.iloc[pos]}' has no declared scale: add it to "
            f"{meta_path} as "
            f'{{"criteria": [{{"name": "{crit.iloc[pos]}", "min": ..., "max": ...}}]}} '
            f"(declared: {', '.join(sorted(declared)) or 'none'})",
            file=rat_path,
            row=int(ratings["_row"].iloc[pos]),
            column="criterion",
        )


def load_user_corpus(
    folder: str | Path,
    *,
    empty_outputs: str | None = None,
    require_references: bool | None = None,
) -> Corpus:
    """Load and validate a corpus directory (see the module docstring for the layout).

    Examples
    --------
    >>> import tempfile
    >>> from nlgeval.corpus import write_toy_folder
    >>> tmp = tempfile.TemporaryDirectory()
    >>> folder = write_toy_folder(tmp.name)  # a small corpus folder
    >>> sorted(p.name for p in folder.iterdir())
    ['corpus.json', 'outputs.csv', 'ratings.csv', 'references.csv']
    >>> corpus = load_user_corpus(folder)
    >>> corpus.info.name, corpus.systems, corpus.items, corpus.criteria
    ('toy', ['A', 'B'], ['1', '2'], ['fluency'])
    >>> tmp.cleanup()
    """
    folder = Path(folder)
    if not folder.is_dir():
        raise InputError("not a directory", file=folder)
    meta, meta_path = _read_metadata(folder)
    licence = str(meta.get("licence", meta.get("license", "")))
    criteria = _criteria(meta, meta_path)
    info = CorpusInfo(
        name=str(meta.get("name", folder.resolve().name)),
        description=str(meta.get("description", "")),
        criteria=criteria,
        licence=licence,
        sources=_sources(meta, licence),
        task=str(meta.get("task", "")),
    )
    empty = empty_outputs or meta.get("empty_outputs", "error")
    if empty not in ("error", "keep"):
        raise InputError(
            f"empty_outputs must be 'error' or 'keep', got {empty!r}", file=meta_path,
            key="empty_outputs",
        )
    need_refs = meta.get("require_references", True) if require_references is None else (
        require_references
    )

    out_path = _find_table(folder, "outputs", required=True)
    ref_path = _find_table(folder, "references", required=bool(need_refs))
    rat_path = _find_table(folder, "ratings", required=False)
    assert out_path is not None
    outputs = read_table(out_path, ["system", "item", "text"])
    references = read_table(ref_path, ["item", "ref_id", "text"]) if ref_path else None
    ratings = (
        read_table(rat_path, ["rater", "item", "system", "criterion", "score"])
        if rat_path
        else None
    )
    if ratings is not None and len(ratings):
        _check_declared(ratings, criteria, meta_path or folder / "corpus.json", rat_path)
    return Corpus.build(
        info,
        outputs,
        references,
        ratings,
        files={"outputs": out_path, "references": ref_path, "ratings": rat_path},
        empty_outputs=empty,  # type: ignore[arg-type]  # 'error' or 'keep' (checked above)
        require_references=bool(need_refs),
    )
