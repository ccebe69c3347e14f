"""The evaluator blueprint: open sign-up link, personal link, trials, questionnaire, thank-you.

Per request the evaluator's state is read in one query (the evaluator row and their trials,
a few dozen rows); texts and the static part of every trial come from memory. A trial's
answer, the claim that makes it idempotent and the server-side "became current" time of the
next trial are written in one transaction (:meth:`Store.commit`, grouped with concurrent
answers on SQLite), so time on task needs no extra write. Both use prebuilt SQLAlchemy Core
statements (see :class:`~nlgeval.experiment.storage.Store` for why).
"""

from __future__ import annotations

import hashlib
import hmac
import math
import re
import time
from datetime import UTC, datetime
from typing import Any

from flask import Blueprint, Response, abort, redirect, request, session, url_for
from sqlalchemy import Connection, select, update
from sqlalchemy.exc import IntegrityError

from nlgeval.experiment.app import MAX_COMMENT, Experiment
from nlgeval.experiment.config import TRIANGLE_CRITERION, CriterionConfig, format_value
from nlgeval.experiment.storage import Evaluator, Judgement, Trial, utcnow
from nlgeval.experiment.views import (
    CLAIM,
    MAKE_CURRENT,
    STATE_QUERY,
    BadForm,
    EvaluatorView,
    State,
    TrialView,
    slider_start,
    slider_value,
)

MAX_ID = 2**31 - 1  # ids beyond a 32-bit integer cannot exist (and would overflow SQLite/PG)
_PARAM_VALUE = re.compile(r"[\w\-.:@]{1,200}")
_T, _J = Trial.__table__, Judgement.__table__


