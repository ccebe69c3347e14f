"""Table 9 of Reiter & Belz (2009): significant differences predicted by each metric.

Reference: the counts are recomputed here independently with ``scipy.stats.wilcoxon`` on
per-item pairs and a hand-written Bonferroni correction, then classified by hand.
"""

from __future__ import annotations

from itertools import combinations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from nlgeval.errors import InputError
from nlgeval.human.metric_agreement import (
    TABLE9_COLUMNS,
    significant_difference_agreement,
    significant_difference_pairs,
)


def make_data(seed: int = 0) -> tuple[pd.DataFrame, pd.DataFrame]:
    rng = np.random.default_rng(seed)
    systems = {"A": 2.0, "B": 1.0, "C": 0.0, "D": 0.05}
    items = [f"i{k}" for k in range(30)]
    item_eff = rng.normal(0, 1, len(items))
    human, metric = [], []
    for s, mu in systems.items():
        for k, it in enumerate(items):
            h = mu + item_eff[k] + rng.normal(0, 0.5)
            human.append({"system": s, "item": it, "score": h})
            metric.append({"metric": "good", "system": s, "item": it,
                           "score": h + rng.normal(0, 0.1)})
            metric.append({"metric": "reversed", "system": s, "item": it, "score": -h})
            metric.append({"metric": "ter_like", "system": s, "item": it,
                           "score": -h + rng.normal(0, 0.1)})
            metric.append({"metric": "noise", "system": s, "item": it,
                           "score": rng.normal(0, 1)})
            # separates C and D (humans do not), flat elsewhere
            metric.append({"metric": "spurious", "system": s, "item": it,
                           "score": (5.0 if s == "D" else 0.0) + rng.normal(0, 0.1)})
    return pd.DataFrame(human), pd.DataFrame(metric)


def by_hand(human: pd.DataFrame, metric: pd.DataFrame, hib: dict[str, bool]) -> pd.DataFrame:
    systems = list(dict.fromkeys(human["system"]))
    pairs = list(combinations(systems, 2))

    def tests(df: pd.DataFrame) -> dict[tuple[str, str], tuple[bool, int]]:
        wide = df.pivot(index="item", columns="system", values="score")
        out = {}
        for a, b in pairs:
            res = stats.wilcoxon(wide[a], wide[b])
            d = wide[a] - wide[b]
            ranks = stats.rankdata(np.abs(d[d != 0]))
            sign = np.sign(ranks[d[d != 0] > 0].sum() - ranks[d[d != 0] < 0].sum())
            out[(a, b)] = (min(1.0, res.pvalue * len(pairs)) <= 0.05, int(sign))
        return out

    h = tests(human)
    rows = []
    for m, g in metric.groupby("metric", sort=False):
        g = g.assign(score=g["score"] * (1 if hib.get(m, True) else -1))
        t = tests(g)
        c = {"predicted": 0, "backwards": 0, "missed": 0, "spurious": 0}
        for p in pairs:
            hs, hd = h[p]
            ms, md = t[p]
            if hs and ms and hd == md:
                c["predicted"] += 1
            elif hs and ms:
                c["backwards"] += 1
            elif hs:
                c["missed"] += 1
            elif ms:
                c["spurious"] += 1
        rows.append({"metric": m, "human_significant": sum(v[0] for v in h.values()), **c})
    return pd.DataFrame(rows)


def test_table9_matches_independent_computation() -> None:
    human, metric = make_data()
    hib = {"ter_like": False}
    got = significant_difference_agreement(human, metric, higher_is_better=hib)
    assert list(got.columns) == list(TABLE9_COLUMNS)
    ref = by_hand(human, metric, hib)
    pd.testing.assert_frame_equal(got.reset_index(drop=True), ref, check_dtype=False)
    g = got.set_index("metric")
    hs = g.loc["good", "human_significant"]
    assert hs == 5  # all pairs but C-D
    assert g.loc["good", "predicted"] == hs
    assert g.loc["reversed", "backwards"] == hs
    assert g.loc["ter_like", "predicted"] == hs  # oriented by higher_is_better
    assert g.loc["spurious", "spurious"] == 1
    assert (g["predicted"] + g["backwards"] + g["missed"] == g["human_significant"]).all()


def test_pairs_detail_and_averaging_of_raters() -> None:
    human, metric = make_data(1)
    # two raters per output, averaged before testing
    two = pd.concat([human.assign(score=human["score"] + 0.1),
                     human.assign(score=human["score"] - 0.1)])
    a = significant_difference_pairs(two, metric)
    b = significant_difference_pairs(human, metric)
    pd.testing.assert_series_equal(a["outcome"], b["outcome"])
    assert set(a["outcome"]) <= {"predicted", "backwards", "missed", "spurious",
                                 "agree-not-significant"}


def test_metric_missing_system_errors() -> None:
    human, metric = make_data()
    with pytest.raises(InputError, match="no scores for system"):
        significant_difference_agreement(human, metric[metric["system"] != "D"])
    with pytest.raises(InputError, match="missing"):
        significant_difference_agreement(human, metric.drop(columns=["metric"]))


def test_table9_paper_table(tmp_path) -> None:  # noqa: ANN001
    from nlgeval.human.report import table9

    human, metric = make_data()
    t = table9(significant_difference_agreement(human, metric))
    paths = t.write(tmp_path, "table9")
    assert len(paths) == 3
    tex = (tmp_path / "table9.tex").read_text()
    assert "Predicted" in tex and "ter\\_like" in tex and "\\toprule" in tex


def test_cache_shared_across_criteria_gives_the_same_tables() -> None:
    """Reusing a metric's tests across criteria (as validate does) changes no number."""
    human, metric = make_data(3)
    other = human.assign(score=human["score"] + np.random.default_rng(9).normal(0, 1, len(human)))
    cache: dict = {}
    for h in (human, other):
        want = significant_difference_pairs(h, metric)
        got = significant_difference_pairs(h, metric, cache=cache)
        pd.testing.assert_frame_equal(got, want)
    assert len(cache) == 5  # one entry per metric: the rated outputs were the same each time
    fewer = human[human["item"] != "i0"]
    pd.testing.assert_frame_equal(significant_difference_pairs(fewer, metric, cache=cache),
                                  significant_difference_pairs(fewer, metric))
    assert len(cache) == 10  # other outputs, new tests
