"""Reading tidy tables (CSV, TSV, JSONL) with errors that point at the file, row and column.

pandas' own readers raise deep tracebacks on bad bytes or ragged rows and silently coerce bad
numbers to NaN; these helpers check first and raise :class:`~nlgeval.errors.InputError`
instead. Every frame returned carries a ``_row`` column: the 1-based row in the file (header =
row 1 for CSV/TSV; first record = row 1 for JSONL and Parquet, which have no header row), which
validators use in their messages and drop afterwards. An error about a whole column (a missing
one) names row 1 of a CSV/TSV file -- its header -- and no row of a JSONL or Parquet file
(:func:`header_row`).

Awkward files are recognised rather than misread: gzip / bz2 / xz-compressed files (by their
magic bytes, whatever the name) are decompressed; a UTF-16 file with a byte-order mark (Excel's
"Unicode text") is decoded; a ``.csv`` whose header holds no comma but tabs or semicolons (a
spreadsheet export in a comma-decimal locale) is read with that delimiter (and a ``.tsv`` whose
header holds no tab but commas or semicolons likewise); a zip archive or an Excel workbook is
refused with a message saying what to do; a decimal comma in a number is named as such.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable, Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from nlgeval.errors import InputError
from nlgeval.io.text import ROW as ROW
from nlgeval.io.text import read_bytes_decompressed as read_bytes_decompressed
from nlgeval.io.text import read_text_utf8 as read_text_utf8

_DECIMAL_COMMA = re.compile(r"^[+-]?\d+,\d+$")


def _sniff_format(path: Path) -> str:
    suffixes = [s.lower() for s in path.suffixes]
    if suffixes and suffixes[-1] in (".gz", ".bz2", ".xz"):
        suffixes = suffixes[:-1]
    if ".jsonl" in suffixes or ".ndjson" in suffixes:
        return "jsonl"
    if ".tsv" in suffixes or ".tab" in suffixes:
        return "tsv"
    if ".parquet" in suffixes:
        return "parquet"
    return "csv"


def read_table(
    path: str | Path,
    required: Sequence[str] = (),
    *,
    optional: Sequence[str] = (),
    string_columns: Iterable[str] = (),
) -> pd.DataFrame:
    """Read a CSV, TSV, JSONL or Parquet file into a DataFrame of strings plus a ``_row`` column.

    All cells are read as strings (``""`` for an empty cell) so that nothing is silently
    converted; use :func:`to_numeric` for numeric columns. Columns are matched exactly after
    stripping surrounding whitespace. A missing required column raises an error that suggests
    the present column spelled the same in another case (``N`` for ``n``), else the closest
    present column name (for misspellings). Missing ``optional`` columns are added empty.

    Examples:
        >>> import tempfile
        >>> with tempfile.TemporaryDirectory() as tmp:
        ...     f = Path(tmp) / "ratings.csv"
        ...     _ = f.write_text("system,score\\nA,4\\nB,5\\n", encoding="utf-8")
        ...     read_table(f, ["system", "score"]).to_dict("list")
        {'system': ['A', 'B'], 'score': ['4', '5'], '_row': [2, 3]}
    """
    from nlgeval.io._formats import _read_delimited, _read_jsonl, _read_parquet

    path = Path(path)
    fmt = _sniff_format(path)
    if fmt == "parquet":
        df = _read_parquet(path)
    elif fmt == "jsonl":
        df = _read_jsonl(path)
    else:
        df = _read_delimited(path, "\t" if fmt == "tsv" else ",")
    check_columns(df, required, file=path)
    for col in optional:
        if col not in df.columns:
            df[col] = ""
    for col in string_columns:
        if col in df.columns:
            df[col] = df[col].astype(str)
    return df


def header_row(file: str | Path | None) -> int | None:
    """The row of ``file`` an error about a whole column names: 1 (the header) for CSV/TSV,
    ``None`` for JSONL and Parquet, which have no header row (their row 1 is the first record),
    and for no file.

    Examples:
        >>> header_row("ratings.csv"), header_row("ratings.tsv.gz"), header_row(None)
        (1, 1, None)
        >>> header_row("ratings.parquet"), header_row("ratings.jsonl")
        (None, None)
    """
    if file is None:
        return None
    return 1 if _sniff_format(Path(file)) in ("csv", "tsv") else None


def check_columns(df: pd.DataFrame, required: Sequence[str], *, file: str | Path | None) -> None:
    """Raise if a required column is missing, suggesting the present column spelled the same
    in another case, else the closest existing column. The error names the header row of a
    CSV/TSV file and no row of a JSONL or Parquet file (:func:`header_row`).

    Examples:
        >>> df = pd.DataFrame({"sytem": ["A"], "score": ["1"]})
        >>> try:
        ...     check_columns(df, ["system"], file=None)
        ... except InputError as err:
        ...     print(err)
        missing required column 'system' (found: sytem, score); did you mean 'sytem'?
        >>> try:
        ...     check_columns(pd.DataFrame({"study": ["a"], "r": [0.5], "N": [30]}),
        ...                   ["study", "r", "n"], file="effects.parquet")
        ... except InputError as err:
        ...     print(err)
        effects.parquet: missing required column 'n' (found: study, r, N); did you mean 'N'? \
