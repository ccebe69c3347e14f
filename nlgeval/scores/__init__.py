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

import gzip
import tempfile
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import ClassVar

import numpy as np
import pandas as pd

from nlgeval.corpus import Corpus, CorpusInfo, Criterion
from nlgeval.errors import InputError
from nlgeval.io import ROW, read_table
from nlgeval.results import Result
from nlgeval.scores._checks import (
    _check_known_outputs,
    _check_known_systems,
    _check_no_builtin_names,
    _coverage,
    _coverage_notes,
)

#: Columns of the tidy frame :func:`read_scores` returns. ``item`` is ``""`` for a system-level
#: score; ``_source``/``_row`` locate each value in its file (for error messages).
SCORE_COLUMNS = ("metric", "system", "item", "score")
MISSING_TOKENS = frozenset({"", "nan", "na", "n/a", "none", "null"})


__all__ = [
    "ScoreCheck",
    "check_scores",
    "combine_scores",
    "ratings_corpus",
    "read_scores",
    "tidy_scores",
]

def _read_maybe_gzip(path: Path) -> pd.DataFrame:
    """:func:`nlgeval.io.read_table` for plain or gzip-compressed files (``*.csv.gz`` etc.)."""
    if path.suffix.lower() != ".gz":
        return read_table(path)
    inner_suffix = "".join(path.suffixes[:-1]) or ".csv"
    try:
        data = gzip.decompress(path.read_bytes())
    except FileNotFoundError:
        raise InputError("file not found", file=path) from None
    except (OSError, EOFError) as exc:
        raise InputError(f"not a valid gzip file: {exc}", file=path) from None
    with tempfile.TemporaryDirectory() as tmp:
        inner = Path(tmp) / f"scores{inner_suffix}"
        inner.write_bytes(data)
        try:
            return read_table(inner)
        except InputError as exc:  # name the user's file, not the temporary copy
            raise InputError(exc.message, file=path, row=exc.row, column=exc.column) from None


def _to_float(values: pd.Series, file: str | Path | None, rows: pd.Series, column: str,
              ) -> pd.Series:
    """Strings -> float; missing tokens -> NaN; anything else non-finite -> InputError."""
    isna = values.isna().to_numpy()
    raw = values.astype(str).str.strip()
    missing = pd.Series(isna, index=raw.index) | raw.str.lower().isin(MISSING_TOKENS)
    num = pd.to_numeric(raw.where(~missing, None), errors="coerce")
    bad = (num.isna() & ~missing) | ~np.isfinite(num.fillna(0.0))
    if bad.any():
        pos = int(np.flatnonzero(bad.to_numpy())[0])
        what = raw.iloc[pos]
        reason = ("is not a finite number" if np.isfinite(num.fillna(0.0)).iloc[pos]
                  else "is infinite; metric scores must be finite numbers")
        raise InputError(f"score {what!r} {reason} (write an empty cell or None for a "
                         "missing score)", file=file, row=int(rows.iloc[pos]), column=column)
    return num.astype(float)


