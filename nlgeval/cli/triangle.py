"""``nlgeval triangle plan|critical|design|analyse|tables``: the NLG triangle test."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from nlgeval.cli._common import JsonOpt, QuietOpt, emit_json, setup, split_list, write_frame
from nlgeval.errors import InputError

triangle_app = typer.Typer(
    help="The NLG triangle test (Gonzalez-Corbelle et al. 2020): plan, critical values, "
    "questionnaire design, analysis and the paper's tables.",
    no_args_is_help=True,
)

AlphaOpt = Annotated[float, typer.Option("--alpha", help="Risk of concluding a difference "
                                         "that does not exist (type I of the difference test).")]
BetaOpt = Annotated[float, typer.Option("--beta", help="Risk of missing a difference of size pd "
                                        "(type I of the similarity test).")]
PdOpt = Annotated[float | None, typer.Option(
    "--pd", help="Proportion of judges perceiving a difference (0-1), e.g. 0.3.")]
TestOpt = Annotated[str, typer.Option("--test", help="difference or similarity.")]


def _floats(value: str | None, name: str) -> list[float] | None:
    items = split_list(value)
    if items is None:
        return None
    try:
        return [float(v) for v in items]
    except ValueError:
        raise InputError(
            f"{name} must be a comma-separated list of numbers, got {value!r}"
        ) from None


def _ints(value: str | None, name: str) -> list[int] | None:
    """``"6-24"`` or ``"18,24,30-36"`` -> list of ints."""
    items = split_list(value)
    if items is None:
        return None
    out: list[int] = []
    try:
        for part in items:
            if "-" in part:
                lo, hi = (int(p) for p in part.split("-", 1))
                if hi < lo:
                    raise ValueError
                out += list(range(lo, hi + 1))
            else:
                out.append(int(part))
    except ValueError:
        raise InputError(
            f"{name} must be numbers or ranges like '6-24' or '18,24,30', got {value!r}"
        ) from None
    return out


@triangle_app.command("plan")
def plan_cmd(
    alpha: AlphaOpt = 0.05,
    beta: BetaOpt = 0.05,
    pd: PdOpt = None,
    test: TestOpt = "difference",
    judges: Annotated[int | None, typer.Option(
        "--judges", help="Inverse plan: which alpha, beta, pd this many judges supports.")] = None,
    alphas: Annotated[str | None, typer.Option(help="Inverse plan: alphas to consider.")] = None,
    betas: Annotated[str | None, typer.Option(help="Inverse plan: betas to consider.")] = None,
    pds: Annotated[str | None, typer.Option(help="Inverse plan: pds to consider.")] = None,
    plot: Annotated[Path | None, typer.Option(
        "--plot", help="Write the power saw-tooth to PATH.png and PATH.pdf.")] = None,
    as_json: JsonOpt = False,
    quiet: QuietOpt = False,
) -> None:
    """Number of judges for alpha, beta, pd (first n and stable n), or the inverse (--judges)."""
    from nlgeval.triangle.planning import (
        PAPER_ALPHAS,
        PAPER_BETAS,
        PAPER_PDS,
        sample_size,
        supported_designs,
    )

    setup(quiet)
    if judges is not None:
        df = supported_designs(
            judges,
            alphas=_floats(alphas, "--alphas") or PAPER_ALPHAS,
            betas=_floats(betas, "--betas") or PAPER_BETAS,
            pds=[pd] if pd is not None else (_floats(pds, "--pds") or PAPER_PDS),
            test=test,  # type: ignore[arg-type]  # option string, checked by the library
        )
        if as_json:
            emit_json({"judges": judges, "test": test, "designs": df,
                       "supported": df[df["supported"]]})
            return
        ok = df[df["supported"]]
        typer.echo(f"{judges} judges support {len(ok)} of {len(df)} (alpha, beta, pd) "
                   f"combinations for a test of {test} (exact power at n = {judges}):")
        typer.echo(ok.to_string(index=False) if len(ok) else "  none")
        return
    if pd is None:
        raise InputError("--pd is required (the proportion of judges perceiving a difference, "
                         "e.g. 0.3), or give --judges for the inverse plan")
    ss = sample_size(alpha, beta, pd, test)  # type: ignore[arg-type]  # option string, checked by the library
    out = ss.to_dict()
    if plot is not None:
        from nlgeval.triangle.plot import plot_power_curve

        out["plot"] = [str(p) for p in plot_power_curve(
            plot, alpha=alpha, beta=beta, pd=pd, test=test)]  # type: ignore[arg-type]  # option string, checked by the library
    if as_json:
        emit_json(out)
        return
    typer.echo(
        f"Triangle test of {test}, alpha = {alpha:g}, beta = {beta:g}, pd = {100 * pd:g}%:\n"
        f"  judges (first n reaching power {ss.target_power:.3g}; what Table 1 prints): "
        f"{ss.judges}  (power {ss.power:.4f})\n"
        f"  judges_stable (every larger n also reaches it): {ss.judges_stable}  "
        f"(power {ss.power_stable:.4f})\n"
        f"  ISO 4120 minimum for a {test} test: {ss.recommended_minimum}; "
        f"recommended: {ss.judges_recommended}"
    )
    if ss.note:
        typer.echo(f"  note: {ss.note}")
    if plot is not None:
        typer.echo(f"  plot: {', '.join(out['plot'])}")


@triangle_app.command("critical")
def critical_cmd(
    n: Annotated[int, typer.Option("--n", help="Number of judges (answers).")],
    alpha: AlphaOpt = 0.05,
    beta: BetaOpt = 0.05,
    pd: PdOpt = None,
    test: TestOpt = "difference",
    method: Annotated[str, typer.Option(
        "--method", help="exact (binomial) or normal (the approximation of "
                         "González-Corbelle et al. 2020).")] = "exact",
    pd_true: Annotated[float | None, typer.Option(
        "--pd-true", help="Also report the exact power if this proportion truly "
        "discriminates (default: pd for difference, 0 for similarity).")] = None,
    as_json: JsonOpt = False,
    quiet: QuietOpt = False,
) -> None:
    """Minimum correct answers for a difference (Table 2) or maximum for similarity (Table 3)."""
    from nlgeval.triangle.planning import critical_value

    setup(quiet)
    res = critical_value(n, alpha=alpha, beta=beta, pd=pd, test=test,  # type: ignore[arg-type]  # option string, checked by the library
                         method=method, pd_true=pd_true)  # type: ignore[arg-type]  # option string, checked by the library
    if as_json:
        emit_json(res)
    elif res.test == "difference":
        x = res.min_correct
        typer.echo(f"minimum correct answers out of {res.n} to conclude a difference at alpha = "
                   f"{alpha:g} ({method}): {x if x is not None else 'not attainable'}")
    else:
        x = res.max_correct
        typer.echo(f"maximum correct answers out of {res.n} to conclude similarity at beta = "
                   f"{beta:g}, pd = {100 * (pd or 0):g}% ({method}): "
                   f"{x if x is not None else 'not attainable'}")


QUESTIONNAIRE_FORMATS = (".csv", ".tsv", ".tab", ".json", ".jsonl")


@triangle_app.command("design")
def design_cmd(
    judges: Annotated[int, typer.Option("--judges", help="Number of judges.")],
    seed: Annotated[int, typer.Option("--seed", help="Seed for numpy.random.default_rng.")],
    test: TestOpt = "difference",
    evaluations_per_judge: Annotated[int, typer.Option(
        "--evaluations-per-judge", "-r", help="Triads per judge (difference tests only).")] = 1,
    source_a: Annotated[str | None, typer.Option("--source-a", help="Name of source A.")] = None,
    source_b: Annotated[str | None, typer.Option("--source-b", help="Name of source B.")] = None,
    items: Annotated[str | None, typer.Option(
        "--items", help="Number of matched items, or a comma-separated list of item ids.")] = None,
    pool: Annotated[Path | None, typer.Option(
        "--pool", help="CSV/TSV/JSONL of texts: source (or system), item, text.")] = None,
    out: Annotated[Path | None, typer.Option(
        "--out", help="Write the questionnaire (.csv, .tsv, .json or .jsonl).")] = None,
    as_json: JsonOpt = False,
    quiet: QuietOpt = False,
) -> None:
    """Build a balanced triangle questionnaire (six orders in groups of six)."""
    import pandas as pd

    from nlgeval.triangle.design import design_summary, read_pool, triangle_design

    setup(quiet)
    item_arg: list[str] | int | None = None
    if items is not None:
        parts = split_list(items) or []
        item_arg = int(parts[0]) if len(parts) == 1 and parts[0].isdigit() else parts
    pool_df = None if pool is None else read_pool(pool)
    try:
        df = triangle_design(
            judges, seed=seed, source_a=source_a, source_b=source_b, items=item_arg,
            pool=pool_df, evaluations_per_judge=evaluations_per_judge,
            test=test,  # type: ignore[arg-type]  # option string, checked by the library
        )
    except InputError as err:  # a --source-a/-b the pool does not have: name the pool file
        if pool is None or err.file is not None or err.column not in ("source", "system"):
            raise
        raise InputError(err.message, file=str(pool), column=err.column) from None
    summary = design_summary(df)
    if out is not None:
        write_frame(df, out, QUESTIONNAIRE_FORMATS)
        summary["out"] = str(out)
    if as_json:
        emit_json({"summary": summary, "trials": df})
        return
    typer.echo(f"Triangle questionnaire: {summary['evaluations']} evaluations by "
               f"{summary['judges']} judges (test of {summary['test']}, seed {seed})")
    typer.echo("  order counts: " + ", ".join(f"{k} {v}" for k, v in
                                             summary["order_counts"].items()))
    for note in summary["notes"]:
        typer.echo(f"  note: {note}", err=True)
    if out is not None:
        typer.echo(f"  written to {out}")
    else:
        with pd.option_context("display.max_rows", 60, "display.width", 160):
            typer.echo(df.drop(columns=[c for c in df.columns if c.startswith("text_")])
                       .to_string(index=False))


@triangle_app.command("analyse")
def analyse_cmd(
    correct: Annotated[int | None, typer.Option("--correct", help="Number of correct answers.")]
    = None,
    n: Annotated[int | None, typer.Option("--n", help="Number of answers (judges).")] = None,
    responses: Annotated[Path | None, typer.Option(
        "--responses", help="Answers: a 0/1 'correct' column, or tidy ratings with criterion "
        "odd_one_out and score 1/0.")] = None,
    test: TestOpt = "difference",
    alpha: AlphaOpt = 0.05,
    beta: BetaOpt = 0.05,
    pd: PdOpt = None,
    conf_level: Annotated[float, typer.Option(
        "--conf-level", help="Level of the two-sided Clopper-Pearson intervals.")] = 0.95,
    as_json: JsonOpt = False,
    quiet: QuietOpt = False,
) -> None:
    """Exact binomial test, pc, pd, d' with intervals and a plain-language conclusion."""
    from nlgeval.io import read_table
    from nlgeval.triangle.analysis import analyse, analyse_responses
    from nlgeval.triangle.text import describe

    setup(quiet)
    if responses is not None:
        if correct is not None or n is not None:
            raise InputError("give either --responses or --correct with --n, not both")
        df = read_table(responses)
        result = analyse_responses(df, test=test, alpha=alpha, beta=beta, pd=pd,  # type: ignore[arg-type]  # option string, checked by the library
                                   confidence_level=conf_level, file=responses)
    else:
        if correct is None or n is None:
            raise InputError("give --correct and --n (or --responses FILE)")
        result = analyse(correct, n, test=test, alpha=alpha, beta=beta, pd=pd,  # type: ignore[arg-type]  # option string, checked by the library
                         confidence_level=conf_level)
    if as_json:
        emit_json(result)
    else:
        typer.echo(describe(result))


