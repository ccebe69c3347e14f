"""Attention checks inserted into every evaluator's trial set (``[checks]`` in the config).

Three kinds: a *repeat* of an earlier main trial (the two answers must agree), a *degraded*
copy of an output (words shuffled or cut short, which must be rated lower -- Appraise's "bad
reference" idea, Kocmi et al. 2021; Graham et al. 2013; in the MQM and ESA modes the copy is
the text whose errors are marked, as in the ESA campaigns of Kocmi et al. 2024) and, for
triangle experiments, a *known-answer* triangle (two copies of one text and an unrelated one,
which must be picked).
They are spread over the set (one per equal part of it) and scored by
:func:`nlgeval.experiment.quality.quality_flags`.

Examples
--------
>>> import numpy as np
>>> degrade_text("the cat sat on the mat", np.random.default_rng(1)) != "the cat sat on the mat"
True
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from nlgeval.errors import InputError
from nlgeval.experiment.config import CHECK_KINDS, ExperimentConfig

if TYPE_CHECKING:
    from nlgeval.experiment.trials import Materials

Row = dict[str, Any]


def degrade_text(text: str, rng: np.random.Generator) -> str:
    """A clearly worse copy of ``text`` for a "degraded output" attention check: its words in
    a random order (at least 3 words), else cut to its first half. Never returns ``text``.

    Examples
    --------
    >>> import numpy as np
    >>> degrade_text("Hi", np.random.default_rng(0))
    'H …'
    """
    words = text.split()
    if len(words) >= 3:
        for _ in range(20):
            perm = rng.permutation(len(words))
            out = " ".join(words[i] for i in perm)
            if out != " ".join(words):
                return out
    half = max(1, len(text) // 2)
    out = text[:half].rstrip() + " …"
    return out if out != text else "…"


def _degraded(o: Row, i: int, text: pd.Series, cfg: ExperimentConfig,
              rng: np.random.Generator) -> Row:
    orig = str(text.loc[(o["system"], o["item"])])
    deg = degrade_text(orig, rng)
    if cfg.mode_impl.pairwise:  # two texts: the original and its degraded copy
        slot = int(rng.integers(1, 3))
        texts = [deg, orig] if slot == 1 else [orig, deg]
        details: dict[str, Any] = {"texts": texts, "degraded_slot": slot}
        c = dict(o, system_b=o["system"])
    else:
        details = {"texts": [deg]}
        c = dict(o)
    c.update(qc_kind="degraded", _of=i, details=details)
    return c


def _known_answer(o: Row, i: int, items_of: pd.Series, cfg: ExperimentConfig,
                  rng: np.random.Generator) -> Row:
    d = o["details"] or {}
    src, it = d["sources"][0], d["items"][0]
    others = [x for x in items_of.get(src, []) if x != it]
    if not others:
        raise InputError(f"a known-answer triangle trial needs a second item with an "
                         f"output of '{src}'", file=cfg.path, key="checks.known_answer")
    it2 = others[int(rng.integers(len(others)))]
    odd = int(rng.integers(1, 4))
    items = [it2 if j == odd else it for j in (1, 2, 3)]
    c = dict(o, item=it, system=src, details={
        "order": "known", "sources": [src, src, src], "items": items,
        "odd_position": odd, "test": "known_answer"})
    c.update(qc_kind="known_answer", _of=i)
    return c


def _gaps(n: int, k: int, rng: np.random.Generator) -> list[int]:
    """Where ``k`` checks go in a set of ``n`` main trials, spread over the whole set: a check
    at gap ``g`` follows the first ``g`` main trials. The gaps from 2 (room for an original and
    one trial between) to ``n`` are cut into ``k`` near-equal runs (``numpy.array_split``) and
    each check takes a seeded random gap in its own run, so every part of the set gets its
    share of checks (instead of the checks piling up towards the end)."""
    lo = min(2, n)
    room = np.arange(lo, n + 1)
    if len(room) < k:  # more checks than places: share them out evenly
        return [lo + (j * len(room)) // k for j in range(k)]
    return [int(rng.choice(part)) for part in np.array_split(room, k)]


def _originals(gaps: list[int], kinds: list[str], rng: np.random.Generator) -> list[int]:
    """The main trial each check copies: one before its gap with at least one trial in
    between (when the set allows), different ones for checks of one kind where possible."""
    used: dict[str, set[int]] = {}
    out = [0] * len(gaps)
    for j in sorted(range(len(gaps)), key=lambda j: gaps[j]):
        pool = list(range(max(1, gaps[j] - 1)))
        free = [i for i in pool if i not in used.setdefault(kinds[j], set())]
        i = int(rng.choice(free or pool))
        used[kinds[j]].add(i)
        out[j] = i
    return out


def _place(main: list[Row], checks: list[Row], gaps: list[int], start: int) -> list[Row]:
    """Insert each check at its gap (after that many main trials), renumber positions from
    ``start`` and record ``details["of_position"]``."""
    seq: list[Row] = []
    by_gap: dict[int, list[Row]] = {}
    for g, c in zip(gaps, checks, strict=True):
        by_gap.setdefault(g, []).append(c)
    for g in range(len(main) + 1):
        if g > 0:
            seq.append(main[g - 1])
        seq += by_gap.get(g, [])
    pos_of: dict[int, int] = {}
    for j, r in enumerate(seq):
        r["position"] = start + j
        if r.get("qc_kind") is None:
            pos_of[r["_key"]] = r["position"]
    for r in seq:
        if r.get("qc_kind") in CHECK_KINDS:
            r["details"] = dict(r["details"] or {}, of_position=pos_of[r["_of"]])
        r.pop("_key", None)
        r.pop("_of", None)
    return seq


def _checks_for(main: list[Row], cfg: ExperimentConfig, text: pd.Series, items_of: pd.Series,
                rng: np.random.Generator) -> tuple[list[Row], list[int]]:
    """One evaluator's check trials and the gap of each (see :func:`_gaps`)."""
    ck = cfg.checks
    kinds = (["repeat"] * ck.repeats + ["degraded"] * ck.degraded
             + ["known_answer"] * ck.known_answer)
    kinds = [kinds[i] for i in rng.permutation(len(kinds))]  # kinds mixed over the strata
    gaps = _gaps(len(main), len(kinds), rng)
    checks: list[Row] = []
    for kind, i in zip(kinds, _originals(gaps, kinds, rng), strict=True):
        if kind == "repeat":
            c = dict(main[i])
            c.update(qc_kind="repeat", _of=i, details=dict(main[i]["details"] or {}) or None)
        elif kind == "degraded":
            c = _degraded(main[i], i, text, cfg, rng)
        else:
            c = _known_answer(main[i], i, items_of, cfg, rng)
        checks.append(c)
    return checks, gaps


