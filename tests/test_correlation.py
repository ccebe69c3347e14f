"""The correlation layer against independent references: scipy, closed forms, exact enumeration,
a published cocor output, and Monte Carlo calibration."""

from __future__ import annotations

import itertools
import math
import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from nlgeval.correlation import (
    DegenerateInputWarning,
    batch_correlation,
    bootstrap_correlation,
    bootstrap_distribution,
    comparison_matrix,
    correlation,
    criterion_correlations,
    fisher_z_interval,
    item_permutation_pvalue,
    level_correlation,
    level_statistic,
    percentile_interval,
    permutation_test,
    rater_agreement_bound,
    resample_indices,
    score_matrices,
    significance_clusters,
    williams_from_scores,
    williams_test,
)
from nlgeval.correlation.kendall import DIRECT_MAX
from nlgeval.errors import InputError


def _pair(n: int = 40, seed: int = 0, ties: bool = False) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    x = rng.normal(size=n)
    y = 0.6 * x + rng.normal(size=n)
    if ties:
        x, y = np.round(x), np.round(y * 2) / 2
    return x, y


# ----------------------------------------------------------------------------- coefficients
@pytest.mark.parametrize("ties", [False, True])
def test_coefficients_match_scipy(ties: bool) -> None:
    x, y = _pair(ties=ties)
    ref = {
        "pearson": stats.pearsonr(x, y),
        "spearman": stats.spearmanr(x, y),
        "kendall": stats.kendalltau(x, y, variant="b"),
        "kendall_c": stats.kendalltau(x, y, variant="c"),
    }
    for coef, r in ref.items():
        res = correlation(x, y, coef)
        assert res.statistic == pytest.approx(float(r.statistic), abs=1e-12)
        assert res.pvalue == pytest.approx(float(r.pvalue), rel=1e-10)
        assert res.n == len(x)


def test_missing_pairs_are_dropped_and_counted() -> None:
    x, y = _pair(30)
    x[3] = np.nan
    y[7] = np.nan
    res = correlation(x, y)
    keep = np.isfinite(x) & np.isfinite(y)
    assert res.n == 28 and res.n_missing == 2
    assert res.statistic == pytest.approx(stats.pearsonr(x[keep], y[keep]).statistic)


def test_degenerate_inputs_give_nan_and_a_reason() -> None:
    with pytest.warns(DegenerateInputWarning, match="only 2 complete pair"):
        res = correlation([1.0, 2.0, np.nan], [1.0, 3.0, 2.0])
    assert math.isnan(res.statistic) and math.isnan(res.pvalue) and res.n == 2
    with pytest.warns(DegenerateInputWarning, match="constant"):
        res = correlation([1.0, 1.0, 1.0, 1.0], [1.0, 2.0, 3.0, 4.0], "spearman")
    assert math.isnan(res.statistic)
    with pytest.raises(InputError, match="same length"):
        correlation([1, 2, 3], [1, 2])
    with pytest.raises(InputError, match="unknown correlation coefficient"):
        correlation([1, 2, 3], [1, 2, 3], "pearsonn")


def test_fisher_z_interval_closed_form_and_scipy() -> None:
    r, n = 0.6, 30
    z = math.atanh(r)
    se = 1 / math.sqrt(n - 3)
    lo, hi = math.tanh(z - 1.959963984540054 * se), math.tanh(z + 1.959963984540054 * se)
    ci = fisher_z_interval(r, n)
    assert ci.low == pytest.approx(lo, abs=1e-12) and ci.high == pytest.approx(hi, abs=1e-12)
    # scipy >= 1.9 computes the same Fisher interval for pearsonr
    x, y = _pair(50, seed=3)
    res = correlation(x, y, confidence_level=0.9)
    ref = stats.pearsonr(x, y).confidence_interval(confidence_level=0.9)
    assert res.confidence_interval().low == pytest.approx(ref.low, abs=1e-10)
    assert res.confidence_interval().high == pytest.approx(ref.high, abs=1e-10)
    assert all(math.isnan(v) for v in fisher_z_interval(0.5, 3))


