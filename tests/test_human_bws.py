"""Best-worst scaling: designs, counting, implied pairwise wins, the maxdiff logit, the CLI.

References: balance properties counted here from the tuples; counting scores worked out by
hand; the maxdiff utilities against an independent fit of the same likelihood as a conditional
logit (statsmodels ``ConditionalLogit``, one stratum per tuple over its ordered pairs); the
Bradley-Terry fit of the implied wins through :func:`nlgeval.human.bradley_terry`; known
rankings recovered from data simulated (seeded) from the maxdiff model.
"""

from __future__ import annotations

import json
from itertools import combinations
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from typer.testing import CliRunner

from nlgeval.cli import app
from nlgeval.errors import InputError
from nlgeval.human import (
    bradley_terry,
    bws_counts,
    bws_design,
    bws_maxdiff,
    bws_output_tuples,
    bws_pairs,
    bws_ratings,
    pairwise_outcomes,
)

runner = CliRunner()


def _pair_table(d) -> dict[tuple[str, str], int]:  # type: ignore[no-untyped-def]
    out = dict.fromkeys(combinations(sorted(d.candidates), 2), 0)
    for row in d.matrix().tolist():
        for a, b in combinations(sorted(row), 2):
            out[(a, b)] += 1
    return out


@pytest.mark.parametrize(("v", "appearances", "lam"), [(7, 4, 2), (13, 4, 1), (13, 8, 2),
                                                        (5, 4, 3)])
