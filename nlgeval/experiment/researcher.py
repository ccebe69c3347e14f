"""The researcher blueprint: the dashboard behind a password, and the older token view.

``/dashboard`` (after ``/login``) shows progress per evaluator, time per trial, quality-control
flags and comments, resets an evaluator (their judgements are deleted, the set is handed out
again) and offers the downloads. The password is set with ``nlgeval experiment password DIR``
and stored only as a salted hash (``werkzeug.security.generate_password_hash``, scrypt);
failed log-ins back off per client address, and sessions are held server-side
(:mod:`nlgeval.experiment.researcher_auth`). ``/r/<researcher token>`` still shows the
read-only view (progress and downloads) for experiments without a password; once a password
is set it needs the log-in too.

The views are module-level functions on one module-level :data:`researcher_blueprint`
(registered by :func:`nlgeval.experiment.app.create_app`); each reaches the experiment of the
app serving the request through :func:`~nlgeval.experiment.loaded.current_experiment`, and
the log-in throttle lives in the app too (:class:`LoginThrottle`), so two apps in one process
share nothing; what it reads and writes is in :mod:`nlgeval.experiment.storage.researcher`.
"""

from __future__ import annotations

import hmac
import math
import time
from collections.abc import Callable
from typing import Any

import pandas as pd
from flask import Blueprint, Response, abort, current_app, redirect, request, session, url_for
from flask.blueprints import BlueprintSetupState
from werkzeug.security import check_password_hash

from nlgeval.experiment.export import (
    export_questionnaire,
    export_ratings,
    progress,
    quality_flags,
    spreadsheet_safe,
)
from nlgeval.experiment.loaded import Experiment, current_experiment
from nlgeval.experiment.quality import checks_summary
from nlgeval.experiment.researcher_auth import FAIL_WINDOW_S as FAIL_WINDOW_S
from nlgeval.experiment.researcher_auth import MAX_FAILS as MAX_FAILS
from nlgeval.experiment.researcher_auth import PASSWORD_KEY as PASSWORD_KEY
from nlgeval.experiment.researcher_auth import (
    LoginThrottle,
    end_session,
    session_alive,
    start_session,
)
from nlgeval.experiment.storage.design import count_judgements
from nlgeval.experiment.storage.researcher import comments, evaluator_ids, reset_set

SESSION_HOURS = 8
DOWNLOADS = ("ratings", "questionnaire", "flags", "participants")
_THROTTLE_KEY = "nlgeval_login_throttle"

#: The researcher's routes: ``/r/<token>`` (+ downloads), ``/login``, ``/logout``, ``/dashboard``.
researcher_blueprint = Blueprint("researcher", __name__)


@researcher_blueprint.record_once
def _init_app(state: BlueprintSetupState) -> None:
    """Give every app that registers the blueprint its own log-in throttle."""
    state.app.extensions[_THROTTLE_KEY] = LoginThrottle()


def _query_flag(name: str) -> bool:
    return request.args.get(name, "0") in ("1", "true", "yes")


def _csv_response(df: pd.DataFrame, name: str) -> Response:
    if _query_flag("spreadsheet"):
        df = spreadsheet_safe(df)
    return Response(df.to_csv(index=False), mimetype="text/csv",
                    headers={"Content-Disposition": f"attachment; filename={name}"})


def _participants(x: Experiment) -> pd.DataFrame:
    from nlgeval.experiment.export import participants_table

    return participants_table(x.store, x.cfg, x.secret)


#: the table each download (``DOWNLOADS``) sends as ``<kind>.csv``, from the experiment
_DOWNLOAD_TABLES: dict[str, Callable[[Experiment], pd.DataFrame]] = {
    "ratings": lambda x: export_ratings(x.store, x.cfg, include_practice=_query_flag("practice"),
                                       include_checks=_query_flag("checks")),
    "questionnaire": lambda x: export_questionnaire(x.store),
    "flags": lambda x: quality_flags(x.store, x.cfg),
    "participants": _participants,
}


def _download(kind: str) -> Response:
    if kind not in DOWNLOADS:
        abort(404)
    return _csv_response(_DOWNLOAD_TABLES[kind](current_experiment()), f"{kind}.csv")


def _comment_rows(x: Experiment) -> tuple[int, dict[str, int], list[dict[str, Any]]]:
    """The number of judgements, evaluator ids by name, and one comment row per trial."""
    n_judgements = count_judgements(x.store)
    ids = evaluator_ids(x.store)
    seen = set()
    rows = []
    for name, pos, text in comments(x.store):  # one row per trial (criteria share the comment)
        if (name, pos) not in seen:
            seen.add((name, pos))
            rows.append({"evaluator": name, "position": pos, "comment": text})
    return n_judgements, ids, rows


