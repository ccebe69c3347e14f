"""Correlations published by others, recorded with provenance, to compare a run against.

WebNLG+ 2020 (English): the organisers' correlation notebook
``evaluation/correlation/en/english.ipynb`` in https://github.com/WebNLG/challenge-2020 (commit
``a63ca982b34d39020ae03477766a2a9068b7269f``), last cell: ``scipy.stats.pearsonr`` between
per-output metric scores and per-output human scores, printed rounded to 2 decimals, for the 2,847
rated outputs of the 16 systems (``WebNLG-2020-reference`` excluded). The human scores are those
of ``evaluation/human-evaluation/eval-scripts/en/english_data.json``, i.e. each rater's scores
z-normalised per criterion, then averaged per output (``normalise="z"`` in nlgeval). The
metrics come from https://github.com/WebNLG/GenerationEval ``eval.py``, run on one output at a
time with 5 reference slots (missing references written as the literal text ``EMPTY``):

* ``bleu_nltk``: NLTK ``corpus_bleu`` on one sentence with ``SmoothingFunction().method3``,
  after ``nltk.word_tokenize`` (Punkt sentence split + Treebank word tokenizer).
* ``chrf++``: the original chrF++ script (Popovic 2017; character 6-grams, word 2-grams,
  beta 2), best reference.
* ``ter``: pyter on whitespace-split tokenized text, minimum over references.
"""

from __future__ import annotations

import pandas as pd

WEBNLG2020_SOURCE = (
    "WebNLG/challenge-2020@a63ca982b34d39020ae03477766a2a9068b7269f "
    "evaluation/correlation/en/english.ipynb (segment-level Pearson, z-normalised human scores, "
    "16 systems without WebNLG-2020-reference, values rounded to 2 decimals)"
)

#: metric -> criterion -> Pearson r, as printed by the organisers' notebook.
WEBNLG2020_SEGMENT_PEARSON: dict[str, dict[str, float]] = {
    "bleu_nltk": {"Correctness": 0.36, "DataCoverage": 0.28, "Fluency": 0.40,
                  "Relevance": 0.30, "TextStructure": 0.37},
    "chrf++": {"Correctness": 0.43, "DataCoverage": 0.40, "Fluency": 0.41,
               "Relevance": 0.36, "TextStructure": 0.39},
    "ter": {"Correctness": -0.39, "DataCoverage": -0.31, "Fluency": -0.44,
            "Relevance": -0.34, "TextStructure": -0.40},
}

#: Which nlgeval metric corresponds to which published column (for the comparison table).
WEBNLG2020_METRIC_MAP: dict[str, str] = {"bleu": "bleu_nltk", "chrf++": "chrf++", "ter": "ter"}


def is_webnlg2020(corpus_name: str) -> bool:
    """Whether ``corpus_name`` names the WebNLG+ 2020 corpus (any spelling).

    Examples
    --------
    >>> is_webnlg2020("WebNLG+ 2020"), is_webnlg2020("e2e")
    (True, False)
    """
    return corpus_name.lower().replace("+", "").replace(" ", "") in ("webnlg2020", "webnlg")


def published_comparison(corpus_name: str, ours: pd.DataFrame) -> pd.DataFrame | None:
    """Side-by-side table of our segment-level Pearson r and the published one (or None).

    ``ours``: ``metric, criterion, r`` -- segment-level Pearson r of the *raw* (not negated)
    metric scores with per-rater z-normalised human scores, over the same outputs as the
    organisers (reference system excluded).

    Examples
    --------
    >>> ours = pd.DataFrame({"metric": ["chrf++"], "criterion": ["Fluency"], "r": [0.45]})
    >>> published_comparison("webnlg2020", ours)[["r_published", "difference"]].round(2).values
    array([[0.41, 0.04]])
    """
    if not is_webnlg2020(corpus_name):
        return None
    rows = []
    for metric, theirs in WEBNLG2020_METRIC_MAP.items():
        sub = ours[ours["metric"] == metric]
        for crit, pub in WEBNLG2020_SEGMENT_PEARSON[theirs].items():
            hit = sub[sub["criterion"] == crit]
            if hit.empty:
                continue
            r = float(hit["r"].iloc[0])
            rows.append({"metric": metric, "published_metric": theirs, "criterion": crit,
                         "r_nlgeval": r, "r_published": pub, "difference": r - pub})
    if not rows:
        return None
    return pd.DataFrame(rows)
