"""Quality control of raters on the analysis side, as Appraise does for WMT Direct Assessment.

Graham, Baldwin, Moffat & Zobel (2013, "Continuous measurement scales in human evaluation of
machine translation"; 2017, "Can machine translation systems be evaluated by the crowd alone")
hide *control items* among the real trials and keep only raters who pass them:

* **degraded outputs** -- a copy of an output made clearly worse must score lower. Per rater,
  the pairs (score of the original, score of its degraded copy) are tested with a one-sided
  paired Wilcoxon signed-rank test (``scipy.stats.wilcoxon(original, degraded,
  alternative="greater")``); the rater passes when p < ``alpha`` (Appraise's DA quality control
  uses the same test at 0.05). With fewer than 5 pairs no test can reach 0.05 (the exact
  minimum is 1/2^n), so such raters are *not tested* rather than failed;
* **repeated items** -- the same output shown twice must get consistent scores: the rater
  passes when the mean absolute difference of the repeat pairs is at most
  ``repeat_tolerance`` times the scale's range (the online experiment's rule, per rater);
* the **experiment's own verdict**: the export of ``nlgeval experiment`` carries
  ``qc_passed``/``qc_flags`` per rater (failed repeat / degraded / known-answer checks,
  speeders), used as they are.

Control items come from the export with attention checks (``qc_check`` = ``repeat`` or
``degraded`` rows; the original is the row of the same rater, item and system without a
``qc_check``). Per-rater z-scores (Graham et al. 2013) are reported next to the verdict
(:func:`nlgeval.human.agreement.rater_zscores` standardises the scores for the analysis).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import pandas as pd
from scipy import stats

from nlgeval.errors import InputError
from nlgeval.results import Result

#: Fewer degraded pairs than this cannot reach p < 0.05 in the one-sided exact test (1/2^4).
MIN_DEGRADED_PAIRS = 5
QC_MODES = ("keep", "drop")


@dataclass(frozen=True)
class RaterQC(Result):
    """Per-rater quality control: the table (one row per rater), who was removed and why.

    ``raters`` columns: ``rater, n, mean, sd, z_mean`` (mean score, SD, mean z-score of the
    rater's scores standardised over all raters), ``n_repeat_pairs, repeat_mean_abs_diff,
    repeat_ok``, ``n_degraded_pairs, degraded_statistic, degraded_pvalue, degraded_ok``,
    ``export_passed, export_flags``, ``passed`` and ``reasons``.

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"rater": ["r1", "r1", "r2", "r2"], "item": ["1", "2", "1", "2"],
    ...                    "system": "a", "score": [3.0, 4.0, 5.0, 5.0],
    ...                    "qc_passed": [True, True, False, False],
    ...                    "qc_flags": ["", "", "speeder", "speeder"]})
    >>> qc = rater_quality(df)
    >>> qc.removed, qc.reasons["r2"]
    (('r2',), 'the experiment flagged the rater: speeder')
    """

    _omit: ClassVar[frozenset[str]] = frozenset({"reasons"})

    raters: pd.DataFrame
    removed: tuple[str, ...]
    reasons: dict[str, str]
    alpha: float
    repeat_tolerance: float
    sources: tuple[str, ...]

    @property
    def n_removed(self) -> int:
        """Number of raters who fail quality control."""
        return len(self.removed)

    def summary(self) -> str:
        """One line: how many raters were removed and why (for CLI output and reports)."""
        if not self.removed:
            return (f"quality control ({', '.join(self.sources)}): all "
                    f"{len(self.raters)} raters pass")
        why = "; ".join(f"{r}: {self.reasons[r]}" for r in self.removed)
        return (f"quality control ({', '.join(self.sources)}): {len(self.removed)} of "
                f"{len(self.raters)} raters removed ({why})")


def _pairs(df: pd.DataFrame, kind: str) -> pd.DataFrame:
    """(rater, original score, control score) for each control row of ``kind``."""
    key = ["rater", "item", "system"] + (["system_b"] if "system_b" in df.columns else [])
    key += ["criterion"] if "criterion" in df.columns else []
    orig = df[df["qc_check"] == ""].set_index(key)["score"]
    ctl = df[df["qc_check"] == kind]
    if ctl.empty:
        return pd.DataFrame(columns=["rater", "original", "control"])
    idx = pd.MultiIndex.from_frame(ctl[key])
    found = idx.isin(orig.index)
    if not found.all():
        pos = int(np.flatnonzero(~found)[0])
        r = ctl.iloc[pos]
        raise InputError(
            f"{kind} check of rater {r['rater']!r} on item {r['item']!r}, system "
            f"{r['system']!r} has no original rating to compare with", column="qc_check")
    return pd.DataFrame({"rater": ctl["rater"].to_numpy(),
                         "original": orig.loc[idx].to_numpy(dtype=float),
                         "control": ctl["score"].to_numpy(dtype=float)})


def degraded_test(original: np.ndarray, degraded: np.ndarray) -> tuple[float, float]:
    """One-sided paired Wilcoxon signed-rank test that originals score higher than their
    degraded copies (Graham et al. 2017): ``(statistic, pvalue)``; NaN below
    :data:`MIN_DEGRADED_PAIRS` pairs, p = 1 when every pair is tied.

    Examples
    --------
    >>> stat, p = degraded_test([5, 6, 7, 8, 9], [1, 2, 3, 4, 5])
    >>> float(p)  # all 5 differences positive: exact p = 1/2^5
    0.03125
    """
    a, b = np.asarray(original, dtype=float), np.asarray(degraded, dtype=float)
    if len(a) < MIN_DEGRADED_PAIRS:
        return float("nan"), float("nan")
    if np.all(a == b):
        return 0.0, 1.0
    res = stats.wilcoxon(a, b, alternative="greater")
    return float(res.statistic), float(res.pvalue)


def _export_verdict(df: pd.DataFrame) -> pd.DataFrame:
    """Per rater: the experiment's ``qc_passed`` (all rows) and ``qc_flags`` (union)."""
    passed = df["qc_passed"].astype(str).str.strip().str.lower().isin({"true", "1", "yes"})
    flags = df.get("qc_flags", pd.Series("", index=df.index)).fillna("").astype(str)
    g = pd.DataFrame({"rater": df["rater"], "p": passed, "f": flags}).groupby("rater")
    return pd.DataFrame({
        "export_passed": g["p"].all(),
        "export_flags": g["f"].agg(lambda s: ";".join(sorted({x for v in s for x in
                                                              v.split(";") if x}))),
    })


