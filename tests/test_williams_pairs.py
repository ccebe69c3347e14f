"""Williams' test of every metric pair at once equals the pair-by-pair test bit for bit.

The reference is the code the shared path replaced (issue 26, "Size and speed"):
``williams_from_scores`` for every ordered pair with the previous ``williams_test`` (one
scalar t-distribution call per pair), copied verbatim below. Every field of every result must
be the same number (NaN where it was NaN).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from nlgeval.correlation.coefficients import batch_correlation
from nlgeval.correlation.permutation.compare import comparison_matrix
from nlgeval.correlation.williams import (
    WilliamsResult,
    _level_vectors,
    williams_from_scores,
    williams_pairs,
    williams_test,
)


def _reference_test(r12, r13, r23, n, alternative="two-sided"):
    vals = (r12, r13, r23)
    if n <= 3 or not all(np.isfinite(v) for v in vals):
        return WilliamsResult(math.nan, max(n - 3, 0), math.nan, r12, r13, r23, n, alternative)
    det = 1 - r12**2 - r13**2 - r23**2 + 2 * r12 * r13 * r23
    denom = 2 * (n - 1) / (n - 3) * det + ((r12 + r13) / 2) ** 2 * (1 - r23) ** 3
    if det < -1e-12 or denom <= 0:
        return WilliamsResult(math.nan, n - 3, math.nan, r12, r13, r23, n, alternative)
    t = (r12 - r13) * math.sqrt((n - 1) * (1 + r23)) / math.sqrt(denom)
    df = n - 3
    if alternative == "two-sided":
        p = 2 * stats.t.sf(abs(t), df)
    elif alternative == "greater":
        p = stats.t.sf(t, df)
    else:
        p = stats.t.cdf(t, df)
    return WilliamsResult(float(t), df, float(min(1.0, p)), r12, r13, r23, n, alternative)


def _reference_from_scores(XA, XB, Y, level, coefficient, alternative):
    a, b, h = _level_vectors(np.asarray(XA, float), np.asarray(XB, float),
                             np.asarray(Y, float), level)
    r12 = float(batch_correlation(h, a, coefficient))
    r13 = float(batch_correlation(h, b, coefficient))
    r23 = float(batch_correlation(a, b, coefficient))
    return _reference_test(r12, r13, r23, int(h.size), alternative)


def _same(x: WilliamsResult, y: WilliamsResult) -> bool:
    return all((u == v) or (isinstance(u, float) and math.isnan(u) and math.isnan(v))
               for u, v in zip(x.__dict__.values(), y.__dict__.values(), strict=True))


def _metrics(kind: str, S: int = 6, n_items: int = 15, k: int = 5, seed: int = 0):
    rng = np.random.default_rng(seed)
    H = np.round(3 + rng.normal(size=(S, n_items)))
    mets = {f"m{j}": H + rng.normal(scale=0.3 + j, size=H.shape) for j in range(k)}
    mets["m1"] = np.round(mets["m1"])  # ties
    if kind == "missing":  # different cells per pair: the pair-by-pair path
        mets["m2"][0, 0] = np.nan
    elif kind == "missing-human":  # the same cells for every pair: the shared path
        H[1, :3] = np.nan
        H[0, :] = np.nan  # a system without ratings
    elif kind == "degenerate":
        mets["m3"] = np.full(H.shape, 0.5)  # constant: r is NaN
        mets["m0"] = mets["m4"].copy()  # identical metrics: r23 = 1
    elif kind == "scales":
        mets["m0"] = mets["m0"] * 1e200
        mets["m2"] = mets["m2"] * 1e-200
    return H, mets


@pytest.mark.parametrize("alternative", ["greater", "less", "two-sided"])
@pytest.mark.parametrize("coefficient", ["pearson", "spearman"])
@pytest.mark.parametrize("level", ["segment", "system"])
@pytest.mark.parametrize("kind", ["plain", "missing", "missing-human", "degenerate", "scales"])
def test_williams_pairs_equal_pair_by_pair(kind, level, coefficient, alternative) -> None:
    H, mets = _metrics(kind)
    got = williams_pairs(mets, H, level, coefficient, alternative)
    names = list(mets)
    assert set(got) == {(a, b) for a in names for b in names if a != b}
    for (a, b), res in got.items():
        want = _reference_from_scores(mets[a], mets[b], H, level, coefficient, alternative)
        assert _same(res, want), (a, b, res, want)
        assert _same(res, williams_from_scores(mets[a], mets[b], H, level, coefficient,
                                               alternative))


def test_few_systems_give_nan_as_before() -> None:
    H, mets = _metrics("plain", S=3)  # n = 3 systems: Williams' test is undefined
    for res in williams_pairs(mets, H, "system").values():
        assert math.isnan(res.pvalue) and res.df == 0


def test_williams_test_unchanged_on_a_grid() -> None:
    for r12 in np.linspace(-0.95, 0.95, 9):
        for r13 in np.linspace(-0.9, 0.9, 7):
            for r23 in (-0.5, 0.0, 0.3, 0.99, 1.0):
                for n in (3, 4, 10, 500):
                    for alt in ("greater", "less", "two-sided"):
                        assert _same(williams_test(r12, r13, r23, n, alt),
                                     _reference_test(r12, r13, r23, n, alt))


def test_comparison_matrix_williams_rows_unchanged() -> None:
    H, mets = _metrics("plain", k=4, seed=3)
    frame = comparison_matrix(mets, H, "segment", "pearson", method="williams")
    for row in frame.itertuples():
        want = _reference_from_scores(mets[row.metric_a], mets[row.metric_b], H, "segment",
                                      "pearson", "greater")
        assert (row.statistic, row.pvalue, row.r_a, row.r_b) == (
            want.statistic, want.pvalue, want.r12, want.r13)


@pytest.mark.parametrize("level", ["segment", "system"])
def test_pearson_pairs_in_one_batch_equal_pair_by_pair(level, monkeypatch) -> None:
    # a study-sized case (1,100 segments: numpy's pairwise sums over several blocks): r(A, B)
    # of all pairs as rows of one batch, the same numbers as one call per pair
    from nlgeval.correlation import williams

    H, mets = _metrics("plain", S=11, n_items=100, k=9, seed=5)
    calls = []
    real = williams.batch_correlation
    monkeypatch.setattr(williams, "batch_correlation",
                        lambda x, y, *a: calls.append(np.ndim(x)) or real(x, y, *a))
    got = williams_pairs(mets, H, level, "pearson")
    monkeypatch.undo()
    assert calls.count(2) == 1  # one batch of the 36 pairs
    for (a, b), res in got.items():
        want = _reference_from_scores(mets[a], mets[b], H, level, "pearson", "greater")
        assert _same(res, want), (a, b, res, want)
