"""Exceptions with messages a researcher can act on.

Every problem with user input is raised as :class:`InputError`, which names the file, the
1-based row as it appears in the file (the header is row 1 for CSV/TSV), the column and what
was expected. The CLI turns it into one line on stderr and exit status 2.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


class NlgevalError(Exception):
    """Base class for errors nlgeval raises on purpose (never a bug).

    Examples
    --------
    >>> issubclass(InputError, NlgevalError), issubclass(DataNotFoundError, NlgevalError)
    (True, True)
    """


@dataclass(eq=False)
class InputError(NlgevalError, ValueError):
    """Bad user input, located as precisely as possible.

    Parameters
    ----------
    message:
        What is wrong and what was expected, e.g. ``"score 'abc' is not a number"``.
    file:
        The file the input came from, if any.
    row:
        1-based row number as in the file (for CSV/TSV the header is row 1, so the first data
        row is row 2; for JSONL the first record is row 1).
    column:
        The column (or JSON field) at fault.

    Examples
    --------
    >>> err = InputError("'abc' is not a number", file="ratings.csv", row=3, column="score")
    >>> str(err)
    "ratings.csv, row 3, column 'score': 'abc' is not a number"
    >>> isinstance(err, ValueError)          # callers catching ValueError still work
    True
    """

    message: str
    file: str | Path | None = None
    row: int | None = None
    column: str | None = None

    def __post_init__(self) -> None:
        super().__init__(str(self))

    def __str__(self) -> str:
        where = []
        if self.file is not None:
            where.append(str(self.file))
        if self.row is not None:
            where.append(f"row {self.row}")
        if self.column is not None:
            where.append(f"column '{self.column}'")
        prefix = ", ".join(where)
        return f"{prefix}: {self.message}" if prefix else self.message


class DataNotFoundError(NlgevalError):
    """A corpus or resource could not be found locally nor downloaded.

    Examples
    --------
    >>> raise DataNotFoundError("corpus 'e2e' is not available locally")
    Traceback (most recent call last):
        ...
    nlgeval.errors.DataNotFoundError: corpus 'e2e' is not available locally
    """
