"""What a reader of docs/human.md, triangle.md, items.md and experiment.md meets when running
the pages' commands: help texts that agree with the pages."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from nlgeval.cli import app

_COMMANDS = [["design", "latin-square"], ["design", "bws"], ["compare"], ["agreement"],
             ["plan", "power"], ["spans", "score"], ["bws", "score"]]


@pytest.mark.parametrize("command", _COMMANDS, ids=" ".join)
def test_help_shows_no_doctest(command: list[str]) -> None:
    # the docstrings' doctests are for the test suite; in --help Rich also ate their
    # [...] lines ("rows =" with nothing after it in compare and agreement)
    res = CliRunner().invoke(app, [*command, "--help"], env={"COLUMNS": "100"})
    assert res.exit_code == 0, res.output
    assert ">>>" not in res.output and "Examples" not in res.output
    assert "Usage" in res.output
