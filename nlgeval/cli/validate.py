"""``nlgeval validate CORPUS``: the metric-validation study, written as a report directory."""

from __future__ import annotations

import dataclasses
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import typer

from nlgeval.cli._common import (
    DataDirOpt,
    JsonOpt,
    QuietOpt,
    SeedOpt,
    emit_json,
    setup,
    split_list,
    warnings_on_stderr,
)
from nlgeval.errors import InputError

# The command's options, in the order ``nlgeval validate --help`` lists them: each one's flag,
# type and help text (its default is in the signature of :func:`validate`).
CorpusArg = Annotated[str | None, typer.Argument(
    help="Corpus name (see `nlgeval corpora list`), a corpus directory, or "
         "mtme:PATH for a test set in the WMT metrics-task (MTME) layout. Leave it out "
         "with --human for a study of human and metric scores only.")]
ScoresOpt = Annotated[list[Path] | None, typer.Option(
    "--scores", help="Metric scores computed elsewhere (COMET, BLEURT, an LLM judge...): "
                     "CSV/TSV/JSONL/Parquet, gz allowed; wide (system, item, <metric>...) "
                     "or long (system, item, metric, score); empty item = system-level "
                     "score. Repeat for several files.")]
HumanOpt = Annotated[Path | None, typer.Option(
    "--human", help="Human ratings (system, item, criterion, score; rater optional) for a "
                    "study without texts: use with --scores instead of a corpus.")]
LowerIsBetterOpt = Annotated[str | None, typer.Option(
    "--lower-is-better", help="Comma-separated metrics where lower is better (e.g. an "
                              "error count); negated before any correlation (default: none; "
                              "nlgeval's own metrics such as TER know their "
                              "direction).")]
MinCoverageOpt = Annotated[float, typer.Option(
    "--min-coverage", help="Least share of the rated outputs an external metric must "
                           "score.")]
LpOpt = Annotated[str | None, typer.Option(
    "--lp", help="Language pair of an mtme:PATH test set, e.g. en-de.")]
MetricsOpt = Annotated[str | None, typer.Option(
    "--metrics", help="Comma-separated metric specs, e.g. bleu,chrf++,ter, or none to "
                      "compute none (default: bleu,chrf,chrf++,ter,rouge1,rouge2,rougeL,"
                      "nist; none with --human).")]
CriteriaOpt = Annotated[str | None, typer.Option(
    "--criteria", help="Comma-separated human criteria (default: all rated).")]
LevelsOpt = Annotated[str | None, typer.Option(
    "--levels", help="Comma-separated levels: system (system means), segment (all "
                     "outputs pooled), item (within each item across systems, then "
                     "averaged), system-grouped (within each system across items, then "
                     "averaged). Default: segment,system, or the levels a published "
                     "corpus's paper reports (realsumm: system,item).")]
StatisticsOpt = Annotated[str | None, typer.Option(
    "--statistics", "--coefficients",
    help="Comma-separated statistics: pearson, spearman, kendall (tau-b), kendall_c "
         "(tau-c), tau_a, tau_23, acc23, acc_eq (tie-calibrated, Deutsch et al. 2023), "
         "pairwise_accuracy (Kocmi et al. 2021), soft_pairwise_accuracy (Thompson et al. "
         "2024), or the presets wmt24 (soft_pairwise_accuracy + acc_eq, adds the system and "
         "item levels) and wmt23, or any statistic a package registers through the "
         "nlgeval.statistics entry-point group. Each is reported under the name given. "
         "--coefficients is an alias.")]
SpaPermutationsOpt = Annotated[int, typer.Option(
    "--spa-permutations", help="Sign-flip permutations behind each soft pairwise "
                               "accuracy.")]
EpsilonOpt = Annotated[str | None, typer.Option(
    "--epsilon", help="Fixed acc_eq tie thresholds, e.g. comet=0.02,bleu=0.5 (found on a "
                      "development set); default: calibrated on these data (optimistic).")]
ResamplesOpt = Annotated[int, typer.Option(
    "--resamples", help="Bootstrap resamples for the confidence intervals (0: none).")]
