"""Numba kernels of Kendall's tau: pair counts by enumeration or sort + Fenwick tree, one formula.

The counts are those of Deutsch, Foster & Freitag (2023, Table 1); the O(n log n) count follows
Knight (1966). The method is documented in :mod:`.variants`; ``batch_tau`` is also the Kendall
kernel of :mod:`nlgeval.correlation.coefficients`.

**One count definition, computed directly or with multiplicities; one formula.** Every tau-b and
tau-c in nlgeval -- the point estimate (:func:`nlgeval.correlation.coefficients.correlation`),
the batch version (:func:`~nlgeval.correlation.coefficients.batch_correlation`, used by the
levels, the system-level bootstrap, the item permutations and Williams' test), the Kendall
variants and their grouped, bootstrap and permutation versions (:mod:`.variants`) -- counts the
pairs of one vector with :func:`_vector_counts` (enumeration for short vectors; for long ones a
radix sort and a merge count of inversions (Knight 1966) when eps = 0, plain Kendall, else sort +
Fenwick tree: the same integers). The segment-level bootstrap counts the same pairs from
integer multiplicities (:func:`_taus`, on the sort plans of :mod:`.weighted`). All of them turn
the counts into tau with :func:`_tau_from_counts`, the one formula, which also holds the
degenerate-input rule (see :mod:`nlgeval.correlation.coefficients`). Every kernel that calls it
is in this module: numba's cache of a kernel does not notice a change to a compiled helper in
another file.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from nlgeval.correlation._constant import MIN_PAIRS
from nlgeval.correlation.kendall._exact_counts import _all_finite, _counts_exact

# numba cache pin: nlgeval.correlation.kendall._exact_counts 498bc5f236f42ec3  (see that module)

_ROWS_PER_TASK = 64  # rows of a batch per parallel task: work buffers allocated once per task
_LANES = 8  # resamples of a Kendall block: one count per resample in each tree node
_EXACT_MIN = 256  # eps == 0 vectors this long or longer: :func:`_counts_exact` (shorter: the
# Fenwick count is as fast; benchmarks/bench_kendall_long.py)

# --------------------------------------------------------------------------------------------
# numba kernels
# --------------------------------------------------------------------------------------------

@njit(cache=True)
def _counts_direct(x: np.ndarray, y: np.ndarray, eps: float) -> tuple[int, int, int, int, int]:
    """C, D, T_h, T_m, T_hm by enumerating the n (n - 1) / 2 pairs."""
    n = x.shape[0]
    c = 0
    d = 0
    th = 0
    tm = 0
    thm = 0
    for i in range(n):
        xi = x[i]
        yi = y[i]
        for j in range(i + 1, n):
            dx = xi - x[j]
            dy = yi - y[j]
            mt = abs(dx) <= eps
            if dy == 0.0:
                if mt:
                    thm += 1
                else:
                    th += 1
            elif mt:
                tm += 1
            elif (dx > 0.0) == (dy > 0.0):
                c += 1
            else:
                d += 1
    return c, d, th, tm, thm


@njit(cache=True)
def _n_distinct_sorted(v: np.ndarray) -> int:
    if v.shape[0] == 0:
        return 0
    k = 1
    for i in range(1, v.shape[0]):
        if v[i] != v[i - 1]:
            k += 1
    return k


# shape: one O(n log n) numba pass; its three counts share the sorted orders built at its start
@njit(cache=True)
def _counts_sorted(x: np.ndarray, y: np.ndarray, eps: float) -> tuple[int, int, int, int, int]:
    """C, D, T_h, T_m, T_hm in O(n log n): sort + two pointers + Fenwick dominance count."""
    n = x.shape[0]
    ox = np.argsort(x, kind="mergesort")
    xs = x[ox]
    pos = np.empty(n, dtype=np.int64)
    for k in range(n):
        pos[ox[k]] = k
    # M: pairs with |dm| <= eps. fl(xs[r] - xs[i]) is monotone in r and in i, so the last r
    # with a tie never moves back as i grows.
    m_ties = 0
    r = 0
    for i in range(n):
        if r < i:
            r = i
        while r + 1 < n and xs[r + 1] - xs[i] <= eps:
            r += 1
        m_ties += r - i
    # order by human score, metric score as tie-breaker (stable sort of the metric order)
    oy = ox[np.argsort(y[ox], kind="mergesort")]
    h_ties = 0
    both = 0
    s = 0
    while s < n:
        e = s + 1
        ys = y[oy[s]]
        while e < n and y[oy[e]] == ys:
            e += 1
        m = e - s
        h_ties += m * (m - 1) // 2
        r = s
        for i in range(s, e):
            if r < i:
                r = i
            xi = x[oy[i]]
            while r + 1 < e and x[oy[r + 1]] - xi <= eps:
                r += 1
            both += r - i
        s = e
    # C: pairs with h_j < h_i and fl(m_i - m_j) > eps, humans in increasing order; the
    # metric values m_j satisfying the predicate form a prefix of xs (binary search on the
    # predicate itself, so floating point agrees with enumeration).
    tree = np.zeros(n + 1, dtype=np.int64)
    con = 0
    s = 0
    while s < n:
        e = s + 1
        ys = y[oy[s]]
        while e < n and y[oy[e]] == ys:
            e += 1
        for t in range(s, e):
            xi = x[oy[t]]
            lo = 0
            hi = n
            while lo < hi:
                mid = (lo + hi) // 2
                if xi - xs[mid] > eps:
                    lo = mid + 1
                else:
                    hi = mid
            q = lo  # prefix sum of inserted positions < q
            acc = 0
            while q > 0:
                acc += tree[q]
                q -= q & (-q)
            con += acc
        for t in range(s, e):
            q = pos[oy[t]] + 1
            while q <= n:
                tree[q] += 1
                q += q & (-q)
        s = e
    total = n * (n - 1) // 2
    dis = total - m_ties - h_ties + both - con
    return con, dis, h_ties - both, m_ties - both, both


@njit(cache=True)
def _vector_counts(x: np.ndarray, y: np.ndarray, eps: float, direct_max: int,
                   need_distinct: bool, out: np.ndarray) -> None:
    """out[:] = C, D, T_h, T_m, T_hm, n, distinct metric values, distinct human values.

    Enumeration up to ``direct_max`` values; beyond, finite vectors with eps = 0 (plain Kendall)
    from :func:`_counts_exact` (from :data:`_EXACT_MIN` values on), the others from
    :func:`_counts_sorted`: the same integers.
    """
    n = x.shape[0]
    exact = n > max(direct_max, _EXACT_MIN - 1) and eps == 0.0 and _all_finite(x, y)
    nx = ny = 0
    if n <= direct_max:
        c, d, th, tm, thm = _counts_direct(x, y, eps)
    elif exact:  # plain Kendall: one radix sort and one merge count, the distinct values too
        c, d, th, tm, thm, nx, ny = _counts_exact(x, y)
    else:
        c, d, th, tm, thm = _counts_sorted(x, y, eps)
    out[0] = c
    out[1] = d
    out[2] = th
    out[3] = tm
    out[4] = thm
    out[5] = n
    if need_distinct and exact:
        out[6] = nx
        out[7] = ny
    elif need_distinct:
        out[6] = _n_distinct_sorted(np.sort(x))
        out[7] = _n_distinct_sorted(np.sort(y))
    else:
        out[6] = 0
        out[7] = 0


@njit(cache=True)
def _tau_from_counts(s: float, tot: float, xtie: float, ytie: float, n: float, nx: float,
                     ny: float, code: int, min_n: float) -> float:
    """tau-b (``code`` 0; Kendall 1945) or tau-c (1; Stuart 1953) from pair counts: the one formula.

    ``s`` = C - D, ``tot`` = all pairs n (n - 1) / 2, ``xtie`` / ``ytie`` = pairs tied in x / in
    y (tied in both counted in each), ``n`` values, ``nx`` / ``ny`` distinct values (tau-c
    only). Counts may be of weighted (repeated) observations; every argument is a float holding
    an integer below 2**53, so the arithmetic is exact up to the final divisions, which are
    those of ``scipy.stats.kendalltau`` in the same order (tau-b: ``s / sqrt(tot - xtie) /
    sqrt(tot - ytie)``; tau-c: ``2 s / (n^2 (k - 1) / k)``, ``k = min(nx, ny)``), clipped to
    [-1, 1] as scipy does. Degenerate input: NaN when ``n < min_n`` or every pair is tied in one
    variable (a constant variable). ``min_n`` is 3 for nlgeval's coefficients (the rule of
    :mod:`nlgeval.correlation.coefficients`) and 2 for the Kendall variants, which follow
    scipy and MTME there.
    """
    if n < min_n or tot - xtie <= 0.0 or tot - ytie <= 0.0:
        return np.nan
    if code == 0:
        tau = s / np.sqrt(tot - xtie) / np.sqrt(tot - ytie)
    else:
        k = min(nx, ny)
        tau = 2.0 * s / (n * n * (k - 1.0) / k)
    return min(1.0, max(-1.0, tau))


@njit(cache=True)
def _stat_from_counts(c: int, d: int, th: int, tm: int, thm: int, n: int, nx: int, ny: int,
                      code: int) -> float:
    """The variant (0 tau_b, 1 tau_c, 2 tau_23, 3 acc_23) from the counts, as MTME.

    tau-b and tau-c come from :func:`_tau_from_counts` (x = metric, y = human; defined from 2
    values on, as in scipy and MTME).
    """
    tot = c + d + th + tm + thm
    if tot == 0:
        return np.nan
    if code <= 1:
        return _tau_from_counts(float(c - d), float(tot), float(tm + thm), float(th + thm),
                                float(n), float(nx), float(ny), code, 2.0)
    if code == 2:
        return (c + thm - d - th - tm) / tot
    return (c + thm) / tot


@njit(cache=True, parallel=True)
def batch_tau(x: np.ndarray, y: np.ndarray, code: int, direct_max: int,
               min_n: int) -> np.ndarray:
    """tau-b / tau-c of every row of (B, n) matrices, NaN = missing (dropped pairwise per row).

    Each row: its complete pairs are packed into a buffer, counted by :func:`_vector_counts`
    and turned into tau by :func:`_tau_from_counts`. Rows are independent, so fixed chunks of
    them are spread over the cores; the result does not depend on the number of threads.
    """
    B, m = x.shape
    out = np.empty(B)
    chunk = _ROWS_PER_TASK
    for c in prange((B + chunk - 1) // chunk):
        xb, yb = np.empty(m), np.empty(m)
        cnt = np.zeros(8, dtype=np.int64)
        for b in range(c * chunk, min(B, (c + 1) * chunk)):
            k = 0
            for j in range(m):
                if np.isfinite(x[b, j]) and np.isfinite(y[b, j]):
                    xb[k] = x[b, j]
                    yb[k] = y[b, j]
                    k += 1
            _vector_counts(xb[:k], yb[:k], 0.0, direct_max, code == 1, cnt)
            c_, d_, th, tm, thm = cnt[0], cnt[1], cnt[2], cnt[3], cnt[4]
            out[b] = _tau_from_counts(float(c_ - d_), float(c_ + d_ + th + tm + thm),
                                      float(tm + thm), float(th + thm), float(k),
                                      float(cnt[6]), float(cnt[7]), code, float(min_n))
    return out


@njit(cache=True)
def _csr_counts(x: np.ndarray, y: np.ndarray, off: np.ndarray, eps: float, direct_max: int,
                need_distinct: bool) -> np.ndarray:
    """(groups, 8) counts for groups stored back to back: group g is x[off[g]:off[g + 1]]."""
    G = off.shape[0] - 1
    out = np.zeros((G, 8), dtype=np.int64)
    for g in range(G):
        _vector_counts(x[off[g]:off[g + 1]], y[off[g]:off[g + 1]], eps, direct_max,
                       need_distinct, out[g])
    return out


@njit(cache=True)
def _matrix_statistic(X: np.ndarray, Y: np.ndarray, grouping: int, code: int, eps: float,
                      direct_max: int, xb: np.ndarray, yb: np.ndarray, cnt: np.ndarray) -> float:
    """The grouped variant of one (systems x items) matrix pair (mean over defined groups)."""
    S, n_items = X.shape
    need = code == 1
    if grouping == 0:
        m = 0
        for s in range(S):
            for i in range(n_items):
                a = X[s, i]
                b = Y[s, i]
                if np.isfinite(a) and np.isfinite(b):
                    xb[m] = a
                    yb[m] = b
                    m += 1
        if m < 2:
            return np.nan
        _vector_counts(xb[:m], yb[:m], eps, direct_max, need, cnt)
        return _stat_from_counts(cnt[0], cnt[1], cnt[2], cnt[3], cnt[4], cnt[5], cnt[6],
                                 cnt[7], code)
    total = 0.0
    k = 0
    n_groups = n_items if grouping == 1 else S
    n_within = S if grouping == 1 else n_items
    for g in range(n_groups):
        m = 0
        for t in range(n_within):
            if grouping == 1:
                a = X[t, g]
                b = Y[t, g]
            else:
                a = X[g, t]
                b = Y[g, t]
            if np.isfinite(a) and np.isfinite(b):
                xb[m] = a
                yb[m] = b
                m += 1
        if m < 2:
            continue
        _vector_counts(xb[:m], yb[:m], eps, direct_max, need, cnt)
        v = _stat_from_counts(cnt[0], cnt[1], cnt[2], cnt[3], cnt[4], cnt[5], cnt[6], cnt[7],
                              code)
        if not np.isnan(v):
            total += v
            k += 1
    if k == 0:
        return np.nan
    return total / k


@njit(cache=True)
def _stack_statistic(Xs: np.ndarray, Ys: np.ndarray, grouping: int, code: int, eps: float,
                     direct_max: int) -> np.ndarray:
    B, S, n_items = Xs.shape
    out = np.empty(B)
    xb = np.empty(S * n_items)
    yb = np.empty(S * n_items)
    cnt = np.zeros(8, dtype=np.int64)
    for b in range(B):
        out[b] = _matrix_statistic(Xs[b], Ys[b], grouping, code, eps, direct_max, xb, yb, cnt)
    return out


@njit(cache=True)
def _indexed_statistic(X: np.ndarray, Y: np.ndarray, sys_idx: np.ndarray, item_idx: np.ndarray,
                       grouping: int, code: int, eps: float, direct_max: int) -> np.ndarray:
    """The statistic of ``X[sys_idx[b]][:, item_idx[b]]`` for every b (gathered one at a time)."""
    B, S = sys_idx.shape
    n_items = item_idx.shape[1]
    out = np.empty(B)
    Xb = np.empty((S, n_items))
    Yb = np.empty((S, n_items))
    xb = np.empty(S * n_items)
    yb = np.empty(S * n_items)
    cnt = np.zeros(8, dtype=np.int64)
    for b in range(B):
        for s in range(S):
            r = sys_idx[b, s]
            for i in range(n_items):
                c = item_idx[b, i]
                Xb[s, i] = X[r, c]
                Yb[s, i] = Y[r, c]
        out[b] = _matrix_statistic(Xb, Yb, grouping, code, eps, direct_max, xb, yb, cnt)
    return out


@njit(cache=True)
def item_tie_counts(x: np.ndarray, y: np.ndarray, m: np.ndarray, code: int, direct_max: int
                    ) -> np.ndarray:  # pragma: no cover - compiled
    """Per item (row) the counts a shuffle of x among its first ``m[i]`` cells keeps.

    Columns: all pairs, pairs tied in x, pairs tied in y, n, distinct x and y values (the
    last two for tau-c), from :func:`_vector_counts` of the unshuffled row.
    """
    n_items = x.shape[0]
    fixed = np.zeros((n_items, 6))
    cnt = np.zeros(8, dtype=np.int64)
    for i in range(n_items):
        k = m[i]
        _vector_counts(x[i, :k], y[i, :k], 0.0, direct_max, code == 1, cnt)
        c_, d_, th, tm, thm = cnt[0], cnt[1], cnt[2], cnt[3], cnt[4]
        fixed[i, 0] = float(c_ + d_ + th + tm + thm)
        fixed[i, 1] = float(tm + thm)
        fixed[i, 2] = float(th + thm)
        fixed[i, 3] = float(k)
        fixed[i, 4] = float(cnt[6])
        fixed[i, 5] = float(cnt[7])
    return fixed


@njit(cache=True)
def item_permutation_tau(x: np.ndarray, y: np.ndarray, m: np.ndarray, dead: np.ndarray,
                         fixed: np.ndarray, perm: np.ndarray, code: int, min_n: int
                         ) -> np.ndarray:  # pragma: no cover - compiled
    """tau-b (``code`` 0) or tau-c (1) of every item under every within-item shuffle of x.

    ``x``, ``y`` (items, systems) with the ``m[i]`` complete cells of item i first; ``perm``
    (draws, items, systems) shuffles the first ``m[i]`` positions among themselves; ``dead``
    marks the items the degenerate-input rule leaves out. A shuffle of x keeps every tie
    count (pairs tied in x, in y, the distinct values: ``fixed``, from
    :func:`item_tie_counts`), so a draw only needs C - D, the sum over position pairs of
    sign(x[perm a] - x[perm b]) sign(y[a] - y[b]). The same integers as :func:`batch_tau` on
    the permuted rows (the same pairs, the same ties), turned into tau by
    :func:`_tau_from_counts`: the same floats.
    """
    B, n_items, S = perm.shape
    out = np.empty((B, n_items))
    xp = np.empty(S)
    sy = np.empty((S, S), dtype=np.int8)  # the signs of one item's human differences
    for i in range(n_items):  # one thread: the criteria of a study already run on both cores
        if dead[i]:
            out[:, i] = np.nan
            continue
        k = m[i]
        for a in range(k):
            for c in range(k):
                e = y[i, a] - y[i, c]
                sy[a, c] = (e > 0.0) - (e < 0.0)
        f = fixed[i]
        for b in range(B):
            for a in range(k):
                xp[a] = x[i, perm[b, i, a]]
            s = 0
            for a in range(k - 1):
                xa = xp[a]
                for c in range(a + 1, k):
                    d = xa - xp[c]
                    s += ((d > 0.0) - (d < 0.0)) * sy[a, c]
            out[b, i] = _tau_from_counts(float(s), f[0], f[1], f[2], f[3], f[4], f[5], code,
                                         float(min_n))
    return out


# --------------------------------------------------------------------------------------------
# tau of bootstrap resamples from integer multiplicities (:mod:`.weighted` plans and calls them;
# here beside :func:`_tau_from_counts`, which numba's cache of them would not see elsewhere)
# --------------------------------------------------------------------------------------------

@njit(cache=True, boundscheck=False)
def _tau_block(gid: np.ndarray, yr: np.ndarray, n_y: int, si: np.ndarray, ii: np.ndarray,
               wsT: np.ndarray, wiT: np.ndarray, variant: int, out: np.ndarray, b0: int,
               nk: int, tree: np.ndarray, at: np.ndarray) -> None:
    """tau-b (variant 0) or tau-c (1) of the ``nk <= _LANES`` resamples ``b0, b0 + 1, ...``.

    Cells pre-sorted by (x, y); ``gid``: the rank of each cell's x (its group of equal x),
    ``yr`` that of its y; ``wsT`` / ``wiT``: (systems / items x _LANES) counts of the block's
    resamples (int32; the items' uint8 when they fit; zero columns beyond ``nk``). Group of
    equal x by group, each cell adds ``w * (weight below its y - weight above)`` over the
    earlier groups, read from a Fenwick
    tree over the y ranks whose nodes hold one count per resample of the block (``tree``;
    ``at``: the point values), then the group is inserted. A cell not drawn in a resample has
    weight 0 there and changes none of its counts. Every count is an integer, exact and
    independent of the order of summation: the integers the unweighted kernel counts on the
    repeated data, turned into tau by the same ``_tau_from_counts``. A cell's weight and the
    tree's sums are at most the resample's size, below 2**31 (the caller checks): int32, in
    small arrays of this call's own (1.3x faster than int64 rows of a shared buffer); the
    sums of products are int64.
    """
    tree[:, :] = 0
    at[:, :] = 0
    s, tx = np.zeros(_LANES, np.int64), np.zeros(_LANES, np.int64)  # S = C - D, ties in x
    ins, nxd = np.zeros(_LANES, np.int64), np.zeros(_LANES, np.int64)  # inserted, distinct x
    gw = np.zeros(_LANES, np.int64)  # weight of the group of equal x
    w, below = np.zeros(_LANES, np.int32), np.zeros(_LANES, np.int32)
    m = si.shape[0]
    i = 0
    while i < m:
        j = i
        gw[:] = 0
        g = gid[i]
        while j < m and gid[j] == g:  # query the group against the earlier groups
            r, a, b = yr[j], si[j], ii[j]
            for k in range(_LANES):
                w[k] = wsT[a, k] * np.int32(wiT[b, k])
                below[k] = 0
            q = r  # prefix sum over ranks < r (1-based tree: indices 1..r)
            while q > 0:
                for k in range(_LANES):
                    below[k] += tree[q, k]
                q -= q & (-q)
            for k in range(_LANES):  # weight below minus weight above: 2 below + at - inserted
                s[k] += np.int64(w[k]) * (2 * np.int64(below[k]) + at[r, k] - ins[k])
                gw[k] += w[k]
            j += 1
        for k in range(_LANES):
            tx[k] += gw[k] * (gw[k] - 1) // 2
            nxd[k] += gw[k] > 0
            ins[k] += gw[k]
        for c in range(i, j):  # then insert the group
            r, a, b = yr[c], si[c], ii[c]
            for k in range(_LANES):
                w[k] = wsT[a, k] * np.int32(wiT[b, k])
                at[r, k] += w[k]
            q = r + 1
            while q <= n_y:
                for k in range(_LANES):
                    tree[q, k] += w[k]
                q += q & (-q)
        i = j
    for k in range(nk):
        ty = np.int64(0)
        nyd = 0
        for r in range(n_y):
            v = np.int64(at[r, k])
            if v > 0:
                nyd += 1
                ty += v * (v - 1) // 2
        n = ins[k]  # the one formula and degenerate-input rule of every tau in nlgeval
        out[b0 + k] = _tau_from_counts(float(s[k]), float(n * (n - 1) // 2), float(tx[k]),
                                       float(ty), float(n), float(nxd[k]), float(nyd),
                                       variant, float(MIN_PAIRS))


@njit(cache=True, parallel=True)
def _taus(gid: np.ndarray, yr: np.ndarray, n_y: int, si: np.ndarray, ii: np.ndarray,
          ws: np.ndarray, wi: np.ndarray, variant: int, lanes: int) -> np.ndarray:
    """tau of every resample, in blocks of _LANES resamples; thread t takes the blocks t,
    t + lanes, ..., with one set of work buffers (none the size of the data)."""
    B = ws.shape[0]
    n_blocks = (B + _LANES - 1) // _LANES
    out = np.empty(B)
    for t in prange(lanes):
        tree, at = np.empty((n_y + 1, _LANES), np.int32), np.empty((n_y, _LANES), np.int32)
        wsT = np.empty((ws.shape[1], _LANES), np.int32)
        wiT = np.empty((wi.shape[1], _LANES), wi.dtype)  # uint8 when the counts fit
        for blk in range(t, n_blocks, lanes):
            b0 = blk * _LANES
            nk = min(_LANES, B - b0)
            wsT[:, :] = 0
            wiT[:, :] = 0
            for k in range(nk):
                wsT[:, k] = ws[b0 + k]
                wiT[:, k] = wi[b0 + k]
            _tau_block(gid, yr, n_y, si, ii, wsT, wiT, variant, out, b0, nk, tree, at)
    return out
