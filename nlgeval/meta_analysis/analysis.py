"""The meta-analysis of validation studies: settings, pooled table, moderators, verdicts.

:func:`meta_analyse` pools a table of effects (``metric, construct, study, r, n`` and the
Fisher-z variance ``vi``; see :func:`nlgeval.meta_analysis.studies.study_effects`) per metric
and construct with the random-effects model of :mod:`nlgeval.meta_analysis.pooling`
(DerSimonian & Laird 1986; Viechtbauer 2005; Paule & Mandel 1982; Hartung & Knapp 2001),
optionally tests one study-level moderator (:mod:`nlgeval.meta_analysis.moderators`) and
compares metrics pairwise (:mod:`nlgeval.meta_analysis.compare`), and writes one verdict line
per metric and construct that reads the prediction interval (Riley et al. 2011), not only the
confidence interval: a metric is "valid beyond these data sets" only when the interval for a
new data set stays above zero; "validity depends on the data set" needs I^2 of 50% or more
(substantial heterogeneity, Higgins & Thompson 2002), else a wide interval is put down to the
small number of data sets.
"""

from __future__ import annotations

import difflib
import itertools
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import pandas as pd

from nlgeval.errors import InputError
from nlgeval.meta_analysis.compare import compare_metrics
from nlgeval.meta_analysis.estimators import check_method
from nlgeval.meta_analysis.moderators import meta_regression, subgroup_analysis
from nlgeval.meta_analysis.pooling import RandomEffects, check_prediction, random_effects
from nlgeval.results import Result

__all__ = ["MetaAnalysis", "MetaSettings", "meta_analyse", "verdict_line"]

POOLED_COLUMNS = ["metric", "construct", "level", "k", "n_effects", "r_pooled", "ci_low", "ci_high",
                  "pi_low", "pi_high", "tau2", "tau", "i2", "q", "q_df", "q_pvalue", "pvalue",
                  "z_pooled", "se", "method", "hartung_knapp", "verdict"]


@dataclass(frozen=True)
class MetaSettings(Result):
    """Options of a meta-analysis, checked once.

    ``tau2``: dl, reml or pm; ``prediction``: riley (t with k-2 df) or metafor;
    ``moderator``: a study-level column of the effects (task, language) or None;
    ``dependence``: ``one`` (one effect per study, the random-effects model) or ``rve``
    (several per study, robust variance estimation of Hedges, Tipton & Johnson 2010 with
    within-study correlation ``rho``); ``small_sample``: with ``rve``, Tipton's (2015) CR2
    small-sample corrections and Satterthwaite degrees of freedom (robumeta's ``small =
    TRUE``), which keep the interval from being too narrow with few studies.

    Examples
    --------
    >>> MetaSettings(tau2="DL").tau2
    'dl'
    """

    tau2: str = "reml"
    hartung_knapp: bool = False
    confidence_level: float = 0.95
    prediction: str = "riley"
    moderator: str | None = None
    compare: bool = True
    dependence: str = "one"
    rho: float = 0.8
    small_sample: bool = False

    def __post_init__(self) -> None:
        object.__setattr__(self, "tau2", check_method(self.tau2))
        if self.dependence not in ("one", "rve"):
            raise InputError(f"dependence must be one or rve, got {self.dependence!r}")
        if self.small_sample and self.dependence != "rve":
            raise InputError("small-sample corrections (--small-sample) apply to robust "
                             "variance estimation only: use them with --dependence rve")
        if not 0 <= self.rho <= 1:
            raise InputError(f"rho must be between 0 and 1, got {self.rho}")
        object.__setattr__(self, "prediction", check_prediction(self.prediction))
        if not 0 < self.confidence_level < 1:
            raise InputError(f"confidence_level must be between 0 and 1, got "
                             f"{self.confidence_level}")


