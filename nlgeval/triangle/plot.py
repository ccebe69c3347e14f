"""The saw-tooth: exact power of the triangle test against the number of judges (PNG + PDF)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from nlgeval.figures import save_figure
from nlgeval.triangle.critical import TestType
from nlgeval.triangle.planning import power_curve, sample_size


def plot_power_curve(
    path_stem: str | Path,
    *,
    alpha: float,
    beta: float,
    pd: float,
    test: TestType = "difference",
    n_max: int | None = None,
    formats: Sequence[str] = ("png", "pdf"),
) -> list[Path]:
    """Plot exact power for n = 1..n_max with the target, the first and the stable n marked.

    Writes ``<path_stem>.png`` and ``<path_stem>.pdf`` (or the given ``formats``; matplotlib,
    Agg backend) and returns the paths.

    Examples:
        >>> import tempfile
        >>> with tempfile.TemporaryDirectory() as tmp:
        ...     paths = plot_power_curve(Path(tmp) / "saw", alpha=0.05, beta=0.2, pd=0.3,
        ...                              formats=("png",))
        ...     print([p.name for p in paths])
        ['saw.png']
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ss = sample_size(alpha, beta, pd, test)
    n_max = n_max or int(max(ss.judges_stable * 1.3, ss.judges_stable + 10))
    ns = np.arange(1, n_max + 1)
    pw = power_curve(ns, alpha, beta, pd, test)
    fig, ax = plt.subplots(figsize=(7, 3.6))
    ax.step(ns, pw, where="mid", color="#1f77b4", lw=1.2, label="exact power")
    ax.axhline(ss.target_power, color="grey", ls="--", lw=1,
               label=f"target {ss.target_power:.3g}")
    ax.axvline(ss.judges, color="#d62728", ls=":", lw=1.2, label=f"first n = {ss.judges}")
    ax.axvline(ss.judges_stable, color="#2ca02c", ls="-.", lw=1.2,
               label=f"stable n = {ss.judges_stable}")
    ax.set_xlabel("number of judges n")
    ax.set_ylabel("power" if test == "difference" else "P(declare similar | pd = 0)")
    ax.set_title(
        f"Triangle test of {test}: alpha = {alpha:g}, beta = {beta:g}, pd = {100 * pd:g}%",
        fontsize=10,
    )
    ax.set_xlim(1, n_max)
    ax.set_ylim(0, 1.02)
    ax.legend(loc="lower right", fontsize=8)
    fig.tight_layout()
    stem = Path(path_stem)
    return save_figure(fig, stem.parent, stem.with_suffix("").name, formats)
