"""Resample counts and resampled system means, the bottom of the bootstrap
(:mod:`nlgeval.correlation.bootstrap`, which imports them; Deutsch, Dror & Roth 2021): how often
each unit is drawn in each resample (:func:`resample_counts`), and the (B, S) resampled system
means of the system-level bootstrap of rank coefficients, remembered by content, since a
validation study asks for the same metric's means once per criterion and the same criterion's
once per metric."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator

import numpy as np

from nlgeval.correlation._counts import resample_counts as resample_counts

#: cells of one gathered (B, S, I) chunk of resamples (bounds the memory of every gather)
_CELLS_PER_CHUNK = 3_000_000

_MEANS_CACHE: dict[bytes, np.ndarray] = {}
_MEANS_CACHE_BYTES = 64 * 2**20  # bound on the remembered means (oldest forgotten first)


def _resampled_system_means(
    X: np.ndarray, Y: np.ndarray, item_idx: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """(B, S) resampled system means of ``X`` and of ``Y`` on their common complete cells.

    Each matrix's means are remembered separately: the validation study asks for the same
    metric's means once per criterion and rank coefficient, and for the same criterion's means
    once per metric (same scores, same seed). The key is a digest of the contents, so the
    answer is the same as recomputing.
    """
    ok = np.isfinite(X) & np.isfinite(Y)
    # the index matrix is the large part of the key: digest it once for both matrices
    h = hashlib.blake2b(np.ascontiguousarray(item_idx).data, digest_size=16)
    h.update(str((item_idx.shape, item_idx.dtype.str, ok.shape)).encode())
    h.update(np.packbits(ok).data)
    base = h.digest()
    return _cached_means(X, ok, item_idx, base), _cached_means(Y, ok, item_idx, base)


def _cached_means(Z: np.ndarray, ok: np.ndarray, item_idx: np.ndarray, base: bytes
                  ) -> np.ndarray:
    """The remembered :func:`_system_means_of_resamples` of ``Z``; ``base``: digest of the rest."""
    Zz = np.where(ok, Z, 0.0)
    key = base + _digest(Zz)
    if key not in _MEANS_CACHE:
        means = _system_means_of_resamples(Zz, ok, item_idx)
        means.flags.writeable = False
        _MEANS_CACHE[key] = means
        while sum(v.nbytes for v in _MEANS_CACHE.values()) > _MEANS_CACHE_BYTES \
                and len(_MEANS_CACHE) > 1:
            del _MEANS_CACHE[next(iter(_MEANS_CACHE))]
    return _MEANS_CACHE[key]


def _digest(a: np.ndarray) -> bytes:
    return hashlib.blake2b(np.ascontiguousarray(a).data, digest_size=16).digest()


def _system_means_of_resamples(
    Zz: np.ndarray, ok: np.ndarray, item_idx: np.ndarray
) -> np.ndarray:
    """(B, S) per-system means over the complete cells ``ok`` of the items drawn in each resample.

    ``Zz``: the scores with incomplete cells set to 0. Bitwise equal to
    :func:`~nlgeval.correlation.levels.system_means` of every resampled (B, S, I) stack -- the
    same sums over the same items in the order numpy sums a contiguous row (pairwise), in one
    compiled pass without the stack (:func:`._item_bootstrap.resampled_row_means`; tested) --
    but for the S distinct systems instead of the drawn ones; the resampled systems are then
    rows of the result. (Products with resample counts would be faster but round
    differently, which reorders systems whose means are equal in exact arithmetic and so
    changes rank coefficients.)
    """
    # numba is imported only when a system-level rank bootstrap asks for it (start-up time)
    from nlgeval.correlation._item_bootstrap import resampled_row_means

    return resampled_row_means(np.ascontiguousarray(Zz, dtype=float), np.ascontiguousarray(ok),
                               np.ascontiguousarray(item_idx, dtype=np.int64))


#: resamples per matrix product of the Pearson bootstrap (fixed: OpenBLAS sums a row of a
#: product in an order that depends on the product's shape, so every product has this many
#: rows, whatever the number of resamples or the memory budget)
PEARSON_BLOCK = 32

#: item-index cells drawn and processed at once by the bootstrap (int64: 64 MiB), rounded to
#: whole Pearson blocks; memory then grows with the data, not with data x resamples
DRAW_CELLS = 2**23


def index_chunks(
    n_systems: int, n_items: int, resamples: int, resample: str, seed: object,
    cells: int = DRAW_CELLS,
) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """The bootstrap's (B x S) system and (B x I) item index matrices, ``k`` resamples at a time.

    One ``numpy.random.default_rng(seed)`` stream, consumed in the order of one large draw:
    all system indices first (when systems are resampled; B x S is small), then the item
    indices in consecutive blocks of rows -- numpy's bounded integers are drawn one after the
    other, so the concatenated chunks are the indices of a single draw (tested). ``k`` is a
    whole number of :data:`PEARSON_BLOCK` resamples, at most ``cells`` item indices.

    Examples
    --------
    >>> parts = list(index_chunks(3, 4, 70, "both", 0, cells=128))
    >>> [p[1].shape for p in parts]
    [(32, 4), (32, 4), (6, 4)]
    """
    rng = np.random.default_rng(seed)  # type: ignore[arg-type]  # any seed numpy accepts
    if resample in ("systems", "both"):
        sys_idx = rng.integers(0, n_systems, size=(resamples, n_systems))
    else:
        sys_idx = np.broadcast_to(np.arange(n_systems), (resamples, n_systems))
    k = max(1, cells // max(1, n_items) // PEARSON_BLOCK) * PEARSON_BLOCK
    for b0 in range(0, resamples, k):
        b = min(k, resamples - b0)
        if resample in ("items", "both"):
            item_idx = rng.integers(0, n_items, size=(b, n_items))
        else:
            item_idx = np.broadcast_to(np.arange(n_items), (b, n_items))
        yield sys_idx[b0:b0 + b], item_idx
