"""The report's figures drawn from plain data (arrays, frames, strings): scatter grids, heatmaps
and the forest plot. :mod:`nlgeval.report.writer` builds the data and runs these in worker
processes; nothing here reads a study, so a figure costs only its drawing.

Layouts are computed from the text they hold (panel titles are wrapped to the panel width and
the gaps grow with the number of title lines), not by ``tight_layout``: a second text-layout
pass per figure was a third of the figures' time, and a fixed layout let long metric names
run into the neighbouring panels.
"""

from __future__ import annotations

import textwrap
from typing import Any

import numpy as np

from nlgeval.report.corrections import mark

#: Fixed margins of the scatter grids, in inches (left, right, bottom, top, horizontal gap,
#: vertical gap) for one-line titles; each extra title line adds :data:`_LINE` inches.
_SCATTER_MARGINS = (0.65, 0.12, 0.45, 0.55, 0.65, 0.62)
_LINE = 0.17          # inches per extra 9-point title line
_CHAR = 0.085         # generous width of a 9-point character, in inches (wrapping)


def _set_title(ax: Any, title: str, **kwargs: Any) -> None:
    """``ax.set_title`` at the top of the axes, without matplotlib's automatic placement when
    it cannot move the title: that placement measures every y tick label of the axes before
    drawing, looking for an offset text ("1e6", "+100") in the title's way, about a fifth of a
    figure's drawing time. Where the y axis will show an offset text (its formatter on the
    final tick positions says so), the automatic placement stays. Same pixels either way
    (tests/test_report_figures.py)."""
    axis = ax.yaxis
    formatter = axis.get_major_formatter()
    offset = ""
    if hasattr(formatter, "get_offset"):
        formatter.set_locs(axis.get_majorticklocs())
        offset = formatter.get_offset()
    ax.set_title(title, **kwargs, **({} if offset else {"y": 1.0}))


def _wrap(text: str, width_in: float, char_in: float = _CHAR) -> str:
    """``text`` wrapped to lines that fit ``width_in`` inches (long names broken)."""
    width = max(8, int(width_in / char_in))
    return "\n".join(textwrap.wrap(text, width, break_on_hyphens=False)) or text


def draw_scatter(plt: Any, data: dict[str, Any]) -> Any:
    """One panel per metric: system means of the metric against the criterion, with the OLS
    line; titles wrapped to the panel width, gaps sized to the longest title.

    Examples
    --------
    >>> import matplotlib; matplotlib.use("Agg")
    >>> import matplotlib.pyplot as plt, numpy as np
    >>> x = np.arange(5.0)
    >>> fig = draw_scatter(plt, {"criterion": "q", "suptitle": "demo", "panels": [
    ...     {"metric": "m", "x": x, "y": x ** 2, "title": "m  r = 0.96"}]})
    >>> fig.axes[0].get_title()
    'm  r = 0.96'
    >>> plt.close(fig)
    """
    panels = data["panels"]
    ncol = min(4, len(panels))
    nrow = int(np.ceil(len(panels) / ncol))
    left, right, bottom, top, gap_w, gap_h = _SCATTER_MARGINS
    w = 3.2 * ncol
    panel_w = (w - left - right - (ncol - 1) * gap_w) / ncol
    titles = [_wrap(p["title"], panel_w) for p in panels]
    extra = max(t.count("\n") for t in titles) * _LINE
    suptitle = _wrap(data["suptitle"], w - 0.4, 0.09)
    gap_h += extra
    top += extra + suptitle.count("\n") * _LINE
    h = 2.9 * nrow + extra * nrow + suptitle.count("\n") * _LINE
    fig, axes = plt.subplots(nrow, ncol, figsize=(w, h), squeeze=False)
    panel_h = (h - bottom - top - (nrow - 1) * gap_h) / nrow
    fig.subplots_adjust(left=left / w, right=1 - right / w, bottom=bottom / h, top=1 - top / h,
                        wspace=gap_w / panel_w, hspace=gap_h / panel_h)
    for ax, panel, title in zip(axes.ravel(), panels, titles, strict=False):
        x, y = panel["x"], panel["y"]
        ok = np.isfinite(x) & np.isfinite(y)
        ax.scatter(x[ok], y[ok], s=18, color="#1f77b4")
        if ok.sum() >= 2 and np.ptp(x[ok]) > 0:
            b, a = np.polyfit(x[ok], y[ok], 1)
            xs = np.linspace(x[ok].min(), x[ok].max(), 20)
            ax.plot(xs, a + b * xs, color="#d62728", lw=1)
        ax.set_xlabel(_xlabel(panel["metric"], panel_w), fontsize=8)
        ax.set_ylabel(data["criterion"], fontsize=8)
        ax.tick_params(labelsize=7)
        ax.locator_params(nbins=4)  # fewer tick labels: text is most of the drawing time
        _set_title(ax, title, fontsize=9)  # after the ticks are set
    for ax in axes.ravel()[len(panels):]:
        ax.axis("off")
    fig.suptitle(suptitle, fontsize=10, y=1 - 0.12 / h, va="top")
    return fig


