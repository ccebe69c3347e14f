"""A text-free corpus from human ratings (:func:`ratings_corpus`) and the systems a ratings
file flags as human-written (:func:`human_flagged`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd

from nlgeval.corpus import Corpus, CorpusInfo, Criterion
from nlgeval.errors import InputError
from nlgeval.io import ROW, header_row
from nlgeval.io.typed import arrow_memory_errors, header_names, tidy_categorical
from nlgeval.scores._columns import parse_flags
from nlgeval.scores._parse import _read_maybe_gzip, _to_float
from nlgeval.scores._typed import typed_ratings


def ratings_corpus(ratings: str | Path | pd.DataFrame, *, name: str | None = None,
                   scales: Mapping[str, tuple[float, float]] | None = None) -> Corpus:
    """A text-free :class:`Corpus` from tidy human ratings, for a human + metric scores study.

    ``ratings``: a file or frame with ``system, item, criterion, score`` and optionally
    ``rater`` (absent: the scores are already aggregated per output; ``rater`` is set to
    ``"aggregate"`` and rater agreement cannot be computed). The outputs are the rated
    (system, item) pairs, with empty texts; a criterion's scale is ``scales[criterion]`` or the
    observed range (recorded in the corpus notes). An experiment export's practice and
    attention-check rows (``practice`` true, ``qc_check`` set) are left out, noted.

    Parameters
    ----------
    ratings : str, Path or pandas.DataFrame
        The tidy ratings (see above).
    name, scales : str, Mapping of str to (float, float), optional
        Corpus name (default: the file name before any dot, else ``ratings``); ``(low, high)``
        scale per criterion (default: the observed range).

    Returns
    -------
    Corpus
        The text-free corpus.

    Examples
    --------
    >>> ratings = pd.DataFrame({"system": ["A", "B"], "item": ["1", "1"],
    ...                         "criterion": ["quality"] * 2, "score": [4, 2]})
    >>> c = ratings_corpus(ratings, name="toy", scales={"quality": (1, 5)})
    >>> c.systems, c.ratings["rater"].tolist()
    (['A', 'B'], ['aggregate', 'aggregate'])
    """
    df, file = _ratings_frame(ratings)
    required = ["system", "item", "criterion", "score"]
    present = [c for c in df.columns if c != ROW]
    miss = [c for c in required if c not in df.columns]
    if miss:
        raise InputError(f"a ratings table needs columns system, item, criterion, score "
                         f"(rater optional); missing {', '.join(miss)} (found: "
                         f"{', '.join(present) or 'none'})", file=file, row=header_row(file))
    df, notes = _without_practice_and_checks(df, file)
    if "rater" not in df.columns:
        df["rater"] = pd.Categorical.from_codes(np.zeros(len(df), dtype=np.int8),
                                                categories=["aggregate"])
        notes.append("ratings have no rater column: taken as already aggregated per output "
                     "(one score per system, item and criterion)")
    for c in ("system", "item", "criterion", "rater"):
        if not isinstance(df[c].dtype, pd.CategoricalDtype):  # typed files: stripped already
            df[c] = df[c].astype(str).str.strip()
        else:
            df[c] = tidy_categorical(df[c].array)
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


def _without_practice_and_checks(df: pd.DataFrame, file: Path | None
                                 ) -> tuple[pd.DataFrame, list[str]]:
    """The rows that rate the study's outputs, and a note on those left out: practice trials
    (``practice`` true) and attention checks (a non-empty ``qc_check``: repeats, degraded
    copies, known answers), which the online experiment's export writes with
    ``--include-practice`` / ``--include-checks``; the ratings reader of ``compare`` and
    ``agreement`` leaves them out too. A ``practice`` value that is not yes/no is an error."""
    keep = np.ones(len(df), dtype=bool)
    rows = (df[ROW] if ROW in df.columns else pd.Series(np.arange(2, len(df) + 2))
            ).reset_index(drop=True)
    counts = []
    if "practice" in df.columns:
        practice = np.array(parse_flags(df["practice"].reset_index(drop=True), file, rows,
                                        "practice", False), dtype=bool)
        keep &= ~practice
        counts.append(f"{int(practice.sum())} practice")
    if "qc_check" in df.columns:
        check = (df["qc_check"].fillna("").astype(str).str.strip() != "").to_numpy()
        keep &= ~check
        counts.append(f"{int(check.sum())} attention-check")
    if keep.all():
        return df, []
    if not keep.any():
        raise InputError("no ratings: every row is a practice trial or an attention check",
                         file=file)
    return df[keep].copy(), [f"{' and '.join(counts)} rows left out (not ratings of the "
                             "study's outputs)"]


def human_flagged(ratings: str | Path | pd.DataFrame) -> list[str]:
    """The systems a ratings (or score) table flags as human-written in a ``human`` column
    (true/false, yes/no, 1/0; empty = no), sorted; ``[]`` without such a column.

    Human-written outputs (a "human" system in a story-generation or summarisation study) are
    rated like the systems but are not system outputs: ``nlgeval validate`` leaves them out of
    the metric-human correlations and shows their rating as a human ceiling.

    Parameters
    ----------
    ratings : str, Path or pandas.DataFrame
        A ratings or score file, or a frame.

    Returns
    -------
    list of str
        The systems flagged human, sorted.

    Examples
    --------
    >>> ratings = pd.DataFrame({"system": ["A", "H"], "item": ["1", "1"],
    ...                         "criterion": ["q"] * 2, "score": [2, 5],
    ...                         "human": ["no", "yes"]})
    >>> human_flagged(ratings)
    ['H']
    """
    if isinstance(ratings, str | Path) and Path(ratings).is_file():
        names = header_names(Path(ratings))  # a plain file without the column: not read
        if names is not None and "human" not in names:
            return []
    df, file = _ratings_frame(ratings)
    if "human" not in df.columns or "system" not in df.columns:
        return []
    rows = df[ROW] if ROW in df.columns else pd.Series(np.arange(2, len(df) + 2))
    flags = parse_flags(df["human"].reset_index(drop=True), file, rows.reset_index(drop=True),
                        "human", False)
    systems = df["system"].astype(str).str.strip().to_numpy()
    return sorted({str(s) for s, f in zip(systems, flags, strict=True) if f})


def _ratings_frame(ratings: str | Path | pd.DataFrame) -> tuple[pd.DataFrame, Path | None]:
    """The ratings as a frame with stripped column names, and the file they came from."""
    if isinstance(ratings, str | Path):
        file = Path(ratings)
        if not file.exists():
            raise InputError("file not found", file=file)
        with arrow_memory_errors():
            typed = typed_ratings(file)  # large plain files: typed columns (_typed.py)
            return (typed if typed is not None else _read_maybe_gzip(file)), file
    df = ratings.copy()
    df.columns = [str(c).strip() for c in df.columns]
    return df, None
