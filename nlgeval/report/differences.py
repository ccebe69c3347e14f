"""Does a metric find the differences humans find? The 2009 paper's Table 9, fast.

Reiter & Belz (2009, Table 9) compare every pair of systems with a Wilcoxon signed-rank test,
paired by item and Bonferroni-corrected over all pairs, once on the human ratings and once on
each metric's segment scores, and count per metric the pairs the humans find significantly
different that the metric also finds (``predicted``), finds the other way round
(``backwards``) or misses (``missed``), and the pairs only the metric finds (``spurious``).
:func:`nlgeval.human.metric_agreement.significant_difference_agreement` is the reference
implementation (one scipy call per pair, with effect sizes and intervals the table does not
use); this module gives the same counts for a whole study at once.

Why hand-written: the study needs (criteria + metrics) x (system pairs) tests, e.g.
13 x 120 on WebNLG 2020, and a per-pair loop spends seconds on Python overhead. Here each
matrix's pairs are tested in one vectorised :func:`scipy.stats.wilcoxon` call: an item missing
for either system of a pair enters as a zero difference, which ``zero_method="wilcox"`` drops
exactly like the per-pair test drops unpaired items. scipy's ``method="auto"`` uses the normal
approximation for more than 50 paired items, so those pairs are tested in the batch; pairs
with 50 or fewer items go through the per-pair scipy call (exact null distribution), except
the at most 13 pairs with ties or zeros, where scipy's permutation test loops over all 2^n
sign flips and :func:`_sign_flip_pvalue` computes the same null distribution in one product.
Every p-value is the one the reference gives. Each metric's tests are computed once and
shared by the criteria rated on the same outputs.
"""

from __future__ import annotations

import hashlib
import warnings
from collections.abc import Mapping, Sequence
from itertools import combinations
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from nlgeval.codes import TextCodes
from nlgeval.errors import InputError
from nlgeval.human.compare import correct_pvalues

TABLE9_COLUMNS = ["metric", "human_significant", "predicted", "backwards", "missed", "spurious"]


