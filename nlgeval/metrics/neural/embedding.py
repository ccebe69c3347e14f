"""Cosine similarity of sentence embeddings (Reimers & Gurevych, 2019, "Sentence-BERT", EMNLP)
from any ``sentence-transformers`` model; ``SentenceTransformer.encode`` sorts by length and
batches."""

from __future__ import annotations

import time
from typing import Any, ClassVar

import numpy as np

from nlgeval.errors import InputError
from nlgeval.metrics.base import Option
from nlgeval.metrics.neural.common import _DEVICE_OPTION, _THREADS_OPTION, NeuralMetric
from nlgeval.metrics.neural.models import _MODELS, _load_hint, _one_line, _quiet_transformers


class EmbeddingCosineMetric(NeuralMetric):
    """Cosine similarity of sentence embeddings (Reimers & Gurevych, 2019), max over references.

    Embeddings come from ``SentenceTransformer.encode(..., normalize_embeddings=True)``; the
    cosine is their dot product. Segment score in [-1, 1]; corpus score = mean.

    Examples:
        >>> EmbeddingCosineMetric.name, EmbeddingCosineMetric.higher_is_better
        ('embedding-cosine', True)
    """

    name = "embedding-cosine"
    family = "embedding"
    description = (
        "cosine similarity of sentence-transformers embeddings, max over references"
    )
    packages = ("sentence-transformers", "transformers", "torch")
    options: ClassVar[dict[str, Option]] = {
        "model": Option(str, "sentence-transformers/all-MiniLM-L6-v2",
                        "sentence-transformers model name or a local model folder"),
        "batch_size": Option(int, 32, "texts per forward pass"),
        "device": _DEVICE_OPTION,
        "threads": _THREADS_OPTION,
    }

    @property
    def config_signature(self) -> str:
        ident = self.identity
        return (
            f"embedding-cosine|model:{ident.label}|weights:sha256:{ident.weights_sha256}"
            f"|files:{ident.files_digest}|pool:model-default|multiref:max"
            f"|version:{self._versions()}"
        )

    def _load(self) -> tuple[Any, float]:
        ident = self.identity
        dev = self.device
        key = ("embedding", str(ident.path), ident.weights_sha256, dev)
        hit = _MODELS.get(key)
        if hit is not None:
            return hit[0], 0.0
        t0 = time.perf_counter()
        from sentence_transformers import SentenceTransformer

        try:
            with _quiet_transformers():
                model = SentenceTransformer(str(ident.path), device=dev, local_files_only=True)
        except Exception as exc:
            raise InputError(
                f"metric 'embedding-cosine': cannot load model '{self.opts['model']}': "
                f"{_one_line(exc)}; {_load_hint('embedding-cosine')}"
            ) from None
        load_s = time.perf_counter() - t0
        _MODELS[key] = (model, None, load_s)
        return model, load_s

    def _pair_stats(
        self, texts: list[str], hyp_idx: np.ndarray, ref_idx: np.ndarray
    ) -> tuple[float, set[int], int, np.ndarray]:
        model, load_s = self._load()
        limit = int(model.max_seq_length)
        # count what the model's tokenizer cuts (encode() truncates at max_seq_length)
        lengths = model.tokenizer(texts, add_special_tokens=True, truncation=False,
                                  verbose=False)["input_ids"]
        truncated = {i for i, x in enumerate(lengths) if len(x) > limit}
        e = model.encode(texts, batch_size=self.opts["batch_size"], convert_to_numpy=True,
                         normalize_embeddings=True, show_progress_bar=False)
        e = np.asarray(e, dtype=np.float64)
        cos = np.einsum("ij,ij->i", e[hyp_idx], e[ref_idx])
        return load_s, truncated, limit, cos[:, None]

    def _segment_from_stats(self, stats: np.ndarray) -> np.ndarray:
        return stats[:, 0].copy()

