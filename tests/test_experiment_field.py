"""Running an experiment in the field: remembered settings, robustness, crowd sign-up,
attention checks, speeders, overlap, the researcher dashboard and the interface language."""

from __future__ import annotations

import ast
import io
import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from experiment_helpers import (
    answer_form,
    csrf_of,
    form_action,
    frozen_login_clock,
    inputs,
    spin_until,
    write_experiment,
)
from typer.testing import CliRunner

from nlgeval.cli import app as cli_app
from nlgeval.errors import InputError
from nlgeval.experiment import create_experiment
from nlgeval.experiment.app import create_app
from nlgeval.experiment.checks import degrade_text
from nlgeval.experiment.export import export_ratings, quality_flags
from nlgeval.experiment.storage import Evaluator, Judgement, Output, Store, Trial

CROWD = '''
[crowd]
consent = "You agree that your answers are stored **anonymously**."
completion_code = "C0DE42"
redirect_url = "https://app.prolific.com/submissions/complete?cc={code}"
min_trial_ms = 0
'''


def _store(app) -> Store:  # noqa: ANN001
    return app.extensions["nlgeval_experiment"]["store"]


def _page(c, tok: str) -> str:  # noqa: ANN001
    return c.get(f"/e/{tok}").get_data(as_text=True)


def _start(c, tok: str, **extra: str) -> str:  # noqa: ANN001
    page = _page(c, tok)
    r = c.post(f"/e/{tok}/start", data={"csrf": csrf_of(page), **extra})
    assert r.status_code == 303, r.get_data(as_text=True)[:500]
    return _page(c, tok)


def _finish(c, tok: str, rng: np.random.Generator, choose=None) -> int:  # noqa: ANN001
    """Answer every trial (``choose(page, data)`` may change the answer); returns how many."""
    page = _page(c, tok)
    n = 0
    while "/trial/" in page:
        data = answer_form(page, rng)
        if choose is not None:
            choose(page, data)
        assert c.post(form_action(page), data=data).status_code == 303
        n += 1
        page = _page(c, tok)
    return n


# ------------------------------------------------------------------ 1. remembered settings
def test_create_remembers_database_and_base_url(tmp_path: Path) -> None:
    """`create --database URL --base-url URL` once; `status --json`, `export` and the app then
    use them without the options, and no stray SQLite file is made in the directory."""
    d = write_experiment(tmp_path / "exp", practice=0)
    other = tmp_path / "elsewhere" / "study.db"
    other.parent.mkdir()
    url = f"sqlite:///{other}"
    runner = CliRunner()
    r = runner.invoke(cli_app, ["experiment", "create", str(d), "--database", url,
                                "--base-url", "https://eval.example.org/study/", "--json"])
    assert r.exit_code == 0, r.output
    made = json.loads(r.stdout)
    assert made["researcher_url"].startswith("https://eval.example.org/study/r/")
    assert all(e["url"].startswith("https://eval.example.org/study/e/")
               for e in made["evaluators"])
    assert other.is_file() and not (d / "experiment.db").exists()
    settings = d / ".nlgeval-server.json"
    assert settings.stat().st_mode & 0o077 == 0  # may hold a database password
    r = runner.invoke(cli_app, ["experiment", "status", str(d), "--json"])
    assert r.exit_code == 0, r.output
    st = json.loads(r.stdout)
    assert st["total"] == 18 and st["researcher_url"] == made["researcher_url"]
    assert st["evaluators"][0]["url"] == made["evaluators"][0]["url"]
    # the app finds the remembered database; answering a trial lands there
    app = create_app(d)
    c = app.test_client()
    tok = made["evaluators"][0]["token"]
    page = _start(c, tok)
    assert c.post(form_action(page), data=answer_form(page, np.random.default_rng(0))
                  ).status_code == 303
    assert not (d / "experiment.db").exists()
    out = tmp_path / "r.csv"
    r = runner.invoke(cli_app, ["experiment", "export", str(d), "--out", str(out)])
    assert r.exit_code == 0, r.output
    df = pd.read_csv(out)
    assert len(df) == 2
    for col in ("time_on_task_ms", "speeder", "qc_check", "qc_flags", "qc_passed"):
        assert col in df.columns
    # an explicit option still wins
    r = runner.invoke(cli_app, ["experiment", "status", str(d), "--json",
                                "--base-url", "http://10.0.0.5:9000"])
    assert json.loads(r.stdout)["researcher_url"].startswith("http://10.0.0.5:9000/r/")
    # recreating without --database keeps using the remembered one
    r = runner.invoke(cli_app, ["experiment", "create", str(d), "--json"])
    assert r.exit_code != 0 and "2 judgement(s)" in str(r.exception)