def _xlabel(metric: str, width_in: float) -> str:
    """``metric (mean per system)`` when it fits the panel, else the name alone (shortened
    with an ellipsis when even that does not fit)."""
    fits = max(8, int(width_in / 0.075))
    full = f"{metric} (mean per system)"
    if len(full) <= fits:
        return full
    return metric if len(metric) <= fits else metric[:fits - 1] + "…"


def draw_heatmap(plt: Any, data: dict[str, Any]) -> Any:
    """Metric x criterion heatmap of r (rows in the given order, best agreement first), with
    stars (corrected p < alpha), daggers (significant, yet the interval contains 0) and, while
    the matrix is small enough to read, the bootstrap interval.

    Examples
    --------
    >>> import matplotlib; matplotlib.use("Agg")
    >>> import matplotlib.pyplot as plt, pandas as pd
    >>> r = pd.DataFrame({"q": [0.8, 0.5]}, index=["a", "b"])
    >>> fig = draw_heatmap(plt, {"r": r, "lo": r - 0.1, "hi": r + 0.1, "p": r * 0,
    ...                          "alpha": 0.05, "title": "demo"})
    >>> fig.axes[0].texts[0].get_text()
    '0.80*\\n[0.70, 0.90]'
    >>> plt.close(fig)
    """
    mat, lo, hi, pv = data["r"], data["lo"], data["hi"], data["p"]
    rows, cols = mat.shape
    small = rows <= 20           # intervals in the cells only while they stay legible
    row_h = 0.55 if small else 0.24
    font = 7 if small else 6
    width = 1.6 + max(len(str(m)) for m in mat.index) * 0.06 + 1.2 * cols
    fig, ax = plt.subplots(figsize=(width, 0.9 + row_h * rows))
    im = ax.imshow(mat.to_numpy(float), cmap="RdBu_r", vmin=-1, vmax=1, aspect="auto")
    r_all, p_all = mat.to_numpy(float), pv.to_numpy(float)
    lo_all, hi_all = lo.to_numpy(float), hi.to_numpy(float)
    for i in range(rows):
        for j in range(cols):
            r = r_all[i, j]
            txt = mark(r, p_all[i, j], lo_all[i, j], hi_all[i, j], data["alpha"], 2)
            if small and np.isfinite(r) and np.isfinite(lo_all[i, j]):
                txt += f"\n[{lo_all[i, j]:.2f}, {hi_all[i, j]:.2f}]"
            ax.text(j, i, txt, ha="center", va="center", fontsize=font,
                    color="white" if np.isfinite(r) and abs(r) > 0.6 else "black")
    ax.set_xticks(range(cols), mat.columns, rotation=30, ha="right", fontsize=8)
    ax.set_yticks(range(rows), mat.index, fontsize=font + 1)
    _set_title(ax, _wrap(data["title"] + ("" if small else "; intervals in the forest plot"),
                         width - 1.0, 0.075), fontsize=9)
    fig.colorbar(im, ax=ax, shrink=0.8 if small else 0.3)
    fig.tight_layout()  # tick labels of any length: measured, once per heatmap
    return fig


