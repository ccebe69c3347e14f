"""The metric-validation study of Reiter & Belz (2009): :func:`run_validation`.

The study is a chain of stages, each taking and returning data (:mod:`nlgeval.report.prepare`,
:mod:`nlgeval.report.stages`, :mod:`nlgeval.report.differences`, :mod:`nlgeval.report.tables`),
driven by one :class:`~nlgeval.report.settings.ValidationSettings`:

1. prepare scores: score every metric on the rated outputs, join external scores, orient
   lower-is-better metrics, drop reference systems, aggregate the human ratings per output;
2. correlations: for every metric x criterion x level x statistic, its value with p, n, a bootstrap
   interval (Deutsch et al. 2021) and, for Pearson, the Fisher-z interval;
3. metric comparisons: Williams and PERM-BOTH tests with significance clusters, and the WMT
   meta-evaluation statistics with their leaderboards when asked for;
4. human references: correlations between criteria, the leave-one-rater-out bound;
5. significant differences: the 2009 paper's Table 9;
6. tables: scores per system, the per-output frame, the published WebNLG 2020 correlations.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from nlgeval.corpus import Corpus
from nlgeval.deprecation import renamed_keyword
from nlgeval.errors import InputError
from nlgeval.parallel.memory import check_study_memory, estimate_study_memory
from nlgeval.provenance import Timings
from nlgeval.report.corrections import apply_corrections
from nlgeval.report.notes import correlation_notes, direction_notes
from nlgeval.report.prepare import (
    DEFAULT_METRICS,
    PreparedScores,
    ScoreInputs,
    prepare_scores,
    reference_systems,
)
from nlgeval.report.published import is_webnlg2020
from nlgeval.report.settings import ValidationSettings
from nlgeval.report.stages import (
    CORRELATION_COLUMNS,
    human_references,
)
from nlgeval.report.tables import (
    human_system_table,
    metric_system_table,
    missing_summary,
    published_table,
    segments_frame,
)
from nlgeval.report.tasks import start_criteria as _start_correlations
from nlgeval.report.verdict import study_verdict
from nlgeval.results import Result

__all__ = ["CORRELATION_COLUMNS", "DEFAULT_METRICS", "JSON_NAMES", "ScoreInputs",
           "ValidationSettings", "ValidationStudy", "example_study", "json_correlations",
           "reference_systems", "run_study", "run_validation"]

#: The correlations table's columns under the names of the ``nlgeval validate --json``
#: contract (issues 2 and 26), the only place the short names ``r``/``p`` live on.
JSON_NAMES = {"statistic": "coefficient", "value": "r", "pvalue": "p",
              "pvalue_corrected": "p_corrected"}
JSON_COLUMNS = ["metric", "criterion", "level", "statistic", "value", "pvalue", "ci_low",
                "ci_high", "n", "epsilon", "pvalue_corrected", "ci_disagrees"]


def json_correlations(correlations: pd.DataFrame) -> list[dict[str, Any]]:
    """The correlations table as the JSON contract spells it: the records of
    ``metric, criterion, level, coefficient, r, p, ci_low, ci_high, n, epsilon`` (issue 2) plus
    ``p_corrected`` and ``ci_disagrees`` (issue 26), NaN as None. The library's frames and
    CSV files name these columns ``statistic, value, pvalue, pvalue_corrected``
    (:data:`JSON_NAMES`); other tools read the JSON, so its keys do not change.

    >>> corr = pd.DataFrame({"metric": ["bleu"], "statistic": ["pearson"], "value": [0.5],
    ...                      "pvalue": [float("nan")]})
    >>> json_correlations(corr)
    [{'metric': 'bleu', 'coefficient': 'pearson', 'r': 0.5, 'p': None}]
    """
    cols = [c for c in JSON_COLUMNS if c in correlations.columns]
    df = correlations[cols].rename(columns=JSON_NAMES).astype(object)
    return df.where(df.notna(), None).to_dict(orient="records")



@dataclass(frozen=True)
class ValidationStudy(Result):
    """Everything :func:`run_validation` computed; :mod:`nlgeval.report.writer` writes it out.

    The options (``levels``, ``coefficients``, ``statistics``, ``n_resamples``, ``seed``, ...)
    are read from ``config``, the resolved :class:`ValidationSettings`.

    Examples
    --------
    >>> from nlgeval.corpora import load_corpus
    >>> c = load_corpus("e2e")
    >>> c = c.subset(items=c.items[:40])  # 40 inputs, every system: a quick example
    >>> study = run_validation(c, ["bleu"], levels=["system"], coefficients=["pearson"],
    ...                        n_resamples=20, permutations=0, table9=False)
    >>> study.levels, study.seed, sorted(study.to_dict())[:3]
    (['system'], 0, ['correlations', 'higher_is_better', 'leaderboards'])
    """

    corpus: str
    config: ValidationSettings
    metrics: list[str]
    criteria: list[str]
    systems: list[str]
    excluded_systems: list[str]
    correlations: pd.DataFrame
    metric_system_scores: pd.DataFrame
    human_system_scores: pd.DataFrame
    comparisons: pd.DataFrame
    clusters: pd.DataFrame
    human_correlations: pd.DataFrame
    rater_agreement: pd.DataFrame
    segments: pd.DataFrame
    signatures: dict[str, str]
    higher_is_better: dict[str, bool]
    missing: dict[str, Any]
    significant_differences: pd.DataFrame | None = None
    published: pd.DataFrame | None = None
    notes: list[str] = field(default_factory=list)
    timings: dict[str, float] = field(default_factory=dict)
    external: dict[str, dict[str, Any]] = field(default_factory=dict)
    system_only: list[str] = field(default_factory=list)
    leaderboards: dict[str, pd.DataFrame] = field(default_factory=dict)
    verdict: list[dict[str, Any]] = field(default_factory=list)
    exclusions: list[dict[str, Any]] = field(default_factory=list)
    reference_check: str = ""
    human_systems: list[str] = field(default_factory=list)
    bound: dict[str, str] = field(default_factory=dict)

    # the options, as the report and run.json name them
    levels = property(lambda self: list(self.config.levels))
    coefficients = property(lambda self: list(self.config.coefficients))
    statistics = property(lambda self: list(self.config.statistics or ()))
    resamples = property(lambda self: self.config.n_resamples)
    resample = property(lambda self: self.config.resample)
    seed = property(lambda self: self.config.seed)
    normalise = property(lambda self: self.config.normalise)
    confidence_level = property(lambda self: self.config.confidence_level)
    alpha = property(lambda self: self.config.alpha)
    permutations = property(lambda self: self.config.permutations)
    spa_permutations = property(lambda self: self.config.spa_permutations)
    min_coverage = property(lambda self: self.config.min_coverage)
    epsilon = property(lambda self: dict(self.config.epsilon))

    def correlation_records(self) -> list[dict[str, Any]]:
        """The correlations under the JSON contract's names (:func:`json_correlations`)."""
        return json_correlations(self.correlations)

    def settings(self) -> dict[str, Any]:
        """The resolved settings as run.json records them (keys fixed by issues 2, 12, 13)."""
        c = self.config
        return {
            "corpus": self.corpus, "metrics": self.metrics, "criteria": self.criteria,
            "levels": self.levels, "coefficients": self.coefficients,
            "resamples": c.n_resamples, "resample": c.resample, "seed": c.seed,
            "normalise": c.normalise, "confidence_level": c.confidence_level,
            "alpha": c.alpha, "permutations": c.permutations,
            "systems": self.systems, "excluded_systems": self.excluded_systems,
            "exclusions": self.exclusions, "reference_check": self.reference_check,
            "human_systems": self.human_systems, "bound": self.bound, "correction": c.correction,
            "lower_is_better": [m for m in self.metrics
                                if not self.higher_is_better.get(m, True)],
            "external_scores": self.external, "system_level_only": self.system_only,
            "min_coverage": c.min_coverage, "statistics": self.statistics,
            "spa_permutations": c.spa_permutations, "fixed_epsilon": self.epsilon,
            "backend": c.backend, "workers": c.workers, "scheduler": c.scheduler,
            # the metric specs as given (a local model's folder included); tables use labels
            "metric_specs": list(c.metrics) if c.metrics is not None else None,
        }

    def to_dict(self) -> dict[str, Any]:
        """The documented JSON of a study (not derived from the fields: the per-output
        frames would make it huge, and ``settings`` is the resolved run.json form)."""
        return {
            "settings": self.settings(),
            "correlations": self.correlation_records(),
            "verdict": self.verdict,
            "leaderboards": {k: v.to_dict(orient="records")
                             for k, v in self.leaderboards.items()},
            "signatures": self.signatures,
            "higher_is_better": self.higher_is_better,
            "missing": self.missing,
            "notes": self.notes,
            "timings": self.timings,
        }


