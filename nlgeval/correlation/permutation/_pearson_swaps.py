"""Pearson r of both metrics after every cell swap of a permutation test, from sums.

PERM-BOTH (Deutsch, Dror & Roth 2021) swaps the two metrics' scores in randomly chosen cells.
Swapping changes every sum Pearson's r needs linearly in the (P, S, I) 0/1 mask, so the
coefficients of all permutations are a few contractions of the masks with fixed matrices
(:func:`_pearson_swap_draws`), and the contractions of several metric pairs on the same masks
are one matrix product (:func:`_pearson_swap_draws_many`). Hand-written because no library
offers permutation tests of dependent correlations; used by
:mod:`nlgeval.correlation.permutation.compare`.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence

import numpy as np

from nlgeval.correlation._constant import unit_scaled
from nlgeval.correlation.coefficients import pearson_from_sums


def _pearson_swap_draws(
    A: np.ndarray, B: np.ndarray, H: np.ndarray, level: str, masks: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """r(A*, H) and r(B*, H) for all masks from sufficient statistics (Pearson only).

    Swapping cells changes every sum the coefficient needs linearly in the mask:
    sum A* = sum A + m . (B - A), sum A*^2 = sum A^2 + m . (B^2 - A^2), sum A*H = sum AH +
    m . ((B - A) H), and the reverse for B*; so each statistic is one contraction of the
    (P, S, I) mask with a fixed matrix. Same numbers as recomputing r on every swapped matrix.
    """
    return _pearson_swap_draws_many([(A, B, H)], level, masks)[0]


def _swap_terms(A: np.ndarray, B: np.ndarray, H: np.ndarray) -> tuple[np.ndarray, ...]:
    """V (complete cells), A0, B0, H0 (zero-filled) and the swap differences D, E, F.

    Centred and scaled before summing, as scipy's ``pearsonr``: A and B by one power of two
    (a swap mixes their cells, so they share the factor; exact), H centred on its complete
    cells and scaled by its own power of two, so that no sum of squares overflows or
    underflows.
    """
    ok = np.isfinite(A) & np.isfinite(B) & np.isfinite(H)
    big = np.where(ok, np.maximum(np.abs(A), np.abs(B)), 0.0)
    _, e = np.frexp(big.max(initial=0.0))
    A, B = np.ldexp(A, -e), np.ldexp(B, -e)
    H = unit_scaled(H, ok, axis=None)
    if ok.any():
        H = H - H[ok].mean()
    A0, B0, H0 = (np.where(ok, M, 0.0) for M in (A, B, H))
    return ok.astype(float), A0, B0, H0, B0 - A0, B0 * B0 - A0 * A0, (B0 - A0) * H0


def _r_of(n, sx, sxx, sxy, sy, syy):
    return pearson_from_sums(n, sx, sy, sxx, syy, sxy, sxx / np.maximum(n, 1),
                             syy / np.maximum(n, 1))


def _pearson_swap_draws_many(
    triples: Sequence[tuple[np.ndarray, np.ndarray, np.ndarray]], level: str, masks: np.ndarray
) -> list[tuple[np.ndarray, np.ndarray]]:
    """:func:`_pearson_swap_draws` of several (A, B, H) on the same masks.

    The mask contractions of all pairs are one matrix product (segment level) or one einsum
    (system level) -- the masks are read once instead of once per pair -- with the same sums
    per output element as a product per pair (tested: same numbers).
    """
    plan = swap_plan(triples, level)
    return swap_r(plan, swap_products(plan, masks))


def swap_plan(
    triples: Sequence[tuple[np.ndarray, np.ndarray, np.ndarray]], level: str
) -> tuple[str, list[tuple[np.ndarray, ...]], np.ndarray]:
    """What the swap products of ``triples`` need whatever the masks: the level, each pair's
    :func:`_swap_terms` and the stacked difference matrices (computed once per pair group,
    not once per block of masks)."""
    terms = [_swap_terms(A, B, H) for A, B, H in triples]
    stacked = np.empty(0)  # the item level contracts each pair's matrices separately
    if level == "segment":
        stacked = np.concatenate([np.stack([D, E, F]).reshape(3, -1) for *_, D, E, F in terms])
    elif level == "system":
        stacked = np.stack([t[4] for t in terms])
    return level, terms, stacked


def swap_products(plan: tuple[str, list[tuple[np.ndarray, ...]], np.ndarray],
                  masks: np.ndarray) -> list[np.ndarray]:
    """The mask contractions of one block of masks, per pair, permutations first: (P, 3) sums
    at segment level, (P, S) system sums, (P, 3, I) item sums. Blocks of the same shape give
    the same products whatever else is computed (the caller keeps the block shape fixed)."""
    level, terms, stacked = plan
    P = masks.shape[0]
    # one float copy of the masks, contracted by matrix products (BLAS) rather than einsum
    m = masks.reshape(P, -1) if masks.dtype == float else masks.reshape(P, -1).astype(float)
    if level == "segment":
        prod = (m @ stacked.T).T  # (3 k, P)
        return [prod[3 * j:3 * j + 3].T for j in range(len(terms))]
    if level == "system":
        mDs = np.einsum("psi,ksi->psk", m.reshape(masks.shape), stacked)
        return [mDs[:, :, j] for j in range(len(terms))]
    m3 = m.reshape(masks.shape)
    return [np.stack([np.einsum("psi,si->pi", m3, M) for M in t[4:]], axis=1) for t in terms]


def swap_r(plan: tuple[str, list[tuple[np.ndarray, ...]], np.ndarray],
           products: Sequence[np.ndarray]) -> list[tuple[np.ndarray, np.ndarray]]:
    """r(A*, H) and r(B*, H) of every pair from its products (:func:`swap_products`, the
    blocks of masks concatenated along the first axis): element-wise arithmetic and row sums,
    so the same numbers as block by block."""
    level, terms, _ = plan
    if level == "segment":
        out = []
        for (V, A0, B0, H0, *_), prod in zip(terms, products, strict=True):
            mD, mE, mF = prod[:, 0], prod[:, 1], prod[:, 2]
            n, sy, syy = V.sum(), H0.sum(), (H0 * H0).sum()
            ra = _r_of(n, A0.sum() + mD, (A0 * A0).sum() + mE, (A0 * H0).sum() + mF, sy, syy)
            rb = _r_of(n, B0.sum() - mD, (B0 * B0).sum() - mE, (B0 * H0).sum() - mF, sy, syy)
            out.append((ra, rb))
        return out
    if level == "system":
        return [_system_swap_r(t, mD) for t, mD in zip(terms, products, strict=True)]
    return [_item_swap_r(t, prod) for t, prod in zip(terms, products, strict=True)]


def _system_swap_r(terms: tuple[np.ndarray, ...], mD: np.ndarray
                   ) -> tuple[np.ndarray, np.ndarray]:
    V, A0, B0, H0 = terms[:4]
    cnt = V.sum(axis=1)
    w = (cnt > 0).astype(float)
    safe = np.maximum(cnt, 1)
    ma = (A0.sum(axis=1) + mD) / safe
    mb = (B0.sum(axis=1) - mD) / safe
    mh = H0.sum(axis=1) / safe
    n, sy, syy = w.sum(), (w * mh).sum(), (w * mh * mh).sum()
    ra = _r_of(n, (w * ma).sum(1), (w * ma * ma).sum(1), (w * ma * mh).sum(1), sy, syy)
    rb = _r_of(n, (w * mb).sum(1), (w * mb * mb).sum(1), (w * mb * mh).sum(1), sy, syy)
    return ra, rb


def _item_swap_r(terms: tuple[np.ndarray, ...], prod: np.ndarray
                 ) -> tuple[np.ndarray, np.ndarray]:
    V, A0, B0, H0, D, E, F = terms
    mD, mE, mF = prod[:, 0], prod[:, 1], prod[:, 2]
    n, sy, syy = V.sum(axis=0), H0.sum(axis=0), (H0 * H0).sum(axis=0)
    ra = _r_of(n, A0.sum(0) + mD, (A0 * A0).sum(0) + mE, (A0 * H0).sum(0) + mF, sy, syy)
    rb = _r_of(n, B0.sum(0) - mD, (B0 * B0).sum(0) - mE, (B0 * H0).sum(0) - mF, sy, syy)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return np.nanmean(ra, axis=1), np.nanmean(rb, axis=1)
