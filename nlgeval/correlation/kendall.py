"""Kendall's tau variants from pair counts: tau-b, tau-c, tau_23 and acc_23, on any grouping.

Deutsch, Foster & Freitag (2023), "Ties Matter: Meta-Evaluating Modern Metrics with Pairwise
Accuracy and Tie Calibration" (EMNLP), Table 1, classify every pair of outputs (i, j) by the
metric difference ``dm = m_i - m_j`` and the human difference ``dh = h_i - h_j``:

==========  =================================================================
``C``       concordant: ``|dm| > epsilon``, ``dh != 0`` and the signs agree
``D``       discordant: ``|dm| > epsilon``, ``dh != 0`` and the signs differ
``T_h``     tied in the human scores only: ``dh == 0``, ``|dm| > epsilon``
``T_m``     tied in the metric scores only: ``|dm| <= epsilon``, ``dh != 0``
``T_hm``    tied in both: ``dh == 0`` and ``|dm| <= epsilon``
``N``       all pairs, ``n (n - 1) / 2``
==========  =================================================================

(``epsilon = 0`` by default: a metric tie is then an exact tie.) The variants, exactly as
google-research/mt-metrics-eval ("MTME", ``stats.KendallVariants``) computes them:

* tau-b (Kendall 1945): ``(C - D) / sqrt((N - T_x)(N - T_y))`` with ``T_x = T_m + T_hm`` and
  ``T_y = T_h + T_hm``; NaN when all pairs are tied in either variable (as scipy).
* tau-c (Stuart 1953): ``2 (C - D) / (n^2 (k - 1) / k)``, ``k`` = the smaller number of distinct
  values; NaN as tau-b. Only for ``epsilon = 0`` (MTME: "not clear how to define minclasses").
* tau_23 (Deutsch et al. 2023, eq. 3): ``(C + T_hm - D - T_h - T_m) / N``.
* acc_23 (Deutsch et al. 2023, eq. 4; "pairwise accuracy"): ``(C + T_hm) / N``. Note
  ``tau_23 = 2 acc_23 - 1``.

Groupings (MTME's ``average_by``): ``"none"`` pools every complete (system, item) cell;
``"item"`` computes the variant within each item across systems and averages over items;
``"system"`` within each system across items, then the mean. Groups with fewer than 2 complete
cells are skipped and groups whose value is NaN are left out of the mean (MTME's
``AverageCorrelation``). A cell takes part only when both its metric and its human score are
finite.

Algorithms (written here because no library returns the five counts, nor takes an epsilon):
the counts of one vector come from sorting (Knight 1966, "A computer method for calculating
Kendall's tau with ungrouped data", JASA 61): after sorting by the metric, ``T_m`` and ``T_hm``
are two-pointer sweeps and ``C`` is a dominance count with a Fenwick tree over metric ranks,
processing the human scores in increasing order -- O(n log n) time and O(n) memory for every
epsilon (the tie predicate ``|m_i - m_j| <= epsilon`` is evaluated in floating point exactly as
written, so results equal pair-by-pair enumeration). Short vectors (the item grouping: one value
per system) use the O(n^2) enumeration, which is faster there. All loops are numba-compiled;
:func:`batch_grouped_kendall` and :func:`kendall_resample_distribution` compute the statistic
for a whole stack of resampled matrices in one call (bootstrap, permutation tests).

:func:`kendall_permutation_test` is the PERM-BOTH test (Deutsch, Dror & Roth 2021) between two
metrics for any variant and grouping.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numba import njit

from nlgeval.correlation.compare import PermutationComparison, iter_swap_masks, swap_draws
from nlgeval.errors import InputError
from nlgeval.results import Result, StatResult

VARIANTS: tuple[str, ...] = ("tau_b", "tau_c", "tau_23", "acc_23")
GROUPINGS: tuple[str, ...] = ("none", "item", "system")

_VARIANT_ALIASES = {
    "b": "tau_b", "tau_b": "tau_b", "taub": "tau_b", "kendall": "tau_b", "kendall_b": "tau_b",
    "c": "tau_c", "tau_c": "tau_c", "tauc": "tau_c", "kendall_c": "tau_c",
    "23": "tau_23", "tau_23": "tau_23", "tau23": "tau_23",
    "acc23": "acc_23", "acc_23": "acc_23", "pairwise_accuracy_23": "acc_23",
}
_VARIANT_CODE = {"tau_b": 0, "tau_c": 1, "tau_23": 2, "acc_23": 3}
_GROUPING_ALIASES = {
    "none": "none", "segment": "none", "global": "none", "pooled": "none", "flat": "none",
    "item": "item", "items": "item", "by_item": "item", "item_wise": "item", "itemwise": "item",
    "system": "system", "systems": "system", "sys": "system", "by_system": "system",
    "system_grouped": "system",
}
_GROUPING_CODE = {"none": 0, "item": 1, "system": 2}

#: groups with at most this many values are counted by enumerating their pairs (faster than
#: sorting for short vectors); longer ones by the O(n log n) sort + Fenwick tree method.
DIRECT_MAX = 40


def check_variant(name: str) -> str:
    """Canonical variant name (``tau_b``, ``tau_c``, ``tau_23``, ``acc_23``) or InputError.

    Examples
    --------
    >>> check_variant("tau_b")
    'tau_b'
    """
    key = str(name).strip().lower().replace("-", "_")
    if key not in _VARIANT_ALIASES:
        raise InputError(f"unknown Kendall variant '{name}' (use one of: {', '.join(VARIANTS)})")
    return _VARIANT_ALIASES[key]


def check_grouping(name: str) -> str:
    """Canonical grouping name (``none``, ``item``, ``system``) or InputError.

    Examples
    --------
    >>> check_grouping("item")
    'item'
    """
    key = str(name).strip().lower().replace("-", "_")
    if key not in _GROUPING_ALIASES:
        raise InputError(f"unknown grouping '{name}' (use one of: {', '.join(GROUPINGS)})")
    return _GROUPING_ALIASES[key]


def check_epsilon(epsilon: float, variant: str | None = None) -> float:
    """A valid metric-tie threshold epsilon (finite, >= 0); InputError otherwise.

    Examples
    --------
    >>> check_epsilon(0.5)
    0.5
    """
    try:
        eps = float(epsilon)
    except (TypeError, ValueError):
        raise InputError(f"epsilon must be a number >= 0, got {epsilon!r}") from None
    if not (eps >= 0 and math.isfinite(eps)):
        raise InputError(f"epsilon must be a finite number >= 0, got {epsilon!r}")
    if variant == "tau_c" and eps > 0:
        raise InputError("tau_c is only defined for epsilon = 0 (as in MTME: the number of "
                         "distinct values has no meaning once near-ties count as ties)")
    return eps


def _as_float(a: Any, name: str) -> np.ndarray:
    try:
        arr = np.asarray(a, dtype=float)
    except (TypeError, ValueError):
        raise InputError(f"{name} must contain numbers (NaN for missing)") from None
    return arr


def _check_matrices(X: Any, Y: Any, names: tuple[str, str] = ("X", "Y")) -> tuple[np.ndarray,
                                                                                   np.ndarray]:
    """(systems x items) float matrices of equal shape; a 1-D input is one system's row."""
    Xa, Ya = _as_float(X, names[0]), _as_float(Y, names[1])
    if Xa.ndim == 1:
        Xa = Xa[None, :]
    if Ya.ndim == 1:
        Ya = Ya[None, :]
    if Xa.ndim != 2 or Xa.shape != Ya.shape:
        raise InputError(f"{names[0]} and {names[1]} must be (systems x items) matrices of the "
                         f"same shape, got {np.shape(X)} and {np.shape(Y)}")
    return Xa, Ya


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
    """out[:] = C, D, T_h, T_m, T_hm, n, distinct metric values, distinct human values."""
    n = x.shape[0]
    if n <= direct_max:
        c, d, th, tm, thm = _counts_direct(x, y, eps)
    else:
        c, d, th, tm, thm = _counts_sorted(x, y, eps)
    out[0] = c
    out[1] = d
    out[2] = th
    out[3] = tm
    out[4] = thm
    out[5] = n
    if need_distinct:
        out[6] = _n_distinct_sorted(np.sort(x))
        out[7] = _n_distinct_sorted(np.sort(y))
    else:
        out[6] = 0
        out[7] = 0


