"""Compiled, exact re-implementation of sacrebleu's TER (Snover et al., 2006; Post, 2018).

sacrebleu's ``sacrebleu.metrics.lib_ter.translation_edit_rate`` reimplements Tercom's greedy
shift search in pure Python: in every round it computes a beam-limited Levenshtein distance
with a back-trace, turns the trace into an alignment, enumerates shift candidates (matching
word blocks of at most 10 words at most 50 positions apart), scores every candidate by a new
beam edit distance and applies the best one while it reduces the distance; at most 1,000
candidates are evaluated per (hypothesis, reference) pair. This module runs *the same algorithm*
in numba on integer word ids (words are mapped to ids first, so only equality is compared, as in
sacrebleu) and returns the same number of edits for every pair:

* the beam: pseudo-diagonal ``floor(i * len(ref) / len(hyp))`` with the same floating-point
  operations, width 25 (wider for very unequal lengths, same formula), the full last row;
  cells outside the beam are "infinity" (``10**16``) and sums with it are kept as sacrebleu
  keeps them (integers, no saturation);
* the back-trace with sacrebleu's preference (substitution/match, then deletion, then insertion,
  each replacing the current cell only when strictly cheaper), the flipped trace and the
  alignment (``trace_to_alignment``);
* the shift candidates in sacrebleu's enumeration order (``_find_shifted_pairs``: hypothesis
  start, reference start, block length), the same three filters, the same target positions
  (``align[...] + 1``, consecutive duplicates skipped), ``_perform_shift``'s three cases with
  Python's slice clamping, the ranking tuple (gain, length, -start, -target) compared strictly
  so ties keep the first candidate (two candidates equal on all four keys are the same shift,
  so sacrebleu's final comparison of the shifted word lists never changes the choice);
* the candidate counter: it accumulates over rounds, a round stops after the block whose
  candidates reach 1,000, and a round that reaches the limit is discarded (its best shift is
  not applied), exactly as in ``translation_edit_rate``.

sacrebleu's ``BeamEditDistance`` cache (a trie of hypothesis prefixes -> matrix rows, at most
10,000 nodes) cannot change a result: all hypotheses scored by one cache are permutations of
one hypothesis, so they have the same length, hence the same beam for every row, and a row is a
function of the prefix it is keyed by. Here the same saving is exact by construction: a
candidate's matrix is computed from the first position where it differs from the current
hypothesis, starting from the current hypothesis' stored row.

Multiple references (``TER._compute_segment_statistics``): the minimum number of edits over
the references, and the *average* reference length (computed by the caller). References are
visited in order of a lower bound on their edits, ``max(|h|, |r|) - |bag(h) & bag(r)|``
(shifts keep the bag of words and the beam distance is at least the exact Levenshtein
distance), and the visit stops once the bound reaches the best count -- only the minimum is
used, so this is exact.

Written by hand because no library implements Tercom's shift heuristics (rapidfuzz and
friends compute plain Levenshtein distances). Equality with sacrebleu is tested on the WebNLG
2020 and E2E corpora, on random word strings over tiny vocabularies (many shifts), unicode and
empty texts (tests/test_ter_fast.py).
"""

# shape: one algorithm kept whole: the 47-line account of how it matches sacrebleu + kernels

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from numba import njit

# sacrebleu.metrics.lib_ter's constants (a test checks they still agree with sacrebleu)
MAX_SHIFT_SIZE = 10
MAX_SHIFT_DIST = 50
BEAM_WIDTH = 25
MAX_SHIFT_CANDIDATES = 1000
INT_INFINITY = 10**16

_NOP, _SUB, _INS, _DEL, _UNDEF = 0, 1, 2, 3, 4


@njit(cache=True)
def _beam_bounds(n: int, m: int) -> tuple[np.ndarray, np.ndarray]:
    """Columns ``[lo[i], hi[i])`` computed in row i (1..n) of BeamEditDistance._edit_distance."""
    ratio = m / n
    if BEAM_WIDTH < ratio / 2:
        width = math.ceil(ratio / 2 + BEAM_WIDTH)
    else:
        width = BEAM_WIDTH
    lo = np.zeros(n + 1, dtype=np.int64)
    hi = np.zeros(n + 1, dtype=np.int64)
    for i in range(1, n + 1):
        diag = math.floor(i * ratio)
        lo[i] = max(0, diag - width)
        hi[i] = min(m + 1, diag + width)
        if i == n:
            hi[i] = m + 1
    return lo, hi


