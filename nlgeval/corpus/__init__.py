"""The canonical, tidy (long-format) data model shared by every part of nlgeval.

A :class:`Corpus` holds three pandas DataFrames plus metadata:

``outputs``     one row per system output: ``system, item, text``
``references``  one or more rows per item:  ``item, ref_id, text``
``ratings``     one row per human judgement: ``rater, item, system, criterion, score``
                (extra columns such as ``time_ms`` or ``comment`` are kept)

Identifiers (``system``, ``item``, ``ref_id``, ``rater``, ``criterion``) are strings; ``score``
is float. The human reference can appear as a *system* in ``outputs`` (WebNLG's
``WebNLG-2020-reference``) so that humans rated it like any other output.

Validation happens on construction and raises :class:`~nlgeval.errors.InputError` that names
the file, 1-based row and column (when the frames came from files, their ``_row`` column tells
the row; see :mod:`nlgeval.io`).

Policy on empty texts (documented, deliberate): an empty or whitespace-only *reference* is an
error. An empty *system output* is an error too unless ``empty_outputs="keep"``: real systems
do sometimes produce nothing and dropping such an output would bias every comparison, so a loader
for a published corpus keeps it as ``""`` (it scores as an empty hypothesis) and records how many
it kept in ``Corpus.notes``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

import numpy as np
import pandas as pd

from nlgeval.corpus._validate import OUTPUT_COLUMNS as OUTPUT_COLUMNS
from nlgeval.corpus._validate import RATING_COLUMNS as RATING_COLUMNS
from nlgeval.corpus._validate import REFERENCE_COLUMNS as REFERENCE_COLUMNS
from nlgeval.corpus._validate import (
    _canonical,
    _check_every_item_has_references,
    _valid_outputs,
    _valid_ratings,
    _valid_references,
)
from nlgeval.corpus.info import CorpusInfo as CorpusInfo
from nlgeval.corpus.info import Criterion as Criterion
from nlgeval.corpus.info import ScaleType as ScaleType
from nlgeval.corpus.info import Source as Source
from nlgeval.errors import InputError


@dataclass(frozen=True, eq=False)
class Corpus:
    """A human-evaluation corpus in nlgeval's canonical tidy format.

    Build one with :meth:`Corpus.build` (which validates) or with a loader from
    :mod:`nlgeval.corpora`. The frames are stored without the bookkeeping ``_row`` column.

    Examples:
        >>> c = toy_corpus()
        >>> c.systems, c.items, c.criteria
        (['A', 'B'], ['1', '2'], ['fluency'])
        >>> c.reference_lists()
        [['a cat sits'], ['a dog runs', 'the dog runs']]
        >>> c.subset(systems=["A"]).summary()["n_ratings"]
        2
    """

    info: CorpusInfo
    outputs: pd.DataFrame
    references: pd.DataFrame
    ratings: pd.DataFrame
    notes: tuple[str, ...] = field(default=())

    # ------------------------------------------------------------------ construction
    @classmethod
    def build(
        cls,
        info: CorpusInfo,
        outputs: pd.DataFrame,
        references: pd.DataFrame | None = None,
        ratings: pd.DataFrame | None = None,
        *,
        files: Mapping[str, str | Path | None] | None = None,
        empty_outputs: Literal["error", "keep"] = "error",
        require_references: bool = True,
        notes: Sequence[str] = (),
    ) -> Corpus:
        """Validate the three tables and return a :class:`Corpus`.

        ``files`` maps ``"outputs"``, ``"references"``, ``"ratings"`` to the file each frame was
        read from, so errors can name it (rows come from the frames' ``_row`` column).
        ``require_references=False`` allows a corpus without references (reference-free
        metrics and human-only analyses); otherwise every output's item needs a reference.

        Examples:
            >>> info = CorpusInfo("toy", criteria=(Criterion("fluency", 1, 5),))
            >>> outputs = pd.DataFrame({"system": ["A"], "item": ["1"], "text": ["a cat"]})
            >>> refs = pd.DataFrame({"item": ["1"], "ref_id": ["0"], "text": ["the cat"]})
            >>> Corpus.build(info, outputs, refs).outputs.to_dict("records")
            [{'system': 'A', 'item': '1', 'text': 'a cat'}]
            >>> ratings = pd.DataFrame({"rater": ["r1"], "item": ["1"], "system": ["A"],
            ...                         "criterion": ["fluency"], "score": ["7"]})
            >>> try:
            ...     Corpus.build(info, outputs, refs, ratings)
            ... except InputError as err:
            ...     print(err)
            row 2, column 'score': score 7 is outside the scale of 'fluency' [1, 5]
        """
        files = dict(files or {})
        f_out, f_ref, f_rat = files.get("outputs"), files.get("references"), files.get("ratings")
        notes = list(notes)
        out = _valid_outputs(outputs, f_out, empty_outputs, notes)
        ref = _valid_references(references, f_ref)
        if require_references:
            _check_every_item_has_references(out, ref, f_out)
        rat = _valid_ratings(ratings, info, out, f_rat)
        return cls(
            info=info,
            outputs=_canonical(out, OUTPUT_COLUMNS),
            references=_canonical(ref, REFERENCE_COLUMNS),
            ratings=_canonical(rat, RATING_COLUMNS),
            notes=tuple(notes),
        )

    # ------------------------------------------------------------------ views
    @property
    def name(self) -> str:
        return self.info.name

    @property
    def systems(self) -> list[str]:
        """Systems in order of first appearance in ``outputs``."""
        # pd.unique keeps the order of first appearance without a Python object per row
        return pd.unique(self.outputs["system"]).tolist()

    @property
    def items(self) -> list[str]:
        return pd.unique(self.outputs["item"]).tolist()

    @property
    def criteria(self) -> list[str]:
        """Criteria that have ratings, in declared order."""
        have = set(pd.unique(self.ratings["criterion"]).tolist())
        return [c.name for c in self.info.criteria if c.name in have]

    def reference_lists(self, items: Sequence[str] | None = None) -> list[list[str]]:
        """References per item (in ``ref_id`` order of appearance), aligned with ``items``."""
        grouped = self.references.groupby("item", sort=False)["text"].agg(list)
        items = self.items if items is None else items
        return [grouped.get(i, []) for i in items]

    def rated_outputs(self) -> pd.DataFrame:
        """Outputs that have at least one human rating."""
        if self.ratings.empty:
            return self.outputs.iloc[0:0]
        keys = self.ratings[["system", "item"]].drop_duplicates()
        return self.outputs.merge(keys, on=["system", "item"], how="inner")

    def human_scores(
        self, normalise: Literal["none", "z"] = "none", criteria: Sequence[str] | None = None
    ) -> pd.DataFrame:
        """Human score per output and criterion: ``system, item, criterion, score, n_raters``.

        ``normalise="z"`` first standardises each rater's scores per criterion (WMT Direct
        Assessment: z = (x - rater mean) / rater SD with ddof=1; a rater with a single judgement
        or zero spread on a criterion cannot be standardised and is dropped with a note in the
        ``n_raters`` count). The per-output score is then the mean over its raters. The SDs
        are pandas' ``Series.std`` per rater and criterion, bit for bit, computed for all of
        them at once (:func:`rater_sd`).

        Examples:
            >>> toy_corpus().human_scores()[["system", "item", "score", "n_raters"]].values.tolist()
            [['A', '1', 4.0, 2], ['B', '1', 2.0, 1]]
        """
        r = self.ratings
        if criteria is not None:
            r = r[r["criterion"].isin(list(criteria))]
        if normalise == "z":
            g = r.groupby(["rater", "criterion"])["score"]
            sd = pd.Series(rater_sd(r["score"].to_numpy(dtype=np.float64, na_value=np.nan),
                                    g.ngroup().to_numpy()), index=r.index)
            r = r.assign(score=(r["score"] - g.transform("mean")) / sd)
            r = r[np.isfinite(r["score"])]
        elif normalise != "none":
            raise InputError(f"normalise must be 'none' or 'z', got {normalise!r}")
        agg = (
            r.groupby(["system", "item", "criterion"], sort=False)["score"]
            .agg(score="mean", n_raters="count")
            .reset_index()
        )
        return agg

    def subset(
        self, systems: Sequence[str] | None = None, items: Sequence[str] | None = None
    ) -> Corpus:
        """A corpus restricted to some systems and/or items (validation is not repeated)."""
        out, ref, rat = self.outputs, self.references, self.ratings
        if systems is not None:
            unknown = sorted(set(systems) - set(self.systems))
            if unknown:
                raise InputError(
                    f"unknown system(s) {', '.join(unknown)} in corpus '{self.name}' "
                    f"(systems: {', '.join(self.systems)})"
                )
            out = out[out["system"].isin(systems)]
            rat = rat[rat["system"].isin(systems)]
        if items is not None:
            out = out[out["item"].isin(items)]
            ref = ref[ref["item"].isin(items)]
            rat = rat[rat["item"].isin(items)]
        return replace(
            self,
            outputs=out.reset_index(drop=True),
            references=ref.reset_index(drop=True),
            ratings=rat.reset_index(drop=True),
        )

    def summary(self) -> dict[str, Any]:
        """Counts and metadata, JSON-serialisable (used by ``nlgeval corpora info``)."""
        refs_per_item = self.references.groupby("item").size()
        return {
            **self.info.to_dict(),
            "n_systems": len(self.systems),
            "systems": self.systems,
            "n_items": len(self.items),
            "n_outputs": int(len(self.outputs)),
            "n_references": int(len(self.references)),
            "references_per_item": {
                "min": int(refs_per_item.min()) if len(refs_per_item) else 0,
                "max": int(refs_per_item.max()) if len(refs_per_item) else 0,
                "mean": float(refs_per_item.mean()) if len(refs_per_item) else 0.0,
            },
            "n_ratings": int(len(self.ratings)),
            "n_raters": int(self.ratings["rater"].nunique()),
            "rated_criteria": self.criteria,
            "n_rated_outputs": int(len(self.rated_outputs())),
            "notes": list(self.notes),
        }


def rater_sd(scores: np.ndarray, groups: np.ndarray) -> np.ndarray:
    """Each row's group standard deviation (ddof=1), as pandas' ``Series.std`` gives it for
    the group's scores alone, bit for bit, without a Python call per group.

    ``Series.std`` is two-pass (mean = numpy's pairwise sum over the count of non-missing
    scores, then the pairwise sum of squared deviations over count - 1), with missing scores
    counted as 0 in both sums and left out of the count; pandas' grouped ``std`` (Welford's
    update) differs from it in the last bits. Groups of equal size go through numpy's sums
    together as the rows of one matrix, each row in its rows' order, which is the same pairwise
    sum as for the group alone. A group with fewer than 2 scores gives NaN; a constant group
    gives 0 or, where the mean is not exact, the tiny spread ``Series.std`` gives too.

    Parameters
    ----------
    scores : numpy.ndarray
        One float score per row (NaN = missing).
    groups : numpy.ndarray
        The row's group number, from 0 (as ``GroupBy.ngroup``); -1 = no group (NaN result).

    Returns
    -------
    numpy.ndarray
        Float, one value per row: the standard deviation of the row's group.

    Examples
    --------
    >>> rater_sd(np.array([4.0, 2.0, 5.0, 3.0, np.nan]), np.array([0, 0, 1, 1, 1]))
    array([1.41421356, 1.41421356, 1.41421356, 1.41421356, 1.41421356])
    >>> rater_sd(np.array([4.0, 2.0, 5.0]), np.array([0, 0, 1]))   # one score: no spread
    array([1.41421356, 1.41421356,        nan])
    """
    groups = np.asarray(groups, dtype=np.int64)
    out = np.full(len(groups), np.nan)
    kept = np.flatnonzero(groups >= 0)
    if not len(kept):
        return out
    order = kept[np.argsort(groups[kept], kind="stable")]  # by group, rows in order within
    sizes = np.bincount(groups[kept])
    starts = np.cumsum(sizes) - sizes
    for n in np.unique(sizes[sizes > 0]):
        rows = order[starts[sizes == n][:, None] + np.arange(n)]  # (groups of size n) x n
        v = np.asarray(scores, dtype=np.float64)[rows]
        missing = np.isnan(v)
        v[missing] = 0.0
        count = n - missing.sum(axis=1).astype(np.float64)
        count[count <= 1] = np.nan
        sqr = (v.sum(axis=1, dtype=np.float64)[:, None] / count[:, None] - v) ** 2
        sqr[missing] = 0.0
        out[rows] = np.sqrt(sqr.sum(axis=1, dtype=np.float64) / (count - 1.0))[:, None]
    return out


def toy_corpus() -> Corpus:
    """A two-system, two-item corpus with three fluency ratings, for examples and tests.

    Examples:
        >>> len(toy_corpus().ratings)
        3
    """
    info = CorpusInfo("toy", "A two-system example.", (Criterion("fluency", 1, 5),))
    outputs = pd.DataFrame({"system": ["A", "A", "B", "B"], "item": ["1", "2", "1", "2"],
                            "text": ["a cat sat", "a dog ran", "cat", "dogs run"]})
    refs = pd.DataFrame({"item": ["1", "2", "2"], "ref_id": ["0", "0", "1"],
                         "text": ["a cat sits", "a dog runs", "the dog runs"]})
    ratings = pd.DataFrame({"rater": ["r1", "r2", "r1"], "item": ["1", "1", "1"],
                            "system": ["A", "A", "B"], "criterion": ["fluency"] * 3,
                            "score": [4, 4, 2]})
    return Corpus.build(info, outputs, refs, ratings)


#: The files of :func:`write_toy_folder`, in the corpus-folder layout of docs/corpora.md.
_TOY_FILES = {
    "outputs.csv": "system,item,text\nA,1,the cat sat\nB,1,a cat sat\nA,2,dogs bark\n"
                   "B,2,dog barks\n",
    "references.csv": "item,ref_id,text\n1,r1,the cat sat down\n2,r1,dogs bark\n",
    "ratings.csv": "rater,item,system,criterion,score\nx,1,A,fluency,5\nx,1,B,fluency,3\n"
                   "x,2,A,fluency,4\nx,2,B,fluency,2\n",
    "corpus.json": '{"name": "toy", "criteria": [{"name": "fluency", "min": 1, "max": 5}]}',
}


def write_toy_folder(folder: str | Path) -> Path:
    """Write a small corpus folder (the layout ``load_corpus(folder)`` reads, docs/corpora.md)
    and return its path, for examples and tests.

    Two systems (A, B), two items, one reference each (``r1``), and one rater's fluency score
    (1-5) for all four outputs: unlike :func:`toy_corpus`, every segment has one reference
    and a human score, as the MTME layout (:mod:`nlgeval.corpora.mtme`) needs.

    Examples:
        >>> import tempfile
        >>> tmp = tempfile.TemporaryDirectory()
        >>> folder = write_toy_folder(tmp.name)
        >>> sorted(p.name for p in folder.iterdir())
        ['corpus.json', 'outputs.csv', 'ratings.csv', 'references.csv']
        >>> print((folder / "references.csv").read_text())
        item,ref_id,text
        1,r1,the cat sat down
        2,r1,dogs bark
        >>> tmp.cleanup()
    """
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in _TOY_FILES.items():
        (folder / name).write_text(text, encoding="utf-8")
    return folder


def toy_ratings(raters: int = 4, items: int = 6, systems: Sequence[str] = ("a", "b", "c"), *,
                seed: int = 1) -> pd.DataFrame:
    """Tidy ratings ``rater, item, system, score`` for examples and tests: every rater
    (``r0``...) scores every system's output of every item (``i0``...) with a random integer
    from 1 to 5 (uniform: the systems do not differ), drawn by ``numpy.random.default_rng``.

    Examples:
        >>> df = toy_ratings(raters=2, items=3, systems=["a", "b"])
        >>> df.shape, df.columns.tolist(), sorted(df["rater"].unique())
        ((12, 4), ['rater', 'item', 'system', 'score'], ['r0', 'r1'])
        >>> bool(df["score"].between(1, 5).all())
        True
    """
    rng = np.random.default_rng(seed)
    cells = pd.MultiIndex.from_product(
        [[f"r{r}" for r in range(raters)], [f"i{i}" for i in range(items)], list(systems)],
        names=["rater", "item", "system"]).to_frame(index=False)
    cells["score"] = rng.integers(1, 6, size=len(cells)).astype(float)
    return cells
