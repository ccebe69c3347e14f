"""The Statistic protocol and registry: Kendall's tau-a, the generic procedures, plugins.

References: tau-a by enumerating every pair (Kendall 1938: (C - D) / (n (n - 1) / 2)), and
scipy's ``kendalltau`` (tau-b equals tau-a when neither variable has ties); the generic
bootstrap and PERM-BOTH test against nlgeval's dedicated procedures and against explicit loops
over the resampled / swapped matrices. The outside statistic is a fixture package
(``tests/fixtures/statistic_plugin``: Lin's 1989 concordance correlation coefficient) with a
``.dist-info`` folder on ``sys.path`` -- what ``pip install`` leaves in site-packages -- so it
is discovered through ``importlib.metadata.entry_points`` as an installed plugin would be.
"""

from __future__ import annotations

import itertools
import json
import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from typer.testing import CliRunner

from nlgeval.cli import app
from nlgeval.correlation.bootstrap import bootstrap_correlation, resample_indices
from nlgeval.correlation.kendall import zscore_cells
from nlgeval.correlation.levels import system_means
from nlgeval.correlation.permutation.compare import permutation_test
from nlgeval.correlation.permutation.draws import swap_masks
from nlgeval.correlation.statistics import (
    ENTRY_POINT_GROUP,
    Statistic,
    StatisticOptions,
    available_statistics,
    bootstrap_statistic,
    get_statistic,
    perm_both_test,
)
from nlgeval.errors import InputError
from nlgeval.report.meta import STATISTICS, check_statistic

PLUGIN_DIR = Path(__file__).parent / "fixtures" / "statistic_plugin"
runner = CliRunner()


def brute_tau_a(x: np.ndarray, y: np.ndarray) -> float:
    """(C - D) / N over all n (n - 1) / 2 pairs, by enumeration (NaN pairs dropped first)."""
    ok = np.isfinite(x) & np.isfinite(y)
    x, y = x[ok], y[ok]
    n = len(x)
    if n < 2:
        return math.nan
    s = sum(np.sign(x[i] - x[j]) * np.sign(y[i] - y[j])
            for i, j in itertools.combinations(range(n), 2))
    return float(s) / (n * (n - 1) / 2)


def _data(seed: int = 0, shape: tuple[int, int] = (5, 7)) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    H = rng.integers(0, 4, size=shape).astype(float)  # ties in the human scores
    X = np.round(H + rng.normal(size=shape), 0)  # and in the metric
    X[0, 1] = np.nan
    return X, H


def _brute_level(X: np.ndarray, Y: np.ndarray, level: str) -> float:
    if level == "segment":
        return brute_tau_a(X.ravel(), Y.ravel())
    if level == "system":
        return brute_tau_a(*system_means(X, Y))
    A, B = (X.T, Y.T) if level == "item" else (X, Y)
    vals = [brute_tau_a(a, b) for a, b in zip(A, B, strict=True)]
    return float(np.nanmean(vals))


# ----------------------------------------------------------------------------- tau-a


@pytest.mark.parametrize("level", ("system", "segment", "item", "system-grouped"))
@pytest.mark.parametrize("seed", (0, 1, 2))
def test_tau_a_equals_enumeration(level: str, seed: int) -> None:
    X, H = _data(seed)
    tau_a = get_statistic("tau_a")
    assert tau_a.value(X, H, level).statistic == pytest.approx(_brute_level(X, H, level),
                                                               abs=1e-12)
    stack = np.stack([X, H, -X])
    got = tau_a.batch(stack, np.stack([H, H, H]), level)
    want = [_brute_level(m, H, level) for m in stack]
    assert np.allclose(got, want, atol=1e-12, rtol=0)


def test_tau_a_is_tau_b_without_ties() -> None:
    rng = np.random.default_rng(3)
    x, y = rng.normal(size=15), rng.normal(size=15)
    v = get_statistic("tau-a").value(x[None, :], y[None, :], "segment").statistic
    assert v == pytest.approx(stats.kendalltau(x, y).statistic, abs=1e-12)
    # with ties tau-a is smaller in magnitude than tau-b (same numerator, larger denominator)
    xt, yt = np.round(x), np.round(y)
    va = get_statistic("tau_a").value(xt[None, :], yt[None, :], "segment").statistic
    assert abs(va) < abs(stats.kendalltau(xt, yt).statistic)
    assert va == pytest.approx(brute_tau_a(xt, yt), abs=1e-12)


