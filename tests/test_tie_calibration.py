"""Tie calibration (acc_eq) and its pairwise-comparison permutation test.

References: acc_23 evaluated by enumeration at every candidate threshold (brute force, exact
fractions), MTME's sort-and-sweep definition re-derived here with exact fractions, hand-worked
cases, and enumeration of every pair-swap mask for the permutation test.
"""

from __future__ import annotations

import itertools
import json
import math
import warnings
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import nlgeval.correlation.kendall.tie_search as ts
from nlgeval.correlation.coefficients import DegenerateInputWarning
from nlgeval.correlation.kendall import build_groups, grouped_kendall
from nlgeval.correlation.kendall.tie_calibration import (
    acc_eq,
    acc_eq_permutation_test,
    calibrate_groups,
    tie_calibration,
)
from nlgeval.errors import InputError
from nlgeval.results import dumps

# --------------------------------------------------------------------------------------------
# references
# --------------------------------------------------------------------------------------------


def group_vectors(X, Y, grouping):
    """Complete cells per group (row-major order inside a group), groups with >= 2 cells."""
    X, Y = np.atleast_2d(np.asarray(X, float)), np.atleast_2d(np.asarray(Y, float))
    ok = np.isfinite(X) & np.isfinite(Y)
    S, n_items = X.shape
    if grouping == "segment":
        cells = [[(s, i) for s in range(S) for i in range(n_items) if ok[s, i]]]
    elif grouping == "item":
        cells = [[(s, i) for s in range(S) if ok[s, i]] for i in range(n_items)]
    else:
        cells = [[(s, i) for i in range(n_items) if ok[s, i]] for s in range(S)]
    return [([X[c] for c in g], [Y[c] for c in g]) for g in cells if len(g) >= 2]


def agrees(dm, dh, eps):
    """acc_23's numerator for one pair: C (|dm| > eps, same sign) or T_hm (both tied)."""
    if abs(dm) <= eps:
        return bool(dh == 0)
    return bool(dh != 0 and (dm > 0) == (dh > 0))


def acc_at(groups, eps):
    """Mean over groups of acc_23 at eps, as an exact fraction (by enumeration)."""
    total = Fraction(0)
    for m, h in groups:
        pairs = list(itertools.combinations(range(len(m)), 2))
        k = sum(agrees(m[i] - m[j], h[i] - h[j], eps) for i, j in pairs)
        total += Fraction(k, len(pairs))
    return total / len(groups)


def brute_calibration(X, Y, grouping):
    """Every candidate (0 and each |dm|) evaluated by enumeration; smallest argmax."""
    groups = group_vectors(X, Y, grouping)
    if not groups:
        return math.nan, math.nan
    cands = {0.0}
    for m, _ in groups:
        cands |= {abs(m[i] - m[j]) for i, j in itertools.combinations(range(len(m)), 2)}
    best = None
    for e in sorted(cands):
        v = acc_at(groups, e)
        if best is None or v > best[1]:
            best = (e, v)
    return best[0], best[1]


def mtme_sweep(X, Y, grouping):
    """MTME's tau_optimization re-derived with exact fractions: all pairs sorted by |dm|; each
    pair in turn becomes a metric tie (its acc_23 contribution changes from "concordant" to
    "tied in both" or "tied in the metric only"); the objective after the last pair of every
    distinct |dm| is that threshold's value; the first maximum wins."""
    groups = group_vectors(X, Y, grouping)
    G = len(groups)
    pairs = []
    k = []
    for g, (m, h) in enumerate(groups):
        n = len(m) * (len(m) - 1) // 2
        kg = 0
        for i, j in itertools.combinations(range(len(m)), 2):
            dm, dh = m[i] - m[j], h[i] - h[j]
            before = agrees(dm, dh, 0.0)
            after = bool(dh == 0)
            kg += before
            pairs.append((abs(dm), g, int(after) - int(before), n))
        k.append(kg)
    total = sum(Fraction(kg, len(m) * (len(m) - 1) // 2) for kg, (m, _) in zip(k, groups,
                                                                              strict=True))
    thresholds, values = [0.0], [total / G]
    for d, _g, change, n in sorted(pairs, key=lambda p: p[0]):
        total += Fraction(change, n)
        if thresholds[-1] == d:
            values[-1] = total / G
        else:
            thresholds.append(d)
            values.append(total / G)
    best = max(values)
    i = values.index(best)
    return thresholds[i], best


