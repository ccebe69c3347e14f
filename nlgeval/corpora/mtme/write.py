"""write_mtme's stages: each checks its input and adds files to a :class:`_Files`; nothing
is written to disk until every stage has passed, so a bad input never leaves a half-written
folder. The layout written is described in :mod:`nlgeval.corpora.mtme`; :func:`write_mtme`
(re-exported there) runs the stages, at the end of this module.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from nlgeval.corpora.mtme.layout import (
    ITEM_IDS_DIR,
    NO_TRANSLATION,
    _check_name,
    _fmt,
    _line,
    _refs_used,
)
from nlgeval.corpora.mtme.results import MTMEWritten
from nlgeval.corpus import Corpus
from nlgeval.errors import InputError


def _item_map(obj: pd.DataFrame | Mapping[str, str] | None, cols: Sequence[str], what: str
              ) -> pd.DataFrame | None:
    if obj is None:
        return None
    if isinstance(obj, Mapping):
        if len(cols) != 2:
            raise InputError(f"{what} must be a DataFrame with columns {', '.join(cols)}")
        return pd.DataFrame({"item": [str(k) for k in obj], cols[1]: [str(v) for v in
                                                                       obj.values()]})
    if not isinstance(obj, pd.DataFrame):
        raise InputError(f"{what} must be a DataFrame or a mapping, got {type(obj).__name__}")
    miss = [c for c in cols if c not in obj.columns]
    if miss:
        raise InputError(f"{what} needs column(s) {', '.join(miss)} (has: "
                         f"{', '.join(map(str, obj.columns))})")
    df = obj[list(cols)].astype(str).copy()
    if df["item"].duplicated().any():
        raise InputError(f"{what}: item '{df.loc[df['item'].duplicated(), 'item'].iloc[0]}' "
                         "appears twice")
    return df


class _Files:
    """The files to write (relative path -> text) and the count of stripped trailing spaces."""

    def __init__(self) -> None:
        self.files: dict[str, str] = {}
        self.n_trailing = 0

    def put(self, rel: str, lines: Sequence[str]) -> None:
        self.files[rel] = "".join(f"{ln}\n" for ln in lines)

    def clean(self, text: str, what: str) -> str:
        t = _line(str(text), what)
        if t != t.rstrip():
            self.n_trailing += 1
        return t.rstrip()


def _segment_order(corpus: Corpus, item_order: Sequence[str] | None) -> list[str]:
    items = list(corpus.items) if item_order is None else [str(i) for i in item_order]
    if item_order is not None:
        missing = sorted(set(corpus.items) - set(items))
        dup = pd.Series(items)[pd.Series(items).duplicated()]
        if len(dup) or missing:
            raise InputError("item_order must list every item of the corpus once "
                             + (f"(missing: {', '.join(missing[:5])})" if missing else
                                f"('{dup.iloc[0]}' appears twice)"))
    return items


def _documents_for(documents: pd.DataFrame | None, out: pd.DataFrame, items: list[str],
                   notes: list[str]) -> pd.DataFrame:
    """``doc, domain`` indexed by item: given, from ``outputs``, else one default document."""
    docs = _item_map(documents, ("item", "doc", "domain"), "documents")
    if docs is None and "doc" in out.columns:
        first = out.drop_duplicates("item").set_index("item")
        docs = pd.DataFrame({"item": items, "doc": first["doc"].reindex(items).astype(str),
                             "domain": (first["domain"].reindex(items).astype(str)
                                        if "domain" in out.columns else "default")})
    if docs is None:
        docs = pd.DataFrame({"item": items, "doc": "doc", "domain": "default"})
        notes.append("no document information: one document 'doc' in domain 'default'")
    docs = docs.set_index("item")
    lacking = [i for i in items if i not in docs.index]
    if lacking:
        raise InputError(f"documents: no row for item(s) {', '.join(lacking[:5])}")
    return docs


def _regroup_documents(items: list[str], docs: pd.DataFrame, notes: list[str]) -> list[str]:
    """Items reordered stably so that every document is a contiguous block (MTME needs it)."""
    doc_of = docs["doc"].reindex(items).to_numpy()
    rank = {d: k for k, d in enumerate(dict.fromkeys(doc_of))}
    order = sorted(range(len(items)), key=lambda k: (rank[doc_of[k]], k))
    if order != list(range(len(items))):
        notes.append("segments regrouped (stably) so that each document is contiguous")
        items = [items[k] for k in order]
    for c in ("doc", "domain"):
        for v in dict.fromkeys(docs[c]):
            _check_name(str(v), f"document {c}")
    return items


def _put_sources(w: _Files, sources: pd.DataFrame | Mapping[str, str] | None, out: pd.DataFrame,
                 items: list[str], docs: pd.DataFrame, lp: str, notes: list[str]) -> None:
    """``sources/LP.txt``, ``documents/LP.docs`` and, for non-default ids, ``item-ids/LP.txt``."""
    src = _item_map(sources, ("item", "text"), "sources")
    if src is None:
        for col in ("source", "input"):
            if col in out.columns:
                src = out.drop_duplicates("item")[["item", col]].rename(columns={col: "text"})
                break
    if src is None:
        src = pd.DataFrame({"item": items, "text": items})
        notes.append("no source texts: the source file holds the item ids")
    src_map = src.set_index("item")["text"]
    if not set(items) <= set(src_map.index):
        miss = [i for i in items if i not in src_map.index]
        raise InputError(f"sources: no text for item(s) {', '.join(miss[:5])}")
    w.put(f"sources/{lp}.txt", [w.clean(src_map[i], f"source of item '{i}'") for i in items])
    w.put(f"documents/{lp}.docs", [f"{docs.at[i, 'domain']} {docs.at[i, 'doc']}" for i in items])
    if items != [str(k) for k in range(1, len(items) + 1)]:
        for i in items:
            _line(i, f"item id {i!r}")
            if i != i.strip():
                raise InputError(f"item id {i!r} has leading/trailing whitespace")
        w.put(f"{ITEM_IDS_DIR}/{lp}.txt", items)


def _put_references(w: _Files, corpus: Corpus, items: list[str], lp: str,
                    rename: Mapping[str, str], text_by: Mapping[str, Mapping[str, str]],
                    notes: list[str]) -> list[str]:
    """``references/LP.NAME.txt`` per ref_id; returns the MTME names of the references."""
    corpus_refs = list(dict.fromkeys(corpus.references["ref_id"]))
    ref_ids = [rename.get(r, r) for r in corpus_refs]
    for r in ref_ids:
        _check_name(r, "reference name (ref_id)", extra=".-")
        if r in ("all", "src"):
            raise InputError(f"reference name {r!r} is reserved in MTME; rename it with "
                             "reference_names")
    if len(set(ref_ids)) < len(ref_ids):
        raise InputError(f"two ref_ids get the same MTME name: {', '.join(ref_ids)}")
    for orig, r in zip(corpus_refs, ref_ids, strict=True):
        sub = corpus.references[corpus.references["ref_id"] == orig]
        m = dict(zip(sub["item"], sub["text"], strict=True))
        w.put(f"references/{lp}.{r}.txt",
              [w.clean(m[i], f"reference '{r}' of item '{i}'") if i in m else NO_TRANSLATION
               for i in items])
        if r in text_by:
            notes.append(f"system '{r}' has the name of a reference: MTME treats it as that "
                         "human translation")
    if not ref_ids:
        notes.append("the corpus has no references: MTME needs at least one to read the folder")
    return ref_ids


def _put_outputs(w: _Files, systems: Sequence[str], text_by: Mapping[str, Mapping[str, str]],
                 items: list[str], lp: str, notes: list[str]) -> None:
    """``system-outputs/LP/SYS.txt``; a missing output is MTME's "no translation" line."""
    n_missing_out = 0
    for s in systems:
        _check_name(s, "system name")
        m = text_by[s]
        lines = []
        for i in items:
            if i in m:
                lines.append(w.clean(m[i], f"output of system '{s}' for item '{i}'"))
            else:
                lines.append(NO_TRANSLATION)
                n_missing_out += 1
        w.put(f"system-outputs/{lp}/{s}.txt", lines)
    if n_missing_out:
        notes.append(f"{n_missing_out} missing output(s) written as '{NO_TRANSLATION}'")


