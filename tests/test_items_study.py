"""The fast number-of-items study: samplers, stopping rules, the two-group bootstrap kernel and
the study driver. References: scipy.stats.binom / multinomial pmfs (goodness of fit), exact
enumeration of the bootstrap null for tiny data, exact trinomial decision probabilities."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from nlgeval.errors import InputError
from nlgeval.items import _kernels as K
from nlgeval.items.profiles import (
    distribution_from_counts,
    distributions_from_ratings,
    paper_profiles,
    profile_distribution,
)
from nlgeval.items.stopping import certified_schedule
from nlgeval.items.study import min_items, run_study, task_stream

LOGF = K.log_factorial_table(3000)
RECIP = K.reciprocal_table(3000)


def _gof_pvalue(draws: np.ndarray, pmf: np.ndarray) -> float:
    obs = np.bincount(draws, minlength=len(pmf)).astype(float)
    exp = pmf * len(draws)
    keep = exp >= 5
    o = np.r_[obs[keep], obs[~keep].sum()]
    e = np.r_[exp[keep], exp[~keep].sum()]
    if e[-1] < 5:  # merge a small tail into the last kept cell
        o, e = np.r_[o[:-2], o[-2] + o[-1]], np.r_[e[:-2], e[-2] + e[-1]]
    return float(stats.chisquare(o, e * o.sum() / e.sum()).pvalue)


@pytest.mark.parametrize("n,p", [(246, 0.3), (246, 0.93), (40, 0.45), (7, 0.2), (500, 0.02),
                                 (1, 0.5), (30, 0.999)])
def test_binomial_samplers_fit_the_binomial_pmf(n: int, p: float) -> None:
    pmf = stats.binom.pmf(np.arange(n + 1), n, p)
    rng = np.random.default_rng(12345)
    for draws in (K.binomial_draws(rng, n, p, 100_000, LOGF),
                  K.binomial_draws_fast(rng, n, p, 100_000, LOGF, RECIP)):
        assert draws.min() >= 0 and draws.max() <= n
        assert _gof_pvalue(draws, pmf) > 1e-4


def test_multinomial_sampler_fits_the_joint_pmf() -> None:
    h = np.array([0.5, 0.3, 0.2])
    n = 6
    rng = np.random.default_rng(7)
    draws = K.multinomial_draws_fast(rng, n, h, 60_000, LOGF, RECIP)
    assert np.all(draws.sum(axis=1) == n)
    support = [x for x in itertools.product(range(n + 1), repeat=3) if sum(x) == n]
    index = {x: i for i, x in enumerate(support)}
    codes = np.array([index[tuple(map(int, r))] for r in draws])
    pmf = stats.multinomial.pmf(np.array(support), n, h)
    assert _gof_pvalue(codes, pmf) > 1e-4


def _outcomes(n: int, k: int):
    for cut in itertools.combinations(range(n + k - 1), k - 1):
        b = (-1, *cut, n + k - 1)
        yield tuple(b[i + 1] - b[i] - 1 for i in range(k))


def _exact_null(full, sub):
    full, sub = np.asarray(full), np.asarray(sub)
    N, s, k = int(full.sum()), int(sub.sum()), len(full)
    h = 0.5 * (full / N + sub / s)
    q_obs = ((s * full - N * sub) ** 2).sum()
    X = np.array(list(_outcomes(N, k)))
    Y = np.array(list(_outcomes(s, k)))
    P = stats.multinomial.pmf(X, N, h)[:, None] * stats.multinomial.pmf(Y, s, h)[None, :]
    Q = ((s * X[:, None, :] - N * Y[None, :, :]) ** 2).sum(-1)
    return h, Q, P, q_obs


def test_null_moments_match_exact_enumeration() -> None:
    h, Q, P, _ = _exact_null([4, 3, 2, 1], [1, 0, 2, 2])
    eq, eq2 = K.null_moments(h, 10, 5)
    assert eq == pytest.approx((P * Q).sum(), rel=1e-10)
    assert eq2 == pytest.approx((P * Q.astype(float) ** 2).sum(), rel=1e-10)


def _decision_probability(q_gt: float, q_eq: float, nboot: int, alpha: float) -> float:
    """P(mid-p < alpha) when (G, E) ~ trinomial(nboot; q_gt, q_eq): exact sum."""
    from scipy.special import gammaln

    g, e = np.meshgrid(np.arange(nboot + 1), np.arange(nboot + 1), indexing="ij")
    rest = nboot - g - e
    ok = (rest >= 0) & ((g + 0.5 * e) / nboot < alpha)
    g, e, rest = g[ok], e[ok], rest[ok]
    logp = (gammaln(nboot + 1) - gammaln(g + 1) - gammaln(e + 1) - gammaln(rest + 1)
            + g * np.log(q_gt) + e * np.log(q_eq) + rest * np.log1p(-q_gt - q_eq))
    return float(np.exp(logp).sum())


@pytest.mark.parametrize("full,sub", [([3, 2, 1], [0, 0, 2]), ([5, 3, 2], [0, 1, 3])])
def test_kernel_pvalues_and_decisions_match_exact_null(full, sub) -> None:
    _, Q, P, q_obs = _exact_null(full, sub)
    q_gt, q_eq = float(P[Q > q_obs].sum()), float(P[Q == q_obs].sum())
    full_a = np.array(full, dtype=np.int64)
    R, nboot, alpha = 3000, 100, 0.1
    subs = np.tile(np.array(sub, dtype=np.int64), (R, 1))
    rng = np.random.default_rng(99)
    nmax = int(full_a.sum() + subs[0].sum() + 1)
    out_p, out_rej, out_d = np.empty(R), np.zeros(R, bool), np.zeros(R, np.int64)
    # no early stopping at all: the mid-p values themselves
    K.two_group_bootstrap(rng, full_a, subs[:1], 100_000, 2.0, 10, np.zeros(0, np.int64),
                          np.zeros(0, np.int64), 2.0, K.log_factorial_table(nmax),
                          K.reciprocal_table(nmax), out_p[:1], out_rej[:1], out_d[:1])
    p_exact = q_gt + 0.5 * q_eq
    sd = math.sqrt(q_gt + 0.25 * q_eq - p_exact**2)
    assert abs(out_p[0] - p_exact) <= 4 * sd / math.sqrt(100_000)
    # decisions with the certified schedule vs the exact decision probability
    sched = certified_schedule(nboot, alpha)
    K.two_group_bootstrap(rng, full_a, subs, nboot, alpha, sched.step, sched.accept_at,
                          sched.reject_at, sched.pz_min, K.log_factorial_table(nmax),
                          K.reciprocal_table(nmax), out_p, out_rej, out_d)
    target = _decision_probability(q_gt, q_eq, nboot, alpha)
    assert 0.05 < target < 0.95
    assert abs(out_rej.mean() - target) <= 4 * math.sqrt(target * (1 - target) / R)
    assert out_d.max() <= nboot


def test_certified_schedule_bounds_hold_on_an_independent_grid() -> None:
    nboot, alpha, eps = 200, 0.1, 1e-8
    s = certified_schedule(nboot, alpha, eps)
    need = math.ceil(alpha * nboot)
    budget = eps / 2 / (2 * len(s.accept_at))
    q = np.linspace(1e-4, 1 - 1e-4, 5003)
    for i, m in enumerate(range(s.step, nboot, s.step)):
        a = int(s.accept_at[i])
        if a <= m:
            g = np.arange(a, need)[:, None]
            joint = stats.binom.pmf(g, m, q) * stats.binom.cdf(need - 1 - g, nboot - m, q)
            assert joint.sum(axis=0).max() <= budget * 1.05
        r = int(s.reject_at[i])
        if r >= 0:
            g = np.arange(0, r + 1)[:, None]
            joint = stats.binom.pmf(g, m, q) * stats.binom.sf(need - 1 - g, nboot - m, q)
            assert joint.sum(axis=0).max() <= budget * 1.05
    assert stats.binom.cdf(need - 1, nboot, s.pz_min) <= eps / 2
    assert np.all(np.diff(s.accept_at[s.accept_at < 10**9]) >= 0)
    off = certified_schedule(nboot, alpha, 0.0)
    assert np.all(off.reject_at == -1) and off.pz_min > 1


def test_min_items() -> None:
    sizes = np.arange(2, 10)
    shares = np.array([0.5, 0.2, 0.08, 0.12, 0.09, 0.04, 0.03, 0.01])
    assert min_items(sizes, shares, 0.10) == 6
    assert min_items(sizes, shares, 0.05) == 7
    assert min_items(sizes, shares, 0.6) == 2
    assert min_items(sizes, shares, 0.005) is None


def test_profiles_follow_the_paper() -> None:
    profs = {d.name: d for d in paper_profiles()}
    # the paper's own example: Positive = 5 % / 95 % of 89 negatives, 50 % / 50 % of 122
    assert profs["positive"].counts == (4, 85, 35, 61, 61)
    for d in profs.values():
        if d.name != "aggregate":
            c = d.counts
            assert (c[0] + c[1], c[2], c[3] + c[4]) == (89, 35, 122)
    assert profs["aggregate"].counts == (89, 35, 122)
    with pytest.raises(InputError):
        profile_distribution("x", 1.5, 0.5)


def test_distributions_from_ratings() -> None:
    df = pd.DataFrame({"rater": ["a"] * 4 + ["b"] * 3, "score": ["1", "2", "2", "5", "5", "5",
                                                                   "1"]})
    d = {x.name: x for x in distributions_from_ratings(df)}
    assert d["a"].counts == (1, 2, 1) and d["b"].counts == (1, 0, 2)
    bad = df.assign(score=["1", "x", "2", "5", "5", "5", "1"], _row=range(2, 9))
    with pytest.raises(InputError) as err:
        distributions_from_ratings(bad, file="p.csv")
    assert err.value.row == 3


def test_study_is_reproducible_and_independent_of_workers() -> None:
    dists = [distribution_from_counts("d", [3, 5, 4, 8]),
             distribution_from_counts("e", [6, 2, 2, 0, 10])]
    kw = dict(replications=120, n_resamples=60, alpha=0.1, seed=4, sizes=[2, 3, 5, 8, 12])
    serial = run_study(dists, workers=1, **kw)
    pooled = run_study(dists, workers=2, backend="process", **kw)
    pd.testing.assert_frame_equal(serial.curves, pooled.curves)
    assert list(serial.curves.columns[:4]) == ["distribution", "method", "size", "reject_share"]
    assert len(serial.curves) == 2 * 2 * 5
    assert set(serial.thresholds["threshold"]) == {0.1, 0.05, 0.01}
    other = run_study(dists, workers=1, **{**kw, "seed": 5})
    assert not serial.curves["rejections"].equals(other.curves["rejections"])
    # task streams are keyed by (distribution name, method, size), not by position or
    # submission order: "e" is 1 UTF-8 byte, 0x65 = 101; rwor is method 1
    a = np.random.default_rng(task_stream(4, "e", "rwor", 5)).random()
    b = np.random.default_rng(np.random.SeedSequence(4, spawn_key=(1, 101, 1, 5)))
    assert a == b.random()


def test_study_exact_and_certified_stopping_agree_statistically() -> None:
    dist = [distribution_from_counts("d", [10, 20, 5, 15])]
    kw = dict(replications=400, n_resamples=100, alpha=0.1, seed=8, sizes=[3, 10], workers=1)
    cert = run_study(dist, stopping="certified", **kw).curves
    exact = run_study(dist, stopping="exact", **kw).curves
    for a, b in zip(cert["reject_share"], exact["reject_share"], strict=True):
        se = math.sqrt(max(a * (1 - a), b * (1 - b), 0.01) * 2 / 400)
        assert abs(a - b) <= 4 * se


def test_study_outputs(tmp_path) -> None:
    res = run_study([distribution_from_counts("d", [3, 5, 4, 8])], replications=50, n_resamples=40,
                    sizes=[2, 4, 6], workers=1, seed=1)
    paths = res.write(tmp_path)
    names = {p.name for p in paths}
    assert {"curves.csv", "table3_min_items.tex", "table3_min_items.md",
            "rejection_curves.png", "rejection_curves.pdf", "run.json"} <= names
    d = res.to_dict()
    assert {"curves", "thresholds", "parameters", "run"} <= set(d)
    assert res.table3().shape[0] == 1


def test_study_bad_arguments() -> None:
    dist = [distribution_from_counts("d", [3, 5, 4, 8])]
    with pytest.raises(InputError):
        run_study(dist, methods=["jackknife"], workers=1)
    with pytest.raises(InputError):
        run_study(dist, sizes=[1, 2], workers=1)
    with pytest.raises(InputError):
        run_study(dist, alpha=1.5, workers=1)
