"""CLI ``plan power``: how many items and raters a comparison of two systems needs (power by
simulation, Card et al. 2020). Parse -> :func:`nlgeval.human.power.simulate_power` -> render."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from nlgeval.cli._common import JsonOpt, QuietOpt, SeedOpt, emit_json, setup, split_list
from nlgeval.cli._ratings_source import load_ratings
from nlgeval.errors import InputError

if TYPE_CHECKING:  # pragma: no cover
    from nlgeval.human.power import PowerResult, VarianceComponents
    from nlgeval.tables import PaperTable

plan_app = typer.Typer(help="Plan a human evaluation: power of a system comparison.",
                       no_args_is_help=True)


class DesignOpt(StrEnum):
    """``plan power --design``: how raters and items are shared between the two systems.

    Examples
    --------
    >>> DesignOpt.paired.value
    'paired'
    """

    paired = "paired"
    between = "between"
    independent = "independent"


class PowerTestOpt(StrEnum):
    """``plan power --test``: the analysis of per-item means.

    Examples
    --------
    >>> PowerTestOpt("t").value
    't'
    """

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


# The options of ``plan power``, in the order its ``--help`` lists them: each one's type and help
# text (the flag is the parameter's name; the default is in the signature of :func:`plan_power`).
PilotArg = Annotated[Path | None, typer.Argument(
    help="Pilot ratings (rater,item,system,criterion,score): variance components are "
    "estimated from them (mixed model). Omit to state them with --sd-*.")]
EffectOpt = Annotated[float, typer.Option(
    help="Difference between two systems to detect, on the rating scale.")]
CriterionOpt = Annotated[str | None, typer.Option(help="Criterion of the pilot.")]
ItemsOpt = Annotated[str, typer.Option(help="Numbers of items to try.")]
RatersPerItemOpt = Annotated[str, typer.Option(help="Raters per output to try.")]
DesignChoiceOpt = Annotated[DesignOpt, typer.Option(
    help="paired: same raters for both outputs of an item; between: different raters; "
    "independent: each system on its own items.")]
TestChoiceOpt = Annotated[PowerTestOpt, typer.Option(help="Analysis of per-item means.")]
PoolOpt = Annotated[int | None, typer.Option(help="Size of the rater pool.")]
ComparisonsOpt = Annotated[int, typer.Option(
    help="Planned number of pairwise comparisons (Bonferroni).")]
AlphaOpt = Annotated[float, typer.Option(help="Significance level.")]
TargetOpt = Annotated[float, typer.Option(help="Power to reach.")]
ScaleOpt = Annotated[str | None, typer.Option(
    help="Rating scale 'MIN,MAX': simulated ratings are rounded to its points.")]
SdRaterOpt = Annotated[float | None, typer.Option(help="SD of rater effects.")]
SdItemOpt = Annotated[float | None, typer.Option(help="SD of item effects.")]
SdResidualOpt = Annotated[float | None, typer.Option(help="Residual SD.")]
MeanOpt = Annotated[float | None, typer.Option(help="Mean rating (for --scale).")]
SimsOpt = Annotated[int, typer.Option(help="Simulated experiments per grid point.")]
OutDirOpt = Annotated[Path | None, typer.Option(
    help="Write the table (CSV, Markdown, LaTeX) and the plot (PNG, PDF) here.")]
BackendOpt = Annotated[str, typer.Option(
    help="Run the grid points on serial, process (local pool) or dask (see --scheduler); "
    "never changes a number.")]
SchedulerOpt = Annotated[str | None, typer.Option(
    help="Dask scheduler: local:N (a LocalCluster) or an address such as "
    "tcp://host:8786. Implies --backend dask.")]


@plan_app.command("power")
def plan_power(
    pilot: PilotArg = None,
    effect: EffectOpt = 0.5,
    criterion: CriterionOpt = None,
    items: ItemsOpt = "10,20,40,80,160",
    raters_per_item: RatersPerItemOpt = "1,3,5",
    design: DesignChoiceOpt = DesignOpt.paired,
    test: TestChoiceOpt = PowerTestOpt.t,
    pool: PoolOpt = None,
    comparisons: ComparisonsOpt = 1,
    alpha: AlphaOpt = 0.05,
    target: TargetOpt = 0.8,
    scale: ScaleOpt = None,
    sd_rater: SdRaterOpt = None,
    sd_item: SdItemOpt = None,
    sd_residual: SdResidualOpt = None,
    mean: MeanOpt = None,
    sims: SimsOpt = 1000,
    seed: SeedOpt = 0,
    out_dir: OutDirOpt = None,
    backend: BackendOpt = "serial",
    scheduler: SchedulerOpt = None,
    as_json: JsonOpt = False,
    quiet: QuietOpt = False,
) -> None:
    """How many items and raters per output does a comparison of two systems need?
    Power by simulation (Card et al. 2020).

    \f
    Examples
    --------
    >>> from typer.testing import CliRunner
    >>> from nlgeval.cli import app
    >>> res = CliRunner().invoke(app, ["plan", "power", "--sd-residual", "1", "--effect", "1",
    ...                                "--items", "10,40", "--raters-per-item", "1",
    ...                                "--sims", "200", "--json"])
    >>> res.exit_code
    0
    """
    from nlgeval.human.power import plot_power, simulate_power
    from nlgeval.provenance import run_record

    setup(quiet)
    vc, sc, source = _variance_components(pilot, criterion, scale, sd_rater, sd_item,
                                          sd_residual, mean)
    res = simulate_power(effect, vc, items=_ints(items, "items"),
                         raters_per_item=_ints(raters_per_item, "raters-per-item"),
                         design=design.value, test=test.value, pool=pool,
                         alpha=alpha, comparisons=comparisons, scale=sc, n_sims=sims,
                         seed=seed, target=target, scheduler=scheduler,
                         backend="dask" if scheduler and backend == "serial" else backend)
    table = _power_table(res, vc, source, effect, alpha, comparisons)
    if out_dir is not None:
        table.write(out_dir, "power")
        plot_power(res, out_dir / "power")
    if as_json:
        emit_json({**res.to_dict(), "source": source,
                   "run": run_record(seed=seed, command="plan power")})
        return
    _print_power(table, res, target)


def _variance_components(
    pilot: Path | None, criterion: str | None, scale: str | None, sd_rater: float | None,
    sd_item: float | None, sd_residual: float | None, mean: float | None,
) -> tuple[VarianceComponents, tuple[float, float] | None, str]:
    """The variance components to simulate (:func:`nlgeval.human.power.variance_components`
    on the pilot file's ratings or on the stated SDs), the rating scale (--scale, else the
    pilot corpus's) and where the components come from."""
    from nlgeval.human.power import variance_components
    from nlgeval.human.ratings import parse_scale

    sc = parse_scale(scale)
    df, source = None, "stated variance components"
    if pilot is not None:
        df, sc_pilot, crit = load_ratings(pilot, criterion, scale)
        sc = sc or sc_pilot
        source = f"pilot {pilot} ({crit}, {len(df)} ratings)"
    vc = variance_components(df, sd_rater=sd_rater, sd_item=sd_item, sd_residual=sd_residual,
                             mean=mean, scale=sc)
    return vc, sc, source


def _power_table(res: PowerResult, vc: VarianceComponents, source: str, effect: float,
                 alpha: float, comparisons: int) -> PaperTable:
    """The power grid as a paper table, its caption stating the simulation and its inputs."""
    from nlgeval.tables import PaperTable

    return PaperTable(
        data=res.table.rename(columns={"n_items": "Items", "raters_per_item": "Raters/output",
                                       "n_ratings": "Ratings", "power": "Power",
                                       "mc_se": "MC SE"}),
        caption=f"Simulated power ({res.n_sims} experiments per cell, seed {res.seed}) to "
        f"detect a difference of {effect:g} ({res.test} test, {res.design} design, alpha "
        f"{alpha:g} / {comparisons}); variance components from {source}: rater "
        f"{vc.rater:.3g}, item {vc.item:.3g}, residual {vc.residual:.3g}.",
        label="tab:power", digits={"Power": 3, "MC SE": 3}, notes=res.notes)


def _print_power(table: PaperTable, res: PowerResult, target: float) -> None:
    """The table, then the fewest items that reach ``target`` for each number of raters."""
    typer.echo(table.to_markdown())
    best = res.smallest()
    for r in best.itertuples():
        typer.echo(f"{r.raters_per_item} rater(s) per output: {r.n_items} items reach power "
                   f"{r.power:.2f} >= {target:g}")
    if best.empty:
        typer.echo(f"no design in the grid reaches power {target:g}; try more items or raters")