@dataclass(frozen=True)
class MetaAnalysis(Result):
    """Everything :func:`meta_analyse` computed.

    ``pooled``: one row per metric and construct (``POOLED_COLUMNS``); ``effects``: the
    per-study rows that were pooled, with their random-effects ``weight``; ``fits``: the
    :class:`RandomEffects` per ``(metric, construct)``; ``moderators`` and ``comparisons``:
    tables (empty when not asked for or not possible); ``notes``: what was left out and why.

    Examples
    --------
    >>> eff = pd.DataFrame({"metric": "m", "construct": "c", "study": ["a", "b", "c"],
    ...                     "r": [0.5, 0.3, 0.4], "n": [50, 80, 60]})
    >>> res = meta_analyse(eff)
    >>> res.pooled[["metric", "k"]].to_dict("records")
    [{'metric': 'm', 'k': 3}]
    """

    settings: MetaSettings
    pooled: pd.DataFrame
    effects: pd.DataFrame
    fits: dict[tuple[str, str], RandomEffects] = field(default_factory=dict)
    moderators: pd.DataFrame = field(default_factory=pd.DataFrame)
    comparisons: pd.DataFrame = field(default_factory=pd.DataFrame)
    notes: list[str] = field(default_factory=list)

    _omit = frozenset({"fits"})

    def records(self) -> list[dict[str, Any]]:
        """The pooled rows, each with the per-study ``r``, ``n`` (and weight) it pooled."""
        out = []
        for row in self.pooled.to_dict(orient="records"):
            sub = self.effects[(self.effects["metric"] == row["metric"])
                               & (self.effects["construct"] == row["construct"])]
            cols = [c for c in ("study", "corpus", "criterion", "task", "language", "r", "n",
                                "weight") if c in sub.columns]
            out.append({**row, "studies": sub[cols].to_dict(orient="records")})
        return out


def meta_analyse(effects: pd.DataFrame, settings: MetaSettings | None = None,
                 comparisons: pd.DataFrame | None = None, notes: list[str] | None = None,
                 file: str | None = None, **options: Any) -> MetaAnalysis:
    """Pool ``effects`` per metric and construct (see the module docstring).

    ``effects`` needs ``study, r, n`` (``metric``, ``construct``, ``level`` default to
    ``effect``, ``all``, ``-``; ``vi`` defaults to Fisher's ``1/(n - 3)``).
    ``file`` names the source of ``effects`` in error messages. ``comparisons``: the output
    of :func:`nlgeval.meta_analysis.studies.comparison_table` per
    metric pair, with columns ``metric_a, metric_b`` added.

    Parameters
    ----------
    effects : DataFrame
        One row per effect (columns above).
    settings : MetaSettings, optional
        Options of the analysis (default ``MetaSettings()``).
    comparisons : DataFrame, optional
        Per-study comparisons of metric pairs (above).
    notes : list of str, optional
        Notes carried into the result (e.g. effects left out).
    file : str, optional
        Name of the source of ``effects`` in error messages.
    **options
        Fields of :class:`MetaSettings` overriding ``settings``.

    Returns
    -------
    MetaAnalysis
        Pooled estimates per metric and construct, effects, moderators and comparisons.

    Examples
    --------
    >>> eff = pd.DataFrame({"study": ["a", "b", "c", "d"], "r": [0.6, 0.2, 0.5, 0.4],
    ...                     "n": [40, 200, 90, 120]})
    >>> res = meta_analyse(eff, tau2="dl")
    >>> row = res.pooled.iloc[0]
    >>> int(row.k), bool(row.ci_low < row.r_pooled < row.ci_high)
    (4, True)
    """
    settings = replace(settings, **options) if settings else MetaSettings(**options)
    notes = list(notes or [])
    eff = _defaults(effects, file, settings.dependence == "rve")
    rows, fits, parts = [], {}, []
    # metrics in the order given, each with its constructs in the order they first appear
    order = {k: i for i, k in enumerate(dict.fromkeys(eff["metric"]))}
    c_order = {k: i for i, k in enumerate(dict.fromkeys(eff["construct"]))}
    groups = sorted(eff.groupby(["metric", "construct"], sort=False),
                    key=lambda g: (order[g[0][0]], c_order[g[0][1]]))
    for (metric, construct), sub in groups:
        if sub["study"].nunique() < 2:
            notes.append(f"{metric} / {construct}: only 1 study ({sub['study'].iloc[0]}"
                         "): nothing to pool")
            continue
        if settings.dependence == "rve":
            fit = _rve_fit(sub, settings)
            if fit.q_df < 4:
                notes.append(_few_df_note(f"{metric} / {construct}", fit.q_df, settings))
        else:
            fit = random_effects(sub["yi"].to_numpy(), sub["vi"].to_numpy(),
                                 method=settings.tau2, hartung_knapp=settings.hartung_knapp,
                                 confidence_level=settings.confidence_level,
                                 prediction=settings.prediction)
        fits[(metric, construct)] = fit
        parts.append(sub.assign(weight=fit.weights))
        rows.append({**_pooled_row(metric, construct, str(sub["level"].iloc[0]), fit),
                     "n_effects": len(sub)})
    pooled = pd.DataFrame(rows, columns=POOLED_COLUMNS)
    used = pd.concat(parts, ignore_index=True) if parts else eff.iloc[0:0].assign(weight=[])
    if settings.moderator and settings.dependence == "rve":
        notes.append("moderator tests assume one effect per study: not run with robust "
                     "variance estimation")
    mods = _moderators(used, settings, notes) if settings.moderator and \
        settings.dependence == "one" else pd.DataFrame()
    comps = _comparisons(comparisons, settings) if settings.compare else pd.DataFrame()
    return MetaAnalysis(settings=settings, pooled=pooled, effects=used, fits=fits,
                        moderators=mods, comparisons=comps, notes=notes)


