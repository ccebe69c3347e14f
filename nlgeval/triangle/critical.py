"""Critical values of the triangle test: exact binomial and the paper's normal approximations.

Under the null hypothesis of no perceptible difference a judge picks the odd text by chance with
probability ``p0 = 1/3``. If a proportion ``pd`` of the population perceives the difference (and
answers correctly) while the rest guess, the probability of a correct answer is
``pc = 1/3 + (2/3) pd`` (ISO 4120; Gonzalez-Corbelle et al. 2020, sec. 3).

* Test of difference (Table 2 of González-Corbelle et al. 2020): the minimum number of correct
answers ``x`` out of
  ``n`` to conclude a difference is the smallest ``x`` with ``P(X >= x | n, 1/3) <= alpha``.
* Test of similarity (Table 3): the maximum number of correct answers to conclude similarity is
  the largest ``x`` with ``P(X <= x | n, pc(pd)) <= beta``.

Both are computed from scipy's binomial tail functions (``binom.sf``/``binom.cdf``, which are the
regularised incomplete beta function) and then checked by stepping one count either way, so the
result is the exact discrete critical value, vectorised over ``n``. The normal
approximations are offered as ``method="normal"`` so published numbers can be reproduced; they
use the paper's z values, which are the standard normal quantiles rounded to two decimals
(0.84, 1.28, 1.64, 2.33, 3.09).
"""

from __future__ import annotations

import math
from typing import Literal, cast

import numpy as np
from scipy import stats

from nlgeval.errors import InputError

P_GUESS = 1.0 / 3.0
"""Probability of a correct answer by chance in the triangle protocol."""

Method = Literal["exact", "normal"]
TestType = Literal["difference", "similarity"]
METHODS = ("exact", "normal")
TESTS = ("difference", "similarity")

# ISO 4120 / AENOR (2010), quoted by González-Corbelle et al. 2020 (sec. 4.1, footnote 2).
RECOMMENDED_MINIMUM = {"difference": 18, "similarity": 30}


# --------------------------------------------------------------------------- validation
def check_probability(name: str, value: float) -> float:
    """Return ``value`` as float if it lies strictly between 0 and 1, else raise InputError.

    Examples:
        >>> check_probability("alpha", 0.05)
        0.05
    """
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise InputError(
            f"{name} must be a number strictly between 0 and 1, got {value!r}"
        ) from None
    if not (0.0 < v < 1.0) or math.isnan(v):
        raise InputError(f"{name} must be strictly between 0 and 1, got {value}")
    return v


def check_n(n: int, name: str = "n") -> int:
    """Return ``n`` as int if it is a whole number >= 1, else raise InputError.

    Examples:
        >>> check_n(24.0)
        24
    """
    try:
        as_float = float(n)
    except (TypeError, ValueError):
        raise InputError(f"{name} must be a whole number >= 1, got {n!r}") from None
    if not as_float.is_integer() or as_float < 1:
        raise InputError(f"{name} must be a whole number >= 1, got {n}")
    return int(as_float)


def check_correct(correct: int, n: int) -> int:
    """Validate a count of correct answers against the number of answers ``n``.

    Examples:
        >>> check_correct(13, 24)
        13
    """
    try:
        as_float = float(correct)
    except (TypeError, ValueError):
        raise InputError(f"correct must be a whole number, got {correct!r}") from None
    if not as_float.is_integer() or as_float < 0:
        raise InputError(f"correct must be a whole number >= 0, got {correct}")
    if as_float > n:
        raise InputError(f"correct ({int(as_float)}) cannot exceed the number of answers n ({n})")
    return int(as_float)


def check_test(test: str) -> TestType:
    """Return ``test`` if it is 'difference' or 'similarity', else raise InputError.

    Examples:
        >>> check_test("similarity")
        'similarity'
    """
    if test not in TESTS:
        raise InputError(f"test must be 'difference' or 'similarity', got {test!r}")
    return cast(TestType, test)  # one of TESTS (checked above)


def check_method(method: str) -> Method:
    """Return ``method`` if it is 'exact' or 'normal', else raise InputError.

    Examples:
        >>> check_method("normal")
        'normal'
    """
    if method not in METHODS:
        raise InputError(f"method must be 'exact' or 'normal', got {method!r}")
    return cast(Method, method)  # one of METHODS (checked above)


