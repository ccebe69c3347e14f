"""Several dependent correlations per study: robust variance estimation (RVE).

When a study contributes several effects to one pooled estimate (two adequacy-like criteria
rated on the same outputs), the effects are correlated with an unknown correlation. Hedges,
Tipton & Johnson (2010) pool them with the "correlated effects" weights
``w_ij = 1 / (k_j (vbar_j + tau^2))`` (``k_j`` effects in study ``j``, ``vbar_j`` their mean
sampling variance), estimate tau^2 by their method of moments for an assumed within-study
correlation ``rho`` (default 0.8; the estimate depends little on it), and take the standard
error from the cluster-robust sandwich ``(X'WX)^-1 (sum_j X_j'W_j e_j e_j'W_j X_j) (X'WX)^-1``
times ``m / (m - p)`` on ``m - p`` degrees of freedom (``m`` studies, ``p`` coefficients). This
is robumeta's ``robu(modelweights = "CORR", small = FALSE)`` (Fisher & Tipton 2015). With few
studies that interval is too narrow (robumeta warns below 4 degrees of freedom; so does
nlgeval). ``small_sample=True`` applies the small-sample corrections of Tipton (2015), which
are robumeta's default (``small = TRUE``): the bias-reduced (CR2) sandwich, each study's
residuals multiplied by ``A_j = (I - X_j (X'WX)^-1 X_j' W_j)^(-1/2)`` (eigenvalues below
1e-10 left out) and no ``m / (m - p)`` factor, and a t reference distribution with
Satterthwaite degrees of freedom per coefficient, ``tr(B)^2 / tr(B B)``.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats

from nlgeval.errors import InputError
from nlgeval.results import StatResult

__all__ = ["RobustVariance", "robust_variance"]


@dataclass(frozen=True)
class RobustVariance(StatResult):
    """A correlated-effects RVE meta-analysis (Hedges, Tipton & Johnson 2010).

    ``statistic`` is the first coefficient (the pooled effect without covariates) with its
    robust ``se``, ``pvalue`` and interval (t on ``df = m - p``; with ``small_sample`` on the
    Satterthwaite degrees of freedom of Tipton 2015, the ``df`` column of ``coefficients``);
    ``tau2`` the between-study variance, ``i2`` a share, ``q`` the weighted residual sum of
    squares ``Q_E``; ``k`` effects from ``m`` studies; ``coefficients`` one row per column of
    the design (estimate, se, t, df, pvalue, interval).

    Examples
    --------
    >>> res = robust_variance([0.3, 0.35, 0.1, 0.5, 0.45], [0.01] * 5, ["a", "a", "b", "c", "c"])
    >>> res.k, res.m, res.df
    (5, 3, 2)
    """

    statistic: float
    pvalue: float
    se: float
    ci_low: float
    ci_high: float
    tau2: float
    i2: float
    q: float
    df: int
    k: int
    m: int
    rho: float
    confidence_level: float
    coefficients: pd.DataFrame
    weights: tuple[float, ...] = ()
    small_sample: bool = False

    _omit = frozenset({"coefficients", "weights"})


def robust_variance(y: Sequence[float], v: Sequence[float], studies: Sequence[str],
                    X: np.ndarray | None = None, *, rho: float = 0.8,
                    confidence_level: float = 0.95, small_sample: bool = False
                    ) -> RobustVariance:
    """Correlated-effects RVE (see the module docstring); ``X`` defaults to an intercept.

    Parameters
    ----------
    y, v : sequence of float
        Effects and their sampling variances.
    studies : sequence of str
        Study of each effect (the clusters).
    X : ndarray, optional
        Design matrix (default: an intercept).
    rho : float, default 0.8
        Assumed correlation of effects within a study.
    confidence_level : float, default 0.95
        Level of the intervals.
    small_sample : bool, default False
        Tipton's (2015) small-sample corrections (robumeta's ``small = TRUE``): the CR2
        sandwich and Satterthwaite degrees of freedom per coefficient.

    Returns
    -------
    RobustVariance
        Coefficients with robust standard errors, intervals and p-values, and tau^2.

    Examples
    --------
    With one effect per study the weights are the usual ``1/(v + tau^2)`` and tau^2 is the
    DerSimonian & Laird (1986) estimate:

    >>> from nlgeval.meta_analysis import estimate_tau2
    >>> y, v = np.array([0.1, 0.5, 0.3, 0.7]), np.array([0.02, 0.03, 0.01, 0.04])
    >>> res = robust_variance(y, v, ["a", "b", "c", "d"])
    >>> bool(np.isclose(res.tau2, estimate_tau2(y, v, "dl")))
    True
    """
    y_, v_ = np.asarray(y, dtype=float), np.asarray(v, dtype=float)
    g = np.asarray([str(s) for s in studies], dtype=object)
    X_ = np.ones((len(y_), 1)) if X is None else np.asarray(X, dtype=float).reshape(len(y_), -1)
    if not (len(y_) == len(v_) == len(g)):
        raise InputError("effects, variances and studies must have the same length")
    if not 0 <= rho <= 1:
        raise InputError(f"rho must be between 0 and 1, got {rho}")
    labels = list(dict.fromkeys(g))
    idx = [np.flatnonzero(g == s) for s in labels]
    m, p = len(labels), X_.shape[1]
    if m <= p:
        raise InputError(f"robust variance estimation needs more studies than coefficients "
                         f"({m} <= {p})")
    k_j = np.empty(len(y_))
    vbar = np.empty(len(y_))
    for ix in idx:
        k_j[ix], vbar[ix] = len(ix), v_[ix].mean()
    tau2, q, i2 = _tau2(y_, X_, k_j, vbar, idx, rho)
    w = 1.0 / (k_j * (vbar + tau2))
    bread = np.linalg.inv(X_.T @ (X_ * w[:, None]))
    beta = bread @ (X_.T @ (w * y_))
    e = y_ - X_ @ beta
    df = m - p
    cov, dfs = _robust_cov(X_, w, e, idx, bread, small_sample)
    se = np.sqrt(np.diag(cov))
    crit = stats.t.isf((1 - confidence_level) / 2, dfs)
    t = beta / se
    coef = pd.DataFrame({"estimate": beta, "se": se, "t": t, "df": dfs,
                         "pvalue": 2 * stats.t.sf(np.abs(t), dfs),
                         "ci_low": beta - crit * se, "ci_high": beta + crit * se})
    return RobustVariance(
        statistic=float(beta[0]), pvalue=float(coef["pvalue"].iloc[0]), se=float(se[0]),
        ci_low=float(coef["ci_low"].iloc[0]), ci_high=float(coef["ci_high"].iloc[0]),
        tau2=tau2, i2=i2, q=q, df=df, k=len(y_), m=m, rho=float(rho),
        confidence_level=float(confidence_level), coefficients=coef,
        weights=tuple(float(x) for x in w / w.sum()), small_sample=bool(small_sample))


def _robust_cov(X: np.ndarray, w: np.ndarray, e: np.ndarray, idx: list[np.ndarray],
                bread: np.ndarray, small_sample: bool) -> tuple[np.ndarray, np.ndarray]:
    """The coefficients' robust covariance and each one's degrees of freedom: the sandwich
    times ``m / (m - p)`` on ``m - p`` df, or Tipton's (2015) corrections."""
    m, p = len(idx), X.shape[1]
    if small_sample:
        cov, dfs = _small_sample_cov(X, w, e, idx, bread)
        if np.any(dfs < 4):
            low = float(np.min(dfs))  # 3.997 in full, not as the '4.00 < 4' of .2f
            shown = f"{low:.2f}" if round(low, 2) < 4 else repr(low)
            warnings.warn(f"Satterthwaite degrees of freedom {shown} < 4: the "
                          "p-value may be unreliable (Tipton 2015)", RuntimeWarning,
                          stacklevel=3)
        return cov, dfs
    meat = sum(np.outer(u, u) for u in (X[ix].T @ (w[ix] * e[ix]) for ix in idx))
    if m - p < 4:
        warnings.warn(f"robust variance estimation with {m - p} degrees of freedom: the "
                      "interval may be too narrow; Tipton's (2015) small-sample corrections "
                      "(small_sample=True; meta-analyse --small-sample) widen it",
                      RuntimeWarning, stacklevel=3)
    return bread @ meat @ bread * m / (m - p), np.full(p, float(m - p))


