"""Exact, vectorised chrF / chrF++ statistics for many hypotheses sharing one reference list.

sacrebleu's ``CHRF._compute_segment_statistics`` (Popovic, 2015, 2017; Post, 2018) counts the
character (and word) n-grams of every reference again for every hypothesis and matches them in
Python loops. For a multi-reference corpus where many systems share an item, this module, per
item:

1. counts the n-grams of the references and of all distinct hypotheses once, as integer count
   matrices (texts x n-gram vocabulary, one per order) -- n-grams get integer ids by sorting
   (``np.unique``), order by order: the id of an n-gram at position p is the id of the
   (n-1)-gram at p combined with the token at p+n-1, so codes never overflow;
2. gets the clipped matches of every (hypothesis, reference) pair at once,
   ``minimum(H[:, None, :], R[None, :, :]).sum(-1)``;
3. evaluates sacrebleu's ``CHRF._compute_f_score`` for every pair with the *same floating-point
   operations in the same order* (so the values are bit-identical, not just close), and keeps,
   per hypothesis, the first reference with the maximal F -- sacrebleu's rule (strictly greater
   than the best so far, starting at -1).

Written by hand because no library provides batched multi-reference chrF. Equality with
``sacrebleu.sentence_chrf`` is tested on random strings and on E2E (tests/test_metrics.py).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np


def _count_matrices(
    tokens: np.ndarray, lengths: np.ndarray, max_order: int
) -> list[np.ndarray]:
    """For tokens (int ids, texts concatenated, ``lengths`` per text): one ``(texts, V_n)``
    count matrix per n-gram order n = 1..max_order (columns: the distinct n-grams)."""
    n_texts = len(lengths)
    total = int(lengths.sum())
    text_of = np.repeat(np.arange(n_texts, dtype=np.int64), lengths)
    starts = np.cumsum(lengths) - lengths
    remaining = np.repeat(starts + lengths, lengths) - np.arange(total, dtype=np.int64)
    base = int(tokens.max()) + 1 if total else 1
    rank = np.zeros(total, dtype=np.int64)
    out = []
    for n in range(1, max_order + 1):
        valid = np.flatnonzero(remaining >= n)
        if n == 1:
            codes = tokens[valid]
        else:
            codes = rank[valid] * base + tokens[valid + (n - 1)]
        _, inv = np.unique(codes, return_inverse=True)
        inv = inv.reshape(-1)
        v = int(inv.max()) + 1 if len(inv) else 0
        rank[valid] = inv
        counts = np.bincount(text_of[valid] * v + inv, minlength=n_texts * v)
        out.append(counts.reshape(n_texts, v))
    return out


def _char_tokens(texts: Sequence[str], whitespace: bool) -> tuple[np.ndarray, np.ndarray]:
    """Code points (as small ids) of each text, whitespace removed unless ``whitespace``
    (sacrebleu's ``extract_all_char_ngrams``: ``"".join(line.split())``)."""
    if not whitespace:
        texts = ["".join(t.split()) for t in texts]
    lengths = np.fromiter(map(len, texts), dtype=np.int64, count=len(texts))
    # surrogatepass: a lone surrogate (a JSON "\ud800" escape, surrogateescape decoding) is
    # one character to sacrebleu too; other text encodes as without it
    cps = np.frombuffer("".join(texts).encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
    _, ids = np.unique(cps, return_inverse=True)
    return ids.reshape(-1).astype(np.int64), lengths


def _word_tokens(
    texts: Sequence[str], split: Callable[[str], list[str]]
) -> tuple[np.ndarray, np.ndarray]:
    vocab: dict[str, int] = {}
    ids: list[int] = []
    lengths = []
    for t in texts:
        words = split(t)
        lengths.append(len(words))
        ids.extend(vocab.setdefault(w, len(vocab)) for w in words)
    return np.asarray(ids, dtype=np.int64), np.asarray(lengths, dtype=np.int64)


def f_scores(stats: np.ndarray, beta: int, eps_smoothing: bool) -> np.ndarray:
    """sacrebleu's ``CHRF._compute_f_score`` over the last axis of ``stats``
    (``3 * order`` counts: hyp, ref, match per order), bit-identical to it: same operations, in
    the same order, in float64 (Python floats are IEEE doubles). Requires ``beta != 0``.

    Examples:
        sacrebleu's chrF F-score of one statistics row (unigrams only: 2 of 3 characters match,
        2 in the reference):

        >>> round(float(f_scores(np.array([[3, 2, 2]]), 2, False)[0]), 4)
        90.9091
        >>> from sacrebleu.metrics import CHRF
        >>> round(CHRF(char_order=1, word_order=0)._compute_f_score([3, 2, 2]), 4)
        90.9091
    """
    eps = 1e-16
    factor = float(beta**2)
    k = float(1 + beta**2)
    n_order = stats.shape[-1] // 3
    st = stats.astype(np.float64)
    shape = stats.shape[:-1]
    score = np.zeros(shape)
    avg_prec = np.zeros(shape)
    avg_rec = np.zeros(shape)
    eff_order = np.zeros(shape, dtype=np.int64)
    with np.errstate(divide="ignore", invalid="ignore"):
        for i in range(n_order):
            n_hyp, n_ref, n_match = st[..., 3 * i], st[..., 3 * i + 1], st[..., 3 * i + 2]
            hyp_pos, ref_pos = n_hyp > 0, n_ref > 0
            prec = np.where(hyp_pos, n_match / n_hyp, eps)
            rec = np.where(ref_pos, n_match / n_ref, eps)
            if eps_smoothing:
                denom = factor * prec + rec
                score = score + np.where(denom > 0, k * prec * rec / denom, eps)
            eff = hyp_pos & ref_pos
            # x + 0.0 == x exactly, so this is sacrebleu's conditional accumulation
            avg_prec = avg_prec + np.where(eff, prec, 0.0)
            avg_rec = avg_rec + np.where(eff, rec, 0.0)
            eff_order += eff
        if eps_smoothing:
            return 100 * score / n_order
        has = eff_order > 0
        avg_prec = np.where(has, avg_prec / np.maximum(eff_order, 1), 0.0)
        avg_rec = np.where(has, avg_rec / np.maximum(eff_order, 1), 0.0)
        pos = (avg_prec + avg_rec) != 0
        f = k * avg_prec * avg_rec
        f = f / (factor * avg_prec + avg_rec)
        return np.where(pos, 100 * f, 0.0)


def group_statistics(
    hyps: Sequence[str],
    refs: Sequence[str],
    *,
    char_order: int,
    word_order: int,
    beta: int,
    whitespace: bool,
    eps_smoothing: bool,
    split_words: Callable[[str], list[str]],
) -> np.ndarray:
    """sacrebleu's chrF segment statistics of every hypothesis against the same references:
    an ``(len(hyps), 3 * (char_order + word_order))`` int64 array, row i = the statistics of
    the reference sacrebleu keeps for ``hyps[i]``. Texts must already be preprocessed
    (lowercased when asked).

    Examples:
        >>> from sacrebleu.metrics import CHRF
        >>> lib = CHRF()
        >>> st = group_statistics(["the cat", "a dog"], ["the cat sat"], char_order=6, word_order=0,
        ...                       beta=2, whitespace=False, eps_smoothing=False,
        ...                       split_words=lib._remove_punctuation)
        >>> st.shape
        (2, 18)
        >>> [round(float(f), 4) for f in f_scores(st, 2, False)]
        [55.771, 3.125]
        >>> import sacrebleu
        >>> [round(sacrebleu.sentence_chrf(h, ["the cat sat"]).score, 4)
        ...  for h in ("the cat", "a dog")]
        [55.771, 3.125]
    """
    texts = [*refs, *hyps]
    n_ref = len(refs)
    mats = []
    if char_order > 0:
        mats += _count_matrices(*_char_tokens(texts, whitespace), char_order)
    if word_order > 0:
        mats += _count_matrices(*_word_tokens(texts, split_words), word_order)
    n_order = len(mats)
    stats: np.ndarray = np.empty((len(hyps), n_ref, n_order, 3), dtype=np.int64)
    for o, m in enumerate(mats):
        r_mat, h_mat = m[:n_ref], m[n_ref:]
        ref_tot = r_mat.sum(axis=1)
        hyp_tot = h_mat.sum(axis=1)
        cols = np.flatnonzero(h_mat.any(axis=0) & r_mat.any(axis=0))
        if len(cols):
            h, r = h_mat[:, cols], r_mat[:, cols]
            match = np.minimum(h[:, None, :], r[None, :, :]).sum(axis=-1)
        else:
            match = np.zeros((len(hyps), n_ref), dtype=np.int64)
        # sacrebleu: the hypothesis count only counts when the reference has n-grams
        stats[:, :, o, 0] = np.where(ref_tot[None, :] > 0, hyp_tot[:, None], 0)
        stats[:, :, o, 1] = ref_tot[None, :]
        stats[:, :, o, 2] = match
    stats = stats.reshape(len(hyps), n_ref, 3 * n_order)
    f = f_scores(stats, beta, eps_smoothing)
    best = np.argmax(f, axis=1)  # first maximum = sacrebleu's strict ">" scan
    return stats[np.arange(len(hyps)), best]
