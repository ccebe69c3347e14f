"""Correlation coefficients with p-values, n, Fisher-z intervals, and vectorised batch versions.

Point estimates and p-values come from scipy (``pearsonr``, ``spearmanr``, ``kendalltau``);
nlgeval only adds explicit handling of missing values and degenerate input (NaN plus a
:class:`DegenerateInputWarning` saying why, never an exception), and :func:`batch_correlation`,
which computes the same coefficients for many vectors at once (the rows of a matrix) so that a
bootstrap or permutation test does not call scipy once per resample.

Kendall's tau is tau-b (ties corrected; Kendall 1945) unless ``"kendall_c"`` (Stuart's tau-c) is
asked for.

**Degenerate input, one rule for every code path** (point estimate, batch, bootstrap and
permutation kernels): a coefficient is undefined -- NaN, never an exception -- when fewer than
3 complete pairs remain or either variable is constant. The kernels that work from sufficient
statistics (:func:`pearson_from_sums`, used by the bootstrap, the permutation tests and the
weighted rank kernels in ``_kendall_weighted``) see "constant" as a centred sum of squares of at
most ``1e-10 * n * scale``, which is how an exactly constant variable shows up after rounding.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
from scipy import stats

from nlgeval.results import ConfidenceInterval, StatResult

Coefficient = Literal["pearson", "spearman", "kendall", "kendall_c"]
COEFFICIENTS: tuple[str, ...] = ("pearson", "spearman", "kendall", "kendall_c")

#: Above this many values per vector, batch Kendall falls back to one scipy call per vector
#: (the pairwise-sign matrix would need n^2 memory per vector).
KENDALL_PAIRWISE_MAX_N = 120


class DegenerateInputWarning(RuntimeWarning):
    """A coefficient could not be computed (n < 3, constant scores) and is reported as NaN.

    Examples
    --------
    >>> import warnings
    >>> with warnings.catch_warnings(record=True) as w:
    ...     warnings.simplefilter("always")
    ...     r = correlation([1, 1, 1], [1, 2, 3])
    >>> w[0].category.__name__, r.statistic
    ('DegenerateInputWarning', nan)
    """


def check_coefficient(name: str) -> str:
    """The canonical name of a coefficient (tau, rho, r, tau-b, tau-c accepted); else InputError.

    Examples
    --------
    >>> check_coefficient("tau"), check_coefficient("Tau-C")
    ('kendall', 'kendall_c')
    """
    from nlgeval.errors import InputError

    key = name.strip().lower().replace("-", "_")
    aliases = {"tau": "kendall", "kendall_b": "kendall", "tau_b": "kendall", "tau_c": "kendall_c",
               "rho": "spearman", "r": "pearson"}
    key = aliases.get(key, key)
    if key not in COEFFICIENTS:
        raise InputError(
            f"unknown correlation coefficient '{name}' (use one of: {', '.join(COEFFICIENTS)})"
        )
    return key


@dataclass(frozen=True)
class CorrelationResult(StatResult):
    """One correlation coefficient with its p-value, sample size and confidence interval.

    ``ci_low``/``ci_high`` (``confidence_interval()``) is the Fisher-z interval for Pearson
    (Fisher 1921) and NaN for the rank coefficients (use the bootstrap in
    :mod:`nlgeval.correlation.bootstrap` for those). ``n_missing`` counts pairs dropped because
    one of the two values was missing. ``level`` is set when the coefficient was computed at a
    correlation level (:func:`nlgeval.correlation.levels.level_correlation`); it is the same
    class as ``LevelCorrelation``.

    Examples
    --------
    >>> res = correlation([1, 2, 3, 4], [1, 3, 2, 4])
    >>> r, p = res
    >>> round(r, 2), res.n
    (0.8, 4)
    """

    coefficient: str
    statistic: float
    pvalue: float
    n: int
    ci_low: float = math.nan
    ci_high: float = math.nan
    n_missing: int = 0
    note: str = ""
    level: str = ""


_NAN_CI = ConfidenceInterval(math.nan, math.nan)


def fisher_z_interval(r: float, n: int, confidence_level: float = 0.95) -> ConfidenceInterval:
    """Fisher (1921) interval for Pearson's r: tanh(atanh(r) -/+ z_{1-a/2} / sqrt(n - 3)).

    NaN when n <= 3 or r is NaN; r = +-1 gives the degenerate interval [r, r].

    Examples
    --------
    >>> ci = fisher_z_interval(0.5, 28)
    >>> round(ci.low, 3), round(ci.high, 3)
    (0.156, 0.736)
    """
    if not np.isfinite(r) or n <= 3:
        return _NAN_CI
    if abs(r) >= 1.0:
        return ConfidenceInterval(float(r), float(r))
    z = math.atanh(r)
    half = stats.norm.ppf(0.5 + confidence_level / 2) / math.sqrt(n - 3)
    return ConfidenceInterval(math.tanh(z - half), math.tanh(z + half))


def _degenerate(reason: str, what: str = "") -> str:
    msg = f"correlation{(' ' + what) if what else ''} is NaN: {reason}"
    warnings.warn(msg, DegenerateInputWarning, stacklevel=3)
    return msg


def correlation(
    x: Any,
    y: Any,
    coefficient: str = "pearson",
    *,
    confidence_level: float = 0.95,
    alternative: Literal["two-sided", "less", "greater"] = "two-sided",
    label: str = "",
) -> CorrelationResult:
    """Correlation of two paired vectors; pairs with a missing (NaN) value are dropped and counted.

    Returns NaN (with a :class:`DegenerateInputWarning` naming ``label`` and the reason) when
    fewer than 3 complete pairs remain or either vector is constant.

    Examples
    --------
    >>> res = correlation([1, 2, 3, 4, 5], [2, 1, 4, 3, 5], "spearman")
    >>> round(res.statistic, 2), res.n
    (0.8, 5)
    """
    coefficient = check_coefficient(coefficient)
    x = np.asarray(x, dtype=float).ravel()
    y = np.asarray(y, dtype=float).ravel()
    if x.shape != y.shape:
        from nlgeval.errors import InputError

        raise InputError(f"x and y must have the same length, got {x.size} and {y.size}")
    ok = np.isfinite(x) & np.isfinite(y)
    n_missing = int(x.size - ok.sum())
    x, y = x[ok], y[ok]
    n = int(x.size)
    if n < 3:
        note = _degenerate(f"only {n} complete pair(s), need at least 3", label)
        return CorrelationResult(coefficient, math.nan, math.nan, n, *_NAN_CI, n_missing, note)
    if np.ptp(x) == 0 or np.ptp(y) == 0:
        which = "first" if np.ptp(x) == 0 else "second"
        note = _degenerate(f"the {which} variable is constant", label)
        return CorrelationResult(coefficient, math.nan, math.nan, n, *_NAN_CI, n_missing, note)
    if coefficient == "pearson":
        res = stats.pearsonr(x, y, alternative=alternative)
        r, p = float(res.statistic), float(res.pvalue)
        ci = fisher_z_interval(r, n, confidence_level)
    elif coefficient == "spearman":
        res = stats.spearmanr(x, y, alternative=alternative)
        r, p, ci = float(res.statistic), float(res.pvalue), _NAN_CI
    else:
        variant = "b" if coefficient == "kendall" else "c"
        res = stats.kendalltau(x, y, variant=variant, alternative=alternative)
        r, p, ci = float(res.statistic), float(res.pvalue), _NAN_CI
    return CorrelationResult(coefficient, r, p, n, ci.low, ci.high, n_missing)


# ----------------------------------------------------------------------------- batch versions
def pearson_from_sums(
    n: np.ndarray, sx: np.ndarray, sy: np.ndarray, sxx: np.ndarray, syy: np.ndarray,
    sxy: np.ndarray, scale_x: np.ndarray | float, scale_y: np.ndarray | float,
) -> np.ndarray:
    """Pearson r (Pearson 1896) from (weighted) sums: the one Pearson kernel of nlgeval.

    ``n`` is the total weight, ``sx``... the weighted sums of x, y, x^2, y^2 and xy (ideally of
    values centred near their mean, to limit cancellation); ``scale_x``/``scale_y`` the mean
    square that decides when a centred sum of squares counts as zero. NaN when ``n < 3`` or a
    variable is constant (the module's degenerate-input rule); clipped to [-1, 1].

    Examples
    --------
    >>> import numpy as np
    >>> x, y = np.array([1.0, 2.0, 4.0]), np.array([1.0, 3.0, 2.0])
    >>> r = pearson_from_sums(3, x.sum(), y.sum(), x @ x, y @ y, x @ y, x @ x / 3, y @ y / 3)
    >>> bool(np.isclose(r, np.corrcoef(x, y)[0, 1]))
    True
    """
    n = np.asarray(n, dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        cxx = sxx - sx * sx / n
        cyy = syy - sy * sy / n
        cxy = sxy - sx * sy / n
        r = cxy / np.sqrt(cxx * cyy)
    tiny_x = cxx <= 1e-10 * np.maximum(scale_x, 1e-300) * np.maximum(n, 1)
    tiny_y = cyy <= 1e-10 * np.maximum(scale_y, 1e-300) * np.maximum(n, 1)
    bad = ~(n >= 3) | tiny_x | tiny_y
    return np.where(bad, np.nan, np.clip(r, -1.0, 1.0))


def _masked_pearson(x: np.ndarray, y: np.ndarray, valid: np.ndarray) -> np.ndarray:
    """Pearson r along the last axis using only positions where ``valid`` is True."""
    w = valid.astype(float)
    n = w.sum(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        mx = np.where(valid, x, 0.0).sum(axis=-1) / n
        my = np.where(valid, y, 0.0).sum(axis=-1) / n
        dx = np.where(valid, x - mx[..., None], 0.0)
        dy = np.where(valid, y - my[..., None], 0.0)
        sxx = (dx * dx).sum(axis=-1)
        syy = (dy * dy).sum(axis=-1)
        r = pearson_from_sums(n, 0.0, 0.0, sxx, syy, (dx * dy).sum(axis=-1), 0.0, 0.0)
    # exactly constant (all valid values equal) is the rule; the sums see it as a zero
    # centred sum of squares, which rounding can hide when the values are not representable
    xmax = np.where(valid, x, -np.inf).max(axis=-1)
    xmin = np.where(valid, x, np.inf).min(axis=-1)
    ymax = np.where(valid, y, -np.inf).max(axis=-1)
    ymin = np.where(valid, y, np.inf).min(axis=-1)
    bad = (n < 3) | (xmax == xmin) | (ymax == ymin)
    return np.where(bad, np.nan, r)


def _masked_ranks(x: np.ndarray, valid: np.ndarray) -> np.ndarray:
    """Average ranks along the last axis among the valid entries (invalid -> NaN).

    Invalid entries are set to +inf before ranking, so they take the top ranks and leave the
    ranks of the valid entries exactly as if they had been ranked alone.
    """
    ranks = stats.rankdata(np.where(valid, x, np.inf), axis=-1, method="average")
    return np.where(valid, ranks, np.nan)


def _kendall_pairwise(
    x: np.ndarray, y: np.ndarray, valid: np.ndarray, variant: str
) -> np.ndarray:
    """Kendall tau-b / tau-c along the last axis from pairwise sign matrices (small n)."""
    lead = x.shape[:-1]
    n = x.shape[-1]
    x2 = x.reshape(-1, n)
    y2 = y.reshape(-1, n)
    v2 = valid.reshape(-1, n)
    out = np.empty(x2.shape[0])
    chunk = max(1, int(4_000_000 // max(1, n * n)))
    iu = np.triu_indices(n, k=1)
    for start in range(0, x2.shape[0], chunk):
        xs, ys, vs = x2[start:start + chunk], y2[start:start + chunk], v2[start:start + chunk]
        xa, xb = xs[:, iu[0]], xs[:, iu[1]]
        ya, yb = ys[:, iu[0]], ys[:, iu[1]]
        pv = vs[:, iu[0]] & vs[:, iu[1]]
        sx = ((xa > xb).astype(np.int8) - (xa < xb).astype(np.int8)) * pv
        sy = ((ya > yb).astype(np.int8) - (ya < yb).astype(np.int8)) * pv
        s = (sx * sy).sum(axis=1, dtype=np.int64).astype(float)
        with np.errstate(invalid="ignore", divide="ignore"):
            if variant == "b":
                n0 = pv.sum(axis=1).astype(float)
                untied_x = (sx != 0).sum(axis=1)
                untied_y = (sy != 0).sum(axis=1)
                tau = s / np.sqrt(untied_x.astype(float) * untied_y.astype(float))
                tau = np.where(n0 > 0, tau, np.nan)
            else:
                # Stuart's tau-c = 2 m (C - D) / (n^2 (m - 1)), m = min(#distinct x, #distinct y)
                nv = vs.sum(axis=1).astype(float)
                xs_sorted = np.sort(np.where(vs, xs, np.inf), axis=1)
                ys_sorted = np.sort(np.where(vs, ys, np.inf), axis=1)
                dx = 1 + (np.diff(xs_sorted, axis=1) > 0)[:, :].sum(axis=1)
                dy = 1 + (np.diff(ys_sorted, axis=1) > 0)[:, :].sum(axis=1)
                # the +inf padding adds one "distinct value" when any entry is invalid
                pad = (~vs).any(axis=1).astype(int)
                m = np.minimum(dx - pad, dy - pad).astype(float)
                tau = 2 * m * s / (nv**2 * (m - 1))
        nvalid = vs.sum(axis=1)
        xconst = np.where(vs, xs, -np.inf).max(1) == np.where(vs, xs, np.inf).min(1)
        yconst = np.where(vs, ys, -np.inf).max(1) == np.where(vs, ys, np.inf).min(1)
        tau = np.where((nvalid < 3) | xconst | yconst, np.nan, np.clip(tau, -1, 1))
        out[start:start + chunk] = tau
    return out.reshape(lead)


def _kendall_loop(x: np.ndarray, y: np.ndarray, valid: np.ndarray, variant: str) -> np.ndarray:
    """Kendall per vector with scipy (O(n log n) each); used for long vectors.

    A vectorised O(B n^2) pairwise version would need gigabytes for segment-level data, and
    scipy's merge-sort implementation is fast enough (about a millisecond per 3,000 pairs).
    """
    lead = x.shape[:-1]
    n = x.shape[-1]
    x2, y2, v2 = x.reshape(-1, n), y.reshape(-1, n), valid.reshape(-1, n)
    out = np.full(x2.shape[0], np.nan)
    for i in range(x2.shape[0]):
        v = v2[i]
        xi, yi = x2[i, v], y2[i, v]
        if xi.size < 3 or np.ptp(xi) == 0 or np.ptp(yi) == 0:
            continue
        out[i] = stats.kendalltau(xi, yi, variant=variant).statistic
    return out.reshape(lead)


def batch_correlation(x: np.ndarray, y: np.ndarray, coefficient: str = "pearson") -> np.ndarray:
    """The coefficient along the last axis of ``x`` and ``y`` (any leading shape), NaN = missing.

    Gives the same numbers as :func:`correlation` applied to each vector (tested), but
    vectorised: Pearson from masked moments, Spearman as Pearson on average ranks
    (``scipy.stats.rankdata(axis=-1)``), Kendall from pairwise signs for n <=
    ``KENDALL_PAIRWISE_MAX_N`` else one scipy call per vector. Degenerate vectors give NaN
    silently (callers count them).

    Examples
    --------
    >>> import numpy as np
    >>> x = np.array([[1.0, 2.0, 3.0, 4.0], [1.0, 2.0, 3.0, np.nan]])
    >>> batch_correlation(x, np.array([[1.0, 3.0, 2.0, 4.0]] * 2), "kendall").round(3)
    array([0.667, 0.333])
    """
    coefficient = check_coefficient(coefficient)
    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    valid = np.isfinite(x) & np.isfinite(y)
    if coefficient == "pearson":
        return _masked_pearson(x, y, valid)
    if coefficient == "spearman":
        return _masked_pearson(_masked_ranks(x, valid), _masked_ranks(y, valid), valid)
    variant = "b" if coefficient == "kendall" else "c"
    if x.shape[-1] <= KENDALL_PAIRWISE_MAX_N:
        return _kendall_pairwise(x, y, valid, variant)
    return _kendall_loop(x, y, valid, variant)
