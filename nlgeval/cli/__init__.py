"""The ``nlgeval`` command line: a thin layer over the library.

Each area registers its commands from its own module (``register(app)``), so the CLI code for a
capability sits next to nothing else. Errors nlgeval raises on purpose (:class:`NlgevalError`,
including :class:`InputError`) become one line on stderr and exit status 2.
"""

from __future__ import annotations

import sys

import typer

from nlgeval.errors import NlgevalError

app = typer.Typer(
    name="nlgeval",
    help="Validate NLG metrics against human judgements, compare generators, "
    "and plan and run human evaluations.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)


@app.command()
def version() -> None:
    """Print nlgeval's version and the versions of the libraries its numbers depend on.

    Examples
    --------
    >>> from typer.testing import CliRunner
    >>> result = CliRunner().invoke(app, ["version"])
    >>> result.exit_code, "nlgeval " in result.output
    (0, True)
    """
    from nlgeval.provenance import package_versions

    for name, ver in package_versions().items():
        typer.echo(f"{name} {ver}")


def _register_all() -> None:
    from nlgeval.cli import (
        corpora,
        experiment,
        human,
        items,
        meta_analysis,
        score,
        triangle,
        validate,
    )

    for module in (corpora, score, validate, meta_analysis, human, triangle, items, experiment):
        module.register(app)


_register_all()


def main(argv: list[str] | None = None) -> None:
    """Console-script entry point.

    Only typer and the command modules load at start-up; every heavy library (matplotlib,
    statsmodels, sacrebleu, torch, numba, scipy) is imported by the command that needs it,
    so ``nlgeval --help`` stays fast (tests/test_cli_startup.py checks this).

    Examples
    --------
    >>> try:
    ...     main(["no-such-command"])
    ... except SystemExit as exc:
    ...     print(exc.code)
    2
    """
    try:
        app(args=argv, standalone_mode=True)
    except NlgevalError as exc:
        typer.echo(f"error: {exc}", err=True)
        sys.exit(2)
    except MemoryError as exc:  # the last resort: one line, as for bad input
        from nlgeval.cli._common import out_of_memory_line

        typer.echo(f"error: {out_of_memory_line(exc)}", err=True)
        sys.exit(2)
    except KeyboardInterrupt:
        typer.echo("interrupted", err=True)
        sys.exit(130)
