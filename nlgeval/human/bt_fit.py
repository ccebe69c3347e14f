"""Bradley-Terry fitting machinery for :mod:`nlgeval.human.pairwise`: the log-likelihood, a
batched Newton fitter over win-count matrices (Bradley & Terry 1952; the MLE exists only when
the "beat" graph is strongly connected, Ford 1957), the bootstrap resampling of win counts
(Efron & Tibshirani 1993) and WMT's rank-cluster rule (MTME ``AssignRanks``).

Written here rather than taken from ``choix``: choix fits point estimates only (no ties, no
bootstrap); the fitter below is a Newton iteration over the sufficient statistics (k x k win
counts), vectorised over all bootstrap replicates at once.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from nlgeval.errors import InputError


def bt_loglik(beta: np.ndarray, wins: np.ndarray, prior: float = 0.0) -> np.ndarray:
    """Bradley-Terry log-likelihood (minus ``prior / 2 * sum beta^2``) of strengths
    ``beta`` (..., k) given win matrices ``wins`` (..., k, k).

    Examples
    --------
    >>> import numpy as np
    >>> float(bt_loglik(np.zeros(2), np.array([[0.0, 1.0], [1.0, 0.0]])))  # 2 log(1/2)
    -1.3862943611198906
    """
    d = beta[..., :, None] - beta[..., None, :]
    # log P(i beats j) = -log(1 + exp(-(b_i - b_j)))
    ll = -(wins * np.logaddexp(0.0, -d)).sum(axis=(-1, -2))
    return ll - 0.5 * prior * (beta ** 2).sum(axis=-1)


def _strongly_connected(wins: np.ndarray) -> np.ndarray:
    """Per matrix in ``wins`` (..., k, k): is the directed graph i -> j (i beat j at least
    partly) strongly connected? Boolean transitive closure by repeated squaring."""
    k = wins.shape[-1]
    reach = (wins > 0) | np.eye(k, dtype=bool)
    steps = max(1, int(np.ceil(np.log2(max(k, 2)))))
    r = reach.astype(np.float64)
    for _ in range(steps):
        r = np.minimum(r @ r, 1.0)
    return np.asarray((r > 0).all(axis=(-1, -2)))


def fit_bradley_terry(wins: np.ndarray, *, prior: float = 0.0, tol: float = 1e-10,
                      max_iter: int = 200) -> tuple[np.ndarray, np.ndarray]:
    """Maximum-likelihood (or MAP, ``prior > 0``) Bradley-Terry strengths for one or many win
    matrices ``wins`` (..., k, k); returns (strengths centred at mean 0, converged flags).

    Newton's method on the concave log-likelihood with the sum-to-zero constraint (the step
    solves (-H + 1 1'/k) d = g, whose solution lies in the constraint plane because g and H 1
    sum to 0 there), with step halving until the log-likelihood does not decrease; batched
    over the leading axes. Matrices without a finite MLE (not strongly connected, ``prior =
    0``) diverge and come back with ``converged = False``.

    Examples
    --------
    >>> import numpy as np
    >>> beta, ok = fit_bradley_terry(np.array([[0.0, 3.0], [1.0, 0.0]]))
    >>> beta.round(4).tolist(), bool(ok)  # beta_A - beta_B = log(3)
    ([0.5493, -0.5493], True)
    """
    w = np.asarray(wins, dtype=float)
    batch = w.shape[:-2]
    k = w.shape[-1]
    w = w.reshape(-1, k, k)
    b = np.zeros((w.shape[0], k))
    n = w + np.swapaxes(w, -1, -2)
    done = np.zeros(w.shape[0], dtype=bool)
    ones = np.ones((k, k)) / k
    ll = bt_loglik(b, w, prior)
    halvings = 0.5 ** np.arange(0, 30)
    for _ in range(max_iter):
        act = ~done
        if not act.any():
            break
        ba, wa, na = b[act], w[act], n[act]
        d = ba[:, :, None] - ba[:, None, :]
        p = 1.0 / (1.0 + np.exp(-d))  # P(i beats j)
        g = (wa - na * p).sum(axis=2) - prior * ba
        info = na * p * (1.0 - p)
        # minus the Hessian: off-diagonal -info_ij, diagonal sum_j info_ij + prior
        neg_h = np.where(np.eye(k, dtype=bool), 0.0, -info)
        neg_h[:, np.arange(k), np.arange(k)] = info.sum(axis=2) + prior
        step = np.linalg.solve(neg_h + ones * (1.0 if prior == 0 else 0.0), g[..., None])[..., 0]
        # step halving, vectorised over a ladder of step sizes
        cand = ba[:, None, :] + halvings[None, :, None] * step[:, None, :]
        cll = bt_loglik(cand, wa[:, None], prior)
        ok = cll >= ll[act][:, None] - 1e-12 * np.abs(ll[act][:, None])
        first = np.where(ok.any(axis=1), ok.argmax(axis=1), len(halvings) - 1)
        new_b = cand[np.arange(len(first)), first]
        new_ll = cll[np.arange(len(first)), first]
        moved = np.abs(new_b - ba).max(axis=1)
        b[act] = new_b - new_b.mean(axis=1, keepdims=True)
        ll[act] = new_ll
        idx = np.flatnonzero(act)
        done[idx[moved < tol]] = True
    converged = done & np.isfinite(b).all(axis=1) & (np.abs(b).max(axis=1) < 50)
    return b.reshape(*batch, k), converged.reshape(batch)


def assign_rank_clusters(p_not_better: np.ndarray, alpha: float) -> list[int]:
    """MTME's ``AssignRanks`` rule. ``p_not_better[s, i]`` (systems sorted by decreasing
    strength, s < i): p-value that system s is not better than system i.

    Examples
    --------
    >>> import numpy as np
    >>> p = np.array([[1.0, 0.30, 0.01], [1.0, 1.0, 0.02], [1.0, 1.0, 1.0]])
    >>> assign_rank_clusters(p, alpha=0.05)
    [1, 1, 2]
    """
    k = p_not_better.shape[0]
    ranks = []
    current, start = 1, 0
    for i in range(k):
        if i > start and np.any(p_not_better[start:i, i] <= alpha):
            current += 1
            start = i
        ranks.append(current)
    return ranks


def _resample_counts(outcomes: pd.DataFrame, systems: list[str], resample: str, n_boot: int,
                     rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """(n_boot, k, k) bootstrap win matrices and (n_boot, k, k) symmetric tie counts.
    Resampling judgements is a multinomial draw over the cells
    (pair, outcome); resampling clusters (items / raters) draws cluster counts and sums the
    clusters' own tables -- both without touching individual judgements."""
    k = len(systems)
    idx = {s: i for i, s in enumerate(systems)}
    a = outcomes["system_a"].map(idx).to_numpy()
    b = outcomes["system_b"].map(idx).to_numpy()
    o = outcomes["outcome"].to_numpy()
    # cell of each judgement: the (winner, loser) entry, or the tie cell of the pair
    win_i = np.where(o > 0, a, b)
    win_j = np.where(o > 0, b, a)
    cell = np.where(o == 0, k * k + np.minimum(a, b) * k + np.maximum(a, b), win_i * k + win_j)
    n_cells = 2 * k * k
    if resample == "judgements":
        counts = np.bincount(cell, minlength=n_cells).astype(float)
        draws = rng.multinomial(len(o), counts / counts.sum(), size=n_boot).astype(float)
    else:
        col = {"items": "item", "raters": "rater"}[resample]
        if col not in outcomes.columns:
            raise InputError(f"resampling {resample} needs a '{col}' column")
        cl, cl_idx = np.unique(outcomes[col].to_numpy(), return_inverse=True)
        table = np.zeros((len(cl), n_cells))
        np.add.at(table, (cl_idx, cell), 1.0)
        picks = rng.multinomial(len(cl), np.full(len(cl), 1.0 / len(cl)), size=n_boot)
        draws = picks.astype(float) @ table
    wins = draws[:, : k * k].reshape(n_boot, k, k)
    tie = draws[:, k * k:].reshape(n_boot, k, k)
    return wins, tie + np.swapaxes(tie, -1, -2)


