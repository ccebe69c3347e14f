"""Results out of an experiment database: the tidy ratings table, progress, questionnaire answers.

The ratings table has nlgeval's canonical columns ``rater, item, system, criterion, score`` (what
``nlgeval compare``, ``agreement``, ``validate`` and ``triangle analyse`` read) plus ``time_ms``,
``comment``, ``practice``, ``position`` and ``submitted_utc``, and the quality-control columns
``time_on_task_ms`` (server-side: from when the trial became the evaluator's current one to the
accepted answer), ``speeder`` (that time below ``[checks] speeder_ms``), ``qc_check`` (the
attention-check kind of the row, empty for real trials), ``qc_flags`` (the evaluator's flags,
``;``-separated: ``failed_repeat``, ``failed_degraded``, ``failed_known_answer``, ``speeder``),
``qc_passed`` (no flag) and ``participant`` (crowd participant id, if any). Practice trials and
attention-check trials are left out unless asked for (LG-Eval stores practice trials but never
mixes them into results; a check trial shows a repeated or degraded output).

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
from collections.abc import Callable
from datetime import datetime
from typing import Any

import numpy as np
import pandas as pd
from sqlalchemy import select

from nlgeval.experiment.config import TRIANGLE_CRITERION, ExperimentConfig
from nlgeval.experiment.status import export_questionnaire as export_questionnaire
from nlgeval.experiment.status import progress as progress
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

    Examples
    --------
    >>> spreadsheet_safe(pd.DataFrame({"comment": ["=1+1", "fine"], "score": [3, 4]}))
      comment  score
    0   '=1+1      3
    1    fine      4
    """
    out = df.copy()
    for col in out.columns:
        if out[col].dtype == object or pd.api.types.is_string_dtype(out[col]):
            out[col] = out[col].map(
                lambda v: "'" + v if isinstance(v, str) and v.startswith(_FORMULA_START) else v
            )
    return out


def _ms(later: datetime | None, earlier: datetime | None) -> int | None:
    if later is None or earlier is None:
        return None
    return max(0, int(round((later - earlier).total_seconds() * 1000)))


def _scored(r: Any, mode: str, rank: dict[str, int],
            scale: dict[str, tuple[float, float]]) -> dict[str, Any]:
    """The mode-specific columns of one judgement: the score (relative: oriented towards the
    system listed first in the design, so pairs read as ``system`` vs ``system_b``)."""
    rec: dict[str, Any] = {}
    if mode == "relative" and r.qc_kind == "degraded":
        # the same output against its degraded copy: the raw response, as shown
        rec.update(score=float(r.response), system_b=r.system_b, left=r.system)
    elif mode == "relative":
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
    return rec


def _rating_columns(mode: str) -> list[str]:
    cols = list(RATING_COLUMNS)
    if mode == "relative":
        cols += ["system_b", "left"]
    if mode == "triangle":
        cols += ["correct", "chosen_position", "odd_position", "order", "test",
                 "source_1", "source_2", "source_3"]
    cols += ["time_ms", "comment", "practice", "position", "submitted_utc"]
    cols += QC_COLUMNS
    return cols


def _rating_record(r: Any, mode: str, rank: dict[str, int],
                   scale: dict[str, tuple[float, float]], f: pd.Series | None,
                   speeder_ms: int) -> dict[str, Any]:
    """One exported rating: the judgement row ``r`` with its score, timing and the quality
    flags ``f`` of its evaluator (None: no flags)."""
    rec: dict[str, Any] = {
        "rater": r.name, "item": r.item, "system": r.system, "criterion": r.criterion,
    }
    rec.update(_scored(r, mode, rank, scale))
    rec.update(
        time_ms=r.time_ms, comment=r.comment or "", practice=bool(r.practice),
        position=int(r.position),
        submitted_utc=r.created_at.isoformat(timespec="seconds") + "Z",
    )
    tot = _ms(r.answered_at, r.available_at)
    rec.update(
        time_on_task_ms=tot,
        speeder=bool(speeder_ms and tot is not None and tot < speeder_ms),
        qc_check=r.qc_kind or "", qc_flags="" if f is None else f["flags"],
        qc_passed=True if f is None else bool(f["passed"]),
        participant=r.participant or "",
    )
    return rec


