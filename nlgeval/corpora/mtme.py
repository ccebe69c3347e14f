"""Read and write the directory layout of MTME, WMT's metrics meta-evaluation toolkit.

MTME (google-research/mt-metrics-eval, used for Freitag et al. 2021, 2022 and 2023, "Results of
the WMT2x Metrics Shared Task") ships every WMT test set since 2019 as a folder of text files.
One folder is one *test set* (e.g. ``wmt23``); inside it, ``LP`` is a language pair such as
``en-de``:

=========================================  ====================================================
``sources/LP.txt``                          one source segment per line
``documents/LP.docs``                       ``DOMAIN DOCNAME`` per line (same lines as the
                                            source; a document is a contiguous block)
``references/LP.NAME.txt``                  one reference translation per line; ``NAME`` (e.g.
                                            ``refA``) has no ``-`` or ``.`` and is not ``all``
                                            or ``src``
``system-outputs/LP/SYS.txt``               one output per line; a reference scored as a system
                                            is copied here under its own name (``refB.txt``)
``human-scores/LP.NAME.LEVEL.score``        ``SYS SCORE`` per line (``DOMAIN SYS SCORE`` at
                                            ``domain`` level); ``NAME`` e.g. ``mqm``; ``LEVEL``
                                            ``sys``/``domain``/``doc``/``seg``; ``None`` = missing
``metric-scores/LP/METRIC-REF.LEVEL.score``  same format; ``REF`` is the reference(s) the metric
                                            used: a name (``refA``), names joined by ``.``
                                            (``refA.refB``), ``src`` (reference-free) or ``all``
=========================================  ====================================================

Fields are separated by any whitespace. A ``seg`` file holds, for each system, one line per
source segment, in segment order (the k-th line naming a system is that system's k-th segment);
a ``doc`` file likewise one line per document; a ``sys`` file one line per system. Text lines
are read as MTME reads them: universal newlines, trailing whitespace removed, and the line
``[No translation supplied]`` meaning "no output". So ``COMET-22-refA.seg.score`` is the
segment-level COMET-22 computed with reference ``refA``, and ``CometKiwi-src`` a reference-free
metric.

:func:`read_mtme` turns one (test set, language pair) into a :class:`MTMEData`: a
:class:`~nlgeval.corpus.Corpus` (outputs, the chosen reference, human segment scores as
already-aggregated ratings) plus the shipped metric scores in nlgeval's tidy long format, ready
for ``run_validation(..., scores=data.external_scores())``. Choices follow MTME's own
``data.EvalSet``/``data.GetCorrelations`` and are recorded in ``notes``:

* one reference is *the* reference (``reference=``, else MTME's standard reference for the
  test set, see :data:`STANDARD_REFERENCES`); it is not a system;
* the other human translations (system outputs named like a reference) stay systems when
  ``include_human_systems`` (MTME's ``tasks.Task`` default ``human=True``);
* only metric variants whose references are the chosen one or none (``-src``) are loaded;
  variants computed with another reference are left out (MTME does the same);
* metric names keep their MTME file names (``BLEU-refA``), so two variants never collide;
* ``None`` and ``nan`` scores are missing: NaN (metric scores) or no rating (human scores),
  counted in the notes; ``doc`` and ``domain`` level files are listed but not loaded;
* orientation: MTME has no orientation field -- its correlation code never flips a sign and
  its converter stores MQM as minus the weighted error count (``converters/score_mqm.py``), so
  every shipped score is taken as higher-is-better unless named in ``lower_is_better``.

Segments become items ``"1"`` ... ``"N"`` (1-based line numbers), unless the folder holds the
nlgeval extension file ``item-ids/LP.txt`` (one item id per line, written by :func:`write_mtme`
and ignored by MTME), which restores the original ids.

:func:`write_mtme` writes a :class:`~nlgeval.corpus.Corpus` (and optional tidy metric scores) in
the same layout, so nlgeval data can be read by MTME's ``data.EvalSet(name, lp, path=...,
info=...)``. Segment order: ``item_order`` if given, else the corpus's item order (first
appearance in ``outputs``), regrouped stably so that each document is contiguous when
documents are given.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from nlgeval.corpus import Corpus, CorpusInfo, Criterion, Source
from nlgeval.errors import InputError
from nlgeval.io import read_text_utf8
from nlgeval.results import Result

#: MTME's marker for a missing translation (``data.NO_TRANSLATION``).
NO_TRANSLATION = "[No translation supplied]"
LEVELS = ("sys", "domain", "doc", "seg")
#: Rater name of the already-aggregated human scores read from ``human-scores/``.
AGGREGATE_RATER = "aggregate"
#: nlgeval's extension: one item id per segment line (MTME ignores this folder).
ITEM_IDS_DIR = "item-ids"
SCORE_COLUMNS = ("system", "item", "metric", "score")
SYSTEM_SCORE_COLUMNS = ("system", "metric", "score")
HUMAN_SYSTEM_COLUMNS = ("system", "criterion", "score")

#: Standard reference of MTME test sets where it is not the first of ``refA``, ``ref``,
#: ``posteditA`` present (facts from MTME's ``meta_info.DATA`` at commit 68a481a).
STANDARD_REFERENCES: dict[tuple[str, str], str] = {
    ("wmt21.news", "en-de"): "refC",
    ("wmt21.news", "zh-en"): "refB",
    ("wmt21.tedtalks", "zh-en"): "refB",
    ("wmt22", "cs-en"): "refB",
    ("wmt22", "en-cs"): "refB",
    ("wmt23", "he-en"): "refB",
    ("wmt23", "en-he"): "refB",
    ("wmt24", "en-de"): "refB",
    ("wmt24pp", "en-de_DE"): "posteditB",
    ("wmt24pp", "en-is_IS"): "refA",
}
_PREFERRED_REFERENCES = ("refA", "ref", "posteditA")
_BAD_NAME = re.compile(r"[\s/\\\x00]")


# ---------------------------------------------------------------------------------- results
@dataclass(frozen=True, eq=False)
class MTMEData(Result):
    """One MTME (test set, language pair) as nlgeval data.

    ``corpus``: outputs (``system, item, text, source``), the chosen reference (``ref_id`` =
    its MTME name) and the segment-level human scores as ratings (criterion = the human score
    name, e.g. ``mqm``; rater ``"aggregate"``). ``scores``: segment-level metric scores
    ``system, item, metric, score``; ``system_scores``: system-level metric scores ``system,
    metric, score``; ``human_system_scores``: system-level human scores ``system, criterion,
    score``. ``sources``: ``item, text``; ``documents``: ``item, doc, domain`` (empty without
    a documents file).

    Examples
    --------
    >>> import pathlib, tempfile
    >>> tmp = tempfile.TemporaryDirectory()
    >>> folder = pathlib.Path(tmp.name)
    >>> _ = (folder / "outputs.csv").write_text(
    ...     "system,item,text|A,1,the cat sat|B,1,a cat sat|A,2,dogs bark|B,2,dog barks|"
    ...     .replace("|", chr(10)))
    >>> _ = (folder / "references.csv").write_text(
    ...     "item,ref_id,text|1,r1,the cat sat down|2,r1,dogs bark|".replace("|", chr(10)))
    >>> _ = (folder / "ratings.csv").write_text(
    ...     "rater,item,system,criterion,score|x,1,A,fluency,5|x,1,B,fluency,3|"
    ...     "x,2,A,fluency,4|x,2,B,fluency,2|".replace("|", chr(10)))
    >>> _ = (folder / "corpus.json").write_text(
    ...     '{"name": "toy", "criteria": [{"name": "fluency", "min": 1, "max": 5}]}')
    >>> import pandas as pd
    >>> from nlgeval.corpora import load_corpus
    >>> from nlgeval.corpora.mtme import read_mtme, write_mtme
    >>> scores = pd.DataFrame({"system": ["A", "B", "A", "B"], "item": ["1", "1", "2", "2"],
    ...                        "metric": "len", "score": [3, 3, 2, 2]})
    >>> written = write_mtme(load_corpus(folder), folder / "mtme" / "toy", "en-de", scores=scores)
    >>> data = read_mtme(folder / "mtme" / "toy", "en-de", human="fluency")
    >>> data.metrics, data.reference, data.corpus.systems
    (['len-r1'], 'r1', ['A', 'B'])
    >>> data.to_dict()["n_segments"]
    2
    >>> tmp.cleanup()
    """

    corpus: Corpus
    scores: pd.DataFrame
    system_scores: pd.DataFrame
    human_system_scores: pd.DataFrame
    higher_is_better: dict[str, bool]
    notes: list[str]
    testset: str = ""
    lp: str = ""
    reference: str | None = None
    human_systems: tuple[str, ...] = ()
    sources: pd.DataFrame = field(default_factory=pd.DataFrame, repr=False)
    documents: pd.DataFrame = field(default_factory=pd.DataFrame, repr=False)
    _located: pd.DataFrame = field(default_factory=pd.DataFrame, repr=False)

    @property
    def metrics(self) -> list[str]:
        """Metric names (segment-level first, then system-level-only), in file-name order."""
        seg = list(dict.fromkeys(self.scores["metric"]))
        return seg + [m for m in dict.fromkeys(self.system_scores["metric"]) if m not in seg]

    def external_scores(self) -> pd.DataFrame:
        """All metric scores in :mod:`nlgeval.scores`' tidy format.

        ``metric, system, item, score, _source, _row``: ``item`` is ``""`` on system-level
        rows; ``_source``/``_row`` are the MTME file and 1-based line of each value. Pass it
        to ``run_validation(..., scores=...)``.
        """
        cols = ["metric", "system", "item", "score", "_source", "_row"]
        if self._located.empty:
            return pd.DataFrame({c: pd.Series(dtype=object) for c in cols})
        return self._located[cols].reset_index(drop=True)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-serialisable summary (counts, names, notes; not the frames)."""
        return {
            "testset": self.testset,
            "lp": self.lp,
            "reference": self.reference,
            "systems": self.corpus.systems,
            "human_systems": list(self.human_systems),
            "n_segments": len(self.corpus.items),
            "human_criteria": self.corpus.criteria,
            "human_system_criteria": list(dict.fromkeys(self.human_system_scores["criterion"])),
            "segment_metrics": list(dict.fromkeys(self.scores["metric"])),
            "system_metrics": list(dict.fromkeys(self.system_scores["metric"])),
            "higher_is_better": dict(self.higher_is_better),
            "notes": list(self.notes),
        }


