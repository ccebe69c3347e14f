"""Names, input checks, groupings and result classes of the Kendall variants.

The pair counts C, D, T_h, T_m, T_hm are those of Deutsch, Foster & Freitag (2023, Table 1).
The package :mod:`nlgeval.correlation.kendall` exports the public names defined here.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from nlgeval.correlation._constant import snap_near_constant
from nlgeval.correlation.kendall.kernels import _stat_from_counts
from nlgeval.errors import InputError
from nlgeval.results import Result, StatResult

VARIANTS: tuple[str, ...] = ("tau_b", "tau_c", "tau_23", "acc_23")
#: the levels a Kendall variant is computed at, as groupings of the (systems x items) cells:
#: ``segment`` pools all cells, ``item`` is within each item (across systems) then the mean,
#: ``system-grouped`` within each system (across items) then the mean -- the level names of
#: :mod:`nlgeval.correlation.levels` (the ``system`` level, on system means, is the segment
#: grouping of the system-mean vectors: see ``nlgeval.correlation.statistics``)
GROUPINGS: tuple[str, ...] = ("segment", "item", "system-grouped")

_VARIANT_ALIASES = {
    "b": "tau_b", "tau_b": "tau_b", "taub": "tau_b", "kendall": "tau_b", "kendall_b": "tau_b",
    "c": "tau_c", "tau_c": "tau_c", "tauc": "tau_c", "kendall_c": "tau_c",
    "23": "tau_23", "tau_23": "tau_23", "tau23": "tau_23",
    "acc23": "acc_23", "acc_23": "acc_23", "pairwise_accuracy_23": "acc_23",
}
_VARIANT_CODE = {"tau_b": 0, "tau_c": 1, "tau_23": 2, "acc_23": 3}
_GROUPING_CODE = {"segment": 0, "item": 1, "system-grouped": 2}

#: groups with at most this many values are counted by enumerating their pairs (faster than
#: sorting for short vectors); longer ones by the O(n log n) sort + Fenwick tree method.
DIRECT_MAX = 40


def check_variant(name: str) -> str:
    """Canonical variant name (``tau_b``, ``tau_c``, ``tau_23``, ``acc_23``) or InputError.

    Parameters
    ----------
    name : str
        The variant's name.

    Returns
    -------
    str
        The canonical variant name.

    Examples
    --------
    >>> check_variant("tau_b")
    'tau_b'
    """
    key = str(name).strip().lower().replace("-", "_")
    if key not in _VARIANT_ALIASES:
        raise InputError(f"unknown Kendall variant '{name}' (use one of: {', '.join(VARIANTS)})")
    return _VARIANT_ALIASES[key]


def check_grouping(name: str) -> str:
    """The grouping, a level name (``segment``, ``item``, ``system-grouped``), or InputError.

    Parameters
    ----------
    name : str
        The grouping's name.

    Returns
    -------
    str
        The canonical level name.

    Examples
    --------
    >>> check_grouping("system-grouped")
    'system-grouped'
    """
    key = str(name).strip().lower()
    if key in GROUPINGS:
        return key
    hint = (" (the system level correlates system means: compute them first, then use "
            "'segment'; within each system is 'system-grouped')" if key == "system" else "")
    raise InputError(f"unknown grouping {name!r}: use one of {', '.join(GROUPINGS)}{hint}")


def check_epsilon(epsilon: float, variant: str | None = None) -> float:
    """A valid metric-tie threshold epsilon (finite, >= 0); InputError otherwise.

    Parameters
    ----------
    epsilon : float
        The threshold: metric differences ``<= epsilon`` count as ties.
    variant : str, optional
        The variant it is for (a nonzero epsilon is refused for ``tau_c``).

    Returns
    -------
    float
        ``epsilon`` as a float.

    Examples
    --------
    >>> check_epsilon(0.5)
    0.5
    """
    try:
        eps = float(epsilon)
    except (TypeError, ValueError):
        raise InputError(f"epsilon must be a number >= 0, got {epsilon!r}") from None
    if not (eps >= 0 and math.isfinite(eps)):
        raise InputError(f"epsilon must be a finite number >= 0, got {epsilon!r}")
    if variant == "tau_c" and eps > 0:
        raise InputError("tau_c is only defined for epsilon = 0 (as in MTME: the number of "
                         "distinct values has no meaning once near-ties count as ties)")
    return eps


def _as_float(a: Any, name: str) -> np.ndarray:
    try:
        arr = np.asarray(a, dtype=float)
    except (TypeError, ValueError):
        raise InputError(f"{name} must contain numbers (NaN for missing)") from None
    return arr


def _check_matrices(X: Any, Y: Any, names: tuple[str, str] = ("X", "Y")) -> tuple[np.ndarray,
                                                                                   np.ndarray]:
    """(systems x items) float matrices of equal shape; a 1-D input is one system's row."""
    Xa, Ya = _as_float(X, names[0]), _as_float(Y, names[1])
    if Xa.ndim == 1:
        Xa = Xa[None, :]
    if Ya.ndim == 1:
        Ya = Ya[None, :]
    if Xa.ndim != 2 or Xa.shape != Ya.shape:
        raise InputError(f"{names[0]} and {names[1]} must be (systems x items) matrices of the "
                         f"same shape, got {np.shape(X)} and {np.shape(Y)}")
    return Xa, Ya


