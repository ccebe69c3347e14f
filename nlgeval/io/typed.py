"""Typed reading of large plain tables: text columns as categories, the others as float64.

:func:`nlgeval.io.read_table` reads every cell as a string, which is what its checks need, but
costs a string per cell: tens of bytes for a number that is 8 bytes as a float, and several
copies while the checks run (a 20 x 1,000,000 study's score file of 60 M cells did not fit in
16 GB). :func:`read_typed` reads the same file with Arrow's multi-threaded, block-wise
(streaming) CSV and Parquet readers straight into typed columns -- a text column as a pandas
categorical (one small integer per cell, each distinct value once), a number column as float64
with the missing-value tokens as NaN -- so a file is held about once, at the size of its typed
data.

It is a fast path, not a second set of rules: whenever the file is not plain (compressed, a
byte-order mark, quotes, blank lines, ragged rows, a cell that is not a finite number or a
missing-value token, a column of another type, a row without any value) it returns ``None``
and the caller reads the file with :func:`read_table`, whose checks name the file, row and
column of the problem. When it returns a frame, the values are those :func:`read_table` and
:func:`to_numeric`-style parsing give (Arrow and Python both round decimal numbers
correctly; categories are the stripped strings).
"""

from __future__ import annotations

import contextlib
import csv
import io
import itertools
from collections.abc import Collection, Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from nlgeval.io import ROW

_BLOCK = 1 << 24
_MAGIC = (b"\x1f\x8b", b"BZh", b"\xfd7zXZ\x00", b"PK\x03\x04", b"\xd0\xcf\x11\xe0",
          b"\xff\xfe", b"\xfe\xff", b"\xef\xbb\xbf")


@contextlib.contextmanager
def arrow_memory_errors() -> Iterator[None]:
    """Turn pyarrow's ``Unknown error: Wrapping <cell> failed`` into a :class:`MemoryError`.

    pyarrow raises it when it cannot create the Python string of a cell while converting a
    string column to Python objects -- on a 20 x 1,000,000 score file, a 60 M-cell conversion
    that ran out of memory. The command line then prints its one out-of-memory line (exit
    status 2) instead of an ``ArrowException`` traceback.

    Examples:
        >>> import pyarrow as pa
        >>> try:
        ...     with arrow_memory_errors():
        ...         raise pa.lib.ArrowException("Unknown error: Wrapping i00359 failed")
        ... except MemoryError as err:
        ...     print(str(err)[:43])
        Arrow could not create the string of a cell
    """
    try:
        yield
    except Exception as exc:
        if type(exc).__name__.startswith("Arrow") and "Wrapping" in str(exc):
            raise MemoryError(f"Arrow could not create the string of a cell ({exc}) while "
                              "converting a large table") from None
        raise


def _case_variants(tokens: Collection[str]) -> list[str]:
    out: set[str] = set()
    for tok in tokens:
        pools = [(ch.lower(), ch.upper()) if ch.isalpha() else (ch,) for ch in tok]
        out.update("".join(p) for p in itertools.product(*pools))
    return sorted(out)


def tidy_categorical(values: Any, missing: Collection[str] = ()) -> pd.Categorical:
    """Strings (or a categorical) as a categorical of their stripped values, categories
    sorted; values whose lower case is in ``missing`` become ``""``.

    Examples:
        >>> c = tidy_categorical(pd.Categorical([" b", "a", "None", "b"]), {"none"})
        >>> list(c), list(c.categories)
        (['b', 'a', '', 'b'], ['', 'a', 'b'])
    """
    cat = values if isinstance(values, pd.Categorical) else pd.Categorical(values)
    names = pd.Index(cat.categories).astype(str).str.strip()
    names = names.where(~names.str.lower().isin(list(missing)), "")
    uniq = np.array(sorted(set(names)), dtype=object)
    recode = np.searchsorted(uniq, names.to_numpy(dtype=object)) if len(names) else \
        np.zeros(0, dtype=np.int64)
    codes = np.asarray(cat.codes)
    new = np.where(codes >= 0, recode[np.maximum(codes, 0)] if len(recode) else -1, -1)
    small = np.int8 if len(uniq) < 127 else (np.int16 if len(uniq) < 32_000 else np.int32)
    return pd.Categorical.from_codes(new.astype(small), categories=pd.Index(uniq, dtype=str))


