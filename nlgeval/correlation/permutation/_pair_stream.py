"""PERM-BOTH draws of Pearson's r for every metric pair, prepared once and streamed by chunk.

:func:`~nlgeval.correlation.permutation.compare.comparison_matrix` draws its swap masks
(Deutsch, Dror & Roth 2021) a chunk at a time so that memory does not grow with the number of
permutations. Everything that depends only on the data -- each metric's standardisation, each
pair's swap terms and unswapped sums, the stacked difference matrices -- is prepared here once
per call (:class:`PreparedGroups`) instead of once per chunk, and each chunk of masks is drawn
straight into the layout its level reads
(:mod:`nlgeval.correlation.permutation._stream_kernels`). The numbers are those of
:func:`nlgeval.correlation.permutation._pair_swaps.pair_swap_deltas` called chunk by chunk
(the same pair groups, chunks, matrix products, einsum sums and compiled coefficients;
tests/test_perm_scale_stream.py keeps that code path as its reference):

* segment level: the same BLAS products of the same blocks of masks (``_block_products``);
* system level: einsum's sums over items re-added in einsum's order by a compiled pass,
  checked bit for bit against einsum on the first chunk of every shape (the order depends on
  the shapes, not on the values) -- or, where the previous code took its fused pass, the
  same check of the first draws of every chunk; einsum itself when a check fails;
* item level: the same compiled kernel on the same byte masks.

Two threads when there is more than one chunk: the masks of the next chunk are drawn while
the current one is contracted. One stream, consumed in order by one thread, so the masks
(and the numbers) do not depend on the thread count.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from nlgeval.correlation.permutation._pair_swaps import (
    _ITEM_MAX,
    _SEGMENT_DRAWS,
    _SYSTEM_CELLS,
    PERM_BLOCK,
    PairTerms,
    _block_product,
    _block_products,
    _item_draws_arrays,
    _same,
    _stack_sums,
)
from nlgeval.correlation.permutation.draws import iter_swap_masks

_NUMPY_MASKS = 1 << 24  # mask cells in all up to which numpy draws them (no compiled loop)
_EINSUM_BLOCK = 8192  # numpy's buffer: einsum's blocks of items when it reduces over more


def _layout(level: str) -> str:
    return {"segment": "rows", "system": "transposed"}.get(level, "bytes")


def mask_chunks(shape: tuple[int, int], permutations: int, scheme: str, seed: int,
                chunk: int, layout: str, reuse: bool = False) -> Iterator[np.ndarray]:
    """The masks of :func:`~nlgeval.correlation.permutation.draws.iter_swap_masks` (same
    seed, same chunks, the same 0/1 values) in ``layout``: ``"rows"`` (c, cells) float64,
    ``"bytes"`` (c, S, I) uint8 or ``"transposed"`` (S, I, c) uint8. PERM-BOTH's masks are
    drawn by :func:`~nlgeval.correlation.permutation._stream_kernels.draw_masks` from the
    same generator; the other schemes' (and small studies', which need not load the
    compiled loops) come from ``iter_swap_masks``. ``reuse``: two
    buffers take turns (a chunk is overwritten two chunks later; no new pages per chunk)."""
    S, n_items = shape
    if scheme != "both" or permutations * S * n_items <= _NUMPY_MASKS:
        for m in iter_swap_masks(shape, permutations, scheme, seed, chunk=chunk):
            if layout == "rows":
                yield m.reshape(m.shape[0], -1).astype(float)
            elif layout == "bytes":
                yield np.ascontiguousarray(m, dtype=np.uint8)
            else:
                yield np.ascontiguousarray(m.transpose(1, 2, 0), dtype=np.uint8)
        return
    from nlgeval.correlation.permutation._stream_kernels import (
        draw_masks,
        draw_masks_transposed,
    )

    rng = np.random.default_rng(seed)
    spare: dict[tuple[int, int], list[np.ndarray]] = {}
    for k, d0 in enumerate(range(0, permutations, chunk)):
        c = min(chunk, permutations - d0)
        kept = spare.setdefault((c, k % 2), []) if reuse else []
        if layout == "transposed":
            out = kept[0] if kept else np.empty((S, n_items, c), dtype=np.uint8)
            draw_masks_transposed(rng, out.reshape(S * n_items, c))
        else:
            out = kept[0] if kept else np.empty(
                (c, S, n_items), dtype=float if layout == "rows" else np.uint8)
            draw_masks(rng, out)
        kept[:] = [out]
        yield out.reshape(c, S * n_items) if layout == "rows" else out


class PreparedGroups:
    """The data-only part of every pair group's draws, for one level.

    Per group of pairs (the groups of
    :func:`~nlgeval.correlation.permutation._pair_swaps.pair_swap_deltas`): segment level the
    stacked (D, E, F) columns and the nine unswapped sums; system level the stacked
    differences D and the per-system counts and sums; item level D, E, F and the per-item
    sums (the pairs' terms themselves beyond 8,192 items). r(A) and r(B) of every pair.
    """

    def __init__(self, prep: PairTerms, pairs: Sequence[tuple[str, str]], group: int,
                 joined: bool = False) -> None:
        self.level, self.pairs = prep.level, list(pairs)
        self.groups: list[dict] = []
        self.r: dict[tuple[str, str], tuple[float, float]] = {}
        memo: dict | None = {} if prep.shared else None
        # segment level, several groups of one block of draws per chunk: every pair's columns
        # written into one matrix, contracted by one product per chunk (see joined_check)
        self.joined: np.ndarray | None = None
        if prep.level == "segment" and group < len(self.pairs) and joined:
            self.joined = np.empty((3 * len(self.pairs), np.size(prep.Y)))
        for g0 in range(0, len(self.pairs), group):
            chunk = self.pairs[g0:g0 + group]
            cols = None  # segment level: the group's stacked (D, E, F) rows
            if prep.level == "segment":
                cols = self.joined[3 * g0:3 * (g0 + len(chunk))] if self.joined is not None \
                    else np.empty((3 * len(chunk), np.size(prep.Y)))
            terms = []
            for k, pair in enumerate(chunk):
                t, r_a, r_b = prep.terms(*pair)
                self.r[pair] = (r_a, r_b)
                if cols is not None:  # D, E, F written now and let go: one pair's at a time,
                    # not the group's and their stacked copies (0.7 GB at 5 M cells)
                    for j, X in enumerate(t[4:]):
                        cols[3 * k + j] = X.reshape(-1)
                    t = t[:4]  # V, A0, B0, H0: what the sums take
                terms.append(t)
            self.groups.append(self._group(terms, memo, cols)
                               | {"start": g0, "size": len(chunk)})
        if self.joined is not None:
            self.sums = [np.concatenate(v) for v in zip(*(g["sums"] for g in self.groups),
                                                         strict=True)]
        self.verdict: bool | None = None  # the joined product checked and equal

    def _group(self, terms: list, memo: dict | None, cols: np.ndarray | None) -> dict:
        if self.level == "segment":  # the columns in self.joined, else in the group's own
            return {"cols": None if self.joined is not None else cols,
                    "sums": _stack_sums(terms, None, range(9), memo)}  # of V, A0, B0, H0
        if self.level == "system":
            return {"D": np.ascontiguousarray(np.stack([t[4] for t in terms])),
                    "sums": _stack_sums(terms, 1, (0, 1, 4, 7), memo)}
        if terms[0][0].shape[1] > _ITEM_MAX:
            return {"terms": terms}
        return {"DEF": [np.ascontiguousarray(np.stack([t[j] for t in terms])) for j in (4, 5, 6)],
                "sums": _stack_sums(terms, 0, range(9), memo)}


def streamed_pair_deltas(
    metrics: Mapping[str, np.ndarray], Y: np.ndarray, level: str,
    pairs: Sequence[tuple[str, str]], group: int, permutations: int, scheme: str, seed: int,
    chunk: int, standardise_pair: Callable[..., tuple[np.ndarray, np.ndarray, np.ndarray]],
) -> dict[tuple[str, str], tuple[float, float, np.ndarray]]:
    """r(A), r(B) and r(A*) - r(B*) on every swap mask, for every pair: the numbers of
    ``pair_swap_deltas`` on the masks of ``iter_swap_masks(shape, permutations, scheme,
    seed, chunk=chunk)``, chunk by chunk, concatenated."""
    prepared = PreparedGroups(PairTerms(metrics, Y, level, standardise_pair), pairs, group,
                              joined=chunk <= PERM_BLOCK)
    ra = np.empty((len(prepared.pairs), permutations))
    rb = np.empty_like(ra)
    chunks = mask_chunks(np.shape(Y), permutations, scheme, seed, chunk, _layout(level),
                         reuse=True)
    checked: dict = {}
    d0 = 0
    for masks in _ahead(chunks, permutations > chunk):
        if prepared.joined is not None and joined_check(prepared, masks):
            _joined_draws(prepared, masks, ra, rb, d0)
        else:
            for g in prepared.groups:
                rows = slice(g["start"], g["start"] + g["size"])
                _chunk_draws(level, g, masks, ra[rows], rb[rows], d0, checked)
        d0 += masks.shape[-1] if level == "system" else masks.shape[0]
        del masks  # the buffer is drawn into again two chunks later
    return {pair: (*prepared.r[pair], ra[j] - rb[j]) for j, pair in enumerate(prepared.pairs)}


def _ahead(chunks: Iterator[np.ndarray], threaded: bool) -> Iterator[np.ndarray]:
    """``chunks`` with the next one drawn by a second thread while the caller works."""
    if not threaded:
        yield from chunks
        return
    with ThreadPoolExecutor(max_workers=1) as pool:
        pending = pool.submit(next, chunks, None)
        while (masks := pending.result()) is not None:
            pending = pool.submit(next, chunks, None)
            yield masks


def joined_check(prepared: PreparedGroups, masks: np.ndarray) -> bool:
    """Whether the joined product of all pairs' columns gives each group's product, bit
    for bit, on the first chunk (then on every chunk: BLAS adds in an order set by the
    shapes). Each group's product is taken as the previous code took it, on a fresh copy
    of its columns (one at a time). Otherwise the groups' columns are kept apart from then
    on and the joined matrix dropped."""
    joined = prepared.joined
    assert joined is not None
    if prepared.verdict is None:
        whole = _block_product(masks, joined, 0)
        prepared.verdict = all(
            _same(whole[3 * g["start"]:3 * (g["start"] + g["size"])], _block_products(
                masks, joined[3 * g["start"]:3 * (g["start"] + g["size"])].copy()))
            for g in prepared.groups)
    if not prepared.verdict:
        for g in prepared.groups:
            g["cols"] = joined[3 * g["start"]:3 * (g["start"] + g["size"])].copy()
        prepared.joined = None
    return prepared.verdict


def _joined_draws(prepared: PreparedGroups, masks: np.ndarray, ra: np.ndarray,
                  rb: np.ndarray, d0: int) -> None:
    """The segment-level draws of one block of masks for all pairs from one product."""
    from nlgeval.correlation.permutation._pair_kernels import segment_swap_r

    prod = _block_product(masks, prepared.joined, 0)  # type: ignore[arg-type]
    segment_swap_r(prod, *prepared.sums, ra, rb, d0)  # type: ignore[call-arg, arg-type]


def _chunk_draws(level: str, g: dict, masks: np.ndarray, ra: np.ndarray, rb: np.ndarray,
                 d0: int, checked: dict) -> None:
    """One chunk of masks for one pair group, into ``ra``/``rb`` from column ``d0``."""
    if level == "segment":
        from nlgeval.correlation.permutation._pair_kernels import segment_swap_r

        for s0 in range(0, masks.shape[0], _SEGMENT_DRAWS):
            prod = _block_products(masks[s0:s0 + _SEGMENT_DRAWS], g["cols"])
            segment_swap_r(prod, *g["sums"], ra, rb, d0 + s0)  # type: ignore[call-arg]
    elif level == "system":
        _system_chunk(g, masks, ra, rb, d0, checked)
    else:
        P = masks.shape[0]
        if "terms" in g:
            a, b = _item_draws_arrays(g["terms"], masks.astype(float))
        else:
            from nlgeval.correlation.permutation._pair_kernels import item_swap_means

            a, b = np.empty((g["size"], P)), np.empty((g["size"], P))
            item_swap_means(masks, *g["DEF"], *g["sums"], a, b)  # type: ignore[call-arg]
        ra[:, d0:d0 + P], rb[:, d0:d0 + P] = a, b


def _system_chunk(g: dict, mT: np.ndarray, ra: np.ndarray, rb: np.ndarray, d0: int,
                  checked: dict) -> None:
    """The system level of one chunk (``mT``: (systems, items, draws) bytes) in the parts
    of pairs of the previous code, each part's sums by :func:`_system_sums`."""
    from nlgeval.correlation.permutation._pair_kernels import system_swap_r

    S, n_items, P = mT.shape
    fused = 2 <= P and S <= 128 and n_items <= _ITEM_MAX
    step = max(1, _SYSTEM_CELLS // max(1, (S * n_items) if fused else (P * S)))
    cnt, sa, sb, sh = g["sums"]
    for k in range(0, g["size"], step):
        part = slice(k, k + step)
        mD = _system_sums(mT, g["D"][part], fused, checked)
        a, b = np.empty((mD.shape[2], P)), np.empty((mD.shape[2], P))
        system_swap_r(mD, cnt[part], sa[part], sb[part], sh[part], a, b)
        ra[part, d0:d0 + P], rb[part, d0:d0 + P] = a, b


def _float_masks(mT: np.ndarray) -> np.ndarray:
    """The (draws, systems, items) float masks einsum read in the previous code (C order:
    einsum's order follows the memory layout)."""
    return np.ascontiguousarray(mT.transpose(2, 0, 1), dtype=float)


def _system_sums(mT: np.ndarray, D: np.ndarray, fused: bool, checked: dict) -> np.ndarray:
    """``einsum("psi,ksi->psk", masks, D)``, bit for bit.

    ``fused`` (the shapes where the previous code took its compiled pass): einsum's sums of
    the first draws against the one-block order, every chunk, as that code did. Otherwise
    the first chunk of every (draws, pairs) shape is summed by einsum and by the candidate
    orders (einsum's blocks of 8,192 items, one block); the first equal one serves every
    chunk of that shape, einsum itself when none is."""
    from nlgeval.correlation.permutation._pair_kernels import ONE_BLOCK, system_mask_sums

    S, n_items, P = mT.shape
    out = np.empty((P, S, D.shape[0]))
    if fused:
        few = min(P, PERM_BLOCK)
        head = np.empty((few, S, D.shape[0]))
        system_mask_sums(np.ascontiguousarray(mT[:, :, :few]), D, ONE_BLOCK, head)
        if not _same(head, np.einsum("psi,ksi->psk", _float_masks(mT[:, :, :few]), D)):
            return np.einsum("psi,ksi->psk", _float_masks(mT), D)
        system_mask_sums(mT, D, ONE_BLOCK, out)
        return out
    key = (P, D.shape[0])
    if key not in checked:
        want = np.einsum("psi,ksi->psk", _float_masks(mT), D)
        checked[key] = None
        for block in (_EINSUM_BLOCK, ONE_BLOCK):
            system_mask_sums(mT, D, block, out)
            if _same(out, want):
                checked[key] = block
                return out
        return want
    if checked[key] is None:
        return np.einsum("psi,ksi->psk", _float_masks(mT), D)
    system_mask_sums(mT, D, checked[key], out)
    return out
