"""Does the metric order systems the way humans do? Pairwise accuracy and soft pairwise accuracy.

* :func:`pairwise_accuracy` -- system-level pairwise accuracy (Kocmi, Federmann, Grundkiewicz,
  Junczys-Dowmunt, Matsushita & Menezes 2021, "To Ship or Not to Ship: An Extensive Evaluation
  of Automatic Metrics for Machine Translation"; MTME ``stats.Agreement``): the share of system
  pairs whose order under the metric has the same sign as under the human scores, a tie
  agreeing only with a tie.
* :func:`soft_pairwise_accuracy` -- soft pairwise accuracy (Thompson, Mathur, Deutsch &
  Khayrallah 2024, "Improving Statistical Significance in Human Evaluation of Automatic
  Metrics via Soft Pairwise Accuracy", WMT24; MTME ``pce.py``): for every system pair the
  p-value of a paired sign-flip permutation test "system i beats system j", once from the human
  and once from the metric scores; ``SPA = 1 - mean |p_human - p_metric|``.
* :func:`pairwise_accuracy_test`, :func:`soft_pairwise_accuracy_test` -- PERM-BOTH tests
  between two metrics (Deutsch, Dror & Roth 2021, "A Statistical Analysis of Summarization
  Evaluation Metrics using Resampling Methods"; MTME ``stats.PermutationSigDiff``), returning
  :class:`~nlgeval.correlation.compare.PermutationComparison` with the per-draw statistics.

Input: ``X`` (metric) and ``Y`` (human), float arrays (systems, items), NaN = missing, both
oriented so that higher is better; a cell takes part only if both are finite. How nlgeval
differs from MTME (missing values, ties, p-value conventions) is in docs/pairwise.md.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from nlgeval.correlation.compare import (
    PermutationComparison,
    _standardise,
    comparison_from_draws,
    iter_swap_masks,
)
from nlgeval.correlation.levels import system_means
from nlgeval.errors import InputError
from nlgeval.results import StatResult

Orientation = Literal["both", "given"]

#: Two system scores closer than this (relative to the larger magnitude) are a tie: averaging
#: the same numbers in a different order differs by a few ulps, which is not a preference.
TIE_RTOL = 1e-12
#: Relative tolerance for "permuted delta >= observed delta" in the sign-flip test, relative to
#: the sum of |scores| entering the delta (float sums of the same terms in a different order).
_PERM_RTOL = 1e-10
_CHUNK_ELEMENTS = 4_000_000


# ----------------------------------------------------------------------------- input checks
def _matrix(a: Any, name: str) -> np.ndarray:
    try:
        m = np.asarray(a, dtype=float)
    except (TypeError, ValueError):
        raise InputError(f"{name} scores must be numbers (NaN for missing)") from None
    if m.ndim != 2:
        raise InputError(f"{name} scores must be a (systems x items) matrix, got shape "
                         f"{m.shape}")
    return m


def _matrices(**named: Any) -> list[np.ndarray]:
    mats = [_matrix(v, k) for k, v in named.items()]
    shapes = {m.shape for m in mats}
    if len(shapes) > 1:
        desc = ", ".join(f"{k} {m.shape}" for k, m in zip(named, mats, strict=True))
        raise InputError(f"score matrices must have the same shape (systems x items): {desc}")
    return mats


def _vector(a: Any, name: str) -> np.ndarray:
    try:
        v = np.asarray(a, dtype=float)
    except (TypeError, ValueError):
        raise InputError(f"{name} system scores must be numbers (NaN for missing)") from None
    if v.ndim != 1:
        raise InputError(f"{name} system scores must be a vector, got shape {v.shape}")
    return v


# ----------------------------------------------------------------------------- pairwise accuracy
def _pair_signs(s: np.ndarray, ii: np.ndarray, jj: np.ndarray) -> np.ndarray:
    """sign(s_i - s_j) per pair (last axis), 0 within TIE_RTOL, NaN if either score is NaN."""
    a, b = s[..., ii], s[..., jj]
    d = a - b
    tie = np.abs(d) <= TIE_RTOL * np.maximum(np.abs(a), np.abs(b))
    out = np.where(tie, 0.0, np.sign(d))
    return np.where(np.isfinite(d), out, np.nan)


def _agreement(metric: np.ndarray, human: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Agreeing pairs and counted pairs for system scores (..., S) vs human (S,)."""
    ii, jj = np.triu_indices(human.shape[-1], 1)
    sm, sh = _pair_signs(metric, ii, jj), _pair_signs(human, ii, jj)
    valid = np.isfinite(sm) & np.isfinite(sh)
    return (valid & (sm == sh)).sum(axis=-1), valid.sum(axis=-1)