def _bootstrap_strengths(outcomes: pd.DataFrame, systems: list[str], *, ties: str,
                         prior: float, n_boot: int, resample: str, seed: int
                         ) -> tuple[np.ndarray, list[str]]:
    """Bootstrap replicates of the strengths (rows with a finite MLE only) and warnings."""
    k = len(systems)
    if not n_boot:
        return np.empty((0, k)), []
    rng = np.random.default_rng(seed)
    bw, bt_ties = _resample_counts(outcomes, systems, resample, n_boot, rng)
    if ties == "half":
        bw = bw + 0.5 * bt_ties
    ok = _strongly_connected(bw) if prior == 0 else np.ones(n_boot, dtype=bool)
    boot = np.full((n_boot, k), np.nan)
    if ok.any():
        bb, bconv = fit_bradley_terry(bw[ok], prior=prior)
        bb[~bconv] = np.nan
        boot[ok] = bb
    boot = boot[np.isfinite(boot).all(axis=1)]
    used = len(boot)
    warns = []
    if used < n_boot:
        warns.append(f"{n_boot - used} of {n_boot} bootstrap replicates have no finite MLE "
                     "(a system won or lost every resampled comparison) and are left out; "
                     "the intervals are from the other replicates (a prior, --bt-prior, "
                     "keeps them all)")
    if used < 0.9 * n_boot:
        warns.append("more than 10 % of the bootstrap replicates were left out: the "
                     "intervals are unreliable")
    return boot, warns


def _no_mle_message(w: np.ndarray, systems: list[str]) -> str:
    from scipy.sparse.csgraph import connected_components

    n_weak, _ = connected_components((w + w.T) > 0, directed=False)
    if n_weak > 1:
        return (f"the systems fall into {n_weak} groups never compared with each other: a "
                "joint Bradley-Terry ranking is not identified (compare across groups)")
    never_lost = [s for i, s in enumerate(systems) if w[:, i].sum() == 0]
    never_won = [s for i, s in enumerate(systems) if w[i, :].sum() == 0]
    who = []
    if never_lost:
        who.append(f"never lost: {', '.join(never_lost)}")
    if never_won:
        who.append(f"never won: {', '.join(never_won)}")
    detail = "; ".join(who) or "a group of systems beat every system outside it"
    return ("the Bradley-Terry maximum-likelihood strengths are infinite (" + detail + "); "
            "pass a prior to shrink them (e.g. --bt-prior 0.1)")
