"""Criterion harmonisation: which human criterion of a corpus measures which construct.

Corpora name their criteria differently (WebNLG+ 2020 ``Fluency``, E2E ``naturalness``, MQM
``MQM-Fluency``); pooling needs one construct (fluency, adequacy, overall quality) per
correlation. The shipped map (``criterion_map.json`` next to this module) assigns **one
criterion per corpus and construct**: the criteria of one study are rated on the same outputs,
so two of them in one pooled estimate would be dependent effects counted as independent
(Hedges, Tipton & Johnson 2010). Further criteria of the same construct are listed under
``related`` and pooled only with robust variance estimation (``dependence="rve"``,
:mod:`nlgeval.meta_analysis.robust`). A user map (JSON in the same shape, or CSV with columns
``corpus, construct, criterion`` and optional ``task, language`` and ``role``: ``primary``,
the default, or ``related``) replaces the shipped entries of the corpora it names.
``split_by`` (JSON only) names an output column that divides a corpus into independent data
sets, each pooled as its own study (the three data sets of Novikova et al. 2017).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

import pandas as pd

from nlgeval.errors import InputError
from nlgeval.results import Result

__all__ = ["CorpusEntry", "CriterionMap", "load_criterion_map"]


@dataclass(frozen=True)
class CorpusEntry(Result):
    """One corpus in the map: its task, language and ``construct -> criterion``.

    Examples
    --------
    >>> CorpusEntry("data-to-text", "en", {"fluency": "Fluency"}).criteria["fluency"]
    'Fluency'
    """

    task: str
    language: str
    criteria: dict[str, str] = field(default_factory=dict)
    related: dict[str, list[str]] = field(default_factory=dict)
    split_by: str | None = None


@dataclass(frozen=True)
class CriterionMap(Result):
    """Constructs and, per corpus, the criterion that measures each (see the module).

    Examples
    --------
    >>> cmap = load_criterion_map()
    >>> cmap.criterion("e2e", "fluency"), cmap.criterion("e2e", "adequacy")
    ('naturalness', None)
    >>> cmap.corpora["wmt21-ted-ende"].task
    'machine-translation'
    """

    constructs: dict[str, str]
    corpora: dict[str, CorpusEntry]
    source: str = "shipped"

    def criterion(self, corpus: str, construct: str) -> str | None:
        """The criterion of ``corpus`` mapped to ``construct`` (None if there is none)."""
        entry = self.corpora.get(corpus)
        return entry.criteria.get(construct) if entry else None

    def constructs_of(self, corpus: str) -> dict[str, str]:
        """``construct -> criterion`` for ``corpus`` (empty when the corpus is not mapped)."""
        entry = self.corpora.get(corpus)
        return dict(entry.criteria) if entry else {}

    def criteria_of(self, corpus: str, related: bool = False) -> list[tuple[str, str]]:
        """``(construct, criterion)`` pairs of ``corpus``: the primary criteria, then (with
        ``related``) the related ones.

        Examples
        --------
        >>> load_criterion_map().criteria_of("webnlg2020", related=True)[:3]
        [('fluency', 'Fluency'), ('fluency', 'TextStructure'), ('adequacy', 'Correctness')]
        """
        entry = self.corpora.get(corpus)
        if entry is None:
            return []
        pairs = list(entry.criteria.items())
        if related:
            for construct in entry.criteria:
                pairs += [(construct, c) for c in entry.related.get(construct, [])]
        return sorted(pairs, key=lambda p: list(entry.criteria).index(p[0]))


def load_criterion_map(path: str | Path | None = None) -> CriterionMap:
    """The shipped map, with the corpora of the file at ``path`` (JSON or CSV) replacing
    their shipped entries.

    Parameters
    ----------
    path : str or Path, optional
        A user's map (JSON or CSV); default: only the shipped map.

    Returns
    -------
    CriterionMap
        Constructs and, per corpus, the criterion that measures each.

    Examples
    --------
    >>> import tempfile, os
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     p = os.path.join(tmp, "map.csv")
    ...     _ = open(p, "w").write("corpus,construct,criterion\\ne2e,overall,naturalness\\n")
    ...     cmap = load_criterion_map(p)
    >>> cmap.constructs_of("e2e"), cmap.criterion("webnlg2020", "fluency")
    ({'overall': 'naturalness'}, 'Fluency')
    """
    text = resources.files("nlgeval.meta_analysis").joinpath("criterion_map.json").read_text(
        encoding="utf-8")
    base = _from_json(json.loads(text), "criterion_map.json")
    if path is None:
        return base
    path = Path(path)
    if not path.is_file():
        raise InputError("criterion map not found", file=path)
    if path.suffix.lower() == ".json":
        try:
            user = _from_json(json.loads(path.read_text(encoding="utf-8")), path)
        except json.JSONDecodeError as exc:
            raise InputError(f"not valid JSON: {exc.msg}", file=path, row=exc.lineno) from None
    elif path.suffix.lower() in (".csv", ".tsv"):
        user = _from_csv(path)
    else:
        raise InputError("a criterion map is a .json or .csv file", file=path)
    constructs = {**base.constructs, **user.constructs}
    return CriterionMap(constructs, {**base.corpora, **user.corpora}, source=str(path))


def _from_json(data: Any, file: str | Path) -> CriterionMap:
    if not isinstance(data, dict) or not isinstance(data.get("corpora"), dict):
        raise InputError("expected an object with a 'corpora' object", file=file,
                         column="corpora")
    corpora = {}
    for name, entry in data["corpora"].items():
        crit = entry.get("criteria") if isinstance(entry, dict) else None
        if not isinstance(crit, dict) or not all(isinstance(v, str) for v in crit.values()):
            raise InputError(f"corpus {name!r}: 'criteria' must map each construct to one "
                             "criterion name", file=file, column="criteria")
        related = entry.get("related") or {}
        if not isinstance(related, dict) or not all(isinstance(v, list)
                                                    for v in related.values()):
            raise InputError(f"corpus {name!r}: 'related' must map a construct to a list of "
                             "criterion names", file=file, column="related")
        corpora[str(name)] = CorpusEntry(str(entry.get("task", "unknown")),
                                         str(entry.get("language", "unknown")), dict(crit),
                                         {str(k): [str(c) for c in v] for k, v in
                                          related.items()},
                                         str(entry["split_by"]) if entry.get("split_by")
                                         else None)
    constructs = data.get("constructs") or {}
    return CriterionMap(dict(constructs), corpora, source=str(file))


def _from_csv(path: Path) -> CriterionMap:
    table = pd.read_csv(path, sep="\t" if path.suffix.lower() == ".tsv" else ",", dtype=str)
    for col in ("corpus", "construct", "criterion"):
        if col not in table.columns:
            raise InputError(f"missing column {col!r} (a criterion map needs corpus, "
                             "construct, criterion)", file=path, column=col)
    corpora: dict[str, CorpusEntry] = {}
    for i, row in enumerate(table.itertuples(index=False)):
        for col in ("corpus", "construct", "criterion"):
            if pd.isna(getattr(row, col)) or not str(getattr(row, col)).strip():
                raise InputError(f"{col} is empty", file=path, row=i + 2, column=col)
        name, construct = str(row.corpus).strip(), str(row.construct).strip()
        prev = corpora.get(name)
        role = str(getattr(row, "role", "") or "").strip().lower() if "role" in table.columns \
            else ""
        if role == "related":
            entry = prev or CorpusEntry("unknown", "unknown", {})
            entry.related.setdefault(construct, []).append(str(row.criterion).strip())
            corpora[name] = entry
            continue
        if role not in ("", "nan", "primary"):
            raise InputError(f"role must be primary or related, got {role!r}", file=path,
                             row=i + 2, column="role")
        if prev and construct in prev.criteria:
            raise InputError(f"corpus {name!r} maps construct {construct!r} twice (one "
                             "criterion per construct: dependent correlations are not pooled)",
                             file=path, row=i + 2, column="construct")
        task = str(getattr(row, "task", "") or "") if "task" in table.columns else ""
        lang = str(getattr(row, "language", "") or "") if "language" in table.columns else ""
        entry = prev or CorpusEntry(task if task and task != "nan" else "unknown",
                                    lang if lang and lang != "nan" else "unknown", {})
        entry.criteria[construct] = str(row.criterion).strip()
        corpora[name] = entry
    return CriterionMap({}, corpora, source=str(path))
