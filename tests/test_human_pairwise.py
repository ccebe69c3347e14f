"""Pairwise (relative) judgements: sign tests, Bradley-Terry, rank clusters, `compare` detection.

Independent references:

* Bradley-Terry: a brute-force maximum-likelihood fit written here -- the log-likelihood summed
  judgement by judgement in plain Python and maximised with scipy's Nelder-Mead from several
  starts -- and **R BradleyTerry2** values, computed once. Provenance: R 4.2.2 (Debian bookworm),
  BradleyTerry2 1.1-2 (``r-cran-bradleyterry2`` 1.1-2-2)::

      bt <- data.frame(p1 = factor(c("A","A","A","B","B","C"), levels = c("A","B","C","D")),
                       p2 = factor(c("B","C","D","C","D","D"), levels = c("A","B","C","D")),
                       w1 = c(7, 9, 12, 6, 8, 5), w2 = c(5, 3, 2, 6, 4, 7))
      BTabilities(BTm(cbind(w1, w2), p1, p2, data = bt, id = "sys"))
      # A 0, B -0.690982249058816, C -1.135510135153896, D -1.267133484744721

* sign tests: scipy ``binomtest`` on counts made by hand; Holm written out; the win-share
  interval from statsmodels ``proportion_confint(method="beta")`` (Clopper-Pearson);
* rank clusters: MTME's ``AssignRanks`` rule re-derived by hand on a tiny p-value matrix;
* the experiment's real relative export (in-process app) read by ``nlgeval compare``.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import optimize, stats
from typer.testing import CliRunner

from nlgeval.cli import app
from nlgeval.errors import InputError
from nlgeval.human.pairwise import (
    assign_rank_clusters,
    bradley_terry,
    fit_bradley_terry,
    pairwise_outcomes,
    sign_tests,
    win_matrix,
)
from nlgeval.human.ratings import read_ratings

runner = CliRunner()
BT2 = {"A": 0.0, "B": -0.690982249058816, "C": -1.135510135153896, "D": -1.267133484744721}


def simulate(seed: int = 0, n: int = 300, strengths: tuple[float, ...] = (1.0, 0.4, 0.0, -0.8),
             tie_share: float = 0.15) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    k = len(strengths)
    names = [f"S{i}" for i in range(k)]
    rows = []
    for t in range(n):
        i, j = rng.choice(k, 2, replace=False)
        p = 1 / (1 + np.exp(strengths[j] - strengths[i]))
        u = rng.random()
        score = 0 if u < tie_share else (2 if rng.random() < p else -2)
        rows.append({"rater": f"r{t % 12}", "item": f"i{t % 25}", "system": names[i],
                     "system_b": names[j], "criterion": "q", "score": float(score)})
    return pd.DataFrame(rows)


def brute_force_mle(df: pd.DataFrame, ties: str = "half", prior: float = 0.0) -> dict:
    """Maximise sum over judgements of log P(outcome) directly (no sufficient statistics)."""
    names = sorted(set(df["system"]) | set(df["system_b"]))
    recs = list(zip(df["system"], df["system_b"], np.sign(df["score"]), strict=True))

    def negll(free: np.ndarray) -> float:
        b = dict(zip(names, np.concatenate([[0.0], free]), strict=True))
        total = 0.0
        for a, c, o in recs:
            pa = 1 / (1 + np.exp(b[c] - b[a]))
            if o > 0:
                total += np.log(pa)
            elif o < 0:
                total += np.log(1 - pa)
            elif ties == "half":
                total += 0.5 * np.log(pa) + 0.5 * np.log(1 - pa)
        vals = np.concatenate([[0.0], free])
        vals = vals - vals.mean()
        return -(total - 0.5 * prior * float((vals ** 2).sum()))

    best = None
    for start in (np.zeros(len(names) - 1), np.linspace(-1, 1, len(names) - 1)):
        r = optimize.minimize(negll, start, method="Nelder-Mead",
                              options={"xatol": 1e-10, "fatol": 1e-12, "maxiter": 40000,
                                       "maxfev": 40000})
        if best is None or r.fun < best.fun:
            best = r
    vals = np.concatenate([[0.0], best.x])
    return dict(zip(names, vals - vals.mean(), strict=True))


@pytest.mark.parametrize("ties", ["half", "drop"])
def test_bradley_terry_equals_brute_force_mle(ties: str) -> None:
    df = simulate(1, n=160)
    res = bradley_terry(pairwise_outcomes(df), ties=ties, n_resamples=0)  # type: ignore[arg-type]
    ref = brute_force_mle(df, ties=ties)
    got = dict(zip(res.ranking["system"], res.ranking["strength"], strict=True))
    for s, v in ref.items():
        assert got[s] == pytest.approx(v, abs=1e-5)
    assert abs(sum(got.values())) < 1e-9  # centred


def test_map_with_prior_equals_brute_force() -> None:
    # the MAP objective with the prior on centred strengths (the MAP is centred anyway)
    df = simulate(2, n=60)
    res = bradley_terry(pairwise_outcomes(df), prior=0.5, n_resamples=0)
    ref = brute_force_mle(df, prior=0.5)
    got = dict(zip(res.ranking["system"], res.ranking["strength"], strict=True))
    for s, v in ref.items():
        assert got[s] == pytest.approx(v, abs=1e-5)


def test_bradley_terry_matches_r_bradleyterry2() -> None:
    w = np.zeros((4, 4))
    for i, j, a, b in [(0, 1, 7, 5), (0, 2, 9, 3), (0, 3, 12, 2), (1, 2, 6, 6), (1, 3, 8, 4),
                       (2, 3, 5, 7)]:
        w[i, j], w[j, i] = a, b
    beta, ok = fit_bradley_terry(w)
    assert bool(ok)
    np.testing.assert_allclose(beta - beta[0], list(BT2.values()), atol=1e-8)
    # batched fitting gives the same answer per matrix
    many, oks = fit_bradley_terry(np.stack([w, w.T, w]))
    assert oks.all()
    np.testing.assert_allclose(many[0], beta, atol=1e-10)
    np.testing.assert_allclose(many[1], -beta, atol=1e-8)  # reversed wins: mirrored


def test_no_finite_mle_is_explained_and_prior_fixes_it() -> None:
    df = pd.DataFrame({"system": ["A", "A", "B", "B"], "system_b": ["B", "C", "C", "C"],
                       "score": [1.0, 2.0, 1.0, -1.0]})
    o = pairwise_outcomes(df)
    with pytest.raises(InputError, match="never lost: A"):
        bradley_terry(o, n_resamples=0)
    res = bradley_terry(o, prior=0.1, n_resamples=50, seed=1)
    assert res.ranking["system"].iloc[0] == "A"
    two_groups = pd.DataFrame({"system": ["A", "B", "C", "D"], "system_b": ["B", "A", "D", "C"],
                               "score": [1.0, -1.0, 1.0, -1.0]})
    with pytest.raises(InputError, match="2 groups never compared"):
        bradley_terry(pairwise_outcomes(two_groups), n_resamples=0)


def test_bootstrap_is_seeded_and_sensible() -> None:
    o = pairwise_outcomes(simulate(3, n=400))
    a = bradley_terry(o, n_resamples=300, seed=7)
    b = bradley_terry(o, n_resamples=300, seed=7)
    c = bradley_terry(o, n_resamples=300, seed=8)
    pd.testing.assert_frame_equal(a.ranking, b.ranking)
    assert not np.allclose(a.ranking["ci_low"], c.ranking["ci_low"])
    r = a.ranking
    assert (r["ci_low"] < r["strength"]).all() and (r["strength"] < r["ci_high"]).all()
    assert a.n_boot_used == 300
    # clusters by items / raters also run and are seeded
    d = bradley_terry(o, n_resamples=200, seed=7, resample="items")
    assert d.resample == "items" and d.n_boot_used == 200


def test_judgement_bootstrap_has_the_observed_expectation() -> None:
    # E[bootstrap win matrix] = observed win matrix for i.i.d. resampling of judgements
    from nlgeval.human.bt_fit import _resample_counts

    o = pairwise_outcomes(simulate(4, n=200))
    systems = o.attrs["systems"]
    wins, ties = _resample_counts(o, systems, "judgements", 4000,
                                  np.random.default_rng(0))
    observed = win_matrix(o, systems, ties="half")
    mean = (wins + 0.5 * ties).mean(axis=0)
    assert np.abs(mean - observed).max() < 0.6
    assert (wins.sum(axis=(1, 2)) + ties.sum(axis=(1, 2)) / 2 == len(o)).all()


def test_rank_clusters_follow_mtme_rule() -> None:
    # four systems sorted by strength; p[s, i] = p that s is not better than i
    p = np.array([[0, .30, .01, .00],
                  [0, 0, .20, .02],
                  [0, 0, 0, .40],
                  [0, 0, 0, 0]], dtype=float)
    # i = 1: p[0,1] = .30 > .05 -> rank 1; i = 2: p[0,2] = .01 -> new cluster, rank 2,
    # start 2; i = 3: only p[2,3] = .40 counts (start = 2) -> rank 2
    assert assign_rank_clusters(p, 0.05) == [1, 1, 2, 2]
    assert assign_rank_clusters(p, 0.005) == [1, 1, 1, 2]  # p[0,3] = 0 <= .005 at i = 3


def test_sign_tests_by_hand() -> None:
    from statsmodels.stats.multitest import multipletests
    from statsmodels.stats.proportion import proportion_confint

    df = pd.DataFrame({
        "system": ["A"] * 12 + ["B"] * 5 + ["C"] * 4,
        "system_b": ["B"] * 12 + ["C"] * 5 + ["A"] * 4,
        # A vs B: 9 wins A, 2 wins B, 1 tie; B vs C: 1, 3, 1; C vs A (flipped to A vs C): A
        # wins when the preference for C is negative: 3 A wins, 1 C win
        "score": [2, 1, 2, 1, 1, 2, 2, 1, 1, -1, -2, 0, 1, -1, -2, -1, 0, -1, -2, -1, 1],
    })
    o = pairwise_outcomes(df)
    out = sign_tests(o, correction="holm", alpha=0.05).set_index(["system_a", "system_b"])
    counts = {("A", "B"): (9, 2, 1), ("B", "C"): (1, 3, 1), ("A", "C"): (3, 1, 0)}
    p = []
    for key, (wa, wb, t) in counts.items():
        row = out.loc[key]
        assert (row["wins_a"], row["wins_b"], row["ties"]) == (wa, wb, t)
        ref = stats.binomtest(wa, wa + wb, 0.5).pvalue
        assert row["pvalue"] == pytest.approx(ref)
        lo, hi = proportion_confint(wa, wa + wb, alpha=0.05, method="beta")
        assert row["effect_size"] == pytest.approx((wa - wb) / (wa + wb))
        assert row["effect_size_low"] == pytest.approx(2 * lo - 1, abs=1e-8)
        assert row["effect_size_high"] == pytest.approx(2 * hi - 1, abs=1e-8)
        p.append(ref)
    holm = multipletests(p, method="holm")[1]
    np.testing.assert_allclose(out.loc[list(counts), "pvalue_adjusted"], holm)
    # n = 4 and n = 5 can never reach 0.05 (2 / 2^4 = 0.125, 2 / 2^5 = 0.0625)
    assert any("too few decisive judgements" in w and "A-C (n = 4)" in w
               for w in out.attrs["warnings"])


def test_midpoint_and_winner_tables() -> None:
    # a 1..5 scale: 3 is "no preference"
    df = pd.DataFrame({"system": ["A", "A", "A"], "system_b": ["B", "B", "B"],
                       "score": [5.0, 3.0, 1.0]})
    with pytest.raises(InputError, match="midpoint is unknown"):
        pairwise_outcomes(df)
    o = pairwise_outcomes(df, scale=(1, 5))
    assert list(o["outcome"]) == [1, 0, -1]
    w = pd.DataFrame({"system": ["A", "B", "A"], "system_b": ["B", "A", "C"],
                      "winner": ["A", "A", "tie"]})
    o = pairwise_outcomes(w)
    # row 2 (B vs A, winner A) is a win for A: it was -1 when the name "A" was read as the
    # code "a" (the left system, B)
    assert list(o["outcome"]) == [1, 1, 0] and list(o["system_a"]) == ["A", "A", "A"]
    with pytest.raises(InputError, match="winner 'Z' is neither"):
        pairwise_outcomes(w.assign(winner=["Z", "A", "A"]))


def test_winner_names_systems_called_a_and_b_before_codes() -> None:
    # the same judgements with systems named A/B and named X/Y give the same outcomes; the
    # codes a/b (model_a/model_b) still mean the left/right system when no name matches
    sys_a = ["A", "B", "B", "A", "A", "C"]
    sys_b = ["B", "A", "C", "C", "B", "B"]
    won = ["A", "A", "B", "C", "B", "B"]
    rename = {"A": "X", "B": "Y", "C": "Z"}
    named = pairwise_outcomes(pd.DataFrame({"system": sys_a, "system_b": sys_b, "winner": won}))
    other = pairwise_outcomes(pd.DataFrame({"system": [rename[s] for s in sys_a],
                                            "system_b": [rename[s] for s in sys_b],
                                            "winner": [rename[s] for s in won]}))
    # oriented as the systems first appear (A, B, C): the last row (C vs B, B won) is B over C
    assert named["outcome"].tolist() == other["outcome"].tolist() == [1, 1, 1, -1, -1, 1]
    codes = pairwise_outcomes(pd.DataFrame({"system": ["X", "Y"], "system_b": ["Y", "X"],
                                            "winner": ["b", "model_a"]}))
    assert codes["outcome"].tolist() == [-1, -1]  # Y won both


def test_pair_orientation_follows_the_file_when_consistent() -> None:
    from nlgeval.human.pairwise import _system_order

    a = np.array(["S2", "S1", "S1", "S3"])
    b = np.array(["S3", "S2", "S4", "S4"])
    assert _system_order(a, b) == ["S1", "S2", "S3", "S4"]
    # cyclic orientations: order of first appearance
    assert _system_order(np.array(["x", "y"]), np.array(["y", "x"])) == ["x", "y"]


def test_relative_export_read_and_compared(tmp_path: Path) -> None:
    """A real relative experiment, answered in-process, exported, and analysed by `compare`."""
    pytest.importorskip("flask")
    from experiment_helpers import csrf_of, form_action, write_experiment

    from nlgeval.experiment import create_experiment
    from nlgeval.experiment.app import create_app
    from nlgeval.experiment.export import export_ratings

    d = write_experiment(tmp_path / "exp", mode="relative", systems=3, items=6, evaluators=3)
    made = create_experiment(d)
    flask_app = create_app(d)
    flask_app.testing = True
    c = flask_app.test_client()
    expected: dict[tuple[str, str], list[int]] = {}
    k = 0
    for tok in made.evaluators["token"]:
        page = c.get(f"/e/{tok}").get_data(as_text=True)
        c.post(f"/e/{tok}/start", data={"csrf": csrf_of(page)})
        page = c.get(f"/e/{tok}").get_data(as_text=True)
        while "/trial/" in page:
            left, right = re.findall(r"Output of (S\d) for", page)[:2]
            # mostly the lower-numbered system is preferred; every third trial the other
            a_better = (left < right) != (k % 3 == 2)
            k += 1
            data = {"csrf": csrf_of(page), "c0": "-40" if a_better else "40", "c0_moved": "1",
                    "c1": "-2" if a_better else "2"}
            assert c.post(form_action(page), data=data).status_code == 303
            page = c.get(f"/e/{tok}").get_data(as_text=True)
            winner = left if a_better else right
            pair = tuple(sorted((left, right)))
            expected.setdefault(pair, [0, 0])[0 if winner == pair[0] else 1] += 1
    store = flask_app.extensions["nlgeval_experiment"]["store"]
    exp = export_ratings(store, flask_app.extensions["nlgeval_experiment"]["config"])
    path = tmp_path / "export.csv"
    exp.to_csv(path, index=False)
    df = read_ratings(path, criterion="adequacy")
    assert "system_b" in df.columns and len(df) == len(exp) // 2
    sign = json.loads(runner.invoke(app, ["compare", str(path), "--criterion", "adequacy",
                                          "--method", "sign", "--json"]).stdout)
    by = {(p["system_a"], p["system_b"]): p for p in sign["pairs"]}
    assert set(by) == {("S1", "S2"), ("S1", "S3"), ("S2", "S3")}
    # the export's canonical orientation and sign, recovered from what was clicked (practice
    # trials are in `expected` too, so the export has at most as many)
    for pair, row in by.items():
        assert row["wins_a"] + row["wins_b"] == sum(
            (exp["criterion"] == "adequacy") & (exp["system"] == pair[0])
            & (exp["system_b"] == pair[1]))
        assert row["wins_a"] <= expected[pair][0] and row["wins_b"] <= expected[pair][1]
        assert row["wins_a"] > row["wins_b"]  # the lower-numbered system is preferred
    res = runner.invoke(app, ["compare", str(path), "--criterion", "adequacy", "--json",
                              "--n-boot", "200"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert out["method"] == "bradley-terry" and out["pairs"] == sign["pairs"]
    assert [r["system"] for r in out["ranking"]] == ["S1", "S2", "S3"]
    for r in out["ranking"]:
        assert {"system", "strength", "ci_low", "ci_high"} <= set(r)
    # an absolute method on relative data is refused, not run on 1 of 3 pairs
    bad = runner.invoke(app, ["compare", str(path), "--criterion", "adequacy", "--method",
                              "wilcoxon"])
    assert isinstance(bad.exception, InputError)
    assert "pairwise (relative) judgements" in str(bad.exception)
