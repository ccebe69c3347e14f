"""Which systems a validation study leaves out of the metric-human correlations, and why.

Three reasons, reported system by system (``run.json`` ``settings.exclusions``, the report's
"Left out" line, the JSON output):

* its outputs *are* the references (found automatically: a system whose outputs equal one of
  the item's references for >= 90 % of items; a reference-based metric scores it perfectly
  by construction). The check needs texts: in a study of scores only it cannot run, and the
  report says so instead of "none";
* it is human-written (``--human-systems``, or a ``human`` column in the ratings or score
  file): rated like the systems, shown as a human ceiling, never correlated -- human
  outputs scored against other humans' references inflate metric-human correlations;
* it was named with ``--exclude-systems``.

A system whose outputs a metric scores like references (the metric at its maximum for most of
that system's outputs and hardly any other system's) is flagged with a warning: it may be
human-written.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
import pandas as pd

from nlgeval.errors import InputError

REASONS = {
    "reference": "its outputs are the references, found by the automatic check",
    "human": "human-written: rated as a human ceiling, not correlated",
    "asked": "named with --exclude-systems",
}


def match_name(name: str, known: Sequence[str], what: str, option: str = "") -> str:
    """``name`` as spelled in ``known``, compared case-insensitively; an unknown name is an
    :class:`InputError` with a "did you mean".

    Examples
    --------
    >>> match_name("coherence", ["Coherence", "Fluency"], "criterion")
    'Coherence'
    >>> match_name("Coherance", ["Coherence", "Fluency"], "criterion", "--criteria")
    Traceback (most recent call last):
    ...
    nlgeval.errors.InputError: --criteria: unknown criterion 'Coherance' (did you mean ...
    """
    if name in known:
        return name
    lower: dict[str, str] = {}
    for k in known:
        lower.setdefault(k.lower(), k)
    if name.lower() in lower:
        return lower[name.lower()]
    close = difflib.get_close_matches(name.lower(), list(lower), n=1, cutoff=0.6)
    hint = f"did you mean '{lower[close[0]]}'?; " if close else ""
    shown = ", ".join(list(known)[:12]) + (" ..." if len(known) > 12 else "")
    prefix = f"{option}: " if option else ""
    raise InputError(f"{prefix}unknown {what} '{name}' ({hint}known: {shown or 'none'})")


def has_texts(outputs: pd.DataFrame, references: pd.DataFrame) -> bool:
    """True when the corpus has output texts and references to compare them with.

    >>> has_texts(pd.DataFrame({"text": [""]}), pd.DataFrame({"text": []}))
    False
    """
    return (not references.empty and "text" in outputs.columns
            and bool((outputs["text"].astype(str).str.strip() != "").any()))


def left_out(
    systems: Iterable[str], automatic: Sequence[str] | None, asked: Sequence[str],
    human: Sequence[str],
) -> list[dict[str, Any]]:
    """One record per left-out system: ``system`` and its ``reasons`` (keys of
    :data:`REASONS`) and ``why`` (the words). ``automatic`` None = the check did not run.

    >>> [(r["system"], r["reasons"]) for r in left_out(["A", "H", "R"], ["R"], [], ["H"])]
    [('H', ['human']), ('R', ['reference'])]
    """
    sets = {"human": set(human), "reference": set(automatic or ()), "asked": set(asked)}
    out = []
    for s in sorted(set(systems)):
        reasons = [k for k in ("human", "reference", "asked") if s in sets[k]]
        if reasons:
            out.append({"system": s, "reasons": reasons,
                        "why": "; ".join(REASONS[k] for k in reasons)})
    return out


def check_systems(names: Sequence[str], known: Sequence[str], option: str) -> list[str]:
    """The names of ``option`` (``--exclude-systems``, ``--human-systems``) as the corpus
    spells them.

    >>> check_systems(["sys1"], ["SYS1", "SYS2"], "--exclude-systems")
    ['SYS1']
    """
    return [match_name(str(n), list(known), "system", option) for n in names]


def reference_check_text(ran: bool, found: Sequence[str], kept: bool) -> str:
    """What the automatic check for reference outputs did, in words (never a bare "none").

    >>> reference_check_text(False, [], False)[:48]
    'the automatic check for outputs that are the ref'
    """
    if not ran:
        return ("the automatic check for outputs that are the references could not run: this "
                "study has no texts (name such systems with --exclude-systems, human-written "
                "ones with --human-systems or a 'human' column)")
    if kept:
        return ("systems whose outputs are the references are kept (--keep-reference-systems)"
                + (f": {', '.join(found)}" if found else ""))
    return ("automatic check for outputs that are the references (>= 90 % of items equal to a "
            f"reference): {', '.join(found) if found else 'none found'}")


def exclusion_line(records: Sequence[dict[str, Any]], check: str) -> str:
    """The report's one line on what was left out and why.

    >>> exclusion_line([], "the automatic check ... could not run")
    'Left out of the metric-human correlations: no system (the automatic check ... could not run).'
    """
    if not records:
        return f"Left out of the metric-human correlations: no system ({check})."
    parts = "; ".join(f"{r['system']} ({r['why']})" for r in records)
    return f"Left out of the metric-human correlations: {parts}. {check[0].upper()}{check[1:]}."


def reference_like(
    segments: pd.DataFrame, systems: Sequence[str], metrics: Sequence[str],
    share: float = 0.5, others: float = 0.1,
) -> dict[str, list[str]]:
    """Systems a metric scores like references: at the metric's maximum (over all outputs)
    for at least ``share`` of its outputs while every other system is there for at most
    ``others`` of theirs. Returns system -> the metrics that flag it.

    >>> seg = pd.DataFrame({"metric": "m", "system": ["A", "A", "B", "B", "C", "C"],
    ...                     "item": ["1", "2"] * 3, "score": [1.0, 1.0, .2, .4, .3, .5]})
    >>> reference_like(seg, ["A", "B", "C"], ["m"])
    {'A': ['m']}
    """
    out: dict[str, list[str]] = {}
    seg = segments[segments["system"].isin(list(systems))]
    for m in metrics:
        sub = seg[(seg["metric"] == m) & np.isfinite(seg["score"].astype(float))]
        if sub.empty or sub["system"].nunique() < 3:
            continue
        top = float(sub["score"].max())
        at_top = np.isclose(sub["score"].astype(float), top, rtol=1e-9, atol=1e-12)
        frac = pd.Series(at_top, index=sub.index).groupby(sub["system"]).mean()
        hit = frac[frac >= share]
        if len(hit) == 1 and (frac.drop(hit.index) <= others).all():
            out.setdefault(str(hit.index[0]), []).append(m)
    return out


def reference_like_notes(flagged: dict[str, list[str]]) -> list[str]:
    """Warnings for :func:`reference_like` systems.

    >>> reference_like_notes({"H": ["bleu"]})[0][:44]
    "system 'H' scores like the references: bleu "
    """
    return [f"system '{s}' scores like the references: {', '.join(ms[:5])}"
            f"{' ...' if len(ms) > 5 else ''} at the maximum for most of its outputs and hardly "
            "any other system's; if its outputs are human-written, leave it out with "
            f"--human-systems {s} (or --exclude-systems {s})" for s, ms in flagged.items()]


def human_ceiling_notes(
    human: pd.DataFrame, criteria: Sequence[str], human_systems: Sequence[str],
    systems: Sequence[str],
) -> list[str]:
    """Per criterion, the mean rating of the human-written outputs next to the best system's.

    >>> h = pd.DataFrame({"system": ["A", "B", "H"], "item": "1", "criterion": "q",
    ...                   "score": [2.0, 3.0, 4.5]})
    >>> human_ceiling_notes(h, ["q"], ["H"], ["A", "B"])
    ['human ceiling, q: H 4.5 (mean rating); best system B 3']
    """
    notes = []
    for crit in criteria:
        sub = human[human["criterion"] == crit]
        means = sub.groupby("system")["score"].mean()
        hum = [f"{s} {means[s]:.3g}" for s in human_systems if s in means.index]
        sysm = means[means.index.isin(list(systems))]
        if hum and len(sysm):
            best = sysm.idxmax()
            notes.append(f"human ceiling, {crit}: {', '.join(hum)} (mean rating); best system "
                         f"{best} {sysm[best]:.3g}")
    return notes
