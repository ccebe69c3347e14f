"""Kendall variants (tau-b, tau-c, tau_23, acc_23) and their pair counts.

References: pair-by-pair enumeration written here (brute force), scipy.stats.kendalltau for
tau-b/tau-c, and a small case worked out by hand (Deutsch, Foster & Freitag 2023, Table 1).
"""

from __future__ import annotations

import itertools
import json
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from nlgeval.correlation.bootstrap import resample_indices
from nlgeval.correlation.kendall import (
    batch_grouped_kendall,
    grouped_kendall,
    kendall_permutation_test,
    kendall_resample_distribution,
    kendall_variant,
    pair_counts,
)
from nlgeval.correlation.kendall import kernels as K
from nlgeval.errors import InputError
from nlgeval.results import dumps

# --------------------------------------------------------------------------------------------
# brute force
# --------------------------------------------------------------------------------------------


def brute_counts(m, h, eps=0.0):
    """(C, D, T_h, T_m, T_hm) by looking at every pair, dropping non-finite positions."""
    m, h = np.asarray(m, float), np.asarray(h, float)
    ok = np.isfinite(m) & np.isfinite(h)
    m, h = m[ok], h[ok]
    c = d = th = tm = thm = 0
    for i, j in itertools.combinations(range(m.size), 2):
        dm, dh = m[i] - m[j], h[i] - h[j]
        metric_tie = abs(dm) <= eps
        human_tie = dh == 0
        if metric_tie and human_tie:
            thm += 1
        elif human_tie:
            th += 1
        elif metric_tie:
            tm += 1
        elif (dm > 0) == (dh > 0):
            c += 1
        else:
            d += 1
    return c, d, th, tm, thm


def brute_variant(m, h, variant, eps=0.0):
    """MTME's formulas (stats.KendallVariants) on brute-force counts."""
    m, h = np.asarray(m, float), np.asarray(h, float)
    ok = np.isfinite(m) & np.isfinite(h)
    c, d, th, tm, thm = brute_counts(m, h, eps)
    n = int(ok.sum())
    tot = c + d + th + tm + thm
    if tot == 0:
        return math.nan
    if variant in ("tau_b", "tau_c"):
        xtie, ytie = tm + thm, th + thm
        if xtie == tot or ytie == tot:
            return math.nan
        if variant == "tau_b":
            return (c - d) / math.sqrt(tot - xtie) / math.sqrt(tot - ytie)
        k = min(len(set(m[ok])), len(set(h[ok])))
        return 2 * (c - d) / (n * n * (k - 1) / k)
    if variant == "tau_23":
        return (c + thm - d - th - tm) / tot
    return (c + thm) / tot


def brute_grouped(X, Y, variant, grouping, eps=0.0):
    X, Y = np.asarray(X, float), np.asarray(Y, float)
    if grouping == "segment":
        vecs = [(X.ravel(), Y.ravel())]
    elif grouping == "item":
        vecs = [(X[:, i], Y[:, i]) for i in range(X.shape[1])]
    else:
        vecs = [(X[s], Y[s]) for s in range(X.shape[0])]
    vals = []
    for m, h in vecs:
        ok = np.isfinite(m) & np.isfinite(h)
        if ok.sum() < 2:
            continue
        v = brute_variant(m, h, variant, eps)
        if not math.isnan(v):
            vals.append(v)
    return float(np.mean(vals)) if vals else math.nan


def same(a, b, tol=1e-12):
    return (math.isnan(a) and math.isnan(b)) or abs(a - b) <= tol


# small integer scores -> many ties in both variables; NaN = missing
values = st.one_of(st.integers(0, 4).map(float), st.just(math.nan))
VARIANTS = ("tau_b", "tau_c", "tau_23", "acc_23")


@st.composite
def matrices(draw, max_s=5, max_i=6):
    S = draw(st.integers(1, max_s))
    n_items = draw(st.integers(1, max_i))
    X = np.array(draw(st.lists(values, min_size=S * n_items, max_size=S * n_items)))
    Y = np.array(draw(st.lists(st.one_of(st.integers(0, 2).map(float), st.just(math.nan)),
                               min_size=S * n_items, max_size=S * n_items)))
    scale = draw(st.sampled_from([1.0, 0.1, 0.37]))
    return (X * scale).reshape(S, n_items), Y.reshape(S, n_items)


# --------------------------------------------------------------------------------------------
# a case by hand
# --------------------------------------------------------------------------------------------


