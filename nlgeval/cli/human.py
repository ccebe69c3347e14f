"""CLI for human ratings: ``design latin-square``, ``compare``, ``agreement`` (and ``plan power``,
in :mod:`nlgeval.cli.human_plan`)."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterator
from contextlib import contextmanager
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from nlgeval.cli._common import (
    JsonOpt,
    QuietOpt,
    emit_json,
    setup,
    split_list,
    warnings_on_stderr,
)
from nlgeval.cli._ratings_source import load_ratings as _load
from nlgeval.cli.human_bws import bws_app, design_bws
from nlgeval.cli.human_spans import spans_app
from nlgeval.errors import InputError

if TYPE_CHECKING:  # pragma: no cover
    from nlgeval.human.analysis import SystemComparison

design_app = typer.Typer(help="Plan human evaluations (Latin-square designs, best-worst "
                         "scaling tuples).", no_args_is_help=True)
design_app.command("bws")(design_bws)


class Method(StrEnum):
    """``compare --method``: the analysis to run (see :func:`nlgeval.human.compare_systems`).

    Examples
    --------
    >>> Method("glm-tukey") is Method.glm_tukey
    True
    """

    wilcoxon = "wilcoxon"
    glm_tukey = "glm-tukey"
    friedman = "friedman"
    ordinal = "ordinal"
    mixed = "mixed"
    sign = "sign"
    bradley_terry = "bradley-terry"


class ResampleOpt(StrEnum):
    """``--resample``: the bootstrap unit of the Bradley-Terry intervals.

    Examples
    --------
    >>> [m.value for m in ResampleOpt]
    ['judgements', 'items', 'raters']
    """

    judgements = "judgements"
    items = "items"
    raters = "raters"


class TiesOpt(StrEnum):
    """``--bt-ties``: a tie counts half a win for each system, or is dropped.

    Examples
    --------
    >>> TiesOpt("half").value
    'half'
    """

    half = "half"
    drop = "drop"


class PairingOpt(StrEnum):
    """``--pairing``: Wilcoxon pairs by item, or LSED (Reiter & Belz 2009).

    Examples
    --------
    >>> PairingOpt.lsed.value
    'lsed'
    """

    item = "item"
    lsed = "lsed"


class CorrectionOpt(StrEnum):
    """``--correction``: the multiple-comparison correction over all pairs.

    Examples
    --------
    >>> sorted(c.value for c in CorrectionOpt)
    ['bonferroni', 'holm', 'none']
    """

    bonferroni = "bonferroni"
    holm = "holm"
    none = "none"


def _count_or_names(value: str, what: str) -> int | list[str]:
    v = value.strip()
    if v.isdigit():
        return int(v)
    names = split_list(v)
    if not names:
        raise InputError(f"--{what} must be a count or a comma-separated list of names")
    return names


@design_app.command("latin-square")
def latin_square(
    systems: Annotated[str, typer.Option(help="Number of systems, or names 'a,b,c'.")],
    scenarios: Annotated[str, typer.Option(help="Number of scenarios (inputs), or ids.")],
    evaluators: Annotated[str, typer.Option(help="Number of evaluators, or ids.")],
    seed: Annotated[int, typer.Option(help="Seed for numpy.random.default_rng.")],
    relative: Annotated[bool, typer.Option(
        "--relative", help="Pairwise (relative) judgements: symbols are system pairs.")] = False,
    practice: Annotated[int, typer.Option(help="Practice trials per evaluator.")] = 0,
    practice_scenarios: Annotated[str | None, typer.Option(
        help="Comma-separated scenario ids for practice trials.")] = None,
    allow_incomplete: Annotated[bool, typer.Option(
        "--allow-incomplete",
        help="Build the most balanced design when counts do not fit (reports imbalance).")
    ] = False,
    scenarios_per_evaluator: Annotated[int | None, typer.Option(
        help="Each evaluator judges this many scenarios (a multiple of the number of systems, "
        "or pairs, dividing the scenarios); default: all scenarios.")] = None,
    raters_per_output: Annotated[int | None, typer.Option(
        help="Evaluators per output (>= 2 lets agreement be computed); checks that the "
        "evaluator count fits and names the count that does.")] = None,
    out: Annotated[Path | None, typer.Option(
        help="Write the trials table (.csv, .tsv or .json).")] = None,
    as_json: JsonOpt = False,
    quiet: QuietOpt = False,
) -> None:
    """Build a randomised Latin-square design (LG-Eval): trials per evaluator, balanced.

    \f
    Examples
    --------
    >>> from typer.testing import CliRunner
    >>> from nlgeval.cli import app
    >>> res = CliRunner().invoke(app, ["design", "latin-square", "--systems", "3",
    ...                                "--scenarios", "6", "--evaluators", "6", "--seed", "1"])
    >>> res.exit_code, res.stdout.splitlines()[0]
    (0, 'Latin-square design: 3 symbols, 4 square(s); balanced')
    """
    from nlgeval.human.design import latin_square_design
    from nlgeval.provenance import run_record

    setup(quiet)
    design = latin_square_design(
        _count_or_names(systems, "systems"), _count_or_names(scenarios, "scenarios"),
        _count_or_names(evaluators, "evaluators"), seed=seed, relative=relative,
        practice=practice, practice_scenarios=split_list(practice_scenarios),
        allow_incomplete=allow_incomplete, scenarios_per_evaluator=scenarios_per_evaluator,
        raters_per_output=raters_per_output,
    )
    if out is not None:
        out.parent.mkdir(parents=True, exist_ok=True)
        if out.suffix.lower() == ".json":
            out.write_text(json.dumps(design.trials.to_dict("records"), indent=1),
                           encoding="utf-8")
        else:
            design.trials.to_csv(out, index=False, sep="\t" if out.suffix == ".tsv" else ",")
    summary = design.summary()
    if as_json:
        emit_json({**design.to_dict(), "run": run_record(seed=seed, command="design latin-square")})
        return
    typer.echo(summary.to_text())
    if out is not None:
        typer.echo(f"\nwrote {len(design.trials)} trials to {out}")


DataDirOpt = Annotated[Path | None, typer.Option(
    help="When FILE names a corpus: a folder laid out like the bundled corpora ($NLGEVAL_DATA).")]


class QCOpt(StrEnum):
    """``--qc``: keep every rater, or drop those failing quality control.

    Examples
    --------
    >>> QCOpt("drop").value
    'drop'
    """

    keep = "keep"
    drop = "drop"


QcOpt = Annotated[QCOpt, typer.Option(
    "--qc", help="Quality control of raters (Graham et al. 2013, as Appraise for WMT DA): "
    "drop = remove raters who fail control items (degraded outputs scored lower, one-sided "
    "paired Wilcoxon; repeated items scored consistently) or the experiment's checks "
    "(qc_passed); keep = use every rater.")]


# The options of ``compare``, in the order its ``--help`` lists them: each one's type and help
# text (the flag is the parameter's name unless given; the default is in the signature).
CompareFileArg = Annotated[Path, typer.Argument(
    help="Ratings CSV (rater,item,system,criterion,score), a relative export "
    "(system, system_b, score), or a corpus name/directory.")]
CompareCriterionOpt = Annotated[str | None, typer.Option(help="Criterion to analyse.")]
CompareMethodOpt = Annotated[Method | None, typer.Option(
    help="wilcoxon (default for ratings), glm-tukey, friedman, ordinal (cumulative logit "
    "with contrasts and a proportional-odds check), mixed (crossed random rater and item "
    "effects); for pairwise judgements: bradley-terry (default) or sign.")]
ComparePairingOpt = Annotated[PairingOpt, typer.Option(
    help="Wilcoxon pairs: by item, or lsed (k-th lowest with k-th lowest per rater).")]
CompareCorrectionOpt = Annotated[CorrectionOpt | None, typer.Option(
    help="Over all pairs (default: bonferroni for wilcoxon, holm otherwise).")]
CompareAlphaOpt = Annotated[float, typer.Option(help="Significance level.")]
CompareScaleOpt = Annotated[str | None, typer.Option(
    help="Declared scale 'MIN,MAX' (checked; for pairwise judgements its middle is 'no "
    "preference').")]
DropIncompleteOpt = Annotated[bool, typer.Option(
    "--drop-incomplete", help="Friedman: drop items lacking a system.")]
ZscoreOpt = Annotated[bool, typer.Option(
    "--zscore", help="Analyse per-rater z-scores (WMT Direct Assessment) instead of raw "
    "scores.")]
FactorsOpt = Annotated[str, typer.Option(
    help="glm-tukey: nuisance factors besides system (comma-separated; '' for none).")]
MaxDenseGibOpt = Annotated[float, typer.Option(
    help="Largest dense design matrix a model may build (GiB).")]
BootSeedOpt = Annotated[int, typer.Option(help="Seed for the bootstrap (bradley-terry).")]
NBootOpt = Annotated[int, typer.Option(help="Bootstrap replicates (bradley-terry).")]
BootResampleOpt = Annotated[ResampleOpt, typer.Option(
    help="bradley-terry bootstrap unit: judgements, items or raters.")]
BtTiesOpt = Annotated[TiesOpt, typer.Option(
    help="bradley-terry: a tie counts half a win each (half) or is dropped.")]
BtPriorOpt = Annotated[float, typer.Option(
    help="bradley-terry: Gaussian prior precision on strengths (0 = maximum likelihood).")]
TablesDirOpt = Annotated[Path | None, typer.Option(
    help="Write paper tables (CSV, Markdown, LaTeX) here.")]


def compare(
    file: CompareFileArg,
    criterion: CompareCriterionOpt = None,
    method: CompareMethodOpt = None,
    pairing: ComparePairingOpt = PairingOpt.item,
    correction: CompareCorrectionOpt = None,
    alpha: CompareAlphaOpt = 0.05,
    scale: CompareScaleOpt = None,
    drop_incomplete: DropIncompleteOpt = False,
    zscore: ZscoreOpt = False,
    qc: QcOpt = QCOpt.keep,
    factors: FactorsOpt = "rater,item",
    max_dense_gib: MaxDenseGibOpt = 1.0,
    seed: BootSeedOpt = 0,
    n_boot: NBootOpt = 1000,
    resample: BootResampleOpt = ResampleOpt.judgements,
    bt_ties: BtTiesOpt = TiesOpt.half,
    bt_prior: BtPriorOpt = 0.0,
    out_dir: TablesDirOpt = None,
    data_dir: DataDirOpt = None,
    as_json: JsonOpt = False,
    quiet: QuietOpt = False,
) -> None:
    """Which generators do humans rate differently? Wilcoxon, GLM + Tukey, Friedman, ordinal,
    mixed model; sign tests and Bradley-Terry for pairwise (relative) judgements.

    \f
    Examples
    --------
    >>> import tempfile, pathlib
    >>> from typer.testing import CliRunner
    >>> from nlgeval.cli import app
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "ratings.csv"
    >>> rows = [f"r{r},{i},{s},q,{(r + i + 2 * k) % 5 + 1}"
    ...         for r in range(3) for i in range(6) for k, s in enumerate("abc")]
    >>> _ = path.write_text("rater,item,system,criterion,score\\n" + "\\n".join(rows) + "\\n")
    >>> res = CliRunner().invoke(app, ["compare", str(path), "--json"])
    >>> import json
    >>> [(p["system_a"], p["system_b"]) for p in json.loads(res.stdout)["pairs"]]
    [('a', 'b'), ('a', 'c'), ('b', 'c')]
    """
    from nlgeval.human.analysis import compare_systems
    from nlgeval.provenance import run_record

    setup(quiet)
    df, sc, crit = _load(file, criterion, scale, data_dir, keep_checks=True)
    with _naming(file), warnings_on_stderr():  # "warning: ...", no source line
        res = compare_systems(
            df, criterion=crit, method=None if method is None else method.value,
            pairing=pairing.value, correction=None if correction is None else correction.value,
            alpha=alpha, scale=sc, drop_incomplete=drop_incomplete, zscore=zscore,
            factors=split_list(factors) or (), max_dense_bytes=max_dense_gib * (1 << 30),
            seed=seed, n_resamples=n_boot, resample=resample.value, ties=bt_ties.value,
            prior=bt_prior, qc=qc.value, file=str(file))
    run = run_record(command="compare", file=str(file), criterion=crit, method=res.method,
                     zscore=zscore, qc=qc.value,
                     **({"seed": seed} if res.method == "bradley-terry" else {}))
    run.update(res.run)
    _write_and_show_comparison(res, run, out_dir, as_json)


@contextmanager
def _naming(file: Path) -> Iterator[None]:
    """An error about the ratings as a whole ("needs at least 2 systems", "near-constant
    ratings") names the file it came from, as every bad-input error does.

    Examples
    --------
    >>> try:
    ...     with _naming(Path("ratings.csv")):
    ...         raise InputError("needs at least 2 raters", column="rater")
    ... except InputError as err:
    ...     print(err)
    ratings.csv, column 'rater': needs at least 2 raters
    """
    try:
        yield
    except InputError as err:
        if err.file is not None:
            raise
        raise dataclasses.replace(err, file=str(file)) from None


def _write_and_show_comparison(res: SystemComparison, run: dict[str, Any],
                               out_dir: Path | None, as_json: bool) -> None:
    """Write the comparison's paper tables to ``out_dir`` (when given), then print it: a JSON
    object with its run record, or its messages (stderr), tables and summary lines."""
    if out_dir is not None:
        for name, table in res.tables.items():
            table.write(out_dir, name)
    if as_json:
        emit_json({**res.to_dict(), "run": run})
        return
    for m in res.messages:
        typer.echo(m, err=True)
    for table in res.tables.values():
        typer.echo(table.to_markdown())
    for line in res.lines:
        typer.echo(line)


def agreement(
    file: Annotated[Path, typer.Argument(
        help="Ratings CSV (rater,item,system,criterion,score), or a corpus name/directory.")],
    criterion: Annotated[str | None, typer.Option(help="Criterion to analyse.")] = None,
    scale: Annotated[str | None, typer.Option(help="Declared scale 'MIN,MAX' (checked).")] = None,
    min_common: Annotated[int, typer.Option(
        help="Cohen's kappa only for rater pairs sharing at least this many outputs.")] = 2,
    zscores: Annotated[Path | None, typer.Option(
        help="Write the ratings with per-rater z-scores (WMT DA) to this CSV.")] = None,
    out_dir: Annotated[Path | None, typer.Option(
        help="Write paper tables (CSV, Markdown, LaTeX) here.")] = None,
    qc: QcOpt = QCOpt.keep,
    data_dir: DataDirOpt = None,
    spans: Annotated[bool, typer.Option(
        "--spans", help="FILE holds error spans (rater,item,system,start,end,category,"
        "severity; MQM or ESA): character-overlap F1 and severity agreement (Cohen's kappa, "
        "Krippendorff's alpha) per rater pair.")] = False,
    as_json: JsonOpt = False,
    quiet: QuietOpt = False,
) -> None:
    """Inter-rater agreement (Cohen, Fleiss, Krippendorff, ICC) and per-rater summaries; with
    ``--spans``, agreement on error spans.

    \f
    Examples
    --------
    >>> import tempfile, pathlib
    >>> from typer.testing import CliRunner
    >>> from nlgeval.cli import app
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "ratings.csv"
    >>> rows = [f"r{r},{i},{s},q,{(r + i + 2 * k) % 5 + 1}"
    ...         for r in range(3) for i in range(6) for k, s in enumerate("abc")]
    >>> _ = path.write_text("rater,item,system,criterion,score\\n" + "\\n".join(rows) + "\\n")
    >>> res = CliRunner().invoke(app, ["agreement", str(path), "--json"])
    >>> import json
    >>> json.loads(res.stdout)["n_raters"]
    3
    """
    from nlgeval.human.agreement import agreement_report, rater_zscores
    from nlgeval.human.qc import apply_qc
    from nlgeval.human.report import agreement_table
    from nlgeval.provenance import run_record
    from nlgeval.tables import PaperTable

    setup(quiet)
    if spans:
        from nlgeval.cli.human_spans import span_agreement_cli

        span_agreement_cli(file, out_dir=out_dir, as_json=as_json)
        return
    df, sc, crit = _load(file, criterion, scale, data_dir, keep_checks=True)
    with _naming(file), warnings_on_stderr():  # "warning: ...", no source line
        df, qc_report = apply_qc(df, qc.value, scale=sc)
        rep = agreement_report(df, scale=sc, criterion=crit, min_common=min_common)
    table = agreement_table(rep)
    if zscores is not None:
        z = rater_zscores(df)
        zscores.parent.mkdir(parents=True, exist_ok=True)
        z.to_csv(zscores, index=False)
    if out_dir is not None:
        table.write(out_dir, f"agreement_{crit}")
        PaperTable(data=rep.raters, caption=f"Per-rater summary ({crit}).",
                   label="tab:raters", digits=2).write(out_dir, f"raters_{crit}")
    if as_json:
        qc_part = {} if qc_report is None else {"qc": {
            "removed": list(qc_report.removed), "n_removed": qc_report.n_removed,
            "reasons": qc_report.reasons, "raters": qc_report.raters}}
        emit_json({**rep.to_dict(), **qc_part, "run": run_record(
            command="agreement", file=str(file), criterion=crit, qc=qc.value)})
        return
    if qc_report is not None:
        typer.echo(qc_report.summary(), err=True)
    typer.echo(table.to_markdown())
    typer.echo(PaperTable(data=rep.raters, caption="Per-rater summary", digits=2).to_markdown())


def register(app: typer.Typer) -> None:
    """Add ``design latin-square``/``bws``, ``compare``, ``agreement``, ``bws score``,
    ``spans score`` and ``plan power`` to the top-level app.

    Examples
    --------
    >>> import typer
    >>> app = typer.Typer()
    >>> register(app)
    >>> sorted(c.name for c in app.registered_commands)
    ['agreement', 'compare']
    """
    app.add_typer(design_app, name="design")
    app.add_typer(bws_app, name="bws")
    app.add_typer(spans_app, name="spans")
    from nlgeval.cli.human_plan import plan_app

    app.add_typer(plan_app, name="plan")
    app.command("compare")(compare)
    app.command("agreement")(agreement)
