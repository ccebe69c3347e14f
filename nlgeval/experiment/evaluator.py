"""The evaluator's routes: open sign-up link, personal link, trials, questionnaire, thank-you.

The views are module-level functions on one module-level :data:`evaluator_blueprint`
(registered by :func:`nlgeval.experiment.app.create_app`); each reaches the experiment of the
app serving the request through :func:`~nlgeval.experiment.loaded.current_experiment`, what
they read and check is in :mod:`nlgeval.experiment.evaluator_forms`, and what they store is
written by :mod:`nlgeval.experiment.storage.answers`.

Per request the evaluator's state is read in one query (the evaluator row and their trials,
a few dozen rows); texts and the static part of every trial come from memory. A trial's
answer, the claim that makes it idempotent and the server-side "became current" time of the
next trial are written in one transaction (grouped with concurrent answers on SQLite, one
statement on PostgreSQL), so time on task needs no extra write.
"""

from __future__ import annotations

import math
from typing import Any

from flask import Blueprint, Response, abort, redirect, request, session, url_for

from nlgeval.experiment.config import format_value
from nlgeval.experiment.evaluator_forms import (
    captured_params,
    completion,
    join_token_or_404,
    parse_answers,
    shown_time,
    sign_shown,
    state_or_404,
)
from nlgeval.experiment.loaded import MAX_COMMENT, Experiment, current_experiment
from nlgeval.experiment.outcomes import intro_outcome
from nlgeval.experiment.participants import (
    claim_set,
    client_hash,
    code_subject,
    completion_code,
    too_fast,
)
from nlgeval.experiment.storage.answers import (
    mark_finished,
    save_answer,
    save_questionnaire,
    set_of_token,
    start_trials,
    who,
)
from nlgeval.experiment.views import State, TrialView, slider_start, texts_for

MAX_ID = 2**31 - 1  # ids beyond a 32-bit integer cannot exist (and would overflow SQLite/PG)

#: The evaluator's routes: ``/join/<token>`` (open sign-up), ``/e/<token>`` (the current
#: step) and its POST targets (start, trial, questionnaire).
evaluator_blueprint = Blueprint("evaluator", __name__)

def _render_trial(x: Experiment, st: State, trial: TrialView,
                  values: dict[str, str] | None = None, errors: dict[str, str] | None = None,
                  status: int = 200) -> Response:
    c = st.counts()
    shown = values.get("shown") if values else None
    if not shown or shown_time(x, trial.id, shown) is None:
        shown = sign_shown(x, trial.id, x.now_ms())
    return x.render(
        "evaluator/trial.html", status=status, ev=st.ev, trial=trial, texts=texts_for(x, trial),
        context=x.contexts.get(trial.item), counts=c, values=values or {},
        errors=errors or {}, csrf=x.csrf_token(),
        instructions=x.instructions_html, fmt=format_value, start=slider_start,
        practice_index=c["practice_done"] + 1, shown=shown,
    )


def _participant(x: Experiment) -> tuple[str | None, dict[str, str]]:
    """The participant id (``None``: an anonymous participant) and the captured platform
    parameters; a link whose participant id is missing or malformed is refused (400) when
    it carries platform parameters or anonymous participants are off: never a shared id."""
    crowd = x.cfg.crowd
    assert crowd is not None
    params = captured_params(x)
    pid = next((params[k] for k in crowd.id_keys if k in params), None)
    if pid is None and (not crowd.anonymous
                        or any((request.values.get(p) or "").strip() for p in crowd.params)):
        abort(400, x._("The link you followed does not carry a valid participant id "
                       "(%(names)s), so your answers could not be kept apart from other "
                       "people's. Please open the study again from the platform's study page.",
                       names=", ".join(crowd.id_keys)))
    return pid, params


def _own_set(x: Experiment, pid: str | None) -> str | None:
    """The set this browser joined with (its signed session cookie), if it is still theirs
    and belongs to the same participant id."""
    mine = session.get("evaluator")
    if not mine or len(mine) > 64:
        return None
    row = set_of_token(x.store, mine)
    if row is None or row.released_at is not None or (pid is not None and row.participant != pid):
        return None
    return mine


def _study_full(x: Experiment) -> Any:
    """No free set: the configured redirect (Prolific's "no places" return link), else a
    page with the configured code."""
    crowd = x.cfg.crowd
    assert crowd is not None
    if crowd.full_redirect_url:
        return redirect(crowd.full_redirect_url.replace("{code}", crowd.full_code), 303)
    return x.render("evaluator/full.html", status=409, code=crowd.full_code)


