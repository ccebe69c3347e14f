"""Non-parametric comparison of generators on human ratings.

Belz & Reiter / Reiter & Belz (2009), "An Investigation into the Validity of Some Metrics for
Automatically Evaluating NLG Systems", Experiment 2: ratings are ordinal, so pairs of systems are
compared with the Wilcoxon signed-rank test and a Bonferroni correction over all pairs. Pairs of
ratings are formed either

* by **item** (``pairing="item"``): system A's and system B's (mean) rating of the same item;
  items rated for only one of the two systems are left out (counted in ``n_unpaired``); or
* by the **LSED rule** (``pairing="lsed"``): within each rater, the lowest rating they gave to A
  is paired with their lowest rating of B, the second lowest with the second lowest, ... the
  highest with the highest. A Latin-square design makes every rater rate each system equally
  often; a rater who did not raises :class:`InputError`.

The test of each pair and its effect size (the matched-pairs rank-biserial r with a
Fisher-z interval) are :func:`nlgeval.human.wilcoxon.signed_rank`. Multiple-comparison
correction is :func:`statsmodels.stats.multitest.multipletests` with the method passed
explicitly (its default is Holm-Sidak).

The interval is per comparison; the significance flag uses the corrected p. Where the two
disagree (the interval excludes 0 but the corrected p does not reach alpha)
:func:`pairwise_warnings` says so, as it does for pairs with too few items for the exact test
ever to reach the corrected level.

The Friedman test of all systems at once is in :mod:`nlgeval.human.friedman_test`;
this module re-exports it, and the signed-rank kernel, under their old import paths.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import combinations
from typing import Literal

import numpy as np
import pandas as pd
from statsmodels.stats.multitest import multipletests

from nlgeval.errors import InputError

# Re-exported under their old import paths (``from nlgeval.human.compare import friedman``).
from nlgeval.human.frames import check_ratings_frame as _check_frame
from nlgeval.human.friedman_test import FriedmanResult as FriedmanResult
from nlgeval.human.friedman_test import friedman as friedman
from nlgeval.human.guards import min_attainable_pvalue_signed_rank
from nlgeval.human.wilcoxon import SignedRankResult as SignedRankResult
from nlgeval.human.wilcoxon import rank_biserial_ci as rank_biserial_ci
from nlgeval.human.wilcoxon import signed_rank
from nlgeval.human.wilcoxon import wilcoxon_method as wilcoxon_method

Pairing = Literal["item", "lsed"]
Correction = Literal["bonferroni", "holm", "none"]

PAIRWISE_COLUMNS = (
    "system_a", "system_b", "n", "statistic", "pvalue", "pvalue_adjusted", "significant",
    "effect_size", "direction", "higher", "mean_a", "mean_b", "n_unpaired", "method",
    "effect_size_low", "effect_size_high",
)


def correct_pvalues(pvalues: Sequence[float] | np.ndarray, correction: str,
                    alpha: float = 0.05) -> tuple[np.ndarray, np.ndarray]:
    """Adjusted p-values and reject decisions (statsmodels ``multipletests``, method explicit).

    Parameters
    ----------
    pvalues : sequence of float or numpy.ndarray
        The unadjusted p-values.
    correction : {"bonferroni", "holm", "none"}
        The multiple-comparison correction.
    alpha : float, default 0.05
        The family-wise level of the reject decisions.

    Returns
    -------
    tuple of (numpy.ndarray, numpy.ndarray)
        Adjusted p-values and boolean reject decisions, in input order.

    Examples
    --------
    >>> adj, reject = correct_pvalues([0.01, 0.04, 0.03], "holm")
    >>> adj.round(2).tolist(), reject.tolist()
    ([0.03, 0.06, 0.06], [True, False, False])
    """
    p = np.asarray(pvalues, dtype=float)
    if correction not in ("bonferroni", "holm", "none"):
        raise InputError(f"correction must be bonferroni, holm or none, got {correction!r}")
    if not 0 < alpha < 1:
        raise InputError(f"alpha must be between 0 and 1, got {alpha}")
    if p.size == 0:
        return p, np.zeros(0, dtype=bool)
    if correction == "none":
        return p.copy(), p <= alpha
    reject, p_adj, _, _ = multipletests(p, alpha=alpha, method=correction)
    return p_adj, reject


def _pairs_item(wide: pd.DataFrame, a: str, b: str) -> tuple[np.ndarray, np.ndarray, int]:
    """Per-item mean ratings of a and b on the items rated for both (``wide``: item x system
    table of mean ratings, NaN where unrated)."""
    x, y = wide[a].to_numpy(), wide[b].to_numpy()
    rated_a, rated_b = ~np.isnan(x), ~np.isnan(y)
    both = rated_a & rated_b
    return x[both], y[both], int((rated_a | rated_b).sum() - both.sum())


def _pairs_lsed(df: pd.DataFrame, a: str, b: str) -> tuple[np.ndarray, np.ndarray, int]:
    """The 2009 rule: within each rater, k-th lowest rating of a with k-th lowest of b."""
    xs, ys = [], []
    sub = df[df["system"].isin([a, b])]
    for rater, g in sub.groupby("rater", sort=True):
        sa = np.sort(g.loc[g["system"] == a, "score"].to_numpy())
        sb = np.sort(g.loc[g["system"] == b, "score"].to_numpy())
        if len(sa) != len(sb):
            raise InputError(
                f"LSED pairing needs every rater to rate both systems equally often; rater "
                f"'{rater}' rated '{a}' {len(sa)} time(s) and '{b}' {len(sb)} time(s) "
                "(use pairing='item', or check the design)", column="rater",
            )
        xs.append(sa)
        ys.append(sb)
    if not xs:
        return np.zeros(0), np.zeros(0), 0
    return np.concatenate(xs), np.concatenate(ys), 0


def _systems_to_compare(df: pd.DataFrame, systems: Sequence[str] | None) -> Sequence[str]:
    """``systems`` (checked against the rated ones) or every rated system in order of
    appearance; at least two."""
    present = list(dict.fromkeys(df["system"]))
    if systems is None:
        systems = present
    else:
        unknown = [s for s in systems if s not in present]
        if unknown:
            raise InputError(f"unknown system(s) {', '.join(unknown)} "
                             f"(rated systems: {', '.join(present)})", column="system")
    if len(systems) < 2:
        raise InputError(
            f"comparing systems needs at least 2 systems; the ratings have {len(systems)} "
            f"({', '.join(systems)})", column="system",
        )
    return systems


def pairwise_wilcoxon(
    ratings: pd.DataFrame, *, pairing: Pairing = "item", correction: Correction = "bonferroni",
    alpha: float = 0.05, systems: Sequence[str] | None = None,
) -> pd.DataFrame:
    """Wilcoxon signed-rank test for every pair of systems, corrected over all pairs.

    Parameters
    ----------
    ratings : pandas.DataFrame
        Columns ``rater, item, system, score`` (one criterion; ``rater`` is only needed for
        ``pairing="lsed"``).
    pairing : {"item", "lsed"}
        Pair the ratings by item, or by rater within the Latin-square design.
    correction : str
        Multiple-comparison correction over all pairs (``bonferroni``, ``holm``, ...).
    alpha : float
        Level of the corrected tests (and 1 - confidence of the effect-size intervals).
    systems : sequence of str, optional
        The systems to compare, in this order (default: all, in order of appearance).

    Returns
    -------
    pandas.DataFrame
        One row per pair: ``system_a, system_b, n, statistic, pvalue, pvalue_adjusted,
        significant, effect_size, direction, higher, mean_a, mean_b, n_unpaired, method``;
        ``statistic`` is scipy's two-sided min(W+, W-); ``direction`` is ``">"`` when A is rated
        higher (W+ > W-), ``"<"`` when lower, ``"="`` otherwise; ``higher`` names the
        higher-rated system (``""`` for ties); ``mean_a``/``mean_b`` are the means of the
        paired ratings.

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"item": [str(i) for i in range(6) for _ in "ab"],
    ...                    "system": list("ab") * 6, "rater": "r",
    ...                    "score": [5, 1, 6, 2, 7, 3, 8, 4, 9, 5, 10, 6]})
    >>> pairs = pairwise_wilcoxon(df)
    >>> pairs[["system_a", "system_b", "pvalue", "higher"]].values.tolist()
    [['a', 'b', 0.03125, 'a']]
    """
    if pairing not in ("item", "lsed"):
        raise InputError(f"pairing must be 'item' or 'lsed', got {pairing!r}")
    needed = ["rater", "item", "system", "score"] if pairing == "lsed" else \
        ["item", "system", "score"]
    df = _check_frame(ratings, needed)
    systems = _systems_to_compare(df, systems)
    rows = []
    wide = df.groupby(["item", "system"])["score"].mean().unstack() if pairing == "item" \
        else None
    for a, b in combinations(systems, 2):
        if wide is not None:
            x, y, unpaired = _pairs_item(wide, a, b)
        else:
            x, y, unpaired = _pairs_lsed(df, a, b)
        res = signed_rank(x, y, confidence=1.0 - alpha)
        if res.n == 0:
            raise InputError(
                f"systems '{a}' and '{b}' have no {'item' if pairing == 'item' else 'rater'} "
                "in common, so they cannot be paired", column="system",
            )
        d = res.w_plus - res.w_minus
        rows.append({
            "system_a": a, "system_b": b, "n": res.n, "statistic": res.statistic,
            "pvalue": res.pvalue, "effect_size": res.effect_size,
            "direction": ">" if d > 0 else "<" if d < 0 else "=",
            "higher": a if d > 0 else b if d < 0 else "",
            "mean_a": float(np.mean(x)), "mean_b": float(np.mean(y)),
            "n_unpaired": unpaired, "method": res.method,
            "effect_size_low": res.ci_low, "effect_size_high": res.ci_high,
            "n_nonzero": res.n - res.n_zero,
        })
    out = pd.DataFrame(rows)
    p_adj, reject = correct_pvalues(out["pvalue"].to_numpy(), correction, alpha)
    out["pvalue_adjusted"] = p_adj
    out["significant"] = reject.astype(bool)
    warns = pairwise_warnings(out, alpha=alpha, correction=correction)
    out = out[list(PAIRWISE_COLUMNS)].copy()
    out.attrs["warnings"] = warns
    return out


def pairwise_warnings(pairs: pd.DataFrame, *, alpha: float, correction: str) -> list[str]:
    """Warnings for a pairwise Wilcoxon table: pairs whose exact test can never reach the
    corrected level (too few non-zero differences: the smallest two-sided p is 2 / 2^n), and
    pairs whose (per-comparison) effect-size interval excludes 0 while the corrected p-value
    is not significant.

    Examples
    --------
    >>> import pandas as pd
    >>> from nlgeval.human.compare import PAIRWISE_COLUMNS
    >>> pairwise_warnings(pd.DataFrame(columns=list(PAIRWISE_COLUMNS)), alpha=0.05,
    ...                   correction="holm")
    []
    """
    m = len(pairs)
    level = alpha / m if correction == "bonferroni" and m else alpha
    out = []
    if "n_nonzero" in pairs.columns:
        nnz = pairs["n_nonzero"].to_numpy()
    else:
        nnz = pairs["n"].to_numpy()
    floor = np.array([min_attainable_pvalue_signed_rank(k) for k in nnz])
    weak = floor > level
    if weak.any():
        names = [f"{a}-{b} (n = {k})" for a, b, k in zip(
            pairs["system_a"][weak], pairs["system_b"][weak], nnz[weak], strict=True)]
        out.append(
            f"{int(weak.sum())} of {m} pairs have too few non-zero differences for the exact "
            f"signed-rank test ever to reach {level:.3g}"
            + (f" (alpha {alpha:g} / {m} pairs)" if level != alpha else "")
            + ": " + ", ".join(names[:6]) + (" ..." if len(names) > 6 else "")
            + "; a non-significant result there says nothing")
    if {"effect_size_low", "effect_size_high"} <= set(pairs.columns):
        lo, hi = pairs["effect_size_low"].to_numpy(), pairs["effect_size_high"].to_numpy()
        excl = ((lo > 0) | (hi < 0)) & ~pairs["significant"].to_numpy(dtype=bool)
        if excl.any():
            names = [f"{a}-{b}" for a, b in zip(pairs["system_a"][excl], pairs["system_b"][excl],
                                               strict=True)]
            out.append(
                f"the effect-size interval excludes 0 for {', '.join(names)} but the "
                f"{correction}-corrected p-value is not significant: the interval is per "
                "comparison (uncorrected) and approximate, the significance flag is corrected "
                "for all pairs")
    return out
