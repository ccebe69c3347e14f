"""Write a :class:`~nlgeval.report.study.ValidationStudy` as a report directory.

Layout of ``out_dir``::

    tables/<name>.csv|.md|.tex    paper tables (nlgeval.tables.PaperTable, booktabs LaTeX)
    figures/<name>.png|.pdf       matplotlib (Agg) figures
    correlations.csv              the full correlation table (all columns)
    comparisons.csv               every metric-vs-metric test
    segments.csv                  per-output metric and human scores used
    report.html                   one self-contained page (inline CSS, images as base64)
    run.json                      settings, seeds, metric signatures, versions, timings
"""

from __future__ import annotations

import base64
import html
import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from nlgeval.correlation.coefficients import COEFFICIENTS
from nlgeval.provenance import run_record
from nlgeval.report.study import ValidationStudy
from nlgeval.results import jsonable
from nlgeval.tables import PaperTable

# ----------------------------------------------------------------------------- tables
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

    Examples
    --------
    >>> from nlgeval.corpora import load_corpus
    >>> from nlgeval.report import ValidationSettings, run_study
    >>> s = ValidationSettings(metrics=["bleu"], levels=["system"], coefficients=["pearson"],
    ...                        resamples=0, permutations=0, table9=False)
    >>> c = load_corpus("e2e")
    >>> study = run_study(c.subset(items=c.items[:40]), s)
    >>> "metric_scores_by_system" in study_tables(study)
    True
    """
    t: dict[str, PaperTable] = {}
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
    corr = study.correlations
    for level in study.levels:
        sub = corr[corr["level"] == level]
        if sub.empty:
            continue
        cols = ["metric", "criterion", "coefficient", "r", "p", "ci_low", "ci_high", "n"]
        data = sub[cols].rename(columns={"ci_low": "CI low", "ci_high": "CI high"})
        title, unit = LEVEL_TEXT.get(level, (level, "units"))
        t[f"correlations_{level}"] = PaperTable(
            data=data.reset_index(drop=True),
            caption=f"{title}: agreement of each metric with each human "
            f"criterion (n = {unit}); {int(study.confidence_level * 100)}% percentile bootstrap "
            f"intervals, {study.resamples} resamples of {study.resample} (seed {study.seed}). "
            "Lower-is-better metrics are negated first. Cf. Reiter & Belz 2009, Tables 6 and 8.",
            label=f"tab:corr-{level}", digits={"r": 3, "p": 4, "CI low": 3, "CI high": 3})
    wide = _pearson_wide(study)
    if wide is not None:
        t["correlations_overview"] = PaperTable(
            data=wide, caption="Correlation (r) of each metric with each criterion; * p < "
            f"{study.alpha}.", label="tab:corr-overview", digits=3)
    if not study.comparisons.empty:
        groups = study.comparisons.groupby(["criterion", "level", "coefficient"], sort=False)
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
                f"metric ({stat}).",
                label=f"tab:sig-{level}-{_slug(crit)}{suffix.replace('_', '-')}", digits=4)
    if not study.clusters.empty:
        t["significance_clusters"] = PaperTable(
            data=study.clusters[["criterion", "level", "metric", "r", "cluster", "method"]],
            caption="Clusters of metrics that cannot be told apart (alpha = "
            f"{study.alpha}); cluster 1 holds the best-correlating metric.",
            label="tab:clusters", digits=3)
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
    return t


def _pearson_wide(study: ValidationStudy) -> pd.DataFrame | None:
    corr = study.correlations
    coef = (study.coefficients or study.statistics)[0]
    sub = corr[corr["coefficient"] == coef]
    if sub.empty:
        return None
    rows = []
    for (metric, level), g in sub.groupby(["metric", "level"], sort=False):
        row: dict[str, Any] = {"metric": metric, "level": level}
        for r in g.itertuples():
            star = "*" if np.isfinite(r.p) and r.p < study.alpha else ""
            row[r.criterion] = "--" if not np.isfinite(r.r) else f"{r.r:.3f}{star}"
        rows.append(row)
    ra = study.rater_agreement
    if not ra.empty and "segment" in set(sub["level"]):
        row = {"metric": "one rater vs the others (human reference)", "level": "segment"}
        for r in ra.itertuples():
            row[r.criterion] = "--" if not np.isfinite(r.pooled_r) else f"{r.pooled_r:.3f}"
        rows.append(row)
    return pd.DataFrame(rows)


def _slug(s: str) -> str:
    return "".join(ch if ch.isalnum() else "_" for ch in s).strip("_").lower()


# ----------------------------------------------------------------------------- figures
#: Fixed margins of the scatter grids, in inches (left, right, bottom, top, horizontal gap,
#: vertical gap): what ``tight_layout`` finds for these panels, without the extra text-layout
#: pass per figure that made it a third of the figures' time.
_SCATTER_MARGINS = (0.55, 0.12, 0.45, 0.55, 0.55, 0.62)


def _figure_specs(study: ValidationStudy) -> list[tuple[str, str, dict[str, Any]]]:
    """(stem, kind, data) of every figure: plain arrays and strings, cheap to send to a worker."""
    specs: list[tuple[str, str, dict[str, Any]]] = []
    sysm = study.segments.groupby("system").mean(numeric_only=True)
    metrics = [m for m in study.metrics if m in sysm.columns]
    corr = study.correlations
    coef0 = (study.coefficients or study.statistics)[0]
    for crit in study.criteria:
        if crit not in sysm.columns or not metrics:
            continue
        panels = []
        for m in metrics:
            hit = corr[(corr["metric"] == m) & (corr["criterion"] == crit)
                       & (corr["level"] == "system") & (corr["coefficient"] == coef0)]
            r = float(hit["r"].iloc[0]) if len(hit) else float("nan")
            sign = "" if study.higher_is_better.get(m, True) else " (lower is better)"
            panels.append({"metric": m, "x": sysm[m].to_numpy(float),
                           "y": sysm[crit].to_numpy(float),
                           "title": f"{m}{sign}  " + (f"r = {r:.2f}" if np.isfinite(r) else "")})
        specs.append((f"scatter_{_slug(crit)}", "scatter", {
            "panels": panels, "criterion": crit,
            "suptitle": f"{study.corpus}: metric vs human ({crit}), one point per system"}))
    for level in study.levels:
        sub = corr[(corr["level"] == level) & (corr["coefficient"] == coef0)]
        if sub.empty:
            continue

        def wide(col: str, sub: pd.DataFrame = sub) -> pd.DataFrame:
            return sub.pivot(index="metric", columns="criterion", values=col).reindex(
                index=study.metrics, columns=study.criteria)

        specs.append((f"heatmap_{level}", "heatmap", {
            "r": wide("r"), "lo": wide("ci_low"), "hi": wide("ci_high"), "p": wide("p"),
            "alpha": study.alpha,
            "title": f"{level}-level {coef0} r (* p < {study.alpha}; bootstrap CI)"}))
    return specs


def _draw_scatter(plt: Any, data: dict[str, Any]) -> Any:
    """One panel per metric: system means of the metric against the criterion, with the OLS line."""
    panels = data["panels"]
    ncol = min(4, len(panels))
    nrow = int(np.ceil(len(panels) / ncol))
    w, h = 3.2 * ncol, 2.9 * nrow
    fig, axes = plt.subplots(nrow, ncol, figsize=(w, h), squeeze=False)
    left, right, bottom, top, gap_w, gap_h = _SCATTER_MARGINS
    panel_w = (w - left - right - (ncol - 1) * gap_w) / ncol
    panel_h = (h - bottom - top - (nrow - 1) * gap_h) / nrow
    fig.subplots_adjust(left=left / w, right=1 - right / w, bottom=bottom / h, top=1 - top / h,
                        wspace=gap_w / panel_w, hspace=gap_h / panel_h)
    for ax, panel in zip(axes.ravel(), panels, strict=False):
        x, y = panel["x"], panel["y"]
        ok = np.isfinite(x) & np.isfinite(y)
        ax.scatter(x[ok], y[ok], s=18, color="#1f77b4")
        if ok.sum() >= 2 and np.ptp(x[ok]) > 0:
            b, a = np.polyfit(x[ok], y[ok], 1)
            xs = np.linspace(x[ok].min(), x[ok].max(), 20)
            ax.plot(xs, a + b * xs, color="#d62728", lw=1)
        ax.set_title(panel["title"], fontsize=9)
        ax.set_xlabel(f"{panel['metric']} (mean per system)", fontsize=8)
        ax.set_ylabel(data["criterion"], fontsize=8)
        ax.tick_params(labelsize=7)
        ax.locator_params(nbins=4)  # fewer tick labels: text is most of the drawing time
    for ax in axes.ravel()[len(panels):]:
        ax.axis("off")
    fig.suptitle(data["suptitle"], fontsize=10)
    return fig


def _draw_heatmap(plt: Any, data: dict[str, Any]) -> Any:
    """Metric x criterion heatmap of r, with stars (p < alpha) and the bootstrap interval."""
    mat, lo, hi, pv = data["r"], data["lo"], data["hi"], data["p"]
    fig, ax = plt.subplots(figsize=(1.6 + 1.5 * mat.shape[1], 0.8 + 0.55 * mat.shape[0]))
    im = ax.imshow(mat.to_numpy(float), cmap="RdBu_r", vmin=-1, vmax=1, aspect="auto")
    for i in range(mat.shape[0]):
        for j in range(mat.shape[1]):
            r = mat.iloc[i, j]
            if not np.isfinite(r):
                txt = "--"
            else:
                p = pv.iloc[i, j]
                star = "*" if np.isfinite(p) and p < data["alpha"] else ""
                txt = f"{r:.2f}{star}"
                if np.isfinite(lo.iloc[i, j]):
                    txt += f"\n[{lo.iloc[i, j]:.2f}, {hi.iloc[i, j]:.2f}]"
            ax.text(j, i, txt, ha="center", va="center", fontsize=7,
                    color="white" if np.isfinite(r) and abs(r) > 0.6 else "black")
    ax.set_xticks(range(mat.shape[1]), mat.columns, rotation=30, ha="right", fontsize=8)
    ax.set_yticks(range(mat.shape[0]), mat.index, fontsize=8)
    ax.set_title(data["title"], fontsize=9)
    fig.colorbar(im, ax=ax, shrink=0.8)
    fig.tight_layout()  # tick labels of any length: measured, once per heatmap
    return fig


def _render_figure(task: tuple[str, str, dict[str, Any], str]) -> tuple[str, list[Path]]:
    """Draw one figure spec and write it as PNG and PDF (one draw per format)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from nlgeval.figures import save_figure

    stem, kind, data, directory = task
    fig = (_draw_scatter if kind == "scatter" else _draw_heatmap)(plt, data)
    return stem, save_figure(fig, directory, stem, dpi=110)