@njit(cache=True)
def _stat_from_counts(c: int, d: int, th: int, tm: int, thm: int, n: int, nx: int, ny: int,
                      code: int) -> float:
    """The variant (0 tau_b, 1 tau_c, 2 tau_23, 3 acc_23) from the counts, as MTME."""
    tot = c + d + th + tm + thm
    if tot == 0:
        return np.nan
    if code <= 1:
        xtie = tm + thm
        ytie = th + thm
        if xtie == tot or ytie == tot:
            return np.nan
        if code == 0:
            return (c - d) / np.sqrt(float(tot - xtie)) / np.sqrt(float(tot - ytie))
        k = min(nx, ny)
        return 2.0 * (c - d) / (float(n) * float(n) * (k - 1) / k)
    if code == 2:
        return (c + thm - d - th - tm) / tot
    return (c + thm) / tot


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


# --------------------------------------------------------------------------------------------
# grouping into back-to-back vectors
# --------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Groups:
    """Complete cells of every group with >= 2 of them, stored back to back.

    ``x``/``y``: metric and human values; group g is ``x[off[g]:off[g + 1]]``; ``index[g]`` is
    the item (grouping "item"), system ("system") or 0 ("none") the group came from;
    ``n_skipped`` counts groups with fewer than 2 complete cells. Within a group the cells are
    in row-major order of the (systems x items) matrix.

    Examples
    --------
    >>> import numpy as np
    >>> g = build_groups(np.array([[1.0, 2.0], [3.0, 4.0]]), np.ones((2, 2)), "item")
    >>> g.sizes.tolist(), g.n_pairs.tolist()
    ([2, 2], [1, 1])
    """

    x: np.ndarray
    y: np.ndarray
    off: np.ndarray
    index: np.ndarray
    n_total: int
    n_skipped: int

    @property
    def sizes(self) -> np.ndarray:
        return np.diff(self.off)

    @property
    def n_pairs(self) -> np.ndarray:
        n = self.sizes.astype(np.int64)
        return n * (n - 1) // 2


