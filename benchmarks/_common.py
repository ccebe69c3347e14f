"""Helpers shared by the benchmark scripts (run as ``.venv/bin/python benchmarks/bench_x.py``)."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import numpy as np

T = TypeVar("T")

_BESIDE_CHECKOUT = Path(__file__).resolve().parents[2] / "shared" / "corpora"


def corpora_dir() -> str | None:
    """The folder laid out like the bundled corpora (docs/corpora.md): ``$NLGEVAL_DATA`` (what
    ``make bench`` sets), else the development layout's folder beside the checkout when it
    exists, else ``None`` (the loaders then download into the cache)."""
    env = os.environ.get("NLGEVAL_DATA")
    if env:
        return env
    return str(_BESIDE_CHECKOUT) if _BESIDE_CHECKOUT.is_dir() else None


def zoo_criterion(n_metrics: int, seed: int = 26) -> tuple[np.ndarray, list[np.ndarray]]:
    """One criterion shaped like the metric zoo of ``bench_metric_zoo.py``: 11 systems x 100
    items, human means of 3 raters on a 1-5 scale (ties), and ``n_metrics`` metric matrices
    of growing noise; every third an LLM judge (integer scores 1-5, many ties), every fifth
    with 5 % missing cells (NaN)."""
    rng = np.random.default_rng(seed)
    quality = rng.normal(size=(11, 1)) + rng.normal(size=(11, 100))
    human = np.clip(np.round((3 + quality) * 3) / 3, 1, 5)  # means of 3 raters, 1-5
    metrics = []
    for k in range(n_metrics):
        m = quality + rng.normal(scale=0.5 + k % 4, size=quality.shape)
        if k % 3 == 2:  # an LLM judge: integer scores, many ties
            m = np.clip(np.round(3 + m), 1, 5)
        if k % 5 == 4:
            m[rng.random(m.shape) < 0.05] = np.nan
        metrics.append(m)
    return human, metrics


def cpu_timed(fn: Callable[[], T]) -> tuple[float, T]:
    """``(CPU seconds, result)`` of ``fn()``: ``time.process_time``, all threads of the
    process (on a shared machine CPU time moves less with the load than wall time)."""
    t0 = time.process_time()
    out = fn()
    return time.process_time() - t0, out
