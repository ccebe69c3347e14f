"""``nlgeval experiment create``: check the materials, allocate trials, set up the database.

Trial sets come from a Latin-square experimental design (Kow & Belz 2012, LG-Eval, section 3.1:
rows = evaluators, columns = scenarios, symbols = systems or system pairs), built by
:func:`nlgeval.human.design.latin_square_design`, or, for ``mode = "triangle"``, from a
triangle-test questionnaire (columns ``judge, position, item, order, source_1..3, odd_position,
test``, as :func:`nlgeval.triangle.design.triangle_design` writes it). Every trial is checked
against the outputs here, so a mismatch fails at ``create`` and never in an evaluator's session.
"""

from __future__ import annotations

import json
import secrets
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from nlgeval.corpus import Corpus, CorpusInfo
from nlgeval.errors import InputError
from nlgeval.experiment.config import ExperimentConfig, load_config
from nlgeval.experiment.storage import (
    Context,
    Evaluator,
    Judgement,
    Meta,
    Output,
    Store,
    Trial,
    default_url,
    redact,
)
from nlgeval.io import check_nonempty_text, check_unique, read_table, row_of, to_numeric

TRIANGLE_COLUMNS = ("judge", "position", "item", "order", "source_1", "source_2", "source_3",
                    "odd_position", "test")


@dataclass(frozen=True)
class Materials:
    """The outputs (as a validated :class:`Corpus`) and optional per-item context."""

    corpus: Corpus
    context: dict[str, str]
    systems: tuple[str, ...]


def load_materials(cfg: ExperimentConfig) -> Materials:
    """Read ``outputs.csv`` or the named corpus (and ``context.csv``); check the systems and
    items named in the config."""
    if cfg.corpus is not None:
        from nlgeval.corpora import load_corpus

        corpus = load_corpus(cfg.corpus)
    else:
        assert cfg.outputs is not None
        out = read_table(cfg.outputs, ("system", "item", "text"))
        corpus = Corpus.build(
            CorpusInfo(name=cfg.title), out, require_references=False,
            files={"outputs": cfg.outputs},
        )
    context: dict[str, str] = {}
    if cfg.context is not None:
        ctx = read_table(cfg.context, ("item", "text"))
        ctx["item"] = ctx["item"].astype(str).str.strip()
        check_nonempty_text(ctx, "text", file=cfg.context, what="context")
        check_unique(ctx, ("item",), file=cfg.context, what="context item")
        context = dict(zip(ctx["item"], ctx["text"], strict=True))
    have_sys = corpus.systems
    systems = cfg.systems or tuple(have_sys)
    for s in systems:
        if s not in have_sys:
            raise InputError(
                f"system '{s}' has no outputs in {cfg.source_label} (systems there: "
                f"{', '.join(have_sys)})", file=cfg.path, column="systems",
            )
    return Materials(corpus=corpus, context=context, systems=tuple(systems))


def _check_outputs(mat: Materials, trials: pd.DataFrame, cfg: ExperimentConfig) -> None:
    have = set(zip(mat.corpus.outputs["system"], mat.corpus.outputs["item"], strict=True))
    for col in ("system", "system_b"):
        if col not in trials.columns:
            continue
        for rec in trials[["evaluator", "position", "item", col]].itertuples(index=False):
            sysname = getattr(rec, col)
            if sysname is None or (isinstance(sysname, float) and pd.isna(sysname)):
                continue
            if (sysname, rec.item) not in have:
                raise InputError(
                    f"the trial sets do not match the outputs: evaluator {rec.evaluator}'s "
                    f"trial {rec.position} needs the output of system '{sysname}' for item "
                    f"'{rec.item}', and {cfg.source_label} has none",
                    file=cfg.outputs or cfg.path,
                )


