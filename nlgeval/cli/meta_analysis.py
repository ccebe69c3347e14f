"""``nlgeval meta-analyse``: pool the correlations of several validation studies."""

from __future__ import annotations

import dataclasses
import sys
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

# The command's options, in the order ``nlgeval meta-analyse --help`` lists them: each one's
# flag, type and help text (its default is in the signature of :func:`meta_analyse`).
StudyDirsArg = Annotated[list[Path] | None, typer.Argument(
    help="Report folders of `nlgeval validate` (run.json, correlations.csv, "
         "segments.csv) to pool.", show_default=False)]
CorporaOpt = Annotated[str | None, typer.Option(
    "--corpora", help="Comma-separated corpora to run the validation study on now "
                      "(e.g. webnlg2020,e2e,novikova2017).")]
EffectsOpt = Annotated[Path | None, typer.Option(
    "--effects", help="Your own table of correlations (CSV/TSV/JSONL/Parquet) with "
                      "columns study, r, n (optional metric, construct and moderator "
                      "columns).")]
MetricsOpt = Annotated[str | None, typer.Option(
    "--metrics", help="Comma-separated metrics (default: bleu,chrf for --corpora; every "
                      "metric of the study folders).")]
CriterionMapOpt = Annotated[Path | None, typer.Option(
    "--criterion-map", help="JSON or CSV (corpus, construct, criterion[, task, "
                            "language]) replacing the shipped criterion map for the "
                            "corpora it names.")]
LevelOpt = Annotated[str, typer.Option(
    "--level", help="Which correlations to pool: segment, system or item; one level for "
                    "every study: --corpora are run at it (never at a corpus's own default "
                    "levels, e.g. realsumm's system,item), and a study folder without it is "
                    "an error. Not used with --effects.")]
Tau2Opt = Annotated[str, typer.Option(
    "--tau2", help="Between-study variance estimator: dl (DerSimonian & Laird 1986), "
                   "reml (Viechtbauer 2005) or pm (Paule & Mandel 1982).")]
HartungKnappOpt = Annotated[bool, typer.Option(
    "--hartung-knapp", help="t-based interval of Hartung & Knapp (2001) / Sidik & "
                            "Jonkman (2002) for the pooled r.")]
PredictionOpt = Annotated[str, typer.Option(
    "--prediction", help="Prediction interval: riley (t with k-2 df, Riley et al. 2011) "
                         "or metafor (normal, as metafor's predict).")]
VarianceOpt = Annotated[str, typer.Option(
    "--variance", help="Sampling variance of each correlation: fisher (1/(n-3)) or "
                       "bootstrap (from each study's bootstrap interval; always used at "
                       "item level).")]
ModeratorOpt = Annotated[str | None, typer.Option(
    "--moderator", help="Study-level moderator to test: task or language (or a column "
                        "of --effects).")]
DependenceOpt = Annotated[str, typer.Option(
    "--dependence", help="one: one criterion per study and construct (the map's "
                         "criteria); rve: also the map's related criteria, pooled with "
                         "robust variance estimation (Hedges, Tipton & Johnson 2010).")]
RhoOpt = Annotated[float, typer.Option(
    "--rho", help="Assumed correlation of effects within a study for --dependence rve.")]
SmallSampleOpt = Annotated[bool, typer.Option(
    "--small-sample/--no-small-sample", help="With --dependence rve: Tipton's (2015) "
    "small-sample corrections (CR2 and Satterthwaite degrees of freedom, as robumeta's "
    "small = TRUE); recommended with few studies.")]
SplitOpt = Annotated[bool, typer.Option(
    "--split/--no-split", help="Run a corpus with several independent data sets (the "
                               "criterion map's split_by, e.g. the three sets of Novikova "
                               "et al. 2017) as one study per data set.")]
CompareOpt = Annotated[bool, typer.Option(
    "--compare/--no-compare", help="Compare every pair of metrics across studies "
                                   "(Steiger 1980 covariance).")]
ResamplesOpt = Annotated[int | None, typer.Option(
    "--resamples", help="Bootstrap resamples for studies run on the fly (default: 0, or "
                        "200 when the variance comes from the bootstrap).")]
ConfidenceOpt = Annotated[float, typer.Option(
    "--confidence", help="Level of the confidence and prediction intervals.")]
OutOpt = Annotated[Path | None, typer.Option(
    "--out", help="Write the report (HTML, Markdown, LaTeX tables, forest plots, "
                  "run.json) to this folder.")]


def meta_analyse(
    study_dirs: StudyDirsArg = None,
    corpora: CorporaOpt = None,
    effects: EffectsOpt = None,
    metrics: MetricsOpt = None,
    criterion_map: CriterionMapOpt = None,
    level: LevelOpt = "segment",
    tau2: Tau2Opt = "reml",
    hartung_knapp: HartungKnappOpt = False,
    prediction: PredictionOpt = "riley",
    variance: VarianceOpt = "fisher",
    moderator: ModeratorOpt = None,
    dependence: DependenceOpt = "one",
    rho: RhoOpt = 0.8,
    small_sample: SmallSampleOpt = False,
    split: SplitOpt = True,
    compare: CompareOpt = True,
    resamples: ResamplesOpt = None,
    confidence: ConfidenceOpt = 0.95,
    data_dir: DataDirOpt = None,
    out: OutOpt = None,
    seed: SeedOpt = 0,
    as_json: JsonOpt = False,
    quiet: QuietOpt = False,
) -> None:
    """Random-effects meta-analysis of metric-human correlations across validation studies.

    Pools, per metric and construct (fluency, adequacy, overall), the Fisher-z transformed
    Pearson correlations of several studies; prints the pooled r with its confidence and
    prediction interval, tau^2, I^2 and Q, and a one-line verdict.
    \f
    Examples
    --------
    >>> from nlgeval.cli import main
    >>> main(["meta-analyse", "--effects", "no_such_file.csv"])
    Traceback (most recent call last):
    ...
    SystemExit: 2
    """
    opts = MetaAnalyseOptions(**locals())  # every parameter above, as given
    setup(quiet)
    from nlgeval.meta_analysis.report import DEPENDENCE_NOTE, write_meta_report

    result, inputs = opts.run()
    if out is not None:
        write_meta_report(result, out, extra_record={"inputs": inputs,
                                                     "argv": sys.argv[1:]})
    if as_json:
        emit_json(_json(result, inputs, out, DEPENDENCE_NOTE))
        return
    if not quiet:
        _print_summary(result, out)


