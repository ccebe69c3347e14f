"""Item-level bootstrap of the rank coefficients in one compiled pass, from resample counts.

The item level of a bootstrap resample (Deutsch, Dror & Roth 2021) is the mean, over the drawn
items, of the coefficient across the drawn systems within each item. The array path of
:func:`nlgeval.correlation.bootstrap.bootstrap_distribution` gathers every resample as a
(B, S, I) stack and ranks it; here each item's coefficient is computed for a few dozen
resamples at once from how often each system was drawn, on the item's values sorted once per
call:

* **Spearman** (Spearman 1904): a group of equal values with total weight ``G`` after weight
  ``C`` holds the average rank ``C + (G + 1) / 2`` (``scipy.stats.rankdata`` of the expanded
  resample); the centred ranks, their squares and products are multiples of 1/4 and their sums
  exact, so Pearson's formula on them gives the array path's number bit for bit;
* **Kendall** tau-b (Kendall 1945) and Stuart's tau-c: C - D summed over the pairs of drawn
  systems with weight ``w_s w_t`` (a table of each item's pair signs), the pairs tied in each
  variable from its groups of equal values (``sum G (G - 1) / 2``: copies of one system are
  tied) -- the integers the unweighted kernel counts on the expanded resample -- turned into
  tau by the formula of :mod:`nlgeval.correlation.kendall.kernels`, operation for operation;

then the mean over the drawn items in their drawn order with numpy's pairwise summation
(``np.nanmean`` of a contiguous row), so the distribution equals the array path's
(``np.array_equal``; ``tests/test_item_bootstrap_equal.py`` keeps the array path as the
reference). The degenerate-input rule is nlgeval's one rule (fewer than 3 cells or a constant
variable by :data:`~nlgeval.correlation.coefficients.CONSTANT_RTOL`: NaN).

One thread: a study already runs its criteria on both cores (worker processes), where more
threads would only spin; the inner loops run over a task's resamples, which the compiler
vectorises. Two steps of the system-level bootstrap of rank coefficients live here too, for
the same reason: :func:`resampled_row_means` (the (B, S) resampled system means, with numpy's
summation order) and :func:`system_spearman_bootstrap` (Spearman of their drawn rows).
Imported only when a bootstrap of a rank coefficient asks for it (numba start-up time).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from nlgeval.correlation._counts import resample_counts
from nlgeval.correlation._numpy_sums import pairwise_sum
from nlgeval.correlation.coefficients import CONSTANT_RTOL, MIN_PAIRS

# numba cache pin: nlgeval.correlation._numpy_sums 68948fc567010a42  (see that module)

_CODES = {"spearman": 0, "kendall": 1, "kendall_c": 2}



def item_rank_bootstrap(X: np.ndarray, Y: np.ndarray, sys_idx: np.ndarray,
                        item_idx: np.ndarray, coefficient: str) -> np.ndarray:
    """Item-level Spearman / Kendall tau-b / tau-c on every resample (B,), NaN where undefined.

    ``X``, ``Y``: (systems x items), NaN = missing; ``sys_idx`` / ``item_idx``: the (B x S)
    and (B x I) index matrices of :func:`nlgeval.correlation.bootstrap.resample_indices`.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[1.0, 2.0], [2.0, 1.0], [3.0, 5.0]])
    >>> item_rank_bootstrap(X, X, np.array([[0, 1, 2]]), np.array([[0, 1]]), "spearman")
    array([1.])
    """
    valid = np.isfinite(X) & np.isfinite(Y)
    Xt, Yt = np.ascontiguousarray(X.T), np.ascontiguousarray(Y.T)
    code = _CODES[coefficient]
    pairs = _pair_signs(Xt, Yt) if code else np.zeros((1, 1, 1), dtype=np.int8)
    # resamples per task: a few dozen (the inner loops run over them), fewer for many items
    # (a task holds an (items x resamples) table); any number gives the same values
    chunk = int(max(1, min(32, 2**20 // max(1, X.shape[1]))))
    ox, sx, ex = _sorted_groups(X, valid)
    oy, sy, ey = _sorted_groups(Y, valid)
    return _item_means(Xt, Yt, ox, sx, ex, oy, sy, ey, pairs, valid.sum(axis=0).astype(np.int64),
                       np.ascontiguousarray(sys_idx, dtype=np.int64),
                       np.ascontiguousarray(item_idx, dtype=np.int64), code, chunk)


def fits(n_systems: int, n_drawn: int, n_items: int, coefficient: str) -> bool:
    """Whether :func:`item_rank_bootstrap` takes vectors of ``n_drawn`` values drawn from
    ``n_systems`` on ``n_items`` items: Spearman's sums stay exact multiples of 1/4 below
    20,000 values; Kendall's pair table ((items, systems, systems) bytes) stays below 64 MiB
    and its pairs few (at most 64 systems).

    Examples
    --------
    >>> fits(11, 11, 100, "kendall"), fits(500, 500, 11, "kendall")
    (True, False)
    """
    if coefficient == "spearman":
        return max(n_systems, n_drawn) <= 20_000
    return n_systems <= 64 and n_items * n_systems * n_systems <= 2**26


def _sorted_groups(Z: np.ndarray, valid: np.ndarray
                   ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per item: the systems in increasing order of value (valid ones first) and, for each
    position of that order, where its group of equal values starts and ends (exclusive)."""
    Zt = np.where(valid, Z, np.inf).T
    order = np.argsort(Zt, axis=1, kind="stable")
    zs = np.take_along_axis(Zt, order, axis=1)
    pos = np.arange(zs.shape[1])
    new = np.ones(zs.shape, dtype=bool)
    new[:, 1:] = zs[:, 1:] != zs[:, :-1]
    start = np.maximum.accumulate(np.where(new, pos, 0), axis=1)
    last = np.ones(zs.shape, dtype=bool)
    last[:, :-1] = new[:, 1:]
    end = np.minimum.accumulate(np.where(last, pos + 1, zs.shape[1])[:, ::-1], axis=1)[:, ::-1]
    return (np.ascontiguousarray(order, dtype=np.int64), np.ascontiguousarray(start),
            np.ascontiguousarray(end))