# --------------------------------------------------------------------------- pc <-> pd
def pc_from_pd(pd: float | np.ndarray) -> float | np.ndarray:
    """Probability of a correct answer when a proportion ``pd`` of judges discriminates.

    Parameters
    ----------
    pd : float or ndarray
        Proportion of discriminators.

    Returns
    -------
    float or ndarray
        ``pc = 1/3 + 2 pd / 3`` (same shape as ``pd``).

    Examples
    --------
    A third of the judges perceiving the difference gives pc = 5/9 (ISO 4120):

    >>> round(pc_from_pd(1 / 3), 4)
    0.5556
    """
    out = P_GUESS + (1.0 - P_GUESS) * np.asarray(pd, dtype=float)
    return out if np.ndim(pd) else float(out)


def pd_from_pc(pc: float | np.ndarray, clip: bool = True) -> float | np.ndarray:
    """Proportion of discriminators ``pd = 1.5 pc - 0.5`` (clipped at 0 below ``pc = 1/3``).

    Parameters
    ----------
    pc : float or ndarray
        Probability of a correct answer.
    clip : bool, default True
        Clip negative values at 0.

    Returns
    -------
    float or ndarray
        The proportion of discriminators (same shape as ``pc``).

    Examples
    --------
    >>> pd_from_pc(0.5)
    0.25
    >>> pd_from_pc(0.3)
    0.0
    """
    out = 1.5 * np.asarray(pc, dtype=float) - 0.5
    if clip:
        out = np.clip(out, 0.0, 1.0)
    return out if np.ndim(pc) else float(out)


def paper_z(prob: float) -> float:
    """The z value González-Corbelle et al. (2020) use for a risk ``prob``: the upper normal
    quantile to 2 decimals.

    This gives exactly their values (0.84, 1.28, 1.64, 2.33, 3.09 for 0.2 ... 0.001).

    Examples:
        The z values printed by González-Corbelle et al. (2020):

        >>> [paper_z(p) for p in (0.2, 0.1, 0.05, 0.01, 0.001)]
        [0.84, 1.28, 1.64, 2.33, 3.09]
    """
    return round(float(stats.norm.isf(prob)), 2)


# --------------------------------------------------------------------------- exact, vectorised
def _min_correct_exact(n: np.ndarray, alpha: float, p0: float = P_GUESS) -> np.ndarray:
    """Smallest x with P(X >= x | n, p0) <= alpha, per n; ``n + 1`` where no x qualifies."""
    n = np.asarray(n, dtype=np.int64)
    x = np.asarray(stats.binom.isf(alpha, n, p0), dtype=float)
    x = np.where(np.isfinite(x), x, n).astype(np.int64) + 1
    x = np.clip(x, 0, n + 1)

    def tail(k: np.ndarray) -> np.ndarray:  # P(X >= k)
        return np.where(k > n, 0.0, stats.binom.sf(k - 1, n, p0))

    # Guard against rounding in isf: step until the defining inequalities hold.
    for _ in range(int(n.max(initial=0)) + 3):
        up = (x <= n) & (tail(x) > alpha)
        down = (x >= 1) & (tail(x - 1) <= alpha)
        if not (up.any() or down.any()):
            break
        x = x + up.astype(np.int64) - down.astype(np.int64)
    return x


def _max_correct_exact(n: np.ndarray, beta: float, pc: float) -> np.ndarray:
    """Largest x with P(X <= x | n, pc) <= beta, per n; ``-1`` where no x qualifies."""
    n = np.asarray(n, dtype=np.int64)
    k = np.asarray(stats.binom.ppf(beta, n, pc), dtype=float)
    k = np.where(np.isfinite(k), k, 0).astype(np.int64)
    x = np.where(stats.binom.cdf(k, n, pc) <= beta, k, k - 1)
    x = np.clip(x, -1, n)
    for _ in range(int(n.max(initial=0)) + 3):
        up = (x < n) & (stats.binom.cdf(x + 1, n, pc) <= beta)
        down = (x >= 0) & (stats.binom.cdf(x, n, pc) > beta)
        if not (up.any() or down.any()):
            break
        x = x + up.astype(np.int64) - down.astype(np.int64)
    return x


