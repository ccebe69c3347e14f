"""Validation of the frames of a :class:`nlgeval.corpus.Corpus` on construction: identifiers,
empty texts, scales, every item referenced and every rating on an existing output; errors name
the file, row and column (:mod:`nlgeval.errors`)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Literal

import numpy as np
import pandas as pd

from nlgeval.errors import InputError
from nlgeval.io import ROW, check_columns, check_nonempty_text, check_unique, row_of, to_numeric

if TYPE_CHECKING:  # pragma: no cover
    from nlgeval.corpus.info import CorpusInfo

OUTPUT_COLUMNS = ("system", "item", "text")
REFERENCE_COLUMNS = ("item", "ref_id", "text")
RATING_COLUMNS = ("rater", "item", "system", "criterion", "score")


def _as_frame(
    obj: pd.DataFrame | None, columns: Sequence[str], what: str, file: str | Path | None
) -> pd.DataFrame:
    if obj is None:
        return pd.DataFrame({c: pd.Series(dtype=object) for c in columns})
    if not isinstance(obj, pd.DataFrame):
        raise InputError(f"{what} must be a pandas DataFrame, got {type(obj).__name__}")
    check_columns(obj, columns, file=file)
    return obj


def _strip_ids(df: pd.DataFrame, cols: Iterable[str], file: str | Path | None) -> pd.DataFrame:
    df = df.copy()
    for c in cols:
        s = df[c]
        if s.isna().any():
            pos = int(np.flatnonzero(s.isna().to_numpy())[0])
            raise InputError("missing identifier", file=file, row=row_of(df, pos), column=c)
        df[c] = _stripped_text(s)
        empty = df[c] == ""
        if empty.any():
            pos = int(np.flatnonzero(empty.to_numpy())[0])
            raise InputError("empty identifier", file=file, row=row_of(df, pos), column=c)
    return df


def _stripped_text(column: pd.Series) -> pd.Series:
    """``column.astype(str).str.strip()`` of a column without missing values; a categorical
    (a typed file of millions of rows) by stripping each category once and taking the strings
    by code: the same values and dtype without a string operation per row."""
    if isinstance(column.dtype, pd.CategoricalDtype) and len(column):
        names = column.cat.categories.astype(str).str.strip()
        return pd.Series(names.take(column.cat.codes.to_numpy()), index=column.index,
                         name=column.name)
    return column.astype(str).str.strip()


def _valid_outputs(outputs: pd.DataFrame, file: str | Path | None,
                   empty_outputs: Literal["error", "keep"], notes: list[str]) -> pd.DataFrame:
    """Outputs with stripped ids, unique (system, item), and empty texts refused or kept
    (``empty_outputs="keep"`` appends a note to ``notes``)."""
    out = _as_frame(outputs, OUTPUT_COLUMNS, "outputs", file)
    out = _strip_ids(out, ("system", "item"), file)
    out["text"] = out["text"].fillna("").astype(str)
    check_unique(out, ("system", "item"), file=file, what="output")
    empty = out["text"].str.strip() == ""
    if empty.any():
        if empty_outputs == "error":
            check_nonempty_text(out, "text", file=file, what="system output")
        notes.append(f"{int(empty.sum())} empty system output(s) kept as ''")
        out.loc[empty, "text"] = ""
    return out


def _valid_references(references: pd.DataFrame | None, file: str | Path | None) -> pd.DataFrame:
    """References with stripped ids, non-empty texts and unique (item, ref_id)."""
    ref = _as_frame(references, REFERENCE_COLUMNS, "references", file)
    ref = _strip_ids(ref, ("item", "ref_id"), file)
    ref["text"] = ref["text"].fillna("").astype(str)
    if len(ref):
        check_nonempty_text(ref, "text", file=file, what="reference")
        check_unique(ref, ("item", "ref_id"), file=file, what="reference")
    return ref


def _check_every_item_has_references(out: pd.DataFrame, ref: pd.DataFrame,
                                     file: str | Path | None) -> None:
    """Raise at the first output whose item has no reference."""
    missing = ~out["item"].isin(set(ref["item"]))
    if missing.any():
        pos = int(np.flatnonzero(missing.to_numpy())[0])
        raise InputError(
            f"output for item '{out['item'].iloc[pos]}' has no reference "
            f"({int(missing.sum())} output(s) in all; every item needs at least one "
            "reference, or build the corpus with require_references=False)",
            file=file,
            row=row_of(out, pos),
            column="item",
        )


def _valid_ratings(ratings: pd.DataFrame | None, info: CorpusInfo, out: pd.DataFrame,
                   file: str | Path | None) -> pd.DataFrame:
    """Ratings with stripped ids, numeric scores inside their criterion's declared scale,
    one judgement per (rater, item, system, criterion), each of an existing output."""
    rat = _as_frame(ratings, RATING_COLUMNS, "ratings", file)
    rat = _strip_ids(rat, ("rater", "item", "system", "criterion"), file)
    rat["score"] = to_numeric(rat, "score", file=file, what="a numeric score")
    if len(rat):
        check_unique(rat, ("rater", "item", "system", "criterion"), file=file, what="judgement")
        _check_scales(rat, info, file)
        _check_rated_outputs_exist(rat, out, file)
    return rat


def _check_scales(rat: pd.DataFrame, info: CorpusInfo, file: str | Path | None) -> None:
    """Every criterion is declared in ``info`` and every score lies on its scale."""
    known_criteria = {c.name: c for c in info.criteria}
    for crit_name, sub in rat.groupby("criterion", sort=False):
        crit = known_criteria.get(str(crit_name))
        if crit is None:
            pos = int(np.flatnonzero((rat["criterion"] == crit_name).to_numpy())[0])
            known = ", ".join(known_criteria) or "none declared"
            raise InputError(
                f"criterion '{crit_name}' has no declared scale (declared: {known})",
                file=file,
                row=row_of(rat, pos),
                column="criterion",
            )
        bad = (sub["score"] < crit.min) | (sub["score"] > crit.max)
        if bad.any():
            i = sub.index[np.flatnonzero(bad.to_numpy())[0]]
            pos = rat.index.get_loc(i)
            raise InputError(
                f"score {sub['score'].loc[i]:g} is outside the scale of "
                f"'{crit.name}' [{crit.min:g}, {crit.max:g}]",
                file=file,
                row=row_of(rat, pos),
                column="score",
            )


def _check_rated_outputs_exist(rat: pd.DataFrame, out: pd.DataFrame,
                               file: str | Path | None) -> None:
    """Raise at the first rating whose (system, item) is not an output."""
    keys = pd.MultiIndex.from_frame(out[["system", "item"]])
    rkeys = pd.MultiIndex.from_frame(rat[["system", "item"]])
    unknown = ~rkeys.isin(keys)
    if unknown.any():
        pos = int(np.flatnonzero(unknown)[0])
        raise InputError(
            f"rating for system '{rat['system'].iloc[pos]}', item "
            f"'{rat['item'].iloc[pos]}' has no matching output",
            file=file,
            row=row_of(rat, pos),
            column="system",
        )


def _canonical(df: pd.DataFrame, cols: Sequence[str]) -> pd.DataFrame:
    """The canonical columns first, extra columns after, without the ``_row`` bookkeeping."""
    extra = [c for c in df.columns if c not in cols and c != ROW]
    return df[list(cols) + extra].reset_index(drop=True)
