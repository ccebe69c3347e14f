"""Private names stay inside their concept (issue 27, "modules by concept, not by line count").

A *concept* is a package (``nlgeval.corpora.mtme``, ``nlgeval.correlation``); a module directly
under ``nlgeval`` (``nlgeval.results``, ``nlgeval.tables``) is a concept of its own. A name
that starts with one underscore (a function ``_step``, a constant ``_TABLE``, a module
``_kernels.py``) is private to the concept that defines it:

- the owner of ``_x`` in ``nlgeval.a.b._x`` (``from nlgeval.a.b import _x``, or
  ``import nlgeval.a.b._x``, or ``from nlgeval.a.b._x import anything``) is ``nlgeval.a.b`` when
  that is a package, else the package holding the module ``nlgeval.a.b`` (``nlgeval.a``);
- only modules inside the owner (the owner itself or ``owner.*``) may import it.

So the steps of ``read_mtme`` may be shared by the modules of ``nlgeval.corpora.mtme``, and a
private kernel module of ``nlgeval.correlation`` by the correlation modules, but no other package
reaches into them: what another concept needs is made public (a name without underscore,
documented, with a ``>>>`` example when it is in the package's ``__all__``) in the package that
owns it. Every import counts: at module level, inside functions and under ``TYPE_CHECKING``;
relative imports are resolved; and so does reading a private attribute of an imported module
(``from nlgeval import progress`` then ``progress._QUIET``). Dunder names (``__version__``) are
not private.

:data:`ALLOWED` lists the crossings that are left for their owners (each with the owner), so
the count cannot grow: a new crossing fails, and so does an entry that no longer occurs.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

#: (importing module, imported dotted name) -> who owns the fix. Issue 27 counted three: two
#: imports in ``nlgeval.cli.corpora`` (fixed by ``nlgeval.corpora.registered_corpus``) and the
#: neural runner's read of ``progress._QUIET`` (fixed by ``progress.quiet_requested()``, which,
#: unlike ``is_quiet()``, is not True in CI or without a terminal). None are left.
ALLOWED: dict[tuple[str, str], str] = {}


@dataclass(frozen=True)
class Crossing:
    """A private name imported from outside the concept that owns it."""

    importer: str
    target: str
    line: int
    owner: str

    def __str__(self) -> str:
        return (f"{self.importer}:{self.line} imports {self.target}, private to {self.owner} "
                "(make it public in its package, or move the step there)")


def module_name(path: Path, root: Path) -> str:
    """``root/nlgeval/a/b.py`` -> ``nlgeval.a.b``; a package's ``__init__.py`` -> the package."""
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def is_private(name: str) -> bool:
    """``_x`` is private; ``__x__`` (a dunder) and ``x`` are not."""
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def concept_of(module: str, root: Path) -> str:
    """The package a module belongs to (itself for a package or a top-level module)."""
    if (root / Path(*module.split(".")) / "__init__.py").is_file():
        return module
    parent = module.rpartition(".")[0]
    return module if "." not in parent else parent  # a top-level module is its own concept


