"""``nlgeval experiment simulate`` and ``export --out FOLDER``: simulated evaluators drive the
real app over HTTP, and the round trip init -> create -> simulate -> export -> validate/compare
recovers the latent ranking the diligent raters followed."""

from __future__ import annotations

import io
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from experiment_helpers import write_experiment
from typer.testing import CliRunner

from nlgeval.cli import app as cli_app
from nlgeval.cli import main
from nlgeval.errors import InputError
from nlgeval.experiment.simulate import simulate_experiment
from nlgeval.experiment.simulate_raters import behaviour_mix

RUN = CliRunner()


def _ok(args: list[str]) -> str:
    r = RUN.invoke(cli_app, args)
    assert r.exit_code == 0, (args, r.output, r.exception)
    return r.stdout


def _study(tmp: Path, mode: str = "absolute", evaluators: int = 6) -> Path:
    d = tmp / mode
    _ok(["experiment", "init", str(d), "--mode", mode])
    _ok(["experiment", "create", str(d), "--evaluators", str(evaluators), "-q"])
    return d


def _means(ratings: pd.DataFrame) -> list[str]:
    """Systems from the highest mean rating (over every criterion, on [0, 1]) down."""
    r = ratings.copy()
    span = r.groupby("criterion")["score"].transform(lambda s: s.max() - s.min())
    low = r.groupby("criterion")["score"].transform("min")
    r["x"] = (r["score"] - low) / span
    return r.groupby("system")["x"].mean().sort_values(ascending=False).index.tolist()


def _scores_file(tmp: Path, items: list[str], quality: dict[str, float]) -> Path:
    """A metric that follows the latent quality, and one that is noise."""
    rng = np.random.default_rng(3)
    rows = [{"system": s, "item": i, "follows": q + rng.normal(0, 0.05),
             "noise": rng.uniform()} for s, q in quality.items() for i in items]
    path = tmp / "scores.csv"
    pd.DataFrame(rows).to_csv(path, index=False)
    return path


def test_round_trip_absolute_recovers_the_ranking(tmp_path: Path) -> None:
    d = _study(tmp_path)
    out = json.loads(_ok(["experiment", "simulate", str(d), "--evaluators", "6", "--seed", "1",
                          "--behaviour", "diligent=5,spammer=1", "--json"]))
    assert [e["outcome"] for e in out["evaluators"]] == ["finished"] * 6
    assert sorted(e["behaviour"] for e in out["evaluators"]) == ["diligent"] * 5 + ["spammer"]
    _ok(["experiment", "export", str(d), "--out", str(tmp_path / "x")])
    assert sorted(p.name for p in (tmp_path / "x").iterdir()) == [
        "flags.csv", "questionnaire.csv", "ratings.csv"]
    ratings = pd.read_csv(tmp_path / "x" / "ratings.csv")
    assert list(ratings.columns[:5]) == ["rater", "item", "system", "criterion", "score"]
    assert len(ratings) == 6 * 6 * 2  # 6 evaluators x 6 trials x 2 criteria
    assert _means(ratings) == ["human", "neural", "template"]  # 0.8 > 0.5 > 0.2
    assert len(pd.read_csv(tmp_path / "x" / "questionnaire.csv")) == 6
    scores = _scores_file(tmp_path, sorted(ratings["item"].unique()), out["qualities"])
    v = json.loads(_ok(["validate", "--human", str(tmp_path / "x" / "ratings.csv"),
                        "--scores", str(scores), "--metrics", "none", "--json",
                        "--out", str(tmp_path / "val")]))
    corr = pd.DataFrame(v["correlations"]).set_index(
        ["metric", "criterion", "level", "coefficient"])["r"]
    for crit in ("quality", "fluency"):  # the metric that follows the qualities agrees
        assert corr[("follows", crit, "system", "kendall")] == 1.0
        assert corr[("follows", crit, "segment", "pearson")] > 0.3
    cmp = json.loads(_ok(["compare", str(tmp_path / "x" / "ratings.csv"), "--criterion",
                          "fluency", "--json"]))
    ranks = cmp["friedman"]["mean_ranks"]
    assert sorted(ranks, key=ranks.get, reverse=True) == ["human", "neural", "template"]


def test_the_latent_qualities_drive_the_ranking(tmp_path: Path) -> None:
    """Reversed qualities give the reversed ranking: the simulation follows them."""
    d = _study(tmp_path)
    _ok(["experiment", "simulate", str(d), "--evaluators", "6", "--seed", "2",
         "--quality", "human=0.15,neural=0.5,template=0.85"])
    _ok(["experiment", "export", str(d), "--out", str(tmp_path / "r.csv")])
    assert _means(pd.read_csv(tmp_path / "r.csv")) == ["template", "neural", "human"]


