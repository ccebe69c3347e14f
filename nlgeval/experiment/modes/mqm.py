"""``mode = "mqm"``: Multidimensional Quality Metrics error annotation as in Freitag et al.
(2021), "Experts, Errors, and Context": the evaluator marks each error span in the output
(with the source shown above it), picks its category from the MQM typology (or the subset
``[mqm] categories`` lists) and its severity (Minor or Major). The segment score is minus the
sum of the error weights of Freitag et al. 2021 -- Major 5, Minor 1, Minor
``Fluency/Punctuation`` 0.1, ``Non-translation`` 25 -- computed by the same function that
reproduces the WMT21 TED MQM averages (:func:`nlgeval.human.spans.mqm_span_ratings`);
``[mqm.weights]`` may change them. A Non-translation error is Major and replaces every other
error of the segment (the annotator marks the whole output and nothing else), as in Freitag et
al. 2021's guidelines. An output without errors needs the "no errors" box ticked, so a skipped
trial is never taken for a perfect one.

Examples
--------
>>> o = MqmOptions()
>>> len(o.categories) > 15, o.non_translation in o.categories, o.severities
(True, True, ('minor', 'major'))
>>> segment_score([Span(0, 4, "Fluency/Punctuation", "minor"),
...                Span(5, 9, "Accuracy/Mistranslation", "major")], o)
-5.1
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from nlgeval.experiment.modes.spans import Span, SpanMode

#: the MQM error typology of Freitag et al. 2021 (their Table 10), as ``Top/Sub`` categories
TYPOLOGY = (
    "Accuracy/Addition", "Accuracy/Omission", "Accuracy/Mistranslation",
    "Accuracy/Untranslated text",
    "Fluency/Punctuation", "Fluency/Spelling", "Fluency/Grammar", "Fluency/Register",
    "Fluency/Inconsistency", "Fluency/Character encoding",
    "Terminology/Inappropriate for context", "Terminology/Inconsistent use",
    "Style/Awkward",
    "Locale convention/Address format", "Locale convention/Currency format",
    "Locale convention/Date format", "Locale convention/Name format",
    "Locale convention/Telephone format", "Locale convention/Time format",
    "Other", "Source error", "Non-translation",
)
SEVERITIES = ("minor", "major")
WEIGHT_KEYS = ("major", "minor", "minor_punctuation", "non_translation")


@dataclass(frozen=True)
class MqmOptions:
    """The ``[mqm]`` table: ``categories`` offered (default: the whole typology),
    ``severities`` (``minor``, ``major``), ``weights`` (Freitag et al. 2021's by default).

    Examples
    --------
    >>> MqmOptions(categories=("Accuracy/Omission", "Other")).category_names
    ('Accuracy/Omission', 'Other')
    """

    categories: tuple[str, ...] = TYPOLOGY
    severities: tuple[str, ...] = SEVERITIES
    weights: dict[str, float] = field(default_factory=dict)
    non_translation: str = "Non-translation"

    @property
    def category_names(self) -> tuple[str, ...]:
        return self.categories

    def groups(self) -> list[tuple[str, list[tuple[str, str]]]]:
        """The categories grouped by their top level, as ``(top, [(value, label)])``."""
        out: dict[str, list[tuple[str, str]]] = {}
        for c in self.categories:
            top, _, sub = c.partition("/")
            out.setdefault(top, []).append((c, sub or top))
        return list(out.items())


def segment_score(spans: list[Span], options: MqmOptions) -> float:
    """The MQM score of one output's errors (minus the sum of their weights; 0 for none),
    by :func:`nlgeval.human.spans.mqm_span_ratings` with the study's weights."""
    from nlgeval.human.spans import mqm_span_ratings

    if not spans:
        return 0.0
    frame = pd.DataFrame({
        "rater": "r", "item": "i", "system": "s",
        "start": [s.start for s in spans], "end": [s.end for s in spans],
        "category": [s.category for s in spans], "severity": [s.severity for s in spans]})
    r = mqm_span_ratings(frame, weights=options.weights or None, breakdown=False)
    return float(r["score"].iloc[0])


class Mqm(SpanMode):
    """The MQM mode.

    Examples
    --------
    >>> Mqm().name, Mqm().table, Mqm().criterion_names(None)
    ('mqm', 'mqm', ['MQM'])
    """

    name = "mqm"
    table = "mqm"
    template = "modes/mqm.html"
    score_name = "MQM"

    def parse_options(self, r: Any, directory: Path) -> MqmOptions:
        r.unknown({"categories", "severities", "weights"})
        cats = r.strs("categories") or TYPOLOGY
        if len(set(cats)) != len(cats) or any(not c.strip() or len(c) > 100 for c in cats):
            raise r.fail("categories", "categories must be distinct, non-empty names of at "
                         "most 100 characters (e.g. 'Accuracy/Mistranslation')")
        sev = tuple(s.strip().lower() for s in r.strs("severities")) or SEVERITIES
        bad = [s for s in sev if s not in SEVERITIES]
        if bad or len(set(sev)) != len(sev):
            raise r.fail("severities", f"severities are a subset of {', '.join(SEVERITIES)}")
        w = r.t.get("weights", {})
        if not isinstance(w, dict) or any(k not in WEIGHT_KEYS for k in w) or any(
                isinstance(v, bool) or not isinstance(v, int | float) or v < 0
                for v in w.values()):
            raise r.fail("weights", f"a table of non-negative numbers with keys among "
                         f"{', '.join(WEIGHT_KEYS)}")
        return MqmOptions(tuple(cats), sev, {k: float(v) for k, v in w.items()})

    def fingerprint_extra(self, cfg: Any) -> dict[str, Any] | None:
        return asdict(cfg.options)

    def check_scales(self, cfg: Any) -> dict[str, tuple[float, float]]:
        """The MQM score from its floor to 0: five errors of the largest weight or one
        Non-translation (Freitag et al. 2021; -25 with their weights). A repeat may differ
        by ``repeat_tolerance`` of that range (6.25 points by default: one major error, not
        two); a degraded copy must score lower: more or severer errors."""
        from nlgeval.corpora.wmt21_ted.mqm import MQMWeights

        return {self.score_name: (MQMWeights.coerce(cfg.options.weights or None).floor, 0.0)}

    def parse_form(self, x: Any, errors: dict[str, str]
                   ) -> tuple[dict[str, float], dict[str, bool]]:
        from flask import request

        from nlgeval.experiment.views import BadForm

        opts: MqmOptions = x.cfg.options
        spans = self.spans_of(x, errors)
        if any(s.category == opts.non_translation for s in spans):
            if len(spans) > 1 or spans[0].severity != "major":
                raise BadForm("a non-translation error is major and replaces all others")
        if not spans and request.form.get("no_errors") != "1":
            errors["spans"] = x._("Please mark the errors in the text, or tick the box if it "
                                  "has none.")
            return {}, {}
        scores = {self.score_name: segment_score(spans, opts)}
        for k, s in enumerate(spans):
            scores[s.key(k)] = -segment_score([s], opts) + 0.0
        return scores, {}

    def tidy(self, export: pd.DataFrame) -> pd.DataFrame:
        """``MQM`` per output (the breakdown by category comes from the span export:
        :func:`nlgeval.human.spans.mqm_span_ratings`)."""
        return super().tidy(export)


MODE = Mqm()
