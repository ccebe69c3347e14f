"""One BLAS thread while a statistical task runs, on every backend.

OpenBLAS (numpy's bundled BLAS) splits a matrix product among its threads in a way that changes
the order of the floating-point sums with the number of threads: the bootstrap's Pearson
statistics (``wi @ M``, a (resamples x items) @ (items x 3 systems) product) differed in the
last 1-2 digits between the main process (2 BLAS threads on a 2-core machine) and a Dask worker
(1 thread, as Dask's workers are configured), which moved 442 of 1,000 resampled system-level
coefficients at 10 systems x 10,000 items and so the percentile bounds. Running every task with
exactly one BLAS thread makes the sums the same in the main process, in a process pool and on
Dask workers (with the same BLAS library and CPU kind; a cluster mixing CPU generations or BLAS
builds may still round differently).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

_CONTROLLER: list[Any] = []


def _controller() -> Any:
    if not _CONTROLLER:
        try:
            from threadpoolctl import ThreadpoolController
        except ImportError:  # pragma: no cover - threadpoolctl is a dependency
            _CONTROLLER.append(None)
        else:
            _CONTROLLER.append(ThreadpoolController())
    return _CONTROLLER[0]


@contextlib.contextmanager
def single_blas_thread() -> Iterator[None]:
    """Run the block with one BLAS thread (threadpoolctl), restoring the count afterwards.

    The matrix products of the statistics then sum in the same order whatever the machine's
    core count or the backend's worker settings, so a task's numbers are the same in this
    process and on any worker (see docs/scale.md).

    Examples
    --------
    >>> import numpy as np
    >>> a = np.random.default_rng(0).normal(size=(300, 2000))
    >>> with single_blas_thread():
    ...     one = a @ a.T
    >>> with single_blas_thread():
    ...     bool((a @ a.T == one).all())
    True
    """
    ctl = _controller()
    if ctl is None:  # pragma: no cover
        yield
        return
    with ctl.limit(limits=1, user_api="blas"):
        yield
