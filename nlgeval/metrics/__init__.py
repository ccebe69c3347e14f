"""Automatic metrics: one adapter per metric over well-kept libraries, with a registry.

>>> from nlgeval.metrics import get_metric
>>> m = get_metric("bleu:lowercase=true")
>>> m.corpus_score(["The cat sat on the mat"], [["the cat sat on the mat"]])
100.0

Options may also be keywords (``get_metric("bleu", lowercase=True)``). See
:mod:`nlgeval.metrics.base` for the interface, :mod:`nlgeval.metrics.registry` for names and
plugins, and :func:`score_corpus` (:mod:`nlgeval.metrics.scoring`) to score a whole corpus.
"""

from typing import Any

from nlgeval.metrics.base import Metric, Option, parse_metric_list, parse_spec
from nlgeval.metrics.registry import (
    ENTRY_POINT_GROUP,
    available_metrics,
    describe_metrics,
    get_metric,
    metric_class,
    register_metric,
)

__all__ = [
    "ENTRY_POINT_GROUP",
    "Metric",
    "Option",
    "available_metrics",
    "describe_metrics",
    "get_metric",
    "metric_class",
    "parse_metric_list",
    "parse_spec",
    "register_metric",
    "score_corpus",
]


def __getattr__(name: str) -> Any:
    # score_corpus is imported on first use: it needs pandas and nlgeval.corpus, which
    # `nlgeval --help` and plain metric use do not
    if name == "score_corpus":
        from nlgeval.metrics.scoring import score_corpus

        return score_corpus
    raise AttributeError(f"module 'nlgeval.metrics' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted([*globals(), "score_corpus"])