@st.composite
def matrices(draw, max_s=6, max_i=6):
    S = draw(st.integers(1, max_s))
    n_items = draw(st.integers(1, max_i))
    n = S * n_items
    k = draw(st.integers(1, 12))
    X = np.array(draw(st.lists(st.one_of(st.integers(0, k).map(float), st.just(math.nan)),
                               min_size=n, max_size=n)))
    Y = np.array(draw(st.lists(st.one_of(st.integers(0, 3).map(float), st.just(math.nan)),
                               min_size=n, max_size=n)))
    scale = draw(st.sampled_from([1.0, 0.1, 0.37, 1 / 3]))
    return (X * scale).reshape(S, n_items), Y.reshape(S, n_items)


# --------------------------------------------------------------------------------------------
# hand-worked cases (MTME's definition)
# --------------------------------------------------------------------------------------------


def test_hand_worked_no_grouping():
    # m = [1, 2, 2, 4, 0], h = [0, 1, 0, 1, 1]. Pairs (|dm|, type at eps = 0):
    # concordant: (0,1) 1, (0,3) 3, (2,3) 2; human-tied: (0,2) 1, (1,3) 2, (1,4) 2, (3,4) 4;
    # others: (1,2) 0 metric tie, (0,4) 1 and (2,4) 2 discordant. Candidates 0,1,2,3,4.
    # acc(eps) = [#concordant with |dm| > eps + #human-tied with |dm| <= eps] / 10:
    # eps 0: (3 + 0)/10   eps 1: (2 + 1)/10   eps 2: (1 + 3)/10   eps 3: (0 + 3)/10
    # eps 4: (0 + 4)/10 -> maximum 0.4 first reached at eps = 2.
    m, h = [1, 2, 2, 4, 0], [0, 1, 0, 1, 1]
    r = tie_calibration(m, h, "segment")
    assert r.epsilon == 2.0 and r.statistic == pytest.approx(0.4)
    assert r.calibrated and "optimistic" in r.note
    assert (r.n_groups, r.n_pairs) == (1, 10)
    assert mtme_sweep(np.array([m], float), np.array([h], float), "segment") == (2.0,
                                                                             Fraction(2, 5))
    rt = tie_calibration(m, h, "segment", variant="tau_23")
    assert rt.epsilon == 2.0 and rt.statistic == pytest.approx(2 * 0.4 - 1)


def test_hand_worked_item_grouping():
    # item 0: m = [1, 2, 4], h = [0, 0, 1]: (0,1) |dm|=1 human tie; (0,2) 3 and (1,2) 2
    # concordant. item 1: m = [0, 3, 3.5], h = [2, 2, 2]: three human ties, |dm| = 3, 3.5, 0.5.
    # mean acc_23:  eps 0: (2/3 + 0)/2 = 1/3    eps 0.5: (2/3 + 1/3)/2 = 1/2
    #               eps 1: (3/3 + 1/3)/2 = 2/3  eps 2: (2/3 + 1/3)/2 = 1/2
    #               eps 3: (1/3 + 2/3)/2 = 1/2  eps 3.5: (1/3 + 3/3)/2 = 2/3
    # maximum 2/3 at eps 1 and 3.5: the smallest, 1, is chosen.
    X = np.array([[1, 0], [2, 3], [4, 3.5]])
    Y = np.array([[0, 2], [0, 2], [1, 2]], float)
    r = tie_calibration(X, Y, "item")
    assert r.epsilon == 1.0 and r.statistic == pytest.approx(2 / 3)
    np.testing.assert_allclose(r.group_values, [1.0, 1 / 3])
    assert brute_calibration(X, Y, "item") == (1.0, Fraction(2, 3))
    assert mtme_sweep(X, Y, "item") == (1.0, Fraction(2, 3))


