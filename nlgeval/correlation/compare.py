"""Is metric A's correlation with the human score really higher than metric B's?

Two tests, both for *dependent* correlations (the same human scores, the same outputs):

* :func:`williams_test` -- Williams (1959) t for r12 vs r13 given r23 (Steiger 1980, eq. 10;
  used for metrics by Graham & Baldwin 2014 and WMT). With 1 = human, 2 = metric A,
  3 = metric B::

      t = (r12 - r13) sqrt((n - 1)(1 + r23))
          / sqrt(2 (n - 1)/(n - 3) |R| + ((r12 + r13)/2)^2 (1 - r23)^3),
      |R| = 1 - r12^2 - r13^2 - r23^2 + 2 r12 r13 r23,   df = n - 3.

  nlgeval does **not** take absolute values (WMT does, for TER-like metrics). Instead every
  metric is *oriented* before any correlation is computed: scores of a lower-is-better metric
  (TER, edit distance) are negated, so a larger r always means better agreement and a negative
  r means the metric disagrees with humans -- information that abs() would hide.
  Williams' test assumes (approximately) normal variables; it is the Pearson test. For
  Spearman it is applied to ranks; for Kendall and for item-level correlations use the
  permutation test.

* :func:`permutation_test` -- the paired permutation test of Deutsch et al. (2021, TACL),
  PERM-BOTH by default: under H0 the two metrics are exchangeable, so for each output (cell)
  independently the two metrics' scores are swapped with probability 1/2 and the difference of
  the correlations recomputed. Scores are z-standardised per metric first (over its complete
  cells) so the swapped values share a scale; no correlation coefficient changes under that
  positive affine map. PERM-SYS / PERM-INPUT swap whole systems / items. Vectorised: all
  permutations are one (P, S, I) swap mask. p = (1 + #{|d*| >= |d|}) / (1 + P)
  (Phipson & Smyth 2010), never 0.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

import numpy as np
import pandas as pd
from scipy import stats

from nlgeval.correlation._pearson_swaps import _pearson_swap_draws, _pearson_swap_draws_many
from nlgeval.correlation.coefficients import batch_correlation, check_coefficient
from nlgeval.correlation.levels import check_level, level_statistic, system_means
from nlgeval.errors import InputError
from nlgeval.results import StatResult

Alternative = Literal["two-sided", "greater", "less"]


@dataclass(frozen=True)
class WilliamsResult(StatResult):
    """Williams' t for H0: rho12 = rho13 (H1 per ``alternative``; "greater": rho12 > rho13).

    Examples
    --------
    >>> res = williams_test(0.6, 0.4, 0.5, 100, "greater")
    >>> round(res.statistic, 3), res.df
    (2.449, 97)
    """

    statistic: float
    df: int
    pvalue: float
    r12: float
    r13: float
    r23: float
    n: int
    alternative: str



def williams_test(
    r12: float, r13: float, r23: float, n: int, alternative: Alternative = "two-sided"
) -> WilliamsResult:
    """Williams (1959) test of two dependent correlations sharing variable 1 (see module doc).

    NaN when any correlation is NaN, n <= 3, or the correlation matrix is not positive
    semi-definite.

    Examples
    --------
    >>> round(williams_test(0.6, 0.4, 0.5, 100).pvalue, 4)
    0.0161
    """
    vals = (r12, r13, r23)
    if alternative not in ("two-sided", "greater", "less"):
        raise InputError(f"alternative must be two-sided, greater or less, got {alternative!r}")
    if n <= 3 or not all(np.isfinite(v) for v in vals):
        return WilliamsResult(math.nan, max(n - 3, 0), math.nan, r12, r13, r23, n, alternative)
    det = 1 - r12**2 - r13**2 - r23**2 + 2 * r12 * r13 * r23
    denom = 2 * (n - 1) / (n - 3) * det + ((r12 + r13) / 2) ** 2 * (1 - r23) ** 3
    if det < -1e-12 or denom <= 0:
        return WilliamsResult(math.nan, n - 3, math.nan, r12, r13, r23, n, alternative)
    t = (r12 - r13) * math.sqrt((n - 1) * (1 + r23)) / math.sqrt(denom)
    df = n - 3
    if alternative == "two-sided":
        p = 2 * stats.t.sf(abs(t), df)
    elif alternative == "greater":
        p = stats.t.sf(t, df)
    else:
        p = stats.t.cdf(t, df)
    return WilliamsResult(float(t), df, float(min(1.0, p)), r12, r13, r23, n, alternative)


def _level_vectors(
    XA: np.ndarray, XB: np.ndarray, Y: np.ndarray, level: str
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The level's vectors for A, B and human, over cells where all three are present."""
    ok = np.isfinite(XA) & np.isfinite(XB) & np.isfinite(Y)
    A = np.where(ok, XA, np.nan)
    Bm = np.where(ok, XB, np.nan)
    H = np.where(ok, Y, np.nan)
    if level == "system":
        a, h = system_means(A, H)
        b, _ = system_means(Bm, H)
        keep = np.isfinite(a) & np.isfinite(b) & np.isfinite(h)
        return a[keep], b[keep], h[keep]
    if level == "segment":
        return A[ok], Bm[ok], H[ok]
    raise InputError("Williams' test needs one correlation per metric over one set of units: "
                     "use level 'system' or 'segment' (item-level: use permutation_test)")


