"""The NLG triangle test (Gonzalez-Corbelle, Alonso & Bugarin, INLG 2020; ISO 4120).

Judges see three texts, two from one source and one from another, and pick the odd one. This
package plans (number of judges, critical values, power), designs (balanced questionnaire) and
analyses (exact binomial tests, pd, Thurstonian d') such tests.

Modules: ``critical`` (critical values, pc/pd), ``dprime`` (Thurstonian d'), ``planning``
(power, sample size, inverse), ``design`` (questionnaire), ``analysis`` (its words in
``wording``, its text report in ``text``), ``tables`` (González-Corbelle et al.'s Tables 1-3)
and ``plot`` (the saw-tooth).
"""

from __future__ import annotations

from nlgeval.triangle.analysis import TriangleResult, analyse, analyse_responses
from nlgeval.triangle.critical import (
    P_GUESS,
    max_correct,
    min_correct,
    pc_from_pd,
    pd_from_pc,
    pvalue_difference,
    pvalue_similarity,
)
from nlgeval.triangle.design import ORDERS, triangle_design
from nlgeval.triangle.dprime import dprime_from_pc, pc_from_dprime
from nlgeval.triangle.planning import (
    CriticalValue,
    SampleSize,
    critical_value,
    power,
    power_curve,
    sample_size,
    supported_designs,
)

__all__ = [
    "ORDERS",
    "P_GUESS",
    "CriticalValue",
    "SampleSize",
    "TriangleResult",
    "analyse",
    "analyse_responses",
    "critical_value",
    "dprime_from_pc",
    "max_correct",
    "min_correct",
    "pc_from_dprime",
    "pc_from_pd",
    "pd_from_pc",
    "power",
    "power_curve",
    "pvalue_difference",
    "pvalue_similarity",
    "sample_size",
    "supported_designs",
    "triangle_design",
]
