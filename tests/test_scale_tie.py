"""Tie calibration once per metric (issue 31): the search is remembered by the groups' contents,
so acc_eq and every acc_eq comparison of the same metric reuse one search, with the same
epsilon as a fresh search."""

from __future__ import annotations

import numpy as np
import pytest

import nlgeval.correlation.kendall.tie_search as ts
from nlgeval.correlation.kendall import build_groups
from nlgeval.correlation.kendall.tie_calibration import acc_eq_permutation_test, tie_calibration


def _metrics(seed: int = 0) -> tuple[list[np.ndarray], np.ndarray]:
    rng = np.random.default_rng(seed)
    Y = rng.integers(0, 5, size=(6, 40)).astype(float)  # many human ties, as MQM scores
    return [np.round(Y + k * rng.normal(size=Y.shape), 2) for k in (0.5, 1.0, 2.0)], Y


@pytest.fixture
def counted(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    calls: list[int] = []
    real = ts._calibrate

    def counting(*args, **kwargs):  # type: ignore[no-untyped-def]
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(ts, "_calibrate", counting)
    monkeypatch.setattr(ts, "_SEARCHES", {})
    return calls


def test_one_search_per_metric_and_grouping(counted: list[int]) -> None:
    Xs, Y = _metrics()
    for grouping in ("item", "segment"):
        eps = [tie_calibration(X, Y, grouping).epsilon for X in Xs]
        for a in range(3):
            for b in range(a + 1, 3):
                res = acc_eq_permutation_test(Xs[a], Xs[b], Y, grouping, n_resamples=50)
                assert (res.epsilon_a, res.epsilon_b) == (eps[a], eps[b])
    assert len(counted) == 3 * 2  # three metrics, two groupings


def test_remembered_search_equals_a_fresh_one(counted: list[int]) -> None:
    Xs, Y = _metrics(3)
    for X in Xs:
        groups = build_groups(X, Y, "item")
        first = ts.calibrate_groups(groups)
        again = ts.calibrate_groups(build_groups(X.copy(), Y.copy(), "item"))
        ts._SEARCHES.clear()
        fresh = ts.calibrate_groups(groups)
        assert first == again == fresh
    # other contents or other search options are other searches
    X2 = Xs[0].copy()
    X2[0, 0] += 0.5
    ts.calibrate_groups(build_groups(X2, Y, "item"))
    ts.calibrate_groups(build_groups(Xs[0], Y, "item"), integer_weights=False)
    assert len(counted) == 3 * 2 + 2
