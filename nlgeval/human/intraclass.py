"""Intraclass correlation of raters on one criterion (Shrout & Fleiss 1979; McGraw & Wong
1996 for the intervals).

When every rater rated every unit (one rated output, ``(item, system)``): all six forms
ICC(1,1), ICC(2,1), ICC(3,1), ICC(1,k), ICC(2,k), ICC(3,k) from the two-way ANOVA mean squares.
Otherwise (the usual NLG design, e.g. a Latin square, where each output is rated by different
raters) only the one-way forms are meaningful: ICC(1,1) and ICC(1,k) with the one-way ANOVA for
unequal group sizes and k replaced by k0 = (N - sum n_i^2 / N) / (g - 1) (e.g. Donner 1986);
units with one rating count in the between-units mean square only. Written here from the mean
squares (pingouin's ``intraclass_corr`` needs a complete design; the tests compare against it
there); ICC(1,1) and its interval (Thomas & Hultquist 1978) are the numbers of R's ICC package,
``ICCest`` with its default interval (Wolak et al. 2012).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
import pandas as pd
from scipy import stats

from nlgeval.errors import InputError
from nlgeval.human.frames import check_ratings_frame as _check_frame
from nlgeval.human.frames import units_matrix
from nlgeval.results import StatResult


@dataclass(frozen=True)
class ICCResult(StatResult):
    """One intraclass correlation form (Shrout & Fleiss 1979 notation): the estimate ``icc``,
    the F test of ICC = 0 (``statistic`` = F, ``pvalue``) and the interval ``ci_low``/
    ``ci_high`` (JSON keys ``ci95_low``/``ci95_high`` kept).

    Examples
    --------
    >>> import numpy as np
    >>> forms = icc_complete(np.array([[1, 2, 3, 4, 5], [1, 3, 3, 5, 5.0]]).T)
    >>> forms[0].type, round(float(forms[0].icc), 3)
    ('ICC(1,1)', 0.925)
    """

    _aliases: ClassVar[dict[str, str]] = {"ci95_low": "ci_low", "ci95_high": "ci_high"}

    type: str
    description: str
    icc: float
    F: float
    df1: float
    df2: float
    pvalue: float
    ci_low: float
    ci_high: float

    @property
    def statistic(self) -> float:
        """The F statistic of the test of ICC = 0 (Shrout & Fleiss 1979)."""
        return self.F


def icc_complete(matrix: np.ndarray, alpha: float = 0.05) -> list[ICCResult]:
    """All six Shrout & Fleiss (1979) ICC forms for a complete targets x raters matrix, with
    F tests and McGraw & Wong (1996) confidence intervals.

    Examples
    --------
    >>> import numpy as np
    >>> [f.type for f in icc_complete(np.array([[1, 1], [2, 3], [3, 3], [5, 4.0]]))][:3]
    ['ICC(1,1)', 'ICC(2,1)', 'ICC(3,1)']
    """
    x = np.asarray(matrix, dtype=float)
    n, k = x.shape
    if n < 2 or k < 2 or np.isnan(x).any():
        raise InputError("a complete targets x raters matrix with at least 2 of each is needed")
    grand = x.mean()
    ss_total = ((x - grand) ** 2).sum()
    ss_b = k * ((x.mean(axis=1) - grand) ** 2).sum()
    ss_j = n * ((x.mean(axis=0) - grand) ** 2).sum()
    ss_e = ss_total - ss_b - ss_j
    bms = ss_b / (n - 1)
    jms = ss_j / (k - 1)
    wms = (ss_total - ss_b) / (n * (k - 1))
    ems = ss_e / ((n - 1) * (k - 1))
    icc1 = (bms - wms) / (bms + (k - 1) * wms)
    icc2 = (bms - ems) / (bms + (k - 1) * ems + k * (jms - ems) / n)
    icc3 = (bms - ems) / (bms + (k - 1) * ems)
    f1, df1, df1w = bms / wms, n - 1, n * (k - 1)
    f3, df3 = bms / ems, (n - 1) * (k - 1)
    q = 1 - alpha / 2
    fl1, fu1 = f1 / stats.f.ppf(q, df1, df1w), f1 * stats.f.ppf(q, df1w, df1)
    fl3, fu3 = f3 / stats.f.ppf(q, df1, df3), f3 * stats.f.ppf(q, df3, df1)
    # ICC(2,1): McGraw & Wong (1996) Table 7, Satterthwaite df
    fj = jms / ems
    vn = df3 * (k * icc2 * fj + n * (1 + (k - 1) * icc2) - k * icc2) ** 2
    vd = df1 * k ** 2 * icc2 ** 2 * fj ** 2 + (n * (1 + (k - 1) * icc2) - k * icc2) ** 2
    v = vn / vd
    f2u, f2l = stats.f.ppf(q, n - 1, v), stats.f.ppf(q, v, n - 1)
    l2 = n * (bms - f2u * ems) / (f2u * (k * jms + (k * n - k - n) * ems) + n * bms)
    u2 = n * (f2l * bms - ems) / (k * jms + (k * n - k - n) * ems + n * f2l * bms)
    p1 = float(stats.f.sf(f1, df1, df1w))
    p3 = float(stats.f.sf(f3, df1, df3))
    return [
        ICCResult("ICC(1,1)", "one-way random, single rater", icc1, f1, df1, df1w, p1,
                  (fl1 - 1) / (fl1 + k - 1), (fu1 - 1) / (fu1 + k - 1)),
        ICCResult("ICC(2,1)", "two-way random, absolute agreement, single rater", icc2, f3, df1,
                  df3, p3, l2, u2),
        ICCResult("ICC(3,1)", "two-way mixed, consistency, single rater", icc3, f3, df1, df3,
                  p3, (fl3 - 1) / (fl3 + k - 1), (fu3 - 1) / (fu3 + k - 1)),
        ICCResult("ICC(1,k)", "one-way random, mean of k raters", (bms - wms) / bms, f1, df1,
                  df1w, p1, 1 - 1 / fl1, 1 - 1 / fu1),
        ICCResult("ICC(2,k)", "two-way random, absolute agreement, mean of k raters",
                  (bms - ems) / (bms + (jms - ems) / n), f3, df1, df3, p3,
                  l2 * k / (1 + l2 * (k - 1)), u2 * k / (1 + u2 * (k - 1))),
        ICCResult("ICC(3,k)", "two-way mixed, consistency, mean of k raters", (bms - ems) / bms,
                  f3, df1, df3, p3, 1 - 1 / fl3, 1 - 1 / fu3),
    ]


def icc_oneway(groups: Sequence[np.ndarray], alpha: float = 0.05) -> list[ICCResult]:
    """ICC(1,1) and ICC(1,k0) from a one-way random-effects ANOVA with unequal group sizes
    (targets = groups); k0 = (N - sum n_i^2 / N) / (g - 1). Equals Shrout & Fleiss' ICC(1,1)
    and ICC(1,k) when every target has k ratings. Intervals use the F-based formulas with k0
    (approximate when sizes differ: Thomas & Hultquist 1978, as R's ICC package computes the
    interval of ICC(1,1)).

    Examples
    --------
    >>> import numpy as np
    >>> forms = icc_oneway([np.array([1, 1.5]), np.array([3, 3.5, 3]), np.array([5, 4.5])])
    >>> [f.type for f in forms]
    ['ICC(1,1)', 'ICC(1,k)']
    """
    groups = [np.asarray(g, dtype=float) for g in groups if len(g) > 0]
    sizes = np.array([len(x) for x in groups], dtype=np.int64)
    if len(groups) < 2 or sizes.sum() - len(groups) < 1:
        raise InputError("the ICC needs at least 2 rated outputs and some output rated twice")
    return icc_oneway_grouped(np.concatenate(groups), sizes, alpha)


def icc_oneway_grouped(values: np.ndarray, sizes: np.ndarray, alpha: float = 0.05
                       ) -> list[ICCResult]:
    """:func:`icc_oneway` of groups stored back to back: group g is the next ``sizes[g]``
    (>= 1) of ``values`` (Shrout & Fleiss 1979; Donner 1986 for k0) -- the same numbers, without
    splitting a long vector of ratings into thousands of small arrays first.

    Parameters
    ----------
    values : numpy.ndarray
        The ratings, grouped by target (output).
    sizes : numpy.ndarray
        The number of ratings of each target, in order, each at least 1.
    alpha : float, default 0.05
        One minus the confidence level of the intervals.

    Returns
    -------
    list of ICCResult
        ICC(1,1) and ICC(1,k0).

    Examples
    --------
    >>> forms = icc_oneway_grouped(np.array([1, 1.5, 3, 3.5, 3, 5, 4.5]), np.array([2, 3, 2]))
    >>> [round(float(f.icc), 3) for f in forms]
    [0.962, 0.983]
    """
    values = np.asarray(values, dtype=float)
    sizes = np.asarray(sizes, dtype=np.int64)
    g = len(sizes)
    big_n = sizes.astype(float).sum()
    if g < 2 or big_n - g < 1:
        raise InputError("the ICC needs at least 2 rated outputs and some output rated twice")
    means, within = group_means_and_squares(values, sizes)
    grand = values.mean()
    sizes = sizes.astype(float)
    msb = float((sizes * (means - grand) ** 2).sum() / (g - 1))
    msw = float(np.cumsum(within)[-1] / (big_n - g))  # groups summed one after the other
    k0 = float((big_n - (sizes ** 2).sum() / big_n) / (g - 1))
    if msw == 0:
        raise InputError("the ICC is undefined: raters agree exactly on every output "
                         "(zero within-output variance)")
    f1, df1, df2 = msb / msw, g - 1, big_n - g
    q = 1 - alpha / 2
    fl, fu = f1 / stats.f.ppf(q, df1, df2), f1 * stats.f.ppf(q, df2, df1)
    p = float(stats.f.sf(f1, df1, df2))
    return [
        ICCResult("ICC(1,1)", f"one-way random, single rater (k0 = {k0:.3g})",
                  (msb - msw) / (msb + (k0 - 1) * msw), f1, df1, df2, p,
                  (fl - 1) / (fl + k0 - 1), (fu - 1) / (fu + k0 - 1)),
        ICCResult("ICC(1,k)", f"one-way random, mean of k0 = {k0:.3g} raters",
                  (msb - msw) / msb, f1, df1, df2, p, 1 - 1 / fl, 1 - 1 / fu),
    ]


def group_means_and_squares(values: np.ndarray, sizes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per group of consecutive ``values`` (``sizes`` long each, all >= 1): the mean and the sum
    of squared deviations from it, the same floats as ``x.mean()`` and ``((x - x.mean()) ** 2)
    .sum()`` on each group (the one-way ANOVA of Shrout & Fleiss 1979). The groups of one size
    are stacked into a matrix and summed along its rows, which numpy sums as it sums one group.

    Examples
    --------
    >>> means, ss = group_means_and_squares(np.array([1.0, 2.0, 3.0, 5.0, 7.0]), np.array([2, 3]))
    >>> means.tolist(), ss.tolist()
    ([1.5, 5.0], [0.5, 8.0])
    """
    starts = np.concatenate(([0], np.cumsum(sizes)[:-1]))
    means = np.empty(len(sizes))
    within = np.empty(len(sizes))
    for size in np.unique(sizes):
        rows = np.flatnonzero(sizes == size)
        block = values[starts[rows][:, None] + np.arange(size)]
        m = block.sum(axis=1) / size
        means[rows] = m
        within[rows] = ((block - m[:, None]) ** 2).sum(axis=1)
    return means, within


