"""The Start form's other endings (:mod:`nlgeval.experiment.platforms`): a participant who
does not consent, or whose screening answers screen them out, leaves with the platform's code
or redirect, and their trial set goes back to the pool (the record of who it was, with the
outcome, is kept on a released copy, as for an expired lease:
:func:`nlgeval.experiment.storage.leases.release_set`). Used by the evaluator's ``start`` route.
"""

from __future__ import annotations

from typing import Any

from flask import Response, abort, request, session

from nlgeval.experiment.loaded import Experiment
from nlgeval.experiment.platforms import outcome_page
from nlgeval.experiment.storage import utcnow
from nlgeval.experiment.storage.leases import end_with_outcome
from nlgeval.experiment.views import State

OUTCOMES = ("no_consent", "screened_out")


def end_participation(x: Experiment, st: State, outcome: str) -> Response:
    """Give the set back to the pool, keep who left and why (``outcome`` on the released
    copy) and show the outcome page with the configured code or redirect.

    Examples
    --------
    >>> from nlgeval.experiment.sandbox import example_app
    >>> from nlgeval.experiment.evaluator_forms import state_or_404
    >>> with example_app() as (app, made):
    ...     x = app.extensions["nlgeval_experiment"]["experiment"]
    ...     tok = made.evaluators["token"].iloc[0]
    ...     with app.test_request_context():
    ...         r = end_participation(x, state_or_404(x, tok), "no_consent")
    ...     r.status_code, app.test_client().get(f"/e/{tok}").status_code  # the link is spent
    (200, 404)
    """
    assert outcome in OUTCOMES
    end_with_outcome(x.store, st.ev.id, outcome, utcnow())
    if session.get("evaluator") == st.ev.token:
        session.pop("evaluator")
    crowd = x.cfg.crowd
    code, url = "", ""
    if crowd is not None and outcome == "no_consent":
        code, url = crowd.no_consent_code, crowd.no_consent_redirect_url
    elif crowd is not None:
        code, url = crowd.screened_out_code, crowd.screened_out_redirect_url
    return x.render("evaluator/outcome.html", outcome=outcome, done=outcome_page(code, url))


def intro_outcome(x: Experiment, st: State) -> Response | None:
    """The Start form checked: "I do not agree" ends the participation, a missing consent
    or screening answer shows the form again (422), an answer the screening does not accept
    ends it too; ``None`` when the trials may start.

    Examples
    --------
    >>> from nlgeval.experiment.sandbox import example_app
    >>> from nlgeval.experiment.evaluator_forms import state_or_404
    >>> with example_app() as (app, made):  # no consent, no screening: nothing to stop
    ...     x = app.extensions["nlgeval_experiment"]["experiment"]
    ...     with app.test_request_context(method="POST", data={}):
    ...         intro_outcome(x, state_or_404(x, made.evaluators["token"].iloc[0])) is None
    True
    """
    if x.consent_html is not None and request.form.get("decline") == "1":
        return end_participation(x, st, "no_consent")
    errors: dict[str, str] = {}
    if x.consent_html is not None and request.form.get("consent") != "1":
        errors["consent"] = x._("Please tick the box to agree before you start.")
    screening = x.cfg.crowd.screening if x.cfg.crowd is not None else ()
    answers: dict[str, Any] = {}
    for q in screening:
        v = request.form.get(f"s_{q.name}", "")
        if v == "":
            errors[f"s_{q.name}"] = x._("Please answer this question.")
        elif v not in q.options:
            abort(400, x._("Refused: %(why)s. Nothing was saved.",
                           why=f"{v[:100]!r} is not an option"))
        answers[q.name] = v
    if errors:
        return x.render("evaluator/intro.html", status=422, ev=st.ev, counts=st.counts(),
                        csrf=x.csrf_token(), intro=x.intro_html,
                        instructions=x.instructions_html, consent=x.consent_html,
                        errors=errors, values=dict(request.form))
    if any(not q.passes(answers[q.name]) for q in screening):
        return end_participation(x, st, "screened_out")
    return None
