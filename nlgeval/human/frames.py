"""The common input check of the human-ratings analyses: one criterion's tidy ratings frame.

Every analysis in :mod:`nlgeval.human` takes a frame with (some of) the columns
``rater, item, system, score``; :func:`check_ratings_frame` turns it into the shape they all
expect (string identifiers, numeric scores) or raises :class:`~nlgeval.errors.InputError` naming
the missing column or the row with a bad score.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from nlgeval.errors import InputError


def check_ratings_frame(ratings: pd.DataFrame, needed: Sequence[str]) -> pd.DataFrame:
    """A copy of the ``needed`` columns: identifiers as strings, ``score`` numeric.

    Raises :class:`~nlgeval.errors.InputError` for a non-frame, a missing column, a missing or
    non-numeric score (naming the row, counted from 1) or several criteria in one frame.

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"item": [1, 2], "system": ["a", "a"], "score": ["3", 4.5]})
    >>> check_ratings_frame(df, ["item", "system", "score"]).values.tolist()
    [['1', 'a', 3.0], ['2', 'a', 4.5]]
    """
    if not isinstance(ratings, pd.DataFrame):
        raise InputError(f"ratings must be a pandas DataFrame, got {type(ratings).__name__}")
    missing = [c for c in needed if c not in ratings.columns]
    if missing:
        raise InputError(
            f"ratings need columns {', '.join(needed)}; missing {', '.join(missing)}"
        )
    df = ratings[list(needed)].copy()
    for c in needed:
        if c != "score":
            df[c] = df[c].astype(str)
    df["score"] = pd.to_numeric(df["score"], errors="coerce")
    if df["score"].isna().any():
        pos = int(np.flatnonzero(df["score"].isna().to_numpy())[0])
        raise InputError(f"missing or non-numeric score in ratings row {pos + 1}",
                         column="score")
    if "criterion" in ratings.columns and ratings["criterion"].nunique() > 1:
        raise InputError(
            "ratings hold several criteria ("
            + ", ".join(map(str, ratings["criterion"].unique()))
            + "); select one criterion first"
        )
    return df


def units_matrix(df: pd.DataFrame) -> pd.DataFrame:
    """Raters x units matrix (NaN = not rated) of a checked frame; a *unit* is one rated output
    ``(item, system)``, in sorted order.

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"rater": ["r1", "r2", "r1"], "item": ["1", "1", "2"],
    ...                    "system": "a", "score": [3.0, 4.0, 5.0]})
    >>> units_matrix(df).values.tolist()
    [[3.0, 5.0], [4.0, nan]]
    """
    d = df.assign(unit=df["item"] + "\x1f" + df["system"])
    return d.pivot(index="rater", columns="unit", values="score")