(column names are case-sensitive)
    """
    present = [c for c in df.columns if c != ROW]
    for col in required:
        if col in df.columns:
            continue
        case = [c for c in present if str(c).casefold() == col.casefold()][:1]
        others = [c for c in present if c not in required]  # never another key: 'item'
        close = case or difflib.get_close_matches(col, others, n=1, cutoff=0.6)
        hint = f"; did you mean '{close[0]}'?" if close else ""
        if case:
            hint += " (column names are case-sensitive)"
        if len(present) == 1 and not close and re.search(r"[|:\s]", str(present[0]).strip()):
            hint = ("; the header was read as a single field: separate columns with commas "
                    "(.csv), tabs (.tsv) or semicolons")
        raise InputError(
            f"missing required column '{col}' (found: {', '.join(map(str, present)) or 'none'})"
            f"{hint}",
            file=file,
            row=header_row(file),
        )


def row_of(df: pd.DataFrame, position: int | np.integer) -> int:
    """The file row of the ``position``-th row of ``df`` (``_row`` if present, else as CSV).

    Examples:
        >>> row_of(pd.DataFrame({"x": [1, 2], ROW: [5, 9]}), 1)
        9
        >>> row_of(pd.DataFrame({"x": [1, 2]}), 1)  # no _row: header is row 1
        3
    """
    if ROW in df.columns:
        return int(df[ROW].iloc[position])
    return int(position) + 2


def to_numeric(
    df: pd.DataFrame,
    column: str,
    *,
    file: str | Path | None,
    allow_missing: bool = False,
    what: str = "a number",
) -> pd.Series:
    """Convert a column to float, raising on the first non-numeric (or empty) cell.

    Examples:
        A decimal comma is named as such:

        >>> df = pd.DataFrame({"score": ["4", "3,5"], ROW: [2, 3]})
        >>> try:
        ...     to_numeric(df, "score", file="ratings.csv")
        ... except InputError as err:
        ...     print(err.row, err.column, "(a decimal comma? write 3.5" in str(err))
        3 score True
    """
    raw = df[column]
    as_str = raw.astype(str).str.strip()
    values = pd.to_numeric(as_str.where(as_str != "", None), errors="coerce")
    bad = values.isna() & ((as_str != "") | (not allow_missing))
    if allow_missing:
        bad = values.isna() & (as_str != "") & ~as_str.str.lower().isin(["nan", "na", "none"])
    if bad.any():
        pos = int(np.flatnonzero(bad.to_numpy())[0])
        shown = raw.iloc[pos]
        hint = ""
        if _DECIMAL_COMMA.match(str(shown).strip()):
            hint = (f" (a decimal comma? write {str(shown).strip().replace(',', '.')}, or "
                    "export the sheet with '.' as the decimal separator)")
        shown = "an empty cell" if str(shown).strip() == "" else repr(shown)
        raise InputError(f"{shown} is not {what}{hint}", file=file, row=row_of(df, pos),
                         column=column)
    return values.astype(float)


def check_nonempty_text(
    df: pd.DataFrame, column: str, *, file: str | Path | None, what: str = "text"
) -> None:
    """Raise on the first empty or whitespace-only cell of a text column.

    Examples:
        >>> df = pd.DataFrame({"text": ["fine", " "], ROW: [2, 3]})
        >>> try:
        ...     check_nonempty_text(df, "text", file="outputs.csv")
        ... except InputError as err:
        ...     print(err)
        outputs.csv, row 3, column 'text': text is empty or whitespace-only
    """
    s = df[column].astype(str)
    bad = s.str.strip() == ""
    if bad.any():
        pos = int(np.flatnonzero(bad.to_numpy())[0])
        raise InputError(
            f"{what} is empty or whitespace-only", file=file, row=row_of(df, pos), column=column
        )


def check_unique(
    df: pd.DataFrame, columns: Sequence[str], *, file: str | Path | None, what: str
) -> None:
    """Raise on the first duplicated key, naming both rows.

    Examples:
        >>> df = pd.DataFrame({"system": ["A", "A"], "item": ["1", "1"], ROW: [2, 3]})
        >>> try:
        ...     check_unique(df, ["system", "item"], file="outputs.csv", what="output")
        ... except InputError as err:
        ...     print(err)
        outputs.csv, row 3, column 'item': duplicate output (system='A', item='1') in rows 2, 3
    """
    dup = df.duplicated(subset=list(columns), keep=False)
    if dup.any():
        idx = np.flatnonzero(dup.to_numpy())
        first = idx[0]
        key = tuple(df[c].iloc[first] for c in columns)
        same = [
            i for i in idx if tuple(df[c].iloc[i] for c in columns) == key
        ]
        rows = ", ".join(str(row_of(df, i)) for i in same[:5])
        keytxt = ", ".join(f"{c}={v!r}" for c, v in zip(columns, key, strict=True))
        raise InputError(
            f"duplicate {what} ({keytxt}) in rows {rows}",
            file=file,
            row=row_of(df, same[1]),
            column=columns[-1],
        )
