"""Pairwise accuracy, soft pairwise accuracy and their PERM-BOTH tests.

References: brute-force enumeration (Python loops, exact Fractions), hand-checkable cases with
the arithmetic written out, and MTME's definitions (``stats.Agreement``, ``pce.py``)
re-derived here in exact integer arithmetic.
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from nlgeval.correlation.levels import level_statistic
from nlgeval.correlation.pairwise import (
    pairwise_accuracy,
    pairwise_accuracy_from_scores,
    pairwise_accuracy_test,
    sign_flip_masks,
    soft_pairwise_accuracy,
    soft_pairwise_accuracy_test,
)
from nlgeval.correlation.permutation.compare import (
    _permutation_deltas,
    permutation_test,
    swap_masks,
)
from nlgeval.correlation.permutation.draws import iter_swap_masks
from nlgeval.errors import InputError


# ----------------------------------------------------------------------------- helpers
def _sign(x: Fraction | float) -> int:
    return (x > 0) - (x < 0)


def _dec(v: float) -> Fraction:
    """The decimal a float was written as (0.3, not 0.299999999999999988898): the exact value
    a user means by scores rounded to 0.1."""
    return Fraction(repr(float(v)))


def _brute_pairwise_accuracy(X: np.ndarray, Y: np.ndarray) -> tuple[int, int]:
    """Loops + exact Fractions: system means over complete cells, then every pair."""
    S, n = X.shape
    means = []
    for s in range(S):
        cells = [(_dec(X[s, i]), _dec(Y[s, i])) for i in range(n)
                 if np.isfinite(X[s, i]) and np.isfinite(Y[s, i])]
        if cells:
            means.append((sum(c[0] for c in cells) / len(cells),
                          sum(c[1] for c in cells) / len(cells)))
        else:
            means.append(None)
    agree = pairs = 0
    for a, b in itertools.combinations(range(S), 2):
        if means[a] is None or means[b] is None:
            continue
        pairs += 1
        agree += _sign(means[a][0] - means[b][0]) == _sign(means[a][1] - means[b][1])
    return agree, pairs


def _all_sign_masks(n: int) -> np.ndarray:
    return np.array(list(itertools.product([1, -1], repeat=n)), dtype=float)


def _brute_sign_flip_p(Z: np.ndarray, ok: np.ndarray, masks: np.ndarray
                       ) -> dict[tuple[int, int], tuple[Fraction, Fraction]]:
    """p(i beats j), p(j beats i) per pair with Python loops over masks, in exact Fractions.

    The pair uses the segments where both systems are complete; mask columns are the
    segments with at least one complete cell, in order.
    """
    keep = [s for s in range(Z.shape[1]) if ok[:, s].any()]
    out = {}
    for i, j in itertools.combinations(range(Z.shape[0]), 2):
        common = [(c, s) for c, s in enumerate(keep) if ok[i, s] and ok[j, s]]
        if not common:
            continue
        d = {c: _dec(Z[i, s]) - _dec(Z[j, s]) for c, s in common}
        obs = sum(d.values())
        ge = le = 0
        for m in masks:
            null = sum(int(m[c]) * d[c] for c, _ in common)
            ge += null >= obs
            le += null <= obs
        out[(i, j)] = (Fraction(ge, len(masks)), Fraction(le, len(masks)))
    return out


def _brute_spa(X: np.ndarray, Y: np.ndarray, masks: np.ndarray, orientation: str) -> float:
    ok = np.isfinite(X) & np.isfinite(Y)
    ph, pm = _brute_sign_flip_p(Y, ok, masks), _brute_sign_flip_p(X, ok, masks)
    errs = []
    for key in ph:
        e = abs(ph[key][0] - pm[key][0])
        if orientation == "both":
            e = (e + abs(ph[key][1] - pm[key][1])) / 2
        errs.append(e)
    return float(1 - sum(errs) / len(errs))


def _mtme_pce_pvalues(scores: np.ndarray, permutations: int, seed: int) -> np.ndarray:
    """MTME's compute_pairwise_p_values re-derived from its definition, exact for integers.

    Masks: default_rng(seed).random((K, n), float32), rounded to 0/1, then 2m - 1; system
    score = sum over segments; p_ij = #{permuted delta >= observed delta} / K for i < j.
    Scores must be integers here so that int64 arithmetic is exact.
    """
    u = np.random.default_rng(seed).random((permutations, scores.shape[1]), dtype=np.float32)
    m = (np.rint(u).astype(np.int64) * 2 - 1)
    z = scores.astype(np.int64)
    S = z.shape[0]
    out = np.full((S, S), np.nan)
    for i in range(S):
        for j in range(i + 1, S):
            null = m @ (z[i] - z[j])
            out[i, j] = np.mean(null >= (z[i] - z[j]).sum())
    return out


def _z(M: np.ndarray, ok: np.ndarray) -> np.ndarray:
    v = M[ok]
    return np.where(ok, (M - v.mean()) / v.std(), np.nan)


# ----------------------------------------------------------------------------- pairwise accuracy
def test_pairwise_accuracy_hand_case() -> None:
    # 4 systems x 2 items; system means (complete cells only):
    #   metric: s0 (1+1)/2 = 1, s1 (2+2)/2 = 2, s2 (3+3)/2 = 3, s3 (4+NaN) -> 4 (one cell)
    #   human:  s0 1, s1 3, s2 2, s3 4       (s3's second cell has no metric score)
    X = np.array([[1, 1], [2, 2], [3, 3], [4, np.nan]], float)
    Y = np.array([[1, 1], [3, 3], [2, 2], [4, 9]], float)
    # pairs: (0,1) -,- agree; (0,2) -,- agree; (0,3) -,- agree; (1,2) metric -, human +
    # disagree; (1,3) agree; (2,3) agree  ->  5 / 6
    res = pairwise_accuracy(X, Y)
    assert (res.n_agree, res.n_pairs, res.n_systems) == (5, 6, 4)
    assert res.statistic == pytest.approx(5 / 6)
    assert math.isnan(res.pvalue) and res.to_dict()["n_agree"] == 5
    # a human tie agrees only with a metric tie: human s1 = s2 = 3
    Y2 = np.array([[1, 1], [3, 3], [3, 3], [4, 9]], float)
    res2 = pairwise_accuracy(X, Y2)             # (1,2): metric -, human 0 -> disagree: 5/6
    assert (res2.n_agree, res2.n_tied_human, res2.n_tied_metric) == (5, 1, 0)
    X2 = np.array([[1, 1], [2, 2], [2, 2], [4, np.nan]], float)
    res3 = pairwise_accuracy(X2, Y2)            # (1,2): tie, tie -> agree: 6/6
    assert (res3.n_agree, res3.n_pairs, res3.statistic) == (6, 6, 1.0)


def test_pairwise_accuracy_from_scores_skips_missing_like_mtme_agreement() -> None:
    # MTME stats.Agreement skips pairs with a missing gold score; system 2 has none.
    m = [0.1, 0.5, 0.3, 0.9]
    h = [1.0, 2.0, np.nan, 0.5]
    res = pairwise_accuracy_from_scores(m, h)
    # remaining systems 0, 1, 3: (0,1) -,- agree; (0,3) -,+ disagree; (1,3) -,+ disagree
    assert (res.n_agree, res.n_pairs, res.n_systems) == (1, 3, 3)
    with pytest.raises(InputError):
        pairwise_accuracy_from_scores([1, 2], [1, 2, 3])
    with pytest.raises(InputError):
        pairwise_accuracy(np.ones((3, 4)), np.ones((3, 5)))
    with pytest.raises(InputError):
        pairwise_accuracy(np.ones(3), np.ones(3))
    one = pairwise_accuracy_from_scores([1.0], [2.0])
    assert math.isnan(one.statistic) and one.n_pairs == 0 and one.note


@pytest.mark.parametrize("seed", range(6))
def test_pairwise_accuracy_equals_brute_force(seed: int) -> None:
    rng = np.random.default_rng(seed)
    S, n = 7, 5
    # small integers -> many exact ties in system means; scattered NaN in both
    X = rng.integers(0, 3, size=(S, n)).astype(float)
    Y = rng.integers(0, 3, size=(S, n)).astype(float)
    X[rng.random((S, n)) < 0.15] = np.nan
    Y[rng.random((S, n)) < 0.15] = np.nan
    Y[seed % S] = np.nan                         # one system without any complete cell
    agree, pairs = _brute_pairwise_accuracy(X, Y)
    res = pairwise_accuracy(X, Y)
    assert (res.n_agree, res.n_pairs) == (agree, pairs)
    # the order of systems and items does not matter
    ps, pi = rng.permutation(S), rng.permutation(n)
    res_p = pairwise_accuracy(X[ps][:, pi], Y[ps][:, pi])
    assert (res_p.n_agree, res_p.n_pairs) == (agree, pairs)


def test_equal_means_in_a_different_summation_order_are_a_tie() -> None:
    # 0.1 + 0.2 + 0.3 and 0.3 + 0.2 + 0.1 differ in the last bit as floats
    assert (0.1 + 0.2 + 0.3) != (0.3 + 0.2 + 0.1)
    X = np.array([[0.1, 0.2, 0.3], [0.3, 0.2, 0.1]])
    Y = np.array([[1.0, 1.0, 1.0], [1.0, 1.0, 1.0]])
    res = pairwise_accuracy(X, Y)
    assert res.n_tied_metric == 1 and res.statistic == 1.0


# ----------------------------------------------------------------------------- soft pairwise
def test_spa_hand_case_with_all_eight_masks() -> None:
    # 2 systems x 3 segments, every sign mask (+ first):
    #   human:  s0 = [3, 1, 2], s1 = [1, 1, 1] -> d = [2, 0, 1], observed 3
    #     null deltas (+++) 3, (++-) 1, (+-+) 3, (+--) 1, (-++) -1, (-+-) -3, (--+) -1, (---) -3
    #     p(s0 beats s1) = #{>= 3} / 8 = 2/8;  other direction #{<= 3} / 8 = 8/8
    #   metric: s0 = [0.5, 0.9, 0.4], s1 = [0.2, 0.4, 0.3] -> d = [0.3, 0.5, 0.1], obs 0.9
    #     null (+++) .9, (++-) .7, (+-+) -.1, (+--) -.3, (-++) .3, (-+-) .1, (--+) -.7, (---) -.9
    #     p = #{>= 0.9} / 8 = 1/8 (the all-plus mask ties the observed delta and counts);
    #     other direction 8/8
    #   MTME (i < j only): SPA = 1 - |2/8 - 1/8| = 0.875
    #   both directions:   SPA = 1 - (|2/8 - 1/8| + |8/8 - 8/8|) / 2 = 0.9375
    Y = np.array([[3, 1, 2], [1, 1, 1]], float)
    X = np.array([[0.5, 0.9, 0.4], [0.2, 0.4, 0.3]])
    masks = _all_sign_masks(3)
    given = soft_pairwise_accuracy(X, Y, masks=masks, orientation="given")
    assert given.statistic == pytest.approx(0.875, abs=1e-15)
    assert given.pvalues_human[0, 1] == 0.25 and given.pvalues_metric[0, 1] == 0.125
    assert given.pvalues_human[1, 0] == 1.0 and given.pvalues_metric[1, 0] == 1.0
    both = soft_pairwise_accuracy(X, Y, masks=masks)
    assert both.statistic == pytest.approx(0.9375, abs=1e-15)
    assert (both.n_pairs, both.n_systems, both.n_segments, both.permutations) == (1, 2, 3, 8)
    # 0/1 and boolean masks mean the same signs (1 = keep, 0 = flip)
    assert soft_pairwise_accuracy(X, Y, masks=masks > 0).statistic == both.statistic


def test_spa_mtme_docstring_example() -> None:
    # pce.compute_pairwise_p_values' docstring: scoresA - scoresB = 0.6 on every segment,
    # observed delta 3.0; of its ten masks only the all-plus one reaches 3.0 -> p = 1/10.
    A = [0.8, 0.9, 0.7, 1.0, 0.6]
    B = [0.2, 0.3, 0.1, 0.4, 0.0]
    masks = np.array([[1, 1, -1, -1, -1], [1, -1, 1, -1, 1], [1, -1, 1, 1, -1],
                      [-1, 1, -1, -1, 1], [1, 1, 1, -1, 1], [-1, 1, -1, 1, -1],
                      [1, 1, 1, 1, 1], [1, -1, 1, -1, 1], [1, 1, -1, -1, 1],
                      [-1, 1, -1, -1, -1]])
    res = soft_pairwise_accuracy(np.array([A, B]), np.array([A, B]), masks=masks)
    assert res.pvalues_human[0, 1] == pytest.approx(0.1, abs=1e-15)
    assert res.statistic == 1.0


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("missing", [False, True])
def test_spa_equals_enumeration_of_all_sign_masks(seed: int, missing: bool) -> None:
    rng = np.random.default_rng(seed)
    S, n = 4, 7
    Y = rng.integers(-3, 2, size=(S, n)).astype(float)      # integer human scores: ties
    X = np.round(Y + rng.normal(size=(S, n)), 1)
    X[1] = X[2] if seed % 2 else X[1]                           # identical metric rows
    if missing:
        Y[rng.random((S, n)) < 0.25] = np.nan
        X[0, 0] = np.nan
        Y[:, 3] = np.nan                                        # a wholly unrated segment
    n_kept = int((np.isfinite(X) & np.isfinite(Y)).any(axis=0).sum())
    masks = _all_sign_masks(n_kept)
    for orientation in ("given", "both"):
        res = soft_pairwise_accuracy(X, Y, masks=masks, orientation=orientation)
        assert res.statistic == pytest.approx(_brute_spa(X, Y, masks, orientation), abs=1e-12)
    ok = np.isfinite(X) & np.isfinite(Y)
    ref = _brute_sign_flip_p(Y, ok, masks)
    res = soft_pairwise_accuracy(X, Y, masks=masks)
    for (i, j), (p_ij, p_ji) in ref.items():
        assert res.pvalues_human[i, j] == pytest.approx(float(p_ij), abs=1e-15)
        assert res.pvalues_human[j, i] == pytest.approx(float(p_ji), abs=1e-15)
    # random masks approach the exact p-values
    mc = soft_pairwise_accuracy(X, Y, n_resamples=20_000, seed=seed)
    assert mc.statistic == pytest.approx(res.statistic, abs=0.02)


def test_spa_matches_mtme_definition_and_masks_with_seed_4() -> None:
    rng = np.random.default_rng(11)
    S, n = 6, 40
    Y = rng.integers(-10, 1, size=(S, n)).astype(float)
    X = Y + rng.integers(-4, 5, size=(S, n))
    X[2] = X[3]                                       # identical metric rows (ties)
    ours = soft_pairwise_accuracy(X, Y, seed=4, orientation="given")
    ph, pm = _mtme_pce_pvalues(Y, 1000, 4), _mtme_pce_pvalues(X, 1000, 4)
    iu = np.triu_indices(S, 1)
    np.testing.assert_array_equal(ours.pvalues_human[iu], ph[iu])
    np.testing.assert_array_equal(ours.pvalues_metric[iu], pm[iu])
    assert ours.statistic == pytest.approx(1 - np.mean(np.abs(ph - pm)[iu]), abs=1e-15)
    # the masks are MTME's: float32 uniforms rounded to 0/1, then 2m - 1
    u = np.random.default_rng(4).random((1000, n), dtype=np.float32)
    np.testing.assert_array_equal(sign_flip_masks(n, 1000, 4), np.rint(u) * 2 - 1)


def test_spa_is_deterministic_affine_invariant_and_order_free() -> None:
    rng = np.random.default_rng(5)
    S, n = 6, 30
    Y = rng.normal(size=(S, n))
    X = Y + rng.normal(size=(S, n))
    Y[rng.random((S, n)) < 0.1] = np.nan
    a = soft_pairwise_accuracy(X, Y, n_resamples=500, seed=3)
    b = soft_pairwise_accuracy(X, Y, n_resamples=500, seed=3)
    c = soft_pairwise_accuracy(X, Y, n_resamples=500, seed=4)
    assert a.statistic == b.statistic
    np.testing.assert_array_equal(a.pvalues_metric, b.pvalues_metric)
    assert not np.array_equal(a.pvalues_metric, c.pvalues_metric, equal_nan=True)
    # z-scoring (what the PERM-BOTH test does) does not change SPA
    z = soft_pairwise_accuracy(3 * X + 7, Y, n_resamples=500, seed=3)
    assert z.statistic == a.statistic
    # reversing the systems: same SPA with both orientations ...
    Y2 = Y.copy()
    Y2[1] = Y2[0]                                   # humans cannot tell systems 0 and 1 apart
    base = soft_pairwise_accuracy(X, Y2, n_resamples=500, seed=3)
    rev = soft_pairwise_accuracy(X[::-1], Y2[::-1], n_resamples=500, seed=3)
    assert rev.statistic == pytest.approx(base.statistic, abs=1e-15)
    np.testing.assert_array_equal(rev.pvalues_human, base.pvalues_human[::-1, ::-1])
    # ... while MTME's i < j orientation depends on the order when ties differ
    g = soft_pairwise_accuracy(X, Y2, n_resamples=500, seed=3, orientation="given")
    g_rev = soft_pairwise_accuracy(X[::-1], Y2[::-1], n_resamples=500, seed=3,
                                   orientation="given")
    assert g.statistic != g_rev.statistic
    with pytest.raises(InputError):
        soft_pairwise_accuracy(X, Y, orientation="up")
    with pytest.raises(InputError):
        soft_pairwise_accuracy(X, Y, masks=np.ones((4, n + 1)))
    with pytest.raises(InputError):
        soft_pairwise_accuracy(X, Y, masks=np.full((4, n), 2.0))


def test_spa_pairs_without_common_segments_are_left_out() -> None:
    # systems 0 and 1 were rated on disjoint segments: no p for that pair
    Y = np.array([[1, 2, np.nan, np.nan], [np.nan, np.nan, 3, 1], [0, 1, 2, 0]], float)
    X = Y + 0.5
    res = soft_pairwise_accuracy(X, Y, masks=_all_sign_masks(4))
    assert res.n_pairs == 2 and "left out" in res.note
    assert math.isnan(res.pvalues_human[0, 1]) and math.isnan(res.pvalues_human[1, 0])
    assert res.statistic == pytest.approx(_brute_spa(X, Y, _all_sign_masks(4), "both"))


# ----------------------------------------------------------------------------- real data
def _mqm_matrix(data_dir: Path, lp: str) -> pd.DataFrame:
    path = data_dir / "wmt21_ted_mqm" / lp / f"mqm_ted_{lp}.avg_seg_scores.tsv"
    if not path.is_file():
        pytest.skip(f"no WMT21 TED MQM scores for {lp} in the corpora folder")
    # header is space-separated, data lines tab-separated with a space before seg_id
    d = pd.read_csv(path, sep=r"\s+", skiprows=1, names=["system", "score", "seg"],
                    na_values=["None"])
    return d.pivot(index="system", columns="seg", values="score")


def test_spa_on_wmt21_ted_mqm_matches_mtme_definition(data_dir: Path) -> None:
    """en-de MQM (14 systems, 77 wholly unrated segments) vs a noisy 'metric' in 0.1 steps.

    MTME drops the unrated segments and draws its masks over the rest; nlgeval drops
    segments without a complete cell, so with seed 4 both use the same masks. MQM scores are
    multiples of 0.1, so x10 they are integers and the reference is exact.
    """
    H = _mqm_matrix(data_dir, "ende").to_numpy()
    rng = np.random.default_rng(0)
    X = np.round(H + rng.normal(scale=2.0, size=H.shape), 1)
    rated = np.isfinite(H).all(axis=0)
    assert (~rated).sum() == 77 and np.isfinite(H[:, ~rated]).sum() == 0
    ours = soft_pairwise_accuracy(X, H, seed=4, orientation="given")
    Hi = np.rint(H[:, rated] * 10).astype(np.int64)
    Xi = np.rint(X[:, rated] * 10).astype(np.int64)
    ph, pm = _mtme_pce_pvalues(Hi, 1000, 4), _mtme_pce_pvalues(Xi, 1000, 4)
    iu = np.triu_indices(H.shape[0], 1)
    np.testing.assert_array_equal(ours.pvalues_human[iu], ph[iu])
    np.testing.assert_array_equal(ours.pvalues_metric[iu], pm[iu])
    assert ours.statistic == pytest.approx(1 - np.mean(np.abs(ph - pm)[iu]), abs=1e-15)
    assert ours.n_segments == 529


# ----------------------------------------------------------------------------- PERM-BOTH
def test_iter_swap_masks_chunks_equal_one_draw() -> None:
    for scheme in ("both", "systems", "items"):
        whole = swap_masks((4, 6), 50, scheme, seed=3)
        for chunk in (1, 7, 50):
            parts = np.concatenate(list(iter_swap_masks((4, 6), 50, scheme, 3, chunk=chunk)))
            np.testing.assert_array_equal(parts, whole)


def _tiny(seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    Y = rng.normal(size=(3, 2))
    return Y + rng.normal(size=Y.shape) * 0.3, rng.normal(size=Y.shape), Y


def test_pairwise_accuracy_test_exact_enumeration() -> None:
    XA, XB, Y = _tiny(1)
    masks = np.array(list(itertools.product([False, True], repeat=6))).reshape(64, 3, 2)
    res = pairwise_accuracy_test(XA, XB, Y, masks=masks)
    ok = np.ones(Y.shape, bool)
    za, zb = _z(XA, ok), _z(XB, ok)
    obs = pairwise_accuracy(XA, Y).statistic - pairwise_accuracy(XB, Y).statistic
    draws = []
    for m in masks:                                  # brute force, one swap at a time
        pa = pairwise_accuracy(np.where(m, zb, za), Y).statistic
        pb = pairwise_accuracy(np.where(m, za, zb), Y).statistic
        draws.append((pa, pb))
    draws = np.array(draws)
    np.testing.assert_allclose(res.draws_a, draws[:, 0])
    np.testing.assert_allclose(res.draws_b, draws[:, 1])
    hits = np.sum(draws[:, 0] - draws[:, 1] >= obs - 1e-12)
    assert res.statistic == pytest.approx(obs)
    assert res.pvalue == pytest.approx((1 + hits) / (1 + 64))
    assert res.permutations == 64 and res.seed is None and res.name == "pairwise_accuracy"


def test_pairwise_accuracy_test_draws_seeded_and_detects_better_metric() -> None:
    rng = np.random.default_rng(2)
    S, n = 12, 40
    quality = np.linspace(0, 3, S)[:, None]
    Y = quality + rng.normal(size=(S, n))
    good = Y + rng.normal(size=(S, n)) * 0.5
    bad = rng.normal(size=(S, n)) + 0.2 * quality
    good[0, :3] = np.nan
    r1 = pairwise_accuracy_test(good, bad, Y, n_resamples=300, seed=7)
    r2 = pairwise_accuracy_test(good, bad, Y, n_resamples=300, seed=7)
    np.testing.assert_array_equal(r1.draws_a, r2.draws_a)
    assert r1.pvalue == r2.pvalue and r1.draws_a.shape == (300,)
    assert r1.statistic > 0 and r1.pvalue < 0.01
    assert r1.statistic_a == pairwise_accuracy(np.where(np.isfinite(bad), good, np.nan),
                                               Y).statistic
    # the draws are the accuracies of the swapped, z-scored matrices
    ok = np.isfinite(good) & np.isfinite(bad) & np.isfinite(Y)
    masks = swap_masks((S, n), 300, "both", 7)
    za, zb = _z(good, ok), _z(bad, ok)
    for k in (0, 1, 150, 299):
        assert r1.draws_a[k] == pairwise_accuracy(np.where(masks[k], zb, za), Y).statistic
        assert r1.draws_b[k] == pairwise_accuracy(np.where(masks[k], za, zb), Y).statistic
    # systems/items order: same statistic; the test of a metric against itself is never
    # significant
    ps = rng.permutation(S)
    assert pairwise_accuracy_test(good[ps], bad[ps], Y[ps], n_resamples=10).statistic_a == \
        r1.statistic_a
    assert pairwise_accuracy_test(good, good, Y, n_resamples=50).pvalue == 1.0
    d = r1.to_dict()
    assert "draws_a" not in d and d["pvalue"] == r1.pvalue
    with pytest.raises(InputError):
        pairwise_accuracy_test(good, bad[:, :5], Y)
    with pytest.raises(InputError):
        pairwise_accuracy_test(good, bad, Y, n_resamples=0)


@pytest.mark.parametrize("integer", [False, True])
def test_soft_pairwise_accuracy_test_draws_equal_direct_recomputation(integer: bool) -> None:
    rng = np.random.default_rng(4)
    S, n = 5, 12
    Y = np.linspace(0, 1, S)[:, None] + rng.normal(size=(S, n))
    A = Y + rng.normal(size=(S, n)) * 0.5
    B = rng.normal(size=(S, n))
    if integer:                                    # many exact ties in deltas
        Y, A, B = np.round(Y), np.round(A), np.round(B)
        A[2] = A[1]
    Y[1, 2] = np.nan
    B[3, 4] = np.nan                               # scattered missing cells
    res = soft_pairwise_accuracy_test(A, B, Y, n_resamples=40, seed=2, spa_permutations=300,
                                      spa_seed=9)
    ok = np.isfinite(A) & np.isfinite(B) & np.isfinite(Y)
    Ao, Bo = np.where(ok, A, np.nan), np.where(ok, B, np.nan)
    kw = {"n_resamples": 300, "seed": 9}
    assert res.statistic_a == soft_pairwise_accuracy(Ao, Y, **kw).statistic
    assert res.statistic_b == soft_pairwise_accuracy(Bo, Y, **kw).statistic
    masks = swap_masks((S, n), 40, "both", 2)
    za, zb = _z(A, ok), _z(B, ok)
    for k in (0, 17, 39):
        pa = soft_pairwise_accuracy(np.where(masks[k], zb, za), Y, **kw).statistic
        pb = soft_pairwise_accuracy(np.where(masks[k], za, zb), Y, **kw).statistic
        assert res.draws_a[k] == pytest.approx(pa, abs=1e-12)
        assert res.draws_b[k] == pytest.approx(pb, abs=1e-12)
    d = res.draws_a - res.draws_b
    assert res.pvalue == pytest.approx((1 + np.sum(d >= res.statistic - 1e-12)) / 41)
    again = soft_pairwise_accuracy_test(A, B, Y, n_resamples=40, seed=2,
                                        spa_permutations=300, spa_seed=9)
    np.testing.assert_array_equal(again.draws_b, res.draws_b)


def test_soft_pairwise_accuracy_test_detects_better_metric() -> None:
    rng = np.random.default_rng(8)
    S, n = 8, 60
    Y = np.linspace(0, 0.6, S)[:, None] + rng.normal(size=(S, n))
    good = Y + rng.normal(size=(S, n)) * 0.3
    bad = rng.normal(size=(S, n))
    res = soft_pairwise_accuracy_test(good, bad, Y, n_resamples=200, seed=1,
                                      spa_permutations=200)
    assert res.statistic > 0 and res.pvalue < 0.05
    assert res.name == "soft_pairwise_accuracy" and res.draws_a.shape == (200,)


def test_correlation_permutation_test_exposes_its_draws() -> None:
    rng = np.random.default_rng(3)
    Y = rng.normal(size=(6, 8))
    A = Y + rng.normal(size=Y.shape)
    B = Y + rng.normal(size=Y.shape) * 2
    for level, coef in (("segment", "pearson"), ("system", "pearson"), ("item", "kendall")):
        res = permutation_test(A, B, Y, level, coef, n_resamples=30, seed=5)
        masks = swap_masks(Y.shape, 30, "both", 5)
        _, _, deltas = _permutation_deltas(A, B, Y, level, coef, masks)
        np.testing.assert_allclose(res.draws_a - res.draws_b, deltas, atol=1e-12)
        ok = np.ones(Y.shape, bool)
        za, zb = _z(A, ok), _z(B, ok)
        want = float(level_statistic(np.where(masks[4], zb, za), Y, level, coef))
        assert res.draws_a[4] == pytest.approx(want, abs=1e-10)
        assert (res.statistic_a, res.statistic_b) == (res.r_a, res.r_b)
        assert res.draws_b.shape == (30,) and "draws_a" not in res.to_dict()


@pytest.mark.parametrize("missing", [0.0, 0.05, 0.3])
def test_sign_flip_plans_agree(missing: float) -> None:
    """Both ways of computing the permuted deltas (per missingness pattern, per pair) agree."""
    from nlgeval.correlation._pairwise_kernels import (
        _prepare_masks,
        _sign_flip_pvalues,
        _SignFlipDesign,
    )

    rng = np.random.default_rng(6)
    S, n = 6, 25
    Y = np.round(rng.normal(size=(S, n)), 1)
    Y[rng.random((S, n)) < missing] = np.nan
    Y[:, 4] = np.nan
    ok = np.isfinite(Y)
    design = _SignFlipDesign.build(ok)
    M = sign_flip_masks(int(design.keep.sum()), 400, 2)
    Z = np.where(ok, Y, 0.0)[:, design.keep]
    Z = np.stack([Z, Z[::-1], 2 * Z])          # a stack of score matrices, as the test uses
    pat = _sign_flip_pvalues(Z, design, _prepare_masks(design, M, "patterns"))
    pair = _sign_flip_pvalues(Z, design, _prepare_masks(design, M, "pairs"))
    for a, b in zip(pat, pair, strict=True):
        np.testing.assert_array_equal(a, b)
    ref = _brute_sign_flip_p(Y, ok, M[:50])
    few = _sign_flip_pvalues(Z[:1], design, _prepare_masks(design, M[:50]))
    ii, jj = np.triu_indices(S, 1)
    for k, (i, j) in enumerate(zip(ii, jj, strict=True)):
        if (i, j) in ref:
            assert few[0][0, k] == float(ref[(i, j)][0])
            assert few[1][0, k] == float(ref[(i, j)][1])


def test_results_follow_the_result_protocol() -> None:
    """Both results are StatResults with their documented JSON keys."""
    X = np.array([[0.9, 0.8, 0.7, 0.6], [0.5, 0.6, 0.4, 0.5], [0.2, 0.3, 0.1, 0.2]])
    Y = np.array([[5, 4, 4, 5], [3, 4, 3, 3], [4, 2, 1, 2]], dtype=float)
    pa = pairwise_accuracy(X, Y)
    stat, p = pa
    assert stat == pa.statistic == 1.0 and math.isnan(p)
    assert set(pa.to_dict()) == {"statistic", "pvalue", "n_pairs", "n_agree", "n_systems",
                                 "n_tied_human", "n_tied_metric", "note"}
    spa = soft_pairwise_accuracy(X, Y, n_resamples=50, seed=0)
    d = spa.to_dict()
    assert set(d) == {"statistic", "pvalue", "n_pairs", "n_systems", "n_segments",
                      "permutations", "seed", "orientation", "pvalues_human", "pvalues_metric",
                      "note"}
    assert np.array_equal(np.array(d["pvalues_human"], dtype=float), spa.pvalues_human,
                          equal_nan=True)
    assert spa.to_frame().shape[0] == 1 and "pvalues_human" not in spa.to_frame()
