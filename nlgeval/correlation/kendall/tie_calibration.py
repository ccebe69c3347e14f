"""Tie calibration: acc_eq, the pairwise accuracy of a metric with its best tie threshold.

Deutsch, Foster & Freitag (2023), "Ties Matter: Meta-Evaluating Modern Metrics with Pairwise
Accuracy and Tie Calibration" (EMNLP), Section 5: a metric rarely outputs two exactly equal
scores, while humans often do (e.g. MQM 0 for two error-free translations), so acc_23 (see
:mod:`nlgeval.correlation.kendall`) punishes metrics for never predicting a tie. Tie
calibration treats every metric difference ``|m_i - m_j| <= epsilon`` as a tie and picks the
epsilon that maximises acc_23; the maximum is ``acc_eq``. WMT23/24 rank segment-level metrics
by acc_eq with the item grouping.

As google-research/mt-metrics-eval ("MTME", ``tau_optimization.tau_optimization`` with
``sample_rate=1``): the candidate thresholds are 0 and every distinct ``|m_i - m_j|`` over the
pairs of every group; the objective is the mean over groups (items, systems, or the single
pooled group) of acc_23, with one epsilon shared by all groups; the chosen epsilon is the
smallest candidate reaching the maximum (``np.nanargmax``).

The search for that epsilon is in :mod:`nlgeval.correlation.kendall.tie_search` (its docstring
describes the algorithm), its compiled loops in ``nlgeval.correlation.kendall._tie_kernels``.

:func:`acc_eq_permutation_test` is MTME's ``perm_test='pairs'`` significance test between two
metrics (``stats.PairwisePermutationSigDiff``). How its draws are made:

Since a swap changes a group's acc_23 only through pairs where exactly one metric is right,
a draw is fully described, per group, by how many of the ``n+`` pairs only B gets right and
of the ``n-`` pairs only A gets right were swapped: independent Binomial(n+, 1/2) and
Binomial(n-, 1/2) counts. nlgeval draws those (``numpy.random.default_rng(seed)``; groups in
a canonical order, so the result does not depend on the order of systems or items) -- the
same distribution as MTME's per-pair coin flips at O(groups) cost per draw. The comparison
``draw >= observed`` is made in exact integer arithmetic where possible.
"""

from __future__ import annotations

import hashlib
import math
import warnings
from collections import OrderedDict
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import numpy as np

from nlgeval.correlation.coefficients import DegenerateInputWarning
from nlgeval.correlation.kendall._pair_agreement import both_right
from nlgeval.correlation.kendall._tie_kernels import (
    INVERSION_MAX_N,
    _agreement_counts,
    _pair_deltas,
    half_binomial_block,
    half_binomial_table,
    right_bits,
)
from nlgeval.correlation.kendall.kernels import _csr_counts
from nlgeval.correlation.kendall.results import (
    DIRECT_MAX,
    Groups,
    _check_matrices,
    build_groups,
    check_epsilon,
    check_grouping,
    check_variant,
)
from nlgeval.correlation.kendall.tie_search import calibrate_groups, group_weights
from nlgeval.correlation.permutation.draws import PermutationComparison
from nlgeval.deprecation import renamed_keyword
from nlgeval.errors import InputError
from nlgeval.results import StatResult