ResampleOpt = Annotated[str, typer.Option(
    "--resample", help="What the bootstrap resamples: items, systems or both.")]
PermutationsOpt = Annotated[int, typer.Option(
    "--permutations", help="Permutations for the PERM-BOTH metric comparisons (0: skip).")]
NormaliseOpt = Annotated[str, typer.Option(
    "--normalise", help="Human scores: none (raw mean over raters) or z (per-rater "
                        "z-scores first, as WMT DA and the WebNLG organisers).")]
ConfidenceOpt = Annotated[float, typer.Option(
    "--confidence", help="Confidence level of the intervals.")]
AlphaOpt = Annotated[float, typer.Option(
    "--alpha", help="Significance level for tests and clusters.")]
KeepReferenceSystemsOpt = Annotated[bool, typer.Option(
    "--keep-reference-systems", help="Do not exclude systems whose outputs are the "
                                     "references.")]
ExcludeSystemsOpt = Annotated[str | None, typer.Option(
    "--exclude-systems", help="Comma-separated systems to leave out of the metric-human "
                              "correlations (kept in the human table). A study of scores "
                              "only cannot find reference outputs itself: name them "
                              "here.")]
HumanSystemsOpt = Annotated[str | None, typer.Option(
    "--human-systems", help="Comma-separated human-written 'systems': rated as a human "
                            "ceiling, left out of the metric correlations (also: a "
                            "'human' column of yes/no in the ratings or score file).")]
BindOpt = Annotated[str | None, typer.Option(
    "--bind", help="Correlate a per-criterion metric with its own criterion only, e.g. "
                   "llm_rel=Relevance,llm_coh=Coherence (also: a 'criterion' column in a "
                   "long score file).")]
CorrectionOpt = Annotated[str, typer.Option(
    "--correction", help="Multiple-comparison correction of the p-values behind the "
                         "stars and the verdict, across the metrics x criteria x levels "
                         "tested: holm (Holm 1979), bh (Benjamini & Hochberg 1995), by "
                         "(Benjamini & Yekutieli 2001), bonferroni or none.")]
BackendOpt = Annotated[str, typer.Option(
    "--backend", help="Where the correlations, bootstrap and permutation tests run, one "
                      "task per criterion: serial, process (local processes, see "
                      "--workers), dask (see --scheduler) or auto (process when there "
                      "are two cores and criteria and enough resamples, else serial). "
                      "Never changes a number.")]
WorkersOpt = Annotated[int | None, typer.Option(
    "--workers", help="Processes for --backend process (default: all cores) or the size "
                      "of a Dask LocalCluster.")]
SchedulerOpt = Annotated[str | None, typer.Option(
    "--scheduler", help="Dask scheduler: local:N (a LocalCluster of N worker processes) or "
                        "an address such as tcp://host:8786. Implies --backend dask.")]
OutOpt = Annotated[Path | None, typer.Option(
    "--out", help="Report directory (default: reports/<corpus>).")]
NoCacheOpt = Annotated[bool, typer.Option("--no-cache", help="Do not use the score cache.")]
FiguresOpt = Annotated[str, typer.Option(
    "--figures", help="Figure formats: png (shown in report.html), png,pdf or png,svg for "
                      "a paper, or none (no figures, fastest).")]


