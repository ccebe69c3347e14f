"""Score every output of a :class:`~nlgeval.corpus.Corpus` with one or more metrics.

``score_corpus(corpus, ["bleu", "rougeL:use_stemmer=true"])`` returns tidy segment scores
(``metric, system, item, score``) and corpus-level scores per system
(``system, metric, score, signature``). All systems are scored in one batch per metric, so each
item's references are preprocessed once and shared by the systems (see
:mod:`nlgeval.metrics.base`), identical outputs are scored once, statistics are cached on disk
(:mod:`nlgeval.metrics.cache`) and large batches use all cores.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from nlgeval.corpus import Corpus
from nlgeval.errors import InputError
from nlgeval.metrics.base import Metric, _validate_inputs
from nlgeval.metrics.cache import StatsCache
from nlgeval.metrics.registry import get_metric
from nlgeval.progress import progress_bar


@dataclass(frozen=True)
class ScoreResult:
    """Result of :func:`score_corpus`.

    ``segments``: one row per (metric, system, item) -- columns ``metric, system, item, score``.
    ``corpus_scores``: one row per (system, metric) -- ``system, metric, score, signature``.
    ``signatures``: metric label -> reproducibility signature.
    ``specs``: metric label -> canonical spec string (with options).
    ``higher_is_better``: metric label -> direction.
    """

    segments: pd.DataFrame
    corpus_scores: pd.DataFrame
    signatures: dict[str, str]
    specs: dict[str, str] = field(default_factory=dict)
    higher_is_better: dict[str, bool] = field(default_factory=dict)
    cache_hits: int = 0
    cache_misses: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {
            "corpus_scores": self.corpus_scores,
            "signatures": self.signatures,
            "specs": self.specs,
            "higher_is_better": self.higher_is_better,
            "cache": {"hits": self.cache_hits, "misses": self.cache_misses},
        }

    def wide(self) -> pd.DataFrame:
        """Segment scores with one column per metric: ``system, item, <metric>...``."""
        return (
            self.segments.pivot_table(
                index=["system", "item"], columns="metric", values="score", sort=False
            )
            .reset_index()
            .rename_axis(columns=None)
        )


def _labels(metrics: Sequence[Metric]) -> list[str]:
    """Metric names as labels; the full spec where the same name appears twice."""
    names = [m.name for m in metrics]
    labels = [m.name if names.count(m.name) == 1 else m.spec for m in metrics]
    if len(set(labels)) != len(labels):
        dup = sorted({x for x in labels if labels.count(x) > 1})
        raise InputError(f"metric(s) requested twice: {', '.join(dup)}")
    return labels


def score_corpus(
    corpus: Corpus,
    metrics: Sequence[str | Metric],
    *,
    systems: Sequence[str] | None = None,
    rated_only: bool = False,
    cache: bool = True,
    cache_dir: str | Path | None = None,
    n_jobs: int | None = None,
) -> ScoreResult:
    """Score the corpus's outputs with each metric, per segment and per system.

    Parameters
    ----------
    corpus:
        A :class:`~nlgeval.corpus.Corpus` with references for every scored output.
    metrics:
        Specs like ``"bleu"``, ``"bleu:lowercase=true"`` or :class:`Metric` instances.
    systems:
        Restrict to these systems (default: all).
    rated_only:
        Score only outputs that have at least one human rating.
    cache, cache_dir:
        Use the on-disk statistics cache (default ``$NLGEVAL_CACHE`` or
        ``~/.cache/nlgeval/scores``).
    n_jobs:
        Worker processes for large batches (default: all cores; 1 = no processes).

    The corpus score of a system is computed from its own segments (e.g. corpus BLEU from the
    summed n-gram statistics, not the mean of sentence BLEU).
    """
    if isinstance(metrics, str):
        metrics = [m for m in metrics.split(",") if m.strip()]
    if not metrics:
        raise InputError("no metric given (e.g. metrics=['bleu', 'rougeL'])")
    mets = [get_metric(m) for m in metrics]
    labels = _labels(mets)

    outputs = corpus.rated_outputs() if rated_only else corpus.outputs
    if systems is not None:
        systems = list(systems)
        unknown = sorted(set(systems) - set(corpus.systems))
        if unknown:
            raise InputError(
                f"unknown system(s) {', '.join(unknown)} in corpus '{corpus.name}' "
                f"(systems: {', '.join(corpus.systems)})"
            )
        outputs = outputs[outputs["system"].isin(systems)]
    if outputs.empty:
        what = "rated outputs" if rated_only else "outputs"
        raise InputError(f"corpus '{corpus.name}' has no {what} to score for these systems")
    outputs = outputs.reset_index(drop=True)
    items = outputs["item"].tolist()
    ref_map: dict[str, list[str]] = {}
    ref_items = corpus.references["item"].tolist()
    for it, text in zip(ref_items, corpus.references["text"].tolist(), strict=True):
        ref_map.setdefault(it, []).append(text)
    missing = sorted(set(items) - set(ref_map))
    if missing:
        raise InputError(
            f"corpus '{corpus.name}': no reference for item(s) {', '.join(missing[:5])}"
            + (" ..." if len(missing) > 5 else "")
            + " (reference-based metrics need at least one reference per item)"
        )
    # one shared list object per item: the metric groups by reference content
    per_item = {i: ref_map[i] for i in dict.fromkeys(items)}
    refs = [per_item[i] for i in items]
    hyps = outputs["text"].astype(str).tolist()
    # segment positions, hypotheses and references of each system, in order of appearance
    codes, system_names = pd.factorize(outputs["system"])
    by_system: dict[str, tuple[np.ndarray, list[str], list[list[str]]]] = {}
    for code, sysname in enumerate(system_names):
        idx = np.flatnonzero(codes == code)
        by_system[sysname] = (idx, [hyps[i] for i in idx], [refs[i] for i in idx])

    store = StatsCache(cache_dir) if cache else None
    digest = None
    if store is not None:
        _validate_inputs(hyps, refs)
        digest = store.texts_digest(hyps, refs)
    seg_frames: list[pd.DataFrame] = []
    corpus_rows: list[dict[str, Any]] = []
    signatures: dict[str, str] = {}
    try:
        with progress_bar(len(hyps) * len(mets), "scoring") as bar:
            for m, label in zip(mets, labels, strict=True):
                bar.update(description=f"scoring {label}")
                stats, scores = m.score_batch(
                    hyps, refs, cache=store, n_jobs=n_jobs, advance=bar.advance,
                    texts_digest=digest,
                )
                seg_frames.append(
                    pd.DataFrame(
                        {
                            "metric": label,
                            "system": outputs["system"],
                            "item": outputs["item"],
                            "score": scores,
                        }
                    )
                )
                sig = m.signature
                signatures[label] = sig
                for sysname, (idx, sys_hyps, sys_refs) in by_system.items():
                    score = m.corpus_from_stats(stats[idx], sys_hyps, sys_refs)
                    corpus_rows.append(
                        {"system": sysname, "metric": label, "score": score, "signature": sig}
                    )
    finally:
        if store is not None:
            store.close()
    return ScoreResult(
        segments=pd.concat(seg_frames, ignore_index=True),
        corpus_scores=pd.DataFrame(corpus_rows, columns=["system", "metric", "score", "signature"]),
        signatures=signatures,
        specs={label: m.spec for m, label in zip(mets, labels, strict=True)},
        higher_is_better={label: m.higher_is_better for m, label in zip(mets, labels, strict=True)},
        cache_hits=store.hits if store is not None else 0,
        cache_misses=store.misses if store is not None else 0,
    )
