"""The experiment directory and its config file (``experiment.toml``), validated up front.

An experiment is a directory holding ``experiment.toml`` plus the outputs to evaluate in
nlgeval's canonical tidy format (``outputs.csv``: ``system, item, text``) and, optionally, the
input each item was generated from (``context.csv``: ``item, text``), shown above the outputs.
Everything an evaluator could trip over (an unknown rating tool, a criterion without a scale,
items or systems without outputs) is found here, at ``create``/``serve`` time, and raised as an
:class:`~nlgeval.errors.InputError` naming the file and the offending key (as ``column``).

The rating tools are the two of Kow & Belz (2012), LG-Eval, section 2.3: verbal descriptor scales
(``tool = "vds"``, n labelled, ordered categories) and visual analogue scales (``tool = "vas"``, a
slider whose end points carry labels, mono- or bi-polar; an untouched slider is never recorded:
the evaluator must move it or tick "confirm", as in the paper's Figure 1). Judgements are absolute
(one text) or relative (two texts side by side, "which is better and by how much"; section 2.2);
``mode = "triangle"`` runs triangle-test trials (three texts, pick the odd one out).
"""

from __future__ import annotations

import hashlib
import json
import tomllib
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

from nlgeval.errors import InputError
from nlgeval.experiment.scales import PRESETS

CONFIG_NAME = "experiment.toml"
MODES = ("absolute", "relative", "triangle")
TOOLS = ("vds", "vas")
QUESTION_TYPES = ("text", "choice", "number")
TRIANGLE_CRITERION = "odd_one_out"

Mode = Literal["absolute", "relative", "triangle"]


@dataclass(frozen=True)
class CriterionConfig:
    """One quality criterion and the rating tool that measures it."""

    name: str
    question: str
    definition: str
    tool: Literal["vds", "vas"]
    labels: tuple[str, ...] = ()
    values: tuple[float, ...] = ()
    descriptions: tuple[str, ...] = ()
    min: float = 0.0
    max: float = 100.0
    step: float = 1.0
    left_label: str = ""
    right_label: str = ""
    polarity: Literal["monopolar", "bipolar"] = "monopolar"

    @property
    def scale_min(self) -> float:
        return min(self.values) if self.tool == "vds" else self.min

    @property
    def scale_max(self) -> float:
        return max(self.values) if self.tool == "vds" else self.max

    def options(self) -> list[tuple[str, str, str]]:
        """VDS options as ``(value, label, description)`` strings, in scale order."""
        descs = self.descriptions or ("",) * len(self.labels)
        return [
            (format_value(v), lab, d)
            for v, lab, d in zip(self.values, self.labels, descs, strict=True)
        ]


@dataclass(frozen=True)
class Question:
    """An exit-questionnaire question."""

    name: str
    question: str
    type: Literal["text", "choice", "number"] = "text"
    options: tuple[str, ...] = ()
    required: bool = False


DEFAULT_CROWD_PARAMS = ("PROLIFIC_PID", "STUDY_ID", "SESSION_ID", "workerId", "assignmentId",
                        "hitId")
CHECK_KINDS = ("repeat", "degraded", "known_answer")


@dataclass(frozen=True)
class CrowdConfig:
    """The ``[crowd]`` table: open sign-up link, consent, completion code and redirect.

    ``params`` are the URL parameters captured at sign-up (Prolific's ``PROLIFIC_PID``,
    ``STUDY_ID``, ``SESSION_ID``; MTurk's ``workerId``, ``assignmentId``, ``hitId``); the first
    one present is the participant id, which brings a returning participant back to the same
    trial set. ``redirect_url`` may contain ``{code}`` (the completion code).
    """

    open_link: bool = True
    consent: str = ""
    completion_code: str = ""
    redirect_url: str = ""
    params: tuple[str, ...] = DEFAULT_CROWD_PARAMS


@dataclass(frozen=True)
class ChecksConfig:
    """The ``[checks]`` table: attention checks added to every trial set, and speeders.

    ``repeats`` main trials are shown again later (the same output; the two answers must agree
    within ``repeat_tolerance`` of the scale's range); ``degraded`` trials show a degraded copy
    of an output (words shuffled, or cut short: Appraise's "bad reference" idea, Kocmi et al.
    2021 / Graham et al. 2013), which must be rated lower than the original (relative mode: the
    original must be preferred); ``known_answer`` triangle trials show two copies of one text
    and an unrelated one, which must be picked. A trial answered faster than ``speeder_ms``
    (server-side time on task) is flagged, and an evaluator whose median is below it too.
    """

    repeats: int = 0
    degraded: int = 0
    known_answer: int = 0
    repeat_tolerance: float = 0.25
    speeder_ms: int = 2000

    @property
    def any(self) -> bool:
        return bool(self.repeats or self.degraded or self.known_answer)


