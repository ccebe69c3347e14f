"""Ordinal (cumulative-link, proportional-odds) model of ratings, with system contrasts and a
check of the proportional-odds assumption.

The model (McCullagh 1980, "Regression models for ordinal data")::

    logit P(score <= c_j | system s, rater r) = theta_j - (beta_s + gamma_r),   j = 1..J-1

is what R's ``ordinal::clm(score ~ system + rater)`` fits (Christensen 2019); here statsmodels
``OrderedModel`` (``distr="logit"``) by maximum likelihood, with treatment coding (the first
system in the data is the reference). A positive ``beta_a - beta_b`` means that system A gets
higher ratings: the odds of a rating above any cut-point are ``exp(beta_a - beta_b)`` times as
high for A as for B.

* **Overall system effect**: the likelihood-ratio test against the model without system.
* **Pairwise contrasts**: every ``beta_a - beta_b`` with its Wald standard error from the
  inverse Hessian (``cov_params``), z test, p-values adjusted by Holm (1979) (or Bonferroni /
  none) over all pairs, a per-comparison Wald interval on the latent (log-odds) scale and as an
  odds ratio.
* **Proportional-odds check**: the likelihood-ratio test of the model against the one with
  *nominal* (category-specific) system effects, i.e. a separate set of cut-points per system
  (``clm(score ~ rater, nominal = ~ system)``, what ``ordinal::nominal_test`` does for the
  system term; Peterson & Harrell 1990 call it the partial proportional-odds model), with
  (J - 2)(S - 1) degrees of freedom. statsmodels has no such model, so its likelihood is written
  out below and maximised with :func:`scipy.optimize.minimize` (TNC, analytic gradient); the
  cut-points of each system are parametrised as a first cut-point plus positive increments so
  that every probability stays positive. When the test rejects, the result says so in
  ``warnings``: one odds ratio per pair does not describe the data and the contrasts average
  over cut-points that move differently.

The fixed rater effects cost degrees of freedom; a cumulative link *mixed* model (random rater
and item effects, ``ordinal::clmm``) is not provided because no maintained Python package fits
one.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import combinations
from typing import ClassVar

import numpy as np
import pandas as pd
from scipy import optimize, special, stats

from nlgeval.errors import InputError
from nlgeval.human.compare import correct_pvalues
from nlgeval.human.frames import check_ratings_frame as _check_frame
from nlgeval.human.guards import check_model_size, check_variation
from nlgeval.results import Result, StatResult

#: Most distinct scores an ordinal model accepts (a few ordered categories, not a slider).
MAX_CATEGORIES = 30


@dataclass(frozen=True)
class ProportionalOddsTest(StatResult):
    """Likelihood-ratio test of proportional odds against category-specific system effects.

    Examples
    --------
    >>> t = ProportionalOddsTest(statistic=3.2, pvalue=0.36, df=3, llf_nominal=-10.0,
    ...                          llf_proportional=-11.6, holds=True)
    >>> stat, p = t
    >>> t.holds
    True
    """

    statistic: float
    pvalue: float
    df: int
    llf_nominal: float
    llf_proportional: float
    holds: bool
    method: str = "likelihood ratio vs nominal system effects"


@dataclass(frozen=True)
class OrdinalModelResult(Result):
    """Cumulative-logit model: system effects relative to ``reference`` (log cumulative odds of
    a higher rating), the LR test of the system factor, pairwise contrasts and the
    proportional-odds check (see the module docstring).

    ``statistic``/``pvalue`` are the LR test of the system factor.

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"system": list("aaaaaabbbbbb"),
    ...                    "score": [1, 2, 2, 3, 3, 3, 2, 3, 3, 4, 4, 4]})
    >>> res = ordinal_model(df, factors=())
    >>> res.contrasts[["system_a", "system_b"]].values.tolist()
    [['a', 'b']]
    >>> bool(res.contrasts["estimate"].iloc[0] < 0)
    True
    """

    _aliases: ClassVar[dict[str, str]] = {"lr_statistic": "statistic", "lr_pvalue": "pvalue"}

    coefficients: pd.DataFrame
    statistic: float
    lr_df: int
    pvalue: float
    formula: str
    n: int
    reference: str = ""
    contrasts: pd.DataFrame = field(default_factory=pd.DataFrame)
    proportional_odds: ProportionalOddsTest | None = None
    alpha: float = 0.05
    correction: str = "holm"
    llf: float = float("nan")
    warnings: tuple[str, ...] = ()
    method: str = "ordinal"

    @property
    def lr_statistic(self) -> float:
        """LR statistic of the system factor (the name of the documented JSON key)."""
        return self.statistic

    @property
    def lr_pvalue(self) -> float:
        """p-value of the LR test of the system factor."""
        return self.pvalue


def _design(df: pd.DataFrame, systems: list[str], factors: Sequence[str],
            with_system: bool) -> pd.DataFrame:
    """Treatment-coded dummies of system (optional) and of the nuisance factors."""
    parts = []
    if with_system:
        parts.append(pd.get_dummies(pd.Categorical(df["system"], categories=systems),
                                    prefix="system", prefix_sep="_", drop_first=True,
                                    dtype=float))
    for f in factors:
        if df[f].nunique() > 1:
            parts.append(pd.get_dummies(df[f], prefix=f, drop_first=True, dtype=float))
    if not parts:
        return pd.DataFrame(index=df.index)
    x = pd.concat(parts, axis=1)
    x.index = df.index
    return x


def _thresholds_only_llf(codes: np.ndarray) -> float:
    """Log-likelihood of the model without covariates: the categories' marginal shares."""
    counts = np.bincount(codes)
    counts = counts[counts > 0]
    return float(np.sum(counts * np.log(counts / counts.sum())))


