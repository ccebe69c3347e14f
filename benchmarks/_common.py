"""Helpers shared by the benchmark scripts (run as ``.venv/bin/python benchmarks/bench_x.py``)."""

from __future__ import annotations

import os
from pathlib import Path

_BESIDE_CHECKOUT = Path(__file__).resolve().parents[2] / "shared" / "corpora"


def corpora_dir() -> str | None:
    """The folder laid out like the bundled corpora (docs/corpora.md): ``$NLGEVAL_DATA`` (what
    ``make bench`` sets), else the development layout's folder beside the checkout when it
    exists, else ``None`` (the loaders then download into the cache)."""
    env = os.environ.get("NLGEVAL_DATA")
    if env:
        return env
    return str(_BESIDE_CHECKOUT) if _BESIDE_CHECKOUT.is_dir() else None