@dataclass(frozen=True)
class ExperimentConfig:
    """A validated ``experiment.toml``."""

    directory: Path
    title: str
    mode: Mode
    introduction: str
    instructions: str
    criteria: tuple[CriterionConfig, ...]
    outputs: Path | None
    context: Path | None = None
    corpus: str | Path | None = None
    sample_items: int | None = None
    systems: tuple[str, ...] = ()
    items: tuple[str, ...] = ()
    practice: int = 0
    practice_items: tuple[str, ...] = ()
    evaluators: int | None = None
    seed: int = 1
    comments: bool = True
    questionnaire: tuple[Question, ...] = ()
    triangle_questionnaire: Path | None = None
    triangle_question: str = "Two of these texts come from the same source. Which one is different?"
    database: str | None = None
    thank_you: str = "Thank you for taking part. You can close this page now."
    overlap: int | None = None
    crowd: CrowdConfig | None = None
    checks: ChecksConfig = ChecksConfig()
    language: str = "en"
    raw: Mapping[str, Any] = field(default_factory=dict, repr=False)

    @property
    def path(self) -> Path:
        return self.directory / CONFIG_NAME

    @property
    def source_label(self) -> str:
        """How messages name where the outputs come from."""
        if self.corpus is not None:
            return f"corpus '{self.corpus}'"
        return self.outputs.name if self.outputs is not None else "outputs"

    @property
    def criterion_names(self) -> list[str]:
        if self.mode == "triangle":
            return [TRIANGLE_CRITERION]
        return [c.name for c in self.criteria]

    def criterion(self, name: str) -> CriterionConfig:
        for c in self.criteria:
            if c.name == name:
                return c
        raise InputError(f"unknown criterion '{name}'", file=self.path)

    def fingerprint(self) -> str:
        """Hash of what the stored trials and judgements depend on (mode, criteria, scales)."""
        key = {"mode": self.mode, "criteria": [asdict(c) for c in self.criteria]}
        return hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()[:16]


def format_value(v: float) -> str:
    """``3.0`` -> ``"3"``; ``2.5`` -> ``"2.5"`` (form values and display)."""
    return f"{v:g}"


# ---------------------------------------------------------------------------------- parsing
class _Reader:
    """Typed access to a TOML table with errors naming the key path."""

    def __init__(self, table: Mapping[str, Any], where: str, file: Path) -> None:
        self.t, self.where, self.file = table, where, file

    def key(self, k: str) -> str:
        return f"{self.where}.{k}" if self.where else k

    def fail(self, k: str, msg: str) -> InputError:
        return InputError(msg, file=self.file, column=self.key(k))

    def str(self, k: str, default: str | None = None, *, required: bool = False) -> str:
        if k not in self.t:
            if required:
                raise self.fail(k, "is required")
            return "" if default is None else default
        v = self.t[k]
        if not isinstance(v, str):
            raise self.fail(k, f"must be a string, got {v!r}")
        if required and not v.strip():
            raise self.fail(k, "must not be empty")
        return v

    def num(self, k: str, default: float) -> float:
        v = self.t.get(k, default)
        if isinstance(v, bool) or not isinstance(v, int | float):
            raise self.fail(k, f"must be a number, got {v!r}")
        return float(v)

    def int(self, k: str, default: int | None, *, minimum: int = 0) -> int | None:
        v = self.t.get(k, default)
        if v is None:
            return None
        if isinstance(v, bool) or not isinstance(v, int):
            raise self.fail(k, f"must be a whole number, got {v!r}")
        if v < minimum:
            raise self.fail(k, f"must be at least {minimum}, got {v}")
        return v

    def bool(self, k: str, default: bool) -> bool:
        v = self.t.get(k, default)
        if not isinstance(v, bool):
            raise self.fail(k, f"must be true or false, got {v!r}")
        return v

    def strs(self, k: str) -> tuple[str, ...]:
        v = self.t.get(k, [])
        if not isinstance(v, list) or not all(isinstance(x, str) for x in v):
            raise self.fail(k, f"must be a list of strings, got {v!r}")
        return tuple(x.strip() for x in v)

    def nums(self, k: str) -> tuple[float, ...]:
        v = self.t.get(k, [])
        if not isinstance(v, list) or not all(
            isinstance(x, int | float) and not isinstance(x, bool) for x in v
        ):
            raise self.fail(k, f"must be a list of numbers, got {v!r}")
        return tuple(float(x) for x in v)

    def unknown(self, allowed: set[str]) -> None:
        import difflib

        for k in self.t:
            if k not in allowed:
                close = difflib.get_close_matches(k, sorted(allowed), n=1)
                hint = f"; did you mean '{close[0]}'?" if close else ""
                raise self.fail(k, f"unknown key{hint} (allowed: {', '.join(sorted(allowed))})")


