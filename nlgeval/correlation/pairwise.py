"""Does the metric order systems the way humans do? Pairwise accuracy and soft pairwise accuracy.

* :func:`pairwise_accuracy` -- system-level pairwise accuracy (Kocmi, Federmann, Grundkiewicz,
  Junczys-Dowmunt, Matsushita & Menezes 2021, "To Ship or Not to Ship: An Extensive Evaluation
  of Automatic Metrics for Machine Translation"; MTME ``stats.Agreement``): the share of system
  pairs whose order under the metric has the same sign as under the human scores, a tie
  agreeing only with a tie.
* :func:`soft_pairwise_accuracy` -- soft pairwise accuracy (Thompson, Mathur, Deutsch &
  Khayrallah 2024, "Improving Statistical Significance in Human Evaluation of Automatic
  Metrics via Soft Pairwise Accuracy", WMT24; MTME ``pce.py``): for every system pair the
  p-value of a paired sign-flip permutation test "system i beats system j", once from the human
  and once from the metric scores; ``SPA = 1 - mean |p_human - p_metric|``.
* :func:`pairwise_accuracy_test`, :func:`soft_pairwise_accuracy_test` -- PERM-BOTH tests
  between two metrics (Deutsch, Dror & Roth 2021, "A Statistical Analysis of Summarization
  Evaluation Metrics using Resampling Methods"; MTME ``stats.PermutationSigDiff``), returning
  :class:`~nlgeval.correlation.permutation.PermutationComparison` with the per-draw statistics.

Input: ``X`` (metric) and ``Y`` (human), float arrays (systems, items), NaN = missing, both
oriented so that higher is better; a cell takes part only if both are finite. How nlgeval
differs from MTME (missing values, ties, p-value conventions) is in docs/pairwise.md.

This module defines pairwise accuracy and the two PERM-BOTH tests and re-exports soft pairwise
accuracy from :mod:`nlgeval.correlation.soft_pairwise`; the input checks and the vectorised
sign-flip test they share are in ``nlgeval.correlation._pairwise_kernels``.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np

from nlgeval.correlation._pairwise_kernels import (
    TIE_RTOL,
    Orientation,
    _agreement,
    _check_orientation,
    _matrices,
    _prepare_masks,
    _SignFlipDesign,
    _spa_from_p,
    _vector,
)
from nlgeval.correlation._spa_perm import cached_pvalues, chunk_draws, spa_draws, swap_counts
from nlgeval.correlation.levels import system_means
from nlgeval.correlation.permutation.draws import (
    PermutationComparison,
    comparison_from_draws,
    iter_swap_masks,
    standardise,
)
from nlgeval.correlation.soft_pairwise import (
    SoftPairwiseAccuracyResult,
    _shared_masks,
    sign_flip_masks,
    soft_pairwise_accuracy,
)
from nlgeval.deprecation import renamed_keyword
from nlgeval.errors import InputError
from nlgeval.results import StatResult

__all__ = [
    "TIE_RTOL",
    "Orientation",
    "PairwiseAccuracyResult",
    "SoftPairwiseAccuracyResult",
    "pairwise_accuracy",
    "pairwise_accuracy_from_scores",
    "pairwise_accuracy_test",
    "sign_flip_masks",
    "soft_pairwise_accuracy",
    "soft_pairwise_accuracy_test",
]

_CHUNK_ELEMENTS = 4_000_000
#: Up to this many systems pairwise accuracy loops over the pairs in Python (no array calls).
_LOOP_SYSTEMS = 8


# ----------------------------------------------------------------------------- pairwise accuracy
@dataclass(frozen=True)
class PairwiseAccuracyResult(StatResult):
    """System-level pairwise accuracy (Kocmi et al. 2021).

    ``statistic = n_agree / n_pairs``; pairs count when both systems have a metric and a human
    score. ``n_tied_human`` / ``n_tied_metric``: counted pairs tied under humans / the metric.
    There is no single-metric test (``pvalue`` NaN); compare metrics with
    :func:`pairwise_accuracy_test`. Pool several data sets (language pairs, as WMT23 does) by
    summing ``n_agree`` and ``n_pairs``.

    Examples
    --------
    >>> res = pairwise_accuracy_from_scores([0.3, 0.5, 0.1], [3.0, 2.0, 1.0])
    >>> acc, p = res                     # scipy-style unpacking; no single-metric p-value
    >>> round(acc, 3), res.n_agree, res.n_pairs
    (0.667, 2, 3)
    """

    statistic: float
    n_pairs: int
    n_agree: int
    n_systems: int
    n_tied_human: int = 0
    n_tied_metric: int = 0
    pvalue: float = math.nan
    note: str = ""


def pairwise_accuracy_from_scores(metric: Any, human: Any) -> PairwiseAccuracyResult:
    """Pairwise accuracy of two system-score vectors (one entry per system, NaN = missing).

    ``sign(m_i - m_j) == sign(h_i - h_j)`` over pairs ``i < j`` where all four scores are
    present (MTME ``stats.Agreement`` skips pairs with a missing human score). Scores within
    :data:`TIE_RTOL` of each other (relative) are tied; a tie agrees only with a tie.

    Parameters
    ----------
    metric, human : array_like
        Metric and human system scores, one per system, NaN for a missing score.

    Returns
    -------
    PairwiseAccuracyResult
        The accuracy, the pairs counted, agreeing and tied, and the number of systems.

    Examples
    --------
    >>> res = pairwise_accuracy_from_scores([0.3, 0.5, 0.1], [2.0, 3.0, 1.0])
    >>> res.statistic, res.n_pairs
    (1.0, 3)
    """
    small = _small_lists(metric, human)
    if small is not None:   # a few systems as lists (MTME's callers): no array at all
        agree, n, tied_h, tied_m = _agreement_loop(*small)
        # the frozen dataclass's fields set directly (its __init__ is a third of this path)
        res = object.__new__(PairwiseAccuracyResult)
        res.__dict__.update(statistic=agree / n if n else math.nan, n_pairs=n, n_agree=agree,
                            n_systems=len(small[0]), n_tied_human=tied_h,
                            n_tied_metric=tied_m, pvalue=math.nan,
                            note="" if n else _FEW_SYSTEMS)
        return res
    m, h = _vector(metric, "metric"), _vector(human, "human")
    if m.shape != h.shape:
        raise InputError(f"metric and human system scores differ in length: {m.size} vs "
                         f"{h.size}")
    ok = np.isfinite(m) & np.isfinite(h)
    if not ok.all():
        m, h = m[ok], h[ok]
    if m.size <= _LOOP_SYSTEMS:   # a loop over pairs beats array calls on few systems
        agree, n, tied_h, tied_m = _agreement_loop(m.tolist(), h.tolist())
    else:
        agree, n, tied_h, tied_m = _agreement_arrays(m, h)
    note = "" if n else _FEW_SYSTEMS
    return PairwiseAccuracyResult(agree / n if n else math.nan, n, agree, int(m.size), tied_h,
                                  tied_m, note=note)


_FEW_SYSTEMS = "fewer than 2 systems with both a metric and a human score"


def _small_lists(metric: Any, human: Any) -> tuple[list[float], list[float]] | None:
    """The systems with both scores as two lists of floats, when both inputs are lists or
    tuples of at most ``_LOOP_SYSTEMS`` plain numbers (the same floats as ``_vector``'s
    array); None otherwise (the array path then converts, checks and reports)."""
    if type(metric) not in (list, tuple) or type(human) not in (list, tuple) \
            or len(metric) != len(human) or len(metric) > _LOOP_SYSTEMS:
        return None
    try:
        m, h = list(map(float, metric)), list(map(float, human))
    except (TypeError, ValueError):
        return None
    isfinite = math.isfinite
    if not (isfinite(sum(m)) and isfinite(sum(h))):  # a NaN/inf (or an overflowing sum)
        keep = [i for i in range(len(m)) if isfinite(m[i]) and isfinite(h[i])]
        m, h = [m[i] for i in keep], [h[i] for i in keep]
    return m, h


@lru_cache(maxsize=16)
def _triu(S: int) -> tuple[np.ndarray, np.ndarray]:
    ii, jj = np.triu_indices(S, 1)
    ii.flags.writeable = jj.flags.writeable = False
    return ii, jj


def _agreement_arrays(m: np.ndarray, h: np.ndarray) -> tuple[int, int, int, int]:
    """As :func:`_agreement_loop` for finite score vectors, metric and humans in one stack."""
    ii, jj = _triu(m.size)
    X = np.stack([m, h])
    a, b = X[:, ii], X[:, jj]
    d = a - b
    sg = np.sign(d)
    sg[np.abs(d) <= TIE_RTOL * np.maximum(np.abs(a), np.abs(b))] = 0.0
    tied = np.count_nonzero(sg == 0.0, axis=1)
    return (int(np.count_nonzero(sg[0] == sg[1])), int(ii.size), int(tied[1]), int(tied[0]))


def _agreement_loop(m: list[float], h: list[float]) -> tuple[int, int, int, int]:
    """Agreeing pairs, pairs, pairs tied under humans / the metric (``_pair_signs``' rule:
    tied when ``|d| <= TIE_RTOL * max(|a|, |b|)``, i.e. neither ``d > t`` nor ``d < -t`` for
    the finite values here; ``t`` from the scaled magnitudes, the same float)."""
    agree = tied_h = tied_m = 0
    S, rtol = len(m), TIE_RTOL
    am, ah = [rtol * abs(v) for v in m], [rtol * abs(v) for v in h]
    for i in range(1, S):   # pairs (j, i), j < i: both differences negated, same signs agree
        mi, hi, ami, ahi = m[i], h[i], am[i], ah[i]
        for j in range(i):
            dm, tm = mi - m[j], am[j]
            if ami > tm:
                tm = ami
            if dm > tm:
                sm = 1
            elif dm < -tm:
                sm = -1
            else:
                sm = 0
                tied_m += 1
            dh, th = hi - h[j], ah[j]
            if ahi > th:
                th = ahi
            if dh > th:
                agree += sm == 1
            elif dh < -th:
                agree += sm == -1
            else:
                tied_h += 1
                agree += sm == 0
    return agree, S * (S - 1) // 2, tied_h, tied_m


def pairwise_accuracy(X: Any, Y: Any) -> PairwiseAccuracyResult:
    """System-level pairwise accuracy (Kocmi et al. 2021) from (systems x items) matrices.

    A system's score is the mean over its complete cells (metric and human both present; see
    :func:`~nlgeval.correlation.levels.system_means`), so metric and human system scores rest
    on the same outputs. MTME instead takes whatever system-level scores the data set provides
    (the metric usually over all segments, the human score over the rated ones).

    Parameters
    ----------
    X, Y : array_like
        Metric and human scores, (systems x items), NaN for a missing cell.

    Returns
    -------
    PairwiseAccuracyResult
        The accuracy of the system means, with the pairs counted, agreeing and tied.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[0.9, 0.8, 0.7, 0.6], [0.5, 0.6, 0.4, 0.5], [0.2, 0.3, 0.1, 0.2]])
    >>> Y = np.array([[5, 4, 4, 5], [3, 4, 3, 3], [4, 2, 1, 2]], dtype=float)
    >>> res = pairwise_accuracy(X, Y)    # 3 systems x 4 segments
    >>> res.statistic, res.n_agree, res.n_pairs
    (1.0, 3, 3)
    """
    X, Y = _matrices(metric=X, human=Y)
    mx, my = system_means(X, Y)
    return pairwise_accuracy_from_scores(mx, my)


# ----------------------------------------------------------------------------- PERM-BOTH tests
def _perm_inputs(XA: Any, XB: Any, Y: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray,
                                                    np.ndarray]:
    """z-scored A and B and the human scores on the cells where all three are present."""
    XA, XB, Y = _matrices(metric_a=XA, metric_b=XB, human=Y)
    ok = np.isfinite(XA) & np.isfinite(XB) & np.isfinite(Y)
    A = np.where(ok, standardise(np.where(ok, XA, np.nan)), np.nan)
    B = np.where(ok, standardise(np.where(ok, XB, np.nan)), np.nan)
    return A, B, np.where(ok, Y, np.nan), ok


def _mask_chunks(
    shape: tuple[int, int], n_resamples: int, scheme: str, seed: int | None, masks: Any,
    chunk: int,
) -> tuple[Iterator[np.ndarray], int]:
    if masks is not None:
        m = np.asarray(masks, dtype=bool)
        if m.ndim != 3 or m.shape[1:] != shape or m.shape[0] < 1:
            raise InputError(f"swap masks must have shape (n_resamples, {shape[0]}, "
                             f"{shape[1]}), got {m.shape}")
        return (m[s:s + chunk] for s in range(0, m.shape[0], chunk)), int(m.shape[0])
    if n_resamples < 1:
        raise InputError(f"n_resamples must be >= 1, got {n_resamples}")
    return iter_swap_masks(shape, n_resamples, scheme, seed, chunk=chunk), n_resamples


def pairwise_accuracy_test(
    XA: Any,
    XB: Any,
    Y: Any,
    *,
    n_resamples: int = 1000,
    seed: int | None = 0,
    scheme: str = "both",
    masks: Any = None,
    permutations: int | None = None,
) -> PermutationComparison:
    """PERM-BOTH test of "metric A has a higher pairwise accuracy than metric B".

    Deutsch et al. (2021): each metric is z-scored over the cells where A, B and the human
    score are all present (ddof 0), then in every draw each (system, item) cell swaps A and B
    with probability 1/2 (``scheme="systems"`` / ``"items"``: whole rows / columns); the
    system means of the swapped matrices give ``draws_a`` / ``draws_b`` (pairwise accuracy of
    the metric in slot A / B). ``p = (1 + #{d* >= d}) / (1 + K)``, one-sided; MTME reports
    ``#{d* >= d} / K``, and for its system-level accuracy task swaps the metrics' system-level
    scores rather than the segment cells. Vectorised: system means of a swapped matrix are one
    contraction of the (K, S, I) mask with ``B - A``.
    ``permutations``: the earlier name of ``n_resamples`` (deprecated).

    Parameters
    ----------
    XA, XB, Y : array_like
        Metrics A and B and the human scores, (systems x items), NaN for a missing cell.
    n_resamples, permutations, seed : int, int or None, int or None
        Number of draws (default 1000; ``permutations`` its deprecated name); seed (default 0).
    scheme, masks : str, array_like or None
        Swap unit ``"both"`` (cells, default), ``"systems"`` or ``"items"``; or given masks.

    Returns
    -------
    PermutationComparison
        Both accuracies, their difference, the draws and the one-sided p-value.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[0.9, 0.8, 0.7, 0.6], [0.5, 0.6, 0.4, 0.5], [0.2, 0.3, 0.1, 0.2]])
    >>> Y = np.array([[5, 4, 4, 5], [3, 4, 3, 3], [4, 2, 1, 2]], dtype=float)
    >>> XB = X[[1, 0, 2]]                 # metric B swaps the two best systems
    >>> res = pairwise_accuracy_test(X, XB, Y, n_resamples=200, seed=1)
    >>> round(res.statistic_a, 3), round(res.statistic_b, 3)
    (1.0, 0.667)
    >>> 0 < res.pvalue <= 1
    True
    """
    n_resamples = renamed_keyword(
        "pairwise_accuracy_test", "permutations", permutations, "n_resamples", n_resamples)
    A, B, H, ok = _perm_inputs(XA, XB, Y)
    S, n = ok.shape
    A0, B0 = np.where(ok, A, 0.0), np.where(ok, B, 0.0)
    cnt = ok.sum(axis=1)
    safe = np.maximum(cnt, 1)
    empty = cnt == 0
    ma, h = system_means(A, H)
    mb, _ = system_means(B, H)
    ra = pairwise_accuracy_from_scores(ma, h).statistic
    rb = pairwise_accuracy_from_scores(mb, h).statistic
    D = B0 - A0
    sa, sb = A0.sum(axis=1), B0.sum(axis=1)
    chunk = max(1, _CHUNK_ELEMENTS // max(1, S * n))
    it, K = _mask_chunks((S, n), n_resamples, scheme, seed, masks, chunk)
    draws_a, draws_b = np.empty(K), np.empty(K)
    done = 0
    for m in it:
        mD = np.einsum("psi,si->ps", m.astype(float), D)
        pa = np.where(empty, np.nan, (sa + mD) / safe)
        pb = np.where(empty, np.nan, (sb - mD) / safe)
        ag_a, n_a = _agreement(pa, h)
        ag_b, n_b = _agreement(pb, h)
        with np.errstate(invalid="ignore", divide="ignore"):
            draws_a[done:done + len(m)] = np.where(n_a > 0, ag_a / np.maximum(n_a, 1), np.nan)
            draws_b[done:done + len(m)] = np.where(n_b > 0, ag_b / np.maximum(n_b, 1), np.nan)
        done += len(m)
    return comparison_from_draws(ra, rb, draws_a, draws_b, name="pairwise_accuracy",
                                 scheme=scheme, seed=seed if masks is None else None)


def _test_masks(n_kept: int, spa_permutations: int, spa_seed: int | None
                ) -> tuple[np.ndarray, np.ndarray | None]:
    """The SPA sign masks of a test and their transpose: the shared read-only ones for a
    fixed seed (hashed once by the caches), fresh ones for ``None``."""
    if spa_seed is None:
        return sign_flip_masks(n_kept, spa_permutations, spa_seed), None
    return _shared_masks(n_kept, spa_permutations, int(spa_seed))


def _no_pair_test(n: int, n_resamples: int, scheme: str, seed: int | None, masks: Any
                  ) -> PermutationComparison:
    """The SPA test of one system: both statistics and every draw NaN."""
    K = _mask_chunks((1, n), n_resamples, scheme, seed, masks, 1)[1]
    return comparison_from_draws(math.nan, math.nan, np.full(K, np.nan), np.full(K, np.nan),
                                 name="soft_pairwise_accuracy", scheme=scheme,
                                 seed=seed if masks is None else None)


def soft_pairwise_accuracy_test(
    XA: Any,
    XB: Any,
    Y: Any,
    *,
    n_resamples: int = 1000,
    seed: int | None = 0,
    spa_permutations: int = 1000,
    spa_seed: int | None = 0,
    orientation: Orientation = "both",
    scheme: str = "both",
    masks: Any = None,
    permutations: int | None = None,
) -> PermutationComparison:
    """PERM-BOTH test of "metric A has a higher soft pairwise accuracy than metric B".

    As MTME's ``PermutationSigDiff`` on segment-level scores: z-score A and B over the cells
    where A, B and the human score are present (SPA is invariant to positive affine maps), swap
    A and B per cell with probability 1/2 (``n_resamples`` draws from ``default_rng(seed)``),
    and compute the SPA of both swapped matrices; the SPA sign masks (``spa_permutations``
    from ``spa_seed``) are the same in every draw, as MTME's fixed ``seed=4`` makes them.
    ``p = (1 + #{d* >= d}) / (1 + K)``, one-sided (MTME: ``#/K``).
    Vectorised over draws: one (draws x systems x segments) @ (segments x sign masks) product
    per chunk and missingness pattern, and one fused count of the four p-values each system
    pair needs (A* and B*, both directions); those counts depend only on the two metrics and
    the cells taking part, and are reused by a later call on the same metrics and cells (another
    human criterion rated on the same outputs), which recomputes only the human p-values.
    ``permutations``: the earlier name of ``n_resamples`` (deprecated).

    Parameters
    ----------
    XA, XB, Y : array_like
        Metrics A and B and the human scores, (systems x segments), NaN for a missing cell.
    n_resamples, permutations, seed : int, int or None, int or None
        Number of draws (default 1000; ``permutations`` its deprecated name); seed (default 0).
    spa_permutations, spa_seed : int, int or None
        Number of SPA sign masks (default 1000) and their seed (default 0).
    orientation : {"both", "given"}
        The SPA orientation (default ``"both"``).
    scheme, masks : str, array_like or None
        Swap unit ``"both"`` (cells, default), ``"systems"`` or ``"items"``; or given masks.

    Returns
    -------
    PermutationComparison
        Both SPAs, their difference, the draws and the one-sided p-value.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[0.9, 0.8, 0.7, 0.6], [0.5, 0.6, 0.4, 0.5], [0.2, 0.3, 0.1, 0.2]])
    >>> Y = np.array([[5, 4, 4, 5], [3, 4, 3, 3], [4, 2, 1, 2]], dtype=float)
    >>> res = soft_pairwise_accuracy_test(X, X[[1, 0, 2]], Y, n_resamples=50,
    ...                                   spa_permutations=100, seed=1)
    >>> round(res.statistic, 2), round(res.pvalue, 3)
    (0.26, 0.078)
    """
    n_resamples = renamed_keyword(
        "soft_pairwise_accuracy_test", "permutations", permutations, "n_resamples", n_resamples)
    orientation = _check_orientation(orientation)
    A, B, H, ok = _perm_inputs(XA, XB, Y)
    S, n = ok.shape
    if S == 1:   # no system pair: both SPAs undefined (the kernels need a pair axis)
        return _no_pair_test(n, n_resamples, scheme, seed, masks)
    design = _SignFlipDesign.build(ok)
    keep = design.keep
    M, Mt = _test_masks(int(keep.sum()), spa_permutations, spa_seed)
    prep = _prepare_masks(design, M, Mt=Mt)
    A0, B0, H0 = (np.where(ok, Z, 0.0)[:, keep] for Z in (A, B, H))
    # the human p-values and each metric's own are shared by the pairs of a study
    ph = cached_pvalues(H0, design, prep, M)
    ra = float(_spa_from_p(ph, cached_pvalues(A0, design, prep, M), orientation)[0])
    rb = float(_spa_from_p(ph, cached_pvalues(B0, design, prep, M), orientation)[0])
    chunk = chunk_draws(design, prep, S * n)
    it, K = _mask_chunks((S, n), n_resamples, scheme, seed, masks, chunk)
    counts = swap_counts(A0, B0, design, prep, M, it, K,
                         (scheme, seed, K) if masks is None else None)
    draws_a, draws_b = spa_draws(ph, counts, M.shape[0], design.has_pair, orientation, chunk)
    return comparison_from_draws(ra, rb, draws_a, draws_b, name="soft_pairwise_accuracy",
                                 scheme=scheme, seed=seed if masks is None else None)