def start_figures(study: ValidationStudy, directory: Path,
                  workers: int | None = None) -> Callable[[], dict[str, list[Path]]]:
    """Start drawing the figures of :func:`study_figures`; call the result to wait for them.

    With ``workers`` > 1 (default: 2 where processes can be forked, else 1) the figures are
    drawn by forked processes while the caller goes on (the report writes its tables and CSVs
    meanwhile); with 1 they are drawn here when the result is called. Same files either way.

    Examples
    --------
    >>> from nlgeval.corpora import load_corpus
    >>> from nlgeval.report import ValidationSettings, run_study
    >>> s = ValidationSettings(metrics=["bleu"], levels=["system"], coefficients=["pearson"],
    ...                        resamples=0, permutations=0, table9=False)
    >>> c = load_corpus("e2e")
    >>> study = run_study(c.subset(items=c.items[:40]), s)
    >>> import tempfile
    >>> from pathlib import Path
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     wait = start_figures(study, Path(tmp), workers=2)
    ...     figures = wait()   # the caller can do other work before this
    >>> sorted({stem.split("_")[0] for stem in figures})
    ['heatmap', 'scatter']
    """
    import multiprocessing as mp
    import os

    tasks = [(stem, kind, data, str(directory)) for stem, kind, data in _figure_specs(study)]
    if workers is None:
        workers = 2 if "fork" in mp.get_all_start_methods() else 1
    workers = max(1, min(workers, len(tasks), os.cpu_count() or 1))
    if workers == 1:
        return lambda: dict(_render_figure(t) for t in tasks)
    from concurrent.futures import ProcessPoolExecutor

    # fork: the workers inherit the loaded modules; only matplotlib is imported there
    pool = ProcessPoolExecutor(workers, mp_context=mp.get_context("fork"))
    futures = [pool.submit(_render_figure, t) for t in tasks]

    def wait() -> dict[str, list[Path]]:
        try:
            return dict(f.result() for f in futures)
        finally:
            pool.shutdown()

    return wait