@njit(cache=True)
def _full_matrix(w, r, lo, hi, cost, op) -> int:
    """Beam edit distance of hypothesis ``w`` to ``r`` with the operation of every cell."""
    n, m = len(w), len(r)
    for j in range(m + 1):
        cost[0, j] = j
        op[0, j] = _INS
    for i in range(1, n + 1):
        for j in range(m + 1):
            cost[i, j] = INT_INFINITY
            op[i, j] = _UNDEF
        wi = w[i - 1]
        for j in range(lo[i], hi[i]):
            if j == 0:
                cost[i, 0] = cost[i - 1, 0] + 1
                op[i, 0] = _DEL
                continue
            best = cost[i, j]
            best_op = op[i, j]
            if wi == r[j - 1]:
                c = cost[i - 1, j - 1]
                o = _NOP
            else:
                c = cost[i - 1, j - 1] + 1
                o = _SUB
            if best > c:
                best = c
                best_op = o
            c = cost[i - 1, j] + 1
            if best > c:
                best = c
                best_op = _DEL
            c = cost[i, j - 1] + 1
            if best > c:
                best = c
                best_op = _INS
            cost[i, j] = best
            op[i, j] = best_op
    return cost[n, m]


@njit(cache=True)
def _candidate_distance(s, r, start, lo, hi, cost, prev, cur) -> int:
    """Beam edit distance of ``s`` whose first ``start`` words equal the current hypothesis
    (whose rows are in ``cost``): the rows below ``start``, costs only (sacrebleu's minimum over
    the same three operations; the order of the tests only matters for the back-trace)."""
    n, m = len(s), len(r)
    for j in range(m + 1):
        prev[j] = cost[start, j]
    for i in range(start + 1, n + 1):
        for j in range(m + 1):
            cur[j] = INT_INFINITY
        si = s[i - 1]
        for j in range(lo[i], hi[i]):
            if j == 0:
                cur[0] = prev[0] + 1
                continue
            v = INT_INFINITY
            c = prev[j - 1] if si == r[j - 1] else prev[j - 1] + 1
            if c < v:
                v = c
            c = prev[j] + 1
            if c < v:
                v = c
            c = cur[j - 1] + 1
            if c < v:
                v = c
            cur[j] = v
        prev, cur = cur, prev
    return prev[m]


@njit(cache=True)
def _perform_shift(w, start, length, target, out) -> None:
    """sacrebleu's ``_perform_shift`` into ``out`` (Python slices, clamped at the end)."""
    n = len(w)
    k = 0
    if target < start:
        parts = ((0, target), (start, start + length), (target, start), (start + length, n))
    elif target > start + length:
        parts = ((0, start), (start + length, target), (start, start + length), (target, n))
    else:
        parts = (
            (0, start),
            (start + length, length + target),
            (start, start + length),
            (length + target, n),
        )
    for a, b in parts:
        b = min(b, n)
        for t in range(a, b):
            out[k] = w[t]
            k += 1


@njit(cache=True)
def _alignment(op, n, m):
    """The back-trace of ``op`` (sacrebleu reads it backwards into a string), then the flipped
    trace's alignment: ``(align, ref_err, hyp_err)`` with ``align[ref position] = hypothesis
    position`` and error flags on both sides."""
    trace = np.empty(n + m, dtype=np.int8)
    t = 0
    i, j = n, m
    while i > 0 or j > 0:
        o = op[i, j]
        trace[t] = o
        t += 1
        if o == _NOP or o == _SUB:
            i -= 1
            j -= 1
        elif o == _INS:
            j -= 1
        elif o == _DEL:
            i -= 1
        else:
            raise RuntimeError("unknown operation in the TER back-trace")
    align = np.empty(m, dtype=np.int64)
    ref_err = np.zeros(m, dtype=np.int64)
    hyp_err = np.zeros(n, dtype=np.int64)
    pos_h = -1
    pos_r = -1
    for k in range(t - 1, -1, -1):
        o = trace[k]
        if o == _NOP or o == _SUB:
            pos_h += 1
            pos_r += 1
            align[pos_r] = pos_h
            if o == _SUB:
                hyp_err[pos_h] = 1
                ref_err[pos_r] = 1
        elif o == _DEL:  # flipped: an insertion into the hypothesis side
            pos_h += 1
            hyp_err[pos_h] = 1
        else:  # _INS, flipped: a deletion on the reference side
            pos_r += 1
            align[pos_r] = pos_h
            ref_err[pos_r] = 1
    return align, ref_err, hyp_err


