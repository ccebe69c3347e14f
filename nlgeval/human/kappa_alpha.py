"""Chance-corrected agreement of raters on one criterion: Cohen's kappa, Fleiss' kappa,
Krippendorff's alpha.

A *unit* is one rated output, ``(item, system)``.

* **Cohen's kappa** per rater pair on the units both rated (Cohen 1960; weighted kappa, Cohen
  1968): unweighted, linear and quadratic weights, computed with
  :func:`statsmodels.stats.inter_rater.cohens_kappa` with weights built from the category
  *values* (so unequally spaced or unused categories are handled by value, not by index).
  Categories are the integer points of the declared scale when the scale is given and every
  score is an integer, else the distinct scores observed for the criterion.
* **Fleiss' kappa** (Fleiss 1971), :func:`statsmodels.stats.inter_rater.fleiss_kappa`. It needs
  the same number of ratings per unit; units with a different number than the most common
  (>= 2) are left out and counted (``n_units`` / ``n_units_dropped``).
* **Krippendorff's alpha** (Krippendorff 2011), nominal / ordinal / interval, missing ratings
  allowed: the ``krippendorff`` package on the raters x units matrix.

:func:`nlgeval.human.agreement.agreement_report` gathers these with the ICC
(:mod:`nlgeval.human.intraclass`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from itertools import combinations
from typing import Any, ClassVar, Literal, cast

import numpy as np
import pandas as pd

from nlgeval.errors import InputError
from nlgeval.human.frames import check_ratings_frame as _check_frame
from nlgeval.human.frames import units_matrix
from nlgeval.results import StatResult


def categories_for(scores: pd.Series | np.ndarray,
                   scale: tuple[float, float] | None = None) -> np.ndarray:
    """Category values for kappa/alpha: the integer scale points if a scale is declared and
    every score is an integer, else the distinct observed scores (sorted).

    Examples
    --------
    >>> categories_for([1, 3, 3], scale=(1, 4)).tolist()
    [1.0, 2.0, 3.0, 4.0]
    """
    s = np.asarray(scores, dtype=float)
    if scale is not None and len(s) and (s.min() < scale[0] or s.max() > scale[1]):
        bad = s[(s < scale[0]) | (s > scale[1])][0]
        raise InputError(f"score {bad:g} is outside the declared scale "
                         f"[{scale[0]:g}, {scale[1]:g}]", column="score")
    if scale is not None and np.all(s == np.round(s)) and scale[0] == round(scale[0]) \
            and scale[1] == round(scale[1]) and scale[1] - scale[0] <= 1000:
        return np.arange(scale[0], scale[1] + 1, dtype=float)
    return np.unique(s)


def cohen_kappa_table(a: np.ndarray, b: np.ndarray, categories: np.ndarray) -> np.ndarray:
    """Contingency table of two raters' category values (rows: a, columns: b).

    Examples
    --------
    >>> import numpy as np
    >>> cohen_kappa_table(np.array([1, 2, 2]), np.array([1, 2, 1]), np.array([1, 2])).tolist()
    [[1.0, 0.0], [1.0, 1.0]]
    """
    idx_a = np.searchsorted(categories, a)
    idx_b = np.searchsorted(categories, b)
    k = len(categories)
    return np.bincount(idx_a * k + idx_b, minlength=k * k).reshape(k, k).astype(float)


def cohen_kappas(a: np.ndarray, b: np.ndarray, categories: np.ndarray) -> dict[str, float]:
    """Unweighted, linear and quadratic Cohen's kappa of paired ratings (statsmodels).

    Undefined (NaN) when the expected agreement is perfect (both raters used one category).

    Examples
    --------
    >>> import numpy as np
    >>> k = cohen_kappas(np.array([1, 2, 2, 1]), np.array([1, 2, 2, 1]), np.array([1, 2]))
    >>> k["unweighted"]
    1.0
    """
    from statsmodels.stats.inter_rater import cohens_kappa

    table = cohen_kappa_table(np.asarray(a, float), np.asarray(b, float), categories)
    out = {}
    with np.errstate(divide="ignore", invalid="ignore"):
        for name, wt in (("unweighted", None), ("linear", "linear"), ("quadratic", "quadratic")):
            if wt is None:
                res = cohens_kappa(table, return_results=False)
            else:
                res = cohens_kappa(table, weights=categories, wt=wt, return_results=False)
            out[name] = float(res)
    return out


def pairwise_cohen_kappa(
    ratings: pd.DataFrame, *, scale: tuple[float, float] | None = None, min_common: int = 2
) -> pd.DataFrame:
    """Cohen's kappa (unweighted, linear, quadratic) for every rater pair sharing at least
    ``min_common`` units. Columns ``rater_a, rater_b, n, unweighted, linear, quadratic``.

    Parameters
    ----------
    ratings : pandas.DataFrame
        Tidy ratings ``rater, item, system, score``.
    scale : tuple of (float, float), optional
        The scale (min, max), as in :func:`fleiss_kappa`.
    min_common : int, default 2
        The fewest shared units for a pair to get a kappa.

    Returns
    -------
    pandas.DataFrame
        One row per rater pair, columns above.

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"rater": ["r1", "r2"] * 4, "item": list("11223344"),
    ...                    "system": "a", "score": [1, 1, 2, 2, 3, 2, 4, 4]})
    >>> pairwise_cohen_kappa(df, scale=(1, 4))[["rater_a", "rater_b", "n"]].values.tolist()
    [['r1', 'r2', 4]]
    """
    df = _check_frame(ratings, ["rater", "item", "system", "score"])
    cats = categories_for(df["score"], scale)
    mat = units_matrix(df)
    raters = list(mat.index)
    present = mat.notna().to_numpy()
    values = mat.to_numpy(dtype=float)
    common = present.astype(np.int64) @ present.T.astype(np.int64)
    rows = []
    for i, j in combinations(range(len(raters)), 2):
        if common[i, j] < min_common:
            continue
        both = present[i] & present[j]
        k = cohen_kappas(values[i, both], values[j, both], cats)
        rows.append({"rater_a": raters[i], "rater_b": raters[j], "n": int(both.sum()), **k})
    cols = ["rater_a", "rater_b", "n", "unweighted", "linear", "quadratic"]
    return pd.DataFrame(rows, columns=cols)


@dataclass(frozen=True)
class FleissResult(StatResult):
    """Fleiss' kappa over the units with the most common number of ratings (Fleiss 1971).

    ``statistic`` is kappa (``kappa`` is kept as a read-only alias, and as the ``kappa`` key of
    :meth:`to_dict`); ``pvalue`` is NaN: no test is made.

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"rater": ["r1", "r2", "r3"] * 2, "item": ["1"] * 3 + ["2"] * 3,
    ...                    "system": "a", "score": [1, 1, 1, 2, 2, 1]})
    >>> res = fleiss_kappa(df, scale=(1, 2))
    >>> res.n_units, round(res.statistic, 3), res.kappa == res.statistic
    (2, 0.25, True)
    """

    statistic: float
    n_units: int
    n_units_dropped: int
    ratings_per_unit: int
    pvalue: float = float("nan")

    _aliases: ClassVar[Mapping[str, str]] = {"kappa": "statistic"}

    @property
    def kappa(self) -> float:
        """Fleiss' kappa, the same number as ``statistic`` (the earlier name, kept for now)."""
        return self.statistic