def test_cyclic_bibd_is_balanced(v: int, appearances: int, lam: int) -> None:
    d = bws_design(v, seed=4, appearances=appearances)
    assert d.method == "cyclic-bibd" and d.bibd
    m = d.matrix()
    assert m.shape == (v * appearances // 4, 4)
    assert all(len(set(r)) == 4 for r in m.tolist())
    assert set(pd.Series(m.ravel()).value_counts()) == {appearances}
    # every pair together exactly lambda = r (k - 1) / (v - 1) times
    assert set(_pair_table(d).values()) == {lam}
    assert len({tuple(sorted(r)) for r in m.tolist()}) == len(m)  # no tuple repeated


@pytest.mark.parametrize("v", [6, 10, 12, 20, 50])
def test_kiritchenko_mohammad_design_balance(v: int) -> None:
    d = bws_design([f"s{i}" for i in range(v)], seed=1)
    m = d.matrix()
    assert d.n_tuples == 2 * v and m.shape == (2 * v, 4)  # 2N tuples of 4
    assert all(len(set(r)) == 4 for r in m.tolist())
    counts = pd.Series(m.ravel()).value_counts()
    assert set(counts) == {8} and len(counts) == v  # each in the same number (8) of tuples
    pairs = np.array(list(_pair_table(d).values()))
    mean = 2 * v * 6 / (v * (v - 1) / 2)
    assert pairs.max() <= int(np.ceil(mean))  # no pair together more often than needed
    assert (d.pair_min, d.pair_max) == (pairs.min(), pairs.max())
    assert d.bibd == (pairs.min() == pairs.max())
    assert not any("more than" in n for n in d.notes)


def test_design_says_when_a_pair_is_over_used() -> None:
    d = bws_design(30, seed=1, max_swaps=10)
    assert d.pair_max >= 2 and any("more than the 1 needed" in n for n in d.notes)


def test_design_is_seeded_and_checked() -> None:
    a = bws_design(10, seed=7)
    assert a.tuples.equals(bws_design(10, seed=7).tuples)
    assert not a.tuples.equals(bws_design(10, seed=8).tuples)
    with pytest.raises(InputError, match="multiple of the tuple size"):
        bws_design(5, seed=1, appearances=2)
    with pytest.raises(InputError, match="at least 4 candidates"):
        bws_design(3, seed=1)
    with pytest.raises(InputError, match="distinct"):
        bws_design(["a", "a", "b", "c"], seed=1)


def test_output_tuples_per_item() -> None:
    items = [str(i) for i in range(5)]
    t = bws_output_tuples(items, [f"S{i}" for i in range(6)], seed=3)
    assert set(t.groupby(["item", "system"]).size()) == {8}  # every output in 8 tuples
    assert (t.groupby("tuple_id")["item"].nunique() == 1).all()  # one input per tuple
    assert (t.groupby("tuple_id")["system"].nunique() == 4).all()
    assert t.equals(bws_output_tuples(items, [f"S{i}" for i in range(6)], seed=3))
    one = t[t["item"] == "0"]["system"].tolist()
    assert one != t[t["item"] == "1"]["system"].tolist()  # items get different designs


def _judgement(rater: str, tid: int, systems: str, best: str, worst: str,
               item: str = "1") -> list[dict]:
    return [{"rater": rater, "tuple_id": tid, "item": item, "system": s,
             "best": int(s == best), "worst": int(s == worst)} for s in systems]


def test_counting_closed_form() -> None:
    """Three tuples by hand: a shown 3x (best twice, worst 0) -> 2/3; d shown 2x, worst once
    -> -1/2; b shown 3x, best once, worst once -> 0; c 3x, worst once -> -1/3; e 1x -> 0."""
    j = pd.DataFrame(_judgement("r1", 1, "abcd", "a", "d") + _judgement("r1", 2, "abce", "b", "c")
                     + _judgement("r2", 3, "abcd", "a", "b"))
    got = bws_counts(j, by=("system",)).set_index("system")
    assert got["n"].to_dict() == {"a": 3, "b": 3, "c": 3, "d": 2, "e": 1}
    assert got["score"].to_dict() == pytest.approx({"a": 2 / 3, "b": 0.0, "c": -1 / 3,
                                                    "d": -0.5, "e": 0.0})
    assert got["score"].between(-1, 1).all()
    per = bws_ratings(j, per_rater=True).set_index(["rater", "system"])["score"]
    assert per[("r2", "b")] == -1.0 and per[("r1", "a")] == 0.5
    agg = bws_ratings(j, criterion="Fluency")
    assert list(agg.columns) == ["rater", "item", "system", "criterion", "score", "n"]
    assert set(agg["rater"]) == {"all"} and set(agg["criterion"]) == {"Fluency"}


def test_bad_judgements_name_the_row() -> None:
    j = pd.DataFrame(_judgement("r1", 1, "abcd", "a", "d"))
    j.loc[2, "best"] = 1
    with pytest.raises(InputError, match="exactly one best") as e:
        bws_counts(j)
    assert e.value.row == 1
    j = pd.DataFrame(_judgement("r1", 1, "abcd", "a", "d"))
    j["worst"] = j["worst"].astype(object)
    j.loc[3, "worst"] = "x"
    with pytest.raises(InputError, match="worst must be 0 or 1, got 'x'") as e:
        bws_counts(j)
    assert (e.value.row, e.value.column) == (4, "worst")
    with pytest.raises(InputError, match="missing best"):
        bws_counts(j.drop(columns="best"))


def test_implied_pairs() -> None:
    j = pd.DataFrame(_judgement("r1", 1, "abcd", "c", "a") + _judgement("r1", 2, "bcde", "e", "b"))
    p = bws_pairs(j)
    assert len(p) == 2 * (2 * 4 - 3)
    won = [(w, a if w == b else b) for a, b, w in zip(p["system"], p["system_b"], p["winner"],
                                                       strict=True)]
    assert sorted(won) == sorted([("c", "a"), ("c", "b"), ("c", "d"), ("b", "a"), ("d", "a"),
                                  ("e", "b"), ("e", "c"), ("e", "d"), ("c", "b"), ("d", "b")])
    assert (p["system"] < p["system_b"]).all()
    assert (p["score"] == np.where(p["winner"] == p["system"], 1, -1)).all()


def test_implied_pairs_leave_out_same_system_pairs() -> None:
    """A tuple of outputs of different items: two are system A's. Best A (item 1), worst B:
    A > A is no comparison of systems; A > C, A > B, A(item 2) > B, C > B remain."""
    j = pd.DataFrame(_judgement("r1", 1, "AC", "A", "B", item="1")
                     + _judgement("r1", 1, "AB", "", "B", item="2"))
    p = bws_pairs(j)
    won = sorted((w, a if w == b else b) for a, b, w in zip(p["system"], p["system_b"],
                                                              p["winner"], strict=True))
    assert won == [("A", "B"), ("A", "B"), ("A", "C"), ("C", "B")]
    assert set(p["item"]) == {"1"} and set(p["source_item"]) == {""}


def test_design_cli_matches_library(tmp_path: Path) -> None:
    res = runner.invoke(app, ["design", "bws", "--candidates", "a,b,c,d,e,f,g", "--seed", "3",
                              "--appearances", "4", "--json", "--out", str(tmp_path / "t.csv")])
    assert res.exit_code == 0, (res.output, res.exception)
    data = json.loads(res.stdout)
    lib = bws_design(list("abcdefg"), seed=3, appearances=4)
    assert data["tuples"] == lib.tuples.to_dict("records")
    assert data["bibd"] is True and data["method"] == "cyclic-bibd"
    assert pd.read_csv(tmp_path / "t.csv").equals(lib.tuples)


def _simulate(utilities: dict[str, float], design, raters: int, seed: int,  # type: ignore[no-untyped-def]
              item: str = "1") -> pd.DataFrame:
    """Best and worst drawn from the maxdiff model (Marley & Louviere 2005)."""
    rng = np.random.default_rng(seed)
    rows = []
    for r in range(raters):
        for tid, row in enumerate(design.matrix().tolist(), start=1):
            u = np.array([utilities[c] for c in row])
            pairs = [(a, b) for a in range(len(row)) for b in range(len(row)) if a != b]
            logit = np.array([u[a] - u[b] for a, b in pairs])
            p = np.exp(logit - logit.max())
            a, b = pairs[rng.choice(len(pairs), p=p / p.sum())]
            rows += [{"rater": f"r{r}", "tuple_id": f"{item}-{tid}", "item": item,
                      "system": c, "best": int(k == a), "worst": int(k == b)}
                     for k, c in enumerate(row)]
    return pd.DataFrame(rows)


def test_maxdiff_matches_conditional_logit() -> None:
    from statsmodels.discrete.conditional_models import ConditionalLogit

    labels = list("abcdefgh")
    j = _simulate(dict(zip(labels, np.linspace(1.5, -1.5, 8), strict=True)),
                  bws_design(labels, seed=2), raters=5, seed=0)
    ours = bws_maxdiff(j)
    assert ours.converged and ours.n_tuples == 80
    # independent: conditional logit over the 12 ordered pairs of each tuple
    code = {s: i for i, s in enumerate(labels)}
    x, y, g = [], [], []
    for n, (_, t) in enumerate(j.groupby(["rater", "tuple_id"], sort=False)):
        best, worst = t.loc[t["best"] == 1, "system"].item(), t.loc[t["worst"] == 1,
                                                                     "system"].item()
        for a in t["system"]:
            for b in t["system"]:
                if a != b:
                    row = np.zeros(len(labels))
                    row[code[a]] += 1
                    row[code[b]] -= 1
                    x.append(row[1:])
                    y.append(int(a == best and b == worst))
                    g.append(n)
    fit = ConditionalLogit(np.array(y), np.array(x), groups=np.array(g)).fit(
        method="newton", maxiter=100, disp=0)
    ref = np.r_[0.0, fit.params]
    ref -= ref.mean()
    got = ours.ranking.set_index("label").loc[labels, "utility"].to_numpy()
    np.testing.assert_allclose(got, ref, atol=1e-6)
    assert ours.loglik == pytest.approx(fit.llf, abs=1e-6)


def test_sequential_logit_matches_conditional_logit() -> None:
    """Two strata per tuple: the best among all (exog e_i), then the worst among the rest
    (exog -e_l), fitted by statsmodels ConditionalLogit."""
    from statsmodels.discrete.conditional_models import ConditionalLogit

    labels = list("abcdef")
    j = _simulate(dict(zip(labels, np.linspace(1.0, -1.0, 6), strict=True)),
                  bws_design(labels, seed=6), raters=6, seed=2)
    ours = bws_maxdiff(j, model="sequential")
    assert ours.method == "sequential-logit"
    code = {s: i for i, s in enumerate(labels)}
    x, y, g = [], [], []
    for n, (_, t) in enumerate(j.groupby(["rater", "tuple_id"], sort=False)):
        best = t.loc[t["best"] == 1, "system"].item()
        worst = t.loc[t["worst"] == 1, "system"].item()
        for s in t["system"]:
            row = np.zeros(len(labels))
            row[code[s]] = 1.0
            x.append(row[1:])
            y.append(int(s == best))
            g.append(2 * n)
            if s != best:
                x.append(-row[1:])
                y.append(int(s == worst))
                g.append(2 * n + 1)
    fit = ConditionalLogit(np.array(y), np.array(x), groups=np.array(g)).fit(
        method="newton", maxiter=100, disp=0)
    ref = np.r_[0.0, fit.params]
    ref -= ref.mean()
    got = ours.ranking.set_index("label").loc[labels, "utility"].to_numpy()
    np.testing.assert_allclose(got, ref, atol=1e-6)
    assert ours.loglik == pytest.approx(fit.llf, abs=1e-6)
    with pytest.raises(InputError, match="model must be"):
        bws_maxdiff(j, model="probit")


def test_known_ranking_is_recovered_by_counts_maxdiff_and_bradley_terry() -> None:
    labels = [f"sys{i}" for i in range(8)]
    truth = dict(zip(labels, np.linspace(2.0, -2.0, 8), strict=True))
    j = _simulate(truth, bws_design(labels, seed=5), raters=20, seed=11)
    order = sorted(labels, key=lambda s: -truth[s])
    counts = bws_counts(j, by=("system",)).sort_values("score", ascending=False)
    assert counts["system"].tolist() == order
    assert bws_maxdiff(j).ranking["label"].tolist() == order
    assert bws_maxdiff(j, model="sequential").ranking["label"].tolist() == order
    bt = bradley_terry(pairwise_outcomes(bws_pairs(j)), n_resamples=0)
    assert bt.ranking["system"].tolist() == order
    # counting and maxdiff utilities are monotonically related here (Marley et al. 2016)
    md = bws_maxdiff(j).ranking.set_index("label")["utility"]
    c = counts.set_index("system")["score"]
    assert stats.spearmanr(md[labels], c[labels])[0] == pytest.approx(1.0)


def test_maxdiff_without_prior_refuses_infinite_utilities() -> None:
    j = pd.DataFrame(_judgement("r1", 1, "abcd", "a", "d") + _judgement("r1", 2, "abcd", "a", "c"))
    with pytest.raises(InputError, match="infinite"):
        bws_maxdiff(j)
    assert bws_maxdiff(j, prior=1.0).ranking["label"].iloc[0] == "a"


def _study(tmp_path: Path) -> tuple[Path, Path, Path, list[str]]:
    """6 systems x 12 items, tuples of 4 systems per item; ratings, pairs and a metric file."""
    systems = [f"S{i}" for i in range(6)]
    truth = dict(zip(systems, np.linspace(1.5, -1.5, 6), strict=True))
    parts = [_simulate(truth, bws_design(systems, seed=100 + i, appearances=4), raters=3,
                       seed=i, item=str(i)) for i in range(12)]
    j = pd.concat(parts, ignore_index=True)
    ratings, pairs = tmp_path / "bws_ratings.csv", tmp_path / "bws_pairs.csv"
    r = bws_ratings(j, criterion="Overall")
    r.to_csv(ratings, index=False)
    bws_pairs(j, criterion="Overall").to_csv(pairs, index=False)
    rng = np.random.default_rng(3)
    metric = r[["system", "item"]].assign(
        good=r["system"].map(truth) + rng.normal(0, 0.3, len(r)), noise=rng.normal(size=len(r)))
    scores = tmp_path / "scores.csv"
    metric.to_csv(scores, index=False)
    return ratings, pairs, scores, sorted(systems, key=lambda s: -truth[s])


def test_bws_score_cli_writes_the_library_frames(tmp_path: Path) -> None:
    systems = ["S0", "S1", "S2", "S3", "S4"]
    truth = dict(zip(systems, np.linspace(1.0, -1.0, 5), strict=True))
    j = pd.concat([_simulate(truth, bws_design(systems, seed=i, appearances=4), raters=2,
                             seed=i, item=str(i)) for i in range(6)], ignore_index=True)
    path = tmp_path / "judgements.csv"
    j.to_csv(path, index=False)
    res = runner.invoke(app, ["bws", "score", str(path), "--criterion", "Overall", "--out",
                              str(tmp_path / "r.csv"), "--pairs", str(tmp_path / "p.csv"),
                              "--prior", "0.1", "--json"])
    assert res.exit_code == 0, (res.output, res.exception)
    lib = bws_ratings(j, criterion="Overall")
    got = pd.read_csv(tmp_path / "r.csv", dtype={"item": str})
    pd.testing.assert_frame_equal(got, lib, check_dtype=False)
    assert len(pd.read_csv(tmp_path / "p.csv")) == len(bws_pairs(j))
    data = json.loads(res.stdout)
    util = {r["system"]: r["utility"] for r in data["ranking"]}
    md = bws_maxdiff(j, prior=0.1).ranking.set_index("label")["utility"]
    assert util == pytest.approx(md.to_dict())
    path.write_text("rater,tuple_id,item,system,best,worst\nr1,1,1,a,1,0\nr1,1,1,b,1,0\n")
    res = runner.invoke(app, ["bws", "score", str(path)])
    assert isinstance(res.exception, InputError) and res.exception.row == 2


def test_cli_round_trip(tmp_path: Path) -> None:
    ratings, pairs, scores, order = _study(tmp_path)
    res = runner.invoke(app, ["validate", "--human", str(ratings), "--scores", str(scores),
                              "--metrics", "none", "--json", "--quiet", "--resamples", "200",
                              "--permutations", "200", "--levels", "system"])
    assert res.exit_code == 0, (res.output, res.exception)
    recs = json.loads(res.stdout)["correlations"]
    good = [x for x in recs if x["metric"] == "good" and x["criterion"] == "Overall"]
    assert good and all(x["r"] > 0.8 for x in good)
    res = runner.invoke(app, ["compare", str(ratings), "--criterion", "Overall", "--method",
                              "friedman", "--json"])
    assert res.exit_code == 0, (res.output, res.exception)
    assert json.loads(res.stdout)["friedman"]["pvalue"] < 0.001
    res = runner.invoke(app, ["compare", str(pairs), "--criterion", "Overall", "--method",
                              "bradley-terry", "--n-boot", "200", "--json"])
    assert res.exit_code == 0, (res.output, res.exception)
    ranking = json.loads(res.stdout)["ranking"]
    assert [r["system"] for r in ranking] == order