def verdict_line(row: dict[str, Any] | pd.Series) -> str:
    """One line per metric and construct, reading the prediction interval.

    Parameters
    ----------
    row : dict or Series
        One row of :attr:`MetaAnalysis.pooled`.

    Returns
    -------
    str
        The verdict line.

    Examples
    --------
    >>> print(verdict_line({"metric": "chrF++", "construct": "adequacy", "k": 5,
    ...     "r_pooled": 0.61, "ci_low": 0.45, "ci_high": 0.74, "pi_low": 0.1, "pi_high": 0.9,
    ...     "i2": 0.8}))
    chrF++ (adequacy): pooled r = 0.61 [0.45, 0.74], prediction interval [0.10, 0.90], \
I^2 = 80%, k = 5: positive in any comparable data set
    """
    head = (f"{row['metric']} ({row['construct']}): pooled r = {row['r_pooled']:.2f} "
            f"[{row['ci_low']:.2f}, {row['ci_high']:.2f}]")
    pi_low, pi_high = row["pi_low"], row["pi_high"]
    tail = f", I^2 = {100 * row['i2']:.0f}%, k = {int(row['k'])}: "
    if not (np.isfinite(pi_low) and np.isfinite(pi_high)):
        return (head + tail + "too few data sets for a prediction interval; the pooled r "
                "describes these data sets only")
    head += f", prediction interval [{pi_low:.2f}, {pi_high:.2f}]"
    if pi_low > 0:
        return head + tail + "positive in any comparable data set"
    if row["ci_low"] > 0 and row["i2"] >= 0.5:  # substantial (Higgins & Thompson 2002)
        return head + tail + "positive on average, but validity depends on the data set"
    if row["ci_low"] > 0:
        return head + tail + ("positive on average; too few data sets to say that it holds "
                              "in every one")
    return head + tail + "no evidence of agreement with humans on average"


