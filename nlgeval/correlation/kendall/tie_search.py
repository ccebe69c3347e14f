"""The tie-calibration search: the smallest threshold maximising the grouped acc_23.

Deutsch, Foster & Freitag (2023), "Ties Matter: Meta-Evaluating Modern Metrics with Pairwise
Accuracy and Tie Calibration" (EMNLP), Section 5; the estimate and its test are in
:mod:`nlgeval.correlation.kendall.tie_calibration`. As google-research/mt-metrics-eval ("MTME",
``tau_optimization.tau_optimization`` with ``sample_rate=1``): the candidate thresholds are 0
and every distinct ``|m_i - m_j|`` over the pairs of every group; the objective is the mean over
groups (items, systems, or the single pooled group) of acc_23, with one epsilon shared by all
groups; the chosen epsilon is the smallest candidate reaching the maximum (``np.nanargmax``).

Algorithm (written here because no library does it; Knight's (1966) sort-and-count idea
applied to every candidate threshold). With weights ``w_g`` proportional to
``1 / N_g``, the objective at threshold t is ``F(t) = sum_g w_g (C_g(> t) + T_g(<= t))``:
concordant pairs whose ``|dm|`` exceeds t plus human-tied pairs whose ``|dm|`` is at most t.
As t grows, a human-tied pair raises F and a concordant one lowers it, so the first maximum is
0 or the ``|dm|`` of a human-tied pair. MTME materialises all pairs as Python objects, sorts
them and sweeps (O(P log P) for P pairs; about 30 s for 2,200 segments). Here no step stores
or visits all pairs:

1. **F at one threshold in O(n log V)** (n cells, V distinct human scores): with the cells of a
   group sorted by metric score, the pairs whose ``|dm|`` exceeds t pair every cell with a
   prefix of the cells below it (two pointers); the concordant ones among them are counted
   with a Fenwick tree over human ranks (Knight 1966). Human-tied pairs within t: two pointers
   inside each run of equal human scores. The same pass counts all pairs within t.
2. **Branch and bound over windows of thresholds.** For an open window (lo, hi) with F known
   at both ends, no threshold inside can exceed ``C(> lo) + T(< hi)`` (every concordant pair
   above lo kept, every human tie below hi gained). Windows whose bound cannot beat the best
   value found (or only equal it above the best threshold) are dropped; windows holding no
   human-tied pair are dropped. A window is split at its smallest human-tied ``|dm|`` and at a
   systematic sample of its human-tied ``|dm|`` (runs of partners found with two pointers, no
   pair stored), and F is evaluated at those thresholds (step 1).
3. **Small windows are swept exactly**, the most promising first (best-first: the window with
   the highest bound is opened next, so the best value rises early). Once a window holds at
   most ``leaf_budget`` pairs of any kind it is swept from F(lo): with few human-score classes
   by bucketed histogram passes over its human-tied and concordant pairs (cells ordered by
   human score, then metric score, so these pairs form runs found by binary search; exact F at
   every bucket end, an upper bound inside; only buckets that can hold the first maximum are
   refined, and their pairs finally sorted), otherwise by collecting the window's pairs and
   sorting them.

Cost: O(n log n) preparation, O(n log V) per evaluated threshold and, per swept window of k
pairs, O(k + n c log n) (c = classes above a cell) or O(n + k log k). How many thresholds and
windows are needed depends on the data: when the optimum is at 0 or isolated (near-continuous
human scores, few human ties), a few thresholds settle it and the search grows as n log n; when
F is flat near its maximum (many human ties balancing the concordant pairs over a range of
thresholds, as MQM data with many zero scores), the windows the bound cannot exclude cover a
region whose pair count grows faster than n (about ``P^(2/3)`` pairs if F is a smooth curve
plus random-walk noise), and the growth is between ``n^1.5`` and ``n^2``. An exact method
below O(P) in the worst case is not known to us: the objective is the difference of two
pair-distance counting functions with up to P steps, and the answer is one of those steps.
The item grouping (about 10 cells per group: P is linear in n) is a single exact sweep.
``benchmarks/bench_tie_calibration.py --growth`` measures the growth.

Ties at the maximum are decided exactly: F is weighted by ``L / N_g`` with ``L = lcm(N_g)``
whenever ``G * L < 2^53``, which makes all arithmetic integer; otherwise by ``1 / N_g`` in
floating point, windows within 1e-9 of the best value are kept, and the candidates within 1e-9
of the maximum are re-evaluated with exact rational arithmetic.
"""

