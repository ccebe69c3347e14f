"""Crowd studies that cannot be gamed (issue 25): participant identity, capacity, researcher
sessions, secret files, completion codes, the log-in back-off and links from the base URL.
Each test failed on the code before the fix."""

from __future__ import annotations

import json
import re
import stat
from datetime import timedelta
from pathlib import Path

import numpy as np
import pytest
from experiment_helpers import (
    answer_form,
    csrf_of,
    form_action,
    frozen_login_clock,
    write_experiment,
)
from sqlalchemy import update
from typer.testing import CliRunner
from werkzeug.security import generate_password_hash

from nlgeval.cli import app as cli_app
from nlgeval.experiment import create_experiment
from nlgeval.experiment.app import create_app
from nlgeval.experiment.export import export_ratings
from nlgeval.experiment.participants import code_subject, completion_code
from nlgeval.experiment.researcher import PASSWORD_KEY
from nlgeval.experiment.researcher_auth import set_password
from nlgeval.experiment.settings import SECRET_NAME, secret_key
from nlgeval.experiment.storage import Evaluator, Judgement, Store, Trial, utcnow

PASSWORD = "correct horse battery"


def _crowd(tmp_path: Path, extra: str = "", **kw: object):  # noqa: ANN202
    d = write_experiment(tmp_path / "crowd", extra="[crowd]\n" + extra, practice=0,
                         **kw)  # type: ignore[arg-type]
    create_experiment(d)
    app = create_app(d)
    store: Store = app.extensions["nlgeval_experiment"]["store"]
    return d, app, store, store.meta()["join_token"]


def _join(c, jt: str, **params: str):  # noqa: ANN001, ANN202
    """GET the sign-up page with ``params`` in the URL, then POST its form."""
    query = "&".join(f"{k}={v}" for k, v in params.items())
    page = c.get(f"/join/{jt}?{query}")
    if page.status_code != 200:
        return page
    return c.post(f"/join/{jt}", data={"csrf": csrf_of(page.get_data(as_text=True)),
                                       **params})


def _token(r) -> str:  # noqa: ANN001
    assert r.status_code == 303, r.get_data(as_text=True)[:300]
    return r.headers["Location"].rsplit("/", 1)[1]


def _finish(c, tok: str, rng: np.random.Generator) -> str:  # noqa: ANN001
    """Start, answer every trial and the questionnaire; returns every page seen before the
    thank-you page, joined."""
    seen = [c.get(f"/e/{tok}").get_data(as_text=True)]
    assert c.post(f"/e/{tok}/start", data={"csrf": csrf_of(seen[0])}).status_code == 303
    page = c.get(f"/e/{tok}").get_data(as_text=True)
    while "/trial/" in page:
        seen.append(page)
        assert c.post(form_action(page), data=answer_form(page, rng)).status_code == 303
        page = c.get(f"/e/{tok}").get_data(as_text=True)
    seen.append(page)
    c.post(f"/e/{tok}/questionnaire", data={"csrf": csrf_of(page), "q_native": "yes"})
    return "\n".join(seen)


# ------------------------------------------------------------------ 1. identity
def test_a_known_platform_id_from_another_browser_never_gets_the_set(tmp_path: Path) -> None:
    _d, app, store, jt = _crowd(tmp_path)
    first = app.test_client()
    tok = _token(_join(first, jt, PROLIFIC_PID="p1", STUDY_ID="st", SESSION_ID="se1"))
    # another browser, same id, no cookie (and no or another platform session): refused
    for params in ({"PROLIFIC_PID": "p1"}, {"PROLIFIC_PID": "p1", "SESSION_ID": "other"}):
        r = _join(app.test_client(), jt, **params)
        assert r.status_code == 409 and tok not in r.get_data(as_text=True)
        assert "Location" not in r.headers
    # the first browser (its signed cookie) comes back to its set, with or without the id
    assert first.get(f"/join/{jt}").headers["Location"].endswith(tok)
    assert _token(_join(first, jt, PROLIFIC_PID="p1")) == tok
    # the same platform session (Prolific reopened in a new browser) is recognised
    assert _token(_join(app.test_client(), jt, PROLIFIC_PID="p1", SESSION_ID="se1")) == tok
    with store.read() as s:
        assert s.query(Evaluator).filter(Evaluator.claimed_at.is_not(None)).count() == 1


