"""Read and validate human ratings: ``rater, item, system, criterion, score`` (tidy, long).

Documented handling of awkward input (never a silent wrong answer):

* a missing (empty) score, a non-numeric score, an empty identifier -> :class:`InputError`
  naming the file, row and column;
* a score outside a declared scale ``(min, max)`` -> :class:`InputError` naming the row;
* the same rater judging the same (item, system, criterion) twice -> :class:`InputError`
  naming both rows;
* a ``practice`` column (as written by the online experiment): rows whose value is true
  (``1/true/yes``) are practice trials and are left out of every analysis;
* a ``qc_check`` column (the online experiment's export with attention checks): rows with a
  check kind (``repeat``, ``degraded``, ...) show a repeated or degraded output; they are left
  out unless ``keep_checks`` (quality control, :mod:`nlgeval.human.qc`, reads them);
* several criteria in a file and no ``criterion`` chosen -> :class:`InputError` listing them;
* too few raters or systems for an analysis -> that analysis raises, saying what it needs.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from nlgeval.errors import InputError
from nlgeval.io import ROW, check_columns, check_unique, read_table, row_of, to_numeric

RATING_COLUMNS = ("rater", "item", "system", "criterion", "score")
_TRUE = {"1", "true", "yes", "y", "t"}
_FALSE = {"0", "false", "no", "n", "f", ""}


def parse_scale(text: str | Sequence[float] | None) -> tuple[float, float] | None:
    """``"1,7"`` / ``"1-7"`` / ``(1, 7)`` -> ``(1.0, 7.0)``; ``None`` -> ``None``.

    Examples
    --------
    >>> parse_scale("1,7"), parse_scale("1-5"), parse_scale(None)
    ((1.0, 7.0), (1.0, 5.0), None)
    """
    if text is None:
        return None
    if isinstance(text, str):
        parts = [p for p in text.replace(":", ",").replace(";", ",").split(",") if p.strip()]
        if len(parts) == 1 and "-" in parts[0].strip()[1:]:
            s = parts[0].strip()
            k = s.index("-", 1)
            parts = [s[:k], s[k + 1:]]
        try:
            lo, hi = (float(p) for p in parts)
        except ValueError:
            raise InputError(f"scale must be 'MIN,MAX' (e.g. '1,7'), got {text!r}") from None
    else:
        try:
            lo, hi = (float(v) for v in text)
        except (TypeError, ValueError):
            raise InputError(f"scale must be (min, max), got {text!r}") from None
    if not lo < hi:
        raise InputError(f"scale minimum must be below its maximum, got ({lo:g}, {hi:g})")
    return lo, hi


def validate_ratings(
    df: pd.DataFrame,
    *,
    criterion: str | None = None,
    scale: tuple[float, float] | str | None = None,
    file: str | Path | None = None,
    require_criterion: bool = True,
    keep_checks: bool = False,
) -> pd.DataFrame:
    """Check a ratings frame and return a clean copy (string ids, float score, no practice rows).

    ``criterion`` keeps only that criterion (in any case when just one present matches it so;
    an unknown name raises, listing those present);
    without it, a frame holding several criteria raises when ``require_criterion``. ``scale``
    ``(min, max)`` checks every score. Rows keep their file row in ``_row`` when read from a file.
    The ``criterion`` column may be absent (a single-criterion frame). Attention-check rows
    (non-empty ``qc_check``) are dropped unless ``keep_checks``.

    Parameters
    ----------
    df : pandas.DataFrame
        Ratings ``rater, item, system, criterion, score`` (extra columns kept).
    criterion : str, optional
        The criterion to keep.
    scale : tuple of (float, float) or str, optional
        The scale ``(min, max)``, or its text form ``"MIN,MAX"``.
    file : str or pathlib.Path, optional
        The source file, named in errors.
    require_criterion : bool, default True
        Refuse a frame with several criteria when ``criterion`` is None.
    keep_checks : bool, default False
        Keep attention-check rows.

    Returns
    -------
    pandas.DataFrame
        The clean copy.

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"rater": ["r1", "r1"], "item": [1, 2], "system": ["a", "a"],
    ...                    "score": ["3", "4"]})
    >>> validate_ratings(df, criterion="fluency")[["item", "criterion", "score"]].values.tolist()
    [['1', 'fluency', 3.0], ['2', 'fluency', 4.0]]
    """
    if not isinstance(df, pd.DataFrame):
        raise InputError(f"ratings must be a pandas DataFrame, got {type(df).__name__}")
    df = df.copy()
    if "criterion" not in df.columns:
        df["criterion"] = criterion if criterion is not None else "score"
    check_columns(df, RATING_COLUMNS, file=file)
    if ROW not in df.columns:
        df[ROW] = np.arange(2, len(df) + 2)
    df = _drop_practice_and_checks(df, file, keep_checks)
    for col in ("rater", "item", "system", "criterion"):
        s = df[col]
        missing = s.isna() | (s.astype(str).str.strip() == "")
        if missing.any():
            pos = int(np.flatnonzero(missing.to_numpy())[0])
            raise InputError(f"missing {col} identifier", file=file, row=row_of(df, pos),
                             column=col)
        df[col] = s.astype(str).str.strip()
    df = _select_criterion(df, criterion, file, require_criterion)
    if df.empty:
        raise InputError("no ratings (after removing practice trials)", file=file)
    df["score"] = _checked_scores(df, parse_scale(scale), file)
    key: tuple[str, ...] = ("rater", "item", "system", "criterion")
    if "system_b" in df.columns:  # relative judgements: the pair is the key
        df["system_b"] = df["system_b"].fillna("").astype(str).str.strip()
        key = ("rater", "item", "system", "system_b", "criterion")
    _check_unique_judgements(df, key, file, keep_checks)
    return df.reset_index(drop=True)


def _check_unique_judgements(df: pd.DataFrame, key: tuple[str, ...],
                             file: str | Path | None, keep_checks: bool) -> None:
    """Refuse a judgement given twice. A repeat check re-rates the same output, and two
    checks may copy one output (two degraded copies of it): a check row is told apart by
    its ``qc_check`` and, when the export has one, its trial's ``position``."""
    if not (keep_checks and "qc_check" in df.columns):
        check_unique(df, key, file=file, what="judgement")
        return
    key = (*key, "qc_check")
    checks = (df["qc_check"].fillna("").astype(str).str.strip() != "").to_numpy()
    if "position" in df.columns and checks.any():
        check_unique(df[checks], (*key, "position"), file=file, what="judgement")
        check_unique(df[~checks], key, file=file, what="judgement")
        return
    check_unique(df, key, file=file, what="judgement")