@dataclass(frozen=True)
class TieCalibrationResult(StatResult):
    """acc_eq (or tau_eq): the grouped acc_23 (tau_23) of a metric at threshold ``epsilon``.

    ``calibrated`` is True when ``epsilon`` was chosen on these same data -- then the statistic
    is optimistically biased (the threshold was fitted to the test set; Deutsch et al. 2023
    recommend calibrating on held-out data when there is any) and ``note`` says so.
    ``n_groups`` groups (items, systems, or 1 for no grouping) with ``n_pairs`` pairs in all
    entered the mean; ``n_skipped`` groups had fewer than 2 complete cells.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[0.9, 0.81, 0.7, 0.6], [0.5, 0.8, 0.4, 0.52], [0.2, 0.3, 0.71, 0.2]])
    >>> Y = np.array([[5, 4, 4, 5], [3, 4, 3, 5], [4, 2, 4, 2]], dtype=float)  # 3 systems x 4 items
    >>> res = acc_eq(X, Y, epsilon=0.05)
    >>> acc, p = res                            # no single-metric p-value: p is NaN
    >>> round(acc, 4), res.n_groups, res.n_pairs, res.calibrated
    (0.8333, 4, 12, False)
    >>> sorted(res.to_dict())[:4]
    ['calibrated', 'ci_high', 'ci_low', 'epsilon']
    """

    statistic: float
    epsilon: float
    grouping: str
    n_groups: int
    n_pairs: int
    calibrated: bool
    variant: str = "acc_23"
    n_skipped: int = 0
    pvalue: float = math.nan
    note: str = ""
    group_values: np.ndarray = field(default_factory=lambda: np.empty(0), repr=False)
    ci_low: float = math.nan
    ci_high: float = math.nan

    _omit = frozenset({"group_values"})


_OPTIMISTIC = ("epsilon was calibrated on these same data, so the statistic is optimistic "
               "(calibrate on a development set and pass epsilon= for an unbiased estimate)")


def _check_tc_variant(variant: str) -> str:
    v = check_variant(variant)
    if v not in ("acc_23", "tau_23"):
        raise InputError(f"tie calibration is defined for acc_23 and tau_23, not {variant!r}")
    return v


def _evaluate(groups: Groups, eps: float, variant: str, grouping: str, calibrated: bool,
              note: str) -> TieCalibrationResult:
    n_total = groups.n_total
    if groups.sizes.size == 0:
        msg = (f"acc_eq undefined: no group has 2 or more complete cells ({n_total} group(s), "
               f"grouping {grouping})")
        warnings.warn(msg, DegenerateInputWarning, stacklevel=3)
        return TieCalibrationResult(math.nan, eps if not calibrated else math.nan, grouping, 0,
                                    0, calibrated, variant, groups.n_skipped, math.nan, msg,
                                    np.full(n_total, np.nan))
    counts = _csr_counts(groups.x, groups.y, groups.off, eps, DIRECT_MAX, False)
    acc = (counts[:, 0] + counts[:, 4]) / groups.n_pairs
    vals = acc if variant == "acc_23" else 2.0 * acc - 1.0
    per_group = np.full(n_total, np.nan)
    per_group[groups.index] = vals
    return TieCalibrationResult(float(np.mean(vals)), float(eps), grouping,
                                int(groups.sizes.size), int(groups.n_pairs.sum()), calibrated,
                                variant, groups.n_skipped, math.nan, note, per_group)


