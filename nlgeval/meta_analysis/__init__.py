"""Meta-analysis of metric validation studies: is a metric valid beyond one data set?

Every validation study (``nlgeval validate``) gives, per metric and human criterion, a
correlation and its ``n``. This package pools them across studies with a random-effects model
of Fisher-z transformed correlations (Fisher 1921; DerSimonian & Laird 1986; Viechtbauer
2005; Paule & Mandel 1982; Hartung & Knapp 2001), reports the pooled correlation with its
confidence and prediction interval (Riley et al. 2011) and the heterogeneity (Q, I^2, tau;
Higgins & Thompson 2002), tests moderators (task, language) and compares two metrics across
studies (Steiger 1980); several dependent effects per study are pooled by robust variance
estimation (Hedges, Tipton & Johnson 2010). :func:`run_meta_analysis` is what
``nlgeval meta-analyse`` calls. See docs/meta-analysis.md.
"""

from nlgeval.meta_analysis.analysis import MetaAnalysis, MetaSettings, meta_analyse, verdict_line
from nlgeval.meta_analysis.compare import (
    MetricComparison,
    compare_metrics,
    dependent_difference_variance,
)
from nlgeval.meta_analysis.criteria import CriterionMap, load_criterion_map
from nlgeval.meta_analysis.effects import (
    correlation_effects,
    fisher_z,
    fisher_z_variance,
    inverse_fisher_z,
    variance_from_interval,
)
from nlgeval.meta_analysis.estimators import TAU2_METHODS, estimate_tau2
from nlgeval.meta_analysis.forest import forest_data, forest_plot
from nlgeval.meta_analysis.moderators import (
    MetaRegression,
    SubgroupAnalysis,
    meta_regression,
    subgroup_analysis,
)
from nlgeval.meta_analysis.pooling import PREDICTION_TYPES, RandomEffects, random_effects
from nlgeval.meta_analysis.report import write_meta_report
from nlgeval.meta_analysis.robust import RobustVariance, robust_variance
from nlgeval.meta_analysis.run import read_effects, run_meta_analysis
from nlgeval.meta_analysis.studies import Study, read_study, run_corpus_study, study_effects

__all__ = [
    "PREDICTION_TYPES", "TAU2_METHODS", "CriterionMap", "MetaAnalysis", "MetaRegression",
    "MetaSettings", "MetricComparison", "RandomEffects", "RobustVariance", "Study",
    "SubgroupAnalysis",
    "compare_metrics", "correlation_effects", "dependent_difference_variance", "estimate_tau2",
    "fisher_z", "fisher_z_variance", "forest_data", "forest_plot", "inverse_fisher_z",
    "load_criterion_map", "meta_analyse", "meta_regression", "random_effects", "read_effects",
    "read_study", "robust_variance", "run_corpus_study", "run_meta_analysis", "study_effects",
    "subgroup_analysis",
    "variance_from_interval", "verdict_line", "write_meta_report",
]
