"""Results out of an experiment database: the tidy ratings table, progress, questionnaire answers.

The ratings table has nlgeval's canonical columns ``rater, item, system, criterion, score`` (what
``nlgeval compare``, ``agreement``, ``validate`` and ``triangle analyse`` read) plus ``time_ms``,
``comment``, ``practice``, ``position`` and ``submitted_utc``, and the quality-control columns
``time_on_task_ms`` (server-side: from when the trial became the evaluator's current one to the
accepted answer), ``speeder`` (that time below ``[checks] speeder_ms``), ``qc_check`` (the
attention-check kind of the row, empty for real trials), ``qc_flags`` (the evaluator's flags,
``;``-separated: ``failed_repeat``, ``failed_degraded``, ``failed_known_answer``, ``speeder``),
``qc_passed`` (the evaluator's verdict is ``passed``: every trial answered and no flag;
see :mod:`nlgeval.experiment.quality`) and ``participant`` (crowd participant id, if any).
Practice trials and attention-check trials are left out unless asked for (LG-Eval stores
practice trials but never mixes them into results; a check trial shows a repeated or degraded
output).

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
from datetime import datetime
from typing import Any

import pandas as pd

from nlgeval.experiment.config import ExperimentConfig
from nlgeval.experiment.modes import RATING_COLUMNS, Mode, get_mode
from nlgeval.experiment.quality import FLAG_COLUMNS as FLAG_COLUMNS
from nlgeval.experiment.quality import ms_between
from nlgeval.experiment.quality import quality_flags as quality_flags
from nlgeval.experiment.status import export_questionnaire as export_questionnaire
from nlgeval.experiment.status import progress as progress
from nlgeval.experiment.storage import Store
from nlgeval.experiment.storage.reports import evaluators, rating_rows, trial_times

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


def _rating_columns(mode: Mode) -> list[str]:
    cols = list(RATING_COLUMNS) + mode.export_columns()
    cols += ["time_ms", "comment", "practice", "position", "submitted_utc"]
    cols += QC_COLUMNS
    return cols


def _rating_record(r: Any, scored: dict[str, Any], f: pd.Series | None,
                   speeder_ms: int) -> dict[str, Any]:
    """One exported rating: the judgement row ``r`` with its mode's cells ``scored`` (the
    score, ...), timing and the quality flags ``f`` of its evaluator (None: no flags)."""
    rec: dict[str, Any] = {
        "rater": r.name, "item": r.item, "system": r.system, "criterion": r.criterion,
    }
    rec.update(scored)
    rec.update(
        time_ms=r.time_ms, comment=r.comment or "", practice=bool(r.practice),
        position=int(r.position),
        submitted_utc=r.created_at.isoformat(timespec="seconds") + "Z",
    )
    tot = ms_between(r.answered_at, r.available_at)
    rec.update(
        time_on_task_ms=tot,
        speeder=bool(speeder_ms and tot is not None and tot < speeder_ms),
        qc_check=r.qc_kind or "", qc_flags="" if f is None else f["flags"],
        qc_passed=True if f is None else f["verdict"] == "passed",
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
    mode = get_mode(meta.get("mode", "absolute"))
    systems = json.loads(meta.get("systems", "[]"))
    rank = {s: i for i, s in enumerate(systems)}
    scale = {}
    if cfg is not None:
        scale = {c.name: (c.scale_min, c.scale_max) for c in cfg.criteria}
    rows = rating_rows(store, include_practice=include_practice,
                       include_checks=include_checks)
    flags = quality_flags(store, cfg).set_index("evaluator") if rows else None
    speeder_ms = cfg.checks.speeder_ms if cfg is not None else 0
    recs: list[dict[str, Any]] = []
    for r, scored in mode.export_rows(list(rows), rank, scale):
        f = flags.loc[r.name] if flags is not None and r.name in flags.index else None
        recs.append(_rating_record(r, scored, f, speeder_ms))
    cols = _rating_columns(mode)
    df = mode.finish_export(pd.DataFrame.from_records(recs, columns=cols))
    df["time_ms"] = df["time_ms"].astype("Int64")
    df["time_on_task_ms"] = df["time_on_task_ms"].astype("Int64")
    for c in ("speeder", "qc_passed"):
        df[c] = df[c].astype(bool)
    return df


QC_COLUMNS = ["time_on_task_ms", "speeder", "qc_check", "qc_flags", "qc_passed", "participant"]

SPAN_COLUMNS = ["rater", "item", "system", "start", "end", "category", "severity", "marked",
                "text", "comment", "practice", "position", "participant", "qc_check"]


def export_spans(store: Store, *, include_practice: bool = False,
                 include_checks: bool = False) -> pd.DataFrame:
    """The error spans of an MQM or ESA experiment (:mod:`nlgeval.experiment.modes.spans`):
    one row per marked error -- ``rater, item, system, start, end, category, severity`` as
    :func:`nlgeval.human.spans.read_spans` reads them (offsets in characters of the output,
    ``[start, end)``, empty for an error not located in it) plus ``marked`` (the marked
    text), ``text`` (the whole output), the comment, ``practice``, ``position`` and
    ``participant`` -- and one row with empty offsets and severity for an output marked
    without errors, so every judged output is there. With ``include_checks`` the attention
    checks' rows come too, ``qc_check`` naming their kind (``repeat``, ``degraded``; empty for
    real trials); a degraded copy's offsets and ``text`` are those of the copy shown.

    Examples
    --------
    >>> from nlgeval.experiment.sandbox import example_experiment
    >>> with example_experiment() as (store, cfg):  # an absolute study: no spans
    ...     export_spans(store)
    Traceback (most recent call last):
    ...
    nlgeval.errors.InputError: absolute experiments mark no error spans (mode mqm or esa)
    """
    from nlgeval.errors import InputError
    from nlgeval.experiment.modes.spans import SpanMode
    from nlgeval.experiment.storage.design import texts

    mode = get_mode(store.meta().get("mode", "absolute"))
    if not isinstance(mode, SpanMode):
        raise InputError(f"{mode.name} experiments mark no error spans (mode mqm or esa)")
    rows = rating_rows(store, include_practice=include_practice,
                       include_checks=include_checks)
    text_of = texts(store) if rows else {}
    recs = []
    for r, sp in mode.span_rows(list(rows)):
        shown = (r.details or {}).get("texts")  # an attention check's own (degraded) text
        text = str(shown[0]) if shown else text_of.get((r.system, r.item), "")
        start, end = (sp.start, sp.end) if sp is not None else (None, None)
        recs.append({
            "rater": r.name, "item": r.item, "system": r.system, "start": start, "end": end,
            "category": sp.category if sp else "", "severity": sp.severity if sp else "",
            "marked": text[start:end] if start is not None else "", "text": text,
            "comment": r.comment or "", "practice": bool(r.practice),
            "position": int(r.position), "participant": r.participant or "",
            "qc_check": r.qc_kind or ""})
    df = pd.DataFrame.from_records(recs, columns=SPAN_COLUMNS)
    for c in ("start", "end"):  # integers, None where not located (written as empty cells)
        df[c] = pd.Series([None if v is None or pd.isna(v) else int(v) for v in df[c]],
                          index=df.index, dtype=object)
    return df


PARTICIPANT_COLUMNS = ["evaluator", "participant", "STUDY_ID", "SESSION_ID", "assignment_id",
                       "hit_id", "claimed_utc", "consent_utc", "started_utc", "finished_utc",
                       "trials_answered", "time_on_task_ms", "elapsed_ms", "completion_code",
                       "code_withheld", "released", "outcome"]


def _utc(t: datetime | None) -> str:
    return "" if t is None else t.isoformat(timespec="seconds") + "Z"


def participants_table(store: Store, cfg: ExperimentConfig, secret: bytes | None = None
                       ) -> pd.DataFrame:
    """One row per trial set someone took (claimed or started), for paying participants and
    for audits: the platform's ids (``STUDY_ID``, ``SESSION_ID``, MTurk's ``assignmentId`` and
    ``hitId``, as captured at sign-up), when the set was claimed, consented to, started and
    finished, the trials answered, ``time_on_task_ms`` (the server-side time on task summed
    over every answered trial, practice and checks included), ``elapsed_ms`` (from Start to
    the last answer) and the completion code shown to them (the study's code, or their own
    with ``participant_codes``, which needs the experiment's signing key ``secret``; empty
    until they finished; ``code_withheld`` when the set was finished too fast to be given
    one). ``released`` marks the kept record of a set given back to the pool (lease expired,
    or the participant left before the trials: ``outcome`` is then ``no_consent`` or
    ``screened_out``).

    Examples
    --------
    >>> from nlgeval.experiment.sandbox import example_experiment
    >>> with example_experiment(evaluators=3) as (store, cfg):  # nobody has taken a set yet
    ...     table = participants_table(store, cfg)
    >>> len(table), table.columns[:4].tolist()
    (0, ['evaluator', 'participant', 'STUDY_ID', 'SESSION_ID'])
    """
    from nlgeval.experiment.participants import code_subject, completion_code, too_fast

    crowd = cfg.crowd
    study_code = store.meta().get("completion_code", "")
    evs, times = evaluators(store, taken=True), trial_times(store)
    recs = []
    for ev in evs:
        ts = times.get(ev.id, [])
        answered = [a for _, a in ts if a is not None]
        tot = [ms_between(a, v) for v, a in ts if a is not None]
        p = ev.params or {}
        fast = bool(crowd is not None and ev.finished_at is not None and too_fast(
            ev.started_at, [a for _, a in ts], getattr(crowd, "min_trial_ms", 0)))
        code = ""
        if crowd is not None and ev.finished_at is not None and not fast:
            code = study_code
            if getattr(crowd, "participant_codes", False) and secret is not None:
                code = completion_code(secret, code_subject(ev.participant, ev.name))
        recs.append({
            "evaluator": ev.name, "participant": ev.participant or "",
            "STUDY_ID": p.get("STUDY_ID", ""), "SESSION_ID": p.get("SESSION_ID", ""),
            "assignment_id": p.get("assignmentId", ""), "hit_id": p.get("hitId", ""),
            "claimed_utc": _utc(ev.claimed_at), "consent_utc": _utc(ev.consent_at),
            "started_utc": _utc(ev.started_at), "finished_utc": _utc(ev.finished_at),
            "trials_answered": len(answered),
            "time_on_task_ms": sum(x for x in tot if x is not None) if answered else None,
            "elapsed_ms": ms_between(max(answered), ev.started_at) if answered else None,
            "completion_code": code, "code_withheld": fast,
            "released": ev.released_at is not None, "outcome": ev.outcome or "",
        })
    df = pd.DataFrame.from_records(recs, columns=PARTICIPANT_COLUMNS)
    for c in ("time_on_task_ms", "elapsed_ms"):
        df[c] = df[c].astype("Int64")
    return df