@pytest.mark.parametrize("coef", ["pearson", "spearman", "kendall", "kendall_c"])
@pytest.mark.parametrize("n", [12, DIRECT_MAX + 110])  # both count paths
def test_batch_correlation_equals_scipy_per_row(coef: str, n: int) -> None:
    rng = np.random.default_rng(5)
    x = np.round(rng.normal(size=(25, n)) * 2)  # ties
    y = x + rng.normal(size=(25, n)) * 3
    y = np.round(y)
    x[0, :3] = np.nan
    y[1, 5] = np.nan
    x[2] = 1.0  # constant row -> NaN
    got = batch_correlation(x, y, coef)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DegenerateInputWarning)
        want = np.array([correlation(x[i], y[i], coef).statistic for i in range(25)])
    assert np.isnan(got[2]) and np.isnan(want[2])
    np.testing.assert_allclose(got, want, atol=1e-12)
    # the independent reference: scipy on each row's complete pairs (correlation() now uses
    # the same kernel as batch_correlation, so it alone would compare the kernel with itself)
    ref = {"pearson": lambda a, b: stats.pearsonr(a, b).statistic,
           "spearman": lambda a, b: stats.spearmanr(a, b).statistic,
           "kendall": lambda a, b: stats.kendalltau(a, b, variant="b").statistic,
           "kendall_c": lambda a, b: stats.kendalltau(a, b, variant="c").statistic}[coef]
    for i in range(25):
        ok = np.isfinite(x[i]) & np.isfinite(y[i])
        if i == 2:
            continue
        assert got[i] == pytest.approx(ref(x[i, ok], y[i, ok]), abs=1e-12), i


# ----------------------------------------------------------------------------- levels
def _matrices(S: int = 7, n_items: int = 15, seed: int = 1) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    q = rng.normal(size=(S, 1)) + rng.normal(size=(S, n_items))
    X = q + rng.normal(size=(S, n_items)) * 0.8
    Y = q + rng.normal(size=(S, n_items)) * 0.8
    X[0, 2] = np.nan  # unscored
    Y[3, 4] = np.nan  # unrated
    return X, Y


def test_levels_against_pandas_and_scipy() -> None:
    X, Y = _matrices()
    S, n_items = X.shape
    df = pd.DataFrame({"system": np.repeat(np.arange(S), n_items),
                       "item": np.tile(np.arange(n_items), S),
                       "x": X.ravel(), "y": Y.ravel()}).dropna()
    sysm = df.groupby("system")[["x", "y"]].mean()
    for coef, fn in (("pearson", stats.pearsonr), ("spearman", stats.spearmanr),
                     ("kendall", stats.kendalltau)):
        lc = level_correlation(X, Y, "system", coef)
        ref = fn(sysm["x"], sysm["y"])
        assert lc.statistic == pytest.approx(float(ref.statistic), abs=1e-12)
        assert lc.pvalue == pytest.approx(float(ref.pvalue), rel=1e-9)
        assert lc.n == S
        seg = level_correlation(X, Y, "segment", coef)
        assert seg.statistic == pytest.approx(float(fn(df["x"], df["y"]).statistic), abs=1e-12)
        assert seg.n == len(df) and seg.n_missing == 2
        per_item = [fn(g["x"], g["y"]).statistic for _, g in df.groupby("item")]
        it = level_correlation(X, Y, "item", coef)
        assert it.statistic == pytest.approx(float(np.mean(per_item)), abs=1e-12)
        assert it.n == n_items and 0 < it.pvalue <= 1 and "permutations" in it.note
        assert math.isnan(level_correlation(X, Y, "item", coef, n_resamples=0).pvalue)
        for level, lcr in (("system", lc), ("segment", seg), ("item", it)):
            assert float(level_statistic(X, Y, level, coef)) == pytest.approx(lcr.statistic)


def test_score_matrices_reports_missing_and_rejects_duplicates() -> None:
    metric = pd.DataFrame({"system": ["a", "a", "b", "b"], "item": ["1", "2", "1", "2"],
                           "score": [1.0, 2.0, 3.0, np.nan]})
    human = pd.DataFrame({"system": ["a", "b", "b"], "item": ["1", "1", "2"],
                          "score": [5.0, 6.0, 7.0]})
    m = score_matrices(metric, human)
    assert m.missing["complete"] == 2
    assert m.missing["unrated"] == 1      # a/2 has a metric score but no rating
    assert m.missing["unscored"] == 1     # b/2 is rated but its metric score is NaN
    assert m.missing["nan_metric"] == 1
    with pytest.raises(InputError, match="more than one row"):
        score_matrices(pd.concat([metric, metric.iloc[:1]]), human)