def build_groups(X: np.ndarray, Y: np.ndarray, grouping: str) -> Groups:
    """Split the complete cells of (systems x items) matrices into the grouping's groups.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[1.0, np.nan], [3.0, 4.0]])
    >>> build_groups(X, np.ones((2, 2)), "system").sizes.tolist()  # needs 2 complete cells
    [2]
    """
    grouping = check_grouping(grouping)
    ok = np.isfinite(X) & np.isfinite(Y)
    if grouping == "item":
        Xg, Yg, okg = X.T, Y.T, ok.T
    elif grouping == "system":
        Xg, Yg, okg = X, Y, ok
    else:
        Xg, Yg, okg = X.reshape(1, -1), Y.reshape(1, -1), ok.reshape(1, -1)
    size = okg.sum(axis=1)
    keep = size >= 2
    okk = okg & keep[:, None]
    x = np.ascontiguousarray(Xg[okk], dtype=float)     # row-major: group by group
    y = np.ascontiguousarray(Yg[okk], dtype=float)
    sizes = size[keep]
    off = np.zeros(sizes.size + 1, dtype=np.int64)
    np.cumsum(sizes, out=off[1:])
    return Groups(x, y, off, np.flatnonzero(keep), int(size.size), int((~keep).sum()))


# --------------------------------------------------------------------------------------------
# results
# --------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class PairCounts(Result):
    """Pair counts of Deutsch et al. (2023, Table 1) for one pair of vectors.

    ``concordant`` (C), ``discordant`` (D), ``ties_human`` (T_h: tied in the human scores only),
    ``ties_metric`` (T_m: tied in the metric only, ``|dm| <= epsilon``), ``ties_both`` (T_hm),
    ``n_pairs`` (N = C + D + T_h + T_m + T_hm = n (n - 1) / 2), ``n`` complete values,
    ``n_distinct_metric`` / ``n_distinct_human`` (for tau-c) and the ``epsilon`` used.

    Examples
    --------
    >>> c = pair_counts([1, 2, 3, 3], [1, 2, 2, 3])
    >>> c.concordant, c.ties_human, c.ties_metric, c.n_pairs
    (4, 1, 1, 6)
    """

    concordant: int
    discordant: int
    ties_human: int
    ties_metric: int
    ties_both: int
    n_pairs: int
    n: int
    n_distinct_metric: int
    n_distinct_human: int
    epsilon: float = 0.0

    def statistic(self, variant: str) -> float:
        """The variant computed from these counts (NaN where undefined)."""
        code = _VARIANT_CODE[check_variant(variant)]
        return float(_stat_from_counts(self.concordant, self.discordant, self.ties_human,
                                       self.ties_metric, self.ties_both, self.n,
                                       self.n_distinct_metric, self.n_distinct_human, code))



