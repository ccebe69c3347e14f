"""The Wilcoxon signed-rank test of paired ratings and its effect size.

The test is :func:`scipy.stats.wilcoxon` (``zero_method="wilcox"``: zero differences are
dropped; ``method="auto"``: exact distribution for n <= 50 without ties or zeros, exact
enumeration of the permutation distribution for n <= 13 with ties/zeros, normal approximation
with tie correction otherwise -- :func:`wilcoxon_method` says which). Effect size: the
matched-pairs rank-biserial correlation r = (W+ - W-) / (W+ + W-) (Kerby 2014), in [-1, 1],
positive when A is rated higher, with a confidence interval from Fisher's z transform,
tanh(atanh(r) +- z_{1-a/2} SE), SE = sqrt(sum of squared ranks) / (n (n + 1) / 2) over the n
non-zero differences -- the interval R's ``effectsize::rank_biserial(paired = TRUE)`` reports
(Ben-Shachar, Luedecke & Makowski 2020). At |r| = 1 that interval collapses to a point; here r
is then moved half a rank towards 0 for the outer bound's z transform (the bound at +-1 stays),
so the interval is never [1, 1].

The pairing rules and the table over all pairs of systems are in :mod:`nlgeval.human.compare`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from scipy import stats

from nlgeval.results import ConfidenceInterval, StatResult


def wilcoxon_method(d: np.ndarray) -> str:
    """Which p-value ``scipy.stats.wilcoxon(method="auto")`` computes for differences ``d``
    (mirrors scipy 1.17's rule, so reports can say it).

    Examples
    --------
    >>> wilcoxon_method([1.0, -2.0, 3.0]), wilcoxon_method([1.0, 1.0, 0.0])
    ('exact', 'exact-permutation')
    """
    d = np.asarray(d, dtype=float)
    if len(d) > 50:
        return "normal"
    nz = d[d != 0]
    has_ties = len(np.unique(np.abs(nz))) < len(nz)
    if not (has_ties or len(nz) < len(d)):
        return "exact"
    if len(d) <= 13:
        return "exact-permutation"
    return "normal"


@dataclass(frozen=True)
class SignedRankResult(StatResult):
    """One Wilcoxon signed-rank test of paired samples ``a`` vs ``b``; ``ci_low``/``ci_high``
    bound the rank-biserial effect size (``confidence_interval()``; keys ``effect_size_low``
    / ``effect_size_high`` / ``confidence`` kept in ``to_dict``).

    Examples
    --------
    >>> res = signed_rank([3, 4, 5, 6, 7], [1, 1, 2, 2, 3])
    >>> stat, p = res
    >>> float(p), res.effect_size
    (0.0625, 1.0)
    """

    _aliases: ClassVar[dict[str, str]] = {"effect_size_low": "ci_low",
                                          "effect_size_high": "ci_high",
                                          "confidence": "confidence_level"}

    n: int
    statistic: float
    pvalue: float
    effect_size: float
    w_plus: float
    w_minus: float
    n_zero: int
    method: str
    ci_low: float = np.nan
    ci_high: float = np.nan
    confidence_level: float = 0.95

    @property
    def effect_size_low(self) -> float:
        """Lower bound of the rank-biserial r's interval (the ``pairs`` table's name)."""
        return self.ci_low

    @property
    def effect_size_high(self) -> float:
        """Upper bound of the rank-biserial r's interval."""
        return self.ci_high


def rank_biserial_ci(r: float, n_nonzero: int, confidence: float = 0.95
                     ) -> ConfidenceInterval:
    """Fisher-z interval of the matched-pairs rank-biserial r from ``n_nonzero`` non-zero
    differences (as R's ``effectsize::rank_biserial``; half-rank adjustment at |r| = 1).

    Examples
    --------
    >>> ci = rank_biserial_ci(0.5, 20)
    >>> ci.low < 0.5 < ci.high
    True
    """
    nd = int(n_nonzero)
    if nd == 0 or not np.isfinite(r):
        return ConfidenceInterval(np.nan, np.nan)
    maxw = nd * (nd + 1) / 2.0
    se = np.sqrt((2 * nd ** 3 + 3 * nd ** 2 + nd) / 6.0) / maxw
    z = stats.norm.ppf(0.5 + confidence / 2.0)
    r_in = float(np.clip(r, -(maxw - 1.0) / maxw if maxw > 1 else -0.5,
                         (maxw - 1.0) / maxw if maxw > 1 else 0.5))
    lo, hi = np.tanh(np.arctanh(r_in) + np.array([-1.0, 1.0]) * z * se)
    if r >= 1.0:
        hi = 1.0
    if r <= -1.0:
        lo = -1.0
    return ConfidenceInterval(float(lo), float(hi))


def signed_rank(a: np.ndarray, b: np.ndarray, *, confidence: float = 0.95) -> SignedRankResult:
    """Wilcoxon signed-rank test of a - b (scipy) plus the matched-pairs rank-biserial r and its
    interval (:func:`rank_biserial_ci`).

    All-zero differences (no evidence of any difference) give p = 1 and r = 0 (scipy returns
    NaN there); zero pairs give NaN for everything.

    Parameters
    ----------
    a, b : numpy.ndarray
        The paired scores of the two systems.
    confidence : float, default 0.95
        Confidence level of the interval of r.

    Returns
    -------
    SignedRankResult
        Statistic, p-value, rank-biserial r and its interval.

    Examples
    --------
    >>> res = signed_rank([5, 6, 7, 8, 9, 10], [1, 2, 3, 4, 5, 6])
    >>> float(res.pvalue), res.effect_size, res.method
    (0.03125, 1.0, 'exact-permutation')
    """
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    d = a - b
    n = len(d)
    nz = d[d != 0]
    if n == 0:
        return SignedRankResult(0, np.nan, np.nan, np.nan, np.nan, np.nan, 0, "none",
                                confidence_level=confidence)
    if len(nz) == 0:
        return SignedRankResult(n, 0.0, 1.0, 0.0, 0.0, 0.0, n, "all-zero",
                                confidence_level=confidence)
    ranks = stats.rankdata(np.abs(nz))
    w_plus = float(ranks[nz > 0].sum())
    w_minus = float(ranks[nz < 0].sum())
    res = stats.wilcoxon(a, b, zero_method="wilcox", method="auto")
    r = (w_plus - w_minus) / (w_plus + w_minus)
    ci = rank_biserial_ci(r, len(nz), confidence)
    return SignedRankResult(
        n=n, statistic=float(res.statistic), pvalue=float(res.pvalue), effect_size=float(r),
        w_plus=w_plus, w_minus=w_minus, n_zero=int(n - len(nz)), method=wilcoxon_method(d),
        ci_low=ci.low, ci_high=ci.high, confidence_level=confidence,
    )
