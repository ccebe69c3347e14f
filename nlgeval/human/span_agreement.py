"""Agreement of raters on error spans (MQM, Freitag et al. 2021; ESA, Kocmi et al. 2024).

A *unit* is one output ``(item, system)``; two raters are compared on the units both judged
(a rater judged a unit when the span frame has a row for it, a no-error row included). Each
rater's located spans are turned into one severity label per character (0 = not marked; where a
rater's spans overlap, the most severe label).

* **Character-overlap F1** per pair of raters: with A and B the characters each marked,
  precision = |A & B| / |B|, recall = |A & B| / |A| (B against A) and F1 = 2 |A & B| / (|A| +
  |B|), symmetric. *Micro*: the counts summed over the units, then the ratios; *macro*: the mean
  of the per-unit F1 over the units where at least one of the two marked something (a unit
  neither marked has no F1 and is counted in ``n_units_unmarked``). This is the span-overlap
  agreement used for MQM annotations (e.g. Freitag et al. 2021; Kocmi et al. 2024 report
  character-level agreement of ESA spans).
* **Severity**: Cohen's kappa (Cohen 1960) on the severity labels of the characters both raters
  marked, per pair and pooled over pairs, computed with nlgeval's kappa kernel
  (:func:`nlgeval.human.kappa_alpha.cohen_kappas`, statsmodels); and Krippendorff's alpha
  (Krippendorff 2011), nominal, on the character labels (0 = not marked) over the characters
  that at least one rater of the unit marked, every rater who judged the unit contributing a
  label (:func:`nlgeval.human.kappa_alpha.krippendorff_alpha`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import combinations

import numpy as np
import pandas as pd

from nlgeval.errors import InputError
from nlgeval.human.kappa_alpha import cohen_kappas, krippendorff_alpha
from nlgeval.human.spans import SEVERITY_ORDER, check_spans
from nlgeval.results import Result

PAIR_COLUMNS = ["rater_a", "rater_b", "n_units", "n_units_unmarked", "chars_a", "chars_b",
                "overlap", "precision", "recall", "f1_micro", "f1_macro", "n_chars_both",
                "severity_kappa"]


@dataclass(frozen=True)
class SpanAgreement(Result):
    """Span agreement of every rater pair (``pairs``, columns ``PAIR_COLUMNS``) and overall:
    F1 micro (counts pooled over pairs and units) and macro (mean per-unit F1 over pairs and
    units), severity kappa on the characters both marked (pooled over pairs) and alpha.

    Examples
    --------
    >>> import pandas as pd
    >>> s = pd.DataFrame({"rater": ["a", "b"], "item": "1", "system": "S", "start": [0, 2],
    ...                   "end": [4, 6], "category": "", "severity": "major"})
    >>> span_agreement(s).f1_micro        # 2 * 2 / (4 + 4)
    0.5
    """

    _omit = frozenset({"pairs"})

    pairs: pd.DataFrame
    f1_micro: float
    f1_macro: float
    severity_kappa: float
    severity_alpha: float
    n_units: int
    n_pairs: int
    notes: tuple[str, ...] = field(default=())

    def to_dict(self) -> dict:
        """Fields plus the per-pair table as records."""
        d = super().to_dict()
        d["pairs"] = self.pairs.to_dict("records")
        return d


def char_labels(spans: pd.DataFrame) -> dict[tuple[str, str], dict[str, np.ndarray]]:
    """Per unit ``(item, system)``: for each rater who judged it, the severity code of every
    character up to the unit's last marked one (0 = not marked, then ``SEVERITY_ORDER`` + 1).

    Examples
    --------
    >>> import pandas as pd
    >>> s = pd.DataFrame({"rater": ["a", "a", "b"], "item": "1", "system": "S",
    ...                   "start": [0, 1, None], "end": [2, 3, None], "category": "",
    ...                   "severity": ["minor", "major", ""]})
    >>> {r: v.tolist() for r, v in char_labels(s)[("1", "S")].items()}
    {'a': [2, 3, 3], 'b': [0, 0, 0]}
    """
    df = check_spans(spans)
    code = {s: i + 1 for i, s in enumerate(SEVERITY_ORDER)}
    out: dict[tuple[str, str], dict[str, np.ndarray]] = {}
    for (item, system), g in df.groupby(["item", "system"], sort=True):
        n = int(max(g["end"].max(), 0))
        labels = {}
        for rater, gr in g.groupby("rater", sort=True):
            lab = np.zeros(n, dtype=int)
            loc = gr[gr["start"] >= 0]
            for s, e, sev in zip(loc["start"], loc["end"], loc["severity"], strict=True):
                lab[s:e] = np.maximum(lab[s:e], code[sev])
            labels[str(rater)] = lab
        out[(str(item), str(system))] = labels
    return out


def _pair_row(a: str, b: str, units: list[tuple[np.ndarray, np.ndarray]]) -> dict:
    ma = np.array([(x > 0).sum() for x, _ in units], dtype=float)
    mb = np.array([(y > 0).sum() for _, y in units], dtype=float)
    ov = np.array([((x > 0) & (y > 0)).sum() for x, y in units], dtype=float)
    marked = (ma + mb) > 0
    xs = np.concatenate([x[(x > 0) & (y > 0)] for x, y in units] or [np.empty(0, int)])
    ys = np.concatenate([y[(x > 0) & (y > 0)] for x, y in units] or [np.empty(0, int)])
    with np.errstate(invalid="ignore", divide="ignore"):
        per_unit = 2 * ov[marked] / (ma[marked] + mb[marked])
        return {"rater_a": a, "rater_b": b, "n_units": len(units),
                "n_units_unmarked": int((~marked).sum()), "chars_a": int(ma.sum()),
                "chars_b": int(mb.sum()), "overlap": int(ov.sum()),
                "precision": ov.sum() / mb.sum() if mb.sum() else np.nan,
                "recall": ov.sum() / ma.sum() if ma.sum() else np.nan,
                "f1_micro": 2 * ov.sum() / (ma.sum() + mb.sum()) if marked.any() else np.nan,
                "f1_macro": float(per_unit.mean()) if marked.any() else np.nan,
                "n_chars_both": len(xs), "_x": xs, "_y": ys, "_per_unit": per_unit}


def _kappa(x: np.ndarray, y: np.ndarray) -> float:
    if len(x) == 0:
        return np.nan
    cats = np.unique(np.concatenate([x, y])).astype(float)
    return cohen_kappas(x.astype(float), y.astype(float), cats)["unweighted"]


def span_agreement(spans: pd.DataFrame) -> SpanAgreement:
    """Character-overlap F1 and severity agreement of every rater pair (module docstring).

    Parameters
    ----------
    spans : pandas.DataFrame
        Error spans of at least 2 raters (see :func:`check_spans`).

    Returns
    -------
    SpanAgreement
        Per-pair table ``pairs``, pooled and mean F1, severity kappa and alpha, counts.

    Examples
    --------
    >>> import pandas as pd
    >>> s = pd.DataFrame({"rater": ["a", "b", "b"], "item": "1", "system": "S",
    ...                   "start": [0, 2, 8], "end": [4, 6, 10], "category": "",
    ...                   "severity": ["major", "minor", "major"]})
    >>> res = span_agreement(s)
    >>> res.pairs[["precision", "recall", "f1_micro"]].round(3).values.tolist()
    [[0.333, 0.5, 0.4]]
    """
    labels = char_labels(spans)
    by_pair: dict[tuple[str, str], list[tuple[np.ndarray, np.ndarray]]] = {}
    alpha_rows = []
    for (item, system), raters in labels.items():
        if len(raters) < 2:
            continue
        names = sorted(raters)
        for a, b in combinations(names, 2):
            by_pair.setdefault((a, b), []).append((raters[a], raters[b]))
        any_marked = np.flatnonzero(np.any([raters[r] > 0 for r in names], axis=0))
        unit = f"{item}\x1f{system}"
        alpha_rows += [(r, f"{unit}\x1f{c}", raters[r][c]) for r in names for c in any_marked]
    if not by_pair:
        raise InputError("span agreement needs outputs (item, system) judged by at least 2 "
                         "raters; every output has a single rater")
    rows = [_pair_row(a, b, u) for (a, b), u in sorted(by_pair.items())]
    for r in rows:
        r["severity_kappa"] = _kappa(r["_x"], r["_y"])
    ov = sum(r["overlap"] for r in rows)
    tot = sum(r["chars_a"] + r["chars_b"] for r in rows)
    per_unit = np.concatenate([r["_per_unit"] for r in rows])
    pooled_k = _kappa(np.concatenate([r["_x"] for r in rows]),
                      np.concatenate([r["_y"] for r in rows]))
    notes = []
    both = sum(r["n_chars_both"] for r in rows)
    if both and np.isnan(pooled_k):
        notes.append("severity kappa undefined: every character both raters marked has one "
                     "and the same severity (chance agreement is 1)")
    elif not both:
        notes.append("severity kappa undefined: no character was marked by both raters of a "
                     "pair")
    alpha = np.nan
    if alpha_rows:
        frame = pd.DataFrame(alpha_rows, columns=["rater", "item", "score"]).assign(system="")
        try:
            alpha = krippendorff_alpha(frame, "nominal").statistic
        except InputError as exc:
            notes.append(f"severity alpha undefined: {exc}")
    else:
        notes.append("no rater marked any located span: F1 and severity agreement undefined")
    pairs = pd.DataFrame([{k: r[k] for k in PAIR_COLUMNS} for r in rows], columns=PAIR_COLUMNS)
    return SpanAgreement(
        pairs=pairs, f1_micro=float(2 * ov / tot) if tot else np.nan,
        f1_macro=float(per_unit.mean()) if len(per_unit) else np.nan,
        severity_kappa=float(pooled_k), severity_alpha=float(alpha),
        n_units=sum(1 for r in labels.values() if len(r) >= 2), n_pairs=len(rows),
        notes=tuple(notes))
