"""Inter-rater agreement and rater effects for one rating criterion.

A *unit* is one rated output, ``(item, system)``. Coefficients:

* **Cohen's kappa** per rater pair on the units both rated (Cohen 1960; weighted kappa, Cohen
  1968): unweighted, linear and quadratic weights, computed with
  :func:`statsmodels.stats.inter_rater.cohens_kappa` with weights built from the category
  *values* (so unequally spaced or unused categories are handled by value, not by index).
  Categories are the integer points of the declared scale when the scale is given and every
  score is an integer, else the distinct scores observed for the criterion.
* **Fleiss' kappa** (Fleiss 1971), :func:`statsmodels.stats.inter_rater.fleiss_kappa`. It needs
  the same number of ratings per unit; units with a different number than the most common
  (>= 2) are left out and counted (``fleiss_units`` / ``fleiss_units_dropped``).
* **Krippendorff's alpha** (Krippendorff 2011), nominal / ordinal / interval, missing ratings
  allowed: the ``krippendorff`` package on the raters x units matrix.
* **ICC** (Shrout & Fleiss 1979; McGraw & Wong 1996 for the intervals). When every rater rated
  every unit: all six forms ICC(1,1), ICC(2,1), ICC(3,1), ICC(1,k), ICC(2,k), ICC(3,k) from the
  two-way ANOVA mean squares. Otherwise (the usual NLG design, e.g. a Latin square, where each
  output is rated by different raters) only the one-way forms are meaningful: ICC(1,1) and
  ICC(1,k) with the one-way ANOVA for unequal group sizes and k replaced by
  k0 = (N - sum n_i^2 / N) / (g - 1) (e.g. Donner 1986); units with one rating count in the
  between-units mean square only. Written here from the mean squares because no maintained
  package handles the unbalanced one-way case (pingouin's ``intraclass_corr`` needs a complete
  design; the tests compare against it there).
* A coefficient that is undefined for the data (one category used by everybody, no output
  rated twice, zero within-output variance, ...) is NaN in :func:`agreement_report`, with the
  reason in ``undefined`` and the notes; the rest of the table is still computed.
* Per-rater **z-scores** (WMT Direct Assessment: z = (x - rater mean) / rater SD, ddof = 1) and
  per-rater summaries (mean, spread, use of the scale, bias against the other raters).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import combinations
from typing import Any, ClassVar

import numpy as np
import pandas as pd
from scipy import stats

from nlgeval.errors import InputError
from nlgeval.human.compare import _check_frame
from nlgeval.results import Result, StatResult


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


def _units(df: pd.DataFrame) -> pd.DataFrame:
    """Raters x units matrix (NaN = not rated); units are (item, system) in sorted order."""
    d = df.assign(unit=df["item"] + "\x1f" + df["system"])
    return d.pivot(index="rater", columns="unit", values="score")


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
    mat = _units(df)
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
class FleissResult(Result):
    """Fleiss' kappa over the units with the most common number of ratings (Fleiss 1971).

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"rater": ["r1", "r2", "r3"] * 2, "item": ["1"] * 3 + ["2"] * 3,
    ...                    "system": "a", "score": [1, 1, 1, 2, 2, 1]})
    >>> res = fleiss_kappa(df, scale=(1, 2))
    >>> res.n_units, round(res.kappa, 3)
    (2, 0.25)
    """

    kappa: float
    n_units: int
    n_units_dropped: int
    ratings_per_unit: int


def fleiss_kappa(ratings: pd.DataFrame, *, scale: tuple[float, float] | None = None
                 ) -> FleissResult:
    """Fleiss' kappa over units (item, system) with the most common number (>= 2) of ratings;
    other units are dropped and counted.

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
    return FleissResult(kappa=kappa, n_units=int(len(keep)),
                        n_units_dropped=int(len(sizes) - len(keep)), ratings_per_unit=m)


