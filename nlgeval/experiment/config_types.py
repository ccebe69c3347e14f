"""The validated experiment configuration: what ``experiment.toml`` describes, as frozen
dataclasses (parsed by :func:`nlgeval.experiment.config.load_config`).

Examples
--------
>>> c = CriterionConfig("quality", "How good is it?", "", "vds", labels=("bad", "good"),
...                     values=(1.0, 2.0))
>>> c.options()
[('1', 'bad', ''), ('2', 'good', '')]
>>> format_value(2.5), format_value(3.0)
('2.5', '3')
"""

from __future__ import annotations

import hashlib
import importlib
import json
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol

from nlgeval.errors import InputError

if TYPE_CHECKING:
    from nlgeval.experiment.platforms import Screening

CONFIG_NAME = "experiment.toml"
#: the built-in modes, by name (:data:`nlgeval.experiment.modes.BUILTIN`; a new mode adds its
#: module's name here)
MODES = ("absolute", "relative", "triangle", "mqm", "esa", "bws")
TOOLS = ("vds", "vas")
QUESTION_TYPES = ("text", "choice", "number")
TRIANGLE_CRITERION = "odd_one_out"

#: a mode's name (one of :func:`nlgeval.experiment.modes.mode_names`; its behaviour is
#: :attr:`ExperimentConfig.mode_impl`)
Mode = str


class ModeSpec(Protocol):
    """What the configuration and the modules below the modes need of a mode
    (:class:`nlgeval.experiment.modes.Mode` has all of it). Named here so that the config
    types, which the modes themselves use, never import the modes package back: they look
    the mode up by name with :func:`mode_spec`."""

    name: str
    pairwise: bool
    relative_scales: bool
    check_kinds: tuple[str, ...]

    def criterion_names(self, cfg: ExperimentConfig) -> list[str]: ...

    def fingerprint_extra(self, cfg: ExperimentConfig) -> dict[str, Any] | None: ...

    def check_scales(self, cfg: ExperimentConfig) -> dict[str, tuple[float, float]]: ...


def mode_spec(name: str) -> ModeSpec:
    """The mode called ``name``, looked up in the mode registry
    (:func:`nlgeval.experiment.modes.get_mode`) by name; KeyError when there is none.

    Examples
    --------
    >>> mode_spec("relative").pairwise, mode_spec("triangle").check_kinds
    (True, ('known_answer',))
    """
    registry = importlib.import_module("nlgeval.experiment.modes")
    spec: ModeSpec = registry.get_mode(name)
    return spec