from __future__ import annotations

import hashlib
import heapq
import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from nlgeval.correlation.kendall._tie_kernels import (
    _bucket_prefix,
    _point_values,
    _tc_scan,
    _tc_sweep,
    _tied_window,
    _window_pairs,
    _window_sweep,
)
from nlgeval.correlation.kendall.kernels import _csr_counts
from nlgeval.correlation.kendall.results import DIRECT_MAX, Groups

#: a window holding at most this many pairs (or ``LEAF_PER_CELL`` per cell; ``HIST_PER_CELL``
#: when the window is swept by histogram passes) is swept exactly
LEAF_BUDGET = 1 << 16
LEAF_PER_CELL = 2
HIST_PER_CELL = 128
#: windows are swept by histogram passes when a cell has at most this many human-score classes
#: at or above its own on average (each pass binary-searches every such class)
HIST_MAX_CLASSES = 32
#: histogram sweep of a window: buckets per pass, pairs collected for the final exact sweep,
#: refinement passes at most
MAX_BUCKETS = 65_536
COLLECT_BUDGET = 2_000_000
MAX_LEVELS = 12
#: a window is split at (up to) this many thresholds
ROUND_POINTS = 8
#: float mode only: candidates this close (relative to the number of groups) to the maximum
#: are re-evaluated exactly
_LOOSE = 1e-9
#: float mode only: at most this many candidates are re-evaluated exactly
_MAX_EXACT_CHECKS = 64