@njit(cache=True)
def _is_candidate(start_h, start_r, length, align, ref_err, hyp_err) -> bool:
    """``_shift``'s three filters of the block (start_h, start_r, length): errors on both
    sides, and the reference block not aligned into the hypothesis block."""
    herr = 0
    for k in range(start_h, start_h + length):
        herr += hyp_err[k]
    rerr = 0
    for k in range(start_r, start_r + length):
        rerr += ref_err[k]
    a = align[start_r]
    return herr != 0 and rerr != 0 and not (start_h <= a < start_h + length)


@njit(cache=True)
def _ranks_first(gain, length, start, idx, best) -> bool:
    """sacrebleu's ranking tuple (gain, length, -start, -target) compared strictly with the best
    so far, ``best = [found, gain, length, start, target]`` (the first candidate always wins)."""
    if best[0] == 0:
        return True
    if gain != best[1]:
        return gain > best[1]
    if length != best[2]:
        return length > best[2]
    if start != best[3]:
        return start < best[3]
    return idx < best[4]


@njit(cache=True)
def _try_targets(w, r, start_h, start_r, length, align, pre, lo, hi, cost, prev, cur, cand,
                 best_words, best, checked):
    """Every target position of one candidate block, as ``_shift`` scores them; the best shift
    is kept in ``best``/``best_words``. Returns the updated candidate count."""
    n, m = len(w), len(r)
    prev_idx = -1
    for offset in range(-1, length):
        if start_r + offset == -1:
            idx = 0
        elif start_r + offset < m:
            idx = align[start_r + offset] + 1
        else:
            break
        if idx == prev_idx:
            continue
        prev_idx = idx
        _perform_shift(w, start_h, length, idx, cand)
        first = 0
        while first < n and cand[first] == w[first]:
            first += 1
        if first == n:
            dist = pre
        else:
            dist = _candidate_distance(cand, r, first, lo, hi, cost, prev, cur)
        checked += 1
        gain = pre - dist
        if _ranks_first(gain, length, start_h, idx, best):
            best[0], best[1], best[2], best[3], best[4] = 1, gain, length, start_h, idx
            best_words[:] = cand
    return checked


@njit(cache=True)
def _shift_round(w, r, lo, hi, cost, op, prev, cur, cand, best_words, checked):
    """One call of sacrebleu's ``_shift``: ``(gain, found, checked, distance of w)``; the best
    shifted hypothesis is left in ``best_words``. The blocks are enumerated as
    ``_find_shifted_pairs`` does (hypothesis start, reference start, block length)."""
    n, m = len(w), len(r)
    pre = _full_matrix(w, r, lo, hi, cost, op)
    align, ref_err, hyp_err = _alignment(op, n, m)
    best = np.zeros(5, dtype=np.int64)  # found, gain, length, start, target
    stop = False
    for start_h in range(n):
        if stop:
            break
        for start_r in range(m):
            if stop:
                break
            if abs(start_r - start_h) > MAX_SHIFT_DIST:
                continue
            length = 0
            while w[start_h + length] == r[start_r + length] and length < MAX_SHIFT_SIZE:
                length += 1
                # --- the candidate block (start_h, start_r, length), as _shift sees it
                evaluated = _is_candidate(start_h, start_r, length, align, ref_err, hyp_err)
                if evaluated:
                    checked = _try_targets(w, r, start_h, start_r, length, align, pre, lo, hi,
                                           cost, prev, cur, cand, best_words, best, checked)
                if evaluated and checked >= MAX_SHIFT_CANDIDATES:
                    stop = True
                    break
                # --- back in _find_shifted_pairs
                if n == start_h + length or m == start_r + length:
                    break
    return best[1], best[0] == 1, checked, pre


