"""The compiled average-rank kernel gives scipy's ranks bit for bit (and so the same Spearman).

Reference: ``scipy.stats.rankdata(method="average")`` on the valid entries of each row (invalid
ones set to +inf, as :func:`nlgeval.correlation.coefficients._masked_ranks` does).
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from nlgeval.correlation import coefficients
from nlgeval.correlation._rank_kernels import masked_average_ranks


def _scipy_ranks(x: np.ndarray, valid: np.ndarray) -> np.ndarray:
    ranks = stats.rankdata(np.where(valid, x, np.inf), axis=-1, method="average")
    return np.where(valid, ranks, np.nan)


@pytest.mark.parametrize("m", [1, 2, 3, 11, 32, 33, 40, 257])
def test_ranks_equal_scipy_bit_for_bit(m: int) -> None:
    rng = np.random.default_rng(m)
    for case in range(6):
        x = rng.normal(size=(7, 5, m))
        if case % 2:
            x = np.round(2 * x)  # many ties
        if case == 2:
            x[..., :] = 0.3
            x[..., 0] = 0.1 + 0.2  # near-equal, not equal
        if case == 3:
            x[rng.random(x.shape) < 0.3] = -0.0  # -0.0 ties with 0.0
        x[rng.random(x.shape) < 0.15] = np.nan
        valid = np.isfinite(x) & (rng.random(x.shape) < 0.9)
        got = masked_average_ranks(x, valid)
        assert np.array_equal(got, _scipy_ranks(x, valid), equal_nan=True)


def test_known_ranks() -> None:
    x = np.array([[3.0, 1.0, 3.0, 2.0, np.nan]])
    assert masked_average_ranks(x, np.isfinite(x)).tolist()[0][:4] == [3.5, 1.0, 3.5, 2.0]


def test_batch_spearman_same_with_and_without_kernel(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(3)
    x = np.round(rng.normal(size=(400, 60, 11)) * 2)
    y = np.round(rng.normal(size=(400, 60, 11)) + x / 2)
    x[rng.random(x.shape) < 0.1] = np.nan
    kernel = coefficients.batch_correlation(x, y, "spearman")
    monkeypatch.setattr(coefficients, "_KERNEL_RANKS_MIN", 10**12)
    scipy_path = coefficients.batch_correlation(x, y, "spearman")
    assert np.array_equal(kernel, scipy_path, equal_nan=True)
    assert np.isfinite(kernel).mean() > 0.9
