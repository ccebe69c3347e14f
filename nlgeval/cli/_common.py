"""Options and output helpers shared by the CLI modules."""

from __future__ import annotations

import json
import sys
import warnings
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from nlgeval.errors import InputError
from nlgeval.progress import set_quiet
from nlgeval.results import dumps, jsonable

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

JsonOpt = Annotated[bool, typer.Option("--json", help="Print a JSON object on stdout.")]
QuietOpt = Annotated[
    bool, typer.Option("--quiet", "-q", help="No progress bars or chatter (CI-friendly).")
]
SeedOpt = Annotated[int, typer.Option("--seed", help="Seed for numpy.random.default_rng.")]
#: ``--data-dir`` of the commands that load a named corpus (validate, meta-analyse)
DataDirOpt = Annotated[Path | None, typer.Option(
    "--data-dir", help="Folder with the corpora (default: $NLGEVAL_DATA or the cache).")]


def setup(quiet: bool) -> None:
    """Apply ``--quiet``. Progress bars go to stderr, so ``--json`` output stays clean either way.

    Examples:
        >>> from nlgeval.progress import is_quiet
        >>> before = is_quiet()
        >>> setup(quiet=True)
        >>> is_quiet()
        True
        >>> set_quiet(before)
    """
    set_quiet(quiet)


def emit_json(obj: Any) -> None:
    """Print ``obj`` as JSON on stdout (NaN -> null).

    Examples:
        NaN becomes null:

        >>> emit_json({"r": float("nan"), "n": 3})
        {
          "r": null,
          "n": 3
        }
    """
    sys.stdout.write(dumps(obj) + "\n")


@contextmanager
def warnings_on_stderr(show: bool = True) -> Iterator[None]:
    """Record every warning the block raises; when it ends without an error, print each
    distinct message once on stderr as ``warning: <message>`` (nothing unless ``show``).

    A command's library call may warn once per metric or criterion with the same message; the
    user sees it once, after the work, not as Python's ``UserWarning`` lines.

    Examples:
        >>> import contextlib, io
        >>> err = io.StringIO()
        >>> with contextlib.redirect_stderr(err):
        ...     with warnings_on_stderr():
        ...         for _ in range(3):
        ...             warnings.warn("few items")
        >>> err.getvalue()
        'warning: few items\\n'
    """
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        yield
    if show:
        for msg in dict.fromkeys(str(w.message) for w in caught):
            typer.echo(f"warning: {msg}", err=True)


def split_list(value: str | None) -> list[str] | None:
    """``"a,b , c"`` -> ``["a", "b", "c"]``; ``None``/empty -> ``None``.

    Examples:
        >>> split_list("a,b , c")
        ['a', 'b', 'c']
        >>> split_list("  ") is None
        True
    """
    if value is None or not value.strip():
        return None
    return [v.strip() for v in value.split(",") if v.strip()]


TABLE_FORMATS = (".csv", ".tsv", ".parquet", ".json", ".jsonl")


def check_table_path(out: Path, formats: Sequence[str], option: str = "--out") -> None:
    """Refuse an output file whose suffix is not one of ``formats`` (before any work is done).

    Examples:
        >>> check_table_path(Path("scores.csv"), (".csv", ".tsv"))
        >>> try:
        ...     check_table_path(Path("scores.xlsx"), (".csv", ".tsv"))
        ... except InputError as err:
        ...     print(err)
        scores.xlsx: --out must end in .csv or .tsv, got 'scores.xlsx'
    """
    if out.suffix.lower() not in formats:
        allowed = ", ".join(formats[:-1]) + f" or {formats[-1]}" if len(formats) > 1 else formats[0]
        raise InputError(f"{option} must end in {allowed}, got '{out.name}'", file=out)


def write_frame(df: pd.DataFrame, out: Path, formats: Sequence[str] = TABLE_FORMATS,
                option: str = "--out") -> None:
    """Write a table in the format its suffix names (CSV, TSV, Parquet, JSON records, JSONL),
    creating the folder.

    Examples:
        >>> import tempfile
        >>> import pandas as pd
        >>> with tempfile.TemporaryDirectory() as tmp:
        ...     out = Path(tmp) / "sub" / "t.tsv"
        ...     write_frame(pd.DataFrame({"a": [1], "b": ["x"]}), out)
        ...     print(out.read_text().splitlines())
        ['a\\tb', '1\\tx']
    """
    check_table_path(out, formats, option)
    out.parent.mkdir(parents=True, exist_ok=True)
    suffix = out.suffix.lower()
    if suffix == ".parquet":
        df.to_parquet(out, index=False)
    elif suffix == ".json":
        out.write_text(json.dumps(jsonable(df), indent=1, ensure_ascii=False) + "\n",
                       encoding="utf-8")
    elif suffix == ".jsonl":
        df.to_json(out, orient="records", lines=True, force_ascii=False)
    else:
        df.to_csv(out, index=False, sep="\t" if suffix in (".tsv", ".tab") else ",")


def out_of_memory_line(exc: BaseException) -> str:
    """The one line a command prints instead of a ``MemoryError`` traceback (exit status 2).

    A study that the estimate before the work (:mod:`nlgeval.parallel.memory`) let through can
    still run out of memory when other programs take what was free; the line says what helps.

    Examples:
        >>> out_of_memory_line(MemoryError("Unable to allocate 12.0 GiB"))[:48]
        'out of memory (Unable to allocate 12.0 GiB): the'
    """
    what = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    return (f"out of memory{f' ({what})' if what else ''}: the data and statistics asked for "
            "need more memory than is free; validate a sample of the items or fewer metrics, "
            "close other programs, or run on Dask workers with more memory (--backend dask "
            "--scheduler ADDRESS); NLGEVAL_MEMORY_LIMIT makes nlgeval refuse such a study "
            "before it starts")
