"""Progress bars for long work (rich), silent under ``--quiet``, in CI, or when not a terminal.

Bars go to stderr so that ``--json`` output on stdout stays clean.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable, Iterator, Sized
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from rich.progress import Progress, TaskID

T = TypeVar("T")

_QUIET = False


def set_quiet(quiet: bool) -> None:
    """Silence (or re-enable) all progress output of this process.

    Examples
    --------
    >>> set_quiet(True)
    >>> is_quiet()
    True
    >>> set_quiet(False)
    """
    global _QUIET
    _QUIET = quiet


def quiet_requested() -> bool:
    """True when quiet was asked for explicitly (``--quiet``, :func:`set_quiet`), and only
    then: unlike :func:`is_quiet`, not because of CI or an stderr that is no terminal. For
    one-line summaries that should reach logs but not a ``--quiet`` run.

    Examples
    --------
    >>> set_quiet(True)
    >>> quiet_requested()
    True
    >>> set_quiet(False)
    >>> quiet_requested()    # even in CI or without a terminal
    False
    """
    return _QUIET


def is_quiet() -> bool:
    """True under ``--quiet``, when ``CI`` or ``NLGEVAL_QUIET`` is set, or stderr is no TTY.

    Examples
    --------
    >>> set_quiet(True)
    >>> is_quiet()          # also True in CI, with NLGEVAL_QUIET, or when stderr is not a terminal
    True
    >>> set_quiet(False)
    """
    if _QUIET or os.environ.get("NLGEVAL_QUIET") or os.environ.get("CI"):
        return True
    return not sys.stderr.isatty()


class _NullBar:
    def advance(self, n: float = 1) -> None:  # noqa: D401 - trivial
        pass

    def update(self, **kwargs: object) -> None:
        pass


class _Bar:
    def __init__(self, progress: Progress, task_id: TaskID) -> None:
        self._p, self._t = progress, task_id

    def advance(self, n: float = 1) -> None:
        self._p.advance(self._t, n)

    def update(self, **kwargs: Any) -> None:
        self._p.update(self._t, **kwargs)


@contextmanager
def progress_bar(total: float | None, description: str) -> Iterator[_Bar | _NullBar]:
    """A context manager yielding an object with ``advance(n)``; a no-op when quiet.

    Examples
    --------
    >>> with progress_bar(3, "scoring") as bar:
    ...     for _ in range(3):
    ...         bar.advance(1)
    """
    if is_quiet():
        yield _NullBar()
        return
    # rich is imported only when a bar is shown (start-up of every command, quiet runs)
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    with Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
        console=Console(stderr=True),
        transient=True,
    ) as p:
        yield _Bar(p, p.add_task(description, total=total))


def track(iterable: Iterable[T], description: str, total: float | None = None) -> Iterator[T]:
    """Iterate with a progress bar (``total`` defaults to ``len(iterable)`` when defined).

    Examples
    --------
    >>> [x * x for x in track(range(4), "squaring")]
    [0, 1, 4, 9]
    """
    if total is None and isinstance(iterable, Sized):
        total = len(iterable)
    with progress_bar(total, description) as bar:
        for x in iterable:
            yield x
            bar.advance(1)