def _score_lines(system: str, items: Sequence[str], pos: Mapping[str, int], n: int,
                 scores: np.ndarray) -> tuple[list[str], np.ndarray]:
    """One system's block of a seg-level score file (``None`` where there is no score)."""
    vals = np.full(n, np.nan)
    vals[[pos[i] for i in items]] = scores
    return [f"{system}\t{_fmt(v)}" for v in vals], vals


def _put_human_scores(w: _Files, corpus: Corpus, human_criterion: str | Sequence[str] | None,
                      items: list[str], lp: str, notes: list[str]) -> None:
    """``human-scores/LP.C.{seg,sys}.score``: mean over raters; sys = mean of seg scores."""
    rated = corpus.criteria
    crits = rated if human_criterion is None else (
        [human_criterion] if isinstance(human_criterion, str) else list(human_criterion))
    for c in crits:
        if c not in rated:
            raise InputError(f"criterion '{c}' has no ratings in the corpus (rated: "
                             f"{', '.join(rated) or 'none'})")
        _check_name(c, "criterion name")
    if not crits:
        return
    pos = {it: k for k, it in enumerate(items)}
    hs = corpus.human_scores(criteria=crits)
    if (hs["n_raters"] > 1).any():
        notes.append("human segment scores are the mean over raters")
    for c in crits:
        sub = hs[hs["criterion"] == c]
        sign = 1.0 if corpus.info.criterion(c).higher_is_better else -1.0
        if sign < 0:
            notes.append(f"criterion '{c}' is lower-is-better: written negated (MTME: "
                         "higher is better)")
        seg_lines, sys_lines = [], []
        for s, g in sub.groupby("system", sort=False):
            lines, vals = _score_lines(str(s), list(g["item"]), pos, len(items),
                                       sign * g["score"].to_numpy(float))
            seg_lines += lines
            sys_lines.append(f"{s}\t{_fmt(float(np.nanmean(vals)))}")
        w.put(f"human-scores/{lp}.{c}.seg.score", seg_lines)
        w.put(f"human-scores/{lp}.{c}.sys.score", sys_lines)
    notes.append("human system scores = mean of the system's segment scores")


