"""Correlation coefficients with p-values, n, Fisher-z intervals, and vectorised batch versions.

**One kernel per coefficient.** Every Pearson, Spearman and Kendall number of nlgeval comes from
one kernel, whether it is a point estimate (:func:`correlation`), a batch of vectors
(:func:`batch_correlation`: levels, bootstrap, permutation tests, Williams' test) or a weighted
bootstrap resample:

* Pearson (Pearson 1896): :func:`pearson_from_sums` on (weighted) sums of values centred and
  scaled before summing, as scipy's ``pearsonr`` (:func:`unit_scaled`: an exact power of two,
  so no sum of squares overflows near 1e200 or underflows near 1e-200);
* Spearman (Spearman 1904): the same kernel on average ranks (ties get the mean rank, as
  ``scipy.stats.rankdata``);
* Kendall tau-b (Kendall 1945; ``"kendall"``) and Stuart's tau-c (``"kendall_c"``): the pair
  counts of :mod:`nlgeval.correlation.kendall.kernels` (Knight 1966: sort + Fenwick tree, or
  enumeration for short vectors; with multiplicities in ``kendall.weighted`` for the
  bootstrap) turned into tau by one formula, ``_tau_from_counts``.

The kernels are tested against scipy (``pearsonr``, ``spearmanr``, ``kendalltau``) to 1e-12.
P-values come from scipy's null distributions (``pearsonr``: the exact beta distribution under
bivariate normality; ``spearmanr``: the t approximation; ``kendalltau``: exact or the
tie-corrected normal approximation), taken by scipy's own steps (:func:`pearson_pvalue`,
:func:`spearman_pvalue`, :func:`kendall_pvalue` from the pair counts of the tau kernel), the
same numbers bit for bit (tested with ``==`` against scipy); nlgeval adds explicit handling of
missing values (pairs with a NaN are dropped) and of degenerate input.

**Degenerate input, one rule for every coefficient** (Pearson, Spearman, Kendall tau-b/tau-c
and the Kendall variants tau_23/acc_23/acc_eq of :mod:`nlgeval.correlation.kendall`): a variable
is *constant* when all its values are equal or when it is numerically constant relative to its
own magnitude, ``max - min <= CONSTANT_RTOL * max |x|`` with :data:`CONSTANT_RTOL` = 1e-13
(values that differ by rounding only; :func:`near_constant`). The rule is scale-free, as
scipy's: a metric whose values on an item lie between 1e-318 and 1e-170 is not constant there,
and every coefficient uses that item. A coefficient is undefined -- NaN, never an exception --
when fewer than :data:`MIN_PAIRS` (3) complete pairs remain or either variable is constant;
the point estimate adds a :class:`DegenerateInputWarning` saying why, the batch kernels return
NaN silently (their callers count them). The Kendall variants are defined from 2 values on, as
in MTME and scipy (MTME's item grouping routinely has groups of 2 systems), and count every pair
of a constant group as tied (:func:`snap_near_constant` makes a numerically constant group
exactly constant). The resampling kernels that work from weighted sums
(:func:`pearson_from_sums`: the Pearson bootstrap and PERM-BOTH draws, the weighted Spearman
bootstrap) cannot see the values of a resample; they count a resample as constant when its
centred sum of squares is at most ``1e-10 * n * scale``, which is how a constant resample shows
up after rounding in the sums.
"""

from __future__ import annotations

import functools
import math
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
from scipy import special, stats

from nlgeval.correlation._constant import CONSTANT_RTOL as CONSTANT_RTOL
from nlgeval.correlation._constant import MIN_PAIRS as MIN_PAIRS
from nlgeval.correlation._constant import constant_from_extremes, extremes, overflow_safe
from nlgeval.correlation._constant import near_constant as near_constant
from nlgeval.correlation._constant import snap_near_constant as snap_near_constant
from nlgeval.correlation._constant import unit_scaled as unit_scaled
from nlgeval.results import ConfidenceInterval, StatResult

Coefficient = Literal["pearson", "spearman", "kendall", "kendall_c"]
COEFFICIENTS: tuple[str, ...] = ("pearson", "spearman", "kendall", "kendall_c")

#: Batches of this many values or more are ranked by :mod:`nlgeval.correlation._rank_kernels`
#: (exact ranks, scipy's numbers), smaller ones by scipy (no numba start-up for a few vectors).
_KERNEL_RANKS_MIN = 20_000

#: :func:`correlation` takes Kendall's p-value from :func:`kendall_pvalue` up to this many
#: pairs (2-3x faster than ``scipy.stats.kendalltau`` there) and from scipy beyond, where its
#: merge count is faster than the tau kernel's (benchmarks/bench_kendall_pvalue.py): the same
#: numbers either way
KENDALL_COUNTS_MAX = 512