@dataclass(frozen=True)
class MTMEWritten(Result):
    """What :func:`write_mtme` wrote: the test-set folder, the files (relative) and notes.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> tmp = tempfile.TemporaryDirectory()
    >>> folder = pathlib.Path(tmp.name)
    >>> _ = (folder / "outputs.csv").write_text(
    ...     "system,item,text|A,1,the cat sat|B,1,a cat sat|A,2,dogs bark|B,2,dog barks|"
    ...     .replace("|", chr(10)))
    >>> _ = (folder / "references.csv").write_text(
    ...     "item,ref_id,text|1,r1,the cat sat down|2,r1,dogs bark|".replace("|", chr(10)))
    >>> _ = (folder / "ratings.csv").write_text(
    ...     "rater,item,system,criterion,score|x,1,A,fluency,5|x,1,B,fluency,3|"
    ...     "x,2,A,fluency,4|x,2,B,fluency,2|".replace("|", chr(10)))
    >>> _ = (folder / "corpus.json").write_text(
    ...     '{"name": "toy", "criteria": [{"name": "fluency", "min": 1, "max": 5}]}')
    >>> import pandas as pd
    >>> from nlgeval.corpora import load_corpus
    >>> from nlgeval.corpora.mtme import read_mtme, write_mtme
    >>> scores = pd.DataFrame({"system": ["A", "B", "A", "B"], "item": ["1", "1", "2", "2"],
    ...                        "metric": "len", "score": [3, 3, 2, 2]})
    >>> written = write_mtme(load_corpus(folder), folder / "mtme" / "toy", "en-de", scores=scores)
    >>> written.lp, written.files[:3]
    ('en-de', ('sources/en-de.txt', 'documents/en-de.docs', 'references/en-de.r1.txt'))
    >>> tmp.cleanup()
    """

    path: Path
    lp: str
    files: tuple[str, ...]
    notes: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {"path": str(self.path), "lp": self.lp, "files": list(self.files),
                "notes": list(self.notes)}


