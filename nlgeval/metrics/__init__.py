"""Automatic metrics: one adapter per metric over well-kept libraries, with a registry.

>>> from nlgeval.metrics import get_metric
>>> m = get_metric("bleu:lowercase=true")
>>> m.corpus_score(["The cat sat on the mat"], [["the cat sat on the mat"]])
100.0

See :mod:`nlgeval.metrics.base` for the interface, :mod:`nlgeval.metrics.registry` for names
and plugins, and :func:`nlgeval.metrics.scoring.score_corpus` to score a whole corpus.
"""

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
]
