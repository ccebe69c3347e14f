"""``mode = "relative"``: two outputs side by side, "which is better and by how much" on
each criterion's relative scale (Kow & Belz 2012, section 2.2); a Latin square over the
system pairs.

The export orients every judgement towards the system listed first in the experiment:
``system`` and ``system_b`` are the pair, ``score`` is the preference for ``system`` (the
value shown is reflected, ``min + max - response``, when ``system`` was shown on the left,
since the scale's top means "B much better"), and ``left`` names the system shown on the left.

Examples
--------
>>> from types import SimpleNamespace
>>> r = SimpleNamespace(system="A", system_b="B", response=2.0, qc_kind=None, criterion="q")
>>> Relative().scored(r, {"A": 0, "B": 1}, {"q": (-2.0, 2.0)})
{'system': 'A', 'score': -2.0, 'system_b': 'B', 'left': 'A'}
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from nlgeval.experiment.modes.base import RATING_COLUMNS, Mode


class Relative(Mode):
    """The relative mode (pairs of outputs on relative scales).

    Examples
    --------
    >>> Relative().symbols(4), Relative().export_columns()
    (6, ['system_b', 'left'])
    """

    name = "relative"
    template = "modes/absolute.html"  # the same criteria form, on relative scales
    pairwise = True
    relative_scales = True

    def export_columns(self) -> list[str]:
        return ["system_b", "left"]

    def scored(self, r: Any, rank: dict[str, int],
               scale: dict[str, tuple[float, float]]) -> dict[str, Any]:
        if r.qc_kind == "degraded":
            # the same output against its degraded copy: the raw response, as shown
            return {"score": float(r.response), "system_b": r.system_b, "left": r.system}
        left, right = r.system, r.system_b
        first_left = rank.get(left, 0) <= rank.get(right, 0)
        a, b = (left, right) if first_left else (right, left)
        lo, hi = scale.get(r.criterion, (None, None))
        if first_left:  # the response scale's top means "right (B) much better"
            score = -r.response if lo is None or hi is None else lo + hi - r.response
        else:
            score = r.response
        return {"system": a, "score": float(score), "system_b": b, "left": left}

    def tidy(self, export: pd.DataFrame) -> pd.DataFrame:
        """Pairwise judgements: ``rater, item, system, system_b, criterion, score`` (the
        preference for ``system`` over ``system_b``)."""
        cols = RATING_COLUMNS[:3] + ["system_b"] + RATING_COLUMNS[3:]
        return export[cols].reset_index(drop=True)


MODE = Relative()