def group_weights(n_pairs: np.ndarray) -> tuple[np.ndarray, float, bool]:
    """Per-group weights of one pair: ``(L / N_g, L, True)`` when integer arithmetic is exact
    (``G * L < 2^53`` for ``L = lcm(N_g)``), else ``(1 / N_g, 1.0, False)``.

    Parameters
    ----------
    n_pairs : numpy.ndarray
        The number of pairs ``N_g`` of every group.

    Returns
    -------
    tuple of (numpy.ndarray, float, bool)
        The per-group weights, the common scale ``L`` and whether the weights are integers.

    Examples
    --------
    >>> import numpy as np
    >>> group_weights(np.array([3, 6, 1]))     # L = lcm(3, 6, 1) = 6
    (array([2., 1., 6.]), 6.0, True)
    """
    G = int(n_pairs.size)
    L = 1
    limit = (1 << 53) // max(G, 1)
    for v in np.unique(n_pairs):
        L = math.lcm(L, int(v))
        if L > limit:
            return 1.0 / n_pairs.astype(float), 1.0, False
    return (L // n_pairs).astype(float), float(L), True


@dataclass(frozen=True)
class _Search:
    epsilon: float
    levels: int
    collected: int
    exact: bool


def _exact_value(groups: Groups, eps: float) -> Fraction:
    counts = _csr_counts(groups.x, groups.y, groups.off, eps, DIRECT_MAX, False)
    n_pairs = groups.n_pairs
    return sum((Fraction(int(c[0] + c[4]), int(n)) for c, n in zip(counts, n_pairs,
                                                                   strict=True)), Fraction(0))


def _by_class(groups: Groups) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Metric scores re-ordered by (group, human score, metric score), with class boundaries."""
    sizes = groups.sizes
    gid = np.repeat(np.arange(sizes.size), sizes)
    order = np.lexsort((groups.x, groups.y, gid))
    x, y = groups.x[order], groups.y[order]
    new = np.ones(x.size, dtype=bool)
    new[1:] = (gid[1:] != gid[:-1]) | (y[1:] != y[:-1])
    starts = np.flatnonzero(new)
    cstart = np.append(starts, x.size).astype(np.int64)
    gcls = np.searchsorted(starts, groups.off).astype(np.int64)
    return np.ascontiguousarray(x), cstart, gcls


def calibrate_groups(
    groups: Groups,
    *,
    leaf_budget: int | None = None,
    round_points: int = ROUND_POINTS,
    leaf_sweep: str | None = None,
    integer_weights: bool = True,
) -> _Search:
    """The smallest epsilon maximising the mean acc_23 over the groups.

    ``leaf_budget`` (pairs per exactly swept window; default ``max(LEAF_BUDGET, k * cells)``
    with k = ``HIST_PER_CELL`` or ``LEAF_PER_CELL``), ``round_points`` and ``leaf_sweep``
    (``"histogram"`` or ``"sort"``; default: histogram passes when the data have few human-score
    classes) tune the search (see the module docstring) without changing its answer;
    ``integer_weights=False`` forces the floating-point weights (tests). ``levels`` of the
    result counts the windows opened, ``collected`` the pairs sorted for exact sweeps.

    Parameters
    ----------
    groups : Groups
        The complete cells by group (:func:`~nlgeval.correlation.kendall.build_groups`).
    leaf_budget : int, optional
        Pairs per exactly swept window (keyword-only, as all below).
    round_points : int, default ROUND_POINTS
        Tunes the search (see the module docstring).
    leaf_sweep : str, optional
        ``"histogram"`` or ``"sort"`` (default: chosen from the data).
    integer_weights : bool, default True
        False forces the floating-point weights (tests).

    Returns
    -------
    _Search
        ``epsilon`` (the threshold), ``levels``, ``collected`` and ``exact`` (whether the
        integer weights were used).

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[0.9, 0.81, 0.7, 0.6], [0.5, 0.8, 0.4, 0.52], [0.2, 0.3, 0.71, 0.2]])
    >>> Y = np.array([[5, 4, 4, 5], [3, 4, 3, 5], [4, 2, 4, 2]], dtype=float)  # 3 systems x 4 items
    >>> from nlgeval.correlation.kendall import build_groups
    >>> round(calibrate_groups(build_groups(X, Y, "item")).epsilon, 6)
    0.08
    """
    # remembered by content: a study calibrates the same metric for its acc_eq statistic and
    # again in every acc_eq comparison with another metric (same scores, same groups); the
    # options change the work, not the answer
    key = _content_key(groups, integer_weights)
    hit = _SEARCHES.get(key)
    if hit is None:
        hit = _calibrate(groups, leaf_budget, int(round_points), leaf_sweep, integer_weights)
        if len(_SEARCHES) >= _MAX_SEARCHES:
            del _SEARCHES[next(iter(_SEARCHES))]
        _SEARCHES[key] = hit
    return hit


#: searches remembered (a few numbers each), keyed by a digest of the groups' contents
_SEARCHES: dict[bytes, _Search] = {}
_MAX_SEARCHES = 1024


def _content_key(groups: Groups, *options: object) -> bytes:
    h = hashlib.blake2b(digest_size=20)
    for a in (groups.x, groups.y, groups.off):
        arr = np.ascontiguousarray(a)
        h.update(str((arr.dtype.str, arr.shape)).encode())
        h.update(arr.view(np.uint8).ravel().data if arr.size else b"")
    h.update(repr(options).encode())
    return h.digest()


def _calibrate(groups: Groups, leaf_budget: int | None, round_points: int,
               leaf_sweep: str | None, integer_weights: bool) -> _Search:
    G = int(groups.sizes.size)
    if G == 0:
        return _Search(math.nan, 0, 0, True)
    n_pairs = groups.n_pairs
    w, _, exact = group_weights(n_pairs)
    if not integer_weights:
        w, exact = 1.0 / n_pairs.astype(float), False
    starts = groups.off[:-1]
    spread = np.maximum.reduceat(groups.x, starts) - np.minimum.reduceat(groups.x, starts)
    dmax_all = float(spread.max())
    if not dmax_all > 0:
        return _Search(0.0, 0, 0, exact)
    lay = _Layout(groups, w)
    histogram = (lay.class_work <= HIST_MAX_CLASSES * lay.n if leaf_sweep is None
                 else leaf_sweep == "histogram")
    # automatic choice: a window is sorted unless its pairs outnumber the binary searches of a
    # histogram pass several times over (each pass visits every cell against every class)
    hist_from = max(LEAF_BUDGET, 8 * lay.class_work) if leaf_sweep is None else 0
    if leaf_budget is None:
        leaf_budget = max(LEAF_BUDGET, (HIST_PER_CELL if histogram else LEAF_PER_CELL) * lay.n)
    search = _Bound(lay, exact, 0.0 if exact else _LOOSE * G, int(leaf_budget),
                    max(1, round_points), histogram, hist_from)
    search.run(dmax_all)
    eps_all, val_all = search.candidates()
    return _choose(groups, eps_all, val_all, exact, search.tol, search.rounds,
                   search.collected)


def _intervals(lo: np.ndarray, hi: np.ndarray, nsub: np.ndarray) -> tuple[np.ndarray, ...]:
    nsub = nsub.astype(np.int64).copy()
    width = hi - lo
    with np.errstate(divide="ignore", over="ignore"):
        scale = np.where(width > 0, nsub / np.where(width > 0, width, 1.0), 0.0)
    bad = ~np.isfinite(scale)
    nsub[bad | (width <= 0)] = 1
    scale[bad | (width <= 0)] = 0.0
    base = np.zeros(nsub.size, dtype=np.int64)
    np.cumsum(nsub[:-1], out=base[1:])
    return (np.ascontiguousarray(lo, dtype=float), np.ascontiguousarray(hi, dtype=float),
            scale.astype(float), base, nsub)


def _histogram(x: np.ndarray, cstart: np.ndarray, gcls: np.ndarray, w: np.ndarray,
               iv: tuple[np.ndarray, ...]) -> tuple[np.ndarray, ...]:
    """One histogram pass (step 2): per bucket the positive and negative increments, the pair
    count and the smallest and largest ``|dm|``."""
    ilo, ihi, scale, base, nsub = iv
    nb = int(nsub.sum())
    pos, neg = np.zeros(nb), np.zeros(nb)
    cnt = np.zeros(nb, dtype=np.int64)
    dmin, dmax = np.full(nb, np.inf), np.full(nb, -np.inf)
    empty_f = np.empty(0)
    _tc_scan(x, cstart, gcls, w, ilo, ihi, scale, base, nsub, False,
             np.zeros(0, dtype=np.bool_), pos, neg, cnt, dmin, dmax, empty_f, empty_f,
             np.empty(0, dtype=np.int64))
    return pos, neg, cnt, dmin, dmax


def _collect_flagged(lay: _Layout, iv: tuple[np.ndarray, ...], flag: np.ndarray, n_flag: int,
                     s_start: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The pairs of the flagged buckets, sorted and swept exactly from each bucket's start."""
    dd, inc = np.empty(n_flag), np.empty(n_flag)
    bk = np.empty(n_flag, dtype=np.int64)
    empty_f, empty_i = np.empty(0), np.empty(0, dtype=np.int64)
    m = _tc_scan(lay.xc, lay.cstart, lay.gcls, lay.w, *iv, True, flag, empty_f,  # type: ignore[call-arg, arg-type]  # numba
                 empty_f, empty_i, empty_f, empty_f, dd, inc, bk)
    return _tc_sweep(dd[:m], inc[:m], bk[:m], s_start)


