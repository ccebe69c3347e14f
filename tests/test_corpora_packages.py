"""The MTME layout and the WMT21 TED corpus are concept packages (issue 27).

Each public function sits in the module of its steps, the package re-exports it, the old module
paths are gone (no shims at 0.1.0), and the registry finds the WMT21 TED loaders by function.
"""

from __future__ import annotations

import importlib
import importlib.util

import pytest

OLD_PATHS = (
    "nlgeval.corpora._mtme_layout", "nlgeval.corpora._mtme_read", "nlgeval.corpora._mtme_scores",
    "nlgeval.corpora._mtme_write", "nlgeval.corpora.mtme_results",
    "nlgeval.corpora.wmt21_ted_ende", "nlgeval.corpora.wmt21_ted_zhen",
    "nlgeval.corpora.wmt21_ted_files", "nlgeval.corpora.wmt21_ted_mqm",
)


@pytest.mark.parametrize("old", OLD_PATHS)
def test_old_module_paths_are_gone(old: str) -> None:
    assert importlib.util.find_spec(old) is None


@pytest.mark.parametrize(("package", "name", "home", "step"), [
    ("nlgeval.corpora.mtme", "read_mtme", "nlgeval.corpora.mtme.read", "_read_source"),
    ("nlgeval.corpora.mtme", "write_mtme", "nlgeval.corpora.mtme.write", "_put_outputs"),
    ("nlgeval.corpora.wmt21_ted", "load", "nlgeval.corpora.wmt21_ted", "_reference_ids"),
    ("nlgeval.corpora.wmt21_ted", "read_errors", "nlgeval.corpora.wmt21_ted.files",
     "_read_tsv_unquoted"),
    ("nlgeval.corpora.wmt21_ted", "mqm_ratings", "nlgeval.corpora.wmt21_ted.mqm",
     "_NON_TRANSLATION"),
])
def test_public_function_sits_beside_its_steps(package: str, name: str, home: str,
                                               step: str) -> None:
    pkg = importlib.import_module(package)
    assert hasattr(pkg, "__path__"), f"{package} is a package"
    assert name in pkg.__all__
    func = getattr(pkg, name)
    assert func.__module__ == home
    assert hasattr(importlib.import_module(home), step)


def test_registry_names_the_loader_function() -> None:
    from nlgeval.corpora import REGISTRY, registered_corpus
    from nlgeval.corpora.wmt21_ted import load_ende, load_zhen

    assert REGISTRY["wmt21-ted-ende"].loader is load_ende
    assert REGISTRY["wmt21-ted-zhen"].loader is load_zhen
    assert REGISTRY["e2e"].function == "load"
    assert registered_corpus("wmt21_ted_zhen") is REGISTRY["wmt21-ted-zhen"]
    assert registered_corpus("no-such-corpus") is None
