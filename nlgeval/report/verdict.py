"""The verdict of a validation study: which metrics to trust, per criterion and level, and when
not to say.

For every criterion and every level of the study (not only the first), the verdict names the
metrics in the top significance cluster -- the metrics no other metric beats significantly
(WMT rank clusters, MTME ``AssignRanks``, here on p-values corrected for the metric pairs
compared, :mod:`nlgeval.report.corrections`) -- and how many they are ("14 metrics cannot be
told apart at 10 systems"). It is withheld, with the reason, when

* the humans do not agree on the criterion: one rater against the mean of the others (the
  leave-one-rater-out reference of :func:`nlgeval.correlation.human.rater_agreement_bound`)
  correlates below :data:`MIN_AGREEMENT` or not significantly, or the intraclass correlation
  ICC(1,1) (Shrout & Fleiss 1979, :func:`rater_icc`) is below it or not significant -- a
  metric cannot be validated against a criterion the raters themselves do not share;
* no metric agrees with the humans significantly at that level (after correction);
* the metrics could not be compared there (e.g. ``--permutations 0`` at item level).

The human ceiling (one rater vs the others, :func:`rater_ceiling`) is given at every level it
can be computed, next to the best metric's r.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from nlgeval.codes import pair_codes, sort_codes

#: Leave-one-rater-out r below which the verdict on a criterion is withheld.
MIN_AGREEMENT = 0.1
UNITS = {"system": "systems", "segment": "outputs", "item": "items",
         "system-grouped": "systems"}


def rater_ceiling(
    ratings: pd.DataFrame, criterion: str, systems: Sequence[str], levels: Sequence[str],
    coefficient: str = "pearson", seed: int = 0,
) -> dict[str, float]:
    """One rater vs the others at every level: per output with two or more raters, one rater
    drawn at random (``numpy.random.default_rng(seed)``) against the mean of the other raters;
    the two (systems x items) matrices correlated like a metric and the humans. NaN where
    it cannot be computed (a single rater per output).

    Examples
    --------
    >>> rng = np.random.default_rng(1)
    >>> q = rng.normal(size=(6, 30))
    >>> rows = [{"rater": f"r{k}", "system": f"s{s}", "item": f"i{i}", "criterion": "c",
    ...          "score": q[s, i] + rng.normal(scale=0.5)}
    ...         for s in range(6) for i in range(30) for k in range(3)]
    >>> out = rater_ceiling(pd.DataFrame(rows), "c", [f"s{s}" for s in range(6)],
    ...                     ["segment", "item"])
    >>> sorted(out), 0.6 < out["segment"] < 0.95
    (['item', 'segment'], True)
    """
    from nlgeval.correlation.coefficients import DegenerateInputWarning
    from nlgeval.correlation.levels import level_correlation, score_matrices

    r = ratings[(ratings["criterion"] == criterion)
                & ratings["system"].astype(str).isin(list(systems))]
    r = r[np.isfinite(r["score"].astype(float))]
    # the rows in the order of r.sort_values(["system", "item", "rater"]), without sorting
    # a copy of the frame (5 M ratings at scale): pandas sorts several columns by each
    # one's ordered Categorical codes, missing last, with a stable np.lexsort
    order = np.lexsort([sort_codes(r[c]) for c in ("rater", "item", "system")])
    out = {lv: math.nan for lv in levels}
    # the outputs as integer codes (a missing name: no output), in arrays from here on
    sys_s, item_s = r["system"].astype(str), r["item"].astype(str)
    key = pair_codes(sys_s, item_s)[order]
    valid = key >= 0  # numbered again in order of first appearance in the sorted rows
    key[valid] = pd.factorize(key[valid])[0]
    count = np.bincount(key[key >= 0])
    keep = np.flatnonzero(key >= 0)
    keep = keep[count[key[keep]] >= 2]
    if keep.size == 0:
        return out
    rows = order[keep]  # positions in r
    key, score = key[keep], r["score"].to_numpy(dtype=float)[rows]
    u = np.random.default_rng(seed).random(keep.size)
    top = np.full(count.size, -np.inf)
    np.maximum.at(top, key, u)
    pick = top[key] == u
    # pandas' group sum (compensated), as before; the count is exact either way
    total = pd.Series(score).groupby(key).transform("sum").to_numpy()
    rest_mean = (total - score) / (count[key] - 1)
    names = {"system": sys_s.iloc[rows[pick]].to_numpy(),
             "item": item_s.iloc[rows[pick]].to_numpy()}
    mats = score_matrices(pd.DataFrame({**names, "score": score[pick]}),
                          pd.DataFrame({**names, "score": rest_mean[pick]}),
                          systems=sorted(map(str, systems)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DegenerateInputWarning)
        for lv in levels:
            out[lv] = float(level_correlation(mats.metric, mats.human, lv, coefficient,
                                              n_resamples=0).statistic)
    return out


def rater_icc(ratings: pd.DataFrame, criterion: str, alpha: float = 0.05) -> tuple[float, float]:
    """ICC(1,1) of the raters on ``criterion`` (Shrout & Fleiss 1979; one-way for the usual
    design where different raters rate different outputs, :func:`nlgeval.human.intraclass.icc`)
    and the p-value of its F test of ICC = 0; NaN when it cannot be computed (one rating per
    output).

    >>> df = pd.DataFrame({"rater": ["r1", "r2"] * 4, "item": list("11223344"), "system": "a",
    ...                    "criterion": "q", "score": [1, 1, 2, 2, 3, 2, 4, 4]})
    >>> round(rater_icc(df, "q")[0], 3)
    0.923
    """
    from nlgeval.errors import InputError
    from nlgeval.human.intraclass import icc_oneway_grouped

    sub = ratings[ratings["criterion"] == criterion]
    score = sub["score"].to_numpy(float)
    ok = np.isfinite(score)
    # ICC(1,1) is the one-way form in every design (Shrout & Fleiss 1979): one group of
    # ratings per output, split from one sort instead of a pandas group loop
    codes = pair_codes(sub["system"].astype(str)[ok], sub["item"].astype(str)[ok],
                       missing_as_name=True)
    order = np.argsort(codes, kind="stable")
    sizes = np.unique(codes, return_counts=True)[1]  # the groups' sizes, in the sorted order
    try:
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            forms = icc_oneway_grouped(score[ok][order], sizes, alpha)
    except (InputError, ValueError, ZeroDivisionError):
        return math.nan, math.nan
    one = next((f for f in forms if f.type == "ICC(1,1)"), None)
    return (float(one.icc), float(one.pvalue)) if one is not None else (math.nan, math.nan)


def _agreement(rater_agreement: pd.DataFrame, criterion: str, alpha: float) -> str:
    """Why the humans' agreement on ``criterion`` is too low for a verdict ('' = fine)."""
    if rater_agreement is None or rater_agreement.empty:
        return ""
    row = rater_agreement[rater_agreement["criterion"] == criterion]
    if row.empty:
        return ""
    r, p = float(row["pooled_r"].iloc[0]), float(row["pooled_p"].iloc[0])
    icc = float(row["icc_1_1"].iloc[0]) if "icc_1_1" in row.columns else math.nan
    icc_p = float(row["icc_p"].iloc[0]) if "icc_p" in row.columns else math.nan
    low_r = np.isfinite(r) and (r < MIN_AGREEMENT or not (np.isfinite(p) and p < alpha))
    low_icc = np.isfinite(icc) and (icc < MIN_AGREEMENT
                                    or not (np.isfinite(icc_p) and icc_p < alpha))
    if not (low_r or low_icc):
        return ""
    parts = [f"one rater vs the mean of the others r = {r:.2f} (p = {p:.2g})"
             if np.isfinite(r) else "", f"ICC(1,1) = {icc:.2f}" if np.isfinite(icc) else ""]
    return (f"the raters do not agree on {criterion}: {', '.join(x for x in parts if x)}; a "
            "metric cannot be validated against a criterion the raters do not share")