def validate(
    corpus: CorpusArg = None,
    scores: ScoresOpt = None,
    human: HumanOpt = None,
    lower_is_better: LowerIsBetterOpt = None,
    min_coverage: MinCoverageOpt = 0.5,
    lp: LpOpt = None,
    data_dir: DataDirOpt = None,
    metrics: MetricsOpt = None,
    criteria: CriteriaOpt = None,
    levels: LevelsOpt = None,
    statistics: StatisticsOpt = "pearson,spearman,kendall",
    spa_permutations: SpaPermutationsOpt = 1000,
    epsilon: EpsilonOpt = None,
    resamples: ResamplesOpt = 1000,
    resample: ResampleOpt = "both",
    permutations: PermutationsOpt = 1000,
    normalise: NormaliseOpt = "none",
    confidence: ConfidenceOpt = 0.95,
    alpha: AlphaOpt = 0.05,
    keep_reference_systems: KeepReferenceSystemsOpt = False,
    exclude_systems: ExcludeSystemsOpt = None,
    human_systems: HumanSystemsOpt = None,
    bind: BindOpt = None,
    correction: CorrectionOpt = "holm",
    seed: SeedOpt = 0,
    backend: BackendOpt = "auto",
    workers: WorkersOpt = None,
    scheduler: SchedulerOpt = None,
    out: OutOpt = None,
    no_cache: NoCacheOpt = False,
    figures: FiguresOpt = "png",
    as_json: JsonOpt = False,
    quiet: QuietOpt = False,
) -> None:
    """Correlate every metric with every human criterion and write the validation report.

    Tables (CSV, Markdown, LaTeX), figures (PNG; PDF with --figures png,pdf), report.html and
    run.json go to --out.

    Level names in papers: "system level" / "overall" = system; "segment level", "story
    level", "pooled" (all outputs in one correlation) = segment; "summary level", "document
    level", "input level" (per source document or input, across systems, then averaged) =
    item. A paper's "summary level" is usually item, not segment.
    \f
    Examples
    --------
    Options are checked before any data is read (``nlgeval validate`` prints the error on
    one line and exits with status 2):

    >>> from nlgeval.cli import main
    >>> main(["validate", "e2e", "--alpha", "2"])
    Traceback (most recent call last):
    ...
    SystemExit: 2
    """
    opts = ValidateOptions(**locals())  # every parameter above, as given
    _keep_freed_memory()
    setup(quiet)
    from nlgeval.report.writer import figure_drawer, figure_formats

    fig_formats = figure_formats(figures)  # checked before any data is read
    settings = opts.settings()
    # the figure process imports matplotlib while the corpus is loaded and scored
    drawer = figure_drawer(fig_formats)
    try:
        study, corpus_name = _load_and_run(opts, settings)
        out_dir = out if out is not None else Path("reports") / corpus_name
        _write_and_show(study, corpus_name, out_dir, fig_formats, as_json, quiet, drawer)
    finally:
        if drawer is not None:
            drawer.close()


@dataclasses.dataclass(frozen=True)
class ValidateOptions:
    """The parameters of :func:`validate` (``nlgeval validate``) as given, one field each, in
    the order of its signature; :meth:`settings` turns them into the study's settings.

    Examples
    --------
    >>> import inspect
    >>> fields = [f.name for f in dataclasses.fields(ValidateOptions)]
    >>> fields == list(inspect.signature(validate).parameters)
    True
    """

    corpus: str | None
    scores: list[Path] | None
    human: Path | None
    lower_is_better: str | None
    min_coverage: float
    lp: str | None
    data_dir: Path | None
    metrics: str | None
    criteria: str | None
    levels: str | None
    statistics: str | None
    spa_permutations: int
    epsilon: str | None
    resamples: int
    resample: str
    permutations: int
    normalise: str
    confidence: float
    alpha: float
    keep_reference_systems: bool
    exclude_systems: str | None
    human_systems: str | None
    bind: str | None
    correction: str
    seed: int
    backend: str
    workers: int | None
    scheduler: str | None
    out: Path | None
    no_cache: bool
    figures: str
    as_json: bool
    quiet: bool

    def settings(self) -> Any:
        """The ValidationSettings these options ask for (the --human-systems that a ratings
        file flags are added once it is read); its errors name the options."""
        return _settings(
            criteria=split_list(self.criteria),
            levels=_levels(self.levels, self.corpus),
            statistics=split_list(self.statistics) or ["pearson"],
            spa_permutations=self.spa_permutations, epsilon=_parse_epsilon(self.epsilon) or {},
            n_resamples=self.resamples, resample=self.resample, normalise=self.normalise,
            seed=self.seed, confidence_level=self.confidence, alpha=self.alpha,
            permutations=self.permutations,
            exclude_systems=split_list(self.exclude_systems) or None,
            keep_reference_systems=self.keep_reference_systems,
            bind=_parse_pairs(self.bind, "--bind"),
            correction=self.correction.strip().lower(), cache=not self.no_cache,
            lower_is_better=split_list(self.lower_is_better) or [],
            min_coverage=self.min_coverage, backend=self.backend, workers=self.workers,
            scheduler=self.scheduler,
        )


