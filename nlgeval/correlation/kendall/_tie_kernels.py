"""numba kernels of tie calibration (Deutsch, Foster & Freitag 2023, Section 5).

The threshold evaluations, window sampling, collection and exact sweeps of the calibration
search (:mod:`.tie_search`, whose docstring describes the algorithm), and the pair-agreement
counts of the permutation test (:func:`.tie_calibration.acc_eq_permutation_test`). Compiled
loops because the number of pairs grows with the square of the group size.
"""

from __future__ import annotations

import numpy as np
from numba import njit

# --------------------------------------------------------------------------------------------
# the search: objective at thresholds, tied pairs in a window, collection of a window's pairs
# --------------------------------------------------------------------------------------------

@njit(cache=True)
def _fenwick_add(tree: np.ndarray, r: int) -> None:
    """Count one value of rank ``r`` (0-based) in a Fenwick tree over ranks (1-based slots)."""
    k = r + 1
    while k < tree.shape[0]:
        tree[k] += 1
        k += k & (-k)


@njit(cache=True)
def _fenwick_below(tree: np.ndarray, r: int) -> int:
    """How many counted values have a rank below ``r``."""
    s = 0
    k = r
    while k > 0:
        s += tree[k]
        k -= k & (-k)
    return s


@njit(cache=True)
def _above_counts(xs: np.ndarray, yr: np.ndarray, a: int, e: int, t: float,
                  tree: np.ndarray) -> tuple[int, int, int]:
    """One group sorted by metric score (``xs[a:e]`` ascending, ``yr`` its dense human ranks):
    concordant pairs with ``x_j - x_i > t``, pairs with ``x_j - x_i > t`` and pairs with
    ``x_j - x_i >= t`` -- one sweep with a Fenwick tree over human ranks, O(n log V)."""
    tree[:] = 0
    p = a
    q = a
    conc = 0
    gt = 0
    ge = 0
    for j in range(a, e):
        xj = xs[j]
        while p < j and xj - xs[p] > t:  # x_j - x_i only grows with j: p never moves back
            _fenwick_add(tree, yr[p])
            p += 1
        while q < j and xj - xs[q] >= t:
            q += 1
        conc += _fenwick_below(tree, yr[j])
        gt += p - a
        ge += q - a
    return conc, gt, ge


@njit(cache=True)
def _tied_within(xc: np.ndarray, s: int, e: int, t: float) -> tuple[int, int]:
    """Pairs of one class (``xc[s:e]`` ascending, equal human scores) with ``x_j - x_i <= t``
    and with ``x_j - x_i < t`` (two pointers)."""
    r = s
    r2 = s
    le = 0
    lt = 0
    for j in range(s, e):
        xj = xc[j]
        while xj - xc[r] > t:
            r += 1
        while r2 < j and xj - xc[r2] >= t:
            r2 += 1
        le += j - r
        lt += j - r2
    return le, lt


