"""Checks from a new user's walk through the documentation: what a page says the program
prints is what it prints (docs/meta-analysis.md, docs/validate.md, docs/index.md)."""
from __future__ import annotations

import warnings
from typing import Any

import pandas as pd
import pytest

from nlgeval.meta_analysis import meta_analyse

EFFECTS = pd.DataFrame({"study": ["a", "a", "b", "b", "c", "d"],
                        "r": [0.30, 0.25, 0.10, 0.18, 0.45, 0.20],
                        "n": [50, 50, 80, 80, 40, 120]})


@pytest.mark.parametrize("small", [False, True])
def test_rve_few_df_note_says_whether_the_small_sample_correction_was_made(small: bool) -> None:
    """docs/meta-analysis.md: ``--dependence rve --small-sample`` applies Tipton's (2015)
    corrections, so its note on few degrees of freedom must not say 'no small-sample
    correction' (it did, for both runs); without ``--small-sample`` it still does."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        res = meta_analyse(EFFECTS, dependence="rve", small_sample=small)
    (note,) = [n for n in res.notes if "degrees of freedom" in n]
    assert note.startswith("effect / all: robust variance estimation on 3 degrees of freedom")
    assert ("no small-sample correction" in note) is not small
    assert ("with Tipton's (2015) small-sample corrections" in note) is small


def test_satterthwaite_warning_does_not_round_up_to_the_bound() -> None:
    """A Satterthwaite df of 3.9988 is below 4: the warning shows it in full, never the
    self-contradicting '4.00 < 4' that formatting with two decimals gave (3.745 stays
    '3.75 < 4', as tests/test_peer_meta_robumeta.py expects)."""
    from nlgeval.meta_analysis.robust import robust_variance

    with pytest.warns(RuntimeWarning, match="Satterthwaite") as seen:
        fit = robust_variance([0.1, 0.2, 0.3, 0.25, 0.4], [0.01, 0.01, 0.01, 0.01, 0.0105],
                              ["a", "b", "c", "d", "e"], small_sample=True)
    dfs = fit.coefficients["df"].to_numpy()
    text = str(seen[0].message)
    shown = float(text.split("freedom ")[1].split(" <")[0])
    assert shown == dfs.min() < 4


def _groups() -> list[list[str]]:
    """The command path of ``nlgeval`` and of each of its command groups, recursively."""
    import typer.main

    from nlgeval.cli import app

    found: list[list[str]] = []

    def walk(cmd: Any, path: list[str]) -> None:
        subcommands = getattr(cmd, "commands", None)  # a group (typer's or click's)
        if subcommands:
            found.append(path)
            for name, sub in subcommands.items():
                walk(sub, [*path, name])

    walk(typer.main.get_command(app), [])
    return found


def test_command_listings_show_summaries_not_doctests() -> None:
    """``nlgeval --help`` (and each group's) lists every command with its summary line: the
    doctest after a command docstring's form feed is for the test suite. Without a blank line
    before the form feed, the listing showed the whole example (compare, agreement, design
    latin-square, bws, spans, plan)."""
    from typer.testing import CliRunner

    from nlgeval.cli import app

    groups = _groups()
    assert len(groups) > 5
    for path in groups:
        res = CliRunner().invoke(app, [*path, "--help"], env={"COLUMNS": "120"})
        assert res.exit_code == 0, path
        assert ">>>" not in res.stdout and "Examples" not in res.stdout, path


def test_missing_column_hint_never_names_another_required_column(tmp_path: Any) -> None:
    """docs/corpora.md: a missing column gets a 'did you mean' for a misspelling. An outputs
    file without ``system`` was told "did you mean 'item'?" -- a column it must also have,
    correctly named; a present required column is no candidate (a misspelt one still is)."""
    from nlgeval.errors import InputError
    from nlgeval.io import check_columns

    frame = pd.DataFrame({"item": ["w01"], "text": ["a b"], "input": ["x"]})
    with pytest.raises(InputError) as err:
        check_columns(frame, ["system", "item", "text"], file=str(tmp_path / "outputs.jsonl"))
    assert str(err.value).endswith("missing required column 'system' (found: item, text, "
                                   "input)")
    with pytest.raises(InputError, match="did you mean 'sytem'"):
        check_columns(frame.assign(sytem="A"), ["system", "item", "text"], file=None)
    with pytest.raises(InputError, match="did you mean 'Item'"):
        check_columns(frame.rename(columns={"item": "Item"}), ["system", "item"], file=None)


def test_compare_prints_a_library_warning_as_one_warning_line(
        tmp_path: Any, capsys: pytest.CaptureFixture[str]) -> None:
    """docs/human.md: when every item gives all systems the same rating, Friedman's test is NaN
    "with a warning saying so". ``nlgeval compare`` printed it as Python's warning, with the
    library file's path and source line; now it is one ``warning: ...`` line, as
    ``validate`` prints its warnings."""
    from _cli import run_cli

    rows = [f"r{r},i{i},{s},q,{i % 5 + 1}" for r in (1, 2) for i in range(6) for s in "abc"]
    path = tmp_path / "tied.csv"
    path.write_text("rater,item,system,criterion,score\n" + "\n".join(rows) + "\n",
                    encoding="utf-8")
    code, out, err = run_cli(["compare", str(path), "--criterion", "q", "--method",
                              "friedman"], capsys)
    assert code == 0, err
    assert "chi2(2) = nan" in out
    lines = err.strip().splitlines()
    assert "warning: the Friedman test is undefined: every item gives all 3 systems the same " \
           "rating, so there is no ranking to compare (chi2, p and Kendall's W are NaN)" in lines
    assert all(line.startswith("warning: ") for line in lines), lines


def test_enum_typo_is_clicks_message_without_pydantics_prefix(
        capsys: pytest.CaptureFixture[str]) -> None:
    """docs/index.md: an option value typo gets click's message and the command's help. typer
    converts choices with pydantic, whose ValueError text began the message with "Value
    error, "; the line is now click's wording."""
    from _cli import run_cli

    code, out, err = run_cli(["compare", "ratings.csv", "--criterion", "q", "--pairing",
                              "itm"], capsys)
    assert code == 2 and out == ""
    assert err.startswith("error: Invalid value for '--pairing': 'itm' is not one of 'item', "
                          "'lsed'. Try '")  # the program's name: 'nlgeval' when installed
    assert err.endswith(" compare --help'.\n") and len(err.splitlines()) == 1
