"""Does validity depend on the kind of data? One categorical moderator.

Two analyses of a moderator with levels ``g`` (task, language, level of analysis):

* :func:`subgroup_analysis`: a separate random-effects model per subgroup (its own tau^2),
  then the test of subgroup differences ``Q_between = sum_g (mu_g - mu_bar)^2 / se_g^2`` with
  ``mu_bar`` the inverse-variance mean of the subgroup estimates, on ``G - 1`` degrees of
  freedom (Borenstein et al. 2009, ch. 19, "separate estimates of tau^2");
* :func:`meta_regression`: the mixed-effects model ``y_i = x_i' b + u_i + e_i`` with one
  common tau^2 and the moderator dummy-coded against its first level (Raudenbush 2009;
  metafor's ``rma(yi, vi, mods = ~ factor(g))``), reporting the Wald test of the moderator
  ``Q_M = b' V^-1 b`` on ``G - 1`` degrees of freedom, the residual heterogeneity ``Q_E`` and
  the estimate of each level (Viechtbauer 2010). With ``hartung_knapp=True`` the test is
  ``F = Q_M / (G - 1)`` on ``(G - 1, k - G)`` degrees of freedom with the Knapp & Hartung
  (2003) covariance.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats

from nlgeval.errors import InputError
from nlgeval.meta_analysis.estimators import check_method, estimate_tau2, fixed_fit
from nlgeval.meta_analysis.pooling import random_effects
from nlgeval.results import StatResult

__all__ = ["MetaRegression", "SubgroupAnalysis", "meta_regression", "subgroup_analysis"]


@dataclass(frozen=True)
class SubgroupAnalysis(StatResult):
    """Separate random-effects models per subgroup and the test of their difference.

    ``statistic`` is ``Q_between`` with ``df`` and ``pvalue``; ``subgroups`` one row per level
    (``level, k, estimate, se, ci_low, ci_high, tau2, q``).

    Examples
    --------
    >>> res = subgroup_analysis([0.1, 0.2, 0.6, 0.7], [0.01] * 4, ["a", "a", "b", "b"],
    ...                         method="dl")
    >>> round(res.statistic, 2), res.df
    (25.0, 1)
    """

    statistic: float
    pvalue: float
    df: int
    method: str
    subgroups: pd.DataFrame


@dataclass(frozen=True)
class MetaRegression(StatResult):
    """A mixed-effects meta-regression on one categorical moderator (common tau^2).

    ``statistic`` is ``Q_M`` (or ``F`` with Hartung-Knapp) for the moderator, on ``df``
    (and ``df_residual``) degrees of freedom; ``qe`` the residual heterogeneity on ``k - G``
    degrees of freedom; ``tau2`` the residual between-study variance; ``levels`` the
    estimate, standard error and interval of each level.

    Examples
    --------
    >>> res = meta_regression([0.1, 0.2, 0.6, 0.7], [0.01] * 4, ["a", "a", "b", "b"],
    ...                       method="dl")
    >>> round(res.statistic, 2), res.df, res.tau2
    (25.0, 1, 0.0)
    """

    statistic: float
    pvalue: float
    df: int
    df_residual: int
    qe: float
    qe_pvalue: float
    tau2: float
    k: int
    method: str
    hartung_knapp: bool
    levels: pd.DataFrame


def subgroup_analysis(y: Sequence[float] | np.ndarray, v: Sequence[float] | np.ndarray,
                      groups: Sequence[str], *,
                      method: str = "reml", hartung_knapp: bool = False,
                      confidence_level: float = 0.95) -> SubgroupAnalysis:
    """Random-effects model per subgroup and ``Q_between`` (Borenstein et al. 2009, ch. 19).

    Subgroups with a single study keep that study's estimate and variance (tau^2 = 0).

    Parameters
    ----------
    y, v : array-like of float
        Effects and their sampling variances.
    groups : sequence of str
        Subgroup of each effect.
    method : {"dl", "reml", "pm"}, default "reml"
        Estimator of tau^2 (see :func:`estimate_tau2`).
    hartung_knapp : bool, default False
        Use the Hartung-Knapp standard error and t distribution.
    confidence_level : float, default 0.95
        Level of the intervals.

    Returns
    -------
    SubgroupAnalysis
        ``Q_between`` with its p-value and one row per subgroup.

    Examples
    --------
    >>> res = subgroup_analysis([0.1, 0.3, 0.5, 0.9], [0.02] * 4, ["x", "x", "y", "y"])
    >>> list(res.subgroups["level"]), res.df
    (['x', 'y'], 1)
    """
    y, v, g = _arrays(y, v, groups)
    rows = []
    for level in dict.fromkeys(g):
        mask = g == level
        if mask.sum() == 1:
            est, se, t2, q = float(y[mask][0]), float(np.sqrt(v[mask][0])), 0.0, 0.0
            crit = stats.norm.isf((1 - confidence_level) / 2)
            lo, hi = est - crit * se, est + crit * se
        else:
            res = random_effects(y[mask], v[mask], method=method, hartung_knapp=hartung_knapp,
                                 confidence_level=confidence_level, prediction="metafor")
            est, se, t2, q, lo, hi = (res.statistic, res.se, res.tau2, res.q, res.ci_low,
                                      res.ci_high)
        rows.append({"level": level, "k": int(mask.sum()), "estimate": est, "se": se,
                     "ci_low": lo, "ci_high": hi, "tau2": t2, "q": q})
    table = pd.DataFrame(rows)
    if len(table) < 2:
        raise InputError("a subgroup analysis needs at least 2 subgroups")
    w = 1.0 / table["se"].to_numpy() ** 2
    est = table["estimate"].to_numpy()
    mean = float(np.sum(w * est) / np.sum(w))
    q_between = float(np.sum(w * (est - mean) ** 2))
    df = len(table) - 1
    return SubgroupAnalysis(statistic=q_between, pvalue=float(stats.chi2.sf(q_between, df)),
                            df=df, method=check_method(method), subgroups=table)


def meta_regression(y: Sequence[float] | np.ndarray, v: Sequence[float] | np.ndarray,
                    groups: Sequence[str], *,
                    method: str = "reml", hartung_knapp: bool = False,
                    confidence_level: float = 0.95) -> MetaRegression:
    """Mixed-effects model with one categorical moderator (see the module docstring).

    Parameters
    ----------
    y, v : array-like of float
        Effects and their sampling variances.
    groups : sequence of str
        Level of the moderator of each effect.
    method : {"dl", "reml", "pm"}, default "reml"
        Estimator of tau^2 (see :func:`estimate_tau2`).
    hartung_knapp : bool, default False
        Use the Hartung-Knapp standard error and t distribution.
    confidence_level : float, default 0.95
        Level of the intervals.

    Returns
    -------
    MetaRegression
        ``Q_M`` (or ``F``) with its p-value, residual ``Q_E``, tau^2 and a row per level.

    Examples
    --------
    >>> res = meta_regression([0.1, 0.3, 0.5, 0.9, 0.2], [0.02] * 5, list("xxyyx"))
    >>> list(res.levels["level"]), res.df, res.df_residual
    (['x', 'y'], 1, 3)
    """
    y, v, g = _arrays(y, v, groups)
    levels = list(dict.fromkeys(g))
    G, k = len(levels), len(y)
    if G < 2:
        raise InputError("a moderator needs at least 2 levels")
    if k <= G:
        raise InputError(f"a meta-regression on {G} levels needs more than {G} studies, got {k}")
    X = np.column_stack([np.ones(k)] + [(g == lev).astype(float) for lev in levels[1:]])
    tau2 = estimate_tau2(y, v, method, X)
    beta, cov, q_resid = fixed_fit(y, v + tau2, X)
    df_res = k - G
    if hartung_knapp:  # Knapp & Hartung (2003): scale the covariance by the residual Q / df
        cov = cov * q_resid / df_res
    b, V = beta[1:], cov[1:, 1:]
    qm = float(b @ np.linalg.solve(V, b))
    if hartung_knapp:
        stat, pvalue = qm / (G - 1), float(stats.f.sf(qm / (G - 1), G - 1, df_res))
        crit = float(stats.t.isf((1 - confidence_level) / 2, df_res))
    else:
        stat, pvalue = qm, float(stats.chi2.sf(qm, G - 1))
        crit = float(stats.norm.isf((1 - confidence_level) / 2))
    C = np.column_stack([np.ones(G), np.vstack([np.zeros(G - 1), np.eye(G - 1)])])
    est, se = C @ beta, np.sqrt(np.einsum("ij,jk,ik->i", C, cov, C))
    table = pd.DataFrame({"level": levels, "k": [int((g == lev).sum()) for lev in levels],
                          "estimate": est, "se": se, "ci_low": est - crit * se,
                          "ci_high": est + crit * se})
    qe = fixed_fit(y, v, X)[2]
    return MetaRegression(statistic=stat, pvalue=pvalue, df=G - 1, df_residual=df_res, qe=qe,
                          qe_pvalue=float(stats.chi2.sf(qe, df_res)), tau2=tau2, k=k,
                          method=check_method(method), hartung_knapp=bool(hartung_knapp),
                          levels=table)


def _arrays(y: Sequence[float] | np.ndarray, v: Sequence[float] | np.ndarray, groups: Sequence[str]
            ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    y_, v_ = np.asarray(y, dtype=float), np.asarray(v, dtype=float)
    g = np.asarray([str(x) for x in groups], dtype=object)
    if not (len(y_) == len(v_) == len(g)):
        raise InputError("effects, variances and moderator levels must have the same length")
    return y_, v_, g