def study_figures(study: ValidationStudy, directory: Path,
                  workers: int | None = None) -> dict[str, list[Path]]:
    """Scatter plots per criterion (system level) and correlation heatmaps per level.

    Returns ``{stem: [png, pdf]}``. The figures are independent, so up to ``workers`` forked
    processes draw them (see :func:`start_figures`); the files do not depend on ``workers``.

    Examples
    --------
    >>> from nlgeval.corpora import load_corpus
    >>> from nlgeval.report import ValidationSettings, run_study
    >>> s = ValidationSettings(metrics=["bleu"], levels=["system"], coefficients=["pearson"],
    ...                        resamples=0, permutations=0, table9=False)
    >>> c = load_corpus("e2e")
    >>> study = run_study(c.subset(items=c.items[:40]), s)
    >>> import tempfile
    >>> from pathlib import Path
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     figures = study_figures(study, Path(tmp), workers=1)
    ...     [p.name for p in figures["heatmap_system"]]
    ['heatmap_system.png', 'heatmap_system.pdf']
    """
    return start_figures(study, directory, workers)()


# ----------------------------------------------------------------------------- html
_CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Helvetica,Arial,sans-serif;margin:2em auto;
max-width:1100px;color:#222;line-height:1.45;padding:0 1em}
.verdict{background:#eef6ee;border:1px solid #9c9;padding:.5em 1em;margin:1em 0}
h1{font-size:1.6em}h2{font-size:1.25em;border-bottom:1px solid #ddd;padding-bottom:.2em;
margin-top:2em}table{border-collapse:collapse;margin:1em 0;font-size:.85em}
caption{caption-side:top;text-align:left;font-weight:600;padding:.3em 0;max-width:900px}
th,td{border-bottom:1px solid #e3e3e3;padding:.25em .6em;text-align:right}
th{background:#f4f4f4}td:first-child,th:first-child{text-align:left}
img{max-width:100%;border:1px solid #eee;margin:.5em 0}.note{color:#555;font-size:.9em}
code{background:#f4f4f4;padding:0 .3em}.wrap{overflow-x:auto}
"""


def _img(path: Path) -> str:
    data = base64.b64encode(path.read_bytes()).decode("ascii")
    return f"<img alt='{html.escape(path.stem)}' src='data:image/png;base64,{data}'>"


def _verdict_html(study: ValidationStudy) -> list[str]:
    """The one-line verdict per criterion, at the top of the page."""
    from nlgeval.report.meta import verdict_line

    if not study.verdict:
        return []
    items = "".join(f"<li>{html.escape(verdict_line(v))}</li>" for v in study.verdict)
    return ["<div class='verdict'><strong>Verdict</strong> (metrics that cannot be told apart "
            f"from the best one, alpha = {study.alpha}):<ul>{items}</ul></div>"]


def render_html(study: ValidationStudy, tables: dict[str, PaperTable],
                figures: dict[str, list[Path]], record: dict[str, Any]) -> str:
    """One self-contained HTML page (no external assets).

    Examples
    --------
    >>> from nlgeval.corpora import load_corpus
    >>> from nlgeval.report import ValidationSettings, run_study
    >>> s = ValidationSettings(metrics=["bleu"], levels=["system"], coefficients=["pearson"],
    ...                        resamples=0, permutations=0, table9=False)
    >>> c = load_corpus("e2e")
    >>> study = run_study(c.subset(items=c.items[:40]), s)
    >>> render_html(study, study_tables(study), {}, {}).rstrip().endswith("</html>")
    True
    """
    esc = html.escape
    parts = [
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>",
        f"<title>nlgeval validate: {esc(study.corpus)}</title><style>{_CSS}</style></head><body>",
        f"<h1>Metric validation study: {esc(study.corpus)}</h1>",
        *_verdict_html(study),
        "<p>How well do automatic metrics agree with the human judgements? (After Reiter &amp; "
        "Belz 2009.) Correlations at "
        f"{esc(', '.join(study.levels))} level; coefficients {esc(', '.join(study.coefficients))}; "
        f"{study.resamples} bootstrap resamples of {esc(study.resample)} (Deutsch et al. 2021), "
        f"seed {study.seed}; human scores: mean over raters"
        f"{' of per-rater z-scores' if study.normalise == 'z' else ''}.</p>",
        f"<p class='note'>Systems: {len(study.systems)}. Excluded (outputs are the references): "
        f"{esc(', '.join(study.excluded_systems) or 'none')}. Lower-is-better metrics are "
        "negated before correlating, so larger r is always better agreement: "
        f"{esc(', '.join(m for m, h in study.higher_is_better.items() if not h) or 'none')}.</p>",
    ]
    if study.external:
        rows = "".join(
            f"<li><code>{esc(m)}</code> from {esc(e.get('source') or 'a DataFrame')}: "
            f"covers {e['coverage']:.1%} of the rated "
            f"{'systems' if e['system_level_only'] else 'outputs'}"
            f"{', system level only' if e['system_level_only'] else ''}"
            f"{', ' + str(e['n_missing']) + ' missing value(s)' if e['n_missing'] else ''}</li>"
            for m, e in study.external.items())
        parts.append("<p>Metric scores computed outside nlgeval (external scores):</p>"
                     f"<ul class='note'>{rows}</ul>")
    if study.notes:
        parts.append("<ul class='note'>" + "".join(f"<li>{esc(n)}</li>" for n in study.notes)
                     + "</ul>")
    order = [("Metric leaderboard (WMT style)", [k for k in tables
                                                  if k.startswith("leaderboard_")]),
             ("Overview", ["correlations_overview"]),
             ("Correlations", [k for k in tables if k.startswith("correlations_")
                               and k != "correlations_overview"]),
             ("Comparison with published results", ["published_comparison"]),
             ("Figures", []),
             ("Which metric to trust: significance of differences",
              ["significance_clusters", *[k for k in tables if k.startswith("significance_")
                                          and k != "significance_clusters"]]),
             ("Systems", ["metric_scores_by_system", "human_scores_by_system"]),
             ("Human references", ["human_criterion_correlations", "rater_agreement"]),
             ("Significant differences predicted by metrics", ["significant_differences"])]
    for title, keys in order:
        if title == "Figures":
            if figures:
                parts.append("<h2>Figures</h2>")
                for _name, paths in figures.items():
                    png = [p for p in paths if p.suffix == ".png"]
                    if png:
                        parts.append(_img(png[0]))
            continue
        present = [k for k in keys if k in tables]
        if not present:
            continue
        parts.append(f"<h2>{esc(title)}</h2>")
        for k in present:
            parts.append(f"<div class='wrap'>{tables[k].to_html()}</div>")
    sig = "".join(f"<li><code>{esc(k)}</code>: <code>{esc(str(v))}</code></li>"
                  for k, v in study.signatures.items())
    parts.append(f"<h2>Reproducibility</h2><ul>{sig}</ul>")
    vers = ", ".join(f"{esc(k)} {esc(str(v))}" for k, v in record.get("versions", {}).items())
    parts.append(f"<p class='note'>Versions: {vers}. Timings (s): "
                 + esc(", ".join(f"{k} {v:.1f}" for k, v in study.timings.items()))
                 + ". Full details in run.json.</p>")
    parts.append("</body></html>")
    return "\n".join(parts)


def write_report(study: ValidationStudy, out_dir: str | Path,
                 extra_record: dict[str, Any] | None = None) -> dict[str, Any]:
    """Write tables, figures, CSVs, report.html and run.json; return the run record.

    Examples
    --------
    >>> from nlgeval.corpora import load_corpus
    >>> from nlgeval.report import ValidationSettings, run_study
    >>> s = ValidationSettings(metrics=["bleu"], levels=["system"], coefficients=["pearson"],
    ...                        resamples=0, permutations=0, table9=False)
    >>> c = load_corpus("e2e")
    >>> study = run_study(c.subset(items=c.items[:40]), s)
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     record = write_report(study, tmp)
    >>> [k for k in record["timings"] if k.startswith("report")]
    ['report: tables', 'report: csv', 'report: figures']
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    t_fig = time.perf_counter()
    wait_figures = start_figures(study, out / "figures")
    t0 = time.perf_counter()
    tables = study_tables(study)
    written: list[str] = []
    for stem, table in tables.items():
        written += [str(p.relative_to(out)) for p in table.write(out / "tables", stem)]
    t1 = time.perf_counter()
    study.correlations.to_csv(out / "correlations.csv", index=False)
    study.comparisons.to_csv(out / "comparisons.csv", index=False)
    study.segments.to_csv(out / "segments.csv", index=False)
    written += ["correlations.csv", "comparisons.csv", "segments.csv"]
    t2 = time.perf_counter()
    figures = wait_figures()
    t3 = time.perf_counter()
    for paths in figures.values():
        written += [str(p.relative_to(out)) for p in paths]
    # every stage in run.json, report writing included (the page and run.json itself are
    # written last: their own few milliseconds are the only thing not counted). The figures
    # are drawn by other processes from the start of report writing: their time is the wall
    # time until the last one is written, which overlaps the tables and CSVs.
    study.timings.update({"report: tables": t1 - t0, "report: csv": t2 - t1,
                          "report: figures": t3 - t_fig})
    record = run_record(
        command="validate",
        corpus=study.corpus,
        settings=study.settings(),
        seeds={"bootstrap": study.seed, "permutation": study.seed,
               "rng": "numpy.random.default_rng"},
        metric_signatures=study.signatures,
        higher_is_better=study.higher_is_better,
        missing=study.missing,
        notes=study.notes,
        timings=study.timings,
        files=sorted(written + ["report.html", "run.json"]),
        **(extra_record or {}),
    )
    (out / "report.html").write_text(render_html(study, tables, figures, record),
                                     encoding="utf-8")
    (out / "run.json").write_text(json.dumps(jsonable(record), indent=2, ensure_ascii=False)
                                  + "\n", encoding="utf-8")
    return record
