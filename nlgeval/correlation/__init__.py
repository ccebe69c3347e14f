"""The correlation layer: how well automatic metrics agree with human judgements.

Coefficients (Pearson, Spearman, Kendall tau-b/tau-c) with p-values and Fisher-z intervals; the
three levels (system, segment, item-wise); bootstrap intervals resampling systems, items or both
(Deutsch et al. 2021); Williams' test and PERM-BOTH permutation tests between metrics, with
significance clusters; and human-human reference correlations.
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
from nlgeval.correlation.compare import (
    PermutationResult,
    WilliamsResult,
    comparison_matrix,
    permutation_test,
    pvalue_matrix,
    significance_clusters,
    williams_from_scores,
    williams_test,
)
from nlgeval.correlation.human import (
    RaterAgreement,
    criterion_correlations,
    rater_agreement_bound,
)
from nlgeval.correlation.levels import (
    LEVELS,
    LevelCorrelation,
    ScoreMatrices,
    item_permutation_pvalue,
    level_correlation,
    level_statistic,
    score_matrices,
    system_means,
)

__all__ = [
    "COEFFICIENTS", "LEVELS", "RESAMPLE_SCHEMES", "BootstrapResult", "CorrelationResult",
    "DegenerateInputWarning", "LevelCorrelation", "PermutationResult", "RaterAgreement",
    "ScoreMatrices", "WilliamsResult", "batch_correlation", "bootstrap_correlation",
    "bootstrap_distribution", "comparison_matrix", "correlation", "criterion_correlations",
    "fisher_z_interval", "item_permutation_pvalue", "level_correlation", "level_statistic",
    "percentile_interval",
    "permutation_test", "pvalue_matrix", "rater_agreement_bound", "resample_indices",
    "score_matrices", "significance_clusters", "system_means", "williams_from_scores",
    "williams_test",
]
