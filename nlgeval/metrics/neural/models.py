"""Model resolution and identity for the neural metrics: where a model lives, the SHA-256 of its
weights and a digest of its other files, which go into the metric's signature and cache key.

A model is a Hugging Face name or a local directory. A name is resolved to a folder of the local
Hugging Face cache (downloaded once when the network allows it); a local directory is used as it
is and never reaches the network. The heavy packages (``torch``, ``transformers``, ...) are
imported only when a model is loaded.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

from nlgeval.errors import InputError
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


def neural_available(name: str) -> bool:
    """True when the packages of neural metric ``name`` are installed (no import is done).

    Parameters
    ----------
    name : str
        The neural metric's name.

    Returns
    -------
    bool
        Whether its packages are installed.

    Examples
    --------
    >>> isinstance(neural_available("bertscore"), bool)
    True
    """
    return all(importlib.util.find_spec(m) is not None for m in REQUIREMENTS[name])


def missing_extra_error(name: str) -> InputError:
    """The one-line error for a neural metric whose packages are not installed.

    Parameters
    ----------
    name : str
        The neural metric's name.

    Returns
    -------
    InputError
        The error (to raise), naming the missing packages and how to install them.

    Examples
    --------
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

    Parameters
    ----------
    path : pathlib.Path
        The file.

    Returns
    -------
    str
        Its SHA-256, 64 hex digits.

    Examples
    --------
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

    Parameters
    ----------
    model_dir : pathlib.Path
        The model folder.

    Returns
    -------
    list of pathlib.Path
        The weight files (empty if there are none).

    Examples
    --------
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
        >>> local = ModelIdentity("/opt/models/minilm", Path("/opt/models/minilm"), True,
        ...                       "53aa51172d142c89d901", "cd34")
        >>> local.label, local.public_name
        ('local:minilm', 'local:minilm@53aa51172d14')
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

    @property
    def public_name(self) -> str:
        """The model as reports and tables show it: the hub name, or for a local folder
        ``local:<folder name>@<first 12 hex digits of the weights SHA-256>`` -- never the
        folder's path, which is machine-specific (it stays in the spec, as run.json records it).

        The folder name rather than ``_name_or_path`` of ``config.json``: for a fine-tuned
        model that names the model it was tuned from (all-MiniLM-L6-v2's says
        ``nreimers/MiniLM-L6-H384-uncased``); the weights hash says which model it really is.
        """
        return f"{self.label}@{self.weights_sha256[:12]}" if self.local else self.name

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

    Parameters
    ----------
    model : str
        A local model folder or a Hugging Face model name (``name`` or ``org/name``).
    metric : str
        The metric's name (for error messages).

    Returns
    -------
    ModelIdentity
        The model's name, folder, whether it is local, and the digests of its files.

    Examples
    --------
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
    wsha, files_digest = _digests(path, weights)
    return ModelIdentity(
        name=model, path=path, local=local, weights_sha256=wsha, files_digest=files_digest,
    )


def _digests(path: Path, weights: list[Path]) -> tuple[str, str]:
    """(weights SHA-256, 16-hex digest of the other files) of a model folder."""
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
    return wsha, others.hexdigest()[:16]


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


def config_layers(path: Path) -> int:
    """The number of hidden layers a model folder's ``config.json`` declares (0 if unknown).

    Examples:
        >>> import tempfile
        >>> with tempfile.TemporaryDirectory() as tmp:
        ...     _ = (Path(tmp) / "config.json").write_text('{"num_hidden_layers": 6}')
        ...     print(config_layers(Path(tmp)), config_layers(Path(tmp) / "nowhere"))
        6 0
    """
    try:
        data = json.loads((path / "config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return 0
    for key in ("num_hidden_layers", "n_layers", "num_layers", "n_layer"):
        if isinstance(data.get(key), int):
            return int(data[key])
    return 0


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


#: loaded models, shared by metric instances: key -> (model, tokenizer or None, load seconds)
_MODELS: dict[tuple[Any, ...], tuple[Any, Any, float]] = {}