def krippendorff_alpha(
    ratings: pd.DataFrame,
    level: str = "interval",
    *,
    scale: tuple[float, float] | None = None,
) -> float:
    """Krippendorff's alpha on the raters x units matrix (missing ratings allowed), using the
    ``krippendorff`` package; ``level`` is nominal, ordinal, interval or ratio.

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"rater": ["r1", "r2"] * 4, "item": list("11223344"),
    ...                    "system": "a", "score": [1, 1, 2, 2, 3, 2, 4, 4]})
    >>> round(krippendorff_alpha(df, "interval"), 3)
    0.9
    """
    import krippendorff

    if level not in ("nominal", "ordinal", "interval", "ratio"):
        raise InputError(f"level must be nominal, ordinal, interval or ratio, got {level!r}")
    df = _check_frame(ratings, ["rater", "item", "system", "score"])
    mat = _units(df).to_numpy(dtype=float)
    pairable = (np.sum(~np.isnan(mat), axis=0) >= 2).sum()
    if pairable == 0:
        raise InputError("Krippendorff's alpha needs units rated by at least 2 raters")
    kwargs: dict[str, Any] = {}
    if level in ("nominal", "ordinal"):
        kwargs["value_domain"] = categories_for(df["score"], scale)
    with np.errstate(divide="ignore", invalid="ignore"):
        try:
            return float(krippendorff.alpha(reliability_data=mat, level_of_measurement=level,
                                             **kwargs))
        except ValueError as exc:  # e.g. a single value in the domain
            raise InputError(f"Krippendorff's alpha is undefined here: {exc}") from None


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
    (approximate when sizes differ).

    Examples
    --------
    >>> import numpy as np
    >>> forms = icc_oneway([np.array([1, 1.5]), np.array([3, 3.5, 3]), np.array([5, 4.5])])
    >>> [f.type for f in forms]
    ['ICC(1,1)', 'ICC(1,k)']
    """
    groups = [np.asarray(g, dtype=float) for g in groups if len(g) > 0]
    g = len(groups)
    sizes = np.array([len(x) for x in groups], dtype=float)
    big_n = sizes.sum()
    if g < 2 or big_n - g < 1:
        raise InputError("the ICC needs at least 2 rated outputs and some output rated twice")
    means = np.array([x.mean() for x in groups])
    grand = np.concatenate(groups).mean()
    msb = float((sizes * (means - grand) ** 2).sum() / (g - 1))
    msw = float(sum(((x - x.mean()) ** 2).sum() for x in groups) / (big_n - g))
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


def icc(ratings: pd.DataFrame, alpha: float = 0.05) -> tuple[list[ICCResult], str]:
    """ICC forms suitable for the design and the design name (``"complete"`` when every rater
    rated every unit, ``"one-way"`` otherwise).

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
    mat = _units(df)
    if mat.shape[0] >= 2 and mat.shape[1] >= 2 and not mat.isna().any().any():
        with np.errstate(divide="ignore", invalid="ignore"):  # 0 / 0 on constant ratings
            return icc_complete(mat.to_numpy(dtype=float).T, alpha), "complete"
    groups = [g.to_numpy(dtype=float) for _, g in df.groupby(["item", "system"])["score"]]
    return icc_oneway(groups, alpha), "one-way"


def rater_zscores(ratings: pd.DataFrame) -> pd.DataFrame:
    """Add ``z = (score - rater mean) / rater SD`` (ddof = 1; WMT Direct Assessment, Graham et
    al. 2013). Raters with a single rating or no spread cannot be standardised: their rows are
    dropped and listed in ``result.attrs["dropped_raters"]``.

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"rater": ["r1", "r2"] * 4, "item": list("11223344"),
    ...                    "system": "a", "score": [1, 1, 2, 2, 3, 2, 4, 4]})
    >>> rater_zscores(df)["z"].round(2).tolist()[:4]
    [-1.16, -0.99, -0.39, -0.2]
    """
    df = _check_frame(ratings, ["rater", "score"])
    extra = ratings.drop(columns=[c for c in ("rater", "score") if c in ratings.columns])
    df = pd.concat([extra.reset_index(drop=True), df.reset_index(drop=True)], axis=1)
    g = df.groupby("rater")["score"]
    sd = g.transform(lambda s: s.std(ddof=1))
    ok = np.isfinite(sd) & (sd > 0)
    dropped = sorted(df.loc[~ok, "rater"].unique())
    out = df[ok].copy()
    out["z"] = (out["score"] - g.transform("mean")[ok]) / sd[ok]
    out = out.reset_index(drop=True)
    out.attrs["dropped_raters"] = dropped
    return out


