"""The open sign-up link's writes and reads: claiming the next free trial set for a participant
(serialised: a group-commit job on SQLite, under an advisory lock on PostgreSQL), giving idle
sets back to the pool (a kept, released copy takes their answers) and recording why a
participant left. The rules themselves are described in :mod:`nlgeval.experiment.participants`.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import Connection, Row, func, select, text, update
from sqlalchemy.orm import Session

from nlgeval.experiment.storage.engine import ADVISORY_KEY, Store
from nlgeval.experiment.storage.schema import Evaluator, Judgement, Trial


@dataclass(frozen=True)
class Claim:
    """The outcome of a join: the set's ``token``, or why there is none (``refused``:
    ``"taken"`` -- the id is already in a set, in another browser; ``"ended"`` -- the id
    declined consent or was screened out before; ``"limit"`` -- too many joins from this
    address; ``"full"`` -- no free set).

    Examples
    --------
    >>> Claim(token="abc").refused is None, Claim(refused="full").token is None
    (True, True)
    """

    token: str | None = None
    refused: str | None = None


@dataclass(frozen=True)
class JoinRequest:
    """Who asks for a set: the participant id (``None``: anonymous), the platform session
    id they came with and the keys it may be under, the captured URL parameters, the client's
    pseudonym, and the join limit (``limit`` sets per ``window_minutes``; 0: none).

    Examples
    --------
    >>> JoinRequest("p1", "s1", ("SESSION_ID",), {}, "c1").limit
    0
    """

    pid: str | None
    session_id: str | None
    session_keys: tuple[str, ...]
    params: dict[str, str]
    client: str
    limit: int = 0
    window_minutes: float = 0


def _seen_before(c: Connection, req: JoinRequest) -> Claim | None:
    """The participant's set if they are known (recognised only by the platform session id
    they joined with: the cookie was checked before), "taken" if known without it, "ended"
    if they declined consent or were screened out (no second try with the same id)."""
    row = c.execute(select(Evaluator.token, Evaluator.params).where(
        Evaluator.participant == req.pid, Evaluator.released_at.is_(None))).first()
    if row is None:
        ended = c.execute(select(Evaluator.id).where(
            Evaluator.participant == req.pid, Evaluator.outcome.is_not(None)).limit(1)).first()
        return Claim(refused="ended") if ended is not None else None
    had = row.params or {}
    if req.session_id and any(had.get(k) == req.session_id for k in req.session_keys):
        return Claim(token=row.token)
    return Claim(refused="taken")


def _free_set(c: Connection) -> Any:
    return c.execute(
        select(Evaluator.id, Evaluator.token)
        .where(Evaluator.claimed_at.is_(None), Evaluator.started_at.is_(None),
               Evaluator.released_at.is_(None))
        .order_by(Evaluator.id).limit(1)).first()


def claim_job(req: JoinRequest, now: datetime) -> Callable[[Connection], Claim]:
    """The claim as a job for :meth:`~nlgeval.experiment.storage.Store.commit`: on SQLite,
    joins that arrive together are run one after another in one transaction and share its
    ``fsync`` (group commit); on PostgreSQL an advisory lock serialises them.

    Examples
    --------
    >>> from nlgeval.experiment.sandbox import example_experiment
    >>> from nlgeval.experiment.storage import utcnow
    >>> with example_experiment() as (store, cfg):
    ...     store.commit(claim_job(JoinRequest("p1", "s1", ("SESSION_ID",),
    ...                                        {"SESSION_ID": "s1"}, "c1"), utcnow()))
    ...     store.commit(claim_job(JoinRequest("p1", None, (), {}, "c2"), utcnow()))
    Claim(token=..., refused=None)
    Claim(token=None, refused='taken')
    """

    def job(c: Connection) -> Claim:
        if c.dialect.name == "postgresql":
            c.execute(text("SELECT pg_advisory_xact_lock(:k)"), {"k": ADVISORY_KEY})
        if req.pid is not None:
            seen = _seen_before(c, req)
            if seen is not None:
                return seen
        if req.limit:
            since = now - timedelta(minutes=req.window_minutes)
            n = c.execute(select(func.count(Evaluator.id)).where(
                Evaluator.claimed_by == req.client, Evaluator.claimed_at >= since)).scalar_one()
            if n >= req.limit:
                return Claim(refused="limit")
        free = _free_set(c)
        if free is None:
            return Claim(refused="full")
        c.execute(update(Evaluator).where(Evaluator.id == free.id).values(
            claimed_at=now, participant=req.pid or f"anon-{secrets.token_hex(6)}",
            params=req.params or None, claimed_by=req.client))
        return Claim(token=free.token)

    return job


def claim(store: Store, req: JoinRequest, now: datetime) -> Claim:
    """Run :func:`claim_job` as a write transaction (grouped with concurrent joins on SQLite).

    Examples
    --------
    >>> from nlgeval.experiment.sandbox import example_experiment
    >>> from nlgeval.experiment.storage import utcnow
    >>> with example_experiment() as (store, cfg):
    ...     claim(store, JoinRequest(None, None, (), {}, "c1", limit=1, window_minutes=5), utcnow())
    ...     claim(store, JoinRequest(None, None, (), {}, "c1", limit=1, window_minutes=5), utcnow())
    Claim(token=..., refused=None)
    Claim(token=None, refused='limit')
    """
    return store.commit(claim_job(req, now))


def expired_leases(s: Session, before: datetime) -> list[int]:
    """Sets handed out by the sign-up link, not finished, whose last progress (claimed,
    started, last answer) was before ``before``.

    Examples
    --------
    >>> from nlgeval.experiment.sandbox import example_experiment
    >>> from nlgeval.experiment.storage import Evaluator, utcnow
    >>> with example_experiment() as (store, cfg), store.read() as s:
    ...     expired_leases(s, utcnow())  # nothing handed out yet
    []
    """
    last = (select(Trial.evaluator_id, func.max(Trial.answered_at).label("answered"))
            .group_by(Trial.evaluator_id).subquery())
    rows = s.execute(
        select(Evaluator.id, Evaluator.claimed_at, Evaluator.started_at, last.c.answered)
        .outerjoin(last, last.c.evaluator_id == Evaluator.id)
        .where(Evaluator.claimed_at.is_not(None), Evaluator.finished_at.is_(None),
               Evaluator.released_at.is_(None))).all()
    return [r.id for r in rows
            if max(t for t in (r.claimed_at, r.started_at, r.answered) if t) < before]


def release_expired(store: Store, before: datetime, now: datetime) -> None:
    """Give every set whose lease expired (no progress since ``before``) back to the pool,
    in one serialised write transaction.

    Examples
    --------
    >>> from nlgeval.experiment.sandbox import example_experiment
    >>> from nlgeval.experiment.storage import Evaluator, utcnow
    >>> with example_experiment() as (store, cfg):
    ...     release_expired(store, utcnow(), utcnow())  # nothing handed out: nothing to do
    """
    with store.write() as s:
        store.serialize(s)
        for ev_id in expired_leases(s, before):
            release_set(s, ev_id, now)


def release_set(s: Session, ev_id: int, now: datetime) -> int:
    """Give set ``ev_id`` back to the pool: a kept copy of the evaluator (``~released``
    added to the name, ``released_at`` set, a new unusable token) takes over its answered
    trials with their judgements; the set itself starts afresh with a new personal link.
    Returns the kept copy's id.

    Examples
    --------
    >>> from nlgeval.experiment.sandbox import example_experiment
    >>> from nlgeval.experiment.storage import Evaluator, utcnow
    >>> with example_experiment() as (store, cfg):
    ...     with store.write() as s:
    ...         _ = release_set(s, 1, utcnow())
    ...     with store.read() as s:
    ...         [(e.name, e.released_at is not None) for e in s.query(Evaluator)][-1]
    ('1~released', True)
    """
    ev = s.get(Evaluator, ev_id)
    assert ev is not None
    n = s.execute(select(func.count(Evaluator.id)).where(
        Evaluator.name.like(f"{ev.name}~released%"))).scalar_one()
    kept = Evaluator(
        name=f"{ev.name}~released" + (f"{n + 1}" if n else ""),
        token=secrets.token_urlsafe(18), created_at=ev.created_at, started_at=ev.started_at,
        answers=ev.answers, claimed_at=ev.claimed_at, participant=ev.participant,
        params=ev.params, consent_at=ev.consent_at, claimed_by=ev.claimed_by,
        released_at=now)
    s.add(kept)
    s.flush()
    done = s.execute(select(Trial).where(Trial.evaluator_id == ev_id,
                                         Trial.answered_at.is_not(None))).scalars().all()
    for t in done:
        copy = Trial(evaluator_id=kept.id, position=t.position, practice=t.practice,
                     item=t.item, system=t.system, system_b=t.system_b, details=t.details,
                     shown_at=t.shown_at, available_at=t.available_at, qc_kind=t.qc_kind,
                     answered_at=t.answered_at)
        s.add(copy)
        s.flush()
        s.execute(update(Judgement).where(Judgement.trial_id == t.id)
                  .values(trial_id=copy.id))
    s.execute(update(Trial).where(Trial.evaluator_id == ev_id)
              .values(answered_at=None, shown_at=None, available_at=None))
    s.execute(update(Evaluator).where(Evaluator.id == ev_id).values(
        token=secrets.token_urlsafe(18), started_at=None, finished_at=None, answers=None,
        claimed_at=None, participant=None, params=None, consent_at=None, claimed_by=None))
    return kept.id


def end_with_outcome(store: Store, ev_id: int, outcome: str, now: datetime) -> None:
    """Give set ``ev_id`` back to the pool (:func:`release_set`) and keep why its participant
    left (``outcome``) on the released copy, in one serialised write transaction.

    Examples
    --------
    >>> from nlgeval.experiment.sandbox import example_experiment
    >>> from nlgeval.experiment.storage import Evaluator, utcnow
    >>> with example_experiment() as (store, cfg):
    ...     end_with_outcome(store, 1, "no_consent", utcnow())
    ...     with store.read() as s:
    ...         [(e.name, e.outcome) for e in s.query(Evaluator)][-1]
    ('1~released', 'no_consent')
    """
    with store.write() as s:
        store.serialize(s)
        kept = release_set(s, ev_id, now)
        s.execute(update(Evaluator).where(Evaluator.id == kept).values(outcome=outcome))


def finished_sets(store: Store) -> tuple[
        list[Row[int, str, str | None, datetime | None, datetime | None]],
        dict[int, list[datetime | None]]]:
    """The evaluators who finished (``id, name, participant, started_at, finished_at``, in
    id order) and every evaluator's trials' answer times by evaluator id.

    Examples
    --------
    >>> from nlgeval.experiment.sandbox import example_experiment
    >>> with example_experiment() as (store, cfg):
    ...     finished_sets(store)[0]
    []
    """
    with store.read() as s:
        evs = list(s.execute(select(Evaluator.id, Evaluator.name, Evaluator.participant,
                                    Evaluator.started_at, Evaluator.finished_at)
                             .where(Evaluator.finished_at.is_not(None))
                             .order_by(Evaluator.id)).all())
        answered: dict[int, list[datetime | None]] = {}
        for ev_id, at in s.execute(select(Trial.evaluator_id, Trial.answered_at)):
            answered.setdefault(ev_id, []).append(at)
    return evs, answered