# --------------------------------------------------------------------------------------------
# against brute force
# --------------------------------------------------------------------------------------------


@settings(max_examples=200, deadline=None)
@given(matrices(), st.sampled_from(["segment", "item", "system-grouped"]))
def test_calibration_equals_brute_force(XY, grouping):
    X, Y = XY
    eps, val = brute_calibration(X, Y, grouping)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DegenerateInputWarning)
        r = tie_calibration(X, Y, grouping)
    if math.isnan(eps):
        assert math.isnan(r.statistic) and r.n_groups == 0
        return
    assert r.epsilon == eps
    assert r.statistic == pytest.approx(float(val), abs=1e-12)
    assert mtme_sweep(X, Y, grouping) == (eps, val)
    # every code path of the search: a zero leaf budget forces the branch and bound down to
    # single thresholds, small ones mix splits and exact sweeps; integer_weights=False forces
    # floating-point weights with the exact tie check
    groups = build_groups(np.atleast_2d(X), np.atleast_2d(Y), grouping)
    for leaf_budget, points, integer in ((0, 1, True), (0, 2, True), (3, 1, True),
                                         (2, 3, False), (0, 1, False), (10**6, 4, False)):
        ts._SEARCHES.clear()
        s = calibrate_groups(groups, leaf_budget=leaf_budget, round_points=points,
                             integer_weights=integer)
        assert s.epsilon == eps, (leaf_budget, points, integer)


@settings(max_examples=60, deadline=None)
@given(st.integers(2, 9), st.integers(2, 40), st.integers(0, 2**32 - 1))
def test_calibration_with_continuous_metric_equals_mtme_sweep(S, n_items, seed):
    rng = np.random.default_rng(seed)
    Y = rng.integers(0, 4, (S, n_items)).astype(float)
    X = Y + rng.normal(size=Y.shape)
    X[rng.random(X.shape) < 0.1] = np.nan
    for grouping in ("segment", "item", "system-grouped"):
        groups = group_vectors(X, Y, grouping)
        if not groups:
            continue
        eps, val = mtme_sweep(X, Y, grouping)
        r = tie_calibration(X, Y, grouping)
        assert r.epsilon == eps and r.statistic == pytest.approx(float(val), abs=1e-12)


def test_window_whose_bound_only_equals_the_best_is_searched():
    # 2 systems x 5 items = one pair per item (|dm|, type): (0.5, human tie), (1.5, concordant),
    # (3, tie), (3.5, concordant), (4, tie). Mean acc_23: eps 0 -> 2/5, 0.5 -> 3/5, 1.5 -> 2/5,
    # 3 -> 3/5, 3.5 -> 2/5, 4 -> 3/5: the maximum 3/5 is first reached at 0.5.
    X = np.array([[0, 0, 0, 0, 0], [0.5, 1.5, 3, 3.5, 4]])
    Y = np.array([[1, 0, 1, 0, 2], [1, 1, 1, 1, 2]], float)
    assert brute_calibration(X, Y, "item") == (0.5, Fraction(3, 5))
    g = build_groups(X, Y, "item")
    for budget, points in ((0, 1), (0, 2), (100, 1)):
        ts._SEARCHES.clear()
        assert calibrate_groups(g, leaf_budget=budget, round_points=points).epsilon == 0.5
    assert tie_calibration(X, Y, "item").epsilon == 0.5
    # one pooled group of 7 where, with single-threshold splits, a window below the best
    # threshold found (2.0) has an upper bound only *equal* to the best value; it holds the
    # first maximum (1.5), so it must be searched (a strict bound test returns 2.0)
    X = np.array([[1.0, 0.5, 2.0, 1.0, 2.0, 1.5, 0.0]])
    Y = np.array([[1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 2.0]])
    eps, _ = brute_calibration(X, Y, "segment")
    assert eps == 1.5
    g = build_groups(X, Y, "segment")
    for points in (1, 2):
        ts._SEARCHES.clear()
        assert calibrate_groups(g, leaf_budget=0, round_points=points).epsilon == 1.5