# ---------------------------------------------------------------------------------- spec
def parse_mtme_spec(spec: str | Path) -> Path | None:
    """``"mtme:PATH/wmt23"`` -> ``Path("PATH/wmt23")``; anything else -> ``None``.

    The prefix is case-insensitive and ``~`` is expanded; the folder is not checked here
    (:func:`read_mtme` does). ``"mtme:"`` with no path raises :class:`InputError`.

    Examples
    --------
    >>> str(parse_mtme_spec("mtme:data/wmt23"))
    'data/wmt23'
    >>> parse_mtme_spec("e2e") is None
    True
    """
    if not isinstance(spec, str) or not spec[:5].lower() == "mtme:":
        return None
    rest = spec[5:].strip()
    if not rest:
        raise InputError("'mtme:' needs the path of an MTME test-set folder, e.g. "
                         "mtme:~/.mt-metrics-eval/mt-metrics-eval-v2/wmt23")
    return Path(rest).expanduser()


# ---------------------------------------------------------------------------------- reading
def _lines(path: Path) -> list[str]:
    """A text file's lines as Python's text mode gives them to MTME (universal newlines)."""
    text = read_text_utf8(path).replace("\r\n", "\n").replace("\r", "\n")
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return lines


def _read_segments(path: Path, field_name: str) -> list[str | None]:
    """Segments of a text (``.txt``) or JSONL file, as MTME's ``_Read*File`` reads them."""
    if path.suffix == ".jsonl":
        out: list[str | None] = []
        for i, line in enumerate(_lines(path), start=1):
            try:
                rec = json.loads(line)
            except json.JSONDecodeError as exc:
                raise InputError(f"not valid JSON: {exc.msg}", file=path, row=i) from None
            if not isinstance(rec, dict) or field_name not in rec:
                raise InputError(f"a JSON object with a '{field_name}' field expected",
                                 file=path, row=i, column=field_name)
            val = rec[field_name]
            out.append(None if val is None else str(val))
        return out
    return [None if (s := ln.rstrip()) == NO_TRANSLATION else s for ln in _lines(path)]


def _check_length(path: Path, got: int, n: int, what: str, source: Path) -> None:
    if got == n:
        return
    if got > n:
        raise InputError(f"{what} has {got} lines but the source ({source.name}) has {n}: "
                         f"line {n + 1} is one too many", file=path, row=n + 1)
    raise InputError(f"{what} has only {got} lines but the source ({source.name}) has {n}",
                     file=path, row=max(got, 1))


def _text_file(folder: Path, stem: str) -> Path | None:
    for ext in (".txt", ".jsonl"):
        p = folder / f"{stem}{ext}"
        if p.is_file():
            return p
    return None


