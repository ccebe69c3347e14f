"""segments_frame (the wide per-output frame of the report) against the pandas pivot it
replaced, kept here verbatim as the reference (nlgeval 32421fd): the same frame, values,
NaN cells, row order, column order and dtypes, on random frames with duplicated outputs,
missing scores and names, categorical metric names, a metric without scores, a criterion
named like a metric and systems left out."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from nlgeval.report.tables import segments_frame


def _old_segments_frame(seg, human, systems, metrics, criteria):
    m = seg[seg["system"].isin(systems)].pivot_table(
        index=["system", "item"], columns="metric", values="score", aggfunc="first")
    h = human[human["system"].isin(systems)].pivot_table(
        index=["system", "item"], columns="criterion", values="score", aggfunc="first")
    h = h.rename(columns={c: f"{c} (human)" for c in h.columns if c in m.columns})
    wide = m.join(h, how="inner").reset_index()
    keep = ["system", "item", *[c for c in metrics if c in wide.columns],
            *[c for c in criteria if c in wide.columns]]
    return wide[keep]


def _frames(rng: np.random.Generator, kind: str) -> tuple[pd.DataFrame, pd.DataFrame,
                                                        list[str], list[str], list[str]]:
    systems = [f"s{k}" for k in range(int(rng.integers(1, 6)))]
    items = [str(i) for i in range(int(rng.integers(1, 25)))]  # "10" sorts before "9"
    metrics = ["bleu", "chrf", "ter"][: int(rng.integers(1, 4))]
    criteria = ["fluency", "adequacy"][: int(rng.integers(1, 3))]
    if kind == "clash":
        criteria = [*criteria, metrics[0]]
    seg = pd.DataFrame([(m, s, i) for m in metrics for s in systems for i in items
                        if rng.random() < 0.8], columns=["metric", "system", "item"])
    seg["score"] = rng.normal(size=len(seg))
    hum = pd.DataFrame([(s, i, c) for c in criteria for s in systems for i in items
                        if rng.random() < 0.7], columns=["system", "item", "criterion"])
    hum["score"] = rng.integers(1, 6, size=len(hum)).astype(float)
    if kind in ("duplicates", "missing"):
        seg = pd.concat([seg, seg.sample(frac=0.3, random_state=int(rng.integers(99)))
                         .assign(score=lambda d: d["score"] + 1.0)], ignore_index=True)
        seg.loc[rng.random(len(seg)) < 0.2, "score"] = np.nan
        hum.loc[rng.random(len(hum)) < 0.1, "score"] = np.nan
    if kind == "missing":
        seg.loc[rng.random(len(seg)) < 0.05, "system"] = None
        seg.loc[rng.random(len(seg)) < 0.05, "item"] = None
        hum.loc[rng.random(len(hum)) < 0.05, "item"] = None
        seg.loc[seg["metric"] == metrics[-1], "score"] = np.nan  # a metric without scores
    if kind == "orphans":  # names only in rows without a system or metric, no missing score
        extra = pd.DataFrame({"metric": [None, metrics[0]], "system": [systems[0], None],
                              "item": ["zz", "yy"], "score": [1.0, 2.0]})
        seg = pd.concat([seg, extra], ignore_index=True)
    if kind == "categorical":
        seg["metric"] = seg["metric"].astype("category")
    if kind == "str":
        seg = seg.astype({"system": "str", "item": "str"})
        hum = hum.astype({"system": "str", "item": "str"})
    keep = [s for s in systems if rng.random() < 0.8] or systems[:1]
    return seg.sample(frac=1.0, random_state=int(rng.integers(99))), hum, keep, metrics, \
        criteria


@pytest.mark.parametrize("kind", ["plain", "duplicates", "missing", "orphans", "categorical",
                                  "clash", "str"])
def test_segments_frame_equals_the_pivot(kind: str) -> None:
    rng = np.random.default_rng(len(kind))
    for _ in range(40):
        seg, hum, systems, metrics, criteria = _frames(rng, kind)
        got = segments_frame(seg, hum, systems, metrics, criteria)
        ref = _old_segments_frame(seg, hum, systems, metrics, criteria)
        pd.testing.assert_frame_equal(got, ref, check_exact=True)
        assert got.to_csv(index=False) == ref.to_csv(index=False)


def test_segments_frame_of_no_common_output() -> None:
    seg = pd.DataFrame({"metric": "m", "system": "A", "item": ["1", "2"], "score": [.1, .2]})
    hum = pd.DataFrame({"system": "A", "item": ["3"], "criterion": "q", "score": [4.0]})
    got = segments_frame(seg, hum, ["A"], ["m"], ["q"])
    ref = _old_segments_frame(seg, hum, ["A"], ["m"], ["q"])
    assert got.columns.tolist() == ref.columns.tolist() and len(got) == len(ref) == 0
