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
"""

from __future__ import annotations

import hashlib
import importlib.util
import math
import os
import sys
import time
import warnings
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from nlgeval.errors import InputError
from nlgeval.metrics.base import Groups, Metric, Option
from nlgeval.results import Result

#: packages each neural metric needs (import names)
REQUIREMENTS: dict[str, tuple[str, ...]] = {
    "bertscore": ("torch", "transformers", "bert_score"),
    "embedding-cosine": ("torch", "transformers", "sentence_transformers"),
}
EXTRA_HINT = "pip install 'nlgeval[neural]'"

#: files fetched for a Hugging Face model name (weights, config, tokenizer, pooling modules)
_HUB_PATTERNS = [
    "*.json",
    "*.txt",
    "*.model",
    "*.safetensors",
    "pytorch_model*.bin",
    "*.tiktoken",
]
_DOC_FILES = {"README.md", ".gitattributes", "LICENSE", "LICENSE.txt"}


class TruncationWarning(UserWarning):
    """Some texts were longer than the model's maximum input length and were cut.

    Examples:
        >>> issubclass(TruncationWarning, UserWarning)
        True
    """


def neural_available(name: str) -> bool:
    """True when the packages of neural metric ``name`` are installed (no import is done).

    Examples:
        >>> isinstance(neural_available("bertscore"), bool)
        True
    """
    return all(importlib.util.find_spec(m) is not None for m in REQUIREMENTS[name])


def missing_extra_error(name: str) -> InputError:
    """The one-line error for a neural metric whose packages are not installed.

    Examples:
        >>> "neural" in str(missing_extra_error("bertscore"))
        True
    """
    missing = [m for m in REQUIREMENTS[name] if importlib.util.find_spec(m) is None]
    return InputError(
        f"metric '{name}' needs the optional neural extra ({', '.join(missing)} not installed): "
        f"{EXTRA_HINT}"
    )


def _version(dist: str) -> str:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:  # pragma: no cover - guarded by neural_available
        return "none"


# ---------------------------------------------------------------------------- model identity
_SHA_MEMO: dict[tuple[str, int, int], str] = {}


def file_sha256(path: Path) -> str:
    """SHA-256 of a file (hex), memoised per (path, size, mtime) within the process.

    Examples:
        >>> import tempfile
        >>> with tempfile.TemporaryDirectory() as tmp:
        ...     f = Path(tmp) / "w.bin"
        ...     _ = f.write_bytes(b"abc")
        ...     print(file_sha256(f)[:16])
        ba7816bf8f01cfea
    """
    st = path.stat()
    key = (str(path.resolve()), st.st_size, st.st_mtime_ns)
    hit = _SHA_MEMO.get(key)
    if hit is None:
        h = hashlib.sha256()
        with path.open("rb") as fh:
            for block in iter(lambda: fh.read(1 << 22), b""):
                h.update(block)
        hit = _SHA_MEMO[key] = h.hexdigest()
    return hit


def weight_files(model_dir: Path) -> list[Path]:
    """The weight files of a model folder: ``*.safetensors`` if any, else ``pytorch_model*.bin``
    (sub-folders included, e.g. a sentence-transformers ``2_Dense/``).

    Examples:
        >>> import tempfile
        >>> with tempfile.TemporaryDirectory() as tmp:
        ...     for name in ("model.safetensors", "config.json"):
        ...         _ = (Path(tmp) / name).write_bytes(b"")
        ...     print([p.name for p in weight_files(Path(tmp))])
        ['model.safetensors']
    """
    files = sorted(
        p for p in model_dir.rglob("*.safetensors") if not _hidden(p.relative_to(model_dir))
    )
    if not files:
        files = sorted(
            p for p in model_dir.rglob("*.bin")
            if not _hidden(p.relative_to(model_dir)) and p.name != "training_args.bin"
        )
    return files


def _hidden(rel: Path) -> bool:
    return any(part.startswith(".") for part in rel.parts)


@dataclass(frozen=True)
class ModelIdentity(Result):
    """Where a model lives and what exactly it is.

    ``weights_sha256`` is the SHA-256 of the weights file when there is one (as the Hugging
    Face hub lists it), else the SHA-256 of the lines ``<relative path> <sha256>`` of all weight
    files; ``files_digest`` covers every other file (config, tokenizer), 16 hex digits.

    Examples:
        >>> ModelIdentity("roberta-large", Path("roberta-large"), False, "ab12", "cd34").label
        'roberta-large'
    """

    name: str
    path: Path
    local: bool
    weights_sha256: str
    files_digest: str

    @property
    def label(self) -> str:
        """The model as written in a signature: the hub name, or ``local:<folder name>``."""
        return f"local:{self.path.name}" if self.local else self.name

    def to_dict(self) -> dict[str, Any]:
        """The derived fields, with ``path`` as text (JSON has no paths)."""
        return {**super().to_dict(), "path": str(self.path)}


def _load_hint(metric: str) -> str:
    return (
        f"pass a local model folder instead, e.g. {metric}:model=/path/to/model"
        + (",layer=N" if metric == "bertscore" else "")
        + " (config.json, tokenizer files and model.safetensors or pytorch_model.bin)"
    )


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return (text[:200] + "...") if len(text) > 200 else text


def resolve_model(model: str, metric: str) -> ModelIdentity:
    """A :class:`ModelIdentity` for a local folder or a Hugging Face model name.

    A folder is read as it is (no network). A name is looked up in the local Hugging Face cache
    first; only when it is not there (and ``HF_HUB_OFFLINE`` is not set) is it downloaded. A
    model that cannot be found or loaded raises a one-line :class:`InputError` saying how to pass
    a local model.

    Examples:
        A local folder is read as it is, without the network:

        >>> import tempfile
        >>> with tempfile.TemporaryDirectory() as tmp:
        ...     _ = (Path(tmp) / "model.safetensors").write_bytes(b"weights")
        ...     _ = (Path(tmp) / "config.json").write_text("{}")
        ...     m = resolve_model(tmp, "bertscore")
        ...     print(m.local, m.weights_sha256[:12])
        True 9a129038d9a0
        >>> try:
        ...     resolve_model("./no-such-folder", "bertscore")
        ... except InputError as err:
        ...     print(err)
        metric 'bertscore': model folder './no-such-folder' does not exist
    """
    if not model.strip():
        raise InputError(f"metric '{metric}', option 'model': empty model name")
    p = Path(model).expanduser()
    # a hub name is "name" or "org/name"; anything else that is not a folder is a bad path
    looks_like_path = model.startswith((".", "/", "~", "\\")) or model.count("/") > 1
    if p.is_dir():
        path, local = p.resolve(), True
    elif p.exists():
        raise InputError(
            f"metric '{metric}': model '{model}' is a file; pass the model's folder"
        )
    elif looks_like_path:
        raise InputError(f"metric '{metric}': model folder '{model}' does not exist")
    else:
        path, local = _hub_snapshot(model, metric), False
    weights = weight_files(path)
    if not weights:
        raise InputError(
            f"metric '{metric}': no weights file (*.safetensors or pytorch_model.bin) in model "
            f"folder '{model}'; {_load_hint(metric)}"
        )
    if len(weights) == 1:
        wsha = file_sha256(weights[0])
    else:
        lines = "".join(f"{w.relative_to(path).as_posix()} {file_sha256(w)}\n" for w in weights)
        wsha = hashlib.sha256(lines.encode()).hexdigest()
    others = hashlib.sha256()
    wset = set(weights)
    for f in sorted(path.rglob("*")):
        rel = f.relative_to(path)
        if not f.is_file() or f in wset or _hidden(rel) or f.name in _DOC_FILES:
            continue
        if f.suffix in (".bin", ".safetensors", ".pt", ".onnx", ".h5", ".msgpack"):
            continue
        others.update(rel.as_posix().encode() + b"\0" + file_sha256(f).encode() + b"\n")
    return ModelIdentity(
        name=model, path=path, local=local, weights_sha256=wsha,
        files_digest=others.hexdigest()[:16],
    )


def _hub_snapshot(name: str, metric: str) -> Path:
    try:
        from huggingface_hub import snapshot_download
    except ImportError:  # pragma: no cover - transformers depends on it
        raise missing_extra_error(metric) from None
    try:
        return Path(snapshot_download(repo_id=name, allow_patterns=_HUB_PATTERNS,
                                      local_files_only=True))
    except Exception:  # not in the local cache: try the hub once
        pass
    try:
        return Path(snapshot_download(repo_id=name, allow_patterns=_HUB_PATTERNS))
    except Exception as exc:
        raise InputError(
            f"metric '{metric}': cannot load model '{name}' (not in the local Hugging Face cache "
            f"and not downloadable here: {_one_line(exc)}); {_load_hint(metric)}"
        ) from None


# ---------------------------------------------------------------------------- run report
@dataclass(frozen=True)
class NeuralRun(Result):
    """What one computation did: sizes, time, device and truncation (``to_dict`` adds the
    throughputs ``outputs_per_second`` and ``texts_per_second``).

    Examples:
        >>> run = NeuralRun("bertscore", "roberta-large", "cpu", None, 2, 2, 4, 2, 0.5, 1.0,
        ...                 0, 0, 512)
        >>> run.to_dict()["outputs_per_second"]
        4.0
    """

    _aliases: ClassVar[Mapping[str, str]] = {"outputs_per_second": "outputs_per_second",
                                             "texts_per_second": "texts_per_second"}

    metric: str
    model: str
    device: str
    gpu: str | None
    n_outputs: int
    n_references: int
    n_texts: int
    n_pairs: int
    seconds: float
    load_seconds: float
    truncated_outputs: int
    truncated_references: int
    max_tokens: int

    @property
    def outputs_per_second(self) -> float:
        return self.n_outputs / self.seconds if self.seconds > 0 else math.inf

    @property
    def texts_per_second(self) -> float:
        return self.n_texts / self.seconds if self.seconds > 0 else math.inf

    def summary(self) -> str:
        where = f"GPU {self.gpu}" if self.gpu else "CPU (no GPU used)"
        trunc = (
            f"; truncated to {self.max_tokens} tokens: {self.truncated_outputs} outputs, "
            f"{self.truncated_references} references"
            if self.truncated_outputs or self.truncated_references
            else "; nothing truncated"
        )
        return (
            f"{self.metric}: {self.n_outputs} outputs x {self.n_pairs} reference pairs, "
            f"{self.n_texts} texts encoded in {self.seconds:.2f} s "
            f"({self.outputs_per_second:.1f} outputs/s, {self.texts_per_second:.1f} texts/s; "
            f"model load {self.load_seconds:.2f} s) on {where}{trunc}"
        )



def _say(line: str) -> None:
    """One line on stderr unless ``--quiet`` / ``NLGEVAL_QUIET``."""
    from nlgeval import progress

    if progress._QUIET or os.environ.get("NLGEVAL_QUIET"):
        return
    sys.stderr.write(line + "\n")


def _warn_truncation(run: NeuralRun) -> None:
    if run.truncated_outputs or run.truncated_references:
        warnings.warn(
            f"{run.metric}: {run.truncated_outputs} output(s) and {run.truncated_references} "
            f"reference(s) are longer than {run.max_tokens} tokens and were truncated "
            f"(model {run.model})",
            TruncationWarning,
            stacklevel=4,
        )


@contextmanager
def _quiet_transformers() -> Iterator[None]:
    """No transformers log chatter or weight-loading progress bars while a model loads."""
    from transformers.utils import logging as hf_logging

    verbosity = hf_logging.get_verbosity()
    bars = hf_logging.is_progress_bar_enabled()
    hf_logging.set_verbosity_error()
    hf_logging.disable_progress_bar()
    try:
        yield
    finally:
        hf_logging.set_verbosity(verbosity)
        if bars:
            hf_logging.enable_progress_bar()


# ---------------------------------------------------------------------------- shared machinery
#: loaded models, shared by metric instances: key -> (model, tokenizer or None, load seconds)
_MODELS: dict[tuple[Any, ...], tuple[Any, Any, float]] = {}

_DEVICE_OPTION = Option(str, "auto", "auto (GPU when available), cpu or cuda",
                        ("auto", "cpu", "cuda"))
_THREADS_OPTION = Option(int, 0, "CPU threads for torch while scoring (0 = torch's default)")


class NeuralMetric(Metric):
    """Common parts: model resolution, identity, device, batching over whole jobs, reports.

    Examples:
        >>> [issubclass(c, NeuralMetric) for c in (BERTScoreMetric, EmbeddingCosineMetric)]
        [True, True]
    """

    family: ClassVar[str] = ""
    #: distributions whose versions go into the signature
    packages: ClassVar[tuple[str, ...]] = ()
    parallel_threshold = 10**12  # never a process pool: torch uses the cores itself

    def __init__(self, **opts: Any) -> None:
        missing = [m for m in REQUIREMENTS[self.name] if importlib.util.find_spec(m) is None]
        if missing:
            raise missing_extra_error(self.name)
        super().__init__(**opts)
        self._identity: ModelIdentity | None = None
        self.last_run: NeuralRun | None = None

    @property
    def identity(self) -> ModelIdentity:
        """The resolved model (folder, weights SHA-256); resolving may download a hub name."""
        if self._identity is None:
            self._identity = resolve_model(self.opts["model"], self.name)
        return self._identity

    def _check_options(self) -> None:
        if self.opts["batch_size"] < 1:
            raise InputError(f"metric '{self.name}', option 'batch_size': must be at least 1")
        if self.opts["threads"] < 0:
            raise InputError(f"metric '{self.name}', option 'threads': must be 0 or more")

    @property
    def device(self) -> str:
        """``cpu`` or ``cuda`` as the ``device`` option resolves on this machine."""
        import torch

        want = self.opts["device"]
        if want == "auto":
            return "cuda" if torch.cuda.is_available() else "cpu"
        if want == "cuda" and not torch.cuda.is_available():
            raise InputError(
                f"metric '{self.name}', option 'device': cuda requested but torch sees no GPU "
                f"(torch {torch.__version__}); use device=cpu or device=auto"
            )
        return want

    def _versions(self) -> str:
        return ",".join(f"{p}-{_version(p)}" for p in self.packages)

    @property
    def signature(self) -> str:
        n = self._nrefs_label()
        return (f"nrefs:{n}|" if n else "") + self.config_signature

    # -- the base class's per-segment template methods (used only for single segments)
    def _prepare_refs(self, refs: Sequence[str]) -> Any:
        return tuple(refs)

    def _segment_stats(self, hyp: str, ref_info: Any) -> Sequence[float]:
        return self._compute_groups([(ref_info, [hyp])], 1, None)[0][0]

    def _corpus_from_stats(self, stats: np.ndarray) -> float:
        return float(np.mean(self._segment_from_stats(stats)))

    def __getstate__(self) -> dict[str, Any]:
        state = super().__getstate__()
        state["_identity"] = None
        return state

    # -- batched computation over all groups of a job
    def _compute_groups(
        self,
        groups: Groups,
        n_jobs: int | None,
        advance: Callable[[int], None] | None,
    ) -> list[np.ndarray]:
        """Statistics for every (references, hypotheses) group in one batched pass."""
        # flatten: pair p = (hypothesis text index, reference text index); the pairs of one
        # (group, hypothesis) are contiguous so that the max over references is a reduceat
        index: dict[str, int] = {}
        texts: list[str] = []

        def idx(t: str) -> int:
            i = index.get(t)
            if i is None:
                i = index[t] = len(texts)
                texts.append(t)
            return i

        hyp_idx: list[int] = []
        ref_idx: list[int] = []
        starts: list[int] = []
        is_ref = set()
        for refs, hyps in groups:
            r_ids = [idx(r) for r in refs]
            is_ref.update(r_ids)
            for h in hyps:
                hi = idx(h)
                starts.append(len(hyp_idx))
                hyp_idx.extend([hi] * len(r_ids))
                ref_idx.extend(r_ids)
        is_hyp = set(hyp_idx)
        import torch

        threads = torch.get_num_threads()
        if self.opts["threads"]:
            torch.set_num_threads(self.opts["threads"])
        t0 = time.perf_counter()
        try:
            load_s, truncated, max_tokens, pair_stats = self._pair_stats(
                texts, np.asarray(hyp_idx, dtype=np.int64), np.asarray(ref_idx, dtype=np.int64)
            )
        finally:
            torch.set_num_threads(threads)
        seconds = time.perf_counter() - t0 - load_s
        # maximum over each hypothesis's references, per column (bert_score.score's rule)
        seg = np.maximum.reduceat(pair_stats, np.asarray(starts, dtype=np.int64), axis=0)
        out: list[np.ndarray] = []
        k = 0
        for _, hyps in groups:
            out.append(np.ascontiguousarray(seg[k : k + len(hyps)], dtype=np.float64))
            k += len(hyps)
        dev = self.device
        run = NeuralRun(
            metric=self.name,
            model=self.identity.label,
            device=dev,
            gpu=torch.cuda.get_device_name(0) if dev == "cuda" else None,
            n_outputs=sum(len(h) for _, h in groups),
            n_references=len(is_ref),
            n_texts=len(texts),
            n_pairs=len(hyp_idx),
            seconds=seconds,
            load_seconds=load_s,
            truncated_outputs=len(truncated & is_hyp),
            truncated_references=len(truncated & is_ref),
            max_tokens=max_tokens,
        )
        self.last_run = run
        _warn_truncation(run)
        _say(run.summary())
        if advance:
            advance(run.n_outputs)
        return out

    def _pair_stats(
        self, texts: list[str], hyp_idx: np.ndarray, ref_idx: np.ndarray
    ) -> tuple[float, set[int], int, np.ndarray]:
        """(model load seconds, indices of truncated texts, token limit, ``(pairs, k)`` stats)."""
        raise NotImplementedError


# ---------------------------------------------------------------------------- BERTScore
class BERTScoreMetric(NeuralMetric):
    """BERTScore P/R/F1 (Zhang et al., 2020) through the ``bert-score`` package.

    Segment score = the chosen ``measure`` (0-1; after ``rescale``, (x - b) / (1 - b) with
    bert-score's baseline b for the model and layer); corpus score = mean segment score, as
    bert-score reports it. Statistics per segment: the raw P, R, F1 (each the maximum over the
    references).

    Examples:
        >>> BERTScoreMetric.name, sorted(BERTScoreMetric.options)[:3]
        ('bertscore', ['baseline', 'batch_size', 'device'])
    """

    name = "bertscore"
    family = "bertscore"
    description = (
        "BERTScore (bert-score): greedy-matched contextual embeddings, P/R/F1, max over "
        "references"
    )
    packages = ("bert-score", "transformers", "torch")
    options: ClassVar[dict[str, Option]] = {
        "model": Option(str, "roberta-large",
                        "Hugging Face model name or a local model folder"),
        "layer": Option(str, "auto",
                        "hidden layer to use (auto = bert-score's tuned layer for known names; "
                        "required for other models)"),
        "measure": Option(str, "f1", "segment score: f1, precision or recall",
                          ("f1", "precision", "recall")),
        "idf": Option(bool, False, "idf weights from the scored batch's references"),
        "rescale": Option(bool, False, "rescale with bert-score's baseline for lang/model/layer"),
        "lang": Option(str, "en", "language of the rescale baseline"),
        "baseline": Option(str, "", "custom baseline file (bert-score .tsv) for rescale=true"),
        "batch_size": Option(int, 64, "texts per forward pass"),
        "device": _DEVICE_OPTION,
        "threads": _THREADS_OPTION,
        "fast_tokenizer": Option(bool, False, "use the fast (Rust) tokenizer"),
    }

    def __init__(self, **opts: Any) -> None:
        super().__init__(**opts)
        self._idf_dict: dict[int, float] | None = None
        self._idf_digest: str | None = None
        self._idf_key: bytes | None = None
        self._idf_default = 1.0
        self._baseline: np.ndarray | None = None
        self._baseline_digest: str | None = None

    def __getstate__(self) -> dict[str, Any]:
        state = super().__getstate__()
        state["_idf_dict"] = None if state.get("_idf_dict") is None else dict(state["_idf_dict"])
        return state

    def _check_options(self) -> None:
        super()._check_options()
        layer = self.opts["layer"]
        if layer != "auto":
            try:
                n = int(layer)
            except ValueError:
                raise InputError(
                    f"metric 'bertscore', option 'layer': expected an integer or auto, got "
                    f"{layer!r}"
                ) from None
            if n < 0:
                raise InputError("metric 'bertscore', option 'layer': must be 0 or more")
        if self.opts["baseline"] and not self.opts["rescale"]:
            raise InputError("metric 'bertscore': option 'baseline' needs rescale=true")

    # -- configuration
    @property
    def num_layers(self) -> int:
        """The layer whose embeddings are matched (bert-score's ``num_layers``)."""
        layer = self.opts["layer"]
        if layer != "auto":
            return int(layer)
        from bert_score.utils import model2layers

        name = self.opts["model"]
        if name in model2layers:
            return int(model2layers[name])
        n_hidden = self._config_layers()
        raise InputError(
            f"metric 'bertscore': no tuned default layer for model '{name}'; set layer=N "
            f"(0-{n_hidden}; e.g. bertscore:model={name},layer={n_hidden})"
        )

    def _config_layers(self) -> int:
        import json

        cfg = self.identity.path / "config.json"
        try:
            data = json.loads(cfg.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return 0
        for key in ("num_hidden_layers", "n_layers", "num_layers", "n_layer"):
            if isinstance(data.get(key), int):
                return int(data[key])
        return 0

    def _baseline_values(self) -> np.ndarray | None:
        """bert-score's rescale baseline (P, R, F) for the model and layer, or None."""
        if not self.opts["rescale"]:
            return None
        if self._baseline is not None:
            return self._baseline
        import pandas as pd

        custom = self.opts["baseline"]
        if custom:
            path = Path(custom).expanduser()
            if not path.is_file():
                raise InputError(f"metric 'bertscore': baseline file '{custom}' not found")
        else:
            import bert_score

            path = (Path(bert_score.__file__).parent / "rescale_baseline"
                    / self.opts["lang"] / f"{self.opts['model']}.tsv")
            if not path.is_file():
                raise InputError(
                    f"metric 'bertscore': bert-score has no rescale baseline for model "
                    f"'{self.opts['model']}' in lang '{self.opts['lang']}'; pass "
                    "baseline=FILE (a bert-score baseline .tsv) or use rescale=false"
                )
        try:
            table = pd.read_csv(path)
            row = table.iloc[self.num_layers].to_numpy()[1:].astype(np.float32)
        except (IndexError, ValueError, OSError) as exc:
            raise InputError(
                f"metric 'bertscore': baseline file has no usable row for layer "
                f"{self.num_layers}: {_one_line(exc)}", file=path
            ) from None
        if row.shape != (3,):
            raise InputError("metric 'bertscore': a baseline row must hold P, R, F", file=path)
        self._baseline = row
        self._baseline_digest = file_sha256(path)[:16]
        return row

    @property
    def config_signature(self) -> str:
        o = self.opts
        ident = self.identity
        base = self._baseline_values()
        rescale = f"yes({self._baseline_digest})" if base is not None else "no"
        idf = f"yes({self._idf_digest})" if o["idf"] and self._idf_digest else (
            "yes" if o["idf"] else "no"
        )
        return (
            f"bertscore|measure:{o['measure']}|model:{ident.label}"
            f"|weights:sha256:{ident.weights_sha256}|files:{ident.files_digest}"
            f"|layer:{self.num_layers}|idf:{idf}|rescale:{rescale}"
            f"|tok:{'fast' if o['fast_tokenizer'] else 'slow'}|multiref:max-each"
            f"|version:{self._versions()}"
        )

    # -- idf: bert_score.score computes it from the references it is given, one document per
    # (candidate, reference) pair; nlgeval does the same over the whole scored batch
    def _set_idf(self, refs: Sequence[Sequence[str]]) -> None:
        if not self.opts["idf"]:
            return
        memo: dict[int, bytes] = {}
        h = hashlib.sha256()
        for r in refs:
            d = memo.get(id(r))
            if d is None:
                d = memo[id(r)] = hashlib.sha256("\x1f".join(r).encode()).digest()
            h.update(d)
        key = h.digest()
        if key == self._idf_key:
            return
        from bert_score.utils import sent_encode

        _, tok, _ = self._load()
        mult: Counter[str] = Counter()
        for r in refs:
            mult.update(r)
        counts: Counter[int] = Counter()
        for text, m in mult.items():
            for t in set(_sent_encode(sent_encode, tok, text)):
                counts[t] += m
        num_docs = sum(mult.values())
        idf = {t: math.log((num_docs + 1) / (c + 1)) for t, c in counts.items()}
        self._idf_dict = idf
        self._idf_default = math.log(num_docs + 1)
        blob = repr((num_docs, sorted(idf.items()))).encode()
        self._idf_digest = hashlib.sha256(blob).hexdigest()[:16]
        self._idf_key = key

    def segment_stats(self, hyps: Sequence[str], refs: Sequence[Sequence[str]],
                      **kw: Any) -> np.ndarray:
        self._set_idf(refs)
        return super().segment_stats(hyps, refs, **kw)

    def score_batch(self, hyps: Sequence[str], refs: Sequence[Sequence[str]],
                    **kw: Any) -> tuple[np.ndarray, np.ndarray]:
        self._set_idf(refs)
        return super().score_batch(hyps, refs, **kw)

    # -- model
    def _load(self) -> tuple[Any, Any, float]:
        """(model cut to ``layer`` on the device, tokenizer, load seconds); shared per process."""
        ident = self.identity
        layer = self.num_layers
        dev = self.device
        key = ("bertscore", str(ident.path), ident.weights_sha256, layer, dev,
               self.opts["fast_tokenizer"])
        hit = _MODELS.get(key)
        if hit is not None:
            return hit[0], hit[1], 0.0
        n_hidden = self._config_layers()
        if n_hidden and layer > n_hidden:
            raise InputError(
                f"metric 'bertscore', option 'layer': model '{self.opts['model']}' has "
                f"{n_hidden} layers (layer=0 is the embedding layer), got layer={layer}"
            )
        t0 = time.perf_counter()
        from bert_score.utils import get_model
        from transformers import AutoTokenizer

        try:
            with _quiet_transformers():
                # a local folder: from_pretrained reads the folder only (local_files_only)
                tok = AutoTokenizer.from_pretrained(
                    str(ident.path), use_fast=self.opts["fast_tokenizer"], local_files_only=True
                )
                model = get_model(str(ident.path), layer, False)
        except Exception as exc:
            raise InputError(
                f"metric 'bertscore': cannot load model '{self.opts['model']}': "
                f"{_one_line(exc)}; {_load_hint('bertscore')}"
            ) from None
        # a tokenizer without a length limit would let the model overrun its positions
        max_pos = getattr(getattr(model, "config", None), "max_position_embeddings", None)
        if tok.model_max_length > 100_000 and isinstance(max_pos, int):
            tok.model_max_length = max_pos
        model.to(dev)
        load_s = time.perf_counter() - t0
        _MODELS[key] = (model, tok, load_s)
        return model, tok, load_s

    def _pair_stats(
        self, texts: list[str], hyp_idx: np.ndarray, ref_idx: np.ndarray
    ) -> tuple[float, set[int], int, np.ndarray]:
        import torch
        from bert_score.utils import bert_encode, greedy_cos_idf, sent_encode
        from torch.nn.utils.rnn import pad_sequence

        model, tok, load_s = self._load()
        dev = self.device
        if self.opts["idf"]:
            if self._idf_dict is None:  # scored through the template methods only
                raise InputError("bertscore with idf=true: score through segment_stats")
            idf_d: dict[int, float] = defaultdict(lambda: self._idf_default)
            idf_d.update(self._idf_dict)
        else:
            idf_d = defaultdict(lambda: 1.0)
            idf_d[tok.sep_token_id] = 0
            idf_d[tok.cls_token_id] = 0
        # tokenise every distinct text once (bert-score's own encoder, with its truncation)
        limit = int(tok.model_max_length)
        ids = [_sent_encode(sent_encode, tok, t) for t in texts]
        lens = np.fromiter((len(x) for x in ids), dtype=np.int64, count=len(ids))
        truncated: set[int] = set()
        n_special = tok.num_special_tokens_to_add()
        for i in np.flatnonzero(lens >= limit):
            if len(tok.tokenize(texts[i].strip())) + n_special > limit:
                truncated.add(int(i))
        # encode in batches of texts of similar token length, longest first; a batch holds
        # batch_size texts, fewer when they are long (at most batch_size x 64 tokens incl.
        # padding), so that one long text does not pad a whole batch to 512 tokens
        order = np.argsort(-lens, kind="stable")
        bs = self.opts["batch_size"]
        emb: list[Any] = [None] * len(texts)
        idf_w: list[Any] = [None] * len(texts)
        pad_id = tok.pad_token_id if tok.pad_token_id is not None else 0
        with torch.no_grad():
            for chunk in _token_batches(order, lens, bs):
                width = int(lens[chunk].max())
                x = torch.full((len(chunk), width), pad_id, dtype=torch.long)
                mask = torch.zeros((len(chunk), width), dtype=torch.long)
                for j, i in enumerate(chunk):
                    x[j, : lens[i]] = torch.tensor(ids[i], dtype=torch.long)
                    mask[j, : lens[i]] = 1
                out = bert_encode(model, x.to(dev), attention_mask=mask.to(dev))
                for j, i in enumerate(chunk):
                    emb[i] = out[j, : lens[i]]
                    idf_w[i] = torch.tensor([idf_d[t] for t in ids[i]], dtype=torch.float,
                                            device=dev)
            # greedy matching of (output, reference) pairs, batched by similar lengths
            n_pairs = len(hyp_idx)
            res = np.empty((n_pairs, 3), dtype=np.float64)
            porder = np.lexsort((lens[ref_idx], lens[hyp_idx]))[::-1]
            pbs = max(bs, 64)
            for s in range(0, n_pairs, pbs):
                chunk = porder[s : s + pbs]
                r_stats = _pad_batch([emb[i] for i in ref_idx[chunk]],
                                     [idf_w[i] for i in ref_idx[chunk]], dev, pad_sequence)
                h_stats = _pad_batch([emb[i] for i in hyp_idx[chunk]],
                                     [idf_w[i] for i in hyp_idx[chunk]], dev, pad_sequence)
                p, r, f = greedy_cos_idf(*r_stats, *h_stats, False)
                res[chunk] = torch.stack((p, r, f), dim=-1).cpu().double().numpy()
        return load_s, truncated, limit, res

    def _segment_from_stats(self, stats: np.ndarray) -> np.ndarray:
        col = {"precision": 0, "recall": 1, "f1": 2}[self.opts["measure"]]
        x = stats[:, col]
        base = self._baseline_values()
        if base is not None:
            # bert_score.score: (all_preds - baselines) / (1 - baselines), in float32
            b = base[col]
            x32 = x.astype(np.float32)
            return ((x32 - b) / (np.float32(1) - b)).astype(np.float64)
        return x.copy()


def _token_batches(order: np.ndarray, lens: np.ndarray, batch_size: int) -> list[np.ndarray]:
    """Split ``order`` (indices sorted by decreasing ``lens``) into batches of at most
    ``batch_size`` texts and ``batch_size * 64`` padded tokens (at least one text each)."""
    budget = batch_size * 64
    out = []
    s = 0
    while s < len(order):
        width = int(lens[order[s]])
        n = max(1, min(batch_size, budget // max(width, 1)))
        out.append(order[s : s + n])
        s += n
    return out


def _sent_encode(sent_encode: Callable[[Any, str], list[int]], tok: Any, text: str) -> list[int]:
    """``bert_score.utils.sent_encode``; for an empty text the special tokens alone, which is
    what it returns but through ``build_inputs_with_special_tokens``, a tokenizer method that
    transformers 5 removed (so bert-score 0.3.13 fails on empty texts there)."""
    if not text.strip():
        return list(tok("", add_special_tokens=True)["input_ids"])
    return list(sent_encode(tok, text))


def _pad_batch(embs: list[Any], idfs: list[Any], dev: str, pad_sequence: Any) -> tuple[Any, ...]:
    """``bert_cos_score_idf``'s ``pad_batch_stats``: padded embeddings (pad value 2.0), mask,
    padded idf weights (fresh tensors: ``greedy_cos_idf`` normalises them in place)."""
    import torch

    lens = torch.tensor([e.size(0) for e in embs], dtype=torch.long)
    emb_pad = pad_sequence(embs, batch_first=True, padding_value=2.0)
    idf_pad = pad_sequence(idfs, batch_first=True)
    mask = (torch.arange(int(lens.max())).expand(len(embs), -1) < lens.unsqueeze(1)).to(dev)
    return emb_pad, mask, idf_pad


# ---------------------------------------------------------------------------- embeddings
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


NEURAL_METRICS: dict[str, type[Metric]] = {
    BERTScoreMetric.name: BERTScoreMetric,
    EmbeddingCosineMetric.name: EmbeddingCosineMetric,
}