class DegenerateInputWarning(RuntimeWarning):
    """A coefficient could not be computed (n < 3, constant scores) and is reported as NaN.

    Examples
    --------
    >>> import warnings
    >>> with warnings.catch_warnings(record=True) as w:
    ...     warnings.simplefilter("always")
    ...     r = correlation([1, 1, 1], [1, 2, 3])
    >>> w[0].category.__name__, r.statistic
    ('DegenerateInputWarning', nan)
    """


def check_coefficient(name: str) -> str:
    """The canonical name of a coefficient (tau, rho, r, tau-b, tau-c accepted); else InputError.

    Examples
    --------
    >>> check_coefficient("tau"), check_coefficient("Tau-C")
    ('kendall', 'kendall_c')
    """
    from nlgeval.errors import InputError

    key = name.strip().lower().replace("-", "_")
    aliases = {"tau": "kendall", "kendall_b": "kendall", "tau_b": "kendall", "tau_c": "kendall_c",
               "rho": "spearman", "r": "pearson"}
    key = aliases.get(key, key)
    if key not in COEFFICIENTS:
        raise InputError(
            f"unknown correlation coefficient '{name}' (use one of: {', '.join(COEFFICIENTS)})"
        )
    return key


@dataclass(frozen=True)
class CorrelationResult(StatResult):
    """One correlation coefficient with its p-value, sample size and confidence interval.

    ``ci_low``/``ci_high`` (``confidence_interval()``) is the Fisher-z interval for Pearson
    (Fisher 1921) and NaN for the rank coefficients (use the bootstrap in
    :mod:`nlgeval.correlation.bootstrap` for those). ``n_missing`` counts pairs dropped because
    one of the two values was missing. ``level`` is set when the coefficient was computed at a
    correlation level (:func:`nlgeval.correlation.levels.level_correlation`).

    Examples
    --------
    >>> res = correlation([1, 2, 3, 4], [1, 3, 2, 4])
    >>> r, p = res
    >>> round(r, 2), res.n
    (0.8, 4)
    """

    coefficient: str
    statistic: float
    pvalue: float
    n: int
    ci_low: float = math.nan
    ci_high: float = math.nan
    n_missing: int = 0
    note: str = ""
    level: str = ""


_NAN_CI = ConfidenceInterval(math.nan, math.nan)


@functools.lru_cache(maxsize=16)
def _normal_quantile(q: float) -> float:
    """``scipy.stats.norm.ppf(q)``, once per level (the same few levels, thousands of calls)."""
    return float(stats.norm.ppf(q))


def fisher_z_interval(r: float, n: int, confidence_level: float = 0.95) -> ConfidenceInterval:
    """Fisher (1921) interval for Pearson's r: tanh(atanh(r) -/+ z_{1-a/2} / sqrt(n - 3)).

    NaN when n <= 3 or r is NaN; r = +-1 gives the degenerate interval [r, r].

    Parameters
    ----------
    r : float
        Pearson's r.
    n : int
        The number of pairs.
    confidence_level : float, default 0.95
        The interval's coverage.

    Returns
    -------
    ConfidenceInterval
        ``low`` and ``high``.

    Examples
    --------
    >>> ci = fisher_z_interval(0.5, 28)
    >>> round(ci.low, 3), round(ci.high, 3)
    (0.156, 0.736)
    """
    if not np.isfinite(r) or n <= 3:
        return _NAN_CI
    if abs(r) >= 1.0:
        return ConfidenceInterval(float(r), float(r))
    z = math.atanh(r)
    half = _normal_quantile(0.5 + confidence_level / 2) / math.sqrt(n - 3)
    return ConfidenceInterval(math.tanh(z - half), math.tanh(z + half))


def _degenerate(reason: str, what: str = "") -> str:
    msg = f"correlation{(' ' + what) if what else ''} is NaN: {reason}"
    warnings.warn(msg, DegenerateInputWarning, stacklevel=3)
    return msg


