"""CLI for online evaluation experiments: ``nlgeval experiment
init|create|status|export|password|simulate`` and
``nlgeval serve EXPERIMENT_DIR`` (thin layer over :mod:`nlgeval.experiment`)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from nlgeval.cli._common import JsonOpt, QuietOpt, emit_json, setup

DirArg = Annotated[Path, typer.Argument(help="Experiment directory (holds experiment.toml).")]
DbOpt = Annotated[
    str | None,
    typer.Option("--database", help="SQLAlchemy URL, e.g. postgresql+psycopg://user@host/db "
                 "(default: the one `create` remembered, else the config's 'database', else "
                 "DIR/experiment.db, SQLite)."),
]
BaseOpt = Annotated[
    str | None,
    typer.Option("--base-url", help="Where evaluators reach the server, for the printed links "
                 "(default: the one `create --base-url` remembered, else "
                 "http://127.0.0.1:8000)."),
]


def _store(directory: Path, database: str | None):  # noqa: ANN202 - internal
    from nlgeval.experiment.build import check_experiment, database_url
    from nlgeval.experiment.config import load_config
    from nlgeval.experiment.storage import Store

    cfg = load_config(directory)
    store = Store(database_url(cfg, database))
    check_experiment(cfg, store)
    return cfg, store


def _add_init(exp: typer.Typer) -> None:
    """``experiment init``: write an example study."""

    @exp.command("init")
    def init(
        directory: DirArg,
        mode: Annotated[str, typer.Option(
            help="absolute, relative, triangle, mqm, esa or bws.")] = "absolute",
        force: Annotated[bool, typer.Option("--force", help="Overwrite.")] = False,
    ) -> None:
        """Write a small working example experiment to copy from."""
        from nlgeval.experiment.example import write_example

        path = write_example(directory, mode, overwrite=force)  # type: ignore[arg-type]  # checked there
        typer.echo(f"wrote an example {mode} experiment to {path}; next: "
                   f"nlgeval experiment create {path}")


def _add_create(exp: typer.Typer) -> None:
    """``experiment create``: allocate the trial sets and set up the database."""

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
        base_url: BaseOpt = None,
        as_json: JsonOpt = False,
        quiet: QuietOpt = False,
    ) -> None:
        """Validate the experiment, allocate trial sets (Latin square or triangle
        questionnaire) and set up its database. Prints the personal links. --database and
        --base-url are remembered for serve, status and export."""
        setup(quiet)
        from nlgeval.experiment.build import create_experiment
        from nlgeval.experiment.settings import base_url_for
        from nlgeval.experiment.storage import Store

        made = create_experiment(directory, evaluators=evaluators, seed=seed,
                                 database=database, force=force, base_url=base_url)
        base = base_url_for(directory, base_url)
        store = Store(made.database)
        try:
            join = store.meta().get("join_token")
        finally:
            store.dispose()
        from nlgeval.experiment.config import load_config

        crowd = load_config(directory).crowd
        join_url = f"{base}/join/{join}" if crowd and crowd.open_link and join else None
        if as_json:
            d = made.to_dict()
            d["base_url"] = base
            d["researcher_url"] = f"{base}/r/{made.researcher_token}"
            d["dashboard_url"] = f"{base}/dashboard"
            d["join_url"] = join_url
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
        if join_url:
            typer.echo(f"open sign-up link (hands out the next free set): {join_url}")
        typer.echo(f"start the server with: nlgeval serve {directory}")


def _add_status(exp: typer.Typer) -> None:
    """``experiment status``: progress and quality flags."""

    @exp.command("status")
    def status(
        directory: DirArg,
        database: DbOpt = None,
        base_url: BaseOpt = None,
        as_json: JsonOpt = False,
    ) -> None:
        """Progress per evaluator (with their personal links and QC flags), per system and
        per item."""
        from nlgeval.experiment.export import progress, quality_flags
        from nlgeval.experiment.settings import base_url_for
        from nlgeval.experiment.status import items_summary, progress_by

        cfg, store = _store(directory, database)
        try:
            prog = progress(store)
            flags = quality_flags(store, cfg)
            rtoken = store.meta()["researcher_token"]
            by_system, by_item = progress_by(store, "system"), progress_by(store, "item")
            codes = None
            if cfg.crowd is not None and cfg.crowd.participant_codes:
                from nlgeval.experiment.participants import participant_codes
                from nlgeval.experiment.settings import secret_key

                codes = participant_codes(store, cfg.crowd, secret_key(directory).encode())
        finally:
            store.dispose()
        base = base_url_for(directory, base_url)
        prog["url"] = base + "/e/" + prog["token"]
        prog["qc_flags"] = flags["flags"].to_numpy() if len(flags) else []
        if as_json:
            emit_json({"researcher_url": f"{base}/r/{rtoken}",
                       "dashboard_url": f"{base}/dashboard", "base_url": base,
                       "done": int(prog["done"].sum()), "total": int(prog["total"].sum()),
                       "evaluators": prog.drop(columns=["token"]),
                       "systems": by_system, "items": by_item,
                       **({} if codes is None else {"completion_codes": codes})})
            return
        typer.echo(f"{int(prog['done'].sum())} of {int(prog['total'].sum())} trials judged")
        show = prog[["evaluator", "practice_done", "practice_total", "done", "total",
                     "finished", "qc_flags", "url"]]
        typer.echo(show.to_string(index=False))
        typer.echo("\nper system:\n" + by_system.to_string(index=False))
        typer.echo(items_summary(by_item))
        for c in codes or []:
            typer.echo(f"completion code of {c['participant'] or c['evaluator']}: "
                       + c["code"] + (" (finished too fast: not shown to them; review "
                                      "first)" if c["too_fast"] else ""))
        typer.echo(f"researcher view: {base}/r/{rtoken}")


def _add_export(exp: typer.Typer) -> None:
    """``experiment export``: the tidy ratings table and what goes with it."""

    @exp.command("export")
    def export(
        directory: DirArg,
        out: Annotated[Path | None, typer.Option(
            "--out", help="A folder (ratings.csv, flags.csv, questionnaire.csv, and spans.csv "
            "for span modes), or a FILE.csv for the ratings alone (default: stdout).")] = None,
        include_practice: Annotated[bool, typer.Option(
            "--include-practice", help="Also export practice trials (flagged).")] = False,
        questionnaire: Annotated[Path | None, typer.Option(
            "--questionnaire", help="Also write exit-questionnaire answers to this CSV.")]
        = None,
        include_checks: Annotated[bool, typer.Option(
            "--include-checks", help="Also export attention-check trials (qc_check names "
            "them).")] = False,
        flags: Annotated[Path | None, typer.Option(
            "--flags", help="Also write the per-evaluator QC flags to this CSV.")] = None,
        database: DbOpt = None,
        participants: Annotated[Path | None, typer.Option(
            "--participants", help="Also write one row per participant (platform ids, "
            "consent time, completion code, time on task) to this CSV, for paying and "
            "audits.")] = None,
        bws_logit: Annotated[float | None, typer.Option(
            "--bws-logit", help="Best-worst scaling, with --out FOLDER: also fit the maxdiff "
            "logit (Marley & Louviere 2005) with this Gaussian prior (0: maximum likelihood) "
            "into bws_logit.csv.")] = None,
        spreadsheet: Annotated[bool, typer.Option(
            "--spreadsheet-safe",
            help="Prefix text cells that a spreadsheet would run as a formula (=, +, -, @) "
                 "with an apostrophe; for opening in Excel, not for analysis.")] = False,
    ) -> None:
        """Export judgements as the tidy ratings table (rater, item, system, criterion,
        score, + time_ms, time_on_task_ms, QC flags, comment ...) that
        compare/agreement/validate/triangle read; relative judgements as pairs (system,
        system_b, score: the preference for system). --out FOLDER also writes the QC flags,
        the questionnaire answers and the mode's own tables (spans.csv for span modes)."""
        from nlgeval.experiment.export import export_ratings, spreadsheet_safe

        folder = out is not None and out.suffix.lower() != ".csv"
        if folder and spreadsheet:
            from nlgeval.errors import InputError

            raise InputError("--spreadsheet-safe writes one CSV: give --out FILE.csv")
        cfg, store = _store(directory, database)
        try:
            if folder:
                from nlgeval.experiment.export_files import write_export

                files = write_export(store, cfg, out,  # type: ignore[arg-type]  # folder: out set
                                     include_practice=include_practice,
                                     include_checks=include_checks, logit_prior=bws_logit)
            df = export_ratings(store, cfg, include_practice=include_practice,
                                include_checks=include_checks)
            if spreadsheet:
                df = spreadsheet_safe(df)
            _side_tables(store, cfg, directory, spreadsheet, flags=flags,
                         participants=participants, questionnaire=questionnaire)
        finally:
            store.dispose()
        if folder:
            typer.echo(f"wrote {len(df)} judgement(s) to {', '.join(map(str, files.values()))}",
                       err=True)
        elif out is None:
            typer.echo(df.to_csv(index=False), nl=False)
        else:
            df.to_csv(out, index=False)
            typer.echo(f"wrote {len(df)} judgement(s) to {out}", err=True)