@triangle_app.command("tables")
def tables_cmd(
    out: Annotated[Path, typer.Option("--out", help="Directory for the table files.")],
    n2: Annotated[str, typer.Option("--n2", help="Table 2 numbers of judges, e.g. 6-24.")]
    = "6-24",
    n3: Annotated[str, typer.Option("--n3", help="Table 3 numbers of judges, e.g. 18,24,30,36.")]
    = "18,24,30,36",
    alphas: Annotated[str, typer.Option(help="Alphas (Tables 1, 2).")] = "0.2,0.1,0.05,0.01,0.001",
    betas: Annotated[str, typer.Option(help="Betas (Tables 1, 3).")] = "0.2,0.1,0.05,0.01,0.001",
    pds: Annotated[str, typer.Option(help="pds (Tables 1, 3).")] = "0.5,0.4,0.3,0.2,0.1",
    method: Annotated[str, typer.Option(
        "--method", help="Tables 2-3: exact or normal (the approximation of "
                         "González-Corbelle et al. 2020).")] = "exact",
    which: Annotated[str, typer.Option(
        "--which", help="Table 1: first (as printed) or stable number of judges.")] = "first",
    formats: Annotated[str, typer.Option(help="Comma-separated: csv, md, tex, html.")]
    = "csv,md,tex",
    as_json: JsonOpt = False,
    quiet: QuietOpt = False,
) -> None:
    """Regenerate Tables 1-3 of González-Corbelle et al. (2020) for any ranges (CSV, MD, LaTeX)."""
    from nlgeval.triangle.critical import check_method
    from nlgeval.triangle.tables import write_paper_tables

    setup(quiet)
    check_method(method)
    if which not in ("first", "stable"):
        raise InputError(f"--which must be 'first' or 'stable', got {which!r}")
    fmts = split_list(formats) or ["csv", "md", "tex"]
    bad = [f for f in fmts if f not in ("csv", "md", "tex", "html")]
    if bad:
        raise InputError(f"unknown table format(s) {', '.join(bad)}; use csv, md, tex, html")
    paths = write_paper_tables(
        out,
        fmts,
        ns2=_ints(n2, "--n2") or [],
        ns3=_ints(n3, "--n3") or [],
        alphas=tuple(_floats(alphas, "--alphas") or []),
        betas=tuple(_floats(betas, "--betas") or []),
        pds=tuple(_floats(pds, "--pds") or []),
        method=method,
        which=which,
    )
    if as_json:
        emit_json({"out": str(out), "files": [str(p) for p in paths], "method": method,
                   "which": which})
    else:
        for p in paths:
            typer.echo(str(p))


def register(app: typer.Typer) -> None:
    """Add ``nlgeval triangle ...`` to the top-level app."""
    app.add_typer(triangle_app, name="triangle")
