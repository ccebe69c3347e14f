"""``quality_flags(store)`` without the experiment's config.

Repeats and degraded copies are scored on the range of each criterion (the mode's
``check_scales``: the configured scales, ESA's 0-100 score of Kocmi et al. 2024, the MQM score
from Freitag et al. 2021's floor, -25, to 0) with the study's ``repeat_tolerance`` and
``alpha``. Without the config none of these is known; the function used to scale every answer
as if it lay in [0, 1], which for an MQM repeat one major error apart (5 points of a 25-point
range, within the 6.25 points a repeat may differ) gave ``failed_repeat``. Now such a call is
an InputError naming the evaluator, the check and the criterion, in every mode whose checks
compare answers on a range; flags that need no range (nothing answered yet, the known-answer
triangles) are the same with and without the config.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from nlgeval.cli import app as cli_app
from nlgeval.errors import InputError
from nlgeval.experiment.build import check_experiment, database_url
from nlgeval.experiment.config import ExperimentConfig, load_config
from nlgeval.experiment.export import export_ratings
from nlgeval.experiment.quality import quality_flags
from nlgeval.experiment.simulate import simulate_experiment
from nlgeval.experiment.storage import Store

RUN = CliRunner()
SCORED = "\n[checks]\nrepeats = 2\ndegraded = 5\nspeeder_ms = 0\n"
TRIANGLE = "\n[checks]\nknown_answer = 1\nspeeder_ms = 0\n"
CRITERION = {"esa": "ESA", "mqm": "MQM"}


def _study(tmp: Path, mode: str, checks: str) -> tuple[ExperimentConfig, Store]:
    """The example study of ``mode`` with ``checks``, created for 3 evaluators."""
    d = tmp / mode
    r = RUN.invoke(cli_app, ["experiment", "init", str(d), "--mode", mode])
    assert r.exit_code == 0, r.output
    with open(d / "experiment.toml", "a", encoding="utf-8") as f:
        f.write(checks)
    r = RUN.invoke(cli_app, ["experiment", "create", str(d), "-q", "--evaluators", "3"])
    assert r.exit_code == 0, r.output
    cfg = load_config(d)
    store = Store(database_url(cfg, None))
    check_experiment(cfg, store)
    return cfg, store


@pytest.mark.parametrize("mode", ["absolute", "relative", "mqm", "esa"])
def test_without_the_config_scored_checks_are_refused(tmp_path: Path, mode: str) -> None:
    cfg, store = _study(tmp_path, mode, SCORED)
    try:
        before = quality_flags(store)  # nothing answered: no range needed, same flags
        pd.testing.assert_frame_equal(before, quality_flags(store, cfg))
        assert set(before["verdict"]) == {"not started"}
        simulate_experiment(tmp_path / mode, evaluators=3, seed=3)
        with_cfg = quality_flags(store, cfg)
        assert (with_cfg["n_checks_answered"] == 7).all()  # 2 repeats + 5 degraded each
        with pytest.raises(InputError) as e:
            quality_flags(store)
        msg = str(e.value)
        crit = CRITERION.get(mode, cfg.criteria[0].name if cfg.criteria else "")
        assert "needs the experiment's config" in msg and "load_config" in msg
        assert "evaluator '1'" in msg and f"{mode} mode" in msg
        assert ("repeat check" in msg) or ("degraded check" in msg)
        assert e.value.column in {c.name for c in cfg.criteria} | {crit}
        if mode in CRITERION:
            assert e.value.column == CRITERION[mode]
        # export_ratings without the config asks for it the same way (it reports the flags)
        with pytest.raises(InputError, match="needs the experiment's config"):
            export_ratings(store)
    finally:
        store.dispose()


def test_known_answer_triangles_need_no_range(tmp_path: Path) -> None:
    """A known-answer triangle is right or wrong whatever the scales: the flags without the
    config are those with it (the study sets ``speeder_ms = 0``, which is what no config
    means for speeders)."""
    cfg, store = _study(tmp_path, "triangle", TRIANGLE)
    try:
        simulate_experiment(tmp_path / "triangle", evaluators=3, seed=4,
                            behaviour="diligent=2,spammer=1")
        with_cfg = quality_flags(store, cfg)
        assert with_cfg["n_checks_answered"].sum() > 0
        pd.testing.assert_frame_equal(quality_flags(store), with_cfg)
    finally:
        store.dispose()



def test_a_criterion_the_config_no_longer_has_is_refused(tmp_path: Path) -> None:
    """Checks answered on a criterion that the config passed in does not have (renamed after
    the answers were stored) were scaled as if the answers lay in [0, 1]; now an InputError
    names the criterion, and the config the answers were given under still works."""
    import dataclasses

    cfg, store = _study(tmp_path, "absolute", SCORED)
    try:
        simulate_experiment(tmp_path / "absolute", evaluators=3, seed=3)
        assert (quality_flags(store, cfg)["n_checks_answered"] == 7).all()
        old = cfg.criteria[0].name
        renamed = dataclasses.replace(cfg, criteria=(
            dataclasses.replace(cfg.criteria[0], name=f"{old}_v2"), *cfg.criteria[1:]))
        with pytest.raises(InputError, match="the experiment's config does not have") as e:
            quality_flags(store, renamed)
        assert e.value.column == old
    finally:
        store.dispose()