def export_ratings(
    store: Store,
    cfg: ExperimentConfig | None = None,
    *,
    include_practice: bool = False,
    include_checks: bool = False,
) -> pd.DataFrame:
    """All judgements as a tidy ratings DataFrame (see the module docstring), with the
    time-on-task and quality-check columns.

    Examples
    --------
    >>> from nlgeval.experiment.sandbox import example_experiment
    >>> with example_experiment(evaluators=3) as (store, cfg):  # the example study, fresh
    ...     r = export_ratings(store, cfg)  # nothing judged yet
    >>> len(r), [c for c in r.columns if c.startswith(("qc_", "time_on", "speeder"))]
    (0, ['time_on_task_ms', 'speeder', 'qc_check', 'qc_flags', 'qc_passed'])
    """
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
        rows = s.execute(q).all()
    flags = quality_flags(store, cfg).set_index("evaluator") if rows else None
    speeder_ms = cfg.checks.speeder_ms if cfg is not None else 0
    recs: list[dict[str, Any]] = []
    for r in rows:
        f = flags.loc[r.name] if flags is not None and r.name in flags.index else None
        recs.append(_rating_record(r, mode, rank, scale, f, speeder_ms))
    cols = _rating_columns(mode)
    df = pd.DataFrame.from_records(recs, columns=cols)
    if mode == "triangle":
        df["criterion"] = df["criterion"].fillna(TRIANGLE_CRITERION)
    df["time_ms"] = df["time_ms"].astype("Int64")
    df["time_on_task_ms"] = df["time_on_task_ms"].astype("Int64")
    for c in ("speeder", "qc_passed"):
        df[c] = df[c].astype(bool)
    return df


QC_COLUMNS = ["time_on_task_ms", "speeder", "qc_check", "qc_flags", "qc_passed", "participant"]
FLAG_COLUMNS = ["evaluator", "participant", "n_trials", "n_checks", "n_checks_answered",
                "n_failed", "failed", "median_time_on_task_ms", "speeder", "flags", "passed"]


def _check_passed(kind: str, d: dict[str, Any], mine: dict[str, float],
                  o: dict[str, float], norm: Callable[[str, float], float],
                  tol: float) -> bool:
    """Whether one answered attention check passed (the rules in :func:`quality_flags`);
    ``mine`` are its answers per criterion, ``o`` those of the trial it copies."""
    if kind == "known_answer":
        chosen = mine.get(TRIANGLE_CRITERION)
        return chosen is not None and int(chosen) == int(d.get("odd_position", 0))
    if kind == "repeat":
        return all(abs(norm(c, mine[c]) - norm(c, o[c])) <= tol + 1e-12
                   for c in mine if c in o)
    if "degraded_slot" in d:  # relative: original vs degraded copy
        prefs = []
        for c, v in mine.items():
            x = 2 * norm(c, v) - 1  # -1: A (left) much better, +1: B much better
            prefs.append(x if d["degraded_slot"] == 1 else -x)
        return float(np.mean(prefs)) > 0
    common = [c for c in mine if c in o]
    deg = float(np.mean([norm(c, mine[c]) for c in common]))
    org = float(np.mean([norm(c, o[c]) for c in common]))
    return deg < org or (deg == org == 0.0)


def _quality_data(
    store: Store,
) -> tuple[list[Any], dict[int, list[Any]], dict[int, dict[str, float]]]:
    """Evaluators, their main (non-practice) trials by evaluator id, and the answers of each
    trial by criterion."""
    with store.read() as s:
        evs = s.execute(select(Evaluator.id, Evaluator.name, Evaluator.participant)
                        .order_by(Evaluator.id)).all()
        trials = s.execute(
            select(Trial.id, Trial.evaluator_id, Trial.position, Trial.qc_kind, Trial.details,
                   Trial.available_at, Trial.answered_at)
            .where(Trial.practice.is_(False))).all()
        judg = s.execute(
            select(Judgement.trial_id, Judgement.criterion, Judgement.response)
            .join(Trial, Trial.id == Judgement.trial_id)
            .where(Trial.practice.is_(False))).all()
    resp: dict[int, dict[str, float]] = {}
    for tid, crit, v in judg:
        resp.setdefault(tid, {})[crit] = float(v)
    by_ev: dict[int, list[Any]] = {}
    for t in trials:
        by_ev.setdefault(t.evaluator_id, []).append(t)
    return evs, by_ev, resp