@pytest.mark.parametrize("level", ("system", "segment", "item"))
def test_tau_a_bootstrap_and_perm_both_draws(level: str) -> None:
    X, H = _data(4, (4, 6))
    tau_a = get_statistic("tau_a")
    si, ii = resample_indices(4, 6, 15, "both", seed=2)
    got = tau_a.resampled(X, H, level, si, ii)
    want = [_brute_level(X[si[b]][:, ii[b]], H[si[b]][:, ii[b]], level) for b in range(15)]
    assert np.allclose(got, want, atol=1e-12, rtol=0, equal_nan=True)
    if level == "system":
        assert perm_both_test(tau_a, X, H + 1.0, H, level) is None  # no cell swap there
        return
    B = np.round(H + 2 * np.random.default_rng(5).normal(size=H.shape), 0)
    opts = StatisticOptions(permutations=12, seed=7)
    res = perm_both_test(tau_a, X, B, H, level, opts)
    ok = np.isfinite(X) & np.isfinite(B) & np.isfinite(H)
    za, zb = zscore_cells(X, ok), zscore_cells(B, ok)
    hh = np.where(ok, H, np.nan)
    masks = swap_masks(X.shape, 12, "both", 7)
    for k in range(12):
        assert res.draws_a[k] == pytest.approx(
            _brute_level(np.where(masks[k], zb, za), hh, level), abs=1e-12)
        assert res.draws_b[k] == pytest.approx(
            _brute_level(np.where(masks[k], za, zb), hh, level), abs=1e-12)
    assert res.statistic_a == pytest.approx(_brute_level(X, H, level), abs=1e-12)


def test_tau_a_in_the_validation_statistics(tmp_path) -> None:  # type: ignore[no-untyped-def]
    assert check_statistic("Tau-A") == "tau_a"
    assert STATISTICS["tau_a"].levels == STATISTICS["tau_23"].levels
    hp, sp = _study_files(tmp_path)
    res = runner.invoke(app, ["validate", "--human", str(hp), "--scores", str(sp),
                              "--levels", "system,segment,item,system-grouped", "--statistics",
                              "tau_a", "--json", "--quiet", "--resamples", "20",
                              "--permutations", "20", "--out", str(tmp_path / "rep")])
    assert res.exit_code == 0, (res.output, res.exception)
    rows = json.loads(res.stdout)["correlations"]
    assert {r["level"] for r in rows} == {"system", "segment", "item", "system-grouped"}
    m = pd.read_csv(hp).merge(pd.read_csv(sp), on=["system", "item"])
    pivot = {c: m.pivot(index="system", columns="item", values=c).to_numpy()
             for c in ("score", "good", "poor")}
    for r in rows:
        assert r["coefficient"] == "tau_a"
        assert r["p"] is None or math.isnan(r["p"])  # no test of "no association"
        want = _brute_level(pivot[r["metric"]], pivot["score"], r["level"])
        assert r["r"] == pytest.approx(want, abs=1e-12)


# ----------------------------------------------------------------------------- the registry


def test_registry_lists_every_statistic_with_its_declarations() -> None:
    stats_ = available_statistics(plugins=False)
    assert list(stats_)[:10] == ["pearson", "spearman", "kendall", "kendall_c", "tau_a",
                                 "tau_23", "acc_23", "acc_eq", "pairwise_accuracy",
                                 "soft_pairwise_accuracy"]
    for name, s in stats_.items():
        assert s.name == name and s.levels and s.min_n >= 2 and s.higher_is_better
        assert s.statistic_range[0] < s.statistic_range[1]
    assert [n for n, s in stats_.items() if s.coefficient] == ["pearson", "spearman",
                                                               "kendall", "kendall_c"]
    assert get_statistic("tau").name == "kendall" and get_statistic("SPA").levels == ("system",)
    with pytest.raises(InputError, match="did you mean 'tau_a'"):
        get_statistic("tau_aa")