_TOP_KEYS = {
    "title", "mode", "introduction", "instructions", "criteria", "outputs", "context", "systems",
    "items", "practice", "practice_items", "evaluators", "seed", "comments", "questionnaire",
    "triangle", "database", "thank_you", "corpus", "sample_items", "overlap", "crowd", "checks",
    "language",
}
_CRIT_KEYS = {
    "name", "question", "definition", "tool", "scale", "labels", "values", "descriptions", "min",
    "max", "step", "left_label", "right_label", "polarity",
}


def _criterion(t: Any, i: int, mode: str, file: Path) -> CriterionConfig:
    where = f"criteria[{i + 1}]"
    if not isinstance(t, dict):
        raise InputError("each [[criteria]] entry must be a table", file=file, column=where)
    r = _Reader(t, where, file)
    r.unknown(_CRIT_KEYS)
    name = r.str("name", required=True).strip()
    tool = r.str("tool", required=True).strip().lower()
    if tool not in TOOLS:
        raise r.fail(
            "tool",
            f"unknown rating tool '{tool}' for criterion '{name}' (use 'vds' for a verbal "
            "descriptor scale or 'vas' for a visual analogue scale)",
        )
    question = r.str("question", f"How would you rate the {name} of the text?")
    definition = r.str("definition", "")
    relative = mode == "relative"
    if tool == "vds":
        preset_name = r.str("scale", "").strip()
        labels, values, descs = r.strs("labels"), r.nums("values"), r.strs("descriptions")
        if preset_name:
            preset = PRESETS.get(preset_name)
            if preset is None:
                raise r.fail(
                    "scale",
                    f"unknown scale preset '{preset_name}' (presets: {', '.join(PRESETS)})",
                )
            if preset.relative != relative:
                kind = "relative" if preset.relative else "absolute"
                raise r.fail("scale", f"preset '{preset_name}' is for {kind} judgements, but "
                             f"mode is '{mode}'")
            labels = labels or preset.labels
            values = values or preset.values
            descs = descs or preset.descriptions
        if not labels:
            raise r.fail(
                "labels",
                f"criterion '{name}' has no scale: give labels = [...] or scale = "
                f"'<preset>' ({', '.join(PRESETS)})",
            )
        if len(labels) < 2:
            raise r.fail("labels", "a verbal descriptor scale needs at least 2 labels")
        if any(not x for x in labels):
            raise r.fail("labels", "labels must not be empty")
        if not values:
            values = tuple(float(v) for v in range(1, len(labels) + 1))
            if relative:  # centred: lower favours A (left), higher favours B (right)
                half = (len(labels) - 1) / 2
                values = tuple(v - 1 - half for v in values)
        if len(values) != len(labels):
            raise r.fail("values", f"has {len(values)} values for {len(labels)} labels")
        if any(b <= a for a, b in zip(values, values[1:], strict=False)):
            raise r.fail("values", "values must increase along the scale")
        if descs and len(descs) != len(labels):
            raise r.fail("descriptions", f"has {len(descs)} descriptions for {len(labels)} labels")
        return CriterionConfig(name, question, definition, "vds", tuple(labels), tuple(values),
                               tuple(descs))
    # visual analogue scale
    for k in ("labels", "values", "descriptions", "scale"):
        if k in t:
            raise r.fail(k, "only applies to a verbal descriptor scale (tool = 'vds')")
    polarity = r.str("polarity", "bipolar" if relative else "monopolar").strip()
    if polarity not in ("monopolar", "bipolar"):
        raise r.fail("polarity", f"must be 'monopolar' or 'bipolar', got '{polarity}'")
    lo = r.num("min", -50.0 if relative else 0.0)
    hi = r.num("max", 50.0 if relative else 100.0)
    if hi <= lo:
        raise r.fail("max", f"max ({hi:g}) must be greater than min ({lo:g})")
    step = r.num("step", 1.0)
    if step <= 0 or step > hi - lo:
        raise r.fail("step", f"must be > 0 and at most max - min, got {step:g}")
    left = r.str("left_label", "A is much better" if relative else "")
    right = r.str("right_label", "B is much better" if relative else "")
    if not left.strip() or not right.strip():
        raise r.fail(
            "left_label" if not left.strip() else "right_label",
            f"criterion '{name}': a visual analogue scale needs labels for both end points "
            "(left_label and right_label)",
        )
    return CriterionConfig(name, question, definition, "vas", min=lo, max=hi, step=step,
                           left_label=left, right_label=right,
                           polarity=polarity)  # type: ignore[arg-type]


