"""REALSumm (Bhandari et al. 2020): 25 CNN/DailyMail summarisers, LitePyramid human scores.

Bhandari, Gour, Ashfaq, Liu and Neubig (2020), "Re-evaluating Evaluation in Text
Summarization", EMNLP 2020 (github.com/neulab/REALSumm). The repository's ``scores_dicts/abs.pkl``
(14 abstractive systems) and ``scores_dicts/ext.pkl`` (11 extractive systems) each hold one dict
``{doc_id: {"doc_id", "ref_summ", "system_summaries"}}`` over the same 100 CNN/DailyMail test
documents; ``system_summaries`` maps a system's output file name to ``{"system_summary",
"scores"}``, and ``scores`` holds the human score ``litepyramid_recall`` and the authors' metric
scores.

What the loader builds, and the decisions it takes:

* The pickles are read with :func:`nlgeval.corpora.safe_pickle.load_data_pickle`, which only
  rebuilds numpy scalars and dtypes and refuses any other global before it runs.
* ``item`` = the document id as a string (``"0"`` ... ``"99"``); ``system`` = the output file
  name as in the data (``t5_out_11B.txt``, ``matchsumm_out.txt``, ...), with an extra output
  column ``family`` (``abstractive``/``extractive``: which pickle it came from) and
  ``system_file`` (the name in the pickle).
* ``bart_out.txt`` is in both pickles, with the same text and the same scores for all 100
  documents. The paper counts 25 systems (14 abstractive, 11 extractive), so both are kept: the
  abstractive one as ``bart_out.txt`` and the extractive one as ``bart_out_ext.txt``, the names
  the authors' own analysis notebook gives them when it merges the two pickles
  (``analysis/analysis.ipynb``); ``system_file`` keeps the name in the pickle.
  ``systems="abstractive"``/``"extractive"`` loads one family only.
* Texts: summaries and references wrap each sentence in ``<t> ... </t>`` (one summary of
  ``bottom_up_out.txt`` ends inside an unclosed ``<t>``). The markers are removed and the
  sentences joined with newlines, which is how rouge-score's ROUGE-Lsum finds sentences; tokens
  stay as in the data (most systems' outputs are tokenised and lower-cased, the references are
  tokenised and cased).
* The human criterion ``LitePyramid`` (rater ``aggregate``) is ``litepyramid_recall``: the share
  of the reference's semantic content units that crowd workers found in the summary (0-1).
* The authors' metric scores are not part of the :class:`~nlgeval.corpus.Corpus`; they are
  :func:`external_scores`, named as in the data (``rouge_1_recall``, ``rouge_2_f_score``,
  ``bert_f_score``, ``mover_score``, ``js-2``, ...), for ``run_validation(..., scores=...)``;
  ``nlgeval validate realsumm`` adds them itself. ROUGE there is the original ROUGE-1.5.5 Perl
  script (through pyrouge); ``js-2`` is the negated Jensen-Shannon divergence of bigram
  distributions, so higher is better for every score.
* Levels: the paper reports system-level and summary-level correlations; its summary level
  (per document, across the systems, then averaged over the documents) is nlgeval's ``item``
  level, not ``segment`` (all 2,500 summaries pooled). The descriptor's ``levels`` are
  therefore ``system, item``, what ``nlgeval validate realsumm`` reports unless ``--levels``
  says otherwise (:func:`nlgeval.corpora.extras.default_levels`).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, Literal

import numpy as np
import pandas as pd

from nlgeval.corpora.descriptor import descriptor
from nlgeval.corpora.safe_pickle import load_data_pickle
from nlgeval.corpus import Corpus
from nlgeval.errors import InputError

NAME = "realsumm"
#: pickle file -> the family of its systems
FILES: dict[str, str] = {"abs.pkl": "abstractive", "ext.pkl": "extractive"}
#: the human score in the data and the criterion it becomes
HUMAN_SCORE, CRITERION = "litepyramid_recall", "LitePyramid"
#: a system present in both pickles and its names here
DUPLICATED = {"bart_out.txt": {"extractive": "bart_out_ext.txt"}}
#: metrics ``nlgeval validate realsumm`` computes by default: rouge-score's ROUGE family, as F
#: and as recall (LitePyramid is a recall measure; the authors' ROUGE scores include recall)
DEFAULT_METRICS: tuple[str, ...] = (
    "rouge1", "rouge2", "rougeL", "rougeLsum",
    "rouge1:score=recall", "rouge2:score=recall", "rougeLsum:score=recall",
)
#: the modules whose code parses the corpus besides this one (for the parsed-corpus cache)
PARSED_WITH = ("nlgeval.corpora.safe_pickle",)
Family = Literal["all", "abstractive", "extractive"]
_TAG = re.compile(r"\s*</?t>\s*")


def sentences(text: str) -> str:
    """The ``<t> ... </t>``-wrapped sentences of a REALSumm text, one per line.

    Examples
    --------
    >>> sentences("<t> the cat sat . </t>  <t> it slept . </t>")
    'the cat sat .\\nit slept .'
    >>> sentences("<t> an unclosed sentence")
    'an unclosed sentence'
    """
    return "\n".join(p.strip() for p in _TAG.split(text) if p.strip())


def _entries(data: Any, path: Path) -> Iterator[tuple[str, str, str, Mapping[str, Any]]]:
    """``(item, reference, system_file, entry)`` for every summary of one pickle, checked."""
    if not isinstance(data, dict):
        raise InputError(f"expected a dict of documents, got {type(data).__name__}", file=path)
    for doc_id in sorted(data, key=lambda d: (str(type(d)), d)):
        doc = data[doc_id]
        where = f"document {doc_id!r}"
        if not isinstance(doc, dict) or not {"ref_summ", "system_summaries"} <= set(doc):
            raise InputError(f"{where}: expected a dict with 'ref_summ' and 'system_summaries'",
                             file=path)
        ref, summaries = doc["ref_summ"], doc["system_summaries"]
        if not isinstance(ref, str) or not isinstance(summaries, dict):
            raise InputError(f"{where}: 'ref_summ' must be a string and 'system_summaries' a "
                             "dict", file=path)
        for system, entry in summaries.items():
            if (not isinstance(entry, dict) or not isinstance(entry.get("system_summary"), str)
                    or not isinstance(entry.get("scores"), dict)):
                raise InputError(f"{where}, system {system!r}: expected 'system_summary' (a "
                                 "string) and 'scores' (a dict)", file=path)
            yield str(doc_id), ref, str(system), entry


def _score(value: Any, path: Path, item: str, system: str, key: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float | np.floating | np.integer):
        raise InputError(f"document {item!r}, system {system!r}: score '{key}' is "
                         f"{type(value).__name__}, expected a number", file=path)
    return float(value)


def read_pickles(folder: str | Path, systems: Family = "all") -> pd.DataFrame:
    """One row per summary: ``system, item, family, system_file, text, reference, _source,
    _row`` plus one float column per score in the data (texts as in the data, ``<t>`` kept).

    ``_row`` is the 1-based position of the summary in its pickle (documents by id, systems in
    file order), so an error can point at it.

    Examples
    --------
    >>> from nlgeval.corpora.store import locate
    >>> rows = read_pickles(locate(descriptor("realsumm")).folder)
    >>> rows.shape[0], rows["system"].nunique(), rows["litepyramid_recall"].between(0, 1).all()
    (2500, 25, np.True_)
    """
    if systems not in ("all", "abstractive", "extractive"):
        raise InputError(f"systems must be 'all', 'abstractive' or 'extractive', got {systems!r}")
    folder = Path(folder)
    rows: list[dict[str, Any]] = []
    for name, family in FILES.items():
        if systems not in ("all", family):
            continue
        path = folder / name
        for k, (item, ref, system, entry) in enumerate(_entries(load_data_pickle(path), path)):
            scores = {key: _score(v, path, item, system, str(key))
                      for key, v in entry["scores"].items()}
            if HUMAN_SCORE not in scores:
                raise InputError(f"document {item!r}, system {system!r}: no '{HUMAN_SCORE}' "
                                 "score", file=path)
            rows.append({"system": DUPLICATED.get(system, {}).get(family, system), "item": item,
                         "family": family, "system_file": system,
                         "text": entry["system_summary"], "reference": ref, "_source": str(path),
                         "_row": k + 1, **scores})
    frame = pd.DataFrame(rows)
    refs = frame.groupby("item")["reference"].nunique()
    if (refs > 1).any():
        raise InputError(f"document {refs[refs > 1].index[0]!r} has different reference "
                         f"summaries in {' and '.join(FILES)}", file=folder)
    return frame


def load(folder: str | Path, *, systems: Family = "all") -> Corpus:
    """Load REALSumm from a folder laid out like the bundled ``realsumm`` folder.

    Parameters
    ----------
    folder:
        The folder holding ``abs.pkl`` and ``ext.pkl``.
    systems:
        ``"all"`` (25 systems), ``"abstractive"`` (14) or ``"extractive"`` (11).

    Examples
    --------
    >>> from nlgeval.corpora import load_corpus
    >>> corpus = load_corpus("realsumm")   # Bhandari et al. (2020)
    >>> len(corpus.systems), len(corpus.items), len(corpus.outputs), corpus.criteria
    (25, 100, 2500, ['LitePyramid'])
    >>> print(corpus.references["text"].iloc[0].splitlines()[1])  # <t> ... </t> -> lines
    Pushpa Basnet and 45 children she cares for were forced to evacuate their residence .
    """
    folder = Path(folder)
    rows = read_pickles(folder, systems)
    outputs = pd.DataFrame({"system": rows["system"], "item": rows["item"],
                            "text": rows["text"].map(sentences), "family": rows["family"],
                            "system_file": rows["system_file"]})
    first = rows.drop_duplicates("item")
    refs = pd.DataFrame({"item": first["item"], "ref_id": "reference",
                         "text": first["reference"].map(sentences)})
    ratings = pd.DataFrame({"rater": "aggregate", "item": rows["item"], "system": rows["system"],
                            "criterion": CRITERION, "score": rows[HUMAN_SCORE]})
    notes = [
        "item = document id (0-99) of the 100 CNN/DailyMail test documents; system = the "
        "output file name in the data; extra output columns family (abstractive/extractive) "
        "and system_file",
        "bart_out.txt is in both abs.pkl and ext.pkl with identical texts and scores; kept "
        "twice (as the paper's 25 systems count it): the extractive copy as bart_out_ext.txt, "
        "as the authors' analysis notebook names it",
        "texts: <t> ... </t> sentence markers removed, sentences joined with newlines (for "
        "ROUGE-Lsum); tokenisation and case as in the data",
        "LitePyramid = litepyramid_recall (share of the reference's semantic content units "
        "found in the summary, 0-1; one aggregate score per summary)",
        "the authors' metric scores (ROUGE-1.5.5, BERTScore, MoverScore, JS-2) are external "
        "scores: nlgeval.corpora.realsumm.external_scores",
    ]
    if systems != "all":
        notes.append(f"systems={systems!r}: only the {systems} systems")
    return Corpus.build(descriptor(NAME).info(), outputs, refs, ratings,
                        files=dict.fromkeys(("outputs", "references", "ratings"), folder),
                        empty_outputs="keep", notes=notes)


def external_scores(folder: str | Path, *, systems: Family = "all") -> pd.DataFrame:
    """The authors' metric scores in :mod:`nlgeval.scores`' tidy format.

    ``metric, system, item, score, _source, _row`` with the metric names of the data
    (everything in ``scores`` except ``litepyramid_recall``); pass it to
    ``run_validation(..., scores=...)``. ``_source`` is the corpus folder (the scores come from
    both pickles, and a study's signature names it) and ``_row`` the 1-based position of the
    summary among all 2,500 (``abs.pkl`` first).

    Examples
    --------
    >>> from nlgeval.corpora.store import locate
    >>> scores = external_scores(locate(descriptor("realsumm")).folder)
    >>> sorted(set(scores["metric"]))[:4], len(scores)
    (['bert_f_score', 'bert_precision_score', 'bert_recall_score', 'js-2'], 35000)
    """
    rows = read_pickles(folder, systems)
    metrics = [c for c in rows.columns[rows.columns.get_loc("_row") + 1:] if c != HUMAN_SCORE]
    rows = rows.assign(_source=str(Path(folder)), _row=np.arange(1, len(rows) + 1))
    long = rows.melt(id_vars=["system", "item", "_source", "_row"], value_vars=metrics,
                     var_name="metric", value_name="score")
    return long[["metric", "system", "item", "score", "_source", "_row"]].reset_index(drop=True)


__all__ = [
    "CRITERION", "DEFAULT_METRICS", "DUPLICATED", "FILES", "HUMAN_SCORE", "external_scores",
    "load", "read_pickles", "sentences",
]
