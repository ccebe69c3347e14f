"""Where the human-ratings commands read their ratings from: a ratings file, or the ratings
of a corpus (a published corpus name or a corpus directory). ``nlgeval compare``,
``nlgeval agreement`` (:mod:`nlgeval.cli.human`) and ``nlgeval plan power``
(:mod:`nlgeval.cli.human_plan`) share it, so neither command module imports the other."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pandas loads with the command, not with ``nlgeval --help``
    import pandas as pd

#: A FILE argument with one of these suffixes is a file (a missing one: "file not found"),
#: never a corpus name: tables, their compressed forms and what the reader refuses by name.
_TABLE_SUFFIXES = frozenset({".csv", ".tsv", ".jsonl", ".json", ".parquet", ".txt", ".gz",
                             ".bz2", ".xz", ".zip", ".xlsx", ".xls", ".ods"})


def load_ratings(file: Path, criterion: str | None, scale: str | None,
                 data_dir: Path | None = None, keep_checks: bool = False,
                 ) -> tuple[pd.DataFrame, tuple[float, float] | None, str]:
    """Ratings from a file, or from a corpus (a published corpus name such as ``webnlg2020``,
    or a corpus directory) when ``file`` is not a ratings file: the tidy frame, the scale
    (from the corpus's criterion when not given) and the criterion.

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as d:
    ...     f = Path(d) / "r.csv"
    ...     _ = f.write_text("rater,item,system,criterion,score\\nr1,i1,A,fluency,4\\n")
    ...     df, scale, crit = load_ratings(f, None, "1-5")
    >>> len(df), scale, crit
    (1, (1.0, 5.0), 'fluency')
    """
    from nlgeval.human.ratings import parse_scale, read_ratings, validate_ratings

    sc = parse_scale(scale)
    if file.is_file() or {s.lower() for s in file.suffixes} & _TABLE_SUFFIXES:
        df = read_ratings(file, criterion=criterion, scale=sc, keep_checks=keep_checks)
        return df, sc, _criterion_of(df, criterion)
    from nlgeval.corpora import load_corpus

    corpus = load_corpus(str(file) if not file.is_dir() else file, data_dir)
    df = validate_ratings(corpus.ratings, criterion=criterion, scale=sc,
                          file=f"corpus {corpus.name}", keep_checks=keep_checks
                          ).drop(columns=["_row"])
    crit = _criterion_of(df, criterion)
    if sc is None:
        c = corpus.info.criterion(crit)
        sc = (float(c.min), float(c.max))
    return df, sc, crit


def _criterion_of(df: pd.DataFrame, criterion: str | None) -> str:
    """The criterion of the selected ratings as the data spell it (``--criterion`` may name it
    in another case), else the one asked for."""
    if "criterion" in df.columns and len(df):
        return str(df["criterion"].iloc[0])
    return str(criterion)
