"""The reproduction scripts under ``experiments/`` run end to end (small settings, temporary
output folder) and write what their READMEs promise; a script that no longer matches the
library fails here instead of at the next reproduction."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parent.parent


def _run(script: str, *args: str) -> str:
    done = subprocess.run([sys.executable, str(ROOT / script), *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


def test_items_2023_script(tmp_path: Path) -> None:
    out = _run("experiments/items_2023/run.py", "--out", str(tmp_path), "--replications", "5",
               "--nboot", "5", "--workers", "1")
    assert "2928 cells" in out  # 6 distributions x 2 methods x sizes 2..245
    timing = (tmp_path / "timing.txt").read_text(encoding="utf-8")
    assert "backend: " in timing and "workers: 1" in timing
    comp = pd.read_csv(tmp_path / "table3_comparison.csv")
    assert set(comp["profile"]) == {"positive", "negative", "polarized", "neutral", "random"}
    assert (comp["difference"].dropna() == comp["nlgeval"].dropna() - comp["paper"]
            .loc[comp["nlgeval"].notna()]).all()
    assert (tmp_path / "run.json").is_file() and (tmp_path / "rejection_curves.png").is_file()


def test_triangle_2020_script(tmp_path: Path) -> None:
    _run("experiments/triangle_2020/reproduce.py", "--out", str(tmp_path))
    text = (tmp_path / "comparison.md").read_text(encoding="utf-8")
    assert "Table 1" in text
    assert (tmp_path / "run.json").is_file()
    assert any((tmp_path / "tables").iterdir())
