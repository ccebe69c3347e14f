"""Model-based metrics: BERTScore and sentence-embedding cosine (optional extra ``neural``).

* ``bertscore`` -- BERTScore (Zhang, Kishore, Wu, Weinberger & Artzi, 2020, "BERTScore:
  Evaluating Text Generation with BERT", ICLR): greedy matching of contextual token embeddings,
  precision / recall / F1, optional idf weighting and baseline rescaling. Numbers are those of
  the ``bert-score`` package: the model is loaded and cut to ``layer`` by
  ``bert_score.utils.get_model``, texts are encoded with ``bert_score.utils.sent_encode``, the
  matching is ``bert_score.utils.greedy_cos_idf``, idf weights follow ``get_idf_dict`` and
  several references give the **maximum of each of P, R and F separately** over the references,
  exactly as ``bert_score.score`` does. Only the scheduling is nlgeval's own (it is what
  ``bert_score.score`` does not offer across calls): the model stays loaded between calls, every
  distinct text of a whole scoring job is encoded once, sorted by its token count and batched,
  and (output, reference) pairs are matched in length-sorted batches.
* ``embedding-cosine`` -- cosine similarity of sentence embeddings (Reimers & Gurevych, 2019,
  "Sentence-BERT", EMNLP) from any ``sentence-transformers`` model, maximum over the
  references. ``SentenceTransformer.encode`` already sorts by length and batches.

Model identity. A model is a Hugging Face name or a local directory. A name is resolved to a
folder of the local Hugging Face cache (downloaded once when the network allows it); a local
directory is used as it is and never reaches the network (``local_files_only=True``). The
configuration signature -- and so the score cache key -- holds the model name (or, for a local
directory, its folder name), the SHA-256 of its weights file(s), a digest of its other files
(config, tokenizer), the layer, idf, rescaling, and the versions of bert-score / sentence-
transformers, transformers and torch. Two different models can never share cache entries.

Reporting. Texts longer than the model's limit are truncated by the tokenizer (as bert-score
and sentence-transformers do); how many outputs and references were cut is counted, stored in
:attr:`NeuralMetric.last_run` and raised as a :class:`TruncationWarning` (never silent). Each
computation also writes one line to stderr (unless ``--quiet``): texts/s, outputs/s, device and
GPU name.

``torch``, ``transformers``, ``bert-score`` and ``sentence-transformers`` are imported only when a
model is used, so this module imports (and the registry lists the metrics) without them;
:func:`neural_available` says whether a metric's packages are installed.

The package, one module per job: :mod:`.models` (resolution, identity and weight hashes),
:mod:`.run` (the run report), :mod:`.common` (the shared base class), :mod:`.batching`
(BERTScore's batching and truncation), :mod:`.bertscore` and :mod:`.embedding`.
"""

from __future__ import annotations

from nlgeval.metrics.base import Metric
from nlgeval.metrics.neural.bertscore import BERTScoreMetric
from nlgeval.metrics.neural.common import NeuralMetric
from nlgeval.metrics.neural.embedding import EmbeddingCosineMetric
from nlgeval.metrics.neural.models import (
    _MODELS,
    EXTRA_HINT,
    REQUIREMENTS,
    ModelIdentity,
    file_sha256,
    missing_extra_error,
    neural_available,
    resolve_model,
    weight_files,
)
from nlgeval.metrics.neural.run import NeuralRun, TruncationWarning

__all__ = [
    "EXTRA_HINT",
    "NEURAL_METRICS",
    "REQUIREMENTS",
    "BERTScoreMetric",
    "EmbeddingCosineMetric",
    "ModelIdentity",
    "NeuralMetric",
    "NeuralRun",
    "TruncationWarning",
    "_MODELS",
    "file_sha256",
    "missing_extra_error",
    "neural_available",
    "resolve_model",
    "weight_files",
]

NEURAL_METRICS: dict[str, type[Metric]] = {
    BERTScoreMetric.name: BERTScoreMetric,
    EmbeddingCosineMetric.name: EmbeddingCosineMetric,
}
