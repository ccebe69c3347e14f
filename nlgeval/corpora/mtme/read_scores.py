"""read_mtme's score stages: human scores (``human-scores/``) and metric scores
(``metric-scores/LP/``) of one MTME language pair, and what is left out of them.

The file formats are described in :mod:`nlgeval.corpora.mtme`.
"""

from __future__ import annotations

from collections.abc import Collection
from pathlib import Path

import numpy as np
import pandas as pd

from nlgeval.corpora.mtme.layout import (
    AGGREGATE_RATER,
    NO_TRANSLATION,
    SCORE_COLUMNS,
    SYSTEM_SCORE_COLUMNS,
    _parse_human_name,
    _parse_metric_name,
    _read_score_file,
    _refs_used,
)
from nlgeval.corpus import Criterion
from nlgeval.errors import InputError


def _find_human_files(hum_dir: Path, lp: str, wanted: list[str], notes: list[str]
                      ) -> dict[str, dict[str, Path]]:
    """``{name: {level: file}}`` of the human-score files; ``wanted`` is resolved in place
    (a name that differs only in case is accepted with a note)."""
    found: dict[str, dict[str, Path]] = {}
    if hum_dir.is_dir():
        for p in sorted(hum_dir.glob(f"{lp}.*.score")):
            name, level = _parse_human_name(p, lp, "score")
            found.setdefault(name, {})[level] = p
    for k, w in enumerate(wanted):
        folded = [f for f in found if f.lower() == w.lower()]
        if w not in found and len(folded) == 1:
            notes.append(f"human scores '{w}' not found; using '{folded[0]}' (same name "
                         "but for case)")
            wanted[k] = w = folded[0]
        if w not in found:
            have = ", ".join(f"{k} ({'/'.join(sorted(v))})" for k, v in found.items())
            raise InputError(f"no human scores '{w}' for {lp} (available: "
                             f"{have or 'none'}; pass human=None for none)",
                             file=hum_dir / f"{lp}.{w}.seg.score")
    return found


def _human_seg_scores(path: Path, w: str, n: int, items: list[str], systems: list[str],
                      all_systems: set[str], notes: list[str]
                      ) -> tuple[pd.DataFrame | None, Criterion | None]:
    """One criterion's segment-level human scores as ratings, and its criterion."""
    df = _read_score_file(path, "seg", n, all_systems)
    gone = sorted(set(df["system"]) - set(systems))
    if gone:
        notes.append(f"human '{w}' scores of excluded system(s) {', '.join(gone)} "
                     "left out")
    df = df[df["system"].isin(systems)]
    miss = int(df["score"].isna().sum())
    df = df[df["score"].notna()]
    notes.append(f"human '{w}' (seg): {len(df)} scores"
                 + (f", {miss} None (missing) left out" if miss else ""))
    if not len(df):
        return None, None
    ratings = pd.DataFrame({
        "rater": AGGREGATE_RATER,
        "item": np.asarray(items, dtype=object)[df["pos"].to_numpy()],
        "system": df["system"].to_numpy(), "criterion": w,
        "score": df["score"].to_numpy()})
    lo, hi = float(df["score"].min()), float(df["score"].max())
    return ratings, Criterion(
        w, lo, hi, "interval",
        f"MTME human scores '{w}' (already aggregated; scale = observed range; "
        "higher is better, MTME's convention)", True)


def _read_human_scores(folder: Path, lp: str, wanted: list[str], n: int, items: list[str],
                       systems: list[str], all_systems: set[str], notes: list[str]
                       ) -> tuple[list[pd.DataFrame], list[pd.DataFrame], list[Criterion]]:
    """Ratings (seg files), system-level human scores (sys files) and criteria."""
    ratings_parts: list[pd.DataFrame] = []
    human_sys_parts: list[pd.DataFrame] = []
    criteria: list[Criterion] = []
    if not wanted:
        return ratings_parts, human_sys_parts, criteria
    hum_dir = folder / "human-scores"
    found = _find_human_files(hum_dir, lp, wanted, notes)
    for w in wanted:
        files = found[w]
        skipped = [lvl for lvl in ("doc", "domain") if lvl in files]
        if skipped:
            notes.append(f"human scores '{w}' at level(s) {', '.join(skipped)} not loaded "
                         "(nlgeval uses seg and sys)")
        if "seg" in files:
            ratings, crit = _human_seg_scores(files["seg"], w, n, items, systems, all_systems,
                                              notes)
            if ratings is not None and crit is not None:
                ratings_parts.append(ratings)
                criteria.append(crit)
        else:
            notes.append(f"human scores '{w}' have no seg-level file: no per-output "
                         "ratings")
        if "sys" in files:
            df = _read_score_file(files["sys"], "sys", 1, all_systems)
            df = df[df["system"].isin(systems)]
            human_sys_parts.append(pd.DataFrame({
                "system": df["system"].to_numpy(), "criterion": w,
                "score": df["score"].to_numpy()}))
    other = sorted(set(found) - set(wanted))
    if other:
        notes.append(f"other human scores not loaded: {', '.join(other)}")
    ratings_files = sorted(p.name for p in hum_dir.glob(f"{lp}.*.rating")) if (
        hum_dir.is_dir()) else []
    if ratings_files:
        notes.append(f"{len(ratings_files)} MQM rating file(s) (*.rating: error spans) not "
                     "read")
    return ratings_parts, human_sys_parts, criteria


