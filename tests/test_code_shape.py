"""The shape of the library (issue #16, "Done means"): small modules and small functions.

No module under ``nlgeval/`` is over :data:`MAX_MODULE_LINES` lines and no function or method is
over :data:`MAX_FUNCTION_LINES` lines, unless it carries a reason marker, a comment of the form
``# shape: <reason>``:

- for a module: anywhere in its first :data:`MARKER_HEAD_LINES` lines, or in the comment lines
  right after its docstring (for a module whose docstring is longer than that);
- for a function: in the comment lines directly above its ``def`` (above or between its
  decorators also counts).

How a function is measured (:func:`function_length`):

- from the ``def`` line to the last line of the body, so the signature counts but decorators do
  not (a decorator is one line of configuration, not logic);
- lines of the docstring are left out (docstring examples are documentation, issue #20);
- a nested function (a closure, a Flask route or typer command registered inside a factory) is
  measured on its own, and its lines (decorators included) are left out of the enclosing
  function, so every line counts once, towards the innermost function that holds it;
- a function in ``nlgeval/cli`` is measured from the end of its signature (its first statement
  after the docstring): there the signature holds typer's option declarations (each option's
  flag, type, default and help text), which are the interface, not logic. Commands are
  registered in ``nlgeval/cli/__init__.py`` or by a decorator, so this is not keyed to one.

A module is measured in physical lines, docstrings included.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

import pytest

MAX_MODULE_LINES = 400
MAX_FUNCTION_LINES = 60
MARKER = "# shape:"
MARKER_HEAD_LINES = 30

PACKAGE = Path(__file__).resolve().parent.parent / "nlgeval"


@dataclass(frozen=True)
class Offender:
    """A module or function over its limit without a reason marker."""

    path: str
    line: int
    name: str
    length: int
    limit: int

    def __str__(self) -> str:
        return f"{self.path}:{self.line} {self.name}: {self.length} lines (limit {self.limit})"


def _has_marker(line: str) -> bool:
    """True for a comment ``# shape: <reason>`` with a non-empty reason."""
    text = line.strip()
    return text.startswith(MARKER) and bool(text[len(MARKER):].strip())


