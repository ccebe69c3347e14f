"""The evaluators' attention checks scored: per evaluator, which checks failed, whether their
degraded copies were rated lower (a test over all their pairs), speeders, and a verdict.

A **repeat** fails when, on any criterion, the two answers to the same output differ by more
than ``repeat_tolerance`` x the scale's range. **Degraded** copies are judged as in Appraise's
Direct Assessment quality control (Graham et al. 2013, 2017): the evaluator's pairs (score of
the original, score of its degraded copy; each the mean over the criteria scaled to [0, 1]) are
tested with the one-sided paired Wilcoxon signed-rank test of
:func:`nlgeval.human.qc.degraded_test`, and the evaluator fails when p is not below
``[checks] alpha`` (0.05). In relative mode a pair is the preference for the original over its
degraded copy (scaled to [-1, 1]) against no preference (0). The test needs at least
:data:`~nlgeval.human.qc.MIN_DEGRADED_PAIRS` pairs to reach 0.05 (the exact one-sided minimum
is 1/2^n), so configure ``degraded`` >= 5; with fewer pairs every pair must go the right way
(the original above its copy, or both at the bottom of the scale). A **known-answer**
triangle fails when the odd text is not picked. **Speeder**: the median time on task over the
answered main trials is below ``speeder_ms``.

In the error-span modes the checks compare the segment score (the mode's
:meth:`~nlgeval.experiment.modes.Mode.check_scales`), as the ESA campaigns of Kocmi et al.
(2024) compare the scores of their degraded copies with the originals': ESA's 0-100 score, and
the MQM score on its range from Freitag et al. 2021's floor (five major errors or one
Non-translation, -25) to 0, so a degraded copy must get more or severer errors (the one-sided
paired test above on the MQM scores) and a repeat an MQM score within ``repeat_tolerance`` x 25
points (6.25: one major error of difference passes, two fail). The marked spans themselves
are not compared (the same errors marked with other boundaries are no failure).

The verdict: ``not started`` (never pressed Start: not reported as passed), ``in progress``
(trials or checks still to answer; flags so far are shown), ``released`` (the kept answers of
a set given back to the pool, which will never be complete), ``passed`` or ``failed``;
``passed`` is True/False for the last two and empty otherwise.

Examples
--------
>>> from nlgeval.experiment.sandbox import example_experiment
>>> with example_experiment(evaluators=3) as (store, cfg):  # the example study, fresh
...     flags = quality_flags(store, cfg)
>>> flags[["evaluator", "verdict", "passed"]]
  evaluator      verdict  passed
0         1  not started    <NA>
1         2  not started    <NA>
2         3  not started    <NA>
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any

import numpy as np
import pandas as pd

from nlgeval.errors import InputError
from nlgeval.experiment.config import TRIANGLE_CRITERION, ExperimentConfig
from nlgeval.experiment.modes.spans import SPAN_KEY
from nlgeval.experiment.storage import Store
from nlgeval.experiment.storage.reports import quality_rows
from nlgeval.human.qc import MIN_DEGRADED_PAIRS, degraded_test

FLAG_COLUMNS = ["evaluator", "participant", "n_trials", "n_checks", "n_checks_answered",
                "n_failed", "failed", "degraded_pairs", "degraded_pvalue",
                "median_time_on_task_ms", "speeder", "flags", "verdict", "passed"]
VERDICTS = ("not started", "in progress", "released", "passed", "failed")


def ms_between(later: datetime | None, earlier: datetime | None) -> int | None:
    """Milliseconds from ``earlier`` to ``later`` (``None`` if either is missing).

    Examples
    --------
    >>> from datetime import datetime
    >>> ms_between(datetime(2026, 1, 1, 0, 0, 2), datetime(2026, 1, 1))
    2000
    """
    if later is None or earlier is None:
        return None
    return max(0, int(round((later - earlier).total_seconds() * 1000)))


def _pair(d: dict[str, Any], mine: dict[str, float], o: dict[str, float],
          norm: Callable[[str, float], float]) -> tuple[float, float]:
    """A degraded check as (original, copy): absolute, the mean scaled scores over the
    criteria; relative, the preference for the original (scaled to [-1, 1]) against 0."""
    if "degraded_slot" in d:  # relative: original vs its degraded copy side by side
        prefs = []
        for c, v in mine.items():
            x = 2 * norm(c, v) - 1  # -1: A (left) much better, +1: B much better
            prefs.append(x if d["degraded_slot"] == 1 else -x)
        return float(np.mean(prefs)), 0.0
    common = [c for c in mine if c in o]
    return (float(np.mean([norm(c, o[c]) for c in common])),
            float(np.mean([norm(c, mine[c]) for c in common])))


def _check_passed(kind: str, d: dict[str, Any], mine: dict[str, float],
                  o: dict[str, float], norm: Callable[[str, float], float],
                  tol: float) -> bool:
    """Whether one answered check went the right way (``mine``: its answers per criterion,
    ``o``: those of the trial it copies)."""
    if kind == "known_answer":
        chosen = mine.get(TRIANGLE_CRITERION)
        return chosen is not None and int(chosen) == int(d.get("odd_position", 0))
    if kind == "repeat":
        return all(abs(norm(c, mine[c]) - norm(c, o[c])) <= tol + 1e-12
                   for c in mine if c in o)
    org, deg = _pair(d, mine, o, norm)
    return deg < org or ("degraded_slot" not in d and deg == org == 0.0)


def degraded_verdict(pairs: list[tuple[float, float]], alpha: float
                     ) -> tuple[bool, float]:
    """``(failed, pvalue)`` for an evaluator's degraded pairs (original, copy): the one-sided
    paired Wilcoxon test of :func:`nlgeval.human.qc.degraded_test` (Graham et al. 2017) with
    enough pairs, else every pair must go the right way (p is NaN then).

    Examples
    --------
    >>> failed, p = degraded_verdict([(0.8, 0.1)] * 3 + [(0.9, 0.2), (0.7, 0.1)], 0.05)
    >>> failed, round(p, 5)  # 5 of 5 lower: exact one-sided p = 1/32
    (False, 0.03125)
    >>> degraded_verdict([(0.5, 0.5)], 0.05)  # too few to test; this pair is not lower
    (True, nan)
    """
    if not pairs:
        return False, float("nan")
    org = np.array([p[0] for p in pairs])
    deg = np.array([p[1] for p in pairs])
    if len(pairs) >= MIN_DEGRADED_PAIRS:
        _stat, p = degraded_test(org, deg)
        return not p < alpha, p
    ok = (deg < org) | ((deg == org) & (org == 0.0))
    return not bool(ok.all()), float("nan")


def _quality_data(store: Store) -> tuple[Sequence[Any], dict[int, list[Any]],
                                         dict[int, dict[str, float]]]:
    """Evaluators, their main (non-practice) trials by evaluator id, and the answers of each
    trial by criterion."""
    evs, trials, judg = quality_rows(store)
    resp: dict[int, dict[str, float]] = {}
    for tid, crit, v in judg:
        if not crit.startswith(SPAN_KEY):  # an error span (MQM, ESA): the score is checked
            resp.setdefault(tid, {})[crit] = float(v)
    by_ev: dict[int, list[Any]] = {}
    for t in trials:
        by_ev.setdefault(t.evaluator_id, []).append(t)
    return evs, by_ev, resp


def _scaled_check(ts: list[Any], resp: dict[int, dict[str, float]]
                  ) -> tuple[Any, str] | None:
    """The first answered repeat or degraded check among an evaluator's trials ``ts`` whose
    verdict scales answers by a criterion's range (as :func:`_one` does), with that
    criterion; None when there is none."""
    at = {t.position: t for t in ts}
    for t in ts:
        if t.qc_kind not in ("repeat", "degraded"):
            continue
        d = t.details or {}
        orig = at.get(d.get("of_position"))
        mine = resp.get(t.id)
        o = resp.get(orig.id, {}) if orig is not None else {}
        if not mine or not o:
            continue
        crits = list(mine) if "degraded_slot" in d else [c for c in mine if c in o]
        if crits:
            return t, crits[0]
    return None


def _refuse_without_config(store: Store, evs: Sequence[Any], by_ev: dict[int, list[Any]],
                           resp: dict[int, dict[str, float]]) -> None:
    """Raise :class:`~nlgeval.errors.InputError` when :func:`quality_flags` was called
    without the experiment's config but an answered repeat or degraded check needs it: those
    compare answers on the criteria's ranges (the mode's ``check_scales``: the configured
    scales, ESA's 0-100, MQM's floor under the study's weights) with the study's
    ``repeat_tolerance`` and ``alpha``, which only the config gives. Nothing is raised when no
    such check was answered (the flags then need no range)."""
    for ev in evs:
        hit = _scaled_check(by_ev.get(ev.id, []), resp)
        if hit is None:
            continue
        t, crit = hit
        mode = store.meta().get("mode", "absolute")
        raise InputError(
            f"quality_flags needs the experiment's config (cfg) to score evaluator "
            f"{ev.name!r}'s {t.qc_kind} check (position {t.position} of their set): it "
            f"compares the {crit!r} answers on that criterion's range ({mode} mode), with "
            "the study's [checks] repeat_tolerance and alpha, which only the config gives; "
            "pass it: quality_flags(store, load_config(DIRECTORY))", column=crit)


def _one(ev: Any, ts: list[Any], resp: dict[int, dict[str, float]],
         norm: Callable[[str, float], float], tol: float, alpha: float,
         speeder_ms: int) -> dict[str, Any]:
    """The quality row of one evaluator (see the module docstring)."""
    at = {t.position: t for t in ts}
    spans = [ms_between(t.answered_at, t.available_at) for t in ts
             if t.qc_kind is None and t.answered_at is not None]
    times = [x for x in spans if x is not None]
    failed: list[str] = []
    pairs: list[tuple[float, float]] = []
    n_checks = n_ans = 0
    for t in ts:
        if t.qc_kind is None:
            continue
        n_checks += 1
        d = t.details or {}
        orig = at.get(d.get("of_position"))
        mine = resp.get(t.id)
        o = resp.get(orig.id, {}) if orig is not None else {}
        if not mine or (t.qc_kind != "known_answer" and not o):
            continue
        n_ans += 1
        if t.qc_kind == "degraded":
            pairs.append(_pair(d, mine, o, norm))
        if not _check_passed(t.qc_kind, d, mine, o, norm, tol):
            failed.append(t.qc_kind)
    deg_failed, p = degraded_verdict(pairs, alpha)
    med = int(np.median(times)) if times else None
    speeder = bool(speeder_ms and med is not None and med < speeder_ms)
    kinds = [k for k in dict.fromkeys(failed) if k != "degraded"]
    kinds += ["degraded"] if deg_failed else []
    flags = [f"failed_{k}" for k in kinds] + (["speeder"] if speeder else [])
    if ev.started_at is None:
        verdict = "not started"
    elif ev.released_at is not None:  # the kept answers of an abandoned set: never complete
        verdict = "released"
    elif any(t.answered_at is None for t in ts):
        verdict = "in progress"
    else:
        verdict = "failed" if flags else "passed"
    return {
        "evaluator": ev.name, "participant": ev.participant or "",
        "n_trials": sum(t.qc_kind is None for t in ts), "n_checks": n_checks,
        "n_checks_answered": n_ans, "n_failed": len(failed), "failed": ";".join(failed),
        "degraded_pairs": len(pairs), "degraded_pvalue": p,
        "median_time_on_task_ms": med, "speeder": speeder, "flags": ";".join(flags),
        "verdict": verdict,
        "passed": {"passed": True, "failed": False}.get(verdict, pd.NA),
    }


def quality_flags(store: Store, cfg: ExperimentConfig | None = None) -> pd.DataFrame:
    """Per evaluator: attention checks answered and failed, the degraded-pairs test, median
    time on task, flags and verdict (see the module docstring). Columns: ``evaluator,
    participant, n_trials, n_checks, n_checks_answered, n_failed, failed`` (the kinds of the
    single checks that went the wrong way, ``;``-separated), ``degraded_pairs,
    degraded_pvalue, median_time_on_task_ms, speeder, flags`` (``failed_repeat``,
    ``failed_degraded``, ``failed_known_answer``, ``speeder``), ``verdict, passed``.

    ``cfg`` is the experiment's config (:func:`nlgeval.experiment.load_config`): repeats and
    degraded copies are scored on its criteria's ranges (the mode's ``check_scales``) with its
    ``[checks]`` settings. Without it, an answered repeat or degraded check is an
    :class:`~nlgeval.errors.InputError` naming the evaluator, trial and criterion (no range
    is guessed), and speeders are not flagged (the threshold is the config's).

    Examples
    --------
    >>> from nlgeval.experiment.sandbox import example_experiment
    >>> with example_experiment(evaluators=3) as (store, cfg):  # the example study, fresh
    ...     flags = quality_flags(store, cfg)
    >>> flags[["evaluator", "n_checks", "flags", "verdict"]]
      evaluator  n_checks flags      verdict
    0         1         0        not started
    1         2         0        not started
    2         3         0        not started
    """
    checks = cfg.checks if cfg is not None else None
    scale = cfg.mode_impl.check_scales(cfg) if cfg else {}

    def norm(crit: str, v: float) -> float:
        if crit not in scale:  # answers stored under a criterion the config no longer has
            raise InputError(f"attention checks were answered on criterion {crit!r}, which "
                             f"the experiment's config does not have (it has: "
                             f"{', '.join(scale) or 'none'}); was the config changed after "
                             "the answers were stored?", column=crit)
        lo, hi = scale[crit]
        return (v - lo) / (hi - lo) if hi > lo else 0.0

    tol = checks.repeat_tolerance if checks is not None else 0.25
    alpha = getattr(checks, "alpha", 0.05) if checks is not None else 0.05
    speeder_ms = checks.speeder_ms if checks is not None else 0
    evs, by_ev, resp = _quality_data(store)
    if cfg is None:
        _refuse_without_config(store, evs, by_ev, resp)
    rows = [_one(ev, by_ev.get(ev.id, []), resp, norm, tol, alpha, speeder_ms) for ev in evs]
    df = pd.DataFrame(rows, columns=FLAG_COLUMNS)
    df["median_time_on_task_ms"] = df["median_time_on_task_ms"].astype("Int64")
    df["degraded_pvalue"] = df["degraded_pvalue"].astype(float)
    df["passed"] = df["passed"].astype("boolean")
    return df


def checks_summary(f: pd.Series | None) -> str:
    """One evaluator's row of :func:`quality_flags` in a few words, for the dashboard:
    checks answered the right way, the degraded-pairs test and the verdict.

    Examples
    --------
    >>> checks_summary(pd.Series({"verdict": "not started", "n_checks": 2}))
    'not started'
    >>> checks_summary(pd.Series({"verdict": "passed", "n_checks": 6, "n_checks_answered": 6,
    ...                           "n_failed": 1, "degraded_pvalue": 0.03125}))
    '5/6 checks right, degraded p = 0.0312, passed'
    """
    if f is None:
        return ""
    if f["verdict"] == "not started" or not f["n_checks"]:
        return str(f["verdict"])
    out = [f"{f['n_checks_answered'] - f['n_failed']}/{f['n_checks_answered']} checks right"]
    p = f.get("degraded_pvalue")
    if p is not None and p == p:
        out.append(f"degraded p = {p:.3g}")
    return ", ".join([*out, str(f["verdict"])])
