"""Attention checks in the error-span modes (MQM, Freitag et al. 2021; ESA, Kocmi et al. 2024):
repeated outputs and degraded copies, as the ESA campaigns run in Appraise use them, compared
on the segment score. Config accepted, check trials inserted and shown with their own text,
simulated spammers and attention-check failers flagged, diligent raters passed, and the
exports carry the outcomes; the verdicts are recomputed here from the exported scores (the
one-sided Wilcoxon p-value by enumerating the signed-rank distribution)."""

from __future__ import annotations

import html
import itertools
import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from experiment_helpers import csrf_of, form_action, write_experiment
from scipy import stats
from typer.testing import CliRunner

from nlgeval.cli import app as cli_app
from nlgeval.errors import InputError
from nlgeval.experiment import create_experiment
from nlgeval.experiment.app import create_app
from nlgeval.experiment.config import load_config
from nlgeval.experiment.config_tables import parse_checks
from nlgeval.experiment.modes import get_mode
from nlgeval.experiment.quality import quality_flags
from nlgeval.experiment.simulate import simulate_experiment

RUN = CliRunner()
CHECKS = "\n[checks]\nrepeats = 2\ndegraded = 6\nspeeder_ms = 0\n"
RANGE = {"esa": 100.0, "mqm": 25.0}  # ESA's 0-100 score; MQM from -25 (Freitag et al.) to 0
SCORE = {"esa": "ESA", "mqm": "MQM"}


def _ok(args: list[str]) -> str:
    r = RUN.invoke(cli_app, args)
    assert r.exit_code == 0, (args, r.output, r.exception)
    return r.stdout


def _study(tmp: Path, mode: str, checks: str = CHECKS) -> Path:
    d = tmp / mode
    _ok(["experiment", "init", str(d), "--mode", mode])
    with open(d / "experiment.toml", "a", encoding="utf-8") as f:
        f.write(checks)
    _ok(["experiment", "create", str(d), "-q", "--evaluators", "6"])
    return d


def _signed_rank_p(d: np.ndarray) -> float:
    """One-sided signed-rank p-value P(W+ >= observed) by enumerating all 2^n sign patterns
    of the ranks of the nonzero differences (zeros dropped, Wilcoxon's way; tied ranks
    averaged): the exact null distribution given the ranks, for the few pairs of a check."""
    d = d[d != 0]
    ranks = stats.rankdata(np.abs(d))
    w = ranks[d > 0].sum()
    tot = [sum(r for r, s in zip(ranks, signs, strict=True) if s)
           for signs in itertools.product((0, 1), repeat=len(d))]
    return float(np.mean(np.array(tot) >= w - 1e-9))


@pytest.mark.parametrize("mode", ["esa", "mqm"])
def test_config_accepts_repeats_and_degraded(tmp_path: Path, mode: str) -> None:
    cfg = load_config(write_experiment(tmp_path / "a", mode=mode, criteria="", extra=CHECKS))
    assert (cfg.checks.repeats, cfg.checks.degraded) == (2, 6)
    assert get_mode(mode).check_kinds == ("repeat", "degraded")
    d = write_experiment(tmp_path / "b", mode=mode, criteria="",
                         extra="[checks]\nknown_answer = 1\n")
    with pytest.raises(InputError, match="triangle") as e:
        load_config(d)
    assert e.value.key == "checks.known_answer"


def test_best_worst_still_refuses_checks() -> None:
    with pytest.raises(InputError, match="support no repeat checks") as e:
        parse_checks({"repeats": 1}, "bws", Path("experiment.toml"))
    assert e.value.key == "checks.repeats"


def test_check_scales(tmp_path: Path) -> None:
    """The ranges the checks scale by: ESA's 0-100, MQM's floor under the study's weights
    (five errors of the largest weight or one Non-translation, Freitag et al. 2021), and the
    criteria's scales in the rating modes (the expression the quality code used before)."""
    esa = load_config(write_experiment(tmp_path / "e", mode="esa", criteria=""))
    assert esa.mode_impl.check_scales(esa) == {"ESA": (0.0, 100.0)}
    mqm = load_config(write_experiment(tmp_path / "m", mode="mqm", criteria=""))
    assert mqm.mode_impl.check_scales(mqm) == {"MQM": (-25.0, 0.0)}
    for k, (weights, floor) in enumerate([("major = 10", -50.0),
                                          ("non_translation = 100", -100.0),
                                          ("major = 2\nminor = 1", -25.0)]):
        c = load_config(write_experiment(tmp_path / f"w{k}", mode="mqm", criteria="",
                                         extra=f"[mqm.weights]\n{weights}\n"))
        assert c.mode_impl.check_scales(c) == {"MQM": (floor, 0.0)}
    for mode in ("absolute", "relative"):
        c = load_config(write_experiment(tmp_path / mode, mode=mode))
        old = {x.name: (x.scale_min, x.scale_max) for x in c.criteria}
        assert c.mode_impl.check_scales(c) == old