def _parse_value(tok: str, path: Path, row: int) -> float:
    """A score token: ``None``/``nan`` -> NaN; a finite float; anything else -> InputError."""
    if tok == "None" or tok.lower() == "nan":
        return math.nan
    try:
        val = float(tok)
    except ValueError:
        raise InputError(f"score {tok!r} is not a number (write None for a missing score)",
                         file=path, row=row, column="score") from None
    if not math.isfinite(val):
        raise InputError(f"score {tok!r} is infinite; scores must be finite numbers",
                         file=path, row=row, column="score")
    return val


def _read_score_file(path: Path, level: str, n_units: int, known: Collection[str]
                     ) -> pd.DataFrame:
    """A ``sys`` or ``seg``/``doc`` score file -> ``system, pos, score, _row``.

    ``pos`` is the 0-based segment (document) index: the number of earlier lines naming the
    same system, as MTME's ``data.ReadScoreFile`` appends per system. Checks the count per
    system (``n_units``, or 1 at ``sys`` level) and that every system is known.
    """
    # Vectorised: WMT files have tens of thousands of lines and a test set hundreds of files.
    toks = [ln.split() for ln in _lines(path)]
    n_fields = np.fromiter(map(len, toks), dtype=np.int64, count=len(toks))
    if (n_fields != 2).any():
        i = int(np.flatnonzero(n_fields != 2)[0])
        what = "an empty line" if not n_fields[i] else f"{n_fields[i]} fields"
        raise InputError(f"{what}; expected 'SYSTEM SCORE' (two fields separated by "
                         "whitespace)", file=path, row=i + 1)
    system = pd.Series([t[0] for t in toks], dtype=object)
    raw = pd.Series([t[1] for t in toks], dtype=object)
    unknown = ~system.isin(set(known))
    if unknown.any():
        i = int(np.flatnonzero(unknown.to_numpy())[0])
        raise InputError(f"unknown system '{system.iloc[i]}' (not in system-outputs/)",
                         file=path, row=i + 1, column="system")
    missing = (raw == "None") | (raw.str.lower() == "nan")
    num = pd.to_numeric(raw.where(~missing, None), errors="coerce").astype(float)
    bad = (num.isna() & ~missing) | np.isinf(num)
    values = num.to_numpy(copy=True)
    for i in np.flatnonzero(bad.to_numpy()):  # raises, or accepts what Python's float() does
        values[i] = _parse_value(str(raw.iloc[i]), path, int(i) + 1)
    df = pd.DataFrame({"system": system.to_numpy(), "score": values,
                       "_row": np.arange(1, len(toks) + 1)})
    df["pos"] = df.groupby("system", sort=False).cumcount()
    expected = 1 if level == "sys" else n_units
    unit = {"sys": "score", "seg": "segment score", "doc": "document score"}[level]
    extra = df["pos"] >= expected
    if extra.any():
        r = df[extra].iloc[0]
        raise InputError(f"system '{r['system']}' has more than {expected} {unit}(s) "
                         f"(a {level}-level file has {expected} per system)",
                         file=path, row=int(r["_row"]), column="system")
    counts = df.groupby("system", sort=False)["pos"].size()
    short = counts[counts < expected]
    if len(short):
        s = str(short.index[0])
        last = int(df.loc[df["system"] == s, "_row"].iloc[-1])
        raise InputError(f"system '{s}' has only {int(short.iloc[0])} {unit}s; a {level}-level "
                         f"file has {expected} per system (one per line of the source)",
                         file=path, row=last, column="system")
    return df


def _parse_human_name(path: Path, lp: str, ext: str) -> tuple[str, str]:
    # SRC-TGT.NAME.LEVEL.score (NAME may contain dots), as data.ParseHumanScoreFilename
    toks = path.name[len(lp) + 1:].split(".")
    if len(toks) < 3 or toks[-1] != ext or toks[-2] not in LEVELS:
        raise InputError(f"human score file name must be {lp}.NAME.LEVEL.{ext} with LEVEL one "
                         f"of {', '.join(LEVELS)}", file=path)
    return ".".join(toks[:-2]), toks[-2]


def _parse_metric_name(path: Path) -> tuple[str, str, str]:
    """``NAME-REF.LEVEL.score`` -> (full name ``NAME-REF``, ``REF``, level)."""
    parts = path.name.rsplit(".", 2)
    if len(parts) != 3 or parts[2] != "score" or parts[1] not in LEVELS:
        raise InputError("metric score file name must be NAME-REF.LEVEL.score with LEVEL one "
                         f"of {', '.join(LEVELS)}", file=path)
    full = parts[0]
    if "-" not in full or not full.rsplit("-", 1)[0]:
        raise InputError("metric score file name must be NAME-REF.LEVEL.score, where REF is "
                         "the reference(s) used, 'src' or 'all' (e.g. BLEU-refA.sys.score)",
                         file=path)
    return full, full.rsplit("-", 1)[1], parts[1]


def _refs_used(ref: str, ref_names: Collection[str]) -> set[str]:
    if ref == "all":
        return set(ref_names)
    if ref == "src":
        return set()
    return set(ref.split("."))