def _question(t: Any, i: int, file: Path) -> Question:
    where = f"questionnaire[{i + 1}]"
    if not isinstance(t, dict):
        raise InputError("each [[questionnaire]] entry must be a table", file=file, column=where)
    r = _Reader(t, where, file)
    r.unknown({"name", "question", "type", "options", "required"})
    name = r.str("name", required=True).strip()
    qtype = r.str("type", "text").strip()
    if qtype not in QUESTION_TYPES:
        raise r.fail("type", f"unknown question type '{qtype}' ({', '.join(QUESTION_TYPES)})")
    options = r.strs("options")
    if qtype == "choice" and len(options) < 2:
        raise r.fail("options", "a 'choice' question needs at least 2 options")
    return Question(name, r.str("question", required=True), qtype, options,  # type: ignore[arg-type]
                    r.bool("required", False))


def _crowd(raw: Any, file: Path) -> CrowdConfig | None:
    if raw is None:
        return None
    if not isinstance(raw, dict):
        raise InputError("must be a table ([crowd])", file=file, column="crowd")
    r = _Reader(raw, "crowd", file)
    r.unknown({"open_link", "consent", "completion_code", "redirect_url", "params"})
    redirect = r.str("redirect_url", "").strip()
    if redirect and not redirect.startswith(("https://", "http://")):
        raise r.fail("redirect_url", f"must start with https:// (got {redirect!r})")
    code = r.str("completion_code", "").strip()
    if code and not all(ch.isalnum() or ch in "-_" for ch in code):
        raise r.fail("completion_code", "may hold letters, digits, '-' and '_' only")
    params = r.strs("params") if "params" in raw else DEFAULT_CROWD_PARAMS
    for p in params:
        if not p or not all(ch.isalnum() or ch in "-_" for ch in p):
            raise r.fail("params", f"{p!r} is not a URL parameter name")
    return CrowdConfig(open_link=r.bool("open_link", True), consent=r.str("consent", ""),
                       completion_code=code, redirect_url=redirect, params=params)


def _checks(raw: Any, mode: str, file: Path) -> ChecksConfig:
    if raw is None:
        return ChecksConfig()
    if not isinstance(raw, dict):
        raise InputError("must be a table ([checks])", file=file, column="checks")
    r = _Reader(raw, "checks", file)
    r.unknown({"repeats", "degraded", "known_answer", "repeat_tolerance", "speeder_ms"})
    repeats = r.int("repeats", 0) or 0
    degraded = r.int("degraded", 0) or 0
    known = r.int("known_answer", 0) or 0
    if mode == "triangle" and (repeats or degraded):
        raise r.fail("repeats" if repeats else "degraded",
                     "triangle experiments use known_answer checks (repeats and degraded "
                     "outputs apply to absolute and relative judgements)")
    if mode != "triangle" and known:
        raise r.fail("known_answer", "known-answer trials are triangle trials (mode = "
                     "'triangle'); use repeats or degraded here")
    tol = r.num("repeat_tolerance", 0.25)
    if not 0 <= tol <= 1:
        raise r.fail("repeat_tolerance", f"must be between 0 and 1 (a fraction of the scale's "
                     f"range), got {tol:g}")
    return ChecksConfig(repeats=repeats, degraded=degraded, known_answer=known,
                        repeat_tolerance=tol, speeder_ms=r.int("speeder_ms", 2000) or 0)


def _relative_file(directory: Path, value: str, file: Path, key: str) -> Path:
    p = Path(value)
    p = p if p.is_absolute() else directory / p
    if not p.is_file():
        raise InputError(f"file '{value}' not found (looked for {p})", file=file, column=key)
    return p