@dataclass(frozen=True)
class PairwiseAccuracyResult(StatResult):
    """System-level pairwise accuracy (Kocmi et al. 2021).

    ``statistic = n_agree / n_pairs``; pairs count when both systems have a metric and a human
    score. ``n_tied_human`` / ``n_tied_metric``: counted pairs tied under humans / the metric.
    There is no single-metric test (``pvalue`` NaN); compare metrics with
    :func:`pairwise_accuracy_test`. Pool several data sets (language pairs, as WMT23 does) by
    summing ``n_agree`` and ``n_pairs``.

    Examples
    --------
    >>> res = pairwise_accuracy_from_scores([0.3, 0.5, 0.1], [3.0, 2.0, 1.0])
    >>> acc, p = res                     # scipy-style unpacking; no single-metric p-value
    >>> round(acc, 3), res.n_agree, res.n_pairs
    (0.667, 2, 3)
    """

    statistic: float
    n_pairs: int
    n_agree: int
    n_systems: int
    n_tied_human: int = 0
    n_tied_metric: int = 0
    pvalue: float = math.nan
    note: str = ""


def pairwise_accuracy_from_scores(metric: Any, human: Any) -> PairwiseAccuracyResult:
    """Pairwise accuracy of two system-score vectors (one entry per system, NaN = missing).

    ``sign(m_i - m_j) == sign(h_i - h_j)`` over pairs ``i < j`` where all four scores are
    present (MTME ``stats.Agreement`` skips pairs with a missing human score). Scores within
    :data:`TIE_RTOL` of each other (relative) are tied; a tie agrees only with a tie.

    Examples
    --------
    >>> res = pairwise_accuracy_from_scores([0.3, 0.5, 0.1], [2.0, 3.0, 1.0])
    >>> res.statistic, res.n_pairs
    (1.0, 3)
    """
    m, h = _vector(metric, "metric"), _vector(human, "human")
    if m.shape != h.shape:
        raise InputError(f"metric and human system scores differ in length: {m.size} vs "
                         f"{h.size}")
    ok = np.isfinite(m) & np.isfinite(h)
    m, h = np.where(ok, m, np.nan), np.where(ok, h, np.nan)
    agree, n = _agreement(m, h)
    ii, jj = np.triu_indices(h.size, 1)
    sm, sh = _pair_signs(m, ii, jj), _pair_signs(h, ii, jj)
    n_sys = int(ok.sum())
    note = ""
    if n == 0:
        note = "fewer than 2 systems with both a metric and a human score"
    return PairwiseAccuracyResult(float(agree / n) if n else math.nan, int(n), int(agree),
                                  n_sys, int(np.sum(sh == 0)), int(np.sum(sm == 0)),
                                  note=note)


def pairwise_accuracy(X: Any, Y: Any) -> PairwiseAccuracyResult:
    """System-level pairwise accuracy (Kocmi et al. 2021) from (systems x items) matrices.

    A system's score is the mean over its complete cells (metric and human both present; see
    :func:`~nlgeval.correlation.levels.system_means`), so metric and human system scores rest
    on the same outputs. MTME instead takes whatever system-level scores the data set provides
    (the metric usually over all segments, the human score over the rated ones).

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[0.9, 0.8, 0.7, 0.6], [0.5, 0.6, 0.4, 0.5], [0.2, 0.3, 0.1, 0.2]])
    >>> Y = np.array([[5, 4, 4, 5], [3, 4, 3, 3], [4, 2, 1, 2]], dtype=float)
    >>> res = pairwise_accuracy(X, Y)    # 3 systems x 4 segments
    >>> res.statistic, res.n_agree, res.n_pairs
    (1.0, 3, 3)
    """
    X, Y = _matrices(metric=X, human=Y)
    mx, my = system_means(X, Y)
    return pairwise_accuracy_from_scores(mx, my)