def _counts_from_row(row: np.ndarray, eps: float) -> PairCounts:
    c, d, th, tm, thm, n, nx, ny = (int(v) for v in row)
    return PairCounts(c, d, th, tm, thm, c + d + th + tm + thm, n, nx, ny, eps)


@dataclass(frozen=True)
class KendallResult(StatResult):
    """One Kendall variant for one pair of vectors, with its pair counts.

    ``pvalue`` is NaN: these are descriptive statistics (compare metrics with
    :func:`kendall_permutation_test`; scipy's ``kendalltau`` gives tau-b/tau-c p-values).
    ``ci_low``/``ci_high`` are NaN (use :func:`kendall_resample_distribution` for a bootstrap).

    Examples
    --------
    >>> res = kendall_variant([1, 2, 3, 4], [1, 3, 2, 4], "tau_b")
    >>> round(res.statistic, 3), res.n, res.counts.concordant
    (0.667, 4, 5)
    """

    statistic: float
    variant: str
    epsilon: float
    counts: PairCounts
    n_missing: int = 0
    pvalue: float = math.nan
    note: str = ""
    ci_low: float = math.nan
    ci_high: float = math.nan
    _aliases = {"n": "n", "n_pairs": "n_pairs"}

    @property
    def n(self) -> int:
        """Complete (metric, human) pairs of values."""
        return self.counts.n

    @property
    def n_pairs(self) -> int:
        """Pairs of values compared (n (n - 1) / 2)."""
        return self.counts.n_pairs


@dataclass(frozen=True)
class GroupedResult(StatResult):
    """A Kendall variant under a grouping: the mean over groups whose value is defined.

    ``n_groups`` groups entered the mean, holding ``n_pairs`` pairs in all; ``n_skipped``
    groups were left out (fewer than 2 complete cells, or an undefined value such as tau-b of a
    constant vector). ``counts`` sums the pair counts over the groups in the mean (for
    ``grouping="none"`` they are the counts of the pooled vectors). ``group_values`` holds one
    value per group of the grouping (items, systems, or the single pooled group; NaN = left
    out).

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[1.0, 2.0], [2.0, 1.0], [3.0, 3.0]])
    >>> Y = np.array([[1.0, 1.0], [2.0, 2.0], [3.0, 3.0]])
    >>> res = grouped_kendall(X, Y, "tau_b", "item")
    >>> res.n_groups, round(res.statistic, 3)
    (2, 0.667)
    """

    statistic: float
    variant: str
    grouping: str
    epsilon: float
    n_groups: int
    n_pairs: int
    n_skipped: int
    counts: PairCounts
    pvalue: float = math.nan
    note: str = ""
    group_values: np.ndarray = field(default_factory=lambda: np.empty(0), repr=False,
                                     compare=False)
    ci_low: float = math.nan
    ci_high: float = math.nan
    _omit = frozenset({"group_values"})


# --------------------------------------------------------------------------------------------
# public functions
# --------------------------------------------------------------------------------------------

def pair_counts(metric: Any, human: Any, epsilon: float = 0.0) -> PairCounts:
    """C, D, T_h, T_m, T_hm and N for two paired vectors (Deutsch et al. 2023, Table 1).

    Positions where either value is NaN/infinite are dropped. A metric pair is tied when
    ``|m_i - m_j| <= epsilon``, a human pair when ``h_i == h_j``. O(n log n) time, O(n) memory.

    Examples
    --------
    >>> pair_counts([1, 2, 3], [3, 2, 1]).discordant
    3
    """
    eps = check_epsilon(epsilon)
    m = _as_float(metric, "metric").ravel()
    h = _as_float(human, "human").ravel()
    if m.shape != h.shape:
        raise InputError(f"metric and human must have the same length, got {np.size(metric)} "
                         f"and {np.size(human)}")
    ok = np.isfinite(m) & np.isfinite(h)
    out = np.zeros(8, dtype=np.int64)
    _vector_counts(np.ascontiguousarray(m[ok]), np.ascontiguousarray(h[ok]), eps, DIRECT_MAX,
                   True, out)
    return _counts_from_row(out, eps)


