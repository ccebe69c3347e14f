"""What the evaluator's routes (:mod:`nlgeval.experiment.evaluator`) read and check: the
evaluator's state, the texts of a trial, the signed "shown at" stamp, the posted trial form and
the open sign-up link's parameters. Each takes the experiment loaded by ``create_app``
(:class:`~nlgeval.experiment.loaded.Experiment`) and, where it reads the form, runs inside a
request.
"""

from __future__ import annotations

import hashlib
import hmac
import re
from datetime import UTC, datetime

from flask import abort, request

from nlgeval.experiment.loaded import MAX_COMMENT, Experiment
from nlgeval.experiment.modes import get_mode
from nlgeval.experiment.storage.answers import state_rows
from nlgeval.experiment.views import (
    BadForm,
    EvaluatorView,
    State,
    TrialView,
)

_PARAM_VALUE = re.compile(r"[\w\-.:@]{1,200}")


def state_or_404(x: Experiment, token: str) -> State:
    """The evaluator with this personal token and their trials, in one query (404 if none);
    what never changes about a trial comes from memory (``x.trials``).

    Examples
    --------
    >>> from nlgeval.experiment.loaded import load_experiment
    >>> from nlgeval.experiment.sandbox import example_study_folder
    >>> with example_study_folder() as made:
    ...     x = load_experiment(made.directory)
    ...     st = state_or_404(x, made.evaluators["token"].iloc[0])
    ...     st.ev.started_at is None, st.current.position
    ...     x.store.dispose()
    (True, 1)
    """
    if len(token) > 64:
        abort(404)
    rows = state_rows(x.store, token)
    if not rows:
        abort(404)
    r0 = rows[0]
    ev = EvaluatorView(r0.id, r0.token, r0.started_at, r0.finished_at, r0.answers)
    trials = [TrialView(*x.trials[r.tid], answered_at=r.answered_at)  # type: ignore[misc]  # cached fields stop before it
              for r in rows if r.tid is not None]
    trials.sort(key=lambda t: t.position)
    return State(ev, trials)


def sign_shown(x: Experiment, trial_id: int, ms: int) -> str:
    """The trial page's "shown at" stamp (epoch milliseconds), signed with the experiment's
    secret so that a client cannot shorten its time on task.

    Examples
    --------
    >>> from types import SimpleNamespace
    >>> stamp = sign_shown(SimpleNamespace(secret=b"k"), 7, 1700000000000)
    >>> stamp.split(".")[0], len(stamp.split(".")[1])
    ('1700000000000', 32)
    """
    mac = hmac.new(x.secret, f"{trial_id}:{ms}".encode(), hashlib.sha256).hexdigest()[:32]
    return f"{ms}.{mac}"


def shown_time(x: Experiment, trial_id: int, raw: str) -> datetime | None:
    """When the trial page was shown, from its signed stamp (a forged or missing stamp just
    leaves ``time_ms`` empty; time on task is kept server-side).

    Examples
    --------
    >>> from types import SimpleNamespace
    >>> x = SimpleNamespace(secret=b"k")
    >>> shown_time(x, 7, sign_shown(x, 7, 1700000000000))
    datetime.datetime(2023, 11, 14, 22, 13, 20)
    >>> shown_time(x, 8, sign_shown(x, 7, 1700000000000)) is None  # another trial's stamp
    True
    """
    ms, _sep, _mac = raw.partition(".")
    if not (ms.isascii() and ms.isdigit()) or len(ms) > 15:
        return None
    if not hmac.compare_digest(sign_shown(x, trial_id, int(ms)), raw):
        return None
    return datetime.fromtimestamp(int(ms) / 1000, UTC).replace(tzinfo=None)


def parse_answers(x: Experiment) -> tuple[dict[str, float], dict[str, bool], str, dict[str, str]]:
    """The posted trial form, parsed by the experiment's mode
    (:meth:`nlgeval.experiment.modes.Mode.parse_form`): scores and VAS confirmations per
    criterion, the comment and the errors to show (a value the form could not have produced
    is refused: 400).

    Examples
    --------
    >>> from types import SimpleNamespace
    >>> from flask import Flask
    >>> x = SimpleNamespace(_=lambda m, **kw: m % kw,
    ...                     cfg=SimpleNamespace(mode="triangle", comments=False))
    >>> with Flask("demo").test_request_context(method="POST", data={"odd": "2"}):
    ...     parse_answers(x)
    ({'odd_one_out': 2.0}, {}, '', {})
    """
    _, cfg = x._, x.cfg
    errors: dict[str, str] = {}
    try:
        scores, confirmed = get_mode(cfg.mode).parse_form(x, errors)
    except BadForm as exc:
        abort(400, _("Refused: %(why)s. Nothing was saved.", why=str(exc)))
    comment = request.form.get("comment", "") if cfg.comments else ""
    if len(comment) > MAX_COMMENT:
        errors["comment"] = _("Please keep the comment under %(n)s characters.", n=MAX_COMMENT)
    return scores, confirmed, comment, errors


def completion(x: Experiment) -> dict[str, str] | None:
    """The completion code and the redirect URL with it (crowd studies; ``None`` otherwise).

    Examples
    --------
    >>> from types import SimpleNamespace
    >>> crowd = SimpleNamespace(redirect_url="https://example.org/done?cc={code}")
    >>> completion(SimpleNamespace(cfg=SimpleNamespace(crowd=crowd),
    ...                            meta={"completion_code": "C0DE42"}))
    {'code': 'C0DE42', 'url': 'https://example.org/done?cc=C0DE42'}
    """
    if x.cfg.crowd is None:
        return None
    code = x.meta.get("completion_code", "")
    url = x.cfg.crowd.redirect_url.replace("{code}", code) if x.cfg.crowd.redirect_url else ""
    return {"code": code, "url": url}


def join_token_or_404(x: Experiment, jtoken: str) -> None:
    """404 unless the study has an open sign-up link and ``jtoken`` is its token.

    Examples
    --------
    >>> from types import SimpleNamespace
    >>> crowd = SimpleNamespace(open_link=True)
    >>> x = SimpleNamespace(cfg=SimpleNamespace(crowd=crowd), meta={"join_token": "abc"})
    >>> join_token_or_404(x, "abc")  # no error
    """
    have = x.meta.get("join_token", "")
    crowd = x.cfg.crowd
    if (crowd is None or not crowd.open_link or not have
            or not hmac.compare_digest(jtoken.encode(), have.encode())):
        abort(404)


def captured_params(x: Experiment) -> dict[str, str]:
    """The configured URL parameters (Prolific/MTurk ids) of the request, well-formed values
    only.

    Examples
    --------
    >>> from types import SimpleNamespace
    >>> from flask import Flask
    >>> x = SimpleNamespace(cfg=SimpleNamespace(crowd=SimpleNamespace(
    ...     params=["PROLIFIC_PID", "STUDY_ID"])))
    >>> with Flask("demo").test_request_context("/?PROLIFIC_PID=p1&STUDY_ID=<bad>&evil=1"):
    ...     captured_params(x)
    {'PROLIFIC_PID': 'p1'}
    """
    assert x.cfg.crowd is not None
    out = {}
    for p in x.cfg.crowd.params:
        v = (request.values.get(p) or "").strip()
        if v and _PARAM_VALUE.fullmatch(v):
            out[p] = v
    return out