def _pairs(ratings: pd.DataFrame, kind: str, crit: str) -> pd.DataFrame:
    """Each check row of ``kind`` beside the score of the output it copies (same rater,
    item and system: every evaluator sees an output once)."""
    r = ratings[ratings["criterion"] == crit]
    main = r[r["qc_check"] == ""].set_index(["rater", "item", "system"])["score"]
    chk = r[r["qc_check"] == kind]
    orig = [main.loc[(a, b, c)] for a, b, c in zip(chk["rater"], chk["item"], chk["system"],
                                                    strict=True)]
    return chk.assign(original=orig)


@pytest.mark.parametrize("mode", ["esa", "mqm"])
def test_simulated_spammers_are_flagged_diligent_raters_pass(tmp_path: Path,
                                                             mode: str) -> None:
    d = _study(tmp_path, mode)
    sim = simulate_experiment(d, evaluators=6, seed=1,
                              behaviour="diligent=4,spammer=1,attention-fail=1")
    assert (sim.evaluators["outcome"] == "finished").all()
    x = tmp_path / "x"
    _ok(["experiment", "export", str(d), "--include-checks", "--out", str(x)])
    flags = pd.read_csv(x / "flags.csv", keep_default_na=False)
    kind = dict(zip(sim.evaluators["evaluator"].astype(int), sim.evaluators["behaviour"],
                    strict=True))
    for f in flags.itertuples():
        assert f.n_checks == 8 and f.n_checks_answered == 8 and f.degraded_pairs == 6
        if kind[f.evaluator] == "diligent":
            assert f.flags == "" and f.verdict == "passed", f
        elif kind[f.evaluator] == "attention-fail":
            assert f.flags == "failed_repeat;failed_degraded" and f.verdict == "failed", f
        else:
            assert f.verdict == "failed" and "failed_" in f.flags, f
    ratings = pd.read_csv(x / "ratings.csv", keep_default_na=False)
    crit = SCORE[mode]
    counts = ratings[ratings["criterion"] == crit].groupby("rater")["qc_check"].value_counts()
    assert (counts.unstack()[["repeat", "degraded"]] == [2, 6]).all().all()
    verdict = ratings.groupby("rater")["qc_passed"].first().astype(str)
    assert {r: v == "True" for r, v in verdict.items()} == {
        e: b == "diligent" for e, b in kind.items()}
    # the degraded verdict recomputed: one-sided signed-rank test on the raw scores (the
    # quality code scales them to [0, 1]: the ranks, and so p, are the same)
    deg = _pairs(ratings, "degraded", crit)
    for rater, g in deg.groupby("rater"):
        diff = (g["original"] - g["score"]).to_numpy(float)
        p = 1.0 if (diff == 0).all() else _signed_rank_p(diff)
        got = flags.set_index("evaluator").loc[rater]
        assert np.isclose(got["degraded_pvalue"], p), (rater, diff)
        assert ("failed_degraded" in got["flags"]) == (not p < 0.05)
    # the repeat verdict recomputed: within 0.25 x the score's range
    rep = _pairs(ratings, "repeat", crit)
    bad = (rep["score"] - rep["original"]).abs() > 0.25 * RANGE[mode] + 1e-9
    failed = bad.groupby(rep["rater"]).any()
    for rater, f in failed.items():
        assert ("failed_repeat" in flags.set_index("evaluator").loc[rater, "flags"]) == f