def _level_entry(
    crit: str, level: str, clusters_df: pd.DataFrame, corr: pd.DataFrame, alpha: float,
    ceiling: float, withheld: str,
) -> dict[str, Any] | None:
    """The verdict of one criterion at one level (None when fewer than 2 metrics there)."""
    rows = corr[(corr["criterion"] == crit) & (corr["level"] == level)
                & corr["pvalue"].notna()]
    if rows.empty or rows["metric"].nunique() < 2:
        return None
    here = clusters_df[(clusters_df["criterion"] == crit) & (clusters_df["level"] == level)] \
        if len(clusters_df) else clusters_df
    # the statistic the metrics were compared on (clusters), else the first one tested
    tested = [str(c) for c in dict.fromkeys(rows["statistic"])]
    clustered = set(here["statistic"].astype(str)) if len(here) else set()
    stat = next((c for c in tested if c in clustered), tested[0])
    rows = rows[rows["statistic"] == stat]
    cl = here[here["statistic"] == stat] if len(here) else here
    entry: dict[str, Any] = {"criterion": crit, "level": level, "statistic": stat, "top": [],
                             "n_top": 0, "n_metrics": int(rows["metric"].nunique()),
                             "value": math.nan, "n": None, "human_ceiling": ceiling,
                             "withheld": withheld}
    best = rows.sort_values("value", ascending=False, na_position="last").iloc[0]
    entry.update(value=float(best["value"]), n=int(best["n"]) if pd.notna(best["n"]) else None)
    pcol = "pvalue_corrected" if "pvalue_corrected" in rows.columns else "pvalue"
    if not withheld and not (best["value"] > 0 and float(best[pcol]) < alpha):
        entry["withheld"] = (f"no metric agrees with the humans significantly at {level} "
                             f"level (best: {best['metric']}, r = {best['value']:.2f}, corrected "
                             f"p = {float(best[pcol]):.2g})" + (
                                 "; item-level p-values come from within-item permutations, "
                                 "none below 1 / (permutations + 1): raise --permutations"
                                 if level == "item" else ""))
    if not entry["withheld"]:
        if cl is None or cl.empty:
            entry["withheld"] = (f"the metrics could not be compared at {level} level (no "
                                 "comparison test ran there, e.g. --permutations 0)")
        else:
            col = "cluster_corrected" if "cluster_corrected" in cl.columns else "cluster"
            top = cl[cl[col] == 1].sort_values("value", ascending=False)
            entry.update(top=top["metric"].tolist(), n_top=len(top))
    return entry