@dataclass(frozen=True)
class KrippendorffResult(StatResult):
    """Krippendorff's alpha (Krippendorff 2011) at one level of measurement.

    ``statistic`` is alpha; ``pvalue`` is NaN (no test is made). ``float(result)`` gives alpha,
    so code written for the bare number of earlier versions keeps working through ``float``.

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"rater": ["r1", "r2"] * 4, "item": list("11223344"),
    ...                    "system": "a", "score": [1, 1, 2, 2, 3, 2, 4, 4]})
    >>> res = krippendorff_alpha(df, "interval")
    >>> round(res.statistic, 3), res.level, res.n_units, round(float(res), 3)
    (0.9, 'interval', 4, 0.9)
    """

    statistic: float
    level: str
    n_units: int
    n_raters: int
    pvalue: float = float("nan")

    def __float__(self) -> float:
        return float(self.statistic)


def fleiss_kappa(ratings: pd.DataFrame, *, scale: tuple[float, float] | None = None
                 ) -> FleissResult:
    """Fleiss' kappa over units (item, system) with the most common number (>= 2) of ratings;
    other units are dropped and counted.

    Parameters
    ----------
    ratings : pandas.DataFrame
        Tidy ratings ``rater, item, system, score``.
    scale : tuple of (float, float), optional
        The scale (min, max): its integer points are the categories when every score is an
        integer (else the observed scores).

    Returns
    -------
    FleissResult
        Fleiss' kappa (Fleiss 1971) and the units used and dropped.

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"rater": ["r1", "r2"] * 4, "item": list("11223344"),
    ...                    "system": "a", "score": [1, 1, 2, 2, 3, 2, 4, 4]})
    >>> fleiss_kappa(df, scale=(1, 4)).n_units
    4
    """
    from statsmodels.stats.inter_rater import fleiss_kappa as sm_fleiss

    df = _check_frame(ratings, ["rater", "item", "system", "score"])
    cats = categories_for(df["score"], scale)
    g = df.groupby(["item", "system"], sort=True)
    sizes = g.size()
    multi = sizes[sizes >= 2]
    if multi.empty:
        raise InputError("Fleiss' kappa needs units (item, system) rated by at least 2 raters; "
                         "every unit has a single rating")
    m = int(multi.value_counts().sort_index(ascending=False).idxmax())
    keep = sizes[sizes == m].index
    sub = df.set_index(["item", "system"]).loc[keep].reset_index()
    unit_code = sub.groupby(["item", "system"], sort=True).ngroup().to_numpy()
    cat_idx = np.searchsorted(cats, sub["score"].to_numpy(dtype=float))
    table = np.zeros((len(keep), len(cats)))
    np.add.at(table, (unit_code, cat_idx), 1)
    with np.errstate(divide="ignore", invalid="ignore"):
        kappa = float(sm_fleiss(table, method="fleiss"))
    return FleissResult(statistic=kappa, n_units=int(len(keep)),
                        n_units_dropped=int(len(sizes) - len(keep)), ratings_per_unit=m)