def kendall_variant(metric: Any, human: Any, variant: str = "tau_b", *,
                    epsilon: float = 0.0) -> KendallResult:
    """One Kendall variant (tau_b, tau_c, tau_23, acc_23) of two paired vectors.

    Equals ``scipy.stats.kendalltau(metric, human, variant="b"/"c")`` for tau_b/tau_c (scipy
    additionally clips to [-1, 1]) and MTME's ``stats.KendallVariants`` for all four.
    ``epsilon``: metric differences ``<= epsilon`` count as ties (not for tau_c).

    Examples
    --------
    >>> round(kendall_variant([1, 2, 3, 4], [1, 3, 2, 4], "tau_c").statistic, 3)
    0.667
    """
    variant = check_variant(variant)
    eps = check_epsilon(epsilon, variant)
    counts = pair_counts(metric, human, eps)
    m = _as_float(metric, "metric").ravel()
    h = _as_float(human, "human").ravel()
    n_missing = int((~(np.isfinite(m) & np.isfinite(h))).sum())
    value = counts.statistic(variant)
    note = ""
    if not np.isfinite(value):
        note = (f"{variant} undefined: fewer than 2 complete pairs of values"
                if counts.n < 2 else f"{variant} undefined: every pair is tied in one variable")
    return KendallResult(value, variant, eps, counts, n_missing, math.nan, note)


def grouped_kendall(X: Any, Y: Any, variant: str = "acc_23", grouping: str = "item", *,
                    epsilon: float = 0.0) -> GroupedResult:
    """A Kendall variant of (systems x items) matrices under a grouping, as MTME averages it.

    ``grouping="none"``: one statistic over all complete cells; ``"item"``: per item across
    systems, then the mean; ``"system"``: per system across items, then the mean. Groups with
    fewer than 2 complete cells are skipped; NaN group values are dropped from the (unweighted)
    mean, as in MTME's ``AverageCorrelation``. NaN (with a note) when no group is defined.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[1.0, 2.0], [2.0, 1.0], [3.0, 3.0]])
    >>> Y = np.array([[1.0, 1.0], [2.0, 2.0], [3.0, 3.0]])
    >>> round(grouped_kendall(X, Y, "tau_b", "none").statistic, 3)
    0.6
    """
    variant = check_variant(variant)
    grouping = check_grouping(grouping)
    eps = check_epsilon(epsilon, variant)
    Xa, Ya = _check_matrices(X, Y)
    groups = build_groups(Xa, Ya, grouping)
    counts = _csr_counts(groups.x, groups.y, groups.off, eps, DIRECT_MAX,
                         variant == "tau_c" or grouping == "none")
    code = _VARIANT_CODE[variant]
    vals = np.array([_stat_from_counts(*(int(v) for v in row), code) for row in counts],
                    dtype=float)
    defined = np.isfinite(vals)
    per_group = np.full(groups.n_total, np.nan)
    per_group[groups.index] = vals
    if defined.any():
        stat = float(np.mean(vals[defined]))
        note = ""
    else:
        stat = math.nan
        note = f"{variant} undefined in every group ({groups.n_total} group(s))"
    tot = counts[defined].sum(axis=0)
    summed = PairCounts(int(tot[0]), int(tot[1]), int(tot[2]), int(tot[3]), int(tot[4]),
                        int(tot[:5].sum()), int(tot[5]),
                        int(counts[defined, 6].max()) if defined.any() else 0,
                        int(counts[defined, 7].max()) if defined.any() else 0, eps)
    if grouping != "none":  # distinct counts are per group; sums of them mean nothing
        summed = PairCounts(summed.concordant, summed.discordant, summed.ties_human,
                            summed.ties_metric, summed.ties_both, summed.n_pairs, summed.n, 0, 0,
                            eps)
    skipped = groups.n_total - int(defined.sum())
    return GroupedResult(stat, variant, grouping, eps, int(defined.sum()), summed.n_pairs,
                         skipped, summed, math.nan, note, per_group)


