"""The optional columns of a score file beside the scores: ``criterion`` (the human criterion a
per-criterion judge is about), ``higher_is_better`` (a metric's direction, long files) and
``human`` (the row's system is human-written), and where each value came from (``_column``).
"""

from __future__ import annotations

import difflib
from pathlib import Path

import numpy as np
import pandas as pd

from nlgeval.errors import InputError

#: Columns of a score file that are not metric scores.
META_COLUMNS = ("criterion", "higher_is_better", "human")
_TRUE = frozenset({"true", "1", "yes", "y", "t"})
_FALSE = frozenset({"false", "0", "no", "n", "f"})


def parse_flags(values: pd.Series, file: str | Path | None, rows: pd.Series, column: str,
                missing: bool | None) -> list[bool | None]:
    """``true/false/1/0/yes/no`` -> bool; empty -> ``missing``; anything else an error.

    >>> parse_flags(pd.Series(["yes", "0", ""]), None, pd.Series([2, 3, 4]), "human", False)
    [True, False, False]
    """
    out: list[bool | None] = []
    raw = values.where(values.notna(), "").astype(str).str.strip().str.lower()
    for k, v in enumerate(raw):
        if v in _TRUE:
            out.append(True)
        elif v in _FALSE:
            out.append(False)
        elif v in ("", "nan", "none", "null"):
            out.append(missing)
        else:
            raise InputError(f"'{values.iloc[k]}' is not a yes/no value (write true or false)",
                             file=file, row=int(rows.iloc[k]), column=column)
    return out


def misspelt_key(cols: list[str]) -> tuple[str, str] | None:
    """``(key, column)`` when a key column of a score file is absent but a column looks like it
    (``Item``, ``itme``, ``items``; ``Score``/``metrics`` beside a long file's other key), else
    ``None``. Read as they are, such a column would be taken for a metric (or the rows for
    system-level scores) and the error would name a score, not the column.

    >>> misspelt_key(["system", "itme", "comet"])
    ('item', 'itme')
    >>> misspelt_key(["system", "item", "metric", "Score"])
    ('score', 'Score')
    >>> misspelt_key(["system", "comet"]) is None     # system-level scores
    True
    """
    wanted = [k for k, absent in (("item", "item" not in cols),
                                  ("score", "metric" in cols and "score" not in cols),
                                  ("metric", "score" in cols and "metric" not in cols)) if absent]
    others = [c for c in cols if c not in ("system", "item", "metric", "score", *META_COLUMNS)]
    for key in wanted:
        for c in others:
            low = c.strip().lower()
            if low == key or difflib.SequenceMatcher(None, key, low).ratio() >= 0.75:
                return key, c
    return None


def refuse_misspelt_key(cols: list[str], file: str | Path | None) -> None:
    """Raise :class:`~nlgeval.errors.InputError` naming a column :func:`misspelt_key` finds.

    >>> refuse_misspelt_key(["system", "Item", "comet"], "s.csv")
    Traceback (most recent call last):
    ...
    nlgeval.errors.InputError: s.csv, row 1, column 'Item': no 'item' column: did you mean ...
    """
    lookalike = misspelt_key(cols)
    if lookalike is None:
        return
    key, col = lookalike
    why = ("without an 'item' column every score is read as a system-level score"
           if key == "item" else "a long file needs both a 'metric' and a 'score' column")
    raise InputError(f"no '{key}' column: did you mean '{key}'? (rename it: {why})",
                     file=file, row=1 if file is not None else None, column=col)


def row_metadata(df: pd.DataFrame, file: str | Path | None, row_col: str) -> pd.DataFrame:
    """Per-row ``criterion`` ('' = any), ``higher_is_better`` (None = not said) and ``human``.

    >>> df = pd.DataFrame({"human": ["yes", ""], "_row": [2, 3]})
    >>> row_metadata(df, None, "_row")[["criterion", "human"]].values.tolist()
    [['', True], ['', False]]
    """
    rows = df[row_col]
    crit = (df["criterion"].where(df["criterion"].notna(), "").astype(str).str.strip()
            if "criterion" in df.columns else pd.Series("", index=df.index))
    crit = crit.where(~crit.str.lower().isin(["nan", "none", "null"]), "")
    hib = (parse_flags(df["higher_is_better"], file, rows, "higher_is_better", None)
           if "higher_is_better" in df.columns else [None] * len(df))
    human = (parse_flags(df["human"], file, rows, "human", False)
             if "human" in df.columns else [False] * len(df))
    return pd.DataFrame({"criterion": crit.to_numpy(), "higher_is_better":
                         pd.Series(hib, dtype=object).to_numpy(), "human": human},
                        index=df.index)


