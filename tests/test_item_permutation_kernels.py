"""The compiled within-item permutation draws give the array code's numbers, draw by draw.

``item_permutation_pvalue`` used to compute every draw with ``fixed_y_statistic`` on the
(draws, items, systems) stack of permuted metric values and ``np.nanmean`` over the items;
it now runs compiled loops over the shuffle indices (Pearson/Spearman in
``nlgeval.correlation._item_permutation``, Kendall tau-b/tau-c from sign tables in
``nlgeval.correlation.kendall.kernels``). The reference below is that array code, copied as
it was (the shuffles drawn in chunks: random keys, the incomplete cells' keys set to +inf,
``argsort``), and every draw must be the same float (``assert_array_equal``) and every
p-value the same number, on hundreds of random cases: ties, integer scores, missing cells,
items with fewer than 3 complete cells, constant and near-constant items, values near 1e200
and 1e-200 and between 1e-318 and 1e-170, rows of 3 to 150 systems, several chunks.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable

import numpy as np
import pytest

from nlgeval.correlation import levels
from nlgeval.correlation._constant import constant_from_extremes, extremes, overflow_safe
from nlgeval.correlation.coefficients import (
    MIN_PAIRS,
    _batch_statistic,
    _masked_ranks,
    batch_correlation,
    pearson_from_sums,
)
from nlgeval.correlation.levels import item_permutation_pvalue

COEFFICIENTS = ("pearson", "spearman", "kendall", "kendall_c")


def _old_fixed_y_statistic(x: np.ndarray, y: np.ndarray, coefficient: str
                           ) -> Callable[[np.ndarray], np.ndarray]:
    """``coefficients.fixed_y_statistic`` as it was before the compiled draws."""
    valid = np.isfinite(x) & np.isfinite(y)
    (hx, lx), (hy, ly) = extremes(x, valid), extremes(y, valid)
    const = constant_from_extremes(hx, lx) | constant_from_extremes(hy, ly)
    if coefficient not in ("pearson", "spearman"):
        def kendall(perm: np.ndarray) -> np.ndarray:
            xp = np.take_along_axis(np.broadcast_to(x, perm.shape), perm, axis=-1)
            ys = np.broadcast_to(y, perm.shape).copy()
            return np.where(const, np.nan, _batch_statistic(xp, ys, valid, coefficient))
        return kendall
    n = valid.astype(float).sum(axis=-1)
    if coefficient == "spearman":
        x, y = _masked_ranks(x, valid), _masked_ranks(y, valid)
    else:
        x, y = overflow_safe(x, hx, lx), overflow_safe(y, hy, ly)
    with np.errstate(invalid="ignore", divide="ignore"):
        my = np.where(valid, y, 0.0).sum(axis=-1) / n
        dy = np.where(valid, y - my[..., None], 0.0)
        syy = (dy * dy).sum(axis=-1)
        x0 = np.where(valid, x, 0.0)
        if coefficient == "spearman":
            x0 = np.where(valid, x - (x0.sum(axis=-1) / n)[..., None], 0.0)

    def pearson(perm: np.ndarray) -> np.ndarray:
        dx = np.take_along_axis(np.broadcast_to(x0, perm.shape), perm, axis=-1)
        with np.errstate(invalid="ignore", divide="ignore"):
            if coefficient == "pearson":
                dx = np.where(valid, dx - (dx.sum(axis=-1) / n)[..., None], 0.0)
            r = pearson_from_sums(n, 0.0, 0.0, (dx * dx).sum(axis=-1), syy,
                                  (dx * dy).sum(axis=-1), 0.0, 0.0)
        return np.where(const | (n < MIN_PAIRS), np.nan, r)
    return pearson


def _packed(X: np.ndarray, Y: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    ok = (np.isfinite(X) & np.isfinite(Y)).T
    order = np.argsort(~ok, axis=1, kind="stable")
    Xc = np.take_along_axis(np.where(ok, X.T, np.nan), order, axis=1)
    Yc = np.take_along_axis(np.where(ok, Y.T, np.nan), order, axis=1)
    return Xc, Yc, np.take_along_axis(ok, order, axis=1)


def _old_draws(X: np.ndarray, Y: np.ndarray, coefficient: str, permutations: int,
               seed: int | None, chunk_cells: int = 4_000_000) -> tuple[float, np.ndarray]:
    """The observed statistic and every draw's mean, by the array code."""
    Xc, Yc, okc = _packed(X, Y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        observed = float(np.nanmean(batch_correlation(Xc, Yc, coefficient)))
    stat = _old_fixed_y_statistic(Xc, Yc, coefficient)
    rng = np.random.default_rng(seed)
    n_items, n_sys = Xc.shape
    chunk = max(1, min(permutations, chunk_cells // max(1, n_items * n_sys)))
    out, done = [], 0
    while done < permutations:
        b = min(chunk, permutations - done)
        keys = rng.random((b, n_items, n_sys))
        keys[:, ~okc] = np.inf
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            out.append(np.nanmean(stat(np.argsort(keys, axis=-1)), axis=-1))
        done += b
    return observed, np.concatenate(out)


def _old_pvalue(observed: float, draws: np.ndarray) -> float:
    if not np.isfinite(observed):
        return math.nan
    hits = int(np.count_nonzero(np.abs(draws) >= abs(observed) - 1e-12))
    return (1 + hits) / (draws.size + 1)


def _values(rng: np.random.Generator, kind: int, shape: tuple[int, int]) -> np.ndarray:
    x = rng.normal(size=shape)
    if kind == 1:
        x = np.round(x * 2) / 2  # ties
    elif kind == 2:
        x = rng.integers(1, 6, size=shape).astype(float)  # a 1-5 scale, many ties
    elif kind == 3:
        x = x * 1e200
    elif kind == 4:
        x = x * 1e-200
    elif kind == 5:  # numerically zero for some items, magnitudes 1e-318 .. 1e-170
        x[:, : shape[1] // 2] = 10.0 ** rng.uniform(-318, -170, size=(shape[0], shape[1] // 2))
    elif kind == 6:  # a constant item and a near-constant one (rounding only)
        x[:, 0] = 3.0
        if shape[1] > 1:
            x[:, 1] = 0.3
            x[::2, 1] = 0.1 + 0.2
    elif kind == 7:  # items of very different magnitudes
        x = x * 10.0 ** rng.integers(-250, 250, size=(1, shape[1]))
    return x


def _case(rng: np.random.Generator, shape: tuple[int, int]) -> tuple[np.ndarray, np.ndarray]:
    Y = _values(rng, int(rng.integers(0, 8)), shape)
    X = _values(rng, int(rng.integers(0, 8)), shape)
    if rng.random() < 0.5:  # a metric that agrees with the humans
        X = X + np.where(np.isfinite(Y), np.nan_to_num(Y) * float(rng.normal()), 0.0)
    rate = float(rng.choice([0.0, 0.1, 0.3, 0.6]))
    X[rng.random(shape) < rate] = np.nan
    Y[rng.random(shape) < rate / 2] = np.nan
    return X, Y


def _check(X: np.ndarray, Y: np.ndarray, coef: str, B: int, seed: int | None,
           chunk_cells: int = 4_000_000) -> None:
    observed, ref = _old_draws(X, Y, coef, B, seed, chunk_cells)
    Xc, Yc, okc = _packed(X, Y)
    new = levels._permutation_means(Xc, Yc, coef, okc, B, seed)
    np.testing.assert_array_equal(new, ref)
    p, n = item_permutation_pvalue(X, Y, coef, n_resamples=B, seed=seed)
    want = _old_pvalue(observed, ref)
    assert n == B
    assert (math.isnan(p) and math.isnan(want)) or p == want


@pytest.mark.parametrize("coef", COEFFICIENTS)
def test_every_draw_equals_the_array_code(coef: str) -> None:
    rng = np.random.default_rng(2026 + COEFFICIENTS.index(coef))
    for _ in range(120):
        shape = (int(rng.integers(3, 15)), int(rng.integers(1, 12)))  # (systems, items)
        X, Y = _case(rng, shape)
        _check(X, Y, coef, int(rng.choice([20, 57])), int(rng.integers(0, 4)))


@pytest.mark.parametrize("coef", COEFFICIENTS)
def test_long_rows_and_many_items(coef: str) -> None:
    """Rows longer than 128 systems (numpy's pairwise sum splits them) and longer than the
    Kendall sign tables (the array code is kept there), and 150 items of 11 systems."""
    rng = np.random.default_rng(7)
    for shape in ((150, 4), (70, 5), (11, 150), (33, 6)):
        X, Y = _case(rng, shape)
        _check(X, Y, coef, 15, 1)


@pytest.mark.parametrize("cells", [60 * 7, 1])
def test_several_chunks(monkeypatch: pytest.MonkeyPatch, cells: int) -> None:
    """Chunks of 7 permutations, and of one (a study too large for one chunk)."""
    rng = np.random.default_rng(11)
    monkeypatch.setattr(levels, "_CHUNK_CELLS", cells)
    for coef in COEFFICIENTS:
        for _ in range(5):
            X, Y = _case(rng, (6, 10))
            _check(X, Y, coef, 40, 3, chunk_cells=cells)


def test_the_reference_can_fail() -> None:
    """A different seed gives other draws: the comparison above can fail."""
    rng = np.random.default_rng(3)
    Y = rng.normal(size=(8, 20))
    X = Y + rng.normal(size=(8, 20))
    Xc, Yc, okc = _packed(X, Y)
    _, ref = _old_draws(X, Y, "pearson", 50, 0)
    assert not np.array_equal(levels._permutation_means(Xc, Yc, "pearson", okc, 50, 1), ref)


def test_recent_shuffles_are_kept_and_give_the_reference() -> None:
    """Metrics with missing cells of their own alternate with complete ones: the shuffles
    of the last few patterns are reused (the same arrays), the p-values stay the reference's."""
    rng = np.random.default_rng(12)
    levels._SHUFFLES.clear()
    Y = rng.normal(size=(7, 9))
    metrics = []
    for k in range(6):
        X = Y + rng.normal(size=Y.shape)
        if k % 2:
            X[rng.random(X.shape) < 0.2] = np.nan  # a pattern of its own
        metrics.append(X)
    for _ in range(2):
        for X in metrics[:4]:  # two patterns of their own and the complete one
            for coef in COEFFICIENTS:
                _check(X, Y, coef, 30, 0)
    assert len(levels._SHUFFLES) == 3
    okc = _packed(metrics[1], Y)[2]
    assert levels._permutation_chunks(okc, 30, 0) is levels._permutation_chunks(okc, 30, 0)
    for X in metrics[4:] + [Y + 1.0, np.where(Y > 1.5, np.nan, Y)]:
        _check(X, Y, "pearson", 30, 0)
    assert len(levels._SHUFFLES) == levels._SHUFFLES_KEPT
    kept = [k[3] for k in levels._SHUFFLES]
    assert okc.tobytes() in kept  # used again above: kept
    assert _packed(metrics[3], Y)[2].tobytes() not in kept  # the least recently used left
