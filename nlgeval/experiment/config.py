"""The experiment directory and its config file (``experiment.toml``), validated up front.

An experiment is a directory holding ``experiment.toml`` plus the outputs to evaluate in
nlgeval's canonical tidy format (``outputs.csv``: ``system, item, text``) and, optionally, the
input each item was generated from (``context.csv``: ``item, text``), shown above the outputs.
Everything an evaluator could trip over (an unknown rating tool, a criterion without a scale,
items or systems without outputs) is found here, at ``create``/``serve`` time, and raised as an
:class:`~nlgeval.errors.InputError` naming the file and the offending key (``key``).

The rating tools are the two of Kow & Belz (2012), LG-Eval, section 2.3: verbal descriptor scales
(``tool = "vds"``, n labelled, ordered categories) and visual analogue scales (``tool = "vas"``, a
slider whose end points carry labels, mono- or bi-polar; an untouched slider is never recorded:
the evaluator must move it or tick "confirm", as in the paper's Figure 1). Judgements are absolute
(one text) or relative (two texts side by side, "which is better and by how much"; section 2.2);
``mode = "triangle"`` runs triangle-test trials (three texts, pick the odd one out).

The dataclasses live in :mod:`nlgeval.experiment.config_types` and the parsers of the tables
(criteria, questionnaire, crowd, checks) in :mod:`nlgeval.experiment.config_tables`; both are
re-exported here.

Examples
--------
>>> import tempfile
>>> from pathlib import Path
>>> tmp = tempfile.TemporaryDirectory()
>>> d = Path(tmp.name)
>>> _ = (d / "outputs.csv").write_text("system,item,text\\nA,i1,Hello.\\n", encoding="utf-8")
>>> _ = (d / "experiment.toml").write_text('''
... title = "Fluency"
... [[criteria]]
... name = "fluency"
... tool = "vds"
... scale = "text5"
... ''', encoding="utf-8")
>>> cfg = load_config(d)
>>> cfg.mode, cfg.criterion_names, len(cfg.criteria[0].labels), cfg.language
('absolute', ['fluency'], 5, 'en')
>>> tmp.cleanup()
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

from nlgeval.errors import InputError
from nlgeval.experiment.config_tables import (
    Reader,
    parse_checks,
    parse_criterion,
    parse_crowd,
    parse_question,
    relative_file,
)
from nlgeval.experiment.config_types import (
    CHECK_KINDS,
    CONFIG_NAME,
    DEFAULT_CROWD_PARAMS,
    MODES,
    QUESTION_TYPES,
    TOOLS,
    TRIANGLE_CRITERION,
    ChecksConfig,
    CriterionConfig,
    CrowdConfig,
    ExperimentConfig,
    Mode,
    Question,
    format_value,
)
from nlgeval.experiment.modes import Mode as TrialMode
from nlgeval.experiment.modes import get_mode, mode_names
from nlgeval.experiment.modes.triangle import TriangleOptions

__all__ = [
    "CHECK_KINDS", "CONFIG_NAME", "DEFAULT_CROWD_PARAMS", "MODES", "QUESTION_TYPES", "TOOLS",
    "TRIANGLE_CRITERION", "ChecksConfig", "CriterionConfig", "CrowdConfig", "ExperimentConfig",
    "Mode", "Question", "format_value", "load_config",
]

_TOP_KEYS = {
    "title", "mode", "introduction", "instructions", "criteria", "outputs", "context", "systems",
    "items", "practice", "practice_items", "evaluators", "seed", "comments", "questionnaire",
    "database", "thank_you", "corpus", "sample_items", "overlap", "crowd", "checks",
    "language",
}


def _read_toml(directory: Path) -> tuple[Path, dict[str, Any]]:
    if not directory.is_dir():
        raise InputError("experiment directory not found", file=directory)
    path = directory / CONFIG_NAME
    if not path.is_file():
        raise InputError(
            f"no {CONFIG_NAME} in the experiment directory (start from `nlgeval experiment init`)",
            file=path,
        )
    from nlgeval.io import read_text_utf8

    try:
        return path, tomllib.loads(read_text_utf8(path))
    except tomllib.TOMLDecodeError as exc:
        raise InputError(f"not valid TOML: {exc}", file=path) from None


def _criteria(r: Reader, raw: dict[str, Any], mode: TrialMode) -> tuple[CriterionConfig, ...]:
    crit_raw = raw.get("criteria", [])
    if not isinstance(crit_raw, list):
        raise r.fail("criteria", "must be an array of tables ([[criteria]])")
    criteria = tuple(parse_criterion(t, i, mode.name, r.file) for i, t in enumerate(crit_raw))
    names = [c.name for c in criteria]
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise r.fail("criteria", f"duplicate criterion name(s): {', '.join(dup)}")
    mode.check_criteria(r, criteria)
    return criteria


def _mode_options(r: Reader, raw: dict[str, Any], mode: TrialMode, directory: Path) -> Any:
    """The mode's own table (``[triangle]``, ...) parsed by the mode; another mode's table
    is refused."""
    for other in mode_names():
        table = get_mode(other).table
        if table is None or table == mode.table:
            continue
        if table in raw:
            if not isinstance(raw[table], dict):
                raise r.fail(table, f"must be a table ([{table}])")
            raise r.fail(table, f"only applies when mode = '{other}'")
    if mode.table is None:
        return None
    tab = raw.get(mode.table, {})
    if not isinstance(tab, dict):
        raise r.fail(mode.table, f"must be a table ([{mode.table}])")
    return mode.parse_options(Reader(tab, mode.table, r.file), directory)


def _sources(r: Reader, raw: dict[str, Any], directory: Path) -> dict[str, Any]:
    """Where the outputs come from (``corpus`` or ``outputs``) and the optional context."""
    corpus: str | Path | None = None
    outputs: Path | None = None
    if "corpus" in raw:
        if "outputs" in raw:
            raise r.fail("corpus", "give either corpus = ... or outputs = ..., not both")
        name = r.str("corpus", required=True).strip()
        corpus = directory / name if (directory / name).is_dir() else name
    else:
        outputs = relative_file(directory, r.str("outputs", "outputs.csv"), r.file, "outputs")
    context = None
    if "context" in raw:
        context = relative_file(directory, r.str("context"), r.file, "context")
    elif (directory / "context.csv").is_file():
        context = directory / "context.csv"
    return {"corpus": corpus, "outputs": outputs, "context": context}


def _practice(r: Reader, mode: TrialMode) -> tuple[int, tuple[str, ...]]:
    practice = r.int("practice", 0) or 0
    practice_items = r.strs("practice_items")
    if not mode.latin_square and (practice or practice_items):
        raise r.fail("practice", f"{mode.name} experiments take practice trials from the "
                     "questionnaire's 'practice' column, not from practice/practice_items")
    if practice and not practice_items:
        raise r.fail(
            "practice_items",
            f"practice = {practice} needs practice_items = [...]: items of the outputs kept "
            "out of the main trials for practice",
        )
    return practice, practice_items


def _questions(r: Reader, raw: dict[str, Any]) -> tuple[Question, ...]:
    qs_raw = raw.get("questionnaire", [])
    if not isinstance(qs_raw, list):
        raise r.fail("questionnaire", "must be an array of tables ([[questionnaire]])")
    questions = tuple(parse_question(t, i, r.file) for i, t in enumerate(qs_raw))
    qnames = [q.name for q in questions]
    if len(set(qnames)) != len(qnames):
        raise r.fail("questionnaire", "duplicate question names")
    return questions


def _language(r: Reader) -> str:
    from nlgeval.experiment.i18n import LANGUAGES

    language = r.str("language", "en").strip()
    if language not in LANGUAGES:
        raise r.fail("language", f"no interface catalogue for '{language}' (have: "
                     f"{', '.join(LANGUAGES)})")
    return language


def load_config(directory: str | Path) -> ExperimentConfig:
    """Read and validate ``DIRECTORY/experiment.toml`` (the data files are checked by
    :func:`nlgeval.experiment.trials.load_materials`); see also the module's example.

    Parameters
    ----------
    directory : str or Path
        The experiment directory.

    Returns
    -------
    ExperimentConfig
        The validated configuration.

    Examples
    --------
    >>> load_config("no such directory")
    Traceback (most recent call last):
    ...
    nlgeval.errors.InputError: no such directory: experiment directory not found
    """
    directory = Path(directory)
    path, raw = _read_toml(directory)
    r = Reader(raw, "", path)
    r.unknown(_TOP_KEYS | {t for m in mode_names() if (t := get_mode(m).table)})
    title = r.str("title", required=True).strip()
    name = r.str("mode", "absolute").strip().lower()
    if name not in mode_names():
        raise r.fail("mode", f"unknown mode '{name}' (use {', '.join(mode_names())})")
    mode = get_mode(name)
    criteria = _criteria(r, raw, mode)
    options = _mode_options(r, raw, mode, directory)
    sources = _sources(r, raw, directory)
    practice, practice_items = _practice(r, mode)
    questions = _questions(r, raw)
    overlap = r.int("overlap", None, minimum=1)
    if overlap is not None and not mode.latin_square:
        raise r.fail("overlap", f"{name} experiments take their judges from the questionnaire")
    language = _language(r)
    tri = options if isinstance(options, TriangleOptions) else None
    return ExperimentConfig(
        directory=directory,
        title=title,
        mode=name,
        introduction=r.str("introduction", ""),
        instructions=r.str("instructions", ""),
        criteria=criteria,
        **sources,
        sample_items=r.int("sample_items", None, minimum=1),
        systems=r.strs("systems"),
        items=r.strs("items"),
        practice=practice,
        practice_items=practice_items,
        evaluators=r.int("evaluators", None, minimum=1),
        seed=r.int("seed", 1) or 0,
        comments=r.bool("comments", True),
        questionnaire=questions,
        triangle_questionnaire=tri.questionnaire if tri else None,
        triangle_question=tri.question if tri else ExperimentConfig.triangle_question,
        database=r.str("database", "") or None,
        thank_you=r.str("thank_you", ExperimentConfig.thank_you),
        overlap=overlap,
        crowd=parse_crowd(raw.get("crowd"), path),
        checks=parse_checks(raw.get("checks"), name, path),
        language=language,
        raw=raw,
        options=options,
    )
