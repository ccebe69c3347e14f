"""The two meanings of quiet in :mod:`nlgeval.progress`: ``is_quiet()`` (no bars: --quiet, CI,
NLGEVAL_QUIET or no terminal) and ``quiet_requested()`` (only an explicit --quiet), which the
neural runner's one-line summary follows so that it still reaches CI logs."""

from __future__ import annotations

import pytest

from nlgeval import progress
from nlgeval.metrics.neural import run as neural_run


@pytest.fixture(autouse=True)
def _loud() -> object:
    progress.set_quiet(False)
    yield
    progress.set_quiet(False)


def test_quiet_requested_is_only_the_explicit_flag(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CI", "1")
    assert progress.is_quiet() and not progress.quiet_requested()
    progress.set_quiet(True)
    assert progress.is_quiet() and progress.quiet_requested()


def test_neural_summary_line_follows_the_explicit_flag(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("CI", "1")  # no bars in CI, but the summary line is printed
    monkeypatch.delenv("NLGEVAL_QUIET", raising=False)
    neural_run._say("summary")
    assert capsys.readouterr().err == "summary\n"
    progress.set_quiet(True)
    neural_run._say("summary")
    assert capsys.readouterr().err == ""
    progress.set_quiet(False)
    monkeypatch.setenv("NLGEVAL_QUIET", "1")
    neural_run._say("summary")
    assert capsys.readouterr().err == ""