def run_validation(
    corpus: Corpus,
    metrics: Any = None,
    *,
    settings: ValidationSettings | None = None,
    segment_scores: pd.DataFrame | None = None,
    corpus_scores: pd.DataFrame | None = None,
    higher_is_better: Mapping[str, bool] | None = None,
    signatures: Mapping[str, str] | None = None,
    scores: pd.DataFrame | None = None,
    **options: Any,
) -> ValidationStudy:
    """Run the whole metric-validation study on ``corpus`` (see the module docstring).

    Parameters
    ----------
    corpus : Corpus
        The corpus with human ratings (e.g. from :func:`nlgeval.corpora.load_corpus`).
    metrics : sequence of str, optional
        Metric specs to compute (default: nlgeval's default set; ``[]``: none).
    settings : ValidationSettings, optional
        All options at once; ``metrics`` and ``options`` override its values.
    segment_scores, corpus_scores : pandas.DataFrame, optional
        Metric scores instead of scoring (``metric, system, item, score``; corpus scores
        ``system, metric, score``), with ``signatures`` and ``higher_is_better``.
    higher_is_better, signatures : mapping, optional
        Metric -> direction and metric -> reproducibility signature of given scores.
    scores : pandas.DataFrame, optional
        Metric scores computed elsewhere (COMET, BLEURT, an LLM judge, ...) as read by
        :func:`nlgeval.scores.read_scores`, joined to the metrics nlgeval computes; see
        :class:`ScoreInputs`.
    **options
        Fields of :class:`ValidationSettings` (``criteria``, ``levels``, ``coefficients``,
        ``statistics``, ``n_resamples``, ``seed``, ...).

    Returns
    -------
    ValidationStudy
        The correlations (``metric, criterion, level, statistic, value, pvalue, ci_low,
        ci_high, n``, ...), the metric comparisons, the verdict and the resolved settings
        (``config``); :mod:`nlgeval.report.writer` writes it out.

    Examples
    --------
    >>> from nlgeval.corpora import load_corpus
    >>> c = load_corpus("e2e")
    >>> c = c.subset(items=c.items[:40])  # 40 inputs, every system: a quick example
    >>> study = run_validation(c, ["bleu"], levels=["segment"],
    ...                        coefficients=["spearman"], n_resamples=20, permutations=0,
    ...                        table9=False)
    >>> row = study.correlations.iloc[0]
    >>> row.metric, row.level, row.statistic, bool(-1 <= row.value <= 1)
    ('bleu', 'segment', 'spearman', True)
    """
    if metrics is not None:
        options["metrics"] = metrics
    old = options.pop("resamples", None)  # the deprecated name of n_resamples
    if old is not None:
        options["n_resamples"] = renamed_keyword("run_validation", "resamples", old,
                                                 "n_resamples", 0)
    names = [f.name for f in dataclasses.fields(ValidationSettings)]
    unknown = [k for k in options if k not in names]
    if unknown:
        raise InputError(f"run_validation: unknown setting(s) {', '.join(unknown)} "
                         f"(settings are: {', '.join(names)})")
    config = settings.replace(**options) if settings is not None else \
        ValidationSettings(**options)
    inputs = ScoreInputs(segment_scores=segment_scores, corpus_scores=corpus_scores,
                         higher_is_better=dict(higher_is_better or {}),
                         signatures=dict(signatures or {}), scores=scores)
    return run_study(corpus, config, inputs)


