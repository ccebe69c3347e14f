"""The common base of the neural metrics: model resolution, device and threads, one batched
pass over every (references, outputs) group of a scoring job, and the run report."""

from __future__ import annotations

import importlib.util
import time
from collections.abc import Callable, Sequence
from typing import Any, ClassVar

import numpy as np

from nlgeval.errors import InputError
from nlgeval.metrics.base import Groups, Metric, Option
from nlgeval.metrics.neural.models import (
    REQUIREMENTS,
    ModelIdentity,
    _version,
    missing_extra_error,
    resolve_model,
)
from nlgeval.metrics.neural.run import NeuralRun, _say, _warn_truncation

_DEVICE_OPTION = Option(str, "auto", "auto (GPU when available), cpu or cuda",
                        ("auto", "cpu", "cuda"))
_THREADS_OPTION = Option(int, 0, "CPU threads for torch while scoring (0 = torch's default)")


class NeuralMetric(Metric):
    """Common parts: model resolution, identity, device, batching over whole jobs, reports.

    Examples:
        >>> from nlgeval.metrics.neural import BERTScoreMetric, EmbeddingCosineMetric
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
    def public_spec(self) -> str:
        """:attr:`spec` with a local model folder shown as its public name (no machine path):
        ``bertscore:model=local:<folder>@<weights SHA-256 prefix>,layer=6``; the label of the
        metric in tables and reports (see :func:`nlgeval.metrics.registry.metric_label`).

        Examples:
            >>> from nlgeval.metrics import get_metric
            >>> get_metric("embedding-cosine:batch_size=8").public_spec  # no folder: the spec
            'embedding-cosine:batch_size=8'
        """
        return self.public_spelling(self.spec)

    def public_spelling(self, spelling: str) -> str:
        """A spec string of this metric (the user's own spelling, say) with the value of
        ``model=`` replaced by the model's public name when it names a local folder.

        Examples:
            >>> from nlgeval.metrics import get_metric
            >>> get_metric("bertscore:layer=17").public_spelling("bertscore: layer=17")
            'bertscore: layer=17'
        """
        if "model" not in self.opts or not _names_folder(self.opts["model"]):
            return spelling
        name, _, rest = spelling.strip().partition(":")
        parts = []
        for part in rest.split(","):
            key, eq, _value = part.partition("=")
            if eq and key.strip() == "model":
                part = f"{key}={self.identity.public_name}"
            parts.append(part)
        return name + ":" + ",".join(parts)

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
        import torch

        texts, hyp_idx, ref_idx, starts, is_ref = _flatten_groups(groups)
        threads = torch.get_num_threads()
        if self.opts["threads"]:
            torch.set_num_threads(self.opts["threads"])
        t0 = time.perf_counter()
        try:
            load_s, truncated, max_tokens, pair_stats = self._pair_stats(texts, hyp_idx, ref_idx)
        finally:
            torch.set_num_threads(threads)
        seconds = time.perf_counter() - t0 - load_s
        # maximum over each hypothesis's references, per column (bert_score.score's rule)
        seg = np.maximum.reduceat(pair_stats, starts, axis=0)
        out: list[np.ndarray] = []
        k = 0
        for _, hyps in groups:
            out.append(np.ascontiguousarray(seg[k : k + len(hyps)], dtype=np.float64))
            k += len(hyps)
        dev = self.device
        is_hyp = set(hyp_idx.tolist())
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
        _warn_truncation(run)  # called from here: its stacklevel counts these frames
        _say(run.summary())
        if advance:
            advance(run.n_outputs)
        return out

    def _pair_stats(
        self, texts: list[str], hyp_idx: np.ndarray, ref_idx: np.ndarray
    ) -> tuple[float, set[int], int, np.ndarray]:
        """(model load seconds, indices of truncated texts, token limit, ``(pairs, k)`` stats)."""
        raise NotImplementedError



def _flatten_groups(
    groups: Groups,
) -> tuple[list[str], np.ndarray, np.ndarray, np.ndarray, set[int]]:
    """Every distinct text once, and the (hypothesis, reference) pairs as indices into them.

    Returns ``(texts, hyp_idx, ref_idx, starts, is_ref)``: pair ``p`` is (``texts[hyp_idx[p]]``,
    ``texts[ref_idx[p]]``); the pairs of one (group, hypothesis) are contiguous and start at
    ``starts``, so that the maximum over references is a ``reduceat``; ``is_ref`` holds the
    indices of the texts used as references.

    Examples:
        >>> texts, h, r, starts, is_ref = _flatten_groups([(["a", "b"], ["x", "a"])])
        >>> texts, h.tolist(), r.tolist(), starts.tolist(), sorted(is_ref)
        (['a', 'b', 'x'], [2, 2, 0, 0], [0, 1, 0, 1], [0, 2], [0, 1])
    """
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
    is_ref: set[int] = set()
    for refs, hyps in groups:
        r_ids = [idx(r) for r in refs]
        is_ref.update(r_ids)
        for h in hyps:
            hi = idx(h)
            starts.append(len(hyp_idx))
            hyp_idx.extend([hi] * len(r_ids))
            ref_idx.extend(r_ids)
    as_array = np.asarray
    return (texts, as_array(hyp_idx, dtype=np.int64), as_array(ref_idx, dtype=np.int64),
            as_array(starts, dtype=np.int64), is_ref)


def _names_folder(model: str) -> bool:
    """True when a ``model=`` value is an existing folder (then it is read as a local model)."""
    from pathlib import Path

    return Path(model).expanduser().is_dir()
