"""The metric-validation study (``nlgeval validate``) and its report directory.

:func:`run_validation` computes the study on a :class:`~nlgeval.corpus.Corpus` with the options
of a :class:`ValidationSettings` (:func:`run_study` runs its stages);
:func:`write_report` writes tables (CSV/Markdown/LaTeX), figures (PNG/PDF), ``report.html`` and
``run.json``.
"""

from nlgeval.report.page import render_html
from nlgeval.report.paper_tables import study_tables
from nlgeval.report.settings import ValidationSettings
from nlgeval.report.study import (
    DEFAULT_METRICS,
    ScoreInputs,
    ValidationStudy,
    reference_systems,
    run_study,
    run_validation,
)
from nlgeval.report.writer import study_figures, write_report

__all__ = [
    "DEFAULT_METRICS", "ScoreInputs", "ValidationSettings", "ValidationStudy",
    "reference_systems", "render_html", "run_study", "run_validation", "study_figures",
    "study_tables", "write_report",
]
