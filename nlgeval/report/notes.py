"""Notes of a validation study on its correlations: outputs left out per criterion, acc_eq no
better than a tie, and metrics that disagree with the humans significantly (a lower-is-better
metric taken as higher-is-better?)."""

from __future__ import annotations

import warnings
from collections.abc import Mapping

import pandas as pd


def correlation_notes(
    missing: Mapping[str, Mapping[str, int]], corr: pd.DataFrame, criteria: list[str]
) -> list[str]:
    """Notes on outputs left out per criterion, and on acc_eq no better than a tie.

    >>> correlation_notes({"m|q": {"complete": 9, "unrated": 1, "unscored": 0,
    ...                            "nan_metric": 0}}, pd.DataFrame({"note": []}), ["q"])[0][:41]
    'q: 9 outputs with both a metric and a hum'
    """
    notes = []
    for crit in criteria:
        counts = [v for k, v in missing.items() if k.endswith(f"|{crit}")]
        if counts:
            worst = max(counts, key=lambda d: d["unscored"] + d["nan_metric"])
            notes.append(
                f"{crit}: {worst['complete']} outputs with both a metric and a human score; "
                f"{worst['unrated']} scored but unrated and {worst['unscored']} rated but "
                "without a metric score were left out")
    tied = corr[corr["note"].astype(str).str.contains("no better than predicting a tie")]
    if len(tied):
        notes.append(
            "acc_eq no better than a constant metric that ties every pair "
            f"for {len(tied)} metric x criterion x level: "
            + ", ".join(f"{r.metric}/{r.criterion}/{r.level}" for r in tied.head(8).itertuples())
            + (" ..." if len(tied) > 8 else ""))
    return notes


def direction_notes(
    corr: pd.DataFrame, higher_is_better: Mapping[str, bool], alpha: float
) -> list[str]:
    """A warning per metric that correlates significantly *negatively* with the humans (after
    correction, ``pvalue_corrected``): a lower-is-better metric (an error count, a distance) taken
    as higher-is-better, or a metric already negated that should not be. nlgeval never takes
    |r|; it says so instead.

    >>> corr = pd.DataFrame({"metric": ["errs", "errs"], "criterion": ["q", "f"],
    ...                      "level": "system", "statistic": "pearson", "value": [-0.8, -0.1],
    ...                      "pvalue_corrected": [0.001, 0.6]})
    >>> note = direction_notes(corr, {"errs": True}, 0.05)[0]
    >>> note[:46]
    "metric 'errs' correlates significantly negativ"
    >>> note[-43:]
    'lower is better? use --lower-is-better errs'
    """
    if corr.empty or "pvalue_corrected" not in corr.columns:
        return []
    neg = corr[(corr["value"] < 0) & (corr["pvalue_corrected"] < alpha)]
    notes = []
    for metric, sub in neg.groupby("metric", sort=False):
        cells = ", ".join(f"{r.criterion} {r.level} {r.statistic} {r.value:.2f}"
                          for r in sub.head(3).itertuples())
        more = " ..." if len(sub) > 3 else ""
        if higher_is_better.get(str(metric), True):
            msg = (f"metric '{metric}' correlates significantly negatively with the humans "
                   f"({cells}{more}): lower is better? use --lower-is-better {metric}")
        else:
            msg = (f"metric '{metric}' disagrees significantly with the humans although it is "
                   f"negated as lower-is-better ({cells}{more}): is lower really better?")
        warnings.warn(msg, UserWarning, stacklevel=3)
        notes.append(msg)
    return notes