def _fit_ordered(y: pd.Series, x: pd.DataFrame):  # noqa: ANN202 (statsmodels results)
    from statsmodels.miscmodels.ordinal_model import OrderedModel

    return OrderedModel(y, x, distr="logit").fit(method="bfgs", disp=False, maxiter=5000,
                                                 gtol=1e-8)


def _nominal_negloglik(params: np.ndarray, codes: np.ndarray, groups: np.ndarray,
                       x: np.ndarray, n_groups: int, n_cat: int
                       ) -> tuple[float, np.ndarray]:
    """Negative log-likelihood and gradient of the cumulative logit model with one set of
    cut-points per group (system) and common location effects ``x @ beta``.

    ``params`` = [first cut-point per group (G), log increments (G x (J-2)), beta (p)].
    Cut-point j of group g is ``a_g + sum_{k<=j} exp(d_gk)``; an observation in category c has
    probability F(t_c - eta) - F(t_{c-1} - eta) with t_{-1} = -inf, t_{J-1} = +inf.
    """
    g, j1 = n_groups, n_cat - 1
    a = params[:g]
    d = params[g:g + g * (j1 - 1)].reshape(g, j1 - 1)
    beta = params[g + g * (j1 - 1):]
    cuts = np.concatenate([a[:, None], a[:, None] + np.cumsum(np.exp(d), axis=1)], axis=1)
    big = np.full((g, 1), np.inf)
    ext = np.concatenate([-big, cuts, big], axis=1)  # (G, J+1): t_{-1} .. t_{J-1}
    eta = x @ beta if x.shape[1] else np.zeros(len(codes))
    upper = ext[groups, codes + 1] - eta
    lower = ext[groups, codes] - eta
    # log(F(u) - F(l)) for the logistic F, stable in both tails
    fu, fl = special.expit(upper), special.expit(lower)
    prob = np.where(upper < 0, fu - fl, special.expit(-lower) - special.expit(-upper))
    prob = np.maximum(prob, 1e-300)
    nll = -float(np.sum(np.log(prob)))
    du = np.where(np.isfinite(upper), fu * (1 - fu), 0.0) / prob   # d log p / d upper
    dl = -np.where(np.isfinite(lower), fl * (1 - fl), 0.0) / prob  # d log p / d lower
    # gradient w.r.t. each cut-point t_{g,j} (j = 0..J-2), then chain to (a, d)
    gcut = np.zeros((g, j1))
    up_idx = codes < j1
    np.add.at(gcut, (groups[up_idx], codes[up_idx]), du[up_idx])
    lo_idx = codes > 0
    np.add.at(gcut, (groups[lo_idx], codes[lo_idx] - 1), dl[lo_idx])
    grad_a = gcut.sum(axis=1)
    # t_{g,j} depends on d_{g,k} for k < j (0-based increments k = 0..J-3 feed t_{k+1..})
    tail = np.cumsum(gcut[:, ::-1], axis=1)[:, ::-1]  # tail[:, j] = sum_{m >= j} gcut[:, m]
    grad_d = tail[:, 1:] * np.exp(d)
    grad_beta = -(x.T @ (du + dl)) if x.shape[1] else np.zeros(0)
    grad = np.concatenate([grad_a, grad_d.ravel(), grad_beta])
    return nll, -grad


