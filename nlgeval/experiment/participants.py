"""Who is who in a crowd study: the open sign-up link's participants, their trial sets, the
lease on a set and the completion codes.

A platform id (Prolific's ``PROLIFIC_PID``, MTurk's ``workerId``) is not a secret: it shows
up in screenshots, forum posts and the researcher's own exports. So a set is never handed to
whoever presents a known id. A returning participant is recognised by what only their browser
has -- the signed session cookie set when they first joined -- or by the platform's session id
(``SESSION_ID``, ``assignmentId``) together with the participant id; a second browser with the
same id and neither gets a page saying so, never the first one's set (:func:`claim_set`). A
link without the participant parameter is refused when it carries other platform parameters
(a broken platform link), and otherwise, for open links without a platform, makes an
anonymous participant with an id of its own; people are never merged.

A set handed out but not progressing for ``lease_minutes`` goes back to the pool: its answers
so far are moved to a kept copy of the set (``released_at`` set, ``~released`` added to the
evaluator's name, so exports mark them), and the set itself starts afresh under a new link
(:func:`release_set`). Each client address may take ``join_limit`` sets per
``join_window_minutes`` (counted in the database, across server processes, by an HMAC of the
address, so no address is stored).

Per-participant completion codes are an HMAC of the participant (or evaluator) id under the
experiment's signing key (:func:`completion_code`): the researcher can list them
(``nlgeval experiment status DIR --json``) and check each submission, and a code seen on one
submission is useless for another.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import Connection, func, select, text, update
from sqlalchemy.orm import Session

from nlgeval.experiment.config import CrowdConfig
from nlgeval.experiment.storage import (
    ADVISORY_KEY,
    Evaluator,
    Judgement,
    Store,
    Trial,
    utcnow,
)


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


def client_hash(secret: bytes, address: str) -> str:
    """A pseudonym of a client address for the join limit (the address is not stored).

    Examples
    --------
    >>> len(client_hash(b"k", "10.0.0.1")), client_hash(b"k", "a") == client_hash(b"k", "b")
    (32, False)
    """
    return hmac.new(secret, b"client:" + address.encode(), hashlib.sha256).hexdigest()[:32]


def _seen_before(s: Session | Connection, pid: str, session_id: str | None, keys: tuple[str, ...]
                 ) -> Claim | None:
    """The participant's set if they are known (recognised only by the platform session id
    they joined with: the cookie was checked before), "taken" if known without it, "ended"
    if they declined consent or were screened out (no second try with the same id)."""
    row = s.execute(select(Evaluator.token, Evaluator.params).where(
        Evaluator.participant == pid, Evaluator.released_at.is_(None))).first()
    if row is None:
        ended = s.execute(select(Evaluator.id).where(
            Evaluator.participant == pid, Evaluator.outcome.is_not(None)).limit(1)).first()
        return Claim(refused="ended") if ended is not None else None
    had = row.params or {}
    if session_id and any(had.get(k) == session_id for k in keys):
        return Claim(token=row.token)
    return Claim(refused="taken")


def _free_set(s: Session | Connection) -> Any:
    return s.execute(
        select(Evaluator.id, Evaluator.token)
        .where(Evaluator.claimed_at.is_(None), Evaluator.started_at.is_(None),
               Evaluator.released_at.is_(None))
        .order_by(Evaluator.id).limit(1)).first()


def claim_set(
    store: Store, crowd: CrowdConfig, *, pid: str | None, params: dict[str, str],
    client: str, now: datetime | None = None,
) -> Claim:
    """Hand out a trial set (see the module docstring): the participant's own set when
    they are recognised by their platform session id, a refusal when their id already holds
    a set, else the next free set in design order (after returning expired leases to the
    pool), unless this client took ``join_limit`` sets in the window. ``pid=None`` makes an
    anonymous participant. Each attempt is one serialised write transaction (a group-commit
    job on SQLite, under an advisory lock on PostgreSQL; :func:`_claim_job`), so concurrent
    joins (other threads, other server processes) cannot take one set twice or give one id
    two sets.

    Examples
    --------
    >>> from nlgeval.experiment.config import CrowdConfig
    >>> from nlgeval.experiment.sandbox import example_experiment
    >>> with example_experiment() as (store, cfg):
    ...     crowd = CrowdConfig()
    ...     first = claim_set(store, crowd, pid="p1", params={"PROLIFIC_PID": "p1",
    ...                       "SESSION_ID": "s1"}, client="c1")
    ...     again = claim_set(store, crowd, pid="p1", params={"PROLIFIC_PID": "p1",
    ...                       "SESSION_ID": "s1"}, client="c2")
    ...     other = claim_set(store, crowd, pid="p1", params={"PROLIFIC_PID": "p1"},
    ...                       client="c3")
    ...     first.token == again.token, other
    (True, Claim(token=None, refused='taken'))
    """
    now = now or utcnow()
    got = store.commit(_claim_job(crowd, pid, params, client, now))
    if got.refused == "full" and crowd.lease_minutes:  # return idle sets, then try again
        with store.write() as s:
            store.serialize(s)
            for ev_id in expired_leases(s, now - timedelta(minutes=crowd.lease_minutes)):
                release_set(s, ev_id, now)
        got = store.commit(_claim_job(crowd, pid, params, client, now))
    return got


def _claim_job(crowd: CrowdConfig, pid: str | None, params: dict[str, str], client: str,
               now: datetime) -> Callable[[Connection], Claim]:
    """The claim as a job for :meth:`~nlgeval.experiment.storage.Store.commit`: on SQLite,
    joins that arrive together are run one after another in one transaction and share its
    ``fsync`` (group commit); on PostgreSQL an advisory lock serialises them."""
    session_id = next((params[k] for k in crowd.session_keys if params.get(k)), None)

    def job(c: Connection) -> Claim:
        if c.dialect.name == "postgresql":
            c.execute(text("SELECT pg_advisory_xact_lock(:k)"), {"k": ADVISORY_KEY})
        if pid is not None:
            seen = _seen_before(c, pid, session_id, crowd.session_keys)
            if seen is not None:
                return seen
        if crowd.join_limit:
            since = now - timedelta(minutes=crowd.join_window_minutes)
            n = c.execute(select(func.count(Evaluator.id)).where(
                Evaluator.claimed_by == client, Evaluator.claimed_at >= since)).scalar_one()
            if n >= crowd.join_limit:
                return Claim(refused="limit")
        free = _free_set(c)
        if free is None:
            return Claim(refused="full")
        c.execute(update(Evaluator).where(Evaluator.id == free.id).values(
            claimed_at=now, participant=pid or f"anon-{secrets.token_hex(6)}",
            params=params or None, claimed_by=client))
        return Claim(token=free.token)

    return job


def expired_leases(s: Session, before: datetime) -> list[int]:
    """Sets handed out by the sign-up link, not finished, whose last progress (claimed,
    started, last answer) was before ``before``.

    Examples
    --------
    >>> from nlgeval.experiment.sandbox import example_experiment
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


