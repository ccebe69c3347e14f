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
from nlgeval.io import header_row
from nlgeval.scores._parse import MISSING_TOKENS

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


#: What a key column is called up to case, spaces, '_', '-', '.' and a plural or an id suffix
#: (:func:`plain_name`). A column so named is a key column whatever its values; the reader takes
#: only the exact key names, so this is a refusal with a "did you mean", never an alias.
KEY_SPELLINGS = {
    "item": frozenset({"item", "items", "itemid", "itemids", "segment", "segments",
                       "segmentid", "segmentids", "seg", "segs", "segid", "segids"}),
    "score": frozenset({"score", "scores"}),
    "metric": frozenset({"metric", "metrics", "metricname"}),
}
#: Integers at least this large are not taken for ids (a float can no longer count one by one).
_MAX_ID = 2.0 ** 53


def plain_name(name: str) -> str:
    """A column name in lower case without spaces, ``_``, ``-`` and ``.``.

    >>> plain_name(" Segment ID"), plain_name("item_id")
    ('segmentid', 'itemid')
    """
    return "".join(ch for ch in name.strip().lower() if ch not in " \t_-.")


def numbers_or_text(values: pd.Series) -> tuple[np.ndarray, bool]:
    """The values of a column as floats (NaN = missing) and whether any present value is text
    (not a number): cells as read (strings), numbers, or categories all work.

    >>> num, text = numbers_or_text(pd.Series(["1", "", "w01", "2.5"]))
    >>> num.tolist(), text
    ([1.0, nan, nan, 2.5], True)
    """
    if values.dtype.kind in "fiu":
        return values.to_numpy(dtype=float, na_value=np.nan), False
    raw = values.astype(str).str.strip()
    missing = values.isna().to_numpy() | raw.str.lower().isin(MISSING_TOKENS).to_numpy()
    num = pd.to_numeric(raw.where(~missing), errors="coerce").to_numpy(dtype=float)
    return num, bool((np.isnan(num) & ~missing).any())


def looks_like_ids(values: pd.Series, keys: list[pd.Series]) -> bool:
    """Whether a column holds item ids rather than scores: text (``w01``), or integers that
    repeat across systems as ids do (one value under two systems), or integers on more rows
    per ``keys`` (system; system and metric in a long file) than a file without an item column
    can hold. Floats, and integers each system has its own of, are scores.

    >>> system = pd.Series(["A", "B"])
    >>> looks_like_ids(pd.Series(["1", "1"]), [system])      # the same id under A and B
    True
    >>> looks_like_ids(pd.Series(["0.31", "0.52"]), [system])  # a metric called 'iter'
    False
    """
    num, text = numbers_or_text(values)
    if text:
        return True
    present = ~np.isnan(num)
    v = num[present]
    if not len(v) or not ((np.abs(v) < _MAX_ID) & (v == np.floor(v))).all():
        return False
    shared = pd.DataFrame({"s": keys[0].to_numpy()[present], "v": v}).drop_duplicates()
    if shared["v"].duplicated().any():
        return True
    return bool(pd.DataFrame({k: s.to_numpy() for k, s in enumerate(keys)}).duplicated().any())


def _evidence(key: str, frame: pd.DataFrame, column: str) -> bool:
    """A column close by spelling to an absent key is that key when its values say so."""
    if key == "item":
        keys = [frame["system"]] + ([frame["metric"]] if "metric" in frame.columns
                                    and "score" in frame.columns else [])
        return looks_like_ids(frame[column], keys)
    if key == "metric":  # metric names, not scores
        return numbers_or_text(frame[column])[1]
    return numbers_or_text(frame["metric"])[1]  # score: the file's metric column holds names


def misspelt_key(frame: pd.DataFrame, cols: list[str]) -> tuple[str, str] | None:
    """``(key, column)`` when a key column of a score file is absent but a column is that key
    misspelt, else ``None``. Read as they are, such a column would be taken for a metric (or
    the rows for system-level scores) and the error would name a score, not the column.

    A column is the key when its name is the key's up to case, plural, an id suffix and
    separators (``Item``, ``items``, ``item_id``, ``segment``, ``seg_id``, ``Segment ID``;
    ``Score``, ``metrics``), or when it is close by spelling (difflib ratio >= 0.75: ``itme``,
    ``metrc``) and its values are not scores (:func:`looks_like_ids` for ``item``; names in the
    metric column for ``metric`` and ``score``). A metric called ``iter`` is a metric.

    >>> frame = pd.DataFrame({"system": ["A", "B"], "itme": ["w1", "w1"], "comet": [.5, .6]})
    >>> misspelt_key(frame, list(frame.columns))
    ('item', 'itme')
    >>> frame = pd.DataFrame({"system": ["A", "B"], "iter": [0.31, 0.52], "comet": [.5, .6]})
    >>> misspelt_key(frame, list(frame.columns)) is None     # system-level scores
    True
    """
    wanted = [k for k, absent in (("item", "item" not in cols),
                                  ("score", "metric" in cols and "score" not in cols),
                                  ("metric", "score" in cols and "metric" not in cols)) if absent]
    others = [c for c in cols if c not in ("system", "item", "metric", "score", *META_COLUMNS)]
    for key in wanted:
        for c in others:
            if plain_name(c) in KEY_SPELLINGS[key]:
                return key, c
        for c in others:
            if difflib.SequenceMatcher(None, key, c.strip().lower()).ratio() >= 0.75 \
                    and _evidence(key, frame, c):
                return key, c
    return None


def refuse_misspelt_key(frame: pd.DataFrame, cols: list[str], file: str | Path | None) -> None:
    """Raise :class:`~nlgeval.errors.InputError` naming a column :func:`misspelt_key` finds.

    >>> frame = pd.DataFrame({"system": ["A", "B"], "Item": ["1", "1"], "comet": [.5, .6]})
    >>> refuse_misspelt_key(frame, list(frame.columns), "s.csv")
    Traceback (most recent call last):
    ...
    nlgeval.errors.InputError: s.csv, row 1, column 'Item': no 'item' column: did you mean ...
    """
    lookalike = misspelt_key(frame, cols)
    if lookalike is None:
        return
    key, col = lookalike
    why = ("without an 'item' column every score is read as a system-level score"
           if key == "item" else "a long file needs both a 'metric' and a 'score' column")
    raise InputError(f"no '{key}' column: did you mean '{key}'? (rename it: {why})",
                     file=file, row=header_row(file), column=col)


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