def rater_quality(
    ratings: pd.DataFrame, *, scale: tuple[float, float] | None = None, alpha: float = 0.05,
    repeat_tolerance: float = 0.25,
) -> RaterQC:
    """Quality control of every rater from control items and the experiment's verdict (see
    the module docstring). ``ratings`` may hold attention-check rows (``qc_check``) and the
    export's ``qc_passed``/``qc_flags``; ``scale`` (min, max) sets the repeat tolerance's range
    (default: the observed range of the scores). Raises when there is nothing to check.

    Parameters
    ----------
    ratings : pandas.DataFrame
        One criterion's tidy ratings.
    scale : tuple of (float, float), optional
        The (min, max) of the scale.
    alpha : float, default 0.05
        Significance level of the per-rater checks.
    repeat_tolerance : float, default 0.25
        Largest mean absolute difference of repeat pairs, as a fraction of the scale range.

    Returns
    -------
    RaterQC
        Per-rater table ``raters``, the ``removed`` raters and their ``reasons``.

    Examples
    --------
    >>> import pandas as pd
    >>> rows = [("good", i, s, "") for i in range(6) for s in (6.0,)]
    >>> rows += [("good", i, 1.0, "degraded") for i in range(6)]
    >>> rows += [("lazy", i, 4.0, "") for i in range(6)]
    >>> rows += [("lazy", i, 4.0, "degraded") for i in range(6)]
    >>> df = pd.DataFrame(rows, columns=["rater", "item", "score", "qc_check"]).assign(
    ...     system="a")
    >>> qc = rater_quality(df, scale=(1, 7))
    >>> qc.removed
    ('lazy',)
    """
    if not 0 < alpha < 1:
        raise InputError(f"alpha must be between 0 and 1, got {alpha}")
    df = ratings.copy()
    df["rater"] = df["rater"].astype(str)
    df["item"] = df["item"].astype(str)
    df["system"] = df["system"].astype(str)
    # relative exports: a degraded check pits an output against its own degraded copy, which
    # the experiment's verdict (qc_passed) already scores; only absolute ratings pair up here
    relative = "system_b" in df.columns and (df["system_b"].fillna("").astype(str) != "").any()
    has_checks = (not relative and "qc_check" in df.columns
                  and (df["qc_check"].fillna("") != "").any())
    has_export = "qc_passed" in df.columns
    if not (has_checks or has_export):
        raise InputError(
            "no quality-control information in the ratings: quality control needs control "
            "items (rows with qc_check = repeat or degraded, from an export with attention "
            "checks) or the experiment's qc_passed column", column="qc_check")
    if has_checks:
        df["qc_check"] = df["qc_check"].fillna("").astype(str).str.strip()
    else:
        df["qc_check"] = ""
    real = df[df["qc_check"] == ""]
    table = _score_summary(real)
    sources = []
    if has_checks:
        lo, hi = scale if scale is not None else (real["score"].min(), real["score"].max())
        table = table.join(_repeat_table(_pairs(df, "repeat"),
                                         repeat_tolerance * float(hi - lo)), how="left")
        table = table.join(_degraded_table(_pairs(df, "degraded"), alpha), how="left")
        sources.append("control items")
    if has_export:
        table = table.join(_export_verdict(df), how="left")
        sources.append("the experiment's checks")
    reasons = {r: why for r, why in ((r, _reasons(row, alpha, repeat_tolerance))
                                     for r, row in table.iterrows()) if why}
    table["passed"] = [r not in reasons for r in table.index]
    table["reasons"] = [reasons.get(r, "") for r in table.index]
    return RaterQC(raters=table.reset_index(), removed=tuple(r for r in table.index
                                                             if r in reasons),
                   reasons=reasons, alpha=alpha, repeat_tolerance=repeat_tolerance,
                   sources=tuple(sources))


