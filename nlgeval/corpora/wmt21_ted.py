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
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Any, Literal

import numpy as np
import pandas as pd

from nlgeval.corpora.descriptor import descriptor
from nlgeval.corpus import Corpus, CorpusInfo
from nlgeval.errors import InputError
from nlgeval.io import ROW, check_columns, read_text_utf8
from nlgeval.results import Result

LanguagePair = Literal["en-de", "zh-en"]
Reference = Literal["A", "B", "both"]
HumanSystems = Literal["others", "none", "all"]

#: language pair -> (registered corpus name, folder code inside ``wmt21_ted_mqm``)
LANGUAGE_PAIRS: dict[str, tuple[str, str]] = {
    "en-de": ("wmt21-ted-ende", "ende"),
    "zh-en": ("wmt21-ted-zhen", "zhen"),
}
#: human translations: name in the error file -> (system name here, ``ref_id``)
HUMAN_TRANSLATIONS: dict[str, tuple[str, str]] = {"ref": ("refA", "A"), "refB": ("refB", "B")}
#: names of the human translations in the averaged-score file -> system name here
PUBLISHED_NAMES: dict[str, str] = {"ref-A": "refA", "ref-B": "refB"}
#: MTME's standard reference of ``wmt21.tedtalks`` (``meta_info.py``)
STANDARD_REFERENCE: dict[str, str] = {"en-de": "A", "zh-en": "B"}
MQM = "MQM"
#: breakdown criterion -> top-level categories (lowercase) it collects; the rest go to Other
BREAKDOWN: dict[str, tuple[str, ...]] = {
    "MQM-Accuracy": ("accuracy",),
    "MQM-Fluency": ("fluency",),
    "MQM-Terminology": ("terminology",),
    "MQM-Style": ("style",),
    "MQM-Locale": ("locale convention", "locale"),
    "MQM-Other": (),
}
OTHER = "MQM-Other"
SEVERITIES = ("major", "minor", "neutral", "no-error")
MAX_ERRORS_PER_SEGMENT = 5  # Freitag et al. (2021): raters marked the five most severe errors
REQUIRED = ("system", "doc", "doc_id", "seg_id", "rater", "source", "target", "category",
            "severity")
_NON_TRANSLATION = ("non-translation!", "non-translation")
_SOURCE_ERROR = ("source error", "source issue")


@dataclass(frozen=True)
class MQMWeights(Result):
    """Error weights of the MQM score (Freitag et al. 2021; the repository's README).

    ``minor_punctuation`` applies to Minor ``Fluency/Punctuation`` errors (Major ones weigh
    ``major``); ``non_translation`` to the ``Non-translation`` category whatever its severity;
    ``source_error=None`` weighs ``Source error`` rows by their severity (what the repository's
    averaged TED scores do), a number gives them that weight (``0.0`` leaves them out).

    Examples
    --------
    >>> MQMWeights().floor                  # five Major errors or one Non-translation
    -25.0
    >>> MQMWeights.coerce({"minor_punctuation": 0}).to_dict()["minor_punctuation"]
    0.0
    """

    major: float = 5.0
    minor: float = 1.0
    neutral: float = 0.0
    minor_punctuation: float = 0.1
    non_translation: float = 25.0
    source_error: float | None = None

    def __post_init__(self) -> None:
        for f in fields(self):
            v = getattr(self, f.name)
            if v is None and f.name == "source_error":
                continue
            if isinstance(v, bool) or not isinstance(v, int | float) or not math.isfinite(v) \
                    or v < 0:
                raise InputError(
                    f"MQM weight '{f.name}' must be a finite number >= 0, got {v!r}"
                )

    @classmethod
    def coerce(cls, weights: MQMWeights | Mapping[str, float] | None) -> MQMWeights:
        """``None`` -> the defaults; a mapping -> those fields changed from the defaults.

        Examples
        --------
        >>> MQMWeights.coerce({"source_error": 0})       # leave Source error rows out
        MQMWeights(major=5.0, minor=1.0, neutral=0.0, minor_punctuation=0.1, non_translation=25.0,
                   source_error=0.0)
        """
        if weights is None:
            return cls()
        if isinstance(weights, cls):
            return weights
        if isinstance(weights, Mapping):
            known = {f.name for f in fields(cls)}
            unknown = sorted(set(weights) - known)
            if unknown:
                raise InputError(
                    f"unknown MQM weight(s) {', '.join(map(str, unknown))} "
                    f"(known: {', '.join(sorted(known))})"
                )
            values: dict[str, float | None] = {}
            for k, v in weights.items():
                try:
                    values[k] = None if v is None else float(v)
                except (TypeError, ValueError):
                    raise InputError(
                        f"MQM weight '{k}' must be a finite number >= 0, got {v!r}"
                    ) from None
            return cls(**values)  # type: ignore[arg-type]
        raise InputError(
            f"weights must be MQMWeights, a mapping or None, got {type(weights).__name__}"
        )

    @property
    def floor(self) -> float:
        """The lowest score a segment can get: five errors of the largest weight, or one
        Non-translation (which replaces all other errors)."""
        per_error = max(self.major, self.minor, self.neutral, self.minor_punctuation,
                        self.source_error or 0.0)
        return -max(MAX_ERRORS_PER_SEGMENT * per_error, self.non_translation)


