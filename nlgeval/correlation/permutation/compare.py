"""Is metric A's correlation with the human score really higher than metric B's?

The paired permutation test of two *dependent* correlations (the same human scores, the same
outputs); Williams' (1959) t test, the parametric alternative for Pearson, is
:mod:`nlgeval.correlation.williams`, and :func:`comparison_matrix` runs either on every pair.

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

from collections.abc import Mapping
from typing import Literal

import numpy as np
import pandas as pd

from nlgeval.correlation.coefficients import check_coefficient
from nlgeval.correlation.levels import check_level, level_statistic
from nlgeval.correlation.permutation._pair_stream import streamed_pair_deltas
from nlgeval.correlation.permutation._pair_swaps import PairTerms, pair_swap_deltas
from nlgeval.correlation.permutation._pearson_swaps import _pearson_swap_draws
from nlgeval.correlation.permutation.draws import (
    ALTERNATIVES,
    PermutationComparison,
    _count_at_least,
    _permutation_p,
    standardise,
    swap_draws,
    swap_masks,
)
from nlgeval.correlation.williams import Alternative, williams_pairs
from nlgeval.deprecation import renamed_keyword
from nlgeval.errors import InputError

__all__ = ["comparison_matrix", "permutation_test"]


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
    A = np.where(ok, standardise(np.where(ok, XA, np.nan)), np.nan)
    B = np.where(ok, standardise(np.where(ok, XB, np.nan)), np.nan)
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

    Pearson pairs are batched
    (:func:`~nlgeval.correlation.permutation._pair_swaps.pair_swap_deltas`:
    every metric prepared once, the contractions of all pairs in one product per block of
    masks, in groups that keep the stacked difference matrices near 8 million numbers; the
    same numbers as one pair at a time).
    """
    names = list(metrics)
    pairs = [(a, b) for i, a in enumerate(names) for b in names[i + 1:]]
    if coefficient != "pearson":
        return {(a, b): _permutation_deltas(metrics[a], metrics[b], Y, level, coefficient,
                                            masks) for a, b in pairs}
    group = max(1, _PAIR_GROUP_CELLS // max(1, 3 * np.size(Y)))
    prep = PairTerms(metrics, Y, level, _standardised_pair)
    return pair_swap_deltas(prep, pairs, masks, group)


def _pearson_pair_deltas(
    metrics: Mapping[str, np.ndarray], Y: np.ndarray, level: str, n_resamples: int,
    scheme: str, seed: int,
) -> dict[tuple[str, str], tuple[float, float, np.ndarray]]:
    """:func:`_all_pair_deltas` of the Pearson pairs on ``n_resamples`` masks drawn a chunk at
    a time (one stream: the same masks as one draw): every pair prepared once and the masks
    streamed (:func:`~nlgeval.correlation.permutation._pair_stream.streamed_pair_deltas`,
    the numbers of ``_all_pair_deltas`` called chunk by chunk)."""
    size = max(1, _MASK_CELLS // max(1, np.size(Y)) // _PERM_BLOCK) * _PERM_BLOCK
    names = list(metrics)
    pairs = [(a, b) for i, a in enumerate(names) for b in names[i + 1:]]
    group = max(1, _PAIR_GROUP_CELLS // max(1, 3 * np.size(Y)))
    return streamed_pair_deltas(metrics, Y, level, pairs, group, n_resamples, scheme, seed,
                                size, _standardised_pair)


#: permutations per Pearson swap product (fixed; see :func:`_all_pair_deltas`), and the mask
#: cells drawn at once by :func:`comparison_matrix` (rounded to whole blocks): the memory of a
#: PERM-BOTH comparison is one chunk's, not (permutations x systems x items) float64 numbers
_PERM_BLOCK = 8
_MASK_CELLS = 4_000_000




def permutation_test(
    XA: np.ndarray,
    XB: np.ndarray,
    Y: np.ndarray,
    level: str = "system",
    coefficient: str = "pearson",
    *,
    n_resamples: int = 1000,
    scheme: str = "both",
    alternative: Alternative = "two-sided",
    seed: int = 0,
    masks: np.ndarray | None = None,
    permutations: int | None = None,
) -> PermutationComparison:
    """PERM-BOTH (default) paired permutation test of two metrics' correlations with humans.

    ``masks`` (P, S, I) may be given explicitly (e.g. all 2^(S*I) swaps of a tiny case, for an
    exact test); otherwise ``n_resamples`` random masks are drawn from ``default_rng(seed)``.
    ``alternative``: ``"two-sided"`` (default, H1 r(A) != r(B)), ``"greater"`` (H1
    r(A) > r(B)) or ``"less"``. Returns nlgeval's one comparison shape,
    :class:`PermutationComparison`: ``statistic``
    ``= r_a - r_b`` (``statistic_a`` / ``statistic_b``), ``pvalue``, ``n_at_least``,
    ``alternative``, ``scheme``, ``seed``, ``n_resamples``, ``name`` (the coefficient) and the
    per-draw coefficients ``draws_a`` / ``draws_b`` (r of the metric in slot A / B after each
    swap), which the WMT overall score (:func:`nlgeval.correlation.ranking.overall_score`) sums
    across tasks.
    ``permutations``: the earlier name of ``n_resamples`` (deprecated).

    Parameters
    ----------
    XA, XB, Y : numpy.ndarray
        Metrics A and B and the human scores, (systems x items), NaN for a missing cell.
    level : str
        ``system`` (default), ``segment``, ... (see :mod:`nlgeval.correlation.levels`).
    coefficient : str
        The correlation coefficient (default ``"pearson"``).
    n_resamples, permutations, seed : int, int or None, int
        Number of random masks (default 1000; ``permutations`` its deprecated name); seed (0).
    scheme : str
        ``"both"`` (per cell, default), ``"systems"`` or ``"items"``.
    alternative : str
        ``"two-sided"`` (default), ``"greater"`` or ``"less"``.
    masks : numpy.ndarray, optional
        Given (P x systems x items) boolean swap masks, used instead of drawing them.

    Returns
    -------
    PermutationComparison
        The two coefficients, their difference, the p-value and the per-draw coefficients.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> H = rng.normal(size=(4, 10)); A = H + 0.5 * rng.normal(size=(4, 10))
    >>> permutation_test(A, A, H, "segment", n_resamples=50, seed=0).pvalue
    1.0
    >>> res = permutation_test(A, H, H, "segment", n_resamples=50, alternative="less")
    >>> stat, p = res
    >>> bool(stat < 0), p, res.n_at_least, res.pvalue_mtme, res.draws_a.shape
    (True, 0.0196078431372549, 0, 0.0, (50,))
    """
    n_resamples = renamed_keyword(
        "permutation_test", "permutations", permutations, "n_resamples", n_resamples)
    level = check_level(level)
    coefficient = check_coefficient(coefficient)
    if alternative not in ALTERNATIVES:
        raise InputError(f"alternative must be one of {', '.join(ALTERNATIVES)}, "
                         f"got {alternative!r}")
    if masks is None:
        masks = swap_masks(np.shape(XA), n_resamples, scheme, seed)
    r_a, r_b, draws_a, draws_b = _permutation_draws(XA, XB, Y, level, coefficient, masks)
    observed = r_a - r_b
    deltas = draws_a - draws_b
    hits, _ = _count_at_least(observed, deltas, alternative)
    p = _permutation_p(observed, deltas, alternative)
    return PermutationComparison(
        observed, p, r_a, r_b, int(masks.shape[0]), n_at_least=hits, scheme=scheme, seed=seed,
        draws_a=draws_a, draws_b=draws_b, name=coefficient, alternative=alternative)


def comparison_matrix(
    metrics: Mapping[str, np.ndarray],
    Y: np.ndarray,
    level: str = "system",
    coefficient: str = "pearson",
    *,
    method: Literal["williams", "permutation"] = "williams",
    n_resamples: int = 1000,
    scheme: str = "both",
    seed: int = 0,
    permutations: int | None = None,
) -> pd.DataFrame:
    """One-sided p-values for every ordered pair: H1 "row metric correlates better than column".

    Returns a long frame ``metric_a, metric_b, r_a, r_b, statistic, pvalue, method``. Williams'
    test only applies to Pearson/Spearman at system or segment level; otherwise the
    permutation test is used whatever ``method`` says (recorded in the ``method`` column).
    ``permutations``: the earlier name of ``n_resamples`` (deprecated).

    Parameters
    ----------
    metrics, Y, level, coefficient, method, n_resamples, scheme, seed, permutations : various
        Metric score matrices by name, human (systems x items) scores; the rest as in
        :func:`permutation_test` (``method``: ``"williams"``, the default, or ``"permutation"``).

    Returns
    -------
    pandas.DataFrame

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
    n_resamples = renamed_keyword(
        "comparison_matrix", "permutations", permutations, "n_resamples", n_resamples)
    level = check_level(level)
    coefficient = check_coefficient(coefficient)
    use = method
    if level == "item" or coefficient not in ("pearson", "spearman"):
        use = "permutation"
    names = list(metrics)
    rows = []
    deltas_of = {}
    tests = williams_pairs(metrics, Y, level, coefficient, "greater") if use == "williams" \
        else {}
    if use != "williams" and coefficient == "pearson":
        deltas_of = _pearson_pair_deltas(metrics, Y, level, n_resamples, scheme, seed)
    elif use != "williams":
        masks = swap_masks(np.shape(Y), n_resamples, scheme, seed)
        deltas_of = _all_pair_deltas(metrics, Y, level, coefficient, masks)
    for i, a in enumerate(names):
        for j, b in enumerate(names):
            if use == "williams" and i != j:
                w = tests[(a, b)]
                rows.append({"metric_a": a, "metric_b": b, "r_a": w.r12, "r_b": w.r13,
                             "statistic": w.statistic, "pvalue": w.pvalue, "method": "williams"})
            elif use != "williams" and i < j:
                # one set of permutations serves both directions: d(B, A) = -d(A, B)
                r_a, r_b, deltas = deltas_of[(a, b)]
                obs = r_a - r_b
                perm_method = f"permutation-{scheme}"
                rows.append({"metric_a": a, "metric_b": b, "r_a": r_a, "r_b": r_b,
                             "statistic": obs, "pvalue": _permutation_p(obs, deltas, "greater"),
                             "method": perm_method})
                rows.append({"metric_a": b, "metric_b": a, "r_a": r_b, "r_b": r_a,
                             "statistic": -obs, "pvalue": _permutation_p(obs, deltas, "less"),
                             "method": perm_method})
    return pd.DataFrame(rows, columns=["metric_a", "metric_b", "r_a", "r_b", "statistic",
                                       "pvalue", "method"])
