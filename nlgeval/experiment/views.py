"""What the evaluator pages work with: an evaluator's state (their row and trials, read in one
query per request by :func:`nlgeval.experiment.storage.answers.state_rows`), and the checks of
slider values a browser can send."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from typing import Any

from flask import request

from nlgeval.experiment.config_types import CriterionConfig, format_value
from nlgeval.experiment.i18n import criterion_wording

_NUMBER = re.compile(r"-?[0-9]{1,15}(?:\.[0-9]{1,12})?")


class BadForm(Exception):
    """A value the form could not have produced (tampering): refused with 400.

    Examples
    --------
    >>> str(BadForm("'7' is not a point of the scale of 'quality'"))
    "'7' is not a point of the scale of 'quality'"
    """


@dataclass(frozen=True)
class TrialView:
    """A trial as pages need it: what never changes after ``create`` (cached at start-up)
    plus whether it is answered (read per request).

    Examples
    --------
    >>> TrialView(7, 2, False, "i1", "A", None, None, None).answered_at is None
    True
    """

    id: int
    position: int
    practice: bool
    item: str
    system: str
    system_b: str | None
    details: dict[str, Any] | None
    qc_kind: str | None
    answered_at: datetime | None = None


@dataclass(frozen=True)
class EvaluatorView:
    """An evaluator's row as pages need it (read per request).

    Examples
    --------
    >>> EvaluatorView(1, "tok", None, None, None).started_at is None
    True
    """

    id: int
    token: str
    started_at: datetime | None
    finished_at: datetime | None
    answers: dict[str, Any] | None


@dataclass
class State:
    """An evaluator and their trials (in order), read together in one query.

    Examples
    --------
    >>> from datetime import datetime
    >>> done = TrialView(1, 1, True, "p1", "A", None, None, None, datetime(2026, 1, 1))
    >>> todo = TrialView(2, 2, False, "i1", "B", None, None, None)
    >>> st = State(EvaluatorView(1, "tok", None, None, None), [done, todo])
    >>> st.current.id, st.counts()
    (2, {'total': 1, 'remaining': 1, 'practice_total': 1, 'practice_done': 1})
    """

    ev: EvaluatorView
    trials: list[TrialView]

    @property
    def current(self) -> TrialView | None:
        return next((t for t in self.trials if t.answered_at is None), None)

    def counts(self) -> dict[str, int]:
        main = [t for t in self.trials if not t.practice]
        prac = [t for t in self.trials if t.practice]
        return {
            "total": len(main), "remaining": sum(t.answered_at is None for t in main),
            "practice_total": len(prac),
            "practice_done": sum(t.answered_at is not None for t in prac),
        }


def slider_value(raw: str, c: CriterionConfig) -> float:
    """The value of a visual analogue scale as the browser's ``<input type=range>`` can send
    it: a plain decimal number within ``[min, max]`` on the ``min + k * step`` grid.

    Examples
    --------
    >>> from nlgeval.experiment.config import CriterionConfig
    >>> c = CriterionConfig("fluency", "How fluent?", "", "vas", min=0, max=100, step=1,
    ...                     left_label="not", right_label="very")
    >>> slider_value("73", c)
    73.0
    >>> slider_value("50.0000000001", c)
    Traceback (most recent call last):
    ...
    nlgeval.experiment.views.BadForm: '50.0000000001' is not a position of the slider ...
    """
    if not _NUMBER.fullmatch(raw):
        raise BadForm(f"{raw!r} is not a number on the slider of '{c.name}'")
    v = float(raw)
    if not math.isfinite(v) or v < c.min or v > c.max:
        raise BadForm(f"{raw!r} is outside the slider of '{c.name}'")
    # exactly on the grid, in decimal arithmetic (browsers step in decimals, and a float
    # tolerance let "50.0000000001" through)
    k = (Decimal(raw) - Decimal(repr(c.min))) / Decimal(repr(c.step))
    if k != k.to_integral_value():
        raise BadForm(f"{raw!r} is not a position of the slider of '{c.name}' (step "
                      f"{format_value(c.step)})")
    return v


def slider_start(c: CriterionConfig) -> str:
    """Where an untouched slider stands: the grid point nearest the middle.

    Examples
    --------
    >>> from nlgeval.experiment.config import CriterionConfig
    >>> c = CriterionConfig("fluency", "How fluent?", "", "vas", min=0, max=100, step=1,
    ...                     left_label="not", right_label="very")
    >>> slider_start(c)
    '50'
    """
    k = round((c.max - c.min) / 2 / c.step)
    return format_value(c.min + k * c.step)


def texts_for(x: Any, trial: TrialView) -> list[dict[str, str]]:
    """The labelled texts a trial shows: one output, a pair (A, B), a triad, or an attention
    check's own (degraded) texts. ``x`` is the loaded experiment
    (:class:`nlgeval.experiment.loaded.Experiment`: its ``_`` and ``texts``).

    Examples
    --------
    >>> from types import SimpleNamespace
    >>> x = SimpleNamespace(_=lambda m, **kw: m % kw if kw else m,
    ...                     texts={("A", "i1"): "Sunny.", ("B", "i1"): "Rain."})
    >>> texts_for(x, TrialView(1, 1, False, "i1", "A", "B", None, None))
    [{'label': 'Text A', 'text': 'Sunny.'}, {'label': 'Text B', 'text': 'Rain.'}]
    """
    _ = x._
    d = trial.details or {}
    if "texts" in d:  # an attention check with its own (degraded) texts
        if len(d["texts"]) == 1:
            return [{"label": _("Text"), "text": d["texts"][0]}]
        return [{"label": _("Text A"), "text": d["texts"][0]},
                {"label": _("Text B"), "text": d["texts"][1]}]
    if "sources" in d:
        return [
            {"label": _("Text %(k)s", k=k), "text": x.texts[(s, it)]}
            for k, (s, it) in enumerate(zip(d["sources"], d["items"], strict=True), 1)
        ]
    out = [{"label": _("Text A") if trial.system_b else _("Text"),
            "text": x.texts[(trial.system, trial.item)]}]
    if trial.system_b:
        out.append({"label": _("Text B"), "text": x.texts[(trial.system_b, trial.item)]})
    return out


def parse_criterion(x: Any, i: int, c: CriterionConfig, errors: dict[str, str]
                    ) -> float | None:
    """The posted value of criterion ``i`` (field ``c<i>``); a missing answer is noted in
    ``errors``, a value the form could not have produced raises :class:`BadForm`; inside a
    request. ``x`` is the loaded experiment (:class:`nlgeval.experiment.loaded.Experiment`:
    its ``_`` and ``cfg``). A step of every mode's form (:mod:`nlgeval.experiment.modes`).

    Examples
    --------
    >>> from types import SimpleNamespace
    >>> from flask import Flask
    >>> c = CriterionConfig("fluency", "How fluent?", "", "vas", min=0, max=100, step=1,
    ...                     left_label="not", right_label="very")
    >>> x = SimpleNamespace(_=lambda m, **kw: m % kw, cfg=SimpleNamespace(language="en"))
    >>> with Flask("demo").test_request_context(method="POST", data={"c0": "70",
    ...                                                               "c0_moved": "1"}):
    ...     parse_criterion(x, 0, c, {})
    70.0
    """
    _ = x._
    key = f"c{i}"
    shown = criterion_wording(x.cfg.language, c).name
    raw = request.form.get(key, "").strip()
    if c.tool == "vds":
        if raw == "":
            errors[key] = _("Please choose a rating for “%(name)s”.", name=shown)
            return None
        allowed = {format_value(v): v for v in c.values}
        if raw not in allowed:
            raise BadForm(f"{raw!r} is not a point of the scale of '{c.name}'")
        return float(allowed[raw])
    moved = request.form.get(f"{key}_moved") == "1"
    confirmed = request.form.get(f"{key}_confirm") == "1"
    if raw == "" or not (moved or confirmed):
        errors[key] = _("Please move the slider for “%(name)s”, or tick the box to confirm "
                        "your rating where it is.", name=shown)
        return None
    return slider_value(raw, c)
