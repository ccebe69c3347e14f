"""Kendall's tau variants, tie calibration and their tests: one concept, one package.

The pair counts C, D, T_h, T_m, T_hm of Deutsch, Foster & Freitag (2023, Table 1) give tau-b
(Kendall 1945), tau-c (Stuart 1953), tau_23 and acc_23 of two vectors or of (systems x items)
matrices under a grouping; acc_eq calibrates a tie threshold (Deutsch, Foster & Freitag 2023,
Section 5); PERM-BOTH (Deutsch, Dror & Roth 2021) and MTME's pairs test compare two metrics.

=========================  ================================================================
module                     what it holds
=========================  ================================================================
``variants``               the variants of vectors and grouped matrices, batches, resamples
``results``                names, input checks, groupings and the result classes
``permutation``            PERM-BOTH between two metrics for any variant and grouping
``tie_calibration``        acc_eq, tie calibration and the pairs permutation test
``tie_search``             the search for the tie threshold (its docstring: the algorithm)
``kernels``                numba pair-count kernels, shared with ``correlation.coefficients``
``weighted``               the same counts with multiplicities (segment-level bootstrap)
``_tie_kernels``           numba loops of the tie search and the pairs test
=========================  ================================================================

Examples
--------
>>> from nlgeval.correlation.kendall import grouped_kendall, tie_calibration
>>> import numpy as np
>>> X = np.array([[1.0, 2.0], [2.0, 1.0], [3.0, 3.0]])
>>> Y = np.array([[1.0, 1.0], [2.0, 2.0], [3.0, 3.0]])
>>> round(grouped_kendall(X, Y, "tau_b", "segment").statistic, 3)
0.6
"""

from nlgeval.correlation.kendall.permutation import kendall_permutation_test, zscore_cells
from nlgeval.correlation.kendall.results import (
    DIRECT_MAX,
    GROUPINGS,
    VARIANTS,
    GroupedResult,
    Groups,
    KendallResult,
    PairCounts,
    build_groups,
    check_epsilon,
    check_grouping,
    check_variant,
    snap_groups,
)
from nlgeval.correlation.kendall.tie_calibration import (
    TieCalibrationResult,
    acc_eq,
    acc_eq_permutation_test,
    tie_calibration,
)
from nlgeval.correlation.kendall.tie_search import calibrate_groups, group_weights
from nlgeval.correlation.kendall.variants import (
    batch_grouped_kendall,
    grouped_kendall,
    kendall_resample_distribution,
    kendall_variant,
    pair_counts,
)

__all__ = [
    "DIRECT_MAX", "GROUPINGS", "VARIANTS", "GroupedResult", "Groups", "KendallResult",
    "PairCounts", "TieCalibrationResult", "acc_eq", "acc_eq_permutation_test",
    "batch_grouped_kendall", "build_groups", "calibrate_groups", "check_epsilon",
    "check_grouping", "check_variant", "group_weights", "grouped_kendall",
    "kendall_permutation_test", "kendall_resample_distribution", "kendall_variant",
    "pair_counts", "snap_groups", "tie_calibration", "zscore_cells",
]