class _Layout:
    """One group's cells in the two orders the kernels need: by metric score (with dense human
    ranks) and by (human score, metric score) runs."""

    def __init__(self, groups: Groups, w: np.ndarray) -> None:
        sizes = groups.sizes
        gid = np.repeat(np.arange(sizes.size), sizes)
        order = np.lexsort((groups.y, groups.x, gid))
        self.xs = np.ascontiguousarray(groups.x[order])
        self.ys = np.ascontiguousarray(groups.y[order])
        by_y = np.lexsort((groups.y, gid))
        new = np.ones(by_y.size, dtype=bool)
        new[1:] = (gid[by_y][1:] != gid[by_y][:-1]) | (groups.y[by_y][1:] != groups.y[by_y][:-1])
        rank = np.cumsum(new) - 1
        first = rank[np.searchsorted(gid[by_y], np.arange(sizes.size))]
        local = np.empty(by_y.size, dtype=np.int64)
        local[by_y] = rank - np.repeat(first, sizes)
        self.yr = np.ascontiguousarray(local[order])
        self.vmax = int(local.max()) + 1 if local.size else 1
        self.off = np.ascontiguousarray(groups.off, dtype=np.int64)
        self.xc, self.cstart, self.gcls = _by_class(groups)
        self.w = np.ascontiguousarray(w, dtype=float)
        self.n = int(groups.x.size)
        # binary searches of a histogram pass: every cell against its class and each higher one
        csize = np.diff(self.cstart)
        cidx = np.arange(csize.size)
        above = self.gcls[np.searchsorted(self.gcls, cidx, side="right")] - cidx
        self.class_work = int(np.dot(csize, above))

    def values(self, pts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Step 1 at every threshold of ``pts`` (see :func:`_point_values`)."""
        return _point_values(self.xs, self.yr, self.off, self.vmax, self.xc, self.cstart,
                             self.gcls, self.w, np.ascontiguousarray(pts, dtype=float))


class _Bound:
    """The branch and bound of the module docstring (steps 2 and 3)."""

    def __init__(self, layout: _Layout, exact: bool, tol: float, leaf_budget: int,
                 round_points: int, histogram: bool, hist_from: int) -> None:
        self.lay, self.exact, self.tol = layout, exact, tol
        self.histogram, self.hist_from = histogram, hist_from
        self.leaf_budget, self.round_points = leaf_budget, round_points
        self.at: dict[float, tuple[float, float, float, int, int]] = {}
        self.swept: list[tuple[np.ndarray, np.ndarray]] = []
        self.best, self.eps_best = -math.inf, math.inf
        self.rounds = self.collected = 0

    def evaluate(self, pts: list[float]) -> None:
        new = sorted({p for p in pts if p not in self.at})
        if not new:
            return
        fv, iv = self.lay.values(np.array(new))
        for k, t in enumerate(new):
            self.at[t] = (float(fv[k, 0]), float(fv[k, 1]), float(fv[k, 2]), int(iv[k, 0]),
                          int(iv[k, 1]))
            self._offer(t, float(fv[k, 0]))

    def _offer(self, t: float, v: float) -> None:
        if v > self.best or (v == self.best and t < self.eps_best):
            self.best, self.eps_best = v, t

    def open(self, lo: float, hi: float) -> bool:
        """Can the open window (lo, hi) hold the first maximum?"""
        if not self.at[hi][2] > self.at[lo][1]:
            return False  # no human-tied pair inside: F only falls there
        bound = self.bound(lo, hi)
        if not self.exact:
            return bound >= self.best - self.tol
        return bound > self.best or (bound == self.best and lo < self.eps_best)

    def sweep(self, lo: float, hi: float) -> None:
        """Step 3: F at every candidate inside the window, from its pairs."""
        lay = self.lay
        cap = self.at[hi][4] - self.at[lo][3]
        if self.histogram and cap > self.hist_from:
            eps, val = self._histogram_sweep(lo, hi, cap)
        else:
            dd, inc = _window_pairs(lay.xs, lay.ys, lay.off, lay.w, lo, hi, cap)
            self.collected += int(dd.size)
            eps, val = _window_sweep(dd, inc, self.at[lo][0]) if dd.size else (dd, dd)
        if eps.size:
            self.swept.append((eps, val))
            top = float(val.max())
            self._offer(float(eps[val == top].min()), top)

    def _histogram_sweep(self, lo: float, hi: float, n_pairs: int) -> tuple[np.ndarray, np.ndarray]:
        """Step 3 by bucketed histogram passes over the window's moving pairs (few classes):
        exact values at bucket ends, an upper bound inside each bucket (start value plus its
        positive increments); only buckets that can hold the first maximum are refined, and
        collected and sorted once they hold at most ``COLLECT_BUDGET`` pairs."""
        lay = self.lay
        a, b = np.nextafter(lo, np.inf), np.nextafter(hi, -np.inf)  # the open window
        if not b >= a:
            return np.empty(0), np.empty(0)
        ilo, ihi = np.array([a]), np.array([b])
        nsub = np.array([min(MAX_BUCKETS, max(1, n_pairs // 64))])
        s_before = np.array([self.at[lo][0]])
        eps_out, val_out = [], []
        best = self.best
        for level in range(1, MAX_LEVELS + 1):
            iv = _intervals(ilo, ihi, nsub)
            base, nsub = iv[3], iv[4]
            pos, neg, cnt, dmin, dmax = _histogram(lay.xc, lay.cstart, lay.gcls, lay.w, iv)
            s_start = _bucket_prefix(pos - neg, base, nsub, s_before)
            s_end = s_start + pos - neg
            full = cnt > 0
            eps_out.append(dmax[full])
            val_out.append(s_end[full])
            if full.any():
                best = max(best, float(s_end[full].max()))
            flag = full & (pos > 0) & (dmin < dmax) & (s_start + pos >= best - self.tol)
            n_flag = int(cnt[flag].sum())
            if n_flag == 0:
                break
            if n_flag <= COLLECT_BUDGET or level == MAX_LEVELS:
                e, v = _collect_flagged(lay, iv, flag, n_flag, s_start)
                self.collected += n_flag
                eps_out.append(e)
                val_out.append(v)
                break
            ilo, ihi, s_before = dmin[flag], dmax[flag], s_start[flag]
            nsub = np.maximum(2, np.floor(cnt[flag] / n_flag * MAX_BUCKETS)).astype(np.int64)
        return np.concatenate(eps_out), np.concatenate(val_out)

    def split(self, lo: float, hi: float, n_sample: int) -> list[float]:
        """Step 2: the window's smallest human-tied |dm| and a sample of the others."""
        _, dmin, sample = _tied_window(self.lay.xc, self.lay.cstart, lo, hi, n_sample)
        return sorted({float(dmin), *(float(v) for v in sample)})

    def bound(self, lo: float, hi: float) -> float:
        """No threshold inside (lo, hi) beats ``C(> lo) + T(< hi)`` (step 2)."""
        f_lo, t_lo, _, _, _ = self.at[lo]
        return (f_lo - t_lo) + self.at[hi][2]

    def run(self, dmax: float) -> None:
        """Best-first: the open window with the highest bound is swept or split next, so the
        best value rises early and the other windows are dropped unopened."""
        self.evaluate([0.0, dmax])
        heap = [(-self.bound(0.0, dmax), 0.0, dmax)]
        while heap:
            _, lo, hi = heapq.heappop(heap)
            if not self.open(lo, hi):
                continue
            self.rounds += 1
            if self.at[hi][4] - self.at[lo][3] <= self.leaf_budget:
                self.sweep(lo, hi)
                continue
            cuts = self.split(lo, hi, self.round_points)
            self.evaluate(cuts)
            for a, b in zip([lo, *cuts], [*cuts, hi], strict=True):
                if self.open(a, b):
                    heapq.heappush(heap, (-self.bound(a, b), a, b))

    def candidates(self) -> tuple[np.ndarray, np.ndarray]:
        eps = [np.array(list(self.at)), *(e for e, _ in self.swept)]
        val = [np.array([v[0] for v in self.at.values()]), *(v for _, v in self.swept)]
        return np.concatenate(eps), np.concatenate(val)


def _choose(groups: Groups, eps_all: np.ndarray, val_all: np.ndarray, exact: bool, tol: float,
            levels: int, collected: int) -> _Search:
    """The smallest candidate at the maximum; in float mode the near-maximal candidates are
    re-evaluated with exact rational arithmetic (at most ``_MAX_EXACT_CHECKS`` of them)."""
    top = float(val_all.max())
    if exact:
        return _Search(float(eps_all[val_all == top].min()), levels, collected, True)
    near = np.unique(eps_all[val_all >= top - tol])
    if near.size <= _MAX_EXACT_CHECKS:
        exact_vals = [_exact_value(groups, float(e)) for e in near]
        vmax = max(exact_vals)
        chosen = min(float(e) for e, v in zip(near, exact_vals, strict=True) if v == vmax)
        return _Search(chosen, levels, collected, True)
    close = val_all >= top - 1e-12 * int(groups.sizes.size)
    return _Search(float(eps_all[close].min()), levels, collected, False)
