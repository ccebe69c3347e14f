"""Start-up cost of the command line (issue 19): ``nlgeval --help`` loads no heavy library."""

from __future__ import annotations

import subprocess
import sys

HEAVY = ("matplotlib", "statsmodels", "sacrebleu", "torch", "numba", "scipy")

_PROBE = f"""
import sys
from nlgeval.cli import main
try:
    main(["--help"])
except SystemExit:
    pass
print("LOADED", sorted(m for m in {HEAVY!r} if m in sys.modules))
"""


def test_help_does_not_import_heavy_libraries() -> None:
    out = subprocess.run([sys.executable, "-c", _PROBE], capture_output=True, text=True,
                         check=True).stdout
    assert "Usage" in out
    assert out.strip().splitlines()[-1] == "LOADED []"
