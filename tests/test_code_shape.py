"""The shape of the library (issues #16 and #27): modules by concept, short functions.

Issue 27 replaced the 400-line module limit, which split concepts by line count (a reader and
its private steps in three modules that import 30 of each other's private names), with rules
that keep a concept together and keep functions short as a reader reads them.

**Concepts.** A concept is a package (``nlgeval.corpora.mtme``, ``nlgeval.correlation``); its
public function sits beside its steps, in the package.

- A package's public names (its ``__init__``'s ``__all__``) are defined in the package: bound
  in ``__init__`` or imported from a module inside it (also lazily, inside a module
  ``__getattr__``), never re-exported from another package, so the package a name is imported
  from is the one that owns it (:func:`foreign_exports`). The root ``nlgeval`` is exempt: it is
  the front door that gathers the common tasks from their packages.
- Private names (``_step``, ``_kernels.py``) are imported only inside the package that owns
  them: ``tests/test_private_imports.py``.
- A module may be long when its concept is: the cap is :data:`MAX_MODULE_LINES` (800) physical
  lines, docstrings included, a size at which a module holds more than one job in practice.
  Over it a module needs a reason marker (below) in its first :data:`MARKER_HEAD_LINES` lines or
  in the comment lines right after its docstring.

**Functions**, measured by :func:`function_lengths`, have two limits:

- *lines as read*: from the ``def`` line to the last line, the docstring, comments and nested
  functions included (a closure or a route registered inside a factory is read with it), at
  most :data:`MAX_FUNCTION_LINES` (80). Decorators are not counted (one line of configuration
  each). No marker exempts this limit: split the function into named steps;
- *logic lines*: the same without the docstring and without nested functions (each nested
  function is measured on its own), at most :data:`MAX_LOGIC_LINES` (60), unless the function
  carries a reason marker, a comment ``# shape: <reason>`` in the comment lines directly above
  its ``def`` (above or between its decorators also counts), for the rare function that reads
  better whole (a numba loop that mirrors a reference implementation line by line).

A function in ``nlgeval/cli`` is measured from the end of its signature (the start of its
docstring, or its first statement) for both limits: there the signature holds typer's option
declarations -- each option's flag, type, default and help text -- which are the command's
interface, read as a table, not as logic; the docstring (``--help``) and the body count. Commands
are registered in ``nlgeval/cli/__init__.py`` or by a decorator, so this is keyed to the folder.

"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

import pytest

MAX_MODULE_LINES = 800
MAX_FUNCTION_LINES = 80
MAX_LOGIC_LINES = 60
MARKER = "# shape:"
MARKER_HEAD_LINES = 30

PACKAGE = Path(__file__).resolve().parent.parent / "nlgeval"

Function = ast.FunctionDef | ast.AsyncFunctionDef


@dataclass(frozen=True)
class Offender:
    """A module or function over one of its limits (without a reason marker where one helps)."""

    path: str
    line: int
    name: str
    length: int
    limit: int
    measure: str = "lines"

    def __str__(self) -> str:
        return (f"{self.path}:{self.line} {self.name}: {self.length} {self.measure} "
                f"(limit {self.limit})")


def _has_marker(line: str) -> bool:
    """True for a comment ``# shape: <reason>`` with a non-empty reason."""
    text = line.strip()
    return text.startswith(MARKER) and bool(text[len(MARKER):].strip())


def _docstring_lines(node: Function) -> int:
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


def function_lengths(node: Function, *, from_body: bool = False) -> tuple[int, int]:
    """``(lines as read, logic lines)`` of ``node`` (see the module docstring).

    Lines as read run from the ``def`` line (with ``from_body``: the first line after the
    signature) to the last line; logic lines leave out the docstring and nested functions.
    """
    end = node.end_lineno or node.lineno
    nested = _nested_function_lines(node)
    doc = _docstring_lines(node)
    start = node.body[0].lineno if from_body else node.lineno
    read = end - start + 1
    return read, read - doc - nested


def _marked_above(lines: list[str], node: Function) -> bool:
    """A marker in the run of comment/decorator lines directly above the ``def`` line."""
    first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
    decorator_lines: set[int] = set()
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


def _function_offenders(node: Function, lines: list[str], path: str, cli: bool
                        ) -> list[Offender]:
    read, logic = function_lengths(node, from_body=cli)
    out = []
    if read > MAX_FUNCTION_LINES:
        out.append(Offender(path, node.lineno, node.name, read, MAX_FUNCTION_LINES))
    if logic > MAX_LOGIC_LINES and not _marked_above(lines, node):
        out.append(Offender(path, node.lineno, node.name, logic, MAX_LOGIC_LINES, "logic lines"))
    return out