def nominal_system_llf(codes: np.ndarray, groups: np.ndarray, x: np.ndarray, n_cat: int,
                       start_cuts: np.ndarray | None = None,
                       start_beta: np.ndarray | None = None) -> float:
    """Maximised log-likelihood of the cumulative logit model with category-specific (nominal)
    effects of ``groups`` and common effects of the columns of ``x`` (see
    :func:`_nominal_negloglik`); starts from the proportional-odds fit when given.

    Examples
    --------
    >>> import numpy as np
    >>> codes = np.array([0, 1, 1, 2, 0, 0, 1, 2, 2, 2])
    >>> groups = np.array([0, 0, 0, 0, 0, 1, 1, 1, 1, 1])
    >>> # no covariates: the saturated multinomial per group, sum n log(n / n_g)
    >>> round(nominal_system_llf(codes, groups, np.zeros((10, 0)), 3), 4)
    -10.026
    """
    n_groups = int(groups.max()) + 1
    j1 = n_cat - 1
    if start_cuts is None:
        cum = np.cumsum(np.bincount(codes, minlength=n_cat))[:-1] / len(codes)
        start_cuts = special.logit(np.clip(cum, 1e-3, 1 - 1e-3))
    cuts0 = np.asarray(start_cuts, dtype=float)
    if cuts0.ndim == 1:
        cuts0 = np.tile(cuts0, (n_groups, 1))
    cuts0 = np.maximum.accumulate(cuts0, axis=1)
    a0 = cuts0[:, 0]
    d0 = np.log(np.maximum(np.diff(cuts0, axis=1), 1e-3)) if j1 > 1 else np.zeros((n_groups, 0))
    b0 = np.zeros(x.shape[1]) if start_beta is None else np.asarray(start_beta, dtype=float)
    # A system that never uses a scale point has its MLE at infinity (two cut-points merge, or
    # the first / last one runs away); box bounds stop the optimiser there instead of letting
    # it creep along a flat ridge: a gap of exp(-15) or a first cut-point at -40 changes the
    # log-likelihood by far less than the 1e-6 the optimiser resolves.
    bounds = ([(-40.0, 40.0)] * n_groups + [(-15.0, 5.0)] * d0.size
              + [(None, None)] * len(b0))
    p0 = np.concatenate([np.clip(a0, -40, 40), np.clip(d0.ravel(), -15, 5), b0])
    # TNC (truncated Newton with box bounds): on these small, partly flat problems it needs a
    # fraction of L-BFGS-B's time for the same maximum (checked against R ordinal::clm)
    res = optimize.minimize(_nominal_negloglik, p0, jac=True, method="TNC",
                            args=(codes, groups, x, n_groups, n_cat), bounds=bounds,
                            options={"maxfun": 20000, "ftol": 1e-12, "gtol": 1e-8})
    return -float(res.fun)


