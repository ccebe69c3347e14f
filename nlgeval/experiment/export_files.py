"""``nlgeval experiment export DIR --out FOLDER``: everything a study collected, as files an
analysis reads directly.

``ratings.csv`` is the export of :func:`nlgeval.experiment.export.export_ratings`: the tidy
columns ``rater, item, system, criterion, score`` first (``nlgeval validate --human``,
``compare`` and ``agreement`` read them), then the mode's own columns and the timing and
quality-control columns. For relative (pairwise) judgements ``system`` and ``system_b`` are the
pair and ``score`` the preference for ``system`` (the shape ``nlgeval compare`` reads as
pairwise judgements). Span modes also write ``spans.csv`` (one row per marked error span) and
best-worst scaling its raw choices (``choices.csv``) when the mode provides them. Next to
them: ``flags.csv`` (the quality flags per evaluator) and, when the study has an exit
questionnaire, ``questionnaire.csv``.

Examples
--------
>>> import tempfile
>>> from nlgeval.experiment.sandbox import example_experiment
>>> with example_experiment() as (store, cfg), tempfile.TemporaryDirectory() as tmp:
...     files = write_export(store, cfg, Path(tmp) / "out")
...     sorted(files)
['flags', 'questionnaire', 'ratings']
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from nlgeval.experiment.config import ExperimentConfig
from nlgeval.experiment.export import export_questionnaire, export_ratings, quality_flags

__all__ = ["write_export"]


def _extra_tables(store: Any, cfg: ExperimentConfig) -> dict[str, pd.DataFrame]:
    """The mode's own tables (``spans``, ``choices``), when its mode provides them through
    an ``export_tables(store, cfg)`` hook."""
    mode = getattr(cfg, "mode_impl", None)
    hook = getattr(mode, "export_tables", None)
    return dict(hook(store, cfg)) if hook is not None else {}


def write_export(
    store: Any,
    cfg: ExperimentConfig,
    out: str | Path,
    *,
    include_practice: bool = False,
    include_checks: bool = False,
) -> dict[str, Path]:
    """Write the study's export files into the folder ``out`` (see the module docstring);
    returns the path of each table by name (``ratings``, ``flags``, ...).

    Examples
    --------
    See the module docstring.
    """
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    tables: dict[str, pd.DataFrame] = {
        "ratings": export_ratings(store, cfg, include_practice=include_practice,
                                  include_checks=include_checks),
        "flags": quality_flags(store, cfg),
    }
    if cfg.questionnaire:
        tables["questionnaire"] = export_questionnaire(store)
    tables.update(_extra_tables(store, cfg))
    paths = {}
    for name, df in tables.items():
        paths[name] = out / f"{name}.csv"
        df.to_csv(paths[name], index=False)
    return paths