def find_offenders(source: str, path: str, *, cli: bool = False) -> list[Offender]:
    """Every over-long module or function in ``source``.

    ``cli=True`` measures functions from the end of their signature (typer's options).
    """
    lines = source.splitlines()
    tree = ast.parse(source, filename=path)
    offenders = []
    if len(lines) > MAX_MODULE_LINES and not _module_marked(lines, tree):
        offenders.append(Offender(path, 1, "<module>", len(lines), MAX_MODULE_LINES))
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            offenders += _function_offenders(node, lines, path, cli)
    return sorted(offenders, key=lambda o: (o.path, o.line, o.measure))


def library_offenders() -> list[Offender]:
    offenders = []
    for file in sorted(PACKAGE.rglob("*.py")):
        relative = file.relative_to(PACKAGE.parent).as_posix()
        cli = relative.startswith("nlgeval/cli/")
        offenders += find_offenders(file.read_text(encoding="utf-8"), relative, cli=cli)
    return offenders


def test_library_has_no_long_modules_or_functions() -> None:
    found = library_offenders()
    offenders = list(found)
    assert not offenders, (
        f"{len(offenders)} over-long module(s)/function(s) (split them into small named steps; "
        f"'{MARKER} <reason>' exempts only a module or the logic-line limit):\n"
        + "\n".join(f"  {o}" for o in offenders)
    )


# --- a package's public names are its own -------------------------------------------------------


def _bindings(tree: ast.Module) -> dict[str, str | None]:
    """Names bound in an ``__init__``: ``name -> module it is imported from`` (``None`` when
    defined there); imports inside functions (a lazy ``__getattr__``) count."""
    bound: dict[str, str | None] = {}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound[node.name] = None
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            bound.update((t.id, None) for t in targets if isinstance(t, ast.Name))
    for sub in ast.walk(tree):
        if isinstance(sub, ast.ImportFrom) and sub.module and not sub.level:
            bound.update((a.asname or a.name, sub.module) for a in sub.names)
        elif isinstance(sub, ast.ImportFrom):
            bound.update((a.asname or a.name, ".") for a in sub.names)  # relative: inside
    return bound


def _all_names(tree: ast.Module) -> list[str]:
    for node in tree.body:
        if (isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__all__"
                                                 for t in node.targets)
                and isinstance(node.value, ast.List | ast.Tuple)):
            return [e.value for e in node.value.elts
                    if isinstance(e, ast.Constant) and isinstance(e.value, str)]
    return []


def foreign_exports(source: str, package: str) -> list[str]:
    """Names in the ``__all__`` of package ``package`` (its ``__init__`` source) that come from
    outside the package (or are not bound at all)."""
    tree = ast.parse(source)
    bound = _bindings(tree)
    out = []
    for name in _all_names(tree):
        if name not in bound:
            out.append(f"{package}.{name} (not bound in {package})")
            continue
        origin = bound[name]
        if origin is None or origin == "." or origin == package or origin.startswith(
                package + "."):
            continue
        out.append(f"{package}.{name} (re-exported from {origin})")
    return out


def test_packages_export_only_their_own_names() -> None:
    found = []
    for init in sorted(PACKAGE.rglob("__init__.py")):
        package = ".".join(init.parent.relative_to(PACKAGE.parent).parts)
        if package != "nlgeval":  # the front door gathers the common tasks on purpose
            found += foreign_exports(init.read_text(encoding="utf-8"), package)
    assert not found, ("a package's __all__ names what the package defines; import these from "
                       "the package that owns them:\n" + "\n".join(f"  {f}" for f in found))


def test_foreign_exports_are_found() -> None:
    source = ("from pkg.a.mod import f\nfrom pkg.b import g\nfrom .c import h\nX = 1\n"
              "def __getattr__(name):\n    from pkg.a.lazy import lazy\n    return lazy\n"
              "__all__ = ['f', 'g', 'h', 'X', 'lazy', 'ghost']\n")
    assert foreign_exports(source, "pkg.a") == [
        "pkg.a.g (re-exported from pkg.b)", "pkg.a.ghost (not bound in pkg.a)"]


# --- the checker itself -------------------------------------------------------------------------


def _function(name: str, body_lines: int, *, docstring_lines: int = 0, above: str = "") -> str:
    doc = ""
    if docstring_lines:
        doc = '    """' + "\n" * (docstring_lines - 1) + '    """\n'
    body = "".join(f"    x{i} = {i}\n" for i in range(body_lines))
    return f"{above}def {name}():\n{doc}{body}"


def _found(source: str, **kw: bool) -> list[tuple[str, int, str]]:
    return [(o.name, o.length, o.measure) for o in find_offenders(source, "m.py", **kw)]