def _drop_practice_and_checks(df: pd.DataFrame, file: str | Path | None,
                              keep_checks: bool) -> pd.DataFrame:
    """Without the practice rows (``practice`` true) and, unless ``keep_checks``, the
    attention-check rows (non-empty ``qc_check``); a ``practice`` value that is not a boolean
    raises, naming the row."""
    if "practice" in df.columns:
        flag = df["practice"].astype(str).str.strip().str.lower()
        bad = ~flag.isin(_TRUE | _FALSE)
        if bad.any():
            pos = int(np.flatnonzero(bad.to_numpy())[0])
            raise InputError(
                f"practice must be true/false (or 1/0), got {df['practice'].iloc[pos]!r}",
                file=file, row=row_of(df, pos), column="practice",
            )
        df = df[~flag.isin(_TRUE)]
    if "qc_check" in df.columns:
        df["qc_check"] = df["qc_check"].fillna("").astype(str).str.strip()
        if not keep_checks:
            df = df[df["qc_check"] == ""]
    return df


def _select_criterion(df: pd.DataFrame, criterion: str | None, file: str | Path | None,
                      require_criterion: bool) -> pd.DataFrame:
    """The rows of ``criterion`` (in any case when one criterion present matches it so, as
    ``nlgeval validate --criteria`` does; an unknown name raises, listing those present);
    without one, several criteria raise when ``require_criterion``."""
    present = list(dict.fromkeys(df["criterion"]))
    if criterion is not None:
        folded = [c for c in present if str(c).casefold() == criterion.casefold()]
        if criterion not in present and len(folded) == 1:
            criterion = folded[0]
        if criterion not in present:
            raise InputError(
                f"criterion '{criterion}' not found (criteria present: "
                f"{', '.join(present) or 'none'})", file=file, column="criterion",
            )
        return df[df["criterion"] == criterion]
    if require_criterion and len(present) > 1:
        raise InputError(
            f"the ratings hold {len(present)} criteria ({', '.join(present)}); choose one "
            "(--criterion)", file=file, column="criterion",
        )
    return df


def _checked_scores(df: pd.DataFrame, sc: tuple[float, float] | None,
                    file: str | Path | None) -> pd.Series:
    """The ``score`` column as finite floats within the scale ``sc``; else an error naming
    the first bad row."""
    if pd.api.types.is_numeric_dtype(df["score"]):
        s = df["score"].astype(float)
        if s.isna().any() or not np.isfinite(s).all():
            pos = int(np.flatnonzero((~np.isfinite(s)).to_numpy())[0])
            raise InputError("missing or non-finite score", file=file, row=row_of(df, pos),
                             column="score")
        score = s
    else:
        score = to_numeric(df, "score", file=file, what="a numeric score")
    if sc is not None:
        bad = (score < sc[0]) | (score > sc[1])
        if bad.any():
            pos = int(np.flatnonzero(bad.to_numpy())[0])
            raise InputError(
                f"score {score.iloc[pos]:g} is outside the declared scale "
                f"[{sc[0]:g}, {sc[1]:g}]", file=file, row=row_of(df, pos), column="score",
            )
    return score


def is_relative(ratings: pd.DataFrame) -> bool:
    """True for pairwise (relative) judgements: a ``system_b`` column with values, as
    ``nlgeval experiment export`` writes in relative mode (``score`` = preference for
    ``system`` over ``system_b``).

    Examples
    --------
    >>> import pandas as pd
    >>> is_relative(pd.DataFrame({"system": ["a"], "system_b": ["b"]}))
    True
    """
    if "system_b" not in ratings.columns:
        return False
    col = ratings["system_b"].fillna("").astype(str).str.strip()
    return bool((col != "").any())


def read_ratings(
    path: str | Path,
    criterion: str | None = None,
    scale: tuple[float, float] | str | None = None,
    keep_checks: bool = False,
) -> pd.DataFrame:
    """Read a ratings CSV/TSV/JSONL (``rater, item, system, criterion, score``; extra columns
    kept) and validate it (see :func:`validate_ratings`). Returns the frame without ``_row``.

    Parameters
    ----------
    path : str or pathlib.Path
        The ratings file.
    criterion, scale, keep_checks : str, tuple or str, bool; optional
        As in :func:`validate_ratings` (defaults None, None, False).

    Returns
    -------
    pandas.DataFrame
        The validated ratings.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "r.csv"
    >>> _ = path.write_text("rater,item,system,criterion,score\\nr1,1,a,q,3\\nr1,1,b,q,5\\n")
    >>> read_ratings(path)["score"].tolist()
    [3.0, 5.0]
    """
    df = read_table(path, RATING_COLUMNS)
    out = validate_ratings(df, criterion=criterion, scale=scale, file=path,
                           keep_checks=keep_checks)
    return out.drop(columns=[ROW])
