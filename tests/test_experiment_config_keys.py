"""An error about an experiment's configuration names the key at fault ("experiment.toml,
key 'evaluators': ..."), not a column: a TOML file has keys. The message text is otherwise
the one it was."""

from __future__ import annotations

from pathlib import Path

import pytest
from experiment_helpers import write_experiment

from nlgeval.cli import main
from nlgeval.errors import InputError


def _create_error(directory: Path, capsys: pytest.CaptureFixture[str]) -> str:
    """The one line ``experiment create DIRECTORY`` prints (exit status 2)."""
    capsys.readouterr()
    with pytest.raises(SystemExit) as exc:
        main(["experiment", "create", str(directory)])
    assert exc.value.code == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "Traceback" not in err
    return err


def test_input_error_prints_a_key():
    err = InputError("must be at least 1", file="experiment.toml", key="bws.raters")
    assert str(err) == "experiment.toml, key 'bws.raters': must be at least 1"
    assert err.column is None and err.row is None
    assert str(InputError("x", key="evaluators")) == "key 'evaluators': x"
    assert str(InputError("x", file="f.csv", row=2, column="c")) == "f.csv, row 2, column 'c': x"


def test_latin_square_counts_name_the_evaluators_key(tmp_path, capsys):
    """The case reported: 1 evaluator and 2 systems."""
    d = write_experiment(tmp_path / "study", systems=2, evaluators=1)
    err = _create_error(d, capsys)
    assert f"{d / 'experiment.toml'}, key 'evaluators': the counts do not fit a Latin " \
           "square" in err
    assert "column" not in err


@pytest.mark.parametrize(("extra", "key", "message"), [
    ('items = ["i1", "nope"]\n', "items", "item 'nope' has no outputs in"),
    ('systems = ["S1", "nope"]\n', "systems", "system 'nope' has no outputs in"),
    ("sample_items = 99\n", "sample_items",
     "sample_items = 99, but only 6 item(s) have an output from every selected system"),
    ("overlap = 2\n", "overlap", "overlap = 2 means 6 evaluators (2 x 3 systems: each output "
     "judged by 2), but evaluators = 3"),
])
def test_create_errors_name_the_key(tmp_path, capsys, extra, key, message):
    d = write_experiment(tmp_path / "study", extra=extra)
    err = _create_error(d, capsys)
    assert f"experiment.toml, key '{key}': {message}" in err
    assert "column" not in err


@pytest.mark.parametrize(("extra", "key", "message"), [
    ('outputs = "no-such.csv"\n', "outputs", "file 'no-such.csv' not found"),
    ("crowd = 3\n", "crowd", "must be a table ([crowd])"),
    ('[crowd]\nframe_ancestors = ["*"]\n', "crowd.frame_ancestors", "'*' is not"),
    ('seed = "eleven"\n', "seed", "must be a whole number, got 'eleven'"),
])
def test_load_config_errors_name_the_key(tmp_path, extra, key, message):
    from nlgeval.experiment.config import load_config

    d = write_experiment(tmp_path / "study", extra=extra)
    if extra.startswith("seed"):  # replace the helper's seed rather than repeat the key
        toml = d / "experiment.toml"
        toml.write_text(toml.read_text(encoding="utf-8").replace("seed = 11\n", ""),
                        encoding="utf-8")
    with pytest.raises(InputError) as e:
        load_config(d)
    assert (e.value.key, e.value.column) == (key, None)
    assert str(e.value).startswith(f"{d / 'experiment.toml'}, key '{key}': ")
    assert message in e.value.message


def test_bws_raters_name_the_key(tmp_path, capsys):
    d = write_experiment(tmp_path / "bws", mode="bws", systems=5, items=3, evaluators=2,
                         practice=0, criteria="", questionnaire=False,
                         extra="[bws]\nraters = 3\n")
    err = _create_error(d, capsys)
    assert "experiment.toml, key 'bws.raters': raters = 3 per tuple needs at least as many " \
           "evaluators (got 2)" in err
