"""Power and number of judges for the triangle test (Table 1 of González-Corbelle et al. 2020), and
the inverse.

Power of the test of difference with ``n`` judges, level ``alpha`` and a true proportion of
discriminators ``pd`` is ``P(X >= x_crit(n, alpha) | n, pc(pd))`` (exact binomial; Schlich 1993;
ISO 4120). Because ``x_crit`` jumps by whole answers, power is saw-toothed in ``n`` (e.g.
alpha = .05, pd = .3: power .8155 at n = 40, .7709 at 41, .8152 at 42), so "the number of judges"
has two honest answers, and nlgeval reports both:

``judges`` (first n)
    the smallest n whose power reaches ``1 - beta``. This is what Table 1 of González-Corbelle et
    al. (2020) prints
    (124 of its 125 cells) and what sensR calls ``statistic = "exact"``.
``judges_stable`` (stable n)
    the smallest n from which *every* larger n also reaches ``1 - beta`` (sensR's
    ``"stable.exact"``; Ennis & Jesionka 2011). Plan with this one if the final number of judges
    may end up a little larger than planned.

The test of similarity needs the same numbers: "exists x with P(X >= x | 1/3) <= alpha and
P(X <= x - 1 | pc(pd)) <= beta" is the condition for both tests (with the roles of alpha and
beta swapped in their interpretation), which is why González-Corbelle et al. (2020) and ISO 4120
use one Table 1 for
both; :func:`power` computes each test's own power and the tests check that they agree.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import pandas as pd
from scipy import stats

from nlgeval.errors import InputError
from nlgeval.progress import track
from nlgeval.results import Result
from nlgeval.triangle.critical import (
    P_GUESS,
    RECOMMENDED_MINIMUM,
    Method,
    TestType,
    check_method,
    check_n,
    check_probability,
    check_test,
    max_correct,
    max_correct_array,
    min_correct,
    min_correct_array,
    pc_from_pd,
    pvalue_difference,
    pvalue_similarity,
)

PAPER_ALPHAS = (0.2, 0.1, 0.05, 0.01, 0.001)
PAPER_BETAS = (0.2, 0.1, 0.05, 0.01, 0.001)
PAPER_PDS = (0.5, 0.4, 0.3, 0.2, 0.1)
_N_CAP = 2_000_000


def power_curve(
    n: np.ndarray | Sequence[int],
    alpha: float,
    beta: float,
    pd: float,
    test: TestType = "difference",
    pd_true: float | None = None,
) -> np.ndarray:
    """Exact power for each number of judges in ``n`` (vectorised).

    ``test="difference"``: P(reject "no difference") = P(X >= x_crit(n, alpha) | pc(pd_true)),
    with ``pd_true`` defaulting to ``pd`` (the planned alternative).
    ``test="similarity"``: P(declare similarity) = P(X <= x_max(n, beta, pd) | pc(pd_true)),
    with ``pd_true`` defaulting to 0 (the texts are truly indistinguishable).

    Parameters
    ----------
    n : array-like of int
        Numbers of judges.
    alpha, beta : float
        Risks of a type I and of a type II error.
    pd : float
        Proportion of discriminators ``pd0`` of the plan.
    test : {"difference", "similarity"}, default "difference"
    pd_true : float, optional
        True proportion of discriminators (defaults above).

    Returns
    -------
    ndarray
        The exact power for each ``n``.

    Examples
    --------
    The saw-tooth of the module docstring (alpha = 0.05, beta = 0.2, pd = 30%):

    >>> power_curve([40, 41, 42], 0.05, 0.2, 0.3).round(4).tolist()
    [0.8155, 0.7709, 0.8152]
    """
    alpha = check_probability("alpha", alpha)
    beta = check_probability("beta", beta)
    pd = check_probability("pd", pd)
    check_test(test)
    n = np.asarray(n, dtype=np.int64)
    if np.any(n < 1):
        raise InputError("numbers of judges must be >= 1")
    if test == "difference":
        true = pd if pd_true is None else float(pd_true)
        if not 0.0 <= true <= 1.0:
            raise InputError(f"pd_true must lie in [0, 1], got {pd_true}")
        x = min_correct_array(n, alpha)
        return np.where(x > n, 0.0, stats.binom.sf(x - 1, n, pc_from_pd(true)))
    true = 0.0 if pd_true is None else float(pd_true)
    if not 0.0 <= true <= 1.0:
        raise InputError(f"pd_true must lie in [0, 1], got {pd_true}")
    x = max_correct_array(n, beta, pd)
    return np.where(x < 0, 0.0, stats.binom.cdf(x, n, pc_from_pd(true)))


def power(
    n: int,
    alpha: float,
    beta: float,
    pd: float,
    test: TestType = "difference",
    pd_true: float | None = None,
) -> float:
    """Exact power of one planned triangle test (see :func:`power_curve`).

    Parameters
    ----------
    n : int
        Number of judges.
    alpha, beta : float
        Risks of a type I and of a type II error.
    pd : float
        Proportion of discriminators ``pd0`` of the plan.
    test : {"difference", "similarity"}, default "difference"
    pd_true : float, optional
        True proportion of discriminators (default as in :func:`power_curve`).

    Returns
    -------
    float
        The exact power.

    Examples
    --------
    >>> round(power(40, 0.05, 0.2, 0.3), 4)
    0.8155
    """
    n = check_n(n, "n (number of judges)")
    return float(power_curve(np.array([n]), alpha, beta, pd, test, pd_true)[0])


def _target(alpha: float, beta: float, test: TestType) -> float:
    # Difference: power against pd must reach 1 - beta. Similarity: P(declare similar | pd = 0)
    # must reach 1 - alpha (its type II error is the alpha of the difference test).
    return 1.0 - beta if test == "difference" else 1.0 - alpha


def _initial_guess(alpha: float, beta: float, pd: float) -> int:
    p1 = float(pc_from_pd(pd))
    za, zb = stats.norm.isf(alpha), stats.norm.isf(beta)
    spread = za * np.sqrt(P_GUESS * (1 - P_GUESS)) + zb * np.sqrt(p1 * (1 - p1))
    n = (spread / (p1 - P_GUESS)) ** 2
    return int(np.ceil(n)) + 20


@dataclass(frozen=True)
class SampleSize(Result):
    """Number of judges for a triangle test (exact binomial; both saw-tooth answers).

    Examples:
        >>> ss = sample_size(0.05, 0.05, 0.5)
        >>> (ss.judges, ss.judges_stable)
        (23, 29)
    """

    test: str
    alpha: float
    beta: float
    pd: float
    judges: int
    """First n whose power reaches the target (what Table 1 of González-Corbelle et al. (2020)
    prints)."""
    judges_stable: int
    """Smallest n from which every larger n reaches the target too."""
    power: float
    power_stable: float
    target_power: float
    critical_value: int
    """Min correct (difference) or max correct (similarity) at ``judges``."""
    critical_value_stable: int
    recommended_minimum: int
    """ISO 4120 minimum number of judges whatever the sensitivity: 18 / 30."""
    judges_recommended: int
    """max(judges_stable, recommended_minimum)."""
    n_checked: int
    """Largest n examined when establishing ``judges_stable``."""
    note: str


def sample_size(
    alpha: float, beta: float, pd: float, test: TestType = "difference"
) -> SampleSize:
    """Number of judges needed for risks ``alpha``, ``beta`` and proportion ``pd`` (Table 1).

    Scans n = 1, 2, ... with the exact power (:func:`power_curve`), vectorised over n, until the
    last n that misses the target lies in the first half of the scanned range (the saw-tooth's
    dips shrink as n grows, so any later dip would sit just above the first n; the scan
    doubles its range until this holds). See the module docstring for ``judges`` versus
    ``judges_stable``.

    Parameters
    ----------
    alpha, beta, pd, test : float, float, float, {"difference", "similarity"}
    Returns
    -------
    SampleSize

    Examples
    --------
    Table 1 of González-Corbelle et al. (2020), alpha = 0.05, beta = 0.2, pd = 30%:

    >>> ss = sample_size(0.05, 0.2, 0.3)
    >>> (ss.judges, ss.judges_stable)
    (40, 42)
    """
    alpha = check_probability("alpha", alpha)
    beta = check_probability("beta", beta)
    pd = check_probability("pd", pd)
    test = check_test(test)
    target = _target(alpha, beta, test)
    n_max = max(64, 2 * _initial_guess(alpha, beta, pd))
    while True:
        ns = np.arange(1, n_max + 1)
        pw = power_curve(ns, alpha, beta, pd, test)
        ok = pw >= target
        if ok.any():
            first = int(ns[np.argmax(ok)])
            failing = np.flatnonzero(~ok)
            last_fail = int(ns[failing[-1]]) if failing.size else 0
            if last_fail < n_max // 2 and first <= n_max // 2:
                break
        if n_max > _N_CAP:
            raise InputError(
                f"more than {_N_CAP} judges would be needed for alpha={alpha}, beta={beta}, "
                f"pd={pd}"
            )
        n_max *= 2
    stable = last_fail + 1
    crit = (
        min_correct_array(np.array([first, stable]), alpha)
        if test == "difference"
        else max_correct_array(np.array([first, stable]), beta, pd)
    )
    minimum = RECOMMENDED_MINIMUM[test]
    notes = []
    if stable != first:
        notes.append(
            f"power is saw-toothed in n: {first} judges reach {target:.3g} power but some larger "
            f"numbers do not; from {stable} judges on every number does"
        )
    if stable < minimum:
        notes.append(f"ISO 4120 recommends at least {minimum} judges for a {test} test")
    return SampleSize(
        test=test,
        alpha=alpha,
        beta=beta,
        pd=pd,
        judges=first,
        judges_stable=stable,
        power=float(pw[first - 1]),
        power_stable=float(pw[stable - 1]),
        target_power=target,
        critical_value=int(crit[0]),
        critical_value_stable=int(crit[1]),
        recommended_minimum=minimum,
        judges_recommended=max(stable, minimum),
        n_checked=n_max,
        note="; ".join(notes),
    )


def supported_designs(
    judges: int,
    *,
    alphas: Sequence[float] = PAPER_ALPHAS,
    betas: Sequence[float] = PAPER_BETAS,
    pds: Sequence[float] = PAPER_PDS,
    test: TestType = "difference",
) -> pd.DataFrame:
    """The inverse plan: which (alpha, beta, pd) a given number of judges supports.

    One row per combination with the exact power at exactly ``judges`` judges, ``supported``
    (power >= target at this n: the saw-tooth means a larger n than ``judges_first`` is not
    automatically enough), and the first and stable numbers of judges for comparison.
    Sorted with the most sensitive supported designs first (small pd, small risks).

    Parameters
    ----------
    judges : int
        Number of judges available.
    alphas, betas, pds : sequence of float, default the values of the paper's tables
        Risks and proportions of discriminators to combine.
    test : {"difference", "similarity"}, default "difference"

    Returns
    -------
    DataFrame
        One row per (alpha, beta, pd): power, ``supported`` and numbers of judges.

    Examples
    --------
    >>> df = supported_designs(24, alphas=[0.05], betas=[0.2], pds=[0.5, 0.3])
    >>> df[["pd", "supported"]].values.tolist()
    [[0.5, True], [0.3, False]]
    """
    judges = check_n(judges, "judges")
    test = check_test(test)
    rows = []
    cells = [(a, pdv, b) for a in alphas for pdv in pds for b in betas]
    for a, pdv, b in track(cells, f"designs for {judges} judges"):
        pw = power(judges, a, b, pdv, test)
        ss = sample_size(a, b, pdv, test)
        rows.append(
            {
                "alpha": float(a),
                "beta": float(b),
                "pd": float(pdv),
                "power": pw,
                "target_power": _target(a, b, test),
                "supported": bool(pw >= _target(a, b, test)),
                "judges_first": ss.judges,
                "judges_stable": ss.judges_stable,
            }
        )
    df = pd.DataFrame(rows)
    return df.sort_values(
        ["supported", "pd", "alpha", "beta"], ascending=[False, True, True, True]
    ).reset_index(drop=True)


@dataclass(frozen=True)
class CriticalValue(Result):
    """The critical number of correct answers for ``n`` judges, its p-value and the power.

    Test of difference: ``min_correct`` (Table 2 of González-Corbelle et al. 2020); the power
    is reported only when ``pd`` is given. Test of similarity: ``max_correct`` (Table 3).
    ``None`` marks a critical value that no count attains.

    Examples:
        Table 2 of González-Corbelle et al. (2020), n = 24, alpha = 0.05:

        >>> cv = critical_value(24, alpha=0.05)
        >>> cv.min_correct, round(cv.pvalue_at_critical, 4)
        (13, 0.0284)
        >>> list(cv.to_dict())
        ['test', 'n', 'method', 'alpha', 'min_correct', 'pvalue_at_critical']
    """

    test: str
    n: int
    method: str
    alpha: float | None
    beta: float | None
    pd: float | None
    min_correct: int | None
    max_correct: int | None
    pvalue_at_critical: float | None
    pd_true: float | None
    power: float | None

    # The documented ``triangle critical --json`` objects list only the keys of their test
    # (and no power without a pd), in this order; the derived dict is filtered accordingly.
    _KEYS: ClassVar[dict[str, tuple[str, ...]]] = {
        "difference": ("test", "n", "method", "alpha", "min_correct", "pvalue_at_critical"),
        "difference+pd": ("pd", "beta", "pd_true", "power"),
        "similarity": ("test", "n", "method", "beta", "pd", "max_correct",
                       "pvalue_at_critical", "pd_true", "power"),
    }

    def to_dict(self) -> dict[str, Any]:
        """The keys of this test only (see the class docstring).

        Examples:
            >>> critical_value(24, alpha=0.05).to_dict()["min_correct"]
            13
        """
        full = super().to_dict()
        keys = self._KEYS[self.test]
        if self.test == "difference" and self.pd is not None:
            keys = keys + self._KEYS["difference+pd"]
        return {k: full[k] for k in keys}


def critical_value(
    n: int,
    *,
    alpha: float = 0.05,
    beta: float = 0.05,
    pd: float | None = None,
    test: TestType = "difference",
    method: Method = "exact",
    pd_true: float | None = None,
) -> CriticalValue:
    """Critical value of a triangle test with ``n`` judges, with its exact p-value and power.

    Difference: the minimum number of correct answers at level ``alpha`` (Table 2 of
    González-Corbelle et al. 2020) and, when ``pd`` is given, the exact power against
    ``pd_true`` (default ``pd``). Similarity (needs ``pd``): the maximum number of correct
    answers at risk ``beta`` (Table 3) and the power against ``pd_true`` (default 0).
    ``method="normal"`` uses the paper's normal approximation instead of the exact binomial.

    Parameters
    ----------
    n : int
        Number of judges.
    alpha, beta : float, default 0.05
        Risks of a type I and of a type II error.
    pd : float, optional
        Proportion of discriminators ``pd0`` (needed for similarity).
    test : {"difference", "similarity"}, default "difference"
    method : {"exact", "normal"}, default "exact"
    pd_true : float, optional
        True proportion of discriminators for the power.

    Returns
    -------
    CriticalValue
        The critical number of correct answers, its exact p-value and the power.

    Examples
    --------
    Table 2 of González-Corbelle et al. (2020), n = 24, alpha = 0.05, and Table 3,
    n = 30, beta = 0.05, pd = 30%:

    >>> critical_value(24, alpha=0.05).min_correct
    13
    >>> critical_value(24, alpha=0.05, method="normal").min_correct
    12
    >>> critical_value(30, beta=0.05, pd=0.3, test="similarity").max_correct
    11
    """
    n = check_n(n)
    check_test(test)
    check_method(method)
    if test == "difference":
        x = min_correct(n, alpha, method)
        return CriticalValue(
            test, n, method, alpha, None if pd is None else beta, pd, x, None,
            None if x is None else pvalue_difference(x, n),
            None if pd is None else (pd if pd_true is None else pd_true),
            None if pd is None else power(n, alpha, beta, pd, "difference", pd_true))
    if pd is None:
        raise InputError("a test of similarity needs pd (e.g. 0.3)")
    x = max_correct(n, beta, pd, method)
    return CriticalValue(
        test, n, method, None, beta, pd, None, x,
        None if x is None else pvalue_similarity(x, n, pd),
        0.0 if pd_true is None else pd_true,
        power(n, alpha, beta, pd, "similarity", pd_true))
