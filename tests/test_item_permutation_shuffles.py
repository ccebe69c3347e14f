"""item_permutation_pvalue reuses the within-item shuffles across calls: the same p-values.

The reference below is the loop as it was before the shuffles were shared (keys drawn, the
incomplete cells' keys set to +inf, argsorted, in chunks, on every call); the p-values must
be the same numbers on data with missing cells, ties, constant items and tiny values, for
calls that hit the shared shuffles, miss them, or need several chunks.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

from nlgeval.correlation import levels
from nlgeval.correlation.coefficients import batch_correlation, fixed_y_statistic
from nlgeval.correlation.levels import item_permutation_pvalue


def _reference(X: np.ndarray, Y: np.ndarray, coefficient: str, permutations: int,
               seed: int | None, chunk_cells: int = 4_000_000) -> float:
    ok = (np.isfinite(X) & np.isfinite(Y)).T
    order = np.argsort(~ok, axis=1, kind="stable")
    Xc = np.take_along_axis(np.where(ok, X.T, np.nan), order, axis=1)
    Yc = np.take_along_axis(np.where(ok, Y.T, np.nan), order, axis=1)
    okc = np.take_along_axis(ok, order, axis=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        observed = np.nanmean(batch_correlation(Xc, Yc, coefficient))
    if not np.isfinite(observed):
        return math.nan
    stat = fixed_y_statistic(Xc, Yc, coefficient)
    rng = np.random.default_rng(seed)
    n_items, n_sys = Xc.shape
    chunk = max(1, min(permutations, chunk_cells // max(1, n_items * n_sys)))
    hits = done = 0
    while done < permutations:
        b = min(chunk, permutations - done)
        keys = rng.random((b, n_items, n_sys))
        keys[:, ~okc] = np.inf
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            r = np.nanmean(stat(np.argsort(keys, axis=-1)), axis=-1)
        hits += int(np.count_nonzero(np.abs(r) >= abs(observed) - 1e-12))
        done += b
    return (1 + hits) / (permutations + 1)


def _case(rng: np.random.Generator, kind: int, shape: tuple[int, int]) -> np.ndarray:
    x = rng.normal(size=shape)
    if kind == 1:
        x = np.round(x * 2) / 2  # ties
    elif kind == 2:
        x = x * 1e-200
    elif kind == 3:
        x[:, 0] = 3.0  # a constant item
    return x


@pytest.mark.parametrize("coef", ["pearson", "spearman", "kendall"])
def test_shared_shuffles_give_the_reference_pvalues(coef: str) -> None:
    rng = np.random.default_rng(26)
    for case in range(12):
        shape = (int(rng.integers(3, 9)), int(rng.integers(3, 12)))
        Y = _case(rng, case % 4, shape)
        missing = rng.random(shape) < (0.15 if case % 3 else 0.0)
        Y[missing] = np.nan
        seed = int(rng.integers(0, 3))
        for k in range(3):  # metrics sharing the pattern: the second and third reuse it
            X = _case(rng, (case + k) % 4, shape) + 0.5 * np.nan_to_num(Y)
            B = int(rng.choice([50, 199]))
            p, n = item_permutation_pvalue(X, Y, coef, n_resamples=B, seed=seed)
            ref = _reference(X, Y, coef, B, seed)
            assert n == B
            assert (math.isnan(p) and math.isnan(ref)) or p == ref, (case, k)


def test_several_chunks_and_unseeded_calls(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(5)
    Y = rng.normal(size=(6, 9))
    X = Y + rng.normal(size=(6, 9))
    monkeypatch.setattr(levels, "_CHUNK_CELLS", 54 * 7)  # chunks of 7 permutations
    for coef in ("pearson", "spearman", "kendall"):
        p, _ = item_permutation_pvalue(X, Y, coef, n_resamples=40, seed=4)
        assert p == _reference(X, Y, coef, 40, 4, chunk_cells=54 * 7)
    assert not any(k[0] == 4 for k in levels._SHUFFLES)  # several chunks: not kept
    levels._SHUFFLES.clear()
    item_permutation_pvalue(X, Y, n_resamples=30, seed=None)
    assert not levels._SHUFFLES  # an unseeded call draws fresh shuffles every time


def test_shared_shuffles_are_read_only() -> None:
    rng = np.random.default_rng(1)
    Y = rng.normal(size=(4, 5))
    item_permutation_pvalue(Y + rng.normal(size=(4, 5)), Y, n_resamples=20, seed=9)
    (shuffles,) = levels._SHUFFLES.values()
    with pytest.raises(ValueError):
        shuffles[0][0, 0, 0] = 1
