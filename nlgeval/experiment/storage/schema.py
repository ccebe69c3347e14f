"""The tables of an experiment database (SQLAlchemy declarative models), all prefixed
``nlgeval_`` (the layout is described in :mod:`nlgeval.experiment.storage`); only the
``storage`` package reads or writes them."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqlalchemy import (
    JSON,
    Boolean,
    DateTime,
    Float,
    ForeignKey,
    Integer,
    String,
    Text,
    UniqueConstraint,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column


def utcnow() -> datetime:
    """The current UTC time without a time zone (how every time stamp is stored).

    Examples
    --------
    >>> utcnow().tzinfo is None
    True
    """
    return datetime.now(UTC).replace(tzinfo=None)


class Base(DeclarativeBase):
    """The declarative base of the experiment's tables.

    Examples
    --------
    >>> sorted(Base.metadata.tables)[:2]
    ['nlgeval_contexts', 'nlgeval_evaluators']
    """


class Meta(Base):
    """A key/value fact about the experiment (tokens, session secret, config fingerprint).

    Examples
    --------
    >>> Meta(key="mode", value="absolute").value
    'absolute'
    """

    __tablename__ = "nlgeval_meta"
    key: Mapped[str] = mapped_column(String(64), primary_key=True)
    value: Mapped[str] = mapped_column(Text)


class Evaluator(Base):
    """One trial set and its unguessable personal token (and, for the open sign-up link, who
    claimed it and which URL parameters came along).

    Examples
    --------
    >>> Evaluator(name="E1", token="secret").started_at is None
    True
    """

    __tablename__ = "nlgeval_evaluators"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(200), unique=True)
    token: Mapped[str] = mapped_column(String(64), unique=True, index=True)
    created_at: Mapped[datetime] = mapped_column(DateTime, default=utcnow)
    started_at: Mapped[datetime | None] = mapped_column(DateTime, nullable=True)
    finished_at: Mapped[datetime | None] = mapped_column(DateTime, nullable=True)
    answers: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)
    # open sign-up link (crowd studies): when the trial set was handed out, to whom (the
    # participant id of Prolific/MTurk-style URL parameters) and every captured parameter
    claimed_at: Mapped[datetime | None] = mapped_column(DateTime, nullable=True)
    participant: Mapped[str | None] = mapped_column(String(200), nullable=True, index=True)
    params: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)
    consent_at: Mapped[datetime | None] = mapped_column(DateTime, nullable=True)
    # why a participant left before the trials: "no_consent" or "screened_out" (outcomes.py)
    outcome: Mapped[str | None] = mapped_column(String(20), nullable=True)
    # who took the set, pseudonymised: an HMAC of the client address (the join rate limit
    # counts these, across server processes); and, on the kept copy of a set whose lease
    # expired, when it was given back to the pool (its partial answers stay on this row)
    claimed_by: Mapped[str | None] = mapped_column(String(32), nullable=True, index=True)
    released_at: Mapped[datetime | None] = mapped_column(DateTime, nullable=True)


class ResearcherSession(Base):
    """A researcher's log-in, kept server-side: the dashboard cookie names it (by a random
    id, stored here only as a SHA-256 hash), so logging out or setting a new password ends it
    for every copy of the cookie.

    Examples
    --------
    >>> ResearcherSession(sid_hash="ab" * 32).sid_hash[:4]
    'abab'
    """

    __tablename__ = "nlgeval_researcher_sessions"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    sid_hash: Mapped[str] = mapped_column(String(64), unique=True)
    created_at: Mapped[datetime] = mapped_column(DateTime, default=utcnow)


class Output(Base):
    """A system's output for an item, copied at ``create``.

    Examples
    --------
    >>> Output(system="A", item="i1", text="Hello.").text
    'Hello.'
    """

    __tablename__ = "nlgeval_outputs"
    __table_args__ = (UniqueConstraint("system", "item"),)
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    system: Mapped[str] = mapped_column(String(200))
    item: Mapped[str] = mapped_column(String(200), index=True)
    text: Mapped[str] = mapped_column(Text)


class Context(Base):
    """The input an item was generated from, shown above the outputs.

    Examples
    --------
    >>> Context(item="i1", text="name[Aromi]").item
    'i1'
    """

    __tablename__ = "nlgeval_contexts"
    item: Mapped[str] = mapped_column(String(200), primary_key=True)
    text: Mapped[str] = mapped_column(Text)


class Trial(Base):
    """One trial of an evaluator's set, in their order (practice and attention checks
    flagged), with the server-side times that give time on task.

    Examples
    --------
    >>> Trial(position=1, item="i1", system="A").answered_at is None
    True
    """

    __tablename__ = "nlgeval_trials"
    __table_args__ = (UniqueConstraint("evaluator_id", "position"),)
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    evaluator_id: Mapped[int] = mapped_column(ForeignKey("nlgeval_evaluators.id"), index=True)
    position: Mapped[int] = mapped_column(Integer)
    practice: Mapped[bool] = mapped_column(Boolean, default=False)
    item: Mapped[str] = mapped_column(String(200))
    system: Mapped[str] = mapped_column(String(200))
    system_b: Mapped[str | None] = mapped_column(String(200), nullable=True)
    # triangle trials: order, sources, items per slot, odd position, test
    details: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)
    # when the answered page was shown (from its signed time stamp; saved with the answer)
    shown_at: Mapped[datetime | None] = mapped_column(DateTime, nullable=True)
    # server-side: when the trial became the evaluator's current one (set in the transaction
    # that answered the step before it), so time on task needs nothing from the browser
    available_at: Mapped[datetime | None] = mapped_column(DateTime, nullable=True)
    # attention check kind ("repeat", "degraded", "known_answer"), else NULL
    qc_kind: Mapped[str | None] = mapped_column(String(20), nullable=True)
    answered_at: Mapped[datetime | None] = mapped_column(DateTime, nullable=True)


class Judgement(Base):
    """One answer: a trial's value on one criterion (unique per trial and criterion).

    Examples
    --------
    >>> Judgement(trial_id=1, criterion="fluency", response=72.0).response
    72.0
    """

    __tablename__ = "nlgeval_judgements"
    __table_args__ = (UniqueConstraint("trial_id", "criterion"),)
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    trial_id: Mapped[int] = mapped_column(ForeignKey("nlgeval_trials.id"), index=True)
    criterion: Mapped[str] = mapped_column(String(200))
    response: Mapped[float] = mapped_column(Float)  # the value the evaluator chose, as shown
    confirmed: Mapped[bool] = mapped_column(Boolean, default=False)  # VAS: "confirm" ticked
    comment: Mapped[str] = mapped_column(Text, default="")
    time_ms: Mapped[int | None] = mapped_column(Integer, nullable=True)
    created_at: Mapped[datetime] = mapped_column(DateTime, default=utcnow)
