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

The test itself is :func:`scipy.stats.wilcoxon` (``zero_method="wilcox"``: zero differences are
dropped; ``method="auto"``: exact distribution for n <= 50 without ties or zeros, exact
enumeration of the permutation distribution for n <= 13 with ties/zeros, normal approximation
with tie correction otherwise -- the ``method`` column says which). Multiple-comparison
correction is :func:`statsmodels.stats.multitest.multipletests` with the method passed
explicitly (its default is Holm-Sidak). Effect size: the matched-pairs rank-biserial
correlation r = (W+ - W-) / (W+ + W-) (Kerby 2014), in [-1, 1], positive when A is rated higher,
with a confidence interval from Fisher's z transform, tanh(atanh(r) +- z_{1-a/2} SE), SE =
sqrt(sum of squared ranks) / (n (n + 1) / 2) over the n non-zero differences -- the interval R's
``effectsize::rank_biserial(paired = TRUE)`` reports (Ben-Shachar, Luedecke & Makowski 2020).
At |r| = 1 that interval collapses to a point; here r is then moved half a rank towards 0
for the outer bound's z transform (the bound at +-1 stays), so the interval is never [1, 1].

The interval is per comparison; the significance flag uses the corrected p. Where the two
disagree (the interval excludes 0 but the corrected p does not reach alpha)
:func:`pairwise_warnings` says so, as it does for pairs with too few items for the exact test
ever to reach the corrected level.

The Friedman test (:func:`scipy.stats.friedmanchisquare`) compares all systems at once where the
design is complete (every block -- item, with ratings averaged over raters -- has every system).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import ClassVar, Literal

import numpy as np
import pandas as pd
from scipy import stats
from statsmodels.stats.multitest import multipletests

from nlgeval.errors import InputError
from nlgeval.human.guards import min_attainable_pvalue_signed_rank
from nlgeval.results import ConfidenceInterval, StatResult

Pairing = Literal["item", "lsed"]
Correction = Literal["bonferroni", "holm", "none"]

PAIRWISE_COLUMNS = (
    "system_a", "system_b", "n", "statistic", "pvalue", "pvalue_adjusted", "significant",
    "effect_size", "direction", "higher", "mean_a", "mean_b", "n_unpaired", "method",
    "effect_size_low", "effect_size_high",
)


def _check_frame(ratings: pd.DataFrame, needed: Sequence[str]) -> pd.DataFrame:
    if not isinstance(ratings, pd.DataFrame):
        raise InputError(f"ratings must be a pandas DataFrame, got {type(ratings).__name__}")
    missing = [c for c in needed if c not in ratings.columns]
    if missing:
        raise InputError(
            f"ratings need columns {', '.join(needed)}; missing {', '.join(missing)}"
        )
    df = ratings[list(needed)].copy()
    for c in needed:
        if c != "score":
            df[c] = df[c].astype(str)
    df["score"] = pd.to_numeric(df["score"], errors="coerce")
    if df["score"].isna().any():
        pos = int(np.flatnonzero(df["score"].isna().to_numpy())[0])
        raise InputError(f"missing or non-numeric score in ratings row {pos + 1}",
                         column="score")
    if "criterion" in ratings.columns and ratings["criterion"].nunique() > 1:
        raise InputError(
            "ratings hold several criteria ("
            + ", ".join(map(str, ratings["criterion"].unique()))
            + "); select one criterion first"
        )
    return df


