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

This package is the MTME layout as one concept: each public function sits beside its steps.
:func:`read_mtme` and its stages are in :mod:`nlgeval.corpora.mtme.read` (the score files in
:mod:`nlgeval.corpora.mtme.read_scores`), :func:`write_mtme` and its stages in
:mod:`nlgeval.corpora.mtme.write`, the layout's constants and file-level helpers shared by both
in :mod:`nlgeval.corpora.mtme.layout`, and the result classes in
:mod:`nlgeval.corpora.mtme.results`; all public names are re-exported here. The private
steps are used only inside this package.
"""

from __future__ import annotations

from pathlib import Path

from nlgeval.corpora.mtme.layout import (
    AGGREGATE_RATER,
    HUMAN_SYSTEM_COLUMNS,
    ITEM_IDS_DIR,
    LEVELS,
    NO_TRANSLATION,
    SCORE_COLUMNS,
    STANDARD_REFERENCES,
    SYSTEM_SCORE_COLUMNS,
)
from nlgeval.corpora.mtme.read import read_mtme
from nlgeval.corpora.mtme.results import MTMEData, MTMEWritten
from nlgeval.corpora.mtme.write import write_mtme
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


def parse_mtme_spec(spec: str | Path) -> Path | None:
    """``"mtme:PATH/wmt23"`` -> ``Path("PATH/wmt23")``; anything else -> ``None``.

    The prefix is case-insensitive and ``~`` is expanded; the folder is not checked here
    (:func:`read_mtme` does). ``"mtme:"`` with no path raises :class:`InputError`.

    Parameters
    ----------
    spec : str or Path
        A corpus spec, e.g. ``"mtme:PATH"``; a Path is never an MTME spec.

    Returns
    -------
    Path or None
        The test-set folder, or ``None`` when ``spec`` is not an ``mtme:`` spec.

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