def imported_names(tree: ast.AST, importer: str, is_package: bool) -> list[tuple[int, str]]:
    """``(line, dotted name)`` of every import in ``tree``: ``from a.b import c`` -> ``a.b.c``,
    ``import a.b`` -> ``a.b``; relative imports resolved against ``importer``."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            module = node.module or ""
            if node.level:
                base = importer.split(".") if is_package else importer.split(".")[:-1]
                base = base[:len(base) - node.level + 1]
                module = ".".join(base + ([module] if module else []))
            found += [(node.lineno, f"{module}.{alias.name}") for alias in node.names]
    return found


def _is_module(name: str, root: Path) -> bool:
    path = root / Path(*name.split("."))
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def attribute_reads(tree: ast.AST, root: Path, package: str) -> list[tuple[int, str]]:
    """``(line, dotted name)`` of every ``alias._x`` where ``alias`` names an imported module of
    ``package`` (``import package.a as alias``, ``from package import a``)."""
    modules: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            modules.update((a.asname, a.name) for a in node.names
                           if a.asname and a.name.split(".")[0] == package)
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module and (
                node.module.split(".")[0] == package):
            modules.update((a.asname or a.name, f"{node.module}.{a.name}") for a in node.names
                           if _is_module(f"{node.module}.{a.name}", root))
    return [(node.lineno, f"{modules[node.value.id]}.{node.attr}") for node in ast.walk(tree)
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
            and node.value.id in modules and is_private(node.attr)]


def crossings(root: Path = ROOT, package: str = "nlgeval") -> list[Crossing]:
    """Every import of a private name from outside its owning concept, under ``root/package``."""
    out = []
    for file in sorted((root / package).rglob("*.py")):
        importer = module_name(file, root)
        tree = ast.parse(file.read_text(encoding="utf-8"), filename=str(file))
        names = imported_names(tree, importer, file.name == "__init__.py")
        for line, target in names + attribute_reads(tree, root, package):
            parts = target.split(".")
            if parts[0] != package:
                continue
            private = next((k for k, part in enumerate(parts) if is_private(part)), None)
            if private is None:
                continue
            owner = concept_of(".".join(parts[:private]), root)
            if importer != owner and not importer.startswith(owner + "."):
                out.append(Crossing(importer, target, line, owner))
    return out


def test_no_private_name_is_imported_across_concepts() -> None:
    found = crossings()
    new = [c for c in found if (c.importer, c.target) not in ALLOWED]
    stale = sorted(set(ALLOWED) - {(c.importer, c.target) for c in found})
    assert not stale, f"no longer imported, remove from ALLOWED: {stale}"
    assert not new, (f"{len(new)} private name(s) imported across concepts:\n"
                     + "\n".join(f"  {c}" for c in new))


# --- the checker itself -------------------------------------------------------------------------


def _tree(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def _found(root: Path) -> list[tuple[str, str, str]]:
    return [(c.importer, c.target, c.owner) for c in crossings(root, "pkg")]


def test_inside_the_owning_package_is_allowed(tmp_path: Path) -> None:
    root = _tree(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/corpora/__init__.py": "from pkg.corpora.mtme import read\n",
        "pkg/corpora/mtme/__init__.py": "from pkg.corpora.mtme.read import read\n",
        "pkg/corpora/mtme/_layout.py": "def _lines(): ...\n",
        "pkg/corpora/mtme/read.py": ("from pkg.corpora.mtme._layout import _lines\n"
                                     "from . import _layout\nfrom ._layout import _lines as L\n"
                                     "def read(): ...\n"),
        "pkg/corpora/mtme/write.py": "import pkg.corpora.mtme._layout\n",
    })
    assert _found(root) == []


def test_a_private_name_or_module_reached_from_outside_is_reported(tmp_path: Path) -> None:
    root = _tree(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/results.py": "_HIDDEN = 1\n",
        "pkg/corpora/__init__.py": "def _registered(): ...\n",
        "pkg/corpora/mtme/__init__.py": "",
        "pkg/corpora/mtme/_layout.py": "LEVELS = ()\n",
        "pkg/corpora/mtme/read.py": "def _step(): ...\n",
        "pkg/corpora/e2e.py": ("from pkg.corpora.mtme.read import _step\n"
                               "from pkg.results import _HIDDEN\n"),
        "pkg/cli/__init__.py": "",
        "pkg/cli/corpora.py": ("def f():\n    from pkg.corpora import _registered\n"
                               "    from pkg.corpora.mtme._layout import LEVELS\n"
                               "    import pkg.corpora.mtme._layout\n"
                               "    from ..corpora.mtme import _layout\n"),
    })
    assert _found(root) == [
        ("pkg.cli.corpora", "pkg.corpora._registered", "pkg.corpora"),
        ("pkg.cli.corpora", "pkg.corpora.mtme._layout.LEVELS", "pkg.corpora.mtme"),
        ("pkg.cli.corpora", "pkg.corpora.mtme._layout", "pkg.corpora.mtme"),
        ("pkg.cli.corpora", "pkg.corpora.mtme._layout", "pkg.corpora.mtme"),
        ("pkg.corpora.e2e", "pkg.corpora.mtme.read._step", "pkg.corpora.mtme"),
        ("pkg.corpora.e2e", "pkg.results._HIDDEN", "pkg.results"),
    ]


def test_a_private_attribute_of_an_imported_module_is_reported(tmp_path: Path) -> None:
    root = _tree(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/progress.py": "_QUIET = False\n",
        "pkg/metrics/__init__.py": "",
        "pkg/metrics/run.py": ("def say():\n    from pkg import progress\n"
                               "    import pkg.progress as p\n"
                               "    return progress._QUIET, p._QUIET, progress.public\n"),
        "pkg/metrics/own.py": "from pkg.metrics import run\nrun._private = 1\n",
    })
    assert _found(root) == [("pkg.metrics.run", "pkg.progress._QUIET", "pkg.progress")] * 2


def test_dunder_and_public_names_are_not_private(tmp_path: Path) -> None:
    root = _tree(tmp_path, {
        "pkg/__init__.py": "__version__ = '1'\n",
        "pkg/a/__init__.py": "from pkg import __version__\nfrom pkg.b.c import LEVELS\n",
        "pkg/b/__init__.py": "",
        "pkg/b/c.py": "LEVELS = ()\n",
    })
    assert _found(root) == []


def test_concept_of_a_module_package_and_top_level_module(tmp_path: Path) -> None:
    root = _tree(tmp_path, {"pkg/__init__.py": "", "pkg/results.py": "",
                            "pkg/corpora/__init__.py": "", "pkg/corpora/e2e.py": ""})
    assert concept_of("pkg.corpora.e2e", root) == "pkg.corpora"
    assert concept_of("pkg.corpora", root) == "pkg.corpora"
    assert concept_of("pkg.results", root) == "pkg.results"
