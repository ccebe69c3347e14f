"""Correlation at system, segment and item level, from system x item score matrices.

Scores are held as two aligned matrices, ``X`` (metric) and ``Y`` (human), shape
(systems, items), NaN where an output is missing or unrated. Only cells where *both* are present
take part (a "complete case" per output); how many were dropped is reported.

Levels (as in WMT and Deutsch et al. 2021, "A Statistical Analysis of Summarization Evaluation
Metrics using Resampling Methods", TACL):

``system``   the mean over a system's complete cells, then one correlation across systems;
``segment``  all complete cells pooled (one correlation over outputs; "global" in Deutsch et al.);
``item``     within each item, the correlation across systems, then the mean over items whose
             correlation is defined ("input level" in nlpstats, "item-wise" in WMT; MTME's
             segment level with ``average_by="item"``).
``system-grouped``  within each system, the correlation across items, then the mean over
             systems whose correlation is defined (MTME's ``average_by="sys"``). This is the
             ``item`` level of the transposed matrices.

``segment`` is MTME's segment level with no grouping (``average_by="none"``). One difference
from MTME's ``AverageCorrelation``: a group (item, or system at ``system-grouped``) needs 3
complete cells, as every coefficient here does; MTME keeps groups of 2, whose correlation is +-1
whatever the data, so on items rated for only 2 systems it averages those where nlgeval skips
the item (the Kendall variants of :mod:`nlgeval.correlation.kendall` keep MTME's rule of 2).

Every function here also works on stacks of matrices (leading axes), which is how the bootstrap
and permutation tests compute all resamples at once.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from nlgeval.codes import text_codes
from nlgeval.correlation.coefficients import (
    CorrelationResult,
    DegenerateInputWarning,
    batch_correlation,
    check_coefficient,
    correlation,
    fixed_y_statistic,
)
from nlgeval.deprecation import renamed_keyword
from nlgeval.errors import InputError
from nlgeval.results import ConfidenceInterval

LEVELS: tuple[str, ...] = ("system", "segment", "item", "system-grouped")


def check_level(name: str) -> str:
    """The canonical correlation level (aliases such as sys, seg, global, by-system accepted).

    Examples
    --------
    >>> check_level("global"), check_level("by-system")
    ('segment', 'system-grouped')
    """
    key = name.strip().lower().replace("_", "-")
    key = {"sys": "system", "seg": "segment", "global": "segment", "input": "item",
           "item-wise": "item", "itemwise": "item", "items": "item", "systems": "system",
           "segments": "segment", "none": "segment", "item-grouped": "item",
           "by-item": "item", "by-system": "system-grouped", "sys-grouped": "system-grouped",
           "within-system": "system-grouped"}.get(key, key)
    if key not in LEVELS:
        raise InputError(f"unknown correlation level '{name}' (use one of: {', '.join(LEVELS)})")
    return key


@dataclass(frozen=True)
class ScoreMatrices:
    """Metric and human scores as aligned (systems x items) matrices, NaN = missing.

    Examples
    --------
    >>> import pandas as pd
    >>> m = pd.DataFrame({"system": ["a", "b"], "item": ["1", "1"], "score": [0.5, 0.7]})
    >>> h = pd.DataFrame({"system": ["a"], "item": ["1"], "score": [3.0]})
    >>> sm = score_matrices(m, h)
    >>> sm.complete.tolist(), sm.missing["unrated"]
    ([[True], [False]], 1)
    """

    metric: np.ndarray
    human: np.ndarray
    systems: tuple[str, ...]
    items: tuple[str, ...]
    missing: dict[str, int] = field(default_factory=dict)

    @property
    def complete(self) -> np.ndarray:
        return np.isfinite(self.metric) & np.isfinite(self.human)


def score_matrices(
    metric: pd.DataFrame,
    human: pd.DataFrame,
    *,
    systems: Sequence[str] | None = None,
    items: Sequence[str] | None = None,
) -> ScoreMatrices:
    """Pivot two tidy frames ``[system, item, score]`` into aligned matrices.

    The rows are the union of systems and items in either frame (or the given ones). The
    ``missing`` dict reports outputs with a metric score but no human score (``unrated``), the
    reverse (``unscored``), and NaN scores in either frame (``nan_metric``, ``nan_human``).

    Parameters
    ----------
    metric, human : pandas.DataFrame
        Tidy ``[system, item, score]`` frames.
    systems, items : sequence of str, optional
        The rows and columns to use (keyword-only; default: the union).

    Returns
    -------
    ScoreMatrices
        The aligned ``metric`` and ``human`` matrices, ``systems``, ``items`` and ``missing``.

    Examples
    --------
    >>> import pandas as pd
    >>> m = pd.DataFrame({"system": ["a", "a", "b"], "item": ["1", "2", "1"],
    ...                   "score": [1.0, 2.0, 3.0]})
    >>> score_matrices(m, m).metric
    array([[ 1.,  2.],
           [ 3., nan]])
    """
    codes = {"metric": frame_codes(metric, "metric"), "human": frame_codes(human, "human")}
    return codes["metric"].matrices(codes["human"], *default_names(
        codes["metric"], codes["human"], systems, items))


def default_names(metric: FrameCodes, human: FrameCodes, systems: Sequence[str] | None = None,
                  items: Sequence[str] | None = None) -> tuple[list[str], list[str]]:
    """The rows and columns of :func:`score_matrices`: ``systems`` and ``items`` when given,
    else the union of the two frames' names in order of first appearance (metric first).

    Parameters
    ----------
    metric, human : FrameCodes
        The two frames' codes.
    systems, items : sequence of str, optional
        The rows and columns asked for.

    Returns
    -------
    tuple of list
        The systems and the items.

    Examples
    --------
    >>> a = pd.DataFrame({"system": ["x"], "item": ["2"], "score": [1.0]})
    >>> b = pd.DataFrame({"system": ["y"], "item": ["1"], "score": [1.0]})
    >>> default_names(frame_codes(a), frame_codes(b), systems=["y"])
    (['y'], ['2', '1'])
    """
    (ms, mi), (hs, hi) = metric.row_names(), human.row_names()
    if systems is None:
        systems = pd.unique(pd.concat([ms, hs])).tolist()
    if items is None:
        items = pd.unique(pd.concat([mi, hi])).tolist()
    return list(systems), list(items)


@dataclass(frozen=True)
class FrameCodes:
    """A tidy ``[system, item, score]`` frame as integer codes: what :func:`score_matrices`
    needs of it, computed once (:func:`frame_codes`).

    ``system_codes``/``item_codes`` number the rows' names as strings (``astype(str)``; -1 for
    a missing name) in order of first appearance, as ``pd.factorize`` of the string columns;
    ``systems``/``items`` are the strings of the distinct raw names (NaN kept) in order of
    first appearance, ``scores`` the scores as floats and ``nan_scores`` how many are missing.

    Examples
    --------
    >>> df = pd.DataFrame({"system": ["a", "b", "a"], "item": [1, 1, 2], "score": [.5, .7, 1]})
    >>> fc = frame_codes(df)
    >>> fc.system_codes.tolist(), fc.items.tolist()
    ([0, 1, 0], ['1', '2'])
    """

    system_codes: np.ndarray
    item_codes: np.ndarray
    systems: pd.Series
    items: pd.Series
    scores: np.ndarray
    nan_scores: int
    #: each row's raw code into ``systems`` and ``items``, and whether its score is missing
    _raw: tuple[np.ndarray, np.ndarray, np.ndarray] = field(repr=False, default=(
        np.empty(0, dtype=np.intp), np.empty(0, dtype=np.intp), np.empty(0, dtype=bool)))

    def take(self, rows: np.ndarray) -> FrameCodes:
        """The codes of the rows ``rows`` (positions) of the frame.

        Parameters
        ----------
        rows : numpy.ndarray
            Row positions.

        Returns
        -------
        FrameCodes
            The rows' codes; ``systems`` and ``items`` are still the whole frame's names.

        Examples
        --------
        >>> df = pd.DataFrame({"system": ["a", "b"], "item": ["1", "1"], "score": [.5, None]})
        >>> fc = frame_codes(df).take(np.array([1]))
        >>> fc.scores.tolist(), fc.nan_scores
        ([nan], 1)
        """
        raw = tuple(r[rows] for r in self._raw)
        return FrameCodes(self.system_codes[rows], self.item_codes[rows], self.systems,
                          self.items, self.scores[rows], int(raw[2].sum()), raw)

    def row_names(self) -> tuple[pd.Series, pd.Series]:
        """The systems and the items of the frame's rows as strings, each in order of first
        appearance (NaN kept): the rows and columns :func:`score_matrices` makes by default.

        Returns
        -------
        tuple of pandas.Series
            The system strings and the item strings.

        Examples
        --------
        >>> df = pd.DataFrame({"system": ["a", "b", "a"], "item": ["2", "1", "3"],
        ...                    "score": [.5, .7, .1]})
        >>> [s.tolist() for s in frame_codes(df).take(np.array([1, 2])).row_names()]
        [['b', 'a'], ['1', '3']]
        """
        return (self.systems.iloc[pd.unique(self._raw[0])].reset_index(drop=True),
                self.items.iloc[pd.unique(self._raw[1])].reset_index(drop=True))

    def positions(self, systems: Sequence[str], items: Sequence[str]
                  ) -> tuple[np.ndarray, np.ndarray]:
        """Each row's row and column in the (systems x items) matrix (-1: not there).

        Parameters
        ----------
        systems, items : sequence of str
            The matrix's rows and columns.

        Returns
        -------
        tuple of numpy.ndarray
            The row index and the column index of every row of the frame.

        Examples
        --------
        >>> df = pd.DataFrame({"system": ["a", "b"], "item": ["1", "1"], "score": [.5, .7]})
        >>> [p.tolist() for p in frame_codes(df).positions(["b"], ["1"])]
        [[-1, 0], [0, 0]]
        """
        # the strings of the distinct names only, looked up once each
        si = pd.Index([str(s) for s in systems]).get_indexer(self.systems)[self._raw[0]]
        ii = pd.Index([str(i) for i in items]).get_indexer(self.items)[self._raw[1]]
        return si, ii

    def matrices(self, human: FrameCodes, systems: Sequence[str], items: Sequence[str]
                 ) -> ScoreMatrices:
        """The :class:`ScoreMatrices` of this frame (the metric) against ``human``.

        Parameters
        ----------
        human : FrameCodes
            The human scores' codes.
        systems, items : sequence of str
            The matrices' rows and columns.

        Returns
        -------
        ScoreMatrices
            As :func:`score_matrices` of the two frames.

        Examples
        --------
        >>> df = pd.DataFrame({"system": ["a", "b"], "item": ["1", "1"], "score": [.5, .7]})
        >>> frame_codes(df).matrices(frame_codes(df), ["a", "b"], ["1"]).metric.tolist()
        [[0.5], [0.7]]
        """
        systems = [str(s) for s in systems]
        items = [str(i) for i in items]
        X, Y = self._pivot(systems, items), human._pivot(systems, items)
        xm, ym = np.isfinite(X), np.isfinite(Y)
        missing = {
            "complete": int((xm & ym).sum()),
            "unrated": int((xm & ~ym).sum()),
            "unscored": int((~xm & ym).sum()),
            "nan_metric": self.nan_scores,
            "nan_human": human.nan_scores,
        }
        return ScoreMatrices(X, Y, tuple(systems), tuple(items), missing)

    def _pivot(self, systems: list[str], items: list[str]) -> np.ndarray:
        si, ii = self.positions(systems, items)
        keep = (si >= 0) & (ii >= 0)
        out = np.full((len(systems), len(items)), np.nan)
        out[si[keep], ii[keep]] = self.scores[keep]
        return out


def _codes(df: pd.DataFrame, name: str) -> tuple[FrameCodes, np.ndarray]:
    """The codes of ``df`` and the key of each row's output (equal keys = the same output)."""
    miss = [c for c in ("system", "item", "score") if c not in df.columns]
    if miss:
        raise InputError(f"{name} scores need columns system, item, score; missing {miss}")
    sc, sys_raw, sys_names = text_codes(df["system"])
    ic, item_raw, item_names = text_codes(df["item"])
    n_items = int(ic.max(initial=-1)) + 1  # the distinct item strings (-1 = missing)
    key = sc.astype(np.int64) * max(1, n_items) + ic
    score = df["score"]
    nan_rows = score.isna().to_numpy(dtype=bool)
    return FrameCodes(sc, ic, sys_names, item_names, pd.to_numeric(score).to_numpy(dtype=float),
                      int(nan_rows.sum()), (sys_raw, item_raw, nan_rows)), key


