"""PERM-BOTH draws of Pearson's r for every pair of a metric set, batched over pairs and draws.

A study of k metrics compares k (k - 1) / 2 pairs on the same swap masks (Deutsch, Dror &
Roth 2021). Per call this module prepares every metric once (z-standardised, its largest
magnitude) and the ratings once (scaled, centred), derives each pair's swap terms from them
with a few element-wise operations, contracts the masks with all pairs' terms (segment level:
the matrix products of :mod:`nlgeval.correlation.permutation._pearson_swaps`, in its fixed blocks of
``PERM_BLOCK`` masks, or one product checked against them; system level: the same einsum's
sums, added in its order inside a compiled pass and checked against it; item level: a
compiled kernel with the einsum's sums), and takes the coefficients of every draw and pair
in one compiled pass. The
numbers are those of :func:`nlgeval.correlation.permutation._pearson_swaps._pearson_swap_draws_many`
called block by block (tests/test_pair_swaps.py compares them bit for bit).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import numpy as np

from nlgeval.correlation._constant import unit_scaled
from nlgeval.correlation.levels import level_statistic
from nlgeval.correlation.permutation._pearson_swaps import _r_of, _swap_terms
from nlgeval.correlation.permutation.draws import standardise

#: permutations per segment-level swap product: OpenBLAS rounds a row of a product
#: differently with another number of rows, so a draw must not depend on the chunking
PERM_BLOCK = 8
_SYSTEM_CELLS = 4_000_000  # bound on one system-level (draws, systems, pairs) block
_SEGMENT_DRAWS = 1024  # draws per segment-level product (a multiple of PERM_BLOCK)
_PAD_COLUMNS = 1024  # see _block_products
_ITEM_MAX = 8192  # the compiled item-level mean sums rows as numpy does up to this length

Terms = tuple[np.ndarray, ...]


class PairTerms:
    """The swap terms of every metric pair of a study, prepared once per call.

    When every metric is present in the same cells (the usual study), each metric is
    z-standardised once, the ratings are scaled and centred once, and a pair's terms are a
    few element-wise operations on the two standardised metrics: the same numbers as
    :func:`_swap_terms` on the pair's own standardisation (the same cells, the same power-of-
    two scaling -- a maximum is exact -- and the same operations). Otherwise each pair is
    prepared on its own by ``standardise_pair`` (the pair's complete cells).
    """

    def __init__(self, metrics: Mapping[str, np.ndarray], Y: np.ndarray, level: str,
                 standardise_pair: Callable[..., tuple[np.ndarray, np.ndarray, np.ndarray]]
                 ) -> None:
        self.metrics, self.Y, self.level = metrics, np.asarray(Y, dtype=float), level
        self._pair = standardise_pair
        Xs = [np.asarray(X, dtype=float) for X in metrics.values()]
        ok = np.isfinite(self.Y) & (np.isfinite(Xs[0]) if Xs else True)
        self.shared = all(np.array_equal(np.isfinite(X) & np.isfinite(self.Y), ok) for X in Xs)
        if self.shared:
            self._share(dict(zip(metrics, Xs, strict=True)), ok)

    def _share(self, Xs: dict[str, np.ndarray], ok: np.ndarray) -> None:
        Z = {m: np.where(ok, standardise(np.where(ok, X, np.nan)), np.nan)
             for m, X in Xs.items()}
        if any(not np.array_equal(np.isfinite(z), ok) for z in Z.values()):
            self.shared = False  # a standardised value overflowed: each pair on its own
            return
        H = np.where(ok, self.Y, np.nan)
        self.r = {m: float(level_statistic(z, H, self.level, "pearson")) for m, z in Z.items()}
        Hs = unit_scaled(H, ok, axis=None)
        if ok.any():
            Hs = Hs - Hs[ok].mean()
        self.V, self.H0 = ok.astype(float), np.where(ok, Hs, 0.0)
        self.Z0 = {m: np.where(ok, z, 0.0) for m, z in Z.items()}
        self.big = {m: np.where(ok, np.abs(z), 0.0).max(initial=0.0) for m, z in Z.items()}
        self._scaled: dict[tuple[str, int], np.ndarray] = {}

    def _z(self, m: str, e: int) -> np.ndarray:
        if (m, e) not in self._scaled:
            self._scaled[(m, e)] = np.ldexp(self.Z0[m], -e)
        return self._scaled[(m, e)]

    def terms(self, a: str, b: str) -> tuple[Terms, float, float]:
        """The pair's (V, A0, B0, H0, D, E, F) of :func:`_swap_terms`, r(A) and r(B)."""
        if not self.shared:
            A, B, H = self._pair(self.metrics[a], self.metrics[b], self.Y)
            r_a = float(level_statistic(A, H, self.level, "pearson"))
            return _swap_terms(A, B, H), r_a, float(level_statistic(B, H, self.level, "pearson"))
        _, e = np.frexp(max(self.big[a], self.big[b]))
        A0, B0, H0 = self._z(a, int(e)), self._z(b, int(e)), self.H0
        D = B0 - A0
        return (self.V, A0, B0, H0, D, B0 * B0 - A0 * A0, D * H0), self.r[a], self.r[b]


def pair_swap_deltas(
    prep: PairTerms, pairs: Sequence[tuple[str, str]], masks: np.ndarray, group: int,
) -> dict[tuple[str, str], tuple[float, float, np.ndarray]]:
    """r(A), r(B) and r(A*) - r(B*) on every swap mask (P, S, I), for every pair.

    ``group`` pairs at a time (the bound on their stacked terms); at segment level they share
    the matrix products of the block-by-block code; at system and item level each sum is
    the same whatever the group. The coefficients are element-wise and row-wise arithmetic
    on (pairs, draws) arrays, the same numbers as block by block.
    """
    out = {}
    m = masks.reshape(masks.shape[0], -1)
    m = m if m.dtype == float else m.astype(float)
    m3 = m.reshape(masks.shape)
    memo: dict | None = {} if prep.shared else None  # per-metric sums, taken once
    for g0 in range(0, len(pairs), group):
        chunk = pairs[g0:g0 + group]
        prepared = [prep.terms(a, b) for a, b in chunk]
        terms = [t for t, _, _ in prepared]
        if prep.level == "segment":
            ra, rb = _segment_draws(terms, m, memo)
        elif prep.level == "system":
            ra, rb = _system_draws(terms, m3, memo)
        else:
            ra, rb = _item_draws(terms, m3, memo)
        for j, (pair, (_, r_a, r_b)) in enumerate(zip(chunk, prepared, strict=True)):
            out[pair] = (r_a, r_b, ra[j] - rb[j])
    return out


#: the products whose sums the block code takes: indices into (V, A0, B0, H0), None = alone
_FACTORS = ((0, None), (1, None), (1, 1), (1, 3), (2, None), (2, 2), (2, 3), (3, None), (3, 3))


def _stack_sums(terms: Sequence[Terms], axis: int | None, which: Sequence[int],
                memo: dict | None = None) -> list[np.ndarray]:
    """Per pair, the sums of the block code (``axis`` as it takes them) of the products
    ``which`` (0 V, 1 A0, 2 A0^2, 3 A0 H0, 4 B0, 5 B0^2, 6 B0 H0, 7 H0, 8 H0^2), stacked.
    ``memo`` (shared preparation only, whose arrays live as long as the call) keeps the sum
    of each product of the same arrays: a metric's sums are taken once, not once per pair."""
    def product_sum(X: np.ndarray, Y: np.ndarray | None) -> np.ndarray:
        key = (id(X), id(Y), axis)
        if memo is not None and key in memo:
            return memo[key]
        M = X if Y is None else X * Y
        total = M.sum() if axis is None else M.sum(axis=axis)
        if memo is not None:
            memo[key] = total
        return total
    return [np.asarray([product_sum(t[f], None if g is None else t[g]) for t in terms],
                       dtype=float) for f, g in (_FACTORS[q] for q in which)]


def _segment_draws(terms: Sequence[Terms], m: np.ndarray, memo: dict | None
                   ) -> tuple[np.ndarray, np.ndarray]:
    # the coefficients of every pair and draw compiled: _r_of's operations element-wise
    from nlgeval.correlation.permutation._pair_kernels import segment_swap_r

    cols = np.concatenate([np.stack([D, E, F]).reshape(3, -1) for *_, D, E, F in terms])
    sums = _stack_sums(terms, None, range(9), memo)
    ra, rb = np.empty((len(terms), m.shape[0])), np.empty((len(terms), m.shape[0]))
    for d0 in range(0, m.shape[0], _SEGMENT_DRAWS):  # bounded (pairs, draws) arrays
        prod = _block_products(m[d0:d0 + _SEGMENT_DRAWS], cols)
        segment_swap_r(prod, *sums, ra, rb, d0)  # type: ignore[call-arg, arg-type]  # numba
    return ra, rb


def _block_product(m: np.ndarray, cols: np.ndarray, b0: int) -> np.ndarray:
    """The (columns, <= PERM_BLOCK) product of the block of masks starting at ``b0``, as the
    block code takes it (the last block padded to the same shape)."""
    blk = m[b0:b0 + PERM_BLOCK]
    k = blk.shape[0]
    if k < PERM_BLOCK:
        blk = np.concatenate([blk, np.repeat(blk[:1], PERM_BLOCK - k, axis=0)])
    return (blk @ cols.T).T[:, :k]


def _same(a: np.ndarray, b: np.ndarray) -> bool:
    return bool(np.array_equal(a, b, equal_nan=True))


def _block_products(m: np.ndarray, cols: np.ndarray) -> np.ndarray:
    """(columns, draws) mask contractions equal to the block code's products.

    One product of all draws is about ten times faster than one per block of 8 (the column
    matrix is packed once). BLAS sums a product's elements in an order that depends on the
    shapes (the split of the inner dimension, small-matrix kernels), not on the values, so
    the first and the last block are computed as the block code does and compared with the
    whole product: if either differs in any bit, every block is computed on its own.
    """
    P, N = m.shape[0], cols.shape[0]
    if P > PERM_BLOCK:
        last = (P - 1) // PERM_BLOCK * PERM_BLOCK
        firsts = [_block_product(m, cols, b0) for b0 in (0, last)]
        # a narrow product of all draws can take another order than its blocks (a small
        # group of pairs): then the same columns padded with zeros to _PAD_COLUMNS, whose
        # products (one per column, whatever the other columns) are often the blocks' own
        for width in dict.fromkeys((N, max(N, _PAD_COLUMNS))):
            padded = cols if width == N else np.concatenate(
                [cols, np.zeros((width - N, cols.shape[1]))])
            whole = (m @ padded.T).T[:N]
            if all(_same(whole[:, b0:b0 + PERM_BLOCK], f)
                   for b0, f in zip((0, last), firsts, strict=True)):
                return whole
    prod = np.empty((N, P))
    for b0 in range(0, P, PERM_BLOCK):
        prod[:, b0:b0 + PERM_BLOCK] = _block_product(m, cols, b0)
    return prod


def _system_draws(terms: Sequence[Terms], m3: np.ndarray, memo: dict | None
                  ) -> tuple[np.ndarray, np.ndarray]:
    P, S, n_items = m3.shape
    if 2 <= P and S <= 128 and n_items <= _ITEM_MAX and bool(((m3 == 0) | (m3 == 1)).all()):
        # 0/1 masks: the einsum's sums fused into the compiled pass (checked against einsum)
        mT = np.ascontiguousarray(m3.transpose(1, 2, 0).astype(np.uint8))
        step = max(1, _SYSTEM_CELLS // max(1, S * n_items))
        parts = [_system_part_fused(terms[k:k + step], m3, mT, memo)
                 for k in range(0, len(terms), step)]
    else:
        step = max(1, _SYSTEM_CELLS // max(1, P * S))
        parts = [_system_part(terms[k:k + step], m3, memo) for k in range(0, len(terms), step)]
    return np.concatenate([a for a, _ in parts]), np.concatenate([b for _, b in parts])


def _system_part(terms: Sequence[Terms], m3: np.ndarray, memo: dict | None
                 ) -> tuple[np.ndarray, np.ndarray]:
    # the block code's einsum (same subscripts: the same sums), then the system means,
    # weights and row sums of every pair and draw compiled (the same operations)
    from nlgeval.correlation.permutation._pair_kernels import system_swap_r

    mD = np.einsum("psi,ksi->psk", m3, np.stack([t[4] for t in terms]))
    cnt, sa, sb, sh = _stack_sums(terms, 1, (0, 1, 4, 7), memo)
    ra = np.empty((len(terms), m3.shape[0]))
    rb = np.empty_like(ra)
    system_swap_r(mD, cnt, sa, sb, sh, ra, rb)
    return ra, rb


def _system_part_fused(terms: Sequence[Terms], m3: np.ndarray, mT: np.ndarray,
                       memo: dict | None) -> tuple[np.ndarray, np.ndarray]:
    """:func:`_system_part` with the einsum inside the compiled pass (``mT``: the 0/1 masks
    as (systems, items, draws) bytes). The kernel adds in numpy's einsum order; the sums of
    the first draws are compared with einsum's bit for bit, and on any difference (another
    numpy or CPU) the part is computed by :func:`_system_part`."""
    from nlgeval.correlation.permutation._pair_kernels import (
        einsum_system_sums,
        system_swap_r_masks,
    )

    D = np.ascontiguousarray(np.stack([t[4] for t in terms]))
    few = min(m3.shape[0], PERM_BLOCK)
    mine = np.empty((few, m3.shape[1], len(terms)))
    einsum_system_sums(np.ascontiguousarray(mT[:, :, :few]), D, mine)
    if not _same(mine, np.einsum("psi,ksi->psk", m3[:few], D)):
        return _system_part(terms, m3, memo)
    cnt, sa, sb, sh = _stack_sums(terms, 1, (0, 1, 4, 7), memo)
    ra = np.empty((len(terms), m3.shape[0]))
    rb = np.empty_like(ra)
    system_swap_r_masks(mT, D, cnt, sa, sb, sh, ra, rb)
    return ra, rb


def _item_draws(terms: Sequence[Terms], m3: np.ndarray, memo: dict | None
                ) -> tuple[np.ndarray, np.ndarray]:
    from nlgeval.correlation.permutation._pair_kernels import item_swap_means

    if m3.shape[2] > _ITEM_MAX:
        return _item_draws_arrays(terms, m3)
    D, E, F = (np.ascontiguousarray(np.stack([t[j] for t in terms])) for j in (4, 5, 6))
    sums = _stack_sums(terms, 0, range(9), memo)
    ra = np.empty((len(terms), m3.shape[0]))
    rb = np.empty_like(ra)
    # 0/1 masks as bytes: an eighth of the memory read per pair, the same products
    masks = m3.astype(np.uint8) if bool(((m3 == 0) | (m3 == 1)).all()) else m3
    item_swap_means(np.ascontiguousarray(masks), D, E, F, *sums, ra, rb)  # type: ignore[call-arg]  # numba
    return ra, rb


def _item_draws_arrays(terms: Sequence[Terms], m3: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Item level pair by pair with numpy (very many items), as the block code."""
    import warnings

    out = []
    for V, A0, B0, H0, D, E, F in terms:
        mD, mE, mF = (np.einsum("psi,si->pi", m3, M) for M in (D, E, F))
        n, sy, syy = V.sum(axis=0), H0.sum(axis=0), (H0 * H0).sum(axis=0)
        ra = _r_of(n, A0.sum(0) + mD, (A0 * A0).sum(0) + mE, (A0 * H0).sum(0) + mF, sy, syy)
        rb = _r_of(n, B0.sum(0) - mD, (B0 * B0).sum(0) - mE, (B0 * H0).sum(0) - mF, sy, syy)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            out.append((np.nanmean(ra, axis=1), np.nanmean(rb, axis=1)))
    return np.array([a for a, _ in out]), np.array([b for _, b in out])
