"""Discrete ANOVA: do two or more independent groups share one multinomial distribution?

A Python port of ``discANOVA`` from R's WRS2 package (Mair & Wilcox 2020, "Robust statistical
methods in R using the WRS2 package", Behavior Research Methods 52:464-488; the method is Wilcox's
generalisation of the Storer-Kim test, Wilcox, *Introduction to Robust Estimation and Hypothesis
Testing*). Step by step, as WRS2 does it:

1. split the responses by group (J groups of sizes ``n_j``; missing values dropped);
2. ``v_1 < ... < v_K``: the distinct values observed in any group; ``C[k, j]`` = share of group j
   equal to ``v_k``;
3. statistic ``T = sum_k var(C[k, :])`` (sample variance, denominator ``J - 1``; WRS2 prints it as
   "F" but it is not an F statistic);
4. null cell probabilities ``h_k = mean_j C[k, j]`` (the *unweighted* mean of the groups' shares);
5. parametric bootstrap: ``nboot`` times draw group j's counts from Multinomial(``n_j``, h) and
   recompute T (WRS2 draws ``n_j`` single categorical values, which is the same distribution);
6. mid-p value ``p = mean(T_b > T) + 0.5 * mean(T_b == T)``.

Ties (a deliberate difference from WRS2): many bootstrap statistics equal the observed one in
exact arithmetic, but WRS2 compares doubles with ``==`` so rounding decides which ties it sees. Here
the statistic is scaled to an integer, ``Q = sum_k sum_j (J a_kj - sum_j a_kj)^2`` with
``a_kj = count_kj * L / n_j`` and ``L = lcm(n_1..n_J)`` (so ``T = Q / ((J - 1) J^2 L^2)``), and
bootstrap statistics are compared with the observed one *exactly*; every true tie counts one half.
A tie WRS2 misses counts as fully above or below, so its p-value may be higher or lower than ours;
``tests/test_items_wrs2_reference.py`` records WRS2's own results (R, nboot = 100000): equal
statistics, p-values within Monte Carlo error except where ties are common (two groups of 3:
WRS2 0.643, exact ties 0.588).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from nlgeval.deprecation import renamed_keyword
from nlgeval.errors import InputError
from nlgeval.results import StatResult

_INT64_SAFE = 2**62


@dataclass(frozen=True)
class DiscAnovaResult(StatResult):
    """Result of :func:`disc_anova` (scipy style).

    ``statistic`` is WRS2's test statistic (sum over categories of the between-group variance of
    the cell shares), ``pvalue`` the bootstrap mid-p value, ``null_probabilities`` the cell
    probabilities ``h`` used by the parametric bootstrap.

    Examples
    --------
    >>> res = disc_anova({"A": [1, 2, 2, 3, 3, 3], "B": [3, 4, 4, 5, 5, 5]}, n_resamples=500,
    ...                  seed=1)
    >>> stat, p = res                              # scipy-style unpacking
    >>> round(stat, 4), p, res.n_ties
    (0.3056, 0.04, 6)
    >>> res.categories
    (1.0, 2.0, 3.0, 4.0, 5.0)
    """

    statistic: float
    pvalue: float
    nboot: int
    seed: int | None
    groups: tuple[str, ...]
    group_sizes: tuple[int, ...]
    categories: tuple[float, ...]
    proportions: np.ndarray = field(repr=False)  # (K, J) shares C
    null_probabilities: np.ndarray = field(repr=False)  # (K,) h
    n_greater: int = 0
    n_ties: int = 0
    method: str = "WRS2 discANOVA (parametric bootstrap, mid-p, exact ties)"


def disc_statistic(counts: np.ndarray) -> float:
    """WRS2's statistic from a (K, J) table of category counts per group (float, as printed).

    Examples
    --------
    >>> import numpy as np
    >>> round(disc_statistic(np.array([[5, 1], [3, 3], [1, 6]])), 6)
    0.223827
    """
    counts = np.asarray(counts, dtype=float)
    shares = counts / counts.sum(axis=0, keepdims=True)
    return float(np.var(shares, axis=1, ddof=1).sum())


def scaled_statistic(counts: np.ndarray, sizes: Sequence[int]) -> tuple[np.ndarray, int]:
    """Integer-scaled statistics ``Q`` for counts of shape (..., K, J), and the divisor.

    ``T = Q / divisor`` exactly, with ``divisor = (J - 1) J^2 L^2``, ``L = lcm(sizes)``. Uses
    int64 when the values provably fit, else Python integers (object arrays), so equality tests
    on ``Q`` are exact.

    Examples
    --------
    >>> import numpy as np
    >>> q, divisor = scaled_statistic(np.array([[5, 1], [3, 3], [1, 6]]), [9, 10])
    >>> int(q), divisor, round(int(q) / divisor, 6)   # equals disc_statistic's value
    (7252, 32400, 0.223827)
    """
    sizes = [int(n) for n in sizes]
    J = len(sizes)
    L = math.lcm(*sizes)
    mult = np.array([L // n for n in sizes], dtype=object)
    K = counts.shape[-2]
    bound = K * J * (J * L) ** 2
    if bound < _INT64_SAFE:
        a = np.asarray(counts, dtype=np.int64) * np.array([L // n for n in sizes], dtype=np.int64)
    else:
        a = np.asarray(counts).astype(object) * mult
    dev = J * a - a.sum(axis=-1, keepdims=True)
    q = (dev * dev).sum(axis=(-2, -1))
    return q, (J - 1) * J * J * L * L


def _groups_from_input(
    data: pd.DataFrame | Mapping[str, Sequence[float]] | Sequence[Sequence[float]],
    group: str | None,
    score: str | None,
    file: str | None,
) -> tuple[list[str], list[np.ndarray]]:
    if isinstance(data, pd.DataFrame):
        if group is None or score is None:
            raise InputError("pass group= and score= column names with a DataFrame", file=file)
        for col in (group, score):
            if col not in data.columns:
                raise InputError(
                    f"missing column '{col}' (found: {', '.join(map(str, data.columns))})",
                    file=file, column=col,
                )
        values = pd.to_numeric(data[score], errors="coerce")
        bad = values.isna() & data[score].notna()
        if bad.any():
            pos = int(np.flatnonzero(bad.to_numpy())[0])
            row = int(data["_row"].iloc[pos]) if "_row" in data.columns else pos + 2
            raise InputError(f"{data[score].iloc[pos]!r} is not a number", file=file, row=row,
                             column=score)
        keep = values.notna() & data[group].notna()  # WRS2 drops missing values
        labels = data.loc[keep, group].astype(str)
        vals = values[keep].to_numpy(dtype=float)
        names = list(dict.fromkeys(sorted(labels.unique())))  # factor-level (sorted) order
        return names, [vals[(labels == g).to_numpy()] for g in names]
    if isinstance(data, Mapping):
        names = [str(k) for k in data]
        arrays = [np.asarray(v, dtype=float) for v in data.values()]
    else:
        arrays = [np.asarray(v, dtype=float) for v in data]
        names = [str(i + 1) for i in range(len(arrays))]
    return names, [a[~np.isnan(a)] for a in arrays]


def category_counts(groups: Sequence[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """Distinct values observed in any group and the (K, J) table of counts.

    Examples
    --------
    >>> import numpy as np
    >>> values, counts = category_counts([np.array([1.0, 2, 2]), np.array([2.0, 3])])
    >>> values.tolist(), counts.tolist()
    ([1.0, 2.0, 3.0], [[1, 0], [2, 1], [0, 1]])
    """
    values = np.unique(np.concatenate([np.asarray(g, dtype=float) for g in groups]))
    counts = np.stack(
        [np.array([np.count_nonzero(g == v) for v in values], dtype=np.int64) for g in groups],
        axis=1,
    )
    return values, counts


def disc_anova(
    data: pd.DataFrame | Mapping[str, Sequence[float]] | Sequence[Sequence[float]],
    group: str | None = None,
    score: str | None = None,
    *,
    n_resamples: int = 500,
    seed: int | np.random.SeedSequence = 0,
    file: str | None = None,
    nboot: int | None = None,
) -> DiscAnovaResult:
    """Discrete ANOVA of WRS2 (``discANOVA``): H0 = all groups have the same multinomial law.

    ``data`` is a tidy DataFrame (with ``group=`` and ``score=`` column names), a mapping
    ``{group name: values}`` or a sequence of value arrays. Returns a :class:`DiscAnovaResult`.
    The bootstrap is vectorised over the ``n_resamples`` draws (numpy multinomial counts; WRS2's
    ``nboot``, the earlier name of the keyword, still accepted with a DeprecationWarning); see the
    module docstring for the exact tie rule.

    Parameters
    ----------
    data : DataFrame, mapping or sequence of sequences
        The scores per group (forms above).
    group, score : str, optional
        Group and score columns when ``data`` is a DataFrame.
    n_resamples, nboot : int, default 500; int, optional
        Bootstrap draws (``nboot``: their earlier name, deprecated).
    seed : int or SeedSequence, default 0
        Seed of the bootstrap.
    file : str, optional
        Name of the source of ``data`` in error messages.

    Returns
    -------
    DiscAnovaResult
        The test statistic, its bootstrap p-value and the groups.

    Examples
    --------
    >>> import pandas as pd
    >>> ratings = pd.DataFrame({"rater": ["r1"] * 6 + ["r2"] * 6,
    ...                         "score": [1, 2, 2, 3, 3, 3, 3, 4, 4, 5, 5, 5]})
    >>> res = disc_anova(ratings, group="rater", score="score", n_resamples=500, seed=1)
    >>> round(res.statistic, 4), res.pvalue, res.groups
    (0.3056, 0.04, ('r1', 'r2'))
    """
    nboot = renamed_keyword("disc_anova", "nboot", nboot, "n_resamples", n_resamples)
    if int(nboot) < 1:
        raise InputError(f"n_resamples must be a positive integer, got {nboot}")
    names, groups = _groups_from_input(data, group, score, file)
    if len(groups) < 2:
        raise InputError(f"discrete ANOVA needs at least two groups, found {len(groups)}",
                         file=file, column=group)
    for name, g in zip(names, groups, strict=True):
        if len(g) < 2:
            raise InputError(
                f"group '{name}' has {len(g)} value(s); each group needs at least 2 "
                "(WRS2's discANOVA fails on a group of size 1)", file=file, column=group,
            )
    values, counts = category_counts(groups)
    sizes = counts.sum(axis=0)
    shares = counts / sizes
    stat = disc_statistic(counts)
    q_obs, _ = scaled_statistic(counts, sizes)
    h = shares.mean(axis=1)
    h = h / h.sum()
    rng = np.random.default_rng(seed)
    # (nboot, K, J) bootstrap counts, one multinomial per group.
    boot = np.stack([rng.multinomial(int(n), h, size=int(nboot)) for n in sizes], axis=2)
    q_boot, _ = scaled_statistic(boot, sizes)
    greater = int(np.count_nonzero(q_boot > q_obs))
    ties = int(np.count_nonzero(q_boot == q_obs))
    p = (greater + 0.5 * ties) / nboot
    return DiscAnovaResult(
        statistic=stat, pvalue=float(p), nboot=int(nboot),
        seed=seed if isinstance(seed, int) else None,
        groups=tuple(names), group_sizes=tuple(int(n) for n in sizes),
        categories=tuple(float(v) for v in values), proportions=shares,
        null_probabilities=h, n_greater=greater, n_ties=ties,
    )


def disc_anova_counts(
    counts: np.ndarray, *, n_resamples: int = 500,
    seed: int | np.random.SeedSequence = 0, nboot: int | None = None,
) -> DiscAnovaResult:
    """:func:`disc_anova` from a (K, J) table of category counts (rows = categories).

    Categories with zero count in every group are dropped (WRS2 only sees observed values).
    ``nboot``: the earlier name of ``n_resamples`` (deprecated).

    Parameters
    ----------
    counts : ndarray
        (K, J) table: K categories by J groups.
    n_resamples : int, default 500
        Bootstrap draws.
    seed : int or SeedSequence, default 0
        Seed of the bootstrap.
    nboot : int, optional
        Deprecated name of ``n_resamples``.

    Returns
    -------
    DiscAnovaResult
        As :func:`disc_anova`.

    Examples
    --------
    >>> import numpy as np
    >>> res = disc_anova_counts(np.array([[5, 1], [3, 3], [1, 6]]), n_resamples=500,
    ...                         seed=1)
    >>> round(res.statistic, 4), res.pvalue, res.group_sizes
    (0.2238, 0.048, (9, 10))
    """
    counts = np.asarray(counts, dtype=np.int64)
    if counts.ndim != 2:
        raise InputError("counts must be a (categories x groups) table")
    counts = counts[counts.sum(axis=1) > 0]
    groups = [np.repeat(np.arange(counts.shape[0], dtype=float), counts[:, j])
              for j in range(counts.shape[1])]
    n_resamples = renamed_keyword("disc_anova_counts", "nboot", nboot, "n_resamples", n_resamples)
    return disc_anova(groups, n_resamples=n_resamples, seed=seed)