def correct_pvalues(pvalues: Sequence[float] | np.ndarray, correction: str,
                    alpha: float = 0.05) -> tuple[np.ndarray, np.ndarray]:
    """Adjusted p-values and reject decisions (statsmodels ``multipletests``, method explicit).

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


def wilcoxon_method(d: np.ndarray) -> str:
    """Which p-value ``scipy.stats.wilcoxon(method="auto")`` computes for differences ``d``
    (mirrors scipy 1.17's rule, so reports can say it).

    Examples
    --------
    >>> wilcoxon_method([1.0, -2.0, 3.0]), wilcoxon_method([1.0, 1.0, 0.0])
    ('exact', 'exact-permutation')
    """
    d = np.asarray(d, dtype=float)
    if len(d) > 50:
        return "normal"
    nz = d[d != 0]
    has_ties = len(np.unique(np.abs(nz))) < len(nz)
    if not (has_ties or len(nz) < len(d)):
        return "exact"
    if len(d) <= 13:
        return "exact-permutation"
    return "normal"


@dataclass(frozen=True)
class SignedRankResult(StatResult):
    """One Wilcoxon signed-rank test of paired samples ``a`` vs ``b``; ``ci_low``/``ci_high``
    bound the rank-biserial effect size (``confidence_interval()``; keys ``effect_size_low``
    / ``effect_size_high`` / ``confidence`` kept in ``to_dict``).

    Examples
    --------
    >>> res = signed_rank([3, 4, 5, 6, 7], [1, 1, 2, 2, 3])
    >>> stat, p = res
    >>> float(p), res.effect_size
    (0.0625, 1.0)
    """

    _aliases: ClassVar[dict[str, str]] = {"effect_size_low": "ci_low",
                                          "effect_size_high": "ci_high",
                                          "confidence": "confidence_level"}

    n: int
    statistic: float
    pvalue: float
    effect_size: float
    w_plus: float
    w_minus: float
    n_zero: int
    method: str
    ci_low: float = np.nan
    ci_high: float = np.nan
    confidence_level: float = 0.95

    @property
    def effect_size_low(self) -> float:
        """Lower bound of the rank-biserial r's interval (the ``pairs`` table's name)."""
        return self.ci_low

    @property
    def effect_size_high(self) -> float:
        """Upper bound of the rank-biserial r's interval."""
        return self.ci_high


def rank_biserial_ci(r: float, n_nonzero: int, confidence: float = 0.95
                     ) -> ConfidenceInterval:
    """Fisher-z interval of the matched-pairs rank-biserial r from ``n_nonzero`` non-zero
    differences (as R's ``effectsize::rank_biserial``; half-rank adjustment at |r| = 1).

    Examples
    --------
    >>> ci = rank_biserial_ci(0.5, 20)
    >>> ci.low < 0.5 < ci.high
    True
    """
    nd = int(n_nonzero)
    if nd == 0 or not np.isfinite(r):
        return ConfidenceInterval(np.nan, np.nan)
    maxw = nd * (nd + 1) / 2.0
    se = np.sqrt((2 * nd ** 3 + 3 * nd ** 2 + nd) / 6.0) / maxw
    z = stats.norm.ppf(0.5 + confidence / 2.0)
    r_in = float(np.clip(r, -(maxw - 1.0) / maxw if maxw > 1 else -0.5,
                         (maxw - 1.0) / maxw if maxw > 1 else 0.5))
    lo, hi = np.tanh(np.arctanh(r_in) + np.array([-1.0, 1.0]) * z * se)
    if r >= 1.0:
        hi = 1.0
    if r <= -1.0:
        lo = -1.0
    return ConfidenceInterval(float(lo), float(hi))


def signed_rank(a: np.ndarray, b: np.ndarray, *, confidence: float = 0.95) -> SignedRankResult:
    """Wilcoxon signed-rank test of a - b (scipy) plus the matched-pairs rank-biserial r and its
    interval (:func:`rank_biserial_ci`).

    All-zero differences (no evidence of any difference) give p = 1 and r = 0 (scipy returns
    NaN there); zero pairs give NaN for everything.

    Examples
    --------
    >>> res = signed_rank([5, 6, 7, 8, 9, 10], [1, 2, 3, 4, 5, 6])
    >>> float(res.pvalue), res.effect_size, res.method
    (0.03125, 1.0, 'exact-permutation')
    """
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    d = a - b
    n = len(d)
    nz = d[d != 0]
    if n == 0:
        return SignedRankResult(0, np.nan, np.nan, np.nan, np.nan, np.nan, 0, "none",
                                confidence_level=confidence)
    if len(nz) == 0:
        return SignedRankResult(n, 0.0, 1.0, 0.0, 0.0, 0.0, n, "all-zero",
                                confidence_level=confidence)
    ranks = stats.rankdata(np.abs(nz))
    w_plus = float(ranks[nz > 0].sum())
    w_minus = float(ranks[nz < 0].sum())
    res = stats.wilcoxon(a, b, zero_method="wilcox", method="auto")
    r = (w_plus - w_minus) / (w_plus + w_minus)
    ci = rank_biserial_ci(r, len(nz), confidence)
    return SignedRankResult(
        n=n, statistic=float(res.statistic), pvalue=float(res.pvalue), effect_size=float(r),
        w_plus=w_plus, w_minus=w_minus, n_zero=int(n - len(nz)), method=wilcoxon_method(d),
        ci_low=ci.low, ci_high=ci.high, confidence_level=confidence,
    )


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