def test_serve_before_create_leaves_no_empty_database(tmp_path: Path) -> None:
    d = write_experiment(tmp_path / "exp")
    with pytest.raises(InputError, match="has not been created yet"):
        create_app(d)
    assert not (d / "experiment.db").exists()
    r = CliRunner().invoke(cli_app, ["experiment", "status", str(d), "--json"])
    assert r.exit_code != 0 and not (d / "experiment.db").exists()


def test_bad_base_url_refused(tmp_path: Path) -> None:
    d = write_experiment(tmp_path / "exp")
    with pytest.raises(InputError, match="base-url"):
        create_experiment(d, base_url="eval.example.org")


def test_time_on_task_is_recorded_server_side(tmp_path: Path) -> None:
    """time_on_task_ms = answered_at - available_at, both server clock; the first trial
    becomes available at Start, each next one when the previous answer is committed."""
    d = write_experiment(tmp_path / "exp", practice=1)
    made = create_experiment(d)
    app = create_app(d)
    c = app.test_client()
    tok = made.evaluators["token"].iloc[0]
    _start(c, tok)
    rng = np.random.default_rng(1)
    page = _page(c, tok)
    data = answer_form(page, rng)
    data.pop("shown")  # a browser that sends no time stamp at all
    assert c.post(form_action(page), data=data).status_code == 303
    _finish(c, tok, rng)
    with _store(app).read() as s:
        trials = s.query(Trial).join(Evaluator).filter(Evaluator.token == tok).order_by(
            Trial.position).all()
        ev = s.query(Evaluator).filter_by(token=tok).one()
    assert trials[0].available_at == ev.started_at
    for a, b in zip(trials, trials[1:], strict=False):
        assert b.available_at == a.answered_at  # the same transaction
    df = export_ratings(_store(app), app.extensions["nlgeval_experiment"]["config"],
                        include_practice=True)
    want = {t.position: int(round((t.answered_at - t.available_at).total_seconds() * 1000))
            for t in trials}
    got = dict(zip(df["position"], df["time_on_task_ms"], strict=True))
    assert got == want
    assert df.loc[df["position"] == 1, "time_ms"].isna().all()  # no stamp: no client time
    assert df["time_on_task_ms"].notna().all()


# ------------------------------------------------------------------ 2. robustness
def test_off_grid_and_malformed_slider_values_are_refused(tmp_path: Path) -> None:
    crit = ('[[criteria]]\nname = "q"\ntool = "vas"\nmin = 0\nmax = 10\nstep = 0.5\n'
            'left_label = "bad"\nright_label = "good"\n')
    d = write_experiment(tmp_path / "exp", practice=0, criteria=crit)
    made = create_experiment(d)
    app = create_app(d)
    c = app.test_client()
    tok = made.evaluators["token"].iloc[0]
    page = _start(c, tok)
    base = {"csrf": csrf_of(page), "c0_moved": "1"}
    action = form_action(page)
    for bad in ("5.25", "50.123456789", "4_0", "1e1", "0x4", "+4", "4.", "-0.5", "10.5",
                "inf", "٣"):
        r = c.post(action, data={**base, "c0": bad})
        assert r.status_code == 400, bad
        assert "Nothing was saved" in r.get_data(as_text=True)
    with _store(app).read() as s:
        assert s.query(Judgement).count() == 0
    # the untouched slider starts on the grid (0..10 step 0.5: the middle, 5)
    (rng_input,) = [a for a in inputs(page) if a.get("type") == "range"]
    assert rng_input["value"] == "5"
    assert c.post(action, data={**base, "c0": "7.5"}).status_code == 303


def test_absurd_ids_404_and_styled_error_pages(tmp_path: Path) -> None:
    d = write_experiment(tmp_path / "exp", practice=0)
    made = create_experiment(d)
    app = create_app(d)
    c = app.test_client()
    tok = made.evaluators["token"].iloc[0]
    page = _start(c, tok)
    data = {"csrf": csrf_of(page)}
    for tid in ("99999999999999999999", "2147483648", "0"):
        r = c.post(f"/e/{tok}/trial/{tid}", data=data)
        assert r.status_code == 404, tid
        assert 'class="error"' in r.get_data(as_text=True)
    assert c.get("/e/" + "x" * 5000).status_code == 404
    # a body over the limit: 413 in the site's own page
    r = c.post(form_action(page), data={"csrf": csrf_of(page), "comment": "x" * 300_000})
    assert r.status_code == 413
    body = r.get_data(as_text=True)
    assert "style.css" in body and "too large" in body.lower()
    r = c.get(form_action(page))  # GET on a POST-only URL
    assert r.status_code == 405 and "style.css" in r.get_data(as_text=True)
    # favicon
    r = c.get("/favicon.ico")
    assert r.status_code == 200 and r.mimetype == "image/svg+xml"
    assert 'rel="icon"' in page