def bind_by_criterion(long: pd.DataFrame, file: str | Path | None) -> pd.DataFrame:
    """A metric scored for several criteria (a ``criterion`` column in a long file) becomes one
    metric per criterion, named ``metric (criterion)``; a metric bound on some rows only is an
    error.

    >>> long = pd.DataFrame({"metric": ["j", "j"], "criterion": ["A", "B"], "_row": [2, 3]})
    >>> bind_by_criterion(long, None)["metric"].tolist()
    ['j (A)', 'j (B)']
    """
    out = long.copy()
    for m, sub in long.groupby("metric", sort=False):
        crits = set(sub["criterion"])
        if len(crits) <= 1:
            continue
        if "" in crits:
            pos = int(np.flatnonzero((sub["criterion"] == "").to_numpy())[0])
            raise InputError(f"metric '{m}' names a criterion on some rows and none on others "
                             "(fill the criterion column for every row of the metric, or "
                             "leave it empty for all)", file=file,
                             row=int(sub["_row"].iloc[pos]), column="criterion")
        idx = sub.index
        out.loc[idx, "metric"] = [f"{m} ({c})" for c in sub["criterion"]]
    return out


def metric_directions(long: pd.DataFrame, file: str | Path | None) -> None:
    """One ``higher_is_better`` value per metric (empty cells take the metric's value).

    >>> long = pd.DataFrame({"metric": ["e", "e"], "higher_is_better": [False, True],
    ...                      "_row": [2, 3]})
    >>> metric_directions(long, None)
    Traceback (most recent call last):
    ...
    nlgeval.errors.InputError: row 3, column 'higher_is_better': metric 'e' is said to be ...
    """
    said = long[long["higher_is_better"].notna()]
    for m, sub in said.groupby("metric", sort=False):
        vals = sub["higher_is_better"].astype(bool).to_numpy()
        if (vals != vals[0]).any():
            pos = int(np.flatnonzero(vals != vals[0])[0])
            raise InputError(
                f"metric '{m}' is said to be both higher-is-better and lower-is-better "
                "(one value per metric)", file=file, row=int(sub["_row"].iloc[pos]),
                column="higher_is_better")


def fill_metadata(scores: pd.DataFrame) -> pd.DataFrame:
    """Defaults for frames built without the optional columns (an MTME reader, a user).

    >>> fill_metadata(pd.DataFrame({"metric": ["m"]})).columns.tolist()
    ['metric', 'criterion', 'higher_is_better', 'human', '_column']
    """
    df = scores.copy(deep=False)  # columns are replaced below, never changed in place
    if "criterion" not in df.columns:
        df["criterion"] = ""
    if "higher_is_better" not in df.columns:
        df["higher_is_better"] = pd.Series([None] * len(df), dtype=object, index=df.index)
    if "human" not in df.columns:
        df["human"] = False
    if "_column" not in df.columns:
        df["_column"] = "metric"
    crit = df["criterion"]
    if not (isinstance(crit.dtype, pd.CategoricalDtype) and not crit.isna().any()):
        df["criterion"] = crit.where(crit.notna(), "").astype(str)  # (typed: strings already)
    if df["human"].dtype != bool:
        df["human"] = df["human"].fillna(False).astype(bool)
    return df


def per_metric(scores: pd.DataFrame) -> tuple[dict[str, str], dict[str, bool]]:
    """The criterion each metric is bound to, and the directions the file states.

    >>> df = pd.DataFrame({"metric": ["a", "b"], "criterion": ["Q", ""],
    ...                    "higher_is_better": [None, False]})
    >>> per_metric(df)
    ({'a': 'Q'}, {'b': False})
    """
    bound, hib = {}, {}
    for m, sub in scores.groupby("metric", sort=False):
        crits = [c for c in sub["criterion"] if c]
        if crits:
            bound[str(m)] = crits[0]
        said = sub["higher_is_better"].dropna()
        if len(said):
            hib[str(m)] = bool(said.iloc[0])
    return bound, hib
