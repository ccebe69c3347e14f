"""Does metric A agree with humans better than metric B, across studies?

In each study both metrics are correlated with the same human scores on the same outputs, so
the two correlations are dependent. Their difference on Fisher's z scale,
``d = atanh(r_ah) - atanh(r_bh)``, has the large-sample variance
``2 (1 - c) / (n - 3)`` where ``c`` is the correlation of the two z's (Steiger 1980, eqs. 3,
10 and 15, with the pooled ``rbar = (r_ah + r_bh) / 2``; Meng, Rosenthal & Rubin 1992):

``c = [r_ab (1 - 2 rbar^2) - rbar^2 (1 - 2 rbar^2 - r_ab^2) / 2] / (1 - rbar^2)^2``

with ``r_ab`` the correlation of the two metrics. The per-study differences are then pooled
with the random-effects model of :mod:`nlgeval.meta_analysis.pooling`. As with the
correlations themselves, ``1/(n - 3)`` assumes independent outputs; at segment level, where
outputs share items and systems, the interval is too narrow (documented, not corrected).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from nlgeval.errors import InputError
from nlgeval.meta_analysis.pooling import RandomEffects, random_effects
from nlgeval.results import StatResult

__all__ = ["MetricComparison", "compare_metrics", "dependent_difference_variance"]


def dependent_difference_variance(r_ah: float | np.ndarray, r_bh: float | np.ndarray,
                                  r_ab: float | np.ndarray, n: float | np.ndarray
                                  ) -> np.ndarray:
    """Variance of ``atanh(r_ah) - atanh(r_bh)`` for correlations sharing variable ``h``
    (Steiger 1980, eq. 15).

    Parameters
    ----------
    r_ah, r_bh : float or ndarray
        Correlations of the two metrics with ``h``.
    r_ab : float or ndarray
        Correlation of the two metrics with each other.
    n : float or ndarray
        Number of outputs.

    Returns
    -------
    ndarray
        The variance of the difference of the two Fisher's z.

    Examples
    --------
    Independent metrics (``r_ab = 0``) with no correlation to ``h``: twice ``1/(n-3)``.

    >>> float(dependent_difference_variance(0.0, 0.0, 0.0, 103))
    0.02
    """
    rbar = (np.asarray(r_ah, dtype=float) + np.asarray(r_bh, dtype=float)) / 2.0
    r_ab = np.asarray(r_ab, dtype=float)
    r2 = rbar * rbar
    psi = r_ab * (1 - 2 * r2) - 0.5 * r2 * (1 - 2 * r2 - r_ab * r_ab)
    c = psi / (1 - r2) ** 2
    return 2.0 * (1.0 - c) / (np.asarray(n, dtype=float) - 3.0)


@dataclass(frozen=True)
class MetricComparison(StatResult):
    """Pooled difference ``atanh(r_a) - atanh(r_b)`` of two metrics across studies.

    ``statistic`` is the pooled difference on Fisher's z scale (positive: A agrees better),
    with ``pvalue``, ``ci_low/ci_high``, ``pi_low/pi_high``, ``tau2``, ``i2``, ``k``;
    ``studies`` has one row per study (``study, r_a, r_b, r_ab, n, d, vi``).

    Examples
    --------
    >>> t = pd.DataFrame({"study": ["s1", "s2", "s3"], "r_a": [0.5, 0.4, 0.6],
    ...                   "r_b": [0.4, 0.35, 0.45], "r_ab": [0.8, 0.7, 0.75], "n": [200] * 3})
    >>> res = compare_metrics(t, "chrf", "bleu", method="dl")
    >>> res.metric_a, res.k, res.statistic > 0
    ('chrf', 3, True)
    """

    statistic: float
    pvalue: float
    ci_low: float
    ci_high: float
    pi_low: float
    pi_high: float
    tau2: float
    i2: float
    k: int
    metric_a: str
    metric_b: str
    pooled: RandomEffects
    studies: pd.DataFrame

    _omit = frozenset({"pooled", "studies"})


def compare_metrics(table: pd.DataFrame, metric_a: str = "A", metric_b: str = "B", *,
                    method: str = "reml", hartung_knapp: bool = False,
                    confidence_level: float = 0.95, prediction: str = "riley"
                    ) -> MetricComparison:
    """Pool the per-study differences of two dependent correlations (see the module).

    ``table`` has columns ``study, r_a, r_b, r_ab, n``: the two metrics' correlations with
    the human scores, their correlation with each other, and the number of outputs.

    Parameters
    ----------
    table : DataFrame
        Columns ``study, r_a, r_b, r_ab, n`` (above).
    metric_a, metric_b : str, default "A", "B"
        Names of the two metrics, for the result.
    method : {"dl", "reml", "pm"}, default "reml"
        Estimator of tau^2 (see :func:`estimate_tau2`).
    hartung_knapp : bool, default False
        Use the Hartung-Knapp standard error and t distribution.
    confidence_level : float, default 0.95
        Level of the intervals.
    prediction : {"riley", "metafor"}, default "riley"
        Prediction interval (see :func:`random_effects`).

    Returns
    -------
    MetricComparison
        Pooled z difference, its interval, p-value and the per-study table.

    Examples
    --------
    >>> t = pd.DataFrame({"study": ["s1", "s2"], "r_a": [0.5, 0.3], "r_b": [0.5, 0.3],
    ...                   "r_ab": [0.9, 0.9], "n": [100, 100]})
    >>> compare_metrics(t, method="dl").statistic
    0.0
    """
    need = ["study", "r_a", "r_b", "r_ab", "n"]
    missing = [c for c in need if c not in table.columns]
    if missing:
        raise InputError(f"compare_metrics needs columns {', '.join(need)}; missing "
                         + ", ".join(missing))
    t = table[need].copy()
    for col in ("r_a", "r_b", "r_ab"):
        bad = ~t[col].between(-1, 1, inclusive="neither")
        if bad.any():
            raise InputError(f"{col} must lie strictly between -1 and 1 "
                             f"(study {t.loc[bad, 'study'].iloc[0]!r})", column=col)
    if (t["n"] <= 3).any():
        raise InputError("n must be above 3 in every study", column="n")
    t["d"] = np.arctanh(t["r_a"]) - np.arctanh(t["r_b"])
    t["vi"] = dependent_difference_variance(t["r_a"], t["r_b"], t["r_ab"], t["n"])
    res = random_effects(t["d"].to_numpy(), t["vi"].to_numpy(), method=method,
                         hartung_knapp=hartung_knapp, confidence_level=confidence_level,
                         prediction=prediction)
    return MetricComparison(
        statistic=res.statistic, pvalue=res.pvalue, ci_low=res.ci_low, ci_high=res.ci_high,
        pi_low=res.pi_low, pi_high=res.pi_high, tau2=res.tau2, i2=res.i2, k=res.k,
        metric_a=metric_a, metric_b=metric_b, pooled=res, studies=t.reset_index(drop=True))
