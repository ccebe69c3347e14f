"""Error spans (MQM, Freitag et al. 2021; ESA, Kocmi et al. 2024): the tidy span frame and the
segment scores computed from it.

**Span frame**: one row per marked error, ``rater, item, system, start, end, category,
severity`` -- character offsets into the output, ``start`` inclusive, ``end`` exclusive
(Python slicing: the marked text is ``text[start:end]``). An output judged without any error
is one row with empty ``start``/``end`` (and ``category``/``severity`` empty or ``No-error``),
so it still gets a score; an error with a severity but empty offsets is an error not located
in the output (e.g. an omission marked in the source): it counts in the scores, not in span
agreement. Severities: ``Minor``, ``Major``, ``Neutral`` (MQM), ``Critical``
(weighted as Major by Freitag et al. 2021's scheme unless weights say otherwise); an optional
``text`` column lets the offsets be checked against the output.

**MQM scores** (:func:`mqm_span_ratings`) are those of the WMT21 TED MQM corpus -- the same
functions (:func:`nlgeval.corpora.wmt21_ted.mqm.error_weights`, ``breakdown_criterion``,
``mqm_ratings``), which reproduce the repository's published segment averages: minus the sum of
the error weights (Major 5, Minor 1, Minor ``Fluency/Punctuation`` 0.1, ``Non-translation`` 25,
Neutral 0; Freitag et al. 2021), plus the per-category criteria ``MQM-Accuracy``,
``MQM-Fluency``, ... that add up to ``MQM``.

**ESA** (:func:`esa_ratings`): the rater's 0-100 score given with the marked spans in view
(Kocmi et al. 2024) as criterion ``ESA``, next to ``ESA-spans``, the score of the spans alone
with the MQM weights (minus 5 per major and 1 per minor error), and the span counts.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import numpy as np
import pandas as pd

from nlgeval.corpora.wmt21_ted.mqm import (
    MQMWeights,
    breakdown_criterion,
    error_weights,
    mqm_ratings,
)
from nlgeval.errors import InputError
from nlgeval.io import ROW

SPAN_COLUMNS = ("rater", "item", "system", "start", "end", "category", "severity")
#: severities in increasing order; code 0 = not marked
SEVERITY_ORDER = ("neutral", "minor", "major", "critical")


def _text(column: pd.Series) -> pd.Series:
    """A column as stripped strings, ``""`` where missing, whatever its dtype (numpy, object,
    ``str``, categorical, or pandas' nullable ``Int64``/``Int32``/``Float64``/``boolean``, whose
    missing value ``pd.NA`` the column cannot replace by ``""`` in place)."""
    values = column.astype(object)
    return values.where(column.notna(), "").astype(str).str.strip()


def check_spans(spans: pd.DataFrame, *, file: str | None = None) -> pd.DataFrame:
    """The span frame checked and cleaned: string ids, integer ``start``/``end`` (``-1`` for an
    output judged without errors), lowercase ``severity`` (``no-error`` on such rows), ``row``
    (the frame row, counted from 1, or the file row when read from a file). ``start``/``end``
    may be any integer, float or text column, pandas' nullable ``Int64``/``Int32`` included
    (an empty cell is ``pd.NA`` there); an offset missing on one side only is an
    :class:`~nlgeval.errors.InputError` naming its row and column.

    Parameters
    ----------
    spans : pandas.DataFrame
        Error spans, columns ``SPAN_COLUMNS`` (optional ``text``).
    file : str, optional
        The file name for error messages (None: the frame itself).

    Returns
    -------
    pandas.DataFrame
        The cleaned copy described above.

    Examples
    --------
    >>> import pandas as pd
    >>> s = pd.DataFrame({"rater": "r1", "item": 1, "system": "A", "start": [0, None],
    ...                   "end": [4, None], "category": ["Accuracy/Omission", ""],
    ...                   "severity": ["Major", ""]})
    >>> check_spans(s)[["start", "end", "severity"]].values.tolist()
    [[0, 4, 'major'], [-1, -1, 'no-error']]
    """
    if not isinstance(spans, pd.DataFrame):
        raise InputError(f"spans must be a DataFrame, got {type(spans).__name__}")
    missing = [c for c in SPAN_COLUMNS if c not in spans.columns]
    if missing:
        raise InputError("error spans need columns " + ", ".join(SPAN_COLUMNS) + "; missing "
                         + ", ".join(missing), file=file)
    df = spans.reset_index(drop=True).copy()
    df["row"] = df[ROW].to_numpy() if ROW in df.columns else np.arange(1, len(df) + 1)

    def fail(mask: np.ndarray, msg: str, column: str) -> None:
        if mask.any():
            pos = int(np.flatnonzero(mask)[0])
            raise InputError(msg.format(v=df[column].iloc[pos]), file=file,
                             row=int(df["row"].iloc[pos]), column=column)

    for c in ("rater", "item", "system"):
        s = _text(df[c])
        fail((s == "").to_numpy(), f"missing {c} identifier", c)
        df[c] = s
    for c in ("category", "severity"):
        df[c] = _text(df[c])
    raw = {c: _text(df[c]) for c in ("start", "end")}
    num = {c: pd.to_numeric(raw[c].where(raw[c] != "", None), errors="coerce") for c in raw}
    checked = (num["start"] == -1) & (num["end"] == -1)  # already checked: -1 = no offsets
    pos = {}
    for c in ("start", "end"):
        n = num[c].where(~checked)
        fail((raw[c] != "").to_numpy() & ~checked.to_numpy()
             & ~(n.notna() & (n == n.round()) & (n >= 0)).to_numpy(),
             f"{c} must be a character offset (an integer >= 0), got {{v!r}}", c)
        pos[c] = n
    empty = pos["start"].isna() & pos["end"].isna()
    half = (pos["start"].isna() != pos["end"].isna()).to_numpy()
    fail(half, "a span needs both start and end (both empty for an output without errors)",
         "start" if half.any() and pd.isna(pos["start"].iloc[half.argmax()]) else "end")
    fail((~empty & (pos["end"] <= pos["start"])).to_numpy(),
         "end must be greater than start (offsets are [start, end)), got end {v!r}", "end")
    sev = df["severity"].str.lower()
    sev = sev.where(~(empty & sev.isin(["", "no-error"])), "no-error")
    fail((~sev.isin((*SEVERITY_ORDER, "no-error"))).to_numpy(),
         "unknown severity {v!r} (expected Minor, Major, Neutral or Critical)", "severity")
    df["severity"] = sev
    df["category"] = df["category"].where(sev != "no-error", "No-error")
    df["start"] = pos["start"].fillna(-1).astype(int)
    df["end"] = pos["end"].fillna(-1).astype(int)
    if "text" in df.columns:
        n = df["text"].fillna("").astype(str).str.len()
        fail((df["end"] > n).to_numpy(), "end {v!r} is beyond the end of the output text", "end")
    return df


def read_spans(path: str | Path) -> pd.DataFrame:
    """Read a span file (CSV, TSV, JSONL or Parquet; columns ``SPAN_COLUMNS``, optional
    ``text``) and check it (:func:`check_spans`); errors name the file row.

    Parameters
    ----------
    path : str or pathlib.Path
        The span file.

    Returns
    -------
    pandas.DataFrame
        The checked span frame (see :func:`check_spans`).

    Examples
    --------
    >>> import tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "spans.csv"
    >>> _ = path.write_text("rater,item,system,start,end,category,severity\\n"
    ...                     "r1,1,A,0,4,Accuracy/Omission,Major\\nr1,2,A,,,,\\n")
    >>> read_spans(path)["severity"].tolist()
    ['major', 'no-error']
    """
    from nlgeval.io import read_table

    df = read_table(path, SPAN_COLUMNS)
    return check_spans(df, file=str(path)).drop(columns=[ROW])


def mqm_span_ratings(spans: pd.DataFrame, *,
                     weights: MQMWeights | Mapping[str, float] | None = None,
                     breakdown: bool = True) -> pd.DataFrame:
    """MQM segment scores from error spans (module docstring): ``rater, item, system,
    criterion, score, n_major, n_minor, n_neutral`` with criterion ``MQM`` and, with
    ``breakdown``, ``MQM-Accuracy``, ``MQM-Fluency``, ... (as the WMT21 TED corpus). A
    ``Critical`` error counts as ``Major``.

    Parameters
    ----------
    spans : pandas.DataFrame
        Error spans (see :func:`check_spans`).
    weights : MQMWeights or mapping of str to float, optional
        Error weights (None: the default :class:`MQMWeights` of Freitag et al. 2021).
    breakdown : bool, default True
        Add one criterion per top-level error category.

    Returns
    -------
    pandas.DataFrame
        Tidy ratings with the columns above.

    Examples
    --------
    >>> import pandas as pd
    >>> s = pd.DataFrame({"rater": "r1", "item": ["1", "1", "2"], "system": "A",
    ...                   "start": [0, 10, None], "end": [4, 11, None],
    ...                   "category": ["Accuracy/Mistranslation", "Fluency/Punctuation", ""],
    ...                   "severity": ["Major", "Minor", ""]})
    >>> r = mqm_span_ratings(s)
    >>> r.loc[r["criterion"] == "MQM", ["item", "score"]].values.tolist()   # -(5 + 0.1), 0
    [['1', -5.1], ['2', 0.0]]
    """
    df = check_spans(spans)
    sev = df["severity"].replace({"critical": "major", "no-error": "No-error"})
    errors = pd.DataFrame({
        "system": df["system"], "item": df["item"], "rater": df["rater"],
        "severity": sev, "weight": error_weights(sev, df["category"], weights),
        "criterion": breakdown_criterion(df["category"]), "file_row": df["row"],
    })
    out = mqm_ratings(errors, breakdown=breakdown).drop(columns=[ROW])
    return out.reset_index(drop=True)


def esa_ratings(scores: pd.DataFrame, spans: pd.DataFrame) -> pd.DataFrame:
    """ESA (Kocmi et al. 2024): ``scores`` (``rater, item, system, score`` on 0-100) with the
    rater's ``spans`` -> tidy ``rater, item, system, criterion, score, n_major, n_minor``
    with criteria ``ESA`` (the 0-100 score) and ``ESA-spans`` (minus 5 per major, 1 per minor
    error). Every scored output must be in ``spans`` (a no-error row if nothing was marked)
    and vice versa.

    Parameters
    ----------
    scores : pandas.DataFrame
        ``rater, item, system, score`` (0-100).
    spans : pandas.DataFrame
        The same raters' error spans (see :func:`check_spans`).

    Returns
    -------
    pandas.DataFrame
        Tidy ratings with the columns above, criteria ``ESA`` and ``ESA-spans``.

    Examples
    --------
    >>> import pandas as pd
    >>> sc = pd.DataFrame({"rater": "r1", "item": ["1", "2"], "system": "A", "score": [62, 95]})
    >>> sp = pd.DataFrame({"rater": "r1", "item": ["1", "1", "2"], "system": "A",
    ...                    "start": [0, 8, None], "end": [5, 9, None], "category": "",
    ...                    "severity": ["major", "minor", ""]})
    >>> esa_ratings(sc, sp)[["item", "criterion", "score", "n_major"]]
      item  criterion  score  n_major
    0    1        ESA   62.0        1
    1    2        ESA   95.0        0
    2    1  ESA-spans   -6.0        1
    3    2  ESA-spans    0.0        0
    """
    sp = check_spans(spans)
    need = ["rater", "item", "system", "score"]
    missing = [c for c in need if c not in scores.columns]
    if missing:
        raise InputError("ESA scores need columns rater, item, system, score; missing "
                         + ", ".join(missing))
    sc = scores[need].copy()
    for c in ("rater", "item", "system"):
        sc[c] = sc[c].astype(str).str.strip()
    sc["score"] = pd.to_numeric(sc["score"], errors="coerce")
    bad = (sc["score"].isna() | (sc["score"] < 0) | (sc["score"] > 100)).to_numpy()
    if bad.any():
        pos = int(np.flatnonzero(bad)[0])
        raise InputError(f"ESA score in row {pos + 1} must be a number from 0 to 100, got "
                         f"{scores['score'].iloc[pos]!r}", row=pos + 1, column="score")
    keys = ["rater", "item", "system"]
    dup = sc.duplicated(keys).to_numpy()
    if dup.any():
        pos = int(np.flatnonzero(dup)[0])
        raise InputError(f"ESA score in row {pos + 1} repeats the score of rater "
                         f"{sc['rater'].iloc[pos]!r} for item {sc['item'].iloc[pos]!r}, system "
                         f"{sc['system'].iloc[pos]!r}", row=pos + 1, column="score")
    counts = sp.assign(major=sp["severity"].isin(["major", "critical"]).astype(int),
                       minor=(sp["severity"] == "minor").astype(int)
                       ).groupby(keys, sort=False)[["major", "minor"]].sum()
    m = sc.merge(counts.reset_index(), on=keys, how="outer", indicator=True)
    if (m["_merge"] != "both").any():
        row = m[m["_merge"] != "both"].iloc[0]
        where = "spans but no ESA score" if row["_merge"] == "right_only" else \
            "an ESA score but no span rows (add a no-error row)"
        raise InputError(f"output (rater {row['rater']!r}, item {row['item']!r}, system "
                         f"{row['system']!r}) has {where}")
    m = m.rename(columns={"major": "n_major", "minor": "n_minor"})
    esa = m.assign(criterion="ESA", score=m["score"].astype(float))
    spn = m.assign(criterion="ESA-spans",
                   score=-(5.0 * m["n_major"] + 1.0 * m["n_minor"]) + 0.0)
    cols = ["rater", "item", "system", "criterion", "score", "n_major", "n_minor"]
    return pd.concat([esa[cols], spn[cols]], ignore_index=True)