def rater_summary(ratings: pd.DataFrame, *, scale: tuple[float, float] | None = None
                  ) -> pd.DataFrame:
    """Per rater: ``n, mean, sd, min, median, max, n_distinct``, share of scale points used
    (if the scale is declared with integer points), shares at the scale ends, and ``bias``: the
    mean of (rating - mean of the other raters' ratings of the same unit) over units someone
    else also rated (NaN when none).

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"rater": ["r1", "r2"] * 4, "item": list("11223344"),
    ...                    "system": "a", "score": [1, 1, 2, 2, 3, 2, 4, 4]})
    >>> rater_summary(df)[["rater", "n", "mean"]].values.tolist()
    [['r1', 4, 2.5], ['r2', 4, 2.25]]
    """
    df = _check_frame(ratings, ["rater", "item", "system", "score"])
    g = df.groupby("rater")["score"]
    out = pd.DataFrame({
        "n": g.size(), "mean": g.mean(), "sd": g.std(ddof=1), "min": g.min(),
        "median": g.median(), "max": g.max(), "n_distinct": g.nunique(),
    })
    if scale is not None:
        cats = categories_for(df["score"], scale)
        if len(cats) == scale[1] - scale[0] + 1:
            out["scale_used"] = out["n_distinct"] / len(cats)
        out["share_at_min"] = df.assign(x=df["score"] == scale[0]).groupby("rater")["x"].mean()
        out["share_at_max"] = df.assign(x=df["score"] == scale[1]).groupby("rater")["x"].mean()
    unit = df.groupby(["item", "system"])["score"]
    tot, cnt = unit.transform("sum"), unit.transform("size")
    others = cnt > 1
    dev = (df["score"] - (tot - df["score"]) / (cnt - 1)).where(others)
    out["bias"] = dev.groupby(df["rater"]).mean()
    out["n_shared"] = others.groupby(df["rater"]).sum().astype(int)
    return out.reset_index()


@dataclass(frozen=True)
class AgreementReport(Result):
    """Everything ``nlgeval agreement`` prints.

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"rater": ["r1", "r2"] * 4, "item": list("11223344"),
    ...                    "system": "a", "score": [1, 1, 2, 2, 3, 2, 4, 4]})
    >>> rep = agreement_report(df, scale=(1, 4))
    >>> rep.n_raters, rep.n_units
    (2, 4)
    """

    criterion: str
    n_ratings: int
    n_raters: int
    n_units: int
    fleiss: FleissResult
    krippendorff: dict[str, float]
    cohen: pd.DataFrame
    icc: list[ICCResult]
    icc_design: str
    raters: pd.DataFrame
    notes: tuple[str, ...] = field(default=())
    undefined: dict[str, str] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """The documented ``agreement --json`` keys (``fleiss_kappa``, ``krippendorff_alpha``,
        ``cohen_kappa`` ... are not field names, so this one is written out)."""
        return {
            "criterion": self.criterion,
            "n_ratings": self.n_ratings,
            "n_raters": self.n_raters,
            "n_units": self.n_units,
            "fleiss_kappa": self.fleiss.kappa,
            "fleiss": self.fleiss.to_dict(),
            "krippendorff_alpha": dict(self.krippendorff),
            "cohen_kappa": self.cohen.to_dict("records"),
            "icc": [r.to_dict() for r in self.icc],
            "icc_design": self.icc_design,
            "raters": self.raters.to_dict("records"),
            "notes": list(self.notes),
            "undefined": dict(self.undefined),
        }


_DISPLAY = {
    "fleiss_kappa": "Fleiss' kappa", "cohen_kappa": "Cohen's kappa", "icc": "the ICC",
    **{f"krippendorff_alpha_{lvl}": f"Krippendorff's alpha ({lvl})"
       for lvl in ("nominal", "ordinal", "interval")},
}