def williams_from_scores(
    XA: np.ndarray,
    XB: np.ndarray,
    Y: np.ndarray,
    level: str = "system",
    coefficient: str = "pearson",
    alternative: Alternative = "greater",
) -> WilliamsResult:
    """Williams' test from score matrices: r(A, human) vs r(B, human) given r(A, B).

    The three correlations use the same units (cells complete for A, B and human). For
    ``coefficient="spearman"`` the vectors are ranked first. Default one-sided: H1 "A better".

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> H = rng.normal(size=(5, 20))
    >>> A = H + 0.5 * rng.normal(size=(5, 20))
    >>> B = H + 2 * rng.normal(size=(5, 20))
    >>> williams_from_scores(A, B, H, "segment").pvalue < 0.001
    True
    """
    level = check_level(level)
    coefficient = check_coefficient(coefficient)
    if coefficient not in ("pearson", "spearman"):
        raise InputError("Williams' test is for Pearson (or Spearman on ranks); use "
                         "permutation_test for Kendall")
    a, b, h = _level_vectors(np.asarray(XA, float), np.asarray(XB, float),
                             np.asarray(Y, float), level)
    r12 = float(batch_correlation(h, a, coefficient))
    r13 = float(batch_correlation(h, b, coefficient))
    r23 = float(batch_correlation(a, b, coefficient))
    return williams_test(r12, r13, r23, int(h.size), alternative)


@dataclass(frozen=True)
class PermutationResult(StatResult):
    """Paired permutation test of r(A, human) - r(B, human).

    ``draws_a`` / ``draws_b`` hold, for every permutation, the coefficient of the metric in
    slot A / slot B after the swap (shape ``(permutations,)``); ``statistic_a`` /
    ``statistic_b`` are aliases of ``r_a`` / ``r_b`` (the shared shape of nlgeval's
    metric-comparison results, see :class:`PermutationComparison`).

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> H = rng.normal(size=(4, 10))
    >>> A = H + 0.5 * rng.normal(size=(4, 10))
    >>> B = rng.normal(size=(4, 10))
    >>> stat, p = permutation_test(A, B, H, "segment", permutations=200, seed=0)
    >>> stat > 0, p < 0.01
    (True, True)
    """

    statistic: float
    pvalue: float
    r_a: float
    r_b: float
    permutations: int
    scheme: str
    alternative: str
    seed: int
    draws_a: np.ndarray = field(default_factory=lambda: np.empty(0), repr=False, compare=False)
    draws_b: np.ndarray = field(default_factory=lambda: np.empty(0), repr=False, compare=False)

    @property
    def statistic_a(self) -> float:
        return self.r_a

    @property
    def statistic_b(self) -> float:
        return self.r_b

    _aliases = {"statistic_a": "r_a", "statistic_b": "r_b"}
    _omit = frozenset({"draws_a", "draws_b"})  # JSON-sized: everything but the draws


