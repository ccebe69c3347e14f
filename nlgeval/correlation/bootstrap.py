"""Bootstrap confidence intervals for metric-human correlations, vectorised over resamples.

Deutsch, Dror & Roth (2021), "A Statistical Analysis of Summarization Evaluation Metrics using
Resampling Methods" (TACL 9): resample **systems**, **items** (inputs), or **both** with
replacement, recompute the correlation at the chosen level on the resampled
(systems x items) sub-matrix, and take the percentile interval of the resampled coefficients.
Resampling both is their recommended variant: it reflects that neither the systems nor the items
are the whole population.

Implementation: one seeded ``numpy.random.default_rng(seed)`` draws a (B x S) system-index
matrix (when systems are resampled) and then a (B x I) item-index matrix; fancy indexing
gathers all B sub-matrices at once as a (B, S, I) stack and
:func:`~nlgeval.correlation.levels.level_statistic` computes all B coefficients with array
operations (chunks of B bound the memory). ``benchmarks/bench_correlation.py`` checks that a loop
calling ``scipy.stats.pearsonr`` per resample on the same indices gives the same interval.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from nlgeval.correlation.coefficients import DegenerateInputWarning, check_coefficient
from nlgeval.correlation.levels import check_level, level_statistic
from nlgeval.errors import InputError
from nlgeval.results import ConfidenceInterval

Resample = Literal["systems", "items", "both"]
RESAMPLE_SCHEMES: tuple[str, ...] = ("systems", "items", "both")

_CELLS_PER_CHUNK = 3_000_000


def check_resample(name: str) -> str:
    key = name.strip().lower()
    key = {"system": "systems", "item": "items", "inputs": "items", "input": "items"}.get(key, key)
    if key not in RESAMPLE_SCHEMES:
        raise InputError(
            f"unknown resampling scheme '{name}' (use one of: {', '.join(RESAMPLE_SCHEMES)})"
        )
    return key


def resample_indices(
    n_systems: int, n_items: int, resamples: int, resample: str, seed: int
) -> tuple[np.ndarray, np.ndarray]:
    """The (B x S) system and (B x I) item index matrices of a bootstrap.

    Drawn from ``numpy.random.default_rng(seed)``: systems first (if resampled), then items
    (if resampled); an axis that is not resampled keeps the identity index in every row.
    """
    resample = check_resample(resample)
    if resamples < 1:
        raise InputError(f"the number of resamples must be at least 1, got {resamples}")
    rng = np.random.default_rng(seed)
    if resample in ("systems", "both"):
        sys_idx = rng.integers(0, n_systems, size=(resamples, n_systems))
    else:
        sys_idx = np.broadcast_to(np.arange(n_systems), (resamples, n_systems))
    if resample in ("items", "both"):
        item_idx = rng.integers(0, n_items, size=(resamples, n_items))
    else:
        item_idx = np.broadcast_to(np.arange(n_items), (resamples, n_items))
    return sys_idx, item_idx


def resample_counts(idx: np.ndarray, n: int) -> np.ndarray:
    """(B x n) matrix: how often each unit was drawn in each resample (vectorised bincount)."""
    B = idx.shape[0]
    flat = (np.asarray(idx) + (np.arange(B) * n)[:, None]).ravel()
    return np.bincount(flat, minlength=B * n).reshape(B, n).astype(float)


def _weighted_r(
    n: np.ndarray, sx: np.ndarray, sy: np.ndarray, sxx: np.ndarray, syy: np.ndarray,
    sxy: np.ndarray, scale_x: np.ndarray | float, scale_y: np.ndarray | float,
) -> np.ndarray:
    """Pearson r from (weighted) sums; NaN when n < 3 or a variance is (numerically) zero."""
    with np.errstate(invalid="ignore", divide="ignore"):
        cxx = sxx - sx * sx / n
        cyy = syy - sy * sy / n
        cxy = sxy - sx * sy / n
        r = cxy / np.sqrt(cxx * cyy)
    tiny_x = cxx <= 1e-10 * np.maximum(scale_x, 1e-300) * np.maximum(n, 1)
    tiny_y = cyy <= 1e-10 * np.maximum(scale_y, 1e-300) * np.maximum(n, 1)
    bad = ~(n >= 3) | tiny_x | tiny_y
    return np.where(bad, np.nan, np.clip(r, -1.0, 1.0))


def _pearson_from_counts(
    X: np.ndarray, Y: np.ndarray, level: str, ws: np.ndarray, wi: np.ndarray
) -> np.ndarray:
    """Pearson on every resample from sufficient statistics, without materialising resamples.

    A resample drawing system s ``ws[b, s]`` times and item i ``wi[b, i]`` times contains cell
    (s, i) ``ws[b, s] * wi[b, i]`` times, so every sum the coefficient needs is a weighted sum
    -- a pair of small matrix products per statistic. Equal to the coefficient on the expanded
    resample (tested against the explicit loop).
    """
    ok = np.isfinite(X) & np.isfinite(Y)
    V = ok.astype(float)
    # centre once on the complete cells (r is shift-invariant; this limits cancellation)
    X0 = np.where(ok, X - X[ok].mean() if ok.any() else X, 0.0)
    Y0 = np.where(ok, Y - Y[ok].mean() if ok.any() else Y, 0.0)
    if level == "segment":
        # all six statistics in one product: (B, S) @ (S, 6 I), then weight by items and sum
        M = np.concatenate([V, X0, Y0, X0 * X0, Y0 * Y0, X0 * Y0], axis=1)
        n_items = V.shape[1]
        T = np.einsum("bki,bi->bk", (ws @ M).reshape(ws.shape[0], 6, n_items), wi)
        n, sx, sy, sxx, syy, sxy = T.T
        return _weighted_r(n, sx, sy, sxx, syy, sxy, sxx / np.maximum(n, 1),
                           syy / np.maximum(n, 1))
    if level == "system":
        S = V.shape[0]
        T = wi @ np.concatenate([V, X0, Y0], axis=0).T    # (B, 3 S) in one product
        cnt = T[:, :S]                                    # complete cells per system
        with np.errstate(invalid="ignore", divide="ignore"):
            mx = T[:, S:2 * S] / cnt
            my = T[:, 2 * S:] / cnt
        w = np.where(cnt > 0, ws, 0.0)
        mx = np.where(cnt > 0, mx, 0.0)
        my = np.where(cnt > 0, my, 0.0)
        n = w.sum(axis=1)
        sx, sy = (w * mx).sum(axis=1), (w * my).sum(axis=1)
        sxx, syy = (w * mx * mx).sum(axis=1), (w * my * my).sum(axis=1)
        return _weighted_r(n, sx, sy, sxx, syy, (w * mx * my).sum(axis=1),
                           sxx / np.maximum(n, 1), syy / np.maximum(n, 1))
    # item level: per item, across systems weighted by ws; then the mean over drawn items
    n = ws @ V                               # (B, I)
    sx, sy = ws @ X0, ws @ Y0
    sxx, syy, sxy = ws @ (X0 * X0), ws @ (Y0 * Y0), ws @ (X0 * Y0)
    r = _weighted_r(n, sx, sy, sxx, syy, sxy, sxx / np.maximum(n, 1), syy / np.maximum(n, 1))
    w = np.where(np.isfinite(r), wi, 0.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        out = (w * np.nan_to_num(r)).sum(axis=1) / w.sum(axis=1)
    return np.where(w.sum(axis=1) > 0, out, np.nan)


def _weighted_ranks(v: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Average ranks of the values ``v`` (N,) in samples where value k appears ``w[b, k]`` times.

    Sorting once: in sample b a tie group of total weight G preceded by weight C occupies ranks
    C + 1 .. C + G, so each member's average rank is C + (G + 1) / 2 -- exactly what ranking
    the expanded resample would give, without sorting each resample.
    """
    order = np.argsort(v, kind="stable")
    vs = v[order]
    starts = np.flatnonzero(np.r_[True, vs[1:] != vs[:-1]])
    group_sorted = np.cumsum(np.r_[False, vs[1:] != vs[:-1]])
    G = np.add.reduceat(w[:, order], starts, axis=1)           # (B, groups)
    rank_group = np.cumsum(G, axis=1) - G + (G + 1) / 2
    group = np.empty_like(group_sorted)
    group[order] = group_sorted
    return rank_group[:, group]