def pairwise_wilcoxon(
    ratings: pd.DataFrame,
    *,
    pairing: Pairing = "item",
    correction: Correction = "bonferroni",
    alpha: float = 0.05,
    systems: Sequence[str] | None = None,
) -> pd.DataFrame:
    """Wilcoxon signed-rank test for every pair of systems, corrected over all pairs.

    ``ratings``: columns ``rater, item, system, score`` (one criterion; ``rater`` is only needed
    for ``pairing="lsed"``). Returns one row per pair (systems in order of appearance, or
    ``systems``) with columns ``system_a, system_b, n, statistic, pvalue, pvalue_adjusted,
    significant, effect_size, direction, higher, mean_a, mean_b, n_unpaired, method``:
    ``statistic`` is scipy's two-sided statistic min(W+, W-); ``direction`` is ``">"`` when A
    is rated higher (W+ > W-), ``"<"`` when lower, ``"="`` otherwise; ``higher`` names the
    higher-rated system (``""`` for ties); ``mean_a``/``mean_b`` are the means of the paired
    ratings.

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


@dataclass(frozen=True)
class FriedmanResult(StatResult):
    """Friedman's test over k systems in n complete blocks; Kendall's W = chi2 / (n (k - 1)).

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"item": [1, 1, 1, 2, 2, 2, 3, 3, 3], "system": list("abc") * 3,
    ...                    "score": [1, 2, 3, 1, 3, 2, 1, 2, 3]})
    >>> res = friedman(df)
    >>> res.df, round(res.kendalls_w, 3)
    (2, 0.778)
    """

    statistic: float
    pvalue: float
    df: int
    n_blocks: int
    k: int
    kendalls_w: float
    block: str
    n_dropped_blocks: int
    mean_ranks: dict[str, float]


def friedman(
    ratings: pd.DataFrame,
    *,
    block: Literal["item", "rater"] = "item",
    drop_incomplete: bool = False,
) -> FriedmanResult:
    """Friedman test across all systems (:func:`scipy.stats.friedmanchisquare`).

    Each block (an item, or a rater) must have every system; ratings within a block and system
    are averaged. Incomplete blocks raise :class:`InputError` naming one, unless
    ``drop_incomplete=True`` (then they are dropped and counted in ``n_dropped_blocks``).
    Needs at least 3 systems (for 2 use the Wilcoxon test) and 2 complete blocks.

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"item": [1, 1, 1, 2, 2, 2, 3, 3, 3], "system": list("abc") * 3,
    ...                    "score": [1, 2, 3, 1, 2, 3, 1, 2, 3]})
    >>> res = friedman(df)
    >>> res.statistic, res.kendalls_w
    (6.0, 1.0)
    """
    needed = ["item", "system", "score"] + (["rater"] if block == "rater" else [])
    if block not in ("item", "rater"):
        raise InputError(f"block must be 'item' or 'rater', got {block!r}")
    df = _check_frame(ratings, needed)
    systems = list(dict.fromkeys(df["system"]))
    if len(systems) < 3:
        raise InputError(
            f"the Friedman test needs at least 3 systems (got {len(systems)}); use the "
            "Wilcoxon signed-rank test for two", column="system",
        )
    table = df.groupby([block, "system"])["score"].mean().unstack()[systems]
    incomplete = table.isna().any(axis=1)
    if incomplete.any() and not drop_incomplete:
        first = table.index[incomplete.to_numpy()][0]
        lacking = [s for s in systems if pd.isna(table.loc[first, s])]
        raise InputError(
            f"the Friedman test needs a complete design: {block} '{first}' has no rating for "
            f"{', '.join(lacking)} ({int(incomplete.sum())} incomplete {block}s in all; "
            "drop them with drop_incomplete=True / --drop-incomplete)", column=block,
        )
    table = table[~incomplete]
    if len(table) < 2:
        raise InputError(f"the Friedman test needs at least 2 complete {block}s, "
                         f"got {len(table)}", column=block)
    res = stats.friedmanchisquare(*(table[s].to_numpy() for s in systems))
    n, k = len(table), len(systems)
    ranks = table.rank(axis=1).mean()
    return FriedmanResult(
        statistic=float(res.statistic), pvalue=float(res.pvalue), df=k - 1, n_blocks=n, k=k,
        kendalls_w=float(res.statistic) / (n * (k - 1)), block=block,
        n_dropped_blocks=int(incomplete.sum()),
        mean_ranks={s: float(ranks[s]) for s in systems},
    )