@dataclass(frozen=True)
class PermutationComparison(StatResult):
    """A paired permutation comparison of two metrics on one statistic: nlgeval's one result
    shape for "metric A agrees with humans better than metric B" (PERM-BOTH and the
    pairwise-accuracy / Kendall-variant tests; ``PairedPermutationResult`` is the same class).

    ``statistic = statistic_a - statistic_b``; ``pvalue`` is one-sided, H1 "A is better than
    B": ``p = (1 + n_at_least) / (1 + K)`` with ``n_at_least = #{d* >= d}`` over the ``K``
    draws ``d* = draws_a - draws_b`` (Phipson & Smyth 2010, "Permutation p-values should never
    be zero"); MTME (``stats.PermutationSigDiff``) reports ``n_at_least / K``
    (:attr:`pvalue_mtme`). ``draws_a`` / ``draws_b`` are the statistic of the metric in slot A
    / slot B after each swap (shape ``(K,)``, left out of ``to_dict``); the WMT overall score
    (:func:`nlgeval.correlation.ranking.overall_score`) sums them, rescaled, across tasks.
    ``scheme``: ``"both"``/``"cells"`` (scores swapped per (system, item) cell), ``"systems"``,
    ``"items"``, or ``"pairs"`` (MTME's ``perm_test='pairs'``: pairwise-comparison outcomes
    swapped per pair). ``variant``, ``grouping``, ``epsilon_a``/``epsilon_b``, ``calibrated``,
    ``n_groups`` and ``n_pairs`` describe Kendall-variant tests (empty/0 otherwise).

    Examples
    --------
    >>> import numpy as np
    >>> res = comparison_from_draws(0.6, 0.4, np.array([0.5, 0.45, 0.6]),
    ...                             np.array([0.5, 0.55, 0.4]), name="pearson")
    >>> stat, p = res
    >>> round(stat, 2), p, res.n_at_least
    (0.2, 0.5, 1)
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
    _aliases = {"pvalue_mtme": "pvalue_mtme"}
    _omit = frozenset({"draws_a", "draws_b"})  # JSON-sized: everything but the draws

    @property
    def pvalue_mtme(self) -> float:
        """MTME's p-value convention, ``n_at_least / permutations`` (can be 0)."""
        return self.n_at_least / self.permutations if self.permutations else math.nan


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
    p = _permutation_p(observed, d, "greater")
    hits = int(round(p * (1 + np.isfinite(d).sum()) - 1)) if np.isfinite(p) else 0
    return PermutationComparison(float(observed), p, float(statistic_a), float(statistic_b),
                                 int(draws_a.shape[0]), n_at_least=hits, scheme=scheme,
                                 seed=seed, note=note, draws_a=draws_a, draws_b=draws_b,
                                 name=name, alternative="greater")