def _side_tables(store: Any, cfg: Any, directory: Path, spreadsheet: bool,
                 **paths: Path | None) -> None:
    """``export --flags/--participants/--questionnaire FILE``: write the tables asked for
    (text cells made spreadsheet-safe with ``spreadsheet``)."""
    from nlgeval.experiment.export import (
        export_questionnaire,
        participants_table,
        quality_flags,
        spreadsheet_safe,
    )
    from nlgeval.experiment.settings import secret_key

    make = {"flags": lambda: quality_flags(store, cfg),
            "participants": lambda: participants_table(store, cfg,
                                                       secret_key(directory).encode()),
            "questionnaire": lambda: export_questionnaire(store)}
    for name, path in paths.items():
        if path is not None:
            table = make[name]()
            safe = spreadsheet and name != "flags"  # flags: no free text
            (spreadsheet_safe(table) if safe else table).to_csv(path, index=False)


def _add_password(exp: typer.Typer) -> None:
    """``experiment password``: the researcher dashboard's password."""

    @exp.command("password")
    def password(
        directory: DirArg,
        database: DbOpt = None,
        from_stdin: Annotated[bool, typer.Option(
            "--password-stdin", help="Read the password from standard input (first line).")]
        = False,
    ) -> None:
        """Set the researcher dashboard's password (stored as a salted scrypt hash; /login,
        then /dashboard). Setting a new one logs every open dashboard session out."""
        import sys

        from werkzeug.security import generate_password_hash

        from nlgeval.errors import InputError
        from nlgeval.experiment.researcher_auth import set_password

        if from_stdin:
            pw = sys.stdin.readline().rstrip("\n")
        else:
            pw = typer.prompt("Researcher password", hide_input=True,
                              confirmation_prompt=True)
        if len(pw) < 10:
            raise InputError("the researcher password needs at least 10 characters")
        _cfg, store = _store(directory, database)
        try:
            set_password(store, generate_password_hash(pw))  # ends every session
        finally:
            store.dispose()
        typer.echo("researcher password set; log in at <base URL>/login")


