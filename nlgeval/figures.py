"""Saving matplotlib figures: one helper for every figure the library writes.

Figures are written next to each other under one stem (``power.png``, ``power.pdf``) with the
Agg backend, so they work on machines without a display.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any


def save_figure(
    fig: Any,
    directory: str | Path,
    stem: str,
    formats: Sequence[str] = ("png", "pdf"),
    *,
    dpi: int | None = 150,
    close: bool = True,
) -> list[Path]:
    """Write ``fig`` as ``directory/stem.<format>`` for each format and return the paths.

    The directory is created if needed; raster formats use ``dpi`` (vector formats ignore it);
    the figure is closed afterwards unless ``close=False`` (pyplot keeps open figures alive).

    Examples:
        >>> import tempfile
        >>> import matplotlib
        >>> matplotlib.use("Agg")
        >>> import matplotlib.pyplot as plt
        >>> fig, ax = plt.subplots()
        >>> _ = ax.plot([0, 1], [0, 1])
        >>> with tempfile.TemporaryDirectory() as tmp:
        ...     [p.name for p in save_figure(fig, tmp, "line", formats=("png",))]
        ['line.png']
    """
    import matplotlib.pyplot as plt

    folder = Path(directory)
    folder.mkdir(parents=True, exist_ok=True)
    paths = [folder / f"{stem}.{fmt.lstrip('.')}" for fmt in formats]
    for path in paths:
        fig.savefig(path, dpi=dpi)
    if close:
        plt.close(fig)
    return paths
