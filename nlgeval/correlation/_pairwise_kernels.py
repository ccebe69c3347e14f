"""Shared machinery of the pairwise family (:mod:`nlgeval.correlation.pairwise`): input checks,
pair signs, and the paired sign-flip permutation test behind soft pairwise accuracy (Thompson,
Mathur, Deutsch & Khayrallah 2024; MTME ``pce.py``), vectorised as matrix products.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, cast

import numpy as np

from nlgeval.errors import InputError

Orientation = Literal["both", "given"]

#: Two system scores closer than this (relative to the larger magnitude) are a tie: averaging
#: the same numbers in a different order differs by a few ulps, which is not a preference.
TIE_RTOL = 1e-12
#: Relative tolerance for "permuted delta >= observed delta" in the sign-flip test, relative to
#: the sum of |scores| entering the delta (float sums of the same terms in a different order).
_PERM_RTOL = 1e-10


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


# ----------------------------------------------------------------------------- sign-flip test
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
        keep = np.asarray(ok.any(axis=0))
        okk = ok[:, keep]
        groups = []
        has = np.zeros(ii.size, bool)
        if okk.shape[1] and okk.all():  # complete data: one pattern, every pair
            groups.append((np.arange(okk.shape[1]), np.arange(ii.size)))
            has[:] = True
        elif okk.shape[1]:
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


def _prepare_masks(design: _SignFlipDesign, M: np.ndarray, mode: str | None = None,
                   Mt: np.ndarray | None = None) -> _Plan:
    """Per missingness pattern: its columns, its pairs, M[:, cols].T and the pair contrasts
    (``Mt``: ``M.T`` made contiguous, when the caller has it already)."""
    n_kept, K = M.shape[1], M.shape[0]
    S, P = design.n_systems, design.ii.size
    Mt = np.ascontiguousarray(M.T) if Mt is None else Mt
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
    if len(plan.groups) == 1 and plan.groups[0].idx is None and plan.groups[0].cols is None:
        g = plan.groups[0]   # complete data: the deltas themselves (0 + x is x)
        Zt = Z.transpose(1, 0, 2).reshape(S * c, -1)
        sums = (Zt @ g.Mt).reshape(S, c * K)
        T, A = Z.sum(axis=-1).T, np.abs(Z).sum(axis=-1).T
        return ((sums[g.ii] - sums[g.jj]).reshape(-1, c, K), T[g.ii] - T[g.jj],
                A[g.ii] + A[g.jj])
    null = np.zeros((P, c, K))
    obs = np.zeros((P, c))
    scale = np.zeros((P, c))
    for g in plan.groups:
        Zg = Z if g.cols is None else Z[:, :, g.cols]
        Zt = Zg.transpose(1, 0, 2).reshape(S * c, -1)        # (S*c, n_g)
        sums = (Zt @ g.Mt).reshape(S, c * K)                 # permuted system sums
        diff = (sums[g.ii] - sums[g.jj]).reshape(-1, c, K)   # (pairs_g, c, K)
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
    p_fwd = np.count_nonzero(null >= (obs - tol)[..., None], axis=-1).T / K
    p_rev = np.count_nonzero(null <= (obs + tol)[..., None], axis=-1).T / K
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


def _check_orientation(orientation: str) -> Literal["both", "given"]:
    if orientation not in ("both", "given"):
        raise InputError(f"orientation must be 'both' or 'given', got {orientation!r}")
    return cast(Literal["both", "given"], orientation)
