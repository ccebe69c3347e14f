"""Rank clusters of metrics and the WMT23/WMT24 overall score (the "metric leaderboard").

* :func:`assign_ranks` -- the rank rule of the WMT metrics shared tasks (MTME
  ``data.AssignRanks``, used since Freitag et al. 2021, "Results of the WMT21 Metrics Shared
  Task"): metrics sorted by statistic, best first (ties broken by name); walking down the list,
  the rank increases at metric ``i`` if any metric since the start of the current cluster beats
  it with one-sided ``p <= alpha``, and the cluster then starts at ``i``. So rank 1 holds the
  best metric and every metric not significantly beaten by a metric of rank 1 that precedes it.
* :func:`rank_clusters` -- the same rule on arrays (statistics and a p-value matrix), without
  the DataFrame.
* :func:`overall_score` -- the WMT23 (Freitag et al. 2023, "Results of WMT23 Metrics Shared
  Task") and WMT24 (Freitag et al. 2024, "Are LLMs Breaking MT Metrics? Results of the WMT24
  Metrics Shared Task") overall score: each task's statistic rescaled to [0, 1] by
  ``(x - b) / (e - b)`` with range ``(b, e) = (0, 1)`` for accuracies and ``(-1, 1)`` for
  correlations, then the weighted mean over tasks; the rank clusters of the average come from
  the PERM-BOTH draws of every task, rescaled the same way and summed with the same weights
  (MTME ``tasks.TaskSetResults.AverageCorrMatrix``).

Deliberate differences from MTME are listed in docs/pairwise.md: p-values are
``(1 + #{d* >= d}) / (1 + K)`` (Phipson & Smyth 2010) instead of ``#{d* >= d} / K``; when tasks
carry different numbers of draws the first ``min K`` of each are summed (MTME tiles the shorter
ones); weights are normalised to sum to 1.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from nlgeval.correlation._ranking_checks import (
    STATISTIC_RANGES,  # noqa: F401  (re-exported: the rescaling ranges)
    PValues,
    Range,
    _as_range,
    _check_draws,
    _check_weights,
    _pvalue_lookup,
    _walk_ranks,
    _walk_ranks_list,
)
from nlgeval.errors import InputError
from nlgeval.results import Result


def assign_ranks(
    statistics: Mapping[str, float], pvalues: PValues, alpha: float = 0.05
) -> pd.DataFrame:
    """Rank clusters by the WMT rule (MTME ``data.AssignRanks``).

    ``statistics`` maps each metric to its statistic (higher = better). ``pvalues`` maps an
    ordered pair ``(a, b)`` to the one-sided p-value of H1 "a is better than b" (or is a long
    frame with columns ``metric_a, metric_b, pvalue``, as
    :func:`~nlgeval.correlation.permutation.comparison_matrix` returns). Metrics are sorted by
    statistic, best first, ties broken by name (as MTME does). Walking down the list, the rank
    increases at metric ``i`` if some metric ``j`` with ``start <= j < i`` has
    ``p(j better than i) <= alpha``; ``start`` then becomes ``i``. A missing or NaN p-value
    counts as "not significant". Metrics with a NaN statistic get rank NA and come last.

    Returns a frame ``metric, statistic, rank`` (rank as pandas ``Int64``), best first.

    Parameters
    ----------
    statistics : Mapping[str, float]
        Each metric's statistic, higher is better.
    pvalues : Mapping[tuple[str, str], float] or pandas.DataFrame
        One-sided p-value of "a better than b" per ordered pair, or a long frame.
    alpha : float
        Significance level (default 0.05).

    Returns
    -------
    pandas.DataFrame
        ``metric, statistic, rank``, best first.

    Examples
    --------
    >>> pvalues = {("A", "B"): 0.30, ("A", "C"): 0.01, ("B", "C"): 0.02}
    >>> assign_ranks({"A": 0.90, "B": 0.85, "C": 0.60}, pvalues)
      metric  statistic  rank
    0      A       0.90     1
    1      B       0.85     1
    2      C       0.60     2
    """
    if not 0 < alpha < 1:
        raise InputError(f"alpha must be in (0, 1), got {alpha}")
    pv = _pvalue_lookup(pvalues)
    stats = {str(m): float(v) for m, v in statistics.items()}
    ranked = sorted((m for m in stats if math.isfinite(stats[m])), key=lambda m: (-stats[m], m))
    # the walk of _walk_ranks on the pairs it needs (a NaN or missing p is never <= alpha)
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
    # columns, not rows: no type inference per row and no second pass for the Int64 ranks
    return pd.DataFrame({"metric": names, "statistic": np.array([stats[m] for m in names]),
                         "rank": pd.array(ranks + [pd.NA] * len(undefined), dtype="Int64")})


def rank_clusters(values: Any, pvalues: Any, alpha: float = 0.05) -> np.ndarray:
    """:func:`assign_ranks` on arrays (Freitag et al. 2021; MTME ``data.AssignRanks``): the
    rank of every metric, in input order, from its statistic ``values[i]`` (finite, higher =
    better) and ``pvalues[i, j]``, the one-sided p-value of "metric i beats metric j" (NaN:
    not significant). Metrics are walked best first, ties in input order.

    Examples
    --------
    >>> import numpy as np
    >>> p = np.array([[np.nan, 0.30, 0.01], [0.70, np.nan, 0.02], [0.99, 0.98, np.nan]])
    >>> rank_clusters([0.90, 0.85, 0.60], p)
    array([1, 1, 2])
    """
    v = np.asarray(values, dtype=float)
    P = np.asarray(pvalues, dtype=float)
    if v.ndim != 1 or P.shape != (v.size, v.size):
        raise InputError(f"rank_clusters needs n statistics and an (n, n) p-value matrix, got "
                         f"shapes {v.shape} and {P.shape}")
    if not np.isfinite(v).all():
        raise InputError("rank_clusters needs finite statistics (leave undefined ones out)")
    if not 0 < alpha < 1:
        raise InputError(f"alpha must be in (0, 1), got {alpha}")
    if v.size <= 24:   # few metrics: the walk in Python beats array calls (same rule)
        return np.array(_walk_ranks_list(v.tolist(), (P <= alpha).tolist()), dtype=np.int64)
    order = np.argsort(-v, kind="stable")
    sig = P[order][:, order] <= alpha
    ranks = np.empty(v.size, dtype=np.int64)
    ranks[order] = _walk_ranks(sig)
    return ranks


@dataclass(frozen=True)
class TaskResult(Result):
    """One task of a leaderboard: one statistic on one data set for every metric.

    ``statistic_range`` is ``(low, high)`` or ``"accuracy"`` (0, 1) / ``"correlation"``
    (-1, 1). ``statistics`` maps metric -> statistic (higher = better). ``draws`` maps an
    ordered metric pair ``(a, b)`` to the PERM-BOTH draws ``(draws_a, draws_b)``: the
    statistic of the metric in slot A / slot B after each swap, as carried by
    :class:`~nlgeval.correlation.permutation.PermutationComparison` (the result of every PERM-BOTH
    test, ``permutation_test`` included). One entry per unordered pair is
    enough (``(b, a)`` is read as ``(a, b)`` with the slots exchanged).

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)        # stand-in PERM-BOTH draws around 0.78
    >>> draws = (0.78 + rng.normal(0, 0.02, 200), 0.78 + rng.normal(0, 0.02, 200))
    >>> task = TaskResult("sys_spa", "accuracy", {"A": 0.82, "B": 0.75}, {("A", "B"): draws})
    >>> task.statistic_range, task.rescale(0.82)
    ((0.0, 1.0), 0.82)
    >>> task.to_dict()                        # the draws are left out
    {'name': 'sys_spa', 'statistic_range': [0.0, 1.0], 'statistics': {'A': 0.82, 'B': 0.75}}
    """

    _omit = frozenset({"draws"})

    name: str
    statistic_range: Range
    statistics: Mapping[str, float]
    draws: Mapping[tuple[str, str], tuple[np.ndarray, np.ndarray]] = field(
        default_factory=dict, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not str(self.name).strip():
            raise InputError("a task needs a non-empty name")
        object.__setattr__(self, "name", str(self.name))
        object.__setattr__(self, "statistic_range", _as_range(self.statistic_range))
        stats = {}
        for m, v in self.statistics.items():
            try:
                stats[str(m)] = float(v)
            except (TypeError, ValueError):
                raise InputError(f"task {self.name!r}: statistic of metric {m!r} is not a "
                                 f"number: {v!r}") from None
        object.__setattr__(self, "statistics", stats)
        object.__setattr__(self, "draws", _check_draws(self.name, self.draws, stats))

    @classmethod
    def from_comparisons(
        cls,
        name: str,
        statistic_range: Range | str,
        statistics: Mapping[str, float],
        comparisons: Mapping[tuple[str, str], Any],
    ) -> TaskResult:
        """Build from metric-pair test results that carry ``draws_a`` and ``draws_b``.

        Examples
        --------
        >>> import numpy as np
        >>> from nlgeval.correlation.pairwise import pairwise_accuracy_test
        >>> X = np.array([[0.9, 0.8, 0.7, 0.6], [0.5, 0.6, 0.4, 0.5], [0.2, 0.3, 0.1, 0.2]])
        >>> Y = np.array([[5, 4, 4, 5], [3, 4, 3, 3], [4, 2, 1, 2]], dtype=float)
        >>> test = pairwise_accuracy_test(X, X[[1, 0, 2]], Y, n_resamples=200, seed=1)
        >>> task = TaskResult.from_comparisons(
        ...     "sys_acc", "accuracy", {"A": test.statistic_a, "B": test.statistic_b},
        ...     {("A", "B"): test})
        >>> task_ranking(task)["rank"].tolist()          # 3 systems: too few to separate A and B
        [1, 1]
        """
        draws = {}
        for key, res in comparisons.items():
            if not (hasattr(res, "draws_a") and hasattr(res, "draws_b")):
                raise InputError(f"task {name!r}: the result for {key!r} has no draws_a / "
                                 "draws_b (run the permutation test first)")
            draws[key] = (res.draws_a, res.draws_b)
        return cls(name, statistic_range, statistics, draws)  # type: ignore[arg-type]  # __post_init__ resolves names

    def rescale(self, value: float | np.ndarray) -> float | np.ndarray:
        """``(value - low) / (high - low)`` (MTME ``TaskSetResults.AverageCorrs``).

        Examples
        --------
        >>> TaskResult("kendall", "correlation", {"A": 0.3}).rescale(0.3)   # (0.3 + 1) / 2
        0.65
        """
        b, e = self.statistic_range
        return (value - b) / (e - b)

    def pair_draws(self, a: str, b: str) -> tuple[np.ndarray, np.ndarray] | None:
        """``(draws_a, draws_b)`` for metric ``a`` in slot A and ``b`` in slot B, or None."""
        if (a, b) in self.draws:
            return self.draws[(a, b)]
        if (b, a) in self.draws:
            db, da = self.draws[(b, a)]
            return da, db
        return None


def _p_greater(observed: float, null: np.ndarray) -> float:
    """(1 + #{null >= observed}) / (1 + K), with a float tolerance (Phipson & Smyth 2010)."""
    tol = 1e-12 * max(1.0, abs(observed))
    return (1 + int(np.count_nonzero(null >= observed - tol))) / (1 + null.size)


def task_ranking(task: TaskResult, alpha: float = 0.05) -> pd.DataFrame:
    """Rank clusters of one task from its draws (:func:`assign_ranks`, one-sided p-values).

    The p-value of "a beats b" is ``(1 + #{d* >= d}) / (1 + K)`` over the ``K`` draws of the
    difference (Phipson & Smyth 2010); the clusters follow the WMT rule (Freitag et al. 2021).

    Parameters
    ----------
    task : TaskResult
        The task's statistics and its draws per metric pair.
    alpha : float
        Significance level (default 0.05).

    Returns
    -------
    pandas.DataFrame
        ``metric, statistic, rank``, best first.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> draws = (0.78 + rng.normal(0, 0.02, 200), 0.78 + rng.normal(0, 0.02, 200))
    >>> task = TaskResult("sys_spa", "accuracy", {"A": 0.82, "B": 0.75}, {("A", "B"): draws})
    >>> task_ranking(task)
      metric  statistic  rank
    0      A       0.82     1
    1      B       0.75     2
    """
    ranked = [m for m in task.statistics if np.isfinite(task.statistics[m])]
    pv: dict[tuple[str, str], float] = {}
    for i, a in enumerate(ranked):
        for b in ranked[i + 1:]:
            d = task.pair_draws(a, b)
            if d is None:
                continue
            obs = task.statistics[a] - task.statistics[b]
            null = d[0] - d[1]
            pv[(a, b)] = _p_greater(obs, null)
            pv[(b, a)] = _p_greater(-obs, -null)
    return assign_ranks(task.statistics, pv, alpha)


def _tasks_and_weights(
    task_results: Mapping[str, TaskResult] | Sequence[TaskResult],
    weights: Mapping[str, float] | Sequence[float] | np.ndarray | None,
) -> tuple[list[TaskResult], np.ndarray]:
    if isinstance(task_results, Mapping):
        tasks = []
        for key, t in task_results.items():
            if not isinstance(t, TaskResult):
                raise InputError(f"task {key!r} is not a TaskResult")
            if str(key) != t.name:
                raise InputError(f"task key {key!r} differs from the task's name {t.name!r}")
            tasks.append(t)
    else:
        tasks = list(task_results)
        for t in tasks:
            if not isinstance(t, TaskResult):
                raise InputError(f"expected TaskResult objects, got {type(t).__name__}")
    if not tasks:
        raise InputError("the overall score needs at least one task")
    names = [t.name for t in tasks]
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise InputError(f"task names must be unique; repeated: {dup}")
    reserved = {"metric", "overall", "rank"} & set(names)
    if reserved:
        raise InputError(f"task names {sorted(reserved)} clash with leaderboard columns")
    w = _check_weights(weights, names)
    return tasks, w / w.sum()


def _overall(tasks: list[TaskResult], w: np.ndarray) -> dict[str, float]:
    """Weighted mean of rescaled statistics over metrics with a finite value in every task."""
    common = [m for m in tasks[0].statistics
              if all(np.isfinite(t.statistics.get(m, math.nan)) for t in tasks)]
    return {m: float(sum(wk * t.rescale(t.statistics[m]) for wk, t in zip(w, tasks,
                                                                         strict=True)))
            for m in common}


def _overall_null(tasks: list[TaskResult], w: np.ndarray, a: str, b: str) -> np.ndarray:
    """Per-draw null differences overall(a) - overall(b): rescaled task draws, summed."""
    per_task = []
    for t in tasks:
        d = t.pair_draws(a, b)
        if d is None:
            raise InputError(f"task {t.name!r} has no permutation draws for metrics {a!r} and "
                             f"{b!r}; run the PERM-BOTH test for every pair of metrics")
        lo, hi = t.statistic_range
        per_task.append((d[0] - d[1]) / (hi - lo))
    k = min(x.size for x in per_task)
    return sum(wk * x[:k] for wk, x in zip(w, per_task, strict=True))


def overall_pvalues(
    task_results: Mapping[str, TaskResult] | Sequence[TaskResult],
    weights: Mapping[str, float] | Sequence[float] | np.ndarray | None = None,
) -> pd.DataFrame:
    """One-sided p-values of "metric_a's overall score is higher than metric_b's".

    For each pair, the null draws are ``sum_t w_t (draws_a - draws_b) / (high_t - low_t)``
    over tasks ``t`` (the rescaled PERM-BOTH draws, summed as in MTME's
    ``AverageCorrMatrix``; the offsets ``low_t`` cancel), compared with the observed
    difference of overall scores: ``p = (1 + #{null >= observed}) / (1 + K)``. ``K`` is the
    smallest number of draws among the tasks (the first ``K`` draws of each are summed).
    Returns ``metric_a, metric_b, statistic, pvalue, permutations`` for both orders of every
    pair of metrics that have a statistic in every task.

    Parameters
    ----------
    task_results : Mapping[str, TaskResult] or Sequence[TaskResult]
        The tasks, each with its statistics and PERM-BOTH draws per metric pair.
    weights : Mapping[str, float] or Sequence[float] or numpy.ndarray, optional
        Task weights by name or in task order (default equal).

    Returns
    -------
    pandas.DataFrame
        ``metric_a, metric_b, statistic, pvalue, permutations``, one row per ordered pair.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> def draws(centre):                    # stand-in PERM-BOTH draws of one metric pair
    ...     return (centre + rng.normal(0, 0.02, 200), centre + rng.normal(0, 0.02, 200))
    >>> tasks = [TaskResult("sys_spa", "accuracy", {"A": 0.82, "B": 0.75},
    ...                     {("A", "B"): draws(0.78)}),
    ...          TaskResult("seg_acc_eq", "accuracy", {"A": 0.55, "B": 0.56},
    ...                     {("A", "B"): draws(0.555)})]
    >>> overall_pvalues(tasks).round(3)
      metric_a metric_b  statistic  pvalue  permutations
    0        A        B       0.03   0.080           200
    1        B        A      -0.03   0.925           200
    """
    tasks, w = _tasks_and_weights(task_results, weights)
    overall = _overall(tasks, w)
    names = list(overall)
    rows = []
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            null = _overall_null(tasks, w, a, b)
            obs = overall[a] - overall[b]
            rows.append((a, b, obs, _p_greater(obs, null), null.size))
            rows.append((b, a, -obs, _p_greater(-obs, -null), null.size))
    return pd.DataFrame(rows, columns=["metric_a", "metric_b", "statistic", "pvalue",
                                       "permutations"])


def overall_score(
    task_results: Mapping[str, TaskResult] | Sequence[TaskResult],
    weights: Mapping[str, float] | Sequence[float] | None = None,
    *,
    alpha: float = 0.05,
) -> pd.DataFrame:
    """The WMT23/WMT24-style metric leaderboard.

    ``overall = sum_t w_t (x_t - low_t) / (high_t - low_t)`` over tasks ``t`` (``weights``
    by task name or in task order, default equal, normalised to sum to 1; WMT24 uses equal
    weights over its system-level SPA and item-grouped acc_eq tasks, WMT23 gives the pooled
    pairwise-accuracy task a weight equal to the number of language pairs). Ranks come from
    :func:`assign_ranks` on :func:`overall_pvalues` at level ``alpha``. Only metrics with a
    finite statistic in every task are scored and ranked (as in MTME); the others are listed
    last with overall and rank NA.

    Returns ``metric, <one column per task: its raw statistic>, overall, rank``, best first.

    Parameters
    ----------
    task_results : Mapping[str, TaskResult] or Sequence[TaskResult]
        The tasks, each with its statistics and PERM-BOTH draws per metric pair.
    weights : Mapping[str, float] or Sequence[float], optional
        Task weights by name or in task order (default equal).
    alpha : float
        Significance level of the rank clusters (default 0.05).

    Returns
    -------
    pandas.DataFrame
        ``metric``, one column per task, ``overall``, ``rank``; best first.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> def draws(centre):                    # stand-in PERM-BOTH draws of one metric pair
    ...     return (centre + rng.normal(0, 0.02, 200), centre + rng.normal(0, 0.02, 200))
    >>> tasks = [TaskResult("sys_spa", "accuracy", {"A": 0.82, "B": 0.75},
    ...                     {("A", "B"): draws(0.78)}),
    ...          TaskResult("seg_acc_eq", "accuracy", {"A": 0.55, "B": 0.56},
    ...                     {("A", "B"): draws(0.555)})]
    >>> overall_score(tasks)
      metric  sys_spa  seg_acc_eq  overall  rank
    0      A     0.82        0.55    0.685     1
    1      B     0.75        0.56    0.655     1
    """
    tasks, w = _tasks_and_weights(task_results, weights)
    overall = _overall(tasks, w)
    pv = overall_pvalues(tasks, w) if len(overall) > 1 else {}
    ranks = assign_ranks(overall, pv, alpha)
    everyone = list(dict.fromkeys(m for t in tasks for m in t.statistics))
    rest = sorted(m for m in everyone if m not in overall)
    rows = []
    for m, r in [*zip(ranks["metric"], ranks["rank"], strict=True), *((m, pd.NA) for m in rest)]:
        rows.append({"metric": m, **{t.name: t.statistics.get(m, math.nan) for t in tasks},
                     "overall": overall.get(m, math.nan), "rank": r})
    df = pd.DataFrame(rows, columns=["metric", *[t.name for t in tasks], "overall", "rank"])
    df["rank"] = df["rank"].astype("Int64")
    return df