@dataclasses.dataclass(frozen=True)
class MetaAnalyseOptions:
    """The parameters of :func:`meta_analyse` (``nlgeval meta-analyse``) as given, one field
    each, in the order of its signature; :meth:`run` runs the meta-analysis they ask for.

    Examples
    --------
    >>> import inspect
    >>> fields = [f.name for f in dataclasses.fields(MetaAnalyseOptions)]
    >>> fields == list(inspect.signature(meta_analyse).parameters)
    True
    """

    study_dirs: list[Path] | None
    corpora: str | None
    effects: Path | None
    metrics: str | None
    criterion_map: Path | None
    level: str
    tau2: str
    hartung_knapp: bool
    prediction: str
    variance: str
    moderator: str | None
    dependence: str
    rho: float
    small_sample: bool
    split: bool
    compare: bool
    resamples: int | None
    confidence: float
    data_dir: Path | None
    out: Path | None
    seed: int
    as_json: bool
    quiet: bool

    def run(self) -> tuple[Any, dict[str, Any]]:
        """:func:`nlgeval.meta_analysis.run.run_meta_analysis` on these options: the result
        and its inputs; its warnings are printed once each on stderr (unless --quiet or
        --json)."""
        from nlgeval.meta_analysis.analysis import MetaSettings
        from nlgeval.meta_analysis.run import run_meta_analysis

        settings = MetaSettings(
            tau2=self.tau2, hartung_knapp=self.hartung_knapp, confidence_level=self.confidence,
            prediction=self.prediction, moderator=self.moderator, compare=self.compare,
            dependence=self.dependence, rho=self.rho, small_sample=self.small_sample)
        with warnings_on_stderr(show=not self.quiet and not self.as_json):
            return run_meta_analysis(
                corpora=split_list(self.corpora) or [], study_dirs=self.study_dirs or [],
                effects=self.effects, metrics=split_list(self.metrics),
                criterion_map=self.criterion_map, level=self.level, variance=self.variance,
                n_resamples=self.resamples, seed=self.seed, data_dir=self.data_dir,
                settings=settings, split=self.split)


def _json(result: Any, inputs: dict[str, Any], out: Path | None, dependence: str
          ) -> dict[str, Any]:
    records = result.records()
    nested: dict[str, dict[str, Any]] = {}
    for rec in records:
        nested.setdefault(rec["metric"], {})[rec["construct"]] = rec
    return {"settings": result.settings.to_dict(), "inputs": inputs, "results": records,
            "by_metric": nested, "moderators": result.moderators,
            "comparisons": result.comparisons, "notes": result.notes,
            "dependence": dependence, "out": str(out) if out is not None else None}


def _print_summary(result: Any, out: Path | None) -> None:
    cols = ["metric", "construct", "k", "r_pooled", "ci_low", "ci_high", "pi_low", "pi_high",
            "tau2", "i2", "q"]
    if result.settings.dependence == "rve":
        cols.insert(3, "n_effects")
    if result.pooled.empty:
        typer.echo("nothing to pool")
    else:
        typer.echo(result.pooled[cols].to_string(index=False,
                                                 float_format=lambda v: f"{v:.3f}"))
    for row in result.pooled.itertuples():
        typer.echo(f"verdict: {row.verdict}")
    for row in result.moderators.itertuples():
        typer.echo(f"moderator {row.moderator} = {row.level}: {row.metric} ({row.construct}) "
                   f"r = {row.r:.3f} [{row.ci_low:.3f}, {row.ci_high:.3f}], k = {row.k}; "
                   f"Q_M = {row.qm:.2f}, p = {row.qm_pvalue:.3g}")
    if not result.comparisons.empty:
        for row in result.comparisons.itertuples():
            typer.echo(f"compare: {row.metric_a} - {row.metric_b} ({row.construct}): pooled "
                       f"difference in Fisher z = {row.dz:.3f} [{row.ci_low:.3f}, "
                       f"{row.ci_high:.3f}], p = {row.pvalue:.3g}, k = {row.k}")
    for note in result.notes:
        typer.echo(f"note: {note}", err=True)
    if out is not None:
        typer.echo(f"\nreport written to {out}/report.html")


def register(app: typer.Typer) -> None:
    """Add ``meta-analyse`` to the top-level app.

    Examples
    --------
    >>> app = typer.Typer()
    >>> register(app)
    >>> [c.name for c in app.registered_commands]
    ['meta-analyse']
    """
    app.command("meta-analyse")(meta_analyse)
