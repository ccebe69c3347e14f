"""Meta-analysis of metric validation studies: is a metric valid beyond one data set?

Every validation study (``nlgeval validate``) gives, per metric and human criterion, a
correlation and its ``n``. This package pools them across studies with a random-effects model
of Fisher-z transformed correlations (Fisher 1921; DerSimonian & Laird 1986; Viechtbauer
2005; Paule & Mandel 1982; Hartung & Knapp 2001), reports the pooled correlation with its
confidence and prediction interval (Riley et al. 2011) and the heterogeneity (Q, I^2, tau;
Higgins & Thompson 2002), tests moderators (task, language) and compares two metrics across
studies. See docs/meta-analysis.md.
"""

from nlgeval.meta_analysis.effects import (
    correlation_effects,
    fisher_z,
    fisher_z_variance,
    inverse_fisher_z,
    variance_from_interval,
)
from nlgeval.meta_analysis.estimators import TAU2_METHODS, estimate_tau2
from nlgeval.meta_analysis.moderators import (
    MetaRegression,
    SubgroupAnalysis,
    meta_regression,
    subgroup_analysis,
)
from nlgeval.meta_analysis.pooling import PREDICTION_TYPES, RandomEffects, random_effects

__all__ = [
    "PREDICTION_TYPES", "TAU2_METHODS", "MetaRegression", "RandomEffects", "SubgroupAnalysis",
    "correlation_effects", "estimate_tau2", "fisher_z", "fisher_z_variance", "inverse_fisher_z",
    "meta_regression", "random_effects", "subgroup_analysis", "variance_from_interval",
]
