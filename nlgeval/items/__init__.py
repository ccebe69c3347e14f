"""How many items must each evaluator rate? Discrete ANOVA (WRS2's ``discANOVA``), chi-square
tests of homogeneity, and the fast number-of-items resampling study of González-Corbelle et al.
(2023) with a planning helper for pilot ratings; it runs on any backend of
:mod:`nlgeval.parallel` (serial, local processes, a Dask cluster) with the same numbers."""

from nlgeval.items.chisquare import ChiSquareResult, chi2_homogeneity
from nlgeval.items.discanova import DiscAnovaResult, disc_anova, disc_anova_counts
from nlgeval.items.profiles import (
    ScoreDistribution,
    distribution_from_counts,
    distributions_from_ratings,
    paper_profiles,
    profile_distribution,
)
from nlgeval.items.study import StudyResult, run_study, thresholds_table

__all__ = [
    "ChiSquareResult",
    "DiscAnovaResult",
    "ScoreDistribution",
    "StudyResult",
    "chi2_homogeneity",
    "disc_anova",
    "disc_anova_counts",
    "distribution_from_counts",
    "distributions_from_ratings",
    "paper_profiles",
    "profile_distribution",
    "run_study",
    "thresholds_table",
]