def latin_square_trials(
    cfg: ExperimentConfig, mat: Materials, *, evaluators: int, seed: int
) -> tuple[pd.DataFrame, str]:
    """Trial sets from a Latin-square design; returns ``(trials, printable design summary)``."""
    from nlgeval.human.design import latin_square_design

    all_items = mat.corpus.items
    for it in cfg.practice_items:
        if it not in all_items:
            raise InputError(f"practice item '{it}' has no outputs in {cfg.source_label}",
                             file=cfg.path, column="practice_items")
    if cfg.items:
        for it in cfg.items:
            if it not in all_items:
                raise InputError(f"item '{it}' has no outputs in {cfg.source_label}",
                                 file=cfg.path, column="items")
        items = list(cfg.items)
    else:
        items = [i for i in all_items if i not in set(cfg.practice_items)]
    # only items every selected system has an output for can be allocated by a Latin square
    by_item = mat.corpus.outputs.groupby("item")["system"].agg(set)
    if cfg.sample_items is not None and not cfg.items:
        # a seeded random sample of the items that every selected system has an output for
        eligible = [i for i in items if set(mat.systems) <= by_item.get(i, set())]
        if cfg.sample_items > len(eligible):
            raise InputError(
                f"sample_items = {cfg.sample_items}, but only {len(eligible)} item(s) have an "
                "output from every selected system", file=cfg.path, column="sample_items")
        pick = np.random.default_rng(seed).choice(len(eligible), cfg.sample_items,
                                                   replace=False)
        items = [eligible[i] for i in sorted(pick)]
    for it in items:
        missing = [s for s in mat.systems if s not in by_item.get(it, set())]
        if missing:
            raise InputError(
                f"the trial sets do not match the outputs: item '{it}' has no output from "
                f"system(s) {', '.join(missing)} (every system needs an output for every item; "
                "list the items to use in items = [...] or set sample_items = N)",
                file=cfg.outputs or cfg.path,
            )
    design = latin_square_design(
        list(mat.systems), items, evaluators, seed=seed, relative=cfg.mode == "relative",
        practice=cfg.practice, practice_scenarios=list(cfg.practice_items) or None,
    )
    t = design.trials.rename(columns={"scenario": "item"}).copy()
    if "system_b" not in t.columns:
        t["system_b"] = None
    t["details"] = None
    return t, design.summary().to_text()


def triangle_trials(cfg: ExperimentConfig, mat: Materials) -> pd.DataFrame:
    """Trial sets from a triangle-test questionnaire (one evaluator per judge)."""
    path = cfg.triangle_questionnaire
    assert path is not None
    q = read_table(path, TRIANGLE_COLUMNS, optional=("practice", "item_1", "item_2", "item_3"))
    if q.empty:
        raise InputError("the triangle questionnaire has no rows", file=path)
    pos = to_numeric(q, "position", file=path, what="a trial position (1, 2, ...)")
    odd = to_numeric(q, "odd_position", file=path, what="1, 2 or 3")
    recs: list[dict[str, Any]] = []
    for i in range(len(q)):
        row = q.iloc[i]
        r = row_of(q, i)
        o = odd.iloc[i]
        if o not in (1.0, 2.0, 3.0):
            raise InputError(f"{row['odd_position']!r} is not 1, 2 or 3", file=path, row=r,
                             column="odd_position")
        order = str(row["order"]).strip()
        sources = [str(row[f"source_{k}"]).strip() for k in (1, 2, 3)]
        if len(set(sources)) != 2:
            raise InputError(f"a triad needs exactly two different sources, got {sources}",
                             file=path, row=r, column="source_1")
        odd_src = sources[int(o) - 1]
        if sources.count(odd_src) != 1:
            raise InputError(f"odd_position {int(o)} names source '{odd_src}', which appears "
                             "twice in the triad", file=path, row=r, column="odd_position")
        for k, s in enumerate(sources, 1):
            if s not in mat.corpus.systems:
                raise InputError(f"source '{s}' has no outputs in {cfg.source_label}",
                                 file=path, row=r, column=f"source_{k}")
        item = str(row["item"]).strip()
        items = [str(row[f"item_{k}"]).strip() or item for k in (1, 2, 3)]
        practice = str(row["practice"]).strip().lower() in ("1", "true", "yes")
        recs.append({
            "evaluator": str(row["judge"]).strip(), "position": int(pos.iloc[i]),
            "practice": practice, "item": item, "system": odd_src, "system_b": None,
            "details": {"order": order, "sources": sources, "items": items,
                        "odd_position": int(o), "test": str(row["test"]).strip()},
        })
    t = pd.DataFrame(recs)
    dup = t.duplicated(["evaluator", "position"])
    if dup.any():
        i = int(dup.to_numpy().nonzero()[0][0])
        raise InputError("duplicate (judge, position)", file=path, row=row_of(q, i),
                         column="position")
    have = set(zip(mat.corpus.outputs["system"], mat.corpus.outputs["item"], strict=True))
    for i, rec in enumerate(recs):
        for k, (s, it) in enumerate(zip(rec["details"]["sources"], rec["details"]["items"],
                                        strict=True), 1):
            if (s, it) not in have:
                raise InputError(
                    f"the trial sets do not match the outputs: slot {k} needs the output of "
                    f"'{s}' for item '{it}', and {cfg.source_label} has none",
                    file=path, row=row_of(q, i), column=f"source_{k}")
    return t.sort_values(["evaluator", "position"], kind="stable").reset_index(drop=True)