def _tidy_for_writing(scores: pd.DataFrame) -> pd.DataFrame:
    """:func:`nlgeval.scores.tidy_scores` of the caller's scores, missing values kept."""
    from nlgeval.scores import tidy_scores

    pre = scores.copy() if isinstance(scores, pd.DataFrame) else scores
    if isinstance(pre, pd.DataFrame):
        # missing values as empty cells: tidy_scores reads those as missing whatever the
        # pandas version (pandas 3 keeps NaN as NaN in astype(str))
        for c in pre.columns:
            if c not in ("system", "item", "metric") and pre[c].isna().any():
                pre[c] = pre[c].astype(object).where(pre[c].notna(), "")
    return tidy_scores(pre)


def _metric_reference(reference: str | None, ref_ids: list[str], rename: Mapping[str, str]
                      ) -> str:
    """``REF`` of ``METRIC-REF``: given (ref_ids may be the corpus's names), else the default."""
    if reference is None:
        reference = ref_ids[0] if len(ref_ids) == 1 else ("all" if ref_ids else "src")
    elif reference not in ("all", "src"):  # ref_ids may be given by their corpus names
        reference = ".".join(rename.get(r, r) for r in reference.split("."))
    if not _refs_used(reference, ref_ids) <= set(ref_ids):
        raise InputError(f"reference {reference!r} is not a ref_id of the corpus, names "
                         "joined by '.', 'src' or 'all' (ref_ids: "
                         f"{', '.join(ref_ids) or 'none'})")
    return reference