def icc(ratings: pd.DataFrame, alpha: float = 0.05) -> tuple[list[ICCResult], str]:
    """ICC forms suitable for the design and the design name (``"complete"`` when every rater
    rated every unit, ``"one-way"`` otherwise).

    Parameters
    ----------
    ratings : pandas.DataFrame
        Tidy ratings ``rater, item, system, score``; a unit is an output ``(item, system)``.
    alpha : float, default 0.05
        One minus the confidence level of the intervals.

    Returns
    -------
    tuple of (list of ICCResult, str)
        The ICC forms (Shrout & Fleiss 1979) with intervals, and the design name.

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"rater": ["r1", "r2"] * 4, "item": list("11223344"),
    ...                    "system": "a", "score": [1, 1, 2, 2, 3, 2, 4, 4]})
    >>> forms, design = icc(df)
    >>> design, len(forms)
    ('complete', 6)
    """
    df = _check_frame(ratings, ["rater", "item", "system", "score"])
    mat = units_matrix(df)
    if mat.shape[0] >= 2 and mat.shape[1] >= 2 and not mat.isna().any().any():
        with np.errstate(divide="ignore", invalid="ignore"):  # 0 / 0 on constant ratings
            return icc_complete(mat.to_numpy(dtype=float).T, alpha), "complete"
    groups = [g.to_numpy(dtype=float) for _, g in df.groupby(["item", "system"])["score"]]
    return icc_oneway(groups, alpha), "one-way"