# ------------------------------------------------------------------ 2. no shared ids
def test_missing_or_malformed_participant_id_is_never_a_shared_id(tmp_path: Path) -> None:
    _d, app, store, jt = _crowd(tmp_path)
    # platform parameters without a (valid) participant id: refused, nothing handed out
    for params in ({"STUDY_ID": "st", "SESSION_ID": "se"}, {"PROLIFIC_PID": "<p1>"},
                   {"PROLIFIC_PID": "a b", "STUDY_ID": "st"}):
        r = _join(app.test_client(), jt, **params)
        assert r.status_code == 400 and "participant id" in r.get_data(as_text=True), params
    # a plain open link (no platform): everyone gets an anonymous id and a set of their own
    toks = [_token(_join(app.test_client(), jt)) for _ in range(2)]
    assert toks[0] != toks[1]
    with store.read() as s:
        who = [e.participant for e in s.query(Evaluator).filter(
            Evaluator.claimed_at.is_not(None))]
    assert len(who) == 2 and len(set(who)) == 2 and all(p.startswith("anon-") for p in who)
    assert "st" not in who


def test_anonymous_participants_can_be_switched_off(tmp_path: Path) -> None:
    _d, app, _store, jt = _crowd(tmp_path, "anonymous = false\n")
    assert _join(app.test_client(), jt).status_code == 400


# ------------------------------------------------------------------ 3. capacity
def test_an_idle_lease_returns_the_set_and_keeps_its_answers(tmp_path: Path) -> None:
    d, app, store, jt = _crowd(tmp_path, "lease_minutes = 30\njoin_limit = 0\n")
    c1 = app.test_client()
    tok1 = _token(_join(c1, jt, PROLIFIC_PID="p1"))
    page = c1.get(f"/e/{tok1}").get_data(as_text=True)
    c1.post(f"/e/{tok1}/start", data={"csrf": csrf_of(page)})
    page = c1.get(f"/e/{tok1}").get_data(as_text=True)
    assert c1.post(form_action(page), data=answer_form(page, np.random.default_rng(0))
                   ).status_code == 303
    _token(_join(app.test_client(), jt, PROLIFIC_PID="p2"))
    _token(_join(app.test_client(), jt, PROLIFIC_PID="p3"))
    assert _join(app.test_client(), jt, PROLIFIC_PID="p4").status_code == 409  # full
    # p1 made no progress for 31 minutes (p2 and p3 neither, but p3 did a minute ago)
    old = utcnow() - timedelta(minutes=31)
    with store.write() as s:
        s.execute(update(Evaluator).where(Evaluator.participant.in_(["p1", "p2"]))
                  .values(claimed_at=old, started_at=old))
        s.execute(update(Trial).where(Trial.answered_at.is_not(None)).values(answered_at=old))
    new = _token(_join(app.test_client(), jt, PROLIFIC_PID="p4"))
    assert new != tok1 and c1.get(f"/e/{tok1}").status_code == 404  # the old link is gone
    _token(_join(app.test_client(), jt, PROLIFIC_PID="p5"))  # p2's set, also expired
    assert _join(app.test_client(), jt, PROLIFIC_PID="p6").status_code == 409  # p3's kept
    with store.read() as s:
        kept = s.query(Evaluator).filter(Evaluator.released_at.is_not(None)).all()
        assert sorted(e.participant for e in kept) == ["p1", "p2"]
        ev1 = next(e for e in kept if e.participant == "p1")
        n_kept = (s.query(Judgement).join(Trial).filter(Trial.evaluator_id == ev1.id).count())
        again = s.query(Evaluator).filter_by(token=new).one()
        assert again.name == "1" and again.participant == "p4"
        assert s.query(Trial).filter(Trial.evaluator_id == again.id,
                                     Trial.answered_at.is_not(None)).count() == 0
    assert n_kept == 2  # one trial, two criteria: kept, on the released copy
    ratings = export_ratings(store, create_app(d).extensions["nlgeval_experiment"]["config"])
    assert set(ratings["rater"]) == {"1~released"}


