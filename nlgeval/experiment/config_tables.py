"""Parsers of the tables of ``experiment.toml`` (criteria, questionnaire, crowd, checks),
each raising :class:`~nlgeval.errors.InputError` naming the file and the key path.

Examples
--------
>>> from pathlib import Path
>>> c = parse_criterion({"name": "fluency", "tool": "vas", "left_label": "bad",
...                      "right_label": "good"}, 0, "absolute", Path("experiment.toml"))
>>> c.tool, c.min, c.max, c.polarity
('vas', 0.0, 100.0, 'monopolar')
"""

from __future__ import annotations

import builtins
import dataclasses
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from nlgeval.errors import InputError
from nlgeval.experiment.config_types import (
    DEFAULT_CROWD_PARAMS,
    QUESTION_TYPES,
    TOOLS,
    ChecksConfig,
    CriterionConfig,
    CrowdConfig,
    Question,
    mode_spec,
)
from nlgeval.experiment.platforms import PLATFORM_KEYS, parse_platform
from nlgeval.experiment.scales import PRESETS


class Reader:
    """Typed access to a TOML table with errors naming the key path.

    Examples
    --------
    >>> r = Reader({"step": "1"}, "criteria[2]", Path("experiment.toml"))
    >>> r.num("min", 0.0)
    0.0
    >>> r.num("step", 1.0)
    Traceback (most recent call last):
    ...
    nlgeval.errors.InputError: experiment.toml, key 'criteria[2].step': must be a number, got '1'
    """

    def __init__(self, table: Mapping[str, Any], where: str, file: Path) -> None:
        self.t, self.where, self.file = table, where, file

    def key(self, k: str) -> str:
        return f"{self.where}.{k}" if self.where else k

    def fail(self, k: str, msg: str) -> InputError:
        return InputError(msg, file=self.file, key=self.key(k))

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

    def num(self, k: builtins.str, default: float) -> float:
        v = self.t.get(k, default)
        if isinstance(v, bool) or not isinstance(v, int | float):
            raise self.fail(k, f"must be a number, got {v!r}")
        return float(v)

    def int(self, k: builtins.str, default: int | None, *, minimum: int = 0) -> int | None:
        v = self.t.get(k, default)
        if v is None:
            return None
        if isinstance(v, bool) or not isinstance(v, int):
            raise self.fail(k, f"must be a whole number, got {v!r}")
        if v < minimum:
            raise self.fail(k, f"must be at least {minimum}, got {v}")
        return v

    def bool(self, k: builtins.str, default: bool) -> bool:
        v = self.t.get(k, default)
        if not isinstance(v, bool):
            raise self.fail(k, f"must be true or false, got {v!r}")
        return v

    def strs(self, k: builtins.str) -> tuple[builtins.str, ...]:
        v = self.t.get(k, [])
        if not isinstance(v, list) or not all(isinstance(x, str) for x in v):
            raise self.fail(k, f"must be a list of strings, got {v!r}")
        return tuple(x.strip() for x in v)

    def nums(self, k: builtins.str) -> tuple[float, ...]:
        v = self.t.get(k, [])
        if not isinstance(v, list) or not all(
            isinstance(x, int | float) and not isinstance(x, bool) for x in v
        ):
            raise self.fail(k, f"must be a list of numbers, got {v!r}")
        return tuple(float(x) for x in v)

    def unknown(self, allowed: set[builtins.str]) -> None:
        import difflib

        for k in self.t:
            if k not in allowed:
                close = difflib.get_close_matches(k, sorted(allowed), n=1)
                hint = f"; did you mean '{close[0]}'?" if close else ""
                raise self.fail(k, f"unknown key{hint} (allowed: {', '.join(sorted(allowed))})")


_CRIT_KEYS = {
    "name", "question", "definition", "tool", "scale", "labels", "values", "descriptions", "min",
    "max", "step", "left_label", "right_label", "polarity", "label",
}