def test_ties_at_maximum_broken_to_smallest_epsilon_in_float_mode():
    # groups of different sizes whose lcm is huge force floating-point weights
    rng = np.random.default_rng(1)
    sizes = [2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41, 43, 47, 53]
    X = np.full((max(sizes), len(sizes)), np.nan)
    Y = np.full_like(X, np.nan)
    for i, n in enumerate(sizes):
        X[:n, i] = rng.integers(0, 6, n) * 0.25
        Y[:n, i] = rng.integers(0, 3, n)
    r = tie_calibration(X, Y, "item")
    eps, val = mtme_sweep(X, Y, "item")
    assert r.epsilon == eps and r.statistic == pytest.approx(float(val), abs=1e-12)
    g = build_groups(X, Y, "item")
    assert calibrate_groups(g, integer_weights=False).epsilon == eps


def test_acc_eq_fixed_epsilon_is_acc23():
    rng = np.random.default_rng(4)
    Y = rng.integers(0, 3, (5, 30)).astype(float)
    X = Y + rng.normal(size=Y.shape)
    for grouping in ("segment", "item", "system-grouped"):
        cal = tie_calibration(X, Y, grouping)
        fixed = acc_eq(X, Y, grouping, epsilon=cal.epsilon)
        assert fixed.statistic == cal.statistic and fixed.epsilon == cal.epsilon
        assert not fixed.calibrated and "not calibrated" in fixed.note
        assert cal.calibrated and "optimistic" in cal.note
        assert acc_eq(X, Y, grouping).statistic == cal.statistic
        ref = grouped_kendall(X, Y, "acc_23", grouping, epsilon=0.3).statistic
        assert acc_eq(X, Y, grouping, epsilon=0.3).statistic == pytest.approx(ref, abs=1e-15)
        # the calibrated value is the maximum over thresholds
        assert cal.statistic >= acc_eq(X, Y, grouping, epsilon=0.3).statistic
        assert cal.to_dict()["epsilon"] == cal.epsilon


def test_order_of_systems_and_items_does_not_matter():
    rng = np.random.default_rng(8)
    Y = rng.integers(0, 4, (7, 25)).astype(float)
    X = np.round(Y + rng.normal(size=Y.shape), 1)
    ps, pi = rng.permutation(7), rng.permutation(25)
    for grouping in ("segment", "item", "system-grouped"):
        a = tie_calibration(X, Y, grouping)
        b = tie_calibration(X[ps][:, pi], Y[ps][:, pi], grouping)
        assert a.epsilon == b.epsilon and a.statistic == pytest.approx(b.statistic, abs=1e-15)


def test_degenerate_and_bad_input():
    with pytest.warns(DegenerateInputWarning):
        r = tie_calibration([[1.0, np.nan]], [[1.0, 2.0]], "segment")
    assert math.isnan(r.statistic) and r.n_groups == 0
    with pytest.raises(InputError):
        tie_calibration(np.ones((2, 3)), np.ones((2, 3)), variant="tau_b")
    with pytest.raises(InputError):
        acc_eq(np.ones((2, 3)), np.ones((2, 3)), "item", epsilon=-0.1)
    with pytest.raises(InputError):
        tie_calibration(np.ones((2, 3)), np.ones((3, 2)))
    with pytest.raises(InputError):
        tie_calibration(np.ones((2, 3)), np.ones((2, 3)), "diagonal")
    with pytest.raises(InputError):
        acc_eq_permutation_test(np.ones((2, 3)), np.ones((2, 3)), np.ones((2, 3)),
                                n_resamples=0)
    # a constant metric: every pair is a metric tie at every threshold
    r = tie_calibration(np.ones((3, 4)), np.arange(12.0).reshape(3, 4), "segment")
    assert r.epsilon == 0.0 and r.statistic == 0.0


# --------------------------------------------------------------------------------------------
# the pairwise-comparison permutation test
# --------------------------------------------------------------------------------------------


