"""The correlation layer: how well automatic metrics agree with human judgements.

Coefficients (Pearson, Spearman, Kendall tau-b/tau-c) with p-values and Fisher-z intervals; the
levels (system, segment, item-grouped, system-grouped); bootstrap intervals resampling systems,
items or both (Deutsch et al. 2021); Williams' test and PERM-BOTH permutation tests between
metrics, with significance clusters; human-human reference correlations; and the statistics
WMT ranks metrics with: pairwise accuracy (Kocmi et al. 2021), soft pairwise accuracy
(Thompson et al. 2024), Kendall variants and tie-calibrated acc_eq (Deutsch, Foster & Freitag
2023), rank clusters and the WMT23/WMT24 overall leaderboard.
"""

from nlgeval.correlation.bootstrap import (
    RESAMPLE_SCHEMES,
    BootstrapResult,
    bootstrap_correlation,
    bootstrap_distribution,
    percentile_interval,
    resample_indices,
)
from nlgeval.correlation.coefficients import (
    COEFFICIENTS,
    CorrelationResult,
    DegenerateInputWarning,
    batch_correlation,
    correlation,
    fisher_z_interval,
)
from nlgeval.correlation.human import (
    RaterAgreement,
    criterion_correlations,
    rater_agreement_bound,
)
from nlgeval.correlation.kendall import (
    GROUPINGS,
    GroupedResult,
    KendallResult,
    PairCounts,
    TieCalibrationResult,
    acc_eq,
    acc_eq_permutation_test,
    batch_grouped_kendall,
    grouped_kendall,
    kendall_permutation_test,
    kendall_resample_distribution,
    kendall_variant,
    pair_counts,
    tie_calibration,
)
from nlgeval.correlation.kendall import VARIANTS as KENDALL_VARIANTS
from nlgeval.correlation.levels import (
    LEVELS,
    ScoreMatrices,
    item_permutation_pvalue,
    level_correlation,
    level_statistic,
    score_matrices,
    system_means,
)
from nlgeval.correlation.pairwise import (
    PairwiseAccuracyResult,
    SoftPairwiseAccuracyResult,
    pairwise_accuracy,
    pairwise_accuracy_from_scores,
    pairwise_accuracy_test,
    sign_flip_masks,
    soft_pairwise_accuracy,
    soft_pairwise_accuracy_test,
)
from nlgeval.correlation.permutation import (
    PermutationComparison,
    comparison_from_draws,
    comparison_matrix,
    iter_swap_masks,
    permutation_test,
)
from nlgeval.correlation.ranking import (
    STATISTIC_RANGES,
    TaskResult,
    assign_ranks,
    overall_pvalues,
    overall_score,
    task_ranking,
)
from nlgeval.correlation.significance import pvalue_matrix, significance_clusters
from nlgeval.correlation.williams import WilliamsResult, williams_from_scores, williams_test

__all__ = [
    "GROUPINGS", "KENDALL_VARIANTS", "GroupedResult", "KendallResult", "PairCounts",
    "TieCalibrationResult", "acc_eq", "acc_eq_permutation_test",
    "batch_grouped_kendall", "grouped_kendall", "kendall_permutation_test",
    "kendall_resample_distribution", "kendall_variant", "pair_counts", "tie_calibration",
    "STATISTIC_RANGES", "PairwiseAccuracyResult", "PermutationComparison",
    "SoftPairwiseAccuracyResult", "TaskResult", "assign_ranks", "comparison_from_draws",
    "iter_swap_masks", "overall_pvalues", "overall_score", "pairwise_accuracy",
    "pairwise_accuracy_from_scores", "pairwise_accuracy_test", "sign_flip_masks",
    "soft_pairwise_accuracy", "soft_pairwise_accuracy_test", "task_ranking",
    "COEFFICIENTS", "LEVELS", "RESAMPLE_SCHEMES", "BootstrapResult", "CorrelationResult",
    "DegenerateInputWarning", "RaterAgreement",
    "ScoreMatrices", "WilliamsResult", "batch_correlation", "bootstrap_correlation",
    "bootstrap_distribution", "comparison_matrix", "correlation", "criterion_correlations",
    "fisher_z_interval", "item_permutation_pvalue", "level_correlation", "level_statistic",
    "percentile_interval",
    "permutation_test", "pvalue_matrix", "rater_agreement_bound", "resample_indices",
    "score_matrices", "significance_clusters", "system_means", "williams_from_scores",
    "williams_test",
]
