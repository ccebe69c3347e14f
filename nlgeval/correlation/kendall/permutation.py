"""PERM-BOTH paired permutation test between two metrics for any Kendall variant and grouping.

Deutsch, Dror & Roth (2021), "A Statistical Analysis of Summarization Evaluation Metrics using
Resampling Methods" (TACL). The package exports it.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

import numpy as np

from nlgeval.correlation._constant import unit_scaled
from nlgeval.correlation.kendall.kernels import _stack_statistic
from nlgeval.correlation.kendall.results import (
    _GROUPING_CODE,
    _VARIANT_CODE,
    DIRECT_MAX,
    _check_matrices,
    build_groups,
    check_epsilon,
    check_grouping,
    check_variant,
    snap_groups,
)
from nlgeval.correlation.permutation.draws import (
    PermutationComparison,
    iter_swap_masks,
    swap_draws,
)
from nlgeval.deprecation import renamed_keyword
from nlgeval.errors import InputError

# --------------------------------------------------------------------------------------------

def zscore_cells(X: np.ndarray, ok: np.ndarray) -> np.ndarray:
    """``(X - mean) / sd`` over the cells in ``ok`` (ddof 0; sd 0: centred only), NaN elsewhere.

    Parameters
    ----------
    X : numpy.ndarray
        The scores.
    ok : numpy.ndarray of bool
        The cells to standardise over (same shape as ``X``).

    Returns
    -------
    numpy.ndarray
        The z-scores on ``ok``, NaN elsewhere.

    Examples
    --------
    >>> import numpy as np
    >>> zscore_cells(np.array([[1.0, 3.0], [5.0, 7.0]]), np.array([[True, True], [True, False]]))
    array([[-1.22474487,  0.        ],
           [ 1.22474487,         nan]])
    """
    # scaled by a power of two first (exact): no overflow/underflow in the standard deviation
    v = unit_scaled(X[ok], axis=None)
    out = np.full(X.shape, np.nan)
    if v.size == 0:
        return out
    sd = v.std()
    out[ok] = (v - v.mean()) / sd if sd > 0 and np.isfinite(sd) else v - v.mean()
    return out


#: draws per chunk are chosen so that one chunk holds about this many cells
_CELLS_PER_CHUNK = 2_000_000


def _mask_chunks(masks: np.ndarray | None, n_resamples: int, shape: tuple[int, int],
                 seed: int) -> tuple[int, Iterator[np.ndarray]]:
    """The number of draws and the swap masks in chunks: the given ``masks`` (checked against
    ``shape``) or ``n_resamples`` seeded draws."""
    if masks is not None:
        masks = np.asarray(masks, dtype=bool)
        if masks.ndim != 3 or masks.shape[1:] != shape:
            raise InputError(f"masks must have shape (K, {shape[0]}, {shape[1]})")
        K = masks.shape[0]
    else:
        if int(n_resamples) < 1:
            raise InputError(f"n_resamples must be >= 1, got {n_resamples}")
        K = int(n_resamples)
    chunk = max(1, _CELLS_PER_CHUNK // max(1, int(np.prod(shape))))
    given = masks
    chunks = (iter_swap_masks(shape, K, "both", seed, chunk=chunk) if given is None
              else (given[s:s + chunk] for s in range(0, K, chunk)))
    return K, chunks


def kendall_permutation_test(
    X_a: Any, X_b: Any, Y: Any, variant: str = "tau_b", grouping: str = "segment", *,
    epsilon: float = 0.0, n_resamples: int = 1000, seed: int = 0,
    masks: np.ndarray | None = None, permutations: int | None = None,
) -> PermutationComparison:
    """PERM-BOTH test of ``variant(A) > variant(B)`` under a grouping (Deutsch, Dror & Roth 2021).

    As MTME's ``PermutationSigDiff``: only cells where ``Y``, ``X_a`` and ``X_b`` are all
    finite take part; each metric is z-scored over those cells (ddof 0) so that swapped values
    share a scale; each draw swaps A and B in every (system, item) cell with probability 1/2
    (``numpy.random.default_rng(seed).random((k, systems, items)) < 0.5`` in chunks of draws --
    the same masks as :func:`nlgeval.correlation.permutation.swap_masks`) and recomputes both
    statistics. ``epsilon`` therefore applies to z-scores (as in MTME). ``masks`` (K, systems,
    items) may be given instead (e.g. all 2^cells swaps of a tiny case: an exact test).
    Differences from MTME: p = (1 + #)/(1 + K) and no early stopping (MTME stops after a block
    of draws when p < 0.02 or p > 0.5).

    Parameters
    ----------
    X_a, X_b, Y : array-like
        Scores of metric A, metric B and the humans, systems x items (NaN where missing).
    variant, grouping : str
        The Kendall variant (``tau_b``, ...) and the level it is computed at.
    epsilon : float
        Tie threshold on the z-scored metric values (variants with ties).
    n_resamples, seed : int
        Number of PERM-BOTH draws and their seed (ignored when ``masks`` is given).
    masks : numpy.ndarray, optional
        Swap masks (K, systems, items) to use instead of random draws.
    permutations : int, optional
        The earlier name of ``n_resamples`` (deprecated).

    Returns
    -------
    PermutationComparison
        ``statistic`` = variant(A) - variant(B), the one-sided ``pvalue`` and the draws.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> H = rng.normal(size=(4, 6)); A = H + 0.1 * rng.normal(size=(4, 6))
    >>> B = rng.normal(size=(4, 6))
    >>> res = kendall_permutation_test(A, B, H, "tau_b", n_resamples=200, seed=1)
    >>> res.statistic > 0, res.pvalue < 0.05
    (True, True)
    """
    n_resamples = renamed_keyword(
        "kendall_permutation_test", "permutations", permutations, "n_resamples", n_resamples)
    variant = check_variant(variant)
    grouping = check_grouping(grouping)
    eps = check_epsilon(epsilon, variant)
    Xa, Ya = _check_matrices(X_a, Y, ("X_a", "Y"))
    Xb, _ = _check_matrices(X_b, Y, ("X_b", "Y"))
    ok = np.isfinite(Xa) & np.isfinite(Xb) & np.isfinite(Ya)
    # the one degenerate-input rule on the compared cells (numerically constant groups tied)
    Xa, Ya = snap_groups(np.where(ok, Xa, np.nan), np.where(ok, Ya, np.nan), grouping)
    Xb, _ = snap_groups(np.where(ok, Xb, np.nan), Ya, grouping)
    A, B = zscore_cells(Xa, ok), zscore_cells(Xb, ok)
    H = np.where(ok, Ya, np.nan)
    gcode, vcode = _GROUPING_CODE[grouping], _VARIANT_CODE[variant]
    obs = _stack_statistic(np.stack([A, B]), np.stack([H, H]), gcode, vcode, eps, DIRECT_MAX)
    stat_a, stat_b = float(obs[0]), float(obs[1])
    K, chunks = _mask_chunks(masks, n_resamples, (A.shape[0], A.shape[1]), seed)
    draws_a, draws_b = swap_draws(A, B, H, chunks, K, lambda Xs, Hs: _stack_statistic(
        Xs, Hs, gcode, vcode, eps, DIRECT_MAX))
    observed = stat_a - stat_b
    note = ""
    if np.isfinite(observed):
        tol = 1e-12 * max(1.0, abs(observed))
        d = draws_a - draws_b
        hits = int(np.count_nonzero(np.isfinite(d) & (d >= observed - tol)))
        p = (1 + hits) / (1 + K)
    else:
        hits, p = 0, math.nan
        note = f"{variant} undefined for one of the metrics"
    groups = build_groups(np.where(ok, Xa, np.nan), Ya, grouping)
    return PermutationComparison(
        observed, p, stat_a, stat_b, K, hits, variant, grouping, "cells", int(seed), eps, eps,
        False, int(groups.sizes.size), int(groups.n_pairs.sum()), note, draws_a, draws_b)
