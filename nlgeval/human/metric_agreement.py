"""Does a metric find the differences humans find? (Reiter & Belz 2009, Table 9.)

For every pair of systems, the human ratings and each metric's segment scores are compared with
the same test -- Wilcoxon signed-rank, paired by item, corrected over all pairs
(:func:`nlgeval.human.compare.pairwise_wilcoxon`). For each metric:

``human_significant``  pairs humans rate significantly differently;
``predicted``          of those, pairs the metric also finds significant, in the same direction;
``backwards``          of those, pairs the metric finds significant in the opposite direction;
``missed``             of those, pairs the metric does not find significant;
``spurious``           pairs the metric finds significant where humans do not.

(``predicted + backwards + missed = human_significant``.) A metric whose lower scores are
better (TER, edit distance) is oriented by ``higher_is_better``. The metric is tested on the
same (system, item) outputs that have human scores, so both tests see the same items.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from nlgeval.errors import InputError
from nlgeval.human.compare import pairwise_wilcoxon

TABLE9_COLUMNS = ("metric", "human_significant", "predicted", "backwards", "missed", "spurious")


def _check_frames(human: pd.DataFrame, metric_scores: pd.DataFrame) -> None:
    """Both inputs are DataFrames with the columns the tests need."""
    for name, df, cols in (("human", human, ("system", "item", "score")),
                           ("metric_scores", metric_scores, ("metric", "system", "item", "score"))):
        if not isinstance(df, pd.DataFrame):
            raise InputError(f"{name} must be a pandas DataFrame")
        miss = [c for c in cols if c not in df.columns]
        if miss:
            raise InputError(f"{name} needs columns {', '.join(cols)}; missing {', '.join(miss)}")


def _outcomes(both: pd.DataFrame) -> np.ndarray:
    """Each pair's outcome: predicted, backwards, missed, spurious or agree-not-significant."""
    hs, ms = both["human_significant"], both["metric_significant"]
    same = both["human_direction"] == both["metric_direction"]
    return np.select(
        [hs & ms & same, hs & ms & ~same, hs & ~ms, ~hs & ms],
        ["predicted", "backwards", "missed", "spurious"],
        default="agree-not-significant",
    )


def _metric_on_rated(m: pd.DataFrame, keys: pd.DataFrame, systems: list[str],
                     metric: str) -> pd.DataFrame:
    """One metric's ``system, item, score`` on the human-rated outputs ``keys``; every system
    scored, no missing score."""
    m = m[["system", "item", "score"]].copy()
    m["system"], m["item"] = m["system"].astype(str), m["item"].astype(str)
    m = keys.merge(m, on=["system", "item"], how="inner")
    missing_sys = [s for s in systems if s not in set(m["system"])]
    if missing_sys:
        raise InputError(f"metric '{metric}' has no scores for system(s) "
                         f"{', '.join(missing_sys)} on the human-rated items")
    if m["score"].isna().any():
        raise InputError(f"metric '{metric}' has missing scores on human-rated outputs")
    return m


