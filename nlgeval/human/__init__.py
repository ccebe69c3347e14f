"""Human ratings: Latin-square designs, comparing generators, agreement and rater effects.

Modules (one job each):

``design``            Latin-square experimental designs (LG-Eval, Kow & Belz 2012).
``ratings``           read and validate a ratings CSV (``rater, item, system, criterion, score``).
``compare``           pairwise Wilcoxon signed-rank tests (item or LSED pairing), Friedman test.
``glm``               the 2009 paper's GLM: OLS ANOVA + Tukey HSD on the model's MSE,
                      homogeneous subsets, letter display; an optional ordinal model.
``mixed``             linear mixed model, crossed random rater and item effects (MixedLM).
``pairwise``          pairwise (relative) judgements: sign tests, Bradley-Terry, rank clusters.
``power``             power of a planned comparison by simulation (``nlgeval plan power``).
``guards``            refusals and warnings for degenerate input (constant ratings, huge designs).
``agreement``         Cohen's / Fleiss' kappa, Krippendorff's alpha, ICC, per-rater z-scores.
``metric_agreement``  how many human-significant differences a metric finds (2009, Table 9).
``report``            paper tables for the above.
"""

from __future__ import annotations