def draw_forest(plt: Any, data: dict[str, Any]) -> Any:
    """Forest plot: each metric's r with its bootstrap interval, one panel per criterion
    (columns) and level (rows), metrics in one order for all panels (best agreement first);
    filled marks p < alpha; the dashed line is the human reference where there is one.

    Examples
    --------
    >>> import matplotlib; matplotlib.use("Agg")
    >>> import matplotlib.pyplot as plt, numpy as np
    >>> cell = {"r": np.array([0.8, 0.3]), "lo": np.array([0.7, 0.1]),
    ...         "hi": np.array([0.9, 0.5]), "p": np.array([0.001, 0.2])}
    >>> fig = draw_forest(plt, {"metrics": ["a", "b"], "criteria": ["q"], "levels": ["system"],
    ...                         "cells": {("system", "q"): cell}, "human": {}, "alpha": 0.05,
    ...                         "title": "demo"})
    >>> len(fig.axes)
    1
    >>> plt.close(fig)
    """
    metrics, criteria, levels = data["metrics"], data["criteria"], data["levels"]
    n = len(metrics)
    row_in = 0.16 if n <= 20 else 0.12
    font = 7 if n <= 20 else 6
    label_w = 0.5 + 0.065 * max(len(m) for m in metrics)
    panel_h = 0.35 + row_in * n
    w = label_w + 0.3 + 1.9 * len(criteria)
    h = 0.75 + (panel_h + 0.45) * len(levels)
    fig, axes = plt.subplots(len(levels), len(criteria), figsize=(w, h), squeeze=False,
                             sharey=True)
    fig.subplots_adjust(left=label_w / w, right=1 - 0.15 / w, top=1 - 0.6 / h,
                        bottom=0.35 / h, wspace=0.08, hspace=0.45 / panel_h)
    ypos = np.arange(n)
    lo, hi = _forest_range(data["cells"].values())
    for li, level in enumerate(levels):
        for ci, crit in enumerate(criteria):
            ax = axes[li, ci]
            cell = data["cells"].get((level, crit))
            if cell is not None:
                sig = np.isfinite(cell["p"]) & (cell["p"] < data["alpha"])
                ok = np.isfinite(cell["lo"]) & np.isfinite(cell["hi"])
                ax.hlines(ypos[ok], cell["lo"][ok], cell["hi"][ok], color="#1f77b4", lw=1)
                ax.plot(cell["r"][sig], ypos[sig], "o", ms=3, color="#1f77b4")
                ax.plot(cell["r"][~sig], ypos[~sig], "o", ms=3, mfc="white", color="#1f77b4")
            ref = data["human"].get((level, crit))
            if ref is not None and np.isfinite(ref):
                ax.axvline(ref, color="#555", lw=0.8, ls="--")
            ax.axvline(0, color="#bbb", lw=0.6)
            ax.set_xlim(lo, hi)
            ax.set_title(f"{crit}, {level}", fontsize=8, y=1.0)  # y ticks: metric names
            ax.tick_params(labelsize=font)
            ax.locator_params(axis="x", nbins=3)  # labels of neighbouring panels stay apart
    axes[0, 0].set_yticks(ypos, metrics)
    axes[0, 0].set_ylim(n - 0.5, -0.5)
    fig.suptitle(data["title"], fontsize=9, y=1 - 0.12 / h, va="top")
    return fig


def _forest_range(cells: Any) -> tuple[float, float]:
    """x limits of the forest panels: the intervals and 0, within [-1, 1], a small margin."""
    values = [0.0]
    for cell in cells:
        for key in ("r", "lo", "hi"):
            v = np.asarray(cell[key], dtype=float)
            values += v[np.isfinite(v)].tolist()
    lo, hi = max(-1.0, min(values)), min(1.0, max(values))
    pad = 0.05 * max(hi - lo, 0.2)
    return lo - pad, hi + pad


DRAW = {"scatter": draw_scatter, "heatmap": draw_heatmap, "forest": draw_forest}


def save_options(kind: str, data: dict[str, Any]) -> dict[str, Any]:
    """How to write a figure: 110 dpi, as a 256-colour palette PNG when the study is large
    (more than 20 metrics, or a full scatter grid), which keeps a 70-metric report.html well
    under 2 MB (the figures are flat colours; the palette costs a few tenths of a second).

    Examples
    --------
    >>> save_options("forest", {"metrics": ["a"] * 72}), save_options("scatter", {"panels": [1]})
    ({'dpi': 110, 'palette': True}, {'dpi': 110, 'palette': False})
    """
    size = {"forest": lambda d: len(d["metrics"]), "heatmap": lambda d: d["r"].shape[0],
            "scatter": lambda d: 21 if len(d["panels"]) > 8 else 0}[kind](data)
    return {"dpi": 110, "palette": size > 20}