def parse_criterion(t: Any, i: int, mode: str, file: Path) -> CriterionConfig:
    """The ``i``-th ``[[criteria]]`` entry (a verbal descriptor or visual analogue scale).

    Examples
    --------
    >>> c = parse_criterion({"name": "quality", "tool": "vds", "scale": "relative5"}, 0,
    ...                     "relative", Path("experiment.toml"))
    >>> c.values
    (-2, -1, 0, 1, 2)
    """
    where = f"criteria[{i + 1}]"
    if not isinstance(t, dict):
        raise InputError("each [[criteria]] entry must be a table", file=file, key=where)
    r = Reader(t, where, file)
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
    if tool == "vds":
        c = _vds(r, name, question, definition, mode)
    else:
        c = _vas(r, t, name, question, definition, mode)
    return dataclasses.replace(c, label=r.str("label", "").strip())


def _relative(mode: str) -> bool:
    """The mode's scales are relative ("which is better and by how much")."""
    return mode_spec(mode).relative_scales


def _vds(r: Reader, name: str, question: str, definition: str, mode: str) -> CriterionConfig:
    """A verbal descriptor scale: labels (or a preset), increasing values, descriptions."""
    relative = _relative(mode)
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


def _vas(r: Reader, t: Mapping[str, Any], name: str, question: str, definition: str,
         mode: str) -> CriterionConfig:
    """A visual analogue scale: range, step, polarity and labels of both end points."""
    relative = _relative(mode)
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
                           polarity=polarity)  # type: ignore[arg-type]  # checked above


def parse_question(t: Any, i: int, file: Path) -> Question:
    """The ``i``-th ``[[questionnaire]]`` entry.

    Examples
    --------
    >>> parse_question({"name": "age", "question": "Your age?", "type": "number"}, 0,
    ...                Path("experiment.toml")).type
    'number'
    """
    where = f"questionnaire[{i + 1}]"
    if not isinstance(t, dict):
        raise InputError("each [[questionnaire]] entry must be a table", file=file, key=where)
    r = Reader(t, where, file)
    r.unknown({"name", "question", "type", "options", "required"})
    name = r.str("name", required=True).strip()
    qtype = r.str("type", "text").strip()
    if qtype not in QUESTION_TYPES:
        raise r.fail("type", f"unknown question type '{qtype}' ({', '.join(QUESTION_TYPES)})")
    options = r.strs("options")
    if qtype == "choice" and len(options) < 2:
        raise r.fail("options", "a 'choice' question needs at least 2 options")
    return Question(name, r.str("question", required=True), qtype, options,  # type: ignore[arg-type]  # one of QUESTION_TYPES
                    r.bool("required", False))


def parse_crowd(raw: Any, file: Path) -> CrowdConfig | None:
    """The ``[crowd]`` table (``None`` when absent).

    Examples
    --------
    >>> parse_crowd({"completion_code": "C0DE42"}, Path("experiment.toml")).completion_code
    'C0DE42'
    """
    if raw is None:
        return None
    if not isinstance(raw, dict):
        raise InputError("must be a table ([crowd])", file=file, key="crowd")
    r = Reader(raw, "crowd", file)
    r.unknown({"open_link", "consent", "completion_code", "redirect_url", "params",
               *_CROWD_IDENTITY_KEYS, *PLATFORM_KEYS})
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
                       completion_code=code, redirect_url=redirect, params=params,
                       **_crowd_identity(r, raw, params), **parse_platform(r, raw))


_CROWD_IDENTITY_KEYS = {"id_params", "session_params", "anonymous", "lease_minutes",
                        "join_limit", "join_window_minutes", "full_code", "full_redirect_url",
                        "participant_codes", "min_trial_ms"}


