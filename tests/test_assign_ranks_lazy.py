"""``assign_ranks`` reads only the p-values its walk needs and builds its frame on first use,
and gives the frames it gave before, on thousands of random cases.

The reference below is ``assign_ranks`` as it was before (every p-value normalised into a dict
first, the DataFrame built at once), copied verbatim. The new function must return an equal
frame (``assert_frame_equal``, dtypes included) for mappings and long tables of p-values,
ties, NaN and missing p-values, NaN statistics, non-string metric names and p-values given as
numpy scalars or strings, and raise the same errors.
"""

from __future__ import annotations

import copy
import math
import pickle
from typing import Any

import numpy as np
import pandas as pd
import pytest

from nlgeval.correlation._ranking_checks import _pvalue_lookup
from nlgeval.correlation.ranking import RankFrame, assign_ranks
from nlgeval.errors import InputError


def _old_assign_ranks(statistics: Any, pvalues: Any, alpha: float = 0.05) -> pd.DataFrame:
    """The code before the lazy frame, verbatim."""
    if not 0 < alpha < 1:
        raise InputError(f"alpha must be in (0, 1), got {alpha}")
    pv = _pvalue_lookup(pvalues)
    stats = {str(m): float(v) for m, v in statistics.items()}
    ranked = sorted((m for m in stats if math.isfinite(stats[m])), key=lambda m: (-stats[m], m))
    ranks: list[Any] = []
    rank, start = 1, 0
    for i, b in enumerate(ranked):
        for j in range(start, i):
            if pv.get((ranked[j], b), math.nan) <= alpha:
                rank, start = rank + 1, i
                break
        ranks.append(rank)
    undefined = sorted(m for m in stats if not math.isfinite(stats[m]))
    if not stats:
        df = pd.DataFrame([], columns=["metric", "statistic", "rank"])
        df["rank"] = df["rank"].astype("Int64")
        return df
    names = ranked + undefined
    return pd.DataFrame({"metric": names, "statistic": np.array([stats[m] for m in names]),
                         "rank": pd.array(ranks + [pd.NA] * len(undefined), dtype="Int64")})


def _case(rng: np.random.Generator) -> tuple[dict[Any, float], Any, float]:
    n = int(rng.integers(0, 30))
    int_names = rng.random() < 0.1
    names: list[Any] = list(range(n)) if int_names else [f"m{i:02d}" for i in range(n)]
    rng.shuffle(names)
    values = rng.choice([0.5, 0.6, 0.7, 0.8, 0.9], n) + rng.integers(0, 3, n) * 0.01  # ties
    values[rng.random(n) < 0.1] = np.nan
    values[rng.random(n) < 0.02] = -np.inf
    stats = dict(zip(names, values.tolist(), strict=True))
    p = rng.uniform(0, 0.12, (n, n))
    p[rng.random((n, n)) < 0.1] = np.nan
    p[rng.random((n, n)) < 0.05] = 0.05                 # exactly alpha: significant
    keep = rng.random((n, n)) >= rng.choice([0.0, 0.0, 0.3])   # some pairs missing
    kind = rng.choice(["float", "numpy", "str", "frame", "strkeys"])
    pv: dict[Any, Any] = {}
    for i in range(n):
        for j in range(n):
            if i == j or not keep[i, j]:
                continue
            a, b = names[i], names[j]
            if kind == "strkeys":
                a, b = str(a), str(b)
            v = float(p[i, j])
            pv[(a, b)] = np.float64(v) if kind == "numpy" else (repr(v) if kind == "str" else v)
    if kind == "frame":
        table = pd.DataFrame([(a, b, v) for (a, b), v in pv.items()],
                             columns=["metric_a", "metric_b", "pvalue"])
        return stats, table, 0.05
    return stats, pv, float(rng.choice([0.05, 0.01, 0.1]))


@pytest.mark.parametrize("seed", range(4))
def test_same_frames_as_before(seed: int) -> None:
    rng = np.random.default_rng(seed)
    for _ in range(500):
        stats, pv, alpha = _case(rng)
        expected = _old_assign_ranks(stats, pv, alpha)
        got = assign_ranks(stats, pv, alpha)
        pd.testing.assert_frame_equal(got, expected, check_exact=True)


def test_the_test_can_fail() -> None:
    # a different alpha changes some ranks: the comparison above sees the ranks
    rng = np.random.default_rng(11)
    for _ in range(200):
        stats, pv, _ = _case(rng)
        if not assign_ranks(stats, pv, 0.01).equals(_old_assign_ranks(stats, pv, 0.10)):
            return
    raise AssertionError("no case told alpha 0.01 from 0.10")


def test_same_errors_as_before() -> None:
    bad: list[tuple[Any, Any]] = [
        ({"x": 1.0}, {"x": 0.1}),                        # a key that is not a pair
        ({"x": 1.0, "y": 0.5}, {("x", "y", "z"): 0.1}),  # a triple
        ({"x": 1.0}, pd.DataFrame({"a": [1]})),          # a table without the columns
        ({}, {"x": 0.1}),
    ]
    for stats, pv in bad:
        with pytest.raises(InputError) as old:
            _old_assign_ranks(stats, pv)
        with pytest.raises(InputError) as new:
            assign_ranks(stats, pv)
        assert str(new.value) == str(old.value)
    with pytest.raises(InputError, match="alpha"):
        assign_ranks({"x": 1.0}, {}, alpha=1.0)
    # a needed pair under another key type, then a non-pair key: the full check finds it
    with pytest.raises(InputError):
        assign_ranks({"1": 0.9, "2": 0.5}, {(1, 2): 0.01, "x": 0.2})
    with pytest.raises(ValueError):                      # not a number, as before
        assign_ranks({"x": 1.0, "y": 0.5}, {("x", "y"): "small"})


def test_the_frame_is_built_on_first_use_and_is_a_dataframe() -> None:
    def make() -> pd.DataFrame:
        return assign_ranks({"A": 0.9, "B": 0.6, "C": math.nan}, {("A", "B"): 0.01})

    expected = pd.DataFrame({"metric": ["A", "B", "C"], "statistic": [0.9, 0.6, math.nan],
                             "rank": pd.array([1, 2, pd.NA], dtype="Int64")})
    frame = make()
    assert type(frame) is RankFrame and isinstance(frame, pd.DataFrame)
    assert frame["rank"].tolist() == [1, 2, pd.NA]
    assert type(frame) is pd.DataFrame                  # a plain frame once used
    pd.testing.assert_frame_equal(frame, expected)
    for use in (len, repr, lambda f: f.shape, lambda f: f.to_csv(), lambda f: f.attrs,
                copy.copy, copy.deepcopy, lambda f: pd.concat([f, f]), lambda f: f.metric,
                lambda f: pickle.loads(pickle.dumps(f))):
        f = make()
        use(f)
        assert type(f) is pd.DataFrame
        pd.testing.assert_frame_equal(f, expected)
    back = pickle.loads(pickle.dumps(make()))
    assert type(back) is pd.DataFrame
    pd.testing.assert_frame_equal(back, expected)


def test_threads_reading_a_fresh_frame_all_see_it() -> None:
    import threading

    for _ in range(50):
        frame = assign_ranks({"A": 0.9, "B": 0.6, "C": 0.1}, {("A", "B"): 0.01})
        seen: list[list[object]] = []
        def read(frame: pd.DataFrame = frame, seen: list[list[object]] = seen) -> None:
            seen.append(frame["rank"].tolist())

        threads = [threading.Thread(target=read) for _ in range(6)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert seen == [[1, 2, 2]] * 6