def _min_correct_normal(n: np.ndarray, alpha: float) -> np.ndarray:
    """González-Corbelle et al.'s (2020) formula x = n/3 + z sqrt(2n/9); answer = the nearest
    integer greater than x."""
    n = np.asarray(n, dtype=np.int64)
    x = n / 3.0 + paper_z(alpha) * np.sqrt(2.0 * n / 9.0)
    return np.floor(x).astype(np.int64) + 1


def pd_upper_normal(correct: int | np.ndarray, n: int | np.ndarray, beta: float) -> np.ndarray:
    """González-Corbelle et al.'s (2020) upper 100(1-beta)% limit of pd (sec. 4.2.2), with its
    2-decimal z.

    ``1.5 x/n - 0.5 + 1.5 z sqrt((n x - x^2) / n^3)``; not clipped (see analysis for that).

    Examples:
        Example 2 of González-Corbelle et al. (2020): 36 of 98 correct, beta = 0.01:

        >>> round(float(pd_upper_normal(36, 98, 0.01)), 3)
        0.221
    """
    x = np.asarray(correct, dtype=float)
    nn = np.asarray(n, dtype=float)
    return 1.5 * x / nn - 0.5 + 1.5 * paper_z(beta) * np.sqrt((nn * x - x**2) / nn**3)


def pd_lower_normal(correct: int | np.ndarray, n: int | np.ndarray, alpha: float) -> np.ndarray:
    """González-Corbelle et al.'s (2020) lower one-sided 100(1-alpha)% limit of pd (sec. 4.2.1),
    with its 2-decimal z.

    ``1.5 x/n - 0.5 - 1.5 z sqrt((x/n)(1 - x/n)/n)``; not clipped.

    Examples:
        >>> round(float(pd_lower_normal(20, 30, 0.05)), 3)
        0.288
    """
    x = np.asarray(correct, dtype=float)
    nn = np.asarray(n, dtype=float)
    p = x / nn
    return 1.5 * p - 0.5 - 1.5 * paper_z(alpha) * np.sqrt(p * (1 - p) / nn)


def _max_correct_normal(n: np.ndarray, beta: float, pd: float) -> np.ndarray:
    """Largest x whose normal upper limit of pd (González-Corbelle et al. 2020, sec. 4.2.2) is
    below ``pd``; -1 if none."""
    n = np.atleast_1d(np.asarray(n, dtype=np.int64))
    out = np.empty(n.shape, dtype=np.int64)
    for i, ni in enumerate(n.ravel()):
        xs = np.arange(ni + 1)
        ok = np.flatnonzero(pd_upper_normal(xs, ni, beta) < pd)
        out.ravel()[i] = int(ok.max()) if ok.size else -1
    return out


# --------------------------------------------------------------------------- public API
def min_correct_array(n: np.ndarray, alpha: float, method: Method = "exact") -> np.ndarray:
    """Vectorised :func:`min_correct`; entries equal to ``n + 1`` mean "impossible".

    Examples:
        Table 2 of González-Corbelle et al. (2020), alpha = 0.05, n = 6 ... 8 and 24:

        >>> min_correct_array(np.array([6, 7, 8, 24]), 0.05).tolist()
        [5, 5, 6, 13]
    """
    alpha = check_probability("alpha", alpha)
    check_method(method)
    n = np.asarray(n, dtype=np.int64)
    return _min_correct_exact(n, alpha) if method == "exact" else _min_correct_normal(n, alpha)


def max_correct_array(
    n: np.ndarray, beta: float, pd: float, method: Method = "exact"
) -> np.ndarray:
    """Vectorised :func:`max_correct`; entries equal to ``-1`` mean "impossible".

    Examples:
        Table 3 of González-Corbelle et al. (2020), beta = 0.05, pd = 30%:

        >>> max_correct_array(np.array([18, 24, 30, 36]), 0.05, 0.3).tolist()
        [5, 8, 11, 13]
    """
    beta = check_probability("beta", beta)
    pd = check_probability("pd", pd)
    check_method(method)
    n = np.asarray(n, dtype=np.int64)
    if method == "exact":
        return _max_correct_exact(n, beta, float(pc_from_pd(pd)))
    return _max_correct_normal(n, beta, pd)