def _load_and_run(opts: ValidateOptions, settings: Any) -> tuple[Any, str]:
    """Read the corpus (or ratings) and the scores, then run the study: the study (its
    timings led by the load) and the corpus's name."""
    t0 = time.perf_counter()
    corp, ext = _load_inputs(opts.corpus, opts.human, opts.scores or [], opts.lp,
                             opts.data_dir, _memory_check(settings, opts.human_systems))
    settings = _with_human_systems(settings, opts.human_systems, opts.human)
    t_load = time.perf_counter() - t0
    metrics = _metric_list(opts.metrics, opts.human, corp, ext)
    handed, ext = [ext], None  # run_study lets go of them once prepared (0.4 GB at 5 M)
    study = _run_study(corp, metrics, settings, handed, opts.quiet)
    return dataclasses.replace(study, timings={"load corpus": t_load, **study.timings}), \
        corp.name


#: glibc's mallopt parameters (malloc.h): M_TRIM_THRESHOLD, M_TOP_PAD, M_MMAP_MAX
_M_TRIM_THRESHOLD, _M_TOP_PAD, _M_MMAP_MAX = -1, -2, -4


def _keep_freed_memory() -> None:
    """With ``NLGEVAL_MALLOC=keep``, in the ``nlgeval`` console script on glibc: keep freed
    memory for the next allocation.

    glibc gives every block above its mmap threshold (at most 32 MB) its own mapping and
    unmaps it when freed, so each large temporary array of a big study (a 20 x 250,000 matrix
    is 40 MB) page-faults anew, in the kernel. Allocating every block from the heap
    (M_MMAP_MAX 0) and trimming the heap's top only past 1 GB makes freed blocks reusable
    without faults, but the heap then keeps what it once held: the 5 M-output study took
    8 min 50 s instead of 9 min 37 s (system time 18 s instead of 82 s) and peaked at
    5.3 GiB instead of 4.1 GiB (docs/scale.md). So it is opt-in. Never done when nlgeval is
    used as a library or from tests, nor under another C library."""
    if Path(sys.argv[0]).name != "nlgeval" or not hasattr(os, "confstr") \
            or os.environ.get("NLGEVAL_MALLOC", "").strip().lower() != "keep":
        return
    try:
        if not str(os.confstr("CS_GNU_LIBC_VERSION") or "").startswith("glibc"):
            return
        import ctypes

        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, ValueError, AttributeError):
        return
    mallopt(_M_MMAP_MAX, 0)
    mallopt(_M_TRIM_THRESHOLD, 1 << 30)
    mallopt(_M_TOP_PAD, 64 << 20)


def _with_human_systems(settings: Any, human_systems: str | None, human: Path | None) -> Any:
    """--human-systems plus the systems the ratings file flags in a 'human' column."""
    flagged = _human_flagged(human)
    if split_list(human_systems) or flagged:
        return settings.replace(human_systems=[*(split_list(human_systems) or []), *flagged])
    return settings


def _run_study(corp: Any, metrics: list[str] | None, settings: Any, handed: list[Any],
               quiet: bool) -> Any:
    """:func:`nlgeval.report.run_validation` of the scores in ``handed`` (taken out of the
    list, so that nothing here holds them while the study runs); its warnings are printed
    once each on stderr (unless ``quiet``)."""
    from nlgeval.report import ScoreInputs, run_study

    if metrics is not None:
        settings = settings.replace(metrics=metrics)
    with warnings_on_stderr(show=not quiet):
        return run_study(corp, settings, ScoreInputs(scores=handed.pop()))


def _write_and_show(study: Any, corpus_name: str, out_dir: Path, fig_formats: Any,
                    as_json: bool, quiet: bool, drawer: Any = None) -> None:
    """Write the report directory (the figures drawn by ``drawer`` when one was started),
    then print the JSON object or the summary."""
    from nlgeval.report import write_report

    write_report(study, out_dir, extra_record={"argv": sys.argv[1:]}, figures=fig_formats,
                 drawer=drawer)
    if as_json:
        full = study.to_dict()
        emit_json({"corpus": corpus_name, "out": str(out_dir),
                   **{k: full[k] for k in ("settings", "correlations", "verdict",
                                           "leaderboards", "signatures", "notes")}})
    elif not quiet:
        _print_summary(study, out_dir)


