"""``nlgeval validate`` with the WMT meta-evaluation statistics, MT corpora and MTME test sets."""

from __future__ import annotations

import itertools
import json

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from nlgeval.cli import app
from nlgeval.errors import InputError
from nlgeval.report import run_validation
from nlgeval.report.meta import check_statistic
from nlgeval.scores import ratings_corpus, read_scores

runner = CliRunner()
STATS = "pearson,kendall,pairwise_accuracy,soft_pairwise_accuracy,acc_eq,acc23"


def _files(tmp_path, seed=11, n_sys=5, n_items=12, shuffle=False):
    rng = np.random.default_rng(seed)
    hum, sc = [], []
    for s in range(n_sys):
        for i in range(n_items):
            h = float(rng.integers(0, 4)) + 0.5 * s  # ties in the human scores
            hum.append({"system": f"s{s}", "item": f"i{i:02d}", "criterion": "mqm", "score": h})
            sc.append({"system": f"s{s}", "item": f"i{i:02d}",
                       "good": round(h + rng.normal(), 1), "poor": round(rng.normal(), 1)})
    hum, sc = pd.DataFrame(hum), pd.DataFrame(sc)
    if shuffle:
        hum = hum.sample(frac=1.0, random_state=1)
        sc = sc.sample(frac=1.0, random_state=2)
    hp, sp = tmp_path / f"h{int(shuffle)}.csv", tmp_path / f"s{int(shuffle)}.csv"
    hum.to_csv(hp, index=False)
    sc.to_csv(sp, index=False)
    return hp, sp, hum, sc


def _run(tmp_path, hp, sp, extra=()):
    res = runner.invoke(app, ["validate", "--human", str(hp), "--scores", str(sp),
                              "--levels", "system,segment,item", "--statistics", STATS,
                              "--json", "--quiet", "--resamples", "40", "--permutations", "40",
                              "--spa-permutations", "100", "--out", str(tmp_path / "rep"),
                              *extra])
    assert res.exit_code == 0, (res.output, res.exception)
    return json.loads(res.stdout)


def test_statistics_json_contract_and_independent_values(tmp_path):
    hp, sp, hum, sc = _files(tmp_path)
    data = _run(tmp_path, hp, sp)
    recs = data["correlations"]
    keys = {"metric", "criterion", "level", "coefficient", "r", "p", "ci_low", "ci_high", "n",
            "epsilon"}
    assert all(keys <= set(r) for r in recs)
    got = {(r["metric"], r["level"], r["coefficient"]): r for r in recs}
    # each statistic under the name given, on its levels
    assert {c for (_, _, c) in got} == set(STATS.split(","))
    assert {lv for (_, lv, c) in got if c == "soft_pairwise_accuracy"} == {"system"}
    assert {lv for (_, lv, c) in got if c == "acc_eq"} == {"segment", "item"}
    for (_m, _lv, c), r in got.items():
        assert (r["epsilon"] is not None) == (c == "acc_eq")
    # system-level pairwise accuracy by hand: sign agreement of system-mean differences
    m = hum.merge(sc, on=["system", "item"])
    means = m.groupby("system")[["score", "good"]].mean()
    agree = [np.sign(means.loc[a, "score"] - means.loc[b, "score"])
             == np.sign(means.loc[a, "good"] - means.loc[b, "good"])
             for a, b in itertools.combinations(means.index, 2)]
    assert got[("good", "system", "pairwise_accuracy")]["r"] == pytest.approx(np.mean(agree))
    # acc23 with no grouping by brute force over all pairs of outputs (exact ties only)
    h, g = m["score"].to_numpy(), m["good"].to_numpy()
    i, j = np.triu_indices(len(h), 1)
    dh, dm = np.sign(h[i] - h[j]), np.sign(g[i] - g[j])
    acc = np.mean(dh == dm)  # concordant, or tied in both
    assert got[("good", "segment", "acc23")]["r"] == pytest.approx(acc, abs=1e-12)
    # tie calibration can only help: acc_eq >= acc23 at epsilon 0
    assert got[("good", "segment", "acc_eq")]["r"] >= acc - 1e-12
    # the informative metric is in the top cluster of the verdict, the noise is not
    # (issue 26: one entry per level; with 5 systems, or 40 permutations at item level, no
    # metric is significant after the Holm correction there, and the verdict says so)
    assert data["verdict"] and all(v["top"] == ["good"] for v in data["verdict"]
                                   if not v["withheld"])
    assert {v["level"] for v in data["verdict"] if not v["withheld"]} >= {"system+item",
                                                                          "segment"}
    assert all("significantly" in v["withheld"] for v in data["verdict"] if v["withheld"])
    board = data["leaderboards"]["wmt24"]
    assert [b["metric"] for b in board] == ["good", "poor"]