@pytest.mark.parametrize("mode", ["esa", "mqm"])
def test_degraded_copies_are_marked_on_the_text_shown(tmp_path: Path, mode: str) -> None:
    """A degraded copy's spans are offsets into the copy (which the page showed and the
    server checked them against), and the span export gives that text; the MQM breakdown
    leaves check rows out. Diligent raters mark more (all major) errors on the copies."""
    d = _study(tmp_path, mode)
    simulate_experiment(d, evaluators=6, seed=2)
    x = tmp_path / "x"
    _ok(["experiment", "export", str(d), "--include-checks", "--out", str(x)])
    spans = pd.read_csv(x / "spans.csv", keep_default_na=False, dtype={"start": str,
                                                                       "end": str})
    assert set(spans["qc_check"]) == {"", "repeat", "degraded"}
    original = spans[spans["qc_check"] == ""].groupby(["rater", "item", "system"])[
        "text"].first()
    copies = spans[spans["qc_check"] == "degraded"]
    assert len(copies) > 0
    for r in copies.itertuples():
        assert r.text != original.loc[(r.rater, r.item, r.system)]
        assert sorted(r.text.split()) == sorted(original.loc[(r.rater, r.item, r.system)]
                                                .split()) or r.text.endswith("…")
        if r.start != "":
            assert r.text[int(r.start):int(r.end)] == r.marked
    per = spans[spans["severity"] != ""].groupby(["qc_check", "rater", "position"]).size()
    assert per.loc["degraded"].mean() > per.loc[""].mean()
    if mode == "mqm":
        ratings = pd.read_csv(x / "ratings.csv", keep_default_na=False)
        breakdown = ratings[ratings["criterion"].str.startswith("MQM-")]
        assert len(breakdown) > 0 and (breakdown["qc_check"] == "").all()
        main = ratings[(ratings["criterion"] == "MQM") & (ratings["qc_check"] == "")]
        assert len(breakdown.groupby(["rater", "item", "system"])) <= len(main)
    clean = tmp_path / "clean"
    _ok(["experiment", "export", str(d), "--out", str(clean)])
    plain = pd.read_csv(clean / "spans.csv", keep_default_na=False)
    assert (plain["qc_check"] == "").all() and len(plain) < len(spans)


def _major(text: str, k: int) -> dict:
    """A major error on the ``k``-th word of ``text``."""
    words = [(m.start(), m.end()) for m in re.finditer(r"\S+", text)]
    a, b = words[k]
    return {"start": a, "end": b, "quote": text[a:b], "severity": "major",
            "category": "Accuracy/Mistranslation"}


def _run_set(c, tok: str, first, again) -> int:  # noqa: ANN001
    """Answer every trial of the set: ``first(text)`` for an output seen the first time,
    ``again(text)`` for its repeat (every output's text is its own); the repeats seen."""
    seen: set[str] = set()
    repeats = 0
    page = c.get(f"/e/{tok}").get_data(as_text=True)
    assert c.post(f"/e/{tok}/start", data={"csrf": csrf_of(page)}).status_code == 303
    for _ in range(50):
        page = c.get(f"/e/{tok}").get_data(as_text=True)
        m = re.search(r'class="span-text[^>]*>([^<]*)<', page)
        if m is None:
            return repeats
        text = html.unescape(m.group(1))
        repeats += text in seen
        data = (again if text in seen else first)(text)
        seen.add(text)
        r = c.post(form_action(page), data={"csrf": csrf_of(page), **data})
        assert r.status_code == 303, r.get_data(as_text=True)[:500]
    raise AssertionError("the set never ended")


@pytest.mark.parametrize("mode", ["mqm", "esa"])
def test_repeat_tolerance_on_the_segment_score(tmp_path: Path, mode: str) -> None:
    """Hand-made answers at the tolerance's edge: MQM 25 x 0.25 = 6.25 points (one major
    error of difference passes, two fail); ESA 100 x 0.25 = 25 points (exactly 25 passes,
    26 fails)."""
    d = write_experiment(tmp_path / mode, mode=mode, criteria="", practice=0, evaluators=3,
                         questionnaire=False, extra="[checks]\nrepeats = 1\nspeeder_ms = 0\n")
    made = create_experiment(d)
    app = create_app(d)
    app.testing = True
    c = app.test_client()
    toks = [str(t) for t in made.evaluators["token"]]

    def mqm(n: int):  # noqa: ANN202
        def answer(text: str) -> dict:
            spans = [_major(text, k) for k in range(n)]
            return {"spans": json.dumps(spans), **({} if spans else {"no_errors": "1"})}
        return answer

    def esa(score: int):  # noqa: ANN202
        return lambda text: {"spans": "[]", "c0": str(score), "c0_moved": "1"}

    plans = ([(mqm(1), mqm(2)), (mqm(0), mqm(2)), (mqm(2), mqm(1))] if mode == "mqm" else
             [(esa(50), esa(75)), (esa(50), esa(76)), (esa(80), esa(55))])
    for tok, (first, again) in zip(toks, plans, strict=True):
        assert _run_set(c, tok, first, again) == 1
    ext = app.extensions["nlgeval_experiment"]
    flags = quality_flags(ext["store"], ext["config"]).set_index("evaluator")
    assert flags["flags"].tolist() == ["", "failed_repeat", ""]
    assert flags["verdict"].tolist() == ["passed", "failed", "passed"]