@evaluator_blueprint.get("/join/<jtoken>")
def join_page(jtoken: str) -> Any:
    """The open sign-up link's page (404 unless the study has one); the same browser coming
    back goes straight to its trials.

    Examples
    --------
    >>> from nlgeval.experiment.sandbox import example_app
    >>> with example_app() as (app, made):
    ...     c = app.test_client()
    ...     token = made.evaluators["token"].iloc[0]
    ...     c.get("/join/not-the-token").status_code  # this study has no open link
    404
    """
    x = current_experiment()
    join_token_or_404(x, jtoken)
    pid, params = _participant(x)
    mine = _own_set(x, pid)
    if mine:
        return redirect(url_for("evaluator.page", token=mine), 303)
    return x.render("evaluator/join.html", jtoken=jtoken, params=params, csrf=x.csrf_token())


@evaluator_blueprint.post("/join/<jtoken>")
def join(jtoken: str) -> Any:
    """Hand out the next free trial set, in design order, so the Latin square's balance
    holds for every complete block of sets handed out. The browser that joined (its signed
    cookie), or the same participant id with the same platform session id, gets its own set
    back; the same id from another browser is refused (409), never given that set
    (:func:`~nlgeval.experiment.participants.claim_set`).

    Examples
    --------
    >>> from nlgeval.experiment.sandbox import example_app
    >>> with example_app() as (app, made):
    ...     c = app.test_client()
    ...     token = made.evaluators["token"].iloc[0]
    ...     c.post("/join/not-the-token", data={}).status_code
    404
    """
    x = current_experiment()
    join_token_or_404(x, jtoken)
    x.check_csrf()
    pid, params = _participant(x)
    token = _own_set(x, pid)
    if token is None:
        got = claim_set(x.store, x.cfg.crowd, pid=pid, params=params,  # type: ignore[arg-type]  # crowd set (_participant)
                        client=client_hash(x.secret, request.remote_addr or "?"))
        if got.refused == "taken":
            abort(409, x._("This participant id has already taken part from another browser. "
                           "Please continue in the browser where you started; if you cannot, "
                           "contact the researcher."))
        if got.refused == "ended":
            abort(409, x._("This participant id has already ended its participation in "
                           "this study."))
        if got.refused == "limit":
            abort(429, x._("Too many people have signed up from your network in a short "
                           "time. Please try again in a few minutes."))
        if got.token is None:
            return _study_full(x)
        token = got.token
    session["evaluator"] = token
    return redirect(url_for("evaluator.page", token=token), 303)


@evaluator_blueprint.get("/e/<token>")
def page(token: str) -> Any:
    """The evaluator's current step: introduction, trial, questionnaire or thank-you.

    Examples
    --------
    >>> from nlgeval.experiment.sandbox import example_app
    >>> with example_app() as (app, made):
    ...     c = app.test_client()
    ...     token = made.evaluators["token"].iloc[0]
    ...     r = c.get(f"/e/{token}")
    ...     r.status_code, "Start" in r.get_data(as_text=True)
    (200, True)
    """
    x = current_experiment()
    st = state_or_404(x, token)
    ev = st.ev
    if ev.started_at is None:
        return x.render("evaluator/intro.html", ev=ev, counts=st.counts(), csrf=x.csrf_token(),
                        intro=x.intro_html, instructions=x.instructions_html,
                        consent=x.consent_html, errors={})
    trial = st.current
    if trial is not None:
        return _render_trial(x, st, trial)
    if x.cfg.questionnaire and ev.answers is None:
        return x.render("evaluator/questionnaire.html", ev=ev, counts=st.counts(),
                        csrf=x.csrf_token(), values={}, errors={})
    if ev.finished_at is None:
        mark_finished(x.store, ev.id, x.now())
    return x.render("evaluator/thanks.html", ev=ev, thank_you=x.thank_you_html,
                    completion=_completion(x, st))


def _completion(x: Experiment, st: State) -> dict[str, Any] | None:
    """The completion code (study-wide, or the participant's own with ``participant_codes``)
    and redirect, shown after the last page; withheld (``held``) when the set was finished
    faster than ``min_trial_ms`` per trial."""
    crowd = x.cfg.crowd
    done = completion(x)
    if crowd is None or done is None:
        return done
    if too_fast(st.ev.started_at, [t.answered_at for t in st.trials], crowd.min_trial_ms):
        return {"held": x._("Your answers came in faster than the texts can be read, so no "
                            "completion code is shown. The researcher will review your "
                            "submission.")}
    if crowd.participant_codes:
        done["code"] = completion_code(x.secret, code_subject(*who(x.store, st.ev.id)))
        url = crowd.redirect_url
        done["url"] = url.replace("{code}", done["code"]) if url else ""
    return done


