"""The 2009 paper's parametric analysis: GLM, ANOVA table, Tukey HSD and homogeneous subsets.

Reiter & Belz (2009), Experiment 2 ran an SPSS GLM ``score ~ generator + subject + date`` and
the Tukey HSD post-hoc test on the generators, printing SPSS's *homogeneous subsets*. Here:

* the model is ordinary least squares with treatment-coded main effects
  (``statsmodels.formula.api.ols('score ~ C(system) + C(rater) + C(item)')``); factors with a
  single level are left out;
* the ANOVA table is **Type II** (:func:`statsmodels.stats.anova.anova_lm`, ``typ=2``). In a
  main-effects model without interactions, Type II and SPSS's default Type III sums of squares
  are the same for every factor (each is the drop in residual SS when the factor alone is removed
  from the full model), balanced design or not; Type II does not depend on the contrast coding,
  which Type III does in statsmodels;
* Tukey HSD uses the **model's** residual mean square MSE and residual df, not the pooled
  within-system variance of a one-way ANOVA (that is what ``pairwise_tukeyhsd`` does, and it is
  only right when system is the only factor). Pairwise: Tukey-Kramer,
  q = |mean_i - mean_j| / sqrt(MSE / 2 * (1/n_i + 1/n_j)), p = P(Q_{k, df} > q)
  (:data:`scipy.stats.studentized_range`), on the observed system means (as SPSS's post hoc
  tests use);
* homogeneous subsets as SPSS prints them: systems sorted by mean, maximal runs whose range is
  below the critical range q_{1-alpha; k, df} * sqrt(MSE / n_h), n_h the harmonic mean of the
  per-system counts; subsets may overlap. The compact letter display gives each subset a letter
  (a system carries the letters of every subset it is in), so systems sharing a letter are not
  significantly different.

Effect sizes: each Tukey pair also gets the standardised mean difference ``smd = diff /
sqrt(MSE)`` (Cohen's d with the model's error SD as the standardiser; Cohen 1988) with the
Tukey interval divided by the same SD, so the effect-size interval agrees with the ``reject``
flag beside it.

Guardrails (:mod:`nlgeval.human.guards`): constant or near-constant ratings, a model that fits
every rating exactly, and a design matrix too large for memory raise :class:`InputError`.

The ordinal alternative (cumulative-logit model with system contrasts and a proportional-odds
check) is :func:`nlgeval.human.ordinal.ordinal_model`.
"""

from __future__ import annotations

import string
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import combinations
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from nlgeval.errors import InputError
from nlgeval.human.frames import check_ratings_frame as _check_frame
from nlgeval.human.guards import check_exact_fit, check_model_size, check_variation
from nlgeval.results import Result


@dataclass(frozen=True)
class GLMTukeyResult(Result):
    """ANOVA table, Tukey HSD pairs, system means, homogeneous subsets and letters.

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"system": list("abc") * 4, "rater": list("112233441122"),
    ...                    "score": [1, 3, 5, 2, 3, 6, 1, 4, 5, 2, 4, 7]})
    >>> res = glm_tukey(df, factors=("rater",))
    >>> res.letters
    {'a': 'a', 'b': 'b', 'c': 'c'}
    """

    anova: pd.DataFrame
    tukey: pd.DataFrame
    means: pd.DataFrame
    subsets: list[list[str]]
    letters: dict[str, str]
    mse: float
    df_resid: float
    n_harmonic: float
    q_critical: float
    critical_range: float
    alpha: float
    formula: str
    notes: tuple[str, ...] = field(default=())
    anova_type: str = "II"