def _plain_text(path: Path) -> bool:
    """No compression or byte-order mark, no quote character, no blank line: rows are lines,
    so row ``k`` of the data is line ``k + 2`` of the file."""
    with path.open("rb") as fh:
        head = fh.read(8)
        if not head or any(head.startswith(m) for m in _MAGIC):
            return False
        fh.seek(0)
        tail = b""
        while block := fh.read(_BLOCK):
            chunk = tail + block
            if b'"' in chunk or b"\n\n" in chunk or b"\n\r\n" in chunk or b"\r\r" in chunk:
                return False
            tail = chunk[-2:]
    return True


def _header(path: Path, expected: str) -> tuple[str, list[str]] | None:
    from nlgeval.io._formats import _sniff_delimiter

    with path.open("rb") as fh:
        first = fh.readline(1 << 20)
    try:
        line = first.decode("utf-8").rstrip("\r\n")
    except UnicodeDecodeError:
        return None
    delimiter = _sniff_delimiter(line, expected)
    header = [h.strip() for h in next(csv.reader(io.StringIO(line), delimiter=delimiter), [])]
    if not header or len(set(header)) != len(header) or "" in header or ROW in header:
        return None
    return delimiter, header


def header_names(path: str | Path) -> list[str] | None:
    """The stripped column names of a plain CSV/TSV file or of a Parquet file, read without
    the body; ``None`` for any other file (compressed, JSONL, unreadable).

    Examples:
        >>> import tempfile
        >>> with tempfile.TemporaryDirectory() as tmp:
        ...     f = Path(tmp) / "ratings.tsv"
        ...     _ = f.write_text("system\\t item\\nA\\t1\\n", encoding="utf-8")
        ...     print(header_names(f))
        ['system', 'item']
    """
    from nlgeval.io import _sniff_format

    path = Path(path)
    fmt = _sniff_format(path)
    try:
        with path.open("rb") as fh:
            head = fh.read(8)
        if fmt == "parquet":
            import pyarrow.parquet as pq

            return [str(n).strip() for n in pq.read_schema(path).names]
    except Exception:  # noqa: BLE001 - read_table names what is wrong with the file
        return None
    if fmt == "jsonl" or not head or any(head.startswith(m) for m in _MAGIC):
        return None
    found = _header(path, "\t" if fmt == "tsv" else ",")
    return None if found is None else found[1]


def _read_csv(path: Path, expected: str, text: Sequence[str], missing: Collection[str]) -> Any:
    import pyarrow as pa
    import pyarrow.csv as pcsv

    if not _plain_text(path):
        return None
    found = _header(path, expected)
    if found is None:
        return None
    delimiter, header = found
    types = {c: pa.dictionary(pa.int32(), pa.string()) if c in text else pa.float64()
             for c in header}
    try:
        return pcsv.read_csv(
            path, read_options=pcsv.ReadOptions(skip_rows=1, column_names=header),
            parse_options=pcsv.ParseOptions(delimiter=delimiter, quote_char=False,
                                            ignore_empty_lines=False),
            convert_options=pcsv.ConvertOptions(
                column_types=types, null_values=_case_variants(missing),
                strings_can_be_null=False, check_utf8=True))
    except (pa.ArrowException, ValueError, OSError):
        return None


