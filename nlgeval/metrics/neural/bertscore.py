"""BERTScore (Zhang, Kishore, Wu, Weinberger & Artzi, 2020, ICLR) through the ``bert-score``
package: the model cut to ``layer`` by ``bert_score.utils.get_model``, texts encoded with its
``sent_encode``, greedy matching by its ``greedy_cos_idf``, idf weights as ``get_idf_dict``
computes them and the maximum of each of P, R and F over the references, as
``bert_score.score`` does. The length-sorted batching is in :mod:`.batching`."""

from __future__ import annotations

import hashlib
import math
import time
from collections import Counter, defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from nlgeval.errors import InputError
from nlgeval.metrics._inputs import per_hypothesis_refs
from nlgeval.metrics.base import Option
from nlgeval.metrics.neural.batching import (
    _encode_texts,
    _match_pairs,
    _sent_encode,
    _truncated,
)
from nlgeval.metrics.neural.common import _DEVICE_OPTION, _THREADS_OPTION, NeuralMetric
from nlgeval.metrics.neural.models import (
    _MODELS,
    _load_hint,
    _one_line,
    _quiet_transformers,
    config_layers,
    file_sha256,
)


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
        return config_layers(self.identity.path)

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
        refs = per_hypothesis_refs(hyps, refs, kw.pop("refs_layout", None))
        self._set_idf(refs)
        return super().segment_stats(hyps, refs, refs_layout="per_hypothesis", **kw)

    def score_batch(self, hyps: Sequence[str], refs: Sequence[Sequence[str]],
                    **kw: Any) -> tuple[np.ndarray, np.ndarray]:
        refs = per_hypothesis_refs(hyps, refs, kw.pop("refs_layout", None))
        self._set_idf(refs)
        return super().score_batch(hyps, refs, refs_layout="per_hypothesis", **kw)

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
        from bert_score.utils import sent_encode

        model, tok, load_s = self._load()
        dev = self.device
        idf_d = self._idf_weights(tok)
        # tokenise every distinct text once (bert-score's own encoder, with its truncation)
        limit = int(tok.model_max_length)
        ids = [_sent_encode(sent_encode, tok, t) for t in texts]
        truncated = _truncated(texts, ids, tok, limit)
        bs = self.opts["batch_size"]
        pad_id = tok.pad_token_id if tok.pad_token_id is not None else 0
        emb, idf_w = _encode_texts(model, ids, idf_d, bs, dev, pad_id)
        res = _match_pairs(emb, idf_w, ids, hyp_idx, ref_idx, bs, dev)
        return load_s, truncated, limit, res

    def _idf_weights(self, tok: Any) -> defaultdict[int, float]:
        """Token id -> idf weight: the batch's idf (``idf=true``), else 1 and 0 for [SEP]/[CLS]
        (``bert_score.score``)."""
        if self.opts["idf"]:
            if self._idf_dict is None:  # scored through the template methods only
                raise InputError("bertscore with idf=true: score through segment_stats")
            idf_d: defaultdict[int, float] = defaultdict(lambda: self._idf_default)
            idf_d.update(self._idf_dict)
        else:
            idf_d = defaultdict(lambda: 1.0)
            idf_d[tok.sep_token_id] = 0
            idf_d[tok.cls_token_id] = 0
        return idf_d

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

