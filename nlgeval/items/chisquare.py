"""Chi-square test of homogeneity for category counts, with asymptotic, Monte Carlo and exact
p-values: the textbook alternative to discrete ANOVA, shown next to it so users can see when the
two agree.

* asymptotic: Pearson's X^2 against chi-square with (K - 1)(J - 1) df
  (``scipy.stats.chi2_contingency(correction=False)``);
* Monte Carlo: tables with the observed margins drawn from the permutation (multivariate
  hypergeometric) distribution with ``scipy.stats.random_table``; ``p = (1 + #{X^2_b >= X^2}) /
  (B + 1)`` (Hope 1968; what R's ``chisq.test(simulate.p.value = TRUE)`` reports);
* exact (two groups): every 2 x K table with the observed margins is enumerated with its
  multivariate hypergeometric probability ``prod_k C(c_k, x_k) / C(N, n_1)`` and
  ``p = P(X^2 >= X^2_obs)`` (the Freeman-Halton conditional test ordered by X^2). scipy's
  permutation machinery would enumerate orderings of the individual ratings instead, which is
  astronomically slower, hence this enumeration.

Statistics within a relative ``1e-9`` of the observed one count as ">=" (floating-point ties).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats
from scipy.special import gammaln

from nlgeval.errors import InputError
from nlgeval.items.discanova import DiscAnovaResult, _groups_from_input, category_counts
from nlgeval.results import StatResult

_REL_TOL = 1e-9


@dataclass(frozen=True)
class ChiSquareResult(StatResult):
    """Pearson chi-square test of homogeneity (``method`` says how the p-value was obtained).

    Examples:
        >>> stat, p = chi2_homogeneity([[10, 20], [20, 10]])
        >>> round(stat, 4), round(p, 4)
        (6.6667, 0.0098)
    """

    statistic: float
    pvalue: float
    dof: int
    method: str
    n_resamples: int | None = None
    n_tables: int | None = None
    seed: int | None = None


def pearson_x2(tables: np.ndarray) -> np.ndarray:
    """Pearson's X^2 for tables of shape (..., K, J) (all-zero rows must be removed first).

    Examples:
        >>> float(pearson_x2(np.array([[10, 20], [20, 10]])).round(4))
        6.6667
    """
    t = np.asarray(tables, dtype=float)
    rows = t.sum(axis=-1, keepdims=True)
    cols = t.sum(axis=-2, keepdims=True)
    total = t.sum(axis=(-2, -1), keepdims=True)
    expected = rows * cols / total
    return ((t - expected) ** 2 / expected).sum(axis=(-2, -1))


def _clean(counts: np.ndarray) -> np.ndarray:
    counts = np.asarray(counts)
    if counts.ndim != 2 or counts.shape[1] < 2:
        raise InputError("expected a (categories x groups) table with at least two groups")
    if np.any(counts < 0) or not np.all(np.equal(np.mod(counts, 1), 0)):
        raise InputError("counts must be non-negative integers")
    counts = counts[counts.sum(axis=1) > 0].astype(np.int64)
    if np.any(counts.sum(axis=0) == 0):
        raise InputError("every group needs at least one observation")
    return counts


def enumerate_two_group_tables(col_totals: np.ndarray, n1: int, max_tables: int) -> np.ndarray:
    """All first-group count vectors x (0 <= x_k <= c_k, sum x = n1), as an (M, K) array.

    Examples:
        >>> enumerate_two_group_tables(np.array([1, 2]), 2, 100).tolist()
        [[0, 2], [1, 1]]
    """
    c = np.asarray(col_totals, dtype=np.int64)
    K = len(c)
    suffix = np.concatenate([np.cumsum(c[::-1])[::-1][1:], [0]])  # sum of c after k
    prefix = np.zeros((1, 0), dtype=np.int64)
    used = np.zeros(1, dtype=np.int64)
    for k in range(K):
        rem = n1 - used
        lo = np.maximum(0, rem - suffix[k])
        hi = np.minimum(c[k], rem)
        counts = np.maximum(hi - lo + 1, 0)
        total = int(counts.sum())
        if total > max_tables:
            raise InputError(
                f"the exact test would enumerate more than {max_tables:,} tables; use "
                "method='montecarlo'"
            )
        idx = np.repeat(np.arange(len(lo)), counts)
        offs = np.arange(total) - np.repeat(np.cumsum(counts) - counts, counts)
        xk = lo[idx] + offs
        prefix = np.concatenate([prefix[idx], xk[:, None]], axis=1)
        used = used[idx] + xk
    return prefix


def chi2_homogeneity(
    counts: np.ndarray,
    *,
    method: str = "asymptotic",
    n_resamples: int = 9999,
    seed: int = 0,
    max_tables: int = 5_000_000,
) -> ChiSquareResult:
    """Chi-square test that the groups (columns of ``counts``) share one distribution over the
    categories (rows). ``method``: ``"asymptotic"``, ``"montecarlo"`` or ``"exact"`` (two groups).

    Parameters
    ----------
    counts : ndarray
        (categories x groups) table of counts.
    method : {"asymptotic", "montecarlo", "exact"}, default "asymptotic"
        How the p-value is obtained.
    n_resamples : int, default 9999
        Simulated tables for ``"montecarlo"``.
    seed : int, default 0
        Seed of the Monte Carlo draws.
    max_tables : int, default 5_000_000
        Largest number of tables ``"exact"`` may enumerate (else an error).

    Returns
    -------
    ChiSquareResult
        The chi-square statistic, its degrees of freedom and p-value.

    Examples
    --------
    The asymptotic p-value equals scipy's ``chi2_contingency(correction=False)``; the exact
    one enumerates every table with the observed margins (Freeman & Halton 1951):

    >>> round(chi2_homogeneity([[10, 20], [20, 10]]).pvalue, 4)
    0.0098
    >>> round(chi2_homogeneity([[10, 20], [20, 10]], method="exact").pvalue, 4)
    0.0195
    """
    counts = _clean(counts)
    K, J = counts.shape
    dof = (K - 1) * (J - 1)
    if K < 2:
        return ChiSquareResult(0.0, 1.0, 0, method)
    x2 = float(stats.chi2_contingency(counts, correction=False).statistic)
    if method == "asymptotic":
        return ChiSquareResult(x2, float(stats.chi2.sf(x2, dof)), dof, "asymptotic")
    tol = _REL_TOL * max(1.0, x2)
    if method == "montecarlo":
        rng = np.random.default_rng(seed)
        dist = stats.random_table(counts.sum(axis=1), counts.sum(axis=0))
        sims = dist.rvs(size=int(n_resamples), random_state=rng)
        ge = int(np.count_nonzero(pearson_x2(sims) >= x2 - tol))
        p = (ge + 1) / (n_resamples + 1)
        return ChiSquareResult(x2, float(p), dof, "montecarlo", n_resamples=int(n_resamples),
                               seed=seed)
    if method == "exact":
        if J != 2:
            raise InputError("the exact test is implemented for two groups; use 'montecarlo'")
        c = counts.sum(axis=1)
        n1 = int(counts[:, 0].sum())
        x = enumerate_two_group_tables(c, n1, max_tables)
        tables = np.stack([x, c[None, :] - x], axis=2)
        logp = (gammaln(c + 1) - gammaln(x + 1) - gammaln(c - x + 1)).sum(axis=1)
        logp -= gammaln(c.sum() + 1) - gammaln(n1 + 1) - gammaln(c.sum() - n1 + 1)
        prob = np.exp(logp)
        p = float(prob[pearson_x2(tables) >= x2 - tol].sum())
        return ChiSquareResult(x2, min(1.0, p), dof, "exact", n_tables=len(x))
    raise InputError(f"unknown method {method!r}; use asymptotic, montecarlo or exact")


def chi2_from_ratings(
    ratings: pd.DataFrame,
    group: str,
    score: str,
    *,
    method: str = "asymptotic",
    n_resamples: int = 9999,
    seed: int = 0,
    file: str | None = None,
) -> ChiSquareResult:
    """:func:`chi2_homogeneity` of the score distributions of the groups of a ratings table.

    ``ratings`` has one row per rating; ``group`` and ``score`` name its columns (``file``
    is only used in error messages).

    Examples:
        >>> df = pd.DataFrame({"rater": ["a"] * 4 + ["b"] * 4,
        ...                    "score": [1, 1, 2, 2, 1, 2, 2, 2]})
        >>> chi2_from_ratings(df, "rater", "score").dof
        1
    """
    _, groups = _groups_from_input(ratings, group, score, file)
    _, counts = category_counts(groups)
    return chi2_homogeneity(counts, method=method, n_resamples=n_resamples, seed=seed)


def chi2_companions(result: DiscAnovaResult, seed: int = 0) -> list[ChiSquareResult]:
    """The chi-square tests shown next to a discrete ANOVA (``items discanova --compare``).

    The asymptotic and Monte Carlo tests on the same counts, plus the exact test for two
    groups when its enumeration is small enough.

    Examples:
        >>> from nlgeval.items.discanova import disc_anova
        >>> df = pd.DataFrame({"rater": ["a"] * 4 + ["b"] * 4,
        ...                    "score": [1, 1, 2, 2, 1, 2, 2, 2]})
        >>> res = disc_anova(df, "rater", "score", n_resamples=50, seed=1)
        >>> [c.method for c in chi2_companions(res, seed=1)]
        ['asymptotic', 'montecarlo', 'exact']
    """
    counts = (result.proportions * result.group_sizes).round().astype(int)
    out = [chi2_homogeneity(counts), chi2_homogeneity(counts, method="montecarlo", seed=seed)]
    if len(result.groups) == 2:
        try:
            out.append(chi2_homogeneity(counts, method="exact"))
        except InputError:  # too many tables to enumerate: the Monte Carlo p-value stands
            pass
    return out
