"""CLI for human ratings: ``design latin-square``, ``compare``, ``agreement``, ``plan power``."""

from __future__ import annotations

import json
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from nlgeval.cli._common import JsonOpt, QuietOpt, emit_json, setup, split_list
from nlgeval.errors import InputError

design_app = typer.Typer(help="Plan human evaluations (Latin-square designs).",
                         no_args_is_help=True)


class Method(StrEnum):
    wilcoxon = "wilcoxon"
    glm_tukey = "glm-tukey"
    friedman = "friedman"
    ordinal = "ordinal"
    mixed = "mixed"
    sign = "sign"
    bradley_terry = "bradley-terry"


class ResampleOpt(StrEnum):
    judgements = "judgements"
    items = "items"
    raters = "raters"


class TiesOpt(StrEnum):
    half = "half"
    drop = "drop"


class PairingOpt(StrEnum):
    item = "item"
    lsed = "lsed"


class CorrectionOpt(StrEnum):
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
    out: Annotated[Path | None, typer.Option(
        help="Write the trials table (.csv, .tsv or .json).")] = None,
    as_json: JsonOpt = False,
    quiet: QuietOpt = False,
) -> None:
    """Build a randomised Latin-square design (LG-Eval): trials per evaluator, balanced."""
    from nlgeval.human.design import latin_square_design
    from nlgeval.provenance import run_record

    setup(quiet, as_json)
    design = latin_square_design(
        _count_or_names(systems, "systems"), _count_or_names(scenarios, "scenarios"),
        _count_or_names(evaluators, "evaluators"), seed=seed, relative=relative,
        practice=practice, practice_scenarios=split_list(practice_scenarios),
        allow_incomplete=allow_incomplete,
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


def _load(file: Path, criterion: str | None, scale: str | None,
          data_dir: Path | None = None):  # noqa: ANN202
    """Ratings from a file, or from a corpus (a published corpus name such as ``webnlg2020``,
    or a corpus directory) when ``file`` is not a ratings file."""
    from nlgeval.human.ratings import parse_scale, read_ratings, validate_ratings

    sc = parse_scale(scale)
    if file.is_file() or file.suffix.lower() in (".csv", ".tsv", ".jsonl", ".parquet", ".txt"):
        df = read_ratings(file, criterion=criterion, scale=sc)
        return df, sc, (criterion or str(df["criterion"].iloc[0]))
    from nlgeval.corpora import load_corpus

    corpus = load_corpus(str(file) if not file.is_dir() else file, data_dir)
    df = validate_ratings(corpus.ratings, criterion=criterion, scale=sc,
                          file=f"corpus {corpus.name}").drop(columns=["_row"])
    crit = criterion or str(df["criterion"].iloc[0])
    if sc is None:
        c = corpus.info.criterion(crit)
        sc = (float(c.min), float(c.max))
    return df, sc, crit


DataDirOpt = Annotated[Path | None, typer.Option(
    help="When FILE names a corpus: a folder laid out like the bundled corpora ($NLGEVAL_DATA).")]


def _warn(messages: list[str] | tuple[str, ...], as_json: bool) -> None:
    """Warnings not already printed as table notes go to stderr in text mode (JSON output
    carries them under ``warnings``)."""
    if not as_json:
        for m in messages:
            typer.echo(f"warning: {m}", err=True)


ABSOLUTE_METHODS = {"wilcoxon", "glm-tukey", "friedman", "ordinal", "mixed"}
RELATIVE_METHODS = {"sign", "bradley-terry"}


def compare(
    file: Annotated[Path, typer.Argument(
        help="Ratings CSV (rater,item,system,criterion,score), a relative export "
        "(system, system_b, score), or a corpus name/directory.")],
    criterion: Annotated[str | None, typer.Option(help="Criterion to analyse.")] = None,
    method: Annotated[Method | None, typer.Option(
        help="wilcoxon (default for ratings), glm-tukey, friedman, ordinal, mixed (crossed "
        "random rater and item effects); for pairwise judgements: bradley-terry (default) or "
        "sign.")] = None,
    pairing: Annotated[PairingOpt, typer.Option(
        help="Wilcoxon pairs: by item, or lsed (k-th lowest with k-th lowest per rater).")
    ] = PairingOpt.item,
    correction: Annotated[CorrectionOpt | None, typer.Option(
        help="Over all pairs (default: bonferroni for wilcoxon, holm otherwise).")] = None,
    alpha: Annotated[float, typer.Option(help="Significance level.")] = 0.05,
    scale: Annotated[str | None, typer.Option(help="Declared scale 'MIN,MAX' (checked; for "
                                              "pairwise judgements its middle is 'no "
                                              "preference').")] = None,
    drop_incomplete: Annotated[bool, typer.Option(
        "--drop-incomplete", help="Friedman: drop items lacking a system.")] = False,
    zscore: Annotated[bool, typer.Option(
        "--zscore", help="Analyse per-rater z-scores (WMT Direct Assessment) instead of raw "
        "scores.")] = False,
    factors: Annotated[str, typer.Option(
        help="glm-tukey: nuisance factors besides system (comma-separated; '' for none).")
    ] = "rater,item",
    max_dense_gib: Annotated[float, typer.Option(
        help="Largest dense design matrix a model may build (GiB).")] = 1.0,
    seed: Annotated[int, typer.Option(help="Seed for the bootstrap (bradley-terry).")] = 1,
    n_boot: Annotated[int, typer.Option(help="Bootstrap replicates (bradley-terry).")] = 1000,
    resample: Annotated[ResampleOpt, typer.Option(
        help="bradley-terry bootstrap unit: judgements, items or raters.")
    ] = ResampleOpt.judgements,
    bt_ties: Annotated[TiesOpt, typer.Option(
        help="bradley-terry: a tie counts half a win each (half) or is dropped.")
    ] = TiesOpt.half,
    bt_prior: Annotated[float, typer.Option(
        help="bradley-terry: Gaussian prior precision on strengths (0 = maximum likelihood).")
    ] = 0.0,
    out_dir: Annotated[Path | None, typer.Option(
        help="Write paper tables (CSV, Markdown, LaTeX) here.")] = None,
    data_dir: DataDirOpt = None,
    as_json: JsonOpt = False,
    quiet: QuietOpt = False,
) -> None:
    """Which generators do humans rate differently? Wilcoxon, GLM + Tukey, Friedman, ordinal,
    mixed model; sign tests and Bradley-Terry for pairwise (relative) judgements."""
    from nlgeval.human import report
    from nlgeval.human.ratings import is_relative
    from nlgeval.provenance import run_record

    setup(quiet, as_json)
    df, sc, crit = _load(file, criterion, scale, data_dir)
    relative = is_relative(df)
    if method is None:
        m = "bradley-terry" if relative else "wilcoxon"
    else:
        m = method.value
    if relative and m in ABSOLUTE_METHODS:
        raise InputError(
            "the file holds pairwise (relative) judgements (system, system_b, preference), "
            f"not ratings of single outputs; --method {m} does not apply: use --method "
            "bradley-terry or --method sign", file=file)
    if not relative and m in RELATIVE_METHODS:
        raise InputError(f"--method {m} is for pairwise judgements (a system_b column); the "
                         "file holds ratings of single outputs", file=file)
    corr = correction.value if correction is not None else (
        "bonferroni" if m == "wilcoxon" else "holm")
    max_bytes = max_dense_gib * (1 << 30)
    run = run_record(command="compare", file=str(file), criterion=crit, method=m,
                     zscore=zscore, **({"seed": seed} if m == "bradley-terry" else {}))
    if zscore:
        if relative:
            raise InputError("--zscore applies to ratings of single outputs, not to pairwise "
                             "preferences", file=file)
        from nlgeval.human.agreement import rater_zscores

        z = rater_zscores(df)
        dropped = z.attrs.get("dropped_raters", [])
        df = z.assign(score=z["z"]).drop(columns=["z"])
        run["zscore_dropped_raters"] = dropped
        if dropped and not as_json:
            typer.echo(f"note: {len(dropped)} rater(s) without spread dropped for z-scores: "
                       + ", ".join(dropped), err=True)
    if m in RELATIVE_METHODS:
        _compare_relative(df, m, sc, crit, corr, alpha, seed, n_boot, resample.value,
                          bt_ties.value, bt_prior, out_dir, run, as_json)
    elif m == "wilcoxon":
        from nlgeval.human.compare import pairwise_wilcoxon

        pairs = pairwise_wilcoxon(df, pairing=pairing.value, correction=corr, alpha=alpha)
        warns = list(pairs.attrs.get("warnings", []))
        table = report.wilcoxon_table(pairs, criterion=crit, pairing=pairing.value,
                                      correction=corr, alpha=alpha)
        if out_dir is not None:
            table.write(out_dir, f"wilcoxon_{crit}")
        # the Friedman test across all systems, where the design is complete
        from nlgeval.human.compare import friedman

        try:
            fr: object = friedman(df)
        except InputError as exc:
            fr = None
            run["friedman_skipped"] = str(exc)
        if as_json:
            emit_json({"criterion": crit, "method": "wilcoxon", "pairing": pairing.value,
                       "correction": corr, "alpha": alpha, "pairs": pairs,
                       "friedman": fr, "warnings": warns, "run": run})
        else:
            typer.echo(table.to_markdown())
            if fr is not None:
                typer.echo(report.friedman_table(fr, criterion=crit).caption)  # type: ignore[arg-type]
    elif m == "glm-tukey":
        from nlgeval.human.glm import glm_tukey

        res = glm_tukey(df, alpha=alpha, factors=split_list(factors) or (),
                        max_dense_bytes=max_bytes)
        tables = report.glm_tables(res, criterion=crit)
        if out_dir is not None:
            for name, t in tables.items():
                t.write(out_dir, f"{name}_{crit}")
        if as_json:
            emit_json({"criterion": crit, "method": "glm-tukey", **res.to_dict(), "run": run})
        else:
            for t in tables.values():
                typer.echo(t.to_markdown())
            for n in res.notes:
                typer.echo(f"note: {n}")
    elif m == "mixed":
        from nlgeval.human.mixed import mixed_model

        mm = mixed_model(df, alpha=alpha, correction=corr, max_dense_bytes=max_bytes)
        tables = report.mixed_tables(mm, criterion=crit)
        if out_dir is not None:
            for name, t in tables.items():
                t.write(out_dir, f"mixed_{name}_{crit}")
        if as_json:
            emit_json({"criterion": crit, **mm.to_dict(), "run": run})
        else:
            for t in tables.values():
                typer.echo(t.to_markdown())
    elif m == "ordinal":
        from nlgeval.human.glm import ordinal_model
        from nlgeval.tables import PaperTable

        om = ordinal_model(df, max_dense_bytes=max_bytes)
        if as_json:
            emit_json({"criterion": crit, "method": "ordinal", "ordinal": om, "run": run})
        else:
            typer.echo(PaperTable(
                data=om.coefficients,
                caption=f"{om.formula} ({crit}); system effect: LR chi2({om.lr_df}) = "
                f"{om.lr_statistic:.2f}, p = {om.lr_pvalue:.3g}; coefficients are log odds of a "
                f"higher rating relative to {om.reference}", digits=3).to_markdown())
    else:
        from nlgeval.human.compare import friedman

        fr = friedman(df, drop_incomplete=drop_incomplete)
        table = report.friedman_table(fr, criterion=crit)
        warns = []
        if fr.n_blocks < 10:
            warns.append(f"only {fr.n_blocks} complete {fr.block}s: the Friedman test's "
                         "chi-square approximation is rough below about 10 blocks")
        _warn(warns, as_json)
        if out_dir is not None:
            table.write(out_dir, f"friedman_{crit}")
        if as_json:
            emit_json({"criterion": crit, "method": "friedman", "friedman": fr,
                       "warnings": warns, "run": run})
        else:
            typer.echo(table.to_markdown())


def _compare_relative(df, method: str, scale, crit: str, correction: str,  # noqa: ANN001
                      alpha: float, seed: int, n_boot: int, resample: str, ties: str,
                      prior: float, out_dir: Path | None, run: dict, as_json: bool) -> None:
    """``compare`` on pairwise judgements: sign tests per pair, Bradley-Terry ranking."""
    from nlgeval.human import report
    from nlgeval.human.pairwise import bradley_terry, pairwise_outcomes, sign_tests

    outcomes = pairwise_outcomes(df, scale=scale)
    pairs = sign_tests(outcomes, correction=correction, alpha=alpha)
    sign_t = report.sign_table(pairs, criterion=crit, correction=correction, alpha=alpha)
    warns = list(pairs.attrs.get("warnings", []))
    if out_dir is not None:
        sign_t.write(out_dir, f"sign_{crit}")
    if method == "sign":
        if as_json:
            emit_json({"criterion": crit, "method": "sign", "correction": correction,
                       "alpha": alpha, "pairs": pairs, "warnings": warns, "run": run})
        else:
            typer.echo(sign_t.to_markdown())
        return
    bt = bradley_terry(outcomes, ties=ties, prior=prior, n_boot=n_boot,  # type: ignore[arg-type]
                       resample=resample, seed=seed, alpha=alpha)  # type: ignore[arg-type]
    bt_t = report.bradley_terry_table(bt, criterion=crit)
    if out_dir is not None:
        bt_t.write(out_dir, f"bradley_terry_{crit}")
    warns += list(bt.warnings)
    if as_json:
        emit_json({"criterion": crit, **bt.to_dict(), "correction": correction,
                   "pairs": pairs, "warnings": warns, "run": run})
    else:
        typer.echo(bt_t.to_markdown())
        typer.echo(sign_t.to_markdown())


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
    data_dir: DataDirOpt = None,
    as_json: JsonOpt = False,
    quiet: QuietOpt = False,
) -> None:
    """Inter-rater agreement (Cohen, Fleiss, Krippendorff, ICC) and per-rater summaries."""
    from nlgeval.human.agreement import agreement_report, rater_zscores
    from nlgeval.human.report import agreement_table
    from nlgeval.provenance import run_record
    from nlgeval.tables import PaperTable

    setup(quiet, as_json)
    df, sc, crit = _load(file, criterion, scale, data_dir)
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
        emit_json({**rep.to_dict(), "run": run_record(command="agreement", file=str(file),
                                                      criterion=crit)})
        return
    typer.echo(table.to_markdown())
    typer.echo(PaperTable(data=rep.raters, caption="Per-rater summary", digits=2).to_markdown())