def correlation(
    x: Any,
    y: Any,
    coefficient: str = "pearson",
    *,
    confidence_level: float = 0.95,
    alternative: Literal["two-sided", "less", "greater"] = "two-sided",
    label: str = "",
) -> CorrelationResult:
    """Correlation of two paired vectors; pairs with a missing (NaN) value are dropped and counted.

    Returns NaN (with a :class:`DegenerateInputWarning` naming ``label`` and the reason) when
    fewer than 3 complete pairs remain or either vector is constant.

    Parameters
    ----------
    x, y : array-like
        The paired values, same length.
    coefficient : str, default "pearson"
        ``pearson``, ``spearman``, ``kendall`` (tau-b) or ``kendall_c`` (tau-c).
    confidence_level : float, default 0.95
        Coverage of the Fisher-z interval (Pearson only; keyword-only, as below).
    alternative : {"two-sided", "less", "greater"}, default "two-sided"
        The alternative hypothesis of the p-value.
    label : str
        Names the input in warnings.

    Returns
    -------
    CorrelationResult
        The coefficient, statistic, p-value, number of complete pairs ``n`` and the interval.

    Examples
    --------
    >>> res = correlation([1, 2, 3, 4, 5], [2, 1, 4, 3, 5], "spearman")
    >>> round(res.statistic, 2), res.n
    (0.8, 5)
    """
    coefficient = check_coefficient(coefficient)
    x = np.asarray(x, dtype=float).ravel()
    y = np.asarray(y, dtype=float).ravel()
    if x.shape != y.shape:
        from nlgeval.errors import InputError

        raise InputError(f"x and y must have the same length, got {x.size} and {y.size}")
    ok = np.isfinite(x) & np.isfinite(y)
    n_missing = int(x.size - ok.sum())
    x, y = x[ok], y[ok]
    n = int(x.size)
    if n < MIN_PAIRS:
        note = _degenerate(f"only {n} complete pair(s), need at least {MIN_PAIRS}", label)
        return CorrelationResult(coefficient, math.nan, math.nan, n, *_NAN_CI, n_missing, note)
    if near_constant(x) or near_constant(y):
        v = x if near_constant(x) else y
        which = "first" if v is x else "second"
        how = "constant" if np.ptp(v) == 0 else (
            f"numerically constant (spread <= {CONSTANT_RTOL:g} of its magnitude)")
        note = _degenerate(f"the {which} variable is {how}", label)
        return CorrelationResult(coefficient, math.nan, math.nan, n, *_NAN_CI, n_missing, note)
    if coefficient == "spearman":  # the ranks once, for the statistic and the p-value
        rx, ry = average_ranks(x), average_ranks(y)
        r = float(_masked_pearson(rx, ry, np.ones(n, dtype=bool)))  # = batch_correlation
    else:
        r = float(batch_correlation(x, y, coefficient))  # the statistic: nlgeval's one kernel
    if not np.isfinite(r):  # a safety net: the rule above and the scaling leave no such case
        note = _degenerate("the coefficient could not be computed in floating point", label)
        return CorrelationResult(coefficient, math.nan, math.nan, n, *_NAN_CI, n_missing, note)
    ci = _NAN_CI
    # the p-value: scipy's null distribution of the statistic (computed from the same data),
    # by scipy's own steps without its per-call wrappers where they are written out here
    if coefficient == "pearson":
        p = pearson_pvalue(x, y, alternative)
        ci = fisher_z_interval(r, n, confidence_level)
    elif coefficient == "spearman":
        p = spearman_pvalue(rx, ry, alternative)
    else:
        p = _kendall_point_pvalue(x, y, coefficient, alternative)
    return CorrelationResult(coefficient, r, float(p), n, ci.low, ci.high, n_missing)


def _kendall_point_pvalue(x: np.ndarray, y: np.ndarray, coefficient: str,
                          alternative: str) -> float:
    """scipy's p-value of tau-b / tau-c (one for both): from the pair counts
    (:func:`kendall_pvalue`) up to :data:`KENDALL_COUNTS_MAX` pairs, where that is faster,
    else ``scipy.stats.kendalltau`` itself; the same numbers."""
    if x.size <= KENDALL_COUNTS_MAX:
        return kendall_pvalue(x, y, alternative)
    variant = "b" if coefficient == "kendall" else "c"
    return float(stats.kendalltau(x, y, variant=variant, alternative=alternative).pvalue)


def average_ranks(x: np.ndarray) -> np.ndarray:
    """``scipy.stats.rankdata(x)`` (ties get the mean of their ranks) of a finite 1-d vector,
    without scipy's per-call dispatch: the same floats (every average rank is an integer or
    half an integer, exact in floating point).

    Parameters
    ----------
    x : numpy.ndarray
        Finite values, 1-d.

    Returns
    -------
    numpy.ndarray
        The average rank of each value, from 1.

    Examples
    --------
    >>> average_ranks(np.array([3.0, 1.0, 3.0, 2.0])).tolist()
    [3.5, 1.0, 3.5, 2.0]
    """
    order = np.argsort(x, kind="mergesort")
    xs = x[order]
    new = np.empty(x.size, dtype=bool)
    new[:1] = True
    np.not_equal(xs[1:], xs[:-1], out=new[1:])
    dense = np.cumsum(new) - 1  # tie group of each sorted value
    starts = np.append(np.flatnonzero(new), x.size)  # first position of each group, and n
    ranks = np.empty(x.size)
    ranks[order] = 0.5 * (starts[dense] + starts[dense + 1] + 1)
    return ranks