def _default_reference(testset: str, lp: str, names: Sequence[str]) -> tuple[str, str]:
    std = STANDARD_REFERENCES.get((testset, lp))
    if std in names:
        return std, f"MTME's standard reference for {testset} {lp}"
    if len(names) == 1:
        return names[0], "the only reference"
    for cand in _PREFERRED_REFERENCES:
        if cand in names:
            return cand, "MTME's usual standard reference"
    raise InputError(f"{len(names)} references ({', '.join(names)}) and none is a known "
                     "standard reference: choose one with reference=... (--reference)")


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

    Examples
    --------
    >>> import pathlib, tempfile
    >>> tmp = tempfile.TemporaryDirectory()
    >>> folder = pathlib.Path(tmp.name)
    >>> _ = (folder / "outputs.csv").write_text(
    ...     "system,item,text|A,1,the cat sat|B,1,a cat sat|A,2,dogs bark|B,2,dog barks|"
    ...     .replace("|", chr(10)))
    >>> _ = (folder / "references.csv").write_text(
    ...     "item,ref_id,text|1,r1,the cat sat down|2,r1,dogs bark|".replace("|", chr(10)))
    >>> _ = (folder / "ratings.csv").write_text(
    ...     "rater,item,system,criterion,score|x,1,A,fluency,5|x,1,B,fluency,3|"
    ...     "x,2,A,fluency,4|x,2,B,fluency,2|".replace("|", chr(10)))
    >>> _ = (folder / "corpus.json").write_text(
    ...     '{"name": "toy", "criteria": [{"name": "fluency", "min": 1, "max": 5}]}')
    >>> import pandas as pd
    >>> from nlgeval.corpora import load_corpus
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
    folder = Path(path).expanduser()
    if not folder.is_dir():
        raise InputError("MTME test-set folder not found (expected a folder with sources/, "
                         "references/, system-outputs/ ...)", file=folder)
    lp = str(lp).strip()
    if not lp or _BAD_NAME.search(lp):
        raise InputError(f"invalid language pair {lp!r} (e.g. en-de)")
    testset = folder.name
    notes: list[str] = []
    src_path, src = _read_source(folder, lp)
    n = len(src)
    items = _read_item_ids(folder, lp, n, src_path, notes)
    documents = _read_documents(folder, lp, items, src_path, notes)
    ref_files = _find_references(folder, lp)
    reference, ref_text = _choose_reference(ref_files, reference, testset, lp, n, src_path,
                                            notes)
    outputs_by_sys = _read_system_outputs(folder, lp, n, src_path, notes)
    systems, kept_humans = _choose_systems(set(outputs_by_sys), list(ref_files), reference,
                                           exclude_systems, include_human_systems, notes,
                                           folder / "system-outputs" / lp)
    all_systems = set(outputs_by_sys)
    outputs, n_missing_out = _outputs_frame(systems, items, outputs_by_sys, src, notes)
    references, n_no_ref = _references_frame(items, ref_text, reference, notes)
    wanted = [human] if isinstance(human, str) else list(human or [])
    ratings_parts, human_sys_parts, criteria = _read_human_scores(
        folder, lp, wanted, n, items, systems, all_systems, notes)
    located = (_read_metric_scores(folder, lp, n, items, systems, all_systems, list(ref_files),
                                   reference, notes) if metric_scores else [])
    loc = _drop_missing_outputs(_concat(located, LOCATED_COLUMNS), outputs, n_missing_out,
                                "metric", notes)
    scores = loc.loc[loc["_level"] == "seg", list(SCORE_COLUMNS)].reset_index(
        drop=True).astype({"score": float})
    system_scores = loc.loc[loc["_level"] == "sys", list(SYSTEM_SCORE_COLUMNS)].reset_index(
        drop=True).astype({"score": float})
    human_system_scores = _concat(human_sys_parts, HUMAN_SYSTEM_COLUMNS)
    higher_is_better = _orientation(list(dict.fromkeys(loc["metric"])), lower_is_better, notes)
    ratings = (_drop_missing_outputs(pd.concat(ratings_parts, ignore_index=True), outputs,
                                     n_missing_out, "human", notes) if ratings_parts else None)
    rel = [str(src_path.relative_to(folder)), str(ref_files[reference].relative_to(folder)),
           f"system-outputs/{lp}/"]
    info = CorpusInfo(
        name=f"mtme:{testset}/{lp}",
        description=f"MTME test set {testset}, language pair {lp}",
        criteria=tuple(criteria),
        sources=(Source(paths=tuple(rel)),),
        task="machine translation",
    )
    corpus = Corpus.build(info, outputs, references, ratings, empty_outputs="keep",
                          require_references=n_no_ref == 0, notes=notes)
    return MTMEData(
        corpus=corpus, scores=scores, system_scores=system_scores,
        human_system_scores=human_system_scores, higher_is_better=higher_is_better,
        notes=list(corpus.notes), testset=testset, lp=lp, reference=reference,
        human_systems=kept_humans,
        sources=pd.DataFrame({"item": items, "text": ["" if s is None else s for s in src]}),
        documents=documents, _located=loc.drop(columns="_level").reset_index(drop=True),
    )


# ---------------------------------------------------------------------------------- reading stages
# read_mtme's stages, in the order it runs them; each appends what it decided to ``notes``.
LOCATED_COLUMNS = ("metric", "system", "item", "score", "_source", "_row", "_level")


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