@dataclass(frozen=True)
class CriterionConfig:
    """One quality criterion and the rating tool that measures it.

    Examples
    --------
    >>> vas = CriterionConfig("fluency", "How fluent?", "", "vas", left_label="not",
    ...                       right_label="very")
    >>> vas.scale_min, vas.scale_max
    (0.0, 100.0)
    """

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
    #: the name shown to evaluators (default: ``name``, translated when the interface
    #: catalogue knows it); display only, so not part of the fingerprint
    label: str = ""

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
    """An exit-questionnaire question.

    Examples
    --------
    >>> Question("native", "Is English your first language?", "choice", ("yes", "no")).type
    'choice'
    """

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
    of :attr:`id_keys` present is the participant id. A returning participant is recognised by
    their browser's signed cookie or by their platform session id (:attr:`session_keys`)
    together with the participant id, never by the participant id alone
    (:mod:`nlgeval.experiment.participants`). ``redirect_url`` may contain ``{code}`` (the
    completion code).

    Examples
    --------
    >>> CrowdConfig().params[:3]
    ('PROLIFIC_PID', 'STUDY_ID', 'SESSION_ID')
    """

    open_link: bool = True
    consent: str = ""
    completion_code: str = ""
    redirect_url: str = ""
    params: tuple[str, ...] = DEFAULT_CROWD_PARAMS
    # participant identity and capacity (docs/experiment.md, "Who is who"): the parameters
    # that name a participant (``None``: PROLIFIC_PID / workerId among ``params``, else the
    # first of ``params``) and their platform session (SESSION_ID / assignmentId), whether a
    # link without any platform parameter makes an anonymous participant, the lease of a
    # claimed set, the join limit per client address, and the "study full" code / redirect
    id_params: tuple[str, ...] | None = None
    session_params: tuple[str, ...] | None = None
    anonymous: bool = True
    lease_minutes: float = 60.0
    join_limit: int = 10
    join_window_minutes: float = 10.0
    full_code: str = ""
    full_redirect_url: str = ""
    participant_codes: bool = False
    min_trial_ms: int = 1000
    # platforms (nlgeval.experiment.platforms): sites that may show the pages in a frame,
    # codes / redirects for "did not consent" and "screened out", screening questions
    frame_ancestors: tuple[str, ...] = ()
    no_consent_code: str = ""
    no_consent_redirect_url: str = ""
    screened_out_code: str = ""
    screened_out_redirect_url: str = ""
    screening: tuple[Screening, ...] = ()

    @property
    def id_keys(self) -> tuple[str, ...]:
        """The parameters naming a participant, in order of preference."""
        if self.id_params is not None:
            return self.id_params
        known = tuple(p for p in self.params if p in ("PROLIFIC_PID", "workerId"))
        return known or self.params[:1]

    @property
    def session_keys(self) -> tuple[str, ...]:
        """The parameters naming a participant's platform session."""
        if self.session_params is not None:
            return self.session_params
        return tuple(p for p in self.params if p in ("SESSION_ID", "assignmentId"))


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

    Examples
    --------
    >>> ChecksConfig().any, ChecksConfig(repeats=2).any
    (False, True)
    """

    repeats: int = 0
    degraded: int = 0
    known_answer: int = 0
    repeat_tolerance: float = 0.25
    speeder_ms: int = 2000
    #: significance level of the one-sided Wilcoxon test over an evaluator's degraded pairs
    alpha: float = 0.05

    @property
    def any(self) -> bool:
        return bool(self.repeats or self.degraded or self.known_answer)


@dataclass(frozen=True)
class ExperimentConfig:
    """A validated ``experiment.toml`` (made by :func:`nlgeval.experiment.config.load_config`).

    Examples
    --------
    >>> cfg = ExperimentConfig(Path("study"), "Fluency", "triangle", "", "", (), None)
    >>> cfg.path.name, cfg.criterion_names, cfg.language
    ('experiment.toml', ['odd_one_out'], 'en')
    """

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
    #: the mode's own options (its config table, parsed by the mode; None: it has none)
    options: Any = None

    @property
    def mode_impl(self) -> ModeSpec:
        """The :class:`~nlgeval.experiment.modes.Mode` of :attr:`mode` (:func:`mode_spec`;
        code above the modes package calls ``get_mode(cfg.mode)`` for the whole class)."""
        return mode_spec(self.mode)

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
        return self.mode_impl.criterion_names(self)

    def criterion(self, name: str) -> CriterionConfig:
        for c in self.criteria:
            if c.name == name:
                return c
        raise InputError(f"unknown criterion '{name}'", file=self.path)

    def fingerprint(self) -> str:
        """Hash of what the stored trials and judgements depend on (mode, criteria, scales)."""
        crit = [{k: v for k, v in asdict(c).items() if k != "label"} for c in self.criteria]
        key: dict[str, Any] = {"mode": self.mode, "criteria": crit}
        extra = self.mode_impl.fingerprint_extra(self)
        if extra is not None:
            key["options"] = extra
        return hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()[:16]


def format_value(v: float) -> str:
    """``3.0`` -> ``"3"``; ``2.5`` -> ``"2.5"`` (form values and display).

    Examples
    --------
    >>> format_value(3.0), format_value(-0.5)
    ('3', '-0.5')
    """
    return f"{v:g}"

