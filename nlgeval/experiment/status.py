"""Where an experiment stands: each evaluator's progress, and the exit-questionnaire answers
(re-exported by :mod:`nlgeval.experiment.export`, next to the ratings)."""

from __future__ import annotations

import pandas as pd

from nlgeval.experiment.storage import Store
from nlgeval.experiment.storage.reports import evaluators, main_trials, trial_counts


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
    evs, counts = evaluators(store), trial_counts(store)
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
    evs = evaluators(store)
    recs = [
        {"rater": ev.name, "question": k, "answer": v}
        for ev in evs for k, v in (ev.answers or {}).items()
    ]
    return pd.DataFrame(recs, columns=["rater", "question", "answer"])


def progress_by(store: Store, by: str) -> pd.DataFrame:
    """Progress of the main trials (practice and attention checks left out) per ``system``
    or per ``item``: ``<by>, done, total, evaluators_done, evaluators`` (trials answered and
    planned; evaluators who answered all their trials of it, and who have any), in design
    order. A relative trial counts for both systems of its pair; the kept copies of released
    sets (their answers stay in the export) are not counted again.

    Examples
    --------
    >>> from nlgeval.experiment.sandbox import example_experiment
    >>> with example_experiment(evaluators=3) as (store, cfg):  # the example study, fresh
    ...     per_system = progress_by(store, "system")
    >>> per_system[["system", "done", "total", "evaluators"]]
         system  done  total  evaluators
    0  template     0      6           3
    1    neural     0      6           3
    2     human     0      6           3
    """
    if by not in ("system", "item"):
        raise ValueError(f"progress_by: by must be 'system' or 'item', got {by!r}")
    rows = main_trials(store)
    recs = []
    for r in rows:
        keys = [r.item] if by == "item" else [r.system] + ([r.system_b] if r.system_b else [])
        recs += [{"key": k, "ev": r.evaluator_id, "done": r.answered_at is not None}
                 for k in keys]
    cols = [by, "done", "total", "evaluators_done", "evaluators"]
    if not recs:
        return pd.DataFrame(columns=cols)
    df = pd.DataFrame(recs)
    per_ev = df.groupby(["key", "ev"], sort=False)["done"].all().groupby(level=0, sort=False)
    out = df.groupby("key", sort=False)["done"].agg(done="sum", total="size")
    out["evaluators_done"] = per_ev.sum().astype(int)
    out["evaluators"] = per_ev.size()
    return out.reset_index().rename(columns={"key": by})[cols].astype(
        {"done": int, "total": int})


def items_summary(by_item: pd.DataFrame, show: int = 10) -> str:
    """A few lines on :func:`progress_by` ``"item"``: how many items are fully judged, and
    the ``show`` items with the most trials still to judge.

    Examples
    --------
    >>> t = pd.DataFrame({"item": ["i1", "i2", "i3"], "done": [3, 1, 0], "total": [3, 3, 3]})
    >>> print(items_summary(t, show=2))
    items fully judged: 1 of 3
    most left to judge: i3 0/3, i2 1/3
    """
    if by_item.empty:
        return "items fully judged: 0 of 0"
    full = int((by_item["done"] == by_item["total"]).sum())
    lines = [f"items fully judged: {full} of {len(by_item)}"]
    left = by_item.assign(left=by_item["total"] - by_item["done"])
    left = left[left["left"] > 0].sort_values("left", ascending=False, kind="stable")
    if len(left):
        lines.append("most left to judge: " + ", ".join(
            f"{r.item} {r.done}/{r.total}" for r in left.head(show).itertuples()))
    return "\n".join(lines)