# ----------------------------------------------------------------------------- soft pairwise
def sign_flip_masks(n_segments: int, permutations: int = 1000, seed: int | None = 0
                    ) -> np.ndarray:
    """(permutations, n_segments) matrix of +-1 (float64): one sign per segment per permutation.

    Drawn exactly as MTME's ``pce.compute_pairwise_p_values`` draws them
    (``default_rng(seed).random(..., dtype=float32)`` rounded to 0/1, then ``2m - 1``), so
    ``seed=4`` (MTME's fixed seed) gives MTME's masks.

    Examples
    --------
    >>> sign_flip_masks(4, permutations=3, seed=4)
    array([[ 1.,  1.,  1.,  1.],
           [ 1.,  1.,  1., -1.],
           [-1.,  1., -1., -1.]])
    """
    if permutations < 1:
        raise InputError(f"permutations must be >= 1, got {permutations}")
    if n_segments < 0:
        raise InputError(f"n_segments must be >= 0, got {n_segments}")
    u = np.random.default_rng(seed).random((permutations, n_segments), dtype=np.float32)
    return np.rint(u).astype(np.float64) * 2.0 - 1.0


def _check_masks(masks: Any, n_segments: int) -> np.ndarray:
    M = np.asarray(masks)
    if M.ndim != 2 or M.shape[1] != n_segments or M.shape[0] < 1:
        raise InputError(f"sign masks must have shape (permutations, {n_segments}) (one column "
                         f"per segment with a complete cell), got {M.shape}")
    if M.dtype == bool:
        return np.where(M, 1.0, -1.0)
    M = M.astype(float)
    if np.all((M == 0) | (M == 1)):
        return M * 2.0 - 1.0
    if not np.all(np.abs(M) == 1):
        raise InputError("sign masks must hold +-1 (or 0/1, or booleans)")
    return M


@dataclass(frozen=True)
class _SignFlipDesign:
    """What the sign-flip test needs besides the scores: kept segments, patterns, pairs."""

    keep: np.ndarray          # (n,) segments with at least one complete cell
    groups: list[tuple[np.ndarray, np.ndarray]]  # (columns in kept space, pair indices)
    ii: np.ndarray
    jj: np.ndarray
    has_pair: np.ndarray      # (pairs,) the two systems share at least one complete segment
    n_systems: int
    ok: np.ndarray            # (S, n_kept) complete cells of the kept segments

    @classmethod
    def build(cls, ok: np.ndarray) -> _SignFlipDesign:
        S = ok.shape[0]
        ii, jj = np.triu_indices(S, 1)
        keep = ok.any(axis=0)
        okk = ok[:, keep]
        groups = []
        has = np.zeros(ii.size, bool)
        if okk.shape[1]:
            # segments with the same set of complete systems share one matrix product
            pats, inv = np.unique(okk.T, axis=0, return_inverse=True)
            inv = np.asarray(inv).ravel()
            for g, pat in enumerate(pats):
                idx = np.flatnonzero(pat[ii] & pat[jj])
                if idx.size:
                    groups.append((np.flatnonzero(inv == g), idx))
                    has[idx] = True
        return cls(keep, groups, ii, jj, has, S, okk)


@dataclass(frozen=True)
class _PreparedGroup:
    cols: np.ndarray | None     # kept-segment columns of this pattern (None = all)
    idx: np.ndarray | None      # its pairs (None = all)
    Mt: np.ndarray              # (n_g, K) sign masks of its columns, transposed
    E: np.ndarray               # (pairs_g, S): +1 at system i, -1 at system j
    ii: np.ndarray
    jj: np.ndarray


@dataclass(frozen=True)
class _Plan:
    """How to compute the permuted pair deltas for one design and one set of sign masks.

    ``"patterns"``: per missingness pattern, the permuted system sums ``Z @ M.T`` and the pair
    contrasts of those (cheap when there are few patterns; complete data is one). ``"pairs"``:
    the paired differences of every pair, zero where the pair is not complete, times ``M.T``
    (one product whatever the missingness). The cheaper one by flop count is used.
    """

    mode: str
    groups: list[_PreparedGroup]
    Mt: np.ndarray              # (n_kept, K)
    W: np.ndarray               # (pairs, n_kept) 1 where both systems are complete
    K: int


