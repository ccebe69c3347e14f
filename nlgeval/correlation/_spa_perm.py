"""The PERM-BOTH draws of soft pairwise accuracy (Thompson et al. 2024), batched.

A PERM-BOTH test of SPA (Deutsch, Dror & Roth 2021) needs, in every draw, the sign-flip
p-value of every system pair under the swapped metric A* and under B* = A + B - A*. Per chunk
of draws this module takes the permuted pair deltas of A* from one matrix product
(``_pairwise_kernels._sign_flip_null``) and counts, in one fused numba pass over the sign
flips, the four numbers each pair needs (A* and B*, both directions), with the same float
comparisons as the straightforward array code. The counts depend only on the metric side (the
two metrics, the cells taking part, the seeds), not on the human scores, so they are kept in a
small memory-bounded cache: the criteria of one study that rate the same cells reuse them and
recompute only the human p-values.
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from collections.abc import Iterator

import numpy as np
from numba import njit

from nlgeval.correlation._pairwise_kernels import (
    _PERM_RTOL,
    _Plan,
    _prepare_masks,
    _sign_flip_null,
    _sign_flip_pvalues,
    _SignFlipDesign,
    _spa_from_p,
)
from nlgeval.correlation.permutation.draws import iter_swap_masks, standardise
from nlgeval.correlation.soft_pairwise import sign_flip_masks

_CHUNK_ELEMENTS = 4_000_000
#: Bytes of metric-side counts kept between calls (least recently used dropped first).
_CACHE_BYTES = 64 * 2**20
_cache: OrderedDict[bytes, np.ndarray] = OrderedDict()
#: sign-flip p-values of single score matrices kept (least recently used dropped first)
_PCACHE_ENTRIES = 256
_pcache: OrderedDict[bytes, tuple[np.ndarray, np.ndarray]] = OrderedDict()
_digests: dict[int, tuple[np.ndarray, bytes]] = {}


@njit(cache=True)
def _count_row(na: np.ndarray, ns: np.ndarray, o: float, ob: float, t: float
               ) -> tuple[int, int, int, int]:
    """#{null >= obs - tol}, #{null <= obs + tol} for A* (``na``) and for B*, whose null is
    ``ns - na`` and observed delta ``ob``."""
    lo_a, hi_a = o - t, o + t
    lo_b, hi_b = ob - t, ob + t
    fa = 0
    ra = 0
    fb = 0
    rb = 0
    for k in range(na.size):
        x = na[k]
        y = ns[k] - x
        fa += x >= lo_a
        ra += x <= hi_a
        fb += y >= lo_b
        rb += y <= hi_b
    return fa, ra, fb, rb


@njit(cache=True)
def _count_pairs(null_a: np.ndarray, obs_a: np.ndarray, null_sum: np.ndarray,
                 obs_sum: np.ndarray, tol: np.ndarray, out: np.ndarray, start: int) -> None:
    """Counts from the permuted pair deltas ``null_a`` (pairs, c, K) of A*."""
    P, c, _ = null_a.shape
    for p in range(P):
        for d in range(c):
            o = obs_a[p, d]
            r = _count_row(null_a[p, d], null_sum[p], o, obs_sum[p] - o, tol[p])
            for q in range(4):
                out[q, start + d, p] = r[q]


@njit(cache=True)
def _count_sums(U: np.ndarray, V: np.ndarray, has_v: bool, member: np.ndarray, ii: np.ndarray,
                jj: np.ndarray, obs_a: np.ndarray, null_sum: np.ndarray, obs_sum: np.ndarray,
                tol: np.ndarray, out: np.ndarray, start: int) -> None:
    """Counts from the permuted system sums ``U + V`` (groups, S, c, K) of A* per missingness
    pattern (``V`` left out when ``has_v`` is False): a pair's delta is the sum over the
    patterns it takes part in (``member``) of ``W[g, i] - W[g, j]``, ``W = U + V``, added in
    pattern order (as the array code, from 0.0: the sign of a zero, the only difference, does
    not change a comparison). Per draw ``W`` is formed once (it stays in cache), then one
    fused pass per pair for pairs in one or two patterns (complete data, one missing cell),
    else through a buffer. Serial on purpose: threads spinning in worker processes cost more
    than they save."""
    G, S, c, K = U.shape
    W = np.empty((G, S, K))
    na = np.empty(K)
    gs = np.zeros((ii.size, G), dtype=np.int64)
    n_g = np.zeros(ii.size, dtype=np.int64)
    for p in range(ii.size):
        for g in range(G):
            if member[g, p]:
                gs[p, n_g[p]] = g
                n_g[p] += 1
    for d in range(c):
        for g in range(G):
            for s in range(S):
                if has_v:
                    for k in range(K):
                        W[g, s, k] = U[g, s, d, k] + V[g, s, d, k]
                else:
                    W[g, s, :] = U[g, s, d, :]
        for p in range(ii.size):
            i, j, ns, o = ii[p], jj[p], null_sum[p], obs_a[p, d]
            g0, g1 = gs[p, 0], gs[p, 1 if G > 1 else 0]
            if n_g[p] == 1:
                r = _count_diff(W[g0, i], W[g0, j], ns, o, obs_sum[p] - o, tol[p])
            elif n_g[p] == 2:
                r = _count_two(W[g0, i], W[g0, j], W[g1, i], W[g1, j], ns, o,
                               obs_sum[p] - o, tol[p])
            else:
                na[:] = 0.0
                for q in range(n_g[p]):
                    for k in range(K):
                        na[k] += W[gs[p, q], i, k] - W[gs[p, q], j, k]
                r = _count_row(na, ns, o, obs_sum[p] - o, tol[p])
            for q in range(4):
                out[q, start + d, p] = r[q]


@njit(cache=True)
def _count_diff(wi: np.ndarray, wj: np.ndarray, ns: np.ndarray, o: float, ob: float, t: float
                ) -> tuple[int, int, int, int]:
    """:func:`_count_row` of the deltas ``wi - wj`` without storing them."""
    lo_a, hi_a, lo_b, hi_b = o - t, o + t, ob - t, ob + t
    fa = 0
    ra = 0
    fb = 0
    rb = 0
    for k in range(wi.size):
        x = wi[k] - wj[k]
        y = ns[k] - x
        fa += x >= lo_a
        ra += x <= hi_a
        fb += y >= lo_b
        rb += y <= hi_b
    return fa, ra, fb, rb


@njit(cache=True)
def _count_two(ai: np.ndarray, aj: np.ndarray, bi: np.ndarray, bj: np.ndarray, ns: np.ndarray,
               o: float, ob: float, t: float) -> tuple[int, int, int, int]:
    """:func:`_count_row` of the deltas ``(ai - aj) + (bi - bj)`` without storing them."""
    lo_a, hi_a, lo_b, hi_b = o - t, o + t, ob - t, ob + t
    fa = 0
    ra = 0
    fb = 0
    rb = 0
    for k in range(ai.size):
        x = (ai[k] - aj[k]) + (bi[k] - bj[k])
        y = ns[k] - x
        fa += x >= lo_a
        ra += x <= hi_a
        fb += y >= lo_b
        rb += y <= hi_b
    return fa, ra, fb, rb


def _key(A0: np.ndarray, B0: np.ndarray, design: _SignFlipDesign, M: np.ndarray,
         swaps: tuple) -> bytes:
    h = hashlib.blake2b(digest_size=20)
    for a in (A0, B0, design.ok):
        h.update(str(a.shape).encode())
        h.update(np.ascontiguousarray(a).tobytes())
    h.update(digest(M))
    h.update(repr(swaps).encode())
    return h.digest()


def digest(a: np.ndarray) -> bytes:
    """A digest of an array's shape and bytes. A read-only array that owns its data (the
    shared sign masks, megabytes) is hashed once and remembered by identity."""
    memo = _digests.get(id(a))
    if memo is not None and memo[0] is a:
        return memo[1]
    h = hashlib.blake2b(digest_size=20)
    h.update(str(a.shape).encode())
    h.update(np.ascontiguousarray(a).tobytes())
    out = h.digest()
    if not a.flags.writeable and a.base is None:
        if len(_digests) >= 8:
            _digests.clear()
        _digests[id(a)] = (a, out)
    return out


def cached_pvalues(Z0: np.ndarray, design: _SignFlipDesign, plan: _Plan, M: np.ndarray
                   ) -> tuple[np.ndarray, np.ndarray]:
    """``_sign_flip_pvalues(Z0[None], design, plan)``, remembered by content: the human
    p-values of a criterion and each metric's own p-values are the same in every metric pair
    of a study (read-only arrays)."""
    key = _key(Z0, np.empty(0), design, M, (plan.mode, plan.K))
    found = _pcache.get(key)
    if found is not None:
        _pcache.move_to_end(key)
        return found
    p_fwd, p_rev = _sign_flip_pvalues(Z0[None], design, plan)
    p_fwd.flags.writeable = False
    p_rev.flags.writeable = False
    _pcache[key] = (p_fwd, p_rev)
    if len(_pcache) > _PCACHE_ENTRIES:
        _pcache.popitem(last=False)
    return p_fwd, p_rev


def swap_counts(
    A0: np.ndarray, B0: np.ndarray, design: _SignFlipDesign, plan: _Plan, M: np.ndarray,
    mask_chunks: Iterator[np.ndarray], total: int, swaps: tuple | None,
) -> np.ndarray:
    """(4, draws, pairs) sign-flip counts of A* and B* per PERM-BOTH draw (see
    :func:`_count_kernel`); ``A0``/``B0`` (S, n_kept) z-scored with 0 in incomplete cells.

    ``swaps`` describes the swap masks (scheme, seed, draws) for the cache; None = do not cache
    (explicit masks)."""
    key = _key(A0, B0, design, M, swaps) if swaps is not None else None
    if key is not None and key in _cache:
        _cache.move_to_end(key)
        return _cache[key]
    tol, null_sum, obs_sum, member, out = _pair_setup(A0, B0, design, plan, total)
    keep = design.keep
    done = 0
    for m in mask_chunks:
        pa = np.where(m[:, :, keep], B0, A0)
        if plan.mode == "pairs":
            null_a, obs_a, _ = _sign_flip_null(pa, design, plan)
            _count_pairs(null_a, np.ascontiguousarray(obs_a), null_sum, obs_sum, tol, out, done)
        else:
            sums, obs_a = _group_sums(pa, design, plan)
            _count_sums(sums, sums, False, member, design.ii, design.jj, obs_a, null_sum,
                        obs_sum, tol, out, done)
        done += len(m)
    if key is not None:
        _remember(key, out)
    return out


def _remember(key: bytes, out: np.ndarray) -> None:
    if out.nbytes <= _CACHE_BYTES // 4:
        _cache[key] = out
        while sum(v.nbytes for v in _cache.values()) > _CACHE_BYTES:
            _cache.popitem(last=False)


def _pair_setup(A0: np.ndarray, B0: np.ndarray, design: _SignFlipDesign, plan: _Plan,
                total: int) -> tuple[np.ndarray, ...]:
    """Tolerances, null and observed deltas of A + B, pattern membership, count array."""
    # B* = A + B - A* cell by cell and the deltas are linear in the scores, so B*'s permuted
    # deltas are those of A + B minus those of A*: one product per draw. The float-error
    # scale of A* and B* is bounded by that of |A| + |B|.
    _, _, scale_ab = _sign_flip_null((np.abs(A0) + np.abs(B0))[None], design, plan)
    null_sum, obs_sum, _ = _sign_flip_null((A0 + B0)[None], design, plan)
    tol = np.ascontiguousarray(_PERM_RTOL * scale_ab[:, 0])
    null_sum = np.ascontiguousarray(null_sum[:, 0, :])
    obs_sum = np.ascontiguousarray(obs_sum[:, 0])
    member = np.zeros((len(plan.groups), design.ii.size), dtype=np.bool_)
    for g, grp in enumerate(plan.groups):
        member[g, slice(None) if grp.idx is None else grp.idx] = True
    dtype = np.int16 if plan.K < 2**15 else np.int32
    out = np.empty((4, total, design.ii.size), dtype=dtype)
    return tol, null_sum, obs_sum, member, out


def _group_sums(Z: np.ndarray, design: _SignFlipDesign, plan: _Plan,
                out: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Permuted system sums per missingness pattern, (groups, S, c, K), and the observed pair
    deltas (pairs, c): the first half of ``_sign_flip_null`` in "patterns" mode, same products
    and sums, without forming the (pairs, c, K) deltas (``out``: a buffer to reuse)."""
    c, S = Z.shape[:2]
    sums = _view(out, (len(plan.groups), S, c, plan.K))
    obs = np.zeros((design.ii.size, c))
    for gi, g in enumerate(plan.groups):
        Zg = Z if g.cols is None else Z[:, :, g.cols]
        Zt = Zg.transpose(1, 0, 2).reshape(S * c, -1)
        np.matmul(Zt, g.Mt, out=sums[gi].reshape(S * c, plan.K))
        T = Zg.sum(axis=-1).T
        if g.idx is None:
            obs += T[g.ii] - T[g.jj]
        else:
            obs[g.idx] += T[g.ii] - T[g.jj]
    return sums, obs