def test_hand_worked_counts_and_variants():
    # m = [1, 2, 2, 4, 0], h = [0, 1, 0, 1, 1]; the ten pairs (i, j), dm = m_i - m_j, dh:
    # (0,1) dm=-1 dh=-1 C     (0,2) dm=-1 dh=0 T_h   (0,3) dm=-3 dh=-1 C   (0,4) dm=1 dh=-1 D
    # (1,2) dm= 0 dh= 1 T_m   (1,3) dm=-2 dh=0 T_h   (1,4) dm= 2 dh= 0 T_h
    # (2,3) dm=-2 dh=-1 C     (2,4) dm= 2 dh=-1 D    (3,4) dm= 4 dh= 0 T_h
    # C=3 D=2 T_h=4 T_m=1 T_hm=0 N=10
    m, h = [1, 2, 2, 4, 0], [0, 1, 0, 1, 1]
    c = pair_counts(m, h)
    assert (c.concordant, c.discordant, c.ties_human, c.ties_metric, c.ties_both,
            c.n_pairs) == (3, 2, 4, 1, 0, 10)
    assert (c.n, c.n_distinct_metric, c.n_distinct_human) == (5, 4, 2)
    # tau_b = (C - D) / sqrt((N - T_x)(N - T_y)), T_x = T_m + T_hm = 1, T_y = T_h + T_hm = 4
    assert kendall_variant(m, h, "tau_b").statistic == pytest.approx(1 / math.sqrt(9 * 6))
    # tau_c = 2 (C - D) / (n^2 (k - 1) / k), k = min(4 distinct m, 2 distinct h) = 2
    assert kendall_variant(m, h, "tau_c").statistic == pytest.approx(2 * 1 / (25 * 1 / 2))
    # tau_23 = (C + T_hm - D - T_h - T_m) / N = (3 + 0 - 2 - 4 - 1) / 10
    assert kendall_variant(m, h, "tau_23").statistic == pytest.approx(-0.4)
    # acc_23 = (C + T_hm) / N = 3 / 10
    assert kendall_variant(m, h, "acc_23").statistic == pytest.approx(0.3)
    # epsilon = 1: |dm| <= 1 is a metric tie, so (0,1) C -> T_m, (0,2) T_h -> T_hm,
    # (0,4) D -> T_m: C=2 D=1 T_h=3 T_m=3 T_hm=1; acc_23 = 3/10, tau_23 = (2+1-1-3-3)/10
    c1 = pair_counts(m, h, epsilon=1.0)
    assert (c1.concordant, c1.discordant, c1.ties_human, c1.ties_metric,
            c1.ties_both) == (2, 1, 3, 3, 1)
    assert kendall_variant(m, h, "acc_23", epsilon=1).statistic == pytest.approx(0.3)
    assert kendall_variant(m, h, "tau_23", epsilon=1).statistic == pytest.approx(-0.4)
    # and scipy agrees on tau-b / tau-c
    assert kendall_variant(m, h, "tau_b").statistic == pytest.approx(
        stats.kendalltau(m, h, variant="b").statistic)
    assert kendall_variant(m, h, "tau_c").statistic == pytest.approx(
        stats.kendalltau(m, h, variant="c").statistic)


def test_hand_worked_item_grouping():
    # 3 systems x 2 items. Item 0: m = [1, 2, 3], h = [1, 1, 2]: pairs (0,1) dh=0 dm=-1 T_h,
    # (0,2) C, (1,2) C -> acc_23 = 2/3. Item 1: m = [5, 5, NaN] (one cell missing), h = [0, 1, 3]:
    # one pair (0,1) dm=0 dh=-1 T_m -> acc_23 = 0. Mean over items = 1/3.
    X = np.array([[1, 5], [2, 5], [3, np.nan]], float)
    Y = np.array([[1, 0], [1, 1], [2, 3]], float)
    r = grouped_kendall(X, Y, "acc_23", "item")
    assert r.statistic == pytest.approx(1 / 3)
    assert (r.n_groups, r.n_pairs, r.n_skipped) == (2, 4, 0)
    np.testing.assert_allclose(r.group_values, [2 / 3, 0.0])
    # tau_b of item 1 is undefined (every pair tied in the metric): dropped from the mean;
    # item 0: C=2, D=0, T_x=0, T_y=1 -> 2 / sqrt(3 * 2)
    rb = grouped_kendall(X, Y, "tau_b", "item")
    assert rb.statistic == pytest.approx(2 / math.sqrt(6))
    assert (rb.n_groups, rb.n_skipped) == (1, 1)
    # system grouping: system 2 has one complete cell -> skipped
    rs = grouped_kendall(X, Y, "acc_23", "system-grouped")
    assert rs.n_groups == 2 and rs.n_skipped == 1