def test_a_long_function_fails_and_is_reported_with_file_line_and_length() -> None:
    source = "import os\n\n" + _function("long", MAX_LOGIC_LINES)  # def line + 60 = 61
    (offender,) = find_offenders(source, "pkg/mod.py")
    found = (offender.path, offender.line, offender.name, offender.length)
    assert found == ("pkg/mod.py", 3, "long", 61)
    assert str(offender) == "pkg/mod.py:3 long: 61 logic lines (limit 60)"


def test_a_function_at_the_limits_passes() -> None:
    assert find_offenders(_function("ok", MAX_LOGIC_LINES - 1), "m.py") == []
    doc = MAX_FUNCTION_LINES - MAX_LOGIC_LINES
    at_80 = _function("ok", MAX_LOGIC_LINES - 1, docstring_lines=doc)
    assert function_lengths(ast.parse(at_80).body[0]) == (80, 60)  # type: ignore[arg-type]
    assert find_offenders(at_80, "m.py") == []


def test_the_docstring_counts_as_read_but_not_as_logic() -> None:
    source = _function("documented", MAX_LOGIC_LINES - 1, docstring_lines=40)
    assert function_lengths(ast.parse(source).body[0]) == (100, 60)  # type: ignore[arg-type]
    assert _found(source) == [("documented", 100, "lines")]


def test_a_marker_exempts_the_logic_limit_only() -> None:
    long_body = MAX_LOGIC_LINES + 5
    marked = _function("kernel", long_body, above="# shape: one numba loop, clearer whole\n")
    assert find_offenders(marked, "m.py") == []
    decorated = _function("kernel", long_body, above="# shape: reason\n@decorator\n@other(1)\n")
    assert find_offenders(decorated, "m.py") == []
    between = _function("kernel", long_body, above="@decorator\n# shape: reason\n")
    assert find_offenders(between, "m.py") == []
    too_long = _function("kernel", MAX_FUNCTION_LINES, above="# shape: reason\n")
    assert _found(too_long) == [("kernel", MAX_FUNCTION_LINES + 1, "lines")]


def test_an_empty_or_distant_marker_does_not_exempt() -> None:
    long_body = MAX_LOGIC_LINES + 5
    empty = _function("f", long_body, above="# shape:\n")
    assert [o.name for o in find_offenders(empty, "m.py")] == ["f"]
    distant = _function("f", long_body, above="# shape: reason\nx = 1\n")
    assert [o.name for o in find_offenders(distant, "m.py")] == ["f"]


def test_a_long_module_fails_unless_marked_in_its_head() -> None:
    long_module = "\n".join(f"x{i} = {i}" for i in range(MAX_MODULE_LINES + 1)) + "\n"
    (offender,) = find_offenders(long_module, "big.py")
    assert (offender.name, offender.line, offender.length) == ("<module>", 1, MAX_MODULE_LINES + 1)
    assert find_offenders("x = 1\n" * MAX_MODULE_LINES, "big.py") == []
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
    source = "class C:\n" + _indent(_function("method", MAX_LOGIC_LINES))
    assert [(o.name, o.line) for o in find_offenders(source, "m.py")] == [("method", 2)]
    # a factory of small routes: each route is short, but the factory is read with its routes
    routes = "".join(_indent(_function(f"route{i}", 10, above="@bp.get('/')\n")) for i in range(3))
    factory = f"def factory():\n    bp = 1\n{routes}    return bp\n"
    assert find_offenders(factory, "m.py") == []
    assert function_lengths(ast.parse(factory).body[0]) == (39, 3)  # type: ignore[arg-type]
    many = "".join(_indent(_function(f"route{i}", 20, above="@bp.get('/')\n")) for i in range(5))
    big_factory = f"def factory():\n    bp = 1\n{many}    return bp\n"
    assert _found(big_factory) == [("factory", 113, "lines")]
    long_route = _indent(_function("route", MAX_LOGIC_LINES, above="@bp.get('/')\n"))
    nested = f"def factory():\n{long_route}    return 1\n"
    assert [(o.name, o.line) for o in find_offenders(nested, "m.py")] == [("route", 3)]


@pytest.mark.parametrize("cli", [True, False])
def test_typer_commands_in_the_cli_are_measured_from_the_end_of_the_signature(cli: bool) -> None:
    options = "".join(f"    option{i}: int = typer.Option(1, help='h'),\n" for i in range(30))
    body = "".join(f"    x{i} = {i}\n" for i in range(40))
    source = f"@app.command()\ndef run(\n{options}) -> None:\n    \"\"\"Doc.\"\"\"\n{body}"
    names = [o.name for o in find_offenders(source, "nlgeval/cli/x.py", cli=cli)]
    assert names == ([] if cli else ["run"])
    tree = ast.parse(source).body[0]
    assert function_lengths(tree, from_body=cli) == ((41, 40) if cli else (73, 72))  # type: ignore[arg-type]
