"""Results out of an experiment database: the tidy ratings table, progress, questionnaire answers.

The ratings table has nlgeval's canonical columns ``rater, item, system, criterion, score`` (what
``nlgeval compare``, ``agreement``, ``validate`` and ``triangle analyse`` read) plus ``time_ms``,
``comment``, ``practice``, ``position`` and ``submitted_utc``. Practice trials are left out unless
asked for (LG-Eval stores them but never mixes them into results).

Relative judgements are exported per system pair in a fixed order (the order of the systems in the
experiment): ``system`` and ``system_b`` are the pair, ``score`` is the preference for ``system``
on the criterion's scale (its top = ``system`` much better; the value shown on screen is
reflected, ``min + max - response``, when ``system`` was shown on the right), and ``left`` names
the system shown on the left, so position effects can be checked.

Triangle trials export one row per trial with ``criterion = "odd_one_out"`` and ``score`` 1 when
the evaluator picked the odd text, else 0 (also as ``correct``), plus the triad's ``test``,
``order``, ``odd_position``, ``chosen_position`` and ``source_1..3``; ``system`` is the odd
sample's source.
"""

from __future__ import annotations

import json
from typing import Any

import pandas as pd
from sqlalchemy import func, select

from nlgeval.experiment.config import TRIANGLE_CRITERION, ExperimentConfig
from nlgeval.experiment.storage import Evaluator, Judgement, Store, Trial

RATING_COLUMNS = ["rater", "item", "system", "criterion", "score"]

# A text cell starting with one of these is run as a formula by Excel/LibreOffice/Sheets
# (OWASP "CSV injection"); evaluators type free-text comments and questionnaire answers.
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def spreadsheet_safe(df: pd.DataFrame) -> pd.DataFrame:
    """A copy for opening in a spreadsheet: text cells that a spreadsheet would run as a formula
    get a leading apostrophe (OWASP's mitigation); numbers are untouched.

    Use it for files people open in Excel; analyse the unmodified export (the apostrophe would
    become part of the text).
    """
    out = df.copy()
    for col in out.columns:
        if out[col].dtype == object or pd.api.types.is_string_dtype(out[col]):
            out[col] = out[col].map(
                lambda v: "'" + v if isinstance(v, str) and v.startswith(_FORMULA_START) else v
            )
    return out


def export_ratings(
    store: Store, cfg: ExperimentConfig | None = None, *, include_practice: bool = False
) -> pd.DataFrame:
    """All judgements as a tidy ratings DataFrame (see the module docstring)."""
    meta = store.meta()
    mode = meta.get("mode", "absolute")
    systems = json.loads(meta.get("systems", "[]"))
    rank = {s: i for i, s in enumerate(systems)}
    scale = {}
    if cfg is not None:
        scale = {c.name: (c.scale_min, c.scale_max) for c in cfg.criteria}
    q = (
        select(Evaluator.name, Trial.item, Trial.system, Trial.system_b, Trial.details,
               Trial.practice, Trial.position, Judgement.criterion, Judgement.response,
               Judgement.comment, Judgement.time_ms, Judgement.created_at)
        .join(Trial, Trial.evaluator_id == Evaluator.id)
        .join(Judgement, Judgement.trial_id == Trial.id)
        .order_by(Evaluator.id, Trial.position, Judgement.id)
    )
    if not include_practice:
        q = q.where(Trial.practice.is_(False))
    with store.read() as s:
        rows = s.execute(q).all()
    recs: list[dict[str, Any]] = []
    for r in rows:
        rec: dict[str, Any] = {
            "rater": r.name, "item": r.item, "system": r.system, "criterion": r.criterion,
        }
        if mode == "relative":
            left, right = r.system, r.system_b
            first_left = rank.get(left, 0) <= rank.get(right, 0)
            a, b = (left, right) if first_left else (right, left)
            lo, hi = scale.get(r.criterion, (None, None))
            if first_left:  # the response scale's top means "right (B) much better"
                if lo is None:
                    score = -r.response
                else:
                    score = lo + hi - r.response
            else:
                score = r.response
            rec.update(system=a, score=float(score), system_b=b, left=left)
        elif mode == "triangle":
            d = r.details or {}
            chosen = int(r.response)
            correct = int(chosen == int(d.get("odd_position", 0)))
            rec.update(score=float(correct), correct=correct, chosen_position=chosen,
                       odd_position=d.get("odd_position"), order=d.get("order"),
                       test=d.get("test"))
            for k, src in enumerate(d.get("sources", []), 1):
                rec[f"source_{k}"] = src
        else:
            rec["score"] = float(r.response)
        rec.update(
            time_ms=r.time_ms, comment=r.comment or "", practice=bool(r.practice),
            position=int(r.position),
            submitted_utc=r.created_at.isoformat(timespec="seconds") + "Z",
        )
        recs.append(rec)
    cols = list(RATING_COLUMNS)
    if mode == "relative":
        cols += ["system_b", "left"]
    if mode == "triangle":
        cols += ["correct", "chosen_position", "odd_position", "order", "test",
                 "source_1", "source_2", "source_3"]
    cols += ["time_ms", "comment", "practice", "position", "submitted_utc"]
    df = pd.DataFrame.from_records(recs, columns=cols)
    if mode == "triangle":
        df["criterion"] = df["criterion"].fillna(TRIANGLE_CRITERION)
    df["time_ms"] = df["time_ms"].astype("Int64")
    return df


def progress(store: Store) -> pd.DataFrame:
    """Per evaluator: ``evaluator, token, done, total, practice_done, practice_total, started,
    finished, questionnaire`` (one row each, in creation order)."""
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
        })
    return pd.DataFrame(rows, columns=["evaluator", "token", "done", "total", "practice_done",
                                       "practice_total", "started", "finished",
                                       "questionnaire"])


def export_questionnaire(store: Store) -> pd.DataFrame:
    """Exit-questionnaire answers, tidy: ``rater, question, answer``."""
    with store.read() as s:
        evs = s.execute(select(Evaluator).order_by(Evaluator.id)).scalars().all()
    recs = [
        {"rater": ev.name, "question": k, "answer": v}
        for ev in evs for k, v in (ev.answers or {}).items()
    ]
    return pd.DataFrame(recs, columns=["rater", "question", "answer"])