def _add_serve(app: typer.Typer) -> None:
    """``serve``: the experiment on a waitress server."""

    @app.command("serve")
    def serve_cmd(
        directory: DirArg,
        host: Annotated[str, typer.Option(help="Interface to listen on.")] = "127.0.0.1",
        port: Annotated[int, typer.Option(help="Port (0 = any free port).")] = 8000,
        threads: Annotated[int, typer.Option(
            help="Worker threads per process (they run the app; more mostly wait for the GIL)."),
        ] = 4,
        processes: Annotated[int | None, typer.Option(
            help="Server processes sharing the port (POSIX; one Python process uses one core; "
                 "default: one per core, at most 4)."),
        ] = None,
        database: DbOpt = None,
        secure_cookies: Annotated[bool, typer.Option(
            "--secure-cookies",
            help="Mark the session cookie Secure (HTTPS only): use behind an HTTPS proxy.",
        )] = False,
        base_url: BaseOpt = None,
        proxies: Annotated[int, typer.Option(
            "--proxies", help="Reverse proxies in front of the server whose X-Forwarded-For "
            "names the client (the sign-up limit counts per client address).")] = 0,
    ) -> None:
        """Serve an experiment to evaluators (run `nlgeval experiment create DIR` first)."""
        from nlgeval.experiment.server import serve

        serve(directory, host=host, port=port, database=database, threads=threads,
              processes=processes, secure_cookies=secure_cookies, base_url=base_url,
              proxies=proxies, announce=lambda s: typer.echo(s, err=s.startswith("warning")))