def test_errors_are_linked_to_their_fields(tmp_path: Path) -> None:
    d = write_experiment(tmp_path / "exp", practice=0)
    made = create_experiment(d)
    app = create_app(d)
    c = app.test_client()
    tok = made.evaluators["token"].iloc[0]
    page = _start(c, tok)
    r = c.post(form_action(page), data={"csrf": csrf_of(page), "c0": "4"})
    assert r.status_code == 422
    again = r.get_data(as_text=True)
    slider = [a for a in inputs(again) if a.get("type") == "range"][0]
    assert slider.get("aria-invalid") == "true"
    err_id = slider["aria-describedby"]
    assert re.search(rf'<p class="error" id="{err_id}">[^<]*slider', again)
    radios = [a for a in inputs(again) if a.get("name") == "c0"]
    assert radios and all("aria-invalid" not in a for a in radios)  # answered: not marked


def test_back_after_the_last_page_shows_thanks(tmp_path: Path) -> None:
    d = write_experiment(tmp_path / "exp", practice=0)
    made = create_experiment(d)
    app = create_app(d)
    c = app.test_client()
    tok = made.evaluators["token"].iloc[0]
    _start(c, tok)
    _finish(c, tok, np.random.default_rng(0))
    page = _page(c, tok)
    assert c.post(f"/e/{tok}/questionnaire", data={"csrf": csrf_of(page), "q_native": "yes"}
                  ).status_code == 303
    # every earlier form, re-sent (Back + resubmit), lands on the thank-you page
    r = c.post(f"/e/{tok}/questionnaire", data={"csrf": csrf_of(page), "q_native": "no"},
               follow_redirects=True)
    assert r.status_code == 200 and "Thank you" in r.get_data(as_text=True)
    r = c.post(f"/e/{tok}/start", data={"csrf": csrf_of(page)}, follow_redirects=True)
    assert r.status_code == 200 and "Thank you" in r.get_data(as_text=True)


# ------------------------------------------------------------------ 3. crowd workflow
def _crowd_app(tmp_path: Path, **kw: object):  # noqa: ANN202
    d = write_experiment(tmp_path / "crowd", extra=CROWD, **kw)  # type: ignore[arg-type]
    made = create_experiment(d)
    app = create_app(d)
    jt = _store(app).meta()["join_token"]
    return d, made, app, jt


def test_open_link_hands_out_sets_in_design_order_and_keeps_the_square(tmp_path: Path) -> None:
    d, made, app, jt = _crowd_app(tmp_path, systems=3, items=6, evaluators=6, practice=0)
    got = []
    for k in range(3):
        c = app.test_client()
        page = c.get(f"/join/{jt}?PROLIFIC_PID=p{k}&STUDY_ID=s1&SESSION_ID=x{k}&evil=1"
                     ).get_data(as_text=True)
        assert 'name="evil"' not in page
        r = c.post(f"/join/{jt}", data={"csrf": csrf_of(page), "PROLIFIC_PID": f"p{k}",
                                        "STUDY_ID": "s1", "SESSION_ID": f"x{k}"})
        assert r.status_code == 303
        got.append(r.headers["Location"].rsplit("/", 1)[1])
    assert got == list(made.evaluators["token"].iloc[:3])  # the first block, in order
    # the first block of 3 sets (a complete Latin square) covers every output once
    trials = pd.read_csv(d / "trials.csv", dtype=str)
    first = trials[trials["evaluator"].isin(made.evaluators["evaluator"].iloc[:3])]
    assert not first.duplicated(["system", "item"]).any() and len(first) == 18
    # a returning participant (new browser, same platform session) gets their own set back;
    # the same id without that session id is refused, never given the set (issue 25)
    c = app.test_client()
    page = c.get(f"/join/{jt}?PROLIFIC_PID=p1&SESSION_ID=x1").get_data(as_text=True)
    r = c.post(f"/join/{jt}", data={"csrf": csrf_of(page), "PROLIFIC_PID": "p1",
                                    "SESSION_ID": "x1"})
    assert r.headers["Location"].endswith(got[1])
    c = app.test_client()
    page = c.get(f"/join/{jt}?PROLIFIC_PID=p1").get_data(as_text=True)
    r = c.post(f"/join/{jt}", data={"csrf": csrf_of(page), "PROLIFIC_PID": "p1"})
    assert r.status_code == 409 and got[1] not in r.get_data(as_text=True)
    with _store(app).read() as s:
        ev = s.query(Evaluator).filter_by(token=got[0]).one()
    assert ev.participant == "p0" and ev.params == {"PROLIFIC_PID": "p0", "STUDY_ID": "s1",
                                                    "SESSION_ID": "x0"}
    # a wrong study token is a 404; when every set is taken the study is full
    assert app.test_client().get("/join/nope").status_code == 404
    for k in range(3, 7):
        c = app.test_client()
        page = c.get(f"/join/{jt}").get_data(as_text=True)
        r = c.post(f"/join/{jt}", data={"csrf": csrf_of(page), "PROLIFIC_PID": f"q{k}"})
        assert r.status_code == (303 if k < 6 else 409), k
    assert "full" in r.get_data(as_text=True)


