"""The files of the WMT21 TED-talks MQM corpus: the per-error table and the averaged scores.

Freitag, Foster, Grangier, Ratnakar, Tan and Macherey (2021), google/wmt-mqm-human-evaluation:
``ende/mqm_ted_ende.tsv`` and ``zhen/mqm_ted_zhen.tsv`` (one row per annotated error) and
``mqm_ted_LP.avg_seg_scores.tsv``. How the corpus is built from them is described in
:mod:`nlgeval.corpora.wmt21_ted`.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import numpy as np
import pandas as pd

from nlgeval.corpora.wmt21_ted.mqm import (
    SEVERITIES,
    MQMWeights,
    breakdown_criterion,
    error_weights,
)
from nlgeval.errors import InputError
from nlgeval.io import ROW, check_columns, read_text_utf8

#: language pair -> (registered corpus name, folder code inside ``wmt21_ted_mqm``)
LANGUAGE_PAIRS: dict[str, tuple[str, str]] = {
    "en-de": ("wmt21-ted-ende", "ende"),
    "zh-en": ("wmt21-ted-zhen", "zhen"),
}
#: human translations: name in the error file -> (system name here, ``ref_id``)
HUMAN_TRANSLATIONS: dict[str, tuple[str, str]] = {"ref": ("refA", "A"), "refB": ("refB", "B")}
#: names of the human translations in the averaged-score file -> system name here
PUBLISHED_NAMES: dict[str, str] = {"ref-A": "refA", "ref-B": "refB"}
REQUIRED = ("system", "doc", "doc_id", "seg_id", "rater", "source", "target", "category",
            "severity")


def _lp(lp: str) -> tuple[str, str, str]:
    """Canonical language pair, corpus name and folder code (accepts ``en-de`` or ``ende``)."""
    key = str(lp).strip().lower()
    for canon, (name, code) in LANGUAGE_PAIRS.items():
        if key in (canon, code, name):
            return canon, name, code
    raise InputError(f"unknown language pair {lp!r} (have: {', '.join(LANGUAGE_PAIRS)})")


def errors_path(folder: str | Path, lp: str) -> Path:
    """The MQM error file of language pair ``lp`` in a ``wmt21_ted_mqm`` folder.

    Parameters
    ----------
    folder : str or Path
        A ``wmt21_ted_mqm`` folder.
    lp : str
        Language pair, ``"en-de"`` or ``"zh-en"``.

    Returns
    -------
    Path
        The path of the TSV file (not checked to exist).

    Examples
    --------
    >>> errors_path("corpora/wmt21_ted_mqm", "en-de").as_posix()
    'corpora/wmt21_ted_mqm/ende/mqm_ted_ende.tsv'
    """
    _, _, code = _lp(lp)
    return Path(folder) / code / f"mqm_ted_{code}.tsv"


def _read_tsv_unquoted(path: Path) -> pd.DataFrame:
    """A tab-separated file with quoting disabled, as strings, with the ``_row`` column.

    Written here rather than with :func:`nlgeval.io.read_table` because that reader honours
    CSV quotes, which these texts contain unbalanced (``csv.QUOTE_NONE`` is what the
    repository's own tools use). pandas' parser could read it too, but reports a ragged row as
    a parser exception whose message would have to be parsed for the line; splitting the lines
    with pandas' vectorised string methods gives the row directly.
    """
    text = read_text_utf8(path)
    lines = pd.Series(text.split("\n"), dtype=object)
    lines = lines.str.removesuffix("\r")
    if lines.empty or not str(lines.iloc[0]).strip():
        raise InputError("the file is empty; expected a header row", file=path, row=1)
    header = [h.strip() for h in str(lines.iloc[0]).split("\t")]
    body = lines.iloc[1:]
    rows = np.arange(2, len(lines) + 1)
    keep = (body.str.strip() != "").to_numpy()
    body, rows = body[keep], rows[keep]
    n_fields = body.str.count("\t").to_numpy() + 1
    bad = n_fields != len(header)
    if bad.any():
        pos = int(np.flatnonzero(bad)[0])
        raise InputError(
            f"has {n_fields[pos]} tab-separated fields but the header has {len(header)} "
            f"({', '.join(header)}); the file is read with quoting disabled",
            file=path, row=int(rows[pos]),
        )
    if len(body):
        df = body.str.split("\t", expand=True)
        df.columns = header
    else:
        df = pd.DataFrame(columns=header, dtype=object)
    df = df.reset_index(drop=True)
    df[ROW] = rows
    return df


def _strip_spans(s: pd.Series) -> pd.Series:
    return s.str.replace("<v>", "", regex=False).str.replace("</v>", "", regex=False)


def _positive_int(df: pd.DataFrame, column: str, path: Path) -> pd.Series:
    s = df[column].str.strip()
    ok = s.str.fullmatch(r"[0-9]+").fillna(False).to_numpy(dtype=bool)
    if not ok.all():
        pos = int(np.flatnonzero(~ok)[0])
        raise InputError(f"{df[column].iloc[pos]!r} is not a segment number", file=path,
                         row=int(df[ROW].iloc[pos]), column=column)
    return s.astype(int)


def _first_inconsistent(df: pd.DataFrame, keys: list[str], column: str) -> int | None:
    """Position of the first row whose ``column`` differs from the first row of its group."""
    first = df.groupby(keys, sort=False)[column].transform("first")
    bad = (df[column] != first).to_numpy()
    return int(np.flatnonzero(bad)[0]) if bad.any() else None


def read_errors(
    folder: str | Path,
    lp: str = "en-de",
    weights: MQMWeights | Mapping[str, float] | None = None,
) -> pd.DataFrame:
    """The per-error table of one language pair, checked, with plain texts and weights.

    Columns: ``system`` (``ref``/``refB`` renamed ``refA``/``refB``), ``system_label`` (the
    file's name), ``item`` (``seg_id`` as a string), ``seg_id`` (int), ``doc``, ``doc_seg_id``,
    ``rater``, ``source``, ``target`` (span markup removed), ``source_marked``,
    ``target_marked`` (as in the file), ``category``, ``severity``, ``weight``, ``criterion``
    (the breakdown criterion of the error, ``None`` for ``No-error``) and ``file_row`` (1-based
    line in the file; header = row 1).

    Parameters
    ----------
    folder : str or Path
        A ``wmt21_ted_mqm`` folder.
    lp : str, default "en-de"
        Language pair, ``"en-de"`` or ``"zh-en"``.
    weights : MQMWeights or Mapping[str, float], optional
        The weighting; default ``None``: Freitag et al. (2021).

    Returns
    -------
    pandas.DataFrame
        One row per error with the columns above.

    Examples
    --------
    >>> from nlgeval.corpora.descriptor import descriptor
    >>> from nlgeval.corpora.store import locate
    >>> folder = locate(descriptor("wmt21-ted-ende")).folder   # the local copy
    >>> errors = read_errors(folder, "en-de")
    >>> len(errors), errors.loc[0, ["rater", "severity"]].notna().all()
    (8435, np.True_)
    """
    path = errors_path(folder, lp)
    df = _read_tsv_unquoted(path)
    _check_fields(df, path)
    seg = _positive_int(df, "seg_id", path)
    doc_seg = _positive_int(df, "doc_id", path)
    system = df["system"].replace({k: v[0] for k, v in HUMAN_TRANSLATIONS.items()})
    out = pd.DataFrame(
        {
            "system": system,
            "system_label": df["system"],
            "item": seg.astype(str),
            "seg_id": seg,
            "doc": df["doc"],
            "doc_seg_id": doc_seg,
            "rater": df["rater"],
            "source": _strip_spans(df["source"]),
            "target": _strip_spans(df["target"]),
            "source_marked": df["source"],
            "target_marked": df["target"],
            "category": df["category"],
            "severity": df["severity"],
            "weight": error_weights(df["severity"], df["category"], weights),
            "criterion": breakdown_criterion(df["category"]),
            "file_row": df[ROW].to_numpy(),
        }
    )
    _check_consistent(out, path)
    return out


def _check_fields(df: pd.DataFrame, path: Path) -> None:
    """Required columns present, names stripped and non-empty, severities known, and
    ``No-error`` as both category and severity or neither (``df`` is changed in place)."""
    check_columns(df, REQUIRED, file=path)
    for col in ("system", "doc", "rater", "category", "severity"):
        s = df[col].str.strip()
        empty = (s == "").to_numpy()
        if empty.any():
            pos = int(np.flatnonzero(empty)[0])
            raise InputError(f"empty {col}", file=path, row=int(df[ROW].iloc[pos]), column=col)
        df[col] = s
    sev = df["severity"].str.lower()
    bad = ~sev.isin(SEVERITIES).to_numpy()
    if bad.any():
        pos = int(np.flatnonzero(bad)[0])
        raise InputError(
            f"unknown severity {df['severity'].iloc[pos]!r} (expected Major, Minor, Neutral or "
            "No-error)", file=path, row=int(df[ROW].iloc[pos]), column="severity",
        )
    no_err_cat = df["category"].str.lower() == "no-error"
    mismatch = (no_err_cat != (sev == "no-error")).to_numpy()
    if mismatch.any():
        pos = int(np.flatnonzero(mismatch)[0])
        raise InputError(
            f"category {df['category'].iloc[pos]!r} with severity {df['severity'].iloc[pos]!r}: "
            "a row without errors has both category and severity 'No-error'",
            file=path, row=int(df[ROW].iloc[pos]), column="severity",
        )


def _check_consistent(out: pd.DataFrame, path: Path) -> None:
    """One source, talk and position per segment; one translation per (system, segment)."""
    for keys, col in ((["item"], "source"), (["item"], "doc"), (["item"], "doc_seg_id"),
                      (["system", "item"], "target")):
        pos = _first_inconsistent(out, keys, col)
        if pos is not None:
            what = "translation" if col == "target" else col
            raise InputError(
                f"segment {out['item'].iloc[pos]}"
                + (f" of system '{out['system_label'].iloc[pos]}'" if col == "target" else "")
                + f" has a different {what} here than on its first row (after removing the "
                "<v>...</v> span markup)",
                file=path, row=int(out["file_row"].iloc[pos]),
                column={"doc_seg_id": "doc_id"}.get(col, col),
            )


def read_published_scores(folder: str | Path, lp: str = "en-de") -> pd.DataFrame:
    """The repository's ``mqm_ted_LP.avg_seg_scores.tsv``: ``system, item, score``.

    ``score`` is the MQM score averaged over raters (NaN where the file says ``None``: the
    segment was not rated for that system); ``ref-A``/``ref-B`` are renamed ``refA``/``refB``.
    The header line is separated by spaces and the data lines by tabs and spaces, so fields are
    split on any whitespace.

    Parameters
    ----------
    folder : str or Path
        A ``wmt21_ted_mqm`` folder.
    lp : str, default "en-de"
        Language pair, ``"en-de"`` or ``"zh-en"``.

    Returns
    -------
    pandas.DataFrame
        ``system, item, score``, one row per line of the file.

    Examples
    --------
    >>> from nlgeval.corpora.descriptor import descriptor
    >>> from nlgeval.corpora.store import locate
    >>> folder = locate(descriptor("wmt21-ted-ende")).folder   # the local copy
    >>> published = read_published_scores(folder, "en-de")
    >>> list(published.columns), len(published)
    (['system', 'item', 'score'], 8484)
    """
    _, _, code = _lp(lp)
    path = Path(folder) / code / f"mqm_ted_{code}.avg_seg_scores.tsv"
    lines = pd.Series(read_text_utf8(path).split("\n"), dtype=object)
    rows = np.arange(1, len(lines) + 1)
    keep = (lines.str.strip() != "").to_numpy()
    lines, rows = lines[keep], rows[keep]
    parts = lines.str.split().to_list()
    header = parts[0] if parts else []
    if header != ["system", "mqm_avg_score", "seg_id"]:
        raise InputError(f"unexpected header {header} (expected system mqm_avg_score seg_id)",
                         file=path, row=1)
    body = parts[1:]
    lens = np.array([len(p) for p in body])
    if (lens != 3).any():
        pos = int(np.flatnonzero(lens != 3)[0])
        raise InputError(f"has {lens[pos]} fields, expected 3", file=path, row=int(rows[pos + 1]))
    df = pd.DataFrame(body, columns=header)
    raw = df["mqm_avg_score"]
    score = pd.to_numeric(raw.where(raw != "None"), errors="coerce")
    bad = (score.isna() & (raw != "None")).to_numpy()
    if bad.any():
        pos = int(np.flatnonzero(bad)[0])
        raise InputError(f"{raw.iloc[pos]!r} is not a number or None", file=path,
                         row=int(rows[pos + 1]), column="mqm_avg_score")
    return pd.DataFrame(
        {
            "system": df["system"].replace(PUBLISHED_NAMES),
            "item": df["seg_id"].astype(int).astype(str),
            "score": score.astype(float),
        }
    )
