"""Work split below a task: a shared value computed once, then many small pieces that use it.

A validation study with one human criterion is one unit of work at the level of criteria; its
pieces (one metric's correlations at one level, one level's metric comparisons, ...) are
independent once the criterion's matrices exist. :func:`map_split` runs such groups: each
group's shared value is made by one function, and every piece of the group is a function of
that value and the piece. On a Dask backend the shared value is one task whose result (a
Dask future) is an argument of every piece's task, so the scheduler runs the pieces on any
worker and moves the value to them (Dask futures, no scheduling of our own); on the other
backends a group is one task that makes the value and then runs its pieces in order.

The results are the same on every backend as long as each piece is a pure function of
the shared value and the piece (its random draws seeded from the piece, not from a shared
generator) and runs its matrix products with one BLAS thread (:func:`single_blas_thread`).
"""

from __future__ import annotations

import uuid
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from nlgeval.errors import NlgevalError
from nlgeval.parallel.backends import get_backend, map_tasks
from nlgeval.parallel.dask_backend import DaskBackend, _require_distributed
from nlgeval.progress import progress_bar


@dataclass(frozen=True)
class SplitGroup:
    """One group of :func:`map_split`: ``make(*args)`` is the shared value, ``pieces`` the
    arguments of the pieces that use it, ``weights`` their cost for the progress bar.

    Examples
    --------
    >>> SplitGroup(sum, ([1, 2],), (10, 20)).pieces
    (10, 20)
    """

    make: Callable[..., Any]
    args: tuple[Any, ...]
    pieces: tuple[Any, ...]
    weights: tuple[float, ...] = ()


@dataclass(frozen=True)
class _WholeGroup:
    """A group as one task (serial and process backends): the shared value, then the pieces."""

    group: SplitGroup
    fn: Callable[[Any, Any], Any]

    def __call__(self) -> list[Any]:
        shared = self.group.make(*self.group.args)
        return [self.fn(shared, piece) for piece in self.group.pieces]


def _run_whole(task: _WholeGroup) -> list[Any]:
    return task()


def map_split(fn: Callable[[Any, Any], Any], groups: Sequence[SplitGroup], backend: Any, *,
              description: str = "tasks") -> list[list[Any]]:
    """``[[fn(g.make(*g.args), piece) for piece in g.pieces] for g in groups]`` on a backend.

    On a :class:`DaskBackend` every group's shared value and every piece is its own Dask task
    (a piece depends on its group's value through a future); elsewhere one task per group
    (:func:`nlgeval.parallel.map_tasks`). Results come back in group and piece order.

    Examples
    --------
    >>> from operator import mul
    >>> map_split(mul, [SplitGroup(sum, ([1, 2],), (10, 20)), SplitGroup(len, ("ab",), (1,))],
    ...           "serial")
    [[30, 60], [2]]
    """
    be = get_backend("serial" if backend is None else backend)
    if not isinstance(be, DaskBackend):
        return map_tasks(_run_whole, [_WholeGroup(g, fn) for g in groups], be,
                         description=description,
                         weights=[sum(_weights(g)) for g in groups])
    with be:
        return _dask_split(be, fn, groups, description)


def _weights(group: SplitGroup) -> list[float]:
    return list(group.weights) if group.weights else [1.0] * len(group.pieces)


def _dask_split(be: DaskBackend, fn: Callable[[Any, Any], Any], groups: Sequence[SplitGroup],
                description: str) -> list[list[Any]]:
    distributed = _require_distributed()
    client = be.client
    prefix = f"split-{uuid.uuid4().hex[:12]}"
    retries = be.retries or None
    where: dict[str, tuple[int, int, float]] = {}
    futures = []
    with warnings.catch_warnings():
        # the data travels inside the graph on purpose: the scheduler keeps it, so a task
        # can be re-run when its worker dies (scattered data would die with it)
        warnings.filterwarnings("ignore", message="Sending large graph")
        for g, group in enumerate(groups):
            shared = client.submit(group.make, *group.args, key=f"{prefix}-shared-{g}",
                                   pure=False, retries=retries)
            for p, (piece, w) in enumerate(zip(group.pieces, _weights(group), strict=True)):
                key = f"{prefix}-piece-{g}-{p}"
                futures.append(client.submit(fn, shared, piece, key=key, pure=False,
                                             retries=retries))
                where[key] = (g, p, w)
            del shared  # held by the pieces that need it; released when they are done
    out: list[list[Any]] = [[None] * len(group.pieces) for group in groups]
    total = sum(sum(_weights(g)) for g in groups)
    try:
        with progress_bar(total, description) as bar:
            for fut, result in distributed.as_completed(futures, loop=client.loop,
                                                          with_results=True):
                g, p, w = where[fut.key]
                out[g][p] = result
                fut.release()
                bar.advance(w)
    except distributed.KilledWorker as exc:
        raise NlgevalError(
            f"Dask workers died while running a task ({exc}); most often a worker ran out "
            "of memory: give the workers more memory, or validate a sample of the items"
        ) from None
    finally:
        left = [f for f in futures if not f.done()]
        if left:
            client.cancel(left)
    return out