def test_consent_then_completion_code_and_redirect(tmp_path: Path) -> None:
    _d, made, app, jt = _crowd_app(tmp_path, practice=0)
    c = app.test_client()
    page = c.get(f"/join/{jt}?PROLIFIC_PID=abc").get_data(as_text=True)
    r = c.post(f"/join/{jt}", data={"csrf": csrf_of(page), "PROLIFIC_PID": "abc"})
    tok = r.headers["Location"].rsplit("/", 1)[1]
    page = _page(c, tok)
    assert "<strong>anonymously</strong>" in page
    r = c.post(f"/e/{tok}/start", data={"csrf": csrf_of(page)})  # consent not ticked
    assert r.status_code == 422 and 'aria-invalid="true"' in r.get_data(as_text=True)
    _start(c, tok, consent="1")
    _finish(c, tok, np.random.default_rng(0))
    page = _page(c, tok)
    c.post(f"/e/{tok}/questionnaire", data={"csrf": csrf_of(page), "q_native": "yes"})
    thanks = _page(c, tok)
    assert "C0DE42" in thanks
    assert "https://app.prolific.com/submissions/complete?cc=C0DE42" in thanks
    with _store(app).read() as s:
        ev = s.query(Evaluator).filter_by(token=tok).one()
    assert ev.consent_at is not None and ev.consent_at == ev.started_at


def test_degrade_text_always_differs() -> None:
    rng = np.random.default_rng(0)
    for t in ("a b c d e", "one two", "x", "Rain spreading from the west."):
        out = degrade_text(t, rng)
        assert out != t and out
        if len(t.split()) >= 3:
            assert sorted(out.split()) == sorted(t.split())


CHECKS = '''
[checks]
repeats = 1
degraded = 1
speeder_ms = 60000
repeat_tolerance = 0.25
'''