def _long_from_wide(
    df: pd.DataFrame, cols: list[str], metric: str | None, file: str | Path | None
) -> pd.DataFrame:
    """Stack the metric columns of a wide score frame (``system, item, <metric>...``)."""
    metric_cols = [c for c in cols if c not in ("system", "item")]
    if metric == "score" or (metric and metric_cols == ["score"]):
        metric_cols = ["score"]
    if not metric_cols:
        raise InputError("no metric columns: a wide score file has system, item and one "
                         "column per metric", file=file, row=1 if file else None)
    parts = []
    for c in metric_cols:
        name = metric if (metric and metric_cols == ["score"]) else c
        parts.append(pd.DataFrame({
            "metric": name, "system": df["system"].to_numpy(),
            "item": df["item"].to_numpy(), ROW: df[ROW].to_numpy(),
            "score": _to_float(df[c], file, df[ROW], c).to_numpy()}))
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

    Examples:
        A wide frame (one column per metric) becomes long:

        >>> wide = pd.DataFrame({"system": ["A", "B"], "item": ["1", "1"], "m1": [0.5, 0.7]})
        >>> tidy_scores(wide)[["metric", "system", "item", "score"]].values.tolist()
        [['m1', 'A', '1', 0.5], ['m1', 'B', '1', 0.7]]
    """
    if not isinstance(frame, pd.DataFrame):
        raise InputError(f"scores must be a pandas DataFrame, got {type(frame).__name__}")
    df = frame.copy()
    df.columns = [str(c).strip() for c in df.columns]
    if ROW not in df.columns:
        df[ROW] = np.arange(2, len(df) + 2)
    cols = [c for c in df.columns if c != ROW]
    if "system" not in cols:
        raise InputError(
            "a score file needs a 'system' column (wide: system, item, <metric>...; long: "
            f"system, item, metric, score); found: {', '.join(cols) or 'none'}",
            file=file, row=1 if file is not None else None)
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
    else:
        long = _long_from_wide(df, cols, metric, file)
    _check_duplicates(long, file)
    long["_source"] = "" if file is None else str(file)
    long = long.rename(columns={ROW: "_row"})
    return long[[*SCORE_COLUMNS, "_source", "_row"]].reset_index(drop=True)


def read_scores(path: str | Path, *, metric: str | None = None) -> pd.DataFrame:
    """Read a metric-score file (wide or long; see the module docstring) into a tidy frame.

    Returns ``metric, system, item, score, _source, _row`` (``item`` is ``""`` for a
    system-level score; ``score`` NaN where missing). Raises :class:`~nlgeval.errors.InputError`
    naming the file, row and column for anything that is not a score.

    Examples:
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
    return tidy_scores(_read_maybe_gzip(path), file=path, metric=metric)


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
    * a metric name equal to a metric nlgeval computes in the same study (``builtin``,
      compared case-insensitively) is an error: rename one of them;
    * coverage = share of the rated outputs (``rated``: ``system, item``) with a finite score;
      below ``min_coverage`` is an error saying how much is covered. System-level-only metrics
      are covered per rated system instead.

    Examples:
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
    metrics = list(dict.fromkeys(scores["metric"]))
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
    rated_keys = rated[["system", "item"]].astype(str).drop_duplicates()
    coverage: dict[str, float] = {}
    notes: list[str] = []
    for m in metrics:
        coverage[m] = _coverage(m, m in system_only, seg, sysrows, rated_keys, min_coverage,
                                sources[m])
        notes += _coverage_notes(m, coverage[m], n_missing[m], m in system_only)
    return ScoreCheck(
        segments=seg.reset_index(drop=True), systems=sysrows.reset_index(drop=True),
        metrics=tuple(metrics), system_only=tuple(system_only), coverage=coverage,
        n_missing=n_missing, sources=sources, notes=tuple(notes))


def combine_scores(frames: Sequence[pd.DataFrame]) -> pd.DataFrame:
    """Concatenate tidy score frames from several files; a metric in two files is an error.

    Examples:
        >>> a = tidy_scores(pd.DataFrame({"system": ["A"], "item": ["1"], "m1": [0.5]}))
        >>> b = tidy_scores(pd.DataFrame({"system": ["A"], "item": ["1"], "m2": [0.1]}))
        >>> combine_scores([a, b])["metric"].tolist()
        ['m1', 'm2']
    """
    if not frames:
        return pd.DataFrame(columns=[*SCORE_COLUMNS, "_source", "_row"])
    seen: dict[str, str] = {}
    for f in frames:
        for m in dict.fromkeys(f["metric"]):
            src = str(f.loc[f["metric"] == m, "_source"].iloc[0]) if "_source" in f else ""
            if m in seen:
                raise InputError(f"metric '{m}' appears in two score inputs "
                                 f"({seen[m] or 'a DataFrame'} and {src or 'a DataFrame'})",
                                 file=src or None)
            seen[m] = src
    return pd.concat(frames, ignore_index=True)