def _defaults(effects: pd.DataFrame, file: str | None, several: bool = False) -> pd.DataFrame:
    from nlgeval.io import row_of
    from nlgeval.meta_analysis.effects import correlation_effects

    eff = effects.copy()
    for col, default in (("metric", "effect"), ("construct", "all"), ("level", "-")):
        if col not in eff.columns:
            eff[col] = default
    eff = correlation_effects(eff, file=file)
    key = ["metric", "construct", "study"]
    if several:  # robust variance estimation: several effects per study, one per criterion
        key += ["criterion"] if "criterion" in eff.columns else []
    dup = eff.duplicated(key) if not several or "criterion" in eff.columns else \
        np.zeros(len(eff), dtype=bool)
    if dup.any():
        i = int(np.flatnonzero(dup)[0])
        raise InputError(f"study {eff['study'].iloc[i]!r} appears twice for metric "
                         f"{eff['metric'].iloc[i]!r} and construct {eff['construct'].iloc[i]!r} "
                         "(dependent effects are not pooled: one row per study)", file=file,
                         row=row_of(eff, i), column="study")
    return eff


def _few_df_note(name: str, df: float, settings: MetaSettings) -> str:
    """The note on a robust variance estimation fit with fewer than 4 degrees of freedom;
    with ``small_sample`` the interval has Tipton's (2015) corrections, without it none."""
    if settings.small_sample:
        return (f"{name}: robust variance estimation on {df} degrees of freedom, with "
                "Tipton's (2015) small-sample corrections: read the interval with care")
    return (f"{name}: robust variance estimation on {df} degrees of freedom: the interval "
            "is unreliable (no small-sample correction, Tipton 2015)")


def _rve_fit(sub: pd.DataFrame, settings: MetaSettings) -> RandomEffects:
    """Robust variance estimation (Hedges, Tipton & Johnson 2010) in the shape of a
    random-effects fit; its prediction interval uses t on m - 2 (riley) or m - 1 (metafor)
    degrees of freedom for m studies."""
    from scipy import stats

    from nlgeval.meta_analysis.robust import robust_variance

    res = robust_variance(sub["yi"], sub["vi"], sub["study"], rho=settings.rho,
                          confidence_level=settings.confidence_level,
                          small_sample=settings.small_sample)
    df = res.m - 2 if settings.prediction == "riley" else res.df
    half = float(np.sqrt(res.se ** 2 + res.tau2))
    crit = float(stats.t.isf((1 - settings.confidence_level) / 2, df)) if df > 0 else np.nan
    return RandomEffects(
        statistic=res.statistic, pvalue=res.pvalue, se=res.se, ci_low=res.ci_low,
        ci_high=res.ci_high, pi_low=res.statistic - crit * half,
        pi_high=res.statistic + crit * half, tau2=res.tau2, tau=float(np.sqrt(res.tau2)),
        i2=res.i2, h2=float("nan"), q=res.q, q_df=res.df, q_pvalue=float("nan"), k=res.m,
        method=f"rve (rho = {res.rho:g}{', small-sample' if settings.small_sample else ''})",
        hartung_knapp=False, prediction=settings.prediction,
        confidence_level=settings.confidence_level, weights=res.weights)


def _pooled_row(metric: str, construct: str, level: str, fit: RandomEffects) -> dict[str, Any]:
    row = {"metric": metric, "construct": construct, "level": level, "k": fit.k,
           "r_pooled": float(np.tanh(fit.statistic)), "ci_low": float(np.tanh(fit.ci_low)),
           "ci_high": float(np.tanh(fit.ci_high)), "pi_low": float(np.tanh(fit.pi_low)),
           "pi_high": float(np.tanh(fit.pi_high)), "tau2": fit.tau2, "tau": fit.tau,
           "i2": fit.i2, "q": fit.q, "q_df": fit.q_df, "q_pvalue": fit.q_pvalue,
           "pvalue": fit.pvalue, "z_pooled": fit.statistic, "se": fit.se,
           "method": fit.method, "hartung_knapp": fit.hartung_knapp}
    row["verdict"] = verdict_line(row)
    return row


