"""Pearson's r on every bootstrap resample from weighted sufficient statistics.

A bootstrap resample (Deutsch, Dror & Roth 2021) is a multiset of (system, item) cells, so the
sums Pearson's r needs are weighted sums with the resample counts as weights -- a few matrix
products instead of a gathered (B, S, I) stack. The values are scaled (an exact power of two)
and centred before summing, as scipy's ``pearsonr``; used by
:func:`nlgeval.correlation.bootstrap.bootstrap_distribution`.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

import numpy as np

from nlgeval.correlation.coefficients import CONSTANT_RTOL, pearson_from_sums, unit_scaled
from nlgeval.errors import InputError


def pearson_from_counts(
    X: np.ndarray, Y: np.ndarray, level: str, ws: np.ndarray, wi: np.ndarray
) -> np.ndarray:
    """Pearson on every resample from sufficient statistics, without materialising resamples.

    A resample drawing system s ``ws[b, s]`` times and item i ``wi[b, i]`` times contains cell
    (s, i) ``ws[b, s] * wi[b, i]`` times, so every sum the coefficient needs is a weighted sum
    -- a pair of small matrix products per statistic. Equal to the coefficient on the expanded
    resample (tested against the explicit loop).
    """
    return pearson_counts_plan(X, Y, level)(ws, wi)


def pearson_counts_plan(
    X: np.ndarray, Y: np.ndarray, level: str
) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
    """:func:`pearson_from_counts` of ``X`` and ``Y`` as a function of the counts: the
    scaling, centring and stacking that do not depend on the resamples are done once here
    (a bootstrap calls it once per block of resamples)."""
    ok = np.isfinite(X) & np.isfinite(Y)
    V = ok.astype(float)
    if level == "item":
        return partial(_item_pearson_from_counts, X, Y, ok)
    if level not in ("segment", "system"):
        raise InputError(f"unknown level '{level}'")
    # scale by a power of two (exact; no overflow or underflow in the sums of squares, as
    # scipy's pearsonr) and centre once on the complete cells (r is shift-invariant; this
    # limits cancellation)
    X, Y = unit_scaled(X, ok, axis=None), unit_scaled(Y, ok, axis=None)
    X0 = np.where(ok, X - X[ok].mean() if ok.any() else X, 0.0)
    Y0 = np.where(ok, Y - Y[ok].mean() if ok.any() else Y, 0.0)
    if level == "segment":
        # all six statistics in one product: (B, S) @ (S, 6 I), then weight by items and sum
        M = np.concatenate([V, X0, Y0, X0 * X0, Y0 * Y0, X0 * Y0], axis=1)
        return partial(_segment_from_counts, M, V.shape[1])
    return partial(_system_from_counts, np.concatenate([V, X0, Y0], axis=0).T, V.shape[0])


def _segment_from_counts(M: np.ndarray, n_items: int, ws: np.ndarray, wi: np.ndarray
                         ) -> np.ndarray:
    T = np.einsum("bki,bi->bk", (ws @ M).reshape(ws.shape[0], 6, n_items), wi)
    n, sx, sy, sxx, syy, sxy = T.T
    return pearson_from_sums(n, sx, sy, sxx, syy, sxy, sxx / np.maximum(n, 1),
                             syy / np.maximum(n, 1))


def _system_from_counts(MT: np.ndarray, S: int, ws: np.ndarray, wi: np.ndarray) -> np.ndarray:
    T = wi @ MT                                       # (B, 3 S) in one product
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
    return pearson_from_sums(n, sx, sy, sxx, syy, (w * mx * my).sum(axis=1),
                             sxx / np.maximum(n, 1), syy / np.maximum(n, 1))


def _item_pearson_from_counts(
    X: np.ndarray, Y: np.ndarray, ok: np.ndarray, ws: np.ndarray, wi: np.ndarray
) -> np.ndarray:
    """Item level of :func:`pearson_from_counts`: per item, across systems weighted by
    ``ws``; then the mean over the drawn items (weights ``wi``).

    Each item is one vector, so each is scaled (a power of two) and centred on its own, as
    the point estimate does: an item whose values are tiny next to the others' (1e-300 beside
    0.5) keeps its spread, and a resample is constant by the sums' form of the one rule --
    a centred sum of squares at most ``1e-10`` of the uncentred one (what a constant resample
    leaves after rounding), or at most ``n (CONSTANT_RTOL * max |x|)^2`` (values that differ by
    rounding only; max |x| < 1 after the scaling). The sums see the item, not the resample: a
    resample whose values are all some 1e5 times closer together than the item's spread
    counts as constant here (the point kernel, which scales the resample itself, would
    correlate it); gathering every resample instead is 4-17 times slower.
    """
    V = ok.astype(float)
    cnt = np.maximum(V.sum(axis=0), 1)
    Xs, Ys = unit_scaled(X, ok, axis=0), unit_scaled(Y, ok, axis=0)
    X0 = np.where(ok, Xs - np.where(ok, Xs, 0.0).sum(axis=0) / cnt, 0.0)
    Y0 = np.where(ok, Ys - np.where(ok, Ys, 0.0).sum(axis=0) / cnt, 0.0)
    n = ws @ V                               # (B, I)
    sx, sy = ws @ X0, ws @ Y0
    sxx, syy, sxy = ws @ (X0 * X0), ws @ (Y0 * Y0), ws @ (X0 * Y0)
    rule = CONSTANT_RTOL ** 2 / 1e-10        # n (rtol max|x|)^2 as a mean square
    r = pearson_from_sums(n, sx, sy, sxx, syy, sxy, np.maximum(sxx / np.maximum(n, 1), rule),
                          np.maximum(syy / np.maximum(n, 1), rule))
    w = np.where(np.isfinite(r), wi, 0.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        out = (w * np.nan_to_num(r)).sum(axis=1) / w.sum(axis=1)
    return np.where(w.sum(axis=1) > 0, out, np.nan)
