"""WMT rank clusters (MTME ``data.AssignRanks``) and the WMT23/24 overall score.

Every expected value is worked out by hand in the comments (the rule or the arithmetic), not
taken from the code under test.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from nlgeval.correlation.pairwise import pairwise_accuracy_test
from nlgeval.correlation.ranking import (
    STATISTIC_RANGES,
    TaskResult,
    assign_ranks,
    overall_pvalues,
    overall_score,
    task_ranking,
)
from nlgeval.correlation.significance import significance_clusters
from nlgeval.errors import InputError


def _ranks(df: pd.DataFrame) -> dict[str, object]:
    return {m: (None if pd.isna(r) else int(r)) for m, r in zip(df["metric"], df["rank"],
                                                               strict=True)}


# ----------------------------------------------------------------------------- assign_ranks
def test_assign_ranks_follows_the_wmt_rule() -> None:
    # sorted by statistic: a .9, b .8, c .7, d .6, e .5
    stats = {"d": 0.6, "a": 0.9, "c": 0.7, "b": 0.8, "e": 0.5, "f": math.nan}
    p = {("a", "b"): 0.20, ("a", "c"): 0.01, ("b", "c"): 0.30,
         ("a", "d"): 0.001, ("b", "d"): 0.001, ("c", "d"): 0.30,
         ("a", "e"): 0.0, ("b", "e"): 0.0, ("c", "e"): 0.04, ("d", "e"): 0.5}
    # a: rank 1, start = a
    # b: p(a,b) = .2 > .05                     -> rank 1
    # c: p(a,c) = .01 <= .05                   -> rank 2, start = c
    # d: only c since start: p(c,d) = .3       -> rank 2 (a and b beat d, but they precede
    #                                             the start of the current cluster)
    # e: p(c,e) = .04 <= .05                   -> rank 3, start = e
    # f: NaN statistic                         -> NA, last
    df = assign_ranks(stats, p)
    assert list(df["metric"]) == ["a", "b", "c", "d", "e", "f"]
    assert _ranks(df) == {"a": 1, "b": 1, "c": 2, "d": 2, "e": 3, "f": None}
    assert list(df.columns) == ["metric", "statistic", "rank"]
    assert str(df["rank"].dtype) == "Int64"


def test_assign_ranks_boundary_ties_and_table_input() -> None:
    # p exactly alpha is significant (MTME: p <= pval)
    df = assign_ranks({"x": 0.5, "y": 0.4}, {("x", "y"): 0.05}, alpha=0.05)
    assert _ranks(df) == {"x": 1, "y": 2}
    # equal statistics: sorted by name, as MTME's (-corr, name) key
    df = assign_ranks({"zeta": 0.5, "alpha": 0.5, "mid": 0.7}, {})
    assert list(df["metric"]) == ["mid", "alpha", "zeta"] and set(df["rank"]) == {1}
    # the long table comparison_matrix returns works too; missing p = not significant
    table = pd.DataFrame({"metric_a": ["x"], "metric_b": ["y"], "pvalue": [0.01]})
    assert _ranks(assign_ranks({"x": 0.5, "y": 0.4, "w": 0.1}, table)) == \
        {"x": 1, "y": 2, "w": 2}
    with pytest.raises(InputError):
        assign_ranks({"x": 1.0}, {}, alpha=0)
    with pytest.raises(InputError):
        assign_ranks({"x": 1.0}, pd.DataFrame({"a": [1]}))
    with pytest.raises(InputError):
        assign_ranks({"x": 1.0}, {"x": 0.1})  # type: ignore[dict-item]


def test_significance_clusters_is_the_same_rule() -> None:
    stats = {"a": 0.9, "b": 0.8, "c": 0.7, "d": 0.6, "e": math.nan}
    rows = [("a", "b", 0.2), ("a", "c", 0.01), ("b", "c", 0.2), ("a", "d", 0.001),
            ("b", "d", 0.001), ("c", "d", 0.05)]
    pw = pd.DataFrame(rows, columns=["metric_a", "metric_b", "pvalue"])
    cl = significance_clusters(pw, stats)
    ranks = assign_ranks(stats, pw)
    # p(c, d) = 0.05 exactly: significant under the WMT rule (<=) -> d opens cluster 3
    assert list(cl["metric"]) == list(ranks["metric"]) == ["a", "b", "c", "d", "e"]
    assert list(cl["cluster"][:4]) == [1.0, 1.0, 2.0, 3.0] and math.isnan(cl["cluster"][4])
    assert list(cl.columns) == ["metric", "r", "cluster"]


# ----------------------------------------------------------------------------- overall score
def test_rescaling_and_weighted_mean() -> None:
    acc = TaskResult("sys-acc", "accuracy", {"m1": 0.8, "m2": 0.6})
    cor = TaskResult("seg-r", "correlation", {"m1": 0.4, "m2": 0.0})
    assert acc.statistic_range == STATISTIC_RANGES["accuracy"] == (0.0, 1.0)
    assert cor.statistic_range == (-1.0, 1.0)
    # rescaled: accuracy (x - 0) / 1; correlation (x + 1) / 2 -> m1 0.7, m2 0.5
    assert cor.rescale(0.4) == pytest.approx(0.7) and cor.rescale(0.0) == 0.5
    # equal weights: m1 (0.8 + 0.7) / 2 = 0.75, m2 (0.6 + 0.5) / 2 = 0.55
    with pytest.raises(InputError, match="no permutation draws"):
        overall_score([acc, cor])                 # two metrics to rank but no draws
    one = TaskResult("one", "accuracy", {"m1": 0.8})
    single = overall_score([one])
    assert single["overall"].tolist() == [0.8] and single["rank"].tolist() == [1]
    # WMT23-style weights 3 : 1 (pooled accuracy over 3 language pairs vs one other task):
    # m1 0.75 * 0.8 + 0.25 * 0.7 = 0.775,  m2 0.75 * 0.6 + 0.25 * 0.5 = 0.575
    acc_d = TaskResult("sys-acc", "accuracy", {"m1": 0.8, "m2": 0.6},
                       {("m1", "m2"): (np.array([0.7, 0.6]), np.array([0.7, 0.8]))})
    cor_d = TaskResult("seg-r", (-1, 1), {"m1": 0.4, "m2": 0.0},
                       {("m2", "m1"): (np.array([0.1, 0.2]), np.array([0.3, 0.0]))})
    for w in ([3, 1], {"sys-acc": 6, "seg-r": 2}):
        board = overall_score([acc_d, cor_d], weights=w)
        got = dict(zip(board["metric"], board["overall"], strict=True))
        assert got["m1"] == pytest.approx(0.775) and got["m2"] == pytest.approx(0.575)
        assert list(board.columns) == ["metric", "sys-acc", "seg-r", "overall", "rank"]
        assert board["sys-acc"].tolist() == [0.8, 0.6]
    eq = overall_score({"sys-acc": acc_d, "seg-r": cor_d})
    assert eq["overall"].tolist() == pytest.approx([0.75, 0.55])


def test_overall_pvalue_from_summed_rescaled_draws() -> None:
    # 2 tasks, K = 4 draws, weights 1/2 each.
    # task 1 (accuracy, range 1): draws (m1, m2) -> d = a - b = [0.1, -0.2, 0.0, 0.3]
    # task 2 (correlation, range 2): stored as (m2, m1), so d(m1 - m2) = -(a - b):
    #   a = [0.5, 0.1, 0.2, 0.0], b = [0.1, 0.3, 0.5, 0.4] -> d(m2-m1) = [.4, -.2, -.3, -.4]
    #   -> d(m1-m2) = [-0.4, 0.2, 0.3, 0.4], rescaled / 2 = [-0.2, 0.1, 0.15, 0.2]
    # null = 0.5 * [0.1, -0.2, 0, 0.3] + 0.5 * [-0.2, 0.1, 0.15, 0.2]
    #      = [-0.05, -0.05, 0.075, 0.25]
    #   (without rescaling draw 3 would be 0.15 and count below)
    # observed: overall m1 = 0.5 * 0.7 + 0.5 * (0.2 + 1) / 2 = 0.65
    #           overall m2 = 0.5 * 0.6 + 0.5 * (0.0 + 1) / 2 = 0.55   -> diff 0.10
    # p(m1 > m2) = (1 + #{null >= 0.10}) / (1 + 4) = (1 + 1) / 5 = 0.4
    # p(m2 > m1) = (1 + #{-null >= -0.10}) / 5 = (1 + #{null <= 0.10}) / 5 = (1 + 3) / 5 = 0.8
    t1 = TaskResult("t1", "accuracy", {"m1": 0.7, "m2": 0.6},
                    {("m1", "m2"): (np.array([0.6, 0.5, 0.6, 0.9]),
                                    np.array([0.5, 0.7, 0.6, 0.6]))})
    t2 = TaskResult("t2", "correlation", {"m1": 0.2, "m2": 0.0},
                    {("m2", "m1"): (np.array([0.5, 0.1, 0.2, 0.0]),
                                    np.array([0.1, 0.3, 0.5, 0.4]))})
    pv = overall_pvalues([t1, t2]).set_index(["metric_a", "metric_b"])
    assert pv.loc[("m1", "m2"), "statistic"] == pytest.approx(0.10)
    assert pv.loc[("m1", "m2"), "pvalue"] == pytest.approx(0.4)
    assert pv.loc[("m2", "m1"), "pvalue"] == pytest.approx(0.8)
    assert pv.loc[("m1", "m2"), "permutations"] == 4
    # a task with more draws: only the first min K = 4 are summed
    t3 = TaskResult("t1", "accuracy", {"m1": 0.7, "m2": 0.6},
                    {("m1", "m2"): (np.array([0.6, 0.5, 0.6, 0.9, 9.0, 9.0]),
                                    np.array([0.5, 0.7, 0.6, 0.6, 0.0, 0.0]))})
    pv3 = overall_pvalues([t3, t2]).set_index(["metric_a", "metric_b"])
    assert pv3.loc[("m1", "m2"), "pvalue"] == pytest.approx(0.4)


def test_overall_rank_clusters() -> None:
    # K = 19 draws. (m1, m3) and (m2, m3): null differences all 0, observed > 0
    #   -> p = (1 + 0) / 20 = 0.05 <= 0.05: significant.
    # (m1, m2): null differences alternate +-1 -> about half >= the observed 0.1 -> p ~ 0.5.
    # Ranks: m1 1; m2 not beaten by m1 -> 1; m3 beaten by m1 -> 2.
    K = 19
    flat = (np.full(K, 0.5), np.full(K, 0.5))
    wobble = (np.where(np.arange(K) % 2 == 0, 1.0, 0.0), np.where(np.arange(K) % 2 == 0,
                                                                  0.0, 1.0))
    t = TaskResult("acc", "accuracy", {"m1": 0.9, "m2": 0.8, "m3": 0.5, "m4": math.nan},
                   {("m1", "m2"): wobble, ("m1", "m3"): flat, ("m3", "m2"): flat})
    board = overall_score([t])
    assert list(board["metric"]) == ["m1", "m2", "m3", "m4"]
    assert _ranks(board) == {"m1": 1, "m2": 1, "m3": 2, "m4": None}
    assert math.isnan(board["overall"].iloc[3])
    # with a single accuracy task the overall ranks are the task's own ranks
    assert _ranks(task_ranking(t)) == _ranks(board)
    # stricter alpha: p = 0.05 is no longer significant
    assert set(overall_score([t], alpha=0.04)["rank"].dropna()) == {1}


def test_metric_missing_from_a_task_is_not_ranked() -> None:
    t1 = TaskResult("a", "accuracy", {"m1": 0.9, "m2": 0.8, "m3": 0.7})
    t2 = TaskResult("b", "accuracy", {"m1": 0.9, "m2": 0.8})
    # only m1 and m2 are in both tasks; there are no draws for them -> error naming the pair
    with pytest.raises(InputError, match="m1"):
        overall_score([t1, t2])
    t1 = TaskResult("a", "accuracy", {"m1": 0.9, "m3": 0.7})
    t2 = TaskResult("b", "accuracy", {"m1": 0.5})
    board = overall_score([t1, t2])
    assert list(board["metric"]) == ["m1", "m3"]
    assert board["overall"].iloc[0] == pytest.approx(0.7)      # (0.9 + 0.5) / 2
    assert _ranks(board) == {"m1": 1, "m3": None}
    assert math.isnan(board["b"].iloc[1])


def test_task_and_weight_validation() -> None:
    t = TaskResult("t", "accuracy", {"m1": 0.5})
    with pytest.raises(InputError):
        TaskResult("t", "probability", {"m1": 0.5})
    with pytest.raises(InputError):
        TaskResult("t", (1, 0), {"m1": 0.5})
    with pytest.raises(InputError):
        TaskResult("t", "accuracy", {"m1": "high"})
    with pytest.raises(InputError):
        TaskResult("t", "accuracy", {"m1": 0.5}, {("m1", "m9"): ([0.1], [0.2])})
    with pytest.raises(InputError):
        TaskResult("t", "accuracy", {"m1": 0.5, "m2": 1}, {("m1", "m2"): ([0.1], [0.2, 0.3])})
    with pytest.raises(InputError):
        overall_score([t, t])                               # duplicate names
    with pytest.raises(InputError):
        overall_score([t], weights={"other": 1})
    with pytest.raises(InputError):
        overall_score([t], weights=[-1])
    with pytest.raises(InputError):
        overall_score([TaskResult("overall", "accuracy", {"m1": 0.5})])
    with pytest.raises(InputError):
        overall_score([])


def test_leaderboard_from_real_permutation_tests() -> None:
    rng = np.random.default_rng(0)
    S, n = 10, 30
    Y = np.linspace(0, 2, S)[:, None] + rng.normal(size=(S, n))
    metrics = {"good": Y + rng.normal(size=(S, n)) * 0.5,
               "fair": Y + rng.normal(size=(S, n)) * 1.5,
               "noise": rng.normal(size=(S, n))}
    names = list(metrics)
    comps = {}
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            comps[(a, b)] = pairwise_accuracy_test(metrics[a], metrics[b], Y,
                                                   n_resamples=200, seed=1)
    stats = {m: next(c.statistic_a if k[0] == m else c.statistic_b
                     for k, c in comps.items() if m in k) for m in names}
    task = TaskResult.from_comparisons("pa", "accuracy", stats, comps)
    board = overall_score([task])
    # accuracy range (0, 1): overall = the accuracy; its p-values = the tests' p-values
    assert dict(zip(board["metric"], board["overall"], strict=True)) == pytest.approx(stats)
    pv = overall_pvalues([task]).set_index(["metric_a", "metric_b"])
    for (a, b), c in comps.items():
        assert pv.loc[(a, b), "pvalue"] == pytest.approx(c.pvalue)
    assert board["rank"].iloc[0] == 1 and board["metric"].iloc[0] == "good"
    assert board["rank"].iloc[-1] > 1
    with pytest.raises(InputError):
        TaskResult.from_comparisons("pa", "accuracy", stats, {("good", "fair"): 0.3})


def test_task_result_serialises_without_its_draws() -> None:
    """TaskResult is a Result: to_dict() from the fields, the bulky draws left out."""
    draws = (np.linspace(0.7, 0.8, 5), np.linspace(0.75, 0.85, 5))
    task = TaskResult("spa", "accuracy", {"A": 0.8, "B": 0.7}, {("A", "B"): draws})
    assert task.to_dict() == {"name": "spa", "statistic_range": [0.0, 1.0],
                              "statistics": {"A": 0.8, "B": 0.7}}
    assert list(task.to_frame().columns) == ["name"]
