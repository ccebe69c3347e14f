"""PERM-BOTH swap masks, the permutation loop and the comparison result of two metrics.

The paired permutation test of Deutsch, Dror & Roth (2021, TACL): under H0 the two metrics are
exchangeable, so each cell's two scores are swapped with probability 1/2 (PERM-SYS /
PERM-INPUT: whole systems / items). p = (1 + #)/(1 + P) (Phipson & Smyth 2010). The tests
themselves are :mod:`nlgeval.correlation.permutation.compare` (correlations), the Kendall
variants' and the pairwise accuracies'; all of them build their result here.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field

import numpy as np

from nlgeval.correlation._constant import unit_scaled
from nlgeval.errors import InputError
from nlgeval.results import StatResult

ALTERNATIVES = ("two-sided", "greater", "less")


@dataclass(frozen=True)
class PermutationComparison(StatResult):
    """A paired permutation comparison of two metrics on one statistic: nlgeval's one result
    shape for "metric A agrees with humans better than metric B", returned by
    :func:`~nlgeval.correlation.permutation.permutation_test` (correlations), the
    Kendall-variant, acc_eq and pairwise-accuracy tests.

    ``statistic = statistic_a - statistic_b`` (``r_a`` / ``r_b`` are read-only aliases of
    ``statistic_a`` / ``statistic_b``, kept in ``to_dict`` as well). ``pvalue`` follows
    ``alternative``: ``"greater"`` (H1 "A is better than B", the default of every test but
    :func:`~nlgeval.correlation.permutation.permutation_test`), ``"less"`` or
    ``"two-sided"``:
    ``p = (1 + n_at_least) / (1 + K)`` over the ``K`` finite draws ``d* = draws_a - draws_b``
    (Phipson & Smyth 2010, "Permutation p-values should never be zero"), where
    ``n_at_least`` counts the draws at least as extreme as ``d`` in the direction of
    ``alternative``: ``d* >= d``, ``d* <= d`` or ``|d*| >= |d|``. MTME
    (``stats.PermutationSigDiff``, one-sided) reports ``n_at_least / K``
    (:attr:`pvalue_mtme`), which is NaN for a two-sided test. ``draws_a`` / ``draws_b`` are
    the statistic of the metric in slot A / slot B after each swap (shape ``(K,)``, left out
    of ``to_dict``); the WMT overall score (:func:`nlgeval.correlation.ranking.overall_score`)
    sums them, rescaled, across tasks. ``name`` is the statistic (``"pearson"``,
    ``"pairwise_accuracy"``, ...). ``scheme``: ``"both"``/``"cells"`` (scores swapped per
    (system, item) cell), ``"systems"``, ``"items"``, or ``"pairs"`` (MTME's
    ``perm_test='pairs'``: pairwise-comparison outcomes swapped per pair). ``variant``,
    ``grouping``, ``epsilon_a``/``epsilon_b``, ``calibrated``, ``n_groups`` and ``n_pairs``
    describe Kendall-variant tests (empty/0 otherwise).

    Examples
    --------
    >>> import numpy as np
    >>> res = comparison_from_draws(0.6, 0.4, np.array([0.5, 0.45, 0.6]),
    ...                             np.array([0.5, 0.55, 0.4]), name="pearson")
    >>> stat, p = res
    >>> round(stat, 2), p, res.n_at_least, res.pvalue_mtme, res.r_a
    (0.2, 0.5, 1, 0.3333333333333333, 0.6)
    >>> from nlgeval.correlation.permutation.compare import permutation_test
    >>> rng = np.random.default_rng(0)
    >>> H = rng.normal(size=(4, 10))
    >>> A, B = H + 0.5 * rng.normal(size=(4, 10)), rng.normal(size=(4, 10))
    >>> two = permutation_test(A, B, H, "segment", n_resamples=200, seed=0)
    >>> two.alternative, two.pvalue < 0.01, two.pvalue_mtme  # MTME's p is one-sided only
    ('two-sided', True, nan)
    """

    statistic: float
    pvalue: float
    statistic_a: float
    statistic_b: float
    permutations: int
    n_at_least: int = 0
    variant: str = ""
    grouping: str = ""
    scheme: str = "both"
    seed: int | None = 0
    epsilon_a: float = 0.0
    epsilon_b: float = 0.0
    calibrated: bool = False
    n_groups: int = 0
    n_pairs: int = 0
    note: str = ""
    draws_a: np.ndarray = field(default_factory=lambda: np.empty(0), repr=False, compare=False)
    draws_b: np.ndarray = field(default_factory=lambda: np.empty(0), repr=False, compare=False)
    name: str = ""
    alternative: str = "greater"
    # r_a / r_b: the keys of permutation_test's results and of the comparison tables
    _aliases = {"r_a": "statistic_a", "r_b": "statistic_b", "pvalue_mtme": "pvalue_mtme"}
    _omit = frozenset({"draws_a", "draws_b"})  # JSON-sized: everything but the draws

    @property
    def r_a(self) -> float:
        """``statistic_a`` under the name of the correlation tests (r of metric A)."""
        return self.statistic_a

    @property
    def r_b(self) -> float:
        """``statistic_b`` under the name of the correlation tests (r of metric B)."""
        return self.statistic_b

    @property
    def pvalue_mtme(self) -> float:
        """MTME's p-value convention, ``n_at_least / permutations`` (can be 0); NaN for a
        two-sided test, since MTME's ``PermutationSigDiff`` is one-sided."""
        if self.alternative == "two-sided" or not self.permutations:
            return math.nan
        return self.n_at_least / self.permutations


