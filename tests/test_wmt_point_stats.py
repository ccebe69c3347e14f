"""The fast paths of the WMT point statistics (issue 29): pairwise accuracy's pair loop, the
array rank clusters, and the complete-data sign-flip design, each against the general code or
an independent restatement of the rule (MTME ``data.AssignRanks``, Freitag et al. 2021)."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest

from nlgeval.correlation import pairwise as pw
from nlgeval.correlation._pairwise_kernels import _SignFlipDesign
from nlgeval.correlation.pairwise import pairwise_accuracy_from_scores, soft_pairwise_accuracy
from nlgeval.correlation.ranking import assign_ranks, rank_clusters
from nlgeval.errors import InputError


@pytest.mark.parametrize("seed", range(8))
def test_small_list_path_equals_array_path(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """Lists of at most 8 systems skip the arrays (MTME's callers pass lists); the counts and
    the result equal the array path's, with ties, NaN, infinities and integers."""
    rng = np.random.default_rng(100 + seed)
    S = int(rng.integers(0, 9))
    h = rng.integers(0, 3, S).astype(float) * 10.0 ** int(rng.integers(-3, 4))
    m = np.round(rng.normal(size=S), 1)
    if S > 1:
        m[1] = m[0] * (1 + 1e-13)                        # tied within TIE_RTOL
        m[rng.integers(S)] = [np.nan, np.inf, 2.0][seed % 3]
    to_list = (lambda v: v.tolist()) if seed % 2 else (lambda v: tuple(v.tolist()))
    fast = pairwise_accuracy_from_scores(to_list(m), to_list(h))
    monkeypatch.setattr(pw, "_LOOP_SYSTEMS", -1)
    arr = pairwise_accuracy_from_scores(np.asarray(m), np.asarray(h))
    assert fast.to_dict() == arr.to_dict() or (np.isnan(fast.statistic)
                                               and np.isnan(arr.statistic)
                                               and fast.n_pairs == arr.n_pairs == 0)
    assert type(fast) is type(arr) and repr(fast).split("(")[0] == repr(arr).split("(")[0]


@pytest.mark.parametrize("seed", range(6))
def test_pair_loop_equals_array_path(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(seed)
    S = int(rng.integers(2, 30))
    h = rng.integers(0, 4, S).astype(float)             # many exact ties
    m = np.round(rng.normal(size=S), 1)
    m[rng.random(S) < 0.2] = np.nan
    h[rng.random(S) < 0.1] = np.nan
    m[0] = 0.1 + 0.2                                    # tie within TIE_RTOL of 0.3
    h[0] = h[1] if np.isfinite(h[1]) else h[0]
    if S > 2:
        m[2] = 0.3
    monkeypatch.setattr(pw, "_LOOP_SYSTEMS", 10**6)
    loop = pairwise_accuracy_from_scores(m, h)
    monkeypatch.setattr(pw, "_LOOP_SYSTEMS", -1)
    arr = pairwise_accuracy_from_scores(m, h)
    assert loop == arr
    assert (loop.n_agree, loop.n_tied_human, loop.n_tied_metric) == (
        arr.n_agree, arr.n_tied_human, arr.n_tied_metric)


def test_pair_loop_counts_by_hand() -> None:
    # pairs (0,1): m -, h -  agree; (0,2): m tie, h +  no; (1,2): m +, h + agree
    res = pairwise_accuracy_from_scores([1.0, 2.0, 1.0], [1.0, 3.0, 0.0])
    assert (res.n_agree, res.n_pairs, res.n_tied_metric, res.n_tied_human) == (2, 3, 1, 0)


def _mtme_rule(sig: np.ndarray, alpha: float) -> list[int]:
    """MTME ``data.AssignRanks`` restated: sorted best first, sig[j, i] = p(j beats i)."""
    ranks, rank, start = [], 1, 0
    for i in range(sig.shape[0]):
        if any(sig[j, i] <= alpha for j in range(start, i)):
            rank += 1
            start = i
        ranks.append(rank)
    return ranks


@pytest.mark.parametrize("seed", range(8))
def test_rank_clusters_follow_the_wmt_rule(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = [1, 2, 5, 12, 24, 25, 31, 40][seed]          # both the loop and the array walk
    values = rng.choice([0.5, 0.6, 0.7, 0.8], n) + rng.integers(0, 2, n) * 0.01  # ties
    p = rng.uniform(0, 0.2, (n, n))
    p[rng.random((n, n)) < 0.1] = np.nan
    order = np.argsort(-values, kind="stable")
    expected = np.empty(n, int)
    expected[order] = _mtme_rule(p[np.ix_(order, order)], 0.05)
    assert rank_clusters(values, p, 0.05).tolist() == expected.tolist()
    names = [f"m{i:02d}" for i in range(n)]          # name order = input order: same ties
    pv = {(names[i], names[j]): p[i, j] for i, j in itertools.permutations(range(n), 2)}
    frame = assign_ranks(dict(zip(names, values, strict=True)), pv, 0.05)
    got = dict(zip(frame["metric"], frame["rank"], strict=True))
    assert [got[m] for m in names] == expected.tolist()


def test_rank_clusters_bad_input() -> None:
    with pytest.raises(InputError, match="finite"):
        rank_clusters([0.5, np.nan], np.zeros((2, 2)))
    with pytest.raises(InputError, match=r"\(n, n\)"):
        rank_clusters([0.5, 0.4], np.zeros((3, 3)))
    assert assign_ranks({"a": np.nan}, {})["rank"].isna().all()
    assert isinstance(assign_ranks({}, {}), pd.DataFrame)


def test_complete_design_fast_path_equals_pattern_search() -> None:
    ok = np.ones((5, 7), bool)
    fast = _SignFlipDesign.build(ok)
    ok2 = ok.copy()
    ok2[0, 0] = False                                   # general path, then compare its
    slow = _SignFlipDesign.build(ok2)                   # complete-pattern group
    assert len(fast.groups) == 1 and fast.has_pair.all()
    cols, idx = fast.groups[0]
    assert cols.tolist() == list(range(7)) and idx.tolist() == list(range(10))
    full = [g for g in slow.groups if g[1].size == 10]
    assert full and full[0][0].tolist() == list(range(1, 7))


def test_spa_point_value_unchanged_by_stacking() -> None:
    # one product for human and metric: the p-value matrices equal separate runs on each
    rng = np.random.default_rng(3)
    Y = rng.normal(size=(5, 40))
    X = Y + rng.normal(size=(5, 40))
    res = soft_pairwise_accuracy(X, Y, n_resamples=300, seed=4)
    alone = soft_pairwise_accuracy(Y, Y, n_resamples=300, seed=4)
    np.testing.assert_array_equal(res.pvalues_human, alone.pvalues_human)
    np.testing.assert_array_equal(alone.pvalues_metric, alone.pvalues_human)


def _study(seed: int, missing: bool) -> tuple[list[np.ndarray], np.ndarray]:
    rng = np.random.default_rng(seed)
    Y = np.round(rng.normal(size=(5, 1)) + rng.normal(size=(5, 60)), 1)   # ties in the deltas
    if missing:
        Y[1, 3] = Y[4, 0] = np.nan
    return [np.round(Y + rng.normal(0, s, Y.shape), 1) for s in (0.3, 0.6, 1.0)], Y


@pytest.mark.parametrize("missing", [False, True])
def test_spa_perm_both_all_pairs_and_reuse_equal_fresh_tests(missing: bool) -> None:
    from nlgeval.correlation import _spa_perm
    from nlgeval.correlation.pairwise import soft_pairwise_accuracy_test

    metrics, Y = _study(5, missing)
    kw = {"n_resamples": 60, "seed": 2, "spa_permutations": 80, "spa_seed": 2}
    pairs = [(0, 1), (0, 2), (1, 2)]
    _spa_perm._cache.clear()
    fresh = []
    for a, b in pairs:
        fresh.append(soft_pairwise_accuracy_test(metrics[a], metrics[b], Y, **kw))
        _spa_perm._cache.clear()
    assert _spa_perm.prime_pairs(metrics, Y, **kw) == 3
    assert _spa_perm.prime_pairs(metrics, Y, **kw) == 0          # all kept already
    for (a, b), ref in zip(pairs, fresh, strict=True):
        got = soft_pairwise_accuracy_test(metrics[a], metrics[b], Y, **kw)
        np.testing.assert_array_equal(got.draws_a, ref.draws_a)
        np.testing.assert_array_equal(got.draws_b, ref.draws_b)
        assert (got.statistic_a, got.statistic_b, got.pvalue) == (
            ref.statistic_a, ref.statistic_b, ref.pvalue)
    # another criterion on the same cells: metric-side counts reused, human side recomputed,
    # equal to a test computed from scratch
    Y2 = np.where(np.isfinite(Y), Y[::-1], np.nan)
    if missing:
        Y2[1, 3] = Y2[4, 0] = np.nan
        Y2[np.isfinite(Y) != np.isfinite(Y2)] = 0.0
        Y2[~np.isfinite(Y)] = np.nan
    reused = soft_pairwise_accuracy_test(metrics[0], metrics[2], Y2, **kw)
    _spa_perm._cache.clear()
    scratch = soft_pairwise_accuracy_test(metrics[0], metrics[2], Y2, **kw)
    np.testing.assert_array_equal(reused.draws_a, scratch.draws_a)
    np.testing.assert_array_equal(reused.draws_b, scratch.draws_b)
    other_seed = soft_pairwise_accuracy_test(metrics[0], metrics[2], Y2, **{**kw, "seed": 3})
    assert not np.array_equal(other_seed.draws_a, scratch.draws_a)


def test_spa_all_pairs_not_shared_when_cells_differ() -> None:
    from nlgeval.correlation import _spa_perm

    metrics, Y = _study(6, False)
    metrics[1] = metrics[1].copy()
    metrics[1][0, 0] = np.nan                    # pairs with metric 1 use other cells
    _spa_perm._cache.clear()
    assert _spa_perm.prime_pairs(metrics, Y, n_resamples=20, seed=0, spa_permutations=20,
                                 spa_seed=0) == 0
