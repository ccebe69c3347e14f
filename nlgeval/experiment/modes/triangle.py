"""``mode = "triangle"``: triangle-test trials (three texts, pick the odd one out), from a
triangle-test questionnaire written by ``nlgeval triangle design`` (its ``[triangle]`` table:
``questionnaire``, ``question``); known-answer attention checks.

The export has one row per trial with ``criterion = "odd_one_out"`` and ``score`` 1 when the
evaluator picked the odd text, else 0 (also as ``correct``), plus the triad's ``test``,
``order``, ``odd_position``, ``chosen_position`` and ``source_1..3``; ``system`` is the odd
sample's source.

Examples
--------
>>> from types import SimpleNamespace
>>> r = SimpleNamespace(response=2.0, details={"odd_position": 2, "order": "AAB",
...                     "test": "difference", "sources": ["A", "B", "A"]})
>>> Triangle().scored(r, {}, {})["correct"]
1
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from nlgeval.experiment.config_types import TRIANGLE_CRITERION, ExperimentConfig
from nlgeval.experiment.modes.base import Mode

if TYPE_CHECKING:
    from nlgeval.experiment.config_tables import Reader
    from nlgeval.experiment.config_types import CriterionConfig
    from nlgeval.experiment.trials import Materials

@dataclass(frozen=True)
class TriangleOptions:
    """The ``[triangle]`` table.

    Examples
    --------
    >>> TriangleOptions(Path("q.csv"), "Which one?").question
    'Which one?'
    """

    questionnaire: Path
    question: str


class Triangle(Mode):
    """The triangle mode.

    Examples
    --------
    >>> Triangle().check_kinds, Triangle().latin_square
    (('known_answer',), False)
    """

    name = "triangle"
    table = "triangle"
    template = "modes/triangle.html"
    check_kinds = ("known_answer",)
    criteria = "forbidden"
    latin_square = False

    def parse_options(self, r: Reader, directory: Path) -> TriangleOptions:
        from nlgeval.experiment.config_tables import relative_file

        r.unknown({"questionnaire", "question"})
        qfile = r.str("questionnaire", required=True)
        return TriangleOptions(
            relative_file(directory, qfile, r.file, "triangle.questionnaire"),
            r.str("question", ExperimentConfig.triangle_question))

    def check_criteria(self, r: Reader, criteria: tuple[CriterionConfig, ...]) -> None:
        if criteria:
            raise r.fail("criteria", "triangle experiments have no rating criteria (the "
                         "evaluator picks the odd text out); remove [[criteria]]")

    def criterion_names(self, cfg: ExperimentConfig) -> list[str]:
        return [TRIANGLE_CRITERION]

    def allocate(self, cfg: ExperimentConfig, mat: Materials, *, evaluators: int | None,
                 seed: int) -> tuple[pd.DataFrame, str]:
        from nlgeval.experiment.trials import triangle_trials

        return triangle_trials(cfg, mat), ""

    def parse_form(self, x: Any, errors: dict[str, str]
                   ) -> tuple[dict[str, float], dict[str, bool]]:
        from flask import request

        from nlgeval.experiment.views import BadForm

        raw = request.form.get("odd", "").strip()
        if raw == "":
            errors["odd"] = x._("Please pick the text you think is the odd one out.")
        elif raw not in ("1", "2", "3"):
            raise BadForm(f"{raw!r} is not 1, 2 or 3")
        else:
            return {TRIANGLE_CRITERION: float(raw)}, {}
        return {}, {}

    def export_columns(self) -> list[str]:
        return ["correct", "chosen_position", "odd_position", "order", "test",
                "source_1", "source_2", "source_3"]

    def scored(self, r: Any, rank: dict[str, int],
               scale: dict[str, tuple[float, float]]) -> dict[str, Any]:
        d = r.details or {}
        chosen = int(r.response)
        correct = int(chosen == int(d.get("odd_position", 0)))
        rec: dict[str, Any] = {
            "score": float(correct), "correct": correct, "chosen_position": chosen,
            "odd_position": d.get("odd_position"), "order": d.get("order"),
            "test": d.get("test")}
        for k, src in enumerate(d.get("sources", []), 1):
            rec[f"source_{k}"] = src
        return rec

    def finish_export(self, df: pd.DataFrame) -> pd.DataFrame:
        df["criterion"] = df["criterion"].fillna(TRIANGLE_CRITERION)
        return df


MODE = Triangle()