@njit(cache=True)
def _ter_pair(h, r) -> int:
    """Number of edits of ``translation_edit_rate(h, r)`` (token ids)."""
    n, m = len(h), len(r)
    if m == 0:
        return n
    if n == 0:
        return m  # the first matrix row; no shift candidates
    lo, hi = _beam_bounds(n, m)
    cost = np.empty((n + 1, m + 1), dtype=np.int64)
    op = np.empty((n + 1, m + 1), dtype=np.int8)
    prev = np.empty(m + 1, dtype=np.int64)
    cur = np.empty(m + 1, dtype=np.int64)
    w = h.copy()
    cand = np.empty(n, dtype=h.dtype)
    best_words = np.empty(n, dtype=h.dtype)
    shifts = 0
    checked = 0
    while True:
        gain, found, checked, dist = _shift_round(
            w, r, lo, hi, cost, op, prev, cur, cand, best_words, checked
        )
        if checked >= MAX_SHIFT_CANDIDATES or not found or gain <= 0:
            return shifts + dist
        shifts += 1
        w[:] = best_words


@njit(cache=True)
def _pairs_kernel(hyp_ids, hyp_off, ref_ids, ref_off):
    n_pairs = len(hyp_off) - 1
    out = np.empty(n_pairs, dtype=np.int64)
    for k in range(n_pairs):
        out[k] = _ter_pair(
            hyp_ids[hyp_off[k] : hyp_off[k + 1]], ref_ids[ref_off[k] : ref_off[k + 1]]
        )
    return out


@njit(cache=True)
def _min_edits_kernel(hyp_ids, hyp_off, ref_lo, ref_hi, ref_ids, ref_off, vocab_size):
    """Per hypothesis k, the minimum edits over references ``ref_lo[k]..ref_hi[k]-1``, visited
    by increasing bag-of-words lower bound and stopping when the bound reaches the best."""
    n_hyps = len(hyp_off) - 1
    out = np.empty(n_hyps, dtype=np.int64)
    have = np.zeros(vocab_size, dtype=np.int64)
    used = np.zeros(vocab_size, dtype=np.int64)
    for k in range(n_hyps):
        h = hyp_ids[hyp_off[k] : hyp_off[k + 1]]
        r0, r1 = ref_lo[k], ref_hi[k]
        for t in h:
            have[t] += 1
        bounds = np.empty(r1 - r0, dtype=np.int64)
        for q in range(r0, r1):
            r = ref_ids[ref_off[q] : ref_off[q + 1]]
            common = 0
            for t in r:
                if used[t] < have[t]:
                    used[t] += 1
                    common += 1
            for t in r:
                used[t] = 0
            bounds[q - r0] = max(len(h), len(r)) - common
        for t in h:
            have[t] = 0
        best = INT_INFINITY
        for q in np.argsort(bounds, kind="mergesort"):
            if bounds[q] >= best:
                break
            e = _ter_pair(h, ref_ids[ref_off[r0 + q] : ref_off[r0 + q + 1]])
            if e < best:
                best = e
        out[k] = best
    return out


class Vocabulary:
    """Word -> integer id (ids only need to be equal for equal words).

    Examples:
        >>> ids, offsets = Vocabulary().encode([["a", "b"], ["b"]])
        >>> ids.tolist(), offsets.tolist()
        ([0, 1, 1], [0, 2, 3])
    """

    def __init__(self) -> None:
        self.ids: dict[str, int] = {}

    def encode(self, texts: Sequence[Sequence[str]]) -> tuple[np.ndarray, np.ndarray]:
        """Concatenated ids (int32) and offsets (``len(texts) + 1``, int64) of tokenised texts."""
        ids = self.ids
        flat: list[int] = []
        lengths = np.zeros(len(texts) + 1, dtype=np.int64)
        for k, words in enumerate(texts):
            flat.extend([ids.setdefault(x, len(ids)) for x in words])
            lengths[k + 1] = len(words)
        return np.asarray(flat, dtype=np.int32), np.cumsum(lengths)