@njit(cache=True, error_model="numpy")
def _pair_signs(Xt: np.ndarray, Yt: np.ndarray) -> np.ndarray:  # pragma: no cover - compiled
    """Per item, +1 for a concordant pair of systems, -1 for a discordant one, 0 for a pair
    tied in either variable (the classes of ``kendall.kernels``' pair counts)."""
    n_items, S = Xt.shape
    out = np.zeros((n_items, S, S), dtype=np.int8)
    for j in range(n_items):
        for s in range(S):
            for t in range(s + 1, S):
                dx, dy = Xt[j, s] - Xt[j, t], Yt[j, s] - Yt[j, t]
                if dx != 0.0 and dy != 0.0:
                    c = 1 if (dx > 0.0) == (dy > 0.0) else -1
                    out[j, s, t] = c
                    out[j, t, s] = c
    return out


@njit(cache=True, error_model="numpy")
def _ranks(z: np.ndarray, order: np.ndarray, start: np.ndarray, end: np.ndarray, nv: int,
           W: np.ndarray, cw: np.ndarray, ranks: np.ndarray, const: np.ndarray,
           ties: np.ndarray, distinct: np.ndarray, top: np.ndarray, bottom: np.ndarray,
           code: int) -> None:  # pragma: no cover - compiled
    """One item's variable ``z`` on every resample of a chunk (``W``: (systems, resamples)
    weights), its valid systems visited in increasing order: the running weights ``cw``, the
    average rank ``C + (G + 1) / 2`` of every system (a group of total weight ``G`` after
    weight ``C``; an undrawn system gets a finite rank it never uses), the constancy rule of
    :func:`~nlgeval.correlation.coefficients.near_constant` on the drawn values, the pairs tied
    (``sum G (G - 1) / 2``) and the distinct drawn values; the ranks for Spearman (``code``
    0), the ties (and for tau-c the distinct values) for Kendall. Inner loops run over
    resamples; ``top``/``bottom``: work buffers."""
    nb = W.shape[1]
    cw[0, :] = 0.0
    top[:] = -np.inf
    bottom[:] = np.inf
    for k in range(nv):
        s, v = order[k], z[order[k]]
        for b in range(nb):
            cw[k + 1, b] = cw[k, b] + W[s, b]
            top[b] = v if W[s, b] > 0.0 else top[b]
        t = order[nv - 1 - k]
        v = z[t]
        for b in range(nb):
            bottom[b] = v if W[t, b] > 0.0 else bottom[b]
    ties[:] = 0.0
    distinct[:] = 0.0
    for k in range(nv):
        s, lo, hi = order[k], start[k], end[k]
        if code == 0:
            for b in range(nb):
                ranks[s, b] = cw[lo, b] + (cw[hi, b] - cw[lo, b] + 1.0) / 2.0
        elif lo == k:
            for b in range(nb):
                g = cw[hi, b] - cw[lo, b]
                ties[b] += g * (g - 1.0) / 2.0
                distinct[b] += 1.0 if g > 0.0 else 0.0
    for b in range(nb):
        spread = top[b] - bottom[b]
        const[b] = not (spread > CONSTANT_RTOL * max(abs(top[b]), abs(bottom[b])))


