"""The evaluation web application (Flask), served by ``nlgeval serve EXPERIMENT_DIR``.

The evaluator's path is LG-Eval's state machine (Kow & Belz 2012, section 3.3 and Figure 3):
personal link -> introduction -> practice trials -> the trial set in the evaluator's own order ->
exit questionnaire -> thank-you. The state lives in the database, not in the browser, so an
evaluator who leaves resumes where they stopped, and every page is derived from it (GET shows
the current step; each POST changes it once and redirects: post/redirect/get).

Guarantees, each tested:
- each judgement is committed before the next trial is shown (the redirect follows the commit);
- a double submit never duplicates a judgement: the trial is claimed with a conditional
  ``UPDATE ... WHERE answered_at IS NULL`` and the ``UNIQUE (trial_id, criterion)`` constraint
  backs it up; a repeated POST just redirects to the current step;
- an evaluator's token reaches their own trials only, and only the current one can be answered;
  values that the form could not have produced are refused (400) and nothing is stored;
- an incomplete form is shown again with the answers kept and the missing part marked (422);
- a visual analogue scale that was neither moved nor confirmed is never recorded;
- forms carry a CSRF token bound to a signed session cookie; system outputs are escaped (Jinja
  autoescaping) and a strict Content-Security-Policy allows no inline script and no asset from
  outside the server; URLs with tokens are never sent as referrers.
"""

from __future__ import annotations

import hashlib
import hmac
import math
import secrets
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import markdown as md
from flask import Flask, Response, abort, redirect, render_template, request, session, url_for
from markupsafe import Markup
from sqlalchemy import select, update
from sqlalchemy.exc import IntegrityError

from nlgeval.experiment.build import check_experiment, database_url
from nlgeval.experiment.config import (
    TRIANGLE_CRITERION,
    CriterionConfig,
    format_value,
    load_config,
)
from nlgeval.experiment.export import (
    export_questionnaire,
    export_ratings,
    progress,
    spreadsheet_safe,
)
from nlgeval.experiment.storage import Context, Evaluator, Judgement, Output, Store, Trial, utcnow

MAX_COMMENT = 5000
CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
)


def render_markdown(text: str) -> Markup:
    """Researcher-written Markdown to HTML. Raw HTML is not passed through (``<`` is escaped
    first), so even the introduction cannot inject markup."""
    return Markup(md.markdown(text.replace("<", "&lt;"), extensions=["extra", "sane_lists"]))


class BadForm(Exception):
    """A value the form could not have produced (tampering): refused with 400."""


