"""The console script imports scipy.stats without scipy's generated docstring notes (issue 29,
main job start-up): only in the ``nlgeval`` process, only for a checked scipy release, the
original restored right after, and every number scipy computes unchanged."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from nlgeval.cli import _import_scipy_stats_unannotated, _is_console_script

NOTE = "Array API Standard Support"

#: scipy functions the statistics use, on random data with ties, NaN-free and near-constant
#: columns and values near 1e200 / 1e-200; printed as exact float reprs.
_VALUES = """
import json, sys
import numpy as np
rng = np.random.default_rng(29)
out = []
for trial in range(20):
    n = int(rng.integers(3, 40))
    x = rng.integers(0, 4, n).astype(float) if trial % 2 else rng.normal(size=n)
    y = x + rng.normal(scale=1e-9 if trial % 5 == 0 else 1.0, size=n)
    scale = (1e200, 1e-200, 1.0)[trial % 3]
    x, y = x * scale, y * scale
    for f in (stats.pearsonr, stats.spearmanr, stats.kendalltau):
        res = f(x, y)
        out.append(repr((float(res[0]), float(res[1]))))
    out.append(repr(float(stats.t.sf(abs(float(rng.normal())) * 3, n - 2))))
    out.append(repr(float(stats.norm.ppf(0.975))))
    out.append(repr([float(v) for v in stats.rankdata(np.round(x / scale, 1))]))
print(json.dumps({"values": out, "note": NOTE in (stats.pearsonr.__doc__ or "")}))
"""


def _values(prelude: str) -> dict[str, object]:
    code = f"NOTE = {NOTE!r}\n{prelude}\nfrom scipy import stats\n{_VALUES}"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    return dict(json.loads(out.strip().splitlines()[-1]))


def test_unannotated_import_gives_identical_numbers_and_restores_scipy() -> None:
    plain = _values("")
    fast = _values("from nlgeval.cli import _import_scipy_stats_unannotated as f\n"
                   "assert f() is True\n"
                   "from scipy._lib import _array_api, _docscrape\n"
                   "assert _array_api.FunctionDoc is _docscrape.FunctionDoc")
    assert plain["note"] is True and fast["note"] is False  # the note was skipped, nothing else
    assert fast["values"] == plain["values"]


def test_noop_for_an_unchecked_scipy_release() -> None:
    other = _values("import scipy\nscipy.__version__ = '9.0.0'\n"
                    "from nlgeval.cli import _import_scipy_stats_unannotated as f\n"
                    "assert f() is False")
    assert other["note"] is True


def test_noop_once_scipy_stats_is_loaded() -> None:
    import scipy.stats  # noqa: F401

    assert _import_scipy_stats_unannotated() is False


_WRAPPER = f"""#!{sys.executable}
import atexit, sys
from nlgeval.cli import main

def report():
    stats = sys.modules.get("scipy.stats")
    sys.stderr.write("NOTE\\n" if stats and {NOTE!r} in stats.pearsonr.__doc__ else "NONE\\n")

atexit.register(report)
sys.exit(main())
"""


@pytest.mark.parametrize(("name", "expected"), [("nlgeval", "NONE"),
                                                ("not_the_console_script.py", "NOTE")])
def test_only_the_console_script_skips_the_notes(tmp_path: Path, name: str,
                                                 expected: str) -> None:
    script = tmp_path / name
    script.write_text(_WRAPPER)
    res = subprocess.run([sys.executable, str(script), "validate", "e2e", "--alpha", "2"],
                         capture_output=True, text=True, env=dict(os.environ), check=False)
    assert res.returncode == 2
    assert res.stderr.strip().splitlines()[-1] == expected
    assert not _is_console_script()  # nlgeval imported by pytest: never the console script


def test_validate_help_loads_no_scipy(tmp_path: Path) -> None:
    script = tmp_path / "nlgeval"
    script.write_text(f"#!{sys.executable}\nimport atexit, sys\nfrom nlgeval.cli import main\n"
                      "atexit.register(lambda: sys.stderr.write(\n"
                      "    'SCIPY\\n' if 'scipy.stats' in sys.modules else 'NOSCIPY\\n'))\n"
                      "sys.exit(main())\n")
    res = subprocess.run([sys.executable, str(script), "validate", "--help"],
                         capture_output=True, text=True, check=False)
    assert res.returncode == 0 and "Usage" in res.stdout
    assert res.stderr.strip().splitlines()[-1] == "NOSCIPY"