# --------------------------------------------------------------------------------------------
# counts against enumeration, variants against scipy
# --------------------------------------------------------------------------------------------


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(values, st.one_of(st.integers(0, 3).map(float), st.just(math.nan))),
                max_size=60),
       st.sampled_from([0.0, 0.5, 1.0, 2.0, 0.1]))
def test_counts_equal_enumeration(pairs, eps):
    m = np.array([p[0] for p in pairs], float) * 0.1
    h = np.array([p[1] for p in pairs], float)
    c = pair_counts(m, h, eps)
    assert (c.concordant, c.discordant, c.ties_human, c.ties_metric,
            c.ties_both) == brute_counts(m, h, eps)
    assert c.n_pairs == c.n * (c.n - 1) // 2


@settings(max_examples=100, deadline=None)
@given(st.integers(2, 90), st.integers(1, 12), st.integers(1, 6),
       st.sampled_from([0.0, 0.5, 3.0]), st.integers(0, 2**32 - 1))
def test_sorted_and_direct_paths_agree(n, kx, ky, eps, seed):
    rng = np.random.default_rng(seed)
    x = rng.integers(0, kx, n).astype(float) * 0.7
    y = rng.integers(0, ky, n).astype(float)
    a = np.zeros(8, np.int64)
    b = np.zeros(8, np.int64)
    K._vector_counts(x, y, eps, 0, True, a)          # Fenwick path for every n
    K._vector_counts(x, y, eps, 10**9, True, b)      # enumeration for every n
    assert a.tolist() == b.tolist()
    assert tuple(a[:5]) == brute_counts(x, y, eps)


def test_long_vectors_with_float_noise_equal_enumeration():
    rng = np.random.default_rng(3)
    x = np.round(rng.normal(size=400), 1)            # many near and exact ties
    y = rng.integers(0, 5, 400).astype(float)
    for eps in (0.0, 0.1, 0.30000000000000004, 1.0):
        c = pair_counts(x, y, eps)
        assert (c.concordant, c.discordant, c.ties_human, c.ties_metric,
                c.ties_both) == brute_counts(x, y, eps)


@settings(max_examples=200, deadline=None)
@given(st.integers(2, 70), st.integers(1, 8), st.integers(1, 8), st.integers(0, 2**32 - 1))
def test_tau_b_and_c_equal_scipy(n, kx, ky, seed):
    rng = np.random.default_rng(seed)
    x = rng.integers(0, kx, n).astype(float)
    y = rng.integers(0, ky, n).astype(float)
    if rng.random() < 0.3:
        x = x + rng.normal(size=n)                   # some vectors without metric ties
    for variant, sv in (("tau_b", "b"), ("tau_c", "c")):
        ours = kendall_variant(x, y, variant).statistic
        ref = stats.kendalltau(x, y, variant=sv).statistic
        assert same(ours, ref, 1e-12), (variant, ours, ref)


def test_missing_values_dropped_pairwise():
    m = [1.0, np.nan, 3.0, 2.0, 5.0, np.inf]
    h = [1.0, 2.0, np.nan, 2.0, 4.0, 1.0]
    r = kendall_variant(m, h, "tau_b")
    assert r.n_missing == 3 and r.counts.n == 3
    assert r.statistic == pytest.approx(stats.kendalltau([1, 2, 5], [1, 2, 4]).statistic)


def test_degenerate_inputs_are_nan_with_a_note():
    r = kendall_variant([1, 1, 1], [1, 2, 3], "tau_b")
    assert math.isnan(r.statistic) and "tied" in r.note
    r = kendall_variant([1.0], [2.0], "acc_23")
    assert math.isnan(r.statistic) and r.counts.n_pairs == 0
    # acc_23 is defined for a constant metric: all pairs are metric ties
    assert kendall_variant([1, 1, 1], [1, 1, 2], "acc_23").statistic == pytest.approx(1 / 3)


# --------------------------------------------------------------------------------------------
# groupings and batch versions
# --------------------------------------------------------------------------------------------


@settings(max_examples=120, deadline=None)
@given(matrices(), st.sampled_from(VARIANTS),
       st.sampled_from(["segment", "item", "system-grouped"]), st.sampled_from([0.0, 0.1, 1.0]))