def test_join_limit_per_client_address(tmp_path: Path) -> None:
    _d, app, _store, jt = _crowd(tmp_path, "join_limit = 2\n")
    got = [_join(app.test_client(), jt, PROLIFIC_PID=f"p{k}").status_code for k in range(3)]
    assert got == [303, 303, 429]
    other = app.test_client()
    other.environ_base["REMOTE_ADDR"] = "10.1.2.3"
    assert _join(other, jt, PROLIFIC_PID="p9").status_code == 303


def test_study_full_sends_the_configured_code_or_redirect(tmp_path: Path) -> None:
    _d, app, _store, jt = _crowd(tmp_path, 'full_code = "NOPLACES"\njoin_limit = 0\n',
                                 evaluators=3)
    for k in range(3):
        _token(_join(app.test_client(), jt, PROLIFIC_PID=f"p{k}"))
    r = _join(app.test_client(), jt, PROLIFIC_PID="late")
    assert r.status_code == 409 and 'id="full-code">NOPLACES<' in r.get_data(as_text=True)
    _d2, app2, _s2, jt2 = _crowd(tmp_path / "b", 'full_code = "NP1"\njoin_limit = 0\n'
                                 'full_redirect_url = "https://app.prolific.com/x?cc={code}"\n')
    for k in range(3):
        _token(_join(app2.test_client(), jt2, PROLIFIC_PID=f"p{k}"))
    r = _join(app2.test_client(), jt2, PROLIFIC_PID="late")
    assert r.status_code == 303 and r.headers["Location"] == "https://app.prolific.com/x?cc=NP1"


# ------------------------------------------------------------------ 4. researcher sessions
def _logged_in_client(app):  # noqa: ANN001, ANN202
    c = app.test_client()
    csrf = csrf_of(c.get("/login").get_data(as_text=True))
    assert c.post("/login", data={"csrf": csrf, "password": PASSWORD}).status_code == 303
    assert c.get("/dashboard").status_code == 200
    return c, c.get_cookie("nlgeval_session").value


def test_logout_and_a_new_password_end_the_session_server_side(tmp_path: Path) -> None:
    d = write_experiment(tmp_path / "s", practice=0)
    create_experiment(d)
    app = create_app(d)
    store = app.extensions["nlgeval_experiment"]["store"]
    set_password(store, generate_password_hash(PASSWORD, "pbkdf2:sha256:1"))
    c, captured = _logged_in_client(app)
    page = c.get("/dashboard").get_data(as_text=True)
    assert c.post("/logout", data={"csrf": csrf_of(page)}).status_code == 303
    thief = app.test_client()
    thief.set_cookie("nlgeval_session", captured)
    assert thief.get("/dashboard").status_code == 303
    assert thief.get("/dashboard/ratings.csv").status_code == 303
    # a new password ends every session
    c, captured = _logged_in_client(app)
    set_password(store, store.meta()[PASSWORD_KEY])  # even the same hash: sessions end
    assert c.get("/dashboard").status_code == 303