def tie_calibration(X: Any, Y: Any, grouping: str = "item", *,
                    variant: str = "acc_23") -> TieCalibrationResult:
    """acc_eq with tie calibration (Deutsch, Foster & Freitag 2023, Section 5).

    ``X`` (metric) and ``Y`` (human): (systems x items) matrices, NaN = missing, both oriented
    so that higher is better. Searches every candidate threshold (0 and each distinct metric
    difference ``|m_i - m_j|`` within a group) for the one maximising the mean over groups of
    acc_23 (``variant="tau_23"``: tau_23 = 2 acc_23 - 1, same epsilon) and returns the
    smallest such epsilon with the statistic there -- MTME's
    ``KendallWithTiesOpt(..., sample_rate=1.0)``. The result is flagged ``calibrated``: it is
    optimistic (see :class:`TieCalibrationResult`).

    Parameters
    ----------
    X, Y : array-like
        Metric and human scores, (systems x items), NaN for a missing cell.
    grouping : str, default "item"
        ``segment``, ``item`` or ``system-grouped``.
    variant : str, default "acc_23"
        ``acc_23`` or ``tau_23`` (keyword-only).

    Returns
    -------
    TieCalibrationResult
        The statistic at the smallest maximising epsilon, with ``calibrated=True``.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[0.9, 0.81, 0.7, 0.6], [0.5, 0.8, 0.4, 0.52], [0.2, 0.3, 0.71, 0.2]])
    >>> Y = np.array([[5, 4, 4, 5], [3, 4, 3, 5], [4, 2, 4, 2]], dtype=float)  # 3 systems x 4 items
    >>> res = tie_calibration(X, Y)             # item grouping, as WMT23/24
    >>> round(res.statistic, 4), round(res.epsilon, 6), res.calibrated
    (0.9167, 0.08, True)
    """
    variant = _check_tc_variant(variant)
    grouping = check_grouping(grouping)
    Xa, Ya = _check_matrices(X, Y)
    groups = build_groups(Xa, Ya, grouping)
    search = calibrate_groups(groups)
    note = _OPTIMISTIC
    if not search.exact:
        note += ("; ties at the maximum decided to 1e-12 (too many near-equal candidates for "
                 "exact arithmetic)")
    return _evaluate(groups, search.epsilon, variant, grouping, True, note)


def acc_eq(X: Any, Y: Any, grouping: str = "item", epsilon: float | None = None, *,
           variant: str = "acc_23") -> TieCalibrationResult:
    """acc_eq: acc_23 at a tie threshold -- calibrated on ``X``/``Y`` when ``epsilon`` is None.

    With a fixed ``epsilon`` (e.g. calibrated on a development set with
    :func:`tie_calibration`) this is simply the grouped acc_23 with metric differences
    ``<= epsilon`` counted as ties, and ``calibrated`` is False. Without it, see
    :func:`tie_calibration`.

    Parameters
    ----------
    X, Y : array-like
        Metric and human scores, (systems x items), NaN for a missing cell.
    grouping : str, default "item"
        ``segment``, ``item`` or ``system-grouped``.
    epsilon : float, optional
        The tie threshold; None calibrates it on ``X``/``Y``.
    variant : str, default "acc_23"
        ``acc_23`` or ``tau_23`` (keyword-only).

    Returns
    -------
    TieCalibrationResult
        The statistic, epsilon, grouping, numbers of groups and pairs, and ``calibrated``.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[0.9, 0.81, 0.7, 0.6], [0.5, 0.8, 0.4, 0.52], [0.2, 0.3, 0.71, 0.2]])
    >>> Y = np.array([[5, 4, 4, 5], [3, 4, 3, 5], [4, 2, 4, 2]], dtype=float)  # 3 systems x 4 items
    >>> round(acc_eq(X, Y, epsilon=0.05).statistic, 4)   # a threshold fixed beforehand
    0.8333
    >>> round(acc_eq(X, Y).statistic, 4)                # calibrated on X, Y (optimistic)
    0.9167
    """
    if epsilon is None:
        return tie_calibration(X, Y, grouping, variant=variant)
    variant = _check_tc_variant(variant)
    grouping = check_grouping(grouping)
    eps = check_epsilon(epsilon)
    Xa, Ya = _check_matrices(X, Y)
    groups = build_groups(Xa, Ya, grouping)
    return _evaluate(groups, eps, variant, grouping, False,
                     "epsilon given by the caller (not calibrated on these data)")


# --------------------------------------------------------------------------------------------
# the pairwise-comparison permutation test (MTME perm_test='pairs')
# --------------------------------------------------------------------------------------------

