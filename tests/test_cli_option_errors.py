"""Bad command-line usage gives one line and exit status 2, as bad input does.

An unknown option or command, an option value of the wrong type, an enum choice typo, a
missing argument: click raises its ``UsageError``; typer drew it as a multi-line usage box.
``nlgeval`` now prints click's own message on one line (with its "did you mean" hint) and
"Try 'nlgeval CMD --help'.", exit status 2. ``--help`` and a group called without a
command (which prints its help) are unchanged: checked here against typer's standalone mode,
the path the CLI took before.
"""

from __future__ import annotations

import sys

import pandas as pd
import pytest
import typer.main

from nlgeval.cli import app, main
from nlgeval.errors import InputError

#: (arguments, words the one line must hold, the command named in "Try '... --help'.")
CASES = [
    (["validate", "webnlg2020", "--resamples", "abc"], ["Invalid value for '--resamples'"],
     "nlgeval validate"),
    (["validate", "webnlg2020", "--quitet"], ["No such option: --quitet", "--quiet"],
     "nlgeval validate"),
    (["score"], ["Missing argument"], "nlgeval score"),
    (["no-such-command"], ["No such command 'no-such-command'"], "nlgeval"),
    (["compare", "ratings.csv", "--qc", "dorp"], ["Invalid value for '--qc'", "'dorp'"],
     "nlgeval compare"),
    (["compare", "ratings.csv", "--method", "t-tset"], ["Invalid value for '--method'"],
     "nlgeval compare"),
    (["plan", "power", "--alpha", "abc"], ["Invalid value for '--alpha'"], "nlgeval plan power"),
    (["triangle", "critical"], ["Missing option '--n'"], "nlgeval triangle critical"),
    (["corpora", "info"], ["Missing argument"], "nlgeval corpora info"),
    (["meta-analyse", "--tua2", "dl"], ["No such option: --tua2", "--tau2"],
     "nlgeval meta-analyse"),
    (["experiment", "simulate", "study", "--behavior", "spammer=1"],
     ["No such option: --behavior", "--behaviour"], "nlgeval experiment simulate"),
    (["bws", "score", "judgements.csv", "--model", "logti"], ["Invalid value for '--model'"],
     "nlgeval bws score"),
    (["agreement", "ratings.csv", "--min-common", "many"], ["Invalid value for '--min-common'"],
     "nlgeval agreement"),
]


@pytest.fixture
def as_console_script(monkeypatch: pytest.MonkeyPatch) -> None:
    """The program is named after ``nlgeval`` (click names it after ``sys.argv[0]``; under
    ``python -m pytest`` it becomes ``pytest.nlgeval``)."""
    monkeypatch.setattr(sys, "argv", ["nlgeval"])


def _run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    try:
        main(args)
    except SystemExit as exc:
        code = exc.code
    else:  # pragma: no cover - main always ends by SystemExit
        code = 0
    out = capsys.readouterr()
    return int(code or 0), out.out, out.err


@pytest.mark.parametrize(("args", "says", "command"), CASES, ids=[" ".join(c[0]) for c in CASES])
def test_usage_error_is_one_line(args: list[str], says: list[str], command: str,
                                 capsys: pytest.CaptureFixture[str],
                                 as_console_script: None) -> None:
    code, out, err = _run(args, capsys)
    assert code == 2
    assert out == ""
    line = err.rstrip("\n")
    assert "\n" not in line, err
    assert line.startswith("error: ")
    assert "Try '" in line and line.endswith(f"{command} --help'.")
    for word in says:
        assert word in line
    assert "Usage:" not in line and "\u256d" not in line  # no usage line, no box


def test_option_without_its_value_is_one_line(capsys: pytest.CaptureFixture[str],
                                              as_console_script: None) -> None:
    """click raises this one without a context: the line has no "Try" hint, still one line."""
    code, out, err = _run(["validate", "webnlg2020", "--alpha"], capsys)
    assert (code, out) == (2, "")
    assert err == "error: Option '--alpha' requires an argument.\n"


def _commands() -> list[list[str]]:
    def walk(cmd: object, path: list[str]) -> list[list[str]]:
        found = [path]
        for name, sub in sorted(getattr(cmd, "commands", {}).items()):
            found += walk(sub, [*path, name])
        return found
    return walk(typer.main.get_command(app), [])


