"""Meta-evaluation statistics behind one protocol, in a registry open to plugins.

:class:`Statistic` is what a statistic declares (name, levels, direction, minimum n, point and
batched values); :func:`bootstrap_statistic` and :func:`perm_both_test` are the one bootstrap
(Deutsch, Dror & Roth 2021) and the one PERM-BOTH test (ibid.) for every statistic;
:func:`get_statistic` / :func:`available_statistics` find statistics by name: the built-ins of
this package (one module each: the correlation coefficients, the Kendall variants tau_23 and
acc_23, Kendall's tau-a, acc_eq, pairwise and soft pairwise accuracy) and those other packages
register through the ``nlgeval.statistics`` entry-point group. ``nlgeval validate
--statistics`` takes any of them.
"""

from nlgeval.correlation.statistics.base import (
    Statistic,
    StatisticOptions,
    StatisticValue,
    bootstrap_statistic,
    perm_both_test,
)
from nlgeval.correlation.statistics.registry import (
    ENTRY_POINT_GROUP,
    available_statistics,
    get_statistic,
    register_statistic,
)

__all__ = [
    "ENTRY_POINT_GROUP", "Statistic", "StatisticOptions", "StatisticValue",
    "available_statistics", "bootstrap_statistic", "get_statistic", "perm_both_test",
    "register_statistic",
]