def _lp(lp: str) -> tuple[str, str, str]:
    """Canonical language pair, corpus name and folder code (accepts ``en-de`` or ``ende``)."""
    key = str(lp).strip().lower()
    for canon, (name, code) in LANGUAGE_PAIRS.items():
        if key in (canon, code, name):
            return canon, name, code
    raise InputError(f"unknown language pair {lp!r} (have: {', '.join(LANGUAGE_PAIRS)})")


def errors_path(folder: str | Path, lp: str) -> Path:
    """The MQM error file of language pair ``lp`` in a ``wmt21_ted_mqm`` folder.

    Examples
    --------
    >>> errors_path("corpora/wmt21_ted_mqm", "en-de").as_posix()
    'corpora/wmt21_ted_mqm/ende/mqm_ted_ende.tsv'
    """
    _, _, code = _lp(lp)
    return Path(folder) / code / f"mqm_ted_{code}.tsv"


def _read_tsv_unquoted(path: Path) -> pd.DataFrame:
    """A tab-separated file with quoting disabled, as strings, with the ``_row`` column.

    Written here rather than with :func:`nlgeval.io.read_table` because that reader honours
    CSV quotes, which these texts contain unbalanced (``csv.QUOTE_NONE`` is what the
    repository's own tools use). pandas' parser could read it too, but reports a ragged row as
    a parser exception whose message would have to be parsed for the line; splitting the lines
    with pandas' vectorised string methods gives the row directly.
    """
    text = read_text_utf8(path)
    lines = pd.Series(text.split("\n"), dtype=object)
    lines = lines.str.removesuffix("\r")
    if lines.empty or not str(lines.iloc[0]).strip():
        raise InputError("the file is empty; expected a header row", file=path, row=1)
    header = [h.strip() for h in str(lines.iloc[0]).split("\t")]
    body = lines.iloc[1:]
    rows = np.arange(2, len(lines) + 1)
    keep = (body.str.strip() != "").to_numpy()
    body, rows = body[keep], rows[keep]
    n_fields = body.str.count("\t").to_numpy() + 1
    bad = n_fields != len(header)
    if bad.any():
        pos = int(np.flatnonzero(bad)[0])
        raise InputError(
            f"has {n_fields[pos]} tab-separated fields but the header has {len(header)} "
            f"({', '.join(header)}); the file is read with quoting disabled",
            file=path, row=int(rows[pos]),
        )
    if len(body):
        df = body.str.split("\t", expand=True)
        df.columns = header
    else:
        df = pd.DataFrame(columns=header, dtype=object)
    df = df.reset_index(drop=True)
    df[ROW] = rows
    return df


def _strip_spans(s: pd.Series) -> pd.Series:
    return s.str.replace("<v>", "", regex=False).str.replace("</v>", "", regex=False)


def _positive_int(df: pd.DataFrame, column: str, path: Path) -> pd.Series:
    s = df[column].str.strip()
    ok = s.str.fullmatch(r"[0-9]+").fillna(False).to_numpy(dtype=bool)
    if not ok.all():
        pos = int(np.flatnonzero(~ok)[0])
        raise InputError(f"{df[column].iloc[pos]!r} is not a segment number", file=path,
                         row=int(df[ROW].iloc[pos]), column=column)
    return s.astype(int)


def _first_inconsistent(df: pd.DataFrame, keys: list[str], column: str) -> int | None:
    """Position of the first row whose ``column`` differs from the first row of its group."""
    first = df.groupby(keys, sort=False)[column].transform("first")
    bad = (df[column] != first).to_numpy()
    return int(np.flatnonzero(bad)[0]) if bad.any() else None


