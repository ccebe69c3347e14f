"""``nlgeval experiment create``: check the materials, allocate trials, set up the database.

The trial sets come from :mod:`nlgeval.experiment.trials` (a Latin-square design, Kow & Belz
2012, or a triangle-test questionnaire), the attention checks from
:mod:`nlgeval.experiment.checks`; everything is checked against the outputs before the
database is written, so a mismatch fails at ``create`` and never in an evaluator's session.
"""

from __future__ import annotations

import json
import secrets
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from nlgeval.errors import InputError
from nlgeval.experiment.checks import add_checks
from nlgeval.experiment.config import ExperimentConfig, load_config
from nlgeval.experiment.modes import get_mode
from nlgeval.experiment.storage import Store, default_url, redact
from nlgeval.experiment.storage.design import count_judgements, write_design
from nlgeval.experiment.trials import Materials, load_materials
from nlgeval.results import Result


@dataclass(frozen=True)
class CreatedExperiment(Result):
    """What ``create`` made: tokens (keep them secret), counts and the design summary.

    :meth:`to_dict` (the ``create --json`` output) is derived from the fields, with the
    directory as a string and the database URL without its password.

    Examples
    --------
    >>> import pandas as pd
    >>> made = CreatedExperiment(Path("study"), "postgresql://me:pw@db/x", "rtok",
    ...                          pd.DataFrame({"evaluator": ["E1"], "token": ["t1"]}))
    >>> d = made.to_dict()
    >>> d["database"], d["directory"], d["evaluators"]
    ('postgresql://me:***@db/x', 'study', [{'evaluator': 'E1', 'token': 't1'}])
    """

    directory: Path
    database: str
    researcher_token: str
    evaluators: pd.DataFrame  # evaluator, token, n_trials, n_practice, n_checks
    design_summary: str = ""
    notes: tuple[str, ...] = field(default=())

    def to_dict(self) -> dict[str, Any]:
        return {**super().to_dict(), "directory": str(self.directory),
                "database": redact(self.database)}


def database_url(cfg: ExperimentConfig, override: str | None = None) -> str:
    """The database: ``override``, else the one ``create`` remembered (see
    :mod:`nlgeval.experiment.settings`), else the config's ``database``, else SQLite in the
    experiment directory.

    Examples
    --------
    >>> from nlgeval.experiment.config import ExperimentConfig
    >>> cfg = ExperimentConfig(Path("/data/study"), "t", "absolute", "", "", (), None)
    >>> database_url(cfg, "postgresql+psycopg://db/x")
    'postgresql+psycopg://db/x'
    >>> database_url(cfg).endswith("/data/study/experiment.db")
    True
    """
    from nlgeval.experiment.settings import load_settings

    return (override or load_settings(cfg.directory).database or cfg.database
            or default_url(cfg.directory))


def _refuse_overwrite(store: Store, directory: str | Path, force: bool) -> None:
    """Never drop judgements; recreate an unused database only with ``force``."""
    if not store.exists():
        return
    n_j = count_judgements(store)
    if n_j:
        raise InputError(
            f"this experiment's database already holds {n_j} judgement(s); export them "
            "and remove the database before creating the experiment again", file=directory)
    if not force:
        raise InputError("the experiment was already created (pass --force to "
                         "recreate it; no judgements have been collected yet)", file=directory)


def _meta_rows(cfg: ExperimentConfig, mat: Materials, seed: int) -> dict[str, str]:
    """Secrets (researcher token, sign-up link), fingerprint and design facts (the signing
    key is kept out of the database: :func:`nlgeval.experiment.settings.new_secret_key`)."""
    code = (cfg.crowd.completion_code if cfg.crowd and cfg.crowd.completion_code
            else secrets.token_hex(4).upper())
    return {
        "researcher_token": secrets.token_urlsafe(24),
        "fingerprint": cfg.fingerprint(),
        "mode": cfg.mode,
        "systems": json.dumps(list(mat.systems)),
        "seed": str(seed),
        "join_token": secrets.token_urlsafe(12),
        "completion_code": code,
    }


def _needed_outputs(trials: pd.DataFrame) -> set[tuple[str, str]]:
    """The ``(system, item)`` outputs some trial shows (only these are copied)."""
    needed: set[tuple[str, str]] = set()
    for rec in trials.itertuples(index=False):
        if rec.details and "sources" in rec.details:
            needed.update(zip(rec.details["sources"], rec.details["items"], strict=True))
        else:
            needed.add((rec.system, rec.item))
            if rec.system_b is not None and not pd.isna(rec.system_b):
                needed.add((rec.system_b, rec.item))
    return needed