def _prepare_masks(design: _SignFlipDesign, M: np.ndarray, mode: str | None = None) -> _Plan:
    """Per missingness pattern: its columns, its pairs, M[:, cols].T and the pair contrasts."""
    n_kept, K = M.shape[1], M.shape[0]
    S, P = design.n_systems, design.ii.size
    Mt = np.ascontiguousarray(M.T)
    if mode is None:
        cost_patterns = S * n_kept + sum(idx.size * S for _, idx in design.groups)
        mode = "patterns" if cost_patterns <= P * n_kept else "pairs"
    if mode == "pairs":
        W = (design.ok[design.ii] & design.ok[design.jj]).astype(float)
        return _Plan("pairs", [], Mt, W, K)
    out = []
    for cols, idx in design.groups:
        all_cols = cols.size == n_kept
        all_pairs = idx.size == P
        ii, jj = design.ii[idx], design.jj[idx]
        E = np.zeros((idx.size, S))
        E[np.arange(idx.size), ii] = 1.0
        E[np.arange(idx.size), jj] = -1.0
        Mg = Mt if all_cols else np.ascontiguousarray(Mt[cols])
        out.append(_PreparedGroup(None if all_cols else cols, None if all_pairs else idx,
                                  Mg, E, ii, jj))
    return _Plan("patterns", out, Mt, np.zeros((0, 0)), K)