def ratings_corpus(
    ratings: str | Path | pd.DataFrame,
    *,
    name: str | None = None,
    scales: Mapping[str, tuple[float, float]] | None = None,
) -> Corpus:
    """A text-free :class:`Corpus` from tidy human ratings, for a human + metric scores study.

    ``ratings``: a file or frame with ``system, item, criterion, score`` and optionally
    ``rater`` (absent: the scores are already aggregated per output; ``rater`` is set to
    ``"aggregate"`` and rater agreement cannot be computed). The outputs are the rated
    (system, item) pairs, with empty texts; a criterion's scale is ``scales[criterion]`` or the
    observed range (recorded in the corpus notes).

    Examples:
        >>> ratings = pd.DataFrame({"system": ["A", "B"], "item": ["1", "1"],
        ...                         "criterion": ["quality"] * 2, "score": [4, 2]})
        >>> c = ratings_corpus(ratings, name="toy", scales={"quality": (1, 5)})
        >>> c.systems, c.ratings["rater"].tolist()
        (['A', 'B'], ['aggregate', 'aggregate'])
    """
    file: Path | None = None
    if isinstance(ratings, str | Path):
        file = Path(ratings)
        if not file.exists():
            raise InputError("file not found", file=file)
        df = _read_maybe_gzip(file)
    else:
        df = ratings.copy()
        df.columns = [str(c).strip() for c in df.columns]
    required = ["system", "item", "criterion", "score"]
    present = [c for c in df.columns if c != ROW]
    miss = [c for c in required if c not in df.columns]
    if miss:
        raise InputError(f"a ratings table needs columns system, item, criterion, score "
                         f"(rater optional); missing {', '.join(miss)} (found: "
                         f"{', '.join(present) or 'none'})", file=file, row=1 if file else None)
    notes = []
    if "rater" not in df.columns:
        df["rater"] = "aggregate"
        notes.append("ratings have no rater column: taken as already aggregated per output "
                     "(one score per system, item and criterion)")
    for c in ("system", "item", "criterion", "rater"):
        df[c] = df[c].astype(str).str.strip()
    rows = df[ROW] if ROW in df.columns else pd.Series(np.arange(2, len(df) + 2))
    df["score"] = _to_float(df["score"], file, rows.reset_index(drop=True), "score").to_numpy()
    if df["score"].isna().any():
        pos = int(np.flatnonzero(df["score"].isna().to_numpy())[0])
        raise InputError("missing human score (leave the row out instead)", file=file,
                         row=int(rows.iloc[pos]), column="score")
    crits = []
    for c, sub in df.groupby("criterion", sort=False):
        if scales and c in scales:
            lo, hi = scales[str(c)]
        else:
            lo, hi = float(sub["score"].min()), float(sub["score"].max())
            notes.append(f"criterion '{c}': scale taken as the observed range [{lo:g}, {hi:g}]")
        crits.append(Criterion(str(c), lo, hi, "interval"))
    outputs = df[["system", "item"]].drop_duplicates().assign(text="")
    if ROW in df.columns:
        outputs[ROW] = df.loc[outputs.index, ROW]
    info = CorpusInfo(
        name=name or (file.name.split(".")[0] if file else "ratings"),
        description="human ratings and metric scores only (no texts)",
        criteria=tuple(crits))
    corpus = Corpus.build(info, outputs, None, df, files={"outputs": file, "ratings": file},
                          empty_outputs="keep", require_references=False)
    # Corpus.build notes the empty texts as "empty outputs kept"; here there are no texts at all
    return replace(corpus, notes=(*notes, "no texts: a study of human scores and metric "
                                          "scores only"))
