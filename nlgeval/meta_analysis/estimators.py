"""Between-study variance tau^2 of a random-effects meta-analysis: DL, REML, PM.

* ``dl``: DerSimonian & Laird (1986), the method-of-moments estimator
  ``max(0, (Q - (k - p)) / tr(P))``;
* ``reml``: restricted maximum likelihood (Viechtbauer 2005), by Fisher scoring as metafor's
  ``rma.uni(method="REML")`` does it (Viechtbauer 2010): ``tau2 += (y'PPy - tr P) / tr(PP)``,
  step halved while it would leave ``[0, inf)``;
* ``pm``: Paule & Mandel (1982), the ``tau2 >= 0`` at which the generalised Q statistic equals
  its degrees of freedom ``k - p`` (DerSimonian & Kacker 2007).

``P = W - W X (X'WX)^-1 X'W`` with ``W = diag(1 / (v + tau2))``; ``X`` is the design matrix
(a column of ones without moderators, ``p`` its number of columns). Without moderators, DL and
PM come from statsmodels' ``combine_effects``; statsmodels has no REML and no meta-regression,
so those are written here (the DL and PM code for a general ``X`` is the same formula, and
the tests check that both agree with statsmodels when ``X`` is a column of ones).
"""

from __future__ import annotations

import warnings

import numpy as np
from scipy import optimize

from nlgeval.errors import InputError

__all__ = ["TAU2_METHODS", "estimate_tau2"]

#: the estimators of tau^2, by their option names
TAU2_METHODS = ("dl", "reml", "pm")


def estimate_tau2(y: np.ndarray, v: np.ndarray, method: str = "reml",
                  X: np.ndarray | None = None) -> float:
    """tau^2 of effects ``y`` with sampling variances ``v`` by ``method`` (see the module).

    Parameters
    ----------
    y, v : ndarray
        Effects and their sampling variances.
    method : {"dl", "reml", "pm"}, default "reml"
        DerSimonian-Laird, restricted maximum likelihood or Paule-Mandel.
    X : ndarray, optional
        Design matrix of moderators (default: an intercept).

    Returns
    -------
    float
        The estimate of tau^2 (>= 0).

    Examples
    --------
    Log risk ratios of two trials (escalc "RR" of metafor's ``dat.bcg`` rows 1-2):

    >>> y, v = np.array([-0.8893, -1.5854]), np.array([0.3256, 0.1946])
    >>> round(estimate_tau2(y, v, "dl"), 4), estimate_tau2(y, v, "reml") >= 0
    (0.0, True)
    """
    y, v = np.asarray(y, dtype=float), np.asarray(v, dtype=float)
    method = check_method(method)
    X = np.ones((len(y), 1)) if X is None else np.asarray(X, dtype=float)
    k, p = X.shape
    if k <= p:
        raise InputError(f"tau^2 needs more effects than model coefficients ({k} <= {p})")
    if method == "reml":
        return _reml(y, v, X)
    if p == 1 and np.allclose(X, 1.0):
        return _statsmodels_tau2(y, v, method)
    return _dl(y, v, X) if method == "dl" else _pm(y, v, X)


def check_method(method: str) -> str:
    """The estimator's canonical name, or InputError.

    Examples
    --------
    >>> check_method("REML")
    'reml'
    """
    name = str(method).strip().lower()
    aliases = {"dersimonian-laird": "dl", "paule-mandel": "pm"}
    name = aliases.get(name, name)
    if name not in TAU2_METHODS:
        raise InputError(f"unknown tau^2 estimator {method!r}; choose one of "
                         + ", ".join(TAU2_METHODS))
    return name


def fixed_fit(y: np.ndarray, v_total: np.ndarray, X: np.ndarray
              ) -> tuple[np.ndarray, np.ndarray, float]:
    """Weighted least squares with weights ``1 / v_total``: coefficients, their covariance
    ``(X'WX)^-1`` and the weighted residual sum of squares (Q)."""
    w = 1.0 / v_total
    xtwx = X.T @ (X * w[:, None])
    cov = np.linalg.inv(xtwx)
    beta = cov @ (X.T @ (w * y))
    resid = y - X @ beta
    return beta, cov, float(np.sum(w * resid * resid))


def _projection(v_total: np.ndarray, X: np.ndarray) -> np.ndarray:
    w = 1.0 / v_total
    wx = X * w[:, None]
    return np.diag(w) - wx @ np.linalg.inv(X.T @ wx) @ wx.T


def _dl(y: np.ndarray, v: np.ndarray, X: np.ndarray) -> float:
    k, p = X.shape
    q = fixed_fit(y, v, X)[2]
    return max(0.0, (q - (k - p)) / float(np.trace(_projection(v, X))))


def _pm(y: np.ndarray, v: np.ndarray, X: np.ndarray) -> float:
    k, p = X.shape

    def excess(tau2: float) -> float:
        return fixed_fit(y, v + tau2, X)[2] - (k - p)

    if excess(0.0) <= 0:
        return 0.0
    upper = max(1.0, float(np.var(y)) * 10)
    while excess(upper) > 0:  # Q(tau2) decreases to 0: widen until the root is bracketed
        upper *= 10
    return float(optimize.brentq(excess, 0.0, upper, xtol=1e-12, rtol=1e-12))


def _reml(y: np.ndarray, v: np.ndarray, X: np.ndarray, tol: float = 1e-10,
          maxiter: int = 200) -> float:
    """Fisher scoring on the restricted likelihood (Viechtbauer 2005, eq. 11), started at the
    DL estimate; metafor's default algorithm and step halving."""
    tau2 = _dl(y, v, X)
    for _ in range(maxiter):
        P = _projection(v + tau2, X)
        Py = P @ y
        step = (float(Py @ Py) - float(np.trace(P))) / float(np.sum(P * P.T))
        while tau2 + step < 0:
            step /= 2.0
            if abs(step) < tol:
                step = -tau2
                break
        tau2 += step
        if abs(step) < tol:
            return max(tau2, 0.0)
    warnings.warn("REML did not converge in 200 Fisher-scoring steps", RuntimeWarning,
                  stacklevel=3)
    return max(tau2, 0.0)


def _statsmodels_tau2(y: np.ndarray, v: np.ndarray, method: str) -> float:
    """DL or PM without moderators from statsmodels' combine_effects.

    statsmodels leaves a negative DL estimate negative: truncated at 0 as DerSimonian & Laird
    (1986) and metafor do. Its PM iteration stops at ``|Q - (k-1)| < atol``; if it has not
    converged, the root is found here."""
    from statsmodels.stats.meta_analysis import combine_effects

    kw = {"atol": 1e-10, "maxiter": 500} if method == "pm" else {}
    # only tau^2 is used; statsmodels also forms random-effects weights from an untruncated
    # (possibly negative) DL estimate, which divides by zero on homogeneous data
    with np.errstate(divide="ignore", invalid="ignore"):
        tau2 = max(0.0, float(combine_effects(y, v, method_re=method, **kw).tau2))
    if method == "pm" and tau2 > 0:
        X = np.ones((len(y), 1))
        if abs(fixed_fit(y, v + tau2, X)[2] - (len(y) - 1)) > 1e-8:
            tau2 = _pm(y, v, X)
    return tau2