def comparison_from_draws(
    statistic_a: float,
    statistic_b: float,
    draws_a: np.ndarray,
    draws_b: np.ndarray,
    *,
    name: str = "",
    scheme: str = "both",
    seed: int | None = 0,
    note: str = "",
) -> PermutationComparison:
    """Build a :class:`PermutationComparison` (one-sided p, H1 "A better") from the draws.

    Parameters
    ----------
    statistic_a, statistic_b : float
        The observed statistics of metrics A and B.
    draws_a, draws_b : numpy.ndarray
        Their values after each swap.
    name, scheme, note : str
        The statistic's name, the swap scheme (default ``"both"``) and a note (default empty).
    seed : int or None
        The random-number seed of the masks (default 0; None for given masks).

    Returns
    -------
    PermutationComparison
        The difference ``statistic_a - statistic_b``, the one-sided p-value and the draws.

    Examples
    --------
    >>> import numpy as np
    >>> comparison_from_draws(0.7, 0.5, np.zeros(9), np.zeros(9)).pvalue
    0.1
    """
    draws_a = np.asarray(draws_a, dtype=float)
    draws_b = np.asarray(draws_b, dtype=float)
    observed = statistic_a - statistic_b
    d = draws_a - draws_b
    hits, _ = _count_at_least(observed, d, "greater")
    p = _permutation_p(observed, d, "greater")
    return PermutationComparison(float(observed), p, float(statistic_a), float(statistic_b),
                                 int(draws_a.shape[0]), n_at_least=hits, scheme=scheme,
                                 seed=seed, note=note, draws_a=draws_a, draws_b=draws_b,
                                 name=name, alternative="greater")


def standardise(X: np.ndarray) -> np.ndarray:
    """``X`` z-standardised over its finite cells (NaN stays NaN; a constant ``X`` is only
    centred), so that swapped scores share one scale before PERM-BOTH (Deutsch, Dror & Roth 2021)
    recomputes a correlation; no correlation coefficient changes under this positive affine map.

    Parameters
    ----------
    X : numpy.ndarray
        Scores, any shape, NaN for a missing cell.

    Returns
    -------
    numpy.ndarray
        ``X`` z-standardised (ddof 0) over its finite cells, same shape.

    Examples
    --------
    >>> import numpy as np
    >>> standardise(np.array([1.0, 2.0, 3.0, np.nan])).round(3).tolist()
    [-1.225, 0.0, 1.225, nan]
    """
    # scaled by a power of two first (exact): no overflow/underflow in the standard deviation
    X = unit_scaled(X, axis=None)
    v = X[np.isfinite(X)]
    sd = v.std() if v.size else 0.0
    if not np.isfinite(sd) or sd == 0:
        return X - (v.mean() if v.size else 0.0)
    return (X - v.mean()) / sd


