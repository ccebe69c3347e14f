"""WMT-style significance clusters and the p-value matrix of pairwise metric comparisons.

The cluster rule is that of the WMT metrics shared tasks (MTME ``data.AssignRanks``, used since
Freitag et al. 2021, "Results of the WMT21 Metrics Shared Task"); the p-values come from
Williams' test (Williams 1959) or the paired permutation test (Deutsch, Dror & Roth 2021).
The p-values are those of :func:`nlgeval.correlation.permutation.comparison_matrix`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd


def significance_clusters(
    pairwise: pd.DataFrame, correlations: Mapping[str, float], alpha: float = 0.05
) -> pd.DataFrame:
    """Group metrics that cannot be told apart (WMT-style significance clusters).

    A thin wrapper over :func:`nlgeval.correlation.ranking.assign_ranks`, the WMT rule (MTME
    ``data.AssignRanks``): metrics sorted by correlation, best first (ties by name); walking
    down the list, a metric opens the next cluster when some metric of the current cluster is
    significantly better than it (one-sided ``p <= alpha`` in ``pairwise``), otherwise it
    joins it. Cluster 1 holds the best metric and everything not significantly worse than any
    member. Metrics with a NaN correlation get cluster NaN. Returns ``metric, r, cluster``.
    (Before the rule moved to :mod:`~nlgeval.correlation.ranking`, this function used
    ``p < alpha`` and kept the input order among equal correlations.)

    Parameters
    ----------
    pairwise : pandas.DataFrame
        Long frame with columns ``metric_a, metric_b, pvalue`` (one-sided, a better than b).
    correlations : Mapping[str, float]
        Each metric's correlation with the human scores.
    alpha : float
        Significance level (default 0.05).

    Returns
    -------
    pandas.DataFrame
        ``metric, r, cluster``.

    Examples
    --------
    >>> import pandas as pd
    >>> pw = pd.DataFrame({"metric_a": ["a", "b"], "metric_b": ["b", "a"], "pvalue": [0.01, 0.99]})
    >>> significance_clusters(pw, {"a": 0.8, "b": 0.5})["cluster"].tolist()
    [1.0, 2.0]
    """
    from nlgeval.correlation.ranking import assign_ranks

    ranks = assign_ranks(correlations, pairwise, alpha)
    cluster = ranks["rank"].astype("Float64").to_numpy(dtype=float, na_value=np.nan)
    return pd.DataFrame({"metric": ranks["metric"], "r": ranks["statistic"],
                         "cluster": cluster})


def pvalue_matrix(pairwise: pd.DataFrame, order: Sequence[str] | None = None) -> pd.DataFrame:
    """Wide metric x metric matrix of the one-sided p-values (row better than column).

    Parameters
    ----------
    pairwise : pandas.DataFrame
        Long frame with columns ``metric_a, metric_b, pvalue``.
    order : Sequence[str], optional
        Order of rows and columns (default: the metrics sorted by name).

    Returns
    -------
    pandas.DataFrame
        Metric x metric p-values, row better than column.

    Examples
    --------
    >>> import pandas as pd
    >>> pw = pd.DataFrame({"metric_a": ["a", "b"], "metric_b": ["b", "a"], "pvalue": [0.01, 0.99]})
    >>> float(pvalue_matrix(pw).loc["a", "b"])
    0.01
    """
    wide = pairwise.pivot(index="metric_a", columns="metric_b", values="pvalue")
    order = list(order) if order is not None else sorted(set(pairwise["metric_a"]))
    return wide.reindex(index=order, columns=order)