def pairwise_signed_rank(
    W: np.ndarray, alpha: float = 0.05, correction: str = "bonferroni",
    systems: Sequence[str] | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Direction, p-value and corrected significance of a Wilcoxon signed-rank test for every
    pair of systems, paired by item.

    ``W``: (items x systems) scores, NaN where an output is missing. Pairs are the columns'
    :func:`itertools.combinations` order. Returns ``direction`` (+1 when the first system of
    the pair has the larger signed-rank sum W+ > W-, -1 when smaller, 0 on a tie), the
    two-sided ``pvalue`` of :func:`scipy.stats.wilcoxon` (``zero_method="wilcox"``,
    ``method="auto"``; 1 when every difference is zero) and ``significant`` (corrected over
    all pairs, :func:`nlgeval.human.compare.correct_pvalues`). ``systems`` names the columns
    in error messages.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> W = rng.normal(size=(60, 3)) + np.array([0.0, 0.1, 1.0])  # 60 items, 3 systems
    >>> d, p, s = pairwise_signed_rank(W)  # pairs (0, 1), (0, 2), (1, 2)
    >>> d.tolist(), s.tolist()
    ([-1, -1, -1], [False, True, True])
    """
    W = np.asarray(W, dtype=float)
    pairs = list(combinations(range(W.shape[1]), 2))
    a, b = (np.array(x, dtype=int) for x in zip(*pairs, strict=True))
    # pairs in blocks of at most PAIR_BLOCK_CELLS (items x pairs) cells: every quantity is per
    # pair (a row below), so the blocks give the same numbers as one piece, and the working
    # set stays ~8 MB per array (~90 MB in all) instead of items x pairs (7.6 GB peak at
    # 250,000 items x 190)
    step = max(1, PAIR_BLOCK_CELLS // max(1, W.shape[0]))
    direction = np.empty(len(pairs), dtype=int)
    p = np.ones(len(pairs))  # all differences zero: no evidence of a difference, p = 1
    for lo in range(0, len(pairs), step):
        blk = slice(lo, lo + step)
        direction[blk], p[blk] = _signed_rank_block(W, a[blk], b[blk], systems)
    _, reject = correct_pvalues(p, correction, alpha)
    return direction, p, reject.astype(bool)


#: cells (items x pairs of systems) of one block of :func:`pairwise_signed_rank`
PAIR_BLOCK_CELLS = 2**20


def _signed_rank_block(W: np.ndarray, a: np.ndarray, b: np.ndarray,
                       systems: Sequence[str] | None) -> tuple[np.ndarray, np.ndarray]:
    """Direction and p-value of the signed-rank test of the pairs of columns ``(a, b)``."""
    D = W[:, a] - W[:, b]  # items x pairs
    paired = np.isfinite(D)
    n = paired.sum(axis=0)
    if (n == 0).any():
        k = int(np.argmax(n == 0))
        names = list(systems) if systems is not None else [str(i) for i in range(W.shape[1])]
        raise InputError(f"systems '{names[a[k]]}' and '{names[b[k]]}' have no item in common, "
                         "so they cannot be paired", column="system")
    D = np.where(paired, D, 0.0).T  # pairs x items; 0 = dropped by zero_method="wilcox"
    absd = np.where(D != 0, np.abs(D), np.nan)
    ranks = stats.rankdata(absd, axis=1, nan_policy="omit")
    w_plus = np.nansum(np.where(D > 0, ranks, 0.0), axis=1)
    w_minus = np.nansum(np.where(D < 0, ranks, 0.0), axis=1)
    direction = np.sign(w_plus - w_minus).astype(int)
    nonzero = (D != 0).sum(axis=1)
    p = np.ones(len(a))  # all differences zero: no evidence of a difference, p = 1
    big = (n > 50) & (nonzero > 0)
    if big.any():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            p[big] = stats.wilcoxon(D[big], zero_method="wilcox", method="asymptotic",
                                    axis=1).pvalue
    for j in np.flatnonzero(~big & (nonzero > 0)):
        x = D[j, paired[:, j]]
        nz = np.abs(x[x != 0])
        if x.size <= 13 and (nz.size < x.size or np.unique(nz).size < nz.size):
            p[j] = _sign_flip_pvalue(x)  # what scipy's "auto" does here, without its loop
        else:
            p[j] = stats.wilcoxon(x, zero_method="wilcox", method="auto").pvalue
    return direction, p


def _sign_flip_pvalue(d: np.ndarray) -> float:
    """Two-sided p of the signed-rank test from all 2^n sign flips of ``d``.

    For at most 13 pairs with ties or zero differences, :func:`scipy.stats.wilcoxon`
    (``method="auto"``) runs :func:`scipy.stats.permutation_test` over every sign flip, calling
    the statistic once per flip in a Python loop (seconds per pair). The null distribution is
    the same here in one product: W+ = sum of the ranks of |d| (zeros dropped) whose flipped
    sign is positive, for every flip of the non-zero differences (flipping a zero changes
    nothing, so dropping them leaves every proportion as it is). Counting follows scipy's
    ``permutation_test``: ``p = 2 min(#{W* <= W + g}, #{W* >= W - g}) / 2^n`` clipped at 1, with
    ``g = 100 eps |W|``. The ranks are half-integers, so every sum is exact.

    Examples
    --------
    >>> d = np.array([1.0, 2.0, 2.0, 3.0, 0.0, -1.0])
    >>> bool(_sign_flip_pvalue(d) == stats.wilcoxon(d, method="auto").pvalue)
    True
    """
    nz = d[d != 0]
    ranks = stats.rankdata(np.abs(nz))
    flips = (np.arange(2 ** nz.size)[:, None] >> np.arange(nz.size)) & 1  # every sign pattern
    null = flips @ ranks
    observed = float(ranks[nz > 0].sum())
    gamma = abs(np.finfo(float).eps * 100 * observed)
    less = np.count_nonzero(null <= observed + gamma)
    greater = np.count_nonzero(null >= observed - gamma)
    return float(min(1.0, 2.0 * min(less, greater) / null.size))


def table9_counts(
    human: np.ndarray, metrics: Mapping[str, np.ndarray], alpha: float = 0.05,
    cache: dict[Any, tuple[np.ndarray, np.ndarray]] | None = None,
    rated: np.ndarray | None = None, systems: Sequence[str] | None = None,
) -> pd.DataFrame:
    """Table 9 rows (:data:`TABLE9_COLUMNS`) from (items x systems) matrices.

    ``metrics`` must be oriented (larger = better) and have a score wherever an output is
    ``rated`` (default: where ``human`` is finite); other cells are ignored. ``cache`` (any
    dict) keeps each metric's tests for the next call on the same outputs; ``systems`` names
    the columns in error messages.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> H = rng.normal(size=(80, 4)) + np.array([0.0, 0.0, 1.0, 2.0])
    >>> t = table9_counts(H, {"same": H, "flat": rng.normal(size=H.shape)})
    >>> print(t.to_string(index=False))
    metric  human_significant  predicted  backwards  missed  spurious
      same                  5          5          0       0         0
      flat                  5          0          0       5         0
    """
    human = np.asarray(human, dtype=float)
    hd, _, hs = pairwise_signed_rank(human, alpha, systems=systems)
    rated = np.isfinite(human) if rated is None else np.asarray(rated, dtype=bool)
    rows = []
    for name, X in metrics.items():
        X = np.where(rated, np.asarray(X, dtype=float), np.nan)
        # the matrix by its digest, not a copy of its bytes (40 MB a metric at 5 M outputs)
        key = (name, X.shape, hashlib.sha1(X.data, usedforsecurity=False).digest(), alpha)
        if cache is not None and key in cache:
            md, ms = cache[key]
        else:
            md, _, ms = pairwise_signed_rank(X, alpha, systems=systems)
            if cache is not None:
                cache[key] = (md, ms)
        same = hd == md
        rows.append({"metric": name, "human_significant": int(hs.sum()),
                     "predicted": int((hs & ms & same).sum()),
                     "backwards": int((hs & ms & ~same).sum()),
                     "missed": int((hs & ~ms).sum()), "spurious": int((~hs & ms).sum())})
    return pd.DataFrame(rows, columns=TABLE9_COLUMNS)


def significant_differences(
    seg: pd.DataFrame, human: pd.DataFrame, criteria: Sequence[str],
    higher_is_better: Mapping[str, bool], alpha: float, notes: list[str],
    bound: Mapping[str, str] | None = None,
) -> pd.DataFrame | None:
    """Table 9 per criterion (``criterion`` column first) on the outputs every metric scored.

    ``bound``: metric -> the only criterion it is compared on (a per-criterion judge).

    ``seg``: ``metric, system, item, score``; ``human``: ``system, item, criterion, score``.
    Rated outputs without a score from every metric are left out (the tests pair outputs),
    with a note; a criterion whose tests cannot be run gets a note instead of rows.

    Examples
    --------
    >>> rng = np.random.default_rng(1)
    >>> h = pd.DataFrame([(s, f"i{i}", "q", s_ * 1.0 + rng.normal()) for s_, s in
    ...                   enumerate("ABC") for i in range(60)],
    ...                  columns=["system", "item", "criterion", "score"])
    >>> seg = h.assign(metric="m")[["metric", "system", "item", "score"]]
    >>> t = significant_differences(seg, h, ["q"], {"m": True}, 0.05, [])
    >>> print(t.to_string(index=False))
    criterion metric  human_significant  predicted  backwards  missed  spurious
            q      m                  3          3          0       0         0
    """
    finite = np.flatnonzero(np.isfinite(seg["score"].to_numpy(dtype=float)))
    metric_names = [str(m) for m in seg["metric"].iloc[finite].unique()]
    if not metric_names:
        notes.append("Table 9 (significant differences) skipped: no metric scores outputs")
        return None
    X, systems, h_item, h_sys = _score_cube(seg, finite, human, metric_names,
                                            higher_is_better)
    bound = dict(bound or {})
    score = human["score"].to_numpy(float)
    cache: dict[Any, tuple[np.ndarray, np.ndarray]] = {}
    frames = []
    for crit in criteria:
        use = [k for k, m in enumerate(metric_names) if bound.get(m, crit) == crit]
        if not use:
            continue
        # the tests pair outputs: every metric of the criterion must score them
        complete = np.isfinite(X[use]).all(axis=0)
        # compared as a column: its to_numpy() would be a Python str per row (5 M at scale)
        sel = (human["criterion"] == crit).to_numpy(dtype=bool)
        total = np.zeros(X.shape[1:])
        count = np.zeros_like(total)
        np.add.at(total, (h_item[sel], h_sys[sel]), score[sel])
        np.add.at(count, (h_item[sel], h_sys[sel]), 1)
        rated = count > 0
        left_out = int((rated & ~complete).sum())
        if left_out:
            notes.append(f"Table 9 for '{crit}': {left_out} rated output(s) "
                         "without a score from every metric left out")
            rated &= complete
        cols = rated.any(axis=0)  # the systems rated on this criterion
        try:
            if cols.sum() < 2:
                raise InputError(f"comparing systems needs at least 2 systems; the ratings "
                                 f"have {int(cols.sum())}")
            with np.errstate(invalid="ignore", divide="ignore"):
                H = np.where(rated, total / count, np.nan)[:, cols]
            # views when every system is rated (table9_counts copies each matrix once anyway)
            mats = {metric_names[k]: X[k] if cols.all() else X[k][:, cols] for k in use}
            t = table9_counts(H, mats, alpha, cache, rated[:, cols], list(systems[cols]))
        except ValueError as exc:  # InputError included: a note, the report goes on
            notes.append(f"Table 9 for '{crit}' failed: {type(exc).__name__}: {exc}")
            continue
        frames.append(t.assign(criterion=crit))
    if not frames:
        return None
    out = pd.concat(frames, ignore_index=True)
    return out[["criterion", *TABLE9_COLUMNS]]


def _score_cube(
    seg: pd.DataFrame, rows: np.ndarray, human: pd.DataFrame, metrics: Sequence[str],
    higher_is_better: Mapping[str, bool],
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(metrics x items x systems) oriented metric scores of the rows ``rows`` of ``seg`` on
    one (system, item) index shared with ``human`` (every criterion's matrices are slices: no
    pivot per criterion); the system names and the item and system codes of the rows of
    ``human``. Names are numbered as text in order of first appearance, the scores' rows
    first (:class:`nlgeval.codes.TextCodes`), and the cube is filled a block of rows at a
    time: a 5 M-output study has 20 M names, which as a string or even an int64 code per row
    took gigabytes here."""
    systems = TextCodes(seg["system"], rows, human["system"], _CUBE_BLOCK)
    items = TextCodes(seg["item"], rows, human["item"], _CUBE_BLOCK)
    mcodes = TextCodes(seg["metric"], rows, None, _CUBE_BLOCK)
    where = {name: k for k, name in enumerate(metrics)}
    to_metric = np.array([where.get(name, -1) for name in mcodes.names], dtype=np.intp)
    X = np.full((len(metrics), len(items.names), len(systems.names)), np.nan)
    score = seg["score"].to_numpy(dtype=float)
    for lo in range(0, len(rows), _CUBE_BLOCK):
        block = rows[lo:lo + _CUBE_BLOCK]
        X[to_metric[mcodes.of_rows(block)], items.of_rows(block), systems.of_rows(block)] = \
            score[block]
    signs = np.array([1.0 if higher_is_better.get(m, True) else -1.0 for m in metrics])
    X *= signs[:, None, None]
    return X, systems.names, items.of_other(), systems.of_other()


#: rows of the scores frame per block when Table 9's cube is filled and its names numbered
_CUBE_BLOCK = 1 << 20