# ----------------------------------------------------------------------------- bootstrap
def test_bootstrap_indices_are_seeded_and_follow_the_scheme() -> None:
    a = resample_indices(5, 8, 100, "both", seed=3)
    b = resample_indices(5, 8, 100, "both", seed=3)
    np.testing.assert_array_equal(a[0], b[0])
    np.testing.assert_array_equal(a[1], b[1])
    s, i = resample_indices(5, 8, 10, "items", seed=3)
    assert (s == np.arange(5)).all() and not (i == np.arange(8)).all()
    s, i = resample_indices(5, 8, 10, "systems", seed=3)
    assert (i == np.arange(8)).all() and not (s == np.arange(5)).all()
    with pytest.raises(InputError):
        resample_indices(5, 8, 10, "outputs", seed=3)


@pytest.mark.parametrize("level", ["system", "segment", "item"])
@pytest.mark.parametrize("coef", ["pearson", "spearman", "kendall"])
def test_vectorised_bootstrap_equals_loop_over_resamples(level: str, coef: str) -> None:
    X, Y = _matrices()
    sys_idx, item_idx = resample_indices(*X.shape, 60, "both", seed=11)
    got = bootstrap_distribution(X, Y, level, coef, sys_idx, item_idx)
    want = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DegenerateInputWarning)
        for b in range(60):
            Xb = X[sys_idx[b]][:, item_idx[b]]
            Yb = Y[sys_idx[b]][:, item_idx[b]]
            want.append(level_correlation(Xb, Yb, level, coef).statistic)
    np.testing.assert_allclose(got, np.array(want), atol=1e-12)


def test_bootstrap_against_exact_enumeration_of_all_resamples() -> None:
    """Tiny case: 2 systems x 5 items, resample items: all 5^5 = 3125 resamples enumerated."""
    X = np.array([[1.0, 2.0, 4.0, 3.0, 7.0], [2.0, 1.0, 5.0, 6.0, 4.0]])
    Y = np.array([[1.5, 2.5, 3.0, 4.5, 6.0], [1.0, 2.0, 6.5, 5.0, 5.5]])
    tuples = np.array(list(itertools.product(range(5), repeat=5)))
    exact = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for t in tuples:  # independent brute force: scipy on each enumerated resample
            xs, ys = X[:, t].ravel(), Y[:, t].ravel()
            exact.append(stats.pearsonr(xs, ys).statistic if np.ptp(xs) and np.ptp(ys)
                         else np.nan)
    exact = np.array(exact)
    sys_idx = np.broadcast_to(np.arange(2), (len(tuples), 2))
    ours = bootstrap_distribution(X, Y, "segment", "pearson", sys_idx, tuples)
    np.testing.assert_allclose(ours, exact, atol=1e-12, equal_nan=True)
    exact_ci = percentile_interval(exact, 0.9)
    mc = bootstrap_correlation(X, Y, "segment", "pearson", n_resamples=40_000, resample="items",
                               seed=1, confidence_level=0.9)
    assert mc.confidence_interval().low == pytest.approx(exact_ci.low, abs=0.01)
    assert mc.confidence_interval().high == pytest.approx(exact_ci.high, abs=0.01)
    assert mc.statistic == pytest.approx(stats.pearsonr(X.ravel(), Y.ravel()).statistic)


def test_bootstrap_warns_when_many_resamples_are_undefined() -> None:
    X = np.array([[1.0, 2.0], [2.0, 1.0], [3.0, 3.0]])
    Y = np.array([[1.0, 2.0], [2.0, 2.0], [3.0, 4.0]])
    with pytest.warns(DegenerateInputWarning, match="undefined on"):
        res = bootstrap_correlation(X, Y, "system", n_resamples=200, resample="systems", seed=0)
    assert res.n_undefined > 0 and np.isfinite(res.confidence_interval().low)


