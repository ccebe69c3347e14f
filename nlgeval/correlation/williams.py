"""Williams' test of dependent correlations: is r(A, human) really higher than r(B, human)?

Williams (1959) t for r12 vs r13 given r23 (Steiger 1980, eq. 10; used for metrics by Graham &
Baldwin 2014 and WMT). Split out of :mod:`nlgeval.correlation.compare`, which documents the
orientation convention and re-exports every name defined here.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

import numpy as np
from scipy import stats

from nlgeval.correlation.coefficients import batch_correlation, check_coefficient
from nlgeval.correlation.levels import check_level, system_means
from nlgeval.errors import InputError
from nlgeval.results import StatResult

Alternative = Literal["two-sided", "greater", "less"]


@dataclass(frozen=True)
class WilliamsResult(StatResult):
    """Williams' t for H0: rho12 = rho13 (H1 per ``alternative``; "greater": rho12 > rho13).

    Examples
    --------
    >>> res = williams_test(0.6, 0.4, 0.5, 100, "greater")
    >>> round(res.statistic, 3), res.df
    (2.449, 97)
    """

    statistic: float
    df: int
    pvalue: float
    r12: float
    r13: float
    r23: float
    n: int
    alternative: str



def williams_test(
    r12: float, r13: float, r23: float, n: int, alternative: Alternative = "two-sided"
) -> WilliamsResult:
    """Williams (1959) test of two dependent correlations sharing variable 1 (see module doc).

    NaN when any correlation is NaN, n <= 3, or the correlation matrix is not positive
    semi-definite.

    Examples
    --------
    >>> round(williams_test(0.6, 0.4, 0.5, 100).pvalue, 4)
    0.0161
    """
    vals = (r12, r13, r23)
    if alternative not in ("two-sided", "greater", "less"):
        raise InputError(f"alternative must be two-sided, greater or less, got {alternative!r}")
    if n <= 3 or not all(np.isfinite(v) for v in vals):
        return WilliamsResult(math.nan, max(n - 3, 0), math.nan, r12, r13, r23, n, alternative)
    det = 1 - r12**2 - r13**2 - r23**2 + 2 * r12 * r13 * r23
    denom = 2 * (n - 1) / (n - 3) * det + ((r12 + r13) / 2) ** 2 * (1 - r23) ** 3
    if det < -1e-12 or denom <= 0:
        return WilliamsResult(math.nan, n - 3, math.nan, r12, r13, r23, n, alternative)
    t = (r12 - r13) * math.sqrt((n - 1) * (1 + r23)) / math.sqrt(denom)
    df = n - 3
    if alternative == "two-sided":
        p = 2 * stats.t.sf(abs(t), df)
    elif alternative == "greater":
        p = stats.t.sf(t, df)
    else:
        p = stats.t.cdf(t, df)
    return WilliamsResult(float(t), df, float(min(1.0, p)), r12, r13, r23, n, alternative)


def _level_vectors(
    XA: np.ndarray, XB: np.ndarray, Y: np.ndarray, level: str
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The level's vectors for A, B and human, over cells where all three are present."""
    ok = np.isfinite(XA) & np.isfinite(XB) & np.isfinite(Y)
    A = np.where(ok, XA, np.nan)
    Bm = np.where(ok, XB, np.nan)
    H = np.where(ok, Y, np.nan)
    if level == "system":
        a, h = system_means(A, H)
        b, _ = system_means(Bm, H)
        keep = np.isfinite(a) & np.isfinite(b) & np.isfinite(h)
        return a[keep], b[keep], h[keep]
    if level == "segment":
        return A[ok], Bm[ok], H[ok]
    raise InputError("Williams' test needs one correlation per metric over one set of units: "
                     "use level 'system' or 'segment' (item-level: use permutation_test)")


def williams_from_scores(
    XA: np.ndarray,
    XB: np.ndarray,
    Y: np.ndarray,
    level: str = "system",
    coefficient: str = "pearson",
    alternative: Alternative = "greater",
) -> WilliamsResult:
    """Williams' test from score matrices: r(A, human) vs r(B, human) given r(A, B).

    The three correlations use the same units (cells complete for A, B and human). For
    ``coefficient="spearman"`` the vectors are ranked first. Default one-sided: H1 "A better".

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> H = rng.normal(size=(5, 20))
    >>> A = H + 0.5 * rng.normal(size=(5, 20))
    >>> B = H + 2 * rng.normal(size=(5, 20))
    >>> williams_from_scores(A, B, H, "segment").pvalue < 0.001
    True
    """
    level = check_level(level)
    coefficient = check_coefficient(coefficient)
    if coefficient not in ("pearson", "spearman"):
        raise InputError("Williams' test is for Pearson (or Spearman on ranks); use "
                         "permutation_test for Kendall")
    a, b, h = _level_vectors(np.asarray(XA, float), np.asarray(XB, float),
                             np.asarray(Y, float), level)
    r12 = float(batch_correlation(h, a, coefficient))
    r13 = float(batch_correlation(h, b, coefficient))
    r23 = float(batch_correlation(a, b, coefficient))
    return williams_test(r12, r13, r23, int(h.size), alternative)
