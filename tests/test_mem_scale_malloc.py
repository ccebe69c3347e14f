"""``nlgeval validate`` run as the console script with ``NLGEVAL_MALLOC=keep`` keeps freed
memory for the next allocation (glibc's mallopt; issue 29): large temporary arrays stop
page-faulting anew, most of the system time of a 5 M-output study, at the price of a higher
peak, hence opt-in. Library users and tests keep their own allocator."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

# the child turns transparent huge pages off for itself (prctl PR_SET_THP_DISABLE = 41): when the
# kernel has huge pages free, a fresh 40 MB block faults in ~20 huge pages instead of ~10,000
# small ones (numpy asks for huge pages with madvise), and the default allocator's re-faulting
# (the count compared below) shrank to a few hundred faults: the test failed once in CI for
# that reason, not for the allocator's
_CHILD = """
import ctypes, resource, sys
ctypes.CDLL(None, use_errno=True).prctl(41, 1, 0, 0, 0)
if sys.argv[1] == "script":
    sys.argv[0] = "nlgeval"
from nlgeval.cli.validate import _keep_freed_memory
_keep_freed_memory()
import numpy as np
x = np.ones((20, 250_000))  # 40 MB: above glibc's largest mmap threshold (32 MB)
before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
for _ in range(20):
    y = x * 2.0
    del y
print(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
"""


def _faults(mode: str, **env: str) -> int:
    out = subprocess.run([sys.executable, "-c", _CHILD, mode], capture_output=True, text=True,
                         check=True, env={**os.environ, **env})
    return int(out.stdout.split()[-1])


@pytest.mark.skipif(not hasattr(os, "confstr") or not str(
    os.confstr("CS_GNU_LIBC_VERSION") or "").startswith("glibc"), reason="glibc only")
def test_the_console_script_reuses_freed_large_blocks_on_request() -> None:
    library = _faults("library", NLGEVAL_MALLOC="keep")
    script = _faults("script", NLGEVAL_MALLOC="keep")
    # without it each 40 MB temporary faults in its ~10,000 pages again
    assert script * 4 < library, (script, library)
    # by default (it raises a large study's peak) glibc's settings are left alone
    assert _faults("script") > 4 * script
    assert _faults("script", NLGEVAL_MALLOC="default") > 4 * script


def test_nothing_changes_outside_the_console_script(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    import ctypes

    from nlgeval.cli import validate

    monkeypatch.setattr(sys, "argv", ["pytest"])
    monkeypatch.setattr(ctypes, "CDLL", None)  # would fail if it were called
    validate._keep_freed_memory()