def _contrasts(names: list[str], params: np.ndarray, cov: np.ndarray, *, alpha: float,
               correction: str) -> pd.DataFrame:
    """Pairwise Wald contrasts beta_a - beta_b (reference beta = 0), Holm-adjusted."""
    z_crit = float(stats.norm.ppf(1 - alpha / 2))
    rows = []
    for i, j in combinations(range(len(names)), 2):
        est = float(params[i] - params[j])
        se = float(np.sqrt(max(cov[i, i] + cov[j, j] - 2 * cov[i, j], 0.0)))
        z = est / se if se > 0 else float("nan")
        rows.append({"system_a": names[i], "system_b": names[j], "estimate": est, "se": se,
                     "statistic": z, "pvalue": float(2 * stats.norm.sf(abs(z))),
                     "ci_low": est - z_crit * se, "ci_high": est + z_crit * se})
    out = pd.DataFrame(rows)
    adj, rej = correct_pvalues(out["pvalue"].to_numpy(), correction, alpha)
    out["pvalue_adjusted"] = adj
    out["significant"] = rej
    out["odds_ratio"] = np.exp(out["estimate"])
    out["odds_ratio_low"] = np.exp(out["ci_low"])
    out["odds_ratio_high"] = np.exp(out["ci_high"])
    return out


def _check_ordinal(ratings: pd.DataFrame, factors: Sequence[str]
                   ) -> tuple[pd.DataFrame, list[str], np.ndarray]:
    df = _check_frame(ratings, ["system", "score", *factors]).reset_index(drop=True)
    systems = list(dict.fromkeys(df["system"]))
    if len(systems) < 2:
        raise InputError(f"comparing systems needs at least 2 systems; got {len(systems)}",
                         column="system")
    check_variation(df["score"].to_numpy(dtype=float), analysis="the ordinal model")
    levels = np.sort(df["score"].unique())
    if len(levels) > MAX_CATEGORIES:
        raise InputError(
            f"{len(levels)} distinct scores: an ordinal model needs a few ordered categories "
            "(e.g. a 1-7 scale); use the GLM or the mixed model for slider/continuous ratings",
            column="score")
    return df, systems, levels


def _po_warnings(po: ProportionalOddsTest, df: pd.DataFrame, codes: np.ndarray,
                 n_levels: int) -> list[str]:
    """Warnings of the proportional-odds check: empty (system, score) cells (a rough
    chi-square approximation) and a failed check."""
    warns = []
    empty = pd.crosstab(df["system"], codes).reindex(columns=range(n_levels),
                                                     fill_value=0).eq(0).sum().sum()
    if empty:
        warns.append(
            f"{int(empty)} (system, score) combinations never occur: the model with "
            "separate cut-points per system is fitted at the edge of its parameter space, "
            "so the proportional-odds check's chi-square approximation is rough (merge "
            "sparse scale points, or collect more ratings)")
    if not po.holds:
        warns.append(
            f"the proportional-odds assumption fails (LR chi2({po.df}) = "
            f"{po.statistic:.2f}, p = {po.pvalue:.3g} against system effects that differ "
            "across the cut-points of the scale): one odds ratio per pair does not describe "
            "these ratings; look at the distributions per system, or compare with "
            "--method wilcoxon")
    return warns