def _score_summary(real: pd.DataFrame) -> pd.DataFrame:
    """n, mean, SD and mean z-score per rater (z over all raters' scores, Graham et al.)."""
    s = real["score"].astype(float)
    z = (s - s.mean()) / s.std(ddof=1) if len(s) > 1 and s.std(ddof=1) > 0 else s * np.nan
    g = pd.DataFrame({"rater": real["rater"], "s": s, "z": z}).groupby("rater")
    out = pd.DataFrame({"n": g.size(), "mean": g["s"].mean(), "sd": g["s"].std(ddof=1),
                        "z_mean": g["z"].mean()})
    out.index.name = "rater"
    return out


def _repeat_table(pairs: pd.DataFrame, tol: float) -> pd.DataFrame:
    g = pairs.assign(d=(pairs["original"] - pairs["control"]).abs()).groupby("rater")["d"]
    out = pd.DataFrame({"n_repeat_pairs": g.size(), "repeat_mean_abs_diff": g.mean()})
    out["repeat_ok"] = out["repeat_mean_abs_diff"] <= tol + 1e-12
    return out


def _degraded_table(pairs: pd.DataFrame, alpha: float) -> pd.DataFrame:
    rows = {}
    for rater, g in pairs.groupby("rater"):
        stat, p = degraded_test(g["original"].to_numpy(), g["control"].to_numpy())
        rows[rater] = {"n_degraded_pairs": len(g), "degraded_statistic": stat,
                       "degraded_pvalue": p, "degraded_ok": bool(p < alpha) if p == p else None}
    cols = ["n_degraded_pairs", "degraded_statistic", "degraded_pvalue", "degraded_ok"]
    return pd.DataFrame.from_dict(rows, orient="index", columns=cols)


def _reasons(row: pd.Series, alpha: float, tol: float) -> str:
    """Why a rater fails ('' when they pass)."""
    out = []
    if row.get("degraded_ok") is False:
        out.append(f"degraded outputs not scored lower (one-sided Wilcoxon p = "
                   f"{row['degraded_pvalue']:.3g} >= {alpha:g}, {int(row['n_degraded_pairs'])}"
                   " pairs)")
    if row.get("repeat_ok") is False:
        out.append(f"inconsistent on repeated items (mean |difference| "
                   f"{row['repeat_mean_abs_diff']:.3g} > {tol:g} of the scale range)")
    if row.get("export_passed") is False or (isinstance(row.get("export_passed"), np.bool_)
                                             and not row.get("export_passed")):
        out.append("the experiment flagged the rater: " + (row.get("export_flags") or "failed"))
    return "; ".join(out)


def apply_qc(ratings: pd.DataFrame, qc: str = "keep", **options: Any
             ) -> tuple[pd.DataFrame, RaterQC | None]:
    """Ratings for the analysis: attention-check rows removed and, with ``qc="drop"``, the
    raters failing :func:`rater_quality` too. Returns ``(ratings, report or None)``.

    Parameters
    ----------
    ratings : pandas.DataFrame
        One criterion's tidy ratings, possibly with ``qc_check`` rows.
    qc : {"keep", "drop"}, default ``"keep"``
        Keep every rater, or drop those failing :func:`rater_quality`.
    **options
        Keyword arguments of :func:`rater_quality` (``scale``, ``alpha``, ...).

    Returns
    -------
    tuple of (pandas.DataFrame, RaterQC or None)
        The ratings to analyse and the QC report (None with ``qc="keep"``).

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"rater": ["r1", "r2"], "item": ["1", "1"], "system": "a",
    ...                    "score": [3.0, 5.0], "qc_passed": [True, False]})
    >>> kept, report = apply_qc(df, "drop")
    >>> kept["rater"].tolist(), report.n_removed
    (['r1'], 1)
    """
    if qc not in QC_MODES:
        raise InputError(f"qc must be one of {', '.join(QC_MODES)}, got {qc!r}")
    report = rater_quality(ratings, **options) if qc == "drop" else None
    out = ratings
    if "qc_check" in out.columns:
        out = out[out["qc_check"].fillna("").astype(str).str.strip() == ""]
    if report is not None and report.removed:
        out = out[~out["rater"].astype(str).isin(report.removed)]
        if out.empty:
            raise InputError(f"quality control removed every rater ({report.summary()})")
    return out.reset_index(drop=True), report
