"""The tie-calibration search: the smallest threshold maximising the grouped acc_23.

Deutsch, Foster & Freitag (2023), "Ties Matter: Meta-Evaluating Modern Metrics with Pairwise
Accuracy and Tie Calibration" (EMNLP), Section 5; the estimate and its test are in
:mod:`nlgeval.correlation.tie_calibration`. As google-research/mt-metrics-eval ("MTME",
``tau_optimization.tau_optimization`` with ``sample_rate=1``): the candidate thresholds are 0
and every distinct ``|m_i - m_j|`` over the pairs of every group; the objective is the mean over
groups (items, systems, or the single pooled group) of acc_23, with one epsilon shared by all
groups; the chosen epsilon is the smallest candidate reaching the maximum (``np.nanargmax``).

Algorithm (written here because no library does it). Within a group,
``acc_23(eps) = [#{concordant, |dm| > eps} + #{human tie, |dm| <= eps}] / N``, so as eps grows
past a pair's ``|dm|`` the objective goes up by ``1 / (G N_g)`` for a human-tied pair, down by
as much for a concordant pair, and is unchanged for the others; the first candidate reaching the
maximum is 0 or the ``|dm|`` of a human-tied pair. MTME materialises all pairs as Python objects,
sorts them and sweeps in a Python loop (about 30 s for 2,200 segments). Here, without ever
storing all pairs:

1. the cells of every group are ordered by (human score, metric score): human-tied pairs are
   the pairs inside a run of equal human scores, concordant pairs pair a cell with a suffix of
   each higher run (larger metric score); discordant and metric-only pairs are never visited,
   and along a run ``|dm|`` grows, so any window of thresholds is a contiguous stretch;
2. one numba pass over those pairs builds a histogram of the increments on (up to 65,536)
   buckets of ``|dm|``, giving the exact objective at every bucket end and an upper bound
   inside each bucket (the value at its start plus all its positive increments);
3. only buckets holding human-tied pairs whose upper bound reaches the best exact value found
   can hold the first maximum; if they hold few pairs (<= 2 M) these are collected, sorted and
   swept exactly, otherwise those buckets are split into finer buckets and step 2 repeats on
   them alone (pairs outside are skipped by binary search, thanks to 1).

Time is one or two passes over the pairs plus a sort of the few pairs near the optimum; memory
is O(cells + buckets + collected pairs). Ties at the maximum are decided exactly: increments
are weighted by ``L / N_g`` with ``L = lcm(N_g)`` whenever ``G * L < 2^53``, which makes all
arithmetic integer; otherwise by ``1 / N_g`` in floating point, and the candidates within 1e-9
of the maximum are re-evaluated with exact rational arithmetic.
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from nlgeval.correlation._tie_kernels import _bucket_prefix, _tc_scan, _tc_sweep
from nlgeval.correlation.kendall import DIRECT_MAX, Groups, _csr_counts

#: buckets per histogram pass
MAX_BUCKETS = 65_536
#: collect and sort the pairs of the candidate buckets once they are at most this many
COLLECT_BUDGET = 2_000_000
#: refinement passes before collecting whatever is left
MAX_LEVELS = 12
#: float mode only: candidates this close (relative to the number of groups) to the maximum
#: are re-evaluated exactly
_LOOSE = 1e-9
#: float mode only: at most this many candidates are re-evaluated exactly
_MAX_EXACT_CHECKS = 64

def group_weights(n_pairs: np.ndarray) -> tuple[np.ndarray, float, bool]:
    """Per-group weights of one pair: ``(L / N_g, L, True)`` when integer arithmetic is exact
    (``G * L < 2^53`` for ``L = lcm(N_g)``), else ``(1 / N_g, 1.0, False)``.

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
    max_buckets: int = MAX_BUCKETS,
    budget: int = COLLECT_BUDGET,
    max_levels: int = MAX_LEVELS,
    integer_weights: bool = True,
) -> _Search:
    """The smallest epsilon maximising the mean acc_23 over the groups.

    ``max_buckets``, ``budget`` and ``max_levels`` tune the search (see the module docstring);
    ``integer_weights=False`` forces the floating-point weights (for tests).

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
    # again in every acc_eq comparison with another metric (same scores, same groups)
    key = _content_key(groups, max_buckets, budget, max_levels, integer_weights)
    hit = _SEARCHES.get(key)
    if hit is None:
        hit = _calibrate(groups, max_buckets, budget, max_levels, integer_weights)
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


def _calibrate(groups: Groups, max_buckets: int, budget: int, max_levels: int,
               integer_weights: bool) -> _Search:
    G = int(groups.sizes.size)
    if G == 0:
        return _Search(math.nan, 0, 0, True)
    n_pairs = groups.n_pairs
    w, _, exact = group_weights(n_pairs)
    if not integer_weights:
        w, exact = 1.0 / n_pairs.astype(float), False
    # objective below every threshold: all concordant pairs count; at eps = 0 add exact ties
    c0 = _csr_counts(groups.x, groups.y, groups.off, 0.0, DIRECT_MAX, False)
    a_base = float(np.dot(w, c0[:, 0].astype(float)))
    a_zero = float(np.dot(w, (c0[:, 0] + c0[:, 4]).astype(float)))
    tol = 0.0 if exact else _LOOSE * G
    starts = groups.off[:-1]
    spread = np.maximum.reduceat(groups.x, starts) - np.minimum.reduceat(groups.x, starts)
    dmax_all = float(spread.max())
    if not dmax_all > 0:
        return _Search(0.0, 0, 0, exact)
    eps_all, val_all, levels, collected = _candidates(
        groups, w, a_base, a_zero, dmax_all, tol, max_buckets, budget, max_levels)
    return _choose(groups, eps_all, val_all, exact, tol, levels, collected)


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


def _candidates(groups: Groups, w: np.ndarray, a_base: float, a_zero: float, dmax_all: float,
                tol: float, max_buckets: int, budget: int, max_levels: int
                ) -> tuple[np.ndarray, np.ndarray, int, int]:
    """Candidate thresholds and their objective values (steps 1-3 of the module docstring),
    with the number of histogram levels and of pairs collected for the exact sweep."""
    x, cstart, gcls = _by_class(groups)
    lo, hi = np.array([0.0]), np.array([dmax_all])
    nsub = np.array([int(min(max_buckets, max(1, int(groups.n_pairs.sum()) // 64)))])
    s_before = np.array([a_base])
    cand_eps, cand_val = [np.array([0.0])], [np.array([a_zero])]
    best, levels, collected = a_zero, 0, 0
    empty_f, empty_i = np.empty(0), np.empty(0, dtype=np.int64)
    while True:
        levels += 1
        iv = _intervals(lo, hi, nsub)
        _, _, _, base, nsub = iv
        pos, neg, cnt, dmin, dmax = _histogram(x, cstart, gcls, w, iv)
        s_start = _bucket_prefix(pos - neg, base, nsub, s_before)
        s_end = s_start + pos - neg
        upper = s_start + pos
        full = cnt > 0
        if full.any():
            cand_eps.append(dmax[full])
            cand_val.append(s_end[full])
            best = max(best, float(s_end[full].max()))
        # a bucket without human-tied pairs cannot hold a first-time maximum (its values are
        # at most its start value, reached at an earlier candidate)
        flag = full & (pos > 0) & (dmin < dmax) & (upper >= best - tol)
        n_flag = int(cnt[flag].sum())
        if n_flag == 0:
            break
        if n_flag <= budget or levels >= max_levels:
            dd, inc = np.empty(n_flag), np.empty(n_flag)
            bk = np.empty(n_flag, dtype=np.int64)
            m = _tc_scan(x, cstart, gcls, w, *iv, True, flag, empty_f,  # type: ignore[call-arg, arg-type]  # numba
                         empty_f, empty_i, empty_f, empty_f, dd, inc, bk)
            e, v = _tc_sweep(dd[:m], inc[:m], bk[:m], s_start)
            cand_eps.append(e)
            cand_val.append(v)
            collected = m
            break
        # refine: split every candidate bucket into sub-buckets proportional to its pairs
        lo, hi, s_before = dmin[flag], dmax[flag], s_start[flag]
        share = cnt[flag] / n_flag
        nsub = np.maximum(2, np.floor(share * max_buckets)).astype(np.int64)
    return np.concatenate(cand_eps), np.concatenate(cand_val), levels, collected


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