def error_weights(severity: pd.Series, category: pd.Series,
                  weights: MQMWeights | Mapping[str, float] | None = None) -> np.ndarray:
    """The weight of each error; severities and categories are matched case-insensitively.

    Computed once per distinct (severity, category) pair (a few dozen) and mapped back, so the
    cost is one factorisation of the column pair.

    Examples
    --------
    >>> import pandas as pd
    >>> severity = pd.Series(["Major", "Minor", "Minor", "Major"])
    >>> category = pd.Series(["Accuracy/Mistranslation", "Fluency/Punctuation",
    ...                       "Fluency/Grammar", "Non-translation!"])
    >>> error_weights(severity, category)
    array([ 5. ,  0.1,  1. , 25. ])
    """
    w = MQMWeights.coerce(weights)
    pairs = pd.MultiIndex.from_arrays([severity.astype(str), category.astype(str)])
    codes, uniq = pd.factorize(pairs)
    sev = uniq.get_level_values(0).str.strip().str.lower().to_numpy()
    cat = uniq.get_level_values(1).str.strip().str.lower()
    top = cat.str.split("/").str[0].str.strip().to_numpy()
    punct = np.asarray(cat.str.fullmatch(r"fluency\s*/\s*punctuation(\s*/.*)?"), dtype=bool)
    out = np.select(
        [sev == "major", sev == "minor", sev == "neutral"],
        [w.major, w.minor, w.neutral],
        0.0,
    ).astype(float)
    out = np.where((sev == "minor") & punct, w.minor_punctuation, out)
    if w.source_error is not None:
        out = np.where(np.isin(top, _SOURCE_ERROR), w.source_error, out)
    out = np.where(np.isin(top, _NON_TRANSLATION), w.non_translation, out)
    out = np.where(sev == "no-error", 0.0, out)
    return out[codes]


def breakdown_criterion(category: pd.Series) -> np.ndarray:
    """The breakdown criterion of each error's category (``None`` for ``No-error``).

    Examples
    --------
    >>> import pandas as pd
    >>> breakdown_criterion(pd.Series(["Accuracy/Mistranslation", "Fluency/Punctuation",
    ...                                "No-error", "Style/Awkward"]))
    array(['MQM-Accuracy', 'MQM-Fluency', None, 'MQM-Style'], dtype=object)
    """
    codes, uniq = pd.factorize(category.astype(str))
    top = pd.Index(uniq).str.strip().str.lower().str.split("/").str[0].str.strip().to_numpy()
    out = np.full(len(top), OTHER, dtype=object)
    for crit, tops in BREAKDOWN.items():
        if tops:
            out[np.isin(top, tops)] = crit
    out[top == "no-error"] = None
    return out[codes]


