"""One cell of the number-of-items study (González-Corbelle et al. 2023, 4.4-4.5): a
(distribution, method, size) task with all its replications, as a worker runs it.

Each cell draws from its own stream, ``SeedSequence(seed)`` spawned by position
(:func:`task_stream`), so how cells are batched into chunks and where they run never changes a
number (:mod:`nlgeval.items.study` schedules them).
"""

from __future__ import annotations

from dataclasses import dataclass
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


def task_stream(seed: int, dist_index: int, method: str, size: int) -> np.random.SeedSequence:
    """The independent stream of one task: ``SeedSequence(seed)`` spawned by position
    (:func:`nlgeval.parallel.task_seed`).

    Examples
    --------
    >>> task_stream(1, 0, "rwor", 5).spawn_key
    (0, 1, 5)
    """
    # spawn_key (dist, method, size) is what root.spawn(n)[d].spawn(2)[m].spawn(N)[s] yields.
    return task_seed(seed, dist_index, METHODS.index(method), size)


@dataclass(frozen=True)
class _Chunk:
    """A batch of tasks shipped to a worker together (one task = one (distribution, method,
    size) cell with all its replications). Batching only saves per-task overhead: each cell
    draws from its own stream, so the chunking never changes a number."""

    keys: tuple[tuple[int, str, int], ...]
    counts: dict[int, np.ndarray]  # distribution position -> full counts (those the keys use)
    seed: int
    replications: int
    nboot: int
    alpha: float
    step: int
    accept_at: np.ndarray
    reject_at: np.ndarray
    pz_min: float


CellResult = tuple[tuple[int, str, int], int, int, float]  # key, rejections, R, mean draws


def _run_cell(chunk: _Chunk, key: tuple[int, str, int]) -> CellResult:
    from nlgeval.items._kernels import two_group_bootstrap

    d, method, size = key
    rng = np.random.default_rng(task_stream(chunk.seed, d, method, size))
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
