"""Certified early stopping for bootstrap p-values used only through ``p < alpha``.

A bootstrap test with ``nboot`` draws rejects when its mid-p value
``(#{T_b > T} + 0.5 #{T_b = T}) / nboot`` is below ``alpha``. In a simulation study only the
decision matters, and most replications are decided long before ``nboot`` draws:

* **exact stops** - once ``p >= alpha`` is reached the count can only grow, so "do not reject" is
  certain (used always);
* **certified stops** - after ``m`` draws (checkpoints every ``step`` draws), stop and accept when
  the strict exceedances ``G_m >= a_m``, or stop and reject when exceedances-or-ties
  ``GE_m <= r_m``. The thresholds are chosen so that, *whatever the unknown exceedance
  probability q*, the probability that the stopped decision differs from the one all ``nboot``
  draws would give is at most ``eps / (2 * number of checkpoints)`` per checkpoint and side:

  ``sup_q  sum_{g >= a_m} Bin(g; m, q) * P(Bin(nboot - m, q) <= c - 1 - g)  <=  budget``

  where ``c = ceil(alpha * nboot)`` (a rejection needs fewer than ``c`` strict exceedances in total)
  and symmetrically for rejection (a non-rejection needs at least ``c`` exceedances-or-ties). By the
  union bound the decision of a replication differs from the full procedure's with probability at
  most ``eps`` (default ``1e-10``), for every data set. This is a sequential-analysis argument in
  the spirit of Besag & Clifford (1991, Biometrika 78:301-304) "Sequential Monte Carlo p-values",
  made error-free up to ``eps``. The supremum over ``q`` is taken on a fine grid with a
  factor-2 safety margin; the checkpoints share ``eps / 2``.
* **certified acceptance without drawing** - Cantelli's one-sided inequality
  ``P(Q > E Q - lam) >= lam^2 / (Var Q + lam^2)`` with the exact null moments of the integer
  statistic gives a lower bound L on the exceedance probability; when
  ``P(Bin(nboot, L) < c) <= eps / 2`` the replication cannot reject except with probability
  ``eps / 2`` and is accepted with no bootstrap draw (``pz_min`` is the smallest such L).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from scipy import stats

from nlgeval.results import Result


@dataclass(frozen=True)
class StoppingSchedule(Result):
    """Checkpoints ``step, 2*step, ...`` with accept / reject thresholds (see module docs).

    Examples
    --------
    >>> s = certified_schedule(500, 0.05, step=100)
    >>> s.to_dict()["checkpoints"], s.reject_at.tolist()
    ([100, 200, 300, 400], [-1, -1, -1, 4])
    """

    nboot: int
    alpha: float
    eps: float
    step: int
    accept_at: np.ndarray  # strict exceedances needed to accept at checkpoint i (huge = never)
    reject_at: np.ndarray  # max exceedances-or-ties to reject at checkpoint i (-1 = never)
    pz_min: float = 2.0  # accept without drawing when the Cantelli bound reaches it (>1 = never)

    def to_dict(self) -> dict[str, object]:
        """The fields plus the list of checkpoints (derived, so written by hand)."""
        return {
            "nboot": self.nboot, "alpha": self.alpha, "eps": self.eps, "step": self.step,
            "checkpoints": list(range(self.step, self.step * (len(self.accept_at) + 1), self.step)),
            "accept_at": self.accept_at.tolist(), "reject_at": self.reject_at.tolist(),
            "pz_min": self.pz_min,
        }


NEVER_ACCEPT = 2**31


def _sup_over_q(fun, grid: np.ndarray) -> np.ndarray:
    """Max over q of ``fun(q)`` (rows = thresholds) on a fine grid.

    Near its maximiser each function behaves like ``exp(-kappa (q - q*)^2 / 2)`` with
    ``kappa ~ nboot / (q (1 - q))``; on an 801-point grid the missed peak height is below 1 %
    for ``nboot <= 10^4``, which the factor-2 safety margin in the caller covers.
    """
    return fun(grid).max(axis=1)


@lru_cache(maxsize=32)
def certified_schedule(
    nboot: int, alpha: float, eps: float = 1e-10, step: int = 10
) -> StoppingSchedule:
    """The certified stopping thresholds for ``nboot`` draws and level ``alpha``.

    ``eps = 0`` gives a schedule that never stops early (only the exact stop remains).
    Sequential Monte Carlo p-values in the spirit of Besag & Clifford (1991).

    Examples
    --------
    >>> s = certified_schedule(500, 0.05, step=100)
    >>> s.reject_at.tolist()       # at 400 draws, <= 4 exceedances-or-ties certify p < 0.05
    [-1, -1, -1, 4]
    >>> certified_schedule(500, 0.05, eps=0, step=100).reject_at.tolist()   # never early
    [-1, -1, -1, -1]
    """
    checkpoints = np.arange(step, nboot, step)
    acc = np.full(len(checkpoints), NEVER_ACCEPT, dtype=np.int64)
    rej = np.full(len(checkpoints), -1, dtype=np.int64)
    if eps <= 0 or len(checkpoints) == 0:
        return StoppingSchedule(nboot, alpha, eps, step, acc, rej)
    need = math.ceil(alpha * nboot - 1e-12)  # reject <=> strict exceedances < need is necessary
    budget = eps / 2 / (2 * len(checkpoints)) / 2  # eps/2 for the checkpoints; 2: grid margin
    grid = np.linspace(0.0, 1.0, 801)[1:-1]
    g = np.arange(need)[:, None]  # only g < need matters on both sides
    for i, m in enumerate(checkpoints):
        rest = nboot - int(m)

        def acc_fun(q: np.ndarray, m: int = int(m), rest: int = rest) -> np.ndarray:
            joint = stats.binom.pmf(g, m, q[None, :]) * stats.binom.cdf(need - 1 - g, rest,
                                                                         q[None, :])
            return np.cumsum(joint[::-1], axis=0)[::-1]  # row c: sum over g >= c

        def rej_fun(q: np.ndarray, m: int = int(m), rest: int = rest) -> np.ndarray:
            joint = stats.binom.pmf(g, m, q[None, :]) * stats.binom.sf(need - 1 - g, rest,
                                                                        q[None, :])
            return np.cumsum(joint, axis=0)  # row c: sum over g <= c

        sup_acc = _sup_over_q(acc_fun, grid)
        ok = np.flatnonzero(sup_acc <= budget)
        if len(ok) and ok[0] <= m:
            acc[i] = int(ok[0])
        sup_rej = _sup_over_q(rej_fun, grid)
        ok = np.flatnonzero(sup_rej <= budget)
        if len(ok) and ok[0] == 0:
            # cumulative in c, so the admissible set is 0..c_max
            rej[i] = int(ok[np.flatnonzero(np.diff(np.r_[ok, -10]) != 1)[0]])
    # Cantelli shortcut: smallest L with P(Bin(nboot, L) <= need - 1) <= eps / 2.
    grid_l = np.linspace(0.0, 1.0, 20001)
    ok = np.flatnonzero(stats.binom.cdf(need - 1, nboot, grid_l) <= eps / 2)
    pz = float(grid_l[ok[0]]) if len(ok) else 2.0
    return StoppingSchedule(nboot, alpha, eps, step, acc, rej, pz)