def snap_groups(X: np.ndarray, Y: np.ndarray, grouping: str
                ) -> tuple[np.ndarray, np.ndarray]:
    """(..., systems, items) stacks with each numerically constant group made exactly constant.

    nlgeval's one degenerate-input rule (:func:`~nlgeval.correlation._constant.near_constant`)
    for the Kendall variants: a group (an item's systems, a system's items, or all cells for
    ``"segment"``) whose complete values differ by rounding only counts every pair as tied.

    Parameters
    ----------
    X, Y : numpy.ndarray
        Metric and human stacks, shape (..., systems, items).
    grouping : str
        ``segment``, ``item`` or ``system-grouped``.

    Returns
    -------
    tuple of numpy.ndarray
        ``(X, Y)`` with every numerically constant group made exactly constant.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[0.3, 1.0], [0.1 + 0.2, 2.0]])
    >>> snap_groups(X, np.ones((2, 2)), "item")[0].tolist()
    [[0.30000000000000004, 1.0], [0.30000000000000004, 2.0]]
    """
    grouping = check_grouping(grouping)
    ok = np.isfinite(X) & np.isfinite(Y)
    if grouping == "segment":
        shape = X.shape
        flat = (*shape[:-2], shape[-2] * shape[-1])
        Xs = snap_near_constant(X.reshape(flat), ok.reshape(flat))
        Ys = snap_near_constant(Y.reshape(flat), ok.reshape(flat))
        return Xs.reshape(shape), Ys.reshape(shape)
    axis = -2 if grouping == "item" else -1
    return snap_near_constant(X, ok, axis), snap_near_constant(Y, ok, axis)


# --------------------------------------------------------------------------------------------
# grouping into back-to-back vectors
# --------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Groups:
    """Complete cells of every group with >= 2 of them, stored back to back.

    ``x``/``y``: metric and human values; group g is ``x[off[g]:off[g + 1]]``; ``index[g]`` is
    the item (grouping "item"), system ("system-grouped") or 0 ("segment") the group came
    from;
    ``n_skipped`` counts groups with fewer than 2 complete cells. Within a group the cells are
    in row-major order of the (systems x items) matrix.

    Examples
    --------
    >>> import numpy as np
    >>> g = build_groups(np.array([[1.0, 2.0], [3.0, 4.0]]), np.ones((2, 2)), "item")
    >>> g.sizes.tolist(), g.n_pairs.tolist()
    ([2, 2], [1, 1])
    """

    x: np.ndarray
    y: np.ndarray
    off: np.ndarray
    index: np.ndarray
    n_total: int
    n_skipped: int

    @property
    def sizes(self) -> np.ndarray:
        return np.diff(self.off)

    @property
    def n_pairs(self) -> np.ndarray:
        n = self.sizes.astype(np.int64)
        return n * (n - 1) // 2


def build_groups(X: np.ndarray, Y: np.ndarray, grouping: str) -> Groups:
    """Split the complete cells of (systems x items) matrices into the grouping's groups.

    Parameters
    ----------
    X, Y : numpy.ndarray
        Metric and human scores, (systems x items), NaN for a missing cell.
    grouping : str
        ``segment``, ``item`` or ``system-grouped``.

    Returns
    -------
    Groups
        The complete cells of every group with >= 2 of them, back to back, with offsets,
        group indices and the number of skipped groups.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[1.0, np.nan], [3.0, 4.0]])
    >>> build_groups(X, np.ones((2, 2)), "system-grouped").sizes.tolist()  # 2 complete cells
    [2]
    """
    grouping = check_grouping(grouping)
    ok = np.isfinite(X) & np.isfinite(Y)
    if grouping == "item":
        Xg, Yg, okg = X.T, Y.T, ok.T
    elif grouping == "system-grouped":
        Xg, Yg, okg = X, Y, ok
    else:
        Xg, Yg, okg = X.reshape(1, -1), Y.reshape(1, -1), ok.reshape(1, -1)
    # nlgeval's one degenerate-input rule: a numerically constant group is all ties
    Xg, Yg = snap_near_constant(Xg, okg), snap_near_constant(Yg, okg)
    size = okg.sum(axis=1)
    keep = size >= 2
    okk = okg & keep[:, None]
    x = np.ascontiguousarray(Xg[okk], dtype=float)     # row-major: group by group
    y = np.ascontiguousarray(Yg[okk], dtype=float)
    sizes = size[keep]
    off = np.zeros(sizes.size + 1, dtype=np.int64)
    np.cumsum(sizes, out=off[1:])
    return Groups(x, y, off, np.flatnonzero(keep), int(size.size), int((~keep).sum()))


