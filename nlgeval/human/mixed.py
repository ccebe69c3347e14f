"""Linear mixed-effects model for ratings: system as a fixed effect, raters and items as crossed
random effects.

The model (Baayen, Davidson & Bates 2008, "Mixed-effects modeling with crossed random effects
for subjects and items")::

    score_{r i s} = mu + beta_s + u_r + v_i + e_{r i s},
    u_r ~ N(0, sigma2_rater), v_i ~ N(0, sigma2_item), e ~ N(0, sigma2_residual)

is what ``lme4::lmer(score ~ system + (1 | rater) + (1 | item))`` fits. It is the recommended
analysis when raters see different subsets of the outputs (Latin squares, crowd work): rater
leniency and item difficulty are absorbed by the random effects instead of being ignored (the
Wilcoxon test by item) or spent as fixed-effect degrees of freedom (the 2009 GLM).

Fitting: statsmodels ``MixedLM`` by REML (lme4's default), with all observations in one group
and the two crossed random intercepts given as *variance components* (the statsmodels way to
express crossed effects). Treatment coding with the first system as reference; every pairwise
contrast ``estimate = beta_a - beta_b`` (positive when A is rated higher) is tested with the
Wald z statistic statsmodels reports, p-values adjusted by Holm (1979) (or Bonferroni / none)
over all pairs (statsmodels ``multipletests``). The Wald z test ignores the uncertainty in the
variance components and is anti-conservative with few raters or items (Luke 2017, "Evaluating
significance in linear mixed-effects models in R"); a warning says so below
:data:`~nlgeval.human.guards.MIN_LEVELS_VARIANCE` levels.

Effect size: the standardised mean difference of Westfall, Kenny & Judd (2014, "Statistical
power and optimal design in experiments in which samples of participants respond to samples of
stimuli"), ``d = estimate / sqrt(sigma2_rater + sigma2_item + sigma2_residual)``, with the
contrast's interval divided by the same SD (treated as known).

Variance explained: each component's share of the total ``sigma2_rater + sigma2_item +
sigma2_residual`` (the variance-partition coefficients).

The confidence intervals are per comparison (level 1 - alpha); significance uses the adjusted
p-value. Where an interval excludes 0 but the adjusted p is not significant, the result's
``warnings`` say so.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import combinations
from typing import ClassVar

import numpy as np
import pandas as pd
from scipy import stats

from nlgeval.errors import InputError
from nlgeval.human.compare import correct_pvalues
from nlgeval.human.frames import check_ratings_frame as _check_frame
from nlgeval.human.guards import check_model_size, check_variation, level_warnings
from nlgeval.results import Result

CONTRAST_COLUMNS = (
    "system_a", "system_b", "estimate", "se", "statistic", "p", "p_adjusted", "ci_low",
    "ci_high", "significant", "smd", "smd_low", "smd_high",
)


@dataclass(frozen=True)
class MixedModelResult(Result):
    """Fixed system effects, pairwise contrasts and variance components of the mixed model.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> rng = np.random.default_rng(7)
    >>> u, v = rng.normal(0, 0.7, 6), rng.normal(0, 0.5, 6)  # rater and item effects
    >>> df = pd.DataFrame([(f"r{r}", f"i{i}", s, 3 + (s == "b") + u[r] + v[i]
    ...                     + rng.normal(0, 0.5)) for r in range(6) for i in range(6)
    ...                    for s in "ab"], columns=["rater", "item", "system", "score"])
    >>> res = mixed_model(df)
    >>> res.contrasts.loc[0, ["system_a", "system_b"]].tolist(), res.method
    (['a', 'b'], 'mixed')
    """

    _aliases: ClassVar[dict[str, str]] = {"ci_level": "ci_level"}

    contrasts: pd.DataFrame
    means: pd.DataFrame
    variance: dict[str, float]
    formula: str
    reference: str
    n: int
    n_raters: int
    n_items: int
    llf: float
    converged: bool
    alpha: float
    correction: str
    warnings: tuple[str, ...] = field(default=())
    method: str = "mixed"
    test: str = "Wald z"
    ci_adjusted: bool = False

    @property
    def ci_level(self) -> float:
        """Level of the per-comparison intervals, 1 - alpha."""
        return 1.0 - self.alpha

    @property
    def statistic(self) -> np.ndarray:
        """Wald z of each pairwise contrast (rows of :attr:`contrasts`)."""
        return self.contrasts["statistic"].to_numpy()

    @property
    def pvalue(self) -> np.ndarray:
        """Adjusted p-value of each pairwise contrast."""
        return self.contrasts["p_adjusted"].to_numpy()


def _random_factors(df: pd.DataFrame, n_systems: int, random: Sequence[str],
                    max_dense_bytes: float | None) -> tuple[dict[str, int], list[str], list[str]]:
    """Levels per random factor, the factors used (2 or more levels), warnings for those left
    out; refuses a model without random factor or too large for dense matrices."""
    levels = {f: int(df[f].nunique()) for f in random}
    used = [f for f in random if levels[f] >= 2]
    warns = [f"random factor '{f}' has a single level and is left out"
             for f in random if levels[f] < 2]
    if not used:
        raise InputError("the mixed model needs a random factor with at least 2 levels "
                         f"({', '.join(random)}); use --method glm-tukey")
    hint = ("compare with --method wilcoxon (on per-item means), or fit the model to a random "
            "subset of items")
    check_model_size(len(df), {"system": n_systems}, analysis="the mixed model", hint=hint,
                     random_levels={f: levels[f] for f in used},
                     limit_bytes=max_dense_bytes, copies=4)
    return levels, used, warns


def mixed_model(
    ratings: pd.DataFrame, *, random: Sequence[str] = ("rater", "item"), alpha: float = 0.05,
    correction: str = "holm", reml: bool = True, max_dense_bytes: float | None = None,
) -> MixedModelResult:
    """Fit ``score ~ system + (1 | rater) + (1 | item)`` by REML (see the module docstring).

    A random factor with a single level is left out (with a warning). Raises
    :class:`InputError` for fewer than 2 systems, constant ratings, or a design too large for
    dense matrices.

    Parameters
    ----------
    ratings : pandas.DataFrame
        Columns ``system, score`` and each of ``random`` (one criterion).
    random : sequence of str
        The crossed random-intercept factors.
    alpha, correction : float, str
        Level and multiple-comparison correction of the pairwise Wald contrasts.
    reml : bool
        REML (default) or maximum likelihood.
    max_dense_bytes : float, optional
        Refuse designs whose dense matrices would exceed this many bytes.

    Returns
    -------
    MixedModelResult
        Contrasts, model means, variance components and warnings.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> rng = np.random.default_rng(7)
    >>> u, v = rng.normal(0, 0.7, 6), rng.normal(0, 0.5, 6)  # rater and item effects
    >>> df = pd.DataFrame([(f"r{r}", f"i{i}", s, 3 + (s == "b") + u[r] + v[i]
    ...                     + rng.normal(0, 0.5)) for r in range(6) for i in range(6)
    ...                    for s in "ab"], columns=["rater", "item", "system", "score"])
    >>> res = mixed_model(df)
    >>> c = res.contrasts.iloc[0]
    >>> bool(c["estimate"] < 0 and c["significant"]), sorted(res.variance)[:3]
    (True, ['item', 'rater', 'residual'])
    """
    if not 0 < alpha < 1:
        raise InputError(f"alpha must be between 0 and 1, got {alpha}")
    df = _check_frame(ratings, ["system", "score", *random])
    systems = list(dict.fromkeys(df["system"]))
    if len(systems) < 2:
        raise InputError(f"comparing systems needs at least 2 systems; got {len(systems)}",
                         column="system")
    check_variation(df["score"].to_numpy(dtype=float), analysis="the mixed model")
    levels, used, warns = _random_factors(df, len(systems), random, max_dense_bytes)
    warns += level_warnings({f: levels[f] for f in used},
                            purpose="its variance component (and the Wald tests)")
    fit, x, codes, fit_warns = _fit_mixed(df, systems, used, reml)
    warns += fit_warns
    converged = bool(getattr(fit, "converged", True))
    if not converged:
        warns.append("the optimiser did not converge: do not report these estimates")
    beta = np.asarray(fit.fe_params, dtype=float)
    vcomp = dict(zip(fit.model.exog_vc.names, np.asarray(fit.vcomp, dtype=float), strict=True))
    vcomp = {f: max(v, 0.0) for f, v in vcomp.items()}
    resid = float(fit.scale)
    # Covariance of the fixed effects given the variance components, (X' V^-1 X)^-1, as lme4's
    # vcov() and emmeans use (statsmodels' cov_params() inverts the Hessian of the full REML
    # likelihood instead, which differs slightly in small samples).
    cov = _fixed_effects_cov(x, codes, vcomp, resid)
    total = resid + sum(vcomp.values())
    contrasts, c_warns = _contrasts(systems, beta, cov, float(np.sqrt(total)), alpha=alpha,
                                    correction=correction)
    warns += c_warns
    counts = df.groupby("system")["score"].size()
    means = _model_means(systems, beta, cov, alpha, [int(counts[s]) for s in systems])
    variance = {**{f: vcomp.get(f, 0.0) for f in random}, "residual": resid, "total": total}
    variance.update({f"share_{f}": variance[f] / total for f in (*random, "residual")})
    formula = "score ~ system + " + " + ".join(f"(1 | {f})" for f in used)
    return MixedModelResult(
        contrasts=contrasts, means=means, variance=variance, formula=formula,
        reference=systems[0], n=len(df), n_raters=int(levels.get("rater", 0)),
        n_items=int(levels.get("item", 0)), llf=float(fit.llf), converged=converged,
        alpha=alpha, correction=correction, warnings=tuple(dict.fromkeys(warns)),
    )


def _fit_mixed(df: pd.DataFrame, systems: list[str], used: list[str], reml: bool
               ):  # noqa: ANN202 (statsmodels results, design, codes, warnings)
    """Fit MixedLM: treatment-coded fixed effects and sparse 0/1 indicator matrices for the
    crossed random intercepts, passed as variance components (VCSpec) directly: statsmodels
    then solves with sparse matrices (half the time of the dense matrices ``from_formula``
    builds, and no n x levels dense copy)."""
    import statsmodels.api as sm
    from scipy import sparse
    from statsmodels.regression.mixed_linear_model import VCSpec

    n = len(df)
    sys_code = pd.Categorical(df["system"], categories=systems).codes
    x = np.zeros((n, len(systems)))
    x[:, 0] = 1.0
    x[np.arange(n), sys_code] = 1.0
    codes = {f: pd.factorize(df[f])[0] for f in used}
    mats = [[sparse.csr_matrix((np.ones(n), (np.arange(n), codes[f])),
                               shape=(n, int(codes[f].max()) + 1))] for f in used]
    colnames = [[[f"{f}{i}" for i in range(int(codes[f].max()) + 1)]] for f in used]
    model = sm.MixedLM(df["score"].to_numpy(dtype=float), x, np.zeros(n),
                       exog_vc=VCSpec(list(used), colnames, mats))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fit = model.fit(reml=reml, method=["lbfgs", "bfgs", "cg"])
    warns = []
    for w in caught:
        msg = str(w.message)
        if "boundary" in msg.lower():
            warns.append("a variance component is estimated at 0 (the boundary): that "
                         "factor shows no detectable variation")
        elif "converge" in msg.lower() or "singular" in msg.lower() or "Hessian" in msg:
            warns.append(f"statsmodels: {msg.splitlines()[0]}")
    return fit, x, codes, warns


def _contrasts(systems: list[str], beta: np.ndarray, cov: np.ndarray, sd: float, *,
               alpha: float, correction: str) -> tuple[pd.DataFrame, list[str]]:
    """Wald contrasts beta_a - beta_b (rows of L; treatment coding, beta_ref = 0), adjusted
    p-values, per-comparison intervals and d = estimate / total SD; a warning where an
    interval excludes 0 beside a non-significant adjusted p."""
    k = len(systems)
    pairs = list(combinations(range(k), 2))
    big_l = np.zeros((len(pairs), k))
    for row, (a, b) in enumerate(pairs):
        if a > 0:
            big_l[row, a] += 1.0
        if b > 0:
            big_l[row, b] -= 1.0
    est = big_l @ beta
    se = np.sqrt(np.einsum("ij,jk,ik->i", big_l, cov, big_l))
    z = est / se
    p = 2.0 * stats.norm.sf(np.abs(z))
    p_adj, reject = correct_pvalues(p, correction, alpha)
    zc = stats.norm.ppf(1.0 - alpha / 2.0)
    lo, hi = est - zc * se, est + zc * se
    contrasts = pd.DataFrame({
        "system_a": [systems[a] for a, _ in pairs], "system_b": [systems[b] for _, b in pairs],
        "estimate": est, "se": se, "statistic": z, "p": p, "p_adjusted": p_adj,
        "ci_low": lo, "ci_high": hi, "significant": reject.astype(bool), "smd": est / sd,
        "smd_low": lo / sd, "smd_high": hi / sd,
    })[list(CONTRAST_COLUMNS)]
    excl = ((lo > 0) | (hi < 0)) & ~reject
    warns = []
    if excl.any():
        names = ", ".join(f"{a}-{b}" for a, b in zip(
            contrasts["system_a"][excl], contrasts["system_b"][excl], strict=True))
        warns.append(f"the {1 - alpha:.0%} interval excludes 0 for {names} but the "
                     f"{correction}-adjusted p-value is not significant: intervals are per "
                     "comparison, significance is adjusted over all pairs")
    return contrasts, warns


def _model_means(systems: list[str], beta: np.ndarray, cov: np.ndarray, alpha: float,
                 counts: list[int]) -> pd.DataFrame:
    """Model-based system means (intercept + effect) with standard errors and intervals."""
    k = len(systems)
    big_m = np.zeros((k, k))
    big_m[:, 0] = 1.0
    big_m[np.arange(1, k), np.arange(1, k)] = 1.0
    m_est = big_m @ beta
    m_se = np.sqrt(np.einsum("ij,jk,ik->i", big_m, cov, big_m))
    zc = stats.norm.ppf(1.0 - alpha / 2.0)
    means = pd.DataFrame({"system": systems, "mean": m_est, "se": m_se,
                          "ci_low": m_est - zc * m_se, "ci_high": m_est + zc * m_se,
                          "n": counts})
    return means.sort_values("mean", ascending=False, kind="stable").reset_index(drop=True)


def _fixed_effects_cov(x: np.ndarray, codes: dict[str, np.ndarray], vcomp: dict[str, float],
                       resid: float) -> np.ndarray:
    """(X' V^-1 X)^-1 for V = resid I + sum_f vcomp_f Z_f Z_f' (Z_f the 0/1 indicators of
    factor f), by the Woodbury identity on the q x q system (q = total number of levels):
    V^-1 = (I - Z (resid G^-1 + Z'Z)^-1 Z') / resid. Components at 0 are left out."""
    from scipy import sparse

    blocks = [(c, vcomp[f]) for f, c in codes.items() if vcomp[f] > 0]
    if not blocks:
        return np.linalg.inv(x.T @ x) * resid
    n = x.shape[0]
    z = sparse.hstack([
        sparse.csr_matrix((np.ones(n), (np.arange(n), c)), shape=(n, int(c.max()) + 1))
        for c, _ in blocks]).tocsr()
    ztx = np.asarray(z.T @ x)
    ztz = (z.T @ z).toarray()
    ginv = np.concatenate([np.full(int(c.max()) + 1, resid / v) for c, v in blocks])
    inner = np.linalg.solve(ztz + np.diag(ginv), ztx)
    return np.linalg.inv((x.T @ x - ztx.T @ inner) / resid)