def acc_eq_permutation_test(
    X_a: Any,
    X_b: Any,
    Y: Any,
    grouping: str = "item",
    *,
    n_resamples: int = 1000,
    seed: int = 0,
    epsilon_a: float | None = None,
    epsilon_b: float | None = None,
    variant: str = "acc_23",
    pair_masks: np.ndarray | None = None,
    permutations: int | None = None,
) -> PermutationComparison:
    """Is metric A's acc_eq higher than metric B's? MTME's pairwise-comparison permutation test.

    MTME (``stats.PairwisePermutationSigDiff``, used by WMT23/24 with ``perm_test='pairs'``): each
    metric's threshold is calibrated **once** on the observed data and is **not** re-calibrated per
    draw; each draw then swaps the two metrics' pairwise-comparison outcomes (metric tie within its
    epsilon / same order as humans or not) independently for every pair within every group with
    probability 1/2, and recomputes both grouped acc_23 values. No z-scoring is needed since
    outcomes, not scores, are swapped. Differences from MTME: p = (1 + #{d* >= d}) / (1 + K) (MTME:
    #/K, see ``pvalue_mtme``); no early stopping (MTME's check sits inside the large-delta branch);
    tau_23 is supported as 2 acc_23 - 1 (same p-value). Draws: module docstring.

    Parameters
    ----------
    X_a, X_b, Y : array-like
        Metrics A, B and human scores, (systems x items); only cells where all three are
        finite take part (the thresholds are calibrated on those cells).
    grouping, variant : str
        ``item`` (default), ``segment`` or ``system-grouped``; ``acc_23`` (default) or ``tau_23``.
    n_resamples, seed, permutations : int
        Draws (1000), RNG seed (0), keyword-only as below; ``permutations``: deprecated name.
    epsilon_a, epsilon_b : float, optional
        Fixed thresholds of A and B (default: calibrated once on the data).
    pair_masks : numpy.ndarray, optional
        (K, n_pairs) booleans (True = swap) instead of draws; pairs run group by group (items,
        systems or the pooled group), within a group (i, j), i < j, over its complete cells in
        row-major order.

    Returns
    -------
    PermutationComparison
        A - B, the p-value, both statistics and epsilons, the number of draws and the draws.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[0.9, 0.81, 0.7, 0.6], [0.5, 0.8, 0.4, 0.52], [0.2, 0.3, 0.71, 0.2]])
    >>> Y = np.array([[5, 4, 4, 5], [3, 4, 3, 5], [4, 2, 4, 2]], dtype=float)  # 3 systems x 4 items
    >>> res = acc_eq_permutation_test(X, X[[1, 0, 2]], Y, n_resamples=200, seed=1)
    >>> round(res.statistic_a, 4), round(res.statistic_b, 4), round(res.pvalue, 3)
    (0.9167, 0.5833, 0.09)
    """
    n_resamples = renamed_keyword(
        "acc_eq_permutation_test", "permutations", permutations, "n_resamples", n_resamples)
    variant = _check_tc_variant(variant)
    grouping = check_grouping(grouping)
    calibrated = epsilon_a is None or epsilon_b is None
    notes: list[str] = []
    (ga, eps_a, stat_a), (gb, eps_b, stat_b) = _observed_pair(
        X_a, X_b, Y, grouping, variant, (epsilon_a, epsilon_b), notes)
    G = int(ga.sizes.size)
    if pair_masks is None and (not isinstance(n_resamples, int | np.integer)
                               or n_resamples < 1):
        raise InputError(f"n_resamples must be an integer >= 1, got {n_resamples!r}")
    if G == 0:
        K = int(pair_masks.shape[0]) if pair_masks is not None else int(n_resamples)
        return PermutationComparison(
            math.nan, math.nan, stat_a, stat_b, K, 0, variant, grouping, "pairs", int(seed),
            eps_a, eps_b, calibrated, 0, 0, "no group has 2 or more complete cells",
            np.full(K, np.nan), np.full(K, np.nan))
    T, W, exact = _swap_totals(ga, gb, (eps_a, eps_b), n_resamples, seed, pair_masks)
    p, hits, draws_a, draws_b = _compared(T, W, exact, G, (stat_a, stat_b), variant)
    notes.append("thresholds fixed across draws (MTME perm_test='pairs')")
    return PermutationComparison(
        stat_a - stat_b, p, stat_a, stat_b, int(T.size), hits, variant, grouping, "pairs",
        int(seed), float(eps_a), float(eps_b), calibrated, G, int(ga.n_pairs.sum()),
        "; ".join(notes), draws_a, draws_b)


