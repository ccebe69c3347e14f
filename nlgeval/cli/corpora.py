"""``nlgeval corpora list | info | fetch``: what corpora there are, and getting them.

Also defines :data:`DataDirOpt`, the ``--data-dir`` option other commands share.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from nlgeval.cli._common import JsonOpt, QuietOpt, emit_json, setup

DataDirOpt = Annotated[
    Path | None,
    typer.Option(
        "--data-dir",
        help="Folder laid out like the bundled corpora, see docs/corpora.md (overrides "
        "NLGEVAL_DATA; default: the download cache ~/.cache/nlgeval).",
        file_okay=False,
    ),
]
NoDownloadOpt = Annotated[
    bool, typer.Option("--no-download", help="Never download; fail if there is no local copy.")
]

corpora_app = typer.Typer(
    name="corpora",
    help="List, describe and download the human-evaluation corpora.",
    no_args_is_help=True,
)


@corpora_app.command("list")
def list_cmd(data_dir: DataDirOpt = None, as_json: JsonOpt = False) -> None:
    """List the published corpora nlgeval can load, and whether a local copy exists."""
    from nlgeval.corpora import list_corpora

    rows = list_corpora(data_dir)
    if as_json:
        emit_json(rows)
        return
    from rich.console import Console
    from rich.table import Table

    table = Table("name", "criteria (scale)", "local copy")
    for r in rows:
        crits = ", ".join(
            f"{c['name']} {c['min']:g}-{c['max']:g}" for c in r["criteria"]
        )
        table.add_row(r["name"], crits, r["local_path"] or "no (downloaded on first use)")
    console = Console()
    console.print(table)
    for r in rows:
        console.print(f"[bold]{r['name']}[/bold]: {r['description']} Licence: {r['licence']}")
    typer.echo("Load a user corpus directory with its path instead of a name.")


def _human(summary: dict[str, Any]) -> str:
    lines = [f"{summary['name']}: {summary['description']}"]
    if summary.get("task"):
        lines.append(f"task: {summary['task']}")
    lines.append(
        f"systems: {summary['n_systems']} ({', '.join(summary['systems'])})"
    )
    rpi = summary["references_per_item"]
    lines += [
        f"items: {summary['n_items']}  outputs: {summary['n_outputs']}  "
        f"rated outputs: {summary['n_rated_outputs']}",
        f"references: {summary['n_references']} ({rpi['min']}-{rpi['max']} per item, "
        f"mean {rpi['mean']:.2f})",
        f"judgements: {summary['n_ratings']} by {summary['n_raters']} rater(s)",
    ]
    for c in summary["criteria"]:
        lines.append(f"  criterion {c['name']}: {c['type']} {c['min']:g}-{c['max']:g}")
    if summary.get("licence"):
        lines.append(f"licence: {summary['licence']}")
    for s in summary.get("sources", []):
        if s.get("repository"):
            lines.append(f"source: {s['repository']} @ {s['commit'][:12]}")
    cites = dict.fromkeys(s["citation"] for s in summary.get("sources", []) if s.get("citation"))
    lines += [f"cite: {c}" for c in cites]
    for note in summary.get("notes", []):
        lines.append(f"note: {note}")
    if summary.get("location"):
        lines.append(f"read from: {summary['location']}")
    return "\n".join(lines)


@corpora_app.command("info")
def info_cmd(
    name: Annotated[str, typer.Argument(help="Corpus name (see `corpora list`) or directory.")],
    data_dir: DataDirOpt = None,
    no_download: NoDownloadOpt = False,
    as_json: JsonOpt = False,
    quiet: QuietOpt = False,
) -> None:
    """Load a corpus and show its counts, rating scales, provenance and notes."""
    setup(quiet)
    from nlgeval.corpora import REGISTRY, load_corpus, registered_corpus
    from nlgeval.corpora.store import locate

    corpus = load_corpus(name, data_dir, download=not no_download)
    summary = corpus.summary()
    reg = registered_corpus(name)
    if reg is not None:
        summary["location"] = str(locate(reg.descriptor, data_dir, download=False).folder)
    else:
        summary["location"] = str(Path(name).resolve())
    summary["published"] = reg is not None and reg.name in REGISTRY
    if as_json:
        emit_json(summary)
    else:
        typer.echo(_human(summary))


@corpora_app.command("fetch")
def fetch_cmd(
    name: Annotated[str, typer.Argument(help="Corpus name (see `corpora list`).")],
    force: Annotated[bool, typer.Option("--force", help="Download again even if cached.")] = False,
    verify: Annotated[
        bool, typer.Option("--verify", help="Re-check the SHA-256 of every cached file.")
    ] = False,
    as_json: JsonOpt = False,
    quiet: QuietOpt = False,
) -> None:
    """Download a corpus's pinned files into the cache (~/.cache/nlgeval) and verify them."""
    setup(quiet)
    from nlgeval.corpora import REGISTRY, registered_corpus
    from nlgeval.corpora.store import fetch
    from nlgeval.corpora.store import verify as verify_files
    from nlgeval.errors import InputError

    reg = registered_corpus(name)
    if reg is None:
        raise InputError(f"unknown corpus '{name}' (known: {', '.join(REGISTRY)})")
    desc = reg.descriptor
    folder = fetch(desc, force=force)
    result: dict[str, Any] = {"name": desc.name, "cache": str(folder)}
    not_downloadable = [f.path for f in desc.files if not f.download]
    result["not_downloadable"] = not_downloadable
    if verify:
        report = verify_files(desc, folder)
        result["files"] = report
        bad = [r for r in report if r["status"] == "mismatch"]
        if bad:
            from nlgeval.corpora.store import ChecksumError

            raise ChecksumError(
                f"{len(bad)} cached file(s) of '{desc.name}' do not match their pinned SHA-256, "
                f"e.g. {folder / bad[0]['path']}; run `nlgeval corpora fetch {desc.name} --force`"
            )
    if as_json:
        emit_json(result)
        return
    typer.echo(f"{desc.name}: files in {folder}")
    for p in not_downloadable:
        typer.echo(f"  not downloadable (derived file, see corpora/README.md): {p}")
    if verify:
        typer.echo(f"  verified {sum(r['status'] == 'ok' for r in result['files'])} file(s)")


def register(app: typer.Typer) -> None:
    """Add ``nlgeval corpora ...`` to the top-level app."""
    app.add_typer(corpora_app, name="corpora")