def _standalone(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    """What typer's standalone mode -- the CLI's path before -- prints and returns."""
    try:
        app(args=args, standalone_mode=True)
    except SystemExit as exc:
        code = exc.code
    out = capsys.readouterr()
    return int(code or 0), out.out, out.err


def test_help_unchanged(capsys: pytest.CaptureFixture[str], as_console_script: None) -> None:
    commands = _commands()
    assert len(commands) > 30
    for path in commands:
        new = _run([*path, "--help"], capsys)
        assert new == _standalone([*path, "--help"], capsys), path
        assert new[0] == 0 and "Usage: " in new[1] and "nlgeval" in new[1]


def test_group_without_command_prints_help_as_before(capsys: pytest.CaptureFixture[str],
                                                     as_console_script: None) -> None:
    groups = [p for p in _commands() if _is_group(p)]
    assert ["human"] not in groups and [] in groups and ["experiment"] in groups
    for path in groups:
        new = _run(path, capsys)
        assert new == _standalone(path, capsys), path
        assert new[0] == 2 and "Usage: " in new[1] and "nlgeval" in new[1]


def _is_group(path: list[str]) -> bool:
    cmd = typer.main.get_command(app)
    for name in path:
        cmd = cmd.commands[name]  # type: ignore[attr-defined]
    return hasattr(cmd, "commands")


def test_usage_error_line_without_context() -> None:
    from nlgeval.cli import usage_error_line

    exc = typer.BadParameter("'abc' is not a valid integer.", param_hint="'--n'")
    assert usage_error_line(exc) == "Invalid value for '--n': 'abc' is not a valid integer."


def test_input_error_names_an_option_as_option() -> None:
    err = InputError("'human=high' is not SYSTEM=QUALITY", option="--quality")
    assert str(err) == "option '--quality': 'human=high' is not SYSTEM=QUALITY"
    assert err.column is None and err.option == "--quality"
    both = InputError("quality for 'humn', not a system", file="experiment.toml",
                      option="--quality")
    assert str(both) == "experiment.toml, option '--quality': quality for 'humn', not a system"


def test_simulate_options_are_named_options(tmp_path, capsys: pytest.CaptureFixture[str],
                                            as_console_script: None) -> None:
    import numpy as np

    from nlgeval.experiment.simulate_raters import behaviour_mix

    with pytest.raises(InputError) as err:
        behaviour_mix("spammer=x", 3, np.random.default_rng(0))
    assert err.value.option == "--behaviour" and err.value.column is None
    assert str(err.value).startswith("option '--behaviour': ")
    code, _out, line = _run(["experiment", "simulate", str(tmp_path), "--quality",
                             "human=high"], capsys)
    assert code == 2
    assert line == "error: option '--quality': 'human=high' is not SYSTEM=QUALITY\n"


def test_effects_column_in_another_case_is_named(tmp_path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    """``meta-analyse --effects`` with ``N`` for ``n``: column names are case-sensitive, and
    the error says which present column was meant (difflib alone finds no match for a
    one-letter name)."""
    path = tmp_path / "effects.csv"
    pd.DataFrame({"study": ["a", "b", "c"], "r": [0.5, 0.3, 0.4],
                  "N": [30, 40, 50]}).to_csv(path, index=False)
    code, _out, err = _run(["meta-analyse", "--effects", str(path)], capsys)
    assert code == 2
    assert err.count("\n") == 1
    assert "missing required column 'n'" in err and "did you mean 'N'?" in err
    assert "row 1" in err  # a CSV file's header is its row 1


def test_correlation_effects_names_columns_in_another_case() -> None:
    from nlgeval.meta_analysis.effects import correlation_effects

    table = pd.DataFrame({"Study": ["a"], "R": [0.5], "N": [30]})
    with pytest.raises(InputError, match=r"did you mean 'Study', 'R', 'N'\?"):
        correlation_effects(table, file="effects.csv")
    with pytest.raises(InputError) as err:  # nothing to suggest: no hint
        correlation_effects(pd.DataFrame({"study": ["a"], "r": [0.5]}))
    assert "did you mean" not in str(err.value)


def test_other_exits_as_in_standalone_mode(monkeypatch: pytest.MonkeyPatch,
                                           capsys: pytest.CaptureFixture[str],
                                           as_console_script: None) -> None:
    """What typer's standalone mode did for the rest stays: ``typer.Exit(code)`` ends with that
    code, ``typer.Abort`` with 1 and "Aborted.", a command that returns with 0; another click
    error (not a usage error) is one line with its own exit code."""
    import nlgeval.cli

    click_exception = sys.modules[typer.BadParameter.__module__].ClickException
    tiny = typer.Typer(pretty_exceptions_enable=False, add_completion=False)

    @tiny.command("ok")
    def _ok() -> None:
        typer.echo("done")

    @tiny.command("exit3")
    def _exit3() -> None:
        raise typer.Exit(3)

    @tiny.command("abort")
    def _abort() -> None:
        raise typer.Abort()

    @tiny.command("boom")
    def _boom() -> None:
        raise click_exception("could not open 'x.csv'")

    monkeypatch.setattr(nlgeval.cli, "app", tiny)
    assert _run(["ok"], capsys) == (0, "done\n", "")
    assert _run(["exit3"], capsys) == (3, "", "")
    assert _run(["abort"], capsys) == (1, "", "Aborted.\n")
    assert _run(["boom"], capsys) == (1, "", "error: could not open 'x.csv'\n")