def iter_swap_masks(
    shape: tuple[int, int],
    permutations: int,
    scheme: str = "both",
    seed: int | None = 0,
    *,
    chunk: int | None = None,
) -> Iterator[np.ndarray]:
    """(c, S, I) boolean swap masks (True = swap A and B in that cell), ``chunk`` draws at a time.

    One ``default_rng(seed)`` stream is consumed in order, so the concatenated chunks are the
    same masks as :func:`swap_masks` for any chunk size (PERM-BOTH: one coin per cell;
    PERM-SYS / PERM-INPUT: one coin per system / item, broadcast). The default chunk keeps a
    chunk near 4 million cells. Up to 16 MiB of masks (all of them) are drawn once per
    process and the seed, shape and scheme's later requests get fresh copies of them: the
    segment, system and item levels of a comparison, the criteria of a study and the
    statistics tested on the same masks share one draw, the same numbers.

    Parameters
    ----------
    shape : tuple of (int, int)
        (systems, items).
    permutations : int
        Total number of masks.
    scheme : str
        ``"both"`` (per cell, default), ``"systems"`` or ``"items"``.
    seed : int or None
        Seed of ``default_rng`` (default 0).
    chunk : int, optional
        Masks per yielded array (default: about 4 million cells).

    Returns
    -------
    Iterator of numpy.ndarray
        (c, S, I) boolean masks, c <= ``chunk``, ``permutations`` masks in all.

    Examples
    --------
    >>> [m.shape for m in iter_swap_masks((2, 3), 5, seed=0, chunk=2)]
    [(2, 2, 3), (2, 2, 3), (1, 2, 3)]
    """
    if scheme not in ("both", "systems", "items"):
        raise InputError(f"permutation scheme must be both, systems or items, got {scheme!r}")
    if permutations < 0:
        raise InputError(f"permutations must be >= 0, got {permutations}")
    S, n_items = shape
    if chunk is None:
        chunk = max(1, 4_000_000 // max(1, S * n_items))
    kept = _kept_masks((S, n_items), permutations, scheme, seed)
    if kept is not None:  # drawn before in this process: fresh copies of the same masks
        for d0 in range(0, permutations, chunk):
            m = kept[d0:min(d0 + chunk, permutations)].copy()
            yield m if scheme == "both" else np.broadcast_to(m, (m.shape[0], S, n_items))
        return
    rng = np.random.default_rng(seed)
    done = 0
    while done < permutations:
        c = min(chunk, permutations - done)
        if scheme == "both":
            yield rng.random((c, S, n_items)) < 0.5
        elif scheme == "systems":
            yield np.broadcast_to(rng.random((c, S, 1)) < 0.5, (c, S, n_items))
        else:
            yield np.broadcast_to(rng.random((c, 1, n_items)) < 0.5, (c, S, n_items))
        done += c


#: mask cells (bytes) of the swap masks kept for reuse in one process, in all (16 MiB)
_KEPT_MASK_CELLS = 1 << 24
_kept: dict[tuple, np.ndarray] = {}
_kept_lock = threading.Lock()


def _kept_masks(shape: tuple[int, int], permutations: int, scheme: str,
                seed: object) -> np.ndarray | None:
    """All ``permutations`` masks of ``default_rng(seed)`` for ``shape`` and ``scheme``, drawn
    once per process and kept (PERM-BOTH: (P, S, I) booleans; PERM-SYS / PERM-INPUT: the
    (P, S, 1) / (P, 1, I) coins), or None when they would take more than
    :data:`_KEPT_MASK_CELLS` bytes or ``seed`` is not an integer. The levels of one comparison
    (segment, system, item), the criteria of a study and the statistics tested on the same
    masks draw the same stream from the same seed: one draw serves them all. The first P
    masks of a longer draw are the P masks of a shorter one (one stream, consumed in order),
    so a longer request replaces a shorter one."""
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
        return None
    S, n_items = shape
    coins = (S, n_items) if scheme == "both" else (S, 1) if scheme == "systems" else (1, n_items)
    if permutations * coins[0] * coins[1] > _KEPT_MASK_CELLS:
        return None
    key = (S, n_items, scheme, int(seed))
    with _kept_lock:  # one draw when two threads ask at once
        got = _kept.get(key)
        if got is None or got.shape[0] < permutations:
            got = np.random.default_rng(seed).random((permutations, *coins)) < 0.5
            _kept.pop(key, None)
            while _kept and sum(v.size for v in _kept.values()) + got.size > _KEPT_MASK_CELLS:
                _kept.pop(next(iter(_kept)))  # the oldest first
            _kept[key] = got
    return got


def swap_masks(shape: tuple[int, int], permutations: int, scheme: str, seed: int) -> np.ndarray:
    """(P, S, I) boolean masks (True = swap A and B in that cell) for PERM-BOTH/SYS/INPUT.

    Parameters
    ----------
    shape : tuple of (int, int)
        (systems, items).
    permutations : int
        Number of masks.
    scheme : str
        ``"both"`` (per cell), ``"systems"`` or ``"items"``.
    seed : int
        Seed of ``default_rng``.

    Returns
    -------
    numpy.ndarray
        (permutations, S, I) boolean masks.

    Examples
    --------
    >>> swap_masks((2, 3), 4, "systems", 0).shape
    (4, 2, 3)
    """
    chunks = list(iter_swap_masks(shape, permutations, scheme, seed, chunk=max(1, permutations)))
    return np.concatenate(chunks) if chunks else np.zeros((0, *shape), dtype=bool)




def swap_draws(
    A: np.ndarray, B: np.ndarray, H: np.ndarray, mask_chunks: Iterable[np.ndarray], total: int,
    statistic: Callable[[np.ndarray, np.ndarray], np.ndarray],
) -> tuple[np.ndarray, np.ndarray]:
    """``statistic(A*, H)`` and ``statistic(B*, H)`` for every swap mask (PERM-BOTH's loop).

    ``mask_chunks`` yields (c, S, I) boolean masks (True = swap A and B in that cell; e.g.
    :func:`iter_swap_masks`), ``total`` masks in all; ``statistic`` maps a (c, S, I) stack of
    metric matrices and the matching human stack to c values. The one permutation loop of the
    package: the correlation coefficients here and the Kendall variants
    (:func:`nlgeval.correlation.kendall.kendall_permutation_test`) both use it.

    Parameters
    ----------
    A, B, H : numpy.ndarray
        Metrics A and B and the human scores, (systems x items).
    mask_chunks : Iterable[numpy.ndarray]
        (c, S, I) boolean swap masks.
    total : int
        Number of masks in all.
    statistic : Callable[[numpy.ndarray, numpy.ndarray], numpy.ndarray]
        Maps a (c, S, I) metric stack and the human stack to c values.

    Returns
    -------
    tuple of (numpy.ndarray, numpy.ndarray)
        The ``total`` values of the swapped A and of the swapped B.

    Examples
    --------
    >>> import numpy as np
    >>> A, B, H = np.zeros((1, 2)), np.ones((1, 2)), np.ones((1, 2))
    >>> masks = [np.array([[[True, False]], [[False, False]]])]
    >>> swap_draws(A, B, H, masks, 2, lambda Xs, Hs: Xs.sum(axis=(1, 2)))
    (array([1., 0.]), array([1., 2.]))
    """
    draws_a, draws_b = np.empty(total), np.empty(total)
    start = 0
    for m in mask_chunks:
        k = m.shape[0]
        pa = np.where(m, B, A)
        pb = np.where(m, A, B)
        Hs = np.ascontiguousarray(np.broadcast_to(H, pa.shape))
        draws_a[start:start + k] = statistic(pa, Hs)
        draws_b[start:start + k] = statistic(pb, Hs)
        start += k
    return draws_a, draws_b


def _count_at_least(observed: float, deltas: np.ndarray, alternative: str) -> tuple[int, int]:
    """Finite draws at least as extreme as ``observed`` towards ``alternative``, and their
    total: ``d* >= d`` ("greater"), ``d* <= d`` ("less"), ``|d*| >= |d|`` ("two-sided"), with
    a tolerance of ``1e-12 max(1, |d|)`` so that ties in exact arithmetic count. No hits when
    ``observed`` is not finite."""
    d = deltas[np.isfinite(deltas)]
    if not np.isfinite(observed):
        return 0, int(d.size)
    tol = 1e-12 * max(1.0, abs(observed))
    if alternative == "two-sided":
        hits = np.abs(d) >= abs(observed) - tol
    elif alternative == "greater":
        hits = d >= observed - tol
    else:
        hits = d <= observed + tol
    return int(hits.sum()), int(d.size)


def _permutation_p(observed: float, deltas: np.ndarray, alternative: str) -> float:
    """``(1 + n_at_least) / (1 + K)`` (Phipson & Smyth 2010); NaN when ``observed`` is."""
    if not np.isfinite(observed):
        return math.nan
    hits, total = _count_at_least(observed, deltas, alternative)
    return (1 + hits) / (1 + total)
