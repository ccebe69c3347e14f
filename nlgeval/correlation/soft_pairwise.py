"""Soft pairwise accuracy (Thompson, Mathur, Deutsch & Khayrallah 2024).

"Improving Statistical Significance in Human Evaluation of Automatic Metrics via Soft Pairwise
Accuracy", WMT24; MTME ``pce.py``: for every system pair the p-value of a paired sign-flip
permutation test "system i beats system j", once from the human and once from the metric
scores; ``SPA = 1 - mean |p_human - p_metric|``. Part of the pairwise family
(:mod:`nlgeval.correlation.pairwise`, which also holds its PERM-BOTH test); how nlgeval differs
from MTME is in docs/pairwise.md.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import numpy as np

from nlgeval.correlation._pairwise_kernels import (
    Orientation,
    _check_masks,
    _check_orientation,
    _matrices,
    _prepare_masks,
    _pvalue_matrix,
    _sign_flip_pvalues,
    _SignFlipDesign,
    _spa_from_p,
)
from nlgeval.deprecation import renamed_keyword
from nlgeval.errors import InputError
from nlgeval.results import StatResult


def sign_flip_masks(n_segments: int, n_resamples: int = 1000, seed: int | None = 0, *,
                    permutations: int | None = None) -> np.ndarray:
    """(n_resamples, n_segments) matrix of +-1 (float64): one sign per segment per permutation.

    Drawn exactly as MTME's ``pce.compute_pairwise_p_values`` draws them
    (``default_rng(seed).random(..., dtype=float32)`` rounded to 0/1, then ``2m - 1``), so
    ``seed=4`` (MTME's fixed seed) gives MTME's masks.
    ``permutations``: the earlier name of ``n_resamples`` (deprecated).

    Parameters
    ----------
    n_segments : int
        Number of segments (columns).
    n_resamples, seed : int, int or None
        Number of masks (default 1000) and their seed (default 0).
    permutations : int, optional
        Deprecated name of ``n_resamples``.

    Returns
    -------
    numpy.ndarray
        The (n_resamples x n_segments) +-1 signs, float64.

    Examples
    --------
    >>> sign_flip_masks(4, n_resamples=3, seed=4)
    array([[ 1.,  1.,  1.,  1.],
           [ 1.,  1.,  1., -1.],
           [-1.,  1., -1., -1.]])
    """
    n_resamples = renamed_keyword(
        "sign_flip_masks", "permutations", permutations, "n_resamples", n_resamples)
    if n_resamples < 1:
        raise InputError(f"n_resamples must be >= 1, got {n_resamples}")
    if n_segments < 0:
        raise InputError(f"n_segments must be >= 0, got {n_segments}")
    u = np.random.default_rng(seed).random((n_resamples, n_segments), dtype=np.float32)
    M = np.rint(u, out=u).astype(np.float64)
    M *= 2.0
    M -= 1.0
    return M


@lru_cache(maxsize=4)
def _shared_masks(n_segments: int, n_resamples: int, seed: int | None
                  ) -> tuple[np.ndarray, np.ndarray]:
    """:func:`sign_flip_masks` and its contiguous transpose, read-only, drawn once per
    (segments, n_resamples, seed): every metric of a study uses the same masks."""
    M = sign_flip_masks(n_segments, n_resamples, seed)
    Mt = np.ascontiguousarray(M.T)
    M.flags.writeable = False
    Mt.flags.writeable = False
    return M, Mt


@dataclass(frozen=True)
class SoftPairwiseAccuracyResult(StatResult):
    """Soft pairwise accuracy (Thompson et al. 2024).

    ``pvalues_human[i, j]`` / ``pvalues_metric[i, j]``: share of the sign-flip permutations
    whose permuted delta of system ``i`` minus system ``j`` is ``>=`` the observed one (the
    "p-value that ``i`` beats ``j``"); the upper triangle is MTME's matrix, the lower triangle
    the same test in the other direction; NaN on the diagonal and for pairs without a common
    segment. ``n_pairs``: pairs averaged over; ``n_segments``: segments with at least one
    complete cell (the columns of the sign masks). No single-metric test (``pvalue`` NaN).

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[0.9, 0.8, 0.7, 0.6], [0.5, 0.6, 0.4, 0.5], [0.2, 0.3, 0.1, 0.2]])
    >>> Y = np.array([[5, 4, 4, 5], [3, 4, 3, 3], [4, 2, 1, 2]], dtype=float)
    >>> res = soft_pairwise_accuracy(X, Y, n_resamples=200, seed=0)
    >>> round(res.statistic, 2), res.n_pairs
    (0.95, 3)
    >>> res.pvalues_human.round(2)       # p(row system beats column system) from humans
    array([[ nan, 0.18, 0.06],
           [1.  ,  nan, 0.19],
           [1.  , 0.94,  nan]])
    """

    statistic: float
    n_pairs: int
    n_systems: int
    n_segments: int
    permutations: int
    seed: int | None
    orientation: str
    pvalues_human: np.ndarray = field(repr=False, compare=False)
    pvalues_metric: np.ndarray = field(repr=False, compare=False)
    pvalue: float = math.nan
    note: str = ""


def _no_pair(n_kept: int, K: int, seed: int | None, orientation: str
             ) -> SoftPairwiseAccuracyResult:
    """The result for one system: no pair to compare, NaN with a note."""
    nan = np.full((1, 1), np.nan)
    return SoftPairwiseAccuracyResult(math.nan, 0, 1, n_kept, K, seed, orientation, nan,
                                      nan.copy(), note="fewer than 2 systems: no system pair "
                                      "to compare")


def _sign_masks(masks: Any, n_kept: int, n_resamples: int, seed: int | None
                ) -> tuple[np.ndarray, np.ndarray | None, int | None]:
    """The sign masks of :func:`soft_pairwise_accuracy` (given, or seeded and shared), their
    transpose when shared, and the random-number seed to report (None for given masks)."""
    if masks is not None:
        return _check_masks(masks, n_kept), None, None
    if n_resamples < 1:
        raise InputError(f"n_resamples must be >= 1, got {n_resamples}")
    if isinstance(seed, int | np.integer):   # None / generators: fresh masks each call
        M, Mt = _shared_masks(n_kept, n_resamples, int(seed))
        return M, Mt, seed
    return sign_flip_masks(n_kept, n_resamples, seed), None, seed


def soft_pairwise_accuracy(
    X: Any, Y: Any, *, n_resamples: int = 1000, seed: int | None = 0,
    orientation: Orientation = "both", masks: Any = None, permutations: int | None = None,
) -> SoftPairwiseAccuracyResult:
    """Soft pairwise accuracy (Thompson et al. 2024; MTME ``PairwiseConfidenceError``).

    For each system pair ``i < j`` and each of ``n_resamples`` sign masks ``m`` (one +-1 per
    segment, shared by all pairs and by metric and humans; :func:`sign_flip_masks`, seeded),
    the null delta is ``sum_s m_s (x_is - x_js)`` (system score = sum over segments, as MTME)
    and ``p_ij = #{null >= observed} / n_resamples`` -- MTME's definition exactly: 1,000
    permutations by default, the observed delta not counted, ``>=``. Then
    ``SPA = 1 - mean_{i<j} |p^human_ij - p^metric_ij|``.

    Missing values (MTME raises on scattered missing human scores): a cell takes part only if
    metric and human are both present; for a pair, the test uses the segments where both
    systems have a complete cell, the same segments for humans and metric, so both p's answer
    the same question. Segments with no complete cell are dropped before the masks are drawn
    (as MTME drops wholly unrated segments), so with complete or wholly-missing segments and
    ``seed=4`` the masks are MTME's. Pairs with no common segment are left out of the mean.

    ``orientation="given"`` uses the pairs ``i < j`` in row order, as MTME does. The default
    ``"both"`` averages ``|p^h - p^m|`` over both directions of each pair, so the result does
    not depend on the order of the systems: ``p_ji = 1 - p_ij + #{null == observed} / K``, and
    the two agree exactly unless humans and metric have different numbers of exact ties (e.g.
    two systems with identical human scores on every common segment).

    Deltas are summed in float64; a permuted delta within 1e-10 (relative to the summed absolute
    scores) of the observed one counts as equal (MTME: float32, where ties fall either way).

    Parameters
    ----------
    X, Y : array-like
        Metric and human scores, systems x segments (NaN where missing).
    n_resamples, seed, orientation : int, int or None, {"both", "given"}
        Sign masks and their seed; both directions of each pair or ``i < j`` in row order.
    masks : array-like, optional
        Sign masks (K, segments) instead of random ones (e.g. every pattern of a tiny case).
    permutations : int, optional
        The earlier name of ``n_resamples`` (deprecated).

    Returns
    -------
    SoftPairwiseAccuracyResult
        SPA as ``statistic``, with both p-value matrices.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[0.9, 0.8, 0.7, 0.6], [0.5, 0.6, 0.4, 0.5], [0.2, 0.3, 0.1, 0.2]])
    >>> Y = np.array([[5, 4, 4, 5], [3, 4, 3, 3], [4, 2, 1, 2]], dtype=float)
    >>> round(soft_pairwise_accuracy(X, Y, n_resamples=200, seed=0).statistic, 2)
    0.95
    """
    n_resamples = renamed_keyword(
        "soft_pairwise_accuracy", "permutations", permutations, "n_resamples", n_resamples)
    orientation = _check_orientation(orientation)
    X, Y = _matrices(metric=X, human=Y)
    ok = np.isfinite(X) & np.isfinite(Y)
    design = _SignFlipDesign.build(ok)
    n_kept = int(design.keep.sum())
    M, Mt, seed = _sign_masks(masks, n_kept, n_resamples, seed)
    K = M.shape[0]
    if X.shape[0] == 1:   # no system pair (MTME: NaN); the kernels need a pair axis
        return _no_pair(n_kept, K, seed, orientation)
    Xk, Yk = (np.where(ok, V, 0.0)[:, design.keep][None] for V in (X, Y))
    prepared = _prepare_masks(design, M, Mt=Mt)
    fwd, rev = _sign_flip_pvalues(np.concatenate([Yk, Xk]), design, prepared)  # one product
    ph, pm = (fwd[:1], rev[:1]), (fwd[1:], rev[1:])
    spa = float(_spa_from_p(ph, pm, orientation)[0])
    S, n_pairs = X.shape[0], int(design.has_pair.sum())
    note = ""
    if n_pairs == 0:
        note = "no pair of systems shares a segment with metric and human scores"
    elif n_pairs < design.ii.size:
        note = (f"{design.ii.size - n_pairs} system pair(s) without a common complete segment "
                "left out")
    return SoftPairwiseAccuracyResult(
        spa, n_pairs, S, n_kept, K, seed, orientation,
        _pvalue_matrix(ph[0][0], ph[1][0], design, S),
        _pvalue_matrix(pm[0][0], pm[1][0], design, S), note=note)
