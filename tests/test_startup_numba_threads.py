"""Process-pool workers run numba with one thread (issue 29): two workers on two cores do not
spin 2 x 2 threads. The kernels give the same numbers for any thread count, so only CPU time
changes (the report of the main job is byte-identical)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from nlgeval.parallel import ProcessPoolBackend
from nlgeval.parallel.backends import one_numba_thread


def _worker_threads(_: int) -> int:
    import numba

    return int(numba.get_num_threads())


def test_forked_workers_use_one_numba_thread() -> None:
    numba = pytest.importorskip("numba")
    if numba.config.NUMBA_NUM_THREADS < 2:
        pytest.skip("numba has one thread here anyway")
    before = numba.get_num_threads()
    assert sorted(ProcessPoolBackend(2).imap_unordered(_worker_threads, [0, 1])) == [1, 1]
    assert numba.get_num_threads() == before  # the parent keeps its threads


_PROBE = """
import sys
from nlgeval.parallel.backends import one_numba_thread
assert "numba" not in sys.modules
one_numba_thread()
import numba
print(numba.config.NUMBA_NUM_THREADS, numba.get_num_threads())
"""


def test_before_numba_is_imported_the_environment_says_one_thread() -> None:
    pytest.importorskip("numba")
    out = subprocess.run([sys.executable, "-c", _PROBE], capture_output=True, text=True,
                         check=True).stdout.split()
    assert out == ["1", "1"]


def test_initializer_is_callable_twice_in_one_process() -> None:
    numba = pytest.importorskip("numba")
    before = numba.get_num_threads()
    try:
        one_numba_thread()
        one_numba_thread()
        assert numba.get_num_threads() == 1
    finally:
        numba.set_num_threads(before)