@dataclass(frozen=True)
class CreatedExperiment:
    """What ``create`` made: tokens (keep them secret), counts and the design summary."""

    directory: Path
    database: str
    researcher_token: str
    evaluators: pd.DataFrame  # evaluator, token, n_trials, n_practice, n_checks
    design_summary: str = ""
    notes: tuple[str, ...] = field(default=())

    def to_dict(self) -> dict[str, Any]:
        return {
            "directory": str(self.directory),
            "database": redact(self.database),
            "researcher_token": self.researcher_token,
            "evaluators": self.evaluators.to_dict("records"),
            "design_summary": self.design_summary,
            "notes": list(self.notes),
        }


def database_url(cfg: ExperimentConfig, override: str | None = None) -> str:
    """The database: ``override``, else the one ``create`` remembered (see
    :mod:`nlgeval.experiment.settings`), else the config's ``database``, else SQLite in the
    experiment directory."""
    from nlgeval.experiment.settings import load_settings

    return (override or load_settings(cfg.directory).database or cfg.database
            or default_url(cfg.directory))


def degrade_text(text: str, rng: np.random.Generator) -> str:
    """A clearly worse copy of ``text`` for a "degraded output" attention check: its words in
    a random order (at least 3 words), else cut to its first half. Never returns ``text``."""
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