def _add_simulate(exp: typer.Typer) -> None:
    """``experiment simulate``: a dry run with simulated evaluators over HTTP."""

    @exp.command("simulate")
    def simulate(
        directory: DirArg,
        evaluators: Annotated[int, typer.Option(
            "--evaluators", help="Number of simulated evaluators.")] = 6,
        seed: Annotated[int, typer.Option("--seed", help="Seeds every simulated answer.")] = 1,
        behaviour: Annotated[str | None, typer.Option(
            "--behaviour", help="Mix of diligent, spammer and attention-fail evaluators, e.g. "
            "diligent=4,spammer=1,attention-fail=1 (the rest: diligent).")] = None,
        quality: Annotated[str | None, typer.Option(
            "--quality", help="Latent quality in [0, 1] per system that diligent raters "
            "follow, e.g. human=0.9,neural=0.6 (default: 0.8 for the first system down to "
            "0.2 for the last).")] = None,
        pace_ms: Annotated[int, typer.Option(
            "--pace-ms", help="Wait this long before each answer, on the server's own clock "
            "(a load test at a steady pace). 0: nobody waits, and each page's time comes from "
            "the simulated evaluator's clock (reading and answering at a human pace; spammers "
            "click through).")] = 0,
        concurrency: Annotated[int, typer.Option(
            "--concurrency", help="Simulated evaluators taking part at once (a load test; "
            "who gets which set through a sign-up link then depends on timing).")] = 1,
        database: DbOpt = None,
        as_json: JsonOpt = False,
    ) -> None:
        """Dry run: start the study on a temporary local server and take part as simulated
        evaluators through the real pages (sign-up link, consent, every trial and attention
        check, questionnaire). Their answers are stored like anyone's, so status, export and
        the analyses run on them; delete the database (or create a new one) before the real
        study."""
        from nlgeval.experiment.simulate import simulate_experiment

        r = simulate_experiment(directory, evaluators=evaluators, seed=seed,
                                behaviour=behaviour, qualities=_qualities(quality),
                                database=database, pace_ms=pace_ms,
                                concurrency=concurrency)
        if as_json:
            emit_json(r)
            return
        from nlgeval.experiment.simulate import format_duration as dur

        typer.echo(r.evaluators.to_string(index=False))
        shown = ", ".join(f"{s}={v:g}" for s, v in r.qualities.items())
        typer.echo(f"{int((r.evaluators['outcome'] == 'finished').sum())} of {evaluators} "
                   f"simulated evaluator(s) finished ({r.requests} requests; simulated time "
                   f"{dur(r.simulated_seconds)}, {dur(r.evaluator_seconds)} of evaluators' "
                   f"time; real time {r.seconds:.1f} s); latent "
                   f"qualities: {shown}; next: nlgeval experiment export {directory} --out DIR")


def _qualities(spec: str | None) -> dict[str, float] | None:
    """``human=0.9,neural=0.6`` as a mapping (``None`` stays ``None``)."""
    from nlgeval.errors import InputError

    if spec is None:
        return None
    out = {}
    for part in spec.split(","):
        name, _eq, v = part.partition("=")
        try:
            out[name.strip()] = float(v)
        except ValueError:
            raise InputError(f"'{part}' is not SYSTEM=QUALITY", option="--quality") from None
    return out


def register(app: typer.Typer) -> None:
    """Add ``experiment`` (sub-commands) and ``serve`` to the top-level app.

    Each command is added by its own small function (typer's decorator style), a thin
    parse -> call -> render layer over :mod:`nlgeval.experiment`.

    Examples
    --------
    >>> import json, tempfile
    >>> from typer.testing import CliRunner
    >>> from nlgeval.cli import app
    >>> tmp = tempfile.TemporaryDirectory()
    >>> d = tmp.name + "/study"
    >>> CliRunner().invoke(app, ["experiment", "init", d]).exit_code
    0
    >>> CliRunner().invoke(app, ["experiment", "create", d, "--evaluators", "3"]).exit_code
    0
    >>> r = CliRunner().invoke(app, ["experiment", "status", d, "--json"])
    >>> len(json.loads(r.stdout)["evaluators"])
    3
    >>> tmp.cleanup()
    """
    exp = typer.Typer(
        help="Online human-evaluation experiments (LG-Eval style): create, monitor, export.",
        no_args_is_help=True,
    )
    app.add_typer(exp, name="experiment")
    _add_init(exp)
    _add_create(exp)
    _add_status(exp)
    _add_export(exp)
    _add_password(exp)
    _add_simulate(exp)
    _add_serve(app)
