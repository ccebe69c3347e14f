"""One cell of the number-of-items study (González-Corbelle et al. 2023, 4.4-4.5): a
(distribution, method, size) task with all its replications, as a worker runs it.

Each cell draws from its own stream, keyed by the distribution's *name*, the method and the size
(:func:`task_stream`), so a distribution's numbers depend neither on the other distributions in
the run nor on their order, and how cells are batched into chunks and where they run never
changes a number (:mod:`nlgeval.items.study` schedules them).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np

from nlgeval.errors import InputError
from nlgeval.parallel import task_seed

METHODS = ("bootstrap", "rwor")


@lru_cache(maxsize=4)
def _logfact(nmax: int) -> np.ndarray:
    from nlgeval.items._kernels import log_factorial_table

    return log_factorial_table(nmax)


def observed_subsamples(
    rng: np.random.Generator, counts: np.ndarray, size: int, method: str, replications: int
) -> np.ndarray:
    """(R, K) category counts of R subsamples of ``size`` items from the full counts: a
    Multinomial(size, counts / N) draw (``bootstrap``) or a multivariate hypergeometric draw
    (``rwor``, without replacement) per replication (González-Corbelle et al. 2023, 4.4).

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> sub = observed_subsamples(rng, np.array([3, 5, 2]), 4, "rwor", 3)
    >>> sub.shape, sub.sum(axis=1).tolist(), bool((sub <= [3, 5, 2]).all())
    ((3, 3), [4, 4, 4], True)
    """
    counts = np.asarray(counts, dtype=np.int64)
    if method == "bootstrap":
        return rng.multinomial(size, counts / counts.sum(), size=replications)
    if method == "rwor":
        return rng.multivariate_hypergeometric(counts, size, size=replications)
    raise InputError(f"unknown resampling method {method!r}; use 'bootstrap' or 'rwor'")


#: The random-stream scheme of the study, recorded in its parameters and checkpoints.
#: ``by-name/2``: :func:`task_stream`. Runs without this field (before it) keyed each stream by
#: the distribution's position in the run (``spawn_key=(position, method, size)``), so their
#: numbers for a distribution changed with the other distributions in the run.
STREAMS = "by-name/2"


def name_key(name: str) -> tuple[int, ...]:
    """The integers that stand for a distribution's name in its random streams: the number of
    bytes of its UTF-8 encoding, then those bytes four per 32-bit word (little-endian, the last
    word padded with zero bytes).

    The mapping is fixed (no salted ``hash()``, no Unicode normalisation: the name as spelled),
    so a name gives the same integers on every machine and in every run. It is one-to-one: the
    byte count says how many words follow, so two different names never give the same
    integers, and every integer is below 2**32, which ``SeedSequence`` takes as one word each
    (a larger integer would be split into words, and two different keys could then give the
    same words).

    Parameters
    ----------
    name : str
        The distribution's name.

    Returns
    -------
    tuple of int
        ``(n_bytes, word_1, ..., word_k)``, ``k = ceil(n_bytes / 4)``.

    Examples
    --------
    >>> name_key("me")  # b"me" = 0x6d 0x65 -> 0x0000656d
    (2, 25965)
    >>> name_key("me"), name_key("me\\x00")
    ((2, 25965), (3, 25965))
    >>> name_key("")
    (0,)
    """
    if not isinstance(name, str):
        raise TypeError(f"a distribution's name must be a str, got {type(name).__name__}")
    data = name.encode("utf-8")
    words = np.frombuffer(data + b"\0" * (-len(data) % 4), dtype="<u4")
    return (len(data), *(int(w) for w in words))


def task_stream(seed: int, name: str, method: str, size: int) -> np.random.SeedSequence:
    """The independent stream of one task, the (distribution ``name``, ``method``, ``size``)
    cell of a run seeded with ``seed``: ``SeedSequence(seed, spawn_key=(*name_key(name),
    method index, size))`` (:func:`nlgeval.parallel.task_seed`; the method index is its place
    in :data:`METHODS`, 0 = bootstrap, 1 = rwor, whichever methods the run has).

    The key names the cell, not its place in the run: a distribution gets the same streams
    alone or beside others, in any order, on any machine, backend or chunking. Distinct cells
    have distinct keys (:func:`name_key` is one-to-one and comes first, then the method and
    size), and ``SeedSequence`` turns distinct keys into independent streams (O'Neill 2015;
    two keys meet only through a collision of its 128-bit hash). Renaming a distribution
    changes its numbers, as changing ``seed`` does.

    Parameters
    ----------
    seed : int
        The run's seed.
    name : str
        The distribution's name.
    method : str
        ``"bootstrap"`` or ``"rwor"``.
    size : int
        The number of items in the subsets.

    Returns
    -------
    numpy.random.SeedSequence
        The cell's stream (give it to ``numpy.random.default_rng``).

    Examples
    --------
    >>> task_stream(1, "me", "rwor", 5).spawn_key
    (2, 25965, 1, 5)
    """
    return task_seed(seed, *name_key(name), METHODS.index(method), size)


@dataclass(frozen=True)
class _Chunk:
    """A batch of tasks shipped to a worker together (one task = one (distribution, method,
    size) cell with all its replications). Batching only saves per-task overhead: each cell
    draws from its own stream, so the chunking never changes a number."""

    keys: tuple[tuple[int, str, int], ...]  # (distribution position in the run, method, size)
    counts: dict[int, np.ndarray]  # distribution position -> full counts (those the keys use)
    seed: int
    replications: int
    nboot: int
    alpha: float
    step: int
    accept_at: np.ndarray
    reject_at: np.ndarray
    pz_min: float
    names: dict[int, str] = field(default_factory=dict)  # position -> name (keys the streams)


CellResult = tuple[tuple[int, str, int], int, int, float]  # key, rejections, R, mean draws


def _run_cell(chunk: _Chunk, key: tuple[int, str, int]) -> CellResult:
    from nlgeval.items._kernels import two_group_bootstrap

    d, method, size = key
    rng = np.random.default_rng(task_stream(chunk.seed, chunk.names[d], method, size))
    counts = chunk.counts[d]
    full = counts[counts > 0].astype(np.int64)
    r = chunk.replications
    sub = observed_subsamples(rng, full, size, method, r).astype(np.int64)
    out_p = np.empty(r)
    out_reject = np.zeros(r, dtype=np.bool_)
    out_draws = np.zeros(r, dtype=np.int64)
    nmax = int(full.sum()) + size + 1
    two_group_bootstrap(rng, full, sub, chunk.nboot, chunk.alpha, chunk.step, chunk.accept_at,
                        chunk.reject_at, chunk.pz_min, _logfact(nmax), _recip(nmax), out_p,
                        out_reject, out_draws)
    return key, int(out_reject.sum()), r, float(out_draws.mean())


def _run_chunk(chunk: _Chunk) -> list[CellResult]:
    """Run every cell of a chunk (this is the function a backend sends to its workers)."""
    return [_run_cell(chunk, key) for key in chunk.keys]


@lru_cache(maxsize=4)
def _recip(nmax: int) -> np.ndarray:
    from nlgeval.items._kernels import reciprocal_table

    return reciprocal_table(nmax)


def warm_up() -> None:
    """Compile the kernels once in this process (workers forked later inherit them).

    Examples
    --------
    >>> warm_up()  # loads the compiled kernels from numba's cache after the first run
    """
    from nlgeval.items._kernels import two_group_bootstrap

    rng = np.random.default_rng(0)
    full = np.array([3, 2, 5], dtype=np.int64)
    sub = np.array([[1, 1, 1]], dtype=np.int64)
    two_group_bootstrap(rng, full, sub, 20, 0.1, 10, np.array([5, 5], dtype=np.int64),
                        np.array([-1, -1], dtype=np.int64), 0.5, _logfact(40), _recip(40),
                        np.empty(1),
                        np.zeros(1, dtype=np.bool_), np.zeros(1, dtype=np.int64))
