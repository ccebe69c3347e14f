"""Where an experiment stands: each evaluator's progress, and the exit-questionnaire answers
(re-exported by :mod:`nlgeval.experiment.export`, next to the ratings)."""

from __future__ import annotations

import pandas as pd
from sqlalchemy import func, select

from nlgeval.experiment.storage import Evaluator, Store, Trial


def progress(store: Store) -> pd.DataFrame:
    """Per evaluator: ``evaluator, token, done, total, practice_done, practice_total, started,
    finished, questionnaire`` (one row each, in creation order).

    Examples
    --------
    >>> from nlgeval.experiment.sandbox import example_experiment
    >>> with example_experiment(evaluators=3) as (store, cfg):  # the example study, fresh
    ...     where = progress(store)
    >>> where[["evaluator", "done", "total", "practice_total"]]
      evaluator  done  total  practice_total
    0         1     0      6               1
    1         2     0      6               1
    2         3     0      6               1
    """
    with store.read() as s:
        evs = s.execute(select(Evaluator).order_by(Evaluator.id)).scalars().all()
        counts = s.execute(
            select(Trial.evaluator_id, Trial.practice, func.count(Trial.id),
                   func.count(Trial.answered_at))
            .group_by(Trial.evaluator_id, Trial.practice)
        ).all()
    c: dict[tuple[int, bool], tuple[int, int]] = {
        (e, bool(p)): (int(n), int(a)) for e, p, n, a in counts
    }
    rows = []
    for ev in evs:
        tot, done = c.get((ev.id, False), (0, 0))
        ptot, pdone = c.get((ev.id, True), (0, 0))
        rows.append({
            "evaluator": ev.name, "token": ev.token, "done": done, "total": tot,
            "practice_done": pdone, "practice_total": ptot,
            "started": ev.started_at.isoformat(timespec="seconds") + "Z"
            if ev.started_at else "",
            "finished": ev.finished_at.isoformat(timespec="seconds") + "Z"
            if ev.finished_at else "",
            "questionnaire": bool(ev.answers),
            "participant": ev.participant or "",
            "claimed": ev.claimed_at.isoformat(timespec="seconds") + "Z"
            if ev.claimed_at else "",
        })
    return pd.DataFrame(rows, columns=["evaluator", "token", "done", "total", "practice_done",
                                       "practice_total", "started", "finished",
                                       "questionnaire", "participant", "claimed"])


def export_questionnaire(store: Store) -> pd.DataFrame:
    """Exit-questionnaire answers, tidy: ``rater, question, answer``.

    Examples
    --------
    >>> from nlgeval.experiment.sandbox import example_experiment
    >>> with example_experiment(evaluators=3) as (store, cfg):  # the example study, fresh
    ...     answers = export_questionnaire(store)
    >>> answers.columns.tolist()
    ['rater', 'question', 'answer']
    """
    with store.read() as s:
        evs = s.execute(select(Evaluator).order_by(Evaluator.id)).scalars().all()
    recs = [
        {"rater": ev.name, "question": k, "answer": v}
        for ev in evs for k, v in (ev.answers or {}).items()
    ]
    return pd.DataFrame(recs, columns=["rater", "question", "answer"])