def _swap_totals(ga: Groups, gb: Groups, eps: tuple[float, float], n_resamples: int,
                 seed: int, pair_masks: np.ndarray | None) -> tuple[np.ndarray, float, bool]:
    """Weighted swap totals ``T`` of every draw (random, or the given masks), with the weights'
    common multiple ``W`` and whether the weights are exact integers."""
    w, W, exact = group_weights(ga.n_pairs)
    if pair_masks is not None:
        return _mask_totals(pair_masks, ga, gb, eps[0], eps[1], w), W, exact
    return _binomial_totals(ga, gb, eps[0], eps[1], w, int(n_resamples), seed), W, exact


def _compared(T: np.ndarray, W: float, exact: bool, G: int, observed: tuple[float, float],
              variant: str) -> tuple[float, int, np.ndarray, np.ndarray]:
    """The p-value, the draws at least as extreme and both metrics' per-draw statistics:
    ``d* - d = 2 T / (W G)``, compared with 0 (exact when the weights are integers)."""
    hits = int(np.count_nonzero(T >= (0.0 if exact else -1e-12 * G)))
    scale = 1.0 / (W * G)
    step = 2 * T * scale if variant == "tau_23" else T * scale  # tau_23 moves twice as far
    return (1 + hits) / (1 + int(T.size)), hits, observed[0] + step, observed[1] - step


def _observed_pair(
    X_a: Any, X_b: Any, Y: Any, grouping: str, variant: str,
    epsilons: tuple[float | None, float | None], notes: list[str],
) -> list[tuple[Groups, float, float]]:
    """Both metrics' groups over the cells where ``Y``, ``X_a`` and ``X_b`` are all finite,
    their thresholds (given, or calibrated once on these cells, with a note) and observed
    statistics: ``[(groups, epsilon, statistic) for A, B]``."""
    Xa, Ya = _check_matrices(X_a, Y, ("X_a", "Y"))
    Xb, _ = _check_matrices(X_b, Y, ("X_b", "Y"))
    ok = np.isfinite(Xa) & np.isfinite(Xb) & np.isfinite(Ya)
    H = np.where(ok, Ya, np.nan)
    out = []
    for X, epsilon, name in ((Xa, epsilons[0], "epsilon_a"), (Xb, epsilons[1], "epsilon_b")):
        groups = build_groups(np.where(ok, X, np.nan), H, grouping)
        eps = _threshold(epsilon, groups, name, notes)
        stat = _evaluate(groups, eps, variant, grouping, epsilon is None, "").statistic
        out.append((groups, eps, stat))
    return out


def _threshold(epsilon: float | None, groups: Groups, name: str, notes: list[str]) -> float:
    """A metric's threshold: ``epsilon`` checked, or calibrated on ``groups`` (with a note)."""
    if epsilon is None:
        eps = calibrate_groups(groups).epsilon
        notes.append(f"{name} calibrated on these data")
        return eps
    return check_epsilon(epsilon)


def _mask_totals(pair_masks: Any, ga: Groups, gb: Groups, eps_a: float, eps_b: float,
                 w: np.ndarray) -> np.ndarray:
    """Weighted swap totals ``T`` of the given pair masks (True = swap), one per mask."""
    n_pairs = ga.n_pairs
    masks = np.asarray(pair_masks, dtype=bool)
    total = int(n_pairs.sum())
    if masks.ndim != 2 or masks.shape[1] != total:
        raise InputError(f"pair_masks must have shape (K, {total})")
    delta = _pair_deltas(ga.x, gb.x, ga.y, ga.off, eps_a, eps_b, total).astype(np.int64)
    starts = np.concatenate([[0], np.cumsum(n_pairs)[:-1]])
    S = np.add.reduceat(masks.astype(np.int64) * delta, starts, axis=1)  # (K, G)
    return S.astype(float) @ w