def read_errors(
    folder: str | Path,
    lp: str = "en-de",
    weights: MQMWeights | Mapping[str, float] | None = None,
) -> pd.DataFrame:
    """The per-error table of one language pair, checked, with plain texts and weights.

    Columns: ``system`` (``ref``/``refB`` renamed ``refA``/``refB``), ``system_label`` (the
    file's name), ``item`` (``seg_id`` as a string), ``seg_id`` (int), ``doc``, ``doc_seg_id``,
    ``rater``, ``source``, ``target`` (span markup removed), ``source_marked``,
    ``target_marked`` (as in the file), ``category``, ``severity``, ``weight``, ``criterion``
    (the breakdown criterion of the error, ``None`` for ``No-error``) and ``file_row`` (1-based
    line in the file; header = row 1).

    Examples
    --------
    >>> from nlgeval.corpora.descriptor import descriptor
    >>> from nlgeval.corpora.store import locate
    >>> folder = locate(descriptor("wmt21-ted-ende")).folder   # the local copy
    >>> errors = read_errors(folder, "en-de")
    >>> len(errors), errors.loc[0, ["rater", "severity"]].notna().all()
    (8435, np.True_)
    """
    path = errors_path(folder, lp)
    df = _read_tsv_unquoted(path)
    check_columns(df, REQUIRED, file=path)
    for col in ("system", "doc", "rater", "category", "severity"):
        s = df[col].str.strip()
        empty = (s == "").to_numpy()
        if empty.any():
            pos = int(np.flatnonzero(empty)[0])
            raise InputError(f"empty {col}", file=path, row=int(df[ROW].iloc[pos]), column=col)
        df[col] = s
    sev = df["severity"].str.lower()
    bad = ~sev.isin(SEVERITIES).to_numpy()
    if bad.any():
        pos = int(np.flatnonzero(bad)[0])
        raise InputError(
            f"unknown severity {df['severity'].iloc[pos]!r} (expected Major, Minor, Neutral or "
            "No-error)", file=path, row=int(df[ROW].iloc[pos]), column="severity",
        )
    no_err_cat = df["category"].str.lower() == "no-error"
    mismatch = (no_err_cat != (sev == "no-error")).to_numpy()
    if mismatch.any():
        pos = int(np.flatnonzero(mismatch)[0])
        raise InputError(
            f"category {df['category'].iloc[pos]!r} with severity {df['severity'].iloc[pos]!r}: "
            "a row without errors has both category and severity 'No-error'",
            file=path, row=int(df[ROW].iloc[pos]), column="severity",
        )
    seg = _positive_int(df, "seg_id", path)
    doc_seg = _positive_int(df, "doc_id", path)
    system = df["system"].replace({k: v[0] for k, v in HUMAN_TRANSLATIONS.items()})
    out = pd.DataFrame(
        {
            "system": system,
            "system_label": df["system"],
            "item": seg.astype(str),
            "seg_id": seg,
            "doc": df["doc"],
            "doc_seg_id": doc_seg,
            "rater": df["rater"],
            "source": _strip_spans(df["source"]),
            "target": _strip_spans(df["target"]),
            "source_marked": df["source"],
            "target_marked": df["target"],
            "category": df["category"],
            "severity": df["severity"],
            "weight": error_weights(df["severity"], df["category"], weights),
            "criterion": breakdown_criterion(df["category"]),
            "file_row": df[ROW].to_numpy(),
        }
    )
    # One source, talk and position per segment; one translation per (system, segment).
    for keys, col in ((["item"], "source"), (["item"], "doc"), (["item"], "doc_seg_id"),
                      (["system", "item"], "target")):
        pos = _first_inconsistent(out, keys, col)
        if pos is not None:
            what = "translation" if col == "target" else col
            raise InputError(
                f"segment {out['item'].iloc[pos]}"
                + (f" of system '{out['system_label'].iloc[pos]}'" if col == "target" else "")
                + f" has a different {what} here than on its first row (after removing the "
                "<v>...</v> span markup)",
                file=path, row=int(out["file_row"].iloc[pos]),
                column={"doc_seg_id": "doc_id"}.get(col, col),
            )
    return out


def mqm_ratings(errors: pd.DataFrame, *, breakdown: bool = True) -> pd.DataFrame:
    """Tidy MQM judgements from :func:`read_errors`: ``rater, item, system, criterion, score,
    n_major, n_minor, n_neutral`` (and ``_row``, the first file row of the output's errors) --
    one row per (system, segment, rater) and criterion.

    ``score`` = minus the sum of the weights of the rater's errors (restricted to the
    criterion's categories for a breakdown criterion); ``n_*`` count those errors by severity.
    Every judged output gets every breakdown criterion that has at least one error of non-zero
    weight in ``errors`` (0 where it has none of that category); the others, constant 0, are
    not returned. Sums are
    :func:`numpy.bincount` over the group codes (in file order, as a row-by-row sum would be).

    Examples
    --------
    >>> import pandas as pd
    >>> errors = pd.DataFrame({"system": "S1", "item": ["1", "1", "2"], "rater": "r1",
    ...                        "severity": ["Major", "Minor", "No-error"],
    ...                        "weight": [5.0, 1.0, 0.0],
    ...                        "criterion": ["MQM-Accuracy", "MQM-Fluency", None],
    ...                        "file_row": [2, 3, 4]})
    >>> mqm_ratings(errors)[["item", "criterion", "score", "n_major"]]
      item     criterion  score  n_major
    0    1           MQM   -6.0        1
    1    2           MQM    0.0        0
    2    1  MQM-Accuracy   -5.0        1
    3    2  MQM-Accuracy    0.0        0
    4    1   MQM-Fluency   -1.0        0
    5    2   MQM-Fluency    0.0        0
    """
    keys = ["system", "item", "rater"]
    grouped = errors.groupby(keys, sort=False)
    gid = grouped.ngroup().to_numpy()
    judged = grouped["file_row"].min().reset_index().rename(columns={"file_row": ROW})
    n = len(judged)
    weight = errors["weight"].to_numpy(dtype=float)
    sev = errors["severity"].str.lower().to_numpy()
    crit_of = errors["criterion"].to_numpy(dtype=object)
    nonzero = weight != 0
    present = [c for c in BREAKDOWN if ((crit_of == c) & nonzero).any()] if breakdown else []
    parts = []
    for crit in [MQM, *present]:
        mask = np.ones(len(errors), dtype=bool) if crit == MQM else crit_of == crit
        part = judged.assign(
            criterion=crit,
            score=-np.bincount(gid[mask], weights=weight[mask], minlength=n) + 0.0,  # no -0.0
            **{
                f"n_{s}": np.bincount(gid[mask & (sev == s)], minlength=n)
                for s in ("major", "minor", "neutral")
            },
        )
        parts.append(part)
    r = pd.concat(parts, ignore_index=True)
    return r[["rater", "item", "system", "criterion", "score", "n_major", "n_minor",
              "n_neutral", ROW]]


