"""Execution backends of the number-of-items study: the package-wide ones of
:mod:`nlgeval.parallel` (serial, a local process pool, a Dask cluster), re-exported here so
that existing imports keep working.

Examples
--------
>>> from nlgeval.items.backends import get_backend
>>> get_backend("serial").name
'serial'
"""

from __future__ import annotations

from nlgeval.parallel import (
    BACKENDS,
    DaskBackend,
    ExecutionBackend,
    ProcessPoolBackend,
    SerialBackend,
    get_backend,
    parse_scheduler,
)

__all__ = [
    "BACKENDS",
    "DaskBackend",
    "ExecutionBackend",
    "ProcessPoolBackend",
    "SerialBackend",
    "get_backend",
    "parse_scheduler",
]