def _docstring_lines(node: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    first = node.body[0]
    if (
        isinstance(first, ast.Expr)
        and isinstance(first.value, ast.Constant)
        and isinstance(first.value.value, str)
    ):
        return (first.end_lineno or first.lineno) - first.lineno + 1
    return 0


def _nested_function_lines(node: ast.AST) -> int:
    """Lines (decorators included) of the functions defined directly inside ``node``."""
    total = 0
    for child in ast.iter_child_nodes(node):
        if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
            start = min([child.lineno, *(d.lineno for d in child.decorator_list)])
            total += (child.end_lineno or child.lineno) - start + 1
        else:
            total += _nested_function_lines(child)
    return total


def function_length(
    node: ast.FunctionDef | ast.AsyncFunctionDef, *, from_body: bool = False
) -> int:
    """Lines of ``node`` from its ``def`` line (or, with ``from_body``, its first statement after
    the docstring) to its last line, docstring lines and nested functions excluded."""
    end = node.end_lineno or node.lineno
    nested = _nested_function_lines(node)
    if from_body:
        statements = node.body[1:] if _docstring_lines(node) else node.body
        if not statements:
            return 0
        return end - statements[0].lineno + 1 - nested
    return end - node.lineno + 1 - _docstring_lines(node) - nested


def _marked_above(lines: list[str], node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """A marker in the run of comment/decorator lines directly above the ``def`` line."""
    first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
    decorator_lines = set()
    for d in node.decorator_list:
        decorator_lines.update(range(d.lineno, (d.end_lineno or d.lineno) + 1))
    index = node.lineno - 2  # 0-based index of the line above the def
    while index >= 0:
        text = lines[index].strip()
        if _has_marker(text):
            return True
        if not (text.startswith("#") or index + 1 in decorator_lines or index + 1 >= first):
            return False
        index -= 1
    return False


def _module_marked(lines: list[str], tree: ast.Module) -> bool:
    """A marker in the first lines, or in the comments right after the module docstring."""
    if any(_has_marker(line) for line in lines[:MARKER_HEAD_LINES]):
        return True
    first = tree.body[0] if tree.body else None
    if not (isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant)
            and isinstance(first.value.value, str)):
        return False
    for line in lines[first.end_lineno or first.lineno:]:
        text = line.strip()
        if _has_marker(text):
            return True
        if text and not text.startswith("#"):
            return False
    return False


def find_offenders(source: str, path: str, *, cli: bool = False) -> list[Offender]:
    """Every over-long module or function in ``source`` without a reason marker.

    ``cli=True`` measures functions from the end of their signature (typer's options).
    """
    lines = source.splitlines()
    tree = ast.parse(source, filename=path)
    offenders = []
    if len(lines) > MAX_MODULE_LINES and not _module_marked(lines, tree):
        offenders.append(Offender(path, 1, "<module>", len(lines), MAX_MODULE_LINES))
    for node in ast.walk(tree):
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        length = function_length(node, from_body=cli)
        if length > MAX_FUNCTION_LINES and not _marked_above(lines, node):
            offenders.append(Offender(path, node.lineno, node.name, length, MAX_FUNCTION_LINES))
    return sorted(offenders, key=lambda o: (o.path, o.line))


def library_offenders() -> list[Offender]:
    offenders = []
    for file in sorted(PACKAGE.rglob("*.py")):
        relative = file.relative_to(PACKAGE.parent).as_posix()
        cli = relative.startswith("nlgeval/cli/")
        offenders += find_offenders(file.read_text(encoding="utf-8"), relative, cli=cli)
    return offenders


#: Offenders not split yet, tracked in the issue tracker (issue 16): the test fails when one of
#: them grows, when a new one appears, and when one is fixed (so the entry is removed).
KNOWN_OFFENDERS: dict[tuple[str, str], int] = {}


def test_library_has_no_long_modules_or_functions() -> None:
    found = library_offenders()
    offenders = [o for o in found
                 if o.length > KNOWN_OFFENDERS.get((o.path, o.name), o.length - 1)]
    fixed = sorted(set(KNOWN_OFFENDERS) - {(o.path, o.name) for o in found})
    assert not fixed, f"no longer over the limit, remove from KNOWN_OFFENDERS: {fixed}"
    assert not offenders, (
        f"{len(offenders)} over-long module(s)/function(s) without a '{MARKER} <reason>' marker "
        "(split them into small named steps, or give the reason):\n"
        + "\n".join(f"  {o}" for o in offenders)
    )


# --- the checker itself -------------------------------------------------------------------------


def _function(name: str, body_lines: int, *, docstring_lines: int = 0, above: str = "") -> str:
    doc = ""
    if docstring_lines:
        doc = '    """' + "\n" * (docstring_lines - 1) + '    """\n'
    body = "".join(f"    x{i} = {i}\n" for i in range(body_lines))
    return f"{above}def {name}():\n{doc}{body}"


def test_a_long_function_fails_and_is_reported_with_file_line_and_length() -> None:
    source = "import os\n\n" + _function("long", MAX_FUNCTION_LINES)  # def line + 60 = 61
    (offender,) = find_offenders(source, "pkg/mod.py")
    found = (offender.path, offender.line, offender.name, offender.length)
    assert found == ("pkg/mod.py", 3, "long", 61)
    assert str(offender) == "pkg/mod.py:3 long: 61 lines (limit 60)"


def test_a_function_at_the_limit_passes() -> None:
    assert find_offenders(_function("ok", MAX_FUNCTION_LINES - 1), "m.py") == []


def test_docstring_lines_do_not_count() -> None:
    source = _function("documented", MAX_FUNCTION_LINES - 1, docstring_lines=40)
    assert find_offenders(source, "m.py") == []
    tree = ast.parse(source)
    assert function_length(tree.body[0]) == MAX_FUNCTION_LINES  # type: ignore[arg-type]


def test_a_marker_above_the_def_or_the_decorators_exempts_a_function() -> None:
    long_body = MAX_FUNCTION_LINES + 5
    marked = _function("kernel", long_body, above="# shape: one numba loop, clearer whole\n")
    assert find_offenders(marked, "m.py") == []
    decorated = _function("kernel", long_body, above="# shape: reason\n@decorator\n@other(1)\n")
    assert find_offenders(decorated, "m.py") == []
    between = _function("kernel", long_body, above="@decorator\n# shape: reason\n")
    assert find_offenders(between, "m.py") == []


def test_an_empty_or_distant_marker_does_not_exempt() -> None:
    long_body = MAX_FUNCTION_LINES + 5
    empty = _function("f", long_body, above="# shape:\n")
    assert [o.name for o in find_offenders(empty, "m.py")] == ["f"]
    distant = _function("f", long_body, above="# shape: reason\nx = 1\n")
    assert [o.name for o in find_offenders(distant, "m.py")] == ["f"]


def test_a_long_module_fails_unless_marked_in_its_head() -> None:
    long_module = "\n".join(f"x{i} = {i}" for i in range(MAX_MODULE_LINES + 1)) + "\n"
    (offender,) = find_offenders(long_module, "big.py")
    assert (offender.name, offender.line, offender.length) == ("<module>", 1, MAX_MODULE_LINES + 1)
    marked = '"""Doc."""\n# shape: a table of constants\n' + long_module
    assert find_offenders(marked, "big.py") == []
    late_marker = long_module + "# shape: too late\n"
    assert [o.name for o in find_offenders(late_marker, "big.py")] == ["<module>"]
    long_doc = '"""' + "\n" * 40 + '"""\n\n'
    after_doc = long_doc + "# shape: a long docstring\n" + long_module
    assert find_offenders(after_doc, "big.py") == []
    after_code = long_doc + "import os\n# shape: after code\n" + long_module
    assert [o.name for o in find_offenders(after_code, "big.py")] == ["<module>"]


def _indent(source: str) -> str:
    return "\n".join("    " + line for line in source.splitlines()) + "\n"


def test_methods_and_nested_functions_are_measured() -> None:
    source = "class C:\n" + _indent(_function("method", MAX_FUNCTION_LINES))
    assert [(o.name, o.line) for o in find_offenders(source, "m.py")] == [("method", 2)]
    # a factory of small routes passes; its own lines and each route are measured apart
    routes = "".join(_indent(_function(f"route{i}", 20, above="@bp.get('/')\n")) for i in range(5))
    factory = f"def factory():\n    bp = 1\n{routes}    return bp\n"
    assert find_offenders(factory, "m.py") == []
    assert function_length(ast.parse(factory).body[0]) == 3  # type: ignore[arg-type]
    long_route = _indent(_function("route", MAX_FUNCTION_LINES, above="@bp.get('/')\n"))
    nested = f"def factory():\n{long_route}    return 1\n"
    assert [(o.name, o.line) for o in find_offenders(nested, "m.py")] == [("route", 3)]
    own_lines = "".join(f"    y{i} = {i}\n" for i in range(MAX_FUNCTION_LINES))
    long_factory = f"def factory():\n{routes}{own_lines}"
    assert [o.name for o in find_offenders(long_factory, "m.py")] == ["factory"]


@pytest.mark.parametrize("cli", [True, False])
def test_typer_commands_in_the_cli_are_measured_from_the_end_of_the_signature(cli: bool) -> None:
    options = "".join(f"    option{i}: int = typer.Option(1, help='h'),\n" for i in range(30))
    body = "".join(f"    x{i} = {i}\n" for i in range(40))
    source = f"@app.command()\ndef run(\n{options}) -> None:\n    \"\"\"Doc.\"\"\"\n{body}"
    names = [o.name for o in find_offenders(source, "nlgeval/cli/x.py", cli=cli)]
    assert names == ([] if cli else ["run"])
