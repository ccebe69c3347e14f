"""Every workflow notebook in notebooks/ runs top to bottom (nbclient) and ends with LaTeX.

One parametrised test per notebook: the kernel executes every cell (a cell that raises fails
the test), the last code cell must print a LaTeX table a paper can ``\\input{}``, and no output
may show a machine path (the notebooks are rendered into the docs site with their outputs).
Notebooks that read a bundled corpus skip with a reason when no corpora folder is available.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest

from conftest import shared_corpora_dir

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"

# notebook -> (needs a corpora folder, a string one of its outputs must contain)
CASES = {
    "validate_your_own_data.ipynb": (False, "top cluster"),
    "machine_translation_wmt21.ipynb": (True, "constant metric (all pairs tied)"),
    "compare_generators_human.ipynb": (False, "Krippendorff's alpha"),
    "triangle_and_items.ipynb": (False, "Ask each evaluator to rate at least"),
    "online_experiment.ipynb": (False, "pages submitted"),
}

pytestmark = pytest.mark.slow


def _outputs(nb) -> list[str]:  # noqa: ANN001
    return [o.get("text", "") + str(o.get("data", {}).get("text/plain", ""))
            for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])]


def test_every_notebook_is_listed() -> None:
    assert sorted(p.name for p in NOTEBOOKS.glob("*.ipynb")
                  if p.name != "validate_webnlg2020.ipynb") == sorted(CASES)


@pytest.mark.parametrize("name", sorted(CASES))
def test_notebook_executes(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    needs_data, expected = CASES[name]
    data = shared_corpora_dir()
    if needs_data and data is None:
        pytest.skip("no corpora folder: set NLGEVAL_DATA")
    if data is not None:
        monkeypatch.setenv("NLGEVAL_DATA", str(data))  # the kernel inherits the environment
    monkeypatch.setenv("CI", "true")  # no progress bars in the outputs
    monkeypatch.setenv("MPLBACKEND", "module://matplotlib_inline.backend_inline")
    path = NOTEBOOKS / name
    nb = nbformat.read(path, as_version=4)
    client = nbclient.NotebookClient(nb, timeout=300, kernel_name="python3",
                                     resources={"metadata": {"path": str(NOTEBOOKS)}})
    client.execute()  # raises CellExecutionError naming the cell that failed
    outputs = _outputs(nb)
    assert not any(o.get("output_type") == "error" for c in nb.cells if c.cell_type == "code"
                   for o in c.get("outputs", []))
    assert any(expected in o for o in outputs), f"{name}: no output contains {expected!r}"
    last = [c for c in nb.cells if c.cell_type == "code"][-1]
    text = "".join(o.get("text", "") for o in last.get("outputs", []))
    assert "\\begin{table}" in text and "\\end{table}" in text, f"{name} must end with LaTeX"
    assert "\\begin{tabular}" in text and "\\toprule" in text
    # figures are shown inline
    assert any("image/png" in o.get("data", {}) for c in nb.cells if c.cell_type == "code"
               for o in c.get("outputs", [])), f"{name} shows no figure"
    # no machine paths in what the docs site shows
    joined = "\n".join(outputs)
    for path_text in filter(None, [str(data) if data else "", tempfile.gettempdir() + os.sep,
                                   str(NOTEBOOKS.parent)]):
        assert path_text not in joined, f"{name} prints a machine path ({path_text})"
