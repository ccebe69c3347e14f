"""Bootstrap confidence intervals for metric-human correlations, vectorised over resamples.

Deutsch, Dror & Roth (2021), "A Statistical Analysis of Summarization Evaluation Metrics using
Resampling Methods" (TACL 9): resample **systems**, **items** (inputs), or **both** with
replacement, recompute the correlation at the chosen level on the resampled
(systems x items) sub-matrix, and take the percentile interval of the resampled coefficients.
Resampling both is their recommended variant: it reflects that neither the systems nor the items
are the whole population.

Implementation: one seeded ``numpy.random.default_rng(seed)`` draws a (B x S) system-index
matrix (when systems are resampled) and then a (B x I) item-index matrix (the same indices as
before, so the same intervals for the same seed). No resample is gathered: a resample is a
multiset of cells, so Pearson comes from weighted sufficient statistics
(:func:`~nlgeval.correlation.coefficients.pearson_from_sums`), segment-level Spearman and
Kendall from weighted average ranks / weighted pair counts (numba kernels in
``kendall.weighted``, both cores, independent of the number of threads), item-level Spearman
and Kendall from the same weighted ranks and pair counts per (resample, drawn item) with the
mean over the drawn items in numpy's summation order (one compiled pass,
``_item_bootstrap``), and system-level rank coefficients from resampled system means (a
(B, S) batch; each matrix's means are remembered, since a study asks for the same metric's
means once per criterion and the same criterion's once per metric). The index matrices of
a (shape, scheme, seed) are drawn once and handed out as copies; the resample counts of a
bootstrap (:func:`count_chunks`, small integers) and its resampled system means are kept too,
so the other metrics and coefficients of a study (same shape and seed) neither draw nor count
the indices again. Every path is linear in B
and in the number of cells, and memory does not grow with B: a large bootstrap draws its item
indices in chunks of rows (the same indices as one draw), Pearson's matrix products take
fixed blocks of 32 resamples (so the coefficients do not depend on the chunking), and the
compiled kernels hold one task's resamples at a time (Kendall on vectors of more than 64
systems gathers (B, S, I) stacks in chunks of B instead).
``benchmarks/bench_correlation.py`` and ``benchmarks/bench_validate.py`` check the intervals
against a scipy loop over the same resamples and print the speed ratios.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Literal

import numpy as np

from nlgeval.correlation._pearson_counts import pearson_counts_plan
from nlgeval.correlation._resampled_means import (
    _CELLS_PER_CHUNK,
    _MEANS_CACHE_BYTES,
    DRAW_CELLS,
    PEARSON_BLOCK,
    _digest,
    _resampled_system_means,
    index_chunks,
)
from nlgeval.correlation._resampled_means import _MEANS_CACHE as _MEANS_CACHE
from nlgeval.correlation._resampled_means import resample_counts as resample_counts
from nlgeval.correlation.coefficients import (
    DegenerateInputWarning,
    batch_correlation,
    check_coefficient,
)
from nlgeval.correlation.levels import check_level, level_statistic
from nlgeval.deprecation import renamed_keyword
from nlgeval.errors import InputError
from nlgeval.results import ConfidenceInterval, StatResult

Resample = Literal["systems", "items", "both"]
RESAMPLE_SCHEMES: tuple[str, ...] = ("systems", "items", "both")



def check_resample(name: str) -> str:
    """The canonical resampling scheme: systems, items or both (system, item, inputs accepted).

    Examples
    --------
    >>> check_resample("inputs")
    'items'
    """
    key = name.strip().lower()
    key = {"system": "systems", "item": "items", "inputs": "items", "input": "items"}.get(key, key)
    if key not in RESAMPLE_SCHEMES:
        raise InputError(
            f"unknown resampling scheme '{name}' (use one of: {', '.join(RESAMPLE_SCHEMES)})"
        )
    return key


def resample_indices(
    n_systems: int, n_items: int, resamples: int, resample: str, seed: int
) -> tuple[np.ndarray, np.ndarray]:
    """The (B x S) system and (B x I) item index matrices of a bootstrap.

    Drawn from ``numpy.random.default_rng(seed)``: systems first (if resampled), then items
    (if resampled); an axis that is not resampled keeps the identity index in every row.

    Parameters
    ----------
    n_systems, n_items : int
        The matrix's numbers of systems and items.
    resamples : int
        The number of bootstrap resamples B.
    resample : str
        ``systems``, ``items`` or ``both``: the axes resampled.
    seed : int
        Seed of ``numpy.random.default_rng``.

    Returns
    -------
    tuple of numpy.ndarray
        ``(sys_idx, item_idx)``, shapes (B x S) and (B x I).

    Examples
    --------
    >>> sys_idx, item_idx = resample_indices(3, 4, resamples=2, resample="items", seed=0)
    >>> sys_idx.tolist(), item_idx.shape
    ([[0, 1, 2], [0, 1, 2]], (2, 4))
    """
    resample = check_resample(resample)
    if resamples < 1:
        raise InputError(f"the number of resamples must be at least 1, got {resamples}")
    if not isinstance(seed, (int, np.integer)):  # e.g. a SeedSequence: draw afresh
        return _draw_indices(n_systems, n_items, resamples, resample, seed)
    key = (n_systems, n_items, resamples, resample, int(seed))
    hit = _INDEX_CACHE.get(key)
    if hit is None:
        hit = _draw_indices(n_systems, n_items, resamples, resample, seed)
        if resamples * (n_systems + n_items) * 8 > _INDEX_CACHE_BYTES:
            return hit  # too large to keep (and cheap to redraw relative to its use)
        if len(_INDEX_CACHE) >= 4:
            del _INDEX_CACHE[next(iter(_INDEX_CACHE))]
        _INDEX_CACHE[key] = hit
    # copies of the drawn indices (callers may write to them); identity ones are read-only views
    sys_idx, item_idx = (a if a.strides[0] == 0 else a.copy() for a in hit)
    return sys_idx, item_idx


# The validation study draws the same indices (same shape, same seed) for every metric,
# criterion, level and coefficient; drawing them once saves ~1 ms per bootstrap.
_INDEX_CACHE: dict[tuple, tuple[np.ndarray, np.ndarray]] = {}
_INDEX_CACHE_BYTES = 32 * 2**20  # per entry; at most 4 entries


def _index_chunks(
    shape: tuple[int, ...], resamples: int, resample: str, seed: int
) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """:func:`resample_indices` in one piece when the item indices are small (remembered across
    calls), else in chunks of rows (:func:`~._resampled_means.index_chunks`: the same indices);
    either way the coefficients are the same (Pearson in fixed blocks, the rest per resample)."""
    if resamples * shape[1] <= DRAW_CELLS:
        yield resample_indices(shape[0], shape[1], resamples, resample, seed)
        return
    if resamples < 1:
        raise InputError(f"the number of resamples must be at least 1, got {resamples}")
    yield from index_chunks(shape[0], shape[1], resamples, resample, seed)


def _draw_indices(
    n_systems: int, n_items: int, resamples: int, resample: str, seed: int
) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    if resample in ("systems", "both"):
        sys_idx = rng.integers(0, n_systems, size=(resamples, n_systems))
    else:
        sys_idx = np.broadcast_to(np.arange(n_systems), (resamples, n_systems))
    if resample in ("items", "both"):
        item_idx = rng.integers(0, n_items, size=(resamples, n_items))
    else:
        item_idx = np.broadcast_to(np.arange(n_items), (resamples, n_items))
    return sys_idx, item_idx


#: the resample counts of the last bootstraps (int, the smallest dtype that holds them), by
#: (shape, resamples, scheme, seed); each at most _COUNTS_CACHE_BYTES, at most 2 entries
#: (ws, wi, (first resample, size) of each chunk); one value per key, read with one lookup
#: (worker threads may share the process)
_COUNTS_CACHE: dict[tuple, tuple[np.ndarray, np.ndarray, list[tuple[int, int]]]] = {}
_COUNTS_CACHE_BYTES = 64 * 2**20


def count_chunks(
    shape: tuple[int, ...], resamples: int, resample: str, seed: int
) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """The resample counts (:func:`resample_counts`, as integers) of the index chunks of a
    bootstrap, chunk by chunk, with the chunks' sizes.

    A validation study bootstraps every metric and coefficient of a criterion with the same
    seed, so the same resamples: when the counts of all resamples fit in
    ``_COUNTS_CACHE_BYTES`` (1 byte per count when no unit is drawn more than 255 times: 50 MB
    at 1,000 resamples of 20 x 50,000), they are kept and handed out again (read-only views)
    instead of drawing the indices and counting them once per call; larger ones are drawn and
    counted chunk by chunk as before (memory of one chunk). The same integers either way.

    Parameters
    ----------
    shape : tuple of int
        (systems, items) of the matrices.
    resamples, seed : int
        Number of resamples B and seed of :func:`resample_indices`.
    resample : str
        ``systems``, ``items`` or ``both``.

    Returns
    -------
    Iterator of tuple of numpy.ndarray
        ``(ws, wi)`` per chunk: (b x systems) and (b x items) integer counts.

    Examples
    --------
    >>> ws, wi = next(count_chunks((3, 4), 2, "items", 0))
    >>> ws.tolist(), int(wi.sum(axis=1).max())
    ([[1, 1, 1], [1, 1, 1]], 4)
    """
    small = (resamples * (shape[0] + shape[1]) <= _COUNTS_CACHE_BYTES
             and isinstance(seed, (int, np.integer)))  # else a SeedSequence: drawn afresh
    key = (tuple(shape), resamples, check_resample(resample), int(seed) if small else 0)
    hit = _COUNTS_CACHE.get(key) if small else None
    if hit is not None:
        chunks = [(hit[0][b0:b0 + n], hit[1][b0:b0 + n]) for b0, n in hit[2]]
        yield from chunks
        return
    parts: list[tuple[np.ndarray, np.ndarray]] = []
    sizes: list[tuple[int, int]] = []
    for si, ii in _index_chunks(shape, resamples, resample, seed):
        ws, wi = _int_counts(si, shape[0]), _int_counts(ii, shape[1])
        if small:
            parts.append((ws, wi))
            sizes.append((sum(n for _, n in sizes), ws.shape[0]))
        yield ws, wi
    if small:
        ws_all, wi_all = (np.concatenate([p[k] for p in parts]) for k in (0, 1))
        if ws_all.nbytes + wi_all.nbytes <= _COUNTS_CACHE_BYTES:
            ws_all.flags.writeable = wi_all.flags.writeable = False
            while len(_COUNTS_CACHE) >= 2:
                _COUNTS_CACHE.pop(next(iter(_COUNTS_CACHE)), None)
            _COUNTS_CACHE[key] = (ws_all, wi_all, sizes)


def _int_counts(idx: np.ndarray, n: int) -> np.ndarray:
    """:func:`resample_counts` as integers of the smallest unsigned dtype that holds them."""
    B = idx.shape[0]
    flat = (np.asarray(idx) + (np.arange(B) * n)[:, None]).ravel()
    counts = np.bincount(flat, minlength=B * n).reshape(B, n)
    return counts.astype(np.min_scalar_type(int(counts.max(initial=0))))


def bootstrap_distribution(
    X: np.ndarray,
    Y: np.ndarray,
    level: str,
    coefficient: str,
    sys_idx: np.ndarray,
    item_idx: np.ndarray,
) -> np.ndarray:
    """The coefficient on every resampled sub-matrix ``X[sys_idx[b]][:, item_idx[b]]``.

    No resample is materialised except at the item levels: Pearson comes from resample counts
    and sufficient statistics, segment-level Spearman and Kendall from weighted ranks / pair
    counts (``kendall.weighted``), system-level rank coefficients from resampled system means
    (a (B, S) batch); the item levels of the rank coefficients from weighted ranks / pair
    counts per drawn item (the numbers of ranking the gathered resample, bit for bit).

    Parameters
    ----------
    X, Y : numpy.ndarray
        Metric and human scores, (systems x items), NaN for a missing cell.
    level, coefficient : str
        The level and the correlation coefficient.
    sys_idx, item_idx : numpy.ndarray
        (B x systems) and (B x items) indices, as from :func:`resample_indices`.

    Returns
    -------
    numpy.ndarray
        The coefficient on each resample, shape (B,), NaN where undefined.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 5.0], [0.0, 1.0, 1.5]])
    >>> Y = np.array([[1.0, 3.0, 2.0], [2.0, 4.0, 6.0], [1.0, 1.0, 2.0]])
    >>> si, ii = resample_indices(3, 3, 4, "both", seed=0)
    >>> bootstrap_distribution(X, Y, "segment", "spearman", si, ii).shape
    (4,)
    """
    X = np.asarray(X, dtype=float)
    Y = np.asarray(Y, dtype=float)
    level = check_level(level)
    if level == "system-grouped":  # the item level of the transposed matrices
        return bootstrap_distribution(X.T, Y.T, "item", coefficient, item_idx, sys_idx)
    coefficient = check_coefficient(coefficient)
    if coefficient == "pearson" or level == "segment":
        ws, wi = resample_counts(sys_idx, X.shape[0]), resample_counts(item_idx, X.shape[1])
        return _of_counts(X, Y, level, coefficient, ws, wi)
    if level == "system":
        # resampled system means per distinct system, then the resampled systems' rows: a
        # (B, S) problem for batch_correlation instead of a (B, S, I) stack
        mx, my = _resampled_system_means(X, Y, item_idx)
        if coefficient == "spearman" and sys_idx.shape[1] <= 20_000:  # sums exact: compiled
            from nlgeval.correlation._item_bootstrap import system_spearman_bootstrap

            return system_spearman_bootstrap(mx, my, sys_idx)
        rows = np.arange(sys_idx.shape[0])[:, None]
        return batch_correlation(mx[rows, sys_idx], my[rows, sys_idx], coefficient)
    return _item_level(X, Y, coefficient, sys_idx, item_idx)


def _distribution(X: np.ndarray, Y: np.ndarray, level: str, coefficient: str, resamples: int,
                  resample: str, seed: int) -> np.ndarray:
    """The resampled coefficients of :func:`bootstrap_correlation`, chunk by chunk."""
    if coefficient == "pearson" and level in ("segment", "system") or level == "segment":
        # only the resample counts are needed: the same for every metric and coefficient
        # of a study (same shape and seed), so they are drawn once (count_chunks)
        plan = pearson_counts_plan(X, Y, level) if coefficient == "pearson" else None
        return np.concatenate([_of_counts(X, Y, level, coefficient, ws, wi, plan)
                               for ws, wi in count_chunks(X.shape, resamples, resample, seed)])
    if level == "system" and isinstance(seed, (int, np.integer)):
        return _system_ranks(X, Y, coefficient, resamples, resample, int(seed))
    return np.concatenate([bootstrap_distribution(X, Y, level, coefficient, si, ii)
                           for si, ii in _index_chunks(X.shape, resamples, resample, seed)])


#: (B, S) resampled system means of whole bootstraps, by study and content (oldest forgotten
#: first beyond _MEANS_CACHE_BYTES)
_STUDY_MEANS: dict[bytes, np.ndarray] = {}


def _system_ranks(X: np.ndarray, Y: np.ndarray, coefficient: str, resamples: int,
                  resample: str, seed: int) -> np.ndarray:
    """System-level rank coefficients of :func:`bootstrap_correlation`: the numbers of
    :func:`bootstrap_distribution` chunk by chunk, from the resampled system means of all
    resamples, which are remembered by (shape, resamples, scheme, seed) and the contents of the
    matrix on the complete cells: the second coefficient of a metric and the human scores of
    the next metric find them without drawing the item indices again."""
    ok = np.isfinite(X) & np.isfinite(Y)
    study = repr((X.shape, resamples, resample, seed)).encode() + _digest(np.packbits(ok))
    keys = [study + _digest(np.where(ok, Z, 0.0)) for Z in (X, Y)]
    mx, my = _STUDY_MEANS.get(keys[0]), _STUDY_MEANS.get(keys[1])
    if mx is None or my is None:
        parts = [_resampled_system_means(X, Y, ii)
                 for _, ii in _index_chunks(X.shape, resamples, resample, seed)]
        mx, my = (np.concatenate([p[j] for p in parts]) for j in (0, 1))
        for key, means in zip(keys, (mx, my), strict=True):
            means.flags.writeable = False
            _STUDY_MEANS[key] = means
        while sum(v.nbytes for v in list(_STUDY_MEANS.values())) > _MEANS_CACHE_BYTES \
                and len(_STUDY_MEANS) > 2:
            _STUDY_MEANS.pop(next(iter(_STUDY_MEANS)), None)
    S = X.shape[0]
    if resample in ("systems", "both"):  # the first draw of the stream, as resample_indices
        sys_all = np.random.default_rng(seed).integers(0, S, size=(resamples, S))
    else:
        sys_all = np.broadcast_to(np.arange(S), (resamples, S))
    out = []
    for b0, k in _chunk_sizes(X.shape[1], resamples):
        a, b, si = mx[b0:b0 + k], my[b0:b0 + k], sys_all[b0:b0 + k]
        if coefficient == "spearman" and S <= 20_000:  # as bootstrap_distribution
            from nlgeval.correlation._item_bootstrap import system_spearman_bootstrap

            out.append(system_spearman_bootstrap(a, b, si))
        else:
            rows = np.arange(k)[:, None]
            out.append(batch_correlation(a[rows, si], b[rows, si], coefficient))
    return np.concatenate(out)


def _chunk_sizes(n_items: int, resamples: int) -> list[tuple[int, int]]:
    """(first resample, size) of the chunks of :func:`_index_chunks`."""
    if resamples * n_items <= DRAW_CELLS:
        return [(0, resamples)]
    k = max(1, DRAW_CELLS // max(1, n_items) // PEARSON_BLOCK) * PEARSON_BLOCK
    return [(b0, min(k, resamples - b0)) for b0 in range(0, resamples, k)]


def _item_level(X: np.ndarray, Y: np.ndarray, coefficient: str, sys_idx: np.ndarray,
                item_idx: np.ndarray) -> np.ndarray:
    """Item level of :func:`bootstrap_distribution` for the rank coefficients: one compiled
    pass from the resample counts (:mod:`._item_bootstrap`: the same numbers), or, for long
    vectors, the (B, S, I) stack gathered in chunks of resamples."""
    from nlgeval.correlation._item_bootstrap import fits, item_rank_bootstrap

    if fits(X.shape[0], sys_idx.shape[1], X.shape[1], coefficient):
        return item_rank_bootstrap(X, Y, sys_idx, item_idx, coefficient)
    B, S = sys_idx.shape
    n_items = item_idx.shape[1]
    out = np.empty(B)
    chunk = max(1, _CELLS_PER_CHUNK // max(1, S * n_items))
    for start in range(0, B, chunk):
        si = sys_idx[start:start + chunk, :, None]
        ii = item_idx[start:start + chunk, None, :]
        out[start:start + chunk] = level_statistic(X[si, ii], Y[si, ii], "item", coefficient)
    return out


def _of_counts(X: np.ndarray, Y: np.ndarray, level: str, coefficient: str, ws: np.ndarray,
               wi: np.ndarray, plan: Callable[..., np.ndarray] | None = None) -> np.ndarray:
    """The coefficients of :func:`bootstrap_distribution` that need only the resample counts
    ``ws`` (B x systems) and ``wi`` (B x items), of any integer or float dtype: Pearson at every
    level, Spearman and Kendall at segment level. ``plan``: Pearson's
    :func:`~nlgeval.correlation._pearson_counts.pearson_counts_plan` of ``X, Y`` when made
    already."""
    if coefficient == "pearson":
        return _pearson_of_counts(X, Y, level, ws, wi, plan)
    # weighted ranks / pair counts per resample in one numba call (no sort and no scipy call
    # per resample; both cores); numba is imported only when needed (start-up time)
    from nlgeval.correlation.kendall.weighted import (
        weighted_kendall_segment,
        weighted_spearman_segment,
    )

    if coefficient == "spearman":
        return weighted_spearman_segment(X, Y, ws, wi)
    variant = "tau_b" if coefficient == "kendall" else "tau_c"
    return weighted_kendall_segment(X, Y, ws, wi, variant)


def _pearson_in_blocks(
    X: np.ndarray, Y: np.ndarray, level: str, sys_idx: np.ndarray, item_idx: np.ndarray
) -> np.ndarray:
    """Pearson on the resamples of the index matrices (:func:`_pearson_of_counts` of their
    counts)."""
    return _pearson_of_counts(X, Y, level, resample_counts(sys_idx, X.shape[0]),
                              resample_counts(item_idx, X.shape[1]))


def _pearson_of_counts(
    X: np.ndarray, Y: np.ndarray, level: str, ws_all: np.ndarray, wi_all: np.ndarray,
    plan: Callable[..., np.ndarray] | None = None,
) -> np.ndarray:
    """:func:`~nlgeval.correlation._pearson_counts.pearson_from_counts` in blocks of
    :data:`PEARSON_BLOCK` resamples, the last one
    padded with copies of its first resample: every matrix product then has the same shape, so
    a resample's coefficient does not depend on how many are computed at once (OpenBLAS sums a
    row in an order that depends on the product's shape), and memory is one block's. The
    counts (integers) are turned into float64 block by block: the same values."""
    B = ws_all.shape[0]
    out = np.empty(B)
    # what does not depend on the resamples
    of_counts = pearson_counts_plan(X, Y, level) if plan is None else plan
    for b0 in range(0, B, PEARSON_BLOCK):
        ws = ws_all[b0:b0 + PEARSON_BLOCK].astype(float)
        wi = wi_all[b0:b0 + PEARSON_BLOCK].astype(float)
        k = ws.shape[0]
        if k < PEARSON_BLOCK:
            ws, wi = (np.concatenate([a, np.repeat(a[:1], PEARSON_BLOCK - k, axis=0)])
                      for a in (ws, wi))
        out[b0:b0 + k] = of_counts(ws, wi)[:k]
    return out


@dataclass(frozen=True)
class BootstrapResult(StatResult):
    """Observed coefficient, percentile bootstrap interval, and the resampled distribution.

    ``pvalue`` is NaN (a bootstrap interval, not a test); ``distribution`` (left out of
    ``to_dict``) holds the coefficient of every resample, NaN where it is undefined.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 5.0], [0.0, 1.0, 1.5]])
    >>> res = bootstrap_correlation(X, X + 1.0, "segment", n_resamples=20, seed=1)
    >>> res.statistic, res.confidence_interval()
    (1.0, ConfidenceInterval(low=1.0, high=1.0))
    """

    statistic: float
    ci_low: float
    ci_high: float
    level: str
    coefficient: str
    resample: str
    resamples: int
    seed: int
    confidence_level: float
    n_undefined: int = 0
    distribution: np.ndarray = field(default_factory=lambda: np.empty(0), repr=False,
                                     compare=False)
    pvalue: float = math.nan
    _omit = frozenset({"distribution", "pvalue"})


def percentile_interval(
    distribution: np.ndarray, confidence_level: float = 0.95
) -> ConfidenceInterval:
    """The percentile interval (numpy's default linear interpolation), ignoring NaN resamples.

    Parameters
    ----------
    distribution : numpy.ndarray
        The statistic on every resample (NaN for an undefined one).
    confidence_level : float, default 0.95
        The interval's coverage.

    Returns
    -------
    ConfidenceInterval
        The ``low`` and ``high`` percentiles.

    Examples
    --------
    >>> import numpy as np
    >>> percentile_interval(np.arange(101.0), 0.9)
    ConfidenceInterval(low=5.0, high=95.0)
    """
    d = np.asarray(distribution, dtype=float)
    d = d[np.isfinite(d)]
    if d.size == 0:
        return ConfidenceInterval(math.nan, math.nan)
    a = (1 - confidence_level) / 2
    lo, hi = np.quantile(d, [a, 1 - a])
    return ConfidenceInterval(float(lo), float(hi))


def bootstrap_correlation(
    X: np.ndarray,
    Y: np.ndarray,
    level: str = "system",
    coefficient: str = "pearson",
    *,
    n_resamples: int = 1000,
    resample: str = "both",
    seed: int = 0,
    confidence_level: float = 0.95,
    label: str = "",
    resamples: int | None = None,
) -> BootstrapResult:
    """Percentile bootstrap CI of the ``level`` correlation between ``X`` and ``Y``.

    ``X``, ``Y``: (systems x items) matrices, NaN = missing. Resamples on which the coefficient
    is undefined (e.g. all drawn systems identical) are left out of the percentiles and counted
    in ``n_undefined``; a warning is issued when more than 1 % are undefined. ``n_resamples``
    bootstrap resamples (``resamples``: its earlier name, deprecated; the result keeps the field
    ``resamples``).

    Parameters
    ----------
    X, Y : numpy.ndarray, (systems x items)
    level, coefficient, resample : str
        Level (``system``), coefficient (``pearson``), axes resampled (``both``).
    n_resamples, seed, resamples : int
        Resamples (1000), RNG seed (0); ``resamples``: deprecated name of ``n_resamples``.
    confidence_level, label : float, str
        Interval coverage (0.95); the input's name in warnings.

    Returns
    -------
    BootstrapResult
        The statistic, its percentile interval and the resampling settings.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> H = rng.normal(size=(6, 20)); M = H + rng.normal(size=(6, 20))
    >>> res = bootstrap_correlation(M, H, "segment", "kendall", n_resamples=200, seed=1)
    >>> res.confidence_interval().low < res.statistic < res.confidence_interval().high
    True
    """
    resamples = renamed_keyword("bootstrap_correlation", "resamples", resamples, "n_resamples",
                                n_resamples)
    level = check_level(level)
    coefficient = check_coefficient(coefficient)
    resample = check_resample(resample)
    X = np.asarray(X, dtype=float)
    Y = np.asarray(Y, dtype=float)
    if X.shape != Y.shape or X.ndim != 2:
        raise InputError(f"X and Y must be matrices of the same shape, got {X.shape}, {Y.shape}")
    observed = float(level_statistic(X, Y, level, coefficient))
    dist = _distribution(X, Y, level, coefficient, resamples, resample, seed)
    n_undef = int((~np.isfinite(dist)).sum())
    if n_undef > 0.01 * resamples:
        warnings.warn(
            f"bootstrap {label}: the {coefficient} correlation was undefined on {n_undef} of "
            f"{resamples} resamples (fewer than 3 values or constant scores); they are left "
            "out of the interval",
            DegenerateInputWarning,
            stacklevel=2,
        )
    ci = percentile_interval(dist, confidence_level)
    return BootstrapResult(
        statistic=observed,
        ci_low=ci.low,
        ci_high=ci.high,
        level=level,
        coefficient=coefficient,
        resample=resample,
        resamples=resamples,
        seed=seed,
        confidence_level=confidence_level,
        n_undefined=n_undef,
        distribution=dist,
    )
