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
  (>= 2) are left out and counted (``fleiss.n_units`` / ``fleiss.n_units_dropped``).
* **Krippendorff's alpha** (Krippendorff 2011), nominal / ordinal / interval, missing ratings
  allowed: the ``krippendorff`` package on the raters x units matrix.
* **ICC** (Shrout & Fleiss 1979; McGraw & Wong 1996 for the intervals). When every rater rated
  every unit: all six forms ICC(1,1), ICC(2,1), ICC(3,1), ICC(1,k), ICC(2,k), ICC(3,k) from the
  two-way ANOVA mean squares. Otherwise (the usual NLG design, e.g. a Latin square, where each
  output is rated by different raters) only the one-way forms are meaningful: ICC(1,1) and
  ICC(1,k) with the one-way ANOVA for unequal group sizes and k replaced by
  k0 = (N - sum n_i^2 / N) / (g - 1) (e.g. Donner 1986); units with one rating count in the
  between-units mean square only. Written here from the mean squares (pingouin's
  ``intraclass_corr`` needs a complete design; the tests compare against it there); ICC(1,1)
  and its interval (Thomas & Hultquist 1978) are the numbers of R's ICC package, ``ICCest``
  (Wolak et al. 2012).
* A coefficient that is undefined for the data (one category used by everybody, no output
  rated twice, zero within-output variance, ...) is NaN in :func:`agreement_report`, with the
  reason in ``undefined`` and the notes; the rest of the table is still computed.
* Per-rater **z-scores** (WMT Direct Assessment: z = (x - rater mean) / rater SD, ddof = 1) and
  per-rater summaries (mean, spread, use of the scale, bias against the other raters).

The kappa and alpha kernels live in :mod:`nlgeval.human.kappa_alpha`, the ICC in
:mod:`nlgeval.human.intraclass`; this module holds the per-rater tables and the report, and
re-exports the kernels under their old import paths (``from nlgeval.human.agreement import
icc`` keeps working).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from nlgeval.errors import InputError
from nlgeval.human.frames import check_ratings_frame as _check_frame

# Re-exported under their old import paths (``from nlgeval.human.agreement import icc``).
from nlgeval.human.intraclass import ICCResult, icc
from nlgeval.human.intraclass import icc_complete as icc_complete
from nlgeval.human.intraclass import icc_oneway as icc_oneway
from nlgeval.human.kappa_alpha import (
    FleissResult,
    categories_for,
    fleiss_kappa,
    krippendorff_alpha,
    pairwise_cohen_kappa,
)
from nlgeval.human.kappa_alpha import cohen_kappa_table as cohen_kappa_table
from nlgeval.human.kappa_alpha import cohen_kappas as cohen_kappas
from nlgeval.results import Result


def rater_zscores(ratings: pd.DataFrame) -> pd.DataFrame:
    """Add ``z = (score - rater mean) / rater SD`` (ddof = 1; WMT Direct Assessment, Graham et
    al. 2013). Raters with a single rating or no spread cannot be standardised: their rows are
    dropped and listed in ``result.attrs["dropped_raters"]``.

    Parameters
    ----------
    ratings : pandas.DataFrame
        Tidy ratings with ``rater`` and ``score``.

    Returns
    -------
    pandas.DataFrame
        The standardisable rows with a ``z`` column added.

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
            "fleiss_kappa": self.fleiss.statistic,
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


def _fleiss_part(df: pd.DataFrame, scale: tuple[float, float] | None, n_units: int,
                 notes: list[str], undefined: dict[str, str]) -> FleissResult:
    """Fleiss' kappa for the report: NaN with the reason in ``undefined`` when undefined."""
    try:
        fk = fleiss_kappa(df, scale=scale)
        if not np.isfinite(fk.statistic):
            undefined["fleiss_kappa"] = ("expected agreement is 1: all ratings of the units used "
                                         "fall in one category")
    except InputError as exc:
        fk = FleissResult(statistic=np.nan, n_units=0, n_units_dropped=n_units, ratings_per_unit=0)
        undefined["fleiss_kappa"] = exc.message
    if fk.n_units_dropped and np.isfinite(fk.statistic):
        notes.append(f"Fleiss' kappa uses the {fk.n_units} units with {fk.ratings_per_unit} "
                     f"ratings; {fk.n_units_dropped} units with other counts were left out")
    return fk