def read_published_scores(folder: str | Path, lp: str = "en-de") -> pd.DataFrame:
    """The repository's ``mqm_ted_LP.avg_seg_scores.tsv``: ``system, item, score``.

    ``score`` is the MQM score averaged over raters (NaN where the file says ``None``: the
    segment was not rated for that system); ``ref-A``/``ref-B`` are renamed ``refA``/``refB``.
    The header line is separated by spaces and the data lines by tabs and spaces, so fields are
    split on any whitespace.

    Examples
    --------
    >>> from nlgeval.corpora.descriptor import descriptor
    >>> from nlgeval.corpora.store import locate
    >>> folder = locate(descriptor("wmt21-ted-ende")).folder   # the local copy
    >>> published = read_published_scores(folder, "en-de")
    >>> list(published.columns), len(published)
    (['system', 'item', 'score'], 8484)
    """
    _, _, code = _lp(lp)
    path = Path(folder) / code / f"mqm_ted_{code}.avg_seg_scores.tsv"
    lines = pd.Series(read_text_utf8(path).split("\n"), dtype=object)
    rows = np.arange(1, len(lines) + 1)
    keep = (lines.str.strip() != "").to_numpy()
    lines, rows = lines[keep], rows[keep]
    parts = lines.str.split().to_list()
    header = parts[0] if parts else []
    if header != ["system", "mqm_avg_score", "seg_id"]:
        raise InputError(f"unexpected header {header} (expected system mqm_avg_score seg_id)",
                         file=path, row=1)
    body = parts[1:]
    lens = np.array([len(p) for p in body])
    if (lens != 3).any():
        pos = int(np.flatnonzero(lens != 3)[0])
        raise InputError(f"has {lens[pos]} fields, expected 3", file=path, row=int(rows[pos + 1]))
    df = pd.DataFrame(body, columns=header)
    raw = df["mqm_avg_score"]
    score = pd.to_numeric(raw.where(raw != "None"), errors="coerce")
    bad = (score.isna() & (raw != "None")).to_numpy()
    if bad.any():
        pos = int(np.flatnonzero(bad)[0])
        raise InputError(f"{raw.iloc[pos]!r} is not a number or None", file=path,
                         row=int(rows[pos + 1]), column="mqm_avg_score")
    return pd.DataFrame(
        {
            "system": df["system"].replace(PUBLISHED_NAMES),
            "item": df["seg_id"].astype(int).astype(str),
            "score": score.astype(float),
        }
    )


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
    ref_systems = [available[r] for r in ref_ids]
    human = list(available.values())
    drop = {"others": ref_systems, "none": human, "all": []}[human_systems]

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
    dropped = errors["system"].isin(drop).to_numpy()
    ratings = mqm_ratings(errors[~dropped], breakdown=breakdown)
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
    info = _info(name, w)
    if w.floor < MQMWeights().floor:
        notes.append(f"scale of the MQM criteria widened to [{w.floor:g}, 0] for these weights")
    return Corpus.build(
        info,
        outputs,
        refs,
        ratings,
        files={"outputs": path, "references": path, "ratings": path},
        notes=notes,
    )


def load_ende(folder: str | Path, **options: Any) -> Corpus:
    """``wmt21-ted-ende``: :func:`load` with ``lp="en-de"``.

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

    Examples
    --------
    >>> from nlgeval.corpora import REGISTRY
    >>> REGISTRY["wmt21-ted-zhen"].loader is load_zhen   # load_corpus("wmt21-ted-zhen") calls it
    True
    """
    if "lp" in options:
        raise InputError("wmt21-ted-zhen is the zh-en corpus; use wmt21-ted-ende for en-de")
    return load(folder, lp="zh-en", **options)
