"""Exceptions with messages a researcher can act on.

Every problem with user input is raised as :class:`InputError`, which names the file, the
1-based row as it appears in the file (the header is row 1 for CSV/TSV; the first record is
row 1 for JSONL and Parquet, which have no header row), the column -- or the key of a
configuration file, or the command-line option -- and what was expected. The CLI turns it
into one line on stderr and exit status 2.
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
        row is row 2; for JSONL and Parquet the first record is row 1).
    column:
        The column (or JSON field) at fault.
    option:
        The command-line option at fault (``"--quality"``), for a value given on the command
        line rather than read from a file's column.
    key:
        The key at fault in a configuration file (TOML or JSON), as a dotted path
        (``"evaluators"``, ``"crowd.frame_ancestors"``, ``"criteria[2].step"``): such a file
        has keys, not columns.

    Examples
    --------
    >>> err = InputError("'abc' is not a number", file="ratings.csv", row=3, column="score")
    >>> str(err)
    "ratings.csv, row 3, column 'score': 'abc' is not a number"
    >>> isinstance(err, ValueError)          # callers catching ValueError still work
    True
    >>> print(InputError("'humn' is not a system of the study", option="--quality"))
    option '--quality': 'humn' is not a system of the study
    >>> print(InputError("must be at least 1", file="experiment.toml", key="bws.raters"))
    experiment.toml, key 'bws.raters': must be at least 1
    """

    message: str
    file: str | Path | None = None
    row: int | None = None
    column: str | None = None
    option: str | None = None
    key: str | None = None

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
        if self.key is not None:
            where.append(f"key '{self.key}'")
        if self.option is not None:
            where.append(f"option '{self.option}'")
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
