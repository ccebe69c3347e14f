"""Power analysis by simulation (`nlgeval plan power`, issue 14).

References (closed forms where they exist; continuous scores, no rounding):

* paired design, analysed with the paired t test on per-item means: the per-item difference is
  N(effect, 2 sigma2_residual / k) -- item effects cancel, and so do rater effects because the
  same raters rate both outputs -- so power is that of the one-sample t test with standardised
  effect effect / sqrt(2 sigma2_residual / k): statsmodels ``TTestPower`` (noncentral t);
* independent design (each system on its own items), per-item means N(mu_s, sigma2_item +
  sigma2_residual / k), analysed with Welch's t: the two-sample t power, statsmodels
  ``TTestIndPower`` (equal n and variances, where Welch's and Student's tests agree closely);
* effect 0: the rejection rate is the significance level;
* every estimate is compared within 4 Monte Carlo standard errors.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from statsmodels.stats.power import TTestIndPower, TTestPower
from typer.testing import CliRunner

from nlgeval.cli import app
from nlgeval.errors import InputError
from nlgeval.human.power import VarianceComponents, simulate_power

DATA = Path(__file__).parent / "data" / "human_lsed_ratings.csv"
runner = CliRunner()
N_SIMS = 3000


def _close(sim: float, ref: float) -> None:
    se = np.sqrt(max(ref * (1 - ref), 1e-4) / N_SIMS)
    assert abs(sim - ref) < 4 * se, (sim, ref)


def test_paired_t_matches_noncentral_t_and_rater_effects_cancel() -> None:
    vc = VarianceComponents(rater=0.6, item=0.5, residual=1.0, mean=4.0)
    res = simulate_power(0.5, vc, items=(10, 30), raters_per_item=(1, 3), n_sims=N_SIMS,
                         seed=3, design="paired", test="t")
    for row in res.table.itertuples():
        d = 0.5 / np.sqrt(2 * 1.0 / row.raters_per_item)
        _close(row.power, TTestPower().power(d, row.n_items, 0.05))


def test_independent_design_matches_two_sample_t() -> None:
    vc = VarianceComponents(rater=0.0, item=0.5, residual=1.0, mean=4.0)
    res = simulate_power(0.6, vc, items=(10, 25), raters_per_item=(1, 4), n_sims=N_SIMS,
                         seed=4, design="independent", test="t")
    for row in res.table.itertuples():
        d = 0.6 / np.sqrt(0.5 + 1.0 / row.raters_per_item)
        _close(row.power, TTestIndPower().power(d, row.n_items, 0.05))


def test_null_effect_rejects_at_alpha_and_bonferroni() -> None:
    vc = VarianceComponents(rater=0.3, item=0.3, residual=1.0)
    res = simulate_power(0.0, vc, items=(20,), raters_per_item=(2,), n_sims=N_SIMS, seed=5,
                         design="between", pool=8)
    _close(float(res.table["power"].iloc[0]), 0.05)
    res = simulate_power(0.0, vc, items=(20,), raters_per_item=(2,), n_sims=N_SIMS, seed=5,
                         comparisons=5)
    _close(float(res.table["power"].iloc[0]), 0.01)


def test_between_raters_cost_power_and_wilcoxon_on_likert_runs() -> None:
    vc = VarianceComponents(rater=0.8, item=0.2, residual=0.8, mean=4.0)
    kw = dict(items=(30,), raters_per_item=(2,), n_sims=1500, seed=6)
    paired = simulate_power(0.5, vc, design="paired", **kw)  # type: ignore[arg-type]
    between = simulate_power(0.5, vc, design="between", pool=40, **kw)  # type: ignore[arg-type]
    assert between.table["power"].iloc[0] < paired.table["power"].iloc[0] - 0.05
    lik = simulate_power(0.5, vc, design="paired", test="wilcoxon", scale=(1, 7),
                         **kw)  # type: ignore[arg-type]
    assert 0.2 < lik.table["power"].iloc[0] <= 1.0


def test_seeded_and_independent_of_the_grid() -> None:
    vc = VarianceComponents(rater=0.2, item=0.2, residual=1.0)
    a = simulate_power(0.4, vc, items=(10, 20), raters_per_item=(1, 2), n_sims=200, seed=9)
    b = simulate_power(0.4, vc, items=(20,), raters_per_item=(2,), n_sims=200, seed=9)
    c = simulate_power(0.4, vc, items=(20,), raters_per_item=(2,), n_sims=200, seed=10)
    cell = a.table[(a.table["n_items"] == 20) & (a.table["raters_per_item"] == 2)]
    assert float(cell["power"].iloc[0]) == float(b.table["power"].iloc[0])
    assert a.to_dict()["table"] == simulate_power(
        0.4, vc, items=(10, 20), raters_per_item=(1, 2), n_sims=200, seed=9).to_dict()["table"]
    assert c.seed == 10 and len(c.table) == 1
    with pytest.raises(InputError, match="design must be"):
        simulate_power(0.4, vc, design="crossed")  # type: ignore[arg-type]


def test_cli_plan_power(tmp_path: Path) -> None:
    res = runner.invoke(app, ["plan", "power", str(DATA), "--criterion", "accuracy",
                              "--effect", "0.8", "--items", "8,16", "--raters-per-item", "1,2",
                              "--sims", "200", "--scale", "1,7", "--json",
                              "--out-dir", str(tmp_path)])
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert out["method"] == "power-simulation" and len(out["table"]) == 4
    assert out["components"]["residual"] > 0 and out["run"]["seed"] == 0
    for ext in ("csv", "md", "tex", "png", "pdf"):
        assert (tmp_path / f"power.{ext}").exists()
    stated = runner.invoke(app, ["plan", "power", "--effect", "0.5", "--sd-residual", "1",
                                 "--items", "10,100", "--raters-per-item", "1", "--sims",
                                 "200"])
    assert stated.exit_code == 0 and "items reach power" in stated.stdout
    bad = runner.invoke(app, ["plan", "power", "--effect", "0.5"])
    assert isinstance(bad.exception, InputError)


def test_same_answer_on_every_backend() -> None:
    """serial == process pool == Dask LocalCluster, bit for bit: every grid point draws from
    its own stream, whatever runs it."""
    pytest.importorskip("distributed", reason="the Dask backend needs nlgeval[dask]")
    from nlgeval.parallel import DaskBackend

    vc = VarianceComponents(rater=0.4, item=0.3, residual=1.0, mean=4.0)
    kw = dict(items=(8, 16, 32), raters_per_item=(1, 3), n_sims=300, seed=11, design="between",
              pool=12, scale=(1, 7))
    ref = simulate_power(0.6, vc, **kw)  # type: ignore[arg-type]
    proc = simulate_power(0.6, vc, backend="process", workers=2, **kw)  # type: ignore[arg-type]
    with DaskBackend("local:2") as be:
        dask = simulate_power(0.6, vc, backend=be, **kw)  # type: ignore[arg-type]
    for res in (proc, dask):
        pd.testing.assert_frame_equal(ref.table, res.table, check_exact=True)
        assert res.to_dict() == ref.to_dict()
    assert dask.execution["backend"] == "dask" and dask.execution["tasks"] == 6
    # the comparison can fail: another seed gives other numbers
    other = simulate_power(0.6, vc, **{**kw, "seed": 12})  # type: ignore[arg-type]
    assert not other.table["power"].equals(ref.table["power"])


def test_cli_plan_power_on_a_local_cluster() -> None:
    pytest.importorskip("distributed", reason="the Dask backend needs nlgeval[dask]")
    args = ["plan", "power", "--effect", "0.5", "--sd-residual", "1", "--sd-item", "0.5",
            "--items", "10,20", "--raters-per-item", "1,2", "--sims", "200", "--json"]
    serial = runner.invoke(app, args)
    dask = runner.invoke(app, [*args, "--backend", "dask", "--scheduler", "local:1"])
    assert serial.exit_code == 0 and dask.exit_code == 0, (serial.output, dask.output)
    a, b = json.loads(serial.stdout), json.loads(dask.stdout)
    a.pop("run"), b.pop("run")
    assert a == b and len(a["table"]) == 4