#: groups of more cells than this count their pairs' agreement by sorting (O(n log^2 n))
SORTED_FROM = 4096


def _agreement(ga: Groups, gb: Groups, eps_a: float, eps_b: float) -> np.ndarray:
    """Per group: pairs A gets right, B gets right, only B right (n+), only A right (n-). Small
    groups by the pair loop, large ones from two acc_23 numerators and the pairs both get
    right (:func:`._pair_agreement.both_right`): the same integers. When every group is small
    and the pairs fit :data:`BITS_MAX_PAIRS`, each metric's pair outcomes are kept as bits
    (the metric meets every other metric of the study on the same pairs) and the pair loop's
    counts are read from them."""
    shared = _agreement_from_bits(ga, gb, eps_a, eps_b)
    if shared is not None:
        return shared
    out = _agreement_counts(ga.x, gb.x, ga.y, ga.off, eps_a, eps_b, SORTED_FROM)
    for g in np.flatnonzero(ga.sizes > SORTED_FROM):
        a, e = int(ga.off[g]), int(ga.off[g + 1])
        xa, xb, y = ga.x[a:e], gb.x[a:e], ga.y[a:e]
        one = np.array([0, e - a], dtype=np.int64)
        ka = _csr_counts(xa, y, one, eps_a, DIRECT_MAX, False)[0]
        kb = _csr_counts(xb, y, one, eps_b, DIRECT_MAX, False)[0]
        right_a, right_b = int(ka[0] + ka[4]), int(kb[0] + kb[4])
        both = int(both_right(xa.copy(), xb.copy(), y.copy(), eps_a, eps_b))
        out[g] = (right_a, right_b, right_b - both, right_a - both)
    return out


#: most pairs (of all groups) whose outcomes a metric keeps as bits; bytes of bits kept
BITS_MAX_PAIRS = 1 << 27
_BITS_BYTES = 64 * 2**20
_bits_cache: OrderedDict[bytes, tuple[np.ndarray, np.ndarray]] = OrderedDict()


