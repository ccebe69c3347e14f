"""The plain-Kendall pair count (eps = 0: radix sort + merge count of inversions, Knight 1966)
against the Fenwick-tree kernel it replaced for long vectors, kept here verbatim as the
reference (``_old_*``, from nlgeval 3e72fac), against a direct O(n^2) enumeration of the
pairs, and, on long vectors, tau-b, tau-c and their p-values against ``scipy.stats.kendalltau``
itself. Inputs: continuous values, 5-point scales (heavy ties) and both, all-equal vectors,
n = 0..3, values near 1e200 and 1e-200, subnormals, negative zero, and missing or infinite
values (dropped by the callers, left to the old path by the kernel)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from numba import njit
from scipy import stats

from nlgeval.correlation.coefficients import batch_correlation, kendall_pvalue
from nlgeval.correlation.kendall import DIRECT_MAX, pair_counts
from nlgeval.correlation.kendall._exact_counts import (
    _FEW,
    _counts_exact,
    _few_ranks,
    _merge_count,
    _order_keys,
    _radix_sort,
)
from nlgeval.correlation.kendall.kernels import _EXACT_MIN, _vector_counts

# --------------------------------------------------------------------------------------------
# the previous kernel, verbatim (nlgeval 3e72fac, nlgeval/correlation/kendall/kernels.py)
# --------------------------------------------------------------------------------------------


@njit
def _old_counts_direct(x, y, eps):
    n = x.shape[0]
    c = 0
    d = 0
    th = 0
    tm = 0
    thm = 0
    for i in range(n):
        xi = x[i]
        yi = y[i]
        for j in range(i + 1, n):
            dx = xi - x[j]
            dy = yi - y[j]
            mt = abs(dx) <= eps
            if dy == 0.0:
                if mt:
                    thm += 1
                else:
                    th += 1
            elif mt:
                tm += 1
            elif (dx > 0.0) == (dy > 0.0):
                c += 1
            else:
                d += 1
    return c, d, th, tm, thm


@njit
def _old_n_distinct_sorted(v):
    if v.shape[0] == 0:
        return 0
    k = 1
    for i in range(1, v.shape[0]):
        if v[i] != v[i - 1]:
            k += 1
    return k


# shape: the previous kernel kept verbatim as the reference
@njit
def _old_counts_sorted(x, y, eps):
    n = x.shape[0]
    ox = np.argsort(x, kind="mergesort")
    xs = x[ox]
    pos = np.empty(n, dtype=np.int64)
    for k in range(n):
        pos[ox[k]] = k
    m_ties = 0
    r = 0
    for i in range(n):
        if r < i:
            r = i
        while r + 1 < n and xs[r + 1] - xs[i] <= eps:
            r += 1
        m_ties += r - i
    oy = ox[np.argsort(y[ox], kind="mergesort")]
    h_ties = 0
    both = 0
    s = 0
    while s < n:
        e = s + 1
        ys = y[oy[s]]
        while e < n and y[oy[e]] == ys:
            e += 1
        m = e - s
        h_ties += m * (m - 1) // 2
        r = s
        for i in range(s, e):
            if r < i:
                r = i
            xi = x[oy[i]]
            while r + 1 < e and x[oy[r + 1]] - xi <= eps:
                r += 1
            both += r - i
        s = e
    tree = np.zeros(n + 1, dtype=np.int64)
    con = 0
    s = 0
    while s < n:
        e = s + 1
        ys = y[oy[s]]
        while e < n and y[oy[e]] == ys:
            e += 1
        for t in range(s, e):
            xi = x[oy[t]]
            lo = 0
            hi = n
            while lo < hi:
                mid = (lo + hi) // 2
                if xi - xs[mid] > eps:
                    lo = mid + 1
                else:
                    hi = mid
            q = lo
            acc = 0
            while q > 0:
                acc += tree[q]
                q -= q & (-q)
            con += acc
        for t in range(s, e):
            q = pos[oy[t]] + 1
            while q <= n:
                tree[q] += 1
                q += q & (-q)
        s = e
    total = n * (n - 1) // 2
    dis = total - m_ties - h_ties + both - con
    return con, dis, h_ties - both, m_ties - both, both


@njit
def _old_vector_counts(x, y, eps, direct_max, need_distinct, out):
    n = x.shape[0]
    if n <= direct_max:
        c, d, th, tm, thm = _old_counts_direct(x, y, eps)
    else:
        c, d, th, tm, thm = _old_counts_sorted(x, y, eps)
    out[0] = c
    out[1] = d
    out[2] = th
    out[3] = tm
    out[4] = thm
    out[5] = n
    if need_distinct:
        out[6] = _old_n_distinct_sorted(np.sort(x))
        out[7] = _old_n_distinct_sorted(np.sort(y))
    else:
        out[6] = 0
        out[7] = 0


# --------------------------------------------------------------------------------------------
# inputs and an independent reference
# --------------------------------------------------------------------------------------------

KINDS = ("continuous", "five_point", "mixed", "human_tied_metric_cont", "extremes", "constant",
         "near_constant", "few_values", "wide_scale")
SPECIAL = np.array([0.0, -0.0, 1e-200, -1e-200, 1e200, -1e200, 5e-324, -5e-324, 1.0, -1.0,
                    2.2250738585072014e-308, -2.2250738585072014e-308, 1.7976931348623157e308,
                    -1.7976931348623157e308, 1.0 + 2.0 ** -52, 1.0 - 2.0 ** -53])


def _pair(rng: np.random.Generator, n: int, kind: str) -> tuple[np.ndarray, np.ndarray]:
    x = rng.normal(size=n)
    y = x + rng.normal(scale=rng.choice([0.1, 1.0, 5.0]), size=n)
    if kind == "five_point":
        x, y = np.clip(np.round(3 + x), 1, 5), np.clip(np.round(3 + y), 1, 5)
    elif kind == "mixed":
        y = np.clip(np.round(3 + y), 1, 5)
    elif kind == "human_tied_metric_cont":
        x = np.clip(np.round(3 + x), 1, 5)
    elif kind == "extremes":  # near 1e200 / 1e-200, subnormals, negative zero, the largest
        x, y = rng.choice(SPECIAL, n), rng.choice(SPECIAL, n)
    elif kind == "constant":
        x = np.full(n, rng.choice([0.0, -0.0, 1.0, 3.0]))  # times 1e200 below
        if rng.random() < 0.5:
            x, y = y, x
    elif kind == "near_constant":  # one ulp apart: still distinct values
        x = 1.0 + rng.integers(0, 2, n) * 2.0 ** -52
    elif kind == "wide_scale":  # hundreds of distinct values, each repeated: ties in the merge
        x, y = np.round(x * 30), np.round(y * 100)
    elif kind == "few_values":
        x, y = rng.integers(0, 3, n).astype(float), rng.integers(0, 2, n).astype(float)
        x[x == 0.0] = -0.0
    scale = 1.0 if kind == "extremes" else rng.choice([1.0, 1e200, 1e-200])  # finite values
    return np.ascontiguousarray(x * scale), np.ascontiguousarray(y)


def _enumerate(x: np.ndarray, y: np.ndarray) -> tuple[int, ...]:
    """C, D, T_h, T_m, T_hm and the distinct values by comparing every pair (O(n^2) numpy)."""
    n = x.size
    sx = (x[:, None] > x[None, :]).astype(int) - (x[:, None] < x[None, :])
    sy = (y[:, None] > y[None, :]).astype(int) - (y[:, None] < y[None, :])
    upper = np.triu(np.ones((n, n), dtype=bool), 1)
    prod = (sx * sy)[upper]
    tx, ty = (sx == 0)[upper], (sy == 0)[upper]
    return (int((prod > 0).sum()), int((prod < 0).sum()), int((ty & ~tx).sum()),
            int((tx & ~ty).sum()), int((tx & ty).sum()), len(np.unique(x)), len(np.unique(y)))


def _counts(fn, x, y, eps, need_distinct, direct_max=DIRECT_MAX) -> np.ndarray:
    out = np.full(8, -1, dtype=np.int64)
    fn(x, y, eps, direct_max, need_distinct, out)
    return out


# --------------------------------------------------------------------------------------------
# tests
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", KINDS)
def test_vector_counts_equal_old_kernel(kind):
    rng = np.random.default_rng(sum(map(ord, kind)))
    sizes = [_EXACT_MIN - 1, _EXACT_MIN, _EXACT_MIN + 1, *rng.integers(DIRECT_MAX + 1, 3000, 40),
             20_000]
    for n in sizes:
        x, y = _pair(rng, int(n), kind)
        for need_distinct in (False, True):
            new = _counts(_vector_counts, x, y, 0.0, need_distinct)
            old = _counts(_old_vector_counts, x, y, 0.0, need_distinct)
            assert new.tolist() == old.tolist(), (kind, n, need_distinct)
            assert new[:5].sum() == n * (n - 1) // 2


@pytest.mark.parametrize("kind", KINDS)
def test_exact_counts_equal_enumeration(kind):
    rng = np.random.default_rng(100 + sum(map(ord, kind)))
    for n in [0, 1, 2, 3, *rng.integers(4, 90, 30)]:
        x, y = _pair(rng, int(n), kind)
        assert np.isfinite(x).all() and np.isfinite(y).all()
        assert list(_counts_exact(x, y)) == list(_enumerate(x, y)), (kind, n)
        old = _old_counts_sorted(x, y, 0.0)
        assert list(_counts_exact(x, y))[:5] == list(old), (kind, n)


def test_counts_of_tiny_and_all_equal_vectors():
    assert _counts_exact(np.empty(0), np.empty(0)) == (0, 0, 0, 0, 0, 0, 0)
    assert _counts_exact(np.array([1.0]), np.array([-0.0])) == (0, 0, 0, 0, 0, 1, 1)
    assert _counts_exact(np.array([2.0, 1.0]), np.array([0.0, -0.0])) == (0, 0, 1, 0, 0, 2, 1)
    assert _counts_exact(np.array([1.0, 2.0, 3.0]), np.array([3.0, 2.0, 1.0])) == (
        0, 3, 0, 0, 0, 3, 3)
    n = 1000
    same = np.full(n, -0.0)
    same[::2] = 0.0  # negative and positive zero: one value
    assert _counts_exact(same, same) == (0, 0, 0, 0, n * (n - 1) // 2, 1, 1)
    ramp = np.arange(n, dtype=float)
    assert _counts_exact(ramp, same) == (0, 0, n * (n - 1) // 2, 0, 0, n, 1)
    assert _counts_exact(ramp, -ramp) == (0, n * (n - 1) // 2, 0, 0, 0, n, n)


def test_nonfinite_and_tie_threshold_keep_the_old_path():
    """The kernel itself leaves NaN / infinite values and eps > 0 to the Fenwick count."""
    rng = np.random.default_rng(7)
    for _ in range(20):
        x, y = _pair(rng, 600, "mixed")
        x[rng.random(600) < 0.05] = rng.choice([np.nan, np.inf, -np.inf])
        for eps in (0.0, 0.3):
            assert (_counts(_vector_counts, x, y, eps, True).tolist()
                    == _counts(_old_vector_counts, x, y, eps, True).tolist())
        x, y = _pair(rng, 600, "continuous")
        assert (_counts(_vector_counts, x, y, 0.25, True).tolist()
                == _counts(_old_vector_counts, x, y, 0.25, True).tolist())


def test_callers_drop_missing_pairs_as_before():
    rng = np.random.default_rng(8)
    for kind in ("continuous", "five_point", "extremes"):
        x, y = _pair(rng, 3000, kind)
        x[rng.random(3000) < 0.1] = np.nan
        y[rng.random(3000) < 0.05] = np.inf
        ok = np.isfinite(x) & np.isfinite(y)
        pc = pair_counts(x, y)
        old = _counts(_old_vector_counts, x[ok], y[ok], 0.0, True)
        assert [pc.concordant, pc.discordant, pc.ties_human, pc.ties_metric,
                pc.ties_both] == old[:5].tolist()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ref = stats.kendalltau(x[ok], y[ok]).statistic
        assert float(batch_correlation(x, y, "kendall")) == ref


def test_merge_count_is_the_inversion_count():
    rng = np.random.default_rng(9)
    for n in [0, 1, 2, 3, 15, 16, 17, 33, *rng.integers(1, 300, 40)]:
        a = rng.integers(-5, 5, int(n)).astype(np.int64) * rng.choice([1, 10 ** 17])
        if rng.random() < 0.3:
            a = np.sort(a)[::-1].copy() if rng.random() < 0.5 else np.sort(a)
        brute = int(np.triu(a[:, None] > a[None, :], 1).sum())
        work = a.copy()
        got = _merge_count(work, np.empty(n, np.int64), np.empty(n + 1, np.int64))
        assert got == brute
        assert work.tolist() == np.sort(a).tolist()


@pytest.mark.parametrize("k", [1, 2, 5, _FEW - 1, _FEW, _FEW + 1, 3 * _FEW])
def test_few_distinct_human_values_either_count(k):
    """Up to _FEW distinct y values D comes from their ranks, beyond from the merge count."""
    rng = np.random.default_rng(k)
    for n in (300, 2000):
        y = rng.choice(rng.normal(size=k) * rng.choice([1.0, 1e200, 1e-200]), n)
        y[y == y[0]] = -0.0 if rng.random() < 0.5 else y[0]
        x = np.where(rng.random(n) < 0.5, y, rng.permutation(y))  # the same values, shuffled
        ranks, vals = np.empty(n, np.int64), np.empty(_FEW, np.int64)
        found = _few_ranks(_order_keys(y), ranks, vals)
        distinct = len(np.unique(y))
        assert found == (distinct if distinct <= _FEW else -1)
        if found > 0:  # the ranks are the dense ranks of the values
            assert ranks.tolist() == np.unique(y, return_inverse=True)[1].tolist()
        for need_distinct in (False, True):
            assert (_counts(_vector_counts, x, y, 0.0, need_distinct).tolist()
                    == _counts(_old_vector_counts, x, y, 0.0, need_distinct).tolist())
        if n == 300:
            assert list(_counts_exact(x, y)) == list(_enumerate(x, y))


def test_order_keys_and_radix_sort_keep_the_float_order():
    v = np.concatenate([SPECIAL, np.random.default_rng(10).normal(size=200) * 1e150])
    k = _order_keys(v)
    for a, b in ((k[:, None], k[None, :]), (v[:, None], v[None, :])):
        assert ((a < b) == (v[:, None] < v[None, :])).all()
        assert ((a == b) == (v[:, None] == v[None, :])).all()
    pay = np.arange(v.size, dtype=np.int64)
    key = k.copy()
    _radix_sort(key, pay, np.empty_like(key), np.empty_like(pay))
    assert pay.tolist() == np.argsort(k, kind="stable").tolist()  # sorted and stable
    assert key.tolist() == np.sort(k).tolist()
    alone = k.copy()  # without a payload
    _radix_sort(alone, alone[:0], np.empty_like(alone), alone[:0])
    assert alone.tolist() == np.sort(k).tolist()


@pytest.mark.parametrize("kind", ["continuous", "five_point", "mixed"])
def test_long_vectors_tau_and_pvalue_equal_scipy(kind):
    rng = np.random.default_rng(11)
    x, y = _pair(rng, 200_000, kind)
    ref_b, ref_c = stats.kendalltau(x, y), stats.kendalltau(x, y, variant="c")
    assert float(batch_correlation(x, y, "kendall")) == ref_b.statistic
    assert float(batch_correlation(x, y, "kendall_c")) == ref_c.statistic
    assert kendall_pvalue(x, y) == ref_b.pvalue