def quality_flags(store: Store, cfg: ExperimentConfig | None = None) -> pd.DataFrame:
    """Per evaluator: attention checks answered and failed, median time on task, flags.

    A **repeat** fails when, on any criterion, the two answers to the same output differ by
    more than ``repeat_tolerance`` x the scale's range. A **degraded** output (absolute) fails
    when its mean score over the criteria, each scaled to [0, 1], is not below the original's
    (unless both sit at the bottom of the scales); in relative mode the original must be
    preferred (mean preference for it, scaled to [-1, 1], above 0). A **known-answer** triangle
    trial fails when the odd text is not picked. **Speeder**: the median time on task over the
    answered main trials is below ``speeder_ms``. Checks not answered yet are not scored.
    Columns: ``evaluator, participant, n_trials, n_checks, n_checks_answered, n_failed, failed
    (;-separated kinds), median_time_on_task_ms, speeder, flags (;-separated), passed``.

    Examples
    --------
    >>> from nlgeval.experiment.sandbox import example_experiment
    >>> with example_experiment(evaluators=3) as (store, cfg):  # the example study, fresh
    ...     flags = quality_flags(store, cfg)
    >>> flags[["evaluator", "n_checks", "passed"]]
      evaluator  n_checks  passed
    0         1         0    True
    1         2         0    True
    2         3         0    True
    """
    checks = cfg.checks if cfg is not None else None
    scale = {}
    if cfg is not None:
        scale = {c.name: (c.scale_min, c.scale_max) for c in cfg.criteria}
    evs, by_ev, resp = _quality_data(store)

    def norm(crit: str, v: float) -> float:
        lo, hi = scale.get(crit, (0.0, 1.0))
        return (v - lo) / (hi - lo) if hi > lo else 0.0

    tol = checks.repeat_tolerance if checks is not None else 0.25
    speeder_ms = checks.speeder_ms if checks is not None else 0
    rows = []
    for ev_id, name, participant in evs:
        ts = by_ev.get(ev_id, [])
        at = {t.position: t for t in ts}
        main_times = [_ms(t.answered_at, t.available_at) for t in ts
                      if t.qc_kind is None and t.answered_at is not None]
        main_times = [x for x in main_times if x is not None]
        failed: list[str] = []
        n_checks = n_ans = 0
        for t in ts:
            if t.qc_kind is None:
                continue
            n_checks += 1
            d = t.details or {}
            orig = at.get(d.get("of_position"))
            mine = resp.get(t.id)
            if not mine or (t.qc_kind != "known_answer" and (orig is None
                                                             or not resp.get(orig.id))):
                continue
            n_ans += 1
            o = resp.get(orig.id, {}) if orig is not None else {}
            if not _check_passed(t.qc_kind, d, mine, o, norm, tol):
                failed.append(t.qc_kind)
        med = int(np.median(main_times)) if main_times else None
        speeder = bool(speeder_ms and med is not None and med < speeder_ms)
        flags = [f"failed_{k}" for k in dict.fromkeys(failed)] + (["speeder"] if speeder else [])
        rows.append({
            "evaluator": name, "participant": participant or "",
            "n_trials": sum(t.qc_kind is None for t in ts), "n_checks": n_checks,
            "n_checks_answered": n_ans, "n_failed": len(failed), "failed": ";".join(failed),
            "median_time_on_task_ms": med, "speeder": speeder, "flags": ";".join(flags),
            "passed": not flags,
        })
    df = pd.DataFrame(rows, columns=FLAG_COLUMNS)
    df["median_time_on_task_ms"] = df["median_time_on_task_ms"].astype("Int64")
    return df
