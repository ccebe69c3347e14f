"""Best-worst scaling judgements: counting scores, implied pairwise wins, the maxdiff logit.

Input: one row per (rater, tuple, output shown) -- ``rater, tuple_id, item, system, best,
worst`` with ``best``/``worst`` 1 for the output the rater picked as best/worst in that tuple
and 0 otherwise (exactly one of each per rater and tuple, on different outputs). The tuples
come from :func:`nlgeval.human.bws_design.bws_design`.

* **Counting** (Louviere et al. 2015; Kiritchenko & Mohammad 2017): the score of an output is
  ``(times best - times worst) / times shown``, in [-1, 1].
* **Implied pairwise wins**: the best output beats every other output of its tuple and every
  other output beats the worst (2k - 3 comparisons per tuple of k), written as a relative table
  (``system, system_b, winner``) that :func:`nlgeval.human.pairwise.bradley_terry` and
  ``nlgeval compare --method bradley-terry`` read.
* **Maxdiff logit** (Marley & Louviere 2005; Louviere et al. 2015): P(best = i, worst = j |
  tuple) = exp(u_i - u_j) / sum over ordered pairs a != b of the tuple of exp(u_a - u_b);
  utilities ``u`` (mean 0) by maximum likelihood (or MAP with a Gaussian prior ``prior / 2 *
  sum u^2``), BFGS with the analytic gradient. Or the **sequential** best-worst logit
  (Marley & Louviere 2005): best by a logit on ``u``, then worst among the rest by a logit on
  ``-u``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from nlgeval.errors import InputError
from nlgeval.io import ROW
from nlgeval.results import Result

COLUMNS = ("rater", "tuple_id", "item", "system", "best", "worst")


def check_bws(judgements: pd.DataFrame, *, file: str | None = None) -> pd.DataFrame:
    """The judgements with string identifiers and 0/1 ``best``/``worst``, checked: one best
    and one worst per (rater, tuple), on different outputs, in tuples of at least 2. Errors
    name the row (the file row when read by :func:`read_bws`, else counted from 1).

    Examples
    --------
    >>> import pandas as pd
    >>> j = pd.DataFrame({"rater": "r1", "tuple_id": 1, "item": "1", "system": list("abc"),
    ...                   "best": [1, 0, 0], "worst": [0, 0, 1]})
    >>> check_bws(j)["tuple_id"].tolist()
    ['1', '1', '1']
    """
    if not isinstance(judgements, pd.DataFrame):
        raise InputError(f"judgements must be a DataFrame, got {type(judgements).__name__}")
    missing = [c for c in COLUMNS if c not in judgements.columns]
    if missing:
        raise InputError("best-worst judgements need columns " + ", ".join(COLUMNS)
                         + "; missing " + ", ".join(missing), file=file)
    df = judgements.reset_index(drop=True).copy()
    rows = df[ROW].to_numpy() if ROW in df.columns else np.arange(1, len(df) + 1)

    def fail(mask: pd.Series, msg: str, column: str) -> None:
        if mask.any():
            pos = int(np.flatnonzero(mask.to_numpy())[0])
            raise InputError(msg.format(v=judgements[column].iloc[pos],
                                        r=df["rater"].iloc[pos], t=df["tuple_id"].iloc[pos]),
                             file=file, row=int(rows[pos]), column=column)

    for c in ("rater", "tuple_id", "item", "system"):
        df[c] = df[c].astype(str).str.strip()
    for c in ("best", "worst"):
        v = pd.to_numeric(df[c], errors="coerce")
        fail(~v.isin([0, 1]), f"{c} must be 0 or 1, got {{v!r}}", c)
        df[c] = v.astype(int)
    fail((df["best"] == 1) & (df["worst"] == 1), "an output picked as both best and worst",
         "worst")
    g = df.groupby(["rater", "tuple_id"], sort=False)
    sums = g[["best", "worst"]].transform("sum")
    size = g["system"].transform("size")
    fail((sums["best"] != 1) | (sums["worst"] != 1) | (size < 2),
         "rater {r!r}, tuple {t!r} needs at least 2 outputs with exactly one best and one worst",
         "best")
    return df.drop(columns=[ROW], errors="ignore")


def read_bws(path: str | Path) -> pd.DataFrame:
    """Read best-worst judgements (CSV, TSV, JSONL or Parquet; columns ``COLUMNS``) and check
    them (:func:`check_bws`); errors name the file row.

    Parameters
    ----------
    path : str or pathlib.Path
        The judgements file.

    Returns
    -------
    pandas.DataFrame
        The checked judgements, columns ``COLUMNS``.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "bws.csv"
    >>> _ = path.write_text("rater,tuple_id,item,system,best,worst\\n"
    ...                     "r1,1,1,a,1,0\\nr1,1,1,b,0,1\\n")
    >>> bws_counts(read_bws(path))["score"].tolist()
    [1.0, -1.0]
    """
    from nlgeval.io import read_table

    return check_bws(read_table(path, COLUMNS), file=str(path))


def bws_counts(judgements: pd.DataFrame, by: tuple[str, ...] = ("item", "system")
               ) -> pd.DataFrame:
    """Counting scores (Kiritchenko & Mohammad 2017): per group of ``by``, ``n`` (times
    shown), ``best``, ``worst`` and ``score = (best - worst) / n``.

    Parameters
    ----------
    judgements : pandas.DataFrame
        Best-worst judgements (columns ``COLUMNS``).
    by : tuple of str, default ``("item", "system")``
        The columns to group by.

    Returns
    -------
    pandas.DataFrame
        The ``by`` columns plus ``n, best, worst, score``.

    Examples
    --------
    >>> import pandas as pd
    >>> j = pd.DataFrame({"rater": "r1", "tuple_id": [1, 1, 1, 2, 2, 2], "item": "1",
    ...                   "system": list("abcabd"), "best": [1, 0, 0, 0, 1, 0],
    ...                   "worst": [0, 0, 1, 1, 0, 0]})
    >>> bws_counts(j, by=("system",))["score"].tolist()   # a: (1-1)/2, b: (1-0)/2, c, d
    [0.0, 0.5, -1.0, 0.0]
    """
    df = check_bws(judgements)
    keys = list(by)
    out = df.groupby(keys, sort=True).agg(n=("best", "size"), best=("best", "sum"),
                                          worst=("worst", "sum")).reset_index()
    out["score"] = (out["best"] - out["worst"]) / out["n"]
    return out


def bws_ratings(judgements: pd.DataFrame, *, criterion: str = "BWS",
                per_rater: bool = False) -> pd.DataFrame:
    """Counting scores as the tidy ``rater, item, system, criterion, score`` frame that
    ``nlgeval validate --human`` and ``nlgeval compare`` read, plus ``n`` (times shown).

    ``per_rater=False``: one row per output counted over all raters (rater ``all``), as in
    Kiritchenko & Mohammad (2017); ``True``: one row per (rater, output) from that rater's
    tuples only (for agreement and rater-level analyses).

    Parameters
    ----------
    judgements : pandas.DataFrame
        Best-worst judgements (columns ``COLUMNS``).
    criterion : str, default ``"BWS"``
        The value of the ``criterion`` column.
    per_rater : bool, default False
        One row per (rater, output) instead of per output.

    Returns
    -------
    pandas.DataFrame
        ``rater, item, system, criterion, score, n``.

    Examples
    --------
    >>> import pandas as pd
    >>> j = pd.DataFrame({"rater": "r1", "tuple_id": 1, "item": "7", "system": list("abcd"),
    ...                   "best": [0, 1, 0, 0], "worst": [0, 0, 0, 1]})
    >>> bws_ratings(j)[["rater", "system", "criterion", "score"]].values.tolist()[:2]
    [['all', 'a', 'BWS', 0.0], ['all', 'b', 'BWS', 1.0]]
    """
    by = ("rater", "item", "system") if per_rater else ("item", "system")
    c = bws_counts(judgements, by=by)
    if not per_rater:
        c.insert(0, "rater", "all")
    c["criterion"] = criterion
    return c[["rater", "item", "system", "criterion", "score", "n"]]


def bws_pairs(judgements: pd.DataFrame, *, criterion: str = "BWS") -> pd.DataFrame:
    """Implied pairwise wins (module docstring) as a relative table ``rater, item, system,
    system_b, score, winner, criterion, source_item`` (the layout of a relative export, read
    by ``nlgeval compare``): each pair in sorted order, ``score`` +1 when ``system`` won, -1
    when ``system_b`` won (``winner`` names the winning system). Pairs of two outputs of the
    same system say nothing about systems and are left out. ``item`` is the tuple
    (``<item>/<tuple_id>``, or ``<tuple_id>`` when the tuple mixes items, whose item is then
    the empty ``source_item``), so one rater's judgements of a pair in several tuples of an
    item stay distinct judgements; bootstrap resampling by ``item`` resamples tuples.

    Parameters
    ----------
    judgements : pandas.DataFrame
        Best-worst judgements (columns ``COLUMNS``).
    criterion : str, default ``"BWS"``
        The value of the ``criterion`` column.

    Returns
    -------
    pandas.DataFrame
        One row per implied pair: the columns listed above.

    Examples
    --------
    >>> import pandas as pd
    >>> j = pd.DataFrame({"rater": "r1", "tuple_id": 1, "item": "1", "system": list("abcd"),
    ...                   "best": [1, 0, 0, 0], "worst": [0, 0, 0, 1]})
    >>> bws_pairs(j)[["system", "system_b", "score"]].values.tolist()
    [['a', 'b', 1], ['a', 'c', 1], ['a', 'd', 1], ['b', 'd', 1], ['c', 'd', 1]]
    """
    df = check_bws(judgements)
    df["_key"] = df["rater"] + "\x1f" + df["tuple_id"]
    n_items = df.groupby("_key")["item"].transform("nunique")
    df["_unit"] = np.where(n_items == 1, df["item"] + "/", "") + df["tuple_id"]
    df["_src"] = np.where(n_items == 1, df["item"], "")
    b = df[df["best"] == 1].set_index("_key").loc[df["_key"]]
    w = df[df["worst"] == 1].set_index("_key").loc[df["_key"]]
    not_best = (df["best"] == 0).to_numpy()
    not_worst = (df["worst"] == 0).to_numpy()
    base = {"rater": df["rater"].to_numpy(), "item": df["_unit"].to_numpy(),
            "source_item": df["_src"].to_numpy(), "_t": df["_key"].to_numpy()}
    won = pd.DataFrame({**base, "system": b["system"].to_numpy(),
                        "system_b": df["system"].to_numpy(), "_o": 0})[not_best]
    lost = pd.DataFrame({**base, "system": df["system"].to_numpy(),
                         "system_b": w["system"].to_numpy(), "_o": 1})[not_worst & not_best]
    out = pd.concat([won, lost]).sort_values(["_t", "_o"], kind="stable")
    out = out[out["system"] != out["system_b"]]
    win, lose = out["system"].to_numpy(), out["system_b"].to_numpy()
    flip = win > lose
    out["system"] = np.where(flip, lose, win)
    out["system_b"] = np.where(flip, win, lose)
    out["score"] = np.where(flip, -1, 1)
    out["winner"] = win
    out["criterion"] = criterion
    return out[["rater", "item", "system", "system_b", "score", "winner", "criterion",
                "source_item"]].reset_index(drop=True)


@dataclass(frozen=True)
class MaxDiffResult(Result):
    """Maxdiff-logit (or sequential-logit) utilities (Marley & Louviere 2005), mean 0,
    highest first.

    Examples
    --------
    >>> import pandas as pd
    >>> j = pd.DataFrame({"rater": "r1", "tuple_id": [1, 1, 2, 2], "item": "1",
    ...                   "system": ["a", "b", "a", "b"], "best": [1, 0, 0, 1],
    ...                   "worst": [0, 1, 1, 0]})
    >>> bws_maxdiff(j).ranking["utility"].round(6).tolist()   # one win each: equal
    [0.0, 0.0]
    """

    ranking: pd.DataFrame
    loglik: float
    n_tuples: int
    prior: float
    converged: bool
    method: str = "maxdiff-logit"


def _tuples(df: pd.DataFrame, label: pd.Series) -> tuple[np.ndarray, np.ndarray, np.ndarray,
                                                         list[str]]:
    """(n, kmax) label indices (-1 = padding), best and worst indices, the labels."""
    labels = sorted(label.unique())
    code = label.map({s: i for i, s in enumerate(labels)}).to_numpy()
    key = (df["rater"] + "\x1f" + df["tuple_id"]).to_numpy()
    tcode, _ = pd.factorize(key)
    pos = pd.Series(tcode).groupby(tcode).cumcount().to_numpy()
    t = np.full((tcode.max() + 1, pos.max() + 1), -1)
    t[tcode, pos] = code
    b = np.empty(len(t), dtype=int)
    w = np.empty(len(t), dtype=int)
    b[tcode[df["best"].to_numpy() == 1]] = code[df["best"].to_numpy() == 1]
    w[tcode[df["worst"].to_numpy() == 1]] = code[df["worst"].to_numpy() == 1]
    return t, b, w, labels


def _maxdiff_nll(u: np.ndarray, t: np.ndarray, b: np.ndarray, w: np.ndarray,
                 prior: float) -> tuple[float, np.ndarray]:
    """Negative log-likelihood (+ prior) of the maxdiff model and its gradient."""
    m = len(u)
    ut = np.where(t >= 0, u[np.maximum(t, 0)], 0.0)
    valid = (t[:, :, None] >= 0) & (t[:, None, :] >= 0) & ~np.eye(t.shape[1], dtype=bool)
    d = np.where(valid, ut[:, :, None] - ut[:, None, :], -np.inf)
    mx = d.max(axis=(1, 2), keepdims=True)
    e = np.exp(d - mx)
    z = e.sum(axis=(1, 2), keepdims=True)
    p = e / z
    nll = -(u[b] - u[w] - (mx + np.log(z))[:, 0, 0]).sum() + 0.5 * prior * (u ** 2).sum()
    # d log Z / d u_i: sum over pairs where i is first minus where i is second
    g_pos = p.sum(axis=2)  # mass of pairs with this slot first
    g_neg = p.sum(axis=1)
    grad = np.zeros(m)
    tt = np.maximum(t, 0)
    np.add.at(grad, tt, np.where(t >= 0, g_pos - g_neg, 0.0))
    grad -= np.bincount(b, minlength=m) - np.bincount(w, minlength=m)
    return float(nll), grad + prior * u


def _sequential_nll(u: np.ndarray, t: np.ndarray, b: np.ndarray, w: np.ndarray,
                    prior: float) -> tuple[float, np.ndarray]:
    """Negative log-likelihood (+ prior) of the sequential best-worst logit and its gradient:
    best by a logit on ``u`` over the tuple, then worst by a logit on ``-u`` over the rest."""
    m = len(u)
    valid = t >= 0
    ut = np.where(valid, u[np.maximum(t, 0)], -np.inf)
    rest = valid & (t != b[:, None])
    vt = np.where(rest, -u[np.maximum(t, 0)], -np.inf)
    lse1 = np.logaddexp.reduce(ut, axis=1)
    lse2 = np.logaddexp.reduce(vt, axis=1)
    p = np.exp(ut - lse1[:, None])
    q = np.exp(vt - lse2[:, None])
    nll = -(u[b] - lse1 - u[w] - lse2).sum() + 0.5 * prior * (u ** 2).sum()
    grad = np.zeros(m)
    np.add.at(grad, np.maximum(t, 0), np.where(valid, p - q, 0.0))
    grad -= np.bincount(b, minlength=m) - np.bincount(w, minlength=m)
    return float(nll), grad + prior * u


def bws_maxdiff(judgements: pd.DataFrame, *, by: str = "system", prior: float = 0.0,
                model: str = "maxdiff") -> MaxDiffResult:
    """Fit the maxdiff logit (module docstring) to the labels in column ``by`` (``system``
    for a system ranking); returns ``ranking`` (``label, utility, n, best, worst, count``).

    ``model="sequential"`` fits the sequential best-worst logit instead (Marley & Louviere
    2005): the best by a multinomial logit on ``u`` over the tuple, then the worst by a
    multinomial logit on ``-u`` over the remaining outputs.

    Without a prior the maximum-likelihood utilities can be infinite (e.g. a label picked
    best in every tuple it is in): then InputError; pass ``prior > 0``.

    Parameters
    ----------
    judgements : pandas.DataFrame
        Best-worst judgements (columns ``COLUMNS``).
    by : str, default ``"system"``
        The column whose labels get utilities.
    prior : float, default 0.0
        Strength of the penalty keeping utilities finite (0: maximum likelihood).
    model : {"maxdiff", "sequential"}, default ``"maxdiff"``
        The choice model fitted.

    Returns
    -------
    MaxDiffResult
        ``ranking``, the log-likelihood, ``n_tuples``, ``prior`` and ``converged``.

    Examples
    --------
    >>> import pandas as pd
    >>> j = pd.DataFrame({"rater": "r1", "tuple_id": [1, 1, 1, 2, 2, 2], "item": "1",
    ...                   "system": list("abcabc"), "best": [1, 0, 0, 0, 1, 0],
    ...                   "worst": [0, 0, 1, 0, 0, 1]})
    >>> bws_maxdiff(j, prior=0.1).ranking["label"].tolist()
    ['a', 'b', 'c']
    """
    from scipy.optimize import minimize

    if prior < 0:
        raise InputError(f"prior must be >= 0, got {prior}")
    nll = {"maxdiff": _maxdiff_nll, "sequential": _sequential_nll}.get(model)
    if nll is None:
        raise InputError(f"model must be 'maxdiff' or 'sequential', got {model!r}")
    df = check_bws(judgements)
    if by not in df.columns:
        raise InputError(f"no column {by!r} in the judgements", column=by)
    t, b, w, labels = _tuples(df, df[by].astype(str))
    counts = bws_counts(df.assign(label=df[by].astype(str)), by=("label",))
    res = minimize(nll, np.zeros(len(labels)), args=(t, b, w, prior), jac=True,
                   method="BFGS", options={"gtol": 1e-9, "maxiter": 1000})
    u = res.x - res.x.mean()
    converged = bool(res.success or np.abs(res.jac).max() < 1e-5)
    if not converged or np.ptp(u) > 30:
        raise InputError(f"the {model} maximum-likelihood utilities are infinite or the fit "
                         "did not converge (e.g. an output always picked best, or never "
                         "picked best); pass a prior, e.g. 0.1")
    ranking = counts.rename(columns={"score": "count"}).assign(utility=u)
    ranking = ranking.sort_values("utility", ascending=False, kind="stable")
    ranking = ranking[["label", "utility", "n", "best", "worst", "count"]].reset_index(drop=True)
    return MaxDiffResult(ranking=ranking, loglik=-float(nll(u, t, b, w, 0.0)[0]),
                         n_tuples=len(t), prior=float(prior), converged=converged,
                         method=f"{model}-logit")
