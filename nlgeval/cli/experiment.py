"""CLI for online evaluation experiments: ``nlgeval experiment init|create|status|export`` and
``nlgeval serve EXPERIMENT_DIR`` (thin layer over :mod:`nlgeval.experiment`)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from nlgeval.cli._common import JsonOpt, QuietOpt, emit_json, setup

DirArg = Annotated[Path, typer.Argument(help="Experiment directory (holds experiment.toml).")]
DbOpt = Annotated[
    str | None,
    typer.Option("--database", help="SQLAlchemy URL, e.g. postgresql+psycopg://user@host/db "
                 "(default: the config's 'database', else DIR/experiment.db, SQLite)."),
]


def _store(directory: Path, database: str | None):  # noqa: ANN202 - internal
    from nlgeval.experiment.build import check_experiment, database_url
    from nlgeval.experiment.config import load_config
    from nlgeval.experiment.storage import Store

    cfg = load_config(directory)
    store = Store(database_url(cfg, database))
    check_experiment(cfg, store)
    return cfg, store


def register(app: typer.Typer) -> None:
    """Add ``experiment`` (sub-commands) and ``serve`` to the top-level app."""
    exp = typer.Typer(
        help="Online human-evaluation experiments (LG-Eval style): create, monitor, export.",
        no_args_is_help=True,
    )
    app.add_typer(exp, name="experiment")

    @exp.command("init")
    def init(
        directory: DirArg,
        mode: Annotated[str, typer.Option(help="absolute, relative or triangle.")] = "absolute",
        force: Annotated[bool, typer.Option("--force", help="Overwrite.")] = False,
    ) -> None:
        """Write a small working example experiment to copy from."""
        from nlgeval.experiment.example import write_example

        path = write_example(directory, mode, overwrite=force)  # type: ignore[arg-type]
        typer.echo(f"wrote an example {mode} experiment to {path}; next: "
                   f"nlgeval experiment create {path}")

    @exp.command("create")
    def create(
        directory: DirArg,
        evaluators: Annotated[int | None, typer.Option(
            "--evaluators", help="Number of evaluators (overrides the config).")] = None,
        seed: Annotated[int | None, typer.Option(
            "--seed", help="Design seed (overrides the config's seed).")] = None,
        database: DbOpt = None,
        force: Annotated[bool, typer.Option(
            "--force", help="Recreate an experiment that has no judgements yet.")] = False,
        base_url: Annotated[str, typer.Option(
            help="Where the server will be reachable (for the printed links).")]
        = "http://127.0.0.1:8000",
        as_json: JsonOpt = False,
        quiet: QuietOpt = False,
    ) -> None:
        """Validate the experiment, allocate trial sets (Latin square or triangle
        questionnaire) and set up its database. Prints the personal links."""
        setup(quiet, as_json)
        from nlgeval.experiment.build import create_experiment

        made = create_experiment(directory, evaluators=evaluators, seed=seed,
                                 database=database, force=force)
        base = base_url.rstrip("/")
        if as_json:
            d = made.to_dict()
            d["researcher_url"] = f"{base}/r/{made.researcher_token}"
            for e in d["evaluators"]:
                e["url"] = f"{base}/e/{e['token']}"
            emit_json(d)
            return
        if made.design_summary and not quiet:
            typer.echo(made.design_summary)
            typer.echo("")
        typer.echo(f"created: {len(made.evaluators)} evaluator(s), "
                   f"{int(made.evaluators['n_trials'].sum())} trials")
        typer.echo(f"researcher view (keep secret): {base}/r/{made.researcher_token}")
        for e in made.evaluators.itertuples(index=False):
            typer.echo(f"evaluator {e.evaluator}: {base}/e/{e.token}")
        typer.echo(f"start the server with: nlgeval serve {directory}")

    @exp.command("status")
    def status(
        directory: DirArg,
        database: DbOpt = None,
        base_url: Annotated[str, typer.Option(help="Base URL for the links.")]
        = "http://127.0.0.1:8000",
        as_json: JsonOpt = False,
    ) -> None:
        """Progress per evaluator (with their personal links)."""
        from nlgeval.experiment.export import progress

        _cfg, store = _store(directory, database)
        try:
            prog = progress(store)
            rtoken = store.meta()["researcher_token"]
        finally:
            store.dispose()
        base = base_url.rstrip("/")
        prog["url"] = base + "/e/" + prog["token"]
        if as_json:
            emit_json({"researcher_url": f"{base}/r/{rtoken}",
                       "done": int(prog["done"].sum()), "total": int(prog["total"].sum()),
                       "evaluators": prog.drop(columns=["token"])})
            return
        typer.echo(f"{int(prog['done'].sum())} of {int(prog['total'].sum())} trials judged")
        show = prog[["evaluator", "practice_done", "practice_total", "done", "total",
                     "finished", "url"]]
        typer.echo(show.to_string(index=False))
        typer.echo(f"researcher view: {base}/r/{rtoken}")

    @exp.command("export")
    def export(
        directory: DirArg,
        out: Annotated[Path | None, typer.Option(
            "--out", help="CSV to write (default: stdout).")] = None,
        include_practice: Annotated[bool, typer.Option(
            "--include-practice", help="Also export practice trials (flagged).")] = False,
        questionnaire: Annotated[Path | None, typer.Option(
            "--questionnaire", help="Also write exit-questionnaire answers to this CSV.")]
        = None,
        database: DbOpt = None,
        spreadsheet: Annotated[bool, typer.Option(
            "--spreadsheet-safe",
            help="Prefix text cells that a spreadsheet would run as a formula (=, +, -, @) "
                 "with an apostrophe; for opening in Excel, not for analysis.")] = False,
    ) -> None:
        """Export judgements as the tidy ratings table (rater, item, system, criterion,
        score, + time_ms, comment ...) that compare/agreement/validate/triangle read."""
        from nlgeval.experiment.export import (
            export_questionnaire,
            export_ratings,
            spreadsheet_safe,
        )

        cfg, store = _store(directory, database)
        try:
            df = export_ratings(store, cfg, include_practice=include_practice)
            if spreadsheet:
                df = spreadsheet_safe(df)
            if questionnaire is not None:
                q = export_questionnaire(store)
                (spreadsheet_safe(q) if spreadsheet else q).to_csv(questionnaire, index=False)
        finally:
            store.dispose()
        if out is None:
            typer.echo(df.to_csv(index=False), nl=False)
        else:
            df.to_csv(out, index=False)
            typer.echo(f"wrote {len(df)} judgement(s) to {out}", err=True)

    @app.command("serve")
    def serve_cmd(
        directory: DirArg,
        host: Annotated[str, typer.Option(help="Interface to listen on.")] = "127.0.0.1",
        port: Annotated[int, typer.Option(help="Port (0 = any free port).")] = 8000,
        threads: Annotated[int, typer.Option(help="Worker threads.")] = 8,
        database: DbOpt = None,
        secure_cookies: Annotated[bool, typer.Option(
            "--secure-cookies",
            help="Mark the session cookie Secure (HTTPS only): use behind an HTTPS proxy.",
        )] = False,
    ) -> None:
        """Serve an experiment to evaluators (run `nlgeval experiment create DIR` first)."""
        from nlgeval.experiment.server import serve

        serve(directory, host=host, port=port, database=database, threads=threads,
              secure_cookies=secure_cookies, announce=lambda s: typer.echo(s, err=False))
