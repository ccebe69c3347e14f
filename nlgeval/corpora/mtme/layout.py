"""The MTME layout's files and names: constants, text lines, score files, name rules.

Shared by :func:`nlgeval.corpora.mtme.read_mtme` and :func:`~nlgeval.corpora.mtme.write_mtme`;
the layout itself (Freitag et al. 2021-2023, google-research/mt-metrics-eval) is described in
:mod:`nlgeval.corpora.mtme`.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Collection, Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from nlgeval.errors import InputError
from nlgeval.io import read_text_utf8

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
    for j in np.flatnonzero(bad.to_numpy()):  # raises, or accepts what Python's float() does
        values[j] = _parse_value(str(raw.iloc[j]), path, int(j) + 1)
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
    if std is not None and std in names:
        return std, f"MTME's standard reference for {testset} {lp}"
    if len(names) == 1:
        return names[0], "the only reference"
    for cand in _PREFERRED_REFERENCES:
        if cand in names:
            return cand, "MTME's usual standard reference"
    raise InputError(f"{len(names)} references ({', '.join(names)}) and none is a known "
                     "standard reference: choose one with reference=... (--reference)")


# ------------------------------------------------------------ names and values written
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
