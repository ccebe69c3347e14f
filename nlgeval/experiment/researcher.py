"""The researcher blueprint: the dashboard behind a password, and the older token view.

``/dashboard`` (after ``/login``) shows progress per evaluator, time per trial, quality-control
flags and comments, resets an evaluator (their judgements are deleted, the set is handed out
again) and offers the downloads. The password is set with ``nlgeval experiment password DIR``
and stored only as a salted hash (``werkzeug.security.generate_password_hash``, scrypt);
failed log-ins are throttled per client address. ``/r/<researcher token>`` still shows the
read-only view (progress and downloads) for scripts and for experiments without a password.
"""

from __future__ import annotations

import hmac
import secrets
import threading
import time
from collections.abc import Callable
from typing import Any

import pandas as pd
from flask import Blueprint, Response, abort, redirect, request, session, url_for
from sqlalchemy import delete, select, update
from werkzeug.security import check_password_hash

from nlgeval.experiment.app import Experiment
from nlgeval.experiment.export import (
    export_questionnaire,
    export_ratings,
    progress,
    quality_flags,
    spreadsheet_safe,
)
from nlgeval.experiment.storage import Evaluator, Judgement, Trial

PASSWORD_KEY = "researcher_password"
SESSION_HOURS = 8
MAX_FAILS = 5  # failed log-ins per client address and window before refusing (429)
FAIL_WINDOW_S = 300