# ----------------------------------------------------------------------------- Williams
def test_williams_matches_published_cocor_output() -> None:
    # cocor 1.1-3 (R 4.0.0), cocor.dep.groups.overlap(test = "williams1959"), printed in a
    # public analysis notebook: r.jk = 0.5447, r.jh = 0.8, r.kh = 0.0729, n = 70
    # -> "t = -2.8114, df = 67, p-value = 0.0065" (inputs printed rounded to 4 decimals).
    res = williams_test(0.5447, 0.8, 0.0729, 70)
    assert res.df == 67
    assert res.statistic == pytest.approx(-2.8114, abs=2e-3)
    assert res.pvalue == pytest.approx(0.0065, abs=1e-4)


def test_williams_independent_rederivation_and_properties() -> None:
    # Steiger (1980, eq. 10) written in terms of the determinant and rbar, computed by hand
    r12, r13, r23, n = 0.5, 0.4, 0.1, 103
    det = 1 - 0.25 - 0.16 - 0.01 + 2 * 0.5 * 0.4 * 0.1
    rbar = 0.45
    t = 0.1 * math.sqrt(102 * 1.1 / (2 * 102 / 100 * det + rbar**2 * 0.9**3))
    res = williams_test(r12, r13, r23, n)
    assert res.statistic == pytest.approx(t, rel=1e-12)
    assert res.pvalue == pytest.approx(2 * stats.t.sf(t, 100), rel=1e-12)
    assert williams_test(r13, r12, r23, n).statistic == pytest.approx(-t)
    g = williams_test(r12, r13, r23, n, "greater")
    assert g.pvalue == pytest.approx(res.pvalue / 2)
    assert math.isnan(williams_test(0.5, np.nan, 0.1, 50).statistic)
    assert math.isnan(williams_test(0.5, 0.4, 0.1, 3).pvalue)


def test_williams_type_one_error_is_nominal() -> None:
    """Monte Carlo: equal population correlations -> about 5 % rejections at alpha 0.05."""
    rng = np.random.default_rng(2024)
    cov = np.array([[1.0, 0.5, 0.5], [0.5, 1.0, 0.4], [0.5, 0.4, 1.0]])
    n, sims = 40, 3000
    data = rng.multivariate_normal(np.zeros(3), cov, size=(sims, n))
    r = np.array([np.corrcoef(d.T) for d in data])
    p = np.array([williams_test(r[k, 0, 1], r[k, 0, 2], r[k, 1, 2], n).pvalue
                  for k in range(sims)])
    rate = float((p < 0.05).mean())
    assert 0.04 <= rate <= 0.06  # binomial SE 0.004


def test_williams_from_scores_uses_common_units() -> None:
    X, Y = _matrices(S=10, n_items=12, seed=4)
    Z = Y + np.random.default_rng(9).normal(size=Y.shape) * 3
    res = williams_from_scores(X, Z, Y, "segment", "pearson", "two-sided")
    ok = np.isfinite(X) & np.isfinite(Z) & np.isfinite(Y)
    ref = williams_test(stats.pearsonr(Y[ok], X[ok]).statistic,
                        stats.pearsonr(Y[ok], Z[ok]).statistic,
                        stats.pearsonr(X[ok], Z[ok]).statistic, int(ok.sum()))
    assert res.statistic == pytest.approx(ref.statistic) and res.n == int(ok.sum())
    with pytest.raises(InputError):
        williams_from_scores(X, Z, Y, "item")


# ----------------------------------------------------------------------------- permutation
def test_permutation_test_exact_enumeration() -> None:
    rng = np.random.default_rng(0)
    A = rng.normal(size=(2, 4))
    B = rng.normal(size=(2, 4))
    H = A + 0.3 * rng.normal(size=(2, 4))
    masks = np.array([np.array(bits, bool).reshape(2, 4)
                      for bits in itertools.product([0, 1], repeat=8)])
    res = permutation_test(A, B, H, "segment", masks=masks)

    def z(M: np.ndarray) -> np.ndarray:
        return (M - M.mean()) / M.std()

    za, zb = z(A), z(B)
    obs = stats.pearsonr(za.ravel(), H.ravel())[0] - stats.pearsonr(zb.ravel(), H.ravel())[0]
    deltas = []
    for m in masks:  # brute force
        pa, pb = np.where(m, zb, za), np.where(m, za, zb)
        deltas.append(stats.pearsonr(pa.ravel(), H.ravel())[0]
                      - stats.pearsonr(pb.ravel(), H.ravel())[0])
    deltas = np.array(deltas)
    p_exact = (1 + np.sum(np.abs(deltas) >= abs(obs) - 1e-12)) / (1 + len(deltas))
    assert res.statistic == pytest.approx(obs)
    assert res.pvalue == pytest.approx(p_exact)
    mc = permutation_test(A, B, H, "segment", n_resamples=20_000, seed=5)
    assert mc.pvalue == pytest.approx(p_exact, abs=0.015)