def significant_difference_pairs(
    human: pd.DataFrame, metric_scores: pd.DataFrame, *,
    higher_is_better: Mapping[str, bool] | None = None, alpha: float = 0.05,
    correction: str = "bonferroni", cache: dict[Any, pd.DataFrame] | None = None,
) -> pd.DataFrame:
    """Per metric and system pair: the human and metric test results side by side.

    Directions are ``">"``/``"<"``/``"="`` for A vs B, metric directions oriented so that ``">"``
    means A is better.

    Parameters
    ----------
    human, metric_scores : pandas.DataFrame
        Human ``system, item, score`` (one criterion) and metric ``metric, system, item, score``.
    higher_is_better : mapping of str to bool, optional
        Direction per metric (default: higher is better).
    alpha, correction : float, str
        Level and correction of the pairwise Wilcoxon tests (Bonferroni by default).
    cache : dict, optional
        Reused across calls (e.g. one per criterion) so that a metric's tests on the same
        outputs are computed once.

    Returns
    -------
    pandas.DataFrame
        ``metric, system_a, system_b, human_direction, human_pvalue_adjusted,
        human_significant, metric_direction, metric_pvalue_adjusted, metric_significant,
        outcome``; outcome one of ``predicted, backwards, missed, spurious,
        agree-not-significant``.

    Examples
    --------
    >>> import pandas as pd
    >>> items = [str(i) for i in range(8)]
    >>> human = pd.DataFrame({"system": ["a"] * 8 + ["b"] * 8, "item": items * 2,
    ...                       "score": [5, 6, 5, 6, 7, 6, 5, 6] + [1, 2, 2, 1, 3, 2, 1, 2]})
    >>> metric = human.assign(metric="m", score=human["score"] * 0.1)
    >>> significant_difference_pairs(human, metric)[["metric", "outcome"]].values.tolist()
    [['m', 'predicted']]
    """
    _check_frames(human, metric_scores)
    h = human[["system", "item", "score"]].copy()
    h["system"], h["item"] = h["system"].astype(str), h["item"].astype(str)
    h = h.groupby(["system", "item"], as_index=False, sort=False)["score"].mean()
    systems = list(dict.fromkeys(h["system"]))
    hw = pairwise_wilcoxon(h, pairing="item", correction=correction,  # type: ignore[arg-type]  # checked there
                           alpha=alpha, systems=systems)
    keys = h[["system", "item"]]
    hib = dict(higher_is_better or {})
    frames = []
    for metric, m in metric_scores.groupby("metric", sort=False):
        m = _metric_on_rated(m, keys, systems, str(metric))
        sign = 1.0 if hib.get(str(metric), True) else -1.0
        m["score"] = sign * m["score"].astype(float)
        key = (str(metric), sign, tuple(systems), correction, alpha,
               hashlib.sha1(pd.util.hash_pandas_object(m, index=False).to_numpy().tobytes())
               .hexdigest())
        if cache is not None and key in cache:
            mw = cache[key]
        else:
            mw = pairwise_wilcoxon(m, pairing="item", correction=correction,  # type: ignore[arg-type]  # checked there
                                   alpha=alpha, systems=systems)
            if cache is not None:
                cache[key] = mw
        both = pd.DataFrame({
            "metric": str(metric),
            "system_a": hw["system_a"], "system_b": hw["system_b"],
            "human_direction": hw["direction"],
            "human_pvalue_adjusted": hw["pvalue_adjusted"],
            "human_significant": hw["significant"],
            "metric_direction": mw["direction"].to_numpy(),
            "metric_pvalue_adjusted": mw["pvalue_adjusted"].to_numpy(),
            "metric_significant": mw["significant"].to_numpy(),
        })
        both["outcome"] = _outcomes(both)
        frames.append(both)
    if not frames:
        raise InputError("no metric scores given")
    return pd.concat(frames, ignore_index=True)


def significant_difference_agreement(
    human: pd.DataFrame,
    metric_scores: pd.DataFrame,
    *,
    higher_is_better: Mapping[str, bool] | None = None,
    alpha: float = 0.05,
    correction: str = "bonferroni",
    cache: dict[Any, pd.DataFrame] | None = None,
) -> pd.DataFrame:
    """The 2009 paper's Table 9 for any corpus: one row per metric with columns ``metric,
    human_significant, predicted, backwards, missed, spurious`` (see the module docstring).

    ``human``: ``system, item, score`` (one criterion; several rows per output are averaged);
    ``metric_scores``: ``metric, system, item, score`` (segment scores).

    Parameters
    ----------
    human, metric_scores : pandas.DataFrame
        The human ratings and the metrics' segment scores (columns above).
    higher_is_better : mapping of str to bool, optional
        Per metric, whether higher is better (default True).
    alpha : float, default 0.05
        Significance level of both tests.
    correction : str, default ``"bonferroni"``
        Correction over the system pairs.
    cache : dict, optional
        Reused across calls, see :func:`significant_difference_pairs`.

    Returns
    -------
    pandas.DataFrame
        One row per metric, columns above.

    Examples
    --------
    >>> import pandas as pd
    >>> items = [str(i) for i in range(8)]
    >>> human = pd.DataFrame({"system": ["a"] * 8 + ["b"] * 8, "item": items * 2,
    ...                       "score": [5, 6, 5, 6, 7, 6, 5, 6] + [1, 2, 2, 1, 3, 2, 1, 2]})
    >>> metric = human.assign(metric="m", score=human["score"] * 0.1)
    >>> significant_difference_agreement(human, metric)[["metric", "predicted"]].values.tolist()
    [['m', 1]]
    """
    pairs = significant_difference_pairs(human, metric_scores, higher_is_better=higher_is_better,
                                         alpha=alpha, correction=correction, cache=cache)
    rows = []
    for metric, g in pairs.groupby("metric", sort=False):
        counts = g["outcome"].value_counts()
        rows.append({
            "metric": metric,
            "human_significant": int(g["human_significant"].sum()),
            "predicted": int(counts.get("predicted", 0)),
            "backwards": int(counts.get("backwards", 0)),
            "missed": int(counts.get("missed", 0)),
            "spurious": int(counts.get("spurious", 0)),
        })
    return pd.DataFrame(rows, columns=list(TABLE9_COLUMNS))
