"""The file formats of :func:`nlgeval.io.read_table`: Parquet, JSONL and delimited text (CSV,
TSV, a semicolon-separated spreadsheet export), each read as strings with a ``_row`` column
that points at the record's line in the file."""

from __future__ import annotations

import csv
import io
import json
import re
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from nlgeval.errors import InputError
from nlgeval.io.text import ROW, lone_surrogate, read_text_utf8


def _read_parquet(path: Path) -> pd.DataFrame:
    """A Parquet file as strings (empty for missing values), records numbered from 1 (a Parquet
    file has no header row; errors about a whole column name no row).

    Text and number columns are converted by Arrow, column by column, into Arrow-backed
    strings (numbers in their shortest round-trip form, NaN and nulls empty): no Python object
    per cell, so a file of tens of millions of rows is held about once (the earlier
    ``astype(object)`` made two Python objects per cell, ~10 GB for 20 x 1,000,000 x 3
    scores). Other types (booleans, dates) go through pandas as before.
    """
    try:
        import pyarrow.parquet as pq

        names = [str(n) for n in pq.read_schema(path).names]
        twice = [n for n in dict.fromkeys(names) if names.count(n) > 1]
        table = None if twice else pq.read_table(path)  # pyarrow refuses a name twice
    except FileNotFoundError:
        raise InputError("file not found", file=path) from None
    except Exception as exc:  # pyarrow raises many types, some with a schema dump after
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        raise InputError(f"cannot read as Parquet: {first}", file=path) from None
    if twice or table is None:  # no header row: no row to name
        raise InputError(f"the file names column '{twice[0]}' {names.count(twice[0])} times; "
                         "column names must be unique", file=path)
    names = [str(n) for n in table.column_names]
    n_rows = table.num_rows
    cols: dict[str, pd.Series] = {}
    for i, name in enumerate(names):
        cols[name] = _parquet_strings(table.column(i))
    df = pd.DataFrame(cols, copy=False)
    df[ROW] = np.arange(1, n_rows + 1)
    return df


def _parquet_strings(col: Any) -> pd.Series:
    """One Arrow column as a pandas string column, missing values (null, NaN) as ``""``."""
    import pyarrow as pa
    import pyarrow.compute as pc

    t = col.type
    if pa.types.is_dictionary(t):
        col, t = col.cast(t.value_type), t.value_type
    if pa.types.is_floating(t):
        col = pc.if_else(pc.is_nan(col), pa.scalar(None, t), col)
    if pa.types.is_floating(t) or pa.types.is_integer(t) or pa.types.is_string(t) \
            or pa.types.is_large_string(t):
        text = pc.fill_null(pc.cast(col, pa.large_string()), "")
        return pa.chunked_array(text).to_pandas()  # pandas' str dtype, Arrow-backed
    ser = col.to_pandas()
    return ser.astype(object).where(ser.notna(), "").astype(str)


def _read_jsonl(path: Path) -> pd.DataFrame:
    """One JSON object per line (blank lines skipped), values as strings, ``_row`` = line."""
    records = []
    rows = []
    for i, line in enumerate(read_text_utf8(path).splitlines(), start=1):
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
        except json.JSONDecodeError as exc:
            raise InputError(f"not valid JSON: {exc.msg}", file=path, row=i) from None
        if not isinstance(rec, dict):
            raise InputError("expected a JSON object per line", file=path, row=i)
        record = {k: "" if v is None else str(v) for k, v in rec.items()}
        if _SURROGATE_ESCAPE.search(line):
            _check_unicode(record, path, i)
        records.append(record)
        rows.append(i)
    df = pd.DataFrame.from_records(records)
    df[ROW] = rows
    return df


#: a JSON escape of a UTF-16 surrogate (``\\ud800``-``\\udfff``): the only way a line decoded
#: from UTF-8 can give a lone surrogate, so only such lines are checked
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


def _check_unicode(record: dict[str, str], path: Path, row: int) -> None:
    """Refuse a record whose field name or value holds a lone surrogate (Python's json reads
    ``"\\ud800"`` without its pair; UTF-8 cannot hold it, so pyarrow, the score cache and every
    output file would fail on it, and dropping or replacing it would alter the text)."""
    for key, value in record.items():
        why = lone_surrogate(key)
        if why is not None:
            raise InputError(f"a field name is {why}", file=path, row=row)
        why = lone_surrogate(value)
        if why is not None:
            raise InputError(f"{why} (a JSON escape such as \\ud800 without the other half "
                             "of its UTF-16 pair)", file=path, row=row, column=key)


def _read_delimited(path: Path, expected: str) -> pd.DataFrame:
    """A delimited text table (the delimiter checked by :func:`_sniff_delimiter`); every
    record must have as many fields as the header; ``_row`` = the record's first line."""
    text = read_text_utf8(path)
    delimiter = _sniff_delimiter(text, expected)
    header = _delimited_header(text, delimiter, path)
    body, rows = [], []
    # csv.reader does not give line numbers per record directly; re-derive them by
    # counting physical lines consumed (quoted fields may span lines).
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter)
    next(reader)
    line_no = reader.line_num
    for rec in reader:
        start = line_no + 1
        line_no = reader.line_num
        if not rec or all(not c.strip() for c in rec):
            continue  # blank line (e.g. CRLF artefacts)
        if len(rec) != len(header):
            raise InputError(
                f"has {len(rec)} fields but the header has {len(header)} "
                f"({', '.join(header)})",
                file=path,
                row=start,
            )
        body.append(rec)
        rows.append(start)
    df = pd.DataFrame(body, columns=header, dtype=object) if body else pd.DataFrame(
        columns=header, dtype=object
    )
    df[ROW] = rows
    return df


def _delimited_header(text: str, delimiter: str, path: Path) -> list[str]:
    """The stripped header of a delimited table, after checking the whole file parses."""
    fmt = {"\t": "TSV", ";": "semicolon-separated csv", ",": "CSV"}[delimiter]
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter)
    try:
        all_rows = list(reader)
    except csv.Error as exc:
        raise InputError(f"malformed {fmt}: {exc}", file=path, row=reader.line_num) from None
    if not all_rows:
        raise InputError("the file is empty; expected a header row", file=path)
    header = [h.strip() for h in all_rows[0]]
    twice = [h for h in dict.fromkeys(header) if header.count(h) > 1]
    if twice:  # pandas would return a frame for df[name] and fail deep inside a validator
        raise InputError(f"the header names column '{twice[0]}' {header.count(twice[0])} "
                         "times; column names must be unique", file=path, row=1)
    return header


def _sniff_delimiter(text: str, expected: str) -> str:
    """The delimiter of a delimited text table: ``expected`` unless the header row, split by
    it, is a single field that contains another delimiter (tab, semicolon or comma; the most
    frequent one wins). Deliberately narrow, unlike :class:`csv.Sniffer` (which guesses from
    the body and can pick a character inside the text): it only changes files that would
    otherwise be read as one column."""
    header = next(csv.reader(io.StringIO(text.split("\n", 1)[0], newline=""),
                             delimiter=expected), [])
    if len(header) != 1:
        return expected
    counts = {d: header[0].count(d) for d in ("\t", ";", ",") if d != expected}
    best = max(counts, key=lambda d: counts[d])
    return best if counts[best] > 0 else expected