def batch_grouped_kendall(X: Any, Y: Any, variant: str = "acc_23", grouping: str = "item", *,
                          epsilon: float = 0.0) -> np.ndarray:
    """The grouped variant for every matrix of a stack: ``X``, ``Y`` shaped (..., systems, items).

    Returns an array of the leading shape. One numba call for the whole stack (no per-matrix
    Python overhead); the same numbers as :func:`grouped_kendall` on each matrix (up to the
    order in which group values are summed).

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[[1.0, 2.0], [2.0, 1.0], [3.0, 3.0]]] * 2); Y = np.ones((2, 3, 2)).cumsum(1)
    >>> batch_grouped_kendall(X, Y, "tau_b", "item").round(3)
    array([0.667, 0.667])
    """
    variant = check_variant(variant)
    grouping = check_grouping(grouping)
    eps = check_epsilon(epsilon, variant)
    Xa, Ya = _as_float(X, "X"), _as_float(Y, "Y")
    if Xa.ndim < 2 or Xa.shape != Ya.shape:
        raise InputError(f"X and Y must be stacks of (systems x items) matrices of the same "
                         f"shape, got {Xa.shape} and {Ya.shape}")
    lead = Xa.shape[:-2]
    Xs = np.ascontiguousarray(Xa.reshape(-1, *Xa.shape[-2:]))
    Ys = np.ascontiguousarray(Ya.reshape(-1, *Ya.shape[-2:]))
    out = _stack_statistic(Xs, Ys, _GROUPING_CODE[grouping], _VARIANT_CODE[variant], eps,
                           DIRECT_MAX)
    return out.reshape(lead)


def kendall_resample_distribution(X: Any, Y: Any, variant: str, grouping: str,
                                  sys_idx: np.ndarray, item_idx: np.ndarray, *,
                                  epsilon: float = 0.0) -> np.ndarray:
    """The grouped variant on every resample ``X[sys_idx[b]][:, item_idx[b]]`` (bootstrap).

    ``sys_idx`` (B x systems) and ``item_idx`` (B x items) as drawn by
    :func:`nlgeval.correlation.bootstrap.resample_indices`; no (B, S, I) stack is materialised.
    A resample that draws a cell twice contains the pair (cell, copy), tied in both variables,
    exactly as the statistic of the expanded matrix.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> H = rng.normal(size=(4, 6)); M = H + rng.normal(size=(4, 6))
    >>> si, ii = rng.integers(0, 4, (5, 4)), rng.integers(0, 6, (5, 6))
    >>> kendall_resample_distribution(M, H, "tau_b", "none", si, ii).shape
    (5,)
    """
    variant = check_variant(variant)
    grouping = check_grouping(grouping)
    eps = check_epsilon(epsilon, variant)
    Xa, Ya = _check_matrices(X, Y)
    si = np.asarray(sys_idx, dtype=np.int64)
    ii = np.asarray(item_idx, dtype=np.int64)
    if si.ndim != 2 or ii.ndim != 2 or si.shape[0] != ii.shape[0]:
        raise InputError("sys_idx and item_idx must be (B x systems) and (B x items) matrices")
    if si.size and (si.min() < 0 or si.max() >= Xa.shape[0]):
        raise InputError("sys_idx holds a row index outside the matrix")
    if ii.size and (ii.min() < 0 or ii.max() >= Xa.shape[1]):
        raise InputError("item_idx holds a column index outside the matrix")
    return _indexed_statistic(np.ascontiguousarray(Xa), np.ascontiguousarray(Ya),
                              np.ascontiguousarray(si), np.ascontiguousarray(ii),
                              _GROUPING_CODE[grouping], _VARIANT_CODE[variant], eps, DIRECT_MAX)


# --------------------------------------------------------------------------------------------
# PERM-BOTH between two metrics
# --------------------------------------------------------------------------------------------

#: The paired permutation test's result: the one comparison shape of nlgeval
#: (:class:`~nlgeval.correlation.compare.PermutationComparison`), under its historical name.
PairedPermutationResult = PermutationComparison


def zscore_cells(X: np.ndarray, ok: np.ndarray) -> np.ndarray:
    """``(X - mean) / sd`` over the cells in ``ok`` (ddof 0; sd 0: centred only), NaN elsewhere.

    Examples
    --------
    >>> import numpy as np
    >>> zscore_cells(np.array([[1.0, 3.0], [5.0, 7.0]]), np.array([[True, True], [True, False]]))
    array([[-1.22474487,  0.        ],
           [ 1.22474487,         nan]])
    """
    v = X[ok]
    out = np.full(X.shape, np.nan)
    if v.size == 0:
        return out
    sd = v.std()
    out[ok] = (v - v.mean()) / sd if sd > 0 and np.isfinite(sd) else v - v.mean()
    return out