def _inverse_sqrt(M: np.ndarray) -> np.ndarray:
    """``M^(-1/2)`` of a symmetric matrix, eigenvalues below 1e-10 set to 0 (as robumeta)."""
    vals, vecs = np.linalg.eigh((M + M.T) / 2)
    inv = np.where(vals < 1e-10, 0.0, 1.0 / np.sqrt(np.maximum(vals, 1e-300)))
    return (vecs * inv) @ vecs.T


def _small_sample_cov(X: np.ndarray, w: np.ndarray, e: np.ndarray, idx: list[np.ndarray],
                      bread: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Tipton's (2015) CR2 sandwich and Satterthwaite degrees of freedom, as robumeta's
    ``robu(..., small = TRUE)`` computes them for correlated-effects weights.

    ``A_j = (I - X_j Q X_j' W_j)^(-1/2)`` with ``Q = (X'WX)^-1``; covariance
    ``Q (sum_j X_j' W_j A_j e_j e_j' A_j W_j X_j) Q``; for coefficient ``c`` the columns
    ``g_j = (I - H)_j' A_j W_j X_j Q[:, c]`` (``H = X Q X' W``, rows of study ``j``) scaled by
    ``W^(-1/2)`` give ``B = G G'`` and ``df_c = tr(B)^2 / tr(B B)``.
    """
    n, p = X.shape
    imh = np.eye(n) - (X @ bread @ X.T) * w[None, :]
    meat = np.zeros((p, p))
    G = np.zeros((p, n, len(idx)))
    for j, ix in enumerate(idx):
        xj, wj = X[ix], w[ix]
        A = _inverse_sqrt(np.eye(len(ix)) - (xj @ bread @ xj.T) * wj[None, :])
        u = xj.T @ (wj * (A @ e[ix]))
        meat += np.outer(u, u)
        G[:, :, j] = (imh[ix].T @ (A @ (wj[:, None] * xj)) @ bread).T
    G /= np.sqrt(w)[None, :, None]
    dfs = np.empty(p)
    for c in range(p):
        gtg = G[c].T @ G[c]
        dfs[c] = float(np.trace(gtg)) ** 2 / float(np.sum(gtg * gtg))
    return bread @ meat @ bread, dfs


def _tau2(y: np.ndarray, X: np.ndarray, k_j: np.ndarray, vbar: np.ndarray,
          idx: list[np.ndarray], rho: float) -> tuple[float, float, float]:
    """Hedges, Tipton & Johnson (2010) moment estimator of tau^2 for correlated effects, as
    robumeta computes it (with its 2010 erratum), and their I^2 and Q_E."""
    w = 1.0 / (k_j * vbar)
    xwx_inv = np.linalg.inv(X.T @ (X * w[:, None]))
    e = y - X @ (xwx_inv @ (X.T @ (w * y)))
    qe = float(np.sum(w * e * e))
    xwjwx = sum(np.outer(s, s) for s in (X[ix].T @ w[ix] for ix in idx))
    wkxx = X.T @ (X * (w / k_j)[:, None])
    xjx_xx = sum((w[ix][0] / len(ix)) * (np.outer(X[ix].sum(0), X[ix].sum(0))
                                         - X[ix].T @ X[ix]) for ix in idx)
    denom = float(np.sum(w)) - float(np.trace(xwx_inv @ xwjwx))
    term_a = float(np.trace(xwx_inv @ wkxx))
    term_b = float(np.trace(xwx_inv @ xjx_xx))
    tau2 = max(0.0, (qe - len(idx) + term_a) / denom + rho * term_b / denom)
    df = len(idx) - term_a - rho * term_b
    i2 = max(0.0, (qe - df) / qe) if qe > 0 else 0.0
    return tau2, qe, i2