def add_checks(
    trials: pd.DataFrame, cfg: ExperimentConfig, mat: Materials, *, seed: int
) -> pd.DataFrame:
    """Attention-check trials (``cfg.checks``) inserted into every evaluator's trial set.

    Each check copies one of the evaluator's main trials (``details["of_position"]`` is the
    copied trial's position) and is put at a seeded random place after it (with at least one
    trial in between when the set allows); the main trials, and so the Latin square's
    balance, are untouched. Check trials carry ``qc_kind``; the export leaves them out unless
    asked for, and :func:`nlgeval.experiment.export.quality_flags` scores them.
    """
    t = trials.copy()
    t["qc_kind"] = None
    ck = cfg.checks
    if not ck.any:
        return t
    text = mat.corpus.outputs.set_index(["system", "item"])["text"]
    items_of = mat.corpus.outputs.groupby("system")["item"].agg(list)
    out: list[dict[str, Any]] = []
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
        seq = list(main)
        checks: list[dict[str, Any]] = []
        first_half = max(1, (len(main) + 1) // 2)

        def pick(n: int, pool: int, rng: np.random.Generator = rng) -> list[int]:
            return [int(x) for x in rng.choice(pool, size=min(n, pool), replace=False)]

        for i in pick(ck.repeats, first_half):
            c = dict(main[i])
            c.update(qc_kind="repeat", _of=i, details=dict(main[i]["details"] or {}) or None)
            checks.append(c)
        for i in pick(ck.degraded, len(main)):
            o = main[i]
            orig = str(text.loc[(o["system"], o["item"])])
            deg = degrade_text(orig, rng)
            if cfg.mode == "relative":
                slot = int(rng.integers(1, 3))
                texts = [deg, orig] if slot == 1 else [orig, deg]
                details = {"texts": texts, "degraded_slot": slot}
                c = dict(o, system_b=o["system"])
            else:
                details = {"texts": [deg]}
                c = dict(o)
            c.update(qc_kind="degraded", _of=i, details=details)
            checks.append(c)
        for i in pick(ck.known_answer, len(main)):
            o = main[i]
            d = o["details"] or {}
            src, it = d["sources"][0], d["items"][0]
            others = [x for x in items_of.get(src, []) if x != it]
            if not others:
                raise InputError(f"a known-answer triangle trial needs a second item with an "
                                 f"output of '{src}'", file=cfg.path, column="checks.known_answer")
            it2 = others[int(rng.integers(len(others)))]
            odd = int(rng.integers(1, 4))
            items = [it2 if j == odd else it for j in (1, 2, 3)]
            c = dict(o, item=it, system=src, details={
                "order": "known", "sources": [src, src, src], "items": items,
                "odd_position": odd, "test": "known_answer"})
            c.update(qc_kind="known_answer", _of=i)
            checks.append(c)
        for c in checks:
            at = next(j for j, r in enumerate(seq) if r.get("_key") == c["_of"])
            lo = min(at + 2, len(seq))
            seq.insert(int(rng.integers(lo, len(seq) + 1)), c)
        start = max((int(r["position"]) for r in prac), default=0) + 1
        pos_of: dict[int, int] = {}
        for j, r in enumerate(seq):
            r["position"] = start + j
            if r.get("qc_kind") is None:
                pos_of[r["_key"]] = r["position"]
        for r in seq:
            if r.get("qc_kind") in ("repeat", "degraded", "known_answer"):
                r["details"] = dict(r["details"] or {}, of_position=pos_of[r["_of"]])
            r.pop("_key", None)
            r.pop("_of", None)
        out += prac + seq
    return pd.DataFrame(out, columns=list(t.columns)).reset_index(drop=True)


def create_experiment(
    directory: str | Path,
    *,
    evaluators: int | None = None,
    seed: int | None = None,
    database: str | None = None,
    force: bool = False,
    base_url: str | None = None,
) -> CreatedExperiment:
    """Validate the experiment, allocate trial sets and (re)create its database.

    Refuses to overwrite an existing experiment database unless ``force=True``; ``force``
    also refuses when judgements have been collected (delete the database by hand to discard
    them -- judgements are never dropped implicitly).

    ``database`` and ``base_url`` are remembered in the experiment directory
    (:mod:`nlgeval.experiment.settings`) for ``serve``, ``status`` and ``export``.
    """
    cfg = load_config(directory)
    mat = load_materials(cfg)
    seed = cfg.seed if seed is None else seed
    summary = ""
    if cfg.mode == "triangle":
        trials = triangle_trials(cfg, mat)
    else:
        n_ev = evaluators or cfg.evaluators
        if cfg.overlap is not None:
            n_sym = len(mat.systems)
            if cfg.mode == "relative":
                n_sym = n_sym * (n_sym - 1) // 2
            want = cfg.overlap * n_sym
            if n_ev and n_ev != want:
                raise InputError(
                    f"overlap = {cfg.overlap} means {want} evaluators ({cfg.overlap} x "
                    f"{n_sym} {'system pairs' if cfg.mode == 'relative' else 'systems'}: each "
                    f"output judged by {cfg.overlap}), but evaluators = {n_ev}",
                    file=cfg.path, column="overlap")
            n_ev = want
        if not n_ev:
            raise InputError("how many evaluators? set evaluators = N in the config or pass "
                             "--evaluators", file=cfg.path, column="evaluators")
        trials, summary = latin_square_trials(cfg, mat, evaluators=n_ev, seed=seed)
        _check_outputs(mat, trials, cfg)
    trials = add_checks(trials, cfg, mat, seed=seed)

    from nlgeval.experiment.settings import load_settings, save_settings

    if base_url is not None:
        from nlgeval.experiment.settings import check_base_url

        base_url = check_base_url(base_url)
    old = load_settings(cfg.directory)
    if database is None and old.database:
        database = old.database  # created before with --database: the same database again
    url = database if database else (cfg.database or default_url(cfg.directory))
    store = Store(url)
    try:
        if store.exists():
            with store.read() as s:
                n_j = s.query(Judgement).count()
            if n_j:
                raise InputError(
                    f"this experiment's database already holds {n_j} judgement(s); export them "
                    "and remove the database before creating the experiment again",
                    file=directory)
            if not force:
                raise InputError("the experiment was already created (pass --force to "
                                 "recreate it; no judgements have been collected yet)",
                                 file=directory)
        store.create_schema(drop=True)
        researcher = secrets.token_urlsafe(24)
        ev_rows = []
        with store.write() as s:
            s.add_all([
                Meta(key="researcher_token", value=researcher),
                Meta(key="secret_key", value=secrets.token_hex(32)),
                Meta(key="fingerprint", value=cfg.fingerprint()),
                Meta(key="mode", value=cfg.mode),
                Meta(key="systems", value=json.dumps(list(mat.systems))),
                Meta(key="seed", value=str(seed)),
                Meta(key="join_token", value=secrets.token_urlsafe(12)),
                Meta(key="completion_code", value=(cfg.crowd.completion_code if cfg.crowd
                                                   and cfg.crowd.completion_code else
                                                   secrets.token_hex(4).upper())),
            ])
            needed = set()
            for rec in trials.itertuples(index=False):
                if rec.details and "sources" in rec.details:
                    needed.update(zip(rec.details["sources"], rec.details["items"], strict=True))
                else:
                    needed.add((rec.system, rec.item))
                    if rec.system_b is not None and not pd.isna(rec.system_b):
                        needed.add((rec.system_b, rec.item))
            o = mat.corpus.outputs
            s.add_all([
                Output(system=r.system, item=r.item, text=r.text)
                for r in o.itertuples(index=False) if (r.system, r.item) in needed
            ])
            used_items = {it for _, it in needed}
            s.add_all([Context(item=k, text=v) for k, v in mat.context.items()
                       if k in used_items])
            for name, sub in trials.groupby("evaluator", sort=False):
                token = secrets.token_urlsafe(18)
                ev = Evaluator(name=str(name), token=token)
                s.add(ev)
                s.flush()
                for rec in sub.itertuples(index=False):
                    sb = rec.system_b
                    s.add(Trial(
                        evaluator_id=ev.id, position=int(rec.position),
                        practice=bool(rec.practice), item=str(rec.item), system=str(rec.system),
                        system_b=None if sb is None or pd.isna(sb) else str(sb),
                        details=rec.details,
                        qc_kind=None if rec.qc_kind is None or pd.isna(rec.qc_kind)
                        else str(rec.qc_kind),
                    ))
                ev_rows.append({
                    "evaluator": str(name), "token": token, "n_trials": int(len(sub)),
                    "n_practice": int(sub["practice"].sum()),
                    "n_checks": int(sub["qc_kind"].notna().sum()),
                })
        trials.assign(details=trials["details"].map(
            lambda d: json.dumps(d) if d else "")).to_csv(cfg.directory / "trials.csv",
                                                         index=False)
    finally:
        store.dispose()
    save_settings(cfg.directory, database=database or None,
                  base_url=base_url or old.base_url)
    return CreatedExperiment(
        directory=cfg.directory, database=url, researcher_token=researcher,
        evaluators=pd.DataFrame(ev_rows), design_summary=summary,
        notes=tuple(mat.corpus.notes),
    )


def check_experiment(cfg: ExperimentConfig, store: Store) -> dict[str, str]:
    """Serve-time checks: the database exists and matches the config; returns ``meta``."""
    if not store.exists():
        raise InputError(
            f"the experiment has not been created yet in {redact(store.url)} (run `nlgeval "
            "experiment create DIR` first)", file=cfg.directory)
    store.upgrade_schema()
    meta = store.meta()
    if meta.get("fingerprint") != cfg.fingerprint():
        with store.read() as s:
            n_j = s.query(Judgement).count()
        raise InputError(
            "the criteria, rating tools or mode in experiment.toml changed since `nlgeval "
            f"experiment create` ({n_j} judgement(s) collected under the old ones); restore the "
            "old config, or export the judgements and create the experiment again",
            file=cfg.path)
    load_materials(cfg)  # the config's files still parse
    return meta