# --------------------------------------------------------------------------------------------
# results
# --------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class PairCounts(Result):
    """Pair counts of Deutsch et al. (2023, Table 1) for one pair of vectors.

    ``concordant`` (C), ``discordant`` (D), ``ties_human`` (T_h: tied in the human scores only),
    ``ties_metric`` (T_m: tied in the metric only, ``|dm| <= epsilon``), ``ties_both`` (T_hm),
    ``n_pairs`` (N = C + D + T_h + T_m + T_hm = n (n - 1) / 2), ``n`` complete values,
    ``n_distinct_metric`` / ``n_distinct_human`` (for tau-c) and the ``epsilon`` used.

    Examples
    --------
    >>> from nlgeval.correlation.kendall import pair_counts
    >>> c = pair_counts([1, 2, 3, 3], [1, 2, 2, 3])
    >>> c.concordant, c.ties_human, c.ties_metric, c.n_pairs
    (4, 1, 1, 6)
    """

    concordant: int
    discordant: int
    ties_human: int
    ties_metric: int
    ties_both: int
    n_pairs: int
    n: int
    n_distinct_metric: int
    n_distinct_human: int
    epsilon: float = 0.0

    def statistic(self, variant: str) -> float:
        """The variant computed from these counts (NaN where undefined)."""
        code = _VARIANT_CODE[check_variant(variant)]
        return float(_stat_from_counts(self.concordant, self.discordant, self.ties_human,
                                       self.ties_metric, self.ties_both, self.n,
                                       self.n_distinct_metric, self.n_distinct_human, code))



def _counts_from_row(row: np.ndarray, eps: float) -> PairCounts:
    c, d, th, tm, thm, n, nx, ny = (int(v) for v in row)
    return PairCounts(c, d, th, tm, thm, c + d + th + tm + thm, n, nx, ny, eps)


@dataclass(frozen=True)
class KendallResult(StatResult):
    """One Kendall variant for one pair of vectors, with its pair counts.

    ``pvalue`` is NaN: these are descriptive statistics (compare metrics with
    :func:`kendall_permutation_test`; scipy's ``kendalltau`` gives tau-b/tau-c p-values).
    ``ci_low``/``ci_high`` are NaN (use :func:`kendall_resample_distribution` for a bootstrap).

    Examples
    --------
    >>> from nlgeval.correlation.kendall import kendall_variant
    >>> res = kendall_variant([1, 2, 3, 4], [1, 3, 2, 4], "tau_b")
    >>> round(res.statistic, 3), res.n, res.counts.concordant
    (0.667, 4, 5)
    """

    statistic: float
    variant: str
    epsilon: float
    counts: PairCounts
    n_missing: int = 0
    pvalue: float = math.nan
    note: str = ""
    ci_low: float = math.nan
    ci_high: float = math.nan
    _aliases = {"n": "n", "n_pairs": "n_pairs"}

    @property
    def n(self) -> int:
        """Complete (metric, human) pairs of values."""
        return self.counts.n

    @property
    def n_pairs(self) -> int:
        """Pairs of values compared (n (n - 1) / 2)."""
        return self.counts.n_pairs


@dataclass(frozen=True)
class GroupedResult(StatResult):
    """A Kendall variant under a grouping: the mean over groups whose value is defined.

    ``n_groups`` groups entered the mean, holding ``n_pairs`` pairs in all; ``n_skipped``
    groups were left out (fewer than 2 complete cells, or an undefined value such as tau-b of a
    constant vector). ``counts`` sums the pair counts over the groups in the mean (for
    ``grouping="segment"`` they are the counts of the pooled vectors). ``group_values`` holds one
    value per group of the grouping (items, systems, or the single pooled group; NaN = left
    out).

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[1.0, 2.0], [2.0, 1.0], [3.0, 3.0]])
    >>> Y = np.array([[1.0, 1.0], [2.0, 2.0], [3.0, 3.0]])
    >>> from nlgeval.correlation.kendall import grouped_kendall
    >>> res = grouped_kendall(X, Y, "tau_b", "item")
    >>> res.n_groups, round(res.statistic, 3)
    (2, 0.667)
    """

    statistic: float
    variant: str
    grouping: str
    epsilon: float
    n_groups: int
    n_pairs: int
    n_skipped: int
    counts: PairCounts
    pvalue: float = math.nan
    note: str = ""
    group_values: np.ndarray = field(default_factory=lambda: np.empty(0), repr=False,
                                     compare=False)
    ci_low: float = math.nan
    ci_high: float = math.nan
    _omit = frozenset({"group_values"})
