"""The evaluator's hot path: their state (their row and trials, one query per request), the
start of their trials, a trial's answer, the exit questionnaire and the finish.

The statements are SQLAlchemy Core, built once: building and compiling them per request was a
third of a request's CPU time when profiled (see :class:`~nlgeval.experiment.storage.Store`).
A trial's answer, the claim that makes it idempotent and the server-side "became current" time
of the next trial are written in one transaction (a group commit on SQLite; one statement on
PostgreSQL).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any, cast

from sqlalchemy import Connection, DateTime, Row, Table, bindparam, select, text, update
from sqlalchemy.exc import IntegrityError

from nlgeval.experiment.storage.engine import AnyRow, Store
from nlgeval.experiment.storage.schema import Evaluator, Judgement, Trial

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


def state_rows(store: Store, token: str) -> Sequence[AnyRow]:
    """The evaluator holding ``token`` joined with their trials, one row per trial:
    ``id, token, started_at, finished_at, answers, tid, answered_at`` (no rows: no such token).

    Examples
    --------
    >>> from nlgeval.experiment.sandbox import example_experiment
    >>> with example_experiment() as (store, cfg):
    ...     len(state_rows(store, "no such token"))
    0
    """
    with store.connect() as c:
        return c.execute(STATE_QUERY, {"q_token": token}).all()


def set_of_token(store: Store, token: str) -> Row[str | None, datetime | None] | None:
    """``participant, released_at`` of the set whose personal token is ``token``, if any."""
    with store.connect() as c:
        return c.execute(select(Evaluator.participant, Evaluator.released_at)
                         .where(Evaluator.token == token)).first()


def who(store: Store, ev_id: int) -> tuple[str | None, str]:
    """``(participant, name)`` of evaluator ``ev_id``."""
    with store.connect() as c:
        row = c.execute(select(Evaluator.participant, Evaluator.name)
                        .where(Evaluator.id == ev_id)).one()
    return row[0], row[1]


def start_trials(store: Store, ev_id: int, first_trial: int | None, now: datetime,
                 consent_at: datetime | None) -> bool:
    """Mark evaluator ``ev_id`` started (once) and make ``first_trial`` current; whether this
    call started them (a repeated Start changes nothing)."""
    with store.write() as s:
        started = s.execute(  # type: ignore[attr-defined]  # DML: a CursorResult (rowcount)
            update(Evaluator).where(Evaluator.id == ev_id, Evaluator.started_at.is_(None))
            .values(started_at=now, consent_at=consent_at)
        ).rowcount
        if started and first_trial is not None:
            s.execute(update(Trial).where(Trial.id == first_trial, Trial.available_at.is_(None))
                      .values(available_at=now))
    return bool(started)


def save_answer(store: Store, token: str, trial_id: int, next_id: int | None,
                rows: list[dict[str, Any]], *, now: datetime, shown_at: datetime | None,
                time_ms: int | None, comment: str) -> None:
    """Store a trial's judgements (``rows``: one per criterion, the judgements table's
    columns) if the trial is still unanswered and ``token`` still holds its set, and make
    trial ``next_id`` current, in one transaction; a concurrent duplicate that loses the race
    stores nothing (the claim or the unique constraint stops it)."""
    try:
        if store.engine.dialect.name == "postgresql":  # one statement, one round trip
            params: dict[str, Any] = {"q_id": trial_id, "q_now": now, "q_shown": shown_at,
                                      "q_token": token, "q_next": next_id,
                                      "q_comment": comment, "q_time_ms": time_ms}
            for k, r in enumerate(rows):
                params.update({f"c{k}": r["criterion"], f"r{k}": r["response"],
                               f"f{k}": r["confirmed"]})
            store.execute_alone(answer_statement_pg(len(rows)), params)
            return

        def save(c: Connection) -> None:
            if c.execute(CLAIM, {"q_id": trial_id, "q_now": now, "q_shown": shown_at,
                                 "q_token": token}).rowcount:
                c.execute(_J.insert(), rows)
                if next_id is not None:  # the next trial becomes current now
                    c.execute(MAKE_CURRENT, {"q_id": next_id, "q_now": now})

        store.commit(save)
    except IntegrityError:
        pass  # a concurrent duplicate lost the race: the judgement is already stored


def mark_finished(store: Store, ev_id: int, now: datetime) -> None:
    """Record when evaluator ``ev_id`` finished (once)."""
    with store.write() as s:
        s.execute(update(Evaluator).where(Evaluator.id == ev_id, Evaluator.finished_at.is_(None))
                  .values(finished_at=now))


def save_questionnaire(store: Store, ev_id: int, answers: dict[str, str], now: datetime
                       ) -> None:
    """Store the exit questionnaire of evaluator ``ev_id`` (once) and finish them."""
    with store.write() as s:
        s.execute(update(Evaluator).where(Evaluator.id == ev_id, Evaluator.answers.is_(None))
                  .values(answers=answers, finished_at=now))