def ordinal_model(
    ratings: pd.DataFrame, *, factors: Sequence[str] = ("rater",), alpha: float = 0.05,
    correction: str = "holm", check_proportional_odds: bool = True,
    max_dense_bytes: float | None = None,
) -> OrdinalModelResult:
    """Cumulative-logit (proportional-odds) model of the ordered scores on system + factors
    (McCullagh 1980; statsmodels ``OrderedModel``): LR test of system, pairwise contrasts with
    Holm-adjusted p-values and Wald intervals (log odds and odds ratios), and the LR check of
    proportional odds against nominal system effects (see the module docstring).

    With many raters/items the fixed effects cost degrees of freedom, hence the default
    ``factors=("rater",)``.

    Parameters
    ----------
    ratings : pandas.DataFrame
        Columns ``system, score`` (ordered scale points) and each of ``factors``.
    factors : sequence of str
        Fixed-effect factors besides ``system``.
    alpha, correction, check_proportional_odds : float, str, bool
        Level and correction of the pairwise contrasts; run the proportional-odds check.
    max_dense_bytes : float, optional
        Refuse designs whose dense matrices would exceed this many bytes.

    Returns
    -------
    OrdinalModelResult
        The LR test of system, coefficients, contrasts, the check and warnings.

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"system": ["a"] * 8 + ["b"] * 8 + ["c"] * 8,
    ...                    "score": [1, 1, 2, 2, 2, 3, 3, 4] + [2, 3, 3, 3, 4, 4, 5, 5]
    ...                             + [1, 2, 2, 3, 3, 3, 4, 4]})
    >>> res = ordinal_model(df, factors=())
    >>> res.lr_df, len(res.contrasts), res.proportional_odds.df
    (2, 3, 6)
    >>> res.contrasts.loc[0, ["system_a", "system_b"]].tolist()
    ['a', 'b']
    """
    if not 0 < alpha < 1:
        raise InputError(f"alpha must be between 0 and 1, got {alpha}")
    df, systems, levels = _check_ordinal(ratings, factors)
    # OrderedModel's numerical derivatives keep a few copies of the design matrix
    check_model_size(len(df), {"system": len(systems), **{f: int(df[f].nunique())
                                                          for f in factors}},
                     analysis="the ordinal model", limit_bytes=max_dense_bytes,
                     hint="leave out the rater factor, or compare with --method wilcoxon",
                     copies=4)
    y = pd.Series(pd.Categorical(df["score"], categories=levels, ordered=True), index=df.index)
    codes = y.cat.codes.to_numpy()
    x_full = _design(df, systems, factors, True)
    full = _fit_ordered(y, x_full)
    x_red = _design(df, systems, factors, False)
    llf_red = (_thresholds_only_llf(codes) if x_red.shape[1] == 0
               else float(_fit_ordered(y, x_red).llf))
    lr = max(2.0 * (float(full.llf) - llf_red), 0.0)
    k = len(systems) - 1
    names = [c for c in x_full.columns if c.startswith("system_")]
    coef = pd.DataFrame({"term": names,
                         "coef": [float(full.params[c]) for c in names],
                         "se": [float(full.bse[c]) for c in names],
                         "pvalue": [float(full.pvalues[c]) for c in names]})
    params = np.concatenate([[0.0], [float(full.params[c]) for c in names]])
    cov = np.zeros((k + 1, k + 1))
    cov[1:, 1:] = np.asarray(full.cov_params().loc[names, names], dtype=float)
    contrasts = _contrasts(systems, params, cov, alpha=alpha, correction=correction)
    warns: list[str] = []
    if not full.mle_retvals.get("converged", True):
        warns.append("the ordinal model did not converge; treat its numbers with caution")
    po = None
    if check_proportional_odds and len(levels) > 2:
        po = _po_test(full, codes, df, systems, x_red, len(levels), alpha)
        warns += _po_warnings(po, df, codes, len(levels))
    return OrdinalModelResult(
        coefficients=coef, statistic=lr, lr_df=k, pvalue=float(stats.chi2.sf(lr, k)),
        formula="score(ordered) ~ " + " + ".join(["system", *factors]), n=len(df),
        reference=systems[0], contrasts=contrasts, proportional_odds=po, alpha=alpha,
        correction=correction, llf=float(full.llf), warnings=tuple(warns))


def _po_test(full, codes: np.ndarray, df: pd.DataFrame, systems: list[str],  # noqa: ANN001
             x_red: pd.DataFrame, n_cat: int, alpha: float) -> ProportionalOddsTest:
    """LR test of the proportional-odds fit ``full`` against nominal system effects."""
    groups = pd.Categorical(df["system"], categories=systems).codes.astype(np.intp)
    names_red = list(x_red.columns)
    thr = np.asarray(full.model.transform_threshold_params(full.params), dtype=float)[1:-1]
    sys_eff = np.concatenate([[0.0], [float(full.params[c]) for c in full.params.index
                                      if str(c).startswith("system_")]])
    start_cuts = thr[None, :] - sys_eff[:, None]
    beta0 = np.array([float(full.params[c]) for c in names_red])
    llf_nom = nominal_system_llf(codes, groups, x_red.to_numpy(dtype=float), n_cat,
                                 start_cuts=start_cuts, start_beta=beta0)
    llf_po = float(full.llf)
    lr = max(2.0 * (llf_nom - llf_po), 0.0)
    dof = (n_cat - 2) * (len(systems) - 1)
    p = float(stats.chi2.sf(lr, dof))
    return ProportionalOddsTest(statistic=lr, pvalue=p, df=dof, llf_nominal=llf_nom,
                                llf_proportional=llf_po, holds=bool(p >= alpha))