def test_attention_checks_placed_scored_and_exported(tmp_path: Path) -> None:
    """Per set: 1 repeat after its original, 1 degraded copy; the main trials (Latin square)
    are untouched. An attentive evaluator passes; one who rates at random where it matters
    fails each check kind; everyone answering in under a minute is a speeder here."""
    d = write_experiment(tmp_path / "qc", systems=3, items=6, evaluators=3, practice=1,
                         extra=CHECKS)
    made = create_experiment(d)
    assert (made.evaluators["n_checks"] == 2).all()
    trials = pd.read_csv(d / "trials.csv", dtype=str)
    main = trials[(trials["practice"] == "False") & trials["qc_kind"].isna()]
    assert len(main) == 18 and not main.duplicated(["system", "item"]).any()
    for ev, sub in trials.groupby("evaluator"):
        pos = sub["position"].astype(int).tolist()
        assert sorted(pos) == list(range(1, len(pos) + 1)), ev
        for r in sub[sub["qc_kind"].notna()].itertuples():
            of = json.loads(r.details)["of_position"]
            orig = sub[sub["position"].astype(int) == of].iloc[0]
            assert pd.isna(orig["qc_kind"]) and int(r.position) > of
            assert (orig["system"], orig["item"]) == (r.system, r.item)
    app = create_app(d)
    cfg = app.extensions["nlgeval_experiment"]["config"]
    toks = list(made.evaluators["token"])
    answers: dict[tuple[str, str, str], dict[str, str]] = {}  # (evaluator, sys, item) -> form

    def attentive(tok: str):  # noqa: ANN202
        def choose(page: str, data: dict[str, str]) -> None:
            m = re.search(r"Output of (S\d) for (\w+)\.", page)
            if m is None:  # a degraded copy (words shuffled): rate it at the bottom
                data.update(c0="1", c1="0")
                return
            key = (tok, m.group(1), m.group(2))
            if key in answers:  # the repeat: answer as before
                data.update(c0=answers[key]["c0"], c1=answers[key]["c1"])
            else:
                data.update(c0="4", c1=str(60 + len(answers) % 30))
                answers[key] = dict(data)
        return choose

    def careless(page: str, data: dict[str, str]) -> None:
        m = re.search(r"Output of (S\d) for (\w+)\.", page)
        if m is None:
            data.update(c0="5", c1="100")  # degraded text rated top
        elif (m.group(1), m.group(2)) in seen:
            data.update(c0="1", c1="0")  # the repeat contradicts the first answer
        else:
            seen.add((m.group(1), m.group(2)))
            data.update(c0="5", c1="100")
    seen: set[tuple[str, str]] = set()

    for tok, how in ((toks[0], attentive(toks[0])), (toks[1], careless)):
        c = app.test_client()
        _start(c, tok)
        assert _finish(c, tok, np.random.default_rng(3), how) == 1 + 6 + 2
    flags = quality_flags(_store(app), cfg).set_index("evaluator")
    e0, e1, e2 = made.evaluators["evaluator"]
    assert flags.loc[e0, "n_checks_answered"] == 2 and flags.loc[e0, "n_failed"] == 0
    assert flags.loc[e0, "flags"] == "speeder"  # answered in well under speeder_ms
    assert set(flags.loc[e1, "failed"].split(";")) == {"repeat", "degraded"}
    assert flags.loc[e1, "flags"] == "failed_repeat;failed_degraded;speeder"
    assert flags.loc[e2, "n_checks_answered"] == 0 and flags.loc[e2, "flags"] == ""
    df = export_ratings(_store(app), cfg)
    assert len(df) == 2 * 6 * 2 and (df["qc_check"] == "").all()  # checks left out
    assert set(df.loc[df["rater"] == e1, "qc_flags"]) == {
        "failed_repeat;failed_degraded;speeder"}
    assert not df.loc[df["rater"] == e1, "qc_passed"].any()
    assert df["speeder"].all()
    full = export_ratings(_store(app), cfg, include_checks=True)
    assert set(full["qc_check"]) == {"", "repeat", "degraded"}
    assert len(full) == 2 * 8 * 2


def test_relative_degraded_check_wants_the_original_preferred(tmp_path: Path) -> None:
    d = write_experiment(tmp_path / "rel", mode="relative", systems=3, items=6, evaluators=3,
                         practice=0, extra="[checks]\ndegraded = 1\nspeeder_ms = 0\n")
    made = create_experiment(d)
    app = create_app(d)
    cfg = app.extensions["nlgeval_experiment"]["config"]

    def prefer(side: str):  # noqa: ANN202
        def choose(page: str, data: dict[str, str]) -> None:
            texts = re.findall(r'<div class="text" dir="auto">([^<]*)</div>', page)[-2:]
            real = [bool(re.fullmatch(r"Output of S\d for \w+\.", t)) for t in texts]
            if all(real):
                return
            orig_left = real[0]
            # prefer the original (side="orig") or the degraded copy (side="deg")
            left = orig_left if side == "orig" else not orig_left
            data.update(c0="-40" if left else "40", c1="-2" if left else "2")
        return choose

    for tok, side in zip(made.evaluators["token"][:2], ("orig", "deg"), strict=True):
        c = app.test_client()
        _start(c, tok)
        _finish(c, tok, np.random.default_rng(0), prefer(side))
    flags = quality_flags(_store(app), cfg).set_index("evaluator")
    e0, e1, _e2 = made.evaluators["evaluator"]
    assert flags.loc[e0, "flags"] == "" and flags.loc[e0, "n_checks_answered"] == 1
    assert flags.loc[e1, "flags"] == "failed_degraded"


