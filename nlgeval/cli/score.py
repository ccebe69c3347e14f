"""``nlgeval score``: automatic metric scores for every output of a corpus.

A thin layer over :func:`nlgeval.metrics.scoring.score_corpus`.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from nlgeval.cli._common import (
    JsonOpt,
    QuietOpt,
    check_table_path,
    emit_json,
    setup,
    split_list,
    write_frame,
)

if TYPE_CHECKING:
    from nlgeval.metrics.scoring import ScoreResult

DEFAULT_METRICS = "bleu,chrf,chrf++,ter,rougeL"


SEGMENT_FORMATS = (".csv", ".tsv", ".parquet")


def score(
    corpus: Annotated[
        str, typer.Argument(help="Corpus name (see `nlgeval corpora list`) or directory.")
    ],
    metrics: Annotated[
        str,
        typer.Option(
            "--metrics",
            "-m",
            help="Comma-separated metric specs, e.g. 'bleu:lowercase=true,rougeL'. "
            "Options: name:key=value[,key=value] -- separate metrics with ';' when a spec "
            "has several options. See 'nlgeval metrics'.",
        ),
    ] = DEFAULT_METRICS,
    systems: Annotated[
        str | None, typer.Option("--systems", help="Comma-separated systems (default: all).")
    ] = None,
    rated_only: Annotated[
        bool, typer.Option("--rated-only", help="Only outputs with a human rating.")
    ] = False,
    data_dir: Annotated[
        Path | None, typer.Option("--data-dir", help="Folder laid out like the bundled "
                                               "corpora (see docs/corpora.md).")
    ] = None,
    out: Annotated[
        Path | None,
        typer.Option("--out", "-o", help="Write tidy segment scores to FILE.csv|.tsv|.parquet."),
    ] = None,
    no_cache: Annotated[
        bool, typer.Option("--no-cache", help="Do not read or write the score cache.")
    ] = False,
    jobs: Annotated[
        int | None, typer.Option("--jobs", "-j", help="Worker processes (default: all cores); "
                                 "with --backend dask and no --scheduler, the LocalCluster's "
                                 "size.")
    ] = None,
    backend: Annotated[
        str | None, typer.Option("--backend", help="Score chunks of outputs as tasks on serial, "
                                 "process (a local pool) or dask (see --scheduler); never "
                                 "changes a number. Default: this process with --jobs.")
    ] = None,
    scheduler: Annotated[
        str | None, typer.Option("--scheduler", help="Dask scheduler: local:N (a LocalCluster of "
                                 "N worker processes) or an address such as tcp://host:8786 / a "
                                 "scheduler file. Implies --backend dask.")
    ] = None,
    chunk_size: Annotated[
        int | None, typer.Option("--chunk-size", help="Outputs per task with --backend "
                                 "(default: about 4 tasks per worker, at least 500).")
    ] = None,
    as_json: JsonOpt = False,
    quiet: QuietOpt = False,
) -> None:
    """Score every output with automatic metrics; print corpus-level scores per system."""
    setup(quiet)
    from nlgeval.corpora import load_corpus
    from nlgeval.metrics.scoring import score_corpus

    specs = _checked_specs(metrics)  # fail fast on a bad spec, before loading the corpus
    if out is not None:
        check_table_path(out, SEGMENT_FORMATS)
    c = load_corpus(corpus, data_dir)
    be = _backend(backend, jobs, scheduler, announce=not (quiet or as_json))
    res = score_corpus(
        c,
        specs,
        systems=split_list(systems),
        rated_only=rated_only,
        cache=not no_cache,
        n_jobs=jobs,
        backend=be,
        chunk_size=chunk_size,
    )
    if out is not None:
        write_frame(res.segments, out, SEGMENT_FORMATS)
    _show(res, c.name, out, as_json, quiet)


def _checked_specs(metrics: str) -> list[str]:
    """The metric specs of ``--metrics``, each built once to check it."""
    from nlgeval.metrics import get_metric, parse_metric_list

    specs = parse_metric_list(metrics)
    for s in specs:
        get_metric(s)
    return specs


def _backend(backend: str | None, jobs: int | None, scheduler: str | None, *,
             announce: bool) -> Any:
    """The execution backend of ``--backend``/``--scheduler``, or ``None`` (this process)."""
    if backend is None and scheduler is None:
        return None
    from nlgeval.parallel import get_backend

    return get_backend(backend, jobs, scheduler=scheduler,
                       announce=(lambda s: typer.echo(s, err=True)) if announce else None)


def _show(res: ScoreResult, corpus_name: str, out: Path | None, as_json: bool,
          quiet: bool) -> None:
    """The JSON object, or the table of corpus-level scores (and where the segments went)."""
    if as_json:
        emit_json({
            "corpus": corpus_name,
            **res.to_dict(),
            "n_segments": int(len(res.segments)),
            "out": str(out) if out is not None else None,
        })
        return
    _print_table(res, corpus_name)
    if out is not None and not quiet:
        typer.echo(f"segment scores: {out}", err=True)


def _print_table(res: ScoreResult, corpus_name: str) -> None:
    from rich.console import Console
    from rich.table import Table

    cs = res.corpus_scores
    wide = cs.pivot_table(index="system", columns="metric", values="score", sort=False)
    table = Table(title=f"corpus-level scores: {corpus_name}")
    table.add_column("system")
    for col in wide.columns:
        arrow = "↑" if res.higher_is_better.get(col, True) else "↓"
        table.add_column(f"{col} {arrow}", justify="right")
    for sysname, row in wide.iterrows():
        table.add_row(str(sysname), *[f"{v:.2f}" for v in row.tolist()])
    console = Console()
    console.print(table)
    for label, sig in res.signatures.items():
        console.print(f"[dim]{label}: {sig}[/dim]", highlight=False, soft_wrap=True)


def metrics_cmd(as_json: JsonOpt = False) -> None:
    """List available metrics with their options (built-in and plugins)."""
    from nlgeval.metrics import describe_metrics

    info = describe_metrics()
    if as_json:
        emit_json(info)
        return
    for m in info:
        if "error" in m:
            typer.echo(f"{m['name']}: {m['error']}")
            continue
        opts = ", ".join(f"{k}={v['default']}" for k, v in m["options"].items())
        direction = "higher is better" if m["higher_is_better"] else "lower is better"
        typer.echo(f"{m['name']}  ({direction}) {m['description']}")
        if opts:
            typer.echo(f"    options: {opts}")


def register(app: typer.Typer) -> None:
    """Add ``score`` and ``metrics`` to the top-level app."""
    app.command(name="score")(score)
    app.command(name="metrics")(metrics_cmd)
