"""Input checks of :mod:`nlgeval.correlation.ranking` (the WMT rank clusters and leaderboard of
Freitag et al. 2021-2024): p-value tables, PERM-BOTH draws and task weights.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, TypeAlias

import numpy as np
import pandas as pd

from nlgeval.errors import InputError

PValues: TypeAlias = Mapping[tuple[str, str], float] | pd.DataFrame
Range = tuple[float, float]

#: Rescaling ranges of MTME ``tasks.TaskResults.range``: accuracies (pairwise accuracy, soft
#: pairwise accuracy, acc23 / acc_eq) live in [0, 1]; correlations (Pearson, Kendall, tau_23)
#: in [-1, 1].
STATISTIC_RANGES: dict[str, Range] = {"accuracy": (0.0, 1.0), "correlation": (-1.0, 1.0)}


def _as_range(value: Range | str) -> Range:
    if isinstance(value, str):
        key = value.strip().lower()
        if key not in STATISTIC_RANGES:
            raise InputError(f"unknown statistic range {value!r} (use one of: "
                             f"{', '.join(STATISTIC_RANGES)}, or a (low, high) pair)")
        return STATISTIC_RANGES[key]
    try:
        b, e = (float(v) for v in value)
    except (TypeError, ValueError):
        raise InputError(f"statistic range must be a (low, high) pair, got {value!r}") from None
    if not (np.isfinite(b) and np.isfinite(e) and b < e):
        raise InputError(f"statistic range must have finite low < high, got {value!r}")
    return b, e


def _pvalue_lookup(pvalues: PValues) -> dict[tuple[str, str], float]:
    """``{(metric_a, metric_b): p}`` from a mapping or a ``metric_a, metric_b, pvalue`` frame."""
    if isinstance(pvalues, pd.DataFrame):
        miss = [c for c in ("metric_a", "metric_b", "pvalue") if c not in pvalues.columns]
        if miss:
            raise InputError(f"p-value table needs columns metric_a, metric_b, pvalue; "
                             f"missing {miss}")
        return {(str(a), str(b)): float(p) for a, b, p in
                zip(pvalues["metric_a"], pvalues["metric_b"], pvalues["pvalue"], strict=True)}
    out = {}
    for key, p in pvalues.items():
        if not (isinstance(key, tuple) and len(key) == 2):
            raise InputError(f"p-values are keyed by (metric_a, metric_b) pairs, got {key!r}")
        out[(str(key[0]), str(key[1]))] = float(p)
    return out


def _check_draws(name: str, draws: Mapping[tuple[str, str], Any], stats: Mapping[str, float]
                 ) -> dict[tuple[str, str], tuple[np.ndarray, np.ndarray]]:
    """A task's PERM-BOTH draws checked: keyed by two different metrics with a statistic, two
    1-D numeric arrays of the same non-zero length each."""
    out: dict[tuple[str, str], tuple[np.ndarray, np.ndarray]] = {}
    for key, pair in draws.items():
        if not (isinstance(key, tuple) and len(key) == 2) or key[0] == key[1]:
            raise InputError(f"task {name!r}: draws are keyed by a pair of two "
                             f"different metrics, got {key!r}")
        a, b = str(key[0]), str(key[1])
        for m in (a, b):
            if m not in stats:
                raise InputError(f"task {name!r}: draws for metric {m!r}, which has "
                                 "no statistic")
        try:
            da, db = (np.asarray(d, dtype=float) for d in pair)
        except (TypeError, ValueError):
            raise InputError(f"task {name!r}: draws for {key!r} must be two numeric "
                             "arrays (draws_a, draws_b)") from None
        if da.ndim != 1 or da.shape != db.shape or da.size == 0:
            raise InputError(f"task {name!r}: draws for {key!r} must be two 1-D "
                             f"arrays of the same non-zero length, got shapes {da.shape} "
                             f"and {db.shape}")
        out[(a, b)] = (da, db)
    return out


def _check_weights(weights: Mapping[str, float] | Sequence[float] | np.ndarray | None,
                   names: list[str]) -> np.ndarray:
    """Task weights (by task name or in task order; default equal), checked, not normalised."""
    if weights is None:
        w = np.ones(len(names))
    elif isinstance(weights, Mapping):
        unknown = sorted(set(map(str, weights)) - set(names))
        missing = [n for n in names if n not in weights]
        if unknown or missing:
            raise InputError(f"weights must name every task exactly: unknown {unknown}, "
                             f"missing {missing}")
        w = np.array([float(weights[n]) for n in names])
    else:
        w = np.asarray(list(weights), dtype=float)
        if w.shape != (len(names),):
            raise InputError(f"{len(names)} tasks but {w.size} weights")
    if not np.all(np.isfinite(w)) or np.any(w < 0) or w.sum() <= 0:
        raise InputError(f"weights must be finite, non-negative and not all zero, got {list(w)}")
    return w


def _walk_ranks(sig: np.ndarray) -> list[int]:
    """The WMT rank walk (MTME ``data.AssignRanks``) over a boolean (n, n) matrix whose rows and
    columns are sorted best first, ``sig[j, i]``: metric j beats metric i significantly.

    The rank increases at ``i`` when some ``j`` in ``[start, i)`` beats it, i.e. when the last
    ``j < i`` that beats it is ``>= start``; that index is found for every ``i`` at once."""
    n = sig.shape[0]
    if n == 0:
        return []
    up = np.triu(sig, 1)
    last = np.where(up.any(axis=0), n - 1 - up[::-1].argmax(axis=0), -1).tolist()
    ranks = []
    rank, start = 1, 0
    for i, j in enumerate(last):
        if j >= start:
            rank += 1
            start = i
        ranks.append(rank)
    return ranks


def _walk_ranks_list(values: list[float], sig: list[list[bool]]) -> list[int]:
    """:func:`_walk_ranks` in plain Python, in input order: metrics sorted best first (stable,
    ties in input order), ``sig[a][b]``: metric a beats metric b significantly."""
    order = sorted(range(len(values)), key=lambda i: -values[i])
    out = [0] * len(values)
    rank, start = 1, 0
    for i, oi in enumerate(order):
        for j in range(start, i):
            if sig[order[j]][oi]:
                rank, start = rank + 1, i
                break
        out[oi] = rank
    return out