def evaluator_blueprint(x: Experiment) -> Blueprint:
    """The evaluator's routes: ``/join/<token>`` (open sign-up), ``/e/<token>`` (the current
    step) and its POST targets (start, trial, questionnaire).

    A long factory on purpose: its body is the routes and their small helpers, closures over
    the experiment loaded once (Flask's application-factory pattern); each stays short.

    Examples
    --------
    >>> import tempfile
    >>> from nlgeval.experiment.app import create_app
    >>> from nlgeval.experiment.build import create_experiment
    >>> from nlgeval.experiment.example import write_example
    >>> tmp = tempfile.TemporaryDirectory()
    >>> made = create_experiment(write_example(tmp.name + "/study"), evaluators=3)
    >>> app = create_app(made.directory)  # registers this blueprint
    >>> sorted(r.rule for r in app.url_map.iter_rules() if r.endpoint == "evaluator.page")
    ['/e/<token>']
    >>> app.extensions["nlgeval_experiment"]["store"].dispose(); tmp.cleanup()
    """
    bp = Blueprint("evaluator", __name__)
    cfg, store, _ = x.cfg, x.store, x._
    # the static part of every trial, read once (per request only answered_at is read)
    with store.connect() as c:
        static = {r.id: tuple(r) for r in c.execute(select(
            _T.c.id, _T.c.position, _T.c.practice, _T.c.item, _T.c.system, _T.c.system_b,
            _T.c.details, _T.c.qc_kind))}

    # ------------------------------------------------------------------ helpers
    def state_or_404(token: str) -> State:
        if len(token) > 64:
            abort(404)
        with store.connect() as c:
            rows = c.execute(STATE_QUERY, {"q_token": token}).all()
        if not rows:
            abort(404)
        r0 = rows[0]
        ev = EvaluatorView(r0.id, r0.token, r0.started_at, r0.finished_at, r0.answers)
        trials = [TrialView(*static[r.tid], answered_at=r.answered_at)
                  for r in rows if r.tid is not None]
        trials.sort(key=lambda t: t.position)
        return State(ev, trials)

    def texts_for(trial: TrialView) -> list[dict[str, str]]:
        d = trial.details or {}
        if "texts" in d:  # an attention check with its own (degraded) texts
            if len(d["texts"]) == 1:
                return [{"label": _("Text"), "text": d["texts"][0]}]
            return [{"label": _("Text A"), "text": d["texts"][0]},
                    {"label": _("Text B"), "text": d["texts"][1]}]
        if "sources" in d:
            return [
                {"label": _("Text %(k)s", k=k), "text": x.texts[(s, it)]}
                for k, (s, it) in enumerate(zip(d["sources"], d["items"], strict=True), 1)
            ]
        out = [{"label": _("Text A") if trial.system_b else _("Text"),
                "text": x.texts[(trial.system, trial.item)]}]
        if trial.system_b:
            out.append({"label": _("Text B"), "text": x.texts[(trial.system_b, trial.item)]})
        return out

    def sign_shown(trial_id: int, ms: int) -> str:
        mac = hmac.new(x.secret, f"{trial_id}:{ms}".encode(), hashlib.sha256).hexdigest()[:32]
        return f"{ms}.{mac}"

    def shown_time(trial_id: int) -> datetime | None:
        """When the trial page was shown, from the signed ``shown`` field (a forged or
        missing stamp just leaves ``time_ms`` empty; time on task is kept server-side)."""
        raw = request.form.get("shown", "")
        ms, _sep, _mac = raw.partition(".")
        if not (ms.isascii() and ms.isdigit()) or len(ms) > 15:
            return None
        if not hmac.compare_digest(sign_shown(trial_id, int(ms)), raw):
            return None
        return datetime.fromtimestamp(int(ms) / 1000, UTC).replace(tzinfo=None)

    def render_trial(st: State, trial: TrialView, values: dict[str, str] | None = None,
                     errors: dict[str, str] | None = None, status: int = 200) -> Response:
        c = st.counts()
        shown = values.get("shown") if values else None
        if not shown or shown_time(trial.id) is None:
            shown = sign_shown(trial.id, int(time.time() * 1000))
        return x.render(
            "trial.html", status=status, ev=st.ev, trial=trial, texts=texts_for(trial),
            context=x.contexts.get(trial.item), counts=c, values=values or {},
            errors=errors or {}, csrf=x.csrf_token(),
            instructions=x.instructions_html, fmt=format_value, start=slider_start,
            practice_index=c["practice_done"] + 1, shown=shown,
        )

    def parse_criterion(i: int, c: CriterionConfig, errors: dict[str, str]) -> float | None:
        key = f"c{i}"
        raw = request.form.get(key, "").strip()
        if c.tool == "vds":
            if raw == "":
                errors[key] = _("Please choose a rating for “%(name)s”.", name=c.name)
                return None
            allowed = {format_value(v): v for v in c.values}
            if raw not in allowed:
                raise BadForm(f"{raw!r} is not a point of the scale of '{c.name}'")
            return float(allowed[raw])
        moved = request.form.get(f"{key}_moved") == "1"
        confirmed = request.form.get(f"{key}_confirm") == "1"
        if raw == "" or not (moved or confirmed):
            errors[key] = _("Please move the slider for “%(name)s”, or tick the box to confirm "
                            "your rating where it is.", name=c.name)
            return None
        return slider_value(raw, c)

    def parse_answers() -> tuple[dict[str, float], dict[str, bool], str, dict[str, str]]:
        """The posted trial form: scores and VAS confirmations per criterion, the comment and
        the errors to show (a value the form could not have produced is refused: 400)."""
        errors: dict[str, str] = {}
        scores: dict[str, float] = {}
        confirmed: dict[str, bool] = {}
        try:
            if cfg.mode == "triangle":
                raw = request.form.get("odd", "").strip()
                if raw == "":
                    errors["odd"] = _("Please pick the text you think is the odd one out.")
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
            abort(400, _("Refused: %(why)s. Nothing was saved.", why=str(exc)))
        comment = request.form.get("comment", "") if cfg.comments else ""
        if len(comment) > MAX_COMMENT:
            errors["comment"] = _("Please keep the comment under %(n)s characters.",
                                  n=MAX_COMMENT)
        return scores, confirmed, comment, errors

    def completion() -> dict[str, str] | None:
        if cfg.crowd is None:
            return None
        code = x.meta.get("completion_code", "")
        url = cfg.crowd.redirect_url.replace("{code}", code) if cfg.crowd.redirect_url else ""
        return {"code": code, "url": url}

    # ------------------------------------------------------------------ open sign-up link
    def join_token_or_404(jtoken: str) -> None:
        have = x.meta.get("join_token", "")
        if (cfg.crowd is None or not cfg.crowd.open_link or not have
                or not hmac.compare_digest(jtoken.encode(), have.encode())):
            abort(404)

    def captured_params() -> dict[str, str]:
        """The configured URL parameters (Prolific/MTurk ids), well-formed values only."""
        assert cfg.crowd is not None
        out = {}
        for p in cfg.crowd.params:
            v = (request.values.get(p) or "").strip()
            if v and _PARAM_VALUE.fullmatch(v):
                out[p] = v
        return out

    @bp.get("/join/<jtoken>")
    def join_page(jtoken: str) -> Any:
        join_token_or_404(jtoken)
        params = captured_params()
        mine = session.get("evaluator")
        if mine and not params:  # same browser coming back: straight to their trials
            return redirect(url_for("evaluator.page", token=mine), 303)
        return x.render("join.html", jtoken=jtoken, params=params, csrf=x.csrf_token())

    @bp.post("/join/<jtoken>")
    def join(jtoken: str) -> Any:
        """Hand out the next free trial set, in design order, so the Latin square's balance
        holds for every complete block of sets handed out. A participant id seen before gets
        their own set back (a reload or a second tab never takes a second set)."""
        join_token_or_404(jtoken)
        x.check_csrf()
        params = captured_params()
        pid = next((params[p] for p in cfg.crowd.params if p in params), None)  # type: ignore
        token = None
        with store.write() as s:
            if pid is not None:
                token = s.execute(select(Evaluator.token).where(Evaluator.participant == pid)
                                  ).scalar_one_or_none()
            if token is None and pid is None and session.get("evaluator"):
                token = session["evaluator"]
            for _try in range(20):
                if token is not None:
                    break
                free = s.execute(
                    select(Evaluator.id, Evaluator.token)
                    .where(Evaluator.claimed_at.is_(None), Evaluator.started_at.is_(None))
                    .order_by(Evaluator.id).limit(1)).first()
                if free is None:
                    break
                got = s.execute(
                    update(Evaluator).where(Evaluator.id == free.id,
                                            Evaluator.claimed_at.is_(None))
                    .values(claimed_at=utcnow(), participant=pid, params=params or None)
                ).rowcount
                if got:
                    token = free.token
        if token is None:
            return x.render("error.html", status=409, code=409, message=_(
                "This study is full: every trial set has been handed out. Thank you for your "
                "interest."))
        session["evaluator"] = token
        return redirect(url_for("evaluator.page", token=token), 303)

    # ------------------------------------------------------------------ personal link
    @bp.get("/e/<token>")
    def page(token: str) -> Any:
        st = state_or_404(token)
        ev = st.ev
        if ev.started_at is None:
            return x.render("intro.html", ev=ev, counts=st.counts(), csrf=x.csrf_token(),
                            intro=x.intro_html, instructions=x.instructions_html,
                            consent=x.consent_html, errors={})
        trial = st.current
        if trial is not None:
            return render_trial(st, trial)
        if cfg.questionnaire and ev.answers is None:
            return x.render("questionnaire.html", ev=ev, counts=st.counts(),
                            csrf=x.csrf_token(), values={}, errors={})
        if ev.finished_at is None:
            with store.write() as s:
                s.execute(update(Evaluator).where(Evaluator.id == ev.id,
                                                  Evaluator.finished_at.is_(None))
                          .values(finished_at=utcnow()))
        return x.render("thanks.html", ev=ev, thank_you=x.thank_you_html,
                        completion=completion())

    @bp.post("/e/<token>/start")
    def start(token: str) -> Any:
        x.check_csrf()
        st = state_or_404(token)
        here = url_for("evaluator.page", token=token)
        if st.ev.started_at is not None:
            return redirect(here, 303)
        consented = request.form.get("consent") == "1"
        if x.consent_html is not None and not consented:
            return x.render("intro.html", status=422, ev=st.ev, counts=st.counts(),
                            csrf=x.csrf_token(), intro=x.intro_html,
                            instructions=x.instructions_html, consent=x.consent_html,
                            errors={"consent": _("Please tick the box to agree before you "
                                                 "start.")})
        now = utcnow()
        first = st.current
        with store.write() as s:
            started = s.execute(
                update(Evaluator).where(Evaluator.id == st.ev.id, Evaluator.started_at.is_(None))
                .values(started_at=now, consent_at=now if x.consent_html is not None else None)
            ).rowcount
            if started and first is not None:
                s.execute(update(Trial).where(Trial.id == first.id,
                                              Trial.available_at.is_(None))
                          .values(available_at=now))
        return redirect(here, 303)

    @bp.post("/e/<token>/trial/<int:trial_id>")
    def submit_trial(token: str, trial_id: int) -> Any:
        x.check_csrf()
        if trial_id > MAX_ID:
            abort(404)
        # the state (with the current trial) is read BEFORE the claim below: if the posted
        # trial is still unanswered now, it was then too, so "not current" really means
        # "skipping ahead" and not "a concurrent duplicate just answered it"
        st = state_or_404(token)
        trial = next((t for t in st.trials if t.id == trial_id), None)
        if trial is None:
            abort(404)
        here = url_for("evaluator.page", token=token)
        if trial.answered_at is not None:  # double submit / back button: already saved
            return redirect(here, 303)
        current = st.current
        if st.ev.started_at is None or current is None or current.id != trial.id:
            abort(409, _("That is not your current trial. Please continue from your personal "
                         "link."))
        scores, confirmed, comment, errors = parse_answers()
        if errors:
            return render_trial(st, trial, dict(request.form), errors, status=422)
        now = utcnow()
        shown_at = shown_time(trial.id)
        time_ms = None
        if shown_at is not None:
            time_ms = max(0, int((now - shown_at).total_seconds() * 1000))
        later = [t for t in st.trials if t.position > trial.position and t.answered_at is None]
        rows = [{"trial_id": trial.id, "criterion": name, "response": v,
                 "confirmed": confirmed.get(name, False), "comment": comment.strip(),
                 "time_ms": time_ms, "created_at": now} for name, v in scores.items()]
        next_id = later[0].id if later else None

        def save(c: Connection) -> None:
            if c.execute(CLAIM, {"q_id": trial.id, "q_now": now, "q_shown": shown_at}).rowcount:
                c.execute(_J.insert(), rows)
                if next_id is not None:  # the next trial becomes current now
                    c.execute(MAKE_CURRENT, {"q_id": next_id, "q_now": now})

        try:
            store.commit(save)
        except IntegrityError:
            pass  # a concurrent duplicate lost the race: the judgement is already stored
        return redirect(here, 303)

    @bp.post("/e/<token>/questionnaire")
    def submit_questionnaire(token: str) -> Any:
        x.check_csrf()
        st = state_or_404(token)
        ev = st.ev
        here = url_for("evaluator.page", token=token)
        if ev.answers is not None:
            return redirect(here, 303)
        if st.current is not None or not cfg.questionnaire:
            abort(409, _("The questionnaire comes after the trials."))
        answers: dict[str, str] = {}
        errors: dict[str, str] = {}
        for q in cfg.questionnaire:
            v = request.form.get(f"q_{q.name}", "").strip()
            if not v:
                if q.required:
                    errors[q.name] = _("Please answer this question.")
                continue
            if q.type == "choice" and v not in q.options:
                abort(400, _("Refused: %(why)s. Nothing was saved.",
                             why=f"{v[:100]!r} is not an option"))
            if q.type == "number":
                try:
                    if not math.isfinite(float(v)):
                        raise ValueError
                except ValueError:
                    errors[q.name] = _("Please give a number.")
                    continue
            answers[q.name] = v[:MAX_COMMENT]
        if errors:
            return x.render("questionnaire.html", status=422, ev=ev, counts=st.counts(),
                            csrf=x.csrf_token(), values=dict(request.form), errors=errors)
        with store.write() as s:
            s.execute(update(Evaluator).where(Evaluator.id == ev.id,
                                              Evaluator.answers.is_(None))
                      .values(answers=answers, finished_at=utcnow()))
        return redirect(here, 303)

    return bp