def run_study(
    corpus: Corpus, settings: ValidationSettings, inputs: ScoreInputs | None = None
) -> ValidationStudy:
    """The study's stages in order, each timed (``ValidationStudy.timings``).

    Parameters
    ----------
    corpus : Corpus
        The corpus to validate metrics on.
    settings : ValidationSettings
        Metrics, levels, coefficients, resampling and the other study options.
    inputs : ScoreInputs, optional
        Precomputed or external metric scores; default ``None``: nlgeval scores the corpus.

    Returns
    -------
    ValidationStudy
        Scores, correlations, comparisons, tables, notes and timings.

    Examples
    --------
    >>> from nlgeval.corpora import load_corpus
    >>> s = ValidationSettings(metrics=["bleu"], levels=["system"], coefficients=["pearson"],
    ...                        n_resamples=0, permutations=0, table9=False)
    >>> c = load_corpus("e2e")
    >>> list(run_study(c.subset(items=c.items[:40]), s).timings)
    ['scoring', 'correlations', 'tables', 'human references']
    """
    timings = Timings()
    with timings.step("scoring"):
        prep = prepare_scores(corpus, settings, inputs)
    # the given scores are in prep now: a caller that handed them over (the CLI) gets their
    # memory back for the statistics (0.4 GB at 5 M scored outputs)
    inputs = None
    # backend "auto": worker processes for the criteria when the work pays for them
    settings = settings.for_study(len(prep.criteria), len(prep.systems) * len(prep.rated_items),
                                  len(prep.metrics))
    # refuse, in one line, a study that will not fit in memory (before the statistics)
    check_study_memory(estimate_study_memory(len(prep.systems), len(prep.rated_items),
                                             len(prep.metrics), len(prep.criteria)))
    # the correlations run on the worker processes (process backend) while this process
    # computes the stages that do not need them, on a core the workers leave free;
    # "correlations" is the stage's wall time
    timings["correlations"] = 0.0  # first in run.json, as the stage order reads
    t0 = time.perf_counter()
    pending = _start_correlations(prep, settings)
    overlapped = pending.running
    timings["correlations"] = time.perf_counter() - t0
    try:
        pending.wait_for_a_free_core()  # e.g. 5 criteria on 2 cores: while the fifth runs
        if overlapped and not pending.running:  # a large study's pieces: done before the rest
            timings["correlations"] = time.perf_counter() - t0
            overlapped = False
        metric_sys, human_sys, hum_corr, rater_df, ceilings, sig_df, sig_notes, published = \
            _independent_stages(corpus, prep, settings, timings)
        corr, comps, clus, boards, missing = pending.result()
    finally:
        pending.cancel()
    if overlapped:
        timings["correlations"] = time.perf_counter() - t0
    corr, comps, clus = apply_corrections(corr, comps, clus, settings.correction, settings.alpha)
    notes = [*prep.notes, *correlation_notes(missing, corr, prep.criteria),
             *direction_notes(corr, prep.higher_is_better, settings.alpha), *sig_notes]
    per_output = [m for m in prep.metrics if m not in prep.system_only]
    return ValidationStudy(
        corpus=corpus.name, config=settings, metrics=prep.metrics, criteria=prep.criteria,
        systems=prep.systems, excluded_systems=prep.excluded, correlations=corr,
        metric_system_scores=metric_sys, human_system_scores=human_sys, comparisons=comps,
        clusters=clus, human_correlations=hum_corr, rater_agreement=rater_df,
        segments=segments_frame(prep.segments[~prep.segments["metric"].isin(prep.system_only)],
                                prep.human, prep.systems, per_output, prep.criteria),
        signatures=prep.signatures, higher_is_better=prep.higher_is_better,
        missing=missing_summary(missing),
        significant_differences=sig_df, published=published, notes=notes,
        timings=dict(timings), external=prep.external, system_only=prep.system_only,
        leaderboards=boards, verdict=study_verdict(boards, clus, corr, prep.criteria, list(
            settings.levels), rater_df, settings.alpha, ceilings), exclusions=prep.exclusions,
        reference_check=prep.reference_check, human_systems=prep.human_systems, bound=prep.bound,
    )


