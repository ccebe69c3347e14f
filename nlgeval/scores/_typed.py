"""The fast path of :func:`nlgeval.scores.read_scores` and :func:`ratings_corpus` for large,
plain files: typed columns (:func:`nlgeval.io.typed.read_typed`) turned into the same tidy frame
as the checking path, with categories instead of a string per cell (issue 29: 5 M scored
outputs in 4 GB). Anything unusual -- optional columns, an empty name, a duplicate -- returns
``None`` and the checking path reads the file and names the problem.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from nlgeval.io import ROW
from nlgeval.io.typed import read_typed, tidy_categorical
from nlgeval.scores._columns import misspelt_key
from nlgeval.scores._parse import MISSING_TOKENS

_ITEM_MISSING = ("nan", "none", "null")


def _used_empty(cat: pd.Categorical) -> bool:
    hit = np.flatnonzero(cat.categories == "")
    return bool(len(hit)) and bool((np.asarray(cat.codes) == hit[0]).any())


def _repeat(cat: pd.Categorical, k: int) -> pd.Categorical:
    return pd.Categorical.from_codes(np.tile(np.asarray(cat.codes), k), dtype=cat.dtype)


def _constant(value: object, n: int) -> pd.Categorical:
    return pd.Categorical.from_codes(np.zeros(n, dtype=np.int8),
                                     categories=pd.Index([value], dtype=str))


def _has_duplicates(*cats: pd.Categorical) -> bool:
    """Any row twice? One integer key per row, sorted (no hash table of millions of keys)."""
    key = np.zeros(len(cats[0]), dtype=np.int64)
    for c in cats:
        key *= len(c.categories) + 1
        key += np.asarray(c.codes, dtype=np.int64)
    key.sort()
    return bool((key[1:] == key[:-1]).any())


def _labels(names: list[str], n: int) -> pd.Categorical:
    """``names[0]`` n times, then ``names[1]`` n times, ... as a sorted categorical."""
    codes = np.repeat(np.arange(len(names), dtype=np.int8 if len(names) < 127 else np.int32), n)
    return tidy_categorical(pd.Categorical.from_codes(codes, categories=pd.Index(names)))


def typed_scores(path: Path, metric: str | None) -> pd.DataFrame | None:
    """A plain wide or long score file (no optional columns) as the tidy frame of
    :func:`nlgeval.scores.tidy_scores`, with categorical names, or ``None``."""
    df = read_typed(path, ["system", "item", "metric"], missing=MISSING_TOKENS)
    if df is None or "system" not in df.columns:
        return None
    n = len(df)
    cols = [c for c in df.columns if c != ROW]
    if misspelt_key(df, cols) is not None:  # the checking path names the column
        return None
    system = df["system"].array
    item = (tidy_categorical(df["item"].array, _ITEM_MISSING) if "item" in df.columns
            else _constant("", n))
    if _used_empty(system):
        return None
    if "metric" in cols:
        if "score" not in cols or _used_empty(df["metric"].array):
            return None
        names = df["metric"].array
        parts = {"metric": names, "system": system, "item": item,
                 "score": df["score"].to_numpy(), ROW: df[ROW].to_numpy(),
                 "_column": _constant("metric", n)}
    else:
        metric_cols = [c for c in cols if c not in ("system", "item")]
        if metric == "score" or (metric and metric_cols == ["score"]):
            metric_cols = ["score"]
        if not metric_cols:
            return None
        shown = [metric if (metric and metric_cols == ["score"]) else c for c in metric_cols]
        k = len(metric_cols)
        if len(set(shown)) < k:
            return None
        parts = {"metric": _labels(shown, n), "system": _repeat(system, k),
                 "item": _repeat(item, k),
                 "score": np.concatenate([df[c].to_numpy() for c in metric_cols]),
                 ROW: np.tile(df[ROW].to_numpy(), k),
                 "_column": _labels(metric_cols, n)}
    if _has_duplicates(parts["metric"], parts["system"], parts["item"]):
        return None
    m = len(parts["score"])
    out = pd.DataFrame({
        "metric": parts["metric"], "system": parts["system"], "item": parts["item"],
        "score": parts["score"], "criterion": _constant("", m),
        "higher_is_better": pd.Categorical.from_codes(np.full(m, -1, dtype=np.int8),
                                                      categories=[False, True]),
        "human": np.zeros(m, dtype=bool), "_source": _constant(str(path), m),
        "_row": parts[ROW], "_column": parts["_column"]}, copy=False)
    return out


def typed_ratings(path: Path) -> pd.DataFrame | None:
    """A plain ratings file (``system, item, criterion, score``, optionally ``rater``; no other
    column, no missing score) with categorical names, or ``None``."""
    df = read_typed(path, ["system", "item", "criterion", "rater"], missing=MISSING_TOKENS)
    if df is None:
        return None
    cols = set(df.columns) - {ROW}
    if not {"system", "item", "criterion", "score"} <= cols \
            or not cols <= {"system", "item", "criterion", "score", "rater"}:
        return None
    if df["score"].isna().any():
        return None
    return df