def test_grouped_equals_brute_force(XY, variant, grouping, eps):
    X, Y = XY
    if variant == "tau_c":
        eps = 0.0
    r = grouped_kendall(X, Y, variant, grouping, epsilon=eps)
    assert same(r.statistic, brute_grouped(X, Y, variant, grouping, eps)), r
    b = batch_grouped_kendall(X[None], Y[None], variant, grouping, epsilon=eps)
    assert same(float(b[0]), r.statistic)


def test_grouped_none_equals_single_vector_and_counts_sum():
    rng = np.random.default_rng(5)
    X = rng.integers(0, 6, (7, 30)).astype(float)
    Y = rng.integers(0, 4, (7, 30)).astype(float)
    X[rng.random(X.shape) < 0.1] = np.nan
    ok = np.isfinite(X) & np.isfinite(Y)
    for variant in VARIANTS:
        g = grouped_kendall(X, Y, variant, "segment")
        assert g.statistic == kendall_variant(X[ok], Y[ok], variant).statistic
    g = grouped_kendall(X, Y, "acc_23", "segment")
    assert g.counts == pair_counts(X[ok], Y[ok])
    assert json.loads(dumps(g))["counts"]["n_pairs"] == g.n_pairs
    gi = grouped_kendall(X, Y, "acc_23", "item")
    per = [brute_counts(X[:, i], Y[:, i]) for i in range(X.shape[1])]
    assert gi.counts.concordant == sum(p[0] for p in per)
    assert gi.counts.ties_both == sum(p[4] for p in per)


def test_batch_stack_matches_each_matrix():
    rng = np.random.default_rng(7)
    Xs = rng.integers(0, 5, (4, 3, 6, 9)).astype(float)
    Ys = rng.integers(0, 3, (4, 3, 6, 9)).astype(float)
    Xs[rng.random(Xs.shape) < 0.1] = np.nan
    for variant in VARIANTS:
        for grouping in ("segment", "item", "system-grouped"):
            out = batch_grouped_kendall(Xs, Ys, variant, grouping)
            assert out.shape == (4, 3)
            for a, b in itertools.product(range(4), range(3)):
                ref = grouped_kendall(Xs[a, b], Ys[a, b], variant, grouping).statistic
                assert same(float(out[a, b]), ref)


def test_resample_distribution_equals_gathered_matrices():
    rng = np.random.default_rng(11)
    X = rng.integers(0, 7, (5, 12)).astype(float)
    Y = rng.integers(0, 3, (5, 12)).astype(float)
    Y[rng.random(Y.shape) < 0.15] = np.nan
    si, ii = resample_indices(5, 12, 40, "both", seed=3)
    for variant in ("tau_b", "acc_23"):
        for grouping in ("segment", "item", "system-grouped"):
            d = kendall_resample_distribution(X, Y, variant, grouping, si, ii, epsilon=0.0)
            for b in range(40):
                Xb = X[np.ix_(si[b], ii[b])]
                Yb = Y[np.ix_(si[b], ii[b])]
                assert same(float(d[b]), brute_grouped(Xb, Yb, variant, grouping))


def test_row_and_column_order_do_not_matter():
    rng = np.random.default_rng(2)
    X = rng.integers(0, 6, (6, 15)).astype(float)
    Y = rng.integers(0, 3, (6, 15)).astype(float)
    ps, pi = rng.permutation(6), rng.permutation(15)
    for variant in VARIANTS:
        for grouping in ("segment", "item", "system-grouped"):
            a = grouped_kendall(X, Y, variant, grouping).statistic
            b = grouped_kendall(X[ps][:, pi], Y[ps][:, pi], variant, grouping).statistic
            assert same(a, b)


def test_bad_input_raises_input_error():
    with pytest.raises(InputError):
        kendall_variant([1, 2], [1, 2, 3])
    with pytest.raises(InputError):
        kendall_variant([1, 2, 3], [1, 2, 3], "tau_x")
    with pytest.raises(InputError):
        kendall_variant([1, 2, 3], [1, 2, 3], "tau_c", epsilon=0.5)
    with pytest.raises(InputError):
        pair_counts([1, 2, 3], [1, 2, 3], epsilon=-1)
    with pytest.raises(InputError):
        grouped_kendall(np.ones((2, 3)), np.ones((3, 2)))
    with pytest.raises(InputError):
        grouped_kendall(np.ones((2, 3)), np.ones((2, 3)), grouping="rows")
    with pytest.raises(InputError):
        pair_counts(["a", "b"], [1, 2])
    with pytest.raises(InputError):
        kendall_permutation_test(np.ones((2, 3)), np.ones((2, 3)), np.ones((2, 3)),
                                 n_resamples=0)