def _overview(link: Callable[..., str], dashboard: bool) -> Response:
    """The progress page (token view or dashboard); ``link(kind)`` is a download's URL."""
    x = current_experiment()
    prog = progress(x.store)
    flags = quality_flags(x.store, x.cfg).set_index("evaluator")
    rows = prog.to_dict("records")
    n_judgements, ids, comment_rows = _comment_rows(x)
    for r in rows:
        r["link"] = x.link("evaluator.page", token=r["token"])
        r["id"] = ids.get(r["evaluator"])
        f = flags.loc[r["evaluator"]] if r["evaluator"] in flags.index else None
        r["flags"] = "" if f is None else f["flags"]
        r["checks"] = checks_summary(f)
        med = None if f is None else f["median_time_on_task_ms"]
        r["median_s"] = "" if med is None or pd.isna(med) else f"{med / 1000:.1f}"
    join = None
    if x.cfg.crowd is not None and x.cfg.crowd.open_link and x.meta.get("join_token"):
        join = x.link("evaluator.join_page", jtoken=x.meta["join_token"])
    return x.render(
        "researcher/dashboard.html", rows=rows, link=link, dashboard=dashboard,
        n_judgements=n_judgements, comments=comment_rows, join_link=join,
        done=int(prog["done"].sum()) if len(prog) else 0,
        total=int(prog["total"].sum()) if len(prog) else 0,
        csrf=x.csrf_token() if dashboard else "",
    )


# ------------------------------------------------------------------ token view
def _researcher_or_404(rtoken: str) -> None:
    """404 for a wrong token; once a password is set the token alone no longer opens the
    view: the researcher must be logged in too (a leaked link must not bypass it)."""
    expected = current_experiment().meta["researcher_token"]
    if not hmac.compare_digest(rtoken.encode(), expected.encode()):
        abort(404)
    if _password_hash() and not _logged_in():
        abort(redirect(url_for("researcher.login"), 303))


@researcher_blueprint.get("/r/<rtoken>")
def view(rtoken: str) -> Response:
    """The read-only progress page for the researcher token (404 for any other token).

    Examples
    --------
    >>> from nlgeval.experiment.sandbox import example_app
    >>> with example_app() as (app, made):
    ...     page = app.test_client().get(f"/r/{made.researcher_token}").get_data(as_text=True)
    ...     "ratings.csv" in page, "Log out" in page
    (True, False)
    """
    _researcher_or_404(rtoken)
    return _overview(lambda kind, **kw: url_for("researcher.token_download", rtoken=rtoken,
                                                kind=kind, **kw), dashboard=False)


@researcher_blueprint.get("/r/<rtoken>/<kind>.csv")
def token_download(rtoken: str, kind: str) -> Response:
    """A download (``ratings``, ``questionnaire`` or ``flags``) for the researcher token;
    ``?spreadsheet=1`` makes cells safe for spreadsheets, ``?practice=1`` / ``?checks=1`` add
    practice and attention-check trials to the ratings.

    Examples
    --------
    >>> from nlgeval.experiment.sandbox import example_app
    >>> with example_app() as (app, made):
    ...     c = app.test_client()
    ...     rt = made.researcher_token
    ...     c.get(f"/r/{rt}/ratings.csv").status_code, c.get(f"/r/{rt}/other.csv").status_code
    (200, 404)
    """
    _researcher_or_404(rtoken)
    return _download(kind)


# ------------------------------------------------------------------ password dashboard
def _password_hash() -> str | None:
    return current_experiment().store.meta().get(PASSWORD_KEY)


def _logged_in() -> bool:
    """A researcher session that the server still knows (logging out and a new password
    delete it: a copied cookie dies with it), younger than :data:`SESSION_HOURS`."""
    t, sid, h = session.get("researcher_at"), session.get("researcher_sid"), _password_hash()
    if not (t and sid and h and time.time() - float(t) < SESSION_HOURS * 3600
            and session.get("researcher_pw") == h[-16:]):
        return False
    return session_alive(current_experiment().store, str(sid), SESSION_HOURS)


def _login_required() -> None:
    if not _logged_in():
        abort(redirect(url_for("researcher.login"), 303))


@researcher_blueprint.route("/login", methods=["GET", "POST"])
def login() -> Any:
    """The log-in form; a right password opens the dashboard (303) and starts a server-side
    session; a wrong one is 401, and after :data:`MAX_FAILS` failures from one address within
    :data:`FAIL_WINDOW_S` seconds each further attempt must wait a doubling back-off
    (:class:`~nlgeval.experiment.researcher_auth.LoginThrottle`; 429 with ``Retry-After``
    until then).

    Examples
    --------
    >>> from werkzeug.security import generate_password_hash
    >>> from nlgeval.experiment.sandbox import example_app
    >>> with example_app() as (app, made):
    ...     store = app.extensions["nlgeval_experiment"]["store"]
    ...     store.set_meta(PASSWORD_KEY, generate_password_hash("correct horse", "pbkdf2:sha256:1"))
    ...     c = app.test_client(); _ = c.get("/login")  # the form sets the CSRF token
    ...     with c.session_transaction() as s:
    ...         csrf = s["csrf"]
    ...     c.post("/login", data={"csrf": csrf, "password": "wrong"}).status_code
    ...     r = c.post("/login", data={"csrf": csrf, "password": "correct horse"})
    ...     r.status_code, r.headers["Location"]
    401
    (303, '/dashboard')
    """
    x = current_experiment()
    h = _password_hash()
    error = ""
    if request.method == "POST":
        x.check_csrf()
        who = request.remote_addr or "?"
        now = time.monotonic()
        throttle: LoginThrottle = current_app.extensions[_THROTTLE_KEY]
        wait = throttle.wait(who, now)
        if wait > 0:
            resp = x.render("site/error.html", status=429, code=429, message=(
                f"Too many failed log-ins from your address: try again in {math.ceil(wait)} "
                "s (each further failure doubles the wait, up to 30 s)."))
            resp.headers["Retry-After"] = str(math.ceil(wait))
            return resp
        pw = request.form.get("password", "")
        if h and pw and check_password_hash(h, pw):
            throttle.clear(who)
            sid = start_session(x.store)
            session.clear()
            session["researcher_sid"] = sid
            session["researcher_at"] = time.time()
            session["researcher_pw"] = h[-16:]  # a new password ends old sessions
            return redirect(url_for("researcher.dashboard"), 303)
        throttle.record(who, now)
        error = "Wrong password." if h else ""
    return x.render("researcher/login.html", status=401 if error else 200, csrf=x.csrf_token(),
                    has_password=bool(h), error=error)


