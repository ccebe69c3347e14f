"""Write a :class:`~nlgeval.report.study.ValidationStudy` as a report directory: its tables
(:mod:`nlgeval.report.paper_tables`), figures (drawn here, in worker processes), CSVs, page
(:mod:`nlgeval.report.page`) and run record.

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

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from nlgeval.provenance import run_record
from nlgeval.report.corrections import mark
from nlgeval.report.page import render_html as render_html
from nlgeval.report.paper_tables import _slug
from nlgeval.report.paper_tables import study_tables as study_tables
from nlgeval.report.study import ValidationStudy
from nlgeval.results import jsonable

# ----------------------------------------------------------------------------- figures
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
            "r": wide("r"), "lo": wide("ci_low"), "hi": wide("ci_high"),
            "p": wide("p_corrected" if "p_corrected" in sub.columns else "p"),
            "alpha": study.alpha,
            "title": f"{level}-level {coef0} r (* p < {study.alpha}, "
                     f"{study.config.correction}-corrected; † CI contains 0; bootstrap CI)"}))
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
                txt = mark(r, pv.iloc[i, j], lo.iloc[i, j], hi.iloc[i, j], data["alpha"], 2)
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
    >>> from nlgeval.report.study import example_study
    >>> study = example_study()  # BLEU on 40 E2E inputs, system level
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
    >>> from nlgeval.report.study import example_study
    >>> study = example_study()  # BLEU on 40 E2E inputs, system level
    >>> import tempfile
    >>> from pathlib import Path
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     figures = study_figures(study, Path(tmp), workers=1)
    ...     [p.name for p in figures["heatmap_system"]]
    ['heatmap_system.png', 'heatmap_system.pdf']
    """
    return start_figures(study, directory, workers)()


def write_report(study: ValidationStudy, out_dir: str | Path,
                 extra_record: dict[str, Any] | None = None) -> dict[str, Any]:
    """Write tables, figures, CSVs, report.html and run.json; return the run record.

    Examples
    --------
    >>> from nlgeval.report.study import example_study
    >>> study = example_study()  # BLEU on 40 E2E inputs, system level
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