def test_simulation_is_reproducible(tmp_path: Path) -> None:
    cols = ["rater", "item", "system", "criterion", "score"]
    got = []
    for k in (1, 2):
        d = _study(tmp_path / str(k))
        simulate_experiment(d, evaluators=6, seed=5, behaviour="spammer=2")
        _ok(["experiment", "export", str(d), "--out", str(tmp_path / f"{k}.csv")])
        got.append(pd.read_csv(tmp_path / f"{k}.csv")[cols])
    pd.testing.assert_frame_equal(got[0], got[1])
    d3 = _study(tmp_path / "3")
    simulate_experiment(d3, evaluators=6, seed=6, behaviour="spammer=2")
    _ok(["experiment", "export", str(d3), "--out", str(tmp_path / "3.csv")])
    assert not got[0].equals(pd.read_csv(tmp_path / "3.csv")[cols])  # another seed


CROWD = '''
[crowd]
consent = "You agree that your answers are stored."
completion_code = "C0DE42"
min_trial_ms = 0

[checks]
repeats = 1
degraded = 2
speeder_ms = 0
'''


def test_sign_up_consent_checks_and_flags(tmp_path: Path) -> None:
    """Through the open sign-up link with consent; attention-check failers are flagged,
    diligent raters pass; a participant beyond the last free set finds the study full."""
    d = write_experiment(tmp_path / "crowd", systems=3, items=6, evaluators=3, extra=CROWD)
    _ok(["experiment", "create", str(d), "-q"])
    r = simulate_experiment(d, evaluators=4, seed=1, behaviour="diligent=3,attention-fail=1")
    ev = r.evaluators
    assert ev["participant"].tolist() == ["SIM0001", "SIM0002", "SIM0003", "SIM0004"]
    assert ev["outcome"].tolist().count("finished") == 3
    assert ev["outcome"].tolist().count("full") == 1
    _ok(["experiment", "export", str(d), "--out", str(tmp_path / "x")])
    flags = pd.read_csv(tmp_path / "x" / "flags.csv", dtype={"evaluator": str, "flags": str,
                                                           "verdict": str})
    flags["flags"] = flags["flags"].fillna("")
    done = ev[ev["outcome"] == "finished"]
    kind = dict(zip(done["evaluator"].astype(str), done["behaviour"], strict=True))
    assert set(kind) == set(flags["evaluator"])
    for row in flags.itertuples():
        if kind[row.evaluator] == "attention-fail":
            assert "failed_repeat" in row.flags and "failed_degraded" in row.flags
            assert row.verdict == "failed"
        else:
            assert row.flags == "" and row.verdict == "passed"
    ratings = pd.read_csv(tmp_path / "x" / "ratings.csv")
    assert set(ratings["participant"]) == set(ev.loc[ev["outcome"] == "finished",
                                                     "participant"])


def test_relative_and_triangle(tmp_path: Path) -> None:
    d = _study(tmp_path, "relative")
    simulate_experiment(d, evaluators=6, seed=1)
    _ok(["experiment", "export", str(d), "--out", str(tmp_path / "rel")])
    rel = pd.read_csv(tmp_path / "rel" / "ratings.csv")
    assert {"system", "system_b", "score"} <= set(rel.columns)
    # the preference for `system` over `system_b` follows the qualities (0.8, 0.5, 0.2)
    q = {"human": 0.8, "neural": 0.5, "template": 0.2}
    from nlgeval.experiment.config import load_config

    scale = {c.name: (c.scale_min + c.scale_max) / 2 for c in load_config(d).criteria}
    mid = rel["criterion"].map(scale)
    sign = np.sign(rel["score"] - mid)
    expect = np.sign(rel["system"].map(q) - rel["system_b"].map(q))
    assert (sign == expect).mean() > 0.8
    out = json.loads(_ok(["compare", str(tmp_path / "rel" / "ratings.csv"), "--criterion",
                          "fluency", "--bt-prior", "0.1", "--json"]))
    assert [r["system"] for r in out["ranking"]] == ["human", "neural", "template"]
    t = _study(tmp_path, "triangle")
    r = simulate_experiment(t, evaluators=6, seed=1)
    assert (r.evaluators["outcome"] == "finished").all()
    _ok(["experiment", "export", str(t), "--out", str(tmp_path / "tri")])
    tri = pd.read_csv(tmp_path / "tri" / "ratings.csv")
    assert tri["criterion"].eq("odd_one_out").all() and tri["score"].mean() > 0.5


def test_bad_input() -> None:
    rng = np.random.default_rng(0)
    with pytest.raises(InputError, match="behaviour"):
        behaviour_mix("lazy=2", 3, rng)
    with pytest.raises(InputError, match="count 4"):
        behaviour_mix("diligent=2,spammer=2", 3, rng)
    with pytest.raises(InputError, match="BEHAVIOUR=COUNT"):
        behaviour_mix("spammer=x", 3, rng)
    assert behaviour_mix(None, 2, rng) == ("diligent", "diligent")


def test_more_evaluators_than_personal_links(tmp_path: Path, capsys: pytest.CaptureFixture[str]
                                             ) -> None:
    d = _study(tmp_path, evaluators=3)
    for args, says in ((["--evaluators", "4"], "--evaluators 4"),
                       (["--behaviour", "x=1"], "unknown behaviour"),
                       (["--quality", "human=high"], "SYSTEM=QUALITY"),
                       # a typo in a system name ran, leaving 'human' at 0.5
                       (["--quality", "humn=0.9"], "'humn', which is not a system"),
                       (["--quality", "human=1.5"], "must be in [0, 1]")):
        with pytest.raises(SystemExit) as exc:
            main(["experiment", "simulate", str(d), *args])
        assert exc.value.code == 2
        assert says in capsys.readouterr().err