def test_generic_bootstrap_equals_the_dedicated_one() -> None:
    X, H = _data(6, (6, 9))
    X = np.where(np.isfinite(X), X + 0.01 * np.arange(X.size).reshape(X.shape), X)
    for coef in ("pearson", "spearman", "kendall"):
        for level in ("system", "segment", "item"):
            a = bootstrap_statistic(get_statistic(coef), X, H, level,
                                    StatisticOptions(n_resamples=50, seed=3))
            b = bootstrap_correlation(X, H, level, coef, n_resamples=50, seed=3)
            assert np.array_equal(a.distribution, b.distribution, equal_nan=True)
            assert (a.statistic, a.ci_low, a.ci_high) == (b.statistic, b.ci_low, b.ci_high)


def test_generic_perm_both_equals_the_dedicated_one() -> None:
    X, H = _data(8, (5, 8))
    B = H + np.random.default_rng(1).normal(size=H.shape)
    res = perm_both_test(get_statistic("pearson"), X, B, H, "segment",
                         StatisticOptions(permutations=40, seed=2))
    ref = permutation_test(X, B, H, "segment", n_resamples=40, seed=2, alternative="greater")
    assert res.pvalue == ref.pvalue and np.array_equal(res.draws_a, ref.draws_a)


def test_a_statistic_defined_by_batch_only_gets_both_procedures() -> None:
    class Discordance(Statistic):  # lower is better: the share of discordant output pairs
        name = "discordance"
        higher_is_better = False
        statistic_range = (0.0, 1.0)

        def batch(self, Xs, Ys, level):  # type: ignore[no-untyped-def]
            x = Xs.reshape(*Xs.shape[:-2], -1)
            y = Ys.reshape(*Ys.shape[:-2], -1)
            dx = np.sign(x[..., :, None] - x[..., None, :])
            dy = np.sign(y[..., :, None] - y[..., None, :])
            n = x.shape[-1]
            return (dx * dy < 0).sum(axis=(-1, -2)) / (n * (n - 1))

    rng = np.random.default_rng(9)
    H = rng.normal(size=(4, 5))
    X = H + rng.normal(size=(4, 5))
    stat = Discordance()
    boot = bootstrap_statistic(stat, X, H, "segment", StatisticOptions(n_resamples=30, seed=1))
    si, ii = resample_indices(4, 5, 30, "both", seed=1)
    want = [stat.batch(X[si[b]][:, ii[b]][None], H[si[b]][:, ii[b]][None], "segment")[0]
            for b in range(30)]
    assert np.allclose(boot.distribution, want, atol=1e-12)
    i, j = np.triu_indices(20, 1)
    dx, dy = np.sign(X.ravel()[i] - X.ravel()[j]), np.sign(H.ravel()[i] - H.ravel()[j])
    assert boot.statistic == pytest.approx(np.mean(dx * dy < 0), abs=1e-12)  # enumeration
    # A = the human scores plus tiny noise (no discordant pair) is better than X: small p
    A = H + 1e-6 * rng.normal(size=H.shape)
    res = perm_both_test(stat, A, X, H, "segment", StatisticOptions(permutations=99, seed=0))
    assert res.statistic_a < res.statistic_b and res.pvalue < 0.05
    assert perm_both_test(stat, X, A, H, "segment",
                          StatisticOptions(permutations=99, seed=0)).pvalue > 0.5


# ----------------------------------------------------------------------------- plugins


@pytest.fixture
def plugin_path(monkeypatch):  # type: ignore[no-untyped-def]
    monkeypatch.syspath_prepend(str(PLUGIN_DIR))
    yield PLUGIN_DIR
    sys.modules.pop("toy_nlgeval_statistic", None)


def _study_files(tmp_path: Path) -> tuple[Path, Path]:
    rng = np.random.default_rng(11)
    hum, sc = [], []
    for s in range(5):
        for i in range(10):
            h = float(rng.integers(0, 4)) + 0.5 * s
            hum.append({"system": f"s{s}", "item": f"i{i}", "criterion": "quality", "score": h})
            sc.append({"system": f"s{s}", "item": f"i{i}", "good": round(h + rng.normal(), 2),
                       "poor": round(rng.normal(), 2)})
    hp, sp = tmp_path / "human.csv", tmp_path / "scores.csv"
    pd.DataFrame(hum).to_csv(hp, index=False)
    pd.DataFrame(sc).to_csv(sp, index=False)
    return hp, sp


