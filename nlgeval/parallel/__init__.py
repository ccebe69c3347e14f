"""Execution backends for embarrassingly parallel work, shared by the whole package.

A backend maps a picklable, module-level function over picklable tasks and yields results as
they finish (in any order). nlgeval ships three: ``serial`` (this process), ``process`` (a local
process pool) and ``dask`` (a Dask ``distributed`` cluster: a ``LocalCluster`` on this machine
or any running scheduler). Another engine (Ray, ...) only needs the same two members,
``workers`` and ``imap_unordered``.

Three rules make every result independent of the backend, the number of workers and the
chunking of the work into tasks:

* a task's function is pure (module level, no global state that changes its answer);
* a task that draws random numbers takes its own stream, :func:`task_seed` (``SeedSequence``
  with a spawn key naming the task, as ``SeedSequence(seed).spawn`` would), never a shared
  generator;
* results are put back in task order (:func:`map_tasks`), whatever order they finish in;
* a task whose numbers come from matrix products runs them with one BLAS thread
  (:func:`single_blas_thread`): OpenBLAS sums in another order with another thread count.

Faults: on Dask a task whose worker dies is run again elsewhere by the scheduler (the function
is pure, so the answer is the same); ``retries`` also re-runs tasks that raised. Progress: the
same bar as a local run (:func:`map_tasks`: units of work done / total), and
:class:`DaskBackend` announces the scheduler and dashboard addresses. See docs/scale.md.
"""
from __future__ import annotations

from nlgeval.parallel._threads import single_blas_thread as single_blas_thread
from nlgeval.parallel.backends import BACKENDS as BACKENDS
from nlgeval.parallel.backends import ExecutionBackend as ExecutionBackend
from nlgeval.parallel.backends import ProcessPoolBackend as ProcessPoolBackend
from nlgeval.parallel.backends import SerialBackend as SerialBackend
from nlgeval.parallel.backends import chunks as chunks
from nlgeval.parallel.backends import execution_record as execution_record
from nlgeval.parallel.backends import get_backend as get_backend
from nlgeval.parallel.backends import map_tasks as map_tasks
from nlgeval.parallel.backends import task_seed as task_seed
from nlgeval.parallel.dask_backend import LEAN_WORKER_CONFIG as LEAN_WORKER_CONFIG
from nlgeval.parallel.dask_backend import DaskBackend as DaskBackend
from nlgeval.parallel.dask_backend import parse_scheduler as parse_scheduler
from nlgeval.parallel.split import SplitGroup as SplitGroup
from nlgeval.parallel.split import map_split as map_split