def _read_metric_scores(folder: Path, lp: str, n: int, items: list[str], systems: list[str],
                        all_systems: set[str], ref_names: list[str], reference: str,
                        notes: list[str]) -> list[pd.DataFrame]:
    """Seg- and sys-level metric scores computed with ``reference`` only, with file and line."""
    met_dir = folder / "metric-scores" / lp
    if not met_dir.is_dir():
        notes.append(f"no metric-scores/{lp}/ folder: no shipped metric scores")
        return []
    located: list[pd.DataFrame] = []
    other_ref, other_level, n_none = [], [], 0
    dropped_sys: set[str] = set()
    incomplete: dict[str, list[str]] = {}
    for p in sorted(met_dir.glob("*.score")):
        full, ref, level = _parse_metric_name(p)
        used = _refs_used(ref, ref_names)
        if not used <= {reference}:
            other_ref.append(full)
            continue
        if level in ("doc", "domain"):
            other_level.append(f"{full}.{level}")
            continue
        df = _read_score_file(p, level, n, all_systems)
        dropped_sys.update(set(df["system"]) - set(systems))
        df = df[df["system"].isin(systems)]
        n_none += int(df["score"].isna().sum())
        lacking = sorted(set(systems) - set(df["system"]) - used)
        if lacking:
            incomplete[f"{full}.{level}"] = lacking
        located.append(pd.DataFrame({
            "metric": full, "system": df["system"].to_numpy(),
            "item": (np.asarray(items, dtype=object)[df["pos"].to_numpy()] if level == "seg"
                     else ""),
            "score": df["score"].to_numpy(), "_source": str(p),
            "_row": df["_row"].to_numpy(), "_level": level}))
    if other_ref:
        notes.append(f"{len(other_ref)} metric file(s) computed with another reference "
                     f"than '{reference}' not loaded (MTME excludes them too): "
                     f"{', '.join(other_ref[:4])}{' ...' if len(other_ref) > 4 else ''}")
    if other_level:
        notes.append(f"{len(other_level)} doc/domain-level metric file(s) not loaded")
    if dropped_sys:
        notes.append("metric scores of excluded system(s) "
                     f"{', '.join(sorted(dropped_sys))} left out")
    if n_none:
        notes.append(f"{n_none} metric score(s) None/nan: kept as missing (NaN)")
    for k, v in incomplete.items():
        notes.append(f"metric file {k} has no scores for {', '.join(v)} (MTME would "
                     "pad them with 0; here they are missing)")
    return located


def _drop_missing_outputs(df: pd.DataFrame, outputs: pd.DataFrame, n_missing_out: int,
                          what: str, notes: list[str]) -> pd.DataFrame:
    """Segment-level rows of outputs marked "no translation" left out (with a note)."""
    if not n_missing_out or not len(df):
        return df
    have = pd.MultiIndex.from_frame(outputs[["system", "item"]])
    seg_rows = (df["_level"] == "seg").to_numpy() if "_level" in df else np.ones(len(df), bool)
    ok = np.ones(len(df), dtype=bool)
    ok[seg_rows] = pd.MultiIndex.from_frame(df.loc[seg_rows, ["system", "item"]]).isin(have)
    if ok.all():
        return df
    notes.append(f"{int((~ok).sum())} {what} score(s) of outputs marked "
                 f"'{NO_TRANSLATION}' left out")
    return df[ok].reset_index(drop=True)


def _orientation(metric_names: list[str], lower_is_better: Collection[str], notes: list[str]
                 ) -> dict[str, bool]:
    """``{metric: higher_is_better}``: MTME's scores are higher-is-better unless named."""
    lower = set(lower_is_better)
    unknown_lower = sorted(lower - set(metric_names))
    if unknown_lower:
        raise InputError(f"lower_is_better names metric(s) not loaded: {', '.join(unknown_lower)}"
                         f" (loaded: {', '.join(metric_names[:8]) or 'none'})")
    if metric_names:
        notes.append("orientation: MTME records none (its correlations never flip a sign; MQM "
                     "is stored negated), so all metric scores are taken as higher-is-better"
                     + (f" except {', '.join(sorted(lower))}" if lower else ""))
    return {m: m not in lower for m in metric_names}


def _by_level(loc: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Segment-level ``system, item, metric, score`` and system-level ``system, metric, score``
    rows of the located metric scores."""
    scores = loc.loc[loc["_level"] == "seg", list(SCORE_COLUMNS)].reset_index(
        drop=True).astype({"score": float})
    system_scores = loc.loc[loc["_level"] == "sys", list(SYSTEM_SCORE_COLUMNS)].reset_index(
        drop=True).astype({"score": float})
    return scores, system_scores
