"""Reading score and ratings files: gzip, and cells to finite floats (errors name file, row
and column)."""

from __future__ import annotations

import gzip
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

from nlgeval.errors import InputError
from nlgeval.io import read_table

MISSING_TOKENS = frozenset({"", "nan", "na", "n/a", "none", "null"})


def _read_maybe_gzip(path: Path) -> pd.DataFrame:
    """:func:`nlgeval.io.read_table` for plain or gzip-compressed files (``*.csv.gz`` etc.)."""
    if path.suffix.lower() != ".gz":
        return read_table(path)
    inner_suffix = "".join(path.suffixes[:-1]) or ".csv"
    try:
        data = gzip.decompress(path.read_bytes())
    except FileNotFoundError:
        raise InputError("file not found", file=path) from None
    except (OSError, EOFError) as exc:
        raise InputError(f"not a valid gzip file: {exc}", file=path) from None
    with tempfile.TemporaryDirectory() as tmp:
        inner = Path(tmp) / f"scores{inner_suffix}"
        inner.write_bytes(data)
        try:
            return read_table(inner)
        except InputError as exc:  # name the user's file, not the temporary copy
            raise InputError(exc.message, file=path, row=exc.row, column=exc.column) from None


def _to_float(values: pd.Series, file: str | Path | None, rows: pd.Series, column: str,
              ) -> pd.Series:
    """Strings -> float; missing tokens -> NaN; anything else non-finite -> InputError.

    A column that already holds numbers (float64 or integer; NaN missing) is taken as it is:
    its string round trip gives the same floats, without a string per cell."""
    if values.dtype == np.float64 or values.dtype.kind in "iu":
        num = values.astype(float)
        if np.isfinite(num.fillna(0.0).to_numpy()).all():
            return num
    isna = values.isna().to_numpy()
    raw = values.astype(str).str.strip()
    missing = pd.Series(isna, index=raw.index) | raw.str.lower().isin(MISSING_TOKENS)
    num = pd.to_numeric(raw.where(~missing, None), errors="coerce")
    bad = (num.isna() & ~missing) | ~np.isfinite(num.fillna(0.0))
    if bad.any():
        pos = int(np.flatnonzero(bad.to_numpy())[0])
        what = raw.iloc[pos]
        reason = ("is not a finite number" if np.isfinite(num.fillna(0.0)).iloc[pos]
                  else "is infinite; metric scores must be finite numbers")
        raise InputError(f"score {what!r} {reason} (write an empty cell or None for a "
                         "missing score)", file=file, row=int(rows.iloc[pos]), column=column)
    return num.astype(float)
