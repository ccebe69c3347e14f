"""``mode = "esa"``: Error Span Annotation as in Kocmi et al. (2024), WMT24's human evaluation:
the evaluator first marks the error spans of the output (severity Minor or Major, no
categories; an error not located in the text, such as missing content, can be added too),
then gives the output a score from 0 to 100 with the marked spans in view. Both are exported:
the score as criterion ``ESA`` (one row per output) and the spans
(:func:`nlgeval.experiment.export.export_spans`), which
:func:`nlgeval.human.spans.esa_ratings` combines (``ESA-spans``: minus 5 per major and 1 per
minor error).

The ``[esa]`` table may set the ``question`` and the labels of the scale's ends
(``left_label``, ``right_label``); the slider must be moved (or its value confirmed), as every
visual analogue scale of the app (Kow & Belz 2012).

Examples
--------
>>> Esa().criterion_names(None), EsaOptions().severities
(['ESA'], ('minor', 'major'))
>>> EsaOptions().scale.max
100.0
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from nlgeval.experiment.config_types import CriterionConfig
from nlgeval.experiment.modes.spans import SpanMode

QUESTION = "Considering the errors you marked, how good is the text overall (0–100)?"


@dataclass(frozen=True)
class EsaOptions:
    """The ``[esa]`` table.

    Examples
    --------
    >>> EsaOptions(left_label="bad").scale.left_label
    'bad'
    """

    question: str = QUESTION
    left_label: str = "No meaning preserved"
    right_label: str = "Perfect meaning and grammar"
    severities: tuple[str, ...] = ("minor", "major")
    category_names: tuple[str, ...] = ("",)

    @property
    def scale(self) -> CriterionConfig:
        """The 0-100 score as a visual analogue scale."""
        return CriterionConfig("ESA", self.question, "", "vas", min=0.0, max=100.0, step=1.0,
                               left_label=self.left_label, right_label=self.right_label)


class Esa(SpanMode):
    """The ESA mode.

    Examples
    --------
    >>> Esa().table, Esa().template
    ('esa', 'modes/esa.html')
    """

    name = "esa"
    table = "esa"
    template = "modes/esa.html"
    score_name = "ESA"

    def parse_options(self, r: Any, directory: Path) -> EsaOptions:
        r.unknown({"question", "left_label", "right_label"})
        d = EsaOptions()
        out = EsaOptions(r.str("question", d.question), r.str("left_label", d.left_label),
                         r.str("right_label", d.right_label))
        if not out.left_label.strip() or not out.right_label.strip():
            raise r.fail("left_label", "the scale's ends need labels")
        return out

    def check_scales(self, cfg: Any) -> dict[str, tuple[float, float]]:
        """The 0-100 score: repeats within ``repeat_tolerance`` of it, degraded copies
        scored lower (the Direct Assessment checks, Graham et al. 2013, on ESA's score)."""
        sc = cfg.options.scale
        return {self.score_name: (sc.scale_min, sc.scale_max)}

    def parse_form(self, x: Any, errors: dict[str, str]
                   ) -> tuple[dict[str, float], dict[str, bool]]:
        from flask import request

        from nlgeval.experiment.views import parse_criterion

        spans = self.spans_of(x, errors)
        score = parse_criterion(x, 0, x.cfg.options.scale, errors)
        if score is None:
            return {}, {}
        scores = {self.score_name: score}
        for k, s in enumerate(spans):
            scores[s.key(k)] = 5.0 if s.severity == "major" else 1.0
        return scores, {self.score_name: request.form.get("c0_confirm") == "1"}


MODE = Esa()
