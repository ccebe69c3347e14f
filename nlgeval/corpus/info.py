"""A corpus's metadata: its rating criteria and their scales, where it came from, its licence.
The leaf of :mod:`nlgeval.corpus` (its validation steps read the scales from here)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from nlgeval.errors import InputError
from nlgeval.results import Result

ScaleType = Literal["interval", "ordinal", "nominal", "ratio"]


@dataclass(frozen=True)
class Criterion(Result):
    """A human rating criterion and its scale.

    ``type`` follows Stevens' levels of measurement; it decides which agreement coefficient
    and which tests are appropriate (e.g. Krippendorff's alpha ``level_of_measurement``).

    Examples:
        >>> Criterion("fluency", 1, 5, "ordinal").to_dict()["type"]
        'ordinal'
    """

    name: str
    min: float
    max: float
    type: ScaleType = "interval"
    description: str = ""
    higher_is_better: bool = True


@dataclass(frozen=True)
class Source(Result):
    """Where a corpus came from: repository, pinned commit, files and licence.

    Examples:
        >>> Source("https://github.com/tuetschek/e2e-metrics", paths=("a.csv",)).to_dict()["paths"]
        ['a.csv']
    """

    repository: str = ""
    commit: str = ""
    paths: tuple[str, ...] = ()
    licence: str = ""
    citation: str = ""


@dataclass(frozen=True)
class CorpusInfo(Result):
    """Corpus metadata: name, description, rating scales, licence and provenance.

    Examples:
        >>> info = CorpusInfo("toy", criteria=(Criterion("fluency", 1, 5),))
        >>> info.criterion("fluency").max
        5
    """

    name: str
    description: str = ""
    criteria: tuple[Criterion, ...] = ()
    licence: str = ""
    sources: tuple[Source, ...] = ()
    task: str = ""

    def criterion(self, name: str) -> Criterion:
        for c in self.criteria:
            if c.name == name:
                return c
        known = ", ".join(c.name for c in self.criteria) or "none"
        raise InputError(f"unknown criterion '{name}' (this corpus has: {known})")

    def to_dict(self) -> dict[str, Any]:
        """The metadata as JSON-ready objects (``task`` after ``description``, the order
        ``corpora info --json`` has always printed, hence not the derived field order)."""
        return {
            "name": self.name,
            "description": self.description,
            "task": self.task,
            "licence": self.licence,
            "criteria": [c.to_dict() for c in self.criteria],
            "sources": [s.to_dict() for s in self.sources],
        }
