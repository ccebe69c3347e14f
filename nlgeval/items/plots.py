"""Figure 3 of the number-of-items study: rejection share against the number of items."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from nlgeval.figures import save_figure


def plot_curves(
    curves: pd.DataFrame,
    stem: str | Path,
    *,
    alpha: float = 0.1,
    thresholds: Sequence[float] = (0.10, 0.05, 0.01),
    formats: Sequence[str] = ("png", "pdf"),
) -> list[Path]:
    """One panel per method, one line per distribution; writes ``stem.png`` and ``stem.pdf``
    (or the given ``formats``) and returns the paths (Figure 3 of González-Corbelle et al. 2023).

    Examples:
        >>> import tempfile
        >>> curves = pd.DataFrame({"method": ["bootstrap"] * 4,
        ...                        "distribution": ["a", "a", "b", "b"], "size": [2, 3, 2, 3],
        ...                        "reject_share": [0.3, 0.1, 0.2, 0.05]})
        >>> with tempfile.TemporaryDirectory() as tmp:
        ...     [p.name for p in plot_curves(curves, Path(tmp) / "fig3", formats=("png",))]
        ['fig3.png']
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    methods = list(dict.fromkeys(curves["method"]))
    fig, axes = plt.subplots(1, len(methods), figsize=(6.0 * len(methods), 4.2), sharey=True,
                             squeeze=False)
    for ax, method in zip(axes[0], methods, strict=True):
        sub = curves[curves["method"] == method]
        for dist, g in sub.groupby("distribution", sort=False):
            ax.plot(g["size"], 100 * g["reject_share"], label=str(dist), linewidth=1.1)
        for thr in thresholds:
            ax.axhline(100 * thr, color="grey", linestyle=":", linewidth=0.8)
        ax.set_title({"bootstrap": "Bootstrap", "rwor": "Resampling without replacement"}.get(
            method, method))
        ax.set_xlabel("number of items per evaluator")
        ax.grid(alpha=0.3)
    axes[0][0].set_ylabel(f"% of replications with p < {alpha:g}")
    axes[0][-1].legend(fontsize=8)
    fig.tight_layout()
    stem = Path(stem)
    return save_figure(fig, stem.parent, stem.with_suffix("").name, formats)