def _find_human_files(hum_dir: Path, lp: str, wanted: list[str], notes: list[str]
                      ) -> dict[str, dict[str, Path]]:
    """``{name: {level: file}}`` of the human-score files; ``wanted`` is resolved in place
    (a name that differs only in case is accepted with a note)."""
    found: dict[str, dict[str, Path]] = {}
    if hum_dir.is_dir():
        for p in sorted(hum_dir.glob(f"{lp}.*.score")):
            name, level = _parse_human_name(p, lp, "score")
            found.setdefault(name, {})[level] = p
    for k, w in enumerate(wanted):
        folded = [f for f in found if f.lower() == w.lower()]
        if w not in found and len(folded) == 1:
            notes.append(f"human scores '{w}' not found; using '{folded[0]}' (same name "
                         "but for case)")
            wanted[k] = w = folded[0]
        if w not in found:
            have = ", ".join(f"{k} ({'/'.join(sorted(v))})" for k, v in found.items())
            raise InputError(f"no human scores '{w}' for {lp} (available: "
                             f"{have or 'none'}; pass human=None for none)",
                             file=hum_dir / f"{lp}.{w}.seg.score")
    return found


def _human_seg_scores(path: Path, w: str, n: int, items: list[str], systems: list[str],
                      all_systems: set[str], notes: list[str]
                      ) -> tuple[pd.DataFrame | None, Criterion | None]:
    """One criterion's segment-level human scores as ratings, and its criterion."""
    df = _read_score_file(path, "seg", n, all_systems)
    gone = sorted(set(df["system"]) - set(systems))
    if gone:
        notes.append(f"human '{w}' scores of excluded system(s) {', '.join(gone)} "
                     "left out")
    df = df[df["system"].isin(systems)]
    miss = int(df["score"].isna().sum())
    df = df[df["score"].notna()]
    notes.append(f"human '{w}' (seg): {len(df)} scores"
                 + (f", {miss} None (missing) left out" if miss else ""))
    if not len(df):
        return None, None
    ratings = pd.DataFrame({
        "rater": AGGREGATE_RATER,
        "item": np.asarray(items, dtype=object)[df["pos"].to_numpy()],
        "system": df["system"].to_numpy(), "criterion": w,
        "score": df["score"].to_numpy()})
    lo, hi = float(df["score"].min()), float(df["score"].max())
    return ratings, Criterion(
        w, lo, hi, "interval",
        f"MTME human scores '{w}' (already aggregated; scale = observed range; "
        "higher is better, MTME's convention)", True)


def _read_human_scores(folder: Path, lp: str, wanted: list[str], n: int, items: list[str],
                       systems: list[str], all_systems: set[str], notes: list[str]
                       ) -> tuple[list[pd.DataFrame], list[pd.DataFrame], list[Criterion]]:
    """Ratings (seg files), system-level human scores (sys files) and criteria."""
    ratings_parts: list[pd.DataFrame] = []
    human_sys_parts: list[pd.DataFrame] = []
    criteria: list[Criterion] = []
    if not wanted:
        return ratings_parts, human_sys_parts, criteria
    hum_dir = folder / "human-scores"
    found = _find_human_files(hum_dir, lp, wanted, notes)
    for w in wanted:
        files = found[w]
        skipped = [lvl for lvl in ("doc", "domain") if lvl in files]
        if skipped:
            notes.append(f"human scores '{w}' at level(s) {', '.join(skipped)} not loaded "
                         "(nlgeval uses seg and sys)")
        if "seg" in files:
            ratings, crit = _human_seg_scores(files["seg"], w, n, items, systems, all_systems,
                                              notes)
            if ratings is not None and crit is not None:
                ratings_parts.append(ratings)
                criteria.append(crit)
        else:
            notes.append(f"human scores '{w}' have no seg-level file: no per-output "
                         "ratings")
        if "sys" in files:
            df = _read_score_file(files["sys"], "sys", 1, all_systems)
            df = df[df["system"].isin(systems)]
            human_sys_parts.append(pd.DataFrame({
                "system": df["system"].to_numpy(), "criterion": w,
                "score": df["score"].to_numpy()}))
    other = sorted(set(found) - set(wanted))
    if other:
        notes.append(f"other human scores not loaded: {', '.join(other)}")
    ratings_files = sorted(p.name for p in hum_dir.glob(f"{lp}.*.rating")) if (
        hum_dir.is_dir()) else []
    if ratings_files:
        notes.append(f"{len(ratings_files)} MQM rating file(s) (*.rating: error spans) not "
                     "read")
    return ratings_parts, human_sys_parts, criteria


