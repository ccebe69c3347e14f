"""The read-only queries behind the researcher's views of a study: progress (status), the
exit questionnaire, the quality checks, the ratings export and the participants table.
Each returns rows; what they mean is computed by the modules that call them
(:mod:`nlgeval.experiment.status`, :mod:`nlgeval.experiment.quality`,
:mod:`nlgeval.experiment.export`).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import Row, func, select

from nlgeval.experiment.storage.engine import AnyRow, Store
from nlgeval.experiment.storage.schema import Evaluator, Judgement, Trial

#: ``id, name, participant, started_at, released_at`` of an evaluator
EvaluatorRow = Row[int, str, str | None, datetime | None, datetime | None]


def evaluators(store: Store, *, taken: bool = False) -> list[Evaluator]:
    """Every evaluator row, in creation order (``taken``: only sets someone claimed or
    started).

    Examples
    --------
    >>> from nlgeval.experiment.sandbox import example_experiment
    >>> with example_experiment(evaluators=3) as (store, cfg):
    ...     [e.name for e in evaluators(store)], evaluators(store, taken=True)
    (['1', '2', '3'], [])
    """
    q = select(Evaluator)
    if taken:
        q = q.where((Evaluator.claimed_at.is_not(None)) | (Evaluator.started_at.is_not(None)))
    with store.read() as s:
        return list(s.execute(q.order_by(Evaluator.id)).scalars().all())


def trial_counts(store: Store) -> list[Row[int, bool, int, int]]:
    """``evaluator_id, practice, trials, answered`` per evaluator and practice flag."""
    with store.read() as s:
        return list(s.execute(
            select(Trial.evaluator_id, Trial.practice, func.count(Trial.id),
                   func.count(Trial.answered_at))
            .group_by(Trial.evaluator_id, Trial.practice)
        ).all())


def main_trials(store: Store) -> list[Row[int, str, str, str | None, datetime | None]]:
    """``evaluator_id, item, system, system_b, answered_at`` of every main trial (no practice,
    no attention check) of the sets in use (not the kept copies of released sets), in id
    order.

    Examples
    --------
    >>> from nlgeval.experiment.sandbox import example_experiment
    >>> with example_experiment(evaluators=3) as (store, cfg):
    ...     len(main_trials(store)), len(trial_counts(store))
    (18, 6)
    """
    with store.read() as s:
        return list(s.execute(
            select(Trial.evaluator_id, Trial.item, Trial.system, Trial.system_b,
                   Trial.answered_at)
            .join(Evaluator, Evaluator.id == Trial.evaluator_id)
            .where(Trial.practice.is_(False), Trial.qc_kind.is_(None),
                   Evaluator.released_at.is_(None))
            .order_by(Trial.id)).all())


def quality_rows(store: Store
                 ) -> tuple[list[EvaluatorRow], list[AnyRow], list[Row[int, str, float]]]:
    """What the quality checks read: evaluators (``id, name, participant, started_at,
    released_at``, in id order), their main (non-practice) trials (``id, evaluator_id,
    position, qc_kind, details, available_at, answered_at``) and the judgements of those
    trials (``trial_id, criterion, response``).

    Examples
    --------
    >>> from nlgeval.experiment.sandbox import example_experiment
    >>> with example_experiment(evaluators=3) as (store, cfg):
    ...     [len(rows) for rows in quality_rows(store)]
    [3, 18, 0]
    """
    with store.read() as s:
        evs = list(s.execute(select(Evaluator.id, Evaluator.name, Evaluator.participant,
                                    Evaluator.started_at, Evaluator.released_at)
                             .order_by(Evaluator.id)).all())
        trials = list(s.execute(
            select(Trial.id, Trial.evaluator_id, Trial.position, Trial.qc_kind, Trial.details,
                   Trial.available_at, Trial.answered_at)
            .where(Trial.practice.is_(False))).all())
        judg = list(s.execute(
            select(Judgement.trial_id, Judgement.criterion, Judgement.response)
            .join(Trial, Trial.id == Judgement.trial_id)
            .where(Trial.practice.is_(False))).all())
    return evs, trials, judg


def rating_rows(store: Store, *, include_practice: bool, include_checks: bool
                ) -> list[AnyRow]:
    """One row per judgement for the ratings export, in evaluator, trial and judgement
    order: ``name, item, system, system_b, details, practice, position, criterion, response,
    comment, time_ms, created_at, qc_kind, available_at, answered_at, participant``.

    Examples
    --------
    >>> from nlgeval.experiment.sandbox import example_experiment
    >>> with example_experiment(evaluators=3) as (store, cfg):
    ...     rating_rows(store, include_practice=True, include_checks=True)
    []
    """
    q = (
        select(Evaluator.name, Trial.item, Trial.system, Trial.system_b, Trial.details,
               Trial.practice, Trial.position, Judgement.criterion, Judgement.response,
               Judgement.comment, Judgement.time_ms, Judgement.created_at, Trial.qc_kind,
               Trial.available_at, Trial.answered_at, Evaluator.participant)
        .join(Trial, Trial.evaluator_id == Evaluator.id)
        .join(Judgement, Judgement.trial_id == Trial.id)
        .order_by(Evaluator.id, Trial.position, Judgement.id)
    )
    if not include_practice:
        q = q.where(Trial.practice.is_(False))
    if not include_checks:
        q = q.where(Trial.qc_kind.is_(None))
    with store.read() as s:
        return list(s.execute(q).all())


def trial_times(store: Store) -> dict[int, list[tuple[Any, Any]]]:
    """``(available_at, answered_at)`` of every trial, by evaluator id.

    Examples
    --------
    >>> from nlgeval.experiment.sandbox import example_experiment
    >>> with example_experiment(evaluators=3) as (store, cfg):
    ...     len(trial_times(store)[1])
    7
    """
    times: dict[int, list[tuple[Any, Any]]] = {}
    with store.read() as s:
        for ev_id, avail, ans in s.execute(select(Trial.evaluator_id, Trial.available_at,
                                                  Trial.answered_at)):
            times.setdefault(ev_id, []).append((avail, ans))
    return times