def _optional(v: Any) -> str | None:
    return None if v is None or pd.isna(v) else str(v)


def _write_database(store: Store, cfg: ExperimentConfig, mat: Materials, trials: pd.DataFrame,
                    seed: int) -> tuple[str, list[dict[str, Any]]]:
    """Fill a new database (:func:`~nlgeval.experiment.storage.design.write_design`); returns
    the researcher token and one summary row per evaluator (with their personal token)."""
    meta = _meta_rows(cfg, mat, seed)
    needed = _needed_outputs(trials)
    used_items = {it for _, it in needed}
    sets = []
    ev_rows = []
    for name, sub in trials.groupby("evaluator", sort=False):
        token = secrets.token_urlsafe(18)
        sets.append((str(name), token, [dict(
            position=int(rec.position), practice=bool(rec.practice),
            item=str(rec.item), system=str(rec.system), system_b=_optional(rec.system_b),
            details=rec.details, qc_kind=_optional(rec.qc_kind),
        ) for rec in sub.itertuples(index=False)]))
        ev_rows.append({
            "evaluator": str(name), "token": token, "n_trials": int(len(sub)),
            "n_practice": int(sub["practice"].sum()),
            "n_checks": int(sub["qc_kind"].notna().sum()),
        })
    write_design(store, meta, [(r.system, r.item, r.text)
                               for r in mat.corpus.outputs.itertuples(index=False)
                               if (r.system, r.item) in needed],
                 {k: v for k, v in mat.context.items() if k in used_items}, sets)
    return meta["researcher_token"], ev_rows


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

    Parameters
    ----------
    directory : str or Path
        The experiment directory (with ``experiment.toml``).
    evaluators, seed : int, optional
        Evaluators to allocate and allocation seed; default ``None``: the configuration's.
    database, base_url, force : str, str, bool, optional
        Database URL (default: the remembered one, the configured one, else SQLite in the
        directory), the server's public URL, and ``force`` (default False) as above.

    Returns
    -------
    CreatedExperiment

    Examples
    --------
    >>> import tempfile
    >>> from nlgeval.experiment.example import write_example
    >>> tmp = tempfile.TemporaryDirectory()
    >>> d = write_example(tmp.name + "/study")
    >>> made = create_experiment(d, evaluators=3)
    >>> len(made.evaluators), sorted(made.to_dict())[:3]
    (3, ['database', 'design_summary', 'directory'])
    >>> tmp.cleanup()
    """
    cfg = load_config(directory)
    mat = load_materials(cfg)
    seed = cfg.seed if seed is None else seed
    trials, summary = get_mode(cfg.mode).allocate(cfg, mat, evaluators=evaluators, seed=seed)
    trials = add_checks(trials, cfg, mat, seed=seed)

    from nlgeval.experiment.settings import (
        check_base_url,
        load_settings,
        new_secret_key,
        save_settings,
    )

    if base_url is not None:
        base_url = check_base_url(base_url)
    old = load_settings(cfg.directory)
    if database is None and old.database:
        database = old.database  # created before with --database: the same database again
    url = database if database else (cfg.database or default_url(cfg.directory))
    store = Store(url)
    try:
        _refuse_overwrite(store, directory, force)
        store.create_schema(drop=True)
        researcher, ev_rows = _write_database(store, cfg, mat, trials, seed)
        new_secret_key(cfg.directory)  # a new experiment: new session cookies and codes
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
    """Serve-time checks: the database exists and matches the config; returns ``meta``.

    Examples
    --------
    >>> from nlgeval.experiment.sandbox import example_experiment
    >>> with example_experiment() as (store, cfg):
    ...     sorted(check_experiment(cfg, store))[:3]
    ['completion_code', 'fingerprint', 'join_token']
    """
    if not store.exists():
        raise InputError(
            f"the experiment has not been created yet in {redact(store.url)} (run `nlgeval "
            "experiment create DIR` first)", file=cfg.directory)
    store.upgrade_schema()
    meta = store.meta()
    if meta.get("fingerprint") != cfg.fingerprint():
        n_j = count_judgements(store)
        raise InputError(
            "the criteria, rating tools or mode in experiment.toml changed since `nlgeval "
            f"experiment create` ({n_j} judgement(s) collected under the old ones); restore the "
            "old config, or export the judgements and create the experiment again",
            file=cfg.path)
    load_materials(cfg)  # the config's files still parse
    return meta