def test_known_answer_triangle_trials(tmp_path: Path) -> None:
    from nlgeval.experiment.example import write_example

    d = write_example(tmp_path / "tri", "triangle")
    cfg_text = (d / "experiment.toml").read_text()
    (d / "experiment.toml").write_text(
        cfg_text.replace("[triangle]", "[checks]\nknown_answer = 1\nspeeder_ms = 0\n\n[triangle]"))
    made = create_experiment(d)
    app = create_app(d)
    cfg = app.extensions["nlgeval_experiment"]["config"]
    with _store(app).read() as s:
        checks = s.query(Trial).filter(Trial.qc_kind == "known_answer").all()
        texts = {(o.system, o.item): o.text for o in s.query(Output)}
    assert len(checks) == len(made.evaluators)
    for t in checks:  # two copies of one text and a different one, at odd_position
        d3 = t.details
        shown = [texts[(s, i)] for s, i in zip(d3["sources"], d3["items"], strict=True)]
        odd = d3["odd_position"] - 1
        assert len(set(shown)) == 2 and shown.count(shown[odd]) == 1
    ev_of = {e: tok for e, tok in zip(made.evaluators["evaluator"], made.evaluators["token"],
                                      strict=True)}
    odd_of = {t.id: t.details["odd_position"] for t in checks}
    for k, (_ev, tok) in enumerate(list(ev_of.items())[:2]):
        c = app.test_client()
        _start(c, tok)

        def choose(page: str, data: dict[str, str], k: int = k) -> None:
            tid = int(form_action(page).rsplit("/", 1)[1])
            if tid in odd_of:
                right = odd_of[tid]
                data["odd"] = str(right if k == 0 else right % 3 + 1)
            else:
                data["odd"] = "1"
        _finish(c, tok, np.random.default_rng(0), choose)
    flags = quality_flags(_store(app), cfg).set_index("evaluator")
    e0, e1 = list(ev_of)[:2]
    assert flags.loc[e0, "flags"] == "" and flags.loc[e1, "flags"] == "failed_known_answer"
    df = export_ratings(_store(app), cfg)
    assert (df["qc_check"] == "").all() and df["test"].ne("known_answer").all()


def test_overlap_sets_evaluators_per_output(tmp_path: Path) -> None:
    d = write_experiment(tmp_path / "ov", systems=3, items=6, evaluators=6, practice=0)
    cfg = (d / "experiment.toml").read_text().replace("evaluators = 6", "overlap = 2")
    (d / "experiment.toml").write_text(cfg)
    made = create_experiment(d)
    assert len(made.evaluators) == 6
    trials = pd.read_csv(d / "trials.csv", dtype=str)
    per_output = trials.groupby(["system", "item"]).size()
    assert len(per_output) == 18 and (per_output == 2).all()
    (d / "experiment.toml").write_text("evaluators = 9\n" + cfg)
    with pytest.raises(InputError, match="overlap = 2 means 6 evaluators"):
        create_experiment(d, force=True)


def test_bad_crowd_and_checks_config(tmp_path: Path) -> None:
    d = write_experiment(tmp_path / "b", extra='[crowd]\nredirect_url = "javascript:alert(1)"')
    with pytest.raises(InputError, match="redirect_url"):
        create_experiment(d)
    d = write_experiment(tmp_path / "c", extra="[checks]\nknown_answer = 1")
    with pytest.raises(InputError, match="known-answer trials are triangle trials"):
        create_experiment(d)
    d = write_experiment(tmp_path / "e", extra="[checks]\nrepeat = 1")
    with pytest.raises(InputError, match="did you mean 'repeats'"):
        create_experiment(d)