#: ValidationSettings field -> the option that sets it, for error messages
_OPTION_NAMES = {"confidence_level": "--confidence", "alpha": "--alpha",
                 "permutations": "--permutations", "spa_permutations": "--spa-permutations",
                 "n_resamples": "--resamples", "min_coverage": "--min-coverage",
                 "normalise": "--normalise", "seed": "--seed", "backend": "--backend",
                 "workers": "--workers", "correction": "--correction",
                 "criteria": "--criteria", "statistics:": "--statistics:"}


def _levels(option: str | None, corpus: str | None) -> list[str]:
    """The levels --levels names; without it the levels a published corpus's paper reports
    (its descriptor's ``levels``; REALSumm: system, item), else segment and system. A
    --levels that names none (``","``) is an error, not the default."""
    from nlgeval.corpora.extras import default_levels

    if option is not None:
        named = split_list(option)
        if not named:
            raise InputError(f"--levels names no level ({option!r}); leave it out for the "
                             "default levels")
        return named
    return default_levels(corpus) or ["segment", "system"]


def _settings(**options: Any) -> Any:
    """A ValidationSettings; its errors name the command-line options."""
    from nlgeval.report import ValidationSettings

    try:
        return ValidationSettings(**options)
    except InputError as exc:
        msg = str(exc)
        field, _, rest = msg.partition(" ")
        if field in _OPTION_NAMES:
            raise InputError(f"{_OPTION_NAMES[field]} {rest}") from None
        raise


def _metric_list(metrics: str | None, human: Path | None, corp: Any, ext: Any) -> list[str] | None:
    """--metrics as a list: ``none`` computes none; left out, the default set (None), or none
    for a study without texts (--human, or a corpus without references with --scores)."""
    from nlgeval.metrics import parse_metric_list

    if metrics is not None and metrics.strip().lower() == "none":
        return []
    if metrics:
        return parse_metric_list(metrics)
    if human is not None or (corp.references.empty and ext is not None):
        return []
    from nlgeval.corpora.extras import default_metrics

    return default_metrics(corp.name)  # a corpus's own default set (REALSumm: ROUGE), or None


def _human_flagged(human: Path | None) -> list[str]:
    """Systems the ratings file flags in a 'human' column."""
    if human is None:
        return []
    from nlgeval.scores import human_flagged

    return human_flagged(human)


def _parse_pairs(text: str | None, option: str) -> dict[str, str]:
    """``"a=X,b=Y"`` -> ``{"a": "X", "b": "Y"}``."""
    out = {}
    for part in split_list(text) or []:
        name, sep, value = part.rpartition("=")
        if not sep or not name.strip() or not value.strip():
            raise InputError(f"{option} expects METRIC=CRITERION[,METRIC=CRITERION], "
                             f"got {part!r}")
        out[name.strip()] = value.strip()
    return out


def _parse_epsilon(text: str | None) -> dict[str, float] | None:
    """``"comet=0.02,bleu=0.5"`` -> ``{"comet": 0.02, "bleu": 0.5}``."""
    if not text:
        return None
    out = {}
    for part in split_list(text) or []:
        name, sep, value = part.rpartition("=")
        try:
            out[name.strip()] = float(value)
        except ValueError:
            sep = ""
        if not sep or not name.strip():
            raise InputError(f"--epsilon expects METRIC=NUMBER[,METRIC=NUMBER], got {part!r}")
    return out