def _sign_flip_null(
    Z: np.ndarray, design: _SignFlipDesign, plan: _Plan
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Permuted and observed pair deltas, and the scale of their float error.

    ``Z``: (c, S, n_kept) scores with 0 in incomplete cells. For pair (i, j) the paired
    differences ``d_s = z_is - z_js`` over the segments ``s`` where both are complete; the
    null delta under mask ``k`` is ``sum_s M_ks d_s``, the observed one ``sum_s d_s``. With
    ``plan.mode == "patterns"``, per missingness pattern ``g`` (segments with the same complete
    systems) two matrix products: ``Z[:, :, g] @ M[:, g].T`` (every system's permuted sum, one
    product for complete data) and the pair-contrast matrix ``E`` (+1 at i, -1 at j) times
    that, which is exactly ``sum_i - sum_j``; with ``"pairs"``, the masked paired differences
    of all pairs times ``M.T``. Returns null (pairs, c, K), observed (pairs, c) and
    ``sum |z_i| + |z_j|`` over the pair's segments (pairs, c). Linear in ``Z``.
    """
    c, S = Z.shape[:2]
    P = design.ii.size
    K = plan.K
    if plan.mode == "pairs":
        Zt = Z.transpose(1, 0, 2)                               # (S, c, n)
        W = plan.W[:, None, :]
        D = (Zt[design.ii] - Zt[design.jj]) * W                 # (P, c, n)
        null = (D.reshape(P * c, -1) @ plan.Mt).reshape(P, c, K)
        scale = ((np.abs(Zt[design.ii]) + np.abs(Zt[design.jj])) * W).sum(axis=-1)
        return null, D.sum(axis=-1), scale
    null = np.zeros((P, c, K))
    obs = np.zeros((P, c))
    scale = np.zeros((P, c))
    for g in plan.groups:
        Zg = Z if g.cols is None else Z[:, :, g.cols]
        Zt = Zg.transpose(1, 0, 2).reshape(S * c, -1)        # (S*c, n_g)
        sums = (Zt @ g.Mt).reshape(S, c * K)                 # permuted system sums
        diff = (g.E @ sums).reshape(-1, c, K)                # (pairs_g, c, K)
        T = Zg.sum(axis=-1).T                                # (S, c)
        A = np.abs(Zg).sum(axis=-1).T
        if g.idx is None:
            null += diff
            obs += T[g.ii] - T[g.jj]
            scale += A[g.ii] + A[g.jj]
        else:
            null[g.idx] += diff
            obs[g.idx] += T[g.ii] - T[g.jj]
            scale[g.idx] += A[g.ii] + A[g.jj]
    return null, obs, scale


def _pvalues_from_null(
    null: np.ndarray, obs: np.ndarray, scale: np.ndarray, has_pair: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """``p_ij = #{null >= observed} / K`` (MTME's count; the observed statistic is not added)
    and ``p_ji = #{null <= observed} / K``, as (c, pairs) arrays; NaN for pairs without a
    common segment. Within ``_PERM_RTOL * scale`` counts as equal."""
    K = null.shape[-1]
    tol = _PERM_RTOL * scale
    p_fwd = (null >= (obs - tol)[..., None]).sum(axis=-1).T / K
    p_rev = (null <= (obs + tol)[..., None]).sum(axis=-1).T / K
    return np.where(has_pair, p_fwd, np.nan), np.where(has_pair, p_rev, np.nan)


def _sign_flip_pvalues(
    Z: np.ndarray, design: _SignFlipDesign, plan: _Plan
) -> tuple[np.ndarray, np.ndarray]:
    """p(i beats j) and p(j beats i) for every pair i < j and every stacked score matrix."""
    return _pvalues_from_null(*_sign_flip_null(Z, design, plan), design.has_pair)


def _spa_from_p(
    ph: tuple[np.ndarray, np.ndarray], pm: tuple[np.ndarray, np.ndarray], orientation: str
) -> np.ndarray:
    err = np.abs(pm[0] - ph[0])
    if orientation == "both":
        err = 0.5 * (err + np.abs(pm[1] - ph[1]))
    with np.errstate(invalid="ignore"):
        defined = np.isfinite(err)
        n = defined.sum(axis=-1)
        total = np.where(defined, err, 0.0).sum(axis=-1)
        return np.where(n > 0, 1.0 - total / np.maximum(n, 1), np.nan)


def _pvalue_matrix(p_fwd: np.ndarray, p_rev: np.ndarray, design: _SignFlipDesign, S: int
                   ) -> np.ndarray:
    out = np.full((S, S), np.nan)
    out[design.ii, design.jj] = p_fwd
    out[design.jj, design.ii] = p_rev
    return out


def _check_orientation(orientation: str) -> str:
    if orientation not in ("both", "given"):
        raise InputError(f"orientation must be 'both' or 'given', got {orientation!r}")
    return orientation


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
    >>> res = soft_pairwise_accuracy(X, Y, permutations=200, seed=0)
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


def soft_pairwise_accuracy(
    X: Any,
    Y: Any,
    *,
    permutations: int = 1000,
    seed: int | None = 0,
    orientation: Orientation = "both",
    masks: Any = None,
) -> SoftPairwiseAccuracyResult:
    """Soft pairwise accuracy (Thompson et al. 2024; MTME ``PairwiseConfidenceError``).

    For each system pair ``i < j`` and each of ``permutations`` sign masks ``m`` (one +-1 per
    segment, shared by all pairs and by metric and humans; :func:`sign_flip_masks`, seeded),
    the null delta is ``sum_s m_s (x_is - x_js)`` (system score = sum over segments, as MTME)
    and ``p_ij = #{null >= observed} / permutations`` -- MTME's definition exactly: 1,000
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

    Deltas are summed in float64 and a permuted delta within 1e-10 (relative to the sum of the
    absolute scores involved) of the observed one counts as equal; MTME sums in float32, where
    exact ties can fall either way. ``masks`` (K, n_segments) may be given explicitly (e.g.
    every sign pattern of a tiny case).

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[0.9, 0.8, 0.7, 0.6], [0.5, 0.6, 0.4, 0.5], [0.2, 0.3, 0.1, 0.2]])
    >>> Y = np.array([[5, 4, 4, 5], [3, 4, 3, 3], [4, 2, 1, 2]], dtype=float)
    >>> round(soft_pairwise_accuracy(X, Y, permutations=200, seed=0).statistic, 2)
    0.95
    """
    orientation = _check_orientation(orientation)
    X, Y = _matrices(metric=X, human=Y)
    ok = np.isfinite(X) & np.isfinite(Y)
    design = _SignFlipDesign.build(ok)
    n_kept = int(design.keep.sum())
    if masks is None:
        M = sign_flip_masks(n_kept, permutations, seed)
    else:
        M = _check_masks(masks, n_kept)
        seed = None
    K = M.shape[0]
    Xk = np.where(ok, X, 0.0)[:, design.keep][None]
    Yk = np.where(ok, Y, 0.0)[:, design.keep][None]
    prepared = _prepare_masks(design, M)
    ph = _sign_flip_pvalues(Yk, design, prepared)
    pm = _sign_flip_pvalues(Xk, design, prepared)
    spa = float(_spa_from_p(ph, pm, orientation)[0])
    S = X.shape[0]
    n_pairs = int(design.has_pair.sum())
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


# ----------------------------------------------------------------------------- PERM-BOTH tests
def _perm_inputs(XA: Any, XB: Any, Y: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray,
                                                    np.ndarray]:
    """z-scored A and B and the human scores on the cells where all three are present."""
    XA, XB, Y = _matrices(metric_a=XA, metric_b=XB, human=Y)
    ok = np.isfinite(XA) & np.isfinite(XB) & np.isfinite(Y)
    A = np.where(ok, _standardise(np.where(ok, XA, np.nan)), np.nan)
    B = np.where(ok, _standardise(np.where(ok, XB, np.nan)), np.nan)
    return A, B, np.where(ok, Y, np.nan), ok


def _mask_chunks(
    shape: tuple[int, int], permutations: int, scheme: str, seed: int | None, masks: Any,
    chunk: int,
) -> tuple[Iterator[np.ndarray], int]:
    if masks is not None:
        m = np.asarray(masks, dtype=bool)
        if m.ndim != 3 or m.shape[1:] != shape or m.shape[0] < 1:
            raise InputError(f"swap masks must have shape (permutations, {shape[0]}, "
                             f"{shape[1]}), got {m.shape}")
        return (m[s:s + chunk] for s in range(0, m.shape[0], chunk)), int(m.shape[0])
    if permutations < 1:
        raise InputError(f"permutations must be >= 1, got {permutations}")
    return iter_swap_masks(shape, permutations, scheme, seed, chunk=chunk), permutations


def pairwise_accuracy_test(
    XA: Any,
    XB: Any,
    Y: Any,
    *,
    permutations: int = 1000,
    seed: int | None = 0,
    scheme: str = "both",
    masks: Any = None,
) -> PermutationComparison:
    """PERM-BOTH test of "metric A has a higher pairwise accuracy than metric B".

    Deutsch et al. (2021): each metric is z-scored over the cells where A, B and the human
    score are all present (ddof 0), then in every draw each (system, item) cell swaps A and B
    with probability 1/2 (``scheme="systems"`` / ``"items"``: whole rows / columns); the
    system means of the swapped matrices give ``draws_a`` / ``draws_b`` (pairwise accuracy of
    the metric in slot A / B). ``p = (1 + #{d* >= d}) / (1 + K)``, one-sided; MTME reports
    ``#{d* >= d} / K``, and for its system-level accuracy task swaps the metrics' system-level
    scores rather than the segment cells. Vectorised: system means of a swapped matrix are one
    contraction of the (K, S, I) mask with ``B - A``.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[0.9, 0.8, 0.7, 0.6], [0.5, 0.6, 0.4, 0.5], [0.2, 0.3, 0.1, 0.2]])
    >>> Y = np.array([[5, 4, 4, 5], [3, 4, 3, 3], [4, 2, 1, 2]], dtype=float)
    >>> XB = X[[1, 0, 2]]                 # metric B swaps the two best systems
    >>> res = pairwise_accuracy_test(X, XB, Y, permutations=200, seed=1)
    >>> round(res.statistic_a, 3), round(res.statistic_b, 3)
    (1.0, 0.667)
    >>> 0 < res.pvalue <= 1
    True
    """
    A, B, H, ok = _perm_inputs(XA, XB, Y)
    S, n = ok.shape
    A0, B0 = np.where(ok, A, 0.0), np.where(ok, B, 0.0)
    cnt = ok.sum(axis=1)
    safe = np.maximum(cnt, 1)
    empty = cnt == 0
    ma, h = system_means(A, H)
    mb, _ = system_means(B, H)
    ra = pairwise_accuracy_from_scores(ma, h).statistic
    rb = pairwise_accuracy_from_scores(mb, h).statistic
    D = B0 - A0
    sa, sb = A0.sum(axis=1), B0.sum(axis=1)
    chunk = max(1, _CHUNK_ELEMENTS // max(1, S * n))
    it, K = _mask_chunks((S, n), permutations, scheme, seed, masks, chunk)
    draws_a, draws_b = np.empty(K), np.empty(K)
    done = 0
    for m in it:
        mD = np.einsum("psi,si->ps", m.astype(float), D)
        pa = np.where(empty, np.nan, (sa + mD) / safe)
        pb = np.where(empty, np.nan, (sb - mD) / safe)
        ag_a, n_a = _agreement(pa, h)
        ag_b, n_b = _agreement(pb, h)
        with np.errstate(invalid="ignore", divide="ignore"):
            draws_a[done:done + len(m)] = np.where(n_a > 0, ag_a / np.maximum(n_a, 1), np.nan)
            draws_b[done:done + len(m)] = np.where(n_b > 0, ag_b / np.maximum(n_b, 1), np.nan)
        done += len(m)
    return comparison_from_draws(ra, rb, draws_a, draws_b, name="pairwise_accuracy",
                                 scheme=scheme, seed=seed if masks is None else None)


def soft_pairwise_accuracy_test(
    XA: Any,
    XB: Any,
    Y: Any,
    *,
    permutations: int = 1000,
    seed: int | None = 0,
    spa_permutations: int = 1000,
    spa_seed: int | None = 0,
    orientation: Orientation = "both",
    scheme: str = "both",
    masks: Any = None,
) -> PermutationComparison:
    """PERM-BOTH test of "metric A has a higher soft pairwise accuracy than metric B".

    As MTME's ``PermutationSigDiff`` on segment-level scores: z-score A and B over the cells
    where A, B and the human score are present (SPA does not change under a positive affine
    map), swap A and B per cell with probability 1/2 (``permutations`` draws from
    ``default_rng(seed)``), and compute the SPA of both swapped matrices; the SPA sign masks
    (``spa_permutations`` from ``spa_seed``) are the same in every draw, as MTME's fixed
    ``seed=4`` makes them. ``p = (1 + #{d* >= d}) / (1 + K)``, one-sided (MTME: ``#/K``).
    Vectorised over draws: one (draws x systems x segments) @ (segments x sign masks) product
    per chunk and missingness pattern.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[0.9, 0.8, 0.7, 0.6], [0.5, 0.6, 0.4, 0.5], [0.2, 0.3, 0.1, 0.2]])
    >>> Y = np.array([[5, 4, 4, 5], [3, 4, 3, 3], [4, 2, 1, 2]], dtype=float)
    >>> res = soft_pairwise_accuracy_test(X, X[[1, 0, 2]], Y, permutations=50,
    ...                                   spa_permutations=100, seed=1)
    >>> round(res.statistic, 2), round(res.pvalue, 3)
    (0.26, 0.078)
    """
    orientation = _check_orientation(orientation)
    A, B, H, ok = _perm_inputs(XA, XB, Y)
    S, n = ok.shape
    design = _SignFlipDesign.build(ok)
    keep = design.keep
    M = sign_flip_masks(int(keep.sum()), spa_permutations, spa_seed)
    prep = _prepare_masks(design, M)
    A0, B0, H0 = (np.where(ok, Z, 0.0)[:, keep] for Z in (A, B, H))
    ph = _sign_flip_pvalues(H0[None], design, prep)
    ra = float(_spa_from_p(ph, _sign_flip_pvalues(A0[None], design, prep), orientation)[0])
    rb = float(_spa_from_p(ph, _sign_flip_pvalues(B0[None], design, prep), orientation)[0])
    # B* = A + B - A* cell by cell and every quantity below is linear in the scores, so the
    # permuted deltas of B* are those of A + B minus those of A*: one product per draw.
    # The float-error scale of A* and B* is bounded by that of |A| + |B|.
    _, _, scale_ab = _sign_flip_null((np.abs(A0) + np.abs(B0))[None], design, prep)
    null_sum, obs_sum, _ = _sign_flip_null((A0 + B0)[None], design, prep)
    per_draw = max(design.ii.size * M.shape[0], S * n)
    chunk = max(1, _CHUNK_ELEMENTS // max(1, per_draw))
    it, K = _mask_chunks((S, n), permutations, scheme, seed, masks, chunk)
    draws_a, draws_b = np.empty(K), np.empty(K)
    done = 0
    for m in it:
        pa = np.where(m[:, :, keep], B0, A0)
        null_a, obs_a, _ = _sign_flip_null(pa, design, prep)
        scale = np.broadcast_to(scale_ab, obs_a.shape)
        p_a = _pvalues_from_null(null_a, obs_a, scale, design.has_pair)
        null_a = np.subtract(null_sum, null_a, out=null_a)   # now B*'s
        p_b = _pvalues_from_null(null_a, obs_sum - obs_a, scale, design.has_pair)
        draws_a[done:done + len(m)] = _spa_from_p(ph, p_a, orientation)
        draws_b[done:done + len(m)] = _spa_from_p(ph, p_b, orientation)
        done += len(m)
    return comparison_from_draws(ra, rb, draws_a, draws_b, name="soft_pairwise_accuracy",
                                 scheme=scheme, seed=seed if masks is None else None)
