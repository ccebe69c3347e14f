"""Forest plots of a meta-analysis of correlations (Lewis & Clarke 2001).

One row per study (a square whose area is proportional to its random-effects weight and a
line for its ``confidence_level`` interval, from Fisher's z: ``tanh(z +- crit/sqrt(n-3))``),
then the pooled estimate as a diamond spanning its confidence interval, and the prediction
interval as a line through the diamond (Riley et al. 2011), on the correlation scale.
:func:`forest_data` returns the coordinates that :func:`forest_plot` draws, so they can be
checked (tests) or drawn with another library.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from nlgeval.meta_analysis.pooling import RandomEffects

__all__ = ["forest_data", "forest_plot"]


def forest_data(studies: pd.DataFrame, fit: RandomEffects) -> dict[str, Any]:
    """Coordinates of the forest plot: ``rows`` (label, y, r, low, high, weight per study,
    top to bottom at y = k, ..., 1), ``diamond`` (x and y of its 4 corners at y = 0) and
    ``prediction`` (x of both ends, NaN when undefined), all on the correlation scale.

    ``studies`` needs ``study, r, n`` (``vi`` when the variance is not ``1/(n - 3)``).

    Parameters
    ----------
    studies : DataFrame
        One row per study (``study, r, n`` and optionally ``vi``).
    fit : RandomEffects
        The pooled model of these studies.

    Returns
    -------
    dict
        ``rows``, ``diamond`` and ``prediction`` (above).

    Examples
    --------
    >>> from nlgeval.meta_analysis.pooling import random_effects
    >>> t = pd.DataFrame({"study": ["a", "b"], "r": [0.3, 0.5], "n": [103, 103]})
    >>> fit = random_effects(np.arctanh(t["r"]), 1 / (t["n"] - 3), method="dl")
    >>> d = forest_data(t, fit)
    >>> [row["y"] for row in d["rows"]], d["diamond"]["y"]
    ([2, 1], [0.0, 0.3, 0.0, -0.3])
    """
    crit = float(stats.norm.isf((1 - fit.confidence_level) / 2))
    z = np.arctanh(studies["r"].to_numpy(dtype=float))
    vi = (studies["vi"].to_numpy(dtype=float) if "vi" in studies.columns
          else 1.0 / (studies["n"].to_numpy(dtype=float) - 3.0))
    se = np.sqrt(vi)
    k = len(studies)
    weights = fit.weights if len(fit.weights) == k else tuple(np.full(k, 1.0 / k))
    rows = [{"label": str(s), "y": k - i, "r": float(np.tanh(z[i])),
             "low": float(np.tanh(z[i] - crit * se[i])),
             "high": float(np.tanh(z[i] + crit * se[i])), "weight": float(weights[i])}
            for i, s in enumerate(studies["study"])]
    lo, mid, hi = (float(np.tanh(x)) for x in (fit.ci_low, fit.statistic, fit.ci_high))
    return {"rows": rows,
            "diamond": {"x": [lo, mid, hi, mid], "y": [0.0, 0.3, 0.0, -0.3]},
            "prediction": [float(np.tanh(fit.pi_low)), float(np.tanh(fit.pi_high))]}


def forest_plot(studies: pd.DataFrame, fit: RandomEffects, title: str = "") -> Any:
    """A matplotlib figure of :func:`forest_data` (squares sized by weight, diamond, line
    for the prediction interval, a dotted line at r = 0).

    Parameters
    ----------
    studies : DataFrame
        One row per study, as for :func:`forest_data`.
    fit : RandomEffects
        The pooled model of these studies.
    title : str, default ""
        Title of the figure.

    Returns
    -------
    matplotlib.figure.Figure
        The forest plot.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> from nlgeval.meta_analysis.pooling import random_effects
    >>> t = pd.DataFrame({"study": ["a", "b", "c"], "r": [0.3, 0.5, 0.4], "n": [50, 80, 60]})
    >>> fig = forest_plot(t, random_effects(np.arctanh(t["r"]), 1 / (t["n"] - 3)))
    >>> len(fig.axes[0].patches)       # 3 squares and the diamond
    4
    """
    import matplotlib.pyplot as plt
    from matplotlib.patches import Polygon, Rectangle

    data = forest_data(studies, fit)
    k = len(data["rows"])
    fig, ax = plt.subplots(figsize=(6.4, 1.2 + 0.35 * (k + 2)))
    biggest = max(r["weight"] for r in data["rows"])
    for row in data["rows"]:
        ax.plot([row["low"], row["high"]], [row["y"], row["y"]], color="#333", lw=1)
        side = 0.12 + 0.28 * np.sqrt(row["weight"] / biggest)
        ax.add_patch(Rectangle((row["r"] - side * 0.05, row["y"] - side / 2), side * 0.1, side,
                               color="#333"))
    pl, ph = data["prediction"]
    if np.isfinite(pl) and np.isfinite(ph):
        ax.plot([pl, ph], [0, 0], color="#c33", lw=1.5, label="prediction interval")
    ax.add_patch(Polygon(np.column_stack([data["diamond"]["x"], data["diamond"]["y"]]),
                         closed=True, color="#1f4e79", label="pooled r (CI)", zorder=3))
    ax.axvline(0, color="#999", ls=":", lw=1)
    labels = [r["label"] for r in data["rows"]] + ["Random effects"]
    ax.set_yticks([r["y"] for r in data["rows"]] + [0], labels)
    ax.set_ylim(-1, k + 1)
    xs = [r["low"] for r in data["rows"]] + [r["high"] for r in data["rows"]] + [pl, ph]
    finite = [x for x in xs if np.isfinite(x)]
    ax.set_xlim(max(-1.0, min(finite) - 0.05), min(1.0, max(finite) + 0.05))
    ax.set_xlabel("Pearson r (95% CI)" if abs(fit.confidence_level - 0.95) < 1e-9
                  else f"Pearson r ({fit.confidence_level:.0%} CI)")
    if title:
        ax.set_title(title, fontsize=10)
    ax.legend(loc="lower right", fontsize=7, frameon=False)
    fig.tight_layout()
    return fig
