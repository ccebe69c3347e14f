"""MQM scores of the WMT21 TED-talks error annotations (Freitag et al. 2021).

The error weights (:class:`MQMWeights`), each error's weight and breakdown criterion, and the
per-(system, segment, rater) scores; the decisions behind them are described in
:mod:`nlgeval.corpora.wmt21_ted`, which builds the corpus, and the error file is read by
:mod:`nlgeval.corpora.wmt21_ted.files`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, fields

import numpy as np
import pandas as pd

from nlgeval.errors import InputError
from nlgeval.io import ROW
from nlgeval.results import Result

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
            return cls(**values)  # type: ignore[arg-type]  # None checked by __post_init__
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


def error_weights(severity: pd.Series, category: pd.Series,
                  weights: MQMWeights | Mapping[str, float] | None = None) -> np.ndarray:
    """The weight of each error; severities and categories are matched case-insensitively.

    Computed once per distinct (severity, category) pair (a few dozen) and mapped back, so the
    cost is one factorisation of the column pair.

    Parameters
    ----------
    severity, category : pandas.Series
        Severity and category of each error.
    weights : MQMWeights or Mapping[str, float], optional
        The weighting; default ``None``: Freitag et al. (2021).

    Returns
    -------
    numpy.ndarray
        The float weight of each error.

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

    Parameters
    ----------
    category : pandas.Series
        Error categories as in the file (``Top/Sub``).

    Returns
    -------
    numpy.ndarray
        Object array of criterion names (``None`` for ``No-error``), one per error.

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

    Parameters
    ----------
    errors : pandas.DataFrame
        Per-error table from :func:`read_errors`.
    breakdown : bool, default True
        Add the per-category breakdown criteria to the overall ``MQM``.

    Returns
    -------
    pandas.DataFrame
        The tidy ratings described above.

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
