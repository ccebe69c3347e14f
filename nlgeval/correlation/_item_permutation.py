"""Compiled within-item permutation draws of the item-level coefficients.

The item-level statistic is the mean over items of a coefficient across systems (Deutsch,
Dror & Roth 2021, "input level"); its p-value shuffles the metric scores among the complete
cells of each item (:func:`nlgeval.correlation.levels.item_permutation_pvalue`). Under such a
shuffle everything but the order of the metric values is fixed, so a draw needs only:

* Pearson (Pearson 1896) and Spearman (Spearman 1904): the permuted metric values (scaled, or
  centred average ranks) gathered from the shuffle indices, their mean (Pearson only), the
  sum of squares and the cross term with the fixed centred human values, Pearson's r by the
  operations of :func:`nlgeval.correlation.coefficients.pearson_from_sums`;
* Kendall tau-b / tau-c (Kendall 1945; Stuart 1953): the compiled kernel
  :func:`nlgeval.correlation.kendall.kernels.item_permutation_tau` (C - D alone: the tie
  counts do not change under a shuffle).

and the caller takes the mean over items with ``np.nanmean``, as before. The array code
(``fixed_y_statistic`` on the permuted stack) sums every row over the systems in numpy's
pairwise order; the loops here add in the same order, with IEEE arithmetic and no
contraction or reassociation, so every per-item coefficient of every draw is the same float
(tests keep the array code as the reference: tests/test_item_permutation_kernels.py).
Imported only when an item-level p-value is computed (numba start-up time).
"""

from __future__ import annotations

import warnings

import numpy as np
from numba import njit, prange

from nlgeval.correlation._constant import constant_from_extremes, extremes, overflow_safe
from nlgeval.correlation._numpy_sums import pairwise_sum
from nlgeval.correlation.coefficients import MIN_PAIRS, _masked_ranks

# numba cache pin: nlgeval.correlation._numpy_sums 68948fc567010a42  (see that module)

#: permutations per parallel task (work buffers allocated once per task)
_DRAWS_PER_TASK = 32


@njit(cache=True, error_model="numpy")
def _square_and_cross(dx: np.ndarray, dy: np.ndarray, n: int, p: np.ndarray
                      ) -> tuple[float, float]:  # pragma: no cover - compiled
    """``np.add.reduce(dx * dx)`` and ``np.add.reduce(dx * dy)`` of ``n`` values, both sums in
    one pass where they fit numpy's first block (at most 128 values), the same additions."""
    if n > 128:
        for s in range(n):
            p[s] = dx[s] * dx[s]
        sxx = 0.0 + pairwise_sum(p, 0, n)
        for s in range(n):
            p[s] = dx[s] * dy[s]
        return sxx, 0.0 + pairwise_sum(p, 0, n)
    if n < 8:
        a = 0.0
        c = 0.0
        for s in range(n):
            a += dx[s] * dx[s]
            c += dx[s] * dy[s]
        return 0.0 + a, 0.0 + c
    a0, a1, a2, a3 = dx[0] * dx[0], dx[1] * dx[1], dx[2] * dx[2], dx[3] * dx[3]
    a4, a5, a6, a7 = dx[4] * dx[4], dx[5] * dx[5], dx[6] * dx[6], dx[7] * dx[7]
    c0, c1, c2, c3 = dx[0] * dy[0], dx[1] * dy[1], dx[2] * dy[2], dx[3] * dy[3]
    c4, c5, c6, c7 = dx[4] * dy[4], dx[5] * dy[5], dx[6] * dy[6], dx[7] * dy[7]
    i = 8
    while i < n - (n % 8):
        a0 += dx[i] * dx[i]
        a1 += dx[i + 1] * dx[i + 1]
        a2 += dx[i + 2] * dx[i + 2]
        a3 += dx[i + 3] * dx[i + 3]
        a4 += dx[i + 4] * dx[i + 4]
        a5 += dx[i + 5] * dx[i + 5]
        a6 += dx[i + 6] * dx[i + 6]
        a7 += dx[i + 7] * dx[i + 7]
        c0 += dx[i] * dy[i]
        c1 += dx[i + 1] * dy[i + 1]
        c2 += dx[i + 2] * dy[i + 2]
        c3 += dx[i + 3] * dy[i + 3]
        c4 += dx[i + 4] * dy[i + 4]
        c5 += dx[i + 5] * dy[i + 5]
        c6 += dx[i + 6] * dy[i + 6]
        c7 += dx[i + 7] * dy[i + 7]
        i += 8
    a = ((a0 + a1) + (a2 + a3)) + ((a4 + a5) + (a6 + a7))
    c = ((c0 + c1) + (c2 + c3)) + ((c4 + c5) + (c6 + c7))
    while i < n:
        a += dx[i] * dx[i]
        c += dx[i] * dy[i]
        i += 1
    return 0.0 + a, 0.0 + c