def _memory_check(settings: Any, human_systems: str | None) -> Callable[[Any, list[Path]], None]:
    """The study's memory check as soon as the ratings are read (before the scores are read
    and prepared: ~45 s at 5 M scored outputs): systems (less those the options leave out) x
    items x the metrics the score files' headers name (at least one a file) x criteria: the
    counts of the check before the statistics (``run_study``), except that a long or
    compressed score file counts as one metric and systems a 'human' column flags count."""
    from nlgeval.parallel.memory import check_study_memory, estimate_study_memory
    from nlgeval.scores import metric_count

    left_out = {*(settings.exclude_systems or ()), *(split_list(human_systems) or ())}

    def check(corp: Any, scores: list[Path]) -> None:
        systems = [s for s in corp.systems if s not in left_out]
        criteria = corp.criteria
        if settings.criteria is not None:  # a name --criteria does not match fails later
            criteria = [c for c in criteria if c in set(settings.criteria)] or criteria[:1]
        check_study_memory(estimate_study_memory(len(systems), len(corp.items), sum(
            metric_count(p) for p in scores), len(criteria)))

    return check


def _load_inputs(
    corpus: str | None, human: Path | None, scores: list[Path], lp: str | None,
    data_dir: Path | None, memory_check: Callable[[Any, list[Path]], None] | None = None,
) -> tuple[Any, Any]:
    """The corpus (named, a directory, mtme:PATH, or built from --human) and external scores;
    with --human, ``memory_check(corpus, scores)`` runs before the scores are read."""
    from nlgeval.corpora import load_corpus
    from nlgeval.scores import combine_scores, ratings_corpus, read_scores

    if lp and not (corpus or "").lower().startswith("mtme:"):
        raise InputError(f"--lp {lp}: --lp applies only to an mtme:PATH test set (a corpus "
                         "such as wmt21-ted-zhen is one language pair already): leave it out")
    if human is not None:
        if corpus is not None:
            raise InputError("give either a corpus or --human RATINGS, not both")
        if not scores:
            raise InputError("--human needs metric scores to validate: add --scores FILE")
        corp = ratings_corpus(human)
        if memory_check is not None:
            memory_check(corp, scores)
        return corp, combine_scores([read_scores(p) for p in scores])
    frames = [read_scores(p) for p in scores]
    if corpus is None:
        raise InputError("name a corpus (see `nlgeval corpora list`), or give --human RATINGS "
                         "with --scores FILE")
    elif corpus.lower().startswith("mtme:"):
        from nlgeval.corpora.mtme import parse_mtme_spec, read_mtme

        if not lp:
            raise InputError("an mtme: test set needs --lp (e.g. --lp en-de)")
        mtme_path = parse_mtme_spec(corpus)
        assert mtme_path is not None  # the name starts with "mtme:"
        data = read_mtme(mtme_path, lp)
        corp = data.corpus
        frames.insert(0, data.external_scores())
    else:
        from nlgeval.corpora.extras import published_scores

        corp = load_corpus(corpus, data_dir)
        frames[:0] = published_scores(corpus, data_dir)  # e.g. REALSumm's authors' scores
    return corp, (combine_scores(frames) if frames else None)


def _print_summary(study: object, out_dir: Path) -> None:
    from nlgeval.report.study import ValidationStudy

    assert isinstance(study, ValidationStudy)
    corr = study.correlations
    for level in study.levels:
        sub = corr[corr["level"] == level]
        if sub.empty:
            continue
        stat = sub["statistic"].iloc[0]  # the first statistic computed at this level
        sub = sub[sub["statistic"] == stat]
        wide = sub.pivot(index="metric", columns="criterion", values="value").reindex(
            index=[m for m in study.metrics if m in set(sub["metric"])],
            columns=study.criteria)
        typer.echo(f"\n{level} level, {stat} ({study.corpus}):")
        typer.echo(wide.to_string(float_format=lambda v: f"{v:.3f}"))
    for note in study.notes:
        typer.echo(f"note: {note}", err=True)
    from nlgeval.report.meta import verdict_line

    for v in study.verdict:
        typer.echo(f"verdict: {verdict_line(v)}")
    typer.echo(f"\nreport written to {out_dir}/report.html")


def register(app: typer.Typer) -> None:
    """Add ``validate`` to the top-level app.

    Examples
    --------
    >>> app = typer.Typer()
    >>> register(app)
    >>> [c.name for c in app.registered_commands]
    ['validate']
    """
    app.command("validate")(validate)