def _read_metric_scores(folder: Path, lp: str, n: int, items: list[str], systems: list[str],
                        all_systems: set[str], ref_names: list[str], reference: str,
                        notes: list[str]) -> list[pd.DataFrame]:
    """Seg- and sys-level metric scores computed with ``reference`` only, with file and line."""
    met_dir = folder / "metric-scores" / lp
    if not met_dir.is_dir():
        notes.append(f"no metric-scores/{lp}/ folder: no shipped metric scores")
        return []
    located: list[pd.DataFrame] = []
    other_ref, other_level, n_none = [], [], 0
    dropped_sys: set[str] = set()
    incomplete: dict[str, list[str]] = {}
    for p in sorted(met_dir.glob("*.score")):
        full, ref, level = _parse_metric_name(p)
        used = _refs_used(ref, ref_names)
        if not used <= {reference}:
            other_ref.append(full)
            continue
        if level in ("doc", "domain"):
            other_level.append(f"{full}.{level}")
            continue
        df = _read_score_file(p, level, n, all_systems)
        dropped_sys.update(set(df["system"]) - set(systems))
        df = df[df["system"].isin(systems)]
        n_none += int(df["score"].isna().sum())
        lacking = sorted(set(systems) - set(df["system"]) - used)
        if lacking:
            incomplete[f"{full}.{level}"] = lacking
        located.append(pd.DataFrame({
            "metric": full, "system": df["system"].to_numpy(),
            "item": (np.asarray(items, dtype=object)[df["pos"].to_numpy()] if level == "seg"
                     else ""),
            "score": df["score"].to_numpy(), "_source": str(p),
            "_row": df["_row"].to_numpy(), "_level": level}))
    if other_ref:
        notes.append(f"{len(other_ref)} metric file(s) computed with another reference "
                     f"than '{reference}' not loaded (MTME excludes them too): "
                     f"{', '.join(other_ref[:4])}{' ...' if len(other_ref) > 4 else ''}")
    if other_level:
        notes.append(f"{len(other_level)} doc/domain-level metric file(s) not loaded")
    if dropped_sys:
        notes.append("metric scores of excluded system(s) "
                     f"{', '.join(sorted(dropped_sys))} left out")
    if n_none:
        notes.append(f"{n_none} metric score(s) None/nan: kept as missing (NaN)")
    for k, v in incomplete.items():
        notes.append(f"metric file {k} has no scores for {', '.join(v)} (MTME would "
                     "pad them with 0; here they are missing)")
    return located


def _drop_missing_outputs(df: pd.DataFrame, outputs: pd.DataFrame, n_missing_out: int,
                          what: str, notes: list[str]) -> pd.DataFrame:
    """Segment-level rows of outputs marked "no translation" left out (with a note)."""
    if not n_missing_out or not len(df):
        return df
    have = pd.MultiIndex.from_frame(outputs[["system", "item"]])
    seg_rows = (df["_level"] == "seg").to_numpy() if "_level" in df else np.ones(len(df), bool)
    ok = np.ones(len(df), dtype=bool)
    ok[seg_rows] = pd.MultiIndex.from_frame(df.loc[seg_rows, ["system", "item"]]).isin(have)
    if ok.all():
        return df
    notes.append(f"{int((~ok).sum())} {what} score(s) of outputs marked "
                 f"'{NO_TRANSLATION}' left out")
    return df[ok].reset_index(drop=True)


def _orientation(metric_names: list[str], lower_is_better: Collection[str], notes: list[str]
                 ) -> dict[str, bool]:
    """``{metric: higher_is_better}``: MTME's scores are higher-is-better unless named."""
    lower = set(lower_is_better)
    unknown_lower = sorted(lower - set(metric_names))
    if unknown_lower:
        raise InputError(f"lower_is_better names metric(s) not loaded: {', '.join(unknown_lower)}"
                         f" (loaded: {', '.join(metric_names[:8]) or 'none'})")
    if metric_names:
        notes.append("orientation: MTME records none (its correlations never flip a sign; MQM "
                     "is stored negated), so all metric scores are taken as higher-is-better"
                     + (f" except {', '.join(sorted(lower))}" if lower else ""))
    return {m: m not in lower for m in metric_names}

# ---------------------------------------------------------------------------------- writing
def _check_name(name: str, what: str, *, extra: str = "") -> None:
    if not name or _BAD_NAME.search(name) or name.startswith(".") or any(
            c in name for c in extra):
        bad = " or ".join(repr(c) for c in extra)
        raise InputError(f"{what} {name!r} cannot be written in the MTME layout (names are "
                         "file names and whitespace-separated fields: no spaces, '/', '\\'"
                         + (f", {bad}" if extra else "") + ", no leading '.')")


def _line(text: str, what: str) -> str:
    if "\n" in text or "\r" in text:
        raise InputError(f"{what} contains a line break; MTME files hold one segment per line")
    return text


def _fmt(x: float) -> str:
    """Shortest text that reads back as the same float; NaN -> MTME's ``None``."""
    return "None" if not math.isfinite(x) else repr(float(x))


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


