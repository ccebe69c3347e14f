"""The tables of the validation study beside the correlations: scores per system, the wide
per-output frame for plots, and the comparison with the correlations the WebNLG 2020
organisers published (:mod:`nlgeval.report.published`).
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

import pandas as pd

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
    m = seg[seg["system"].isin(systems)].pivot_table(
        index=["system", "item"], columns="metric", values="score", aggfunc="first")
    h = human[human["system"].isin(systems)].pivot_table(
        index=["system", "item"], columns="criterion", values="score", aggfunc="first")
    h = h.rename(columns={c: f"{c} (human)" for c in h.columns if c in m.columns})
    wide = m.join(h, how="inner").reset_index()
    keep = ["system", "item", *[c for c in metrics if c in wide.columns],
            *[c for c in criteria if c in wide.columns]]
    return wide[keep]


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
