"""Williams' test of dependent correlations: is r(A, human) really higher than r(B, human)?

Williams (1959) t for r12 vs r13 given r23 (Steiger 1980, eq. 10; used for metrics by Graham &
Baldwin 2014 and WMT). With 1 = human, 2 = metric A, 3 = metric B::

    t = (r12 - r13) sqrt((n - 1)(1 + r23))
        / sqrt(2 (n - 1)/(n - 3) |R| + ((r12 + r13)/2)^2 (1 - r23)^3),
    |R| = 1 - r12^2 - r13^2 - r23^2 + 2 r12 r13 r23,   df = n - 3.

nlgeval does **not** take absolute values (WMT does, for TER-like metrics). Instead every
metric is *oriented* before any correlation is computed: scores of a lower-is-better metric
(TER, edit distance) are negated, so a larger r always means better agreement and a negative
r means the metric disagrees with humans -- information that abs() would hide. Williams' test
assumes (approximately) normal variables; it is the Pearson test. For Spearman it is applied
to ranks; for Kendall and for item-level correlations use the permutation test
(:mod:`nlgeval.correlation.permutation`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

import numpy as np
from scipy import stats

from nlgeval.correlation._constant import extremes, overflow_safe
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

    Parameters
    ----------
    r12, r13 : float
        Correlations of variable 1 (human) with variables 2 and 3 (metrics A and B).
    r23 : float
        Correlation of variables 2 and 3.
    n : int
        Number of units.
    alternative : str
        ``"two-sided"`` (default), ``"greater"`` or ``"less"``.

    Returns
    -------
    WilliamsResult
        Williams' t, its degrees of freedom and the p-value.

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
    t = _williams_t(r12, r13, r23, n)
    if t is None:
        return WilliamsResult(math.nan, n - 3, math.nan, r12, r13, r23, n, alternative)
    p = _t_pvalues(np.array([t]), n - 3, alternative)[0]
    return WilliamsResult(float(t), n - 3, float(min(1.0, p)), r12, r13, r23, n, alternative)


def _williams_t(r12: float, r13: float, r23: float, n: int) -> float | None:
    """Williams' t (finite correlations, n > 3); None when the correlation matrix is not
    positive semi-definite."""
    det = 1 - r12**2 - r13**2 - r23**2 + 2 * r12 * r13 * r23
    denom = 2 * (n - 1) / (n - 3) * det + ((r12 + r13) / 2) ** 2 * (1 - r23) ** 3
    if det < -1e-12 or denom <= 0:
        return None
    return (r12 - r13) * math.sqrt((n - 1) * (1 + r23)) / math.sqrt(denom)


def _t_pvalues(t: np.ndarray, df: int, alternative: str) -> np.ndarray:
    """Student-t p-values of ``t`` (element-wise, so one call serves many tests)."""
    if alternative == "two-sided":
        return 2 * stats.t.sf(np.abs(t), df)
    if alternative == "greater":
        return stats.t.sf(t, df)
    return stats.t.cdf(t, df)


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

    Parameters
    ----------
    XA, XB, Y : numpy.ndarray
        Metrics A and B and the human scores, (systems x items), NaN for a missing cell.
    level : str
        ``system`` (default), ``segment``, ... (see :mod:`nlgeval.correlation.levels`).
    coefficient : str
        ``"pearson"`` (default) or ``"spearman"``.
    alternative : str
        ``"greater"`` (default, H1 "A better"), ``"less"`` or ``"two-sided"``.

    Returns
    -------
    WilliamsResult
        Williams' t, its degrees of freedom and the p-value.

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


def williams_pairs(
    metrics: Mapping[str, np.ndarray],
    Y: np.ndarray,
    level: str = "system",
    coefficient: str = "pearson",
    alternative: Alternative = "greater",
) -> dict[tuple[str, str], WilliamsResult]:
    """:func:`williams_from_scores` of every ordered pair of ``metrics`` (a != b), with the
    shared work done once.

    When every metric is present in the same cells (the usual study), each pair's vectors are
    the metrics' own, so r(human, metric) is computed once per metric and r(A, B) once per
    unordered pair (the coefficient is symmetric), and the t-distribution is evaluated for
    all pairs in one call: the same numbers as pair by pair (tests/test_williams_pairs.py).
    Otherwise every ordered pair is tested on its own complete cells.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> H = rng.normal(size=(5, 20))
    >>> mets = {"a": H + 0.5 * rng.normal(size=(5, 20)), "b": H + 2 * rng.normal(size=(5, 20))}
    >>> res = williams_pairs(mets, H, "segment")
    >>> sorted(res), res[("a", "b")] == williams_from_scores(mets["a"], mets["b"], H, "segment")
    ([('a', 'b'), ('b', 'a')], True)
    """
    level = check_level(level)
    coefficient = check_coefficient(coefficient)
    if coefficient not in ("pearson", "spearman"):
        raise InputError("Williams' test is for Pearson (or Spearman on ranks); use "
                         "permutation_test for Kendall")
    Xs = {m: np.asarray(X, dtype=float) for m, X in metrics.items()}
    Y = np.asarray(Y, dtype=float)
    names = list(Xs)
    shared = _shared_vectors(Xs, Y, level)
    if shared is None:
        return {(a, b): williams_from_scores(Xs[a], Xs[b], Y, level, coefficient, alternative)
                for a in names for b in names if a != b}
    h, vec = shared
    r_h = {m: float(batch_correlation(h, v, coefficient)) for m, v in vec.items()}
    r_pairs = _pair_correlations(vec, coefficient)
    keys, r12, r13, r23 = [], [], [], []
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            r_ab = r_pairs[(a, b)]
            for x, y in ((a, b), (b, a)):
                keys.append((x, y))
                r12.append(r_h[x])
                r13.append(r_h[y])
                r23.append(r_ab)
    return dict(zip(keys, _williams_many(r12, r13, r23, int(h.size), alternative),
                    strict=True))


_PAIR_ROWS_CELLS = 65_536  # cells of one batch of pairs (its temporaries stay in cache)


def _pair_correlations(vec: dict[str, np.ndarray], coefficient: str
                       ) -> dict[tuple[str, str], float]:
    """r(A, B) of every unordered pair (a before b in ``vec``), each the number of
    ``batch_correlation(vec[a], vec[b])``. Pearson pairs are taken as rows of one
    :func:`batch_correlation` call per batch -- the same per-row sums -- when no vector needs
    the overflow scaling (which a batch applies to every row when one row needs it);
    otherwise, and for Spearman, pair by pair."""
    names = list(vec)
    pairs = [(a, b) for i, a in enumerate(names) for b in names[i + 1:]]
    if coefficient == "pearson" and pairs:
        V = np.stack([vec[m] for m in names])
        if overflow_safe(V, *extremes(V)) is V:
            at = {m: i for i, m in enumerate(names)}
            step = max(1, _PAIR_ROWS_CELLS // max(1, V.shape[1]))
            out: dict[tuple[str, str], float] = {}
            for k in range(0, len(pairs), step):
                part = pairs[k:k + step]
                r = batch_correlation(V[[at[a] for a, _ in part]], V[[at[b] for _, b in part]])
                out.update(zip(part, r.tolist(), strict=True))
            return out
    return {(a, b): float(batch_correlation(vec[a], vec[b], coefficient)) for a, b in pairs}


def _shared_vectors(Xs: dict[str, np.ndarray], Y: np.ndarray, level: str
                    ) -> tuple[np.ndarray, dict[str, np.ndarray]] | None:
    """The human vector and each metric's vector at ``level`` when every pair's complete
    units are the same (:func:`_level_vectors` of any pair); None otherwise."""
    oks = [np.isfinite(X) & np.isfinite(Y) for X in Xs.values()]
    if not oks or any(not np.array_equal(o, oks[0]) for o in oks[1:]):
        return None
    ok = oks[0]
    H = np.where(ok, Y, np.nan)
    if level == "segment":
        return H[ok], {m: np.where(ok, X, np.nan)[ok] for m, X in Xs.items()}
    if level != "system":
        _level_vectors(Y, Y, Y, level)  # raises the error for other levels
    means = {m: system_means(np.where(ok, X, np.nan), H) for m, X in Xs.items()}
    keeps = [np.isfinite(a) & np.isfinite(h) for a, h in means.values()]
    if any(not np.array_equal(k, keeps[0]) for k in keeps[1:]):
        return None
    keep = keeps[0]
    h = next(iter(means.values()))[1]
    return h[keep], {m: a[keep] for m, (a, _) in means.items()}


def _williams_many(r12: list[float], r13: list[float], r23: list[float], n: int,
                   alternative: str) -> list[WilliamsResult]:
    """:func:`williams_test` of many correlation triples with one t-distribution call."""
    if alternative not in ("two-sided", "greater", "less"):
        raise InputError(f"alternative must be two-sided, greater or less, got {alternative!r}")
    ts = [_williams_t(a, b, c, n) if n > 3 and all(np.isfinite(v) for v in (a, b, c))
          else None for a, b, c in zip(r12, r13, r23, strict=True)]
    good = [t for t in ts if t is not None]
    ps = iter(_t_pvalues(np.array(good, dtype=float), n - 3, alternative) if good else [])
    out = []
    for t, a, b, c in zip(ts, r12, r13, r23, strict=True):
        if t is None:
            out.append(WilliamsResult(math.nan, max(n - 3, 0), math.nan, a, b, c, n,
                                      alternative))
        else:
            out.append(WilliamsResult(float(t), n - 3, float(min(1.0, next(ps))), a, b, c, n,
                                      alternative))
    return out
