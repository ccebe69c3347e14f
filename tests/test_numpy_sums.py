"""The one compiled copy of numpy's pairwise summation adds exactly as numpy does.

``nlgeval.correlation._numpy_sums.pairwise_sum`` is what the item-level bootstrap, the
item-level permutation test and PERM-BOTH's item level call to take their means over items
in numpy's order; their tests compare whole distributions with the array code, this one the
sum itself with ``np.add.reduce`` / ``np.sum`` (the reference: numpy), exactly (``==``, the
sign of a zero and NaN included), on every length 0..300 (each side of numpy's 8-value
unrolling and 128-value blocks) at random offsets into a longer array, and on long rows.
"""

from __future__ import annotations

import numpy as np
import pytest

from nlgeval.correlation._numpy_sums import _block_sum, pairwise_sum


def _same(a: float, b: float) -> bool:
    """Equal floats, the sign of a zero included; NaN equals NaN."""
    if np.isnan(a) or np.isnan(b):
        return bool(np.isnan(a) and np.isnan(b))
    return a == b and np.signbit(a) == np.signbit(b)


def _values(rng: np.random.Generator, size: int, kind: str) -> np.ndarray:
    """Doubles spread over many magnitudes, with the awkward cases the kernels meet."""
    if kind == "spread":
        return rng.normal(size=size) * 10.0 ** rng.integers(-12, 12, size=size)
    if kind == "extreme":  # near the overflow and underflow ends, and subnormals
        scale = rng.choice([1e200, 1e-200, 1e-318, 1.0], size=size)
        return rng.normal(size=size) * scale
    if kind == "ties":  # small integers and halves: many equal partial sums
        return rng.integers(-3, 4, size=size) / 2.0
    if kind == "zeros":  # signed zeros: numpy turns a sum of -0.0 into 0.0
        return np.where(rng.random(size) < 0.5, -0.0, 0.0) if size else np.zeros(0)
    if kind == "nonfinite":
        x = rng.normal(size=size)
        if size:
            x[rng.integers(size)] = rng.choice([np.nan, np.inf, -np.inf])
        return x
    raise AssertionError(kind)


@pytest.mark.parametrize("kind", ["spread", "extreme", "ties", "zeros", "nonfinite"])
def test_every_length_up_to_300_at_random_offsets(kind: str) -> None:
    rng = np.random.default_rng(2024)
    for n in range(301):
        for _ in range(3):
            lo = int(rng.integers(0, 40))
            a = _values(rng, lo + n + int(rng.integers(0, 40)), kind)
            row = np.ascontiguousarray(a[lo:lo + n])
            expected = np.add.reduce(row[None, :], axis=1)[0]
            got = 0.0 + pairwise_sum(a, lo, n)
            assert _same(got, expected), (kind, n, lo, got, expected)
            assert _same(got, np.sum(row)), (kind, n, lo)
            if n <= 128:
                assert _same(0.0 + _block_sum(a, lo, n), expected), (kind, n, lo)


@pytest.mark.parametrize("n", [1, 7, 8, 9, 100, 128, 129, 300, 1000, 4099, 20000, 250_000])
def test_long_rows_are_numpys(n: int) -> None:
    rng = np.random.default_rng(n)
    for _ in range(5):
        x = rng.normal(size=n) * 10.0 ** rng.integers(-8, 8, size=n)
        assert 0.0 + pairwise_sum(x, 0, n) == np.add.reduce(x[None, :], axis=1)[0]
        lo = int(rng.integers(1, 50))
        y = np.concatenate([rng.normal(size=lo), x])
        assert 0.0 + pairwise_sum(y, lo, n) == np.add.reduce(x)


def test_the_order_matters_so_the_test_can_fail() -> None:
    # a row whose left-to-right sum differs from numpy's pairwise sum: equality above is not
    # a property of any order of addition
    rng = np.random.default_rng(7)
    for _ in range(100):
        x = rng.normal(size=1000) * 10.0 ** rng.integers(-8, 8, size=1000)
        left_to_right = 0.0
        for v in x:
            left_to_right += v
        if left_to_right != np.add.reduce(x):
            assert 0.0 + pairwise_sum(x, 0, x.size) != left_to_right
            return
    raise AssertionError("no row told the two orders apart")
