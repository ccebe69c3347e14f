"""The paper tables of a validation study (:class:`~nlgeval.tables.PaperTable`: CSV, Markdown,
booktabs LaTeX), after Reiter & Belz (2009); :mod:`nlgeval.report.writer` writes them out."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from nlgeval.correlation.coefficients import COEFFICIENTS
from nlgeval.report.corrections import (
    DAGGER_TEXT,
    correction_name,
    correction_text,
    mark,
)
from nlgeval.report.study import ValidationStudy
from nlgeval.tables import PaperTable

#: How each level reads in captions, and the unit its n counts.
LEVEL_TEXT: dict[str, tuple[str, str]] = {
    "system": ("System level (system means)", "systems"),
    "segment": ("Segment level, no grouping (all outputs pooled)", "outputs"),
    "item": ("Segment level grouped by item (within each item across systems, then averaged)",
             "items"),
    "system-grouped": ("Segment level grouped by system (within each system across items, "
                       "then averaged)", "systems"),
}


def study_tables(study: ValidationStudy) -> dict[str, PaperTable]:
    """The report's paper tables, keyed by file stem.

    Parameters
    ----------
    study : ValidationStudy
        The study to tabulate.

    Returns
    -------
    dict of str to PaperTable
        The tables, keyed by file stem.

    Examples
    --------
    >>> from nlgeval.report.study import example_study
    >>> study = example_study()  # BLEU on 40 E2E inputs, system level
    >>> "metric_scores_by_system" in study_tables(study)
    True
    """
    t: dict[str, PaperTable] = {}
    for add in (_system_tables, _correlation_tables, _significance_tables, _leaderboard_tables,
                _reference_tables):
        add(study, t)
    return t


def _system_tables(study: ValidationStudy, t: dict[str, PaperTable]) -> None:
    """Metric and human scores per system."""
    ms = study.metric_system_scores
    t["metric_scores_by_system"] = PaperTable(
        data=ms, caption=f"Metric scores per system on the rated outputs of {study.corpus} "
        "(corpus-level scores; cf. Reiter & Belz 2009, Tables 5 and 7).",
        label="tab:metric-scores", digits=3)
    hs = study.human_system_scores
    t["human_scores_by_system"] = PaperTable(
        data=hs, caption="Mean human score per system and criterion ("
        f"{'mean of per-rater z-scores' if study.normalise == 'z' else 'raw scores'}"
        ") with the rank of each system (1 = best). Systems marked 'reference' "
        "are excluded from the metric correlations.",
        label="tab:human-scores", digits=3)


def _correlation_tables(study: ValidationStudy, t: dict[str, PaperTable]) -> None:
    """Correlations per level, and the overview of the first coefficient."""
    corr = study.correlations
    for level in study.levels:
        sub = corr[corr["level"] == level]
        if sub.empty:
            continue
        cols = ["metric", "criterion", "statistic", "value", "pvalue", "pvalue_corrected",
                "ci_low", "ci_high", "n"]
        cols = [c for c in cols if c in sub.columns]
        data = sub[cols].rename(columns={"ci_low": "CI low", "ci_high": "CI high"})
        title, unit = LEVEL_TEXT.get(level, (level, "units"))
        t[f"correlations_{level}"] = PaperTable(
            data=data.reset_index(drop=True),
            caption=f"{title}: agreement of each metric with each human "
            f"criterion (n = {unit}); {int(study.confidence_level * 100)}% percentile bootstrap "
            f"intervals, {study.resamples} resamples of {study.resample} (seed {study.seed}). "
            "Lower-is-better metrics are negated first. pvalue_corrected: "
            f"{_correction(study)}. Cf. Reiter & Belz 2009, Tables 6 and 8.",
            label=f"tab:corr-{level}", digits={"value": 3, "pvalue": 4, "pvalue_corrected": 4,
                                               "CI low": 3, "CI high": 3})
    wide = _pearson_wide(study)
    if wide is not None:
        t["correlations_overview"] = PaperTable(
            data=wide, caption="Correlation (r) of each metric with each criterion; "
            f"{_correction(study)}; {DAGGER_TEXT}.", label="tab:corr-overview", digits=3)


def _significance_tables(study: ValidationStudy, t: dict[str, PaperTable]) -> None:
    """One-sided p-value matrices of the metric comparisons, and the clusters."""
    if not study.comparisons.empty:
        groups = study.comparisons.groupby(["criterion", "level", "statistic"], sort=False)
        for (crit, level, stat), sub in groups:
            main_method = sub["method"].iloc[0]
            s = sub[sub["method"] == main_method]
            suffix = "" if stat in COEFFICIENTS else f"_{_slug(str(stat))}"
            mat = s.pivot(index="metric_a", columns="metric_b", values="pvalue")
            order = [m for m in study.metrics if m in mat.index]
            mat = mat.reindex(index=order, columns=order).reset_index().rename(
                columns={"metric_a": "better than →"})
            t[f"significance_{level}_{_slug(crit)}{suffix}"] = PaperTable(
                data=mat, caption=f"{crit}, {level} level: one-sided p-values ({main_method}) "
                "that the row metric agrees better with the human scores than the column "
                f"metric ({stat}); raw p-values (corrected for the metric pairs: "
                "pvalue_corrected in comparisons.csv).",
                label=f"tab:sig-{level}-{_slug(crit)}{suffix.replace('_', '-')}", digits=4)
    if not study.clusters.empty:
        t["significance_clusters"] = PaperTable(
            data=study.clusters[[c for c in ("criterion", "level", "metric", "value", "cluster",
                                             "cluster_corrected", "method")
                                 if c in study.clusters.columns]],
            caption="Clusters of metrics that cannot be told apart (alpha = "
            f"{study.alpha}); cluster 1 holds the best-correlating metric. cluster: on the "
            "raw pairwise p-values (as WMT); cluster_corrected: on p-values corrected over "
            f"the metric pairs ({correction_name(study.config.correction)}), what the "
            "verdict uses.",
            label="tab:clusters", digits=3)


def _leaderboard_tables(study: ValidationStudy, t: dict[str, PaperTable]) -> None:
    """WMT-style leaderboards (Freitag et al. 2023, 2024)."""
    for style, board in study.leaderboards.items():
        tasks = [c for c in board.columns if c not in ("metric", "overall", "rank",
                                                        "criterion")]
        t[f"leaderboard_{style}"] = PaperTable(
            data=board[["criterion", "metric", *tasks, "overall", "rank"]],
            caption=f"Metric leaderboard, {style.upper()} style (Freitag et al. "
            f"{'2024' if style == 'wmt24' else '2023'}): each task ({', '.join(tasks)}) "
            "rescaled to [0, 1] (accuracies from (0, 1), correlations from (-1, 1)) and "
            "averaged; rank = significance cluster of the average (PERM-BOTH, "
            f"{study.permutations} permutations, alpha = {study.alpha}).",
            label=f"tab:leaderboard-{style}", digits=3)


def _reference_tables(study: ValidationStudy, t: dict[str, PaperTable]) -> None:
    """Human-human correlations, rater agreement, significant differences, published values."""
    if not study.human_correlations.empty:
        t["human_criterion_correlations"] = PaperTable(
            data=study.human_correlations, caption="Correlations between the human criteria "
            "(per-output means, and system means).", label="tab:human-human", digits=3)
    if not study.rater_agreement.empty:
        t["rater_agreement"] = PaperTable(
            data=study.rater_agreement, caption="Leave-one-rater-out reference: correlation of "
            "one rater's score with the mean of the other raters of the same output (pooled "
            "over all pairs, and the mean of per-rater coefficients). Read metric r against "
            "it.", label="tab:rater-agreement", digits=3)
    if study.significant_differences is not None and len(study.significant_differences):
        t["significant_differences"] = PaperTable(
            data=study.significant_differences, caption="Pairs of systems the humans find "
            "significantly different (Wilcoxon by item, Bonferroni), and how many each metric "
            "predicts, gets backwards, misses, or adds (cf. Reiter & Belz 2009, Table 9).",
            label="tab:sig-differences", digits=0)
    if study.published is not None:
        t["published_comparison"] = PaperTable(
            data=study.published, caption="Segment-level Pearson r of nlgeval's metrics with "
            "per-rater z-normalised human scores (as the organisers computed theirs, whatever "
            "--normalise says), next to the WebNLG+ 2020 organisers' published values (their "
            "BLEU is NLTK's smoothed sentence BLEU, nlgeval's is sacrebleu's; see "
            "docs/validate.md).",
            label="tab:published", digits=3)


def _pearson_wide(study: ValidationStudy) -> pd.DataFrame | None:
    corr = study.correlations
    coef = (study.coefficients or study.statistics)[0]
    sub = corr[corr["statistic"] == coef]
    if sub.empty:
        return None
    rows = []
    for (metric, level), g in sub.groupby(["metric", "level"], sort=False):
        row: dict[str, Any] = {"metric": metric, "level": level}
        for r in g.itertuples():
            p = getattr(r, "pvalue_corrected", r.pvalue)  # issue 26: stars after the correction
            row[r.criterion] = mark(r.value, p, r.ci_low, r.ci_high, study.alpha, 3)
        rows.append(row)
    ra = study.rater_agreement
    for level in dict.fromkeys(sub["level"]) if not ra.empty else ():
        # the human reference at every level it can be computed (issue 26): pooled over all
        # raters at segment level, one drawn rater vs the others elsewhere
        col = "pooled_r" if level == "segment" else f"one_vs_rest_{level}"
        if col not in ra.columns:
            continue
        row = {"metric": "one rater vs the others (human reference)", "level": level}
        for crit, v in zip(ra["criterion"], ra[col].astype(float), strict=True):
            row[crit] = "--" if not np.isfinite(v) else f"{v:.3f}"
        rows.append(row)
    return pd.DataFrame(rows)


def _correction(study: ValidationStudy) -> str:
    """How the stars are computed (the correction the study used)."""
    return correction_text(getattr(study.config, "correction", "none"), study.alpha)


def _slug(s: str) -> str:
    return "".join(ch if ch.isalnum() else "_" for ch in s).strip("_").lower()