def test_permutation_test_detects_a_better_metric_and_is_seeded() -> None:
    X, Y = _matrices(S=8, n_items=20, seed=7)
    noisy = X + np.random.default_rng(1).normal(size=X.shape) * 4
    r1 = permutation_test(X, noisy, Y, "system", n_resamples=500, seed=3, alternative="greater")
    r2 = permutation_test(X, noisy, Y, "system", n_resamples=500, seed=3, alternative="greater")
    assert r1.pvalue == r2.pvalue
    seg = permutation_test(X, noisy, Y, "segment", n_resamples=500, seed=3)
    assert seg.pvalue < 0.01 and seg.statistic > 0
    assert permutation_test(X, X, Y, "segment", n_resamples=200, seed=1).pvalue == 1.0


def test_comparison_matrix_and_clusters() -> None:
    X, Y = _matrices(S=8, n_items=30, seed=2)
    rng = np.random.default_rng(0)
    mets = {"good": X, "good2": X + rng.normal(size=X.shape) * 0.05,
            "bad": X + rng.normal(size=X.shape) * 5}
    pw = comparison_matrix(mets, Y, "segment", "pearson", method="williams")
    assert len(pw) == 6 and set(pw["method"]) == {"williams"}
    rs = {m: float(pw.loc[pw.metric_a == m, "r_a"].iloc[0]) for m in mets}
    cl = significance_clusters(pw, rs).set_index("metric")["cluster"]
    assert cl["good"] == cl["good2"] == 1 and cl["bad"] == 2
    pk = comparison_matrix(mets, Y, "item", "kendall", n_resamples=100, seed=4)
    assert set(pk["method"]) == {"permutation-both"}
    # both directions of a pair come from one set of permutations; each equals the direct test
    for a, b in (("good", "bad"), ("bad", "good")):
        direct = permutation_test(mets[a], mets[b], Y, "item", "kendall", n_resamples=100,
                                  seed=4, alternative="greater")
        row = pk[(pk.metric_a == a) & (pk.metric_b == b)].iloc[0]
        assert row.pvalue == pytest.approx(direct.pvalue)
        assert row.statistic == pytest.approx(direct.statistic)


def test_clusters_follow_the_documented_rule() -> None:
    pw = pd.DataFrame([
        ("a", "b", 0.2), ("a", "c", 0.01), ("b", "c", 0.2), ("b", "a", 0.9), ("c", "a", 0.99),
        ("c", "b", 0.8), ("a", "d", 0.001), ("b", "d", 0.001), ("c", "d", 0.3),
        ("d", "a", 1), ("d", "b", 1), ("d", "c", 0.7)],
        columns=["metric_a", "metric_b", "pvalue"])
    cl = significance_clusters(pw, {"a": 0.9, "b": 0.8, "c": 0.7, "d": 0.6, "e": np.nan})
    got = dict(zip(cl["metric"], cl["cluster"], strict=True))
    # c is significantly worse than a (in cluster 1) -> new cluster; d is not worse than c
    assert got["a"] == got["b"] == 1 and got["c"] == got["d"] == 2 and math.isnan(got["e"])


