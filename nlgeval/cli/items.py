"""``nlgeval items``: discrete ANOVA, chi-square homogeneity tests, the number-of-items study and
evaluation planning from pilot ratings (a thin layer over :mod:`nlgeval.items`)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from nlgeval.cli._common import JsonOpt, QuietOpt, SeedOpt, emit_json, setup, split_list
from nlgeval.errors import InputError

items_app = typer.Typer(
    help="How many items per evaluator? Discrete ANOVA (WRS2 discANOVA), chi-square tests, the "
    "resampling study of Gonzalez-Corbelle et al. (2023) and planning from pilot ratings.",
    no_args_is_help=True,
)

NbootOpt = Annotated[int, typer.Option("--nboot", help="Bootstrap draws of the discrete ANOVA.")]
BackendOpt = Annotated[str | None, typer.Option(
    "--backend", help="serial, process (local process pool; default unless --workers 1) or dask "
    "(see --scheduler). Never changes a number.")]
SchedulerOpt = Annotated[str | None, typer.Option(
    "--scheduler", help="Dask scheduler: local:N (a LocalCluster of N worker processes on this "
    "machine) or an address such as tcp://host:8786 / a scheduler file. Implies --backend dask.")]
ChunkOpt = Annotated[int | None, typer.Option(
    "--chunk-size", help="(distribution, method, size) cells per task sent to a worker "
    "(default: automatic). Never changes a number.")]
ResumeOpt = Annotated[bool, typer.Option(
    "--resume", help="Reuse the completed cells checkpointed in --out (an interrupted run) "
    "instead of starting over.")]


def _read_groups(file: Path, group: str, score: str):
    from nlgeval.io import read_table

    return read_table(file, [group, score])


@items_app.command("discanova")
def discanova_cmd(
    file: Annotated[Path, typer.Argument(help="CSV/TSV/JSONL, one row per rating.")],
    group: Annotated[str, typer.Option("--group", help="Column with the group labels.")],
    score: Annotated[str, typer.Option("--score", help="Column with the (discrete) scores.")],
    nboot: NbootOpt = 500,
    seed: SeedOpt = 0,
    compare: Annotated[bool, typer.Option(
        "--compare", help="Also report chi-square tests of homogeneity.")] = False,
    as_json: JsonOpt = False,
    quiet: QuietOpt = False,
) -> None:
    """WRS2's discANOVA: do the groups have the same distribution over the score values?"""
    from nlgeval.items.chisquare import chi2_companions
    from nlgeval.items.discanova import disc_anova

    setup(quiet)
    df = _read_groups(file, group, score)
    res = disc_anova(df, group, score, n_resamples=nboot, seed=seed, file=str(file))
    out = res.to_dict()
    if compare:
        out["chi_square"] = [c.to_dict() for c in chi2_companions(res, seed=seed)]
    if as_json:
        emit_json(out)
        return
    typer.echo(f"discrete ANOVA (WRS2 discANOVA), groups: {', '.join(res.groups)} "
               f"(n = {', '.join(map(str, res.group_sizes))})")
    typer.echo(f"statistic = {res.statistic:.6g}   p = {res.pvalue:.4g}   "
               f"(nboot = {res.nboot}, seed = {seed}, ties = {res.n_ties})")
    for c in out.get("chi_square", []):
        typer.echo(f"chi-square ({c['method']}): X2 = {c['statistic']:.4g}, df = {c['dof']}, "
                   f"p = {c['pvalue']:.4g}")


@items_app.command("chisq")
def chisq_cmd(
    file: Annotated[Path, typer.Argument(help="CSV/TSV/JSONL, one row per rating.")],
    group: Annotated[str, typer.Option("--group", help="Column with the group labels.")],
    score: Annotated[str, typer.Option("--score", help="Column with the (discrete) scores.")],
    method: Annotated[str, typer.Option(
        "--method", help="asymptotic, montecarlo or exact (two groups).")] = "asymptotic",
    resamples: Annotated[int, typer.Option(
        "--resamples", help="Random tables of the Monte Carlo p-value (Hope 1968).")] = 9999,
    seed: SeedOpt = 0,
    as_json: JsonOpt = False,
    quiet: QuietOpt = False,
) -> None:
    """Chi-square test of homogeneity of the score distributions of the groups."""
    from nlgeval.items.chisquare import chi2_from_ratings

    setup(quiet)
    df = _read_groups(file, group, score)
    res = chi2_from_ratings(df, group, score, method=method, n_resamples=resamples, seed=seed,
                            file=str(file))
    if as_json:
        emit_json(res)
    else:
        typer.echo(f"chi-square ({res.method}): X2 = {res.statistic:.6g}, df = {res.dof}, "
                   f"p = {res.pvalue:.4g}")


