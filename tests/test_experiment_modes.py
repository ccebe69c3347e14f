"""The experiment modes behind one ``Mode`` protocol (nlgeval.experiment.modes): the ported
modes (absolute VDS/VAS, relative, triangle) export exactly what they exported before the
port. The reference exports in tests/data/experiment_modes/ were recorded with the code before
the port (commit 7b8b654), by this file's driver with ``NLGEVAL_WRITE_GOLDEN=1``: each study is
created, every evaluator answers every trial (practice and attention checks included) with
seeded random answers through the Flask test client, and the export is compared cell by cell
(wall-clock columns aside)."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from experiment_helpers import answer_form, csrf_of, form_action, write_experiment

from nlgeval.experiment import create_experiment
from nlgeval.experiment.app import create_app
from nlgeval.experiment.export import export_ratings

GOLDEN = Path(__file__).parent / "data" / "experiment_modes"
WALL_CLOCK = ["submitted_utc", "time_ms", "time_on_task_ms"]
CHECKS = "[checks]\nrepeats = 1\ndegraded = 1\n"
TRIANGLE = '''[triangle]
questionnaire = "questionnaire.csv"
[checks]
known_answer = 1
'''


def _triangle_study(d: Path) -> None:
    from nlgeval.triangle.design import triangle_design

    write_experiment(d, mode="triangle", systems=2, items=6, extra=TRIANGLE)
    out = pd.read_csv(d / "outputs.csv")
    q = triangle_design(12, seed=7, pool=out[~out["item"].str.startswith("p")],
                        source_a="S1", source_b="S2")
    q[[c for c in q.columns if not c.startswith("text_")]].to_csv(d / "questionnaire.csv",
                                                                 index=False)


STUDIES = {
    "absolute": lambda d: write_experiment(d, mode="absolute", extra=CHECKS),
    "relative": lambda d: write_experiment(d, mode="relative", extra=CHECKS),
    "triangle": _triangle_study,
}


def drive_all(app, tokens: list[str], seed: int) -> None:  # noqa: ANN001
    """Every evaluator answers every trial and the questionnaire with seeded answers."""
    rng = np.random.default_rng(seed)
    for tok in tokens:
        c = app.test_client()
        page = c.get(f"/e/{tok}").get_data(as_text=True)
        assert c.post(f"/e/{tok}/start", data={"csrf": csrf_of(page)}).status_code == 303
        for _ in range(200):
            page = c.get(f"/e/{tok}").get_data(as_text=True)
            if "/trial/" not in page and "/questionnaire" not in page:
                break
            r = c.post(form_action(page), data=answer_form(page, rng))
            assert r.status_code == 303, r.get_data(as_text=True)[:800]


def study_export(d: Path) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Create, drive and export the study in ``d``: (ratings without wall-clock columns,
    trials.csv)."""
    made = create_experiment(d)
    app = create_app(d)
    app.testing = True
    ext = app.extensions["nlgeval_experiment"]
    try:
        drive_all(app, list(made.evaluators["token"]), seed=5)
        df = export_ratings(ext["store"], ext["config"], include_practice=True,
                            include_checks=True)
    finally:
        ext["store"].dispose()
    trials = pd.read_csv(d / "trials.csv", keep_default_na=False, dtype=str)
    return df.drop(columns=WALL_CLOCK), trials


def _read(path: Path) -> pd.DataFrame:
    return pd.read_csv(path, keep_default_na=False, dtype=str)


@pytest.mark.parametrize("name", sorted(STUDIES))
def test_ported_mode_exports_what_it_exported_before(tmp_path: Path, name: str) -> None:
    d = tmp_path / name
    STUDIES[name](d)
    df, trials = study_export(d)
    got = tmp_path / "ratings.csv"
    df.to_csv(got, index=False)
    if os.environ.get("NLGEVAL_WRITE_GOLDEN"):
        df.to_csv(GOLDEN / f"{name}_ratings.csv", index=False)
        trials.to_csv(GOLDEN / f"{name}_trials.csv", index=False)
    assert len(df) > 12
    pd.testing.assert_frame_equal(_read(got), _read(GOLDEN / f"{name}_ratings.csv"))
    pd.testing.assert_frame_equal(trials, _read(GOLDEN / f"{name}_trials.csv"))


@pytest.mark.parametrize("name", sorted(STUDIES))
def test_tidy_hook_gives_the_canonical_frame(tmp_path: Path, name: str) -> None:
    from nlgeval.experiment.modes import RATING_COLUMNS, get_mode

    export = _read(GOLDEN / f"{name}_ratings.csv")
    tidy = get_mode(name).tidy(export)
    want = (RATING_COLUMNS[:3] + ["system_b"] + RATING_COLUMNS[3:] if name == "relative"
            else RATING_COLUMNS)
    assert list(tidy.columns) == want and len(tidy) == len(export)
    pd.testing.assert_frame_equal(tidy, export[want].reset_index(drop=True))


def test_every_registered_mode_has_its_form_template() -> None:
    from nlgeval.experiment.modes import get_mode, mode_names

    templates = Path(__file__).parents[1] / "nlgeval" / "experiment" / "templates"
    static = templates.parent / "static"
    for name in mode_names():
        mode = get_mode(name)
        assert mode.name == name and (templates / mode.template).is_file(), name
        assert all((static / s).is_file() for s in mode.scripts), name