@pytest.mark.parametrize("mode", ["mqm", "esa", "bws"])
def test_round_trip_new_modes(tmp_path: Path, mode: str) -> None:
    """The acceptance interface: init --mode -> create -> simulate -> export -> validate;
    the segment scores (MQM, ESA) and the best-worst counting scores follow the latent
    qualities (the first system the best)."""
    d = tmp_path / mode
    _ok(["experiment", "init", str(d), "--mode", mode])
    _ok(["experiment", "create", str(d)])
    out = json.loads(_ok(["experiment", "simulate", str(d), "--evaluators", "6", "--seed", "1",
                          "--json"]))
    assert [e["outcome"] for e in out["evaluators"]] == ["finished"] * 6
    assert all(e["participant"].startswith("SIM") for e in out["evaluators"])  # signed up
    x = tmp_path / "x"
    _ok(["experiment", "export", str(d), "--out", str(x)])
    names = sorted(p.name for p in x.iterdir())
    ratings = pd.read_csv(x / "ratings.csv")
    assert list(ratings.columns[:5]) == ["rater", "item", "system", "criterion", "score"]
    q = out["qualities"]
    best_first = sorted(q, key=q.get, reverse=True)
    main = ratings[ratings["criterion"].isin(["MQM", "ESA", "quality"])]
    assert main.groupby("system")["score"].mean().sort_values(
        ascending=False).index.tolist() == best_first
    if mode == "bws":
        assert {"choices.csv", "bws_scores.csv"} <= set(names)
        choices = pd.read_csv(x / "choices.csv")
        shown = choices.groupby(["item", "system"]).size()
        assert shown.nunique() == 1  # every output in the same number of (tuple, rater)s
        assert (choices.groupby(["rater", "tuple_id"])[["best", "worst"]].sum() == 1).all().all()
    else:
        spans = pd.read_csv(x / "spans.csv")
        assert {"start", "end", "severity"} <= set(spans.columns)
        per = spans.dropna(subset=["severity"]).groupby("system").size()
        assert per[best_first[0]] < per[best_first[-1]]  # worse systems, more errors
    if mode == "mqm":  # the app's segment scores = the library's, from the exported spans
        from nlgeval.human.spans import mqm_span_ratings

        cols = ["rater", "item", "system", "start", "end", "category", "severity"]
        again = mqm_span_ratings(pd.read_csv(x / "spans.csv", dtype=str,
                                             keep_default_na=False)[cols])
        key = ["rater", "item", "system", "criterion"]
        both = ratings.astype({"rater": str}).merge(again, on=key, suffixes=("", "_lib"))
        assert len(both) == len(ratings) and set(ratings["criterion"]) >= {
            "MQM", "MQM-Accuracy", "MQM-Fluency"}
        assert np.allclose(both["score"], both["score_lib"])
        ratings = ratings[ratings["criterion"] == "MQM"]
    scores = _scores_file(tmp_path, sorted(ratings["item"].astype(str).unique()), q)
    v = json.loads(_ok(["validate", "--human", str(x / "ratings.csv"), "--scores", str(scores),
                        "--metrics", "none", "--json", "--out", str(tmp_path / "val")]))
    corr = pd.DataFrame(v["correlations"])
    sys_k = corr[(corr["metric"] == "follows") & (corr["level"] == "system")
                 & (corr["coefficient"] == "kendall")
                 & corr["criterion"].isin(["MQM", "ESA", "quality"])]
    assert np.allclose(sys_k["r"], 1.0) and len(sys_k) == 1
    crit = {"mqm": "MQM", "esa": "ESA", "bws": "quality"}[mode]
    cmp = json.loads(_ok(["compare", str(x / "ratings.csv"), "--criterion", crit, "--json"]))
    ranks = cmp["friedman"]["mean_ranks"]
    assert sorted(ranks, key=ranks.get, reverse=True) == best_first


def test_concurrent_sign_ups_beyond_the_per_address_limit(tmp_path: Path) -> None:
    """12 participants at once through the sign-up link (the limit is 10 per address in 10
    minutes): each simulated participant has its own address, so all get a set; the same
    participant ids again are recognised as having finished."""
    d = write_experiment(tmp_path / "crowd", systems=3, items=3, evaluators=12, practice=0,
                         extra=CROWD)
    _ok(["experiment", "create", str(d), "-q"])
    r = simulate_experiment(d, evaluators=12, seed=4, concurrency=4)
    assert (r.evaluators["outcome"] == "finished").all()
    assert r.evaluators["evaluator"].nunique() == 12 and r.requests > 12 * 3
    again = simulate_experiment(d, evaluators=2, seed=4)
    assert again.evaluators["outcome"].tolist() == ["already finished"] * 2
    ratings = pd.read_csv(io.StringIO(_ok(["experiment", "export", str(d)])))
    assert ratings["participant"].nunique() == 12
