"""Materials (outputs, context) and trial allocation for ``nlgeval experiment create``.

Trial sets come from a Latin-square experimental design (Kow & Belz 2012, LG-Eval, section 3.1:
rows = evaluators, columns = scenarios, symbols = systems or system pairs), built by
:func:`nlgeval.human.design.latin_square_design`, or, for ``mode = "triangle"``, from a
triangle-test questionnaire (columns ``judge, position, item, order, source_1..3, odd_position,
test``, as :func:`nlgeval.triangle.design.triangle_design` writes it). Every trial is checked
against the outputs here, so a mismatch fails at ``create`` and never in an evaluator's session.

Examples
--------
>>> from nlgeval.experiment.sandbox import example_config
>>> with example_config() as cfg:
...     mat = load_materials(cfg)  # each evaluator sees every system equally often:
...     trials, summary = latin_square_trials(cfg, mat, evaluators=3, seed=1)
...     main = trials[~trials["practice"]]
...     main.groupby("evaluator")["system"].value_counts().unstack().to_numpy().tolist()
[[2, 2, 2], [2, 2, 2], [2, 2, 2]]
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from nlgeval.corpus import Corpus, CorpusInfo
from nlgeval.errors import InputError
from nlgeval.experiment.config_types import ExperimentConfig
from nlgeval.io import check_nonempty_text, check_unique, read_table, row_of, to_numeric

TRIANGLE_COLUMNS = ("judge", "position", "item", "order", "source_1", "source_2", "source_3",
                    "odd_position", "test")


@dataclass(frozen=True)
class Materials:
    """The outputs (as a validated :class:`Corpus`) and optional per-item context (made by
    :func:`load_materials`; see the module's example).

    Examples
    --------
    >>> from nlgeval.corpus import Corpus, CorpusInfo
    >>> import pandas as pd
    >>> out = pd.DataFrame({"system": ["A"], "item": ["i1"], "text": ["Hi."]})
    >>> c = Corpus.build(CorpusInfo(name="toy"), out, require_references=False)
    >>> Materials(c, {}, ("A",)).systems
    ('A',)
    """

    corpus: Corpus
    context: dict[str, str]
    systems: tuple[str, ...]


def load_materials(cfg: ExperimentConfig) -> Materials:
    """Read ``outputs.csv`` or the named corpus (and ``context.csv``); check the systems and
    items named in the config.

    Examples
    --------
    >>> from nlgeval.experiment.sandbox import example_config
    >>> with example_config() as cfg:
    ...     mat = load_materials(cfg)
    ...     len(mat.systems), len(mat.context) > 0
    (3, True)
    """
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
                f"{', '.join(have_sys)})", file=cfg.path, key="systems",
            )
    return Materials(corpus=corpus, context=context, systems=tuple(systems))


def check_outputs(mat: Materials, trials: pd.DataFrame, cfg: ExperimentConfig) -> None:
    """Every trial's output exists, else an :class:`InputError` naming the trial.

    Examples
    --------
    >>> from nlgeval.experiment.sandbox import example_config
    >>> with example_config() as cfg:
    ...     mat = load_materials(cfg)
    ...     bad = pd.DataFrame({"evaluator": ["E1"], "position": [1], "item": ["i1"],
    ...                         "system": ["nope"]})
    ...     check_outputs(mat, bad, cfg)
    Traceback (most recent call last):
    ...
    nlgeval.errors.InputError: ...evaluator E1's trial 1 needs the output of system 'nope'...
    """
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
    """Trial sets from a Latin-square design; returns ``(trials, printable design summary)``
    (see the module's example for the balance).

    Examples
    --------
    >>> from nlgeval.experiment.sandbox import example_config
    >>> with example_config("relative") as cfg:
    ...     trials, _ = latin_square_trials(cfg, load_materials(cfg), evaluators=3, seed=1)
    ...     trials[["system", "system_b"]].notna().all().tolist()
    [True, True]
    """
    all_items = mat.corpus.items
    for it in cfg.practice_items:
        if it not in all_items:
            raise InputError(f"practice item '{it}' has no outputs in {cfg.source_label}",
                             file=cfg.path, key="practice_items")
    if cfg.items:
        for it in cfg.items:
            if it not in all_items:
                raise InputError(f"item '{it}' has no outputs in {cfg.source_label}",
                                 file=cfg.path, key="items")
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
                "output from every selected system", file=cfg.path, key="sample_items")
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
    design = _latin_square(cfg, list(mat.systems), items, evaluators, seed)
    t = design.trials.rename(columns={"scenario": "item"}).copy()
    if "system_b" not in t.columns:
        t["system_b"] = None
    t["details"] = None
    return t, design.summary().to_text()


def _latin_square(cfg: ExperimentConfig, systems: list[str], items: list[str],
                  evaluators: int, seed: int) -> Any:
    """The Latin square of the trial sets; counts that do not fit are an error naming the
    config and its ``evaluators`` (or ``items``) key, in the config's words (items, not
    scenarios; ``create`` has no ``--allow-incomplete``)."""
    from nlgeval.human.design import latin_square_design

    try:
        return latin_square_design(
            systems, items, evaluators, seed=seed, relative=cfg.mode_impl.pairwise,
            practice=cfg.practice, practice_scenarios=list(cfg.practice_items) or None)
    except InputError as err:
        if not err.message.startswith("the counts do not fit a Latin square"):
            raise
        msg = err.message.split(" (or pass allow_incomplete")[0].replace(" scenarios ", " items ")
        key = "evaluators" if " evaluators is not " in msg else "items"
        raise InputError(msg, file=cfg.path, key=key) from None


def triangle_trials(cfg: ExperimentConfig, mat: Materials) -> pd.DataFrame:
    """Trial sets from a triangle-test questionnaire (one evaluator per judge).

    Examples
    --------
    >>> from nlgeval.experiment.sandbox import example_config
    >>> with example_config("triangle") as cfg:
    ...     t = triangle_trials(cfg, load_materials(cfg))
    ...     sorted(t["details"].iloc[0])
    ['items', 'odd_position', 'order', 'sources', 'test']
    """
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
