"""No import circles inside nlgeval: the import graph (grimp, as import-linter builds it; every
import counts, including those inside functions and under ``TYPE_CHECKING``) has no strongly
connected component of more than one module, apart from the known ones listed below."""

from __future__ import annotations

import grimp
import pytest

# Circles known and left for their owners; each entry is one strongly connected component.
# Remove an entry when its circle is broken (the test then fails on a stale entry). None today:
# a package's helpers import its leaf modules (nlgeval.io.text, nlgeval.corpus.info,
# nlgeval.parallel.backends), never the package itself.
KNOWN_CYCLES: set[frozenset[str]] = set()


def import_cycles(graph: grimp.ImportGraph) -> list[frozenset[str]]:
    """The strongly connected components with more than one module (Tarjan 1972), iteratively."""
    edges = {m: sorted(graph.find_modules_directly_imported_by(m)) for m in sorted(graph.modules)}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[frozenset[str]] = []
    for root in edges:
        if root in index:
            continue
        work = [(root, 0)]
        while work:
            v, i = work.pop()
            if i == 0:
                index[v] = low[v] = len(index)
                stack.append(v)
                on_stack.add(v)
            targets = edges.get(v, [])
            if i < len(targets):
                work.append((v, i + 1))
                w = targets[i]
                if w not in index:
                    work.append((w, 0))
                elif w in on_stack:
                    low[v] = min(low[v], index[w])
                continue
            if low[v] == index[v]:
                comp = set()
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    comp.add(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    cycles.append(frozenset(comp))
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[v])
    return cycles


@pytest.fixture(scope="module")
def cycles() -> list[frozenset[str]]:
    return import_cycles(grimp.build_graph("nlgeval", cache_dir=None))


def test_no_new_import_cycles(cycles: list[frozenset[str]]) -> None:
    new = [sorted(c) for c in cycles if c not in KNOWN_CYCLES]
    assert not new, f"import circles in nlgeval: {new}"


def test_known_cycles_still_exist(cycles: list[frozenset[str]]) -> None:
    stale = [sorted(c) for c in KNOWN_CYCLES if c not in cycles]
    assert not stale, f"these circles are gone: remove them from KNOWN_CYCLES: {stale}"


@pytest.mark.parametrize("pair", [
    ("nlgeval.triangle.analysis", "nlgeval.triangle.wording"),
    ("nlgeval.cli.human", "nlgeval.cli.human_plan"),
    ("nlgeval.correlation.bootstrap", "nlgeval.correlation._resampled_means"),
    ("nlgeval.experiment.app", "nlgeval.experiment.evaluator"),
    ("nlgeval.experiment.evaluator", "nlgeval.experiment.evaluator_forms"),
    ("nlgeval.experiment.config_tables", "nlgeval.experiment.platforms"),
    ("nlgeval.parallel", "nlgeval.parallel.split"),
    ("nlgeval.io", "nlgeval.io._formats"),
    ("nlgeval.corpus", "nlgeval.corpus._validate"),
])
def test_the_circles_named_in_issue_27_are_gone(cycles: list[frozenset[str]],
                                                pair: tuple[str, str]) -> None:
    assert not any(set(pair) <= c for c in cycles)


def test_the_finder_finds_a_circle_and_only_the_circle() -> None:
    g = grimp.ImportGraph()
    for a, b in [("p.a", "p.b"), ("p.b", "p.c"), ("p.c", "p.a"), ("p.c", "p.d"),
                 ("p.d", "p.e"), ("p.f", "p.f2"), ("p.f2", "p.f")]:
        g.add_import(importer=a, imported=b)
    assert sorted(map(sorted, import_cycles(g))) == [["p.a", "p.b", "p.c"], ["p.f", "p.f2"]]
    g.remove_import(importer="p.c", imported="p.a")
    assert import_cycles(g) == [frozenset({"p.f", "p.f2"})]
