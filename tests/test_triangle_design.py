"""The triangle questionnaire: balanced orders (González-Corbelle et al. 2020, sec. 4.1 step 3),
items, contract 4."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from nlgeval.errors import InputError
from nlgeval.triangle.analysis import analyse_responses
from nlgeval.triangle.design import ORDERS, design_summary, odd_position, triangle_design

CONTRACT = ["judge", "position", "item", "order", "source_1", "source_2", "source_3",
            "odd_position", "test"]


def test_contract_columns_and_consistency():
    df = triangle_design(30, seed=7, source_a="human", source_b="neural", items=12)
    assert set(CONTRACT) <= set(df.columns)
    assert len(df) == 30 and df["judge"].map(type).eq(str).all()
    for r in df.itertuples():
        sources = [r.source_1, r.source_2, r.source_3]
        letters = ["human" if c == "A" else "neural" for c in r.order]
        assert sources == letters
        odd = sources[r.odd_position - 1]
        assert sources.count(odd) == 1 and odd == r.odd_source
        items = [r.item_1, r.item_2, r.item_3]
        assert len(set(items)) == 3 and r.item == "|".join(items)


@pytest.mark.parametrize("judges,counts", [(64, (11, 10)), (98, (17, 16)), (36, (6, 6))])
def test_orders_balanced_as_in_the_paper(judges, counts):
    df = triangle_design(judges, seed=3, items=20)
    c = sorted(design_summary(df)["order_counts"].values(), reverse=True)
    hi, lo = counts
    # seed: 64 judges -> four orders 11 times, two 10 times; 98 -> 16*4 + 17*2
    n_hi = judges % 6 if judges % 6 else 6
    assert c == [hi] * n_hi + [lo] * (6 - n_hi)
    # every complete group of six consecutive evaluations shows all six orders
    full = df[df["block"] <= judges // 6]
    assert full.groupby("block")["order"].nunique().eq(6).all()


def test_repeated_evaluations_for_difference_only():
    df = triangle_design(4, seed=1, evaluations_per_judge=6, items=18)
    assert len(df) == 24
    # the paper's expert panel: each of the 4 judges evaluates the six orders once
    assert df.groupby("judge")["order"].nunique().eq(6).all()
    # with enough items a judge never sees an item twice
    for _, g in df.groupby("judge"):
        seen = pd.concat([g["item_1"], g["item_2"], g["item_3"]])
        assert seen.is_unique
    with pytest.raises(InputError, match="not allowed in a test of similarity"):
        triangle_design(40, seed=1, evaluations_per_judge=2, test="similarity")


def test_reproducible_and_seed_dependent():
    a = triangle_design(50, seed=11, items=9)
    b = triangle_design(50, seed=11, items=9)
    c = triangle_design(50, seed=12, items=9)
    pd.testing.assert_frame_equal(a, b)
    assert not a.equals(c)


def test_items_used_evenly():
    df = triangle_design(40, seed=5, items=10)
    s = design_summary(df)
    assert s["item_uses_max"] - s["item_uses_min"] <= 1
    assert s["items"] == 10


def test_pool_of_matched_texts():
    pool = pd.DataFrame({
        "system": ["meteo"] * 5 + ["nlg"] * 4,
        "item": ["d1", "d2", "d3", "d4", "d5", "d1", "d2", "d3", "d4"],
        "text": [f"human text {i}" for i in range(1, 6)]
        + [f"system text {i}" for i in range(1, 5)],
    })
    df = triangle_design(12, seed=2, pool=pool)
    assert set(df["source_1"]) | set(df["source_2"]) == {"meteo", "nlg"}
    used = set(df["item_1"]) | set(df["item_2"]) | set(df["item_3"])
    assert used <= {"d1", "d2", "d3", "d4"}  # d5 has no system text
    assert any("only one source" in n for n in df.attrs["notes"])
    for r in df.itertuples():
        for k in (1, 2, 3):
            src, item, text = getattr(r, f"source_{k}"), getattr(r, f"item_{k}"), getattr(
                r, f"text_{k}")
            expected = pool[(pool.system == src) & (pool.item == item)].text.item()
            assert text == expected


def test_design_errors():
    with pytest.raises(InputError, match="at least 3"):
        triangle_design(10, seed=1, items=2)
    with pytest.raises(InputError, match=">= 1"):
        triangle_design(0, seed=1)
    with pytest.raises(InputError, match="differ"):
        triangle_design(6, seed=1, source_a="x", source_b="x")
    with pytest.raises(InputError, match="name the two"):
        triangle_design(6, seed=1, pool=pd.DataFrame(
            {"source": ["a", "b", "c"], "item": ["1", "1", "1"], "text": ["x", "y", "z"]}))
    with pytest.raises(InputError):
        odd_position("AAA")
    assert [odd_position(o) for o in ORDERS] == [1, 2, 3, 1, 2, 3]


def test_questionnaire_round_trip_to_analysis():
    df = triangle_design(30, seed=4)
    rng = np.random.default_rng(0)
    chosen = rng.integers(1, 4, size=len(df))
    answers = df.assign(correct=(chosen == df["odd_position"]).astype(int))
    r = analyse_responses(answers)
    assert r.n == 30 and r.correct == int((chosen == df["odd_position"]).sum())
    assert r.by_order is not None and set(r.by_order["order"]) == set(ORDERS)


def test_pool_item_count_and_missing_items():
    pool = pd.DataFrame({"source": ["a"] * 5 + ["b"] * 5, "item": list("vwxyz") * 2,
                         "text": [f"t{i}" for i in range(10)]})
    df = triangle_design(6, seed=1, pool=pool, items=4)
    used = set(df["item_1"]) | set(df["item_2"]) | set(df["item_3"])
    assert len(used) <= 4
    with pytest.raises(InputError, match="matched items"):
        triangle_design(6, seed=1, pool=pool, items=9)
    with pytest.raises(InputError, match="lack a text"):
        triangle_design(6, seed=1, pool=pool, items=["v", "w", "q"])