def _read_parquet(path: Path, text: Sequence[str]) -> Any:
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    try:
        table = pq.read_table(path)
    except Exception:  # noqa: BLE001 - pyarrow raises many types; read_table names it
        return None
    names = [str(n) for n in table.column_names]
    if len(set(names)) != len(names) or ROW in names:
        return None
    cols = []
    for name, col in zip(names, table.columns, strict=True):
        t = col.type
        if pa.types.is_dictionary(t):
            col, t = col.cast(t.value_type), t.value_type
        if name in text:
            if not (pa.types.is_string(t) or pa.types.is_large_string(t)
                    or pa.types.is_integer(t)):
                return None
            col = pc.fill_null(pc.cast(col, pa.string()), "").dictionary_encode()
        elif pa.types.is_float64(t) or (pa.types.is_integer(t) and t.bit_width <= 32):
            col = pc.cast(col, pa.float64())  # exact: what the string round trip gives
        else:
            return None
        cols.append(col)
    return pa.table(dict(zip(names, cols, strict=True)))


def read_typed(path: str | Path, text: Sequence[str], *,
               missing: Collection[str] = ()) -> pd.DataFrame | None:
    """A plain CSV, TSV or Parquet file as typed columns (module docstring), or ``None``.

    ``text`` names the text columns (categoricals of stripped values, sorted categories);
    every other column must hold numbers (float64; a cell whose lower case is in ``missing``
    is NaN). The frame has a ``_row`` column as :func:`nlgeval.io.read_table`'s.

    Examples:
        >>> import tempfile
        >>> with tempfile.TemporaryDirectory() as tmp:
        ...     f = Path(tmp) / "scores.csv"
        ...     _ = f.write_text("system,item,m1\\nA,1,0.5\\nB,1,NA\\n", encoding="utf-8")
        ...     df = read_typed(f, ["system", "item"], missing={"na"})
        ...     print(df["system"].dtype, df["m1"].tolist(), df["_row"].tolist())
        category [0.5, nan] [2, 3]
        >>> with tempfile.TemporaryDirectory() as tmp:  # a quoted cell: the checking reader
        ...     f = Path(tmp) / "scores.csv"
        ...     _ = f.write_text('system,item,m1\\n"A",1,0.5\\n', encoding="utf-8")
        ...     print(read_typed(f, ["system", "item"]))
        None
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    from nlgeval.io import _sniff_format

    path = Path(path)
    fmt = _sniff_format(path)
    if path.suffix.lower() in (".gz", ".bz2", ".xz", ".zip") or fmt == "jsonl" \
            or not path.is_file():
        return None
    table = _read_parquet(path, text) if fmt == "parquet" else \
        _read_csv(path, "\t" if fmt == "tsv" else ",", text, missing)
    if table is None:
        return None
    table = table.unify_dictionaries()
    out: dict[str, Any] = {}
    for name, col in zip(table.column_names, table.columns, strict=True):
        if pa.types.is_floating(col.type):
            nan_written = fmt != "parquet" and pc.any(pc.is_nan(col)).as_py()
            if pc.any(pc.is_inf(col)).as_py() or nan_written:
                return None  # an infinity, a NaN spelled '-nan': the checks say which
            out[name] = pc.fill_null(col, float("nan")).to_numpy()
        else:
            out[name] = tidy_categorical(col.to_pandas().array)
    df = pd.DataFrame(out, copy=False)
    if fmt != "parquet" and len(df) and _blank_rows(df).any():
        return None  # the checking reader skips them
    df[ROW] = np.arange(1, len(df) + 1) if fmt == "parquet" else np.arange(2, len(df) + 2)
    return df


def _blank_rows(df: pd.DataFrame) -> np.ndarray:
    blank = np.ones(len(df), dtype=bool)
    for c in df.columns:
        blank &= _empty(df[c])
    return blank


def _empty(col: pd.Series) -> np.ndarray:
    if isinstance(col.dtype, pd.CategoricalDtype):
        empty_code = np.flatnonzero(col.cat.categories == "")
        codes = col.cat.codes.to_numpy()
        return codes == empty_code[0] if len(empty_code) else np.zeros(len(col), dtype=bool)
    return np.asarray(col.isna().to_numpy())