def _tail_pvalue(stat: Any, alternative: str, below: Callable[[Any], Any],
                 above: Callable[[Any], Any]) -> Any:
    """The p-value of ``stat`` under a null distribution symmetric about 0 with tails
    ``below(v)`` = P(T <= v) and ``above(v)`` = P(T >= v): ``below(stat)`` ("less"),
    ``above(stat)`` ("greater"), ``2 * above(|stat|)`` ("two-sided"), as scipy's
    ``pearsonr`` and ``spearmanr`` take them; scipy's ValueError for any other
    ``alternative``. The one branch of :func:`pearson_pvalue` and :func:`spearman_pvalue`."""
    if alternative == "less":
        return below(stat)
    if alternative == "greater":
        return above(stat)
    if alternative == "two-sided":
        return 2 * above(np.abs(stat))
    raise ValueError("`alternative` must be 'less', 'greater', or 'two-sided'.")


def pearson_pvalue(x: np.ndarray, y: np.ndarray, alternative: str = "two-sided") -> float:
    """``scipy.stats.pearsonr(x, y, alternative=alternative).pvalue`` by scipy's own steps.

    For finite, non-constant 1-d vectors of n >= 3 pairs (what :func:`correlation` passes):
    scipy 1.17's r (centred, scaled by the largest deviation, normalised, ``vecdot``, clipped)
    and its exact null distribution, the symmetric beta distribution on (-1, 1) with
    a = b = n/2 - 1 (Pearson 1896; Fisher 1915), the same numbers bit for bit without the
    ~0.2 ms of array-API dispatch per call (tested with ``==`` against scipy).

    Parameters
    ----------
    x, y : numpy.ndarray
        Finite paired values, 1-d, neither constant, at least 3.
    alternative : {"two-sided", "less", "greater"}
        The alternative hypothesis.

    Returns
    -------
    float
        The p-value.

    Examples
    --------
    >>> x, y = np.array([1.0, 2.0, 3.0, 4.0]), np.array([1.0, 3.0, 2.0, 4.0])
    >>> bool(pearson_pvalue(x, y) == stats.pearsonr(x, y).pvalue)
    True
    """
    xm = x - np.mean(x, axis=-1, keepdims=True)
    ym = y - np.mean(y, axis=-1, keepdims=True)
    xmax = np.max(np.abs(xm), axis=-1, keepdims=True)
    ymax = np.max(np.abs(ym), axis=-1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        normxm = xmax * np.linalg.norm(xm / xmax, ord=2, axis=-1, keepdims=True)
        normym = ymax * np.linalg.norm(ym / ymax, ord=2, axis=-1, keepdims=True)
        r = np.clip(np.vecdot(xm / normxm, ym / normym), -1.0, 1.0)  # along the last axis
    ab = np.float64(x.shape[-1]) / 2 - 1
    return float(_tail_pvalue(r, alternative, lambda v: special.betainc(ab, ab, (v + 1) / 2),
                              lambda v: special.betaincc(ab, ab, (v + 1) / 2)))


def spearman_pvalue(rx: np.ndarray, ry: np.ndarray, alternative: str = "two-sided") -> float:
    """``scipy.stats.spearmanr(x, y, alternative=alternative).pvalue`` from the average ranks
    ``rx``, ``ry`` of x and y, by scipy's own steps.

    For finite, non-constant 1-d vectors of n >= 3 pairs (what :func:`correlation` passes):
    scipy 1.17's rho (``numpy.corrcoef`` of the ranks, laid out as scipy lays them out) and its
    t approximation, t = rho sqrt((n - 2) / ((1 + rho)(1 - rho))) on n - 2 degrees of freedom
    (Spearman 1904), the same numbers bit for bit (tested with ``==`` against scipy); the ranks
    are those :func:`correlation` already computed for the statistic.

    Parameters
    ----------
    rx, ry : numpy.ndarray
        ``scipy.stats.rankdata`` of x and of y.
    alternative : {"two-sided", "less", "greater"}
        The alternative hypothesis.

    Returns
    -------
    float
        The p-value.

    Examples
    --------
    >>> x, y = np.array([1.0, 2.0, 3.0, 4.0, 5.0]), np.array([2.0, 1.0, 4.0, 3.0, 5.0])
    >>> bool(spearman_pvalue(stats.rankdata(x), stats.rankdata(y)) == stats.spearmanr(x, y).pvalue)
    True
    """
    # scipy ranks the columns of an (n, 2) array into a (2, n) buffer: corrcoef of its rows
    rs = np.corrcoef(np.vstack((rx, ry)))
    dof = rx.shape[0] - 2
    with np.errstate(divide="ignore"):
        t = rs * np.sqrt((dof / ((rs + 1.0) * (1.0 - rs))).clip(0))
    prob = _tail_pvalue(t, alternative, lambda v: special.stdtr(dof, v),
                        lambda v: special.stdtr(dof, -v))
    return float(prob[1, 0])


def kendall_pvalue(x: np.ndarray, y: np.ndarray, alternative: str = "two-sided") -> float:
    """``scipy.stats.kendalltau(x, y, alternative=alternative).pvalue`` (tau-b or tau-c: scipy
    gives both the same p-value) from nlgeval's pair counts, by scipy's own steps.

    For finite 1-d vectors (what :func:`correlation` passes): the discordant pairs and the
    ties of :func:`nlgeval.correlation.kendall.pair_counts` (the counts of the tau kernel) and
    each variable's tie-group sizes, then scipy 1.17's choice and formulas: without ties and
    with n <= 33 (or at most one discordant or concordant pair) the exact null distribution of
    the concordant pairs (Kendall 1970, Rank Correlation Methods), otherwise the normal
    approximation of C - D with the tie-corrected variance (Kendall 1945). The same numbers
    bit for bit (tested with ``==`` against scipy), counted by the compiled kernel of tau
    instead of scipy's sorts and merge count, without scipy's per-call wrappers (2-3x faster
    up to a few hundred pairs, slower beyond: :data:`KENDALL_COUNTS_MAX`).

    Parameters
    ----------
    x, y : numpy.ndarray
        Finite paired values, 1-d, same length.
    alternative : {"two-sided", "less", "greater"}
        The alternative hypothesis.

    Returns
    -------
    float
        The p-value (NaN when either variable is constant, as scipy's).

    Examples
    --------
    >>> x, y = np.array([1.0, 2.0, 3.0, 4.0, 5.0]), np.array([2.0, 1.0, 4.0, 3.0, 3.0])
    >>> bool(kendall_pvalue(x, y) == stats.kendalltau(x, y).pvalue)
    True
    """
    from nlgeval.correlation.kendall.variants import pair_counts  # numba: on this path only

    if alternative not in ("two-sided", "less", "greater"):
        raise ValueError("`alternative` must be 'less', 'greater', or 'two-sided'.")
    counts = pair_counts(x, y)
    n = int(x.size)
    tot = n * (n - 1) // 2
    dis, ntie = int(counts.discordant), int(counts.ties_both)
    xtie, ytie = int(counts.ties_metric) + ntie, int(counts.ties_human) + ntie
    if xtie == tot or ytie == tot:
        return math.nan
    if xtie == 0 and ytie == 0 and (n <= 33 or min(dis, tot - dis) <= 1):
        return float(_kendall_exact_pvalue(n, tot - dis, alternative))
    x0, x1 = _tie_group_sums(x)
    y0, y1 = _tie_group_sums(y)
    # scipy's expression, in its types: Python ints (exact) and floats, in the same order
    m = n * (n - 1.)
    var = ((m * (2 * n + 5) - x1 - y1) / 18 +
           (2 * xtie * ytie) / m + x0 * y0 / (9 * m * (n - 2)))
    z = (tot - xtie - ytie + ntie - 2 * dis) / np.sqrt(var)
    return float(_tail_pvalue(z, alternative, special.ndtr, lambda v: special.ndtr(-v)))


def _tie_group_sums(v: np.ndarray) -> tuple[int, int]:
    """Over the groups of equal values of ``v`` (in increasing order, sizes t > 1): the sums
    of t (t - 1)(t - 2) and of t (t - 1)(2t + 5), in floating point as scipy's
    ``kendalltau`` takes them, then as ints."""
    vs = np.sort(v)
    cnt = np.diff(np.flatnonzero(np.r_[True, vs[1:] != vs[:-1], True])).astype(np.int64)
    cnt = cnt[cnt > 1]
    return (int((cnt * (cnt - 1.) * (cnt - 2)).sum()),
            int((cnt * (cnt - 1.) * (2 * cnt + 5)).sum()))


def _kendall_exact_pvalue(n: int, c: int, alternative: str) -> Any:
    """The exact p-value of ``c`` concordant pairs among n untied values (Kendall 1970):
    scipy 1.17's ``_kendall_p_exact`` step for step (the counts of permutations with a given
    number of inversions by repeated cumulative sums, the tail doubled, the one-sided value
    from it)."""
    in_right_tail = c >= (n * (n - 1)) // 2 - c
    alternative_greater = alternative == "greater"
    c = int(min(c, (n * (n - 1)) // 2 - c))
    p_mass_at_c: Any = 0.0
    if n == 1:
        prob, p_mass_at_c = 1.0, 1
    elif n == 2:
        prob, p_mass_at_c = 1.0, 0.5
    elif c == 0:
        prob = 2.0 / math.factorial(n) if n < 171 else 0.0
        p_mass_at_c = prob / 2
    elif c == 1:
        prob = 2.0 / math.factorial(n - 1) if n < 172 else 0.0
        p_mass_at_c = (n - 1) / math.factorial(n)
    elif 4 * c == n * (n - 1) and alternative == "two-sided":
        prob = 1.0
    elif n < 171:
        new = np.zeros(c + 1)
        new[0:2] = 1.0
        for j in range(3, n + 1):
            new = np.cumsum(new)
            if j <= c:
                new[j:] -= new[:c + 1 - j]
        prob = 2.0 * np.sum(new) / math.factorial(n)
        p_mass_at_c = new[-1] / math.factorial(n)
    else:
        new = np.zeros(c + 1)
        new[0:2] = 1.0
        for j in range(3, n + 1):
            new = np.cumsum(new) / j
            if j <= c:
                new[j:] -= new[:c + 1 - j]
        prob = np.sum(new)
        p_mass_at_c = new[-1] / 2
    if alternative != "two-sided":
        if in_right_tail == alternative_greater:
            prob /= 2
        else:
            prob = 1 - prob / 2 + p_mass_at_c
    return np.clip(prob, 0, 1)


# ----------------------------------------------------------------------------- batch versions
def pearson_from_sums(
    n: np.ndarray, sx: np.ndarray | float, sy: np.ndarray | float, sxx: np.ndarray,
    syy: np.ndarray, sxy: np.ndarray, scale_x: np.ndarray | float, scale_y: np.ndarray | float,
) -> np.ndarray:
    """Pearson r (Pearson 1896) from (weighted) sums: the one Pearson kernel of nlgeval.

    ``n`` is the total weight, ``sx``... the weighted sums of x, y, x^2, y^2 and xy (ideally of
    values centred near their mean, to limit cancellation); ``scale_x``/``scale_y`` the mean
    square that decides when a centred sum of squares counts as zero. Callers scale the values
    to magnitude about 1 first (:func:`unit_scaled`), so that no sum or product overflows.
    NaN when ``n < 3`` or a variable is constant (the sums' form of the module's
    degenerate-input rule: see the module docstring); clipped to [-1, 1].

    Examples
    --------
    >>> import numpy as np
    >>> x, y = np.array([1.0, 2.0, 4.0]), np.array([1.0, 3.0, 2.0])
    >>> r = pearson_from_sums(3, x.sum(), y.sum(), x @ x, y @ y, x @ y, x @ x / 3, y @ y / 3)
    >>> bool(np.isclose(r, np.corrcoef(x, y)[0, 1]))
    True
    """
    n = np.asarray(n, dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        cxx = sxx - sx * sx / n
        cyy = syy - sy * sy / n
        cxy = sxy - sx * sy / n
        r = cxy / np.sqrt(cxx * cyy)
    # ~10^5 calls per study on small arrays: ufuncs, not np.clip's wrapper (the same numbers)
    n1 = np.maximum(n, 1)
    bad = ~(n >= MIN_PAIRS) | (cxx <= 1e-10 * np.maximum(scale_x, 1e-300) * n1)
    bad |= cyy <= 1e-10 * np.maximum(scale_y, 1e-300) * n1
    return np.where(bad, np.nan, np.minimum(np.maximum(r, -1.0), 1.0))


def _masked_pearson(x: np.ndarray, y: np.ndarray, valid: np.ndarray) -> np.ndarray:
    """Pearson r along the last axis using only positions where ``valid`` is True.

    The values come scaled where their magnitude asks for it (:func:`batch_correlation`:
    :func:`~nlgeval.correlation._constant.overflow_safe`), and are centred here before summing,
    as scipy's ``pearsonr`` does.
    """
    w = valid.astype(float)
    n = w.sum(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        mx = np.where(valid, x, 0.0).sum(axis=-1) / n
        my = np.where(valid, y, 0.0).sum(axis=-1) / n
        dx = np.where(valid, x - mx[..., None], 0.0)
        dy = np.where(valid, y - my[..., None], 0.0)
        sxx = (dx * dx).sum(axis=-1)
        syy = (dy * dy).sum(axis=-1)
        r = pearson_from_sums(n, 0.0, 0.0, sxx, syy, (dx * dy).sum(axis=-1), 0.0, 0.0)
    # constant variables (the rule, near_constant) are set to NaN by batch_correlation
    return np.where(n < MIN_PAIRS, np.nan, r)


def _masked_ranks(x: np.ndarray, valid: np.ndarray) -> np.ndarray:
    """Average ranks along the last axis among the valid entries (invalid -> NaN).

    Invalid entries are set to +inf before ranking, so they take the top ranks and leave the
    ranks of the valid entries exactly as if they had been ranked alone.
    """
    if x.size >= _KERNEL_RANKS_MIN:  # a large batch: one compiled loop, the same numbers
        from nlgeval.correlation._rank_kernels import masked_average_ranks

        return masked_average_ranks(x, valid)
    ranks = stats.rankdata(np.where(valid, x, np.inf), axis=-1, method="average")
    return np.where(valid, ranks, np.nan)


def batch_correlation(x: np.ndarray, y: np.ndarray, coefficient: str = "pearson") -> np.ndarray:
    """The coefficient along the last axis of ``x`` and ``y`` (any leading shape), NaN = missing.

    :func:`correlation` takes its statistic from here, so the numbers are the same by
    construction: Pearson from masked centred moments (:func:`pearson_from_sums`), Spearman as
    Pearson on average ranks (``scipy.stats.rankdata(axis=-1)``), Kendall tau-b / tau-c from the
    pair counts of each vector (numba, O(n log n) per vector, no n^2 memory; see
    :mod:`nlgeval.correlation.kendall.kernels`). Degenerate vectors (fewer than
    :data:`MIN_PAIRS` complete pairs, a constant variable) give NaN silently (callers count
    them).

    Parameters
    ----------
    x, y : numpy.ndarray
        Paired values along the last axis, same shape, NaN for a missing value.
    coefficient : str, default "pearson"
        ``pearson``, ``spearman``, ``kendall`` (tau-b) or ``kendall_c`` (tau-c).

    Returns
    -------
    numpy.ndarray
        The coefficient of each vector pair, of the leading shape; NaN where undefined.

    Examples
    --------
    >>> import numpy as np
    >>> x = np.array([[1.0, 2.0, 3.0, 4.0], [1.0, 2.0, 3.0, np.nan]])
    >>> batch_correlation(x, np.array([[1.0, 3.0, 2.0, 4.0]] * 2), "kendall").round(3)
    array([0.667, 0.333])
    """
    coefficient = check_coefficient(coefficient)
    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    valid = np.isfinite(x) & np.isfinite(y)
    if coefficient == "pearson" and x.ndim == 1 and x.shape == y.shape and valid.all():
        return _complete_pearson(x, y)  # one complete vector pair: the same numbers, sooner
    # the one degenerate-input rule, on the values themselves (before any ranking)
    (hx, lx), (hy, ly) = extremes(x, valid), extremes(y, valid)
    const = constant_from_extremes(hx, lx) | constant_from_extremes(hy, ly)
    if coefficient == "pearson":  # scaled where the magnitudes could overflow / underflow
        r = _masked_pearson(overflow_safe(x, hx, lx), overflow_safe(y, hy, ly), valid)
        return np.where(const, np.nan, r)
    return np.where(const, np.nan, _batch_statistic(x, y, valid, coefficient))


def _complete_pearson(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """:func:`batch_correlation` of one pair of complete (finite) vectors, Pearson: the steps
    of the general path (the rule on the extremes, the scaling, :func:`_masked_pearson`'s
    centred sums) without the masks, which are all True here -- the same floats (each masked
    ``np.where`` copies the vector unchanged), for the thousands of short vectors of a study
    (per-rater and per-criterion coefficients)."""
    if x.size == 0:
        return np.asarray(np.nan)
    hx, lx, hy, ly = x.max(), x.min(), y.max(), y.min()
    if constant_from_extremes(np.array([hx, hy]), np.array([lx, ly])).any():  # the rule
        return np.asarray(np.nan)
    # contiguous, as the masked copies are (a strided sum is taken in buffered chunks)
    x = np.ascontiguousarray(overflow_safe(x, hx, lx))
    y = np.ascontiguousarray(overflow_safe(y, hy, ly))
    n = np.asarray(float(x.size))
    with np.errstate(invalid="ignore", divide="ignore"):
        dx = x - x.sum() / n
        dy = y - y.sum() / n
        r = pearson_from_sums(n, 0.0, 0.0, (dx * dx).sum(), (dy * dy).sum(), (dx * dy).sum(),
                              0.0, 0.0)
    return np.where(n < MIN_PAIRS, np.nan, r)


def _batch_statistic(x: np.ndarray, y: np.ndarray, valid: np.ndarray, coefficient: str
                     ) -> np.ndarray:
    if coefficient == "spearman":
        return _masked_pearson(_masked_ranks(x, valid), _masked_ranks(y, valid), valid)
    # numba is imported only when a Kendall coefficient is asked for (start-up time)
    from nlgeval.correlation.kendall.kernels import batch_tau
    from nlgeval.correlation.kendall.results import DIRECT_MAX

    x, y = np.broadcast_arrays(x, y)
    lead, m = x.shape[:-1], x.shape[-1]
    rows = int(np.prod(lead, dtype=np.int64))
    x2 = np.ascontiguousarray(x.reshape(rows, m))  # the kernel drops non-finite pairs itself
    y2 = np.ascontiguousarray(y.reshape(rows, m))
    code = 0 if coefficient == "kendall" else 1
    return batch_tau(x2, y2, code, DIRECT_MAX, MIN_PAIRS).reshape(lead)


def fixed_y_statistic(x: np.ndarray, y: np.ndarray, coefficient: str
                      ) -> Callable[[np.ndarray], np.ndarray]:
    """A function ``stat(perm)`` giving :func:`batch_correlation` of ``x`` permuted along the
    last axis by the index stack ``perm`` (shape (b, *x.shape)) against the fixed ``y``.

    For permutation tests that shuffle x only among the valid cells of each row (the valid
    cells first in every row, ``perm`` keeping them there): everything that does not change
    under such a shuffle -- the validity mask, the degenerate-input rule on both variables,
    the scaling, the centred y and its sum of squares, and for Spearman the ranks and centred
    ranks of x (rank sums are exact, so the mean rank does not depend on the order) -- is
    computed once here, not once per permutation. The results are the same numbers as
    ``batch_correlation(take_along_axis(x, perm), y)``, bit for bit: every sum that depends
    on the order of x is still taken in the permuted order.

    Examples
    --------
    >>> import numpy as np
    >>> x, y = np.array([[1.0, 3.0, 2.0, 5.0]]), np.array([[1.0, 2.0, 3.0, 4.0]])
    >>> perm = np.array([[[0, 1, 2, 3]], [[3, 2, 1, 0]]])
    >>> stat = fixed_y_statistic(x, y, "spearman")
    >>> stat(perm).round(2).tolist()
    [[0.8], [-0.8]]
    """
    coefficient = check_coefficient(coefficient)
    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    valid = np.isfinite(x) & np.isfinite(y)
    (hx, lx), (hy, ly) = extremes(x, valid), extremes(y, valid)
    const = constant_from_extremes(hx, lx) | constant_from_extremes(hy, ly)
    if coefficient not in ("pearson", "spearman"):
        yb = np.ascontiguousarray(y)

        def kendall(perm: np.ndarray) -> np.ndarray:
            xp = np.take_along_axis(np.broadcast_to(x, perm.shape), perm, axis=-1)
            ys = np.broadcast_to(yb, perm.shape).copy()
            return np.where(const, np.nan, _batch_statistic(xp, ys, valid, coefficient))
        return kendall
    n = valid.astype(float).sum(axis=-1)
    if coefficient == "spearman":
        x, y = _masked_ranks(x, valid), _masked_ranks(y, valid)
    else:
        x, y = overflow_safe(x, hx, lx), overflow_safe(y, hy, ly)
    with np.errstate(invalid="ignore", divide="ignore"):
        my = np.where(valid, y, 0.0).sum(axis=-1) / n
        dy = np.where(valid, y - my[..., None], 0.0)
        syy = (dy * dy).sum(axis=-1)
        x0 = np.where(valid, x, 0.0)
        if coefficient == "spearman":  # exact rank sums: the centred ranks are permuted as is
            x0 = np.where(valid, x - (x0.sum(axis=-1) / n)[..., None], 0.0)

    def pearson(perm: np.ndarray) -> np.ndarray:
        dx = np.take_along_axis(np.broadcast_to(x0, perm.shape), perm, axis=-1)
        with np.errstate(invalid="ignore", divide="ignore"):
            if coefficient == "pearson":
                dx = np.where(valid, dx - (dx.sum(axis=-1) / n)[..., None], 0.0)
            r = pearson_from_sums(n, 0.0, 0.0, (dx * dx).sum(axis=-1), syy,
                                  (dx * dy).sum(axis=-1), 0.0, 0.0)
        return np.where(const | (n < MIN_PAIRS), np.nan, r)
    return pearson