plan_app = typer.Typer(help="Plan a human evaluation: power of a system comparison.",
                       no_args_is_help=True)


class DesignOpt(StrEnum):
    paired = "paired"
    between = "between"
    independent = "independent"


class PowerTestOpt(StrEnum):
    t = "t"
    wilcoxon = "wilcoxon"


def _ints(value: str, what: str) -> list[int]:
    try:
        out = [int(v) for v in split_list(value) or []]
    except ValueError:
        raise InputError(f"--{what} must be comma-separated whole numbers, got {value!r}"
                         ) from None
    if not out:
        raise InputError(f"--{what} is empty")
    return out


@plan_app.command("power")
def plan_power(
    pilot: Annotated[Path | None, typer.Argument(
        help="Pilot ratings (rater,item,system,criterion,score): variance components are "
        "estimated from them (mixed model). Omit to state them with --sd-*.")] = None,
    effect: Annotated[float, typer.Option(
        help="Difference between two systems to detect, on the rating scale.")] = 0.5,
    criterion: Annotated[str | None, typer.Option(help="Criterion of the pilot.")] = None,
    items: Annotated[str, typer.Option(help="Numbers of items to try.")] = "10,20,40,80,160",
    raters_per_item: Annotated[str, typer.Option(
        help="Raters per output to try.")] = "1,3,5",
    design: Annotated[DesignOpt, typer.Option(
        help="paired: same raters for both outputs of an item; between: different raters; "
        "independent: each system on its own items.")] = DesignOpt.paired,
    test: Annotated[PowerTestOpt, typer.Option(help="Analysis of per-item means.")
                    ] = PowerTestOpt.t,
    pool: Annotated[int | None, typer.Option(help="Size of the rater pool.")] = None,
    comparisons: Annotated[int, typer.Option(
        help="Planned number of pairwise comparisons (Bonferroni).")] = 1,
    alpha: Annotated[float, typer.Option(help="Significance level.")] = 0.05,
    target: Annotated[float, typer.Option(help="Power to reach.")] = 0.8,
    scale: Annotated[str | None, typer.Option(
        help="Rating scale 'MIN,MAX': simulated ratings are rounded to its points.")] = None,
    sd_rater: Annotated[float | None, typer.Option(help="SD of rater effects.")] = None,
    sd_item: Annotated[float | None, typer.Option(help="SD of item effects.")] = None,
    sd_residual: Annotated[float | None, typer.Option(help="Residual SD.")] = None,
    mean: Annotated[float | None, typer.Option(help="Mean rating (for --scale).")] = None,
    sims: Annotated[int, typer.Option(help="Simulated experiments per grid point.")] = 1000,
    seed: Annotated[int, typer.Option(help="Seed for numpy.random.default_rng.")] = 1,
    out_dir: Annotated[Path | None, typer.Option(
        help="Write the table (CSV, Markdown, LaTeX) and the plot (PNG, PDF) here.")] = None,
    as_json: JsonOpt = False,
    quiet: QuietOpt = False,
) -> None:
    """How many items and raters per output does a comparison of two systems need?
    Power by simulation (Card et al. 2020)."""
    from nlgeval.human.power import (
        VarianceComponents,
        components_from_pilot,
        plot_power,
        simulate_power,
    )
    from nlgeval.human.ratings import parse_scale
    from nlgeval.provenance import run_record
    from nlgeval.tables import PaperTable

    setup(quiet, as_json)
    sc = parse_scale(scale)
    if pilot is not None:
        df, sc_pilot, crit = _load(pilot, criterion, scale)
        vc = components_from_pilot(df)
        sc = sc or sc_pilot
        source = f"pilot {pilot} ({crit}, {len(df)} ratings)"
    else:
        if sd_residual is None:
            raise InputError("give pilot ratings, or at least --sd-residual (and --sd-rater, "
                             "--sd-item)")
        vc = VarianceComponents(rater=(sd_rater or 0.0) ** 2, item=(sd_item or 0.0) ** 2,
                                residual=sd_residual ** 2, mean=0.0)
        source = "stated variance components"
    overrides = {k: v ** 2 for k, v in (("rater", sd_rater), ("item", sd_item),
                                          ("residual", sd_residual)) if v is not None}
    vc = VarianceComponents(**{**vc.to_dict(), **overrides,
                               **({"mean": mean} if mean is not None else {})})
    if sc is not None and mean is None and pilot is None:
        vc = VarianceComponents(**{**vc.to_dict(), "mean": (sc[0] + sc[1]) / 2})
    res = simulate_power(effect, vc, items=_ints(items, "items"),
                         raters_per_item=_ints(raters_per_item, "raters-per-item"),
                         design=design.value, test=test.value, pool=pool,  # type: ignore[arg-type]
                         alpha=alpha, comparisons=comparisons, scale=sc, n_sims=sims,
                         seed=seed, target=target)
    table = PaperTable(
        data=res.table.rename(columns={"n_items": "Items", "raters_per_item": "Raters/output",
                                       "n_ratings": "Ratings", "power": "Power",
                                       "mc_se": "MC SE"}),
        caption=f"Simulated power ({res.n_sims} experiments per cell, seed {res.seed}) to "
        f"detect a difference of {effect:g} ({res.test} test, {res.design} design, alpha "
        f"{alpha:g} / {comparisons}); variance components from {source}: rater "
        f"{vc.rater:.3g}, item {vc.item:.3g}, residual {vc.residual:.3g}.",
        label="tab:power", digits={"Power": 3, "MC SE": 3}, notes=res.notes)
    if out_dir is not None:
        table.write(out_dir, "power")
        plot_power(res, out_dir / "power")
    if as_json:
        emit_json({**res.to_dict(), "source": source,
                   "run": run_record(seed=seed, command="plan power")})
        return
    typer.echo(table.to_markdown())
    best = res.smallest()
    for r in best.itertuples():
        typer.echo(f"{r.raters_per_item} rater(s) per output: {r.n_items} items reach power "
                   f"{r.power:.2f} >= {target:g}")
    if best.empty:
        typer.echo(f"no design in the grid reaches power {target:g}; try more items or raters")


def register(app: typer.Typer) -> None:
    """Add ``design latin-square``, ``compare``, ``agreement`` and ``plan power`` to the
    top-level app."""
    app.add_typer(design_app, name="design")
    app.add_typer(plan_app, name="plan")
    app.command("compare")(compare)
    app.command("agreement")(agreement)