def study_verdict(
    leaderboards: Mapping[str, pd.DataFrame], clusters_df: pd.DataFrame,
    correlations: pd.DataFrame, criteria: Sequence[str], levels: Sequence[str],
    rater_agreement: pd.DataFrame | None = None, alpha: float = 0.05,
    ceilings: Mapping[str, Mapping[str, float]] | None = None,
) -> list[dict[str, Any]]:
    """Per criterion: the WMT leaderboard's top cluster when one was computed, then one entry
    per level (module docstring); each has a ``line`` in words.

    Examples
    --------
    >>> corr = pd.DataFrame({"metric": ["a", "b"], "criterion": "q", "level": "system",
    ...                      "statistic": "pearson", "value": [0.9, 0.8], "pvalue": [0.001, 0.01],
    ...                      "pvalue_corrected": [0.002, 0.01], "n": 10})
    >>> cl = pd.DataFrame({"metric": ["a", "b"], "value": [0.9, 0.8], "cluster": [1, 1],
    ...                    "cluster_corrected": [1, 1], "criterion": "q", "level": "system",
    ...                    "statistic": "pearson"})
    >>> print(study_verdict({}, cl, corr, ["q"], ["system"])[0]["line"])  # doctest: +ELLIPSIS
    q, system level (pearson, 10 systems): top cluster, 2 of 2 metrics ... apart: a, b
    """
    from nlgeval.report.meta import verdict as leaderboard_verdict

    out = []
    for crit in criteria:
        withheld = _agreement(rater_agreement, crit, alpha)
        unchecked = {"agreement": _unchecked(rater_agreement, crit)}
        for v in leaderboard_verdict(leaderboards, pd.DataFrame(columns=["criterion"]),
                                     correlations, [crit], levels):
            v = {**v, "n_top": len(v["top"]), "withheld": withheld, "human_ceiling": None,
                 **unchecked}
            out.append({**v, "line": verdict_text(v)})
        for lv in levels:
            ceiling = (ceilings or {}).get(crit, {}).get(lv, math.nan)
            e = _level_entry(crit, lv, clusters_df, correlations, alpha, ceiling, withheld)
            if e is not None:
                e.update(unchecked)
                out.append({**e, "line": verdict_text(e)})
    return out


def _unchecked(rater_agreement: pd.DataFrame | None, criterion: str) -> str:
    """'' when the raters' agreement was measured, else why it could not be."""
    if rater_agreement is None or rater_agreement.empty:
        return ""
    row = rater_agreement[rater_agreement["criterion"] == criterion]
    if row.empty or np.isfinite(float(row["pooled_r"].iloc[0])):
        return ""
    return ("rater agreement unknown (one score per output: no rater column, or one rater "
            "each), so it could not be checked")


def verdict_text(v: Mapping[str, Any]) -> str:
    """One verdict entry in words.

    >>> verdict_text({"criterion": "q", "level": "item", "statistic": "pearson", "n": 40,
    ...               "withheld": "the raters do not agree on q"})
    'q, item level (pearson, 40 items): no verdict -- the raters do not agree on q'
    """
    n = v.get("n")
    unit = f", {n} {UNITS.get(v['level'], 'units')}" if n is not None else ""
    head = f"{v['criterion']}, {v['level']} level ({v['statistic']}{unit})"
    if v.get("withheld"):
        return f"{head}: no verdict -- {v['withheld']}" + (
            f"; {v['agreement']}" if v.get("agreement") else "")
    top = list(v["top"])
    shown = ", ".join(top[:12]) + (" ..." if len(top) > 12 else "")
    if len(top) == 1:
        text = f"{head}: top cluster {top[0]} alone"
    else:
        of = f" of {v['n_metrics']}" if v.get("n_metrics") else ""
        text = f"{head}: top cluster, {len(top)}{of} metrics that cannot be told apart: {shown}"
    ceiling = v.get("human_ceiling")
    if ceiling is not None and np.isfinite(ceiling):
        text += f" (best r {v['value']:.2f}; one rater vs the others {ceiling:.2f})"
    if v.get("agreement"):
        text += f"; {v['agreement']}"
    return text