def load_config(directory: str | Path) -> ExperimentConfig:
    """Read and validate ``DIRECTORY/experiment.toml`` (the data files are checked by
    :func:`nlgeval.experiment.build.load_materials`)."""
    directory = Path(directory)
    if not directory.is_dir():
        raise InputError("experiment directory not found", file=directory)
    path = directory / CONFIG_NAME
    if not path.is_file():
        raise InputError(
            f"no {CONFIG_NAME} in the experiment directory (start from `nlgeval experiment init`)",
            file=path,
        )
    from nlgeval.io import read_text_utf8

    text = read_text_utf8(path)
    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise InputError(f"not valid TOML: {exc}", file=path) from None
    r = _Reader(raw, "", path)
    r.unknown(_TOP_KEYS)
    title = r.str("title", required=True).strip()
    mode = r.str("mode", "absolute").strip().lower()
    if mode not in MODES:
        raise r.fail("mode", f"unknown mode '{mode}' (use {', '.join(MODES)})")
    crit_raw = raw.get("criteria", [])
    if not isinstance(crit_raw, list):
        raise r.fail("criteria", "must be an array of tables ([[criteria]])")
    criteria = tuple(_criterion(t, i, mode, path) for i, t in enumerate(crit_raw))
    names = [c.name for c in criteria]
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise r.fail("criteria", f"duplicate criterion name(s): {', '.join(dup)}")
    if mode == "triangle":
        if criteria:
            raise r.fail("criteria", "triangle experiments have no rating criteria (the "
                         "evaluator picks the odd text out); remove [[criteria]]")
    elif not criteria:
        raise r.fail("criteria", "at least one [[criteria]] entry is needed")

    tri = raw.get("triangle", {})
    if not isinstance(tri, dict):
        raise r.fail("triangle", "must be a table ([triangle])")
    tr = _Reader(tri, "triangle", path)
    tr.unknown({"questionnaire", "question"})
    tri_q: Path | None = None
    if mode == "triangle":
        qfile = tr.str("questionnaire", required=True)
        tri_q = _relative_file(directory, qfile, path, "triangle.questionnaire")
    elif tri:
        raise r.fail("triangle", "only applies when mode = 'triangle'")

    corpus: str | Path | None = None
    outputs: Path | None = None
    if "corpus" in raw:
        if "outputs" in raw:
            raise r.fail("corpus", "give either corpus = ... or outputs = ..., not both")
        name = r.str("corpus", required=True).strip()
        corpus = directory / name if (directory / name).is_dir() else name
    else:
        outputs = _relative_file(directory, r.str("outputs", "outputs.csv"), path, "outputs")
    context = None
    if "context" in raw:
        context = _relative_file(directory, r.str("context"), path, "context")
    elif (directory / "context.csv").is_file():
        context = directory / "context.csv"
    practice = r.int("practice", 0) or 0
    practice_items = r.strs("practice_items")
    if mode == "triangle" and (practice or practice_items):
        raise r.fail("practice", "triangle experiments take practice trials from the "
                     "questionnaire's 'practice' column, not from practice/practice_items")
    if practice and not practice_items:
        raise r.fail(
            "practice_items",
            f"practice = {practice} needs practice_items = [...]: items of the outputs kept "
            "out of the main trials for practice",
        )
    qs_raw = raw.get("questionnaire", [])
    if not isinstance(qs_raw, list):
        raise r.fail("questionnaire", "must be an array of tables ([[questionnaire]])")
    questions = tuple(_question(t, i, path) for i, t in enumerate(qs_raw))
    qnames = [q.name for q in questions]
    if len(set(qnames)) != len(qnames):
        raise r.fail("questionnaire", "duplicate question names")
    overlap = r.int("overlap", None, minimum=1)
    if overlap is not None and mode == "triangle":
        raise r.fail("overlap", "triangle experiments take their judges from the questionnaire")
    from nlgeval.experiment.i18n import LANGUAGES

    language = r.str("language", "en").strip()
    if language not in LANGUAGES:
        raise r.fail("language", f"no interface catalogue for '{language}' (have: "
                     f"{', '.join(LANGUAGES)})")
    return ExperimentConfig(
        directory=directory,
        title=title,
        mode=mode,  # type: ignore[arg-type]
        introduction=r.str("introduction", ""),
        instructions=r.str("instructions", ""),
        criteria=criteria,
        outputs=outputs,
        context=context,
        corpus=corpus,
        sample_items=r.int("sample_items", None, minimum=1),
        systems=r.strs("systems"),
        items=r.strs("items"),
        practice=practice,
        practice_items=practice_items,
        evaluators=r.int("evaluators", None, minimum=1),
        seed=r.int("seed", 1) or 0,
        comments=r.bool("comments", True),
        questionnaire=questions,
        triangle_questionnaire=tri_q,
        triangle_question=tr.str("question", ExperimentConfig.triangle_question),
        database=r.str("database", "") or None,
        thank_you=r.str("thank_you", ExperimentConfig.thank_you),
        overlap=overlap,
        crowd=_crowd(raw.get("crowd"), path),
        checks=_checks(raw.get("checks"), mode, path),
        language=language,
        raw=raw,
    )
