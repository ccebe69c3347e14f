"""Metric scores computed elsewhere ("bring your own scores") and human-only studies.

The metrics researchers most need to validate -- COMET, BLEURT, MetricX, BERTScore, an LLM
judge, an in-house scorer -- usually arrive as a file of numbers computed on another machine.
:func:`read_scores` reads such a file into nlgeval's tidy long format, so that
``run_validation(..., scores=...)`` treats those metrics exactly like the ones nlgeval computes.

File shapes (CSV, TSV, JSONL or Parquet, optionally gzip-compressed, e.g. ``scores.tsv.gz``),
detected from the header:

``wide``  ``system, item, <metric1>, <metric2>, ...`` -- one column per metric;
``long``  ``system, item, metric, score`` -- one row per (output, metric).

``item`` may be absent, or empty on some rows: such rows are *system-level* scores (one number
per system, as corpus-level metrics and LLM rankings give); a metric that has only those is used
at system level only. Missing values (an empty cell, ``NaN``, ``NA``, ``None`` as MTME writes it,
``null``) are missing: kept as NaN, counted and reported. Anything else that is not a finite
number is an error naming the file, row and column.

:func:`ratings_corpus` turns a tidy ratings table (``rater, item, system, criterion, score``,
``rater`` optional for already-aggregated scores) into a :class:`~nlgeval.corpus.Corpus` without
texts, for a validation study that only has human and metric scores.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar

import numpy as np
import pandas as pd

from nlgeval.errors import InputError
from nlgeval.io import ROW, header_row
from nlgeval.io.typed import arrow_memory_errors
from nlgeval.results import Result
from nlgeval.scores._checks import (
    RatedKeys,
    _check_known_outputs,
    _check_known_systems,
    _check_no_builtin_names,
    _coverage,
    _coverage_notes,
)
from nlgeval.scores._columns import (
    META_COLUMNS,
    bind_by_criterion,
    fill_metadata,
    metric_directions,
    per_metric,
    refuse_misspelt_key,
    row_metadata,
)
from nlgeval.scores._parse import MISSING_TOKENS as MISSING_TOKENS
from nlgeval.scores._parse import _read_maybe_gzip, _to_float
from nlgeval.scores._ratings import human_flagged, ratings_corpus
from nlgeval.scores._typed import typed_scores

#: Columns of the tidy frame :func:`read_scores` returns. ``item`` is ``""`` for a system-level
#: score; ``_source``/``_row`` locate each value in its file (for error messages).
SCORE_COLUMNS = ("metric", "system", "item", "score")


__all__ = [
    "ScoreCheck",
    "check_scores",
    "combine_scores",
    "human_flagged",
    "metric_count",
    "ratings_corpus",
    "read_scores",
    "tidy_scores",
]

def _long_from_wide(
    df: pd.DataFrame, cols: list[str], metric: str | None, file: str | Path | None
) -> pd.DataFrame:
    """Stack the metric columns of a wide score frame (``system, item, <metric>...``)."""
    if "higher_is_better" in cols:
        raise InputError("a 'higher_is_better' column needs the long shape (system, item, "
                         "metric, score, higher_is_better); for a wide file use "
                         "--lower-is-better NAME", file=file, row=header_row(file),
                         column="higher_is_better")
    metric_cols = [c for c in cols if c not in ("system", "item", *META_COLUMNS)]
    if metric == "score" or (metric and metric_cols == ["score"]):
        metric_cols = ["score"]
    if not metric_cols:
        raise InputError("no metric columns: a wide score file has system, item and one "
                         "column per metric", file=file, row=header_row(file))
    meta = row_metadata(df, file, ROW)
    parts = []
    for c in metric_cols:
        name = metric if (metric and metric_cols == ["score"]) else c
        parts.append(pd.DataFrame({
            "metric": name, "system": df["system"].to_numpy(),
            "item": df["item"].to_numpy(), ROW: df[ROW].to_numpy(),
            "score": _to_float(df[c], file, df[ROW], c).to_numpy(),
            **{k: meta[k].to_numpy() for k in META_COLUMNS}, "_column": c}))
    return pd.concat(parts, ignore_index=True)


def _check_duplicates(long: pd.DataFrame, file: str | Path | None) -> None:
    """One score per (metric, system, item): name the rows of the first duplicate."""
    dup = long.duplicated(["metric", "system", "item"], keep=False)
    if dup.any():
        first = long[dup].iloc[0]
        same = long[dup & (long["metric"] == first["metric"]) & (long["system"] ==
                                                                  first["system"])
                    & (long["item"] == first["item"])]
        where = f"item '{first['item']}'" if first["item"] else "system level (no item)"
        raise InputError(
            f"duplicate score for metric '{first['metric']}', system '{first['system']}', "
            f"{where} in rows {', '.join(str(int(r)) for r in same[ROW].iloc[:5])}",
            file=file, row=int(same[ROW].iloc[1]), column="item")


def tidy_scores(
    frame: pd.DataFrame, *, file: str | Path | None = None, metric: str | None = None
) -> pd.DataFrame:
    """Validate a wide or long score frame and return it long: ``metric, system, item, score``.

    Works on frames read from a file (cells as strings, with a ``_row`` column) and on frames a
    user builds in Python (numbers, any index). ``metric`` names the single score column of a
    ``system, item, score`` frame.

    Parameters
    ----------
    frame : pandas.DataFrame
        Wide or long scores.
    file : str or Path, optional
        The file the frame was read from, for error messages.
    metric : str, optional
        Name of the single score column of a ``system, item, score`` frame.

    Returns
    -------
    pandas.DataFrame
        ``metric, system, item, score``, the optional columns, ``_source``, ``_row``, ``_column``.

    Examples
    --------
    A wide frame (one column per metric) becomes long:

    >>> wide = pd.DataFrame({"system": ["A", "B"], "item": ["1", "1"], "m1": [0.5, 0.7]})
    >>> tidy_scores(wide)[["metric", "system", "item", "score"]].values.tolist()
    [['m1', 'A', '1', 0.5], ['m1', 'B', '1', 0.7]]
    """
    if not isinstance(frame, pd.DataFrame):
        raise InputError(f"scores must be a pandas DataFrame, got {type(frame).__name__}")
    df = frame.reset_index(drop=True)  # a copy; positions, not a (duplicated) index
    df.columns = [str(c).strip() for c in df.columns]
    if ROW not in df.columns:
        df[ROW] = np.arange(2, len(df) + 2)
    cols = [c for c in df.columns if c != ROW]
    if "system" not in cols:
        raise InputError(
            "a score file needs a 'system' column (wide: system, item, <metric>...; long: "
            f"system, item, metric, score); found: {', '.join(cols) or 'none'}",
            file=file, row=header_row(file))
    refuse_misspelt_key(df, cols, file)
    if "item" not in df.columns:
        df["item"] = ""
    for c in ("system", "item"):
        s = df[c]
        df[c] = s.where(s.notna(), "").astype(str).str.strip()
        if c == "item":
            df[c] = df[c].where(~df[c].str.lower().isin(["nan", "none", "null"]), "")
    empty_sys = df["system"] == ""
    if empty_sys.any():
        pos = int(np.flatnonzero(empty_sys.to_numpy())[0])
        raise InputError("empty system name", file=file, row=int(df[ROW].iloc[pos]),
                         column="system")
    if "metric" in cols and "score" in cols:  # long
        df["metric"] = df["metric"].astype(str).str.strip()
        bad = df["metric"] == ""
        if bad.any():
            pos = int(np.flatnonzero(bad.to_numpy())[0])
            raise InputError("empty metric name", file=file, row=int(df[ROW].iloc[pos]),
                             column="metric")
        long = df[["metric", "system", "item", ROW]].copy()
        long["score"] = _to_float(df["score"], file, df[ROW], "score")
        long = long.join(row_metadata(df, file, ROW)).assign(_column="metric")
    else:
        long = _long_from_wide(df, cols, metric, file)
    long = bind_by_criterion(long, file)  # (ROW is "_row")
    metric_directions(long, file)
    _check_duplicates(long, file)
    long["_source"] = "" if file is None else str(file)
    long = long.rename(columns={ROW: "_row"})
    return long[[*SCORE_COLUMNS, *META_COLUMNS, "_source", "_row", "_column"]
                ].reset_index(drop=True)


def read_scores(path: str | Path, *, metric: str | None = None) -> pd.DataFrame:
    """Read a metric-score file (wide or long; see the module docstring) into a tidy frame.

    Returns ``metric, system, item, score, _source, _row`` (``item`` is ``""`` for a
    system-level score; ``score`` NaN where missing). Raises :class:`~nlgeval.errors.InputError`
    naming the file, row and column for anything that is not a score.

    Parameters
    ----------
    path : str or Path
        A CSV/TSV/JSON-lines/Parquet score file, possibly gzipped.
    metric : str, optional
        Name of the single score column of a ``system, item, score`` file.

    Returns
    -------
    pandas.DataFrame
        The tidy scores described above.

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     f = Path(tmp) / "scores.csv"
    ...     _ = f.write_text("system,item,m1\\nA,1,0.5\\nB,1,0.7\\n", encoding="utf-8")
    ...     print(read_scores(f)["score"].tolist())
    [0.5, 0.7]
    """
    path = Path(path)
    if not path.exists():
        raise InputError("file not found", file=path)
    with arrow_memory_errors():
        typed = typed_scores(path, metric)  # large plain files: typed columns (_typed.py)
        out = (typed if typed is not None
               else tidy_scores(_read_maybe_gzip(path), file=path, metric=metric))
    if not len(out):  # a header only: a study would run on nothing from this file
        raise InputError("no scores: the file has a header but no rows", file=path, row=2)
    return out


def metric_count(path: str | Path) -> int:
    """How many metrics a score file holds at least, from its header alone (the body is not
    read): the metric columns of a wide file; 1 for a long file (``metric, score``) or a file
    whose header cannot be read without reading it all (compressed, JSON lines).

    A lower bound, so that ``nlgeval validate`` can estimate a study's memory before it reads
    the scores (:func:`nlgeval.parallel.memory.estimate_study_memory`).

    Parameters
    ----------
    path : str or Path
        A score file (see :func:`read_scores`).

    Returns
    -------
    int
        The number of metric columns of a wide file, else 1.

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     f = Path(tmp) / "scores.csv"
    ...     _ = f.write_text("system,item,m1,m2,human\\nA,1,0.5,0.1,no\\n", encoding="utf-8")
    ...     print(metric_count(f))
    2
    """
    from nlgeval.io.typed import header_names

    names = header_names(Path(path)) if Path(path).is_file() else None
    if not names or "metric" in names:
        return 1
    return max(1, len([c for c in names if c not in ("system", "item", *META_COLUMNS)]))


@dataclass(frozen=True)
class ScoreCheck(Result):
    """External scores checked against the corpus: the usable frames and what was found.

    Returned by :func:`check_scores`; ``to_dict`` leaves the two frames out.

    Examples:
        >>> outputs = pd.DataFrame({"system": ["A", "B"], "item": ["1", "1"]})
        >>> scores = pd.DataFrame({"system": ["A", "B"], "item": ["1", "1"], "m1": [0.5, 0.7]})
        >>> check_scores(scores, outputs, outputs).to_dict()["coverage"]
        {'m1': 1.0}
    """

    _omit: ClassVar[frozenset[str]] = frozenset({"segments", "systems"})

    segments: pd.DataFrame  # metric, system, item, score  (per output)
    systems: pd.DataFrame  # metric, system, score  (system-level rows)
    metrics: tuple[str, ...]
    system_only: tuple[str, ...]
    coverage: dict[str, float]
    n_missing: dict[str, int]
    sources: dict[str, str]
    notes: tuple[str, ...] = field(default=())
    bound: dict[str, str] = field(default_factory=dict)  # metric -> its criterion
    higher_is_better: dict[str, bool] = field(default_factory=dict)  # as the file says
    human_systems: tuple[str, ...] = field(default=())  # flagged in a 'human' column


def check_scores(
    scores: pd.DataFrame,
    outputs: pd.DataFrame,
    rated: pd.DataFrame,
    *,
    builtin: Collection[str] = (),
    min_coverage: float = 0.5,
) -> ScoreCheck:
    """Check tidy external scores against a corpus's outputs and rated outputs.

    * every ``system`` (and, for per-output rows, every ``(system, item)``) must exist in
      ``outputs`` -- the error lists the first few unknown ones and their count;
    * a metric name equal to a metric nlgeval computes in the same study (``builtin``: only
      the metrics computed, compared case-insensitively) is an error naming where the name
      is (the column header of a wide file, the ``metric`` cell of a long one);
    * coverage = share of the rated outputs (``rated``: ``system, item``) with a finite score;
      below ``min_coverage`` is an error saying how much is covered. System-level-only metrics
      are covered per rated system instead.

    The optional columns are collected per metric: ``bound`` (its ``criterion``),
    ``higher_is_better`` and the systems flagged ``human``.

    Parameters
    ----------
    scores : pandas.DataFrame
        Tidy scores (:func:`tidy_scores`).
    outputs, rated : pandas.DataFrame
        The corpus's outputs and its rated outputs (``system, item``).
    builtin : Collection of str, default ()
        Names of the metrics nlgeval computes in the same study.
    min_coverage : float, default 0.5
        Minimum share of rated outputs each metric must score.

    Returns
    -------
    ScoreCheck
        The usable frames, coverage per metric and the optional columns.

    Examples
    --------
    >>> outputs = pd.DataFrame({"system": ["A", "A", "B", "B"], "item": ["1", "2"] * 2})
    >>> scores = pd.DataFrame({"system": ["A", "A", "B", "B"], "item": ["1", "2"] * 2,
    ...                        "myscore": [0.1, 0.2, 0.3, None]})
    >>> check = check_scores(scores, outputs, outputs)
    >>> check.coverage
    {'myscore': 0.75}
    """
    if not 0.0 <= min_coverage <= 1.0:
        raise InputError(f"min_coverage must be between 0 and 1, got {min_coverage}")
    if "_source" not in scores.columns:
        scores = tidy_scores(scores)
    scores = fill_metadata(scores)
    metrics = [str(m) for m in pd.unique(scores["metric"])]  # in order of appearance
    _check_no_builtin_names(scores, metrics, builtin)
    _check_known_systems(scores, outputs)
    per_output = scores["item"] != ""
    _check_known_outputs(scores, outputs, per_output)
    seg = scores.loc[per_output, ["metric", "system", "item", "score"]]
    sysrows = scores.loc[~per_output, ["metric", "system", "score"]]
    system_only = [m for m in metrics if not (seg["metric"] == m).any()]
    sources = {m: str(scores.loc[scores["metric"] == m, "_source"].iloc[0]) for m in metrics}
    n_missing = {m: int(scores.loc[scores["metric"] == m, "score"].isna().sum())
                 for m in metrics}
    rated_keys = RatedKeys(rated[["system", "item"]].astype(str).drop_duplicates())
    coverage: dict[str, float] = {}
    notes: list[str] = []
    for m in metrics:
        coverage[m] = _coverage(m, m in system_only, seg, sysrows, rated_keys, min_coverage,
                                sources[m])
        notes += _coverage_notes(m, coverage[m], n_missing[m], m in system_only)
    bound, hib = per_metric(scores)
    return ScoreCheck(
        segments=seg.reset_index(drop=True), systems=sysrows.reset_index(drop=True),
        metrics=tuple(metrics), system_only=tuple(system_only), coverage=coverage,
        n_missing=n_missing, sources=sources, notes=tuple(notes), bound=bound,
        higher_is_better=hib,
        human_systems=tuple(sorted(set(scores.loc[scores["human"], "system"]))))


def combine_scores(frames: Sequence[pd.DataFrame]) -> pd.DataFrame:
    """Concatenate tidy score frames from several files; a metric in two files is an error.

    Parameters
    ----------
    frames : sequence of pandas.DataFrame
        Tidy score frames (:func:`tidy_scores`, :func:`read_scores`).

    Returns
    -------
    pandas.DataFrame
        The frames concatenated (an empty tidy frame when there are none).

    Examples
    --------
    >>> a = tidy_scores(pd.DataFrame({"system": ["A"], "item": ["1"], "m1": [0.5]}))
    >>> b = tidy_scores(pd.DataFrame({"system": ["A"], "item": ["1"], "m2": [0.1]}))
    >>> combine_scores([a, b])["metric"].tolist()
    ['m1', 'm2']
    """
    if not frames:
        return pd.DataFrame(columns=[*SCORE_COLUMNS, "_source", "_row"])
    seen: dict[str, str] = {}
    for f in frames:
        for m in pd.unique(f["metric"]).tolist():  # first appearance, no object per row
            src = str(f.loc[f["metric"] == m, "_source"].iloc[0]) if "_source" in f else ""
            if m in seen:
                raise InputError(f"metric '{m}' appears in two score inputs "
                                 f"({seen[m] or 'a DataFrame'} and {src or 'a DataFrame'})",
                                 file=src or None)
            seen[m] = src
    return pd.concat(frames, ignore_index=True)