def frame_codes(df: pd.DataFrame, name: str = "metric") -> FrameCodes:
    """The :class:`FrameCodes` of a tidy ``[system, item, score]`` frame; InputError when a
    column is missing or an output (system, item) has more than one row.

    Parameters
    ----------
    df : pandas.DataFrame
        Tidy ``[system, item, score]`` rows, one per output.
    name : str, default "metric"
        Names the frame in errors.

    Returns
    -------
    FrameCodes
        The codes, names and scores of the rows.

    Examples
    --------
    >>> df = pd.DataFrame({"system": ["a", "a"], "item": ["1", "1"], "score": [.5, .7]})
    >>> frame_codes(df, "human")
    Traceback (most recent call last):
    ...
    nlgeval.errors.InputError: human scores have more than one row for system 'a', item '1' \
(aggregate per output first)
    """
    codes, key = _codes(df, name)
    uniq, counts = np.unique(key, return_counts=True)
    if (counts > 1).any():
        pos = np.flatnonzero(key == uniq[counts > 1][0])[1]
        raw = codes._raw
        raise InputError(
            f"{name} scores have more than one row for system "
            f"'{codes.systems.iloc[raw[0][pos]]}', item '{codes.items.iloc[raw[1][pos]]}' "
            "(aggregate per output first)"
        )
    return codes


