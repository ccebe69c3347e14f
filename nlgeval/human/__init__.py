"""Human ratings: Latin-square designs, comparing generators, agreement and rater effects.

Modules (one job each):

``design``            Latin-square experimental designs (LG-Eval, Kow & Belz 2012), with k
                      raters per output; building blocks in ``design_layout``.
``ratings``           read and validate a ratings CSV (``rater, item, system, criterion, score``).
``frames``            the common input check of one criterion's ratings frame.
``compare``           pairwise Wilcoxon signed-rank tests (item or LSED pairing); the test and
                      its effect size in ``wilcoxon``, the Friedman test in ``friedman_test``.
``glm``               the 2009 paper's GLM: OLS ANOVA + Tukey HSD on the model's MSE,
                      homogeneous subsets, letter display.
``ordinal``           cumulative-logit model: system contrasts, proportional-odds check.
``mixed``             linear mixed model, crossed random rater and item effects (MixedLM).
``pairwise``          pairwise (relative) judgements: sign tests, Bradley-Terry, rank clusters
                      (outcomes read in ``judgements``, fitting machinery in ``bt_fit``).
``bws_design``        best-worst scaling tuples (balanced incomplete block designs,
                      Kiritchenko & Mohammad 2016); ``bws`` scores them (counting, implied
                      pairwise wins, the maxdiff logit of Marley & Louviere 2005).
``spans``             error spans (MQM, Freitag et al. 2021; ESA, Kocmi et al. 2024): the span
                      frame, MQM and ESA scores; ``span_agreement`` compares raters' spans.
``power``             power of a planned comparison by simulation (``nlgeval plan power``).
``qc``                quality control of raters (control items, the experiment's checks).
``analysis``          ``compare_systems``: one call for ``nlgeval compare``.
``guards``            refusals and warnings for degenerate input (constant ratings, huge designs).
``agreement``         the agreement report, per-rater z-scores and summaries; kernels in
                      ``kappa_alpha`` (Cohen's / Fleiss' kappa, Krippendorff's alpha) and
                      ``intraclass`` (ICC).
``metric_agreement``  how many human-significant differences a metric finds (2009, Table 9).
``report``            paper tables for the above.
"""

from __future__ import annotations

from nlgeval.human.agreement import (
    AgreementReport,
    FleissResult,
    ICCResult,
    agreement_report,
    fleiss_kappa,
    icc,
    krippendorff_alpha,
    pairwise_cohen_kappa,
    rater_zscores,
)
from nlgeval.human.analysis import SystemComparison, compare_systems
from nlgeval.human.bws import (
    MaxDiffResult,
    bws_counts,
    bws_maxdiff,
    bws_pairs,
    bws_ratings,
    read_bws,
)
from nlgeval.human.bws_design import BWSDesign, bws_design, bws_output_tuples
from nlgeval.human.compare import (
    FriedmanResult,
    SignedRankResult,
    correct_pvalues,
    friedman,
    pairwise_wilcoxon,
    signed_rank,
)
from nlgeval.human.design import LatinSquareDesign, latin_square_design
from nlgeval.human.glm import GLMTukeyResult, glm_tukey, homogeneous_subsets
from nlgeval.human.kappa_alpha import KrippendorffResult
from nlgeval.human.metric_agreement import (
    significant_difference_agreement,
    significant_difference_pairs,
)
from nlgeval.human.mixed import MixedModelResult, mixed_model
from nlgeval.human.ordinal import OrdinalModelResult, ProportionalOddsTest, ordinal_model
from nlgeval.human.pairwise import (
    BradleyTerryResult,
    bradley_terry,
    pairwise_outcomes,
    sign_tests,
)
from nlgeval.human.power import (
    PowerResult,
    VarianceComponents,
    simulate_power,
    variance_components,
)
from nlgeval.human.qc import RaterQC, apply_qc, rater_quality
from nlgeval.human.ratings import read_ratings, validate_ratings
from nlgeval.human.span_agreement import SpanAgreement, span_agreement
from nlgeval.human.spans import check_spans, esa_ratings, mqm_span_ratings, read_spans

__all__ = [
    "AgreementReport", "BWSDesign", "BradleyTerryResult", "FleissResult", "FriedmanResult",
    "GLMTukeyResult", "MaxDiffResult", "bws_counts", "bws_design", "bws_maxdiff",
    "bws_output_tuples", "bws_pairs", "bws_ratings", "read_bws", "KrippendorffResult",
    "ICCResult", "LatinSquareDesign", "MixedModelResult", "OrdinalModelResult", "PowerResult",
    "ProportionalOddsTest", "RaterQC", "SignedRankResult", "SpanAgreement", "SystemComparison",
    "check_spans", "esa_ratings", "mqm_span_ratings", "read_spans", "span_agreement",
    "VarianceComponents", "agreement_report", "apply_qc", "bradley_terry", "compare_systems",
    "correct_pvalues", "fleiss_kappa", "friedman", "glm_tukey", "homogeneous_subsets", "icc",
    "krippendorff_alpha", "latin_square_design", "mixed_model", "ordinal_model",
    "pairwise_cohen_kappa", "pairwise_outcomes", "pairwise_wilcoxon", "rater_quality",
    "rater_zscores", "read_ratings", "sign_tests", "signed_rank",
    "significant_difference_agreement", "significant_difference_pairs", "simulate_power",
    "validate_ratings", "variance_components",
]