def add_checks(
    trials: pd.DataFrame, cfg: ExperimentConfig, mat: Materials, *, seed: int
) -> pd.DataFrame:
    """Attention-check trials (``cfg.checks``) inserted into every evaluator's trial set.

    The checks are spread over the whole set: the set is cut into as many equal parts as
    there are checks and each check goes to a seeded random place in its own part (the kinds
    shuffled over the parts). Each copies one of the evaluator's main trials shown before it,
    with at least one trial in between when the set allows (``details["of_position"]`` is the
    copied trial's position); the main trials, and so the Latin square's balance, are
    untouched. Check trials carry ``qc_kind``; the export leaves them out unless asked for,
    and :func:`nlgeval.experiment.quality.quality_flags` scores them.

    Examples
    --------
    >>> import dataclasses
    >>> from nlgeval.experiment.config import ChecksConfig
    >>> from nlgeval.experiment.trials import latin_square_trials, load_materials
    >>> from nlgeval.experiment.sandbox import example_config
    >>> with example_config() as cfg:
    ...     cfg = dataclasses.replace(cfg, checks=ChecksConfig(repeats=1, degraded=1))
    ...     mat = load_materials(cfg)
    ...     trials, _ = latin_square_trials(cfg, mat, evaluators=3, seed=1)
    ...     t = add_checks(trials, cfg, mat, seed=1)
    ...     len(t) - len(trials), t.groupby("evaluator")["qc_kind"].count().tolist()
    (6, [2, 2, 2])
    """
    t = trials.copy()
    t["qc_kind"] = None
    ck = cfg.checks
    if not ck.any:
        return t
    text = mat.corpus.outputs.set_index(["system", "item"])["text"]
    items_of = mat.corpus.outputs.groupby("system")["item"].agg(list)
    out: list[Row] = []
    for k, (_ev, sub) in enumerate(t.groupby("evaluator", sort=False)):
        rng = np.random.default_rng([seed, k, 1501])
        sub = sub.sort_values("position", kind="stable")
        prac = [dict(r) for r in sub[sub["practice"]].to_dict("records")]
        main = [dict(r) for r in sub[~sub["practice"]].to_dict("records")]
        if not main:
            out += prac
            continue
        for i, r in enumerate(main):
            r["_key"] = i
        checks, gaps = _checks_for(main, cfg, text, items_of, rng)
        start = max((int(r["position"]) for r in prac), default=0) + 1
        out += prac + _place(main, checks, gaps, start)
    return pd.DataFrame(out, columns=list(t.columns)).reset_index(drop=True)
