"""The Friedman test of all systems at once on human ratings (Friedman 1937).

Where the design is complete (every block -- an item, with ratings averaged over raters, or a
rater -- has every system), :func:`scipy.stats.friedmanchisquare` compares all systems at once;
Kendall's W = chi2 / (n (k - 1)) is its effect size. Both are tie-corrected, so they equal R's
``friedman.test`` and ``DescTools::KendallW(correct = TRUE)``. When every block gives all systems
the same rating there is no ranking at all: the tie correction is 0 / 0, and the statistic,
p-value and W are NaN with a warning saying so (as R gives NaN; scipy's own warning names no
reason).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Literal

import numpy as np
import pandas as pd
from scipy import stats

from nlgeval.errors import InputError
from nlgeval.human.frames import check_ratings_frame as _check_frame
from nlgeval.results import StatResult


@dataclass(frozen=True)
class FriedmanResult(StatResult):
    """Friedman's test over k systems in n complete blocks; Kendall's W = chi2 / (n (k - 1)).

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"item": [1, 1, 1, 2, 2, 2, 3, 3, 3], "system": list("abc") * 3,
    ...                    "score": [1, 2, 3, 1, 3, 2, 1, 2, 3]})
    >>> res = friedman(df)
    >>> res.df, round(res.kendalls_w, 3)
    (2, 0.778)
    """

    statistic: float
    pvalue: float
    df: int
    n_blocks: int
    k: int
    kendalls_w: float
    block: str
    n_dropped_blocks: int
    mean_ranks: dict[str, float]


def friedman(
    ratings: pd.DataFrame,
    *,
    block: Literal["item", "rater"] = "item",
    drop_incomplete: bool = False,
) -> FriedmanResult:
    """Friedman test across all systems (:func:`scipy.stats.friedmanchisquare`).

    Each block (an item, or a rater) must have every system; ratings within a block and system
    are averaged. Incomplete blocks raise :class:`InputError` naming one, unless
    ``drop_incomplete=True`` (then they are dropped and counted in ``n_dropped_blocks``).
    Needs at least 3 systems (for 2 use the Wilcoxon test) and 2 complete blocks.

    Parameters
    ----------
    ratings : pandas.DataFrame
        One criterion's tidy ratings ``rater, item, system, score``.
    block : {"item", "rater"}, default ``"item"``
        The column whose values are the blocks.
    drop_incomplete : bool, default False
        Drop blocks missing a system instead of raising.

    Returns
    -------
    FriedmanResult
        Chi-square ``statistic``, ``pvalue``, Kendall's W, mean ranks and block counts.

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"item": [1, 1, 1, 2, 2, 2, 3, 3, 3], "system": list("abc") * 3,
    ...                    "score": [1, 2, 3, 1, 2, 3, 1, 2, 3]})
    >>> res = friedman(df)
    >>> res.statistic, res.kendalls_w
    (6.0, 1.0)
    """
    needed = ["item", "system", "score"] + (["rater"] if block == "rater" else [])
    if block not in ("item", "rater"):
        raise InputError(f"block must be 'item' or 'rater', got {block!r}")
    df = _check_frame(ratings, needed)
    systems = list(dict.fromkeys(df["system"]))
    if len(systems) < 3:
        raise InputError(
            f"the Friedman test needs at least 3 systems (got {len(systems)}); use the "
            "Wilcoxon signed-rank test for two", column="system",
        )
    table = df.groupby([block, "system"])["score"].mean().unstack()[systems]
    incomplete = table.isna().any(axis=1)
    if incomplete.any() and not drop_incomplete:
        first = table.index[incomplete.to_numpy()][0]
        lacking = [s for s in systems if pd.isna(table.loc[first, s])]
        raise InputError(
            f"the Friedman test needs a complete design: {block} '{first}' has no rating for "
            f"{', '.join(lacking)} ({int(incomplete.sum())} incomplete {block}s in all; "
            "drop them with drop_incomplete=True / --drop-incomplete)", column=block,
        )
    table = table[~incomplete]
    if len(table) < 2:
        raise InputError(f"the Friedman test needs at least 2 complete {block}s, "
                         f"got {len(table)}", column=block)
    n, k = len(table), len(systems)
    values = table.to_numpy(dtype=float)
    if np.all(values == values[:, :1]):  # every block tied: the tie correction is 0
        warnings.warn(f"the Friedman test is undefined: every {block} gives all {k} systems the "
                      "same rating, so there is no ranking to compare (chi2, p and Kendall's W "
                      "are NaN)", RuntimeWarning, stacklevel=2)
        statistic = pvalue = float("nan")
    else:
        res = stats.friedmanchisquare(*(table[s].to_numpy() for s in systems))
        statistic, pvalue = float(res.statistic), float(res.pvalue)
    ranks = table.rank(axis=1).mean()
    return FriedmanResult(
        statistic=statistic, pvalue=pvalue, df=k - 1, n_blocks=n, k=k,
        kendalls_w=statistic / (n * (k - 1)), block=block,
        n_dropped_blocks=int(incomplete.sum()),
        mean_ranks={s: float(ranks[s]) for s in systems},
    )
