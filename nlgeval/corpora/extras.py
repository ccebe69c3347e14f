"""What a published corpus brings besides its texts and ratings: its authors' metric scores and
the metrics worth computing on it.

A corpus loader module may define ``external_scores(folder)`` (metric scores published with the
corpus, in :mod:`nlgeval.scores`' tidy format) and ``DEFAULT_METRICS`` (the metric specs
``nlgeval validate`` computes when ``--metrics`` is not given); its descriptor may name the
``levels`` its paper reports (``nlgeval validate``'s default when ``--levels`` is not given).
REALSumm (Bhandari et al. 2020) does all three: its authors' ROUGE-1.5.5, BERTScore, MoverScore
and JS-2 scores, rouge-score's ROUGE family as defaults, and the system and item levels.
"""

from __future__ import annotations

import importlib
from pathlib import Path
from types import ModuleType

import pandas as pd

from nlgeval.corpora import ALIASES, REGISTRY
from nlgeval.corpora.store import locate


def _loader_module(name: str | Path) -> ModuleType | None:
    if isinstance(name, Path):
        return None
    key = str(name).strip().lower()
    reg = REGISTRY.get(ALIASES.get(key, key))
    return importlib.import_module(reg.module) if reg is not None else None


def published_scores(name: str | Path, data_dir: str | Path | None = None,
                     *, download: bool = True) -> list[pd.DataFrame]:
    """The metric scores published with corpus ``name`` (a list of one frame), or ``[]``.

    Examples
    --------
    >>> [sorted(set(f["metric"]))[-2:] for f in published_scores("realsumm")]
    [['rouge_l_precision', 'rouge_l_recall']]
    >>> published_scores("e2e")
    []
    """
    module = _loader_module(name)
    read = getattr(module, "external_scores", None)
    if module is None or read is None:
        return []
    reg = REGISTRY[ALIASES.get(str(name).strip().lower(), str(name).strip().lower())]
    return [read(locate(reg.descriptor, data_dir, download=download).folder)]


def default_metrics(name: str | Path) -> list[str] | None:
    """The metric specs to compute on corpus ``name`` by default, or ``None`` (nlgeval's
    general default set).

    Examples
    --------
    >>> default_metrics("realsumm")[:4]
    ['rouge1', 'rouge2', 'rougeL', 'rougeLsum']
    >>> default_metrics("e2e") is None
    True
    """
    specs = getattr(_loader_module(name), "DEFAULT_METRICS", None)
    return list(specs) if specs is not None else None


def default_levels(name: str | Path | None) -> list[str] | None:
    """The levels to report on corpus ``name`` by default -- its descriptor's ``levels``, the
    ones its paper reports -- or ``None`` (nlgeval's general default, segment and system).

    REALSumm: ``system`` and ``item`` (Bhandari et al. 2020's system level and summary level:
    per document across the systems, then averaged).

    Parameters
    ----------
    name : str, pathlib.Path or None
        A published corpus's name (a path, an ``mtme:`` test set or None: no corpus default).

    Returns
    -------
    list of str or None
        The level names, or None when the corpus sets none.

    Examples
    --------
    >>> default_levels("realsumm")
    ['system', 'item']
    >>> default_levels("e2e") is None, default_levels(None) is None
    (True, True)
    """
    if name is None or isinstance(name, Path):
        return None
    key = str(name).strip().lower()
    reg = REGISTRY.get(ALIASES.get(key, key))
    levels = reg.descriptor.levels if reg is not None else ()
    return list(levels) or None


__all__ = ["default_levels", "default_metrics", "published_scores"]