@researcher_blueprint.post("/logout")
def logout() -> Any:
    """End the researcher's session, server-side too (a copy of the cookie opens nothing
    any more; the CSRF token is checked) and go back to ``/login``.

    Examples
    --------
    >>> from nlgeval.experiment.sandbox import example_app
    >>> with example_app() as (app, made):
    ...     c = app.test_client(); _ = c.get("/login")  # the form sets the CSRF token
    ...     with c.session_transaction() as s:
    ...         s["researcher_at"] = 1.0; csrf = s["csrf"]
    ...     c.post("/logout").status_code  # no CSRF token: refused
    ...     r = c.post("/logout", data={"csrf": csrf})
    ...     with c.session_transaction() as s:
    ...         r.status_code, r.headers["Location"], "researcher_at" in s
    400
    (303, '/login', False)
    """
    x = current_experiment()
    x.check_csrf()
    sid = session.pop("researcher_sid", None)
    if sid:  # ended server-side: a copy of the cookie opens nothing any more
        end_session(x.store, str(sid))
    session.pop("researcher_at", None)
    session.pop("researcher_pw", None)
    return redirect(url_for("researcher.login"), 303)


@researcher_blueprint.get("/dashboard")
def dashboard() -> Response:
    """The dashboard (progress, flags, comments, downloads, reset); without a valid session
    the researcher is sent to ``/login`` (303). A session lasts :data:`SESSION_HOURS` hours
    and ends when the password is changed.

    Examples
    --------
    >>> from werkzeug.security import generate_password_hash
    >>> from nlgeval.experiment.sandbox import example_app
    >>> with example_app() as (app, made):
    ...     h = generate_password_hash("correct horse", "pbkdf2:sha256:1")
    ...     app.extensions["nlgeval_experiment"]["store"].set_meta(PASSWORD_KEY, h)
    ...     c = app.test_client()
    ...     c.get("/dashboard").headers["Location"]
    ...     _ = c.get("/login")
    ...     with c.session_transaction() as s:
    ...         csrf = s["csrf"]
    ...     _ = c.post("/login", data={"csrf": csrf, "password": "correct horse"})
    ...     page = c.get("/dashboard").get_data(as_text=True)
    ...     "Researcher dashboard" in page, "Reset / reassign" in page
    '/login'
    (True, False)
    """
    _login_required()
    return _overview(lambda kind, **kw: url_for("researcher.dashboard_download", kind=kind,
                                                **kw), dashboard=True)


@researcher_blueprint.get("/dashboard/<kind>.csv")
def dashboard_download(kind: str) -> Response:
    """A download of the dashboard (as :func:`token_download`), for a logged-in researcher.

    Examples
    --------
    >>> from nlgeval.experiment.sandbox import example_app
    >>> with example_app() as (app, made):
    ...     r = app.test_client().get("/dashboard/ratings.csv")  # not logged in
    ...     r.status_code, r.headers["Location"]
    (303, '/login')
    """
    _login_required()
    return _download(kind)


@researcher_blueprint.post("/dashboard/evaluator/<int:ev_id>/reset")
def reset(ev_id: int) -> Any:
    """Start an evaluator's trial set afresh (judgements deleted, a new personal link, the set
    handed out again by the open sign-up link); needs a log-in, CSRF and ``confirm=1`` (else 400).

    Examples
    --------
    >>> from nlgeval.experiment.sandbox import example_app
    >>> with example_app() as (app, made):
    ...     r = app.test_client().post("/dashboard/evaluator/1/reset", data={"confirm": "1"})
    ...     r.status_code, r.headers["Location"]  # not logged in: nothing is deleted
    (303, '/login')
    """
    _login_required()
    x = current_experiment()
    x.check_csrf()
    if ev_id > 2**31 - 1 or request.form.get("confirm") != "1":
        abort(400, "Tick the box to confirm: the evaluator's judgements will be deleted.")
    if not reset_set(x.store, ev_id):
        abort(404)
    return redirect(url_for("researcher.dashboard"), 303)
