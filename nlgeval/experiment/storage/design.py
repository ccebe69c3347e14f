"""What ``nlgeval experiment create`` writes (the design: meta facts, outputs, contexts, trial
sets) and what the web app reads once at start-up (texts, contexts, the fixed part of every
trial).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from sqlalchemy import delete, func, select

from nlgeval.experiment.storage.engine import Store
from nlgeval.experiment.storage.schema import Context, Evaluator, Judgement, Meta, Output, Trial

#: the columns of a trial that never change after ``create``, in the order of the cached tuple
TRIAL_FIELDS = ("id", "position", "practice", "item", "system", "system_b", "details",
                "qc_kind")


def count_judgements(store: Store) -> int:
    """How many judgements the database holds.

    Examples
    --------
    >>> from nlgeval.experiment.sandbox import example_experiment
    >>> with example_experiment() as (store, cfg):
    ...     count_judgements(store)
    0
    """
    with store.read() as s:
        return int(s.execute(select(func.count(Judgement.id))).scalar_one())


def write_design(store: Store, meta: Mapping[str, str], outputs: Iterable[tuple[str, str, str]],
                 contexts: Mapping[str, str],
                 sets: Iterable[tuple[str, str, list[dict[str, Any]]]]) -> None:
    """Fill a new database in one transaction: ``meta`` facts, ``outputs`` as ``(system,
    item, text)``, ``contexts`` by item, and the trial ``sets`` as ``(evaluator name, personal
    token, trials)``, each trial a dict of the trials table's columns (``position, practice,
    item, system, system_b, details, qc_kind``), in the evaluator's order.

    Examples
    --------
    >>> import tempfile
    >>> from nlgeval.experiment.storage import default_url
    >>> tmp = tempfile.TemporaryDirectory()
    >>> store = Store(default_url(tmp.name)); store.create_schema()
    >>> trial = dict(position=1, practice=False, item="i1", system="A", system_b=None,
    ...              details=None, qc_kind=None)
    >>> write_design(store, {"mode": "absolute"}, [("A", "i1", "Sunny.")], {},
    ...              [("E1", "secret-token", [trial])])
    >>> texts(store), len(trial_cache(store))
    ({('A', 'i1'): 'Sunny.'}, 1)
    >>> store.dispose(); tmp.cleanup()
    """
    with store.write() as s:
        s.add_all([Meta(key=k, value=v) for k, v in meta.items()])
        s.add_all([Output(system=sy, item=it, text=tx) for sy, it, tx in outputs])
        s.add_all([Context(item=k, text=v) for k, v in contexts.items()])
        for name, token, trials in sets:
            ev = Evaluator(name=name, token=token)
            s.add(ev)
            s.flush()
            s.add_all([Trial(evaluator_id=ev.id, **t) for t in trials])


def texts(store: Store) -> dict[tuple[str, str], str]:
    """Every output's text by ``(system, item)``."""
    with store.read() as s:
        return {(o.system, o.item): o.text for o in s.execute(select(Output)).scalars()}


def contexts(store: Store) -> dict[str, str]:
    """Every item's context (the input shown above the outputs)."""
    with store.read() as s:
        return {c.item: c.text for c in s.execute(select(Context)).scalars()}


def trial_cache(store: Store) -> dict[int, tuple[Any, ...]]:
    """What never changes about each trial, by id: a tuple in :data:`TRIAL_FIELDS` order."""
    t = Trial.__table__.c
    with store.read() as s:
        return {r.id: tuple(r) for r in s.execute(select(*(t[f] for f in TRIAL_FIELDS)))}


def drop_meta(store: Store, key: str) -> None:
    """Delete a ``meta`` fact (the session secret kept there by older versions)."""
    with store.write() as s:
        s.execute(delete(Meta).where(Meta.key == key))