def frame_codes_by(df: pd.DataFrame, column: str, values: Sequence[str], name: str = "metric"
                   ) -> dict[str, FrameCodes | None]:
    """:func:`frame_codes` of ``df[df[column] == v]`` for each ``v`` of ``values``, from one
    pass over ``df`` (the metrics of a long scores frame, the criteria of a ratings frame).

    Each group's codes give the same matrices and counts as :func:`frame_codes` of the group's
    rows (its ``systems``/``items`` are the names of the whole frame); ``None`` for a group
    with a duplicated output, whose :func:`frame_codes` raises the error.

    Parameters
    ----------
    df : pandas.DataFrame
        Tidy ``[column, system, item, score]`` rows.
    column : str
        The column whose values name the groups.
    values : sequence of str
        The groups wanted.
    name : str, default "metric"
        Names the frame in errors.

    Returns
    -------
    dict
        Group -> :class:`FrameCodes` (or None, see above).

    Examples
    --------
    >>> df = pd.DataFrame({"metric": ["m", "m", "n"], "system": ["a", "b", "a"],
    ...                    "item": ["1", "1", "1"], "score": [.5, .7, .2]})
    >>> by = frame_codes_by(df, "metric", ["n", "m"])
    >>> by["n"].matrices(by["m"], ["a", "b"], ["1"]).metric.tolist()
    [[0.2], [nan]]
    """
    whole, key = _codes(df, name)
    group, uniq = pd.factorize(df[column])
    where = {u: k for k, u in enumerate(uniq)}
    span = int(key.max(initial=0)) + 1  # keys are >= -1: shift by one below
    gkey = group.astype(np.int64) * (span + 1) + (key + 1)
    ukey, counts = np.unique(gkey, return_counts=True)
    dup_groups = set((ukey[counts > 1] // (span + 1)).tolist())
    out: dict[str, FrameCodes | None] = {}
    for v in values:
        k = where.get(v, -1)
        rows = np.flatnonzero(group == k) if k >= 0 else np.empty(0, dtype=np.intp)
        out[v] = None if k in dup_groups else whole.take(rows)
    return out


def system_means(X: np.ndarray, Y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per-system means over the complete cells (last axis = items); NaN for empty systems.

    Parameters
    ----------
    X, Y : numpy.ndarray
        Metric and human scores, shape (..., systems, items).

    Returns
    -------
    tuple of numpy.ndarray
        The metric and the human means of every system, shape (..., systems).

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[1.0, 3.0], [2.0, np.nan]])
    >>> system_means(X, np.ones((2, 2)))[0]
    array([2., 2.])
    """
    ok = np.isfinite(X) & np.isfinite(Y)
    cnt = ok.sum(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        mx = np.where(ok, X, 0.0).sum(axis=-1) / cnt
        my = np.where(ok, Y, 0.0).sum(axis=-1) / cnt
    return np.where(cnt > 0, mx, np.nan), np.where(cnt > 0, my, np.nan)


def level_statistic(X: np.ndarray, Y: np.ndarray, level: str, coefficient: str) -> np.ndarray:
    """The correlation at ``level`` for each stacked (systems x items) matrix pair.

    ``X`` and ``Y`` have shape (..., systems, items); the result has shape (...). NaN where the
    correlation is undefined.

    Parameters
    ----------
    X, Y : numpy.ndarray
        Metric and human scores, shape (..., systems, items).
    level : str
        ``system``, ``segment``, ``item`` or ``system-grouped``.
    coefficient : str
        ``pearson``, ``spearman``, ``kendall`` or ``kendall_c``.

    Returns
    -------
    numpy.ndarray
        The correlation of each matrix pair, shape (...).

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[1.0, 2.0], [3.0, 5.0], [2.0, 2.5]])
    >>> Y = np.array([[1.0, 3.0], [2.0, 4.0], [2.0, 2.0]])
    >>> round(float(level_statistic(X, Y, "system", "spearman")), 3)
    0.866
    """
    level = check_level(level)
    if level == "system-grouped":
        return level_statistic(np.swapaxes(X, -1, -2), np.swapaxes(Y, -1, -2), "item",
                               coefficient)
    if level == "system":
        mx, my = system_means(X, Y)
        return batch_correlation(mx, my, coefficient)
    if level == "segment":
        lead = X.shape[:-2]
        return batch_correlation(X.reshape(*lead, -1), Y.reshape(*lead, -1), coefficient)
    per_item = batch_correlation(np.swapaxes(X, -1, -2), np.swapaxes(Y, -1, -2), coefficient)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return np.nanmean(per_item, axis=-1)


def item_permutation_pvalue(
    X: np.ndarray,
    Y: np.ndarray,
    coefficient: str = "pearson",
    *,
    n_resamples: int = 1000,
    seed: int | None = 0,
    permutations: int | None = None,
) -> tuple[float, int]:
    """Two-sided p-value of the item-level correlation by permutation within items.

    H0: within every item, the metric scores are exchangeable across systems (no association
    with the human scores). Each permutation shuffles the metric scores among the complete
    (system, item) cells of each item independently, recomputes the mean per-item coefficient,
    and ``p = (1 + #{|r_b| >= |r|}) / (B + 1)`` (Phipson & Smyth 2010, "Permutation p-values
    should never be zero", SAGMB 9(1)). Per-item correlations are not independent tests of one
    hypothesis, so no closed-form p-value applies; this is the test the item-wise statistic
    admits. Returns ``(p, B)``; NaN when the statistic is undefined. The shuffles are drawn
    in chunks (a few million cells each); each draw is a compiled loop over its indices.
    ``permutations``: the earlier name of ``n_resamples`` (deprecated).

    Parameters
    ----------
    X, Y : numpy.ndarray
        Metric and human scores, (systems x items).
    coefficient : str, default "pearson"
        The per-item coefficient.
    n_resamples, seed : int
        Permutations (1000) and RNG seed (0) (keyword-only).
    permutations : int, optional
        Deprecated name of ``n_resamples``.

    Returns
    -------
    tuple of (float, int)
        The p-value and the number of permutations B.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> H = rng.normal(size=(5, 8)); M = H + 0.3 * rng.normal(size=(5, 8))
    >>> p, B = item_permutation_pvalue(M, H, n_resamples=200, seed=0)
    >>> p < 0.01, B
    (True, 200)
    """
    n_resamples = renamed_keyword(
        "item_permutation_pvalue", "permutations", permutations, "n_resamples", n_resamples)
    coefficient = check_coefficient(coefficient)
    if n_resamples < 1:
        raise InputError(f"n_resamples must be >= 1, got {n_resamples}")
    ok = (np.isfinite(X) & np.isfinite(Y)).T  # (items, systems)
    # complete cells first within each item, so "shuffle the first m_i cells" is one argsort
    order = np.argsort(~ok, axis=1, kind="stable")
    Xc = np.take_along_axis(np.where(ok, X.T, np.nan), order, axis=1)
    Yc = np.take_along_axis(np.where(ok, Y.T, np.nan), order, axis=1)
    okc = np.take_along_axis(ok, order, axis=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        observed = np.nanmean(batch_correlation(Xc, Yc, coefficient))
    if not np.isfinite(observed):
        return math.nan, n_resamples
    hits = int(np.count_nonzero(
        np.abs(_permutation_means(Xc, Yc, coefficient, okc, n_resamples, seed))
        >= abs(observed) - 1e-12))
    return (1 + hits) / (n_resamples + 1), n_resamples


def _permutation_means(Xc: np.ndarray, Yc: np.ndarray, coefficient: str, okc: np.ndarray,
                       n_resamples: int, seed: int | None) -> np.ndarray:
    """The mean item-level coefficient of every within-item permutation of ``Xc``.

    The human side, the constancy rule and the scaling do not change under the shuffle:
    computed once, not once per permutation. The draws are compiled loops over the shuffle
    indices (:mod:`nlgeval.correlation._item_permutation`; numba imported here, on first
    use), or :func:`fixed_y_statistic` chunk by chunk where those do not apply: the same
    numbers, bit for bit.
    """
    from nlgeval.correlation._item_permutation import permutation_means

    chunks = _permutation_chunks(okc, n_resamples, seed)
    means = permutation_means(Xc, Yc, coefficient, chunks)
    if means is not None:
        return means
    stat, out = fixed_y_statistic(Xc, Yc, coefficient), []
    for perm in chunks:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            out.append(np.nanmean(stat(perm), axis=-1))
    return np.concatenate(out)


#: the within-item shuffles of the last seeded call that fit in one chunk: they depend only
#: on the seed, the number of permutations and the complete-cell pattern, which every metric
#: of a criterion usually shares, so the metrics of a study draw and sort them once; the
#: last :data:`_SHUFFLES_KEPT` patterns are kept (metrics with missing cells of their own
#: alternate with complete ones), 2-byte indices: at most 4 x 8 MB
_SHUFFLES: dict[tuple[object, ...], list[np.ndarray]] = {}
_SHUFFLES_KEPT = 4
_CHUNK_CELLS = 4_000_000


def _permutation_chunks(okc: np.ndarray, n_resamples: int, seed: int | None
                        ) -> list[np.ndarray]:
    """The permutation index arrays (``(b, items, systems)`` chunks) of one call.

    Each chunk shuffles the first ``m_i`` (complete) cells of every item: random keys, the
    incomplete cells' keys set to +inf, ``argsort``. A seeded call whose permutations fit in
    one chunk reuses the arrays of a recent call with the same seed, n_resamples and
    pattern (read-only; the same numbers as drawing them again).
    """
    n_items, n_sys = okc.shape
    chunk = max(1, min(n_resamples, _CHUNK_CELLS // max(1, n_items * n_sys)))
    key = None
    if isinstance(seed, (int, np.integer)) and chunk == n_resamples:
        key = (int(seed), n_resamples, okc.shape, okc.tobytes())
        cached = _SHUFFLES.pop(key, None)
        if cached is not None:
            _SHUFFLES[key] = cached  # the most recently used last
            return cached
    rng = np.random.default_rng(seed)
    out, done = [], 0
    while done < n_resamples:
        b = min(chunk, n_resamples - done)
        keys = rng.random((b, n_items, n_sys))
        keys[:, ~okc] = np.inf  # incomplete cells stay at the end, unshuffled
        perm = np.argsort(keys, axis=-1)
        # 2-byte indices where they fit: a quarter of the memory the compiled draws read
        out.append(perm.astype(np.int16) if n_sys <= np.iinfo(np.int16).max else perm)
        done += b
    if key is not None:
        out[0].flags.writeable = False
        _SHUFFLES[key] = out
        while len(_SHUFFLES) > _SHUFFLES_KEPT:
            del _SHUFFLES[next(iter(_SHUFFLES))]  # the least recently used
    return out


def _at_level(level: str, coefficient: str, statistic: float, pvalue: float, n: int,
              ci: ConfidenceInterval, n_missing: int, note: str) -> CorrelationResult:
    return CorrelationResult(coefficient, statistic, pvalue, n, ci.low, ci.high, n_missing,
                             note, level)


def _system_grouped(grouped: CorrelationResult) -> CorrelationResult:
    """The item-level result of the transposed matrices, relabelled as system-grouped."""
    note = grouped.note.replace("item(s) skipped", "system(s) skipped").replace(
        "fewer than 3 systems", "fewer than 3 items").replace(
        "within the item", "within the system").replace(
        "within-item permutations", "within-system permutations")
    return _at_level("system-grouped", grouped.coefficient, grouped.statistic, grouped.pvalue,
                     grouped.n, grouped.confidence_interval(), grouped.n_missing, note)


def level_correlation(
    X: np.ndarray, Y: np.ndarray, level: str, coefficient: str = "pearson", *,
    confidence_level: float = 0.95, label: str = "", n_resamples: int = 1000,
    seed: int | None = 0, permutations: int | None = None,
) -> CorrelationResult:
    """Correlation at one level with its p-value (a
    :class:`~nlgeval.correlation.coefficients.CorrelationResult` with ``level`` set).

    System and segment level use :func:`~nlgeval.correlation.coefficients.correlation` on the
    level's vectors (so p and the Pearson Fisher-z interval are scipy's / the closed form).
    Item level averages per-item coefficients; the per-item correlations are not independent
    tests of one hypothesis, so its p-value comes from :func:`item_permutation_pvalue`
    (``n_resamples`` within-item permutations, seeded; 0 gives NaN), it has no closed-form
    interval (use the bootstrap), and ``n`` is the number of items whose correlation is defined.

    Parameters
    ----------
    X, Y : numpy.ndarray
        Metric and human scores, systems x items (NaN where missing).
    level : str
        ``system``, ``segment``, ``item`` or ``system-grouped``.
    coefficient : str
        ``pearson``, ``spearman`` or ``kendall``.
    confidence_level, label : float, str
        Of the closed-form interval; a name for notes and warnings.
    n_resamples, seed : int, int or None
        Within-item permutations of the item-level p-value and their seed.
    permutations : int, optional
        The earlier name of ``n_resamples`` (deprecated).

    Returns
    -------
    CorrelationResult
        The coefficient, p-value, interval and ``n`` at ``level``.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[1.0, 2.0], [3.0, 5.0], [2.0, 2.5]])
    >>> Y = np.array([[1.0, 3.0], [2.0, 4.0], [2.0, 2.0]])
    >>> res = level_correlation(X, Y, "segment", "pearson")
    >>> res.level, res.n, round(res.statistic, 3)
    ('segment', 6, 0.832)
    """
    n_resamples = renamed_keyword(
        "level_correlation", "permutations", permutations, "n_resamples", n_resamples)
    level = check_level(level)
    coefficient = check_coefficient(coefficient)
    if level == "system-grouped":
        return _system_grouped(level_correlation(
            np.asarray(X).T, np.asarray(Y).T, "item", coefficient,
            confidence_level=confidence_level, label=label, n_resamples=n_resamples, seed=seed))
    ok = np.isfinite(X) & np.isfinite(Y)
    n_missing = int((np.isfinite(X) ^ np.isfinite(Y)).sum())
    if level == "system":
        mx, my = system_means(X, Y)
        res: CorrelationResult = correlation(
            mx, my, coefficient, confidence_level=confidence_level, label=label
        )
        return _at_level(level, coefficient, res.statistic, res.pvalue, res.n,
                         res.confidence_interval(), n_missing, res.note)
    if level == "segment":
        res = correlation(X[ok], Y[ok], coefficient, confidence_level=confidence_level,
                          label=label)
        return _at_level(level, coefficient, res.statistic, res.pvalue, res.n,
                         res.confidence_interval(), n_missing, res.note)
    return _item_level(X, Y, coefficient, label, n_resamples, seed, n_missing)


def _item_level(X: np.ndarray, Y: np.ndarray, coefficient: str, label: str, n_resamples: int,
                seed: int | None, n_missing: int) -> CorrelationResult:
    """Item level of :func:`level_correlation`: the mean of the defined per-item coefficients,
    its p-value from within-item permutations."""
    per_item = batch_correlation(X.T, Y.T, coefficient)
    defined = np.isfinite(per_item)
    note = ""
    if not defined.any():
        note = f"correlation {label} is NaN: no item has 3 or more systems with varying scores"
        warnings.warn(note, DegenerateInputWarning, stacklevel=3)
        r = math.nan
    else:
        r = float(per_item[defined].mean())
        skipped = int((~defined).sum())
        if skipped:
            note = (f"{skipped} item(s) skipped: fewer than 3 systems with both scores, or "
                    "constant scores within the item")
    p = math.nan
    if np.isfinite(r) and n_resamples > 0:
        p, _ = item_permutation_pvalue(X, Y, coefficient, n_resamples=n_resamples, seed=seed)
        perm_note = f"p: {n_resamples} within-item permutations (seed {seed})"
        note = f"{note}; {perm_note}" if note else perm_note
    return _at_level("item", coefficient, r, p, int(defined.sum()),
                     ConfidenceInterval(math.nan, math.nan), n_missing, note)
