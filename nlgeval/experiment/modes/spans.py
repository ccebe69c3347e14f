"""What the error-span modes (MQM, Freitag et al. 2021; ESA, Kocmi et al. 2024) share: the
marked spans of a trial's output, checked server-side, stored and exported.

The form posts ``spans``, a JSON list of ``{"start", "end", "category", "severity", "quote"}``:
character offsets into the output (code points, ``start`` inclusive, ``end`` exclusive, as
:mod:`nlgeval.human.spans` reads them; both ``null`` for an error not located in the output,
e.g. an omission), a category and severity the study offers, and the marked text (which must
be ``text[start:end]``, so a client whose offsets went wrong is refused instead of stored).

Each span is stored as one judgement of the trial, under the criterion
``span:<k>:<start>:<end>:<severity>:<category>`` (offsets empty when not located), its
``response`` the error's weight; the segment score is the trial's judgement under the mode's
criterion (``MQM``, ``ESA``). The export turns them back into one ratings row per output and
one span row per error (:func:`nlgeval.experiment.export.export_spans`).

Examples
--------
>>> s = Span(3, 8, "Accuracy/Mistranslation", "major")
>>> key = s.key(0); key
'span:0:3:8:major:Accuracy/Mistranslation'
>>> Span.from_key(key) == s
True
>>> parse_spans('[{"start": 0, "end": 5, "severity": "minor", "category": "",'
...             ' "quote": "Hello"}]', "Hello world", ("",), ("minor", "major"))
[Span(start=0, end=5, category='', severity='minor')]
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import pandas as pd

from nlgeval.experiment.modes.base import Mode

SPAN_KEY = "span:"
MAX_SPANS = 100
MAX_FIELD = 50_000
SPAN_EXPORT_COLUMNS = ["rater", "item", "system", "start", "end", "category", "severity"]


class SpanError(ValueError):
    """A ``spans`` field the form could not have produced."""


@dataclass(frozen=True)
class Span:
    """One marked error (``start``/``end`` None: not located in the output).

    Examples
    --------
    >>> Span(None, None, "Accuracy/Omission", "major").key(2)
    'span:2:::major:Accuracy/Omission'
    """

    start: int | None
    end: int | None
    category: str
    severity: str

    def key(self, k: int) -> str:
        """The stored criterion of the ``k``-th span of a trial."""
        a = "" if self.start is None else str(self.start)
        b = "" if self.end is None else str(self.end)
        return f"{SPAN_KEY}{k}:{a}:{b}:{self.severity}:{self.category}"

    @classmethod
    def from_key(cls, key: str) -> Span:
        """The span stored under criterion ``key``."""
        _k, a, b, sev, cat = key[len(SPAN_KEY):].split(":", 4)
        return cls(int(a) if a else None, int(b) if b else None, cat, sev)


def _offset(v: Any) -> int | None:
    if v is None:
        return None
    if isinstance(v, bool) or not isinstance(v, int):
        raise SpanError(f"{v!r} is not a character offset")
    return v


def _span(d: Any, text: str, categories: tuple[str, ...], severities: tuple[str, ...]) -> Span:
    if not isinstance(d, dict):
        raise SpanError("a span must be an object")
    start, end = _offset(d.get("start")), _offset(d.get("end"))
    cat, sev = d.get("category", ""), d.get("severity", "")
    if cat not in categories:
        raise SpanError(f"{cat!r} is not a category of this study")
    if sev not in severities:
        raise SpanError(f"{sev!r} is not a severity of this study")
    if (start is None) != (end is None):
        raise SpanError("a span needs both start and end, or neither")
    if start is not None and end is not None:
        n = len(text)
        if not 0 <= start < end <= n:
            raise SpanError(f"offsets [{start}, {end}) are outside the text (0..{n})")
        if d.get("quote") is not None and d["quote"] != text[start:end]:
            raise SpanError("the marked text does not match the offsets")
    return Span(start, end, cat, sev)


def parse_spans(raw: str, text: str, categories: tuple[str, ...],
                severities: tuple[str, ...]) -> list[Span]:
    """The posted ``spans`` field, checked against the output ``text`` and the study's
    ``categories`` and ``severities`` (:class:`SpanError` when the form could not have
    produced it); duplicates are dropped.

    Examples
    --------
    >>> parse_spans('[{"start": 4, "end": 99, "severity": "minor", "category": ""}]',
    ...             "Hello", ("",), ("minor",))
    Traceback (most recent call last):
    ...
    nlgeval.experiment.modes.spans.SpanError: offsets [4, 99) are outside the text (0..5)
    """
    if len(raw) > MAX_FIELD:
        raise SpanError("too many spans")
    try:
        data = json.loads(raw or "[]")
    except json.JSONDecodeError:
        raise SpanError("the spans are not valid JSON") from None
    if not isinstance(data, list) or len(data) > MAX_SPANS:
        raise SpanError(f"the spans must be a list of at most {MAX_SPANS}")
    out: list[Span] = []
    for d in data:
        s = _span(d, text, categories, severities)
        if s not in out:
            out.append(s)
    return out


def trial_text(x: Any) -> str:
    """The output the current request's trial shows (the text the spans mark)."""
    from flask import request

    from nlgeval.experiment.views import TrialView, texts_for

    tid = (request.view_args or {}).get("trial_id")
    trial = TrialView(*x.trials[tid])
    return str(texts_for(x, trial)[0]["text"])