def _independent_stages(corpus: Corpus, prep: PreparedScores, settings: ValidationSettings,
                        timings: Timings) -> tuple[Any, ...]:
    """The stages that do not need the correlations: the system tables, the human references
    and Table 9, each timed (Table 9's notes returned apart, to follow the correlation notes),
    and the published WebNLG 2020 correlations next to ours (untimed, as before)."""
    with timings.step("tables"):
        metric_sys = metric_system_table(prep.segments, prep.corpus_scores, prep.metrics,
                                         corpus.systems, prep.human)
        human_sys = human_system_table(prep.human, prep.criteria, prep.excluded,
                                       prep.human_systems)
    with timings.step("human references"):
        hum_corr, rater_df, ceilings = human_references(corpus.ratings, prep, settings)
    sig_df, sig_notes = None, list[str]()
    if settings.table9:
        with timings.step("significant differences"):
            # imported here, while the workers run: its nlgeval.human is not needed before
            from nlgeval.report.differences import significant_differences

            seg, human = prep.segments, prep.human
            sig_df = significant_differences(
                seg[seg["system"].isin(prep.systems) & ~seg["metric"].isin(prep.system_only)],
                human[human["system"].isin(prep.systems)], prep.criteria,
                prep.higher_is_better, settings.alpha, sig_notes, prep.bound)
    published = None
    if is_webnlg2020(corpus.name):
        published = published_table(corpus, prep.segments, prep.systems, prep.metrics,
                                    prep.criteria, settings.normalise, prep.human)
    return metric_sys, human_sys, hum_corr, rater_df, ceilings, sig_df, sig_notes, published


def example_study() -> ValidationStudy:
    """A small study to try the report functions on: BLEU against the human ratings of the
    E2E corpus (Dušek et al. 2020) on its first 40 inputs, system level, Pearson only, no
    resampling and no Table 9, so that it runs in about a second.

    Examples
    --------
    >>> study = example_study()
    >>> study.corpus, study.metrics, list(study.config.levels)
    ('e2e', ['bleu'], ['system'])
    """
    # imported here: the corpus registry is needed only by this example helper
    from nlgeval.corpora import load_corpus

    settings = ValidationSettings(metrics=("bleu",), levels=("system",), coefficients=("pearson",),
                                  n_resamples=0, permutations=0, table9=False)
    corpus = load_corpus("e2e")
    return run_study(corpus.subset(items=corpus.items[:40]), settings)