def _put_metric_scores(w: _Files, tidy: pd.DataFrame, reference: str, ref_ids: list[str],
                       systems: Sequence[str], items: list[str], lp: str, lower: set[str],
                       notes: list[str]) -> None:
    """``metric-scores/LP/METRIC-REF.{seg,sys}.score`` (lower-is-better metrics negated)."""
    pos = {it: k for k, it in enumerate(items)}
    unknown_sys = sorted(set(tidy["system"]) - set(systems))
    if unknown_sys:
        raise InputError(f"scores name system(s) not in the corpus: "
                         f"{', '.join(unknown_sys[:5])}")
    unknown_items = sorted(set(tidy.loc[tidy["item"] != "", "item"]) - set(pos))
    if unknown_items:
        raise InputError(f"scores name item(s) not in the corpus: "
                         f"{', '.join(unknown_items[:5])}")
    n_none = 0
    written_names: dict[str, str] = {}
    for met, g in tidy.groupby("metric", sort=False):
        met = str(met)
        _check_name(met, "metric name")
        tail = met.rsplit("-", 1)
        has_ref = len(tail) == 2 and tail[0] and (
            tail[1] in ("src", "all") or set(tail[1].split(".")) <= set(ref_ids))
        full = met if has_ref else f"{met}-{reference}"
        if full in written_names:
            raise InputError(f"metrics '{written_names[full]}' and '{met}' would both be "
                             f"written as '{full}'; rename one of them")
        written_names[full] = met
        sign = -1.0 if met in lower else 1.0
        gs = g[g["item"] != ""]
        if len(gs):
            lines = []
            for s in [s for s in systems if (gs["system"] == s).any()]:
                h = gs[gs["system"] == s]
                block, vals = _score_lines(s, list(h["item"]), pos, len(items),
                                           sign * h["score"].to_numpy(float))
                n_none += int(np.isnan(vals).sum())
                lines += block
            w.put(f"metric-scores/{lp}/{full}.seg.score", lines)
        gy = g[g["item"] == ""]
        if len(gy):
            w.put(f"metric-scores/{lp}/{full}.sys.score",
                  [f"{s}\t{_fmt(sign * float(v))}" for s, v in
                   zip(gy["system"], gy["score"], strict=True)])
        if full != met:
            notes.append(f"metric '{met}' written as '{full}' (REF = the reference(s) "
                         "it used)")
    if lower & set(tidy["metric"]):
        notes.append(f"lower-is-better metric(s) {', '.join(sorted(lower))} written "
                     "negated (MTME: higher is better)")
    if n_none:
        notes.append(f"{n_none} missing metric score(s) written as None: MTME's reader "
                     "refuses None in metric files, ours reads it as missing")


def _write_files(folder: Path, lp: str, files: Mapping[str, str], overwrite: bool) -> None:
    """Write everything (checked above); with ``overwrite``, remove stale files of ``lp``."""
    existing = [rel for rel in files if (folder / rel).exists()]
    if existing and not overwrite:
        raise InputError(f"the folder already has {lp} files ({existing[0]} ...); pass "
                         "overwrite=True to replace them", file=folder)
    if overwrite:
        stale = [*(folder / "system-outputs" / lp).glob("*.txt"),
                 *(folder / "metric-scores" / lp).glob("*.score"),
                 *(folder / "human-scores").glob(f"{lp}.*.score"),
                 *(folder / "references").glob(f"{lp}.*.txt"),
                 *(folder / ITEM_IDS_DIR).glob(f"{lp}.txt")]
        for p in stale:
            if str(p.relative_to(folder)) not in files:
                p.unlink()
    for rel, text in files.items():
        p = folder / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8", newline="\n")