def release_set(s: Session, ev_id: int, now: datetime) -> None:
    """Give set ``ev_id`` back to the pool: a kept copy of the evaluator (``~released``
    added to the name, ``released_at`` set, a new unusable token) takes over its answered
    trials with their judgements; the set itself starts afresh with a new personal link.

    Examples
    --------
    >>> from nlgeval.experiment.sandbox import example_experiment
    >>> with example_experiment() as (store, cfg):
    ...     with store.write() as s:
    ...         release_set(s, 1, utcnow())
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


def completion_code(secret: bytes, who: str) -> str:
    """A participant's own completion code: 10 characters of an HMAC-SHA256 of their id
    (``who``) under the experiment's signing key (base32, no look-alike padding).

    Examples
    --------
    >>> code = completion_code(b"key", "p1")
    >>> len(code), code == completion_code(b"key", "p2")
    (10, False)
    """
    mac = hmac.new(secret, b"completion:" + who.encode(), hashlib.sha256).digest()
    return base64.b32encode(mac[:10]).decode()[:10]


def code_subject(participant: str | None, name: str) -> str:
    """What a per-participant code is computed from: the participant id, else the evaluator.

    Examples
    --------
    >>> code_subject("p1", "3"), code_subject(None, "3")
    ('p1', 'evaluator:3')
    """
    return participant or f"evaluator:{name}"


def too_fast(started: datetime | None, answered: list[datetime | None], min_trial_ms: int
             ) -> bool:
    """Whether a set was finished faster than ``min_trial_ms`` per trial on average (from
    the start to the last answer, server-side times): no code for it until the researcher
    has looked.

    Examples
    --------
    >>> from datetime import datetime
    >>> t0 = datetime(2026, 1, 1)
    >>> too_fast(t0, [t0 + timedelta(milliseconds=30)] * 2, 1000)
    True
    >>> too_fast(t0, [t0 + timedelta(seconds=5)] * 2, 1000)
    False
    """
    done = [t for t in answered if t is not None]
    if not min_trial_ms or started is None or not done:
        return False
    spent_ms = (max(done) - started).total_seconds() * 1000
    return spent_ms < min_trial_ms * len(answered)


def participant_codes(store: Store, crowd: CrowdConfig, secret: bytes) -> list[dict[str, Any]]:
    """One row per evaluator who finished: ``evaluator, participant, code, too_fast`` (the
    per-participant codes, for checking submissions). A set finished too fast was shown no
    code; its code is listed all the same, for the researcher to give after a review.

    Examples
    --------
    >>> from nlgeval.experiment.config import CrowdConfig
    >>> from nlgeval.experiment.sandbox import example_experiment
    >>> with example_experiment() as (store, cfg):
    ...     participant_codes(store, CrowdConfig(participant_codes=True), b"key")
    []
    """
    with store.read() as s:
        evs = s.execute(select(Evaluator.id, Evaluator.name, Evaluator.participant,
                               Evaluator.started_at, Evaluator.finished_at)
                        .where(Evaluator.finished_at.is_not(None))
                        .order_by(Evaluator.id)).all()
        answered: dict[int, list[datetime | None]] = {}
        for ev_id, at in s.execute(select(Trial.evaluator_id, Trial.answered_at)):
            answered.setdefault(ev_id, []).append(at)
    out = []
    for e in evs:
        fast = too_fast(e.started_at, answered.get(e.id, []), crowd.min_trial_ms)
        code = completion_code(secret, code_subject(e.participant, e.name))
        out.append({"evaluator": e.name, "participant": e.participant or "",
                    "code": code, "too_fast": fast})
    return out
