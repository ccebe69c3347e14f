"""Batching and truncation for BERTScore: every distinct text tokenised once with bert-score's
own encoder, encoded in batches of similar token length (longest first, bounded by a token
budget), then (output, reference) pairs greedily matched in length-sorted batches.

Hand-written because ``bert_score.score`` batches within one call only: here one pass covers a
whole scoring job (all systems), and the steps reuse bert-score's functions (``sent_encode``,
``bert_encode``, ``greedy_cos_idf``) so that the numbers are bert-score's.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np


def _truncated(texts: list[str], ids: list[list[int]], tok: Any, limit: int) -> set[int]:
    """Indices of the texts whose full tokenisation is longer than ``limit`` tokens (the
    encoder cut them; only texts at the limit after encoding are tokenised again)."""
    truncated: set[int] = set()
    n_special = tok.num_special_tokens_to_add()
    for i, x in enumerate(ids):
        if len(x) >= limit and len(tok.tokenize(texts[i].strip())) + n_special > limit:
            truncated.add(i)
    return truncated


def _encode_texts(
    model: Any, ids: list[list[int]], idf_d: Mapping[int, float], batch_size: int, dev: str,
    pad_id: int,
) -> tuple[list[Any], list[Any]]:
    """Token embeddings and idf weights of every text (``bert_score.utils.bert_encode``).

    Batches hold texts of similar token length, longest first: ``batch_size`` texts, fewer when
    they are long (at most ``batch_size`` x 64 tokens incl. padding), so that one long text
    does not pad a whole batch to 512 tokens.
    """
    import torch
    from bert_score.utils import bert_encode

    lens = _lengths(ids)
    order = np.argsort(-lens, kind="stable")
    emb: list[Any] = [None] * len(ids)
    idf_w: list[Any] = [None] * len(ids)
    with torch.no_grad():
        for chunk in _token_batches(order, lens, batch_size):
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
    return emb, idf_w


def _match_pairs(
    emb: list[Any], idf_w: list[Any], ids: list[list[int]], hyp_idx: np.ndarray,
    ref_idx: np.ndarray, batch_size: int, dev: str,
) -> np.ndarray:
    """``(pairs, 3)`` P, R, F1 of every (output, reference) pair by
    ``bert_score.utils.greedy_cos_idf``, in batches of pairs of similar lengths."""
    import torch
    from bert_score.utils import greedy_cos_idf
    from torch.nn.utils.rnn import pad_sequence

    lens = _lengths(ids)
    n_pairs = len(hyp_idx)
    res = np.empty((n_pairs, 3), dtype=np.float64)
    porder = np.lexsort((lens[ref_idx], lens[hyp_idx]))[::-1]
    pbs = max(batch_size, 64)
    with torch.no_grad():
        for s in range(0, n_pairs, pbs):
            chunk = porder[s : s + pbs]
            r_stats = _pad_batch([emb[i] for i in ref_idx[chunk]],
                                 [idf_w[i] for i in ref_idx[chunk]], dev, pad_sequence)
            h_stats = _pad_batch([emb[i] for i in hyp_idx[chunk]],
                                 [idf_w[i] for i in hyp_idx[chunk]], dev, pad_sequence)
            p, r, f = greedy_cos_idf(*r_stats, *h_stats, False)
            res[chunk] = torch.stack((p, r, f), dim=-1).cpu().double().numpy()
    return res


def _lengths(ids: list[list[int]]) -> np.ndarray:
    return np.fromiter((len(x) for x in ids), dtype=np.int64, count=len(ids))


def _token_batches(order: np.ndarray, lens: np.ndarray, batch_size: int) -> list[np.ndarray]:
    """Split ``order`` (indices sorted by decreasing ``lens``) into batches of at most
    ``batch_size`` texts and ``batch_size * 64`` padded tokens (at least one text each).

    Examples:
        >>> lens = np.array([300, 20, 20, 10])
        >>> [b.tolist() for b in _token_batches(np.arange(4), lens, 2)]
        [[0], [1, 2], [3]]
    """
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

