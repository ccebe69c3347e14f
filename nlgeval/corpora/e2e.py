"""E2E NLG Challenge (Dusek, Novikova & Rieser 2020): primary outputs, references, raw ratings.

Quirks of the published files and how this loader handles them (see the corpus SOURCE.md):

* ``system_outputs_primary/tnt1.tsv`` and ``tnt2.tsv`` wrap both fields in single quotes: the
  quotes are stripped (only a matching pair around the whole field).
* ``harv.tsv`` has CR CR LF line endings, so every record is followed by a blank row: blank
  rows are skipped (it still has exactly 630 outputs).
* Outputs are joined to references on the MR string after stripping the quotes and surrounding
  whitespace; an MR not in ``testset.csv`` is an error naming the file and row.
* In the rating files ``refN`` is the OUTPUT of system ``sysN`` (not a human reference); it is
  checked against the system's file and otherwise not used.
* One rating row = one crowd worker scoring the 5 outputs shown on one screen (a "unit");
  naturalness has 3 workers per unit, quality 3 for 783 units and 1 for 630. Each of the 5
  scores becomes one tidy judgement (``rater`` = ``_worker_id``) with the extra columns ``unit``
  (``_unit_id``), ``trust`` (``_trust``), ``check`` (quality only: the worker's
  ok/missing/added flag for the output's content) and ``n_judgements``.
* The same worker sometimes scored the same output on two different screens (90 quality and
  62 naturalness cases). A :class:`~nlgeval.corpus.Corpus` holds one judgement per (rater, item,
  system, criterion), so the two scores are averaged, ``n_judgements`` is 2 and ``unit`` lists
  both units separated by ``;``. :func:`read_judgements` returns the untouched per-screen table.
* The interface was a free-entry 0-100 scale, but some workers typed values above 100
  (105 ... 111111) on 29 quality and 145 naturalness screens. Such a worker was evidently not
  using the 0-100 scale on that screen, so by default the whole screen is dropped
  (``out_of_scale="drop_screen"``); ``"drop"`` drops only the out-of-scale scores and
  ``"clip"`` clips them to 100. The count dropped is recorded in ``Corpus.notes``.
  (Dusek et al. rank systems with TrueSkill over the relative order within a screen, which such
  values do not disturb; means over raw scores are very sensitive to them.)
* The extra CrowdFlower columns ``_ip``, ``_city``, ``_region`` of the original files (raters'
  IP addresses and locations) are never read.

Item ids are ``mr001`` ... ``mr630``: the 1-based position of the MR in ``testset.csv``, which
equals ``mr_id`` in the rating files. Reference ids are ``1`` ... ``n`` in file order.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Literal

import numpy as np
import pandas as pd

from nlgeval.corpora.descriptor import descriptor
from nlgeval.corpus import Corpus
from nlgeval.errors import InputError
from nlgeval.io import read_table, row_of, to_numeric

NAME = "e2e"
CRITERIA = {"quality": "quality", "naturalness": "natur"}  # criterion -> score column prefix
OutOfScale = Literal["drop_screen", "drop", "clip"]


def item_id(mr_id: int) -> str:
    """The item id of the ``mr_id``-th MR of the test set (1-based): ``mrNNN``.

    Examples
    --------
    >>> item_id(7)                     # the 7th MR of testset.csv
    'mr007'
    """
    return f"mr{mr_id:03d}"


def _unquote(s: pd.Series) -> pd.Series:
    """Strip surrounding whitespace and one pair of single quotes around the whole field."""
    s = s.astype(str).str.strip()
    quoted = s.str.startswith("'") & s.str.endswith("'") & (s.str.len() >= 2)
    return s.where(~quoted, s.str.slice(1, -1)).str.strip()


def _read_references(folder: Path) -> tuple[pd.DataFrame, dict[str, str]]:
    path = folder / "dataset" / "testset_w_refs.csv"
    df = read_table(path, ["mr", "ref"])
    df["mr"] = df["mr"].str.strip()
    mrs = list(dict.fromkeys(df["mr"]))
    ids = {mr: item_id(k) for k, mr in enumerate(mrs, start=1)}
    order = read_table(folder / "dataset" / "testset.csv", ["MR"])["MR"].str.strip().tolist()
    if order != mrs:
        raise InputError(
            "the MRs of testset.csv and testset_w_refs.csv are not in the same order; "
            "item ids would be ambiguous",
            file=path,
        )
    item = df["mr"].map(ids)
    ref_id = (df.groupby(item, sort=False).cumcount() + 1).astype(str)
    refs = pd.DataFrame({"item": item, "ref_id": ref_id, "text": df["ref"], "_row": df["_row"]})
    return refs, ids


def _read_outputs(folder: Path, systems: list[str], ids: Mapping[str, str]) -> pd.DataFrame:
    frames = []
    for system in systems:
        path = folder / "system_outputs_primary" / f"{system}.tsv"
        df = read_table(path, ["MR", "output"])
        mr = _unquote(df["MR"])
        item = mr.map(ids)
        if item.isna().any():
            pos = int(np.flatnonzero(item.isna().to_numpy())[0])
            raise InputError(
                f"MR {mr.iloc[pos]!r} is not in the E2E test set", file=path,
                row=row_of(df, pos), column="MR",
            )
        dup = item.duplicated()
        if dup.any():
            pos = int(np.flatnonzero(dup.to_numpy())[0])
            raise InputError("MR appears twice", file=path, row=row_of(df, pos), column="MR")
        frames.append(
            pd.DataFrame(
                {"system": system, "item": item, "text": _unquote(df["output"]), "mr": mr}
            )
        )
    out = pd.concat(frames, ignore_index=True)
    return out


def read_judgements(folder: str | Path, criterion: str) -> pd.DataFrame:
    """All per-screen judgements of one criterion, untouched except for reshaping.

    Columns: ``rater, item, system, criterion, score, unit, trust, check, slot, output,
    file_row`` -- one row per (screen row in the file, slot 1..5); ``output`` is the ``refN``
    text the worker saw and ``file_row`` the 1-based row in the CSV (header = row 1).
    Scores are as typed (values above 100 included).

    Examples
    --------
    >>> from nlgeval.corpora.descriptor import descriptor
    >>> from nlgeval.corpora.store import locate
    >>> folder = locate(descriptor("e2e")).folder   # the local copy
    >>> j = read_judgements(folder, "quality")
    >>> j.shape, list(j.columns[:5])
    ((14895, 12), ['rater', 'item', 'system', 'criterion', 'score'])
    """
    if criterion not in CRITERIA:
        raise InputError(f"unknown E2E criterion {criterion!r} (have: {', '.join(CRITERIA)})")
    path = Path(folder) / "human_ratings" / f"{criterion}.csv"
    prefix = CRITERIA[criterion]
    slots = range(1, 6)
    required = ["_worker_id", "_unit_id", "_trust", "mr_id", "mr"]
    required += [f"sys{i}" for i in slots] + [f"ref{i}" for i in slots]
    required += [f"{prefix}{i}" for i in slots]
    df = read_table(path, required)
    mr_id = to_numeric(df, "mr_id", file=path, what="an MR number")
    parts = []
    for i in slots:
        score = to_numeric(df, f"{prefix}{i}", file=path, what="a numeric score")
        parts.append(
            pd.DataFrame(
                {
                    "rater": df["_worker_id"].str.strip(),
                    "item": [item_id(int(m)) for m in mr_id],
                    "system": df[f"sys{i}"].str.strip(),
                    "criterion": criterion,
                    "score": score,
                    "unit": df["_unit_id"].str.strip(),
                    "trust": to_numeric(df, "_trust", file=path, allow_missing=True),
                    "check": df[f"check{i}"] if f"check{i}" in df.columns else "",
                    "slot": i,
                    "output": df[f"ref{i}"],
                    "mr": df["mr"].str.strip(),
                    "file_row": df["_row"],
                }
            )
        )
    return pd.concat(parts, ignore_index=True).sort_values(["file_row", "slot"], kind="stable")


def _tidy_ratings(
    judgements: pd.DataFrame, out_of_scale: OutOfScale, notes: list[str]
) -> pd.DataFrame:
    crit = str(judgements["criterion"].iloc[0])
    j = judgements
    over = (j["score"] > 100) | (j["score"] < 0)
    if over.any():
        if out_of_scale == "drop_screen":
            bad_rows = set(j.loc[over, "file_row"])
            drop = j["file_row"].isin(bad_rows)
            notes.append(
                f"{crit}: dropped {len(bad_rows)} screen(s) ({int(drop.sum())} scores) on which "
                "the worker typed values outside 0-100 (out_of_scale='drop_screen')"
            )
            j = j[~drop]
        elif out_of_scale == "drop":
            notes.append(f"{crit}: dropped {int(over.sum())} scores outside 0-100")
            j = j[~over]
        elif out_of_scale == "clip":
            notes.append(f"{crit}: clipped {int(over.sum())} scores outside 0-100 to [0, 100]")
            j = j.assign(score=j["score"].clip(0, 100))
        else:
            raise InputError(
                f"out_of_scale must be 'drop_screen', 'drop' or 'clip', got {out_of_scale!r}"
            )
    keys = ["rater", "item", "system", "criterion"]
    n = j.groupby(keys, sort=False)["score"].transform("size")
    single = j[n == 1]
    multi = j[n > 1]
    tidy_single = single[keys + ["score", "unit", "trust", "check"]].assign(n_judgements=1)
    parts = [tidy_single]
    if len(multi):
        agg = (
            multi.groupby(keys, sort=False)
            .agg(
                score=("score", "mean"),
                unit=("unit", ";".join),
                trust=("trust", "mean"),
                check=("check", lambda s: ";".join(map(str, s))),
                n_judgements=("score", "size"),
            )
            .reset_index()
        )
        parts.append(agg)
        notes.append(
            f"{crit}: {len(agg)} outputs were scored twice by the same worker on different "
            "screens; the two scores are averaged (n_judgements=2)"
        )
    tidy = pd.concat(parts, ignore_index=True)
    return tidy.astype({"unit": str, "check": str})


def load(
    folder: str | Path,
    *,
    out_of_scale: OutOfScale = "drop_screen",
    criteria: tuple[str, ...] = ("quality", "naturalness"),
) -> Corpus:
    """Load the E2E corpus from a folder laid out like the bundled ``e2e_nlg_challenge`` corpus
    folder.

    Examples
    --------
    >>> from nlgeval.corpora import load_corpus
    >>> corpus = load_corpus("e2e")     # locates the folder, calls this load(), caches the parse
    >>> len(corpus.systems), len(corpus.items), corpus.criteria
    (21, 630, ['quality', 'naturalness'])
    """
    folder = Path(folder)
    desc = descriptor(NAME)
    systems = sorted(
        Path(f.path).stem for f in desc.files if f.path.startswith("system_outputs_primary/")
    )
    refs, ids = _read_references(folder)
    outputs = _read_outputs(folder, systems, ids)
    notes: list[str] = [
        "item ids mrNNN = 1-based position of the MR in testset.csv (= mr_id in the rating files)",
    ]
    ratings = []
    out_text = outputs.set_index(["system", "item"])["text"]
    for crit in criteria:
        j = read_judgements(folder, crit)
        # refN in the rating files is the output of sysN: check it is the system's output.
        shown = pd.MultiIndex.from_frame(j[["system", "item"]])
        expected = out_text.reindex(shown).to_numpy()
        differ = expected != j["output"].str.strip().to_numpy()
        if differ.any():
            notes.append(
                f"{crit}: {int(differ.sum())} judged texts differ from the system output files"
            )
        ratings.append(_tidy_ratings(j, out_of_scale, notes))
    rat = pd.concat(ratings, ignore_index=True) if ratings else None
    return Corpus.build(
        desc.info(),
        outputs,
        refs,
        rat,
        files={
            "outputs": folder / "system_outputs_primary",
            "references": folder / "dataset" / "testset_w_refs.csv",
            "ratings": folder / "human_ratings",
        },
        empty_outputs="keep",
        notes=notes,
    )