def _standardise(X: np.ndarray) -> np.ndarray:
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
    chunk near 4 million cells.

    Examples
    --------
    >>> [m.shape for m in iter_swap_masks((2, 3), 5, seed=0, chunk=2)]
    [(2, 2, 3), (2, 2, 3), (1, 2, 3)]
    """
    if scheme not in ("both", "systems", "items"):
        raise InputError(f"permutation scheme must be both, systems or items, got {scheme!r}")
    if permutations < 0:
        raise InputError(f"permutations must be >= 0, got {permutations}")
    rng = np.random.default_rng(seed)
    S, n_items = shape
    if chunk is None:
        chunk = max(1, 4_000_000 // max(1, S * n_items))
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


def swap_masks(shape: tuple[int, int], permutations: int, scheme: str, seed: int) -> np.ndarray:
    """(P, S, I) boolean masks (True = swap A and B in that cell) for PERM-BOTH/SYS/INPUT.

    Examples
    --------
    >>> swap_masks((2, 3), 4, "systems", 0).shape
    (4, 2, 3)
    """
    chunks = list(iter_swap_masks(shape, permutations, scheme, seed, chunk=max(1, permutations)))
    return np.concatenate(chunks) if chunks else np.zeros((0, *shape), dtype=bool)


def _permutation_deltas(
    XA: np.ndarray, XB: np.ndarray, Y: np.ndarray, level: str, coefficient: str,
    masks: np.ndarray, fast: bool = True,
) -> tuple[float, float, np.ndarray]:
    """r(A), r(B) and r(A*) - r(B*) for every swap mask (z-standardised scores)."""
    r_a, r_b, draws_a, draws_b = _permutation_draws(XA, XB, Y, level, coefficient, masks, fast)
    return r_a, r_b, draws_a - draws_b


def _standardised_pair(
    XA: np.ndarray, XB: np.ndarray, Y: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """z-standardised A and B and the ratings H on the cells complete in all three."""
    XA, XB, Y = (np.asarray(m, dtype=float) for m in (XA, XB, Y))
    ok = np.isfinite(XA) & np.isfinite(XB) & np.isfinite(Y)
    A = np.where(ok, _standardise(np.where(ok, XA, np.nan)), np.nan)
    B = np.where(ok, _standardise(np.where(ok, XB, np.nan)), np.nan)
    return A, B, np.where(ok, Y, np.nan)


def _permutation_draws(
    XA: np.ndarray, XB: np.ndarray, Y: np.ndarray, level: str, coefficient: str,
    masks: np.ndarray, fast: bool = True,
) -> tuple[float, float, np.ndarray, np.ndarray]:
    """r(A), r(B) and, for every swap mask, r(A*) and r(B*) (z-standardised scores)."""
    A, B, H = _standardised_pair(XA, XB, Y)
    r_a = float(level_statistic(A, H, level, coefficient))
    r_b = float(level_statistic(B, H, level, coefficient))
    if fast and coefficient == "pearson":
        draws_a, draws_b = _pearson_swap_draws(A, B, H, level, masks)
        return r_a, r_b, np.asarray(draws_a, float), np.asarray(draws_b, float)
    P = masks.shape[0]
    chunk = max(1, 2_000_000 // max(1, A.size))
    draws_a, draws_b = swap_draws(
        A, B, H, (masks[s:s + chunk] for s in range(0, P, chunk)), P,
        lambda Xs, Hs: level_statistic(Xs, Hs, level, coefficient))
    return r_a, r_b, draws_a, draws_b


_PAIR_GROUP_CELLS = 8_000_000  # bound on the stacked difference matrices of a pair group


def _all_pair_deltas(
    metrics: Mapping[str, np.ndarray], Y: np.ndarray, level: str, coefficient: str,
    masks: np.ndarray,
) -> dict[tuple[str, str], tuple[float, float, np.ndarray]]:
    """:func:`_permutation_deltas` of every pair (a before b in ``metrics``).

    Pearson pairs share the mask contractions (:func:`_pearson_swap_draws_many`), in groups
    that keep the stacked difference matrices near 8 million numbers.
    """
    names = list(metrics)
    pairs = [(a, b) for i, a in enumerate(names) for b in names[i + 1:]]
    if coefficient != "pearson":
        return {(a, b): _permutation_deltas(metrics[a], metrics[b], Y, level, coefficient,
                                            masks) for a, b in pairs}
    out = {}
    group = max(1, _PAIR_GROUP_CELLS // max(1, 3 * np.size(Y)))
    for g0 in range(0, len(pairs), group):
        chunk = pairs[g0:g0 + group]
        triples = [_standardised_pair(metrics[a], metrics[b], Y) for a, b in chunk]
        draws = _pearson_swap_draws_many(triples, level, masks)
        for (a, b), (A, B, H), (da, db) in zip(chunk, triples, draws, strict=True):
            r_a = float(level_statistic(A, H, level, coefficient))
            r_b = float(level_statistic(B, H, level, coefficient))
            out[(a, b)] = (r_a, r_b, np.asarray(da, float) - np.asarray(db, float))
    return out


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


def _permutation_p(observed: float, deltas: np.ndarray, alternative: str) -> float:
    if not np.isfinite(observed):
        return math.nan
    tol = 1e-12 * max(1.0, abs(observed))
    d = deltas[np.isfinite(deltas)]
    if alternative == "two-sided":
        hits = np.abs(d) >= abs(observed) - tol
    elif alternative == "greater":
        hits = d >= observed - tol
    else:
        hits = d <= observed + tol
    return (1 + int(hits.sum())) / (1 + d.size)


def permutation_test(
    XA: np.ndarray,
    XB: np.ndarray,
    Y: np.ndarray,
    level: str = "system",
    coefficient: str = "pearson",
    *,
    permutations: int = 1000,
    scheme: str = "both",
    alternative: Alternative = "two-sided",
    seed: int = 0,
    masks: np.ndarray | None = None,
) -> PermutationResult:
    """PERM-BOTH (default) paired permutation test of two metrics' correlations with humans.

    ``masks`` (P, S, I) may be given explicitly (e.g. all 2^(S*I) swaps of a tiny case, for an
    exact test); otherwise ``permutations`` random masks are drawn from ``default_rng(seed)``.
    ``alternative="greater"``: H1 r(A) > r(B). The result carries the per-draw coefficients
    ``draws_a`` / ``draws_b`` (r of the metric in slot A / B after each swap), which the WMT
    overall score (:func:`nlgeval.correlation.ranking.overall_score`) sums across tasks.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> H = rng.normal(size=(4, 10)); A = H + 0.5 * rng.normal(size=(4, 10))
    >>> permutation_test(A, A, H, "segment", permutations=50, seed=0).pvalue
    1.0
    """
    level = check_level(level)
    coefficient = check_coefficient(coefficient)
    if masks is None:
        masks = swap_masks(np.shape(XA), permutations, scheme, seed)
    r_a, r_b, draws_a, draws_b = _permutation_draws(XA, XB, Y, level, coefficient, masks)
    observed = r_a - r_b
    p = _permutation_p(observed, draws_a - draws_b, alternative)
    return PermutationResult(observed, p, r_a, r_b, int(masks.shape[0]), scheme, alternative,
                             seed, draws_a, draws_b)


def comparison_matrix(
    metrics: Mapping[str, np.ndarray],
    Y: np.ndarray,
    level: str = "system",
    coefficient: str = "pearson",
    *,
    method: Literal["williams", "permutation"] = "williams",
    permutations: int = 1000,
    scheme: str = "both",
    seed: int = 0,
) -> pd.DataFrame:
    """One-sided p-values for every ordered pair: H1 "row metric correlates better than column".

    Returns a long frame ``metric_a, metric_b, r_a, r_b, statistic, pvalue, method``. Williams'
    test only applies to Pearson/Spearman at system or segment level; otherwise the
    permutation test is used whatever ``method`` says (recorded in the ``method`` column).

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> H = rng.normal(size=(5, 12))
    >>> mets = {"a": H + rng.normal(size=(5, 12)), "b": rng.normal(size=(5, 12))}
    >>> cm = comparison_matrix(mets, H, "segment", "pearson", method="williams")
    >>> cm[["metric_a", "metric_b"]].values.tolist(), bool(cm.pvalue.iloc[0] < 0.05)
    ([['a', 'b'], ['b', 'a']], True)
    """
    level = check_level(level)
    coefficient = check_coefficient(coefficient)
    use = method
    if level == "item" or coefficient not in ("pearson", "spearman"):
        use = "permutation"
    names = list(metrics)
    rows = []
    deltas_of = {}
    if use != "williams":
        masks = swap_masks(np.shape(Y), permutations, scheme, seed)
        if coefficient == "pearson":  # converted once for every pair's matrix products
            masks = masks.astype(float)
        deltas_of = _all_pair_deltas(metrics, Y, level, coefficient, masks)
    for i, a in enumerate(names):
        for j, b in enumerate(names):
            if use == "williams" and i != j:
                w = williams_from_scores(metrics[a], metrics[b], Y, level, coefficient, "greater")
                rows.append({"metric_a": a, "metric_b": b, "r_a": w.r12, "r_b": w.r13,
                             "statistic": w.statistic, "pvalue": w.pvalue, "method": "williams"})
            elif use != "williams" and i < j:
                # one set of permutations serves both directions: d(B, A) = -d(A, B)
                r_a, r_b, deltas = deltas_of[(a, b)]
                obs = r_a - r_b
                method = f"permutation-{scheme}"
                rows.append({"metric_a": a, "metric_b": b, "r_a": r_a, "r_b": r_b,
                             "statistic": obs, "pvalue": _permutation_p(obs, deltas, "greater"),
                             "method": method})
                rows.append({"metric_a": b, "metric_b": a, "r_a": r_b, "r_b": r_a,
                             "statistic": -obs, "pvalue": _permutation_p(obs, deltas, "less"),
                             "method": method})
    return pd.DataFrame(rows, columns=["metric_a", "metric_b", "r_a", "r_b", "statistic",
                                       "pvalue", "method"])


def significance_clusters(
    pairwise: pd.DataFrame, correlations: Mapping[str, float], alpha: float = 0.05
) -> pd.DataFrame:
    """Group metrics that cannot be told apart (WMT-style significance clusters).

    A thin wrapper over :func:`nlgeval.correlation.ranking.assign_ranks`, the WMT rule (MTME
    ``data.AssignRanks``): metrics sorted by correlation, best first (ties by name); walking
    down the list, a metric opens the next cluster when some metric of the current cluster is
    significantly better than it (one-sided ``p <= alpha`` in ``pairwise``), otherwise it
    joins it. Cluster 1 holds the best metric and everything not significantly worse than any
    member. Metrics with a NaN correlation get cluster NaN. Returns ``metric, r, cluster``.
    (Before the rule moved to :mod:`~nlgeval.correlation.ranking`, this function used
    ``p < alpha`` and kept the input order among equal correlations.)

    Examples
    --------
    >>> import pandas as pd
    >>> pw = pd.DataFrame({"metric_a": ["a", "b"], "metric_b": ["b", "a"], "pvalue": [0.01, 0.99]})
    >>> significance_clusters(pw, {"a": 0.8, "b": 0.5})["cluster"].tolist()
    [1.0, 2.0]
    """
    from nlgeval.correlation.ranking import assign_ranks

    ranks = assign_ranks(correlations, pairwise, alpha)
    cluster = ranks["rank"].astype("Float64").to_numpy(dtype=float, na_value=np.nan)
    return pd.DataFrame({"metric": ranks["metric"], "r": ranks["statistic"],
                         "cluster": cluster})


def pvalue_matrix(pairwise: pd.DataFrame, order: Sequence[str] | None = None) -> pd.DataFrame:
    """Wide metric x metric matrix of the one-sided p-values (row better than column).

    Examples
    --------
    >>> import pandas as pd
    >>> pw = pd.DataFrame({"metric_a": ["a", "b"], "metric_b": ["b", "a"], "pvalue": [0.01, 0.99]})
    >>> float(pvalue_matrix(pw).loc["a", "b"])
    0.01
    """
    wide = pairwise.pivot(index="metric_a", columns="metric_b", values="pvalue")
    order = list(order) if order is not None else sorted(set(pairwise["metric_a"]))
    return wide.reindex(index=order, columns=order)
