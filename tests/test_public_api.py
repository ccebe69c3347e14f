"""The public API (issues #16 and #20): what each package exports, and that it teaches.

For every public package: ``__all__`` exists and every name in it resolves; every exported
function and class has a docstring with a runnable ``>>>`` example (pytest runs them as
doctests); and every export that implements a published method cites its source.

The citation rule. A citation is an author-year reference: a capitalised name, optionally
``et al.``, then a year 1900-2099, optionally in parentheses ("Kocmi et al. 2021",
"Deutsch, Foster & Freitag (2023)", "Mair & Wilcox 2020", "Papineni et al., 2002"). Families of
functions share their module's docstring, where the method and its paper are described once,
so the citation may sit in the object's docstring or in the docstring of the module that
defines it. Everything exported by the statistics packages (correlation, human, triangle,
items) is taken to implement a published method unless it is listed in :data:`NOT_A_METHOD`
with the reason (readers, validators, plumbing); new exports are therefore checked by default.
Metric adapters are checked through the metric registry and corpus loaders through the corpus
registry, so every registered metric and corpus names its paper.
"""

from __future__ import annotations

import importlib
import inspect
import re
import sys
from pathlib import Path
from typing import Any

import pytest

PACKAGES = (
    "nlgeval.correlation",
    "nlgeval.human",
    "nlgeval.items",
    "nlgeval.triangle",
    "nlgeval.metrics",
    "nlgeval.corpora",
    "nlgeval.scores",
    "nlgeval.meta_analysis",
)
STATISTICS_PACKAGES = ("nlgeval.correlation", "nlgeval.human", "nlgeval.items",
                       "nlgeval.triangle", "nlgeval.meta_analysis")

#: Exports of the statistics packages that implement no published method, with the reason.
NOT_A_METHOD: dict[str, str] = {
    "nlgeval.human.read_ratings": "reads a ratings file",
    "nlgeval.human.validate_ratings": "checks a ratings frame",
}
#: Registered metrics that are not published metrics.
NOT_A_PUBLISHED_METRIC = {"length": "output length in tokens, a sanity baseline"}

CITATION = re.compile(r"[A-Z][A-Za-z\u00C0-\u017F'-]+(?: et al\.)?,? \(?(?:19|20)\d\d[a-z]?\b")


def _cites(obj: Any) -> bool:
    module = sys.modules.get(getattr(obj, "__module__", "") or "")
    texts = (inspect.getdoc(obj) or "", (module.__doc__ if module else None) or "")
    return any(CITATION.search(t) for t in texts)


def _exports(package: str) -> list[tuple[str, Any]]:
    mod = importlib.import_module(package)
    return [(n, getattr(mod, n)) for n in getattr(mod, "__all__", ()) if hasattr(mod, n)]


def _documented(package: str) -> list[str]:
    """Exported functions and classes (constants such as ``LEVELS`` carry no example)."""
    return [f"{package}.{n}" for n, obj in _exports(package)
            if inspect.isclass(obj) or callable(obj)]


def _resolve(qualname: str) -> Any:
    package, name = qualname.rsplit(".", 1)
    return getattr(importlib.import_module(package), name)


# ----------------------------------------------------------------------------- the rule itself
@pytest.mark.parametrize("text", [
    "system-level pairwise accuracy (Kocmi et al. 2021)",
    "Deutsch, Foster & Freitag (2023), Section 5",
    "Mair & Wilcox 2020, Behavior Research Methods",
    "BLEU (Papineni et al., 2002)",
    "in the spirit of Besag & Clifford (1991, Biometrika)",
])
def test_citation_rule_accepts_author_year(text: str) -> None:
    assert CITATION.search(text)


@pytest.mark.parametrize("text", [
    "the WMT23 and WMT24 shared tasks", "numpy 2.1 and Python 3.11", "Section 5, Table 3",
    "1,000 permutations", "seed 2024",
])
def test_citation_rule_rejects_non_citations(text: str) -> None:
    assert not CITATION.search(text)


# ----------------------------------------------------------------------------- __all__
@pytest.mark.parametrize("package", PACKAGES)
def test_package_declares_all(package: str) -> None:
    mod = importlib.import_module(package)
    assert isinstance(getattr(mod, "__all__", None), list | tuple), \
        f"{package} has no __all__ (issue #16: export the main functions with __all__)"
    assert len(set(mod.__all__)) == len(mod.__all__), f"{package}.__all__ repeats a name"


@pytest.mark.parametrize("package", PACKAGES)
def test_every_exported_name_resolves(package: str) -> None:
    mod = importlib.import_module(package)
    missing = [n for n in getattr(mod, "__all__", ()) if not hasattr(mod, n)]
    assert not missing, f"{package}.__all__ names {missing}, which do not exist"


# ----------------------------------------------------------------------------- examples
@pytest.mark.parametrize("qualname", [q for p in PACKAGES for q in _documented(p)])
def test_exported_name_has_example(qualname: str) -> None:
    doc = inspect.getdoc(_resolve(qualname)) or ""
    assert doc.strip(), f"{qualname} has no docstring"
    assert ">>>" in doc, f"{qualname}: add an Examples section with a runnable >>> example"


# ----------------------------------------------------------------------------- citations
@pytest.mark.parametrize(
    "qualname",
    [q for p in STATISTICS_PACKAGES for q in _documented(p) if q not in NOT_A_METHOD])
def test_statistics_cite_their_source(qualname: str) -> None:
    assert _cites(_resolve(qualname)), (
        f"{qualname} (module {_resolve(qualname).__module__}) cites no source: name the paper "
        "as 'Author (year)' or 'Author et al. year' in its docstring or its module's, or add it "
        "to NOT_A_METHOD with the reason")


def test_not_a_method_entries_exist() -> None:
    stale = [q for q in NOT_A_METHOD if not hasattr(
        importlib.import_module(q.rsplit(".", 1)[0]), q.rsplit(".", 1)[1])]
    assert not stale, f"NOT_A_METHOD lists names that are no longer exported: {stale}"


@pytest.mark.parametrize("package", PACKAGES)
def test_docs_name_the_import_path_of_every_export(package: str) -> None:
    """docs/api.md has a row ``from PACKAGE import NAME`` for every exported name."""
    text = (Path(__file__).resolve().parent.parent / "docs" / "api.md").read_text(
        encoding="utf-8")
    absent = [n for n, _ in _exports(package) if f"`from {package} import {n}`" not in text]
    assert not absent, f"docs/api.md lacks the import path of {package}: {absent}"


def test_registered_metrics_cite_their_paper() -> None:
    from nlgeval.metrics import available_metrics, metric_class

    names = available_metrics()
    assert {"bleu", "chrf", "ter"} <= set(names)
    silent = [n for n in names if n not in NOT_A_PUBLISHED_METRIC and not _cites(metric_class(n))]
    assert not silent, f"metric adapters without an author-year citation: {silent}"


def test_registered_corpora_cite_their_paper() -> None:
    from nlgeval.corpora import REGISTRY

    for name, reg in REGISTRY.items():
        assert reg.descriptor.citation.strip(), f"corpus {name}: descriptor has no citation"
        assert _cites(reg.loader), f"corpus {name}: loader module cites no paper"