@njit(cache=True, error_model="numpy")
def _spearman(order: np.ndarray, nv: int, W: np.ndarray, rx: np.ndarray, ry: np.ndarray,
              n: np.ndarray, sums: np.ndarray, out: np.ndarray
              ) -> None:  # pragma: no cover - compiled
    """Pearson's formula of :func:`~nlgeval.correlation.coefficients.pearson_from_sums` on
    the weighted ranks, per resample. Every sum is exact (multiples of 1/4), so the order does
    not matter; the mean rank is the rank sum ``n (n + 1) / 2`` over ``n``, exactly
    ``(n + 1) / 2``, and an undrawn system adds exact zeros (weight 0, a finite rank)."""
    nb = W.shape[1]
    sums[:] = 0.0
    sxx, syy, sxy = sums[0], sums[1], sums[2]
    for k in range(nv):
        s = order[k]
        for b in range(nb):
            m = (n[b] + 1.0) / 2.0
            dx, dy = rx[s, b] - m, ry[s, b] - m
            sxx[b] += W[s, b] * (dx * dx)
            syy[b] += W[s, b] * (dy * dy)
            sxy[b] += W[s, b] * (dx * dy)
    for b in range(nb):
        cxx, cyy, cxy = sxx[b] - 0.0, syy[b] - 0.0, sxy[b] - 0.0
        r = cxy / np.sqrt(cxx * cyy)
        n1 = max(n[b], 1.0)
        bad = cxx <= 1e-10 * 1e-300 * n1 or cyy <= 1e-10 * 1e-300 * n1
        out[b] = np.nan if bad else min(max(r, -1.0), 1.0)


@njit(cache=True, error_model="numpy")
def _kendall(signs: np.ndarray, order: np.ndarray, nv: int, W: np.ndarray, n: np.ndarray,
             xtie: np.ndarray, ytie: np.ndarray, nx: np.ndarray, ny: np.ndarray, code: int,
             sd: np.ndarray, out: np.ndarray) -> None:  # pragma: no cover - compiled
    """tau-b (``code`` 1) or tau-c (2) per resample by the formula of
    ``kendall.kernels._tau_from_counts``: C - D summed over pairs of systems with weight
    ``w_s w_t`` (copies of one system are tied), the ties from the groups of equal values --
    the integers the unweighted kernel counts on the expanded resample."""
    nb = W.shape[1]
    sd[:] = 0.0
    for a in range(nv):
        s = order[a]
        for c in range(a + 1, nv):
            t = order[c]
            p = float(signs[s, t])
            if p != 0.0:
                for b in range(nb):
                    sd[b] += p * (W[s, b] * W[t, b])
    for b in range(nb):
        tot = n[b] * (n[b] - 1.0) / 2.0
        if tot - xtie[b] <= 0.0 or tot - ytie[b] <= 0.0:
            out[b] = np.nan
            continue
        if code == 1:
            tau = sd[b] / np.sqrt(tot - xtie[b]) / np.sqrt(tot - ytie[b])
        else:
            kk = min(nx[b], ny[b])
            tau = 2.0 * sd[b] / (n[b] * n[b] * (kk - 1.0) / kk)
        out[b] = min(1.0, max(-1.0, tau))