# --------------------------------------------------------------------------------------------
# PERM-BOTH (cell swaps)
# --------------------------------------------------------------------------------------------


def _z(A, ok):
    v = A[ok]
    return np.where(ok, (A - v.mean()) / v.std(), np.nan)


def test_permutation_test_exact_enumeration_equals_brute_force():
    # 2 systems x 3 items = 6 cells -> all 2^6 swap masks
    XA = np.array([[3.0, 1.0, 2.0], [1.0, 2.0, 2.0]])
    XB = np.array([[1.0, 2.0, 4.0], [3.0, 3.0, 1.0]])
    Y = np.array([[2.0, 0.0, 1.0], [1.0, 1.0, 1.0]])
    masks = np.array(list(itertools.product([False, True], repeat=6))).reshape(64, 2, 3)
    ok = np.ones_like(Y, bool)
    A, B = _z(XA, ok), _z(XB, ok)
    for variant in ("tau_b", "tau_23", "acc_23"):
        for grouping in ("segment", "item", "system-grouped"):
            res = kendall_permutation_test(XA, XB, Y, variant, grouping, masks=masks)
            a0 = brute_grouped(A, Y, variant, grouping)
            b0 = brute_grouped(B, Y, variant, grouping)
            hits = 0
            da, db = [], []
            for m in masks:
                pa = brute_grouped(np.where(m, B, A), Y, variant, grouping)
                pb = brute_grouped(np.where(m, A, B), Y, variant, grouping)
                da.append(pa)
                db.append(pb)
                hits += (pa - pb) >= (a0 - b0) - 1e-12
            assert res.statistic_a == pytest.approx(a0, abs=1e-12)
            assert res.statistic_b == pytest.approx(b0, abs=1e-12)
            np.testing.assert_allclose(res.draws_a, da, atol=1e-12)
            np.testing.assert_allclose(res.draws_b, db, atol=1e-12)
            assert res.n_at_least == hits
            assert res.pvalue == pytest.approx((1 + hits) / 65)
            # swapping nothing and swapping everything are both in the set
            assert res.draws_a[0] == pytest.approx(a0) and res.draws_b[-1] == pytest.approx(a0)


def test_permutation_test_seeded_and_row_order_invariant():
    rng = np.random.default_rng(0)
    q = rng.normal(size=(6, 20))
    Y = np.round(q + rng.normal(size=q.shape) * 0.5)
    XA = q + rng.normal(size=q.shape) * 0.3
    XB = q + rng.normal(size=q.shape) * 1.5
    XA[0, 3] = np.nan
    r1 = kendall_permutation_test(XA, XB, Y, "tau_b", "item", n_resamples=300, seed=4)
    r2 = kendall_permutation_test(XA, XB, Y, "tau_b", "item", n_resamples=300, seed=4)
    assert r1.pvalue == r2.pvalue and np.array_equal(r1.draws_a, r2.draws_a)
    assert r1.statistic > 0 and r1.pvalue < 0.05
    assert r1.to_dict()["scheme"] == "cells"
    ps, pi = rng.permutation(6), rng.permutation(20)
    r3 = kendall_permutation_test(XA[ps][:, pi], XB[ps][:, pi], Y[ps][:, pi], "tau_b", "item",
                                  n_resamples=300, seed=4)
    assert r3.statistic_a == pytest.approx(r1.statistic_a, abs=1e-12)
    assert r3.statistic_b == pytest.approx(r1.statistic_b, abs=1e-12)
    # same masks as compare.swap_masks for the same seed
    from nlgeval.correlation.permutation import swap_masks

    m = swap_masks(Y.shape, 300, "both", 4)
    r4 = kendall_permutation_test(XA, XB, Y, "tau_b", "item", masks=m)
    np.testing.assert_array_equal(r4.draws_a, r1.draws_a)


def test_groupings_are_the_level_names_only() -> None:
    # one vocabulary (issue 27): the groupings are the levels segment, item, system-grouped
    from nlgeval.correlation.kendall import GROUPINGS, check_grouping

    assert GROUPINGS == ("segment", "item", "system-grouped")
    assert [check_grouping(g) for g in (" Segment", "item", "SYSTEM-GROUPED")] == list(GROUPINGS)
    X = np.array([[1.0, 2.0, 3.0], [2.0, 1.0, 0.5]])
    for old in ("none", "pooled", "items", "sys", "system_grouped", "by_system"):
        with pytest.raises(InputError, match="segment, item, system-grouped"):
            grouped_kendall(X, X, "tau_b", old)
    with pytest.raises(InputError, match="system means"):
        check_grouping("system")