def write_mtme(
    corpus: Corpus, path: str | Path, lp: str, *, scores: pd.DataFrame | None = None,
    human_criterion: str | Sequence[str] | None = None, reference: str | None = None,
    sources: pd.DataFrame | Mapping[str, str] | None = None, documents: pd.DataFrame | None = None,
    reference_names: Mapping[str, str] | None = None, lower_is_better: Collection[str] = (),
    item_order: Sequence[str] | None = None, overwrite: bool = False,
) -> MTMEWritten:
    """Write ``corpus`` (and metric ``scores``) as language pair ``lp`` of an MTME test set.

    Parameters
    ----------
    corpus:
        The corpus. Each ``ref_id`` becomes ``references/LP.NAME.txt`` (``NAME`` = the ref_id, or
        ``reference_names[ref_id]``; a segment without that reference gets MTME's ``[No translation
        supplied]`` line); each system ``system-outputs/LP/SYS.txt`` (a missing output likewise).
    path, lp:
        The test-set folder to write into (created if needed); the language pair, e.g. ``en-de``.
    scores:
        Tidy metric scores (:mod:`nlgeval.scores`: long ``system, item, metric, score`` or wide),
        ``item`` empty for system-level scores. Segment-level scores go to
        ``metric-scores/LP/METRIC-REF.seg.score``, a block per system that has scores (a missing
        score as ``None``, which MTME's own reader refuses in metric files: a note says so),
        system-level ones to ``.sys.score``.
    human_criterion:
        Criterion name(s) to write as ``human-scores/LP.NAME.{seg,sys}.score``; default every rated
        criterion, ``()`` none. The segment score is the mean over raters; the system score the mean
        of the system's segment scores.
    reference:
        The reference(s) the metric scores were computed with, i.e. ``REF`` in ``METRIC-REF``: a
        reference name, several joined by ``.``, ``src`` or ``all``. Default: the single reference,
        or ``all`` when the corpus has several (nlgeval's metrics use every reference). A metric
        whose name already ends in ``-REF`` is written as is.
    sources, documents:
        Source segments (``item, text`` frame or ``{item: text}``; default ``outputs``'s ``source``,
        else ``input``, else the item id, with a note); ``item, doc, domain`` frame (default the
        ``doc``/``domain`` columns of ``outputs``, else one document ``doc`` in domain ``default``).
    reference_names:
        MTME names for ref_ids, e.g. ``{"A": "refA", "B": "refB"}`` (names contain no ``-`` or
        ``.``; keys that are not ref_ids of the corpus are ignored).
    lower_is_better:
        Metric names to negate (MTME's convention: higher is better). Criteria whose
        :class:`~nlgeval.corpus.Criterion` says lower is better are negated too.
    item_order:
        Segment order; default the corpus's item order (first appearance in ``outputs``), regrouped
        stably so that documents are contiguous.
    overwrite:
        Replace the files of ``lp`` if the folder already has them (otherwise an error).

    Returns
    -------
    MTMEWritten

    Examples
    --------
    >>> import tempfile
    >>> from nlgeval.corpus import write_toy_folder
    >>> tmp = tempfile.TemporaryDirectory()
    >>> folder = write_toy_folder(tmp.name)  # outputs, references, ratings, corpus.json
    >>> import pandas as pd
    >>> from nlgeval.corpora import load_corpus
    >>> scores = pd.DataFrame({"system": ["A", "B", "A", "B"], "item": ["1", "1", "2", "2"],
    ...                        "metric": "len", "score": [3, 3, 2, 2]})
    >>> written = write_mtme(load_corpus(folder), folder / "mtme/toy", "en-de", scores=scores)
    >>> [f for f in written.files if "scores" in f]
    ['human-scores/en-de.fluency.seg.score', 'human-scores/en-de.fluency.sys.score',
     'metric-scores/en-de/len-r1.seg.score']
    >>> (folder / "mtme" / "toy" / "metric-scores/en-de/len-r1.seg.score").read_text().split()
    ['A', '3.0', 'A', '2.0', 'B', '3.0', 'B', '2.0']
    >>> tmp.cleanup()
    """
    lp = _language_pair(lp)
    notes: list[str] = []
    w, items, ref_ids = _put_texts(corpus, lp, sources, documents, reference_names, item_order,
                                   notes)
    _put_human_scores(w, corpus, human_criterion, items, lp, notes)
    if scores is not None:
        _put_metric_scores(w, _tidy_for_writing(scores),
                           _metric_reference(reference, ref_ids, dict(reference_names or {})),
                           ref_ids, corpus.systems, items, lp, set(lower_is_better), notes)
    return _finish(w, Path(path).expanduser(), lp, overwrite, notes)


def _language_pair(lp: str) -> str:
    """``lp`` stripped; it must be usable in file names (no ``.``)."""
    lp = str(lp).strip()
    _check_name(lp, "language pair", extra=".")
    return lp


def _put_texts(corpus: Corpus, lp: str, sources: pd.DataFrame | Mapping[str, str] | None,
               documents: pd.DataFrame | None, reference_names: Mapping[str, str] | None,
               item_order: Sequence[str] | None, notes: list[str]
               ) -> tuple[_Files, list[str], list[str]]:
    """The text files (sources, documents, references, outputs): the files, the segment order
    and the MTME names of the references written."""
    out = corpus.outputs
    items = _segment_order(corpus, item_order)
    docs = _documents_for(documents, out, items, notes)
    items = _regroup_documents(items, docs, notes)
    w = _Files()
    _put_sources(w, sources, out, items, docs, lp, notes)
    rename = dict(reference_names or {})
    text_by = {s: dict(zip(g["item"], g["text"], strict=True))
               for s, g in out.groupby("system", sort=False)}
    ref_ids = _put_references(w, corpus, items, lp, rename, text_by, notes)
    _put_outputs(w, corpus.systems, text_by, items, lp, notes)
    return w, items, ref_ids


def _finish(w: _Files, folder: Path, lp: str, overwrite: bool, notes: list[str]) -> MTMEWritten:
    """Note the stripped trailing spaces, write the files, say what was written."""
    if w.n_trailing:
        notes.append(f"{w.n_trailing} text(s) had trailing whitespace, removed (MTME strips it "
                     "when reading)")
    _write_files(folder, lp, w.files, overwrite)
    return MTMEWritten(path=folder, lp=lp, files=tuple(w.files), notes=tuple(notes))
