"""``nlgeval ARGS`` run in the test process (the console script's ``main``), for tests that
need its exit status and what it printed."""

from __future__ import annotations

import pytest

from nlgeval.cli import main


def exit_status(args: list[str]) -> int:
    """Run ``nlgeval ARGS``; its exit status (0 when ``main`` returns)."""
    try:
        main(args)
    except SystemExit as exc:
        return int(exc.code or 0)
    return 0


def run_cli(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    """Run ``nlgeval ARGS``; its exit status, standard output and standard error."""
    code = exit_status(args)
    out = capsys.readouterr()
    return code, out.out, out.err