# ------------------------------------------------------------------ 4. dashboard
def test_dashboard_login_flags_comments_reset(tmp_path: Path) -> None:
    d = write_experiment(tmp_path / "dash", practice=0, extra=CROWD + CHECKS)
    made = create_experiment(d)
    runner = CliRunner()
    r = runner.invoke(cli_app, ["experiment", "password", str(d), "--password-stdin"],
                      input="short\n")
    assert r.exit_code != 0  # too short
    r = runner.invoke(cli_app, ["experiment", "password", str(d), "--password-stdin"],
                      input="correct horse battery\n")
    assert r.exit_code == 0, r.output
    store = Store(f"sqlite:///{d / 'experiment.db'}")
    try:
        h = store.meta()["researcher_password"]
    finally:
        store.dispose()
    assert "correct horse" not in h and h.startswith("scrypt:")
    app = create_app(d)
    c = app.test_client()
    assert c.get("/dashboard").status_code == 303  # to the log-in page
    assert c.get("/dashboard/ratings.csv").status_code == 303
    page = c.get("/login").get_data(as_text=True)
    r = c.post("/login", data={"csrf": csrf_of(page), "password": "wrong"})
    assert r.status_code == 401
    assert c.post("/login", data={"password": "correct horse battery"}).status_code == 400
    r = c.post("/login", data={"csrf": csrf_of(page), "password": "correct horse battery"})
    assert r.status_code == 303 and r.headers["Location"].endswith("/dashboard")
    # an evaluator does some trials, with a comment
    tok = made.evaluators["token"].iloc[0]
    ev = app.test_client()
    page = _start(ev, tok, consent="1")
    data = answer_form(page, np.random.default_rng(0)) | {"comment": "<b>typo</b> in text"}
    assert ev.post(form_action(page), data=data).status_code == 303
    view = c.get("/dashboard").get_data(as_text=True)
    assert "Researcher dashboard" in view and "&lt;b&gt;typo&lt;/b&gt; in text" in view
    assert "/join/" in view and "speeder" in view
    csv = c.get("/dashboard/ratings.csv").get_data(as_text=True)
    assert len(pd.read_csv(io.StringIO(csv))) == 2
    flags_csv = pd.read_csv(io.StringIO(c.get("/dashboard/flags.csv").get_data(as_text=True)))
    assert list(flags_csv.columns[:3]) == ["evaluator", "participant", "n_trials"]
    # reset: needs the confirm box; then the judgements are gone and the link changes
    with _store(app).read() as s:
        ev_id = s.query(Evaluator).filter_by(token=tok).one().id
    csrf = csrf_of(view)
    assert c.post(f"/dashboard/evaluator/{ev_id}/reset", data={"csrf": csrf}).status_code == 400
    r = c.post(f"/dashboard/evaluator/{ev_id}/reset", data={"csrf": csrf, "confirm": "1"})
    assert r.status_code == 303
    assert ev.get(f"/e/{tok}").status_code == 404
    with _store(app).read() as s:
        assert s.query(Judgement).count() == 0
        e = s.get(Evaluator, ev_id)
        assert e.started_at is None and e.claimed_at is None
    # another browser without the session cannot reset
    assert app.test_client().post(f"/dashboard/evaluator/{ev_id}/reset",
                                  data={"csrf": csrf, "confirm": "1"}).status_code == 303
    # log out ends the session
    c.post("/logout", data={"csrf": csrf})
    assert c.get("/dashboard").status_code == 303


