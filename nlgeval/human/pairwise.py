"""Pairwise (relative) judgements: per-pair sign tests and a Bradley-Terry ranking.

Input is what ``nlgeval experiment export`` writes in relative mode -- one row per judgement with
``system`` and ``system_b`` (the pair) and ``score``, the preference for ``system`` on the
criterion's scale (top = ``system`` much better; see :mod:`nlgeval.experiment.export`) -- or a
WMT / Chatbot-Arena style table with ``system``, ``system_b`` and ``winner`` (a system name, or
``tie``/``draw``/``both``/``neither``/empty for a tie). A preference above the scale's midpoint
is a win for ``system``, below it a win for ``system_b``, at it a tie. The midpoint is the
middle of the declared scale, else 0 when some preference is negative (the experiment's centred
relative scales, e.g. -2..2 or -50..50); otherwise the scale must be given.

* **Sign test per pair** (Dixon & Mood 1946): ties are dropped, the wins of A are
  Binomial(n, 1/2) under H0 (:func:`scipy.stats.binomtest`, two-sided), corrected over all
  pairs (Holm 1979 by default; statsmodels ``multipletests``). Effect size: ``(wins_a - wins_b)
  / (wins_a + wins_b)`` (= 2 * share - 1, the sign-test analogue of the rank-biserial
  correlation) with the Clopper-Pearson interval of the share mapped the same way.
* **Bradley-Terry** (Bradley & Terry 1952; Zermelo 1929): P(i beats j) = 1 / (1 + exp(b_j -
  b_i)), strengths ``b`` on the log-odds scale centred at mean 0, fitted by maximum likelihood
  (an optional Gaussian prior ``prior / 2 * sum b^2`` gives the MAP instead). Ties count half a
  win for each side (as the Chatbot Arena does, Chiang et al. 2024) or are dropped. The MLE
  exists only when the directed "beat" graph is strongly connected (Ford 1957); otherwise an
  :class:`InputError` says which systems never lose (or never win) and suggests ``prior``.
  Confidence intervals: percentile bootstrap (Efron & Tibshirani 1993) over judgements, or over
  items / raters as clusters, seeded (``numpy.random.default_rng(seed)``); replicates without a
  finite MLE are left out and counted. **Rank clusters** follow MTME's ``AssignRanks`` rule
  (WMT metrics task): systems sorted by strength; the rank increases at system i when any
  system since the start of the current cluster beats it with bootstrap p <= alpha, where p =
  share of replicates in which it is not stronger.

Reading the judgements into outcomes (:func:`pairwise_outcomes`, re-exported here) is in
:mod:`nlgeval.human.judgements`; the fitting machinery (Newton fitter, resampling, rank
clusters) is in :mod:`nlgeval.human.bt_fit`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import combinations
from typing import ClassVar, Literal

import numpy as np
import pandas as pd
from scipy import stats

from nlgeval.deprecation import renamed_keyword
from nlgeval.errors import InputError
from nlgeval.human.bt_fit import (
    _bootstrap_strengths,
    _no_mle_message,
    _strongly_connected,
    assign_rank_clusters,
    bt_loglik,
    fit_bradley_terry,
)
from nlgeval.human.compare import correct_pvalues

# Re-exported under their old import paths (``from nlgeval.human.pairwise import ...``).
from nlgeval.human.judgements import TIE_WORDS as TIE_WORDS
from nlgeval.human.judgements import _system_order as _system_order
from nlgeval.human.judgements import _systems
from nlgeval.human.judgements import pairwise_outcomes as pairwise_outcomes
from nlgeval.human.judgements import preference_midpoint as preference_midpoint
from nlgeval.results import Result

SIGN_COLUMNS = (
    "system_a", "system_b", "wins_a", "wins_b", "ties", "n", "pvalue", "pvalue_adjusted",
    "significant", "effect_size", "effect_size_low", "effect_size_high", "higher",
    "mean_preference",
)


def sign_tests(
    outcomes: pd.DataFrame, *, correction: str = "holm", alpha: float = 0.05,
) -> pd.DataFrame:
    """Sign test for every compared pair (see the module docstring); columns
    :data:`SIGN_COLUMNS`. ``outcomes`` from :func:`pairwise_outcomes`. The frame's
    ``attrs["warnings"]`` lists pairs too small to ever reach the corrected level and effect-size
    intervals that disagree with the corrected significance flag.

    Parameters
    ----------
    outcomes : pandas.DataFrame
        From :func:`pairwise_outcomes`.
    correction : str, default ``"holm"``
        Multiple-comparison correction over pairs.
    alpha : float, default 0.05
        Family-wise significance level.

    Returns
    -------
    pandas.DataFrame
        One row per pair, columns :data:`SIGN_COLUMNS`.

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"system": ["A"] * 6, "system_b": ["B"] * 6,
    ...                    "score": [2.0, 1.0, 2.0, 1.0, 1.0, -1.0]})
    >>> t = sign_tests(pairwise_outcomes(df, scale=(-2, 2)))
    >>> t[["wins_a", "wins_b", "pvalue"]].values.tolist()
    [[5.0, 1.0, 0.21875]]
    """
    systems = _systems(outcomes)
    g = outcomes.groupby(["system_a", "system_b"], sort=False)
    rows = []
    conf = 1.0 - alpha
    for (a, b), grp in g:
        o = grp["outcome"].to_numpy()
        wa, wb, t = int((o > 0).sum()), int((o < 0).sum()), int((o == 0).sum())
        n = wa + wb
        if n:
            bt = stats.binomtest(wa, n, 0.5)
            p = float(bt.pvalue)
            ci = bt.proportion_ci(confidence_level=conf, method="exact")
            es, lo, hi = (wa - wb) / n, 2 * ci.low - 1, 2 * ci.high - 1
        else:
            p, es, lo, hi = 1.0, 0.0, -1.0, 1.0
        pref = grp["preference"].to_numpy(dtype=float)
        rows.append({"system_a": a, "system_b": b, "wins_a": wa, "wins_b": wb, "ties": t,
                     "n": n, "pvalue": p, "effect_size": es, "effect_size_low": lo,
                     "effect_size_high": hi, "higher": a if wa > wb else b if wb > wa else "",
                     "mean_preference": float(np.mean(pref)) if np.isfinite(pref).all()
                     else np.nan})
    order = {s: i for i, s in enumerate(systems)}
    out = pd.DataFrame(rows)
    out = out.sort_values(["system_a", "system_b"], key=lambda c: c.map(order),
                          kind="stable").reset_index(drop=True)
    p_adj, reject = correct_pvalues(out["pvalue"].to_numpy(), correction, alpha)
    out["pvalue_adjusted"] = p_adj
    out["significant"] = reject.astype(bool)
    out = out[list(SIGN_COLUMNS)].copy()
    m = len(out)
    level = alpha / m if correction == "bonferroni" else alpha
    warns = []
    floor = np.minimum(1.0, 2.0 * 0.5 ** out["n"].to_numpy(dtype=float))
    weak = floor > level
    if weak.any():
        names = [f"{a}-{b} (n = {k})" for a, b, k in zip(
            out["system_a"][weak], out["system_b"][weak], out["n"][weak], strict=True)]
        warns.append(f"{int(weak.sum())} of {m} pairs have too few decisive judgements for "
                     f"the sign test ever to reach {level:.3g}: " + ", ".join(names[:6])
                     + (" ..." if len(names) > 6 else ""))
    excl = ((out["effect_size_low"] > 0) | (out["effect_size_high"] < 0)) & ~out["significant"]
    if excl.any():
        excluded = ", ".join(f"{a}-{b}" for a, b in zip(out["system_a"][excl],
                                                       out["system_b"][excl], strict=True))
        warns.append(f"the win-share interval excludes an even split for {excluded} but the "
                     f"{correction}-corrected p-value is not significant: the interval is per "
                     "comparison, significance is corrected over all pairs")
    out.attrs["warnings"] = warns
    return out


# --------------------------------------------------------------------------------------------
# Bradley-Terry


def win_matrix(outcomes: pd.DataFrame, systems: Sequence[str] | None = None,
               ties: Literal["half", "drop"] = "half") -> np.ndarray:
    """k x k matrix W with W[i, j] = wins of i over j (+ half of their ties when
    ``ties="half"``).

    Examples
    --------
    >>> import pandas as pd
    >>> o = pd.DataFrame({"system_a": ["A"] * 6, "system_b": ["B"] * 6,
    ...                   "outcome": [1, 1, 1, 1, 1, -1]})
    >>> win_matrix(o).tolist()
    [[0.0, 5.0], [1.0, 0.0]]
    """
    systems = list(systems) if systems is not None else _systems(outcomes)
    idx = {s: i for i, s in enumerate(systems)}
    a = outcomes["system_a"].map(idx).to_numpy()
    b = outcomes["system_b"].map(idx).to_numpy()
    o = outcomes["outcome"].to_numpy()
    k = len(systems)
    w = np.zeros((k, k))
    np.add.at(w, (a[o > 0], b[o > 0]), 1.0)
    np.add.at(w, (b[o < 0], a[o < 0]), 1.0)
    if ties == "half":
        t = o == 0
        np.add.at(w, (a[t], b[t]), 0.5)
        np.add.at(w, (b[t], a[t]), 0.5)
    elif ties != "drop":
        raise InputError(f"ties must be 'half' or 'drop', got {ties!r}")
    return w


@dataclass(frozen=True)
class BradleyTerryResult(Result):
    """Bradley-Terry strengths (log-odds scale, mean 0), bootstrap intervals, rank clusters.

    Examples
    --------
    >>> import pandas as pd
    >>> o = pd.DataFrame({"system_a": ["A", "A", "B", "A"], "system_b": ["B", "B", "A", "B"],
    ...                   "outcome": [1, 1, -1, -1]})
    >>> res = bradley_terry(o, n_resamples=0)
    >>> res.method, res.ranking["strength"].round(3).tolist()
    ('bradley-terry', [0.549, -0.549])
    """

    _aliases: ClassVar[dict[str, str]] = {"ci_level": "ci_level"}

    ranking: pd.DataFrame
    win_probability: pd.DataFrame
    pairwise_p: pd.DataFrame
    n_judgements: int
    ties: str
    prior: float
    n_boot: int
    n_boot_used: int
    resample: str
    seed: int
    alpha: float
    loglik: float
    warnings: tuple[str, ...] = field(default=())
    method: str = "bradley-terry"
    scale: str = "log-odds: P(i beats j) = 1 / (1 + exp(strength_j - strength_i))"

    @property
    def statistic(self) -> np.ndarray:
        """Strengths in ranking order."""
        return self.ranking["strength"].to_numpy()

    @property
    def ci_level(self) -> float:
        """Level of the bootstrap intervals, 1 - alpha."""
        return 1.0 - self.alpha


def _check_bt_options(alpha: float, prior: float, resample: str, n_boot: int) -> None:
    if not 0 < alpha < 1:
        raise InputError(f"alpha must be between 0 and 1, got {alpha}")
    if prior < 0:
        raise InputError(f"prior must be >= 0, got {prior}")
    if resample not in ("judgements", "items", "raters"):
        raise InputError(f"resample must be judgements, items or raters, got {resample!r}")
    if n_boot < 0:
        raise InputError(f"n_boot must be >= 0, got {n_boot}")


def bradley_terry(
    outcomes: pd.DataFrame,
    *,
    ties: Literal["half", "drop"] = "half",
    prior: float = 0.0,
    n_resamples: int = 1000,
    resample: Literal["judgements", "items", "raters"] = "judgements",
    seed: int = 0,
    alpha: float = 0.05,
    n_boot: int | None = None,
) -> BradleyTerryResult:
    """Bradley-Terry ranking with bootstrap intervals and rank clusters (module docstring).

    ``outcomes``: from :func:`pairwise_outcomes`. Returns the ranking (``system, strength,
    ci_low, ci_high, rank, wins, losses, ties, n``), the model's win probabilities for every
    pair, and the bootstrap p-values used for the clusters. ``n_resamples`` bootstrap
    replicates (``n_boot``: its earlier name, deprecated; the result keeps the field ``n_boot``).

    Parameters
    ----------
    outcomes : pandas.DataFrame
    ties, resample, prior, alpha : str, str, float, float; default "half", "judgements", 0, 0.05
    n_resamples, seed, n_boot : int, default 1000, 0 (bootstrap seed) and None

    Returns
    -------
    BradleyTerryResult

    Examples
    --------
    >>> import pandas as pd
    >>> o = pd.DataFrame({"system_a": ["A", "A", "B", "A", "B", "C"],
    ...                   "system_b": ["B", "C", "C", "B", "C", "A"],
    ...                   "outcome": [1, 1, 1, -1, 0, -1]})
    >>> bradley_terry(o, n_resamples=0).ranking["system"].tolist()
    ['A', 'B', 'C']
    """
    n_boot = renamed_keyword("bradley_terry", "n_boot", n_boot, "n_resamples", n_resamples)
    _check_bt_options(alpha, prior, resample, n_boot)
    systems = _systems(outcomes)
    k = len(systems)
    if k < 2:
        raise InputError("a ranking needs at least 2 systems")
    w = win_matrix(outcomes, systems, ties)
    if w.sum() == 0:
        raise InputError("no decisive judgements (every judgement is a tie and ties are "
                         "dropped)")
    if prior == 0 and not _strongly_connected(w[None])[0]:
        raise InputError(_no_mle_message(w, systems))
    beta, conv = fit_bradley_terry(w, prior=prior)
    if not bool(conv):
        raise InputError("the Bradley-Terry fit did not converge; pass a prior (e.g. "
                         "--bt-prior 0.1)")
    boot, warns = _bootstrap_strengths(outcomes, systems, ties=ties, prior=prior,
                                       n_boot=n_boot, resample=resample, seed=seed)
    used = len(boot)
    order = np.argsort(-beta, kind="stable")
    if used >= 2:
        lo, hi = np.quantile(boot, [alpha / 2, 1 - alpha / 2], axis=0)
        # p[s, i] = share of replicates in which s is not stronger than i
        p = (boot[:, :, None] <= boot[:, None, :]).mean(axis=0)
    else:
        lo = hi = np.full(k, np.nan)
        p = np.full((k, k), np.nan)
    p_sorted = p[np.ix_(order, order)]
    ranks = assign_rank_clusters(np.nan_to_num(p_sorted, nan=1.0), alpha)
    ranking = _ranking_table(outcomes, systems, beta, lo, hi, order, ranks)
    probs = [{"system_a": systems[i], "system_b": systems[j],
              "p_a_beats_b": float(1.0 / (1.0 + np.exp(beta[j] - beta[i]))),
              "n": int(w[i, j] + w[j, i])} for i, j in combinations(range(k), 2)]
    pp = [{"system": systems[order[x]], "over": systems[order[y]],
           "p_not_better": float(p_sorted[x, y])}
          for x in range(k) for y in range(x + 1, k)]
    warns += _ranking_warnings(ranking, ranks, w, systems)
    return BradleyTerryResult(
        ranking=ranking, win_probability=pd.DataFrame(probs), pairwise_p=pd.DataFrame(pp),
        n_judgements=len(outcomes), ties=ties, prior=float(prior), n_boot=int(n_boot),
        n_boot_used=used, resample=resample, seed=int(seed), alpha=alpha,
        loglik=float(bt_loglik(beta, w, prior)), warnings=tuple(warns),
    )


def _ranking_table(outcomes: pd.DataFrame, systems: list[str], beta: np.ndarray,
                   lo: np.ndarray, hi: np.ndarray, order: np.ndarray,
                   ranks: list[int]) -> pd.DataFrame:
    """The ranking with strengths, intervals, clusters and win/loss/tie counts."""
    k = len(systems)
    o = outcomes["outcome"].to_numpy()
    ia = outcomes["system_a"].map({s: i for i, s in enumerate(systems)}).to_numpy()
    ib = outcomes["system_b"].map({s: i for i, s in enumerate(systems)}).to_numpy()
    wins = np.bincount(np.where(o > 0, ia, ib)[o != 0], minlength=k)
    losses = np.bincount(np.where(o > 0, ib, ia)[o != 0], minlength=k)
    tcount = np.bincount(np.concatenate([ia[o == 0], ib[o == 0]]), minlength=k)
    return pd.DataFrame({
        "system": [systems[i] for i in order], "strength": beta[order],
        "ci_low": lo[order], "ci_high": hi[order], "rank": ranks,
        "wins": wins[order], "losses": losses[order], "ties": tcount[order],
        "n": (wins + losses + tcount)[order],
    })


def _ranking_warnings(ranking: pd.DataFrame, ranks: list[int], w: np.ndarray,
                      systems: list[str]) -> list[str]:
    """Clusters that disagree with overlapping intervals; pairs with very few judgements."""
    k = len(systems)
    warns = []
    overlap = [f"{ranking['system'][x]}-{ranking['system'][y]}"
               for x in range(k) for y in range(x + 1, k)
               if ranks[x] != ranks[y] and ranking["ci_low"][x] <= ranking["ci_high"][y]]
    if overlap:
        warns.append("systems in different rank clusters with overlapping intervals ("
                     + ", ".join(overlap[:6]) + (" ..." if len(overlap) > 6 else "")
                     + "): the clusters compare the two systems within each bootstrap "
                     "replicate, which is more sensitive than comparing the two marginal "
                     "intervals")
    thin = [f"{systems[i]}-{systems[j]}" for i, j in combinations(range(k), 2)
            if 0 < w[i, j] + w[j, i] < 5]
    if thin:
        warns.append(f"{len(thin)} pairs have fewer than 5 judgements ({', '.join(thin[:6])}"
                     f"{' ...' if len(thin) > 6 else ''}): their order rests on the model's "
                     "transitivity")
    return warns
