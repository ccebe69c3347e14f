"""The report figures place their titles without matplotlib's automatic placement where it
cannot move them (issue 29, figures): the PNGs are byte-identical to those drawn with the
automatic placement, and where the y axis shows an offset text the automatic placement stays."""

from __future__ import annotations

import io
from typing import Any

import matplotlib
import numpy as np
import pandas as pd
import pytest

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from nlgeval.report import drawing  # noqa: E402


def _png(fig: Any) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110)
    plt.close(fig)
    return buf.getvalue()


def _auto_title(ax: Any, title: str, **kwargs: Any) -> None:
    ax.set_title(title, **kwargs)  # matplotlib's automatic placement (the previous code)


def _scatter(rng: np.random.Generator, y_shift: float, y_scale: float) -> dict[str, Any]:
    panels = []
    for m in range(int(rng.integers(1, 7))):
        x = rng.normal(size=9)
        x[rng.integers(0, 9)] = np.nan
        y = y_shift + y_scale * (x + rng.normal(size=9))
        panels.append({"metric": f"metric_{m}", "x": x, "y": y,
                       "title": f"metric_{m} with a long name {m}  r = 0.{m}1"})
    return {"panels": panels, "criterion": "quality", "suptitle": "demo"}


@pytest.mark.parametrize("seed", range(4))
def test_scatter_pixels_equal_automatic_placement(monkeypatch: pytest.MonkeyPatch,
                                                  seed: int) -> None:
    rng = np.random.default_rng(seed)
    # ordinary ratings, near-constant ones, and scales that give the y axis an offset text
    for shift, scale in ((3.0, 1.0), (50.0, 1e-9), (1e200, 1e190), (1e-200, 1e-201),
                         (100.0, 1e-3)):
        data = _scatter(rng, shift, scale)
        fast = _png(drawing.draw_scatter(plt, data))
        with monkeypatch.context() as m:
            m.setattr(drawing, "_set_title", _auto_title)
            auto = _png(drawing.draw_scatter(plt, data))
        assert fast == auto, (shift, scale)


def test_heatmap_and_forest_pixels_equal_automatic_placement(
        monkeypatch: pytest.MonkeyPatch) -> None:
    r = pd.DataFrame({"q": [0.8, -0.5, np.nan], "f": [0.1, 0.2, 0.3]}, index=["a", "bb", "c"])
    heat = {"r": r, "lo": r - 0.1, "hi": r + 0.1, "p": r * 0 + 0.01, "alpha": 0.05,
            "title": "heatmap"}
    cell = {"r": np.array([0.8, 0.3, np.nan]), "lo": np.array([0.7, 0.1, np.nan]),
            "hi": np.array([0.9, 0.5, np.nan]), "p": np.array([0.001, 0.2, np.nan])}
    forest = {"metrics": ["a", "bb", "c"], "criteria": ["q", "f"], "levels": ["system"],
              "cells": {("system", "q"): cell, ("system", "f"): cell}, "human": {},
              "alpha": 0.05, "title": "forest"}
    fast = [_png(drawing.draw_heatmap(plt, heat)), _png(drawing.draw_forest(plt, forest))]
    with monkeypatch.context() as m:
        m.setattr(drawing, "_set_title", _auto_title)
        m.setitem(matplotlib.rcParams, "axes.titley", None)
        heat_auto = _png(drawing.draw_heatmap(plt, heat))
    # the forest fixes its titles itself: compare with the automatic placement by hand
    orig = matplotlib.axes.Axes.set_title

    def auto(self: Any, label: str, *args: Any, **kwargs: Any) -> Any:
        kwargs.pop("y", None)
        return orig(self, label, *args, **kwargs)

    with monkeypatch.context() as m:
        m.setattr(matplotlib.axes.Axes, "set_title", auto)
        forest_auto = _png(drawing.draw_forest(plt, forest))
    assert fast == [heat_auto, forest_auto]


def test_offset_text_keeps_automatic_placement() -> None:
    fig, ax = plt.subplots()
    ax.plot([0, 1], [1e6 + 1, 1e6 + 2])
    drawing._set_title(ax, "t")
    assert ax._autotitlepos is True  # matplotlib may move it above the offset text
    ax2 = fig.add_subplot(2, 1, 2)
    ax2.plot([0, 1], [1, 2])
    drawing._set_title(ax2, "t")
    assert ax2._autotitlepos is False
    plt.close(fig)