@njit(cache=True)
def _point_values(xs: np.ndarray, yr: np.ndarray, goff: np.ndarray, vmax: int,
                  xc: np.ndarray, cstart: np.ndarray, gcls: np.ndarray, w: np.ndarray,
                  pts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """At every threshold ``t`` of ``pts``: the weighted objective ``F = sum_g w_g (C_g(> t) +
    T_g(<= t))`` (concordant pairs above t plus human-tied pairs within t: acc_23's numerator),
    the weighted human-tied pairs with ``|dm| <= t`` and ``< t`` (float columns 0-2), and all
    pairs with ``|dm| <= t`` and ``< t`` (int columns 0-1). O(n log V) per threshold."""
    m = pts.shape[0]
    fv = np.zeros((m, 3))
    iv = np.zeros((m, 2), dtype=np.int64)
    tree = np.zeros(vmax + 1, dtype=np.int64)
    for k in range(m):
        t = pts[k]
        for g in range(goff.shape[0] - 1):
            a = goff[g]
            e = goff[g + 1]
            n = e - a
            conc, gt, ge = _above_counts(xs, yr, a, e, t, tree[:vmax + 1])
            tle = 0
            tlt = 0
            for c in range(gcls[g], gcls[g + 1]):
                le, lt = _tied_within(xc, cstart[c], cstart[c + 1], t)
                tle += le
                tlt += lt
            wg = w[g]
            fv[k, 0] += wg * (conc + tle)
            fv[k, 1] += wg * tle
            fv[k, 2] += wg * tlt
            iv[k, 0] += n * (n - 1) // 2 - gt
            iv[k, 1] += n * (n - 1) // 2 - ge
    return fv, iv


@njit(cache=True)
def _tied_window(xc: np.ndarray, cstart: np.ndarray, lo: float, hi: float,
                 n_sample: int) -> tuple[int, float, np.ndarray]:
    """Human-tied pairs with ``lo < |dm| < hi``: how many, the smallest ``|dm|`` and the
    ``|dm|`` of ``n_sample`` of them taken at evenly spaced ranks of the enumeration (i, then
    j): a systematic sample whose sorted values split the window into parts of similar size.
    For every i of a class the partners j form one run, found with two pointers."""
    nc = cstart.shape[0] - 1
    count = 0
    dmin = np.inf
    for c in range(nc):
        s = cstart[c]
        e = cstart[c + 1]
        pa = s
        pb = s
        for i in range(s, e):
            xi = xc[i]
            if pa < i + 1:
                pa = i + 1
            while pa < e and xc[pa] - xi <= lo:
                pa += 1
            if pb < pa:
                pb = pa
            while pb < e and xc[pb] - xi < hi:
                pb += 1
            if pb > pa:
                count += pb - pa
                if xc[pa] - xi < dmin:
                    dmin = xc[pa] - xi
    n_s = min(n_sample, count)
    out = np.empty(n_s)
    if n_s == 0:
        return count, dmin, out
    seen = 0
    k = 0
    target = (count // n_s) // 2
    for c in range(nc):
        s = cstart[c]
        e = cstart[c + 1]
        pa = s
        pb = s
        for i in range(s, e):
            xi = xc[i]
            if pa < i + 1:
                pa = i + 1
            while pa < e and xc[pa] - xi <= lo:
                pa += 1
            if pb < pa:
                pb = pa
            while pb < e and xc[pb] - xi < hi:
                pb += 1
            while k < n_s and target < seen + (pb - pa):
                out[k] = xc[pa + target - seen] - xi
                k += 1
                target = (k * count) // n_s + (count // n_s) // 2
            seen += pb - pa
    return count, dmin, out[:k]


@njit(cache=True)
def _window_pairs(xs: np.ndarray, ys: np.ndarray, goff: np.ndarray, w: np.ndarray, lo: float,
                  hi: float, cap: int) -> tuple[np.ndarray, np.ndarray]:
    """Every pair with ``lo < |dm| < hi`` that moves the objective, with its ``|dm|`` and
    increment: ``+w_g`` for a human tie (it becomes a correct tie), ``-w_g`` for a concordant
    pair (it stops being concordant); discordant pairs are skipped. ``cap`` bounds the pairs in
    the window (all types)."""
    dd = np.empty(cap)
    inc = np.empty(cap)
    m = 0
    for g in range(goff.shape[0] - 1):
        a = goff[g]
        e = goff[g + 1]
        wg = w[g]
        pa = a
        for i in range(a, e):
            xi = xs[i]
            yi = ys[i]
            if pa < i + 1:
                pa = i + 1
            while pa < e and xs[pa] - xi <= lo:
                pa += 1
            j = pa
            while j < e:
                d = xs[j] - xi
                if d >= hi:
                    break
                yj = ys[j]
                if yj == yi:
                    dd[m] = d
                    inc[m] = wg
                    m += 1
                elif yj > yi:
                    dd[m] = d
                    inc[m] = -wg
                    m += 1
                j += 1
    return dd[:m], inc[:m]


@njit(cache=True)
def _window_sweep(dd: np.ndarray, inc: np.ndarray, start: float
                  ) -> tuple[np.ndarray, np.ndarray]:
    """The objective at every distinct ``|dm|`` of a window's pairs: ``start`` (its value at
    the window's lower end) plus the increments of the pairs up to that ``|dm|``."""
    order = np.argsort(dd)  # order within equal |dm| does not matter: values at run ends
    n = dd.shape[0]
    eps = np.empty(n)
    val = np.empty(n)
    m = 0
    s = start
    for t in range(n):
        p = order[t]
        s += inc[p]
        if t == n - 1 or dd[order[t + 1]] != dd[p]:
            eps[m] = dd[p]
            val[m] = s
            m += 1
    return eps[:m], val[:m]


# --------------------------------------------------------------------------------------------
# windows with few human-score classes: bucketed histogram passes over their moving pairs
# --------------------------------------------------------------------------------------------

@njit(cache=True)
def _first_at_least(x: np.ndarray, xi: float, a: int, b: int, lo: float) -> int:
    """First j in [a, b) with fl(x[j] - xi) >= lo (x[a:b] ascending); b if none."""
    while a < b:
        mid = (a + b) // 2
        if x[mid] - xi < lo:
            a = mid + 1
        else:
            b = mid
    return a


@njit(cache=True)
def _first_above(x: np.ndarray, xi: float, a: int, b: int) -> int:
    """First j in [a, b) with x[j] > xi (x[a:b] ascending); b if none."""
    while a < b:
        mid = (a + b) // 2
        if x[mid] <= xi:
            a = mid + 1
        else:
            b = mid
    return a


@njit(cache=True)
def _first_interval(d: float, ihi: np.ndarray) -> int:
    """First interval k with ihi[k] >= d (len(ihi) if none)."""
    a = 0
    b = ihi.shape[0]
    while a < b:
        mid = (a + b) // 2
        if ihi[mid] < d:
            a = mid + 1
        else:
            b = mid
    return a


@njit(cache=True)
def _run(x: np.ndarray, xi: float, j: int, e: int, v: float, ilo: np.ndarray,
         ihi: np.ndarray, scale: np.ndarray, base: np.ndarray, nsub: np.ndarray,
         collect: bool, flag: np.ndarray, pos: np.ndarray, neg: np.ndarray, cnt: np.ndarray,
         dmin: np.ndarray, dmax: np.ndarray, dd: np.ndarray, inc: np.ndarray, bk: np.ndarray,
         m: int) -> int:
    """Visit the pairs (i, j..e) -- |dm| = x[j] - xi ascending, increment v each -- whose |dm|
    falls in an interval: histogram them, or (collect) store those in flagged buckets."""
    hi_all = ihi[ihi.shape[0] - 1]
    if j >= e or x[j] - xi > hi_all:
        return m
    k = _first_interval(x[j] - xi, ihi)
    while j < e:
        d = x[j] - xi
        if d > hi_all:
            break
        while ihi[k] < d:
            k += 1
        if d < ilo[k]:  # in a gap between intervals: jump to the next interval
            j = _first_at_least(x, xi, j, e, ilo[k])
            continue
        j += 1
        t = (d - ilo[k]) * scale[k]  # monotone in d; scale is finite
        s = nsub[k] - 1
        if t < s:
            s = int(t)
        b = base[k] + s
        if collect:
            if flag[b] and m < dd.shape[0]:
                dd[m] = d
                inc[m] = v
                bk[m] = b
                m += 1
        else:
            if v > 0:
                pos[b] += v
            else:
                neg[b] -= v
            cnt[b] += 1
            if d < dmin[b]:
                dmin[b] = d
            if d > dmax[b]:
                dmax[b] = d
    return m


@njit(cache=True)
def _tc_scan(x: np.ndarray, cstart: np.ndarray, gcls: np.ndarray, w: np.ndarray,
             ilo: np.ndarray, ihi: np.ndarray, scale: np.ndarray, base: np.ndarray,
             nsub: np.ndarray, collect: bool, flag: np.ndarray, pos: np.ndarray,
             neg: np.ndarray, cnt: np.ndarray, dmin: np.ndarray, dmax: np.ndarray,
             dd: np.ndarray, inc: np.ndarray, bk: np.ndarray) -> int:
    """One pass over the pairs that move the objective, in their |dm| window.

    Groups are stored as runs of equal human score ("classes", increasing) with metric scores
    ascending inside each class; class c of group g is ``x[cstart[c]:cstart[c + 1]]`` for
    ``gcls[g] <= c < gcls[g + 1]``. Human-tied pairs are the pairs inside a class (increment
    +w); concordant pairs pair i with the members of a higher class whose metric score is
    larger (increment -w). Discordant and metric-only pairs are never visited.
    """
    m = 0
    lo_all = ilo[0]
    for g in range(gcls.shape[0] - 1):
        wg = w[g]
        c_end = gcls[g + 1]
        for c in range(gcls[g], c_end):
            e = cstart[c + 1]
            for i in range(cstart[c], e):
                xi = x[i]
                j = i + 1
                if lo_all > 0.0:
                    j = _first_at_least(x, xi, j, e, lo_all)
                m = _run(x, xi, j, e, wg, ilo, ihi, scale, base, nsub, collect, flag, pos,
                         neg, cnt, dmin, dmax, dd, inc, bk, m)
                for c2 in range(c + 1, c_end):
                    a2 = cstart[c2]
                    e2 = cstart[c2 + 1]
                    j = _first_above(x, xi, a2, e2)
                    if lo_all > 0.0:
                        j = _first_at_least(x, xi, j, e2, lo_all)
                    m = _run(x, xi, j, e2, -wg, ilo, ihi, scale, base, nsub, collect, flag,
                             pos, neg, cnt, dmin, dmax, dd, inc, bk, m)
    return m


@njit(cache=True)
def _tc_sweep(dd: np.ndarray, inc: np.ndarray, bk: np.ndarray,
              s_start: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Exact objective at every distinct |dm| of the collected pairs (sorted by |dm|)."""
    order = np.argsort(dd)
    n = dd.shape[0]
    eps = np.empty(n)
    val = np.empty(n)
    m = 0
    cur = -1
    s = 0.0
    for t in range(n):
        p = order[t]
        if bk[p] != cur:
            cur = bk[p]
            s = s_start[cur]
        s += inc[p]
        if t == n - 1 or dd[order[t + 1]] != dd[p]:
            eps[m] = dd[p]
            val[m] = s
            m += 1
    return eps[:m], val[:m]


@njit(cache=True)
def _bucket_prefix(net: np.ndarray, base: np.ndarray, nsub: np.ndarray,
                   s_before: np.ndarray) -> np.ndarray:
    """Objective at the start of every bucket (exclusive prefix sums within each interval)."""
    out = np.empty(net.shape[0])
    for k in range(base.shape[0]):
        s = s_before[k]
        for b in range(base[k], base[k] + nsub[k]):
            out[b] = s
            s += net[b]
    return out


# --------------------------------------------------------------------------------------------
# the pairwise-comparison permutation test (MTME perm_test='pairs')
# --------------------------------------------------------------------------------------------

@njit(cache=True)
def _agree(dx: float, dy: float, eps: float) -> int:
    """1 if the metric comparison (ties within eps) matches the human one, else 0 (acc_23's
    numerator); arithmetic rather than branches so that the pair loops vectorise."""
    tie_m = np.int64(abs(dx) <= eps)
    tie_h = np.int64(dy == 0.0)
    same = np.int64((dx > 0.0) == (dy > 0.0))
    return tie_m * tie_h + (1 - tie_m) * (1 - tie_h) * same  # type: ignore[return-value]  # int64 in numba


@njit(cache=True)
def _agreement_counts(xa: np.ndarray, xb: np.ndarray, y: np.ndarray, off: np.ndarray,
                      eps_a: float, eps_b: float, max_size: int = 1 << 62) -> np.ndarray:
    """Per group: pairs A gets right, B gets right, only B right (n+), only A right (n-), by
    the pair loop; groups of more than ``max_size`` cells are left at 0 (counted by sorting)."""
    G = off.shape[0] - 1
    out = np.zeros((G, 4), dtype=np.int64)
    for g in range(G):
        e = off[g + 1]
        if e - off[g] > max_size:
            continue
        ka = 0
        kb = 0
        both = 0
        for i in range(off[g], e):
            xai = xa[i]
            xbi = xb[i]
            yi = y[i]
            for j in range(i + 1, e):
                dy = yi - y[j]
                a = _agree(xai - xa[j], dy, eps_a)
                b = _agree(xbi - xb[j], dy, eps_b)
                ka += a
                kb += b
                both += a * b
        out[g, 0] = ka
        out[g, 1] = kb
        out[g, 2] = kb - both
        out[g, 3] = ka - both
    return out


@njit(cache=True)
def _pair_deltas(xa: np.ndarray, xb: np.ndarray, y: np.ndarray, off: np.ndarray, eps_a: float,
                 eps_b: float, total: int) -> np.ndarray:
    """agree_B - agree_A for every pair, group by group, (i, j) with i < j in stored order."""
    out = np.empty(total, dtype=np.int8)
    m = 0
    for g in range(off.shape[0] - 1):
        e = off[g + 1]
        for i in range(off[g], e):
            for j in range(i + 1, e):
                dy = y[i] - y[j]
                out[m] = _agree(xb[i] - xb[j], dy, eps_b) - _agree(xa[i] - xa[j], dy, eps_a)
                m += 1
    return out


# --------------------------------------------------------------------------------------------
# the permutation test's draws: Binomial(n, 1/2) by numpy's inversion, from its own uniforms
# --------------------------------------------------------------------------------------------

#: largest n drawn by inversion (numpy uses inversion while n * p <= 30, BTPE above)
INVERSION_MAX_N = 60


def half_binomial_table() -> np.ndarray:
    """``px[n, x]``: the probabilities numpy's inversion sampler (``random_binomial_inversion``
    with p = q = 1/2) walks through for ``n <= INVERSION_MAX_N``, computed by the same float
    operations in the same order (``qn = exp(n log q)``, then ``px * (n - x + 1) p / (x q)``)."""
    import math

    p = q = 0.5
    px = np.zeros((INVERSION_MAX_N + 1, INVERSION_MAX_N + 2))
    for n in range(1, INVERSION_MAX_N + 1):
        px[n, 0] = math.exp(n * math.log(q))
        for x in range(1, n + 1):
            px[n, x] = ((n - x + 1) * p * px[n, x - 1]) / (x * q)
    return px


@njit(cache=True)
def half_binomial_block(n: np.ndarray, rows: int, u: np.ndarray, pos: int, px: np.ndarray,
                        out: np.ndarray) -> int:
    """``rows`` x ``len(n)`` Binomial(n, 1/2) draws in C order into ``out``, exactly as
    numpy's ``Generator.binomial(n, 0.5, size=(rows, len(n)))`` makes them from the stream of
    uniforms ``u`` (from ``pos``; n = 0 takes none, a restart past ``bound = n`` takes
    another). Returns the new position, or -1 when ``u`` runs out (a restart needed more)."""
    for r in range(rows):
        for a in range(n.size):
            m = n[a]
            if m == 0:
                out[r, a] = 0
                continue
            if pos >= u.size:
                return -1
            U = u[pos]
            pos += 1
            X = 0
            p = px[m, 0]
            while U > p:
                X += 1
                if X > m:
                    if pos >= u.size:
                        return -1
                    X = 0
                    p = px[m, 0]
                    U = u[pos]
                    pos += 1
                else:
                    U -= p
                    p = px[m, X]
            out[r, a] = X
    return pos


@njit(cache=True)
def right_bits(x: np.ndarray, y: np.ndarray, off: np.ndarray, eps: float, word_off: np.ndarray
               ) -> tuple[np.ndarray, np.ndarray]:
    """Which pairs a metric gets right (:func:`_agree`), one bit per pair in the pair loop's
    order, each group from a fresh 64-bit word (``word_off``), and how many per group: the
    metric's half of :func:`_agreement_counts`, computed once per metric."""
    G = off.shape[0] - 1
    words = np.zeros(word_off[G], dtype=np.uint64)
    right = np.zeros(G, dtype=np.int64)
    for g in range(G):
        e = off[g + 1]
        w = word_off[g]
        bit = 0
        acc = np.uint64(0)
        k = 0
        for i in range(off[g], e):
            xi = x[i]
            yi = y[i]
            for j in range(i + 1, e):
                a = _agree(xi - x[j], yi - y[j], eps)
                k += a
                acc |= np.uint64(a) << np.uint64(bit)
                bit += 1
                if bit == 64:
                    words[w] = acc
                    w += 1
                    bit = 0
                    acc = np.uint64(0)
        if bit:
            words[w] = acc
        right[g] = k
    return words, right
