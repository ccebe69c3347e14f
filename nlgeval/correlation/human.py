"""Human-human reference points for reading a metric's correlation.

* :func:`criterion_correlations` -- how the human criteria correlate with each other (the
  data of Reiter & Belz 2009 give r = 0.58 between their Accuracy and Clarity ratings), at
  system or segment level.
* :func:`rater_agreement_bound` -- how well *one* rater's scores predict the mean of the *other*
  raters of the same output (leave-one-rater-out). A metric is compared with the mean over all
  of an output's raters, so this is a reference, not a strict ceiling: if a single human
  correlates 0.5 with the others, a metric at 0.45 is doing about as well as adding one more
  rater. Reported both pooled over all (rating, rest-of-raters) pairs and as the mean of
  per-rater coefficients (raters with at least 3 such pairs).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from nlgeval.correlation.coefficients import (
    DegenerateInputWarning,
    batch_correlation,
    check_coefficient,
    correlation,
)
from nlgeval.correlation.levels import (
    check_level,
    default_names,
    frame_codes_by,
    level_correlation,
    score_matrices,
)
from nlgeval.errors import InputError
from nlgeval.results import Result


def criterion_correlations(
    human: pd.DataFrame,
    *,
    levels: Sequence[str] = ("segment", "system"),
    coefficients: Sequence[str] = ("pearson",),
    criteria: Sequence[str] | None = None,
) -> pd.DataFrame:
    """Correlations between every pair of criteria of per-output human scores.

    ``human``: ``system, item, criterion, score`` (e.g. ``Corpus.human_scores()``). Returns
    ``criterion_a, criterion_b, level, coefficient, r, p, n``.

    Parameters
    ----------
    human : pandas.DataFrame
        Tidy ``system, item, criterion, score`` rows.
    levels : sequence of str, default ("segment", "system")
        The levels to correlate at (keyword-only, as below).
    coefficients : sequence of str, default ("pearson",)
        The correlation coefficients.
    criteria : sequence of str, optional
        The criteria to pair (default: all in ``human``).

    Returns
    -------
    pandas.DataFrame
        One row per criterion pair, level and coefficient (columns above).

    Examples
    --------
    >>> import pandas as pd
    >>> human = pd.DataFrame({"system": list("AABBCC") * 2, "item": [1, 2] * 6,
    ...                       "criterion": ["fluency"] * 6 + ["adequacy"] * 6,
    ...                       "score": [5, 4, 3, 3, 1, 2, 4, 5, 3, 2, 2, 1]})
    >>> criterion_correlations(human).round(3)
      criterion_a criterion_b    level coefficient      r      p  n
    0     fluency    adequacy  segment     pearson  0.769  0.074  6
    1     fluency    adequacy   system     pearson  0.982  0.121  3
    """
    miss = [c for c in ("system", "item", "criterion", "score") if c not in human.columns]
    if miss:
        raise InputError(
            f"human scores need columns system, item, criterion, score; missing {miss}")
    crits = list(criteria) if criteria is not None else list(dict.fromkeys(human["criterion"]))
    by = frame_codes_by(human, "criterion", crits)  # each criterion's codes once
    rows = []
    for i, a in enumerate(crits):
        for b in crits[i + 1:]:
            ca, cb = by[a], by[b]
            if ca is None or cb is None:  # a duplicated output: score_matrices names it
                cols = ["system", "item", "score"]
                m = score_matrices(human.loc[human["criterion"] == a, cols],
                                   human.loc[human["criterion"] == b, cols])
            else:
                m = ca.matrices(cb, *default_names(ca, cb))
            for level in levels:
                level = check_level(level)
                for coef in coefficients:
                    res = level_correlation(m.metric, m.human, level, coef,
                                            label=f"{a} x {b} ({level})")
                    rows.append({"criterion_a": a, "criterion_b": b, "level": level,
                                 "coefficient": res.coefficient, "r": res.statistic,
                                 "p": res.pvalue, "n": res.n})
    return pd.DataFrame(rows, columns=["criterion_a", "criterion_b", "level", "coefficient",
                                       "r", "p", "n"])


@dataclass(frozen=True)
class RaterAgreement(Result):
    """Leave-one-rater-out correlation for one criterion (see :func:`rater_agreement_bound`).

    ``pooled_r``/``pooled_p``: the coefficient over all ``n_pairs`` (rating, mean of the other
    raters) pairs; ``mean_rater_r``: the mean of the per-rater coefficients of ``n_raters``
    raters.

    Examples
    --------
    >>> import pandas as pd
    >>> ratings = pd.DataFrame({"rater": ["r1", "r2", "r3"] * 4, "item": [1] * 3 + [2] * 3
    ...                         + [3] * 3 + [4] * 3, "system": "A", "criterion": "fluency",
    ...                         "score": [5, 4, 5, 2, 1, 2, 3, 3, 4, 4, 5, 4]})
    >>> res = rater_agreement_bound(ratings, "fluency")
    >>> res.to_dict()                                   # doctest: +NUMBER
    {'criterion': 'fluency', 'coefficient': 'pearson', 'pooled_r': 0.835,
     'pooled_p': 0.0007, 'n_pairs': 12, 'mean_rater_r': 0.884, 'n_raters': 3}
    """

    criterion: str
    coefficient: str
    pooled_r: float
    pooled_p: float
    n_pairs: int
    mean_rater_r: float
    n_raters: int


def rater_agreement_bound(
    ratings: pd.DataFrame, criterion: str, coefficient: str = "pearson"
) -> RaterAgreement:
    """One rater's score vs the mean of the other raters of the same output (see module doc).

    ``ratings``: ``rater, item, system, criterion, score``, one row per judgement. Outputs with
    a single rater cannot contribute and are skipped.

    Parameters
    ----------
    ratings : pandas.DataFrame
        Tidy ``rater, item, system, criterion, score`` rows.
    criterion : str
        The criterion to use.
    coefficient : str, default "pearson"
        The correlation coefficient.

    Returns
    -------
    RaterAgreement
        The pooled r and its p-value, the number of pairs, the mean per-rater r and the
        number of raters.

    Examples
    --------
    >>> import pandas as pd
    >>> ratings = pd.DataFrame({"rater": ["r1", "r2", "r3"] * 4, "item": [1] * 3 + [2] * 3
    ...                         + [3] * 3 + [4] * 3, "system": "A", "criterion": "fluency",
    ...                         "score": [5, 4, 5, 2, 1, 2, 3, 3, 4, 4, 5, 4]})
    >>> res = rater_agreement_bound(ratings, "fluency")
    >>> round(res.pooled_r, 3), res.n_pairs, round(res.mean_rater_r, 3)
    (0.835, 12, 0.884)
    """
    coefficient = check_coefficient(coefficient)
    r = ratings.loc[ratings["criterion"] == criterion, ["rater", "item", "system", "score"]]
    r = r[np.isfinite(r["score"].astype(float))]
    g = r.groupby(["system", "item"])["score"]
    total = g.transform("sum")
    count = g.transform("count")
    keep = count >= 2
    if not keep.any():
        warnings.warn(f"rater agreement for '{criterion}' is NaN: no output has two or more "
                      "raters", DegenerateInputWarning, stacklevel=2)
        return RaterAgreement(criterion, coefficient, math.nan, math.nan, 0, math.nan, 0)
    one = r.loc[keep, "score"].to_numpy(float)
    rest = ((total - r["score"]) / (count - 1))[keep].to_numpy(float)
    pooled = correlation(one, rest, coefficient, label=f"rater agreement ({criterion})")
    per = []
    # each rater's pairs in their order, from one stable sort (raters in order of appearance)
    codes = pd.factorize(r.loc[keep, "rater"])[0]
    named = np.flatnonzero(codes >= 0)  # a missing rater name matches no rater (NaN != NaN)
    order = named[np.argsort(codes[named], kind="stable")]
    one_s, rest_s = one[order], rest[order]
    sizes = np.bincount(codes[named])
    for end, size in zip(np.cumsum(sizes).tolist(), sizes.tolist(), strict=True):
        if size >= 3:
            v = _statistic(one_s[end - size:end], rest_s[end - size:end], coefficient)
            if np.isfinite(v):
                per.append(v)
    return RaterAgreement(criterion, coefficient, pooled.statistic, pooled.pvalue, pooled.n,
                          float(np.mean(per)) if per else math.nan, len(per))


def _statistic(x: np.ndarray, y: np.ndarray, coefficient: str) -> float:
    """``correlation(x, y, coefficient).statistic`` of finite vectors without its p-value and
    interval (the per-rater coefficients use only r): the same rule and the same kernel."""
    # batch_correlation applies the same rule (fewer than MIN_PAIRS pairs, a constant variable:
    # NaN), once
    r = float(batch_correlation(x, y, coefficient))
    return r if np.isfinite(r) else math.nan