def agreement_report(
    ratings: pd.DataFrame, *, scale: tuple[float, float] | None = None,
    criterion: str = "", min_common: int = 2,
) -> AgreementReport:
    """All agreement statistics for one criterion (see the module docstring).

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"rater": ["r1", "r2"] * 4, "item": list("11223344"),
    ...                    "system": "a", "score": [1, 1, 2, 2, 3, 2, 4, 4]})
    >>> rep = agreement_report(df, scale=(1, 4))
    >>> rep.n_ratings, rep.icc_design
    (8, 'complete')
    """
    df = _check_frame(ratings, ["rater", "item", "system", "score"])
    n_raters = df["rater"].nunique()
    if n_raters < 2:
        raise InputError(
            f"agreement needs at least 2 raters; the ratings have {n_raters} "
            f"({', '.join(df['rater'].unique())})", column="rater",
        )
    notes: list[str] = []
    undefined: dict[str, str] = {}
    n_units = int(df.groupby(["item", "system"]).ngroups)
    if df["score"].nunique() == 1:
        notes.append(f"every rating is {df['score'].iloc[0]:g}: chance-corrected agreement is "
                     "undefined (0 / 0)")
    try:
        fk = fleiss_kappa(df, scale=scale)
        if not np.isfinite(fk.kappa):
            undefined["fleiss_kappa"] = ("expected agreement is 1: all ratings of the units used "
                                         "fall in one category")
    except InputError as exc:
        fk = FleissResult(kappa=np.nan, n_units=0, n_units_dropped=n_units, ratings_per_unit=0)
        undefined["fleiss_kappa"] = exc.message
    if fk.n_units_dropped and np.isfinite(fk.kappa):
        notes.append(f"Fleiss' kappa uses the {fk.n_units} units with {fk.ratings_per_unit} "
                     f"ratings; {fk.n_units_dropped} units with other counts were left out")
    ka = {}
    for lvl in ("nominal", "ordinal", "interval"):
        try:
            ka[lvl] = krippendorff_alpha(df, lvl, scale=scale)
            if not np.isfinite(ka[lvl]):
                undefined[f"krippendorff_alpha_{lvl}"] = "expected disagreement is 0"
        except InputError as exc:
            ka[lvl] = np.nan
            undefined[f"krippendorff_alpha_{lvl}"] = exc.message
    ck = pairwise_cohen_kappa(df, scale=scale, min_common=min_common)
    if ck.empty:
        notes.append(f"no rater pair shares {min_common} or more outputs: no Cohen's kappa")
    else:
        bad = int(ck["unweighted"].isna().sum())
        if bad:
            undefined["cohen_kappa"] = (
                f"undefined for {bad} of {len(ck)} rater pairs (both raters used a single "
                "category on their common outputs: expected agreement 1)")
    try:
        forms, design = icc(df)
        if all(not np.isfinite(f.icc) for f in forms):
            undefined["icc"] = "zero variance between and within outputs"
    except InputError as exc:
        forms, design = [], "undefined"
        undefined["icc"] = exc.message
    if design == "one-way":
        notes.append("raters differ between outputs, so only the one-way ICC(1) forms apply")
    pairable = int((df.groupby(["item", "system"]).size() >= 2).sum())
    if 0 < pairable < 10:
        notes.append(f"only {pairable} outputs are rated by 2 or more raters: every agreement "
                     "coefficient here has a very wide sampling error")
    for key, why in undefined.items():
        why = why.removeprefix("Krippendorff's alpha is undefined here: ")
        notes.append(f"{_DISPLAY.get(key, key)} is undefined (NaN): {why}")
    return AgreementReport(
        criterion=criterion, n_ratings=len(df), n_raters=int(n_raters),
        n_units=n_units, fleiss=fk, krippendorff=ka,
        cohen=ck, icc=forms, icc_design=design, raters=rater_summary(df, scale=scale),
        notes=tuple(notes), undefined=undefined,
    )