#: Columns of the pooled effects that are no study-level moderator (the effect, its variance).
_NOT_MODERATORS = frozenset({"metric", "construct", "level", "r", "n", "vi", "yi", "weight",
                             "_row"})


def _unknown_moderator(mod: str, columns: list[str]) -> None:
    """The error for a ``--moderator`` that is not a study-level column, with a "did you mean"
    among the columns that are (not among the effect, its variance and weight)."""
    have = [c for c in columns if c not in _NOT_MODERATORS]
    close = difflib.get_close_matches(mod.lower(), [c.lower() for c in have], n=1, cutoff=0.6)
    hint = f"did you mean '{have[[c.lower() for c in have].index(close[0])]}'?; " if close else ""
    raise InputError(f"moderator {mod!r} is not a study-level column of the effects ({hint}"
                     f"have: {', '.join(have) or 'none'})", column=mod)


def _moderators(used: pd.DataFrame, settings: MetaSettings, notes: list[str]) -> pd.DataFrame:
    mod = settings.moderator
    if mod not in used.columns:
        _unknown_moderator(str(mod), [str(c) for c in used.columns])
    rows = []
    for (metric, construct), sub in used.groupby(["metric", "construct"], sort=False):
        levels = sub[mod].astype(str)
        if levels.nunique() < 2 or len(sub) <= levels.nunique():
            notes.append(f"{metric} / {construct}: moderator {mod} needs 2+ levels and more "
                         f"studies than levels ({levels.nunique()} levels, {len(sub)} studies)")
            continue
        kw: dict[str, Any] = {"method": settings.tau2, "hartung_knapp": settings.hartung_knapp,
              "confidence_level": settings.confidence_level}
        reg = meta_regression(sub["yi"], sub["vi"], levels, **kw)
        sg = subgroup_analysis(sub["yi"], sub["vi"], levels, **kw)
        for _, lev in reg.levels.iterrows():
            rows.append({"metric": metric, "construct": construct, "moderator": mod,
                         "level": lev["level"], "k": lev["k"],
                         "r": float(np.tanh(lev["estimate"])),
                         "ci_low": float(np.tanh(lev["ci_low"])),
                         "ci_high": float(np.tanh(lev["ci_high"])), "qm": reg.statistic,
                         "qm_df": reg.df, "qm_pvalue": reg.pvalue, "tau2_residual": reg.tau2,
                         "q_between": sg.statistic, "q_between_pvalue": sg.pvalue})
    return pd.DataFrame(rows)


def _comparisons(table: pd.DataFrame | None, settings: MetaSettings) -> pd.DataFrame:
    if table is None or table.empty:
        return pd.DataFrame()
    rows = []
    for (a, b, construct), sub in table.groupby(["metric_a", "metric_b", "construct"],
                                                sort=False):
        if len(sub) < 2:
            continue
        res = compare_metrics(sub, a, b, method=settings.tau2,
                              hartung_knapp=settings.hartung_knapp,
                              confidence_level=settings.confidence_level,
                              prediction=settings.prediction)
        rows.append({"metric_a": a, "metric_b": b, "construct": construct, "k": res.k,
                     "dz": res.statistic, "ci_low": res.ci_low, "ci_high": res.ci_high,
                     "pi_low": res.pi_low, "pi_high": res.pi_high, "tau2": res.tau2,
                     "pvalue": res.pvalue})
    return pd.DataFrame(rows)


def metric_pairs(metrics: list[str]) -> list[tuple[str, str]]:
    """Every unordered pair of metrics, in the order given.

    Examples
    --------
    >>> metric_pairs(["bleu", "chrf", "ter"])
    [('bleu', 'chrf'), ('bleu', 'ter'), ('chrf', 'ter')]
    """
    return list(itertools.combinations(metrics, 2))