#: draws per chunk are chosen so that one chunk holds about this many cells
_CELLS_PER_CHUNK = 2_000_000


def kendall_permutation_test(
    X_a: Any,
    X_b: Any,
    Y: Any,
    variant: str = "tau_b",
    grouping: str = "none",
    *,
    epsilon: float = 0.0,
    permutations: int = 1000,
    seed: int = 0,
    masks: np.ndarray | None = None,
) -> PairedPermutationResult:
    """PERM-BOTH test of ``variant(A) > variant(B)`` under a grouping (Deutsch, Dror & Roth 2021).

    As MTME's ``PermutationSigDiff``: only cells where ``Y``, ``X_a`` and ``X_b`` are all
    finite take part; each metric is z-scored over those cells (ddof 0) so that swapped values
    share a scale; each draw swaps A and B in every (system, item) cell with probability 1/2
    (``numpy.random.default_rng(seed).random((k, systems, items)) < 0.5`` in chunks of draws --
    the same masks as :func:`nlgeval.correlation.compare.swap_masks`) and recomputes both
    statistics. ``epsilon`` therefore applies to z-scores (as in MTME). ``masks`` (K, systems,
    items) may be given instead (e.g. all 2^cells swaps of a tiny case: an exact test).
    Differences from MTME: p = (1 + #)/(1 + K) and no early stopping (MTME stops after a block
    of draws when p < 0.02 or p > 0.5).

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> H = rng.normal(size=(4, 6))
    >>> A = H + 0.1 * rng.normal(size=(4, 6))
    >>> B = rng.normal(size=(4, 6))
    >>> res = kendall_permutation_test(A, B, H, "tau_b", permutations=200, seed=1)
    >>> res.statistic > 0, res.pvalue < 0.05
    (True, True)
    """
    variant = check_variant(variant)
    grouping = check_grouping(grouping)
    eps = check_epsilon(epsilon, variant)
    Xa, Ya = _check_matrices(X_a, Y, ("X_a", "Y"))
    Xb, _ = _check_matrices(X_b, Y, ("X_b", "Y"))
    ok = np.isfinite(Xa) & np.isfinite(Xb) & np.isfinite(Ya)
    A = zscore_cells(Xa, ok)
    B = zscore_cells(Xb, ok)
    H = np.where(ok, Ya, np.nan)
    gcode, vcode = _GROUPING_CODE[grouping], _VARIANT_CODE[variant]
    obs = _stack_statistic(np.stack([A, B]), np.stack([H, H]), gcode, vcode, eps, DIRECT_MAX)
    stat_a, stat_b = float(obs[0]), float(obs[1])
    if masks is not None:
        masks = np.asarray(masks, dtype=bool)
        if masks.ndim != 3 or masks.shape[1:] != A.shape:
            raise InputError(f"masks must have shape (K, {A.shape[0]}, {A.shape[1]})")
        K = masks.shape[0]
    else:
        if int(permutations) < 1:
            raise InputError(f"permutations must be >= 1, got {permutations}")
        K = int(permutations)
    chunk = max(1, _CELLS_PER_CHUNK // max(1, A.size))
    chunks = (iter_swap_masks(A.shape, K, "both", seed, chunk=chunk) if masks is None
              else (masks[s:s + chunk] for s in range(0, K, chunk)))
    draws_a, draws_b = swap_draws(
        A, B, H, chunks, K,
        lambda Xs, Hs: _stack_statistic(Xs, Hs, gcode, vcode, eps, DIRECT_MAX))
    observed = stat_a - stat_b
    note = ""
    if np.isfinite(observed):
        tol = 1e-12 * max(1.0, abs(observed))
        d = draws_a - draws_b
        hits = int(np.count_nonzero(np.isfinite(d) & (d >= observed - tol)))
        p = (1 + hits) / (1 + K)
    else:
        hits, p = 0, math.nan
        note = f"{variant} undefined for one of the metrics"
    groups = build_groups(np.where(ok, Xa, np.nan), Ya, grouping)
    return PairedPermutationResult(
        observed, p, stat_a, stat_b, K, hits, variant, grouping, "cells", int(seed), eps, eps,
        False, int(groups.sizes.size), int(groups.n_pairs.sum()), note, draws_a, draws_b)