def _agreement_from_bits(ga: Groups, gb: Groups, eps_a: float, eps_b: float
                         ) -> np.ndarray | None:
    """:func:`_agreement` from each metric's pair outcomes (:func:`._tie_kernels.right_bits`,
    remembered by content): ``both`` is the popcount of the two metrics' bits per group. None
    where the pair loop is not what :func:`_agreement` would run."""
    n_pairs = ga.n_pairs
    if (not n_pairs.size or int(ga.sizes.max()) > SORTED_FROM
            or int(n_pairs.sum()) > BITS_MAX_PAIRS):
        return None
    word_off = np.concatenate([[0], np.cumsum((n_pairs + 63) // 64)]).astype(np.int64)
    wa, ra = _metric_bits(ga, eps_a, word_off)
    wb, rb = _metric_bits(gb, eps_b, word_off)
    both = np.add.reduceat(np.bitwise_count(wa & wb).astype(np.int64), word_off[:-1])
    return np.stack([ra, rb, rb - both, ra - both], axis=1)


def _metric_bits(g: Groups, eps: float, word_off: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    h = hashlib.blake2b(digest_size=20)
    for a in (g.x, g.y, g.off, np.float64(eps)):
        h.update(np.ascontiguousarray(a).tobytes())
    key = h.digest()
    found = _bits_cache.get(key)
    if found is not None:
        _bits_cache.move_to_end(key)
        return found
    found = right_bits(g.x, g.y, g.off, float(eps), word_off)
    _bits_cache[key] = found
    while sum(w.nbytes for w, _ in _bits_cache.values()) > _BITS_BYTES:
        _bits_cache.popitem(last=False)
    return found


def _binomial_totals(ga: Groups, gb: Groups, eps_a: float, eps_b: float, w: np.ndarray,
                     K: int, seed: int) -> np.ndarray:
    """Weighted swap totals ``T`` of ``K`` random draws: per group, Binomial(n+, 1/2) minus
    Binomial(n-, 1/2) swapped pairs (see :func:`acc_eq_permutation_test`)."""
    n_pairs = ga.n_pairs
    agree = _agreement(ga, gb, eps_a, eps_b)
    # canonical group order: sort by the sufficient statistics, draw only where it matters
    key = np.lexsort((agree[:, 3], agree[:, 2], agree[:, 1], agree[:, 0], n_pairs))
    active = key[(agree[key, 2] + agree[key, 3]) > 0]
    n_plus, n_minus, w_act = agree[active, 2], agree[active, 3], w[active]
    T = _drawn_totals(n_plus, n_minus, w_act, K, seed, True)
    if T is None:
        T = _drawn_totals(n_plus, n_minus, w_act, K, seed, False)
    assert T is not None
    return T


def _drawn_totals(n_plus: np.ndarray, n_minus: np.ndarray, w: np.ndarray, K: int, seed: int,
                  compiled: bool) -> np.ndarray | None:
    """``K`` weighted totals of Binomial(n+, 1/2) - Binomial(n-, 1/2) per active group from
    ``default_rng(seed)``, in chunks of draws. ``compiled``: numpy's own inversion sampler run
    on numpy's uniforms (:func:`._tie_kernels.half_binomial_block`, the same integers, about
    4x faster) where every n is small enough for inversion; None if a rare restart of the
    sampler needs more uniforms than drawn (the caller then takes ``rng.binomial``)."""
    rng = np.random.default_rng(seed)
    T = np.zeros(K)
    if not n_plus.size:
        return T
    px = _half_binomial_px() if compiled else None
    compiled = px is not None and max(int(n_plus.max()), int(n_minus.max())) <= INVERSION_MAX_N
    if compiled:
        n_p, n_m = (np.ascontiguousarray(n, dtype=np.int64) for n in (n_plus, n_minus))
        nonzero = int(np.count_nonzero(n_p) + np.count_nonzero(n_m))
    chunk = max(1, 1_000_000 // n_plus.size)
    for start in range(0, K, chunk):
        k = min(chunk, K - start)
        if px is not None and compiled:
            u = rng.random(k * nonzero)
            plus, minus = (np.empty((k, n_plus.size), dtype=np.int64) for _ in range(2))
            pos = half_binomial_block(n_p, k, u, 0, px, plus)
            if pos < 0 or half_binomial_block(n_m, k, u, pos, px, minus) != u.size:
                return None
            S = plus - minus
        else:
            S = (rng.binomial(n_plus, 0.5, size=(k, n_plus.size))
                 - rng.binomial(n_minus, 0.5, size=(k, n_plus.size)))
        T[start:start + k] = S.astype(float) @ w
    return T


@lru_cache(maxsize=1)
def _half_binomial_px() -> np.ndarray | None:
    """The inversion table, or None if this numpy draws other integers than the compiled
    sampler (checked once on every n up to ``INVERSION_MAX_N``)."""
    px = half_binomial_table()
    n = np.tile(np.arange(INVERSION_MAX_N + 1), 3)
    want = np.random.default_rng(12345).binomial(n, 0.5, size=(20, n.size))
    got = np.empty_like(want, dtype=np.int64)
    u = np.random.default_rng(12345).random(20 * int(np.count_nonzero(n)))
    if half_binomial_block(n.astype(np.int64), 20, u, 0, px, got) != u.size:
        return None
    return px if np.array_equal(got, want) else None