# ----------------------------------------------------------------------------- human
def test_criterion_correlations_and_rater_agreement() -> None:
    rng = np.random.default_rng(3)
    rows = []
    for s in range(5):
        for i in range(12):
            q = s + rng.normal()
            for r in range(3):
                rows.append((f"r{(s + i + r) % 4}", f"i{i}", f"s{s}", "A",
                             q + rng.normal()))
                rows.append((f"r{(s + i + r) % 4}", f"i{i}", f"s{s}", "B",
                             q + rng.normal() * 2))
    ratings = pd.DataFrame(rows, columns=["rater", "item", "system", "criterion", "score"])
    human = ratings.groupby(["system", "item", "criterion"], as_index=False)["score"].mean()
    cc = criterion_correlations(human, levels=["segment", "system"])
    wide = human.pivot_table(index=["system", "item"], columns="criterion", values="score")
    seg = cc[cc.level == "segment"].iloc[0]
    assert seg["r"] == pytest.approx(stats.pearsonr(wide["A"], wide["B"]).statistic)
    sysm = wide.groupby(level="system").mean()
    assert cc[cc.level == "system"].iloc[0]["r"] == pytest.approx(
        stats.pearsonr(sysm["A"], sysm["B"]).statistic)
    ra = rater_agreement_bound(ratings, "A")
    sub = ratings[ratings.criterion == "A"]
    xs, ys = [], []
    for _, g in sub.groupby(["system", "item"]):  # brute-force leave-one-rater-out
        for k in range(len(g)):
            xs.append(g["score"].iloc[k])
            ys.append(g["score"].drop(g.index[k]).mean())
    assert ra.n_pairs == len(xs)
    assert ra.pooled_r == pytest.approx(stats.pearsonr(xs, ys).statistic)
    assert ra.n_raters == 4 and 0 < ra.mean_rater_r < 1


@pytest.mark.parametrize("resample", ["items", "systems", "both"])
def test_bootstrap_with_ties_equals_loop(resample: str) -> None:
    """Tied scores (rounded) exercise the weighted-rank Spearman and the Kendall paths."""
    X, Y = _matrices(S=6, n_items=10, seed=8)
    X, Y = np.round(X), np.round(Y * 2) / 2
    sys_idx, item_idx = resample_indices(*X.shape, 40, resample, seed=2)
    for level in ("segment", "system", "item"):
        for coef in ("spearman", "kendall", "pearson"):
            got = bootstrap_distribution(X, Y, level, coef, sys_idx, item_idx)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", DegenerateInputWarning)
                want = [level_correlation(X[sys_idx[b]][:, item_idx[b]],
                                          Y[sys_idx[b]][:, item_idx[b]], level, coef).statistic
                        for b in range(40)]
            np.testing.assert_allclose(got, want, atol=1e-12, equal_nan=True,
                                       err_msg=f"{level} {coef}")


@pytest.mark.parametrize("scheme", ["both", "systems", "items"])
def test_pearson_permutation_shortcut_equals_recomputing(scheme: str) -> None:
    from nlgeval.correlation.permutation.compare import _permutation_deltas, swap_masks

    X, Y = _matrices(S=6, n_items=9, seed=12)
    Z = X + np.random.default_rng(3).normal(size=X.shape) * 2
    Z[2, 2] = np.nan
    masks = swap_masks(X.shape, 64, scheme, seed=1)
    for level in ("segment", "system", "item"):
        fast = _permutation_deltas(X, Z, Y, level, "pearson", masks, fast=True)
        slow = _permutation_deltas(X, Z, Y, level, "pearson", masks, fast=False)
        assert fast[:2] == pytest.approx(slow[:2])
        np.testing.assert_allclose(fast[2], slow[2], atol=1e-10, err_msg=level)


def _exact_item_permutation_p(X: np.ndarray, Y: np.ndarray, coef: str) -> float:
    """Every joint within-item permutation of the complete cells (itertools), two-sided."""
    ok = np.isfinite(X) & np.isfinite(Y)
    obs = float(level_statistic(X, Y, "item", coef))
    cells = [np.flatnonzero(ok[:, i]) for i in range(X.shape[1])]
    hits = total = 0
    for perms in itertools.product(*(itertools.permutations(c) for c in cells)):
        Xp = X.copy()
        for i, (c, p) in enumerate(zip(cells, perms, strict=True)):
            Xp[c, i] = X[list(p), i]
        r = float(level_statistic(Xp, Y, "item", coef))
        hits += abs(r) >= abs(obs) - 1e-12
        total += 1
    return hits / total


