"""The researcher's side: server-side log-in sessions (kept as hashes of their ids), the
password hash, resetting a trial set, and the dashboard's comments.
"""

from __future__ import annotations

import secrets
from datetime import datetime

from sqlalchemy import Row, delete, select, update

from nlgeval.experiment.storage.engine import Store
from nlgeval.experiment.storage.schema import Evaluator, Judgement, Meta, ResearcherSession, Trial


def add_session(store: Store, sid_hash: str) -> None:
    """Store a new researcher session by the hash of its id.

    Examples
    --------
    >>> from nlgeval.experiment.sandbox import example_experiment
    >>> with example_experiment() as (store, cfg):
    ...     add_session(store, "ab" * 32)
    ...     alive = session_exists(store, "ab" * 32, since=datetime(2000, 1, 1))
    ...     drop_session(store, "ab" * 32)
    ...     alive, session_exists(store, "ab" * 32, since=datetime(2000, 1, 1))
    (True, False)
    """
    with store.write() as s:
        s.add(ResearcherSession(sid_hash=sid_hash))


def session_exists(store: Store, sid_hash: str, since: datetime) -> bool:
    """Whether the session with this id hash exists and was made at or after ``since``."""
    with store.connect() as c:
        return c.execute(select(ResearcherSession.id).where(
            ResearcherSession.sid_hash == sid_hash,
            ResearcherSession.created_at >= since)).first() is not None


def drop_session(store: Store, sid_hash: str) -> None:
    """Forget the session with this id hash (log-out)."""
    with store.write() as s:
        s.execute(delete(ResearcherSession).where(ResearcherSession.sid_hash == sid_hash))


def replace_password(store: Store, key: str, password_hash: str) -> None:
    """Store the password hash under meta ``key`` and end every researcher session, in one
    transaction.

    Examples
    --------
    >>> from nlgeval.experiment.sandbox import example_experiment
    >>> with example_experiment() as (store, cfg):
    ...     replace_password(store, "researcher_password", "hash")
    ...     store.meta()["researcher_password"]
    'hash'
    """
    with store.write() as s:
        s.merge(Meta(key=key, value=password_hash))
        s.execute(delete(ResearcherSession))


def reset_set(store: Store, ev_id: int) -> bool:
    """Delete evaluator ``ev_id``'s judgements and start their set afresh under a new personal
    link (``False``: no such evaluator).

    Examples
    --------
    >>> from nlgeval.experiment.sandbox import example_experiment
    >>> with example_experiment() as (store, cfg):
    ...     reset_set(store, 1), reset_set(store, 10**6)
    (True, False)
    """
    with store.write() as s:
        if s.get(Evaluator, ev_id) is None:
            return False
        ids = select(Trial.id).where(Trial.evaluator_id == ev_id)
        s.execute(delete(Judgement).where(Judgement.trial_id.in_(ids)))
        s.execute(update(Trial).where(Trial.evaluator_id == ev_id)
                  .values(answered_at=None, shown_at=None, available_at=None))
        s.execute(update(Evaluator).where(Evaluator.id == ev_id).values(
            token=secrets.token_urlsafe(18), started_at=None, finished_at=None,
            answers=None, claimed_at=None, participant=None, params=None, consent_at=None))
    return True


def evaluator_ids(store: Store) -> dict[str, int]:
    """Every evaluator's id by name."""
    with store.read() as s:
        return {name: ev_id for name, ev_id in s.execute(select(Evaluator.name, Evaluator.id))}


def comments(store: Store) -> list[Row[str, int, str]]:
    """``name, position, comment`` of every judgement with a comment (a trial's criteria
    share it), in evaluator and trial order.

    Examples
    --------
    >>> from nlgeval.experiment.sandbox import example_experiment
    >>> with example_experiment() as (store, cfg):
    ...     comments(store), sorted(evaluator_ids(store).items())[0]
    ([], ('1', 1))
    """
    with store.read() as s:
        return list(s.execute(
            select(Evaluator.name, Trial.position, Judgement.comment)
            .join(Trial, Trial.evaluator_id == Evaluator.id)
            .join(Judgement, Judgement.trial_id == Trial.id)
            .where(Judgement.comment != "")
            .order_by(Evaluator.id, Trial.position)).all())
