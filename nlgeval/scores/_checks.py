"""Checks of external metric scores against a corpus (:func:`nlgeval.scores.check_scores`):
known systems and outputs, no clash with a computed metric's name, enough coverage."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Any

import numpy as np
import pandas as pd

from nlgeval.errors import InputError
from nlgeval.io import header_row


def _locate(df: pd.DataFrame, mask: np.ndarray) -> dict[str, Any]:
    pos = int(np.flatnonzero(mask)[0])
    src = str(df["_source"].iloc[pos]) if "_source" in df.columns else ""
    row = int(df["_row"].iloc[pos]) if "_row" in df.columns else None
    return {"file": src or None, "row": row}


def _check_no_builtin_names(scores: pd.DataFrame, metrics: Sequence[str],
                            builtin: Collection[str]) -> None:
    """An external metric may not share a (case-insensitive) name with a metric computed in
    the same study; the error points at the name: a wide file's column header (row 1 of a
    CSV/TSV file, no row of a Parquet or JSONL file), a long file's ``metric`` cell."""
    lower_builtin = {b.lower(): b for b in builtin}
    for m in metrics:
        if m.lower() in lower_builtin:
            mask = (scores["metric"] == m).to_numpy()
            loc = _locate(scores, mask)
            col = (str(scores["_column"].iloc[int(np.flatnonzero(mask)[0])])
                   if "_column" in scores.columns else "metric")
            wide = col != "metric"
            raise InputError(
                f"external metric '{m}' has the name of a metric nlgeval computes in this study "
                f"('{lower_builtin[m.lower()]}'); rename the "
                f"{'column' if wide else 'metric'} (e.g. '{m}_ext') or leave the built-in "
                "metric out of --metrics", file=loc["file"],
                row=header_row(loc["file"]) if wide and loc["file"] else loc["row"], column=col)


def _check_known_systems(scores: pd.DataFrame, outputs: pd.DataFrame) -> None:
    """Every scored system must be a system of the corpus."""
    known_sys = set(pd.unique(outputs["system"].astype(str)).tolist())
    unknown = ~scores["system"].isin(known_sys).to_numpy()
    if unknown.any():
        names = list(dict.fromkeys(scores.loc[unknown, "system"]))
        loc = _locate(scores, unknown)
        raise InputError(
            f"{len(names)} unknown system(s) not in the corpus: "
            f"{', '.join(repr(n) for n in names[:5])}{' ...' if len(names) > 5 else ''} "
            f"(corpus systems: {', '.join(sorted(known_sys)[:8])}"
            f"{' ...' if len(known_sys) > 8 else ''})",
            file=loc["file"], row=loc["row"], column="system")


def output_keys(frame: pd.DataFrame, systems: pd.Index, items: pd.Index) -> np.ndarray:
    """One integer per ``(system, item)`` row: its position in ``systems`` x ``items``, -1
    when either is not there. Categorical columns are looked up per category, so millions of
    rows cost a few integer arrays, not a Python tuple per row.

    >>> df = pd.DataFrame({"system": ["B", "A", "C"], "item": ["2", "1", "1"]})
    >>> output_keys(df, pd.Index(["A", "B"]), pd.Index(["1", "2"])).tolist()
    [3, 0, -1]
    """
    pos = []
    for col, index in (("system", systems), ("item", items)):
        values = frame[col]
        if isinstance(values.dtype, pd.CategoricalDtype):
            per_cat = index.get_indexer(values.cat.categories.astype(str))
            codes = values.cat.codes.to_numpy()
            pos.append(np.where(codes >= 0, per_cat[np.maximum(codes, 0)], -1)
                       if len(per_cat) else np.full(len(codes), -1))
        else:
            pos.append(index.get_indexer(values.astype(str)))
    s, i = pos
    return np.where((s >= 0) & (i >= 0), s.astype(np.int64) * len(items) + i, -1)