@evaluator_blueprint.post("/e/<token>/start")
def start(token: str) -> Any:
    """Start the trials (after consent, when the study asks for it); the first trial
    becomes current now.

    Examples
    --------
    >>> from nlgeval.experiment.sandbox import example_evaluator
    >>> with example_evaluator() as (c, token, csrf):  # the first evaluator's link, opened
    ...     c.post(f"/e/{token}/start", data={"csrf": csrf}).status_code
    ...     "Start" in c.get(f"/e/{token}").get_data(as_text=True)  # now on the first trial
    303
    False
    """
    x = current_experiment()
    x.check_csrf()
    st = state_or_404(x, token)
    here = url_for("evaluator.page", token=token)
    if st.ev.started_at is not None:
        return redirect(here, 303)
    early = intro_outcome(x, st)  # declined, incomplete, or screened out (outcomes.py)
    if early is not None:
        return early
    now = x.now()
    first = st.current
    start_trials(x.store, st.ev.id, first.id if first is not None else None, now,
                 consent_at=now if x.consent_html is not None else None)
    return redirect(here, 303)


@evaluator_blueprint.post("/e/<token>/trial/<int:trial_id>")
def submit_trial(token: str, trial_id: int) -> Any:
    """Store the answer to the current trial (once: a repeated POST just redirects) and
    make the next trial current, in one transaction.

    Examples
    --------
    >>> from nlgeval.experiment.sandbox import example_evaluator
    >>> with example_evaluator() as (c, token, csrf):  # the first evaluator's link, opened
    ...     c.post(f"/e/{token}/trial/{2**31}", data={"csrf": csrf}).status_code  # no such id
    404
    """
    x = current_experiment()
    x.check_csrf()
    if trial_id > MAX_ID:
        abort(404)
    # the state (with the current trial) is read BEFORE the claim below: if the posted
    # trial is still unanswered now, it was then too, so "not current" really means
    # "skipping ahead" and not "a concurrent duplicate just answered it"
    st = state_or_404(x, token)
    trial = next((t for t in st.trials if t.id == trial_id), None)
    if trial is None:
        abort(404)
    here = url_for("evaluator.page", token=token)
    if trial.answered_at is not None:  # double submit / back button: already saved
        return redirect(here, 303)
    current = st.current
    if st.ev.started_at is None or current is None or current.id != trial.id:
        abort(409, x._("That is not your current trial. Please continue from your personal "
                       "link."))
    scores, confirmed, comment, errors = parse_answers(x)
    if errors:
        return _render_trial(x, st, trial, dict(request.form), errors, status=422)
    now = x.now()
    shown_at = shown_time(x, trial.id, request.form.get("shown", ""))
    time_ms = None if shown_at is None else max(0, int((now - shown_at).total_seconds() * 1000))
    later = [t for t in st.trials if t.position > trial.position and t.answered_at is None]
    rows = [{"trial_id": trial.id, "criterion": name, "response": v,
             "confirmed": confirmed.get(name, False), "comment": comment.strip(),
             "time_ms": time_ms, "created_at": now} for name, v in scores.items()]
    save_answer(x.store, token, trial.id, later[0].id if later else None, rows, now=now,
                shown_at=shown_at, time_ms=time_ms, comment=comment.strip())
    return redirect(here, 303)


def _questionnaire_answers(x: Experiment) -> tuple[dict[str, str], dict[str, str]]:
    """The posted exit questionnaire: answers and the errors to show (an option the form
    does not offer is refused: 400)."""
    answers: dict[str, str] = {}
    errors: dict[str, str] = {}
    for q in x.cfg.questionnaire:
        v = request.form.get(f"q_{q.name}", "").strip()
        if not v:
            if q.required:
                errors[q.name] = x._("Please answer this question.")
            continue
        if q.type == "choice" and v not in q.options:
            abort(400, x._("Refused: %(why)s. Nothing was saved.",
                           why=f"{v[:100]!r} is not an option"))
        if q.type == "number":
            try:
                if not math.isfinite(float(v)):
                    raise ValueError
            except ValueError:
                errors[q.name] = x._("Please give a number.")
                continue
        answers[q.name] = v[:MAX_COMMENT]
    return answers, errors


@evaluator_blueprint.post("/e/<token>/questionnaire")
def submit_questionnaire(token: str) -> Any:
    """Store the exit questionnaire (once) and finish.

    Examples
    --------
    >>> from nlgeval.experiment.sandbox import example_evaluator
    >>> with example_evaluator() as (c, token, csrf):  # the first evaluator's link, opened
    ...     c.post(f"/e/{token}/questionnaire", data={"csrf": csrf}).status_code  # too early
    409
    """
    x = current_experiment()
    x.check_csrf()
    st = state_or_404(x, token)
    ev = st.ev
    here = url_for("evaluator.page", token=token)
    if ev.answers is not None:
        return redirect(here, 303)
    if st.current is not None or not x.cfg.questionnaire:
        abort(409, x._("The questionnaire comes after the trials."))
    answers, errors = _questionnaire_answers(x)
    if errors:
        return x.render("evaluator/questionnaire.html", status=422, ev=ev, counts=st.counts(),
                        csrf=x.csrf_token(), values=dict(request.form), errors=errors)
    save_questionnaire(x.store, ev.id, answers, x.now())
    return redirect(here, 303)
