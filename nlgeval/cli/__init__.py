"""The ``nlgeval`` command line: a thin layer over the library.

Each area registers its commands from its own module (``register(app)``), so the CLI code for a
capability sits next to nothing else. Errors nlgeval raises on purpose (:class:`NlgevalError`,
including :class:`InputError`) become one line on stderr and exit status 2, and so do click's
usage errors (an unknown option or command, a bad option value, a missing argument:
:func:`usage_error_line`) instead of typer's usage box; ``--help`` is typer's, unchanged.
"""

from __future__ import annotations

import os
import re
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
    so ``nlgeval --help`` stays fast (tests/test_cli_startup.py checks this). Run as the
    ``nlgeval`` console script, the process ends by :func:`_exit_now` once the command is
    done (exit handlers run, output flushed), skipping the interpreter's teardown of every
    loaded module; called from Python code it raises ``SystemExit`` as before. For
    ``nlgeval validate`` the console script also loads scipy.stats and the report first
    (:func:`_prepare_validate_process`: no generated docstring notes, a frozen heap).

    Examples
    --------
    >>> try:
    ...     main(["no-such-command"])
    ... except SystemExit as exc:
    ...     print(exc.code)
    2
    """
    if (argv is None and sys.argv[1:2] == ["validate"] and _is_console_script()
            and not {"--help", "-h"} & set(sys.argv)):
        _prepare_validate_process()
    try:
        _run(argv)
    except SystemExit as exc:
        if argv is None and _exit_now_is_safe(exc.code):
            _exit_now(0 if exc.code is None else int(exc.code))
        raise


def _run(argv: list[str] | None) -> None:
    click_error, usage_error, no_args_is_help = _click_errors()
    try:
        code = app(args=argv, standalone_mode=False)
    except no_args_is_help as exc:  # the help was printed, as typer prints it
        _echo_help_of(exc)
        sys.exit(2)
    except usage_error as exc:
        typer.echo(f"error: {usage_error_line(exc)}", err=True)
        sys.exit(2)
    except click_error as exc:  # another click error (a file click could not open): one line
        typer.echo(f"error: {usage_error_line(exc)}", err=True)
        sys.exit(getattr(exc, "exit_code", 1))
    except typer.Abort:
        typer.echo("Aborted.", err=True)
        sys.exit(1)
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
    # without standalone mode typer returns what ``typer.Exit`` (or Ctrl-C: 130) carried;
    # the commands themselves return None
    sys.exit(code if isinstance(code, int) else 0)


def _click_errors() -> tuple[type[Exception], type[Exception], type[Exception]]:
    """The ``ClickException`` and ``UsageError`` classes of the click typer raises from (typer
    0.22+ vendors its own click; older releases use click itself), and its
    ``NoArgsIsHelpError`` (click 8.2+; a class nothing raises on older releases). Found through
    :class:`typer.BadParameter`, typer's public re-export of that module's ``BadParameter``,
    never through a private import."""
    module = sys.modules[typer.BadParameter.__module__]
    no_args_is_help = getattr(module, "NoArgsIsHelpError", None)
    if no_args_is_help is None:
        no_args_is_help = type("_NeverRaised", (Exception,), {})
    return module.ClickException, module.UsageError, no_args_is_help


def _echo_help_of(exc: Exception) -> None:
    """``nlgeval GROUP`` without a command: typer's rich formatter printed the help while the
    error was built (its message is then empty); without rich the message is the help."""
    message = exc.format_message() if hasattr(exc, "format_message") else str(exc)
    if message:
        typer.echo(message, err=True)


def usage_error_line(exc: Exception) -> str:
    """One line for a command-line usage error (click's ``UsageError``: an unknown option or
    command, a bad option value, a missing argument): click's own message with its "did you
    mean" hint, then "Try 'nlgeval CMD --help'." -- instead of typer's usage box.

    Parameters
    ----------
    exc : Exception
        A click ``UsageError`` (``BadParameter``, ``NoSuchOption``, ``MissingParameter``...).

    Returns
    -------
    str
        The message on one line, without the leading ``error:``.

    Examples
    --------
    >>> import typer
    >>> usage_error_line(typer.BadParameter("'abc' is not a valid integer.", param_hint="'--n'"))
    "Invalid value for '--n': 'abc' is not a valid integer."
    """
    text = exc.format_message() if hasattr(exc, "format_message") else str(exc)
    message = " ".join(line.strip() for line in text.splitlines() if line.strip())
    # an enum typo: typer converts with pydantic, whose ValueError text starts "Value error, "
    message = re.sub(r"^(Invalid value for [^:]+: )Value error, ", r"\1", message)
    ctx = getattr(exc, "ctx", None)
    if ctx is None or ctx.command.get_help_option(ctx) is None:
        return message
    help_option = max(ctx.command.get_help_option_names(ctx), key=len)
    end = "" if message.endswith((".", "?", "!")) else "."
    return f"{message}{end} Try '{ctx.command_path} {help_option}'."


#: scipy releases whose ``xp_capabilities`` decorator was checked (it builds each decorated
#: function's docstring with ``FunctionDoc(f)``, appends a note to ``doc["Notes"]`` and keeps
#: ``str(doc)`` minus its first line).
_SCIPY_ANNOTATING = ("1.16.", "1.17.")


class _UnparsedDoc:
    """Stands in for scipy's ``FunctionDoc`` inside ``xp_capabilities`` only: the docstring
    stays as written (without the generated "Array API Standard Support" note), unparsed."""

    def __init__(self, func: object, *args: object, **kwargs: object) -> None:
        self._doc = getattr(func, "__doc__", None) or ""
        self._sections: dict[str, list[str]] = {}

    def __getitem__(self, key: str) -> list[str]:
        return self._sections.setdefault(key, [])

    def __str__(self) -> str:
        return "\n" + self._doc


def _import_scipy_stats_unannotated() -> bool:
    """Import ``scipy.stats`` without scipy parsing ~470 docstrings to append its array-API
    note to them (about 0.3 s of the main job's single-core start-up with scipy 1.17).

    Only the console script calls this (never nlgeval imported as a library), before the
    command imports scipy. A no-op (False) unless scipy is a checked release whose
    ``scipy._lib._array_api`` has ``xp_capabilities`` and ``FunctionDoc`` and ``scipy.stats``
    is not imported yet; the original ``FunctionDoc`` is restored right after the import, so
    every later docstring is built as usual. Nothing but docstring text differs (numbers are
    unaffected: tests/test_cli_scipy_import.py)."""
    if "scipy.stats" in sys.modules:
        return False
    try:
        import scipy
        from scipy._lib import _array_api
    except ImportError:
        return False
    original = getattr(_array_api, "FunctionDoc", None)
    if (not str(getattr(scipy, "__version__", "")).startswith(_SCIPY_ANNOTATING)
            or original is None or not hasattr(_array_api, "xp_capabilities")):
        return False
    _array_api.FunctionDoc = _UnparsedDoc
    try:
        import scipy.stats  # noqa: F401
    finally:
        _array_api.FunctionDoc = original
    return True


def _prepare_validate_process() -> None:
    """The console script's ``nlgeval validate``, before the command runs: import scipy.stats
    (:func:`_import_scipy_stats_unannotated`) and the report's modules, then ``gc.freeze()``:
    the ~200,000 objects of the imported libraries move to the collector's permanent
    generation, so its full collections (in this process and in the processes it forks) no
    longer walk them, about 0.1-0.2 s of CPU each. They live as long as the process anyway;
    nothing else changes (objects are still freed by reference counting)."""
    import gc

    _import_scipy_stats_unannotated()
    import nlgeval.report.writer  # noqa: F401  (what validate imports first)

    gc.freeze()


def _is_console_script() -> bool:
    """True in the ``nlgeval`` console script itself (``__main__`` is its wrapper), with no
    profiler or tracer."""
    main_file = getattr(sys.modules.get("__main__"), "__file__", None) or ""
    return (os.path.basename(main_file).removesuffix(".exe") == "nlgeval"
            and sys.gettrace() is None and sys.getprofile() is None)


def _exit_now_is_safe(code: object) -> bool:
    """True only in the ``nlgeval`` console script itself (``__main__`` is its wrapper, no
    profiler or tracer, no other thread running) with an integer exit status: never when
    nlgeval is imported as a library, under pytest, ``python -m cProfile`` or a debugger."""
    import threading

    main_file = getattr(sys.modules.get("__main__"), "__file__", None) or ""
    return (os.path.basename(main_file).removesuffix(".exe") == "nlgeval"
            and (code is None or isinstance(code, int))
            and sys.gettrace() is None and sys.getprofile() is None
            and threading.active_count() == 1
            and not os.environ.get("NLGEVAL_NORMAL_EXIT"))


def _exit_now(code: int) -> None:
    """End the process as the interpreter would, minus its teardown: run the exit handlers
    (``atexit``: multiprocessing's children, logging, temporary folders), flush stdout and
    stderr, then ``os._exit``. The teardown (freeing about 1,700 modules' objects) costs
    about 0.2 s of CPU after ``nlgeval validate`` and does nothing the user can see."""
    import atexit

    atexit._run_exitfuncs()
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):  # a closed pipe: let the interpreter report it as usual
        return
    os._exit(code)