def _backend(backend: str | None, workers: int | None, scheduler: str | None, quiet: bool,
             as_json: bool):
    """The execution backend; a Dask backend announces its dashboard on stderr unless
    ``--quiet`` / ``--json``."""
    from nlgeval.items.backends import get_backend

    def announce(line: str) -> None:
        typer.echo(line, err=True)

    return get_backend(backend, workers, scheduler=scheduler,
                       announce=None if quiet or as_json else announce)


def _checkpoint(out: Path | None, resume: bool):
    from nlgeval.items.checkpoint import FILENAME

    if resume and out is None:
        raise InputError("--resume needs --out (the folder holding the interrupted run)")
    return None if out is None else out / FILENAME


def _parse_counts(specs: list[str] | None):
    from nlgeval.items.profiles import distribution_from_counts

    out = []
    for spec in specs or []:
        name, sep, rest = spec.partition("=")
        if not sep:
            raise InputError(f"--counts expects NAME=c1,c2,...; got {spec!r}")
        try:
            counts = [int(v) for v in rest.split(",") if v.strip()]
        except ValueError:
            raise InputError(f"--counts {spec!r}: counts must be integers") from None
        out.append(distribution_from_counts(name.strip(), counts))
    return out


@items_app.command("study")
def study_cmd(
    profiles: Annotated[str, typer.Option(
        "--profiles", help="'paper' (5 profiles + aggregate), 'none', or a comma list of "
        "profile names.")] = "paper",
    counts: Annotated[list[str] | None, typer.Option(
        "--counts", help="Extra distribution NAME=c1,c2,... (repeatable). The name keys its "
        "random streams: its numbers are the same alone or beside other distributions.")]
    = None,
    methods: Annotated[str, typer.Option(
        "--methods", help="Comma list of subset-drawing methods: bootstrap (with replacement) "
        "and/or rwor (resampling without replacement).")] = "bootstrap,rwor",
    replications: Annotated[int, typer.Option(
        "--replications", help="Subsets drawn per (distribution, method, size).")] = 1000,
    nboot: NbootOpt = 500,
    alpha: Annotated[float, typer.Option(
        "--alpha", help="Level of each discrete ANOVA (a subset 'differs' when p < alpha).")]
    = 0.1,
    thresholds: Annotated[str, typer.Option(
        "--thresholds", help="Comma list of rejection shares for Table 3 (smallest number "
        "of items whose share stays below each).")] = "0.1,0.05,0.01",
    max_size: Annotated[int | None, typer.Option(
        "--max-size", help="Study sizes 2..max-size (default N-1).")] = None,
    stopping: Annotated[str, typer.Option(
        "--stopping", help="certified (default) or exact early stopping.")] = "certified",
    workers: Annotated[int | None, typer.Option("--workers", help="Processes (default: all "
                                                "cores); with --backend dask and no "
                                                "--scheduler, the LocalCluster's size.")] = None,
    backend: BackendOpt = None,
    scheduler: SchedulerOpt = None,
    chunk_size: ChunkOpt = None,
    out: Annotated[Path | None, typer.Option("--out", help="Write curves, Table 3 and the "
                                             "figure here (and checkpoint completed cells "
                                             "as they finish).")] = None,
    resume: ResumeOpt = False,
    seed: SeedOpt = 0,
    as_json: JsonOpt = False,
    quiet: QuietOpt = False,
) -> None:
    """The number-of-items resampling study (the paper's Figure 3 and Table 3)."""
    from nlgeval.items.profiles import paper_profiles
    from nlgeval.items.study import run_study

    setup(quiet)
    dists = []
    if profiles == "paper":
        dists = paper_profiles()
    elif profiles != "none":
        names = split_list(profiles) or []
        known = {d.name: d for d in paper_profiles()}
        for n in names:
            if n not in known:
                raise InputError(f"unknown profile '{n}' (have: {', '.join(known)}, paper)")
            dists.append(known[n])
    dists += _parse_counts(counts)
    if not dists:
        raise InputError("no distributions: use --profiles and/or --counts")
    sizes = None
    if max_size is not None:
        sizes = list(range(2, max_size + 1))
    try:
        thr = [float(t) for t in split_list(thresholds) or []]
    except ValueError:
        raise InputError(f"--thresholds must be numbers, got {thresholds!r}") from None
    ckpt = _checkpoint(out, resume)
    res = run_study(dists, methods=split_list(methods) or [], sizes=sizes,
                    replications=replications, n_resamples=nboot, alpha=alpha, thresholds=thr,
                    seed=seed, stopping=stopping, workers=workers,
                    backend=_backend(backend, workers, scheduler, quiet, as_json),
                    chunk_size=chunk_size, checkpoint=ckpt, resume=resume)
    if out is not None:
        res.write(out)
    if as_json:
        emit_json(res)
        return
    typer.echo(res.paper_table().to_markdown())
    typer.echo(f"{len(res.curves)} (distribution, method, size) cells in {res.seconds:.1f} s")