def _krippendorff_part(df: pd.DataFrame, scale: tuple[float, float] | None,
                       undefined: dict[str, str]) -> dict[str, float]:
    """Krippendorff's alpha at the three levels for the report (NaN where undefined)."""
    ka = {}
    for lvl in ("nominal", "ordinal", "interval"):
        try:
            ka[lvl] = krippendorff_alpha(df, lvl, scale=scale).statistic
            if not np.isfinite(ka[lvl]):
                undefined[f"krippendorff_alpha_{lvl}"] = "expected disagreement is 0"
        except InputError as exc:
            ka[lvl] = np.nan
            undefined[f"krippendorff_alpha_{lvl}"] = exc.message
    return ka


def _cohen_part(df: pd.DataFrame, scale: tuple[float, float] | None, min_common: int,
                notes: list[str], undefined: dict[str, str]) -> pd.DataFrame:
    """Cohen's kappa of every rater pair for the report, noting pairs where it is undefined."""
    ck = pairwise_cohen_kappa(df, scale=scale, min_common=min_common)
    if ck.empty:
        notes.append(f"no rater pair shares {min_common} or more outputs: no Cohen's kappa")
    else:
        bad = int(ck["unweighted"].isna().sum())
        if bad:
            undefined["cohen_kappa"] = (
                f"undefined for {bad} of {len(ck)} rater pairs (both raters used a single "
                "category on their common outputs: expected agreement 1)")
    return ck


def _icc_part(df: pd.DataFrame, notes: list[str], undefined: dict[str, str]
              ) -> tuple[list[ICCResult], str]:
    """The ICC forms for the report and the design name (``"undefined"`` when none apply)."""
    try:
        forms, design = icc(df)
        if all(not np.isfinite(f.icc) for f in forms):
            undefined["icc"] = "zero variance between and within outputs"
    except InputError as exc:
        forms, design = [], "undefined"
        undefined["icc"] = exc.message
    if design == "one-way":
        notes.append("raters differ between outputs, so only the one-way ICC(1) forms apply")
    return forms, design


def agreement_report(
    ratings: pd.DataFrame, *, scale: tuple[float, float] | None = None,
    criterion: str = "", min_common: int = 2,
) -> AgreementReport:
    """All agreement statistics for one criterion (see the module docstring).

    Parameters
    ----------
    ratings : pandas.DataFrame
        One criterion's tidy ratings, columns ``rater, item, system, score``; a unit is one
        rated output ``(item, system)``; at least 2 raters.
    scale : tuple of (float, float), optional
        The declared (min, max) of the scale: its integer points are the categories of
        Cohen's kappa when every score is an integer (else the observed scores).
    criterion : str
        The criterion's name, carried into the report.
    min_common : int
        The fewest outputs a rater pair must share to get a Cohen's kappa.

    Returns
    -------
    AgreementReport
        Fleiss' kappa (Fleiss 1971), Krippendorff's alpha (Krippendorff 2011), Cohen's kappa
        per rater pair (Cohen 1960), the ICC forms the design allows (Shrout & Fleiss 1979),
        per-rater summaries, notes and the reasons for undefined coefficients.

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
    fk = _fleiss_part(df, scale, n_units, notes, undefined)
    ka = _krippendorff_part(df, scale, undefined)
    ck = _cohen_part(df, scale, min_common, notes, undefined)
    forms, design = _icc_part(df, notes, undefined)
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