def brute_pairs_test(XA, XB, Y, grouping, eps_a, eps_b, masks):
    """Enumerate the given pair-swap masks: hybrid A takes B's outcome on swapped pairs."""
    ok = np.isfinite(XA) & np.isfinite(XB) & np.isfinite(Y)
    ga = group_vectors(np.where(ok, XA, np.nan), Y, grouping)
    gb = group_vectors(np.where(ok, XB, np.nan), Y, grouping)
    outcome_a, outcome_b, size = [], [], []
    for (ma, h), (mb, _) in zip(ga, gb, strict=True):
        pairs = list(itertools.combinations(range(len(ma)), 2))
        size.append(len(pairs))
        for i, j in pairs:
            outcome_a.append(agrees(ma[i] - ma[j], h[i] - h[j], eps_a))
            outcome_b.append(agrees(mb[i] - mb[j], h[i] - h[j], eps_b))
    bounds = np.r_[0, np.cumsum(size)]

    def stat(outcomes):
        return sum(Fraction(sum(outcomes[a:b]), b - a)
                   for a, b in zip(bounds[:-1], bounds[1:], strict=True)) / len(size)

    a0, b0 = stat(outcome_a), stat(outcome_b)
    hits, da, db = 0, [], []
    for m in masks:
        ha = [ob if s else oa for oa, ob, s in zip(outcome_a, outcome_b, m, strict=True)]
        hb = [oa if s else ob for oa, ob, s in zip(outcome_a, outcome_b, m, strict=True)]
        sa, sb = stat(ha), stat(hb)
        da.append(float(sa))
        db.append(float(sb))
        hits += (sa - sb) >= (a0 - b0)
    return a0, b0, hits, np.array(da), np.array(db)


CASE_A = np.array([[0.1, 0.5, 0.9], [0.4, 0.2, 1.4]])
CASE_B = np.array([[0.3, 0.3, 0.0], [0.9, 0.6, 0.6]])
CASE_Y = np.array([[1.0, 0.0, 2.0], [1.0, 1.0, 2.0]])


@pytest.mark.parametrize("grouping, n_pairs", [("segment", 15), ("item", 3), ("system-grouped", 6)])
def test_pairs_test_all_masks_equals_brute_force(grouping, n_pairs):
    masks = np.array(list(itertools.product([False, True], repeat=n_pairs)), dtype=bool)
    for eps_a, eps_b in ((None, None), (0.0, 0.3), (0.35, 0.0)):
        res = acc_eq_permutation_test(CASE_A, CASE_B, CASE_Y, grouping, epsilon_a=eps_a,
                                      epsilon_b=eps_b, pair_masks=masks)
        ea = tie_calibration(CASE_A, CASE_Y, grouping).epsilon if eps_a is None else eps_a
        eb = tie_calibration(CASE_B, CASE_Y, grouping).epsilon if eps_b is None else eps_b
        assert (res.epsilon_a, res.epsilon_b) == (ea, eb)
        a0, b0, hits, da, db = brute_pairs_test(CASE_A, CASE_B, CASE_Y, grouping, ea, eb, masks)
        assert res.statistic_a == pytest.approx(float(a0), abs=1e-12)
        assert res.statistic_b == pytest.approx(float(b0), abs=1e-12)
        assert res.n_at_least == hits
        assert res.pvalue == pytest.approx((1 + hits) / (1 + masks.shape[0]))
        np.testing.assert_allclose(res.draws_a, da, atol=1e-12)
        np.testing.assert_allclose(res.draws_b, db, atol=1e-12)
        assert res.calibrated == (eps_a is None or eps_b is None)


