"""What :func:`~nlgeval.corpora.mtme.read_mtme` and :func:`~nlgeval.corpora.mtme.write_mtme` return.

The MTME layout (Freitag et al. 2021-2023, google-research/mt-metrics-eval) is described in
:mod:`nlgeval.corpora.mtme`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from nlgeval.corpus import Corpus
from nlgeval.results import Result


@dataclass(frozen=True, eq=False)
class MTMEData(Result):
    """One MTME (test set, language pair) as nlgeval data.

    ``corpus``: outputs (``system, item, text, source``), the chosen reference (``ref_id`` =
    its MTME name) and the segment-level human scores as ratings (criterion = the human score
    name, e.g. ``mqm``; rater ``"aggregate"``). ``scores``: segment-level metric scores
    ``system, item, metric, score``; ``system_scores``: system-level metric scores ``system,
    metric, score``; ``human_system_scores``: system-level human scores ``system, criterion,
    score``. ``sources``: ``item, text``; ``documents``: ``item, doc, domain`` (empty without
    a documents file).

    Examples
    --------
    >>> import tempfile
    >>> from nlgeval.corpus import write_toy_folder
    >>> tmp = tempfile.TemporaryDirectory()
    >>> folder = write_toy_folder(tmp.name)  # outputs, references, ratings, corpus.json
    >>> import pandas as pd
    >>> from nlgeval.corpora import load_corpus
    >>> from nlgeval.corpora.mtme import read_mtme, write_mtme
    >>> scores = pd.DataFrame({"system": ["A", "B", "A", "B"], "item": ["1", "1", "2", "2"],
    ...                        "metric": "len", "score": [3, 3, 2, 2]})
    >>> written = write_mtme(load_corpus(folder), folder / "mtme" / "toy", "en-de", scores=scores)
    >>> data = read_mtme(folder / "mtme" / "toy", "en-de", human="fluency")
    >>> data.metrics, data.reference, data.corpus.systems
    (['len-r1'], 'r1', ['A', 'B'])
    >>> data.to_dict()["n_segments"]
    2
    >>> tmp.cleanup()
    """

    corpus: Corpus
    scores: pd.DataFrame
    system_scores: pd.DataFrame
    human_system_scores: pd.DataFrame
    higher_is_better: dict[str, bool]
    notes: list[str]
    testset: str = ""
    lp: str = ""
    reference: str | None = None
    human_systems: tuple[str, ...] = ()
    sources: pd.DataFrame = field(default_factory=pd.DataFrame, repr=False)
    documents: pd.DataFrame = field(default_factory=pd.DataFrame, repr=False)
    _located: pd.DataFrame = field(default_factory=pd.DataFrame, repr=False)

    @property
    def metrics(self) -> list[str]:
        """Metric names (segment-level first, then system-level-only), in file-name order."""
        seg = list(dict.fromkeys(self.scores["metric"]))
        return seg + [m for m in dict.fromkeys(self.system_scores["metric"]) if m not in seg]

    def external_scores(self) -> pd.DataFrame:
        """All metric scores in :mod:`nlgeval.scores`' tidy format.

        ``metric, system, item, score, _source, _row``: ``item`` is ``""`` on system-level
        rows; ``_source``/``_row`` are the MTME file and 1-based line of each value. Pass it
        to ``run_validation(..., scores=...)``.
        """
        cols = ["metric", "system", "item", "score", "_source", "_row"]
        if self._located.empty:
            return pd.DataFrame({c: pd.Series(dtype=object) for c in cols})
        return self._located[cols].reset_index(drop=True)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-serialisable summary (counts, names, notes; not the frames)."""
        return {
            "testset": self.testset,
            "lp": self.lp,
            "reference": self.reference,
            "systems": self.corpus.systems,
            "human_systems": list(self.human_systems),
            "n_segments": len(self.corpus.items),
            "human_criteria": self.corpus.criteria,
            "human_system_criteria": list(dict.fromkeys(self.human_system_scores["criterion"])),
            "segment_metrics": list(dict.fromkeys(self.scores["metric"])),
            "system_metrics": list(dict.fromkeys(self.system_scores["metric"])),
            "higher_is_better": dict(self.higher_is_better),
            "notes": list(self.notes),
        }


@dataclass(frozen=True)
class MTMEWritten(Result):
    """What :func:`write_mtme` wrote: the test-set folder, the files (relative) and notes.

    Examples
    --------
    >>> import tempfile
    >>> from nlgeval.corpus import write_toy_folder
    >>> tmp = tempfile.TemporaryDirectory()
    >>> folder = write_toy_folder(tmp.name)  # outputs, references, ratings, corpus.json
    >>> from nlgeval.corpora import load_corpus
    >>> from nlgeval.corpora.mtme import write_mtme
    >>> written = write_mtme(load_corpus(folder), folder / "mtme" / "toy", "en-de")
    >>> written.lp, written.files[:3]
    ('en-de', ('sources/en-de.txt', 'documents/en-de.docs', 'references/en-de.r1.txt'))
    >>> tmp.cleanup()
    """

    path: Path
    lp: str
    files: tuple[str, ...]
    notes: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {"path": str(self.path), "lp": self.lp, "files": list(self.files),
                "notes": list(self.notes)}