def _ccc(x: np.ndarray, y: np.ndarray) -> float:
    """Lin (1989) from its definition (population moments)."""
    return 2 * np.cov(x, y, bias=True)[0, 1] / (x.var() + y.var() + (x.mean() - y.mean()) ** 2)


def test_plugin_statistic_in_validate_json_and_report(plugin_path, tmp_path) -> None:  # type: ignore[no-untyped-def]
    assert "lin_ccc" in available_statistics()
    assert get_statistic("ccc").description.startswith("Lin's")
    hp, sp = _study_files(tmp_path)
    out = tmp_path / "rep"
    res = runner.invoke(app, ["validate", "--human", str(hp), "--scores", str(sp),
                              "--levels", "system,segment,item", "--statistics",
                              "pearson,lin_ccc", "--json", "--quiet", "--resamples", "30",
                              "--permutations", "30", "--out", str(out)])
    assert res.exit_code == 0, (res.output, res.exception)
    data = json.loads(res.stdout)
    rows = [r for r in data["correlations"] if r["coefficient"] == "lin_ccc"]
    assert {r["level"] for r in rows} == {"system", "segment"}  # its levels only
    keys = {"metric", "criterion", "level", "coefficient", "r", "p", "ci_low", "ci_high", "n",
            "epsilon"}
    assert all(keys <= set(r) for r in rows)
    hum, sc = pd.read_csv(hp), pd.read_csv(sp)
    m = hum.merge(sc, on=["system", "item"])
    for r in rows:
        if r["level"] == "segment":
            want = _ccc(m[r["metric"]].to_numpy(), m["score"].to_numpy())
        else:
            means = m.groupby("system")[[r["metric"], "score"]].mean()
            want = _ccc(means[r["metric"]].to_numpy(), means["score"].to_numpy())
        assert r["r"] == pytest.approx(want, abs=1e-12)
        assert r["ci_low"] <= r["r"] <= r["ci_high"]
    assert "lin_ccc" in (out / "report.html").read_text(encoding="utf-8")
    assert any(p.name.endswith("_lin_ccc.csv") for p in (out / "tables").iterdir())


def test_plugin_seen_by_a_fresh_cli_process(plugin_path, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """Real discovery in a new process (PYTHONPATH, as an installed package would be)."""
    hp, sp = _study_files(tmp_path)
    exe = Path(sys.executable).parent / "nlgeval"
    env = {**os.environ, "PYTHONPATH": str(PLUGIN_DIR)}
    proc = subprocess.run(
        [str(exe), "validate", "--human", str(hp), "--scores", str(sp), "--levels", "system",
         "--statistics", "ccc", "--json", "--quiet", "--resamples", "0", "--permutations", "0",
         "--out", str(tmp_path / "rep2")],
        capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr
    rows = json.loads(proc.stdout)["correlations"]
    assert {r["coefficient"] for r in rows} == {"ccc"}


def test_a_statistic_below_its_minimum_n_is_undefined() -> None:
    class Spread(Statistic):
        name = "spread"
        min_n = 4

        def batch(self, Xs, Ys, level):  # type: ignore[no-untyped-def]
            return np.nanmax(Xs, axis=(-1, -2)) - np.nanmin(Xs, axis=(-1, -2))

    v = Spread().value(np.ones((3, 1)), np.ones((3, 1)), "system")
    assert math.isnan(v.statistic) and v.n == 3 and "at least 4" in v.note
    assert Spread().value(np.ones((4, 1)), np.ones((4, 1)), "system").statistic == 0.0


def test_broken_plugin_gives_a_clear_error(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    dist = tmp_path / "broken_stat-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: broken-stat\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text(
        f"[{ENTRY_POINT_GROUP}]\nbroken = toy_nlgeval_statistic:NotAStatistic\n")
    monkeypatch.syspath_prepend(str(PLUGIN_DIR))
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        with pytest.raises(InputError, match="entry point 'broken'.*not a nlgeval statistic"):
            available_statistics()
        assert get_statistic("pearson").name == "pearson"  # built-ins need no plugin scan
    finally:
        sys.modules.pop("toy_nlgeval_statistic", None)
