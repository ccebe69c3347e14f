"""Every SQL statement of the experiment is in ``nlgeval.experiment.storage`` (issue 28): no other
module of the package imports SQLAlchemy, imports the table classes, runs a statement or opens a
session or connection of the store. The check reads the source (AST), so it needs no database.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1] / "nlgeval"
STORAGE = ROOT / "experiment" / "storage"
TABLES = {"Base", "Meta", "Evaluator", "Trial", "Judgement", "Output", "Context",
          "ResearcherSession"}
#: methods that run SQL on a connection or ORM session
STATEMENT_CALLS = {"execute", "exec_driver_sql", "execute_alone", "scalars", "scalar",
                   "query", "add_all"}
#: methods of a Store that hand out a session or connection (``store.read()`` ...)
SESSION_CALLS = {"read", "write", "connect", "commit", "serialize"}


def _is_store(node: ast.expr) -> bool:
    """``store`` or ``<anything>.store``."""
    return ((isinstance(node, ast.Name) and node.id == "store")
            or (isinstance(node, ast.Attribute) and node.attr == "store"))


def sql_uses(source: str) -> list[str]:
    """What in ``source`` builds or runs SQL, one line each (``line: what``)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [f"{node.lineno}: import {a.name}" for a in node.names
                      if a.name.split(".")[0] == "sqlalchemy"]
        elif isinstance(node, ast.ImportFrom) and node.module:
            if node.module.split(".")[0] == "sqlalchemy":
                found.append(f"{node.lineno}: from {node.module} import ...")
            elif node.module.startswith("nlgeval.experiment.storage"):
                found += [f"{node.lineno}: imports the table {a.name}" for a in node.names
                          if a.name in TABLES]
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            name = node.func.attr
            if name in STATEMENT_CALLS:
                found.append(f"{node.lineno}: .{name}(...)")
            elif name in SESSION_CALLS and _is_store(node.func.value):
                found.append(f"{node.lineno}: store.{name}(...)")
    return found


def _modules() -> list[Path]:
    mods = [p for p in sorted((ROOT / "experiment").rglob("*.py")) if STORAGE not in p.parents]
    return [*mods, ROOT / "cli" / "experiment.py"]


@pytest.mark.parametrize("path", _modules(), ids=lambda p: str(p.relative_to(ROOT)))
def test_no_sql_outside_the_storage_package(path: Path) -> None:
    uses = sql_uses(path.read_text(encoding="utf-8"))
    assert not uses, f"{path.relative_to(ROOT)} does SQL (move it to experiment/storage): {uses}"


def test_nothing_else_in_nlgeval_imports_sqlalchemy() -> None:
    bad = {}
    for p in sorted(ROOT.rglob("*.py")):
        if STORAGE in p.parents:
            continue
        uses = [u for u in sql_uses(p.read_text(encoding="utf-8")) if "sqlalchemy" in u]
        if uses:
            bad[str(p.relative_to(ROOT))] = uses
    assert not bad


def test_the_storage_package_does_hold_the_statements() -> None:
    assert any(sql_uses(p.read_text(encoding="utf-8")) for p in STORAGE.glob("*.py"))


@pytest.mark.parametrize("source", [
    "from sqlalchemy import select\n",
    "import sqlalchemy.orm\n",
    "from nlgeval.experiment.storage import Evaluator, Store\n",
    "def f(x):\n    with x.store.read() as s:\n        return s\n",
    "def f(store):\n    store.commit(lambda c: None)\n",
    "def f(c):\n    return c.execute(q).all()\n",
    "def f(s):\n    return s.query(T).count()\n",
])
def test_the_check_finds_sql(source: str) -> None:
    assert sql_uses(source)


@pytest.mark.parametrize("source", [
    "from nlgeval.experiment.storage import Store, utcnow\n",
    "from nlgeval.experiment.storage.answers import save_answer\n",
    "def f(x):\n    x.store.dispose(); x.store.meta(); pids = set(); pids.add(1)\n",
    "def f(path):\n    return path.read_text()\n",
])
def test_the_check_lets_calls_into_the_storage_package_through(source: str) -> None:
    assert sql_uses(source) == []