def _crowd_identity(r: Reader, raw: dict[str, Any], params: tuple[str, ...]) -> dict[str, Any]:
    """The ``[crowd]`` keys of participant identity and capacity (see
    :class:`~nlgeval.experiment.config_types.CrowdConfig`)."""
    out: dict[str, Any] = {}
    for key in ("id_params", "session_params"):
        if key in raw:
            names = r.strs(key)
            bad = [p for p in names if p not in params]
            if bad or (key == "id_params" and not names):
                raise r.fail(key, f"must list parameters of params = [...] (got {list(names)})")
            out[key] = names
    for key in ("lease_minutes", "join_window_minutes"):
        v = r.num(key, 60.0 if key == "lease_minutes" else 10.0)
        if v < 0:
            raise r.fail(key, f"must be 0 (off) or more minutes, got {v:g}")
        out[key] = v
    out["join_limit"] = r.int("join_limit", 10)
    out["min_trial_ms"] = r.int("min_trial_ms", 1000)
    out["anonymous"] = r.bool("anonymous", True)
    out["participant_codes"] = r.bool("participant_codes", False)
    full = r.str("full_code", "").strip()
    if full and not all(ch.isalnum() or ch in "-_" for ch in full):
        raise r.fail("full_code", "may hold letters, digits, '-' and '_' only")
    url = r.str("full_redirect_url", "").strip()
    if url and not url.startswith(("https://", "http://")):
        raise r.fail("full_redirect_url", f"must start with https:// (got {url!r})")
    out["full_code"], out["full_redirect_url"] = full, url
    return out


def parse_checks(raw: Any, mode: str, file: Path) -> ChecksConfig:
    """The ``[checks]`` table (no checks when absent).

    Examples
    --------
    >>> c = parse_checks({"repeats": 2, "speeder_ms": 1500}, "absolute", Path("experiment.toml"))
    >>> c.repeats, c.degraded, c.speeder_ms, c.alpha
    (2, 0, 1500, 0.05)
    """
    if raw is None:
        return ChecksConfig()
    if not isinstance(raw, dict):
        raise InputError("must be a table ([checks])", file=file, key="checks")
    r = Reader(raw, "checks", file)
    r.unknown({"repeats", "degraded", "known_answer", "repeat_tolerance", "speeder_ms", "alpha"})
    repeats = r.int("repeats", 0) or 0
    degraded = r.int("degraded", 0) or 0
    known = r.int("known_answer", 0) or 0
    _check_kinds(r, mode, {"repeat": repeats, "degraded": degraded, "known_answer": known})
    tol = r.num("repeat_tolerance", 0.25)
    if not 0 <= tol <= 1:
        raise r.fail("repeat_tolerance", f"must be between 0 and 1 (a fraction of the scale's "
                     f"range), got {tol:g}")
    return ChecksConfig(repeats=repeats, degraded=degraded, known_answer=known,
                        repeat_tolerance=tol, speeder_ms=r.int("speeder_ms", 2000) or 0,
                        alpha=_alpha(r))


def _check_kinds(r: Reader, mode: str, asked: dict[str, int]) -> None:
    """Refuse attention checks the mode does not support."""

    kinds = mode_spec(mode).check_kinds
    for kind, n in asked.items():
        if not n or kind in kinds:
            continue
        key = "repeats" if kind == "repeat" else kind
        if kind == "known_answer":
            raise r.fail(key, "known-answer trials are triangle trials (mode = "
                         "'triangle'); use repeats or degraded here")
        if "known_answer" in kinds:
            raise r.fail(key, f"{mode} experiments use known_answer checks (repeats and "
                         "degraded outputs apply to absolute, relative, MQM and ESA judgements)")
        raise r.fail(key, f"{mode} experiments support no {kind} checks (they support: "
                     f"{', '.join(kinds) or 'none'})")


def _alpha(r: Reader) -> float:
    """``[checks] alpha``: the level of the degraded-pairs test, in (0, 1)."""
    alpha = r.num("alpha", 0.05)
    if not 0 < alpha < 1:
        raise r.fail("alpha", f"must be between 0 and 1, got {alpha:g}")
    return alpha


def relative_file(directory: Path, value: str, file: Path, key: str) -> Path:
    """``value`` relative to the experiment directory; it must exist.

    Examples
    --------
    >>> relative_file(Path("."), "no-such.csv", Path("experiment.toml"), "outputs")
    Traceback (most recent call last):
    ...
    nlgeval.errors.InputError: experiment.toml, key 'outputs': file 'no-such.csv' not found ...
    """
    p = Path(value)
    p = p if p.is_absolute() else directory / p
    if not p.is_file():
        raise InputError(f"file '{value}' not found (looked for {p})", file=file, key=key)
    return p