def _spearman_segment_from_counts(
    X: np.ndarray, Y: np.ndarray, ws: np.ndarray, wi: np.ndarray
) -> np.ndarray:
    """Segment-level Spearman on every resample from cell weights and weighted ranks."""
    ok = np.isfinite(X) & np.isfinite(Y)
    si, ii = np.nonzero(ok)
    out = np.empty(ws.shape[0])
    # chunks of resamples keep the (B, N) work arrays in cache: time stays linear in B
    step = max(1, 250_000 // max(1, si.size))
    for b0 in range(0, ws.shape[0], step):
        w = ws[b0:b0 + step, si] * wi[b0:b0 + step, ii]       # (b, N) cell multiplicities
        rx = _weighted_ranks(X[si, ii], w)
        ry = _weighted_ranks(Y[si, ii], w)
        n = w.sum(axis=1)
        sx, sy = (w * rx).sum(axis=1), (w * ry).sum(axis=1)
        sxx, syy = (w * rx * rx).sum(axis=1), (w * ry * ry).sum(axis=1)
        sxy = (w * rx * ry).sum(1)
        out[b0:b0 + step] = _weighted_r(n, sx, sy, sxx, syy, sxy, sxx / np.maximum(n, 1),
                                        syy / np.maximum(n, 1))
    return out


def bootstrap_distribution(
    X: np.ndarray,
    Y: np.ndarray,
    level: str,
    coefficient: str,
    sys_idx: np.ndarray,
    item_idx: np.ndarray,
) -> np.ndarray:
    """The coefficient on every resampled sub-matrix ``X[sys_idx[b]][:, item_idx[b]]``.

    Pearson is computed from resample counts and sufficient statistics (no resample is
    materialised); the rank coefficients gather the (B, S, I) stack in chunks and rank it.
    """
    X = np.asarray(X, dtype=float)
    Y = np.asarray(Y, dtype=float)
    level = check_level(level)
    if level == "system-grouped":  # the item level of the transposed matrices
        return bootstrap_distribution(X.T, Y.T, "item", coefficient, item_idx, sys_idx)
    if check_coefficient(coefficient) == "pearson":
        ws = resample_counts(sys_idx, X.shape[0])
        wi = resample_counts(item_idx, X.shape[1])
        return _pearson_from_counts(X, Y, level, ws, wi)
    if check_coefficient(coefficient) in ("kendall", "kendall_c") and level == "segment":
        # weighted pair counts per resample in one numba call (Knight 1966), no sort and no
        # scipy call per resample; nlgeval's rule (fewer than 3 complete cells -> NaN) on top
        from nlgeval.correlation._kendall_weighted import weighted_kendall_segment

        variant = "tau_b" if check_coefficient(coefficient) == "kendall" else "tau_c"
        ws = resample_counts(sys_idx, X.shape[0])
        wi = resample_counts(item_idx, X.shape[1])
        out = weighted_kendall_segment(X, Y, ws, wi, variant)
        ok = (np.isfinite(X) & np.isfinite(Y)).astype(float)
        n_b = np.einsum("bs,si,bi->b", ws, ok, wi)
        return np.where(n_b >= 3, out, np.nan)
    if check_coefficient(coefficient) == "spearman" and level == "segment":
        ws = resample_counts(sys_idx, X.shape[0])
        wi = resample_counts(item_idx, X.shape[1])
        return _spearman_segment_from_counts(X, Y, ws, wi)
    B, S = sys_idx.shape
    n_items = item_idx.shape[1]
    out = np.empty(B)
    chunk = max(1, _CELLS_PER_CHUNK // max(1, S * n_items))
    for start in range(0, B, chunk):
        si = sys_idx[start:start + chunk, :, None]
        ii = item_idx[start:start + chunk, None, :]
        out[start:start + chunk] = level_statistic(X[si, ii], Y[si, ii], level, coefficient)
    return out


@dataclass(frozen=True)
class BootstrapResult:
    """Observed coefficient, percentile bootstrap interval, and the resampled distribution."""

    statistic: float
    confidence_interval: ConfidenceInterval
    level: str
    coefficient: str
    resample: str
    resamples: int
    seed: int
    confidence_level: float
    n_undefined: int = 0
    distribution: np.ndarray = field(default_factory=lambda: np.empty(0), repr=False)

    def to_dict(self) -> dict[str, Any]:
        return {
            "statistic": self.statistic,
            "ci_low": self.confidence_interval.low,
            "ci_high": self.confidence_interval.high,
            "level": self.level,
            "coefficient": self.coefficient,
            "resample": self.resample,
            "resamples": self.resamples,
            "seed": self.seed,
            "confidence_level": self.confidence_level,
            "n_undefined": self.n_undefined,
        }


def percentile_interval(
    distribution: np.ndarray, confidence_level: float = 0.95
) -> ConfidenceInterval:
    """The percentile interval (numpy's default linear interpolation), ignoring NaN resamples."""
    d = np.asarray(distribution, dtype=float)
    d = d[np.isfinite(d)]
    if d.size == 0:
        return ConfidenceInterval(math.nan, math.nan)
    a = (1 - confidence_level) / 2
    lo, hi = np.quantile(d, [a, 1 - a])
    return ConfidenceInterval(float(lo), float(hi))


def bootstrap_correlation(
    X: np.ndarray,
    Y: np.ndarray,
    level: str = "system",
    coefficient: str = "pearson",
    *,
    resamples: int = 1000,
    resample: str = "both",
    seed: int = 0,
    confidence_level: float = 0.95,
    label: str = "",
) -> BootstrapResult:
    """Percentile bootstrap CI of the ``level`` correlation between ``X`` and ``Y``.

    ``X``, ``Y``: (systems x items) matrices, NaN = missing. Resamples on which the coefficient
    is undefined (e.g. all drawn systems identical) are left out of the percentiles and counted
    in ``n_undefined``; a warning is issued when more than 1 % are undefined.
    """
    level = check_level(level)
    coefficient = check_coefficient(coefficient)
    resample = check_resample(resample)
    X = np.asarray(X, dtype=float)
    Y = np.asarray(Y, dtype=float)
    if X.shape != Y.shape or X.ndim != 2:
        raise InputError(f"X and Y must be matrices of the same shape, got {X.shape}, {Y.shape}")
    observed = float(level_statistic(X, Y, level, coefficient))
    sys_idx, item_idx = resample_indices(X.shape[0], X.shape[1], resamples, resample, seed)
    dist = bootstrap_distribution(X, Y, level, coefficient, sys_idx, item_idx)
    n_undef = int((~np.isfinite(dist)).sum())
    if n_undef > 0.01 * resamples:
        warnings.warn(
            f"bootstrap {label}: the {coefficient} correlation was undefined on {n_undef} of "
            f"{resamples} resamples (fewer than 3 values or constant scores); they are left "
            "out of the interval",
            DegenerateInputWarning,
            stacklevel=2,
        )
    return BootstrapResult(
        statistic=observed,
        confidence_interval=percentile_interval(dist, confidence_level),
        level=level,
        coefficient=coefficient,
        resample=resample,
        resamples=resamples,
        seed=seed,
        confidence_level=confidence_level,
        n_undefined=n_undef,
        distribution=dist,
    )
