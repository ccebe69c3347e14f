"""The console script ends without the interpreter's teardown (issue 29): exit handlers run,
output is flushed and the exit status is the command's; nlgeval called from Python code (tests,
notebooks, other programs) raises SystemExit as before."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from nlgeval.cli import main

_WRAPPER = f"""#!{sys.executable}
import atexit, sys
from nlgeval.cli import main

class Teardown:
    def __del__(self):
        sys.stderr.write("TEARDOWN\\n")

keep = Teardown()
atexit.register(lambda: sys.stderr.write("ATEXIT\\n"))
sys.exit(main())
"""


def _run(tmp_path: Path, name: str, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    script = tmp_path / name
    script.write_text(_WRAPPER)
    return subprocess.run([sys.executable, str(script), *args], capture_output=True, text=True,
                          env={**os.environ, **env}, check=False)


@pytest.mark.parametrize(("args", "status"), [(["--help"], 0), (["no-such-command"], 2)])
def test_console_script_skips_teardown_keeps_status_and_output(tmp_path: Path, args: list[str],
                                                               status: int) -> None:
    res = _run(tmp_path, "nlgeval", *args)
    assert res.returncode == status
    assert ("Usage" if status == 0 else "Try 'nlgeval --help'.") in res.stdout + res.stderr
    assert "ATEXIT" in res.stderr  # exit handlers ran
    assert "TEARDOWN" not in res.stderr  # the interpreter's teardown did not


def test_other_scripts_and_opt_out_exit_normally(tmp_path: Path) -> None:
    for res in (_run(tmp_path, "not_the_console_script.py", "--help"),
                _run(tmp_path, "nlgeval", "--help", NLGEVAL_NORMAL_EXIT="1")):
        assert res.returncode == 0
        assert "ATEXIT" in res.stderr
        assert "TEARDOWN" in res.stderr


def test_called_from_python_raises_system_exit() -> None:
    with pytest.raises(SystemExit) as exc:
        main(["--help"])
    assert exc.value.code == 0
