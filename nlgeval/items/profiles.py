"""Score distributions for the number-of-items study: the paper's evaluator profiles, and
distributions from counts or raw ratings.

González-Corbelle, Alonso-Moral, Crujeiras & Bugarín-Diz (2023), "An Empirical Study on the
Number of Items in Human Evaluation of Automatically Generated Texts", section 4.3: three
evaluators' 5-point scores on 273 texts were mapped to negative (Very Bad, Bad) / fair / positive
(Good, Very Good), aggregated by majority vote into 246 curated cases (89 negative, 35 fair, 122
positive), and five prototypical profiles were made by re-assigning the negative cases to Very
Bad / Bad and the positive cases to Good / Very Good in profile-specific shares.

The paper states the shares only for the Positive profile (negative: 5 % Very Bad / 95 % Bad;
positive: 50 % Good / 50 % Very Good); the others appear only in its Figure 2. The defaults below
are our reading of the profile descriptions (documented assumptions, every share a parameter):

================  ==========================  ===========================
profile           share of negatives -> VB    share of positives -> VG
================  ==========================  ===========================
positive          0.05 (paper)                0.50 (paper)
negative          0.50                        0.05
polarized         0.95                        0.95
neutral           0.05                        0.05
random            0.50                        0.50
================  ==========================  ===========================

Counts are rounded half up for Very Bad / Very Good, the rest going to Bad / Good, so each
profile keeps exactly 89 / 35 / 122 negative / fair / positive cases. The three real evaluators'
distributions (the paper's Eval_1..3) are not printed in the paper and are not included.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from nlgeval.errors import InputError
from nlgeval.results import Result

LIKERT5 = ("Very Bad", "Bad", "Fair", "Good", "Very Good")
PAPER_AGGREGATE = {"negative": 89, "fair": 35, "positive": 122}
PAPER_SHARES: dict[str, tuple[float, float]] = {
    "positive": (0.05, 0.50),
    "negative": (0.50, 0.05),
    "polarized": (0.95, 0.95),
    "neutral": (0.05, 0.05),
    "random": (0.50, 0.50),
}


@dataclass(frozen=True)
class ScoreDistribution(Result):
    """Counts per scale point of one evaluator (or profile) over the full item set.

    Examples
    --------
    >>> d = ScoreDistribution("r1", (1, 2, 3, 4, 0), ("1", "2", "3", "4", "5"))
    >>> d.n
    10
    >>> d.to_dict()
    {'name': 'r1', 'counts': [1, 2, 3, 4, 0], 'labels': ['1', '2', '3', '4', '5'], 'n': 10}
    """

    name: str
    counts: tuple[int, ...]
    labels: tuple[str, ...]

    _aliases = {"n": "n"}  # the total, a property, is part of the JSON output

    @property
    def n(self) -> int:
        """Number of ratings (the sum of ``counts``)."""
        return int(sum(self.counts))


def _half_up(x: float) -> int:
    return int(math.floor(x + 0.5))


def profile_distribution(
    name: str,
    very_bad_share: float,
    very_good_share: float,
    aggregate: Mapping[str, int] = PAPER_AGGREGATE,
) -> ScoreDistribution:
    """One profile: negatives split Very Bad / Bad, positives split Good / Very Good.

    González-Corbelle et al. (2023), section 4.3: the 89 negative / 35 fair / 122 positive
    curated cases, with ``very_bad_share`` of the negatives and ``very_good_share`` of the
    positives at the ends of the scale (rounded half up).

    Parameters
    ----------
    name : str
        Name of the profile.
    very_bad_share, very_good_share : float
        Shares (in [0, 1]) of the negatives and of the positives at the ends of the scale.
    aggregate : mapping of str to int, default ``PAPER_AGGREGATE``
        Negative, fair and positive counts.

    Returns
    -------
    ScoreDistribution
        Counts on the 5-point scale Very Bad ... Very Good.

    Examples
    --------
    >>> profile_distribution("positive", 0.05, 0.50).counts   # the paper's Positive profile
    (4, 85, 35, 61, 61)
    """
    for share in (very_bad_share, very_good_share):
        if not 0.0 <= share <= 1.0:
            raise InputError(f"profile '{name}': shares must lie in [0, 1], got {share}")
    neg, fair, pos = (int(aggregate[k]) for k in ("negative", "fair", "positive"))
    vb = _half_up(very_bad_share * neg)
    vg = _half_up(very_good_share * pos)
    return ScoreDistribution(name, (vb, neg - vb, fair, pos - vg, vg), LIKERT5)


def paper_profiles(
    shares: Mapping[str, tuple[float, float]] | None = None,
    aggregate: Mapping[str, int] = PAPER_AGGREGATE,
    *,
    include_aggregate: bool = True,
) -> list[ScoreDistribution]:
    """The five prototypical profiles of González-Corbelle et al. (2023) (plus the 3-category
    aggregate, Figure 2d); shares other than the Positive profile's are documented readings of
    the paper (module docstring).

    Parameters
    ----------
    shares : mapping of str to (float, float), optional
        Per profile, the Very Bad and Very Good shares (default: the paper's readings).
    aggregate : mapping of str to int, default ``PAPER_AGGREGATE``
        Negative, fair and positive counts (89, 35, 122).
    include_aggregate : bool, default True
        Append the 3-category aggregate.

    Returns
    -------
    list of ScoreDistribution
        One per profile, then the aggregate.

    Examples
    --------
    >>> [(d.name, d.counts) for d in paper_profiles()][-2:]
    [('random', (45, 44, 35, 61, 61)), ('aggregate', (89, 35, 122))]
    """
    shares = dict(PAPER_SHARES if shares is None else shares)
    out = [profile_distribution(n, vb, vg, aggregate) for n, (vb, vg) in shares.items()]
    if include_aggregate:
        out.append(ScoreDistribution(
            "aggregate", tuple(int(aggregate[k]) for k in ("negative", "fair", "positive")),
            ("negative", "fair", "positive"),
        ))
    return out


def distribution_from_counts(name: str, counts: Sequence[int],
                             labels: Sequence[str] | None = None) -> ScoreDistribution:
    """A distribution from counts per scale point (zeros allowed; at least 3 ratings).

    Parameters
    ----------
    name : str
        Name of the distribution.
    counts : sequence of int
        Number of ratings at each scale point.
    labels : sequence of str, optional
        Labels of the scale points (default ``"1"``, ``"2"``, ...).

    Returns
    -------
    ScoreDistribution
        The named counts with their labels.

    Examples
    --------
    >>> distribution_from_counts("r1", [1, 2, 3, 4, 0])
    ScoreDistribution(name='r1', counts=(1, 2, 3, 4, 0), labels=('1', '2', '3', '4', '5'))
    """
    arr = np.asarray(counts)
    if arr.ndim != 1 or len(arr) == 0:
        raise InputError(f"distribution '{name}': expected a list of counts")
    if np.any(arr < 0) or not np.all(np.equal(np.mod(arr, 1), 0)):
        raise InputError(f"distribution '{name}': counts must be non-negative integers")
    if arr.sum() < 3:
        raise InputError(f"distribution '{name}': needs at least 3 ratings, has {arr.sum()}")
    labs = tuple(labels) if labels is not None else tuple(str(i + 1) for i in range(len(arr)))
    return ScoreDistribution(name, tuple(int(c) for c in arr), labs)


def distributions_from_ratings(
    ratings: pd.DataFrame,
    *,
    score: str = "score",
    by: str | None = "rater",
    file: str | None = None,
) -> list[ScoreDistribution]:
    """One distribution per ``by`` group (e.g. per rater) from raw ratings (one row each).

    The scale points are the distinct scores observed anywhere in the file (sorted).

    Parameters
    ----------
    ratings : DataFrame
        One row per rating.
    score : str, default "score"
        Column of the scores.
    by : str or None, default "rater"
        Column to group by; ``None`` gives one distribution of all ratings.
    file : str, optional
        Name of the source of ``ratings`` in error messages.

    Returns
    -------
    list of ScoreDistribution
        One per group, sorted by group name.

    Examples
    --------
    >>> import pandas as pd
    >>> ratings = pd.DataFrame({"rater": ["a"] * 4 + ["b"] * 4,
    ...                         "score": [1, 2, 2, 3, 3, 3, 2, 1]})
    >>> [(d.name, d.counts) for d in distributions_from_ratings(ratings)]
    [('a', (1, 2, 1)), ('b', (1, 1, 2))]
    """
    if score not in ratings.columns:
        raise InputError(f"missing column '{score}'", file=file, column=score)
    if by is not None and by not in ratings.columns:
        raise InputError(f"missing column '{by}'", file=file, column=by)
    values = pd.to_numeric(ratings[score].astype(str).str.strip(), errors="coerce")
    if values.isna().any():
        pos = int(np.flatnonzero(values.isna().to_numpy())[0])
        row = int(ratings["_row"].iloc[pos]) if "_row" in ratings.columns else pos + 2
        shown = ratings[score].iloc[pos]
        raise InputError(f"{shown!r} is not a number", file=file, row=row, column=score)
    levels = np.unique(values.to_numpy())
    labels = tuple(f"{v:g}" for v in levels)
    keys = ratings[by].astype(str) if by is not None else pd.Series("all", index=ratings.index)
    out = []
    for key in sorted(keys.unique()):
        v = values[(keys == key).to_numpy()].to_numpy()
        counts = [int(np.count_nonzero(v == lv)) for lv in levels]
        if len(v) < 3:  # what distribution_from_counts refuses, said of the file's evaluator
            raise InputError(f"{by or 'the file'} {key!r} has {len(v)} rating(s); the study "
                             "needs at least 3 per evaluator", file=file, column=by)
        out.append(distribution_from_counts(str(key), counts, labels))
    return out
