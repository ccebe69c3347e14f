"""What the evaluator pages work with: an evaluator's state (their row and trials, read in one
query per request by :mod:`nlgeval.experiment.evaluator`, with the prebuilt statements here),
and the checks of slider values a browser can send."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from typing import Any, cast

from sqlalchemy import DateTime, Table, bindparam, select, text

from nlgeval.experiment.config import CriterionConfig, format_value
from nlgeval.experiment.storage import Evaluator, Judgement, Trial

_NUMBER = re.compile(r"-?[0-9]{1,15}(?:\.[0-9]{1,12})?")

# The hot path's statements, built once on the Core tables: building and compiling them per
# request was a third of a request's CPU time when profiled (see Store's docstring).
# the declarative classes' tables (typed FromClause, which has no insert/update)
_T, _J, _E = (cast(Table, c.__table__) for c in (Trial, Judgement, Evaluator))
STATE_QUERY = (
    select(_E.c.id, _E.c.token, _E.c.started_at, _E.c.finished_at, _E.c.answers,
           _T.c.id.label("tid"), _T.c.answered_at)
    .outerjoin(_T, _T.c.evaluator_id == _E.c.id)
    .where(_E.c.token == bindparam("q_token"))
)
# the evaluator who may answer: the one holding the token now (a set reset by the researcher
# or returned to the pool after its lease gets a new token, so a late answer sent with the
# old one cannot land in the next participant's set)
_OWNER = select(_E.c.id).where(_E.c.token == bindparam("q_token")).scalar_subquery()
CLAIM = (  # the conditional UPDATE that makes an answer idempotent
    _T.update().where(_T.c.id == bindparam("q_id"), _T.c.answered_at.is_(None),
                      _T.c.evaluator_id == _OWNER)
    .values(answered_at=bindparam("q_now"), shown_at=bindparam("q_shown"))
)
MAKE_CURRENT = (
    _T.update().where(_T.c.id == bindparam("q_id"), _T.c.available_at.is_(None))
    .values(available_at=bindparam("q_now"))
)


_ANSWER_PG: dict[int, Any] = {}


def answer_statement_pg(n: int) -> Any:
    """PostgreSQL: a trial's answer with ``n`` criteria as ONE statement (data-modifying
    ``WITH``): claim the trial (``answered_at IS NULL``), insert the judgements only if the
    claim succeeded, and make the next trial current; it returns how many trials it claimed
    (0 or 1). Run in autocommit mode it is its own transaction -- one round trip instead of
    five (BEGIN, claim, insert, next trial, COMMIT), each of which gives the GIL away -- and
    just as atomic: a unique violation (a concurrent duplicate) undoes all of it. Built once
    per ``n`` (SQLite keeps :data:`CLAIM` and :data:`MAKE_CURRENT` in a group commit).

    Examples
    --------
    >>> sql = str(answer_statement_pg(2))
    >>> sql.count("INSERT INTO nlgeval_judgements"), ":r1" in sql, ":r2" in sql
    (1, True, False)
    """
    if n not in _ANSWER_PG:
        rows = ", ".join(f"(CAST(:c{k} AS VARCHAR), CAST(:r{k} AS DOUBLE PRECISION), "
                         f"CAST(:f{k} AS BOOLEAN))" for k in range(n))
        _ANSWER_PG[n] = text(f"""
            WITH claim AS (
                UPDATE nlgeval_trials SET answered_at = :q_now, shown_at = :q_shown
                WHERE id = :q_id AND answered_at IS NULL AND evaluator_id =
                    (SELECT e.id FROM nlgeval_evaluators e WHERE e.token = :q_token)
                RETURNING id),
            ins AS (
                INSERT INTO nlgeval_judgements
                    (trial_id, criterion, response, confirmed, comment, time_ms, created_at)
                SELECT claim.id, v.c, v.r, v.f, CAST(:q_comment AS TEXT),
                       CAST(:q_time_ms AS INTEGER), CAST(:q_now AS TIMESTAMP)
                FROM claim, (VALUES {rows}) AS v (c, r, f)),
            nxt AS (
                UPDATE nlgeval_trials SET available_at = :q_now
                WHERE id = :q_next AND available_at IS NULL
                  AND EXISTS (SELECT 1 FROM claim))
            SELECT count(*) FROM claim""").bindparams(
            bindparam("q_now", type_=DateTime), bindparam("q_shown", type_=DateTime))
    return _ANSWER_PG[n]


class BadForm(Exception):
    """A value the form could not have produced (tampering): refused with 400.

    Examples
    --------
    >>> str(BadForm("'7' is not a point of the scale of 'quality'"))
    "'7' is not a point of the scale of 'quality'"
    """


@dataclass(frozen=True)
class TrialView:
    """A trial as pages need it: what never changes after ``create`` (cached at start-up)
    plus whether it is answered (read per request).

    Examples
    --------
    >>> TrialView(7, 2, False, "i1", "A", None, None, None).answered_at is None
    True
    """

    id: int
    position: int
    practice: bool
    item: str
    system: str
    system_b: str | None
    details: dict[str, Any] | None
    qc_kind: str | None
    answered_at: datetime | None = None


@dataclass(frozen=True)
class EvaluatorView:
    """An evaluator's row as pages need it (read per request).

    Examples
    --------
    >>> EvaluatorView(1, "tok", None, None, None).started_at is None
    True
    """

    id: int
    token: str
    started_at: datetime | None
    finished_at: datetime | None
    answers: dict[str, Any] | None


@dataclass
class State:
    """An evaluator and their trials (in order), read together in one query.

    Examples
    --------
    >>> from datetime import datetime
    >>> done = TrialView(1, 1, True, "p1", "A", None, None, None, datetime(2026, 1, 1))
    >>> todo = TrialView(2, 2, False, "i1", "B", None, None, None)
    >>> st = State(EvaluatorView(1, "tok", None, None, None), [done, todo])
    >>> st.current.id, st.counts()
    (2, {'total': 1, 'remaining': 1, 'practice_total': 1, 'practice_done': 1})
    """

    ev: EvaluatorView
    trials: list[TrialView]

    @property
    def current(self) -> TrialView | None:
        return next((t for t in self.trials if t.answered_at is None), None)

    def counts(self) -> dict[str, int]:
        main = [t for t in self.trials if not t.practice]
        prac = [t for t in self.trials if t.practice]
        return {
            "total": len(main), "remaining": sum(t.answered_at is None for t in main),
            "practice_total": len(prac),
            "practice_done": sum(t.answered_at is not None for t in prac),
        }


def slider_value(raw: str, c: CriterionConfig) -> float:
    """The value of a visual analogue scale as the browser's ``<input type=range>`` can send
    it: a plain decimal number within ``[min, max]`` on the ``min + k * step`` grid.

    Examples
    --------
    >>> from nlgeval.experiment.config import CriterionConfig
    >>> c = CriterionConfig("fluency", "How fluent?", "", "vas", min=0, max=100, step=1,
    ...                     left_label="not", right_label="very")
    >>> slider_value("73", c)
    73.0
    >>> slider_value("50.0000000001", c)
    Traceback (most recent call last):
    ...
    nlgeval.experiment.views.BadForm: '50.0000000001' is not a position of the slider ...
    """
    if not _NUMBER.fullmatch(raw):
        raise BadForm(f"{raw!r} is not a number on the slider of '{c.name}'")
    v = float(raw)
    if not math.isfinite(v) or v < c.min or v > c.max:
        raise BadForm(f"{raw!r} is outside the slider of '{c.name}'")
    # exactly on the grid, in decimal arithmetic (browsers step in decimals, and a float
    # tolerance let "50.0000000001" through)
    k = (Decimal(raw) - Decimal(repr(c.min))) / Decimal(repr(c.step))
    if k != k.to_integral_value():
        raise BadForm(f"{raw!r} is not a position of the slider of '{c.name}' (step "
                      f"{format_value(c.step)})")
    return v


def slider_start(c: CriterionConfig) -> str:
    """Where an untouched slider stands: the grid point nearest the middle.

    Examples
    --------
    >>> from nlgeval.experiment.config import CriterionConfig
    >>> c = CriterionConfig("fluency", "How fluent?", "", "vas", min=0, max=100, step=1,
    ...                     left_label="not", right_label="very")
    >>> slider_start(c)
    '50'
    """
    k = round((c.max - c.min) / 2 / c.step)
    return format_value(c.min + k * c.step)