def create_app(
    directory: str | Path,
    *,
    database: str | None = None,
    threads: int = 8,
    secure_cookies: bool = False,
) -> Flask:
    """The Flask app for one experiment directory (validated now, not during a session).

    ``secure_cookies`` marks the session cookie ``Secure`` (sent over HTTPS only): set it when
    evaluators reach the app through an HTTPS reverse proxy; leave it off for plain-HTTP use on
    localhost, where browsers would otherwise drop the cookie and every form would fail CSRF.
    """
    cfg = load_config(directory)
    store = Store(database_url(cfg, database), pool_size=threads)
    meta = check_experiment(cfg, store)
    app = Flask(__name__, static_folder="static", template_folder="templates")
    app.config.update(
        SECRET_KEY=meta["secret_key"],
        SESSION_COOKIE_NAME="nlgeval_session",
        SESSION_COOKIE_HTTPONLY=True,
        SESSION_COOKIE_SAMESITE="Lax",
        SESSION_COOKIE_SECURE=secure_cookies,
        MAX_CONTENT_LENGTH=256 * 1024,
    )
    app.extensions["nlgeval_experiment"] = {"config": cfg, "store": store}
    researcher_token = meta["researcher_token"]
    secret = meta["secret_key"].encode()
    with store.read() as s:
        texts = {(o.system, o.item): o.text for o in s.execute(select(Output)).scalars()}
        contexts = {c.item: c.text for c in s.execute(select(Context)).scalars()}
    intro_html = render_markdown(cfg.introduction)
    instructions_html = render_markdown(cfg.instructions)

    # ------------------------------------------------------------------ helpers
    def query_flag(name: str) -> bool:
        return request.args.get(name, "0") in ("1", "true", "yes")

    def csrf_token() -> str:
        tok = session.get("csrf")
        if not tok:
            tok = secrets.token_urlsafe(24)
            session["csrf"] = tok
        return tok

    def check_csrf() -> None:
        sent = request.form.get("csrf", "")
        have = session.get("csrf", "")
        if not sent or not have or not hmac.compare_digest(sent, have):
            abort(400, "This form has expired or did not come from this site (CSRF check "
                       "failed). Go back to your personal link and try again.")

    def evaluator_or_404(token: str) -> Evaluator:
        with store.read() as s:
            ev = s.execute(select(Evaluator).where(Evaluator.token == token)).scalar_one_or_none()
        if ev is None:
            abort(404)
        return ev

    def current_trial(ev: Evaluator) -> Trial | None:
        with store.read() as s:
            return s.execute(
                select(Trial).where(Trial.evaluator_id == ev.id, Trial.answered_at.is_(None))
                .order_by(Trial.position).limit(1)
            ).scalar_one_or_none()

    def counts(ev: Evaluator) -> dict[str, int]:
        with store.read() as s:
            trials = s.execute(
                select(Trial.practice, Trial.answered_at).where(Trial.evaluator_id == ev.id)
            ).all()
        main = [a for p, a in trials if not p]
        prac = [a for p, a in trials if p]
        return {
            "total": len(main), "remaining": sum(a is None for a in main),
            "practice_total": len(prac), "practice_done": sum(a is not None for a in prac),
        }

    def texts_for(trial: Trial) -> list[dict[str, str]]:
        if cfg.mode == "triangle":
            d = trial.details or {}
            return [
                {"label": f"Text {k}", "text": texts[(s, it)]}
                for k, (s, it) in enumerate(zip(d["sources"], d["items"], strict=True), 1)
            ]
        out = [{"label": "Text A" if trial.system_b else "Text",
                "text": texts[(trial.system, trial.item)]}]
        if trial.system_b:
            out.append({"label": "Text B", "text": texts[(trial.system_b, trial.item)]})
        return out

    def sign_shown(trial_id: int, ms: int) -> str:
        mac = hmac.new(secret, f"{trial_id}:{ms}".encode(), hashlib.sha256).hexdigest()[:32]
        return f"{ms}.{mac}"

    def shown_time(trial_id: int) -> datetime | None:
        """When the trial page was shown, from the signed ``shown`` field (no database write
        is needed to time a trial; a forged or missing stamp just leaves the time empty)."""
        raw = request.form.get("shown", "")
        ms, _, _mac = raw.partition(".")
        if not ms.isdigit() or not hmac.compare_digest(sign_shown(trial_id, int(ms)), raw):
            return None
        return datetime.fromtimestamp(int(ms) / 1000, UTC).replace(tzinfo=None)

    def render_trial(ev: Evaluator, trial: Trial, values: dict[str, str] | None = None,
                     errors: dict[str, str] | None = None, status: int = 200) -> Response:
        c = counts(ev)
        shown = values.get("shown") if values else None
        if not shown or shown_time(trial.id) is None:
            shown = sign_shown(trial.id, int(time.time() * 1000))
        html = render_template(
            "trial.html", cfg=cfg, ev=ev, trial=trial, texts=texts_for(trial),
            context=contexts.get(trial.item), counts=c, values=values or {},
            errors=errors or {}, csrf=csrf_token(), instructions=instructions_html,
            fmt=format_value, practice_index=c["practice_done"] + 1, shown=shown,
        )
        return Response(html, status=status)

    def parse_criterion(i: int, c: CriterionConfig, errors: dict[str, str]) -> float | None:
        key = f"c{i}"
        raw = request.form.get(key, "").strip()
        if c.tool == "vds":
            if raw == "":
                errors[key] = f"Please choose a rating for “{c.name}”."
                return None
            allowed = {format_value(v): v for v in c.values}
            if raw not in allowed:
                raise BadForm(f"{raw!r} is not a point of the scale of '{c.name}'")
            return float(allowed[raw])
        moved = request.form.get(f"{key}_moved") == "1"
        confirmed = request.form.get(f"{key}_confirm") == "1"
        if raw == "" or not (moved or confirmed):
            errors[key] = (f"Please move the slider for “{c.name}”, or tick the box to confirm "
                           "your rating where it is.")
            return None
        try:
            v = float(raw)
        except ValueError:
            raise BadForm(f"{raw!r} is not a number on the slider of '{c.name}'") from None
        if not math.isfinite(v) or v < c.min or v > c.max:
            raise BadForm(f"{raw!r} is outside the slider of '{c.name}'")
        return v

    # ------------------------------------------------------------------ security headers
    @app.after_request
    def headers(resp: Response) -> Response:
        resp.headers["Content-Security-Policy"] = CSP
        resp.headers["X-Content-Type-Options"] = "nosniff"
        resp.headers["X-Frame-Options"] = "DENY"
        resp.headers["Referrer-Policy"] = "no-referrer"
        if not request.path.startswith("/static/"):
            resp.headers["Cache-Control"] = "no-store"
        return resp

    @app.errorhandler(400)
    @app.errorhandler(404)
    @app.errorhandler(409)
    def error_page(err: Any) -> tuple[str, int]:
        code = getattr(err, "code", 400)
        desc = getattr(err, "description", "")
        if code == 404:
            desc = "There is nothing here. Please check that you used your personal link exactly."
        return render_template("error.html", cfg=cfg, code=code, message=desc), code

    # ------------------------------------------------------------------ evaluator routes
    @app.get("/")
    def index() -> str:
        return render_template("index.html", cfg=cfg)

    @app.get("/healthz")
    def healthz() -> str:
        return "ok"

    @app.get("/e/<token>")
    def evaluator_page(token: str) -> Any:
        ev = evaluator_or_404(token)
        if ev.started_at is None:
            return render_template("intro.html", cfg=cfg, ev=ev, counts=counts(ev),
                                   csrf=csrf_token(), intro=intro_html,
                                   instructions=instructions_html)
        trial = current_trial(ev)
        if trial is not None:
            return render_trial(ev, trial)
        if cfg.questionnaire and ev.answers is None:
            return render_template("questionnaire.html", cfg=cfg, ev=ev, counts=counts(ev),
                                   csrf=csrf_token(), values={}, errors={})
        if ev.finished_at is None:
            with store.write() as s:
                s.execute(update(Evaluator).where(Evaluator.id == ev.id,
                                                  Evaluator.finished_at.is_(None))
                          .values(finished_at=utcnow()))
        return render_template("thanks.html", cfg=cfg, ev=ev,
                               thank_you=render_markdown(cfg.thank_you))

    @app.post("/e/<token>/start")
    def start(token: str) -> Any:
        check_csrf()
        ev = evaluator_or_404(token)
        with store.write() as s:
            s.execute(update(Evaluator).where(Evaluator.id == ev.id,
                                              Evaluator.started_at.is_(None))
                      .values(started_at=utcnow()))
        return redirect(url_for("evaluator_page", token=token), 303)

    @app.post("/e/<token>/trial/<int:trial_id>")
    def submit_trial(token: str, trial_id: int) -> Any:
        check_csrf()
        ev = evaluator_or_404(token)
        # read the current trial BEFORE the posted one: if the posted trial is still
        # unanswered now, it was unanswered then too, so "not current" really means "skipping
        # ahead" and not "a concurrent duplicate just answered it"
        current = current_trial(ev)
        with store.read() as s:
            trial = s.get(Trial, trial_id)
        if trial is None or trial.evaluator_id != ev.id:
            abort(404)
        here = url_for("evaluator_page", token=token)
        if trial.answered_at is not None:  # double submit / back button: already saved
            return redirect(here, 303)
        if ev.started_at is None or current is None or current.id != trial.id:
            abort(409, "That is not your current trial. Please continue from your personal "
                       "link.")
        errors: dict[str, str] = {}
        scores: dict[str, float] = {}
        confirmed: dict[str, bool] = {}
        try:
            if cfg.mode == "triangle":
                raw = request.form.get("odd", "").strip()
                if raw == "":
                    errors["odd"] = "Please pick the text you think is the odd one out."
                elif raw not in ("1", "2", "3"):
                    raise BadForm(f"{raw!r} is not 1, 2 or 3")
                else:
                    scores[TRIANGLE_CRITERION] = float(raw)
            else:
                for i, c in enumerate(cfg.criteria):
                    v = parse_criterion(i, c, errors)
                    if v is not None:
                        scores[c.name] = v
                        confirmed[c.name] = request.form.get(f"c{i}_confirm") == "1"
        except BadForm as exc:
            abort(400, f"Refused: {exc}. Nothing was saved.")
        comment = request.form.get("comment", "") if cfg.comments else ""
        if len(comment) > MAX_COMMENT:
            errors["comment"] = f"Please keep the comment under {MAX_COMMENT} characters."
        if errors:
            return render_trial(ev, trial, dict(request.form), errors, status=422)
        now = utcnow()
        shown_at = shown_time(trial.id)
        time_ms = None
        if shown_at is not None:
            time_ms = max(0, int((now - shown_at).total_seconds() * 1000))
        try:
            with store.write() as s:
                claimed = s.execute(
                    update(Trial).where(Trial.id == trial.id, Trial.answered_at.is_(None))
                    .values(answered_at=now, shown_at=shown_at)
                ).rowcount
                if claimed:
                    s.add_all([
                        Judgement(trial_id=trial.id, criterion=name, response=v,
                                  confirmed=confirmed.get(name, False), comment=comment.strip(),
                                  time_ms=time_ms, created_at=now)
                        for name, v in scores.items()
                    ])
        except IntegrityError:
            pass  # a concurrent duplicate lost the race: the judgement is already stored
        return redirect(here, 303)

    @app.post("/e/<token>/questionnaire")
    def submit_questionnaire(token: str) -> Any:
        check_csrf()
        ev = evaluator_or_404(token)
        here = url_for("evaluator_page", token=token)
        if ev.answers is not None:
            return redirect(here, 303)
        if current_trial(ev) is not None or not cfg.questionnaire:
            abort(409, "The questionnaire comes after the trials.")
        answers: dict[str, str] = {}
        errors: dict[str, str] = {}
        for q in cfg.questionnaire:
            v = request.form.get(f"q_{q.name}", "").strip()
            if not v:
                if q.required:
                    errors[q.name] = "Please answer this question."
                continue
            if q.type == "choice" and v not in q.options:
                abort(400, f"Refused: {v!r} is not an option. Nothing was saved.")
            if q.type == "number":
                try:
                    float(v)
                except ValueError:
                    errors[q.name] = "Please give a number."
                    continue
            answers[q.name] = v[:MAX_COMMENT]
        if errors:
            html = render_template("questionnaire.html", cfg=cfg, ev=ev, counts=counts(ev),
                                   csrf=csrf_token(), values=dict(request.form), errors=errors)
            return Response(html, status=422)
        with store.write() as s:
            s.execute(update(Evaluator).where(Evaluator.id == ev.id,
                                              Evaluator.answers.is_(None))
                      .values(answers=answers, finished_at=utcnow()))
        return redirect(here, 303)

    # ------------------------------------------------------------------ researcher routes
    def researcher_or_404(rtoken: str) -> None:
        if not hmac.compare_digest(rtoken.encode(), researcher_token.encode()):
            abort(404)

    @app.get("/r/<rtoken>")
    def researcher(rtoken: str) -> str:
        researcher_or_404(rtoken)
        prog = progress(store)
        rows = prog.to_dict("records")
        for r in rows:
            r["link"] = url_for("evaluator_page", token=r["token"], _external=True)
        with store.read() as s:
            n_judgements = s.query(Judgement).count()
        return render_template(
            "researcher.html", cfg=cfg, rows=rows, rtoken=rtoken, n_judgements=n_judgements,
            done=int(prog["done"].sum()) if len(prog) else 0,
            total=int(prog["total"].sum()) if len(prog) else 0,
        )

    @app.get("/r/<rtoken>/ratings.csv")
    def ratings_csv(rtoken: str) -> Response:
        researcher_or_404(rtoken)
        df = export_ratings(store, cfg, include_practice=query_flag("practice"))
        if query_flag("spreadsheet"):
            df = spreadsheet_safe(df)
        return Response(df.to_csv(index=False), mimetype="text/csv", headers={
            "Content-Disposition": "attachment; filename=ratings.csv"})

    @app.get("/r/<rtoken>/questionnaire.csv")
    def questionnaire_csv(rtoken: str) -> Response:
        researcher_or_404(rtoken)
        df = export_questionnaire(store)
        if query_flag("spreadsheet"):
            df = spreadsheet_safe(df)
        return Response(df.to_csv(index=False), mimetype="text/csv",
                        headers={"Content-Disposition": "attachment; filename=questionnaire.csv"})

    return app