def researcher_blueprint(x: Experiment) -> Blueprint:
    """The researcher's routes: the token view ``/r/<token>``, and the dashboard behind a
    password (``/login``, ``/dashboard``, downloads, reset of an evaluator).

    A long factory on purpose: its body is the routes, closures over the experiment loaded
    once (Flask's application-factory pattern); each route stays short.

    Examples
    --------
    >>> import tempfile
    >>> from nlgeval.experiment.app import create_app
    >>> from nlgeval.experiment.build import create_experiment
    >>> from nlgeval.experiment.example import write_example
    >>> tmp = tempfile.TemporaryDirectory()
    >>> made = create_experiment(write_example(tmp.name + "/study"), evaluators=3)
    >>> app = create_app(made.directory)
    >>> c = app.test_client()
    >>> c.get(f"/r/{made.researcher_token}").status_code, c.get("/r/wrong").status_code
    (200, 404)
    >>> c.get("/dashboard").status_code  # not logged in: sent to the log-in page
    303
    >>> app.extensions["nlgeval_experiment"]["store"].dispose(); tmp.cleanup()
    """
    bp = Blueprint("researcher", __name__)
    cfg, store = x.cfg, x.store
    fails: dict[str, list[float]] = {}
    fails_lock = threading.Lock()

    def query_flag(name: str) -> bool:
        return request.args.get(name, "0") in ("1", "true", "yes")

    def csv_response(df: pd.DataFrame, name: str) -> Response:
        if query_flag("spreadsheet"):
            df = spreadsheet_safe(df)
        return Response(df.to_csv(index=False), mimetype="text/csv",
                        headers={"Content-Disposition": f"attachment; filename={name}"})

    def download(kind: str) -> Response:
        if kind == "ratings":
            df = export_ratings(store, cfg, include_practice=query_flag("practice"),
                                include_checks=query_flag("checks"))
            return csv_response(df, "ratings.csv")
        if kind == "questionnaire":
            return csv_response(export_questionnaire(store), "questionnaire.csv")
        return csv_response(quality_flags(store, cfg), "flags.csv")

    def overview(link: Callable[..., str], dashboard: bool) -> Response:
        prog = progress(store)
        flags = quality_flags(store, cfg).set_index("evaluator")
        rows = prog.to_dict("records")
        with store.read() as s:
            n_judgements = s.query(Judgement).count()
            ids = dict(s.execute(select(Evaluator.name, Evaluator.id)).all())
            comments = s.execute(
                select(Evaluator.name, Trial.position, Judgement.comment)
                .join(Trial, Trial.evaluator_id == Evaluator.id)
                .join(Judgement, Judgement.trial_id == Trial.id)
                .where(Judgement.comment != "")
                .order_by(Evaluator.id, Trial.position)).all()
        seen = set()
        comment_rows = []
        for name, pos, text in comments:  # one row per trial (criteria share the comment)
            if (name, pos) not in seen:
                seen.add((name, pos))
                comment_rows.append({"evaluator": name, "position": pos, "comment": text})
        for r in rows:
            r["link"] = url_for("evaluator.page", token=r["token"], _external=True)
            r["id"] = ids.get(r["evaluator"])
            f = flags.loc[r["evaluator"]] if r["evaluator"] in flags.index else None
            r["flags"] = "" if f is None else f["flags"]
            r["checks"] = "" if f is None or not f["n_checks"] else (
                f"{f['n_checks_answered'] - f['n_failed']}/{f['n_checks_answered']} passed")
            med = None if f is None else f["median_time_on_task_ms"]
            r["median_s"] = "" if med is None or pd.isna(med) else f"{med / 1000:.1f}"
        join = None
        if cfg.crowd is not None and cfg.crowd.open_link and x.meta.get("join_token"):
            join = url_for("evaluator.join_page", jtoken=x.meta["join_token"], _external=True)
        return x.render(
            "researcher.html", rows=rows, link=link, dashboard=dashboard,
            n_judgements=n_judgements, comments=comment_rows, join_link=join,
            done=int(prog["done"].sum()) if len(prog) else 0,
            total=int(prog["total"].sum()) if len(prog) else 0,
            csrf=x.csrf_token() if dashboard else "",
        )

    # ------------------------------------------------------------------ token view
    def researcher_or_404(rtoken: str) -> None:
        if not hmac.compare_digest(rtoken.encode(), x.meta["researcher_token"].encode()):
            abort(404)

    @bp.get("/r/<rtoken>")
    def view(rtoken: str) -> Response:
        researcher_or_404(rtoken)
        return overview(lambda kind, **kw: url_for("researcher.token_download", rtoken=rtoken,
                                                   kind=kind, **kw), dashboard=False)

    @bp.get("/r/<rtoken>/<kind>.csv")
    def token_download(rtoken: str, kind: str) -> Response:
        researcher_or_404(rtoken)
        if kind not in ("ratings", "questionnaire", "flags"):
            abort(404)
        return download(kind)

    # ------------------------------------------------------------------ password dashboard
    def password_hash() -> str | None:
        return store.meta().get(PASSWORD_KEY)

    def logged_in() -> bool:
        t = session.get("researcher_at")
        h = password_hash()
        return bool(t and h and time.time() - float(t) < SESSION_HOURS * 3600
                    and session.get("researcher_pw") == h[-16:])

    def login_required() -> None:
        if not logged_in():
            abort(redirect(url_for("researcher.login"), 303))

    @bp.route("/login", methods=["GET", "POST"])
    def login() -> Any:
        h = password_hash()
        error = ""
        if request.method == "POST":
            x.check_csrf()
            who = request.remote_addr or "?"
            now = time.monotonic()
            with fails_lock:
                recent = [t for t in fails.get(who, []) if now - t < FAIL_WINDOW_S]
                fails[who] = recent
            if len(recent) >= MAX_FAILS:
                abort(429, "Too many failed log-ins; wait a few minutes.")
            pw = request.form.get("password", "")
            if h and pw and check_password_hash(h, pw):
                session.clear()
                session["researcher_at"] = time.time()
                session["researcher_pw"] = h[-16:]  # a new password ends old sessions
                return redirect(url_for("researcher.dashboard"), 303)
            with fails_lock:
                fails.setdefault(who, []).append(now)
            error = "Wrong password." if h else ""
        return x.render("login.html", status=401 if error else 200, csrf=x.csrf_token(),
                        has_password=bool(h), error=error)

    @bp.post("/logout")
    def logout() -> Any:
        x.check_csrf()
        session.pop("researcher_at", None)
        session.pop("researcher_pw", None)
        return redirect(url_for("researcher.login"), 303)

    @bp.get("/dashboard")
    def dashboard() -> Response:
        login_required()
        return overview(lambda kind, **kw: url_for("researcher.dashboard_download", kind=kind,
                                                   **kw), dashboard=True)

    @bp.get("/dashboard/<kind>.csv")
    def dashboard_download(kind: str) -> Response:
        login_required()
        if kind not in ("ratings", "questionnaire", "flags"):
            abort(404)
        return download(kind)

    @bp.post("/dashboard/evaluator/<int:ev_id>/reset")
    def reset(ev_id: int) -> Any:
        """Start an evaluator's trial set afresh: their judgements are deleted, the personal
        link changes and the set is handed out again by the open sign-up link."""
        login_required()
        x.check_csrf()
        if ev_id > 2**31 - 1 or request.form.get("confirm") != "1":
            abort(400, "Tick the box to confirm: the evaluator's judgements will be deleted.")
        with store.write() as s:
            if s.get(Evaluator, ev_id) is None:
                abort(404)
            ids = select(Trial.id).where(Trial.evaluator_id == ev_id)
            s.execute(delete(Judgement).where(Judgement.trial_id.in_(ids)))
            s.execute(update(Trial).where(Trial.evaluator_id == ev_id)
                      .values(answered_at=None, shown_at=None, available_at=None))
            s.execute(update(Evaluator).where(Evaluator.id == ev_id).values(
                token=secrets.token_urlsafe(18), started_at=None, finished_at=None,
                answers=None, claimed_at=None, participant=None, params=None, consent_at=None))
        return redirect(url_for("researcher.dashboard"), 303)

    return bp