def min_correct(n: int, alpha: float, method: Method = "exact") -> int | None:
    """Minimum number of correct answers out of ``n`` to conclude a difference (Table 2).

    ``method="exact"``: smallest x with P(X >= x | n, 1/3) <= alpha (ISO 4120; reproduces the
    González-Corbelle et al.'s Table 2). ``method="normal"``: their approximation ``x = n/3 + z
    sqrt(2n/9)``
    rounded to the nearest integer greater than x. ``None`` when even n correct is not enough.

    Parameters
    ----------
    n : int
        Number of judges.
    alpha : float
        Risk of a type I error.
    method : {"exact", "normal"}, default "exact"

    Returns
    -------
    int or None
        The minimum number of correct answers, or ``None``.

    Examples
    --------
    Table 2 of González-Corbelle et al. (2020): 24 judges, alpha = 0.05, exact and with
    their normal approximation:

    >>> min_correct(24, 0.05)
    13
    >>> min_correct(24, 0.05, "normal")
    12
    >>> min_correct(6, 0.001) is None
    True
    """
    n = check_n(n)
    x = int(min_correct_array(np.array([n]), alpha, method)[0])
    return None if x > n else x


def max_correct(n: int, beta: float, pd: float, method: Method = "exact") -> int | None:
    """Maximum number of correct answers out of ``n`` to conclude similarity (Table 3).

    ``method="exact"``: largest x with P(X <= x | n, pc(pd)) <= beta, ``pc = 1/3 + 2 pd / 3``
    (reproduces their Table 3). ``method="normal"``: largest x whose upper 100(1-beta)%
    normal-approximation limit of pd (González-Corbelle et al. 2020, sec. 4.2.2) is below
    ``pd``. ``None`` if no x works.

    Parameters
    ----------
    n : int
        Number of judges.
    beta : float
        Risk of a type II error.
    pd : float
        Largest tolerable proportion of discriminators ``pd0``.
    method : {"exact", "normal"}, default "exact"

    Returns
    -------
    int or None
        The maximum number of correct answers, or ``None``.

    Examples
    --------
    Table 3 of González-Corbelle et al. (2020): 30 judges, beta = 0.05, pd = 30%:

    >>> max_correct(30, 0.05, 0.3)
    11
    """
    n = check_n(n)
    x = int(max_correct_array(np.array([n]), beta, pd, method)[0])
    return None if x < 0 else x


def pvalue_difference(correct: int, n: int) -> float:
    """Exact one-sided p-value of the test of difference, P(X >= correct | n, 1/3).

    Parameters
    ----------
    correct, n : int
        Number of correct answers and of judges.

    Returns
    -------
    float
        The exact p-value.

    Examples
    --------
    Equal to scipy's exact binomial test against 1/3:

    >>> round(pvalue_difference(13, 24), 6)
    0.028441
    >>> round(float(stats.binomtest(13, 24, 1 / 3, alternative="greater").pvalue), 6)
    0.028441
    """
    n = check_n(n)
    correct = check_correct(correct, n)
    return float(stats.binom.sf(correct - 1, n, P_GUESS))


def pvalue_similarity(correct: int, n: int, pd: float) -> float:
    """Exact one-sided p-value of the test of similarity, P(X <= correct | n, pc(pd)).

    Parameters
    ----------
    correct, n : int
        Number of correct answers and of judges.
    pd : float
        Largest tolerable proportion of discriminators ``pd0``.

    Returns
    -------
    float
        The exact p-value.

    Examples
    --------
    >>> round(pvalue_similarity(11, 30, 0.3), 6)
    0.049719
    >>> round(float(stats.binom.cdf(11, 30, 1 / 3 + 2 / 3 * 0.3)), 6)
    0.049719
    """
    n = check_n(n)
    correct = check_correct(correct, n)
    pd = check_probability("pd", pd)
    return float(stats.binom.cdf(correct, n, pc_from_pd(pd)))
