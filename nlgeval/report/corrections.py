"""Multiple comparisons in a validation study, and p-values next to bootstrap intervals.

A study of 70 metrics x 6 criteria x 3 levels runs over a thousand tests of "no association";
at alpha = 0.05 about fifty of them come out "significant" by chance alone. The study therefore
reports, next to each raw ``pvalue``, a ``pvalue_corrected`` over the family actually tested:

* correlations: every metric x criterion x level of one statistic (each statistic -- Pearson,
  Spearman, Kendall -- asks its own question and is its own family);
* metric comparisons (behind the clusters the verdict uses): the metric pairs of one
  criterion x level x statistic x test, each pair tested in the direction observed.

The methods are those of statsmodels' ``multipletests``: ``holm`` (Holm 1979; the default:
controls the family-wise error rate under any dependence), ``bh`` (Benjamini & Hochberg 1995,
false discovery rate under independence or positive dependence), ``by`` (Benjamini & Yekutieli
2001, false discovery rate under any dependence), ``bonferroni``, or ``none``.

A significant p can come with a bootstrap interval that contains 0: the test asks whether the
correlation is zero *for these systems and items* (the closed-form null of the coefficient, or
a permutation of scores within items), while the interval also resamples the systems and items
themselves (Deutsch et al. 2021) and so is wider. Such cells are flagged (``ci_disagrees``;
a dagger in the report) instead of being shown as plain significant.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from nlgeval.report.settings import CORRECTIONS

_METHOD = {"holm": "holm", "bh": "fdr_bh", "by": "fdr_by", "bonferroni": "bonferroni"}

#: Caption text for the dagger.
DAGGER_TEXT = ("† = significant after correction, yet the bootstrap interval contains 0: the "
               "test holds the systems and items fixed (is r zero for these outputs?), the "
               "interval also resamples them (would r stay above zero for other systems and "
               "items?), so read such a cell as not established")


def adjust(pvalues: np.ndarray | list[float], method: str = "holm") -> np.ndarray:
    """Corrected p-values (statsmodels ``multipletests``); NaN stays NaN and is not counted
    in the family.

    Examples
    --------
    >>> adjust([0.01, 0.04, np.nan, 0.03], "holm").round(3).tolist()
    [0.03, 0.06, nan, 0.06]
    >>> adjust([0.01, 0.04, 0.03], "bh").round(3).tolist()
    [0.03, 0.04, 0.04]
    """
    from statsmodels.stats.multitest import multipletests

    if method not in CORRECTIONS:
        from nlgeval.errors import InputError

        raise InputError(f"correction must be one of {', '.join(CORRECTIONS)}, got {method!r}")
    p = np.asarray(pvalues, dtype=float)
    out = p.copy()
    ok = np.isfinite(p)
    if method == "none" or not ok.any():
        return out
    if method == "holm":  # statsmodels' Holm, without its gc.collect() per call (0.2-0.4 s)
        order = np.argsort(p[ok])
        held = np.maximum.accumulate(p[ok][order] * np.arange(order.size, 0, -1))
        out[np.flatnonzero(ok)[order]] = np.minimum(held, 1.0)
        return out
    out[ok] = multipletests(p[ok], method=_METHOD[method])[1]
    return out


def correct_correlations(corr: pd.DataFrame, method: str, alpha: float) -> pd.DataFrame:
    """``corr`` with ``pvalue_corrected`` (family: all metric x criterion x level rows of one
    statistic) and ``ci_disagrees`` (significant after correction, bootstrap CI contains 0).

    Examples
    --------
    >>> corr = pd.DataFrame({"statistic": ["pearson"] * 3, "value": [0.5, 0.1, 0.3],
    ...                      "pvalue": [0.001, 0.04, 0.02], "ci_low": [0.2, -0.1, -0.01],
    ...                      "ci_high": [0.7, 0.3, 0.5]})
    >>> out = correct_correlations(corr, "holm", 0.05)
    >>> out["pvalue_corrected"].round(3).tolist(), out["ci_disagrees"].tolist()
    ([0.003, 0.04, 0.04], [False, True, True])
    """
    out = corr.copy()
    out["pvalue_corrected"] = np.nan
    for _, idx in out.groupby("statistic", sort=False).groups.items():
        out.loc[idx, "pvalue_corrected"] = adjust(out.loc[idx, "pvalue"].to_numpy(float),
                                                  method)
    sig = out["pvalue_corrected"].to_numpy(float) < alpha
    lo, hi = out["ci_low"].to_numpy(float), out["ci_high"].to_numpy(float)
    out["ci_disagrees"] = sig & np.isfinite(lo) & (lo <= 0) & (hi >= 0)
    return out


def correct_comparisons(comps: pd.DataFrame, method: str) -> pd.DataFrame:
    """``comps`` with ``pvalue_corrected``: per criterion x level x statistic x test, one test
    per metric pair, in the direction observed (the smaller of its two one-sided p-values);
    the other direction keeps ``max(raw p, corrected p)``.

    Examples
    --------
    >>> c = pd.DataFrame({"metric_a": ["a", "b", "a", "c", "b", "c"],
    ...                   "metric_b": ["b", "a", "c", "a", "c", "b"],
    ...                   "pvalue": [0.01, 0.99, 0.02, 0.98, 0.5, 0.5], "criterion": "q",
    ...                   "level": "system", "statistic": "pearson", "method": "williams"})
    >>> correct_comparisons(c, "holm")["pvalue_corrected"].round(2).tolist()
    [0.03, 0.99, 0.04, 0.98, 0.5, 0.5]
    """
    out = comps.copy()
    out["pvalue_corrected"] = np.nan
    if out.empty:
        return out
    keys = [k for k in ("criterion", "level", "statistic", "method") if k in out.columns]
    ma, mb = out["metric_a"].astype(str), out["metric_b"].astype(str)
    pair = ma.where(ma < mb, mb) + "\x00" + mb.where(ma < mb, ma)  # the unordered pair
    raw = pd.to_numeric(out["pvalue"], errors="coerce").astype(float)
    ranked = raw.fillna(np.inf)
    for _, sub in out.groupby(keys, sort=False, dropna=False):
        idx = sub.index
        # per pair, the row of its smaller one-sided p-value: the test in the direction seen
        best = ranked[idx].groupby(pair[idx].to_numpy(), sort=False).idxmin()
        q = pd.Series(adjust(raw[best.to_numpy()].to_numpy(float), method),
                      index=best.index)
        qrow = pair[idx].map(q).to_numpy(float)
        rows = raw[idx].to_numpy(float)
        is_best = np.isin(idx, best.to_numpy())
        other = np.where(np.isfinite(qrow), np.maximum(rows, qrow), rows)  # NaN stays NaN
        out.loc[idx, "pvalue_corrected"] = np.where(is_best, qrow, other)
    return out


def mark(r: float, p_corrected: float, ci_low: float, ci_high: float, alpha: float,
         digits: int = 3) -> str:
    """One table cell: r with ``*`` when significant after correction, ``†`` when the
    bootstrap interval nonetheless contains 0 (see :data:`DAGGER_TEXT`).

    Examples
    --------
    >>> mark(0.11, 0.01, -0.001, 0.22, 0.05, 2), mark(0.5, 0.001, 0.3, 0.7, 0.05, 2)
    ('0.11*†', '0.50*')
    """
    if not np.isfinite(r):
        return "--"
    star = "*" if np.isfinite(p_corrected) and p_corrected < alpha else ""
    dagger = "†" if star and np.isfinite(ci_low) and ci_low <= 0 <= ci_high else ""
    return f"{r:.{digits}f}{star}{dagger}"


def correction_name(method: str) -> str:
    """The correction as a caption names it.

    >>> correction_name("by"), correction_name("none")
    ('Benjamini-Yekutieli (2001)', 'no correction')
    """
    return {"holm": "Holm (1979)", "bh": "Benjamini-Hochberg (1995)",
            "by": "Benjamini-Yekutieli (2001)", "bonferroni": "Bonferroni"}.get(
                method, "no correction")


def correction_text(method: str, alpha: float) -> str:
    """How the stars were computed, for every caption.

    >>> correction_text("holm", 0.05)
    '* = p < 0.05 after Holm (1979) correction across the metrics x criteria x levels tested'
    """
    name = correction_name(method)
    if method == "none":
        return f"* = p < {alpha} (no correction for multiple comparisons)"
    return (f"* = p < {alpha} after {name} correction across the metrics x criteria x levels "
            "tested")


def corrected_clusters(clusters: pd.DataFrame, comps: pd.DataFrame,
                       alpha: float) -> pd.DataFrame:
    """``clusters`` with ``cluster_corrected``: the same WMT rule (MTME ``AssignRanks``) on
    the corrected p-values of :func:`correct_comparisons` (what the verdict uses).

    Examples
    --------
    >>> c = pd.DataFrame({"metric_a": ["a", "b", "a", "c", "b", "c"],
    ...                   "metric_b": ["b", "a", "c", "a", "c", "b"],
    ...                   "pvalue": [0.04, 0.96, 0.01, 0.99, 0.5, 0.5], "criterion": "q",
    ...                   "level": "system", "statistic": "pearson", "method": "williams"})
    >>> cl = pd.DataFrame({"metric": ["a", "b", "c"], "value": [0.9, 0.8, 0.7],
    ...                    "cluster": [1, 2, 2], "criterion": "q", "level": "system",
    ...                    "statistic": "pearson",
    ...                    "method": "williams"})
    >>> corrected_clusters(cl, correct_comparisons(c, "holm"), 0.05)["cluster_corrected"].tolist()
    [1.0, 1.0, 2.0]
    """
    from nlgeval.correlation.significance import significance_clusters

    out = clusters.copy()
    out["cluster_corrected"] = np.nan
    if out.empty or comps.empty or "pvalue_corrected" not in comps.columns:
        return out
    for (crit, level, coef, method), sub in out.groupby(
            ["criterion", "level", "statistic", "method"], sort=False):
        test = "perm-both" if str(method).startswith("perm-both (") else method
        c = comps[(comps["criterion"] == crit) & (comps["level"] == level)
                  & (comps["statistic"] == coef) & (comps["method"] == test)]
        if c.empty:
            continue
        rs = {str(m): float(r) for m, r in zip(sub["metric"], sub["value"], strict=True)}
        cl = significance_clusters(c.assign(pvalue=c["pvalue_corrected"]), rs, alpha)
        out.loc[sub.index, "cluster_corrected"] = sub["metric"].map(
            dict(zip(cl["metric"], cl["cluster"], strict=True))).to_numpy(float)
    return out


def apply_corrections(
    corr: pd.DataFrame, comps: pd.DataFrame, clusters: pd.DataFrame, method: str, alpha: float
) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """:func:`correct_correlations`, :func:`correct_comparisons` and
    :func:`corrected_clusters` in one step (the study's tables, corrected columns added).

    >>> e = pd.DataFrame(columns=["statistic", "pvalue", "ci_low", "ci_high"])
    >>> [len(f) for f in apply_corrections(e, pd.DataFrame(), pd.DataFrame(), "holm", 0.05)]
    [0, 0, 0]
    """
    corr = correct_correlations(corr, method, alpha)
    comps = correct_comparisons(comps, method)
    return corr, comps, corrected_clusters(clusters, comps, alpha)
