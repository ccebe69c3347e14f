"""The tables of the validation study beside the correlations: scores per system, the wide
per-output frame for plots, and the comparison with the correlations the WebNLG 2020
organisers published (:mod:`nlgeval.report.published`).
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from nlgeval.codes import name_positions, sorted_names
from nlgeval.corpus import Corpus
from nlgeval.correlation.coefficients import DegenerateInputWarning
from nlgeval.correlation.levels import (
    default_names,
    frame_codes_by,
    level_correlation,
    score_matrices,
)


def metric_system_table(
    seg: pd.DataFrame, cs: pd.DataFrame, metrics: Sequence[str], systems: Sequence[str],
    human: pd.DataFrame,
) -> pd.DataFrame:
    """Metric scores per system (Reiter & Belz 2009, Tables 5/7): the corpus-level score
    where ``cs`` has one, else the mean of the segment scores.

    Examples
    --------
    >>> seg = pd.DataFrame({"metric": "m", "system": ["A", "A", "B"], "item": ["1", "2", "1"],
    ...                     "score": [1.0, 3.0, 5.0]})
    >>> metric_system_table(seg, None, ["m"], ["A", "B"], None)["m"].tolist()
    [2.0, 5.0]
    """
    table = pd.DataFrame({"system": list(systems)})
    for m in metrics:
        col = None
        if cs is not None and len(cs) and "metric" in cs.columns:
            sub = cs[cs["metric"] == m].set_index("system")["score"]
            if len(sub):
                col = table["system"].map(sub).astype(float)
        if col is None:
            sub = seg[seg["metric"] == m].groupby("system")["score"].mean()
            col = table["system"].map(sub).astype(float)
        table[m] = col
    return table


def human_system_table(
    human: pd.DataFrame, criteria: Sequence[str], excluded: Sequence[str],
    human_systems: Sequence[str] = (),
) -> pd.DataFrame:
    """Mean human score per system and criterion with its rank (1 = best); ``reference``
    marks the systems left out of the metric correlations, ``human-written`` the human
    outputs among them (the human ceiling; the column only when there are some).

    Examples
    --------
    >>> h = pd.DataFrame({"system": ["A", "A", "B", "B"], "item": ["1", "2", "1", "2"],
    ...                   "criterion": "q", "score": [1.0, 2.0, 4.0, 5.0]})
    >>> human_system_table(h, ["q"], ["B"])[["system", "q", "q rank", "reference"]].values.tolist()
    [['B', 4.5, 1, True], ['A', 1.5, 2, False]]
    """
    means = human.pivot_table(index="system", columns="criterion", values="score",
                              aggfunc="mean", sort=False)
    means = means.reindex(columns=list(criteria))
    n = human.groupby("system")["item"].nunique()
    out = pd.DataFrame({"system": means.index.astype(str)})
    out["n_outputs"] = out["system"].map(n).astype(int)
    for c in criteria:
        vals = means[c].to_numpy(float)
        out[c] = vals
        out[f"{c} rank"] = pd.Series(vals).rank(ascending=False, method="min").astype("Int64")
    out["reference"] = out["system"].isin(list(excluded))
    if len(human_systems):
        out["human-written"] = out["system"].isin(list(human_systems))
    sort_col = criteria[0] if criteria else "system"
    return out.sort_values(sort_col, ascending=False).reset_index(drop=True)


def segments_frame(
    seg: pd.DataFrame, human: pd.DataFrame, systems: Sequence[str], metrics: Sequence[str],
    criteria: Sequence[str],
) -> pd.DataFrame:
    """Wide per-output frame (system, item, one column per metric and criterion) for plots.

    Examples
    --------
    >>> seg = pd.DataFrame({"metric": "m", "system": "A", "item": ["1", "2"], "score": [.1, .2]})
    >>> h = pd.DataFrame({"system": "A", "item": ["1", "2"], "criterion": "q", "score": [3, 4]})
    >>> segments_frame(seg, h, ["A"], ["m"], ["q"]).columns.tolist()
    ['system', 'item', 'm', 'q']
    """
    seg, human = seg[seg["system"].isin(systems)], human[human["system"].isin(systems)]
    # what the pandas pivots and their inner join gave (see _pivot_first), from integer codes:
    # their group keys for the 20 M names of a 5 M-output study took 1.5 GB
    names = {k: sorted_names(seg[k], human[k]) for k in ("system", "item")}
    m_pairs, m = _pivot_first(seg, "metric", names)
    h_pairs, h = _pivot_first(human, "criterion", names)
    h = {f"{c} (human)" if c in m else c: v for c, v in h.items()}
    at_h = pd.Index(h_pairs).get_indexer(m_pairs)  # the inner join, in the metrics' order
    rows = np.flatnonzero(at_h >= 0)
    sys_code, item_code = np.divmod(m_pairs[rows], max(1, len(names["item"])))
    wide = pd.DataFrame({"system": names["system"].take(sys_code),
                         "item": names["item"].take(item_code),
                         **{c: v[rows] for c, v in m.items()},
                         **{c: v[at_h[rows]] for c, v in h.items()}})
    # the joined columns' name, as pandas gives it: one side's when the other has none
    wide.columns.name = None if m and h else "metric" if m else "criterion" if h else None
    keep = ["system", "item", *[c for c in metrics if c in wide.columns],
            *[c for c in criteria if c in wide.columns]]
    return wide[keep]


def _pivot_first(frame: pd.DataFrame, column: str, names: dict[str, pd.Index]
                 ) -> tuple[np.ndarray, dict[Any, np.ndarray]]:
    """The rows and columns of ``frame.pivot_table(index=["system", "item"], columns=column,
    values="score", aggfunc="first")``: the outputs' (system, item) codes in the pivot's row
    order and, per value of ``column`` with a score, its first non-missing score of each
    output (NaN where none). Hand-written because the pivot's group keys cost gigabytes at
    scale; its order is pandas': rows sorted by system, then by the item level, which is
    sorted unless the group-by's level holds an item no group with a score is left of
    (``MultiIndex.remove_unused_levels`` then orders it by first appearance)."""
    n_items = max(1, len(names["item"]))
    sc = name_positions(frame["system"], names["system"])
    ic = name_positions(frame["item"], names["item"])
    pair = np.where((sc < 0) | (ic < 0), -1, sc * n_items + ic)
    groups, labels = pd.factorize(frame[column])
    score = frame["score"].to_numpy(dtype=float)
    valid = (pair >= 0) & (groups >= 0) & ~np.isnan(score)
    firsts = {}
    for k in range(len(labels)):
        rows = np.flatnonzero(valid & (groups == k))
        if rows.size:  # the pivot drops a column without a score
            out, first = np.unique(pair[rows], return_index=True)  # first in row order
            firsts[labels[k]] = (out, score[rows[first]])
    pairs = np.unique(np.concatenate([o for o, _ in firsts.values()])) if firsts else \
        np.empty(0, dtype=np.int64)
    order = np.arange(len(pairs))
    item_of = pairs % n_items
    if np.unique(item_of).size < np.unique(ic[ic >= 0]).size:  # an unused item level
        seen, first = np.unique(item_of, return_index=True)
        rank = np.empty(n_items, dtype=np.int64)
        rank[seen[np.argsort(first, kind="stable")]] = np.arange(seen.size)
        order = np.lexsort((rank[item_of], pairs // n_items))
    cols = {}
    for name, (out, vals) in firsts.items():
        col = np.full(len(pairs), np.nan)
        col[np.searchsorted(pairs, out)] = vals
        cols[name] = col[order]
    return pairs[order], cols


def published_table(
    corpus: Corpus, seg: pd.DataFrame, systems: Sequence[str], metrics: Sequence[str],
    criteria: Sequence[str], normalise: str, human: pd.DataFrame,
) -> pd.DataFrame | None:
    """Our segment-level Pearson r as the WebNLG 2020 organisers computed theirs (per-rater
    z-normalised human scores; Castro Ferreira et al. 2020), next to the published values
    (:func:`nlgeval.report.published.published_comparison`); None for other corpora or when
    no metric has a published counterpart.

    Examples
    --------
    >>> from nlgeval.corpora import load_corpus
    >>> c = load_corpus("e2e")
    >>> published_table(c, pd.DataFrame(columns=["metric", "system", "item", "score"]),
    ...                 c.systems, ["rouge1"], c.criteria, "none", None) is None
    True
    """
    from nlgeval.report.published import WEBNLG2020_METRIC_MAP, published_comparison

    todo = [m for m in metrics if m in WEBNLG2020_METRIC_MAP]
    if not todo:
        return None
    hz = human if normalise == "z" else corpus.human_scores(normalise="z", criteria=criteria)
    hz = hz.assign(system=hz["system"].astype(str), item=hz["item"].astype(str))
    rows = []
    # each metric's and each criterion's codes once (not once per metric x criterion pair)
    by_metric = frame_codes_by(seg, "metric", todo)
    by_crit = frame_codes_by(hz, "criterion", list(criteria), "human")
    cols = ["system", "item", "score"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DegenerateInputWarning)
        for m in todo:
            for crit in criteria:
                mc, hc = by_metric[m], by_crit[crit]
                if mc is None or hc is None:  # a duplicated output: the error names it
                    score_matrices(seg.loc[seg["metric"] == m, cols],
                                   hz.loc[hz["criterion"] == crit, cols], systems=systems)
                    continue
                mats = mc.matrices(hc, *default_names(mc, hc, systems=systems))
                lc = level_correlation(mats.metric, mats.human, "segment", "pearson")
                rows.append({"metric": m, "criterion": crit, "r": lc.statistic})
    return published_comparison(corpus.name, pd.DataFrame(rows))


def missing_summary(missing: dict[str, dict[str, int]]) -> dict[str, Any]:
    """run.json's ``missing``: the counts per ``metric|criterion`` and the first as example.

    Examples
    --------
    >>> missing_summary({"bleu|q": {"complete": 9, "unrated": 1}})["example"]
    {'complete': 9, 'unrated': 1}
    """
    if not missing:
        return {}
    first = next(iter(missing.values()))
    total = {k: int(v) for k, v in first.items()}
    return {"per_metric_criterion": missing, "example": total}