class SpanMode(Mode):
    """The shared part of the error-span modes: one output per trial (a Latin square over the
    systems), no rating criteria, spans stored as judgements, a segment score. Attention
    checks compare the segment scores (:meth:`check_scales`): a repeated output must get
    about the same score, degraded copies lower ones, as in the ESA campaigns of Kocmi et al.
    (2024) run in Appraise (copies with injected errors, repeated items).

    Examples
    --------
    >>> SpanMode().criteria, SpanMode().check_kinds, SpanMode().shows_texts
    ('forbidden', ('repeat', 'degraded'), False)
    """

    criteria = "forbidden"
    check_kinds: tuple[str, ...] = ("repeat", "degraded")
    shows_texts = False
    scripts = ("spans.js",)
    #: the criterion of the segment score
    score_name = "score"

    def check_criteria(self, r: Any, criteria: tuple[Any, ...]) -> None:
        if criteria:
            raise r.fail("criteria", f"{self.name} experiments have no [[criteria]] (the "
                         f"evaluator marks error spans; configure them in [{self.table}])")

    def criterion_names(self, cfg: Any) -> list[str]:
        return [self.score_name]

    def spans_of(self, x: Any, errors: dict[str, str]) -> list[Span]:
        """The posted spans of the current trial (a form error raises ``BadForm``)."""
        from flask import request

        from nlgeval.experiment.views import BadForm

        opts = x.cfg.options
        try:
            return parse_spans(request.form.get("spans", ""), trial_text(x),
                               opts.category_names, opts.severities)
        except SpanError as exc:
            raise BadForm(str(exc)) from None

    def export_columns(self) -> list[str]:
        return ["n_major", "n_minor", "n_errors"]

    def export_rows(self, rows: list[Any], rank: dict[str, int],
                    scale: dict[str, tuple[float, float]]) -> list[tuple[Any, dict[str, Any]]]:
        """One row per output: its segment score and span counts."""
        spans: dict[tuple[str, int], list[Span]] = {}
        for r in rows:
            if r.criterion.startswith(SPAN_KEY):
                spans.setdefault((r.name, r.position), []).append(Span.from_key(r.criterion))
        out = []
        for r in rows:
            if r.criterion.startswith(SPAN_KEY):
                continue
            mine = spans.get((r.name, r.position), [])
            sev = [s.severity for s in mine]
            out.append((r, {"score": float(r.response), "n_major": sev.count("major"),
                            "n_minor": sev.count("minor"), "n_errors": len(mine)}))
        return out

    def span_rows(self, rows: list[Any]) -> list[tuple[Any, Span | None]]:
        """The span export: ``(stored row, span)`` per marked error, ``(score row, None)``
        for an output marked without errors."""
        marked = {(r.name, r.position) for r in rows if r.criterion.startswith(SPAN_KEY)}
        out: list[tuple[Any, Span | None]] = []
        for r in rows:
            if r.criterion.startswith(SPAN_KEY):
                out.append((r, Span.from_key(r.criterion)))
            elif (r.name, r.position) not in marked:
                out.append((r, None))
        return out

    def tidy(self, export: pd.DataFrame) -> pd.DataFrame:
        return export[["rater", "item", "system", "criterion", "score"]].reset_index(drop=True)