@pytest.mark.parametrize("grouping, n_pairs", [("segment", 15), ("system-grouped", 6)])
def test_pairs_test_random_draws_match_the_exact_distribution(grouping, n_pairs):
    masks = np.array(list(itertools.product([False, True], repeat=n_pairs)), dtype=bool)
    exact = acc_eq_permutation_test(CASE_A, CASE_B, CASE_Y, grouping, pair_masks=masks)
    p_exact = exact.n_at_least / masks.shape[0]
    K = 20_000
    res = acc_eq_permutation_test(CASE_A, CASE_B, CASE_Y, grouping, n_resamples=K, seed=1)
    assert res.statistic == exact.statistic
    se = math.sqrt(p_exact * (1 - p_exact) / K)
    assert abs(res.n_at_least / K - p_exact) < 5 * se + 1e-12
    # the draws have the same support and mean / variance as the enumerated ones
    assert set(np.round(res.draws_a, 12)) <= set(np.round(exact.draws_a, 12))
    sd = exact.draws_a.std()
    assert abs(res.draws_a.mean() - exact.draws_a.mean()) < 5 * sd / math.sqrt(K)
    assert res.draws_a.std() == pytest.approx(sd, rel=0.05)
    # A's and B's draws move in opposite directions by the same amount
    np.testing.assert_allclose(res.draws_a + res.draws_b, res.statistic_a + res.statistic_b)


def test_pairs_test_seed_and_order_invariance():
    rng = np.random.default_rng(0)
    Y = np.round(rng.normal(size=(8, 40)) * 2)
    XA = Y + rng.normal(size=Y.shape)
    XB = Y + rng.normal(size=Y.shape) * 2
    XA[1, 4] = np.nan
    for grouping in ("segment", "item", "system-grouped"):
        r1 = acc_eq_permutation_test(XA, XB, Y, grouping, n_resamples=500, seed=3)
        r2 = acc_eq_permutation_test(XA, XB, Y, grouping, n_resamples=500, seed=3)
        assert np.array_equal(r1.draws_a, r2.draws_a) and r1.pvalue == r2.pvalue
        assert r1.statistic > 0 and r1.pvalue < 0.05
        assert r1.draws_a.shape == r1.draws_b.shape == (500,)
        r3 = acc_eq_permutation_test(XA, XB, Y, grouping, n_resamples=500, seed=4)
        assert not np.array_equal(r1.draws_a, r3.draws_a)
        # permuting systems and items changes nothing, not even the draws (canonical order)
        ps, pi = rng.permutation(8), rng.permutation(40)
        r4 = acc_eq_permutation_test(XA[ps][:, pi], XB[ps][:, pi], Y[ps][:, pi], grouping,
                                     n_resamples=500, seed=3)
        assert r4.statistic_a == pytest.approx(r1.statistic_a, abs=1e-15)
        assert r4.epsilon_a == r1.epsilon_a and r4.epsilon_b == r1.epsilon_b
        np.testing.assert_allclose(r4.draws_a, r1.draws_a, atol=1e-14)
        assert r4.n_at_least == r1.n_at_least
        # swapping the roles of A and B mirrors the test
        r5 = acc_eq_permutation_test(XB, XA, Y, grouping, n_resamples=500, seed=3)
        assert r5.statistic == pytest.approx(-r1.statistic, abs=1e-15)
        d = r1.to_dict()
        assert d["scheme"] == "pairs" and d["pvalue_mtme"] == r1.n_at_least / 500
        assert json.loads(dumps(r1))["permutations"] == 500


# --------------------------------------------------------------------------------------------
# real data: WMT21 TED en-de MQM (per-segment file)
# --------------------------------------------------------------------------------------------


def _ted_mqm(data_dir: Path) -> np.ndarray:
    path = data_dir / "wmt21_ted_mqm" / "ende" / "mqm_ted_ende.avg_seg_scores.tsv"
    if not path.is_file():
        pytest.skip(f"no {path.name} in the corpora folder")
    scores = {}
    with open(path, encoding="utf-8") as fh:
        next(fh)  # header separated by spaces; data lines mix tabs and spaces
        for line in fh:
            system, score, seg = line.split()
            if not system.startswith("ref"):
                scores[(system, int(seg))] = np.nan if score == "None" else float(score)
    systems = sorted({s for s, _ in scores})
    segs = sorted({g for _, g in scores})
    Y = np.array([[scores[(s, g)] for g in segs] for s in systems])
    return Y[:, np.isfinite(Y).any(axis=0)]