def chunk_draws(design: _SignFlipDesign, plan: _Plan, n_cells: int) -> int:
    """Draws per chunk: about ``_CHUNK_ELEMENTS`` permuted pair deltas, permuted system sums
    or swapped cells."""
    per_draw = max(design.ii.size * plan.K, len(plan.groups) * design.n_systems * plan.K,
                   n_cells)
    return max(1, _CHUNK_ELEMENTS // max(1, per_draw))


def spa_draws(ph: tuple[np.ndarray, np.ndarray], counts: np.ndarray, K: int,
              has_pair: np.ndarray, orientation: str, chunk: int
              ) -> tuple[np.ndarray, np.ndarray]:
    """SPA of A* (slot 0) and of B* (slot 1) in every draw, from the human p-values ``ph`` and
    the counts; averaged ``chunk`` draws at a time (the row blocks of the chunked array code,
    so that the float sums are the same), both slots in one pass over the chunks."""
    out = (np.empty(counts.shape[1]), np.empty(counts.shape[1]))
    for s in range(0, counts.shape[1], chunk):
        for slot in (0, 1):
            pm = pvalues_from_counts(counts[:, s:s + chunk], slot, K, has_pair)
            out[slot][s:s + chunk] = _spa_from_p(ph, pm, orientation)
    return out


def pvalues_from_counts(counts: np.ndarray, slot: int, K: int, has_pair: np.ndarray
                        ) -> tuple[np.ndarray, np.ndarray]:
    """(p_fwd, p_rev), each (draws, pairs), of slot 0 (A*) or 1 (B*); NaN for pairs without a
    common segment (as ``_pairwise_kernels._pvalues_from_null``)."""
    # (pairs, draws) blocks seen transposed, as the array code's ``.sum(axis=-1).T`` leaves
    # them: _spa_from_p's sums over pairs then add in the same order
    f, r = (np.ascontiguousarray(counts[q].T).T for q in (2 * slot, 2 * slot + 1))
    return (np.where(has_pair, f / K, np.nan), np.where(has_pair, r / K, np.nan))


# ----------------------------------------------------------------------------- all metric pairs
def zscored_kept(X: np.ndarray, ok: np.ndarray, keep: np.ndarray) -> np.ndarray:
    """A metric z-scored over the cells ``ok`` (0 elsewhere), kept segments only: the ``A0`` of
    a PERM-BOTH test whose cells taking part are ``ok``."""
    Z = np.where(ok, standardise(np.where(ok, X, np.nan)), np.nan)
    return np.where(ok, Z, 0.0)[:, keep]


def prime_pairs(
    metrics: list[np.ndarray], Y: np.ndarray, *, n_resamples: int, seed: int | None,
    spa_permutations: int, spa_seed: int | None, scheme: str = "both",
) -> int:
    """Compute the PERM-BOTH sign-flip counts of every pair of ``metrics`` at once and keep
    them for :func:`swap_counts`; returns the number of pairs computed (0: nothing to share).

    Shared only when every pair has the same cells taking part (every metric present wherever
    the human score is), the sign-flip plan works per missingness pattern (few patterns) and
    the counts of all pairs fit the cache; otherwise each pair is left to its own test. Per
    chunk of draws, each metric's permuted system sums over the swapped
    cells, ``V_X = (m * X) @ M.T``, and over the others, ``U_X = X @ M.T - V_X``, are one
    product per metric instead of one per pair; A* of the pair (a, b) then sums to
    ``U_a + V_b``.
    """
    ok = np.isfinite(Y)
    if len(metrics) < 2 or any((ok & ~np.isfinite(X)).any() for X in metrics):
        return 0
    design = _SignFlipDesign.build(ok)
    keep = design.keep
    M = sign_flip_masks(int(keep.sum()), spa_permutations, spa_seed)
    plan = _prepare_masks(design, M)
    if plan.mode != "patterns":
        return 0
    swaps = (scheme, seed, n_resamples)
    Z = [zscored_kept(X, ok, keep) for X in metrics]
    todo = [(a, b, _key(Z[a], Z[b], design, M, swaps)) for a in range(len(Z))
            for b in range(a + 1, len(Z))]
    todo = [t for t in todo if t[2] not in _cache]
    G, S, K = len(plan.groups), design.n_systems, plan.K
    per_pair = 4 * n_resamples * design.ii.size * (2 if K < 2**15 else 4)
    if not todo or per_pair * len(todo) > _CACHE_BYTES:
        return 0
    setups = {(a, b): _pair_setup(Z[a], Z[b], design, plan, n_resamples)
              for a, b, _ in todo}
    used = sorted({a for a, _, _ in todo} | {b for _, b, _ in todo})
    chunk = max(1, _CHUNK_ELEMENTS // (2 * len(used) * G * S * K))
    masks = iter_swap_masks(ok.shape, n_resamples, scheme, seed, chunk=chunk)
    _prime_chunks(masks, Z, used, [(a, b, setups[(a, b)]) for a, b, _ in todo], design, plan,
                  chunk)
    for a, b, key in todo:
        _remember(key, setups[(a, b)][4])
    return len(todo)


def _view(buf: np.ndarray | None, shape: tuple[int, ...]) -> np.ndarray:
    """The first elements of a flat buffer as an array of ``shape`` (a new array without
    one): chunks reuse their buffers instead of faulting fresh pages in."""
    if buf is None:
        return np.empty(shape)
    return buf[:int(np.prod(shape))].reshape(shape)


def _prime_chunks(masks: Iterator[np.ndarray], Z: list[np.ndarray], used: list[int],
                  todo: list[tuple[int, int, tuple[np.ndarray, ...]]],
                  design: _SignFlipDesign, plan: _Plan, chunk: int) -> None:
    """The chunk loop of :func:`prime_pairs`: per chunk of draws each metric's sums over the
    swapped cells (``V``) and over the others (``U = full - V``), then per pair the counts of
    ``U_a + V_b`` -- the same float operations as before, into reused buffers."""
    keep = design.keep
    G, S, K = len(plan.groups), design.n_systems, plan.K
    size = G * S * chunk * K
    full = {x: _group_sums(Z[x][None], design, plan) for x in used}
    vbuf = {x: np.empty(size) for x in used}
    ubuf = {x: np.empty(size) for x in used}
    done = 0
    for m in masks:
        mk = m[:, :, keep]
        shape = (G, S, len(m), K)
        V, U = {}, {}
        for x in used:
            V[x] = _group_sums(np.where(mk, Z[x], 0.0), design, plan, vbuf[x])
            U[x] = (np.subtract(full[x][0], V[x][0], out=_view(ubuf[x], shape)),
                    full[x][1] - V[x][1])
        for a, b, (tol, null_sum, obs_sum, member, out) in todo:
            _count_sums(U[a][0], V[b][0], True, member, design.ii, design.jj,
                        U[a][1] + V[b][1], null_sum, obs_sum, tol, out, done)
        done += len(m)
