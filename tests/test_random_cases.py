"""The shared random-case generator of the equality tests (``tests/_random_cases.py``) draws
what its kinds promise: a test that relies on a kind for its awkward input would otherwise go
on passing after the input lost what made it awkward."""

from __future__ import annotations

import numpy as np
import pytest
from _random_cases import KINDS, random_case

SIZES = {"systems": (3, 12), "items": (4, 60)}


@pytest.mark.parametrize("seed", range(20))
def test_every_kind_draws_what_it_promises(seed: int) -> None:
    cases = {kind: random_case(kind, seed, **SIZES) for kind in KINDS}
    shape = cases["ties"][0].shape
    assert 3 <= shape[0] < 12 and 4 <= shape[1] < 60
    for X, Y in cases.values():
        assert X.shape == Y.shape == shape and X.dtype == Y.dtype == np.float64
    X, Y = cases["ties"]
    assert set(np.unique(Y)) <= {0.0, 1.0, 2.0, 3.0, 4.0} and np.isfinite(X).all()
    assert np.array_equal(X, np.round(X, 1))
    X, Y = cases["nan"]
    assert np.isnan(X).any() or np.isnan(Y).any()
    X, Y = cases["constant_items"]
    assert (Y[:, : shape[1] // 2] == 3.0).all() and (X[:, 0] == 1.0).all()
    assert 0 < np.ptp(X[:, 1]) < 1e-13  # near-constant, not constant
    X, _ = cases["constant"]
    assert (X == 2.0).all()
    X, Y = cases["extreme"]
    assert (X[0] == 1e-200).all() and np.nanmax(np.abs(X)) > 1e199
    assert 0 < np.abs(Y).max() < 1e-199
    X, Y = cases["continuous"]
    assert np.unique(X).size == X.size and np.unique(Y).size == Y.size


def test_a_case_is_fixed_by_its_kind_seed_and_sizes() -> None:
    a = random_case("nan", 3, **SIZES)
    b = random_case("nan", 3, **SIZES)
    for u, v in zip(a, b, strict=True):
        np.testing.assert_array_equal(u, v)
    # the same seed gives the same shape and base scores whatever the kind
    assert random_case("ties", 3, **SIZES)[1].shape == a[1].shape
    np.testing.assert_array_equal(random_case("ties", 3, **SIZES)[1],
                                  random_case("constant", 3, **SIZES)[1])
    with pytest.raises(ValueError, match="unknown kind"):
        random_case("nans", 3, **SIZES)