def _q_sf(q: float, k: int, df: float) -> float:
    """P(Q > q) of the studentized range; scipy's quadrature warns (harmlessly, to ~1e-6)
    for large df, so the warning is silenced here."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return float(stats.studentized_range.sf(q, k, df))


def _q_ppf(p: float, k: int, df: float) -> float:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return float(stats.studentized_range.ppf(p, k, df))


def homogeneous_subsets(means: pd.Series, critical_range: float) -> list[list[str]]:
    """SPSS-style homogeneous subsets: maximal runs of the sorted means whose range
    (max - min) is below ``critical_range``, in ascending order of means.

    Parameters
    ----------
    means : pandas.Series
        System means indexed by system.
    critical_range : float
        The Tukey critical range.

    Returns
    -------
    list of list of str
        The subsets, each a list of systems.

    Examples
    --------
    >>> import pandas as pd
    >>> homogeneous_subsets(pd.Series({"a": 1.0, "b": 1.2, "c": 3.0}), critical_range=0.5)
    [['a', 'b'], ['c']]
    """
    s = means.sort_values(kind="stable")
    names, vals = list(s.index), s.to_numpy(dtype=float)
    runs: list[tuple[int, int]] = []
    for i in range(len(vals)):
        j = i
        while j + 1 < len(vals) and vals[j + 1] - vals[i] < critical_range:
            j += 1
        if not runs or j > runs[-1][1]:
            runs.append((i, j))
    return [names[i:j + 1] for i, j in runs]


def letter_display(subsets: Sequence[Sequence[str]], systems: Sequence[str]) -> dict[str, str]:
    """Compact letter display from homogeneous subsets: subset k gets letter k ('a' = lowest
    means); each system gets the letters of the subsets that contain it.

    Examples
    --------
    >>> letter_display([["a", "b"], ["b", "c"]], ["a", "b", "c"])
    {'a': 'a', 'b': 'ab', 'c': 'b'}
    """
    alphabet = string.ascii_lowercase + string.ascii_uppercase
    letters = {s: "" for s in systems}
    for k, sub in enumerate(subsets):
        letter = alphabet[k] if k < len(alphabet) else f"[{k + 1}]"
        for s in sub:
            letters[s] += letter
    return letters


def tukey_hsd_from_mse(
    means: pd.Series, counts: pd.Series, mse: float, df_resid: float, alpha: float = 0.05
) -> pd.DataFrame:
    """Tukey-Kramer pairwise comparisons given group means, counts and an error term.

    Columns ``system_a, system_b, diff (= mean_b - mean_a, as statsmodels prints it), se, q,
    pvalue_adjusted, low, high, reject, smd, smd_low, smd_high``; ``se`` is the standard error
    of the difference, the interval is diff +- q_{1-alpha} se / sqrt(2); ``smd`` is
    diff / sqrt(MSE) with the interval scaled the same way.

    Examples
    --------
    >>> import pandas as pd
    >>> t = tukey_hsd_from_mse(pd.Series({"a": 2.0, "b": 4.0}), pd.Series({"a": 10, "b": 10}),
    ...                        mse=1.0, df_resid=18)
    >>> t[["system_a", "system_b", "diff", "reject"]].values.tolist()
    [['a', 'b', 2.0, True]]
    """
    k = len(means)
    q_crit = _q_ppf(1 - alpha, k, df_resid)
    rows = []
    for a, b in combinations(list(means.index), 2):
        diff = float(means[b] - means[a])
        se = float(np.sqrt(mse * (1.0 / counts[a] + 1.0 / counts[b])))
        q = abs(diff) / (se / np.sqrt(2.0))
        p = _q_sf(q, k, df_resid)
        half = q_crit * se / np.sqrt(2.0)
        sd = float(np.sqrt(mse))
        rows.append({
            "system_a": a, "system_b": b, "diff": diff, "se": se, "q": q,
            "pvalue_adjusted": min(p, 1.0), "low": diff - half, "high": diff + half,
            "reject": bool(p < alpha), "smd": diff / sd, "smd_low": (diff - half) / sd,
            "smd_high": (diff + half) / sd,
        })
    return pd.DataFrame(rows)


def glm_tukey(
    ratings: pd.DataFrame,
    *,
    factors: Sequence[str] = ("rater", "item"),
    alpha: float = 0.05,
    max_dense_bytes: float | None = None,
) -> GLMTukeyResult:
    """Fit ``score ~ C(system) + C(f) for f in factors`` by OLS; ANOVA (Type II) and Tukey HSD
    with the model's MSE and residual df; homogeneous subsets and letters (see module doc).

    ``ratings``: columns ``system, score`` and each of ``factors`` (default ``rater, item`` as in
    the 2009 paper). Needs at least 2 systems, more observations than parameters, ratings that
    vary, and a design matrix below ``max_dense_bytes`` (default
    :data:`nlgeval.human.guards.DENSE_LIMIT_BYTES`).

    Parameters
    ----------
    ratings : pandas.DataFrame
        One criterion's tidy ratings.
    factors : sequence of str, default ``("rater", "item")``
        The nuisance factors of the model.
    alpha : float, default 0.05
        Level of the Tukey HSD.
    max_dense_bytes : float, optional
        Largest design matrix allowed.

    Returns
    -------
    GLMTukeyResult
        ANOVA table, Tukey pairs, means, subsets, letters, MSE and critical range.

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"system": list("ab") * 6, "rater": list("112233112233"),
    ...                    "score": [1, 4, 2, 4, 1, 5, 2, 5, 1, 4, 2, 6]})
    >>> res = glm_tukey(df, factors=("rater",))
    >>> res.anova["factor"].tolist(), bool(res.tukey["reject"].iloc[0])
    (['system', 'rater', 'Residual'], True)
    """
    if not 0 < alpha < 1:
        raise InputError(f"alpha must be between 0 and 1, got {alpha}")
    df = _check_frame(ratings, ["system", "score", *factors])
    systems = list(dict.fromkeys(df["system"]))
    if len(systems) < 2:
        raise InputError(f"comparing systems needs at least 2 systems; got {len(systems)}",
                         column="system")
    check_variation(df["score"].to_numpy(dtype=float), analysis="the GLM / ANOVA")
    notes: list[str] = []
    model, formula, n_params = _fit_ols(df, factors, notes, max_dense_bytes)
    anova = _anova_frame(model)
    if model.df_resid != round(model.df_resid) or int(model.df_model) + 1 != n_params:
        notes.append("the design matrix is rank-deficient (confounded factors); the ANOVA "
                     "sums of squares of confounded factors are not separately estimable")
    grouped = df.groupby("system", sort=False)["score"]
    means = grouped.mean()[systems]
    counts = grouped.size()[systems]
    mse, dfr = float(model.mse_resid), float(model.df_resid)
    tukey = tukey_hsd_from_mse(means, counts, mse, dfr, alpha)
    n_h = float(len(counts) / np.sum(1.0 / counts.to_numpy(dtype=float)))
    q_crit = _q_ppf(1 - alpha, len(systems), dfr)
    crit = q_crit * float(np.sqrt(mse / n_h))
    subsets = homogeneous_subsets(means, crit)
    letters = letter_display(subsets, systems)
    if counts.nunique() > 1:
        notes.append("unequal numbers of ratings per system: pairwise tests use Tukey-Kramer; "
                     "homogeneous subsets use the harmonic mean n (as SPSS), so the two can "
                     "disagree at the margin")
    mt = pd.DataFrame({"system": systems, "mean": means.to_numpy(), "n": counts.to_numpy(),
                       "sd": grouped.std(ddof=1)[systems].to_numpy(),
                       "letters": [letters[s] for s in systems]})
    mt = mt.sort_values("mean", ascending=False, kind="stable").reset_index(drop=True)
    return GLMTukeyResult(
        anova=anova, tukey=tukey, means=mt, subsets=subsets, letters=letters, mse=mse,
        df_resid=dfr, n_harmonic=n_h, q_critical=q_crit, critical_range=crit, alpha=alpha,
        formula=formula, notes=tuple(notes),
    )


def _fit_ols(df: pd.DataFrame, factors: Sequence[str], notes: list[str],
             max_dense_bytes: float | None) -> tuple[Any, str, int]:
    """The OLS fit of ``score ~ C(system) + C(f) ...`` (factors with one level left out and
    noted), its formula and its number of parameters; refuses a model with no residual df,
    too big a design matrix or an exact fit (:mod:`nlgeval.human.guards`)."""
    import statsmodels.formula.api as smf

    used = []
    # patsy-safe column names
    data = pd.DataFrame({"score": df["score"].astype(float), "f_system": df["system"]})
    for f in factors:
        if df[f].nunique() < 2:
            notes.append(f"factor '{f}' has a single level and is left out of the model")
            continue
        data[f"f_{f}"] = df[f]
        used.append(f)
    terms = ["C(f_system)"] + [f"C(f_{f})" for f in used]
    formula = "score ~ " + " + ".join(terms)
    shown = formula.replace("f_", "")
    n_params = 1 + sum(data[c].nunique() - 1 for c in data.columns if c.startswith("f_"))
    if len(data) <= n_params:
        raise InputError(
            f"the model {shown} has {n_params} parameters but only "
            f"{len(data)} ratings: no residual degrees of freedom left"
        )
    # patsy builds the full treatment-coded design matrix; OLS's pinv needs a few copies
    check_model_size(len(data), {c: int(data[c].nunique()) for c in data.columns
                                 if c.startswith("f_")},
                     analysis=f"the GLM {shown}",
                     hint="leave out the item factor (--factors rater), or compare with "
                     "--method wilcoxon (on per-item means) or --method mixed",
                     limit_bytes=max_dense_bytes)
    model = smf.ols(formula, data=data).fit()
    if model.df_resid < 1 or not np.isfinite(model.mse_resid):
        raise InputError("no residual degrees of freedom (too few ratings for the model)")
    check_exact_fit(float(model.ssr), float(model.centered_tss), analysis=f"the GLM {shown}")
    return model, shown, n_params


def _anova_frame(model: Any) -> pd.DataFrame:
    """The Type II ANOVA table of a fitted OLS model (statsmodels ``anova_lm``) with the
    factor names of the ratings."""
    from statsmodels.stats.anova import anova_lm

    table = anova_lm(model, typ=2)
    return pd.DataFrame({
        "factor": [_clean_term(t) for t in table.index],
        "df": table["df"].to_numpy(dtype=float),
        "sum_sq": table["sum_sq"].to_numpy(dtype=float),
        "mean_sq": (table["sum_sq"] / table["df"]).to_numpy(dtype=float),
        "F": table["F"].to_numpy(dtype=float),
        "pvalue": table["PR(>F)"].to_numpy(dtype=float),
    })


def _clean_term(term: str) -> str:
    if term.startswith("C(f_") and term.endswith(")"):
        return term[4:-1]
    return term