# shape: one compiled pass mirroring the array code's operations in their order
# (parallel: its outlined loop body compiles to a third less CPU time than the serial loop)
@njit(cache=True, parallel=True, error_model="numpy")
def _pearson_draws(x0: np.ndarray, dy: np.ndarray, n: np.ndarray, syy: np.ndarray,
                   dead: np.ndarray, perm: np.ndarray, centre: bool
                   ) -> np.ndarray:  # pragma: no cover - compiled
    """r of every item under every permutation ``perm`` (draws, items, systems) of ``x0``.

    ``x0`` holds the ``n[i]`` complete cells of item i first and 0 after them; ``perm``
    keeps them there. The terms of :func:`pearson_from_sums` that no draw changes (the
    human side, ``0 * 0 / n``, the constancy threshold) are taken once per item; an item the
    rule leaves out (``dead``, ``n < 3`` or a constant human side) is NaN on every draw.
    """
    B, n_items, S = perm.shape
    out = np.empty((B, n_items))
    zero = np.empty(n_items)  # pearson_from_sums' sx * sx / n with sx = 0.0
    thr = np.empty(n_items)  # 1e-10 * np.maximum(scale = 0.0, 1e-300) * max(n, 1)
    skip = np.empty(n_items, dtype=np.bool_)
    for i in range(n_items):
        zero[i] = 0.0 * 0.0 / n[i]
        thr[i] = (1e-10 * 1e-300) * (n[i] if n[i] >= 1.0 else 1.0)
        skip[i] = dead[i] or (not (n[i] >= MIN_PAIRS)) or (syy[i] - zero[i] <= thr[i])
    for t in prange((B + _DRAWS_PER_TASK - 1) // _DRAWS_PER_TASK):
        dx = np.empty(S)
        prod = np.empty(S)
        for b in range(t * _DRAWS_PER_TASK, min(B, (t + 1) * _DRAWS_PER_TASK)):
            for i in range(n_items):
                if skip[i]:
                    out[b, i] = np.nan
                    continue
                for s in range(S):
                    dx[s] = x0[i, perm[b, i, s]]
                if centre:  # where(valid, dx - dx.sum() / n, 0.0): the valid cells first
                    tot = 0.0 + pairwise_sum(dx, 0, S)
                    m = tot / n[i]  # the common case inline: measurably faster
                    for s in range(int(n[i])):
                        dx[s] = dx[s] - m
                sxx, sxy = _square_and_cross(dx, dy[i], S, prod)
                cxx = sxx - zero[i]
                r = (sxy - zero[i]) / np.sqrt(cxx * (syy[i] - zero[i]))
                r = -1.0 if r < -1.0 else r
                r = 1.0 if r > 1.0 else r
                out[b, i] = np.nan if cxx <= thr[i] else r
    return out


#: Spearman's sums of centred average ranks (multiples of 1/2, products multiples of 1/4) are
#: exact in floating point up to this many systems per item (the sum of squares stays below
#: 2^51), so their order does not matter there
_EXACT_RANK_SUMS_MAX = 2 ** 16


@njit(cache=True, error_model="numpy")
def _spearman_fixed(x0: np.ndarray, dy: np.ndarray, n: np.ndarray, syy: np.ndarray,
                    dead: np.ndarray
                    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:  # pragma: no cover
    """Per item ``0 * 0 / n``, the denominator ``sqrt(cxx * cyy)`` and whether the item is
    left out, for :func:`_spearman_draws` (once per call, not once per chunk)."""
    n_items, S = x0.shape
    zero = np.empty(n_items)
    den = np.empty(n_items)
    skip = np.empty(n_items, dtype=np.bool_)
    prod = np.empty(S)
    for i in range(n_items):
        zero[i] = 0.0 * 0.0 / n[i]
        thr = (1e-10 * 1e-300) * (n[i] if n[i] >= 1.0 else 1.0)
        sxx, _ = _square_and_cross(x0[i], dy[i], S, prod)
        cxx = sxx - zero[i]
        cyy = syy[i] - zero[i]
        den[i] = np.sqrt(cxx * cyy)
        skip[i] = dead[i] or (not (n[i] >= MIN_PAIRS)) or (cyy <= thr) or (cxx <= thr)
    return zero, den, skip


@njit(cache=True, error_model="numpy")
def _spearman_draws(x0: np.ndarray, dy: np.ndarray, zero: np.ndarray, den: np.ndarray,
                    skip: np.ndarray, perm: np.ndarray) -> np.ndarray:  # pragma: no cover
    """Spearman's r of every item under every permutation ``perm`` of the centred ranks ``x0``.

    Every sum of centred average ranks and their products is exact (see
    :data:`_EXACT_RANK_SUMS_MAX`), so the metric's sum of squares -- and with it the
    denominator ``sqrt(cxx * cyy)`` and the constancy verdict -- is the same number on every
    draw (:func:`_spearman_fixed`); a draw takes the cross term alone, in the same order as
    :func:`_pearson_draws`, and divides by the same denominator. One thread: as fast here,
    and compiled in less time.
    """
    B, n_items, S = perm.shape
    out = np.empty((B, n_items))
    p = np.empty(S)
    for b in range(B):
        for i in range(n_items):
            if skip[i]:
                out[b, i] = np.nan
                continue
            for s in range(S):
                p[s] = x0[i, perm[b, i, s]] * dy[i, s]
            sxy = 0.0 + pairwise_sum(p, 0, S)
            r = (sxy - zero[i]) / den[i]
            r = -1.0 if r < -1.0 else r
            out[b, i] = 1.0 if r > 1.0 else r
    return out


def _constant_items(x: np.ndarray, y: np.ndarray, valid: np.ndarray) -> np.ndarray:
    """The degenerate-input rule of ``batch_correlation`` per item (row)."""
    (hx, lx), (hy, ly) = extremes(x, valid), extremes(y, valid)
    return np.asarray(constant_from_extremes(hx, lx) | constant_from_extremes(hy, ly))


def pearson_permutation_means(x: np.ndarray, y: np.ndarray, coefficient: str,
                              perms: list[np.ndarray]) -> np.ndarray:
    """Mean item-level Pearson or Spearman r of each within-item permutation of ``x``.

    ``x``, ``y`` (items, systems), NaN where a cell is not complete, the complete cells first
    in every row; ``perms`` chunks of shuffle indices (draws, items, systems) that keep them
    there. The fixed terms are those of
    :func:`nlgeval.correlation.coefficients.fixed_y_statistic`, computed by the same numpy
    operations; each draw is ``np.nanmean(fixed_y_statistic(x, y, coefficient)(perm), -1)``,
    the same float.
    """
    valid = np.isfinite(x) & np.isfinite(y)
    n = valid.astype(float).sum(axis=-1)
    dead = _constant_items(x, y, valid) | (n < MIN_PAIRS)
    if coefficient == "spearman":
        x, y = _masked_ranks(x, valid), _masked_ranks(y, valid)
    else:
        x, y = overflow_safe(x, *extremes(x, valid)), overflow_safe(y, *extremes(y, valid))
    with np.errstate(invalid="ignore", divide="ignore"):
        my = np.where(valid, y, 0.0).sum(axis=-1) / n
        dy = np.where(valid, y - my[..., None], 0.0)
        syy = (dy * dy).sum(axis=-1)
        x0 = np.where(valid, x, 0.0)
        if coefficient == "spearman":  # exact rank sums: the centred ranks are permuted as is
            x0 = np.where(valid, x - (x0.sum(axis=-1) / n)[..., None], 0.0)
    args = (np.ascontiguousarray(x0), np.ascontiguousarray(dy), n, syy,
            np.ascontiguousarray(dead))
    if coefficient == "spearman" and x.shape[-1] <= _EXACT_RANK_SUMS_MAX:
        fixed = _spearman_fixed(*args)
        return np.concatenate([_nanmean_rows(_spearman_draws(args[0], args[1], *fixed, p))
                               for p in perms])
    return np.concatenate([_nanmean_rows(_pearson_draws(*args, p, coefficient == "pearson"))
                           for p in perms])


def _nanmean_rows(r: np.ndarray) -> np.ndarray:
    """The mean over items (the last axis) of the defined coefficients, as before."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return np.asarray(np.nanmean(r, axis=-1))


#: The compiled Kendall draws enumerate the n (n - 1) / 2 pairs of a row: used up to this
#: many systems per item; longer rows keep the O(n log n) counts of every draw
KENDALL_TABLE_MAX = 64


def kendall_permutation_means(x: np.ndarray, y: np.ndarray, coefficient: str,
                              perms: list[np.ndarray]) -> np.ndarray:
    """Mean item-level tau-b (``kendall``) or tau-c (``kendall_c``) of each permutation.

    The arguments are those of :func:`pearson_permutation_means`; each draw is the same float
    as ``np.nanmean(fixed_y_statistic(x, y, coefficient)(perm), -1)`` (the same pair counts,
    the same formula: :func:`nlgeval.correlation.kendall.kernels.item_permutation_tau`).
    """
    from nlgeval.correlation.kendall.kernels import item_permutation_tau, item_tie_counts
    from nlgeval.correlation.kendall.results import DIRECT_MAX

    valid = np.isfinite(x) & np.isfinite(y)
    m = valid.sum(axis=-1).astype(np.int64)
    dead = np.ascontiguousarray(_constant_items(x, y, valid))
    xs, ys = np.ascontiguousarray(x, dtype=float), np.ascontiguousarray(y, dtype=float)
    code = 0 if coefficient == "kendall" else 1
    fixed = item_tie_counts(xs, ys, m, code, DIRECT_MAX)  # once, not once per chunk
    return np.concatenate([
        _nanmean_rows(item_permutation_tau(xs, ys, m, dead, fixed, p, code, MIN_PAIRS))
        for p in perms])


def permutation_means(x: np.ndarray, y: np.ndarray, coefficient: str,
                      perms: list[np.ndarray]) -> np.ndarray | None:
    """The mean item-level coefficient of every within-item permutation (see
    :func:`pearson_permutation_means`), or None where the compiled draws do not apply
    (Kendall on rows longer than :data:`KENDALL_TABLE_MAX`: the caller keeps the array code).
    """
    if coefficient in ("pearson", "spearman"):
        return pearson_permutation_means(x, y, coefficient, perms)
    if x.shape[-1] <= KENDALL_TABLE_MAX:
        return kendall_permutation_means(x, y, coefficient, perms)
    return None