def test_deterministic_and_independent_of_row_order(tmp_path):
    hp, sp, _, _ = _files(tmp_path)
    hq, sq, _, _ = _files(tmp_path, shuffle=True)
    a = _run(tmp_path, hp, sp)["correlations"]
    b = _run(tmp_path, hp, sp)["correlations"]
    c = _run(tmp_path, hq, sq)["correlations"]
    key = lambda r: (r["metric"], r["level"], r["coefficient"])  # noqa: E731
    for x, y, z in zip(sorted(a, key=key), sorted(b, key=key), sorted(c, key=key), strict=True):
        assert x == y
        assert x == z


def test_fixed_epsilon_and_bad_statistic(tmp_path):
    hp, sp, _, _ = _files(tmp_path)
    data = _run(tmp_path, hp, sp, ["--epsilon", "good=0.5,poor=0.25"])
    eps = {(r["metric"], r["level"]): r["epsilon"] for r in data["correlations"]
           if r["coefficient"] == "acc_eq"}
    assert eps[("good", "segment")] == 0.5 and eps[("poor", "item")] == 0.25
    with pytest.raises(InputError, match="unknown statistic"):
        check_statistic("kendal_tau_x")


def test_run_validation_statistics_in_python(tmp_path):
    hp, sp, _, _ = _files(tmp_path)
    study = run_validation(ratings_corpus(hp), [], scores=read_scores(sp),
                           statistics=["spa", "acc_eq"], levels=["system", "item"],
                           n_resamples=0, permutations=30, spa_permutations=100)
    assert set(study.correlations["statistic"]) == {"spa", "acc_eq"}
    assert "wmt24" in study.leaderboards
    assert not study.clusters.empty


def test_wmt21_ted_end_to_end(data_dir, tmp_path):
    res = runner.invoke(app, ["validate", "wmt21-ted-ende", "--data-dir", str(data_dir),
                              "--metrics", "chrf", "--criteria", "MQM", "--levels",
                              "system,segment", "--statistics", "pearson,pairwise_accuracy",
                              "--resamples", "20", "--permutations", "0", "--json", "--quiet",
                              "--out", str(tmp_path / "ted")])
    assert res.exit_code == 0, (res.output, res.exception)
    data = json.loads(res.stdout)
    sys_r = [r for r in data["correlations"] if r["level"] == "system"
             and r["coefficient"] == "pearson"][0]
    assert sys_r["n"] == 13 and sys_r["r"] > 0  # 13 MT systems; chrF agrees with MQM
    assert data["settings"]["excluded_systems"] == []


def test_mtme_layout_end_to_end(data_dir, tmp_path):
    from nlgeval.corpora import load_corpus
    from nlgeval.corpora.mtme import write_mtme

    corpus = load_corpus("wmt21-ted-ende", data_dir)
    keep_sys = corpus.systems[:5]
    keep_items = corpus.items[:30]
    sub = corpus.subset(keep_sys, keep_items)
    sub = type(sub)(sub.info, sub.outputs, sub.references,
                    sub.ratings[sub.ratings["criterion"] == "MQM"], sub.notes)
    rng = np.random.default_rng(0)
    h = sub.human_scores()
    scores = h.assign(metric="toy", score=h["score"] + rng.normal(size=len(h)))[
        ["system", "item", "metric", "score"]]
    write_mtme(sub, tmp_path / "wmt21", "en-de", scores=scores)
    res = runner.invoke(app, ["validate", f"mtme:{tmp_path / 'wmt21'}", "--lp", "en-de",
                              "--metrics", "none", "--levels", "segment", "--statistics",
                              "pearson", "--resamples", "0", "--permutations", "0", "--json",
                              "--quiet", "--out", str(tmp_path / "rep")])
    assert res.exit_code == 0, (res.output, res.exception)
    data = json.loads(res.stdout)
    metrics = {r["metric"] for r in data["correlations"]}
    assert len(metrics) == 1 and next(iter(metrics)).startswith("toy")


def test_acc_eq_note_when_no_better_than_all_ties():
    """Mostly-zero human scores and a metric that reverses them: tying everything is optimal."""
    from nlgeval.report.meta import MetaSettings, statistic_row

    rng = np.random.default_rng(4)
    Y = np.where(rng.random((6, 40)) < 0.85, 0.0, -rng.integers(1, 5, (6, 40)).astype(float))
    X = -Y + 0.01 * rng.normal(size=(6, 40))  # every untied pair is discordant or human-tied
    row = statistic_row(X, Y, "segment", "acc_eq", MetaSettings(n_resamples=0))
    h = Y.ravel()
    i, j = np.triu_indices(h.size, 1)
    share_tied = np.mean(h[i] == h[j])  # acc23 of a metric that ties every pair
    assert row["value"] == pytest.approx(share_tied, abs=1e-12)
    assert "no better than predicting a tie" in row["note"]
