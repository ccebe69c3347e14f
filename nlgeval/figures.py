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
    palette: bool = False,
) -> list[Path]:
    """Write ``fig`` as ``directory/stem.<format>`` for each format and return the paths.

    The directory is created if needed; raster formats use ``dpi`` (vector formats ignore it);
    the figure is closed afterwards unless ``close=False`` (pyplot keeps open figures alive).
    ``palette=True`` writes PNG as an 8-bit palette image (256 colours, no dithering; Pillow):
    about a third of the bytes for plots of flat colours, for pages that embed large figures.

    Examples:
        >>> import tempfile
        >>> import matplotlib
        >>> matplotlib.use("Agg")
        >>> import matplotlib.pyplot as plt
        >>> fig, ax = plt.subplots()
        >>> _ = ax.plot([0, 1], [0, 1])
        >>> with tempfile.TemporaryDirectory() as tmp:
        ...     [p.name for p in save_figure(fig, tmp, "line", formats=("png",), palette=True)]
        ['line.png']
    """
    import matplotlib.pyplot as plt

    folder = Path(directory)
    folder.mkdir(parents=True, exist_ok=True)
    paths = [folder / f"{stem}.{fmt.lstrip('.')}" for fmt in formats]
    for path in paths:
        if palette and path.suffix == ".png":
            _save_palette_png(fig, path, dpi)
        else:
            fig.savefig(path, dpi=dpi)
    if close:
        plt.close(fig)
    return paths


def _save_palette_png(fig: Any, path: Path, dpi: int | None) -> None:
    """``fig`` as a 256-colour palette PNG (fast octree quantisation, no dithering)."""
    import io

    from PIL import Image

    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=dpi)
    buffer.seek(0)
    with Image.open(buffer) as image:
        quantised = image.convert("RGB").quantize(
            colors=256, method=Image.Quantize.FASTOCTREE, dither=Image.Dither.NONE)
    quantised.save(path, format="PNG", optimize=True)
