"""The draws of acc_eq's permutation test (Deutsch, Foster & Freitag 2023; MTME's pairs test)
made by the compiled inversion sampler equal numpy's ``Generator.binomial`` integer for
integer, and the test's results equal those of the previous code (numpy's sampler), kept as
the reference path: random inputs with ties, missing cells, constant and near-constant
metrics, values near 1e200 and 1e-200, many groups (several chunks of draws) and groups too
large for inversion."""

from __future__ import annotations

import importlib

import numpy as np
import pytest

from nlgeval.correlation.kendall import acc_eq_permutation_test
from nlgeval.correlation.kendall._tie_kernels import (
    INVERSION_MAX_N,
    half_binomial_block,
    half_binomial_table,
)

tc = importlib.import_module("nlgeval.correlation.kendall.tie_calibration")


def test_compiled_sampler_draws_numpys_integers() -> None:
    px = half_binomial_table()
    for seed in range(60):
        r = np.random.default_rng(500 + seed)
        A, k = int(r.integers(1, 200)), int(r.integers(1, 40))
        n1, n2 = (r.integers(0, INVERSION_MAX_N + 1, size=A) for _ in range(2))
        ref_rng = np.random.default_rng(seed)
        want = (ref_rng.binomial(n1, 0.5, size=(k, A)), ref_rng.binomial(n2, 0.5, size=(k, A)))
        rng = np.random.default_rng(seed)
        u = rng.random(k * int(np.count_nonzero(n1) + np.count_nonzero(n2)))
        got = (np.empty((k, A), np.int64), np.empty((k, A), np.int64))
        pos = half_binomial_block(n1, k, u, 0, px, got[0])
        assert half_binomial_block(n2, k, u, pos, px, got[1]) == u.size
        np.testing.assert_array_equal(got[0], want[0])
        np.testing.assert_array_equal(got[1], want[1])
        assert rng.random() == ref_rng.random()          # the streams are in step afterwards
    # too few uniforms (what a restart of the sampler would need): reported, not invented
    n = np.array([5, 7], dtype=np.int64)
    assert half_binomial_block(n, 2, np.full(3, 0.5), 0, px, np.empty((2, 2), np.int64)) == -1


@pytest.mark.parametrize("groups,largest", [(30, 60), (2500, 40), (50, 90), (1, 400000)])
def test_weighted_totals_equal_previous_draws(groups: int, largest: int) -> None:
    rng = np.random.default_rng(groups)
    n_plus = rng.integers(0, largest + 1, size=groups)
    n_minus = rng.integers(0, largest + 1, size=groups)
    w = rng.integers(1, 9, size=groups).astype(float)
    K = 1200 if groups > 1000 else 300                   # 2,500 groups: three chunks of draws
    assert tc._half_binomial_px() is not None            # the compiled sampler is in use
    new = tc._drawn_totals(n_plus, n_minus, w, K, 3, True)
    old = tc._drawn_totals(n_plus, n_minus, w, K, 3, False)   # rng.binomial, as before
    np.testing.assert_array_equal(new, old)


def _case(rng: np.random.Generator, kind: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    S, n = int(rng.integers(3, 9)), int(rng.integers(4, 30))
    Y = np.round(rng.normal(size=(S, n)) * 2) / 2                     # human ties
    A = np.round(Y + rng.normal(0, 0.7, Y.shape), 1)
    B = np.round(Y + rng.normal(0, 1.2, Y.shape), 1)
    if kind == "missing":
        A[rng.random(A.shape) < 0.15] = np.nan
        Y[rng.random(Y.shape) < 0.1] = np.nan
    elif kind == "constant":
        B = np.full_like(B, 0.3)
    elif kind == "near-constant":
        B = 0.3 + 1e-13 * rng.integers(-2, 3, size=B.shape)
    elif kind == "huge":
        A, B = A * 1e200, B * 1e200
    elif kind == "tiny":
        A, B = A * 1e-200, B * 1e-200
    return A, B, Y


@pytest.mark.parametrize("kind", ["ties", "missing", "constant", "near-constant", "huge", "tiny"])
def test_permutation_test_equals_previous_code(kind: str, monkeypatch: pytest.MonkeyPatch
                                               ) -> None:
    rng = np.random.default_rng(len(kind))
    cases = [_case(rng, kind) for _ in range(6)]
    for grouping in ("item", "segment", "system-grouped"):
        for i, (A, B, Y) in enumerate(cases):
            new = acc_eq_permutation_test(A, B, Y, grouping, n_resamples=150, seed=i)
            with monkeypatch.context() as m:
                m.setattr(tc, "_half_binomial_px", lambda: None)   # numpy's sampler, as before
                old = acc_eq_permutation_test(A, B, Y, grouping, n_resamples=150, seed=i)
            np.testing.assert_array_equal(new.draws_a, old.draws_a)
            np.testing.assert_array_equal(new.draws_b, old.draws_b)
            assert (new.pvalue, new.statistic) == (old.pvalue, old.statistic) or (
                np.isnan(new.pvalue) and np.isnan(old.pvalue))


@pytest.mark.parametrize("kind", ["ties", "missing", "constant", "near-constant", "huge", "tiny"])
def test_pair_outcome_bits_equal_the_pair_loop(kind: str) -> None:
    from nlgeval.correlation.kendall._tie_kernels import _agreement_counts
    from nlgeval.correlation.kendall.results import build_groups

    rng = np.random.default_rng(10 + len(kind))
    for i in range(8):
        A, B, Y = _case(rng, kind)
        if i == 0:                    # 12 systems: 66 pairs per item, past one 64-bit word
            A, B, Y = (np.vstack([M, M[:4] + 0.5]) for M in (A, B, Y))
            A, B, Y = (np.vstack([M, M[:4] - 0.5]) for M in (A, B, Y))
        ok = np.isfinite(A) & np.isfinite(B) & np.isfinite(Y)
        H = np.where(ok, Y, np.nan)
        for grouping in ("item", "segment", "system-grouped"):
            ga = build_groups(np.where(ok, A, np.nan), H, grouping)
            gb = build_groups(np.where(ok, B, np.nan), H, grouping)
            if not ga.sizes.size:
                continue
            for eps_a, eps_b in ((0.0, 0.0), (0.05, 0.3), (1e199, 1e-201)):
                want = _agreement_counts(ga.x, gb.x, ga.y, ga.off, eps_a, eps_b)
                tc._bits_cache.clear()
                got = tc._agreement_from_bits(ga, gb, eps_a, eps_b)
                np.testing.assert_array_equal(got, want)
                again = tc._agreement_from_bits(ga, gb, eps_a, eps_b)   # from kept bits
                np.testing.assert_array_equal(again, want)