def key_index(*frames: pd.DataFrame) -> tuple[pd.Index, pd.Index]:
    """The systems and items of ``frames`` (as strings), each once, for :func:`output_keys`.

    >>> key_index(pd.DataFrame({"system": ["A", "B"], "item": [1, 1]}))[1].tolist()
    ['1']
    """
    out = []
    for col in ("system", "item"):
        names = [pd.unique(f[col]) for f in frames]
        out.append(pd.Index(pd.unique(np.concatenate(
            [np.asarray(pd.Index(n).astype(str), dtype=object) for n in names]))))
    return out[0], out[1]


def _check_known_outputs(scores: pd.DataFrame, outputs: pd.DataFrame,
                         per_output: pd.Series) -> None:
    """Every per-output score must name a (system, item) output of the corpus."""
    systems, items = key_index(outputs)
    known = output_keys(outputs, systems, items)
    bad = per_output.to_numpy() & ~np.isin(output_keys(scores, systems, items),
                                            known[known >= 0])
    if bad.any():
        pairs = list(dict.fromkeys(zip(scores.loc[bad, "system"], scores.loc[bad, "item"],
                                       strict=True)))
        loc = _locate(scores, bad)
        shown = ", ".join(f"({s!r}, {i!r})" for s, i in pairs[:5])
        raise InputError(
            f"{len(pairs)} (system, item) pair(s) are not outputs of the corpus: {shown}"
            f"{' ...' if len(pairs) > 5 else ''} (items must use the corpus's item ids)",
            file=loc["file"], row=loc["row"], column="item")


class RatedKeys:
    """The rated outputs (``system, item``, each once) and their integer keys, computed once
    for the coverage of every metric (:func:`output_keys`)."""

    def __init__(self, frame: pd.DataFrame) -> None:
        self.frame = frame
        self.systems, self.items = key_index(frame)
        self.keys = output_keys(frame, self.systems, self.items)

    def __len__(self) -> int:
        return len(self.frame)


def _coverage(metric: str, system_only: bool, seg: pd.DataFrame, sysrows: pd.DataFrame,
              rated: RatedKeys, min_coverage: float, source: str) -> float:
    """Share of the rated outputs (rated systems, for system-level-only metrics) with a
    score; below ``min_coverage`` is an error."""
    rated_keys = rated.frame
    if system_only:
        rated_systems = set(pd.unique(rated_keys["system"]).tolist())
        have = set(sysrows.loc[(sysrows["metric"] == metric) & sysrows["score"].notna(),
                               "system"])
        cov = len(have & rated_systems) / max(1, len(rated_systems))
        unit, n_units = "rated systems", len(rated_systems)
    else:  # rated outputs with a score (one score per output: duplicates are refused)
        ok = seg[(seg["metric"] == metric) & seg["score"].notna()]
        keys = output_keys(ok, rated.systems, rated.items)
        hit = np.isin(rated.keys, keys[keys >= 0]).sum()
        cov = int(hit) / max(1, len(rated_keys))
        unit, n_units = "rated outputs", len(rated_keys)
    if cov < min_coverage:
        raise InputError(
            f"metric '{metric}' covers {cov:.1%} of the {n_units} {unit}, "
            f"below the minimum coverage {min_coverage:.0%} (lower it with --min-coverage "
            "if this is intended)", file=source or None)
    return cov


def _coverage_notes(metric: str, cov: float, n_missing: int, system_only: bool) -> list[str]:
    """What a reader of the report should know about one external metric's coverage."""
    unit = "rated systems" if system_only else "rated outputs"
    notes = []
    if cov < 1.0:
        notes.append(f"external metric '{metric}' covers {cov:.1%} of the {unit}")
    if n_missing:
        notes.append(f"external metric '{metric}': {n_missing} missing value(s) "
                     "(empty/NaN/None) left out")
    if system_only:
        notes.append(f"external metric '{metric}' has system-level scores only: it is "
                     "correlated at system level only")
    return notes