@njit(cache=True, error_model="numpy")
def _item_chunk(Xt: np.ndarray, Yt: np.ndarray, ox: np.ndarray, sx: np.ndarray,
                ex: np.ndarray, oy: np.ndarray, sy: np.ndarray, ey: np.ndarray,
                signs: np.ndarray, nvalid: np.ndarray, W: np.ndarray, code: int,
                R: np.ndarray) -> None:  # pragma: no cover - compiled
    """``R[j, b]``: the coefficient across the drawn systems of item ``j`` on every resample
    ``b`` of a chunk (``W``: (systems, resamples) weights), NaN where undefined."""
    S, nb = W.shape
    cwx, cwy = np.empty((S + 1, nb)), np.empty((S + 1, nb))
    rx, ry = np.empty((S, nb)), np.empty((S, nb))
    cx, cy = np.empty(nb, dtype=np.bool_), np.empty(nb, dtype=np.bool_)
    tx, ty, dx, dy = np.empty(nb), np.empty(nb), np.empty(nb), np.empty(nb)
    top, bottom, sums = np.empty(nb), np.empty(nb), np.empty((3, nb))
    for j in range(Xt.shape[0]):
        nv = nvalid[j]
        _ranks(Xt[j], ox[j], sx[j], ex[j], nv, W, cwx, rx, cx, tx, dx, top, bottom, code)
        _ranks(Yt[j], oy[j], sy[j], ey[j], nv, W, cwy, ry, cy, ty, dy, top, bottom, code)
        n = cwx[nv]
        if code == 0:
            _spearman(ox[j], nv, W, rx, ry, n, sums, R[j])
        else:
            _kendall(signs[min(j, signs.shape[0] - 1)], ox[j], nv, W, n, tx, ty, dx, dy,
                     code, sums[0], R[j])
        for b in range(nb):
            if cx[b] or cy[b] or not n[b] >= MIN_PAIRS:
                R[j, b] = np.nan


