"""The variance components ``nlgeval plan power`` plans with
(:func:`nlgeval.human.power.variance_components`; Card et al. 2020, section 5).

References: stated standard deviations give the components in closed form (each SD squared, a
missing one 0; the mean is ``mean``, else the middle of the scale, else 0); a pilot gives
exactly :func:`components_from_pilot` (REML fit of the mixed model); a stated SD or mean
replaces the pilot's. The rules are also checked, on random inputs, against the code the
command ran before they moved into the library (kept below as ``_old_rules``), and the
command's ``--json`` components against the library on the same file.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from nlgeval.cli import app
from nlgeval.errors import InputError
from nlgeval.human import read_ratings, variance_components
from nlgeval.human.power import VarianceComponents, components_from_pilot

DATA = Path(__file__).parent / "data" / "human_lsed_ratings.csv"


@pytest.fixture(scope="module")
def pilot() -> pd.DataFrame:
    return read_ratings(DATA, criterion="accuracy")


def _old_rules(pilot_vc: VarianceComponents | None, sc: tuple[float, float] | None,
               sd_rater: float | None, sd_item: float | None, sd_residual: float | None,
               mean: float | None) -> VarianceComponents:
    """The rules as ``nlgeval.cli.human_plan._variance_components`` applied them before they
    moved into the library (commit 57e9fea), the pilot's fit passed in."""
    if pilot_vc is not None:
        vc = pilot_vc
    else:
        assert sd_residual is not None
        vc = VarianceComponents(rater=(sd_rater or 0.0) ** 2, item=(sd_item or 0.0) ** 2,
                                residual=sd_residual ** 2, mean=0.0)
    overrides = {k: v ** 2 for k, v in (("rater", sd_rater), ("item", sd_item),
                                          ("residual", sd_residual)) if v is not None}
    vc = VarianceComponents(**{**vc.to_dict(), **overrides,
                               **({"mean": mean} if mean is not None else {})})
    if sc is not None and mean is None and pilot_vc is None:
        vc = VarianceComponents(**{**vc.to_dict(), "mean": (sc[0] + sc[1]) / 2})
    return vc


def test_stated_components_are_the_squared_sds() -> None:
    vc = variance_components(sd_rater=0.3, sd_item=0.5, sd_residual=1.2)
    assert vc == VarianceComponents(rater=0.3 ** 2, item=0.25, residual=1.2 ** 2, mean=0.0)
    only = variance_components(sd_residual=2.0)
    assert (only.rater, only.item, only.residual, only.mean) == (0.0, 0.0, 4.0, 0.0)
    # the mean: stated, else the middle of the scale, else 0
    assert variance_components(sd_residual=1.0, scale="1,7").mean == 4.0
    assert variance_components(sd_residual=1.0, scale=(0, 100)).mean == 50.0
    assert variance_components(sd_residual=1.0, scale="1,5", mean=4.5).mean == 4.5
    assert variance_components(sd_residual=1.0, mean=-2.0).mean == -2.0


def test_pilot_components_are_the_reml_fit(pilot: pd.DataFrame) -> None:
    ref = components_from_pilot(pilot)
    assert variance_components(pilot) == ref
    # a pilot's mean is its own: a scale does not move it
    assert variance_components(pilot, scale="1,7") == ref
    assert ref.mean == pytest.approx(pilot["score"].mean(), rel=1e-15)
    assert ref.residual > 0 and ref.rater > 0


def test_stated_values_replace_the_pilots(pilot: pd.DataFrame) -> None:
    ref = components_from_pilot(pilot)
    vc = variance_components(pilot, sd_item=0.0, sd_residual=0.9, scale="1,7")
    assert (vc.rater, vc.item, vc.residual, vc.mean) == (ref.rater, 0.0, 0.9 ** 2, ref.mean)
    vc = variance_components(pilot, sd_rater=0.2, mean=4.0)
    assert (vc.rater, vc.item, vc.residual, vc.mean) == (0.2 ** 2, ref.item, ref.residual, 4.0)


def test_same_rules_as_the_command_had_before(pilot: pd.DataFrame) -> None:
    rng = np.random.default_rng(20261126)
    ref = components_from_pilot(pilot)
    # SDs: absent, 0, tiny, huge and ordinary; scales and means absent or given
    sds = [None, 0.0, 1e-200, 1e100, 0.37, 1.0]
    scales = [None, (1.0, 5.0), (0.0, 100.0), (-3.0, 3.0)]
    checked = 0
    for _ in range(300):
        sd_r, sd_i, sd_e = (sds[i] for i in rng.integers(0, len(sds), 3))
        sc = scales[rng.integers(0, len(scales))]
        mean = None if rng.random() < 0.5 else float(rng.normal(3, 10))
        use_pilot = rng.random() < 0.4
        if not use_pilot and sd_e is None:
            continue
        new = variance_components(pilot if use_pilot else None, sd_rater=sd_r, sd_item=sd_i,
                                  sd_residual=sd_e, mean=mean, scale=sc)
        old = _old_rules(ref if use_pilot else None, sc, sd_r, sd_i, sd_e, mean)
        assert new == old, (sd_r, sd_i, sd_e, sc, mean, use_pilot)
        checked += 1
    assert checked > 150


@pytest.mark.parametrize(("kw", "match"), [
    ({}, "at least --sd-residual"),
    ({"sd_item": 0.5}, "at least --sd-residual"),
    ({"sd_residual": -1.0}, "sd_residual must be a finite number >= 0, got -1.0"),
    ({"sd_residual": 1.0, "sd_rater": math.nan}, "sd_rater must be a finite number"),
    ({"sd_residual": 1.0, "mean": math.inf}, "mean must be a finite number, got inf"),
    ({"sd_residual": 1.0, "scale": "7,1"}, "scale"),
])
def test_bad_input_names_what_was_expected(kw: dict, match: str) -> None:
    with pytest.raises(InputError, match=match):
        variance_components(**kw)


def test_command_plans_with_the_library_components(pilot: pd.DataFrame) -> None:
    args = ["plan", "power", str(DATA), "--criterion", "accuracy", "--items", "8",
            "--raters-per-item", "1", "--sims", "20", "--sd-item", "0.4", "--json"]
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 0, res.output
    got = json.loads(res.stdout)["components"]
    assert got == variance_components(pilot, sd_item=0.4).to_dict()
    stated = CliRunner().invoke(app, ["plan", "power", "--sd-residual", "1", "--sd-rater",
                                      "0.5", "--scale", "1,5", "--items", "8",
                                      "--raters-per-item", "1", "--sims", "20", "--json"])
    assert stated.exit_code == 0, stated.output
    assert json.loads(stated.stdout)["components"] == {"rater": 0.25, "item": 0.0,
                                                       "residual": 1.0, "mean": 3.0}
    bad = CliRunner().invoke(app, ["plan", "power", "--sd-residual", "-1"])
    assert isinstance(bad.exception, InputError)  # `nlgeval` turns it into exit status 2
    assert "sd_residual must be a finite number >= 0" in str(bad.exception)