def write_mtme(
    corpus: Corpus,
    path: str | Path,
    lp: str,
    *,
    scores: pd.DataFrame | None = None,
    human_criterion: str | Sequence[str] | None = None,
    reference: str | None = None,
    sources: pd.DataFrame | Mapping[str, str] | None = None,
    documents: pd.DataFrame | None = None,
    reference_names: Mapping[str, str] | None = None,
    lower_is_better: Collection[str] = (),
    item_order: Sequence[str] | None = None,
    overwrite: bool = False,
) -> MTMEWritten:
    """Write ``corpus`` (and metric ``scores``) as language pair ``lp`` of an MTME test set.

    Parameters
    ----------
    corpus:
        The corpus. Each ``ref_id`` becomes ``references/LP.NAME.txt`` (``NAME`` = the ref_id,
        or ``reference_names[ref_id]``; a segment without that reference gets MTME's
        ``[No translation supplied]`` line); each system ``system-outputs/LP/SYS.txt`` (a
        missing output likewise).
    path:
        The test-set folder to write into (created if needed).
    scores:
        Tidy metric scores (:mod:`nlgeval.scores`: long ``system, item, metric, score`` or
        wide), ``item`` empty for system-level scores. Segment-level scores go to
        ``metric-scores/LP/METRIC-REF.seg.score``, a block per system that has scores (a
        missing score as ``None``, which MTME's own reader refuses in metric files: a note
        says so), system-level ones to ``.sys.score``.
    human_criterion:
        Criterion name(s) to write as ``human-scores/LP.NAME.{seg,sys}.score``; default every
        rated criterion, ``()`` none. The segment score is the mean over raters; the system
        score the mean of the system's segment scores.
    reference:
        The reference(s) the metric scores were computed with, i.e. ``REF`` in
        ``METRIC-REF``: a reference name, several joined by ``.``, ``src`` or ``all``. Default:
        the single reference, or ``all`` when the corpus has several (nlgeval's metrics use
        every reference). A metric whose name already ends in ``-REF`` is written as is.
    sources:
        Source segments (``item, text`` frame or ``{item: text}``); default the ``source``
        column of ``outputs``, else ``input``, else the item id (with a note).
    documents:
        ``item, doc, domain`` frame; default the ``doc``/``domain`` columns of ``outputs``,
        else one document ``doc`` in domain ``default``.
    reference_names:
        MTME names for ref_ids, e.g. ``{"A": "refA", "B": "refB"}`` (names contain no ``-`` or
        ``.``; keys that are not ref_ids of the corpus are ignored).
    lower_is_better:
        Metric names to negate (MTME's convention: higher is better). Criteria whose
        :class:`~nlgeval.corpus.Criterion` says lower is better are negated too.
    item_order:
        Segment order; default the corpus's item order (first appearance in ``outputs``),
        regrouped stably so that documents are contiguous.
    overwrite:
        Replace the files of ``lp`` if the folder already has them (otherwise an error).

    Examples
    --------
    >>> import pathlib, tempfile
    >>> tmp = tempfile.TemporaryDirectory()
    >>> folder = pathlib.Path(tmp.name)
    >>> _ = (folder / "outputs.csv").write_text(
    ...     "system,item,text|A,1,the cat sat|B,1,a cat sat|A,2,dogs bark|B,2,dog barks|"
    ...     .replace("|", chr(10)))
    >>> _ = (folder / "references.csv").write_text(
    ...     "item,ref_id,text|1,r1,the cat sat down|2,r1,dogs bark|".replace("|", chr(10)))
    >>> _ = (folder / "ratings.csv").write_text(
    ...     "rater,item,system,criterion,score|x,1,A,fluency,5|x,1,B,fluency,3|"
    ...     "x,2,A,fluency,4|x,2,B,fluency,2|".replace("|", chr(10)))
    >>> _ = (folder / "corpus.json").write_text(
    ...     '{"name": "toy", "criteria": [{"name": "fluency", "min": 1, "max": 5}]}')
    >>> import pandas as pd
    >>> from nlgeval.corpora import load_corpus
    >>> scores = pd.DataFrame({"system": ["A", "B", "A", "B"], "item": ["1", "1", "2", "2"],
    ...                        "metric": "len", "score": [3, 3, 2, 2]})
    >>> written = write_mtme(load_corpus(folder), folder / "mtme" / "toy", "en-de",
    ...                      scores=scores)
    >>> [f for f in written.files if "scores" in f]
    ['human-scores/en-de.fluency.seg.score', 'human-scores/en-de.fluency.sys.score',
     'metric-scores/en-de/len-r1.seg.score']
    >>> (folder / "mtme" / "toy" / "metric-scores/en-de/len-r1.seg.score").read_text().split()
    ['A', '3.0', 'A', '2.0', 'B', '3.0', 'B', '2.0']
    >>> tmp.cleanup()
    """
    folder = Path(path).expanduser()
    lp = str(lp).strip()
    _check_name(lp, "language pair", extra=".")
    notes: list[str] = []
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
    _put_human_scores(w, corpus, human_criterion, items, lp, notes)
    if scores is not None:
        tidy = _tidy_for_writing(scores)
        reference = _metric_reference(reference, ref_ids, rename)
        _put_metric_scores(w, tidy, reference, ref_ids, corpus.systems, items, lp,
                           set(lower_is_better), notes)
    if w.n_trailing:
        notes.append(f"{w.n_trailing} text(s) had trailing whitespace, removed (MTME strips it "
                     "when reading)")
    _write_files(folder, lp, w.files, overwrite)
    return MTMEWritten(path=folder, lp=lp, files=tuple(w.files), notes=tuple(notes))


# ---------------------------------------------------------------------------------- writing stages
# write_mtme's stages: each checks its input and adds files to a _Files; nothing is written
# to disk until every stage has passed, so a bad input never leaves a half-written folder.
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