@items_app.command("plan")
def plan_cmd(
    ratings: Annotated[Path, typer.Argument(help="Pilot ratings (CSV with rater, score, ...).")],
    score: Annotated[str, typer.Option("--score", help="Column with the scores.")] = "score",
    by: Annotated[str, typer.Option("--by", help="Column identifying the evaluator.")] = "rater",
    criterion: Annotated[str | None, typer.Option(
        "--criterion", help="Criterion to plan for when the file has a 'criterion' column "
        "with several values.")] = None,
    method: Annotated[str, typer.Option("--method", help="bootstrap or rwor.")] = "bootstrap",
    threshold: Annotated[float, typer.Option(
        "--threshold", help="Largest acceptable share of subsets that differ from the "
        "evaluator's full set.")] = 0.10,
    replications: Annotated[int, typer.Option(
        "--replications", help="Subsets drawn per (evaluator, size).")] = 1000,
    nboot: NbootOpt = 500,
    alpha: Annotated[float, typer.Option(
        "--alpha", help="Level of each discrete ANOVA (a subset 'differs' when p < alpha).")]
    = 0.1,
    workers: Annotated[int | None, typer.Option(
        "--workers", help="Processes (default: all cores).")] = None,
    backend: BackendOpt = None,
    scheduler: SchedulerOpt = None,
    chunk_size: ChunkOpt = None,
    out: Annotated[Path | None, typer.Option(
        "--out", help="Write the study's curves and table here (and checkpoint completed "
        "cells as they finish).")] = None,
    resume: ResumeOpt = False,
    seed: SeedOpt = 0,
    as_json: JsonOpt = False,
    quiet: QuietOpt = False,
) -> None:
    """How many items should each evaluator rate? (study on pilot ratings + recommendation)"""
    from nlgeval.items.plan import load_pilot, plan_items

    setup(quiet)
    df = load_pilot(ratings, score=score, by=by, criterion=criterion)
    ckpt = _checkpoint(out, resume)
    res = plan_items(df, score=score, by=by, method=method, threshold=threshold,
                     replications=replications, n_resamples=nboot, alpha=alpha, seed=seed,
                     workers=workers, file=str(ratings),
                     backend=_backend(backend, workers, scheduler, quiet, as_json),
                     chunk_size=chunk_size, checkpoint=ckpt, resume=resume)
    if out is not None:
        res.study.write(out)
    if as_json:
        emit_json(res)
        return
    typer.echo(res.study.paper_table().to_markdown())
    typer.echo(res.recommendation)


@items_app.command("profiles")
def profiles_cmd(as_json: JsonOpt = False) -> None:
    """Show the paper's evaluator profiles (counts per scale point)."""
    from nlgeval.items.profiles import paper_profiles

    dists = paper_profiles()
    if as_json:
        emit_json([d.to_dict() for d in dists])
        return
    for d in dists:
        typer.echo(f"{d.name:10s} " + "  ".join(f"{lab}={c}" for lab, c in
                                                zip(d.labels, d.counts, strict=True)))


def register(app: typer.Typer) -> None:
    """Add ``nlgeval items ...`` to the top-level app."""
    app.add_typer(items_app, name="items")