def test_ted_mqm_matches_mtme_sweep(data_dir):
    Y = _ted_mqm(data_dir)
    assert Y.shape == (13, 529) and int(np.isfinite(Y).sum()) == 6877
    rng = np.random.default_rng(0)
    X = np.round(Y + rng.normal(size=Y.shape) * 2, 1)   # a metric with ties of its own
    r = tie_calibration(X, Y, "item")
    eps, val = mtme_sweep(X, Y, "item")
    assert r.epsilon == eps and r.statistic == pytest.approx(float(val), abs=1e-12)
    sub = (slice(None), slice(0, 45))                    # ~585 outputs, ~170k pairs pooled
    r = tie_calibration(X[sub], Y[sub], "segment")
    eps, val = mtme_sweep(X[sub], Y[sub], "segment")
    assert r.epsilon == eps and r.statistic == pytest.approx(float(val), abs=1e-12)


def test_result_follows_the_result_protocol() -> None:
    """TieCalibrationResult is a StatResult: unpacking, confidence_interval(), JSON keys."""
    X = np.array([[0.9, 0.81, 0.7, 0.6], [0.5, 0.8, 0.4, 0.52], [0.2, 0.3, 0.71, 0.2]])
    Y = np.array([[5, 4, 4, 5], [3, 4, 3, 5], [4, 2, 4, 2]], dtype=float)
    res = acc_eq(X, Y, epsilon=0.05)
    stat, p = res
    assert stat == res.statistic and math.isnan(p)
    ci = res.confidence_interval()
    assert math.isnan(ci.low) and math.isnan(ci.high)
    d = res.to_dict()
    # the documented --json keys, unchanged; the per-group values stay out
    assert set(d) == {"statistic", "epsilon", "grouping", "n_groups", "n_pairs", "calibrated",
                      "variant", "n_skipped", "pvalue", "ci_low", "ci_high", "note"}
    assert json.loads(dumps(res))["n_pairs"] == 12


def test_pairs_test_counts_by_sorting_equal_the_pair_loop(monkeypatch: pytest.MonkeyPatch):
    # groups above SORTED_FROM cells count the pairs both metrics get right by sorting
    # (O(n log^2 n)); the integers must be the pair loop's, ties and thresholds included
    import importlib

    tc = importlib.import_module("nlgeval.correlation.kendall.tie_calibration")
    from nlgeval.correlation.kendall._pair_agreement import both_right
    from nlgeval.correlation.kendall._tie_kernels import _agreement_counts

    for seed in range(300):
        rng = np.random.default_rng(seed)
        n = int(rng.integers(2, 45))
        y = rng.integers(0, (2, 4, 60)[seed % 3], n).astype(float)
        xa = np.round(rng.normal(size=n) * 2, seed % 3) / 4
        xb = np.round(y + rng.normal(size=n), seed % 3) * 0.3
        ea, eb = float(rng.choice([0.0, 0.1, 0.25])), float(rng.choice([0.0, 0.03, 0.6]))
        loop = _agreement_counts(xa, xb, y, np.array([0, n]), ea, eb)[0]
        assert both_right(xa, xb, y, ea, eb) == loop[0] - loop[3], seed
    rng = np.random.default_rng(7)
    Y = rng.integers(0, 4, (6, 50)).astype(float)
    XA, XB = Y + rng.normal(size=Y.shape), np.round(Y + 2 * rng.normal(size=Y.shape), 1)
    XA[rng.random(XA.shape) < 0.1] = np.nan
    for grouping in ("segment", "item", "system-grouped"):
        runs = []
        for limit in (1 << 40, 1):
            monkeypatch.setattr(tc, "SORTED_FROM", limit)
            runs.append(acc_eq_permutation_test(XA, XB, Y, grouping, n_resamples=200, seed=3))
        assert runs[0].pvalue == runs[1].pvalue
        np.testing.assert_array_equal(runs[0].draws_a, runs[1].draws_a)