@njit(cache=True, error_model="numpy")
def _item_means(Xt: np.ndarray, Yt: np.ndarray, ox: np.ndarray, sx: np.ndarray,
                ex: np.ndarray, oy: np.ndarray, sy: np.ndarray, ey: np.ndarray,
                signs: np.ndarray, nvalid: np.ndarray, sys_idx: np.ndarray,
                item_idx: np.ndarray, code: int, chunk: int) -> np.ndarray:  # pragma: no cover
    """Mean over the drawn items of each resample (``np.nanmean`` of the drawn row), in
    tasks of ``chunk`` resamples."""
    B, S_draw = sys_idx.shape
    n_items, S = Xt.shape
    I_draw = item_idx.shape[1]
    out = np.empty(B)
    for c in range((B + chunk - 1) // chunk):
        b0 = c * chunk
        nb = min(B, b0 + chunk) - b0
        W = np.zeros((S, nb))
        for b in range(nb):
            for k in range(S_draw):
                W[sys_idx[b0 + b, k], b] += 1.0
        R = np.empty((n_items, nb))
        _item_chunk(Xt, Yt, ox, sx, ex, oy, sy, ey, signs, nvalid, W, code, R)
        buf = np.empty(I_draw)
        for b in range(nb):
            cnt = 0
            for i in range(I_draw):
                v = R[item_idx[b0 + b, i], b]
                if v != v:
                    buf[i] = 0.0
                else:
                    buf[i] = v
                    cnt += 1
            out[b0 + b] = (0.0 + pairwise_sum(buf, 0, I_draw)) / cnt
    return out


def system_spearman_bootstrap(mx: np.ndarray, my: np.ndarray, sys_idx: np.ndarray
                              ) -> np.ndarray:
    """System-level Spearman on every resample (B,): the resampled systems' rows of the
    (B, S) resampled system means ``mx``/``my`` (NaN = a system without complete cells),
    ranked with their multiplicities -- ``batch_correlation(mx[b, sys_idx[b]], ...)``'s
    numbers, without ranking a (B, S) batch in scipy. Each row's drawn systems are sorted by
    numpy (stable), the ranks and sums taken in one compiled pass.

    Examples
    --------
    >>> import numpy as np
    >>> m = np.array([[1.0, 2.0, 3.0, 0.5]])
    >>> system_spearman_bootstrap(m, m[:, ::-1], np.array([[0, 1, 2, 2]])).round(3)
    array([0.333])
    >>> from scipy.stats import spearmanr  # the drawn rows: systems 0, 1, 2, 2
    >>> round(float(spearmanr([1.0, 2.0, 3.0, 3.0], [0.5, 3.0, 2.0, 2.0]).statistic), 3)
    0.333
    """
    mx, my = np.asarray(mx, dtype=float), np.asarray(my, dtype=float)
    W = resample_counts(sys_idx, mx.shape[1])  # how often each system was drawn
    valid = (W > 0) & np.isfinite(mx) & np.isfinite(my)
    ox = np.argsort(np.where(valid, mx, np.inf), axis=1, kind="stable")
    oy = np.argsort(np.where(valid, my, np.inf), axis=1, kind="stable")
    return _system_spearman(np.ascontiguousarray(mx), np.ascontiguousarray(my), W,
                            np.ascontiguousarray(ox), np.ascontiguousarray(oy),
                            valid.sum(axis=1).astype(np.int64))


@njit(cache=True, error_model="numpy")
def _row_ranks(z: np.ndarray, order: np.ndarray, k: int, w: np.ndarray, ranks: np.ndarray
               ) -> float:  # pragma: no cover - compiled
    """Average ranks ``C + (G + 1) / 2`` (weights ``w``) of the systems ``order[:k]``, sorted
    by ``z``, into ``ranks``; returns the total weight."""
    c = 0.0
    i = 0
    while i < k:
        j = i
        g = 0.0
        while j < k and z[order[j]] == z[order[i]]:
            g += w[order[j]]
            j += 1
        rank = c + (g + 1.0) / 2.0
        for t in range(i, j):
            ranks[order[t]] = rank
        c += g
        i = j
    return c


@njit(cache=True, error_model="numpy")
def _system_spearman(mx: np.ndarray, my: np.ndarray, W: np.ndarray, ox: np.ndarray,
                     oy: np.ndarray, nvalid: np.ndarray) -> np.ndarray:  # pragma: no cover
    """:func:`system_spearman_bootstrap`: per resample, the drawn systems with both means
    ranked with their multiplicities, the constancy rule on their extremes, Pearson's formula
    on the ranks (exact sums, as in :func:`_spearman`)."""
    B, S = mx.shape
    out = np.empty(B)
    rx, ry = np.zeros(S), np.zeros(S)
    for b in range(B):
        k = nvalid[b]
        x, y, w = mx[b], my[b], W[b]
        n = _row_ranks(x, ox[b], k, w, rx)
        if not n >= MIN_PAIRS:
            out[b] = np.nan
            continue
        _row_ranks(y, oy[b], k, w, ry)
        xlo, xhi, ylo, yhi = x[ox[b, 0]], x[ox[b, k - 1]], y[oy[b, 0]], y[oy[b, k - 1]]
        cx = not (xhi - xlo > CONSTANT_RTOL * max(abs(xhi), abs(xlo)))
        cy = not (yhi - ylo > CONSTANT_RTOL * max(abs(yhi), abs(ylo)))
        m = (n + 1.0) / 2.0
        sxx = syy = sxy = 0.0
        for t in range(k):
            s = ox[b, t]
            dx, dy = rx[s] - m, ry[s] - m
            sxx += w[s] * (dx * dx)
            syy += w[s] * (dy * dy)
            sxy += w[s] * (dx * dy)
        r = sxy / np.sqrt(sxx * syy)
        bad = cx or cy or sxx <= 1e-10 * 1e-300 * n or syy <= 1e-10 * 1e-300 * n
        out[b] = np.nan if bad else min(max(r, -1.0), 1.0)
    return out


@njit(cache=True, error_model="numpy")
def resampled_row_means(Zz: np.ndarray, ok: np.ndarray, item_idx: np.ndarray
                        ) -> np.ndarray:  # pragma: no cover - compiled
    """(B, S): the sum of ``Zz[s, item_idx[b]]`` over the drawn items over the number of them
    where ``ok`` (NaN where 0) -- ``Zz[rows, item_idx].sum(axis=-1) / cnt`` of a gathered
    (B, S, I) stack, numpy's pairwise summation of each contiguous row replicated, so the
    same numbers, without the stack (the counts are exact small integers in any order)."""
    B, I_draw = item_idx.shape
    S = Zz.shape[0]
    out = np.empty((B, S))
    for c in range((B + 63) // 64):
        buf = np.empty(I_draw)
        for b in range(c * 64, min(B, (c + 1) * 64)):
            for s in range(S):
                cnt = 0.0
                for i in range(I_draw):
                    buf[i] = Zz[s, item_idx[b, i]]
                    cnt += 1.0 if ok[s, item_idx[b, i]] else 0.0
                tot = 0.0 + pairwise_sum(buf, 0, I_draw)
                out[b, s] = tot / cnt if cnt > 0.0 else np.nan
    return out
