"""WMT21 TED talks, MQM expert annotations (English->German, Chinese->English).

Freitag, Foster, Grangier, Ratnakar, Tan and Macherey (2021), "Experts, Errors, and Context: A
Large-Scale Study of Human Evaluation for Machine Translation", TACL 9 (arXiv 2104.14478); the
TED test set is the WMT21 TED-talks test suite (Freitag, Rei, Mathur et al. 2021, "Results of
the WMT21 Metrics Shared Task"). Registered as ``wmt21-ted-ende`` and ``wmt21-ted-zhen``; both
read the folder ``wmt21_ted_mqm`` (``ende/mqm_ted_ende.tsv``, ``zhen/mqm_ted_zhen.tsv``).

What the loader builds, and the decisions it takes:

* The error file has one row per annotated error (``system doc doc_id seg_id rater source
  target category severity [comment]``); a segment without errors has one row with category and
  severity ``No-error``. It is read with quoting disabled (texts contain quote characters), one
  record per line; a row with the wrong number of tab-separated fields is an
  :class:`~nlgeval.errors.InputError` naming the file and row.
* ``item`` = ``seg_id`` as a string (the segment's number in the TED test set; 529 segments were
  annotated for each language pair). Extra output columns: ``source`` (the source segment),
  ``doc`` (``talk.N``) and ``doc_seg_id`` (the file's ``doc_id``: the 1-based position of the
  segment within its talk). The error-span markup ``<v>...</v>`` is removed from every text.
* Human translations: the file's ``ref`` and (zh-en) ``refB`` are renamed ``refA`` and ``refB``
  (MTME's names; the repository's averaged-score file calls them ``ref-A``/``ref-B``). Their
  texts are the references, ``ref_id`` ``A`` and ``B``. ``reference=`` picks which serve as
  references: ``"A"``, ``"B"`` or ``"both"``; the default is the standard reference of MTME
  (google-research/mt-metrics-eval, ``wmt21.tedtalks``): ``A`` for en-de (the only one) and
  ``B`` for zh-en. ``human_systems=`` decides which human translations are also *systems*:
  ``"others"`` (default; MTME's convention: the human translation(s) not used as reference are
  evaluated like any system, the one used as reference is not a system), ``"none"`` (no human
  translation is a system) or ``"all"`` (every human translation is a system, including the
  reference itself, which reference-based metrics then score against itself; ``nlgeval
  validate`` detects and excludes such a system). Every output that is in the corpus carries its
  MQM ratings; the ratings of a human translation that is not a system are not in the corpus
  (the count is in ``Corpus.notes``).
* MQM score per (system, segment, rater) = minus the sum of the error weights (Freitag et al.
  2021, and the README of google/wmt-mqm-human-evaluation): Major 5, Minor 1, Neutral 0, Minor
  ``Fluency/Punctuation`` 0.1, ``Non-translation`` 25 (the category is spelt
  ``Non-translation!`` in the annotation tool, which forces severity Major; it weighs 25 whatever
  its severity). ``Source error`` rows (an error in the *source*, 38 per language pair) weigh by
  their severity like any other error: that is what the repository's own averaged scores do
  (checked exactly, see the tests); ``MQMWeights(source_error=0.0)`` leaves them out. Weights
  are configurable with ``weights=MQMWeights(...)`` (or a dict of its fields). The score is 0 for
  a segment without errors and negative otherwise, so higher is better. Each rated (system,
  segment) has one rater in these files; with several, each rater is one judgement and
  :meth:`~nlgeval.corpus.Corpus.human_scores` averages them (as the repository does).
* Criteria (``rater`` = the MQM rater id): ``MQM`` (all errors) and, with ``breakdown=True``,
  the same weighted sum restricted to one top-level category: ``MQM-Accuracy``, ``MQM-Fluency``,
  ``MQM-Terminology``, ``MQM-Style``, ``MQM-Locale`` (``Locale convention/...``) and
  ``MQM-Other``, which takes ``Other``, ``Source error`` and ``Non-translation`` errors and any
  unrecognised top-level category, so the breakdown criteria of an output always sum to its
  ``MQM``. A ``No-error`` row adds nothing: such an output scores 0 on every criterion. A
  breakdown criterion without any error of non-zero weight in the file (``MQM-Locale`` for
  en-de) is left out (it would be constant), with a note. Extra rating columns ``n_major``,
  ``n_minor``, ``n_neutral`` count the errors behind each score by severity (the severity
  breakdown);
  :func:`read_errors` returns the per-error table (with weights and the original markup).
* Scales: with the default weights a segment scores between -25 and 0 (at most five errors per
  segment were annotated, and a Non-translation replaces all other errors: Freitag et al.
  2021 and the repository README). With other weights the floor is ``-max(5 x the largest
  per-error weight, non_translation)`` and the corpus built says so in its notes.

:func:`read_published_scores` reads the repository's ``mqm_ted_LP.avg_seg_scores.tsv`` (per
(system, segment) MQM averaged over raters), which the loader does not need; the tests check
that the scores computed here equal it exactly.

This package is the corpus as one concept: the file readers are in
:mod:`nlgeval.corpora.wmt21_ted.files`, the MQM scoring in :mod:`nlgeval.corpora.wmt21_ted.mqm`;
both are re-exported here, where the corpus is built (:func:`load`, and :func:`load_ende` /
:func:`load_zhen`, the loaders registered for ``wmt21-ted-ende`` and ``wmt21-ted-zhen``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any, Literal

import pandas as pd

from nlgeval.corpora.descriptor import descriptor
from nlgeval.corpora.wmt21_ted.files import (
    HUMAN_TRANSLATIONS,
    LANGUAGE_PAIRS,
    PUBLISHED_NAMES,
    REQUIRED,
    _lp,
    errors_path,
    read_errors,
    read_published_scores,
)
from nlgeval.corpora.wmt21_ted.mqm import (
    BREAKDOWN,
    MAX_ERRORS_PER_SEGMENT,
    MQM,
    OTHER,
    SEVERITIES,
    MQMWeights,
    breakdown_criterion,
    error_weights,
    mqm_ratings,
)
from nlgeval.corpus import Corpus, CorpusInfo
from nlgeval.errors import InputError

__all__ = [
    "BREAKDOWN",
    "HUMAN_TRANSLATIONS",
    "LANGUAGE_PAIRS",
    "MAX_ERRORS_PER_SEGMENT",
    "MQM",
    "OTHER",
    "PUBLISHED_NAMES",
    "REQUIRED",
    "SEVERITIES",
    "STANDARD_REFERENCE",
    "MQMWeights",
    "breakdown_criterion",
    "error_weights",
    "errors_path",
    "load",
    "load_ende",
    "load_zhen",
    "mqm_ratings",
    "read_errors",
    "read_published_scores",
]

LanguagePair = Literal["en-de", "zh-en"]
Reference = Literal["A", "B", "both"]
HumanSystems = Literal["others", "none", "all"]

#: MTME's standard reference of ``wmt21.tedtalks`` (``meta_info.py``)
STANDARD_REFERENCE: dict[str, str] = {"en-de": "A", "zh-en": "B"}
#: the modules whose code parses the corpus besides this one: the parsed-corpus cache
#: (:mod:`nlgeval.corpora.parsed_cache`) hashes their source with this module's
PARSED_WITH = ("nlgeval.corpora.wmt21_ted.files", "nlgeval.corpora.wmt21_ted.mqm")


def _info(name: str, weights: MQMWeights) -> CorpusInfo:
    info = descriptor(name).info()
    floor = weights.floor
    if floor >= MQMWeights().floor:
        return info
    crits = tuple(
        replace(c, min=min(c.min, floor)) if c.name == MQM or c.name in BREAKDOWN else c
        for c in info.criteria
    )
    return replace(info, criteria=crits)


def load(
    folder: str | Path,
    *,
    lp: LanguagePair | str = "en-de",
    reference: Reference | None = None,
    human_systems: HumanSystems = "others",
    weights: MQMWeights | Mapping[str, float] | None = None,
    breakdown: bool = True,
) -> Corpus:
    """Load one language pair of the WMT21 TED MQM corpus (see the module docstring).

    Parameters
    ----------
    folder:
        A folder laid out like the bundled corpora's ``wmt21_ted_mqm`` (``ende/``, ``zhen/``).
    lp:
        ``"en-de"`` or ``"zh-en"``.
    reference:
        Which human translation(s) are the references: ``"A"`` (the file's ``ref``), ``"B"``
        (``refB``, zh-en only) or ``"both"``; ``None`` = MTME's standard reference (A for
        en-de, B for zh-en).
    human_systems:
        ``"others"`` (human translations not used as reference are systems), ``"none"`` or
        ``"all"`` (the reference translation too).
    weights:
        :class:`MQMWeights` (or a dict of its fields); ``None`` = Freitag et al. (2021).
    breakdown:
        Add the per-category criteria ``MQM-Accuracy`` ... ``MQM-Other``.

    Returns
    -------
    Corpus
        Outputs, references and MQM ratings of the language pair, with notes.

    Examples
    --------
    >>> from nlgeval.corpora import load_corpus
    >>> corpus = load_corpus("wmt21-ted-ende")   # load_ende -> load(folder, lp="en-de")
    >>> len(corpus.systems), len(corpus.items), corpus.criteria[:2]
    (13, 529, ['MQM', 'MQM-Accuracy'])
    """
    canon, name, _ = _lp(lp)
    w = MQMWeights.coerce(weights)
    if human_systems not in ("others", "none", "all"):
        raise InputError(
            f"human_systems must be 'others', 'none' or 'all', got {human_systems!r}"
        )
    path = errors_path(folder, canon)
    errors = read_errors(folder, canon, w)
    available = {
        ref_id: sys for label, (sys, ref_id) in HUMAN_TRANSLATIONS.items()
        if label in set(errors["system_label"])
    }
    ref_ids = _reference_ids(reference, canon, name, available, path)
    ref_systems = [available[r] for r in ref_ids]
    human = list(available.values())
    drop = {"others": ref_systems, "none": human, "all": []}[human_systems]
    outputs, refs = _texts(errors, ref_ids, available, drop)
    dropped = errors["system"].isin(drop).to_numpy()
    ratings = mqm_ratings(errors[~dropped], breakdown=breakdown)
    notes = _notes(errors, dropped, ratings, ref_ids, available, human, drop, reference,
                   human_systems, w, breakdown)
    info = _info(name, w)
    return Corpus.build(
        info,
        outputs,
        refs,
        ratings,
        files={"outputs": path, "references": path, "ratings": path},
        notes=notes,
    )


def _reference_ids(reference: Reference | None, canon: str, name: str,
                   available: Mapping[str, str], path: Path) -> list[str]:
    """The ``ref_id`` s used as references (``reference=``, else MTME's standard one)."""
    ref_choice = STANDARD_REFERENCE[canon] if reference is None else str(reference).strip()
    ref_choice = ref_choice.upper() if len(ref_choice) == 1 else ref_choice.lower()
    if ref_choice not in ("A", "B", "both"):
        raise InputError(f"reference must be 'A', 'B' or 'both', got {reference!r}")
    ref_ids = sorted(available) if ref_choice == "both" else [ref_choice]
    missing = [r for r in ref_ids if r not in available]
    if missing or not ref_ids:
        have = ", ".join(f"{r} ({available[r]})" for r in sorted(available)) or "none"
        raise InputError(
            f"{name} has no human translation {', '.join(missing) or 'at all'} to use as "
            f"reference (human translations in the file: {have})", file=path,
        )
    return ref_ids


def _texts(errors: pd.DataFrame, ref_ids: list[str], available: Mapping[str, str],
           drop: list[str]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Outputs (systems not in ``drop``) and references, one row per (system, segment), in
    segment order within each system, systems in file order."""
    ref_systems = [available[r] for r in ref_ids]
    seg = errors.drop_duplicates(["system", "item"])
    seg = seg.sort_values(["seg_id"], kind="stable")
    order = {s: k for k, s in enumerate(dict.fromkeys(errors["system"]))}
    seg = seg.sort_values("system", key=lambda s: s.map(order), kind="stable")

    ref_rows = seg[seg["system"].isin(ref_systems)]
    refs = pd.DataFrame(
        {
            "item": ref_rows["item"],
            "ref_id": ref_rows["system"].map({available[r]: r for r in ref_ids}),
            "text": ref_rows["target"],
            "_row": ref_rows["file_row"],
        }
    ).sort_values(["ref_id"], kind="stable")
    out = seg[~seg["system"].isin(drop)]
    outputs = pd.DataFrame(
        {
            "system": out["system"],
            "item": out["item"],
            "text": out["target"],
            "source": out["source"],
            "doc": out["doc"],
            "doc_seg_id": out["doc_seg_id"],
            "_row": out["file_row"],
        }
    )
    return outputs, refs


def _notes(errors: pd.DataFrame, dropped: Any, ratings: pd.DataFrame, ref_ids: list[str],
           available: Mapping[str, str], human: list[str], drop: list[str],
           reference: Reference | None, human_systems: str, w: MQMWeights,
           breakdown: bool) -> list[str]:
    """What the loader decided, for ``Corpus.notes``."""
    n_dropped = len(errors[dropped].drop_duplicates(["system", "item", "rater"]))
    notes = [
        "item = seg_id of the MQM file (segment number in the WMT21 TED test set); extra "
        "output columns source, doc (talk) and doc_seg_id (1-based position in the talk)",
        "error-span markup <v>...</v> removed from translations and sources",
        "human translations renamed ref -> refA (ref_id A), refB -> refB (ref_id B); "
        f"reference(s): {', '.join(f'{r} ({available[r]})' for r in ref_ids)}"
        + (" (MTME's standard reference)" if reference is None else "")
        + f"; human_systems={human_systems!r}: human translations as systems: "
        + (", ".join(s for s in human if s not in drop) or "none"),
        "MQM = minus the weighted error sum per (system, segment, rater); weights "
        + ", ".join(f"{k}={v}" for k, v in w.to_dict().items())
        + " (source_error=None: Source error rows weigh by severity)",
    ]
    if n_dropped:
        notes.append(
            f"MQM ratings of {n_dropped} (output, rater) pairs of "
            f"{', '.join(sorted(set(errors.loc[dropped, 'system'])))} not kept: not a system "
            "with these options (human_systems)"
        )
    if breakdown:
        have = set(ratings["criterion"])
        absent = [c for c in BREAKDOWN if c not in have]
        notes.append(
            "breakdown criteria by top-level category (MQM-Other = Other, Source error, "
            "Non-translation, unrecognised); they sum to MQM"
            + (f"; no errors of non-zero weight, so left out: {', '.join(absent)}"
               if absent else "")
        )
    if w.floor < MQMWeights().floor:
        notes.append(f"scale of the MQM criteria widened to [{w.floor:g}, 0] for these weights")
    return notes


def load_ende(folder: str | Path, **options: Any) -> Corpus:
    """``wmt21-ted-ende``: :func:`load` with ``lp="en-de"``.

    Parameters
    ----------
    folder : str or Path
        A ``wmt21_ted_mqm`` folder.
    **options : Any
        Keyword options of :func:`load` except ``lp``.

    Returns
    -------
    Corpus
        The en-de corpus.

    Examples
    --------
    >>> from nlgeval.corpora import REGISTRY
    >>> REGISTRY["wmt21-ted-ende"].loader is load_ende   # load_corpus("wmt21-ted-ende") calls it
    True
    """
    if "lp" in options:
        raise InputError("wmt21-ted-ende is the en-de corpus; use wmt21-ted-zhen for zh-en")
    return load(folder, lp="en-de", **options)


def load_zhen(folder: str | Path, **options: Any) -> Corpus:
    """``wmt21-ted-zhen``: :func:`load` with ``lp="zh-en"``.

    Parameters
    ----------
    folder : str or Path
        A ``wmt21_ted_mqm`` folder.
    **options : Any
        Keyword options of :func:`load` except ``lp``.

    Returns
    -------
    Corpus
        The zh-en corpus.

    Examples
    --------
    >>> from nlgeval.corpora import REGISTRY
    >>> REGISTRY["wmt21-ted-zhen"].loader is load_zhen   # load_corpus("wmt21-ted-zhen") calls it
    True
    """
    if "lp" in options:
        raise InputError("wmt21-ted-zhen is the zh-en corpus; use wmt21-ted-ende for en-de")
    return load(folder, lp="zh-en", **options)
