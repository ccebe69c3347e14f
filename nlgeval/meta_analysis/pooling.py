"""The random-effects model: pooled estimate, interval, prediction interval, heterogeneity.

With ``w_i = 1 / (v_i + tau^2)`` (tau^2 from :mod:`nlgeval.meta_analysis.estimators`), the
pooled estimate is ``mu = sum w_i y_i / sum w_i`` with ``se = 1 / sqrt(sum w_i)`` and a normal
interval (DerSimonian & Laird 1986), or, with ``hartung_knapp=True``, the Hartung & Knapp
(2001) / Sidik & Jonkman (2002) interval ``mu +- t_{k-1} * se_HK`` where
``se_HK^2 = sum w_i (y_i - mu)^2 / ((k - 1) sum w_i)`` (statsmodels' ``var_hksj_re``,
metafor's ``test="knha"``).

Heterogeneity: Cochran's ``Q = sum (y_i - mu_FE)^2 / v_i`` on ``k - 1`` degrees of freedom;
``I^2 = tau^2 / (tau^2 + s^2)`` with the typical within-study variance
``s^2 = (k - 1) sum(1/v) / ((sum 1/v)^2 - sum(1/v^2))`` (Higgins & Thompson 2002; for DL this
is ``(Q - (k-1)) / Q``, and it is what metafor prints for every estimator); ``H^2 = (tau^2 +
s^2) / s^2``.

Prediction interval for the effect in a new study (Higgins, Thompson & Spiegelhalter 2009;
Riley et al. 2011): ``mu +- t_{k-2} sqrt(se^2 + tau^2)`` (``prediction="riley"``, the
default; undefined for fewer than 3 studies), or metafor's default ``mu +- z sqrt(se^2 +
tau^2)`` (``t_{k-1}`` with Hartung-Knapp; ``prediction="metafor"``; metafor's
``predict.rma`` note explains that neither is exact).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import stats

from nlgeval.errors import InputError
from nlgeval.meta_analysis.estimators import check_method, estimate_tau2
from nlgeval.results import StatResult

__all__ = ["PREDICTION_TYPES", "RandomEffects", "random_effects"]

#: how the prediction interval is computed (see the module docstring)
PREDICTION_TYPES = ("riley", "metafor")


@dataclass(frozen=True)
class RandomEffects(StatResult):
    """A random-effects meta-analysis on the effect scale (Fisher's z for correlations).

    ``statistic`` is the pooled estimate ``mu`` with standard error ``se`` (the Hartung-Knapp
    one when ``hartung_knapp``), ``pvalue`` tests ``mu = 0``; ``ci_low/ci_high`` its interval,
    ``pi_low/pi_high`` the prediction interval, ``tau2``/``tau`` the between-study variance
    and SD, ``i2`` and ``h2`` shares (``i2`` in [0, 1]), ``q`` Cochran's Q with ``q_df`` and
    ``q_pvalue``, ``k`` studies, ``weights`` the relative random-effects weights.

    Examples
    --------
    >>> res = random_effects([0.2, 0.4, 0.3], [0.01, 0.02, 0.015], method="dl")
    >>> res.k, round(res.statistic, 4), res.tau2
    (3, 0.2769, 0.0)
    """

    statistic: float
    pvalue: float
    se: float
    ci_low: float
    ci_high: float
    pi_low: float
    pi_high: float
    tau2: float
    tau: float
    i2: float
    h2: float
    q: float
    q_df: int
    q_pvalue: float
    k: int
    method: str
    hartung_knapp: bool
    prediction: str
    confidence_level: float
    weights: tuple[float, ...] = ()

    _omit = frozenset({"weights"})


def random_effects(y: np.ndarray | list[float], v: np.ndarray | list[float], *,
                   method: str = "reml", hartung_knapp: bool = False,
                   confidence_level: float = 0.95, prediction: str = "riley") -> RandomEffects:
    """Pool effects ``y`` with sampling variances ``v`` (see the module docstring).

    Parameters
    ----------
    y, v : array-like of float
        Effects and their sampling variances.
    method : {"dl", "reml", "pm"}, default "reml"
        Estimator of tau^2 (see :func:`estimate_tau2`).
    hartung_knapp : bool, default False
        Use the Hartung-Knapp standard error and t distribution.
    confidence_level : float, default 0.95
        Level of the intervals.
    prediction : {"riley", "metafor"}, default "riley"
        Prediction interval with t on k-2 df (Riley et al. 2011) or metafor's.

    Returns
    -------
    RandomEffects
        Pooled estimate with its interval, prediction interval and p-value; tau^2, I^2, Q.

    Examples
    --------
    metafor's ``dat.molloy2014`` (Molloy et al. 2014), first four studies, as Fisher's z:

    >>> r, n = np.array([0.187, 0.162, 0.34, 0.32]), np.array([109, 749, 55, 107])
    >>> res = random_effects(np.arctanh(r), 1 / (n - 3), method="reml")
    >>> round(float(np.tanh(res.statistic)), 3), res.k
    (0.2, 4)
    """
    y, v = np.asarray(y, dtype=float), np.asarray(v, dtype=float)
    method = check_method(method)
    prediction = check_prediction(prediction)
    if y.shape != v.shape or y.ndim != 1:
        raise InputError("effects and variances must be two vectors of the same length")
    if len(y) < 2:
        raise InputError(f"a meta-analysis needs at least 2 studies, got {len(y)}")
    if not (np.all(np.isfinite(y)) and np.all(np.isfinite(v)) and np.all(v > 0)):
        raise InputError("effects must be finite and variances finite and positive")
    if not 0 < confidence_level < 1:
        raise InputError(f"confidence_level must be between 0 and 1, got {confidence_level}")
    k = len(y)
    tau2 = estimate_tau2(y, v, method)
    w = 1.0 / (v + tau2)
    mu = float(np.sum(w * y) / np.sum(w))
    if hartung_knapp:
        se = float(np.sqrt(np.sum(w * (y - mu) ** 2) / ((k - 1) * np.sum(w))))
        crit = float(stats.t.isf((1 - confidence_level) / 2, k - 1))
        pvalue = float(2 * stats.t.sf(abs(mu / se), k - 1)) if se > 0 else float("nan")
    else:
        se = float(1.0 / np.sqrt(np.sum(w)))
        crit = float(stats.norm.isf((1 - confidence_level) / 2))
        pvalue = float(2 * stats.norm.sf(abs(mu / se)))
    q, i2, h2 = heterogeneity(y, v, tau2)
    pi_low, pi_high = _prediction_interval(mu, se, tau2, k, confidence_level, prediction,
                                           hartung_knapp)
    return RandomEffects(
        statistic=mu, pvalue=pvalue, se=se, ci_low=mu - crit * se, ci_high=mu + crit * se,
        pi_low=pi_low, pi_high=pi_high, tau2=tau2, tau=float(np.sqrt(tau2)), i2=i2, h2=h2,
        q=q, q_df=k - 1, q_pvalue=float(stats.chi2.sf(q, k - 1)), k=k, method=method,
        hartung_knapp=bool(hartung_knapp), prediction=prediction,
        confidence_level=float(confidence_level), weights=tuple(float(x) for x in w / w.sum()))


def heterogeneity(y: np.ndarray, v: np.ndarray, tau2: float) -> tuple[float, float, float]:
    """Cochran's Q, I^2 (a share) and H^2 (Higgins & Thompson 2002), as metafor reports them.

    Examples
    --------
    >>> q, i2, h2 = heterogeneity(np.array([0.0, 1.0]), np.array([0.1, 0.1]), 0.4)
    >>> round(q, 3), round(i2, 3), round(h2, 3)
    (5.0, 0.8, 5.0)
    """
    w = 1.0 / v
    mu_fe = float(np.sum(w * y) / np.sum(w))
    q = float(np.sum(w * (y - mu_fe) ** 2))
    k = len(y)
    s2 = (k - 1) * float(np.sum(w)) / (float(np.sum(w)) ** 2 - float(np.sum(w * w)))
    return q, tau2 / (tau2 + s2), (tau2 + s2) / s2


def check_prediction(prediction: str) -> str:
    """The prediction-interval type's canonical name, or InputError.

    Examples
    --------
    >>> check_prediction("Riley")
    'riley'
    """
    name = str(prediction).strip().lower()
    if name not in PREDICTION_TYPES:
        raise InputError(f"unknown prediction interval {prediction!r}; choose one of "
                         + ", ".join(PREDICTION_TYPES))
    return name


def _riley_crit(k: int, level: float, hartung_knapp: bool) -> float:
    """t on k - 2 degrees of freedom (Higgins, Thompson & Spiegelhalter 2009; Riley et al.
    2011); NaN below 3 studies."""
    return float(stats.t.isf((1 - level) / 2, k - 2)) if k >= 3 else float("nan")


def _metafor_crit(k: int, level: float, hartung_knapp: bool) -> float:
    """metafor's ``predict.rma``: the interval's own critical value, z, or t on k - 1
    degrees of freedom with Hartung-Knapp."""
    if hartung_knapp:
        return float(stats.t.isf((1 - level) / 2, k - 1))
    return float(stats.norm.isf((1 - level) / 2))


#: critical value of each prediction-interval type (the keys are PREDICTION_TYPES)
_PREDICTION_CRIT = {"riley": _riley_crit, "metafor": _metafor_crit}


def _prediction_interval(mu: float, se: float, tau2: float, k: int, level: float, kind: str,
                         hartung_knapp: bool) -> tuple[float, float]:
    """``mu -+ crit * sqrt(se^2 + tau^2)`` with the critical value of ``kind``."""
    crit = _PREDICTION_CRIT[kind](k, level, hartung_knapp)
    if np.isnan(crit):
        return float("nan"), float("nan")
    half = np.sqrt(se * se + tau2)
    return float(mu - crit * half), float(mu + crit * half)
