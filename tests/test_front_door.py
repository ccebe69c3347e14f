"""The front door (issue 27): ``import nlgeval`` gives the five common tasks -- load a corpus,
score, validate, compare systems, agreement -- as the library's own functions, imported on
first use (PEP 562) so that ``import nlgeval`` stays light."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import nlgeval
from nlgeval.corpora import load_corpus
from nlgeval.human import agreement_report, compare_systems
from nlgeval.metrics import score_corpus
from nlgeval.report import run_validation

FRONT_DOOR = {
    "load_corpus": load_corpus,
    "score_corpus": score_corpus,
    "validate": run_validation,
    "compare_systems": compare_systems,
    "agreement": agreement_report,
}
HEAVY = ("pandas", "numpy", "scipy", "nlgeval.corpora", "nlgeval.metrics", "nlgeval.report",
         "nlgeval.human", "nlgeval.correlation")
DOCS = Path(__file__).resolve().parents[1] / "docs"


@pytest.mark.parametrize("name", sorted(FRONT_DOOR))
def test_each_name_is_the_library_function(name: str) -> None:
    assert getattr(nlgeval, name) is FRONT_DOOR[name]
    assert name in nlgeval.__all__
    assert name in dir(nlgeval)


def test_from_import_works_and_unknown_names_fail() -> None:
    from nlgeval import agreement, validate

    assert validate is run_validation and agreement is agreement_report
    with pytest.raises(AttributeError, match="no attribute 'no_such_task'"):
        _ = nlgeval.no_such_task
    with pytest.raises(ImportError):
        from nlgeval import no_such_task  # noqa: F401


def _modules_after(code: str) -> list[str]:
    out = subprocess.run(
        [sys.executable, "-c",
         f"import sys\n{code}\nimport json; print(json.dumps(sorted(sys.modules)))"],
        capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_import_nlgeval_loads_no_heavy_module() -> None:
    loaded = _modules_after("import nlgeval")
    assert "nlgeval" in loaded
    assert [m for m in HEAVY if m in loaded] == []


def test_a_front_door_name_imports_its_package_on_first_use() -> None:
    # the check above can fail: touching a front-door name does load the library behind it
    loaded = _modules_after("import nlgeval\nnlgeval.agreement")
    assert "nlgeval.human" in loaded and "pandas" in loaded
    assert "nlgeval.report" not in loaded


@pytest.mark.parametrize("page", ["api.md", "index.md"])
def test_the_docs_name_every_front_door_function(page: str) -> None:
    text = (DOCS / page).read_text(encoding="utf-8")
    missing = [n for n in FRONT_DOOR if f"nlgeval.{n}" not in text]
    assert missing == []
