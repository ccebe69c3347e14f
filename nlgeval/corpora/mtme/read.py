"""read_mtme's stages, in the order it runs them; each appends what it decided to ``notes``.

Sources, item ids, documents, references and system outputs of one MTME language pair (the
layout: :mod:`nlgeval.corpora.mtme`); the score files are read by
:mod:`nlgeval.corpora.mtme.read_scores`. :func:`read_mtme` (re-exported by
:mod:`nlgeval.corpora.mtme`) runs them, at the end of this module.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from nlgeval.corpora.mtme.layout import (
    _BAD_NAME,
    HUMAN_SYSTEM_COLUMNS,
    ITEM_IDS_DIR,
    NO_TRANSLATION,
    _check_length,
    _default_reference,
    _lines,
    _read_segments,
    _text_file,
)
from nlgeval.corpora.mtme.read_scores import (
    _by_level,
    _drop_missing_outputs,
    _orientation,
    _read_human_scores,
    _read_metric_scores,
)
from nlgeval.corpora.mtme.results import MTMEData
from nlgeval.corpus import Corpus, CorpusInfo, Criterion, Source
from nlgeval.errors import InputError

LOCATED_COLUMNS = ("metric", "system", "item", "score", "_source", "_row", "_level")


def _open_folder(path: str | Path, lp: str) -> tuple[Path, str]:
    """The test-set folder (it must exist) and the language pair, stripped and checked."""
    folder = Path(path).expanduser()
    if not folder.is_dir():
        raise InputError("MTME test-set folder not found (expected a folder with sources/, "
                         "references/, system-outputs/ ...)", file=folder)
    lp = str(lp).strip()
    if not lp or _BAD_NAME.search(lp):
        raise InputError(f"invalid language pair {lp!r} (e.g. en-de)")
    return folder, lp


def _corpus_info(folder: Path, lp: str, criteria: list[Criterion], src_path: Path,
                 ref_path: Path) -> CorpusInfo:
    """The corpus description of one test set and language pair (files relative to it)."""
    rel = [str(src_path.relative_to(folder)), str(ref_path.relative_to(folder)),
           f"system-outputs/{lp}/"]
    return CorpusInfo(
        name=f"mtme:{folder.name}/{lp}",
        description=f"MTME test set {folder.name}, language pair {lp}",
        criteria=tuple(criteria),
        sources=(Source(paths=tuple(rel)),),
        task="machine translation",
    )


def _concat(parts: list[pd.DataFrame], columns: Sequence[str]) -> pd.DataFrame:
    """The frames stacked, or an empty frame with ``columns``."""
    if parts:
        return pd.concat(parts, ignore_index=True)
    return pd.DataFrame({c: pd.Series(dtype=object) for c in columns})


def _read_source(folder: Path, lp: str) -> tuple[Path, list[str | None]]:
    src_path = _text_file(folder / "sources", lp)
    if src_path is None:
        have = sorted(p.stem for p in (folder / "sources").glob("*.*")) if (
            folder / "sources").is_dir() else []
        hint = f" (language pairs here: {', '.join(have)})" if have else ""
        raise InputError(f"no source file for {lp}{hint}", file=folder / "sources" / f"{lp}.txt")
    src = _read_segments(src_path, "source")
    if not src:
        raise InputError("the source file is empty", file=src_path)
    return src_path, src


def _read_item_ids(folder: Path, lp: str, n: int, src_path: Path, notes: list[str]) -> list[str]:
    """Item ids from ``item-ids/LP.txt`` (nlgeval's extension), else ``1..n``."""
    ids_path = folder / ITEM_IDS_DIR / f"{lp}.txt"
    if not ids_path.is_file():
        return [str(i) for i in range(1, n + 1)]
    items = [s.strip() for s in _lines(ids_path)]
    _check_length(ids_path, len(items), n, "the item-id file", src_path)
    for i, it in enumerate(items, start=1):
        if not it:
            raise InputError("empty item id", file=ids_path, row=i)
    dup = pd.Series(items).duplicated()
    if dup.any():
        i = int(np.flatnonzero(dup.to_numpy())[0])
        raise InputError(f"duplicate item id '{items[i]}'", file=ids_path, row=i + 1)
    notes.append(f"item ids from {ITEM_IDS_DIR}/{lp}.txt (nlgeval's extension of the layout)")
    return items


def _read_documents(folder: Path, lp: str, items: list[str], src_path: Path,
                    notes: list[str]) -> pd.DataFrame:
    """``item, doc, domain`` from ``documents/LP.docs`` (documents must be contiguous)."""
    docs_path = folder / "documents" / f"{lp}.docs"
    if not docs_path.is_file():
        notes.append(f"no documents/{lp}.docs (MTME itself requires one): no document info")
        return _concat([], ("item", "doc", "domain"))
    doc_lines = _lines(docs_path)
    _check_length(docs_path, len(doc_lines), len(items), "the documents file", src_path)
    doms, docs = [], []
    for i, line in enumerate(doc_lines, start=1):
        toks = line.split()
        if len(toks) < 2:
            raise InputError("expected 'DOMAIN DOCNAME'", file=docs_path, row=i)
        doms.append(toks[0])
        docs.append(toks[1])
    seen: set[str] = set()
    for i, d in enumerate(docs):
        if d in seen and docs[i - 1] != d:
            raise InputError(f"document '{d}' is not a contiguous block of lines (MTME "
                             "requires contiguous documents)", file=docs_path, row=i + 1)
        seen.add(d)
    return pd.DataFrame({"item": items, "doc": docs, "domain": doms})


def _find_references(folder: Path, lp: str) -> dict[str, Path]:
    """``{name: file}`` of ``references/LP.NAME.txt`` (names checked as MTME requires)."""
    ref_dir = folder / "references"
    ref_files: dict[str, Path] = {}
    if ref_dir.is_dir():
        for p in sorted(ref_dir.glob(f"{lp}.*.*")):
            if p.suffix not in (".txt", ".jsonl"):
                continue
            name = p.name[len(lp) + 1: -len(p.suffix)]
            if not name or "." in name or "-" in name or name in ("all", "src"):
                raise InputError(f"invalid reference name {name!r}: MTME reference names "
                                 "contain no '-' or '.' and are not 'all' or 'src'", file=p)
            if name in ref_files:
                raise InputError(f"duplicate reference name '{name}' ({ref_files[name].name})",
                                 file=p)
            ref_files[name] = p
    if not ref_files:
        raise InputError(f"no reference file for {lp} (expected references/{lp}.NAME.txt)",
                         file=ref_dir)
    return ref_files


def _choose_reference(ref_files: dict[str, Path], reference: str | None, testset: str, lp: str,
                      n: int, src_path: Path, notes: list[str]
                      ) -> tuple[str, list[str | None]]:
    """The reference to use and its lines; every reference file's length is checked."""
    ref_names = list(ref_files)
    if reference is None:
        reference, why = _default_reference(testset, lp, ref_names)
        notes.append(f"reference: '{reference}' ({why}; references here: "
                     f"{', '.join(ref_names)})")
    elif reference not in ref_files:
        raise InputError(f"unknown reference '{reference}' for {lp} (references here: "
                         f"{', '.join(ref_names)})", file=src_path.parent.parent / "references")
    else:
        notes.append(f"reference: '{reference}' (chosen; references here: "
                     f"{', '.join(ref_names)})")
    ref_text = _read_segments(ref_files[reference], "target")
    _check_length(ref_files[reference], len(ref_text), n, f"reference '{reference}'", src_path)
    for name, p in ref_files.items():
        if name != reference:
            got = len(_read_segments(p, "target"))
            _check_length(p, got, n, f"reference '{name}'", src_path)
    return reference, ref_text


def _read_system_outputs(folder: Path, lp: str, n: int, src_path: Path, notes: list[str]
                         ) -> dict[str, list[str | None]]:
    sys_dir = folder / "system-outputs" / lp
    if not sys_dir.is_dir():
        raise InputError(f"no system outputs for {lp} (expected system-outputs/{lp}/SYS.txt)",
                         file=sys_dir)
    outputs_by_sys: dict[str, list[str | None]] = {}
    skipped_files = []
    for p in sorted(sys_dir.glob("*.*")):
        if p.suffix not in (".txt", ".jsonl"):
            skipped_files.append(p.name)
            continue
        name = p.name[: -len(p.suffix)]
        if name in outputs_by_sys:
            raise InputError(f"two output files for system '{name}'", file=p)
        seg = _read_segments(p, "hypothesis")
        _check_length(p, len(seg), n, f"system '{name}'", src_path)
        outputs_by_sys[name] = seg
    if skipped_files:
        notes.append(f"ignored {len(skipped_files)} file(s) in system-outputs/{lp}/ that are "
                     f"not .txt/.jsonl: {', '.join(skipped_files[:5])}")
    if not outputs_by_sys:
        raise InputError(f"system-outputs/{lp}/ holds no output files", file=sys_dir)
    return outputs_by_sys


def _choose_systems(all_systems: set[str], ref_names: list[str], reference: str,
                    exclude_systems: Collection[str], include_human_systems: bool,
                    notes: list[str], sys_dir: Path) -> tuple[list[str], tuple[str, ...]]:
    """The systems kept (sorted) and the human translations among them."""
    unknown_ex = sorted(set(exclude_systems) - all_systems)
    if unknown_ex:
        raise InputError(f"exclude_systems names unknown system(s) {', '.join(unknown_ex)} "
                         f"(systems: {', '.join(sorted(all_systems))})")
    human_systems = sorted(all_systems & set(ref_names))
    excluded = set(exclude_systems)
    if reference in all_systems:
        excluded.add(reference)
        notes.append(f"system '{reference}' is the reference itself: not a system")
    other_humans = [s for s in human_systems if s != reference]
    if other_humans:
        if include_human_systems:
            notes.append(f"human translation(s) {', '.join(other_humans)} kept as systems, "
                         f"scored against '{reference}' (MTME convention: tasks.Task human=True)")
        else:
            excluded.update(other_humans)
            notes.append(f"human translation(s) {', '.join(other_humans)} left out "
                         "(include_human_systems=False)")
    if exclude_systems:
        notes.append(f"excluded system(s): {', '.join(sorted(exclude_systems))}")
    systems = sorted(all_systems - excluded)
    if not systems:
        raise InputError(f"no systems left for {sys_dir.name} after excluding "
                         f"{', '.join(sorted(excluded))}", file=sys_dir)
    return systems, tuple(s for s in other_humans if s in systems)


def _outputs_frame(systems: list[str], items: list[str],
                   outputs_by_sys: dict[str, list[str | None]], src: list[str | None],
                   notes: list[str]) -> tuple[pd.DataFrame, int]:
    """``system, item, text, source`` without the "no translation" lines, and their count."""
    out_rows: dict[str, list[Any]] = {"system": [], "item": [], "text": [], "source": []}
    n_missing_out = 0
    for s in systems:
        for it, text, so in zip(items, outputs_by_sys[s], src, strict=True):
            if text is None:
                n_missing_out += 1
                continue
            out_rows["system"].append(s)
            out_rows["item"].append(it)
            out_rows["text"].append(text)
            out_rows["source"].append("" if so is None else so)
    if n_missing_out:
        notes.append(f"{n_missing_out} output line(s) '{NO_TRANSLATION}' (no output): left "
                     "out")
    return pd.DataFrame(out_rows), n_missing_out


def _references_frame(items: list[str], ref_text: list[str | None], reference: str,
                      notes: list[str]) -> tuple[pd.DataFrame, int]:
    """``item, ref_id, text`` of the non-empty reference lines, and the count of empty ones."""
    ref_keep = [(it, t) for it, t in zip(items, ref_text, strict=True) if t and t.strip()]
    references = pd.DataFrame({"item": [r[0] for r in ref_keep], "ref_id": reference,
                               "text": [r[1] for r in ref_keep]})
    n_no_ref = len(items) - len(ref_keep)
    if n_no_ref:
        notes.append(f"{n_no_ref} segment(s) with an empty or missing '{reference}' line: no "
                     "reference for them")
    return references, n_no_ref


def read_mtme(
    path: str | Path,
    lp: str,
    *,
    reference: str | None = None,
    human: str | Sequence[str] | None = "mqm",
    include_human_systems: bool = True,
    exclude_systems: Collection[str] = (),
    metric_scores: bool = True,
    lower_is_better: Collection[str] = (),
) -> MTMEData:
    """Read one language pair of an MTME test-set folder (see the module docstring).

    Parameters
    ----------
    path:
        The test-set folder, e.g. ``.../mt-metrics-eval-v2/wmt23``.
    lp:
        Language pair as in the file names, e.g. ``en-de``.
    reference:
        Name of the reference to use (``refA``...). Default: MTME's standard reference for the
        test set (:data:`STANDARD_REFERENCES`), else the only reference, else ``refA``/``ref``/
        ``posteditA``. It is removed from the systems; metric variants using any other
        reference are not loaded.
    human:
        Human score name(s) (``mqm``, ``wmt-z``, ``da-sqm``...) to load: ``seg`` files become
        the corpus ratings, ``sys`` files :attr:`MTMEData.human_system_scores`. ``None``: no
        human scores.
    include_human_systems:
        Keep the other human translations (system outputs named like a reference) as systems
        (MTME's ``tasks.Task(human=True)``, the default of the WMT22-23 official tasks).
    exclude_systems:
        Systems to leave out (e.g. MTME's outlier systems or references close to the chosen
        one).
    metric_scores:
        Load ``metric-scores/LP/`` (MTME's ``read_stored_metric_scores``).
    lower_is_better:
        Metric names (full, e.g. ``TER-refA``) to mark as lower-is-better.

    Raises
    ------
    InputError
        Missing folder or file, a text file with a different number of lines than the source,
        a score file with a wrong count per system, an unknown system, a non-numeric score --
        each naming the file and line.

    Returns
    -------
    MTMEData
        The corpus, metric scores, human system scores and notes.

    Examples
    --------
    >>> import tempfile
    >>> from nlgeval.corpus import write_toy_folder
    >>> tmp = tempfile.TemporaryDirectory()
    >>> folder = write_toy_folder(tmp.name)  # outputs, references, ratings, corpus.json
    >>> import pandas as pd
    >>> from nlgeval.corpora import load_corpus
    >>> from nlgeval.corpora.mtme import write_mtme
    >>> scores = pd.DataFrame({"system": ["A", "B", "A", "B"], "item": ["1", "1", "2", "2"],
    ...                        "metric": "len", "score": [3, 3, 2, 2]})
    >>> _ = write_mtme(load_corpus(folder), folder / "mtme" / "toy", "en-de", scores=scores)
    >>> data = read_mtme(folder / "mtme" / "toy", "en-de", human="fluency")
    >>> data.scores
      system item  metric  score
    0      A    1  len-r1    3.0
    1      A    2  len-r1    2.0
    2      B    1  len-r1    3.0
    3      B    2  len-r1    2.0
    >>> tmp.cleanup()
    """
    folder, lp = _open_folder(path, lp)
    notes: list[str] = []
    texts = _read_texts(folder, lp, reference, exclude_systems, include_human_systems, notes)
    wanted = [human] if isinstance(human, str) else list(human or [])
    return _with_scores(texts, wanted, metric_scores, lower_is_better, notes)


@dataclass(frozen=True)
class _Texts:
    """What :func:`_read_texts` read of one language pair: everything but the score files."""

    folder: Path
    lp: str
    src_path: Path
    src: list[str | None]
    items: list[str]
    documents: pd.DataFrame
    ref_files: dict[str, Path]
    reference: str
    systems: list[str]
    kept_humans: tuple[str, ...]
    all_systems: set[str]
    outputs: pd.DataFrame
    n_missing_out: int
    references: pd.DataFrame
    n_no_ref: int


def _read_texts(folder: Path, lp: str, reference: str | None, exclude_systems: Collection[str],
                include_human_systems: bool, notes: list[str]) -> _Texts:
    """Sources, item ids, documents, the reference and the system outputs, in that order."""
    src_path, src = _read_source(folder, lp)
    n = len(src)
    items = _read_item_ids(folder, lp, n, src_path, notes)
    documents = _read_documents(folder, lp, items, src_path, notes)
    ref_files = _find_references(folder, lp)
    reference, ref_text = _choose_reference(ref_files, reference, folder.name, lp, n, src_path,
                                            notes)
    outputs_by_sys = _read_system_outputs(folder, lp, n, src_path, notes)
    systems, kept_humans = _choose_systems(set(outputs_by_sys), list(ref_files), reference,
                                           exclude_systems, include_human_systems, notes,
                                           folder / "system-outputs" / lp)
    outputs, n_missing_out = _outputs_frame(systems, items, outputs_by_sys, src, notes)
    references, n_no_ref = _references_frame(items, ref_text, reference, notes)
    return _Texts(folder, lp, src_path, src, items, documents, ref_files, reference, systems,
                  kept_humans, set(outputs_by_sys), outputs, n_missing_out, references, n_no_ref)


def _with_scores(t: _Texts, wanted: list[str], metric_scores: bool,
                 lower_is_better: Collection[str], notes: list[str]) -> MTMEData:
    """Read the human and metric score files and build the :class:`MTMEData`."""
    n = len(t.src)
    ratings_parts, human_sys_parts, criteria = _read_human_scores(
        t.folder, t.lp, wanted, n, t.items, t.systems, t.all_systems, notes)
    located = (_read_metric_scores(t.folder, t.lp, n, t.items, t.systems, t.all_systems,
                                   list(t.ref_files), t.reference, notes)
               if metric_scores else [])
    loc = _drop_missing_outputs(_concat(located, LOCATED_COLUMNS), t.outputs, t.n_missing_out,
                                "metric", notes)
    scores, system_scores = _by_level(loc)
    human_system_scores = _concat(human_sys_parts, HUMAN_SYSTEM_COLUMNS)
    higher_is_better = _orientation(list(dict.fromkeys(loc["metric"])), lower_is_better, notes)
    ratings = (_drop_missing_outputs(pd.concat(ratings_parts, ignore_index=True), t.outputs,
                                     t.n_missing_out, "human", notes) if ratings_parts else None)
    info = _corpus_info(t.folder, t.lp, criteria, t.src_path, t.ref_files[t.reference])
    corpus = Corpus.build(info, t.outputs, t.references, ratings, empty_outputs="keep",
                          require_references=t.n_no_ref == 0, notes=notes)
    return MTMEData(
        corpus=corpus, scores=scores, system_scores=system_scores,
        human_system_scores=human_system_scores, higher_is_better=higher_is_better,
        notes=list(corpus.notes), testset=t.folder.name, lp=t.lp, reference=t.reference,
        human_systems=t.kept_humans,
        sources=pd.DataFrame({"item": t.items, "text": ["" if s is None else s for s in t.src]}),
        documents=t.documents, _located=loc.drop(columns="_level").reset_index(drop=True),
    )