@pytest.mark.parametrize("coef", ["pearson", "spearman", "kendall"])
def test_item_permutation_pvalue_matches_exact_enumeration(coef: str) -> None:
    # 4 systems x 3 items, one cell missing: 4! * 4! * 3! = 3,456 joint permutations
    rng = np.random.default_rng(5)
    q = rng.normal(size=(4, 1))
    X = q + rng.normal(size=(4, 3))
    Y = q + rng.normal(size=(4, 3))
    Y[2, 1] = np.nan
    exact = _exact_item_permutation_p(X, Y, coef)
    B = 20_000
    p, n = item_permutation_pvalue(X, Y, coef, n_resamples=B, seed=3)
    assert n == B
    se = math.sqrt(exact * (1 - exact) / B)
    assert abs(p - exact) <= 4 * se + 1 / B
    assert 0.02 < exact < 0.98  # a case where the test has something to find


def test_item_permutation_pvalue_seeded_and_degenerate() -> None:
    X, Y = _matrices(S=5, n_items=6, seed=4)
    a = item_permutation_pvalue(X, Y, n_resamples=300, seed=1)
    assert a == item_permutation_pvalue(X, Y, n_resamples=300, seed=1)
    # a perfect within-item association: no permutation beats it, p = 1 / (B + 1) at least
    p, _ = item_permutation_pvalue(Y * 2 + 1, Y, n_resamples=999, seed=2)
    assert p == pytest.approx(1 / 1000, abs=0.01)
    const = np.ones_like(X)
    assert math.isnan(item_permutation_pvalue(const, Y, n_resamples=10)[0])
    with pytest.raises(InputError):
        item_permutation_pvalue(X, Y, n_resamples=0)


def test_resample_indices_are_remembered_but_returned_as_copies() -> None:
    """Repeated draws come from a cache: same numbers as drawing afresh, and writing to a
    returned matrix does not leak into the next call."""
    a = resample_indices(5, 8, 30, "both", seed=21)
    a[0][:] = -1
    a[1][:] = -1
    b = resample_indices(5, 8, 30, "both", seed=21)
    rng = np.random.default_rng(21)  # the documented order: systems, then items
    np.testing.assert_array_equal(b[0], rng.integers(0, 5, size=(30, 5)))
    np.testing.assert_array_equal(b[1], rng.integers(0, 8, size=(30, 8)))
    assert b[0].flags.writeable and b[1].flags.writeable


def test_system_rank_bootstrap_remembers_means_per_matrix() -> None:
    """The same metric against two criteria with different missing cells, twice each (the
    second time from the remembered means): bitwise equal to the (B, S, I) stack."""
    X, Y = _matrices(S=6, n_items=12, seed=30)
    Y2 = Y.copy()
    Y2[1, 3] = Y2[4, 0] = np.nan  # another common mask for the same X
    si, ii = resample_indices(*X.shape, 50, "both", seed=4)

    def stack(M: np.ndarray) -> np.ndarray:
        return M[si[:, :, None], ii[:, None, :]]

    for H in (Y, Y2, Y, Y2):
        for coef in ("spearman", "kendall"):
            got = bootstrap_distribution(X, H, "system", coef, si, ii)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", DegenerateInputWarning)
                want = level_statistic(stack(X), stack(H), "system", coef)
            np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("level", ["segment", "system", "item"])
def test_permutation_pairs_batched_equal_one_pair_at_a_time(level: str, monkeypatch) -> None:
    from nlgeval.correlation.permutation import compare

    X, Y = _matrices(S=6, n_items=9, seed=12)
    rng = np.random.default_rng(5)
    mets = {f"m{k}": X + rng.normal(size=X.shape) * k for k in range(4)}
    mets["m2"][1, 4] = np.nan
    masks = compare.swap_masks(X.shape, 64, "both", seed=1).astype(float)
    for cells in (1, 6 * X.size, 8_000_000):  # groups of 1, 2 and all 6 pairs
        monkeypatch.setattr(compare, "_PAIR_GROUP_CELLS", cells)
        got = compare._all_pair_deltas(mets, Y, level, "pearson", masks)
        assert len(got) == 6
        for (a, b), (r_a, r_b, deltas) in got.items():
            want = compare._permutation_deltas(mets[a], mets[b], Y, level, "pearson", masks)
            assert (r_a, r_b) == want[:2]
            np.testing.assert_array_equal(deltas, want[2])