# ------------------------------------------------------------------ 5. secret files
def test_database_and_key_are_owner_only_and_the_key_is_not_in_the_database(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    d = write_experiment(tmp_path / "p", practice=0)
    create_experiment(d)
    for name in ("experiment.db", SECRET_NAME):
        assert stat.S_IMODE((d / name).stat().st_mode) == 0o600, name
    app = create_app(d)
    store = app.extensions["nlgeval_experiment"]["store"]
    assert "secret_key" not in store.meta()
    key = secret_key(d)
    assert app.config["SECRET_KEY"] == key.encode()
    for f in d.glob("experiment.db*"):
        assert key.encode() not in f.read_bytes()
        assert stat.S_IMODE(f.stat().st_mode) & 0o077 == 0, f
    # serve warns about a database others can read
    from nlgeval.experiment.server import announce_links

    (d / "experiment.db").chmod(0o644)
    lines: list[str] = []
    announce_links(app, lines.append)
    assert any(line.startswith("warning:") and "experiment.db" in line and "chmod 600" in line
               for line in lines)


def test_an_older_database_key_is_moved_out(tmp_path: Path) -> None:
    d = write_experiment(tmp_path / "o", practice=0)
    create_experiment(d)
    (d / SECRET_NAME).unlink()
    Store(f"sqlite:///{d / 'experiment.db'}").set_meta("secret_key", "old" * 20)
    app = create_app(d)
    assert "secret_key" not in app.extensions["nlgeval_experiment"]["store"].meta()
    assert app.config["SECRET_KEY"] != b"old" * 20
    assert stat.S_IMODE((d / SECRET_NAME).stat().st_mode) == 0o600


# ------------------------------------------------------------------ 6. completion codes
def test_per_participant_codes_after_the_last_page_and_too_fast_is_held(
        tmp_path: Path) -> None:
    d, app, store, jt = _crowd(tmp_path, "participant_codes = true\n"
                                         'completion_code = "STUDYWIDE"\njoin_limit = 0\n'
                                         'redirect_url = "https://x.example/done?cc={code}"\n')
    rng = np.random.default_rng(1)
    c = app.test_client()
    tok = _token(_join(c, jt, PROLIFIC_PID="p1"))
    before = _finish(c, tok, rng)
    thanks = c.get(f"/e/{tok}").get_data(as_text=True)
    # answered in milliseconds by the test client: flagged, no code
    assert 'id="code-held"' in thanks and "completion-code" not in thanks
    code = completion_code(secret_key(d).encode(), code_subject("p1", "1"))
    assert code not in thanks
    r = CliRunner().invoke(cli_app, ["experiment", "status", str(d), "--json"])
    assert json.loads(r.stdout)["completion_codes"] == [  # for the researcher, after review
        {"evaluator": "1", "participant": "p1", "code": code, "too_fast": True}]
    # a plausible pace: the participant's own code, shown only on the last page
    with store.write() as s:
        s.execute(update(Evaluator).where(Evaluator.token == tok)
                  .values(started_at=utcnow() - timedelta(minutes=5)))
    thanks = c.get(f"/e/{tok}").get_data(as_text=True)
    assert re.search(rf'id="completion-code">{code}<', thanks)
    assert f"https://x.example/done?cc={code}" in thanks
    assert code not in before and "STUDYWIDE" not in before + thanks
    r = CliRunner().invoke(cli_app, ["experiment", "status", str(d), "--json"])
    assert r.exit_code == 0, r.output
    codes = json.loads(r.stdout)["completion_codes"]
    assert codes == [{"evaluator": "1", "participant": "p1", "code": code, "too_fast": False}]


# ------------------------------------------------------------------ 7. log-in back-off
def test_login_backs_off_instead_of_locking_the_researcher_out(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    frozen_login_clock(monkeypatch)  # no request outlasts the 1 s back-off, however loaded
    d = write_experiment(tmp_path / "b", practice=0)
    create_experiment(d)
    app = create_app(d)
    set_password(app.extensions["nlgeval_experiment"]["store"],
                 generate_password_hash(PASSWORD, "pbkdf2:sha256:1"))
    c = app.test_client()
    csrf = csrf_of(c.get("/login").get_data(as_text=True))
    codes = [c.post("/login", data={"csrf": csrf, "password": f"guess{k}"}).status_code
             for k in range(6)]
    assert codes == [401] * 5 + [429]
    r = c.post("/login", data={"csrf": csrf, "password": PASSWORD})
    assert r.status_code == 429 and int(r.headers["Retry-After"]) >= 1
    throttle = app.extensions["nlgeval_login_throttle"]
    for who in throttle.fails:  # two seconds later (not the five minutes of a lock)
        throttle.fails[who] = [t - 2.0 for t in throttle.fails[who]]
    assert c.post("/login", data={"csrf": csrf, "password": PASSWORD}).status_code == 303


def test_token_view_needs_the_login_once_a_password_is_set_and_is_not_printed(
        tmp_path: Path) -> None:
    d = write_experiment(tmp_path / "t", practice=0)
    made = create_experiment(d)
    app = create_app(d)
    rt = made.researcher_token
    assert app.test_client().get(f"/r/{rt}").status_code == 200  # no password: the token
    set_password(app.extensions["nlgeval_experiment"]["store"],
                 generate_password_hash(PASSWORD, "pbkdf2:sha256:1"))
    for path in (f"/r/{rt}", f"/r/{rt}/ratings.csv"):
        r = app.test_client().get(path)
        assert r.status_code == 303 and r.headers["Location"] == "/login"
    c, _cookie = _logged_in_client(app)
    assert c.get(f"/r/{rt}").status_code == 200
    from nlgeval.experiment.server import announce_links

    lines: list[str] = []
    announce_links(app, lines.append)
    assert not any(rt in line for line in lines)


# ------------------------------------------------------------------ 8. links
def test_links_come_from_the_base_url_not_the_host_header(tmp_path: Path) -> None:
    d = write_experiment(tmp_path / "h", practice=0, extra="[crowd]\n")
    made = create_experiment(d, base_url="https://eval.example.org/study")
    c = create_app(d).test_client()
    page = c.get(f"/r/{made.researcher_token}", headers={"Host": "evil.example"}
                 ).get_data(as_text=True)
    assert "evil.example" not in page
    assert "https://eval.example.org/study/e/" in page
    assert "https://eval.example.org/study/join/" in page


def test_an_answer_sent_with_a_replaced_token_is_not_stored(tmp_path: Path) -> None:
    """A set handed out again (lease expired, researcher reset) has a new token: a late
    answer read under the old one must not land in the next participant's set."""
    from nlgeval.experiment.storage.answers import CLAIM

    d = write_experiment(tmp_path / "c", practice=0)
    made = create_experiment(d)
    store = Store(made.database)
    try:
        tok = str(made.evaluators["token"].iloc[0])
        with store.read() as s:
            tid = s.query(Trial.id).join(Evaluator).filter(Evaluator.token == tok
                                                           ).order_by(Trial.position).first()[0]
        args = {"q_id": tid, "q_now": utcnow(), "q_shown": None}
        with store.engine.begin() as c:
            assert c.execute(CLAIM, {**args, "q_token": "an-old-token"}).rowcount == 0
            assert c.execute(CLAIM, {**args, "q_token": tok}).rowcount == 1
    finally:
        store.dispose()


def test_behind_a_proxy_the_join_limit_counts_forwarded_addresses(tmp_path: Path) -> None:
    d = write_experiment(tmp_path / "x", practice=0, evaluators=6,
                         extra="[crowd]\njoin_limit = 1\n")
    create_experiment(d)
    direct, proxied = create_app(d), create_app(d, proxies=1)
    jt = direct.extensions["nlgeval_experiment"]["store"].meta()["join_token"]

    n = iter(range(100))

    def join_from(app, address: str) -> int:  # noqa: ANN001
        c = app.test_client()
        c.environ_base["HTTP_X_FORWARDED_FOR"] = address
        return _join(c, jt, PROLIFIC_PID=f"p{next(n)}").status_code

    # without --proxies every participant is the proxy (127.0.0.1): the second is refused
    assert [join_from(direct, a) for a in ("10.0.0.1", "10.0.0.2")] == [303, 429]
    # with --proxies 1 each forwarded address counts on its own (127.0.0.1 already took one)
    assert [join_from(proxied, a) for a in ("10.0.0.3", "10.0.0.4", "10.0.0.3")] == [
        303, 303, 429]


def test_a_participant_who_declined_cannot_try_again_under_the_same_id(tmp_path: Path) -> None:
    _d, app, _store, jt = _crowd(tmp_path, 'consent = "Do you agree?"\n')
    c = app.test_client()
    tok = _token(_join(c, jt, PROLIFIC_PID="p1", SESSION_ID="s1"))
    page = c.get(f"/e/{tok}").get_data(as_text=True)
    assert c.post(f"/e/{tok}/start", data={"csrf": csrf_of(page), "decline": "1"}
                  ).status_code == 200
    for client, params in ((c, {"PROLIFIC_PID": "p1", "SESSION_ID": "s1"}),
                           (app.test_client(), {"PROLIFIC_PID": "p1"})):
        r = _join(client, jt, **params)
        assert r.status_code == 409 and "ended its participation" in r.get_data(as_text=True)
    assert _join(app.test_client(), jt, PROLIFIC_PID="p2").status_code == 303