def test_login_is_throttled(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # the throttle's clock is the test's: on a loaded machine checking a password took longer
    # than the 1 s back-off, so the sixth attempt came after it and was looked at (401)
    clock = frozen_login_clock(monkeypatch)
    d = write_experiment(tmp_path / "t", practice=0)
    create_experiment(d)
    CliRunner().invoke(cli_app, ["experiment", "password", str(d), "--password-stdin"],
                       input="correct horse battery\n")
    app = create_app(d)
    c = app.test_client()
    csrf = csrf_of(c.get("/login").get_data(as_text=True))
    codes = [c.post("/login", data={"csrf": csrf, "password": f"guess{k}"}).status_code
             for k in range(7)]
    assert codes == [401] * 5 + [429] * 2
    # even the right password waits out the back-off ...
    assert c.post("/login", data={"csrf": csrf, "password": "correct horse battery"}
                  ).status_code == 429
    clock[0] += 1.01  # ... and gets in once it has passed
    assert c.post("/login", data={"csrf": csrf, "password": "correct horse battery"}
                  ).status_code == 303


# ------------------------------------------------------------------ 5. interface language
def test_german_interface_and_right_to_left_texts(tmp_path: Path) -> None:
    from nlgeval.experiment.i18n import CATALOGUES, missing

    arabic = "الطقس غائم في الشمال"
    d = write_experiment(tmp_path / "de", practice=1, extra='language = "de"',
                         text_of={("S1", "p1"): arabic, ("S2", "p1"): arabic,
                                  ("S3", "p1"): arabic})
    made = create_experiment(d)
    app = create_app(d)
    c = app.test_client()
    tok = made.evaluators["token"].iloc[0]
    page = _page(c, tok)
    assert '<html lang="de" dir="ltr">' in page
    assert "1 Übungsaufgabe" in page and "6 Aufgaben" in page and ">Starten<" in page
    page = _start(c, tok)
    assert "Übungsaufgabe 1 von 1" in page and ">Weiter<" in page
    assert f'<div class="text" dir="auto">{arabic}</div>' in page
    r = c.post(form_action(page), data={"csrf": csrf_of(page)})
    assert "Bitte wählen Sie eine Bewertung für „Qualität“." in r.get_data(as_text=True)
    assert c.get("/nope").get_data(as_text=True).count("Nicht gefunden") == 1
    # every message id used in the templates and views has a German entry
    root = Path(__file__).resolve().parents[1] / "nlgeval" / "experiment"
    ids: set[str] = set()
    for f in (root / "templates").rglob("*.html"):
        text = f.read_text(encoding="utf-8")
        ids |= set(re.findall(r'\b_\("([^"]*)"', text))
        ids |= {s for pair in re.findall(r'ngettext\("([^"]*)", "([^"]*)"', text) for s in pair}
    for f in ("evaluator.py", "app.py", "loaded.py"):  # x._("..." "...") in Python: read with ast
        tree = ast.parse((root / f).read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if (isinstance(node, ast.Call) and getattr(node.func, "attr",
                                                       getattr(node.func, "id", "")) == "_"
                    and node.args and isinstance(node.args[0], ast.Constant)):
                ids.add(node.args[0].value)
    assert len(ids) > 30
    assert missing("de", sorted(ids)) == []
    assert set(CATALOGUES) >= {"en", "de"}


def test_rtl_language_sets_page_direction() -> None:
    from nlgeval.experiment.i18n import text_direction

    assert text_direction("ar") == "rtl" and text_direction("he") == "rtl"
    assert text_direction("de") == "ltr"


# ------------------------------------------------------------------ 6. group commit
def test_group_commit_batches_concurrent_writers_and_isolates_failures(tmp_path: Path) -> None:
    """Jobs queued while a transaction holds SQLite's write lock are committed together in
    the next one; each caller gets its own result (or its own exception) after the commit."""
    import threading

    from sqlalchemy import text

    store = Store(f"sqlite:///{tmp_path / 'g.db'}")
    try:
        with store.write() as s:
            s.execute(text("CREATE TABLE t (k INTEGER PRIMARY KEY)"))
        gate = threading.Event()

        def slow_first(s) -> int:  # noqa: ANN001
            gate.wait(60)  # hold the write lock until the others have queued (set then)
            s.execute(text("INSERT INTO t VALUES (0)"))
            return 0

        def job(k: int):  # noqa: ANN202
            def fn(s) -> int:  # noqa: ANN001
                s.execute(text("INSERT INTO t VALUES (:k)"), {"k": k if k != 5 else 1})
                return k
            return fn

        results: dict[int, object] = {}

        def call(k: int) -> None:
            try:
                results[k] = store.commit(slow_first if k == 0 else job(k))
            except Exception as exc:  # the duplicate key of job 5
                results[k] = type(exc).__name__

        first = threading.Thread(target=call, args=(0,))
        first.start()
        spin_until(store._lock.locked, "job 0 holds the write lock")  # type: ignore[union-attr]
        others = [threading.Thread(target=call, args=(k,)) for k in range(1, 9)]
        for t in others:
            t.start()
        spin_until(lambda: store._jobs.qsize() >= 8, "jobs 1..8 have queued")
        gate.set()
        for t in [first, *others]:
            t.join(60)
        assert results == {0: 0, 1: 1, 2: 2, 3: 3, 4: 4, 5: "IntegrityError", 6: 6, 7: 7, 8: 8}
        with store.read() as s:
            assert sorted(r[0] for r in s.execute(text("SELECT k FROM t"))) == [0, 1, 2, 3, 4, 6,
                                                                                7, 8]
        # job 0 alone, then 1..8 tried together (failed on job 5), so re-run one by one
        assert store.batches == 1 and store.batched_jobs == 1
    finally:
        store.dispose()


def test_group_commit_counts_a_shared_transaction(tmp_path: Path) -> None:
    import threading

    from sqlalchemy import text

    store = Store(f"sqlite:///{tmp_path / 'h.db'}")
    try:
        with store.write() as s:
            s.execute(text("CREATE TABLE t (k INTEGER PRIMARY KEY)"))
        gate = threading.Event()
        ths = [threading.Thread(target=store.commit, args=(
            (lambda s, k=k: (gate.wait(60) if k == 0 else None,
                             s.execute(text("INSERT INTO t VALUES (:k)"), {"k": k}))),))
            for k in range(6)]
        ths[0].start()
        spin_until(store._lock.locked, "job 0 holds the write lock")  # type: ignore[union-attr]
        for t in ths[1:]:
            t.start()
        spin_until(lambda: store._jobs.qsize() >= 5, "jobs 1..5 have queued")
        gate.set()
        for t in ths:
            t.join(60)
        assert store.batches == 2 and store.batched_jobs == 6  # 1, then the 5 queued at once
        with store.read() as s:
            assert s.execute(text("SELECT count(*) FROM t")).scalar() == 6
    finally:
        store.dispose()
