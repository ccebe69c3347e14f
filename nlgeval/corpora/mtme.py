"""Read and write the directory layout of MTME, WMT's metrics meta-evaluation toolkit.

MTME (google-research/mt-metrics-eval, used for Freitag et al. 2021, 2022 and 2023, "Results of
the WMT2x Metrics Shared Task") ships every WMT test set since 2019 as a folder of text files.
One folder is one *test set* (e.g. ``wmt23``); inside it, ``LP`` is a language pair such as
``en-de``:

=========================================  ====================================================
``sources/LP.txt``                          one source segment per line
``documents/LP.docs``                       ``DOMAIN DOCNAME`` per line (same lines as the
                                            source; a document is a contiguous block)
``references/LP.NAME.txt``                  one reference translation per line; ``NAME`` (e.g.
                                            ``refA``) has no ``-`` or ``.`` and is not ``all``
                                            or ``src``
``system-outputs/LP/SYS.txt``               one output per line; a reference scored as a system
                                            is copied here under its own name (``refB.txt``)
``human-scores/LP.NAME.LEVEL.score``        ``SYS SCORE`` per line (``DOMAIN SYS SCORE`` at
                                            ``domain`` level); ``NAME`` e.g. ``mqm``; ``LEVEL``
                                            ``sys``/``domain``/``doc``/``seg``; ``None`` = missing
``metric-scores/LP/METRIC-REF.LEVEL.score``  same format; ``REF`` is the reference(s) the metric
                                            used: a name (``refA``), names joined by ``.``
                                            (``refA.refB``), ``src`` (reference-free) or ``all``
=========================================  ====================================================

Fields are separated by any whitespace. A ``seg`` file holds, for each system, one line per
source segment, in segment order (the k-th line naming a system is that system's k-th segment);
a ``doc`` file likewise one line per document; a ``sys`` file one line per system. Text lines
are read as MTME reads them: universal newlines, trailing whitespace removed, and the line
``[No translation supplied]`` meaning "no output". So ``COMET-22-refA.seg.score`` is the
segment-level COMET-22 computed with reference ``refA``, and ``CometKiwi-src`` a reference-free
metric.

:func:`read_mtme` turns one (test set, language pair) into a :class:`MTMEData`: a
:class:`~nlgeval.corpus.Corpus` (outputs, the chosen reference, human segment scores as
already-aggregated ratings) plus the shipped metric scores in nlgeval's tidy long format, ready
for ``run_validation(..., scores=data.external_scores())``. Choices follow MTME's own
``data.EvalSet``/``data.GetCorrelations`` and are recorded in ``notes``:

* one reference is *the* reference (``reference=``, else MTME's standard reference for the
  test set, see :data:`STANDARD_REFERENCES`); it is not a system;
* the other human translations (system outputs named like a reference) stay systems when
  ``include_human_systems`` (MTME's ``tasks.Task`` default ``human=True``);
* only metric variants whose references are the chosen one or none (``-src``) are loaded;
  variants computed with another reference are left out (MTME does the same);
* metric names keep their MTME file names (``BLEU-refA``), so two variants never collide;
* ``None`` and ``nan`` scores are missing: NaN (metric scores) or no rating (human scores),
  counted in the notes; ``doc`` and ``domain`` level files are listed but not loaded;
* orientation: MTME has no orientation field -- its correlation code never flips a sign and
  its converter stores MQM as minus the weighted error count (``converters/score_mqm.py``), so
  every shipped score is taken as higher-is-better unless named in ``lower_is_better``.

Segments become items ``"1"`` ... ``"N"`` (1-based line numbers), unless the folder holds the
nlgeval extension file ``item-ids/LP.txt`` (one item id per line, written by :func:`write_mtme`
and ignored by MTME), which restores the original ids.

:func:`write_mtme` writes a :class:`~nlgeval.corpus.Corpus` (and optional tidy metric scores) in
the same layout, so nlgeval data can be read by MTME's ``data.EvalSet(name, lp, path=...,
info=...)``. Segment order: ``item_order`` if given, else the corpus's item order (first
appearance in ``outputs``), regrouped stably so that each document is contiguous when
documents are given.

The result classes are defined in :mod:`nlgeval.corpora.mtme_results` and re-exported here;
the file-level helpers and the stages of both functions live in the private modules
``_mtme_layout`` (constants, lines, score files, names), ``_mtme_read``, ``_mtme_scores`` and
``_mtme_write`` next to this one.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from pathlib import Path

import pandas as pd

from nlgeval.corpora._mtme_layout import (
    AGGREGATE_RATER,
    HUMAN_SYSTEM_COLUMNS,
    ITEM_IDS_DIR,
    LEVELS,
    NO_TRANSLATION,
    SCORE_COLUMNS,
    STANDARD_REFERENCES,
    SYSTEM_SCORE_COLUMNS,
    _check_name,
)
from nlgeval.corpora._mtme_read import (
    LOCATED_COLUMNS,
    _choose_reference,
    _choose_systems,
    _concat,
    _corpus_info,
    _find_references,
    _open_folder,
    _outputs_frame,
    _read_documents,
    _read_item_ids,
    _read_source,
    _read_system_outputs,
    _references_frame,
)
from nlgeval.corpora._mtme_scores import (
    _by_level,
    _drop_missing_outputs,
    _orientation,
    _read_human_scores,
    _read_metric_scores,
)
from nlgeval.corpora._mtme_write import (
    _documents_for,
    _Files,
    _metric_reference,
    _put_human_scores,
    _put_metric_scores,
    _put_outputs,
    _put_references,
    _put_sources,
    _regroup_documents,
    _segment_order,
    _tidy_for_writing,
    _write_files,
)
from nlgeval.corpora.mtme_results import MTMEData, MTMEWritten
from nlgeval.corpus import Corpus
from nlgeval.errors import InputError

__all__ = [
    "AGGREGATE_RATER",
    "HUMAN_SYSTEM_COLUMNS",
    "ITEM_IDS_DIR",
    "LEVELS",
    "NO_TRANSLATION",
    "SCORE_COLUMNS",
    "STANDARD_REFERENCES",
    "SYSTEM_SCORE_COLUMNS",
    "MTMEData",
    "MTMEWritten",
    "parse_mtme_spec",
    "read_mtme",
    "write_mtme",
]


# ---------------------------------------------------------------------------------- spec
def parse_mtme_spec(spec: str | Path) -> Path | None:
    """``"mtme:PATH/wmt23"`` -> ``Path("PATH/wmt23")``; anything else -> ``None``.

    The prefix is case-insensitive and ``~`` is expanded; the folder is not checked here
    (:func:`read_mtme` does). ``"mtme:"`` with no path raises :class:`InputError`.

    Examples
    --------
    >>> str(parse_mtme_spec("mtme:data/wmt23"))
    'data/wmt23'
    >>> parse_mtme_spec("e2e") is None
    True
    """
    if not isinstance(spec, str) or not spec[:5].lower() == "mtme:":
        return None
    rest = spec[5:].strip()
    if not rest:
        raise InputError("'mtme:' needs the path of an MTME test-set folder, e.g. "
                         "mtme:~/.mt-metrics-eval/mt-metrics-eval-v2/wmt23")
    return Path(rest).expanduser()

def read_mtme(
    path: str | Path,
    lp: str,
    *,
    reference: str | None = None,
    human: str | Sequence[str] | None = "mqm",
    include_human_systems: bool = True,
    exclude_systems: Collection[str] = (),
    metric_scores: bool = True,
    lower_is_better: Collection[str] = (),
) -> MTMEData:
    """Read one language pair of an MTME test-set folder (see the module docstring).

    Parameters
    ----------
    path:
        The test-set folder, e.g. ``.../mt-metrics-eval-v2/wmt23``.
    lp:
        Language pair as in the file names, e.g. ``en-de``.
    reference:
        Name of the reference to use (``refA``...). Default: MTME's standard reference for the
        test set (:data:`STANDARD_REFERENCES`), else the only reference, else ``refA``/``ref``/
        ``posteditA``. It is removed from the systems; metric variants using any other
        reference are not loaded.
    human:
        Human score name(s) (``mqm``, ``wmt-z``, ``da-sqm``...) to load: ``seg`` files become
        the corpus ratings, ``sys`` files :attr:`MTMEData.human_system_scores`. ``None``: no
        human scores.
    include_human_systems:
        Keep the other human translations (system outputs named like a reference) as systems
        (MTME's ``tasks.Task(human=True)``, the default of the WMT22-23 official tasks).
    exclude_systems:
        Systems to leave out (e.g. MTME's outlier systems or references close to the chosen
        one).
    metric_scores:
        Load ``metric-scores/LP/`` (MTME's ``read_stored_metric_scores``).
    lower_is_better:
        Metric names (full, e.g. ``TER-refA``) to mark as lower-is-better.

    Raises
    ------
    InputError
        Missing folder or file, a text file with a different number of lines than the source,
        a score file with a wrong count per system, an unknown system, a non-numeric score --
        each naming the file and line.

    Examples
    --------
    >>> import tempfile
    >>> from nlgeval.corpus import write_toy_folder
    >>> tmp = tempfile.TemporaryDirectory()
    >>> folder = write_toy_folder(tmp.name)  # outputs, references, ratings, corpus.json
    >>> import pandas as pd
    >>> from nlgeval.corpora import load_corpus
    >>> scores = pd.DataFrame({"system": ["A", "B", "A", "B"], "item": ["1", "1", "2", "2"],
    ...                        "metric": "len", "score": [3, 3, 2, 2]})
    >>> _ = write_mtme(load_corpus(folder), folder / "mtme" / "toy", "en-de", scores=scores)
    >>> data = read_mtme(folder / "mtme" / "toy", "en-de", human="fluency")
    >>> data.scores
      system item  metric  score
    0      A    1  len-r1    3.0
    1      A    2  len-r1    2.0
    2      B    1  len-r1    3.0
    3      B    2  len-r1    2.0
    >>> tmp.cleanup()
    """
    folder, lp = _open_folder(path, lp)
    testset = folder.name
    notes: list[str] = []
    src_path, src = _read_source(folder, lp)
    n = len(src)
    items = _read_item_ids(folder, lp, n, src_path, notes)
    documents = _read_documents(folder, lp, items, src_path, notes)
    ref_files = _find_references(folder, lp)
    reference, ref_text = _choose_reference(ref_files, reference, testset, lp, n, src_path,
                                            notes)
    outputs_by_sys = _read_system_outputs(folder, lp, n, src_path, notes)
    systems, kept_humans = _choose_systems(set(outputs_by_sys), list(ref_files), reference,
                                           exclude_systems, include_human_systems, notes,
                                           folder / "system-outputs" / lp)
    all_systems = set(outputs_by_sys)
    outputs, n_missing_out = _outputs_frame(systems, items, outputs_by_sys, src, notes)
    references, n_no_ref = _references_frame(items, ref_text, reference, notes)
    wanted = [human] if isinstance(human, str) else list(human or [])
    ratings_parts, human_sys_parts, criteria = _read_human_scores(
        folder, lp, wanted, n, items, systems, all_systems, notes)
    located = (_read_metric_scores(folder, lp, n, items, systems, all_systems, list(ref_files),
                                   reference, notes) if metric_scores else [])
    loc = _drop_missing_outputs(_concat(located, LOCATED_COLUMNS), outputs, n_missing_out,
                                "metric", notes)
    scores, system_scores = _by_level(loc)
    human_system_scores = _concat(human_sys_parts, HUMAN_SYSTEM_COLUMNS)
    higher_is_better = _orientation(list(dict.fromkeys(loc["metric"])), lower_is_better, notes)
    ratings = (_drop_missing_outputs(pd.concat(ratings_parts, ignore_index=True), outputs,
                                     n_missing_out, "human", notes) if ratings_parts else None)
    info = _corpus_info(folder, lp, criteria, src_path, ref_files[reference])
    corpus = Corpus.build(info, outputs, references, ratings, empty_outputs="keep",
                          require_references=n_no_ref == 0, notes=notes)
    return MTMEData(
        corpus=corpus, scores=scores, system_scores=system_scores,
        human_system_scores=human_system_scores, higher_is_better=higher_is_better,
        notes=list(corpus.notes), testset=testset, lp=lp, reference=reference,
        human_systems=kept_humans,
        sources=pd.DataFrame({"item": items, "text": ["" if s is None else s for s in src]}),
        documents=documents, _located=loc.drop(columns="_level").reset_index(drop=True),
    )


def write_mtme(
    corpus: Corpus,
    path: str | Path,
    lp: str,
    *,
    scores: pd.DataFrame | None = None,
    human_criterion: str | Sequence[str] | None = None,
    reference: str | None = None,
    sources: pd.DataFrame | Mapping[str, str] | None = None,
    documents: pd.DataFrame | None = None,
    reference_names: Mapping[str, str] | None = None,
    lower_is_better: Collection[str] = (),
    item_order: Sequence[str] | None = None,
    overwrite: bool = False,
) -> MTMEWritten:
    """Write ``corpus`` (and metric ``scores``) as language pair ``lp`` of an MTME test set.

    Parameters
    ----------
    corpus:
        The corpus. Each ``ref_id`` becomes ``references/LP.NAME.txt`` (``NAME`` = the ref_id,
        or ``reference_names[ref_id]``; a segment without that reference gets MTME's
        ``[No translation supplied]`` line); each system ``system-outputs/LP/SYS.txt`` (a
        missing output likewise).
    path:
        The test-set folder to write into (created if needed).
    scores:
        Tidy metric scores (:mod:`nlgeval.scores`: long ``system, item, metric, score`` or
        wide), ``item`` empty for system-level scores. Segment-level scores go to
        ``metric-scores/LP/METRIC-REF.seg.score``, a block per system that has scores (a
        missing score as ``None``, which MTME's own reader refuses in metric files: a note
        says so), system-level ones to ``.sys.score``.
    human_criterion:
        Criterion name(s) to write as ``human-scores/LP.NAME.{seg,sys}.score``; default every
        rated criterion, ``()`` none. The segment score is the mean over raters; the system
        score the mean of the system's segment scores.
    reference:
        The reference(s) the metric scores were computed with, i.e. ``REF`` in
        ``METRIC-REF``: a reference name, several joined by ``.``, ``src`` or ``all``. Default:
        the single reference, or ``all`` when the corpus has several (nlgeval's metrics use
        every reference). A metric whose name already ends in ``-REF`` is written as is.
    sources:
        Source segments (``item, text`` frame or ``{item: text}``); default the ``source``
        column of ``outputs``, else ``input``, else the item id (with a note).
    documents:
        ``item, doc, domain`` frame; default the ``doc``/``domain`` columns of ``outputs``,
        else one document ``doc`` in domain ``default``.
    reference_names:
        MTME names for ref_ids, e.g. ``{"A": "refA", "B": "refB"}`` (names contain no ``-`` or
        ``.``; keys that are not ref_ids of the corpus are ignored).
    lower_is_better:
        Metric names to negate (MTME's convention: higher is better). Criteria whose
        :class:`~nlgeval.corpus.Criterion` says lower is better are negated too.
    item_order:
        Segment order; default the corpus's item order (first appearance in ``outputs``),
        regrouped stably so that documents are contiguous.
    overwrite:
        Replace the files of ``lp`` if the folder already has them (otherwise an error).

    Examples
    --------
    >>> import tempfile
    >>> from nlgeval.corpus import write_toy_folder
    >>> tmp = tempfile.TemporaryDirectory()
    >>> folder = write_toy_folder(tmp.name)  # outputs, references, ratings, corpus.json
    >>> import pandas as pd
    >>> from nlgeval.corpora import load_corpus
    >>> scores = pd.DataFrame({"system": ["A", "B", "A", "B"], "item": ["1", "1", "2", "2"],
    ...                        "metric": "len", "score": [3, 3, 2, 2]})
    >>> written = write_mtme(load_corpus(folder), folder / "mtme" / "toy", "en-de",
    ...                      scores=scores)
    >>> [f for f in written.files if "scores" in f]
    ['human-scores/en-de.fluency.seg.score', 'human-scores/en-de.fluency.sys.score',
     'metric-scores/en-de/len-r1.seg.score']
    >>> (folder / "mtme" / "toy" / "metric-scores/en-de/len-r1.seg.score").read_text().split()
    ['A', '3.0', 'A', '2.0', 'B', '3.0', 'B', '2.0']
    >>> tmp.cleanup()
    """
    folder = Path(path).expanduser()
    lp = str(lp).strip()
    _check_name(lp, "language pair", extra=".")
    notes: list[str] = []
    out = corpus.outputs
    items = _segment_order(corpus, item_order)
    docs = _documents_for(documents, out, items, notes)
    items = _regroup_documents(items, docs, notes)
    w = _Files()
    _put_sources(w, sources, out, items, docs, lp, notes)
    rename = dict(reference_names or {})
    text_by = {s: dict(zip(g["item"], g["text"], strict=True))
               for s, g in out.groupby("system", sort=False)}
    ref_ids = _put_references(w, corpus, items, lp, rename, text_by, notes)
    _put_outputs(w, corpus.systems, text_by, items, lp, notes)
    _put_human_scores(w, corpus, human_criterion, items, lp, notes)
    if scores is not None:
        tidy = _tidy_for_writing(scores)
        reference = _metric_reference(reference, ref_ids, rename)
        _put_metric_scores(w, tidy, reference, ref_ids, corpus.systems, items, lp,
                           set(lower_is_better), notes)
    if w.n_trailing:
        notes.append(f"{w.n_trailing} text(s) had trailing whitespace, removed (MTME strips it "
                     "when reading)")
    _write_files(folder, lp, w.files, overwrite)
    return MTMEWritten(path=folder, lp=lp, files=tuple(w.files), notes=tuple(notes))