def krippendorff_alpha(
    ratings: pd.DataFrame,
    level: str = "interval",
    *,
    scale: tuple[float, float] | None = None,
) -> KrippendorffResult:
    """Krippendorff's alpha on the raters x units matrix (missing ratings allowed), using the
    ``krippendorff`` package; ``level`` is nominal, ordinal, interval or ratio.

    Returns a :class:`KrippendorffResult`: alpha is its ``statistic`` (also ``float(result)``);
    ``n_units`` counts the units rated by at least 2 raters.

    Parameters
    ----------
    ratings : pandas.DataFrame
        Tidy ratings ``rater, item, system, score``.
    level : {"nominal", "ordinal", "interval", "ratio"}, default ``"interval"``
        Level of measurement (the difference function).
    scale : tuple of (float, float), optional
        The scale (min, max), whose points are the ordinal categories.

    Returns
    -------
    KrippendorffResult
        Alpha and the counts described above.

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"rater": ["r1", "r2"] * 4, "item": list("11223344"),
    ...                    "system": "a", "score": [1, 1, 2, 2, 3, 2, 4, 4]})
    >>> round(krippendorff_alpha(df, "interval").statistic, 3)
    0.9
    """
    import krippendorff

    if level not in ("nominal", "ordinal", "interval", "ratio"):
        raise InputError(f"level must be nominal, ordinal, interval or ratio, got {level!r}")
    df = _check_frame(ratings, ["rater", "item", "system", "score"])
    mat = units_matrix(df).to_numpy(dtype=float)
    pairable = int((np.sum(~np.isnan(mat), axis=0) >= 2).sum())
    if pairable == 0:
        raise InputError("Krippendorff's alpha needs units rated by at least 2 raters")
    kwargs: dict[str, Any] = {}
    if level in ("nominal", "ordinal"):
        kwargs["value_domain"] = categories_for(df["score"], scale)
    lom = cast(Literal["nominal", "ordinal", "interval", "ratio"], level)  # checked above
    with np.errstate(divide="ignore", invalid="ignore"):
        try:
            alpha = float(krippendorff.alpha(reliability_data=mat, level_of_measurement=lom,
                                              **kwargs))
        except ValueError as exc:  # e.g. a single value in the domain
            raise InputError(f"Krippendorff's alpha is undefined here: {exc}") from None
    return KrippendorffResult(statistic=alpha, level=level, n_units=pairable,
                              n_raters=int(mat.shape[0]))
