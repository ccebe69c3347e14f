"""Write a :class:`~nlgeval.report.study.ValidationStudy` as a report directory: its tables
(:mod:`nlgeval.report.paper_tables`), figures (chosen here, drawn by
:mod:`nlgeval.report.drawing` in worker processes), CSVs, page (:mod:`nlgeval.report.page`) and
run record.

Layout of ``out_dir``::

    tables/<name>.csv|.md|.tex    paper tables (nlgeval.tables.PaperTable, booktabs LaTeX)
    figures/<name>.png            matplotlib (Agg) figures (.pdf/.svg too on request)
    correlations.csv              the full correlation table (all columns)
    comparisons.csv               every metric-vs-metric test
    segments.csv                  per-output metric and human scores used
    report.html                   one self-contained page (inline CSS, images as base64)
    run.json                      settings, seeds, metric signatures, versions, timings
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from nlgeval.errors import InputError
from nlgeval.provenance import run_record
from nlgeval.report.page import render_html as render_html
from nlgeval.report.paper_tables import _slug
from nlgeval.report.paper_tables import study_tables as study_tables
from nlgeval.report.study import ValidationStudy
from nlgeval.results import jsonable

# ----------------------------------------------------------------------------- figures
#: Figure formats :func:`write_report` can write. PNG is the one report.html shows and is always
#: drawn; PDF (and SVG) are drawn only on request (``nlgeval validate --figures png,pdf``):
#: every format is one more full drawing of every figure.
FIGURE_FORMATS = ("png", "pdf", "svg")
#: Panels per scatter grid: beyond this, the metrics with the highest system-level r.
SCATTER_PANELS = 12


def figure_formats(formats: Sequence[str] | str | None) -> tuple[str, ...]:
    """The formats to draw: PNG first (the page shows it) plus those asked for; ``none`` or
    an empty list draws no figure.

    Examples
    --------
    >>> figure_formats("pdf"), figure_formats(None), figure_formats("none")
    (('png', 'pdf'), ('png',), ())
    """
    if formats is None:
        return ("png",)
    asked = [f.strip().lower().lstrip(".") for f in
             (formats.split(",") if isinstance(formats, str) else formats) if f.strip()]
    if not asked or asked == ["none"]:
        return ()
    unknown = [f for f in asked if f not in FIGURE_FORMATS]
    if unknown:
        raise InputError(f"--figures: unknown format(s) {', '.join(unknown)} (use "
                         f"{', '.join(FIGURE_FORMATS)} or none)")
    return tuple(dict.fromkeys(["png", *asked]))


def _coef_rows(study: ValidationStudy) -> tuple[str, pd.DataFrame]:
    """The first coefficient (or statistic) and its rows of the correlations table."""
    coef0 = (study.coefficients or study.statistics)[0]
    corr = study.correlations
    return coef0, corr[corr["statistic"] == coef0]


def _agreement_order(sub: pd.DataFrame, metrics: list[str]) -> list[str]:
    """``metrics`` by mean r over the rows of ``sub`` (best agreement first, undefined last;
    ties keep the study's order)."""
    mean_r = sub.groupby("metric", sort=False)["value"].mean()
    key = {m: -float(mean_r.get(m, np.nan)) for m in metrics}
    return sorted(metrics, key=lambda m: (not np.isfinite(key[m]), key[m] if
                                          np.isfinite(key[m]) else 0.0))


def _scatter_specs(study: ValidationStudy, coef0: str, rows: pd.DataFrame
                   ) -> list[tuple[str, str, dict[str, Any]]]:
    """One scatter grid per criterion (system means), at most :data:`SCATTER_PANELS` panels."""
    sysm = study.segments.groupby("system").mean(numeric_only=True)
    metrics = [m for m in study.metrics if m in sysm.columns]
    system = rows[rows["level"] == "system"]
    specs = []
    for crit in study.criteria:
        if crit not in sysm.columns or not metrics:
            continue
        here = system[system["criterion"] == crit]
        r_of = dict(zip(here["metric"], here["value"].astype(float), strict=False))
        shown = metrics if len(metrics) <= SCATTER_PANELS else \
            _agreement_order(here, metrics)[:SCATTER_PANELS]
        panels = []
        for m in shown:
            r = r_of.get(m, float("nan"))
            sign = "" if study.higher_is_better.get(m, True) else " (lower is better)"
            panels.append({"metric": m, "x": sysm[m].to_numpy(float),
                           "y": sysm[crit].to_numpy(float),
                           "title": f"{m}{sign}  " + (f"r = {r:.2f}" if np.isfinite(r) else "")})
        part = "" if len(shown) == len(metrics) else \
            f" ({len(shown)} of {len(metrics)} metrics: highest system-level {coef0} r)"
        specs.append((f"scatter_{_slug(crit)}", "scatter", {
            "panels": panels, "criterion": crit,
            "suptitle": f"{study.corpus}: metric vs human ({crit}), one point per system"
                        + part}))
    return specs


def _heatmap_specs(study: ValidationStudy, coef0: str, rows: pd.DataFrame
                   ) -> list[tuple[str, str, dict[str, Any]]]:
    """One metric x criterion heatmap per level, metrics sorted by mean r at that level."""
    specs = []
    correction = getattr(study.config, "correction", "none")
    for level in study.levels:
        sub = rows[rows["level"] == level]
        if sub.empty:
            continue
        order = _agreement_order(sub, [m for m in study.metrics if m in set(sub["metric"])])

        def wide(col: str, sub: pd.DataFrame = sub, order: list[str] = order) -> pd.DataFrame:
            return sub.pivot(index="metric", columns="criterion", values=col).reindex(
                index=order, columns=study.criteria)

        specs.append((f"heatmap_{level}", "heatmap", {
            "r": wide("value"), "lo": wide("ci_low"), "hi": wide("ci_high"),
            "p": wide("pvalue_corrected" if "pvalue_corrected" in sub.columns else "pvalue"),
            "alpha": study.alpha,
            "title": f"{level}-level {coef0} r, best agreement first (* p < {study.alpha}, "
                     f"{correction}-corrected; † CI contains 0; bootstrap CI)"}))
    return specs


def _forest_spec(study: ValidationStudy, coef0: str, rows: pd.DataFrame
                 ) -> list[tuple[str, str, dict[str, Any]]]:
    """The forest plot: every metric's r and bootstrap interval per criterion and level."""
    levels = [lv for lv in study.levels if (rows["level"] == lv).any()]
    metrics = [m for m in study.metrics if m in set(rows["metric"])]
    if not levels or not metrics:
        return []
    order = _agreement_order(rows, metrics)
    pcol = "pvalue_corrected" if "pvalue_corrected" in rows.columns else "pvalue"
    cells = {}
    for (level, crit), g in rows.groupby(["level", "criterion"], sort=False):
        g = g.set_index("metric").reindex(order)
        cells[(level, crit)] = {k: g[c].to_numpy(float) for k, c in
                                (("r", "value"), ("lo", "ci_low"), ("hi", "ci_high"), ("p", pcol))}
    human = {}
    ra = study.rater_agreement
    if not ra.empty and "pooled_r" in ra.columns:
        human = {("segment", c): float(v) for c, v in zip(ra["criterion"], ra["pooled_r"],
                                                            strict=False)}
    return [("forest", "forest", {
        "metrics": order, "criteria": list(study.criteria), "levels": levels, "cells": cells,
        "human": human, "alpha": study.alpha,
        "title": f"{coef0} r with {int(study.confidence_level * 100)}% bootstrap interval, "
                 f"best agreement first; filled: p < {study.alpha} after correction; dashed: "
                 "one rater vs the others"})]


def _figure_specs(study: ValidationStudy) -> list[tuple[str, str, dict[str, Any]]]:
    """(stem, kind, data) of every figure the page shows: plain arrays and strings, cheap to
    send to a worker."""
    if not (study.coefficients or study.statistics):
        return []
    coef0, rows = _coef_rows(study)
    return [*_scatter_specs(study, coef0, rows), *_heatmap_specs(study, coef0, rows),
            *_forest_spec(study, coef0, rows)]


_FigureTask = tuple[str, str, dict[str, Any], str, tuple[str, ...]]
#: Drawing order of the figure kinds: the largest drawings first (the forest plot).
_FIGURE_RANK = {"forest": 0, "heatmap": 1}


def _render_figure(task: _FigureTask) -> tuple[str, list[Path]]:
    """Draw one figure spec once per requested format."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from nlgeval.figures import save_figure
    from nlgeval.report.drawing import DRAW, save_options

    stem, kind, data, directory, formats = task
    fig = DRAW[kind](plt, data)
    return stem, save_figure(fig, directory, stem, formats, **save_options(kind, data))


class FigureDrawer:
    """A drawing process started before the study runs (``nlgeval validate`` starts it right
    after its imports): it imports matplotlib while this process loads and scores the corpus,
    then waits. :meth:`draw` hands it the figures; it forks one copy of itself (matplotlib
    already loaded, so the copy costs no import) and the two draw half of the figures each,
    while this process writes the tables. Same files as :func:`study_figures`: the same
    drawing function on the same data. Only where processes fork (else :func:`figure_drawer`
    gives None); a drawer draws one report, then ends.

    Examples
    --------
    >>> from nlgeval.report.study import example_study
    >>> import tempfile
    >>> drawer = figure_drawer(("png",))
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     wait = start_figures(example_study(), Path(tmp), drawer=drawer)
    ...     sorted({stem.split("_")[0] for stem in wait()})
    ['forest', 'heatmap', 'scatter']
    >>> drawer.close()
    """

    def __init__(self) -> None:
        import multiprocessing as mp

        ctx = mp.get_context("fork")
        self._conn, child = ctx.Pipe()
        self._process: Any = ctx.Process(target=_drawer_main, args=(child, self._conn),
                                    name="nlgeval-figures", daemon=True)
        self._process.start()
        child.close()

    def draw(self, tasks: Sequence[_FigureTask]) -> Callable[[], dict[str, list[Path]]]:
        """Send the figures to the process; the result waits for them and returns
        ``{stem: [paths]}`` (raises what a drawing raised)."""
        self._conn.send(list(tasks))

        def wait() -> dict[str, list[Path]]:
            try:
                status, value = self._conn.recv()
            except EOFError:
                status, value = "error", "the figure process ended without drawing"
            finally:
                self.close()
            if status != "ok":
                raise RuntimeError(f"drawing the figures failed: {value}")
            return dict(value)

        return wait

    def close(self) -> None:
        """End the process (idempotent; a drawer that drew has already ended)."""
        if self._process is not None:
            self._conn.close()
            self._process.join(timeout=5)
            if self._process.is_alive():
                self._process.terminate()
            self._process = None


def figure_drawer(formats: Sequence[str]) -> FigureDrawer | None:
    """A :class:`FigureDrawer` for ``formats`` (:func:`figure_formats`), or None when there is
    nothing to draw or processes cannot be forked here."""
    import multiprocessing as mp

    if not formats or "fork" not in mp.get_all_start_methods():
        return None
    return FigureDrawer()


def _drawer_main(conn: Any, parent_end: Any) -> None:
    """The drawing process: import matplotlib, draw a tiny figure (loads the lazily imported
    parts and the font), freeze what is loaded (``gc.freeze``: the cyclic garbage collector
    then walks only the figures' objects, a tenth of the drawing time less), wait for the
    figures, draw them in two processes."""
    parent_end.close()
    import io

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    import nlgeval.figures  # noqa: F401  (what _render_figure uses, loaded while waiting)
    import nlgeval.report.drawing  # noqa: F401

    fig, ax = plt.subplots(figsize=(1, 1))
    ax.set_title("warm-up")
    fig.savefig(io.BytesIO(), format="png", dpi=20)
    plt.close(fig)
    import gc

    gc.freeze()  # full collections while drawing skip the ~200,000 objects loaded so far
    try:
        tasks = conn.recv()
    except EOFError:
        return
    try:
        conn.send(("ok", _draw_in_two(tasks)))
    except Exception as exc:  # reported to the parent, which raises it
        conn.send(("error", f"{type(exc).__name__}: {exc}"))
    conn.close()


def _draw_in_two(tasks: list[_FigureTask]) -> list[tuple[str, list[Path]]]:
    """Draw ``tasks`` here and in one forked copy of this process (largest drawings first,
    each to the side with less work), results in task order."""
    import os
    import pickle

    weight = [3.0 - _FIGURE_RANK.get(t[1], 2) for t in tasks]
    sides: tuple[list[int], list[int]] = ([], [])
    load = [0.0, 0.0]
    for i in sorted(range(len(tasks)), key=lambda i: -weight[i]):
        k = int(load[1] < load[0])
        sides[k].append(i)
        load[k] += weight[i]
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the copy: draw its half, send the results, leave without clean-up
        os.close(read)
        try:
            out: Any = [(i, _render_figure(tasks[i])) for i in sides[1]]
        except BaseException as exc:
            out = f"{type(exc).__name__}: {exc}"
        with os.fdopen(write, "wb") as pipe:
            pipe.write(pickle.dumps(out))
        os._exit(0)
    os.close(write)
    try:
        mine = [(i, _render_figure(tasks[i])) for i in sides[0]]
    finally:
        with os.fdopen(read, "rb") as pipe:
            theirs = pickle.loads(pipe.read())
        os.waitpid(pid, 0)
    if isinstance(theirs, str):
        raise RuntimeError(theirs)
    return [r for _, r in sorted(mine + theirs, key=lambda x: x[0])]


def start_figures(study: ValidationStudy, directory: Path, workers: int | None = None,
                  formats: Sequence[str] | str | None = None,
                  drawer: FigureDrawer | None = None,
                  ) -> Callable[[], dict[str, list[Path]]]:
    """Start drawing the figures of :func:`study_figures`; call the result to wait for them.

    With ``workers`` > 1 (default: 2 where processes can be forked, else 1) the figures are
    drawn by forked processes while the caller goes on (the report writes its tables and CSVs
    meanwhile); with 1 they are drawn here when the result is called; with a ``drawer``
    (:class:`FigureDrawer`, started earlier) by that process and its copy. Same files either
    way. ``formats``: see :func:`figure_formats` (default PNG only, the format the page shows).

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
    ['forest', 'heatmap', 'scatter']
    """
    import multiprocessing as mp
    import os

    fmts = figure_formats(formats)
    specs = _figure_specs(study) if fmts else []
    # the largest drawings first, so that two workers finish together
    specs.sort(key=lambda spec: _FIGURE_RANK.get(spec[1], 2))
    tasks = [(stem, kind, data, str(directory), fmts) for stem, kind, data in specs]
    if drawer is not None and tasks:
        wait_drawn = drawer.draw(tasks)
        return lambda: _in_page_order(wait_drawn())
    if workers is None:
        workers = 2 if "fork" in mp.get_all_start_methods() else 1
    workers = max(1, min(workers, len(tasks), os.cpu_count() or 1))
    if workers == 1:
        return lambda: _in_page_order(dict(_render_figure(t) for t in tasks))
    from concurrent.futures import ProcessPoolExecutor

    # fork: the workers inherit the loaded modules; only matplotlib is imported there
    pool = ProcessPoolExecutor(workers, mp_context=mp.get_context("fork"))
    futures = [pool.submit(_render_figure, t) for t in tasks]

    def wait() -> dict[str, list[Path]]:
        try:
            return _in_page_order(dict(f.result() for f in futures))
        finally:
            pool.shutdown()

    return wait


def _in_page_order(figures: dict[str, list[Path]]) -> dict[str, list[Path]]:
    """The forest plot (the summary), then the heatmaps, then the scatter grids."""
    rank = {"forest": 0, "heatmap": 1, "scatter": 2}
    return dict(sorted(figures.items(), key=lambda kv: rank.get(kv[0].split("_")[0], 3)))


def study_figures(study: ValidationStudy, directory: Path, workers: int | None = None,
                  formats: Sequence[str] | str | None = None) -> dict[str, list[Path]]:
    """The figures report.html shows: a scatter grid per criterion (system means; at most
    :data:`SCATTER_PANELS` metrics, the best-agreeing when there are more), a heatmap of r per
    level (best agreement first) and one forest plot (r with its bootstrap interval per
    metric, criterion and level).

    Returns ``{stem: [paths]}``, one path per format (:func:`figure_formats`: PNG, plus PDF or
    SVG on request). The figures are independent, so up to ``workers`` forked processes draw
    them (see :func:`start_figures`); the files do not depend on ``workers``.

    Parameters
    ----------
    study : ValidationStudy
        The study to draw.
    directory : Path
        Where the figure files are written.
    workers : int, optional
        Maximum number of drawing processes; default ``None``: 2 where processes fork, else 1.
    formats : sequence of str or str, optional
        Extra figure formats; default ``None``: PNG only.

    Returns
    -------
    dict of str to list of Path
        The files written, by figure stem.

    Examples
    --------
    >>> from nlgeval.report.study import example_study
    >>> study = example_study()  # BLEU on 40 E2E inputs, system level
    >>> import tempfile
    >>> from pathlib import Path
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     figures = study_figures(study, Path(tmp), workers=1, formats="pdf")
    ...     [p.name for p in figures["heatmap_system"]]
    ['heatmap_system.png', 'heatmap_system.pdf']
    """
    return start_figures(study, directory, workers, formats)()


def write_report(study: ValidationStudy, out_dir: str | Path,
                 extra_record: dict[str, Any] | None = None,
                 figures: Sequence[str] | str | None = None,
                 drawer: FigureDrawer | None = None) -> dict[str, Any]:
    """Write tables, figures, CSVs, report.html and run.json; return the run record.

    ``figures``: the figure formats (:func:`figure_formats`; default PNG, the format the page
    shows; ``"png,pdf"`` adds PDF for a paper, ``"none"`` draws none).

    Parameters
    ----------
    study : ValidationStudy
        The study to report.
    out_dir : str or Path
        The report folder (created if needed).
    extra_record : dict, optional
        Entries added to the run record; default ``None``.
    figures : sequence of str or str, optional
        The figure formats (see above); default ``None``: PNG.
    drawer : FigureDrawer, optional
        A drawing process started earlier (:func:`figure_drawer`); default: forked here.

    Returns
    -------
    dict
        The run record written to ``run.json``.

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
    wait_figures = start_figures(study, out / "figures", formats=figures, drawer=drawer)
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
    drawn = wait_figures()
    t3 = time.perf_counter()
    for paths in drawn.values():
        written += [str(p.relative_to(out)) for p in paths]
    # every stage in run.json, report writing included (but the page and run.json). The
    # figures, drawn by other processes, take the wall time until the last one is written.
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
    (out / "report.html").write_text(render_html(study, tables, drawn, record),
                                     encoding="utf-8")
    (out / "run.json").write_text(json.dumps(jsonable(record), indent=2, ensure_ascii=False)
                                  + "\n", encoding="utf-8")
    return record