def pair_edits(hyps: Sequence[Sequence[str]], refs: Sequence[Sequence[str]]) -> np.ndarray:
    """Edits of ``sacrebleu.metrics.lib_ter.translation_edit_rate(hyps[k], refs[k])`` for every
    k (tokenised texts: lists of words), as an int64 array.

    Examples:
        >>> pair_edits([["a", "b", "c"], ["x"]], [["c", "a", "b"], ["y"]]).tolist()
        [1, 1]
    """
    if len(hyps) != len(refs):
        raise ValueError(f"{len(hyps)} hypotheses but {len(refs)} references")
    voc = Vocabulary()
    h_ids, h_off = voc.encode(hyps)
    r_ids, r_off = voc.encode(refs)
    return _pairs_kernel(h_ids, h_off, r_ids, r_off)


def translation_edit_rate(words_hyp: Sequence[str], words_ref: Sequence[str]) -> tuple[int, int]:
    """Drop-in for sacrebleu's ``translation_edit_rate``: ``(number of edits, len(words_ref))``.

    Examples:
        Equal to sacrebleu's (one block shift here):

        >>> translation_edit_rate("a b c".split(), "c a b".split())
        (1, 3)
        >>> from sacrebleu.metrics.lib_ter import translation_edit_rate as sacre
        >>> sacre("a b c".split(), "c a b".split())
        (1, 3)
    """
    return int(pair_edits([words_hyp], [words_ref])[0]), len(words_ref)


Group = tuple[Sequence[Sequence[str]], Sequence[Sequence[str]]]


def group_min_edits(groups: Sequence[Group]) -> list[np.ndarray]:
    """For groups ``(references, hypotheses)`` of tokenised texts (lists of words; at least one
    reference per group), the minimum edits of every hypothesis over the group's references --
    the first statistic of sacrebleu's ``TER._compute_segment_statistics`` -- as one int64
    array per group. Each reference is encoded once and all groups go through one compiled
    call.

    Examples:
        >>> refs = [["the", "cat", "sat"], ["a", "cat", "sat"]]
        >>> hyps = [["a", "cat"], ["the", "dog", "sat"]]
        >>> [e.tolist() for e in group_min_edits([(refs, hyps)])]
        [[1, 1]]
    """
    voc = Vocabulary()
    all_refs: list[Sequence[str]] = []
    all_hyps: list[Sequence[str]] = []
    lo: list[int] = []
    hi: list[int] = []
    sizes: list[int] = []
    for refs, hyps in groups:
        if len(refs) == 0:
            raise ValueError("every hypothesis needs at least one reference")
        start = len(all_refs)
        all_refs.extend(refs)
        all_hyps.extend(hyps)
        lo.extend([start] * len(hyps))
        hi.extend([len(all_refs)] * len(hyps))
        sizes.append(len(hyps))
    h_ids, h_off = voc.encode(all_hyps)
    r_ids, r_off = voc.encode(all_refs)
    edits = _min_edits_kernel(
        h_ids,
        h_off,
        np.asarray(lo, dtype=np.int64),
        np.asarray(hi, dtype=np.int64),
        r_ids,
        r_off,
        max(len(voc.ids), 1),
    )
    return np.split(edits, np.cumsum(sizes)[:-1]) if sizes else []


def min_edits(
    hyps: Sequence[Sequence[str]], refs: Sequence[Sequence[Sequence[str]]]
) -> np.ndarray:
    """Per tokenised hypothesis ``hyps[k]``, the minimum edits over its tokenised references
    ``refs[k]`` (at least one each); see :func:`group_min_edits`.

    Examples:
        >>> min_edits([["a"], ["b", "c"]], [[["a"], ["b"]], [["c", "b"]]]).tolist()
        [0, 1]
    """
    if len(hyps) != len(refs):
        raise ValueError(f"{len(hyps)} hypotheses but {len(refs)} reference lists")
    out = group_min_edits([(r, [h]) for h, r in zip(hyps, refs, strict=True)])
    return np.concatenate(out) if out else np.zeros(0, dtype=np.int64)
