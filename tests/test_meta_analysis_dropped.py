"""``nlgeval meta-analyse`` without ``--metrics`` tells which metrics a study could not give.

A metric with system-level scores only (a corpus-level metric, an LLM ranking) has no
segment-level correlation; pooled at the segment level it used to vanish from a study without
a word. Now each such metric is named in the run's notes with the study and the level (and the
levels it has), as the other left-out correlations are, printed by the command and kept in
``--json``; so is a metric that another study has at the level and this one lacks. Nothing
pooled changes. End to end: two text-free studies written by ``nlgeval validate --human
--scores`` (a segment-level metric, a system-level-only one, and one that only the first study
has), pooled by ``nlgeval meta-analyse`` on their folders.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from _cli import run_cli as run

from nlgeval.cli import main


@pytest.fixture(scope="module")
def folders(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Two validate folders of generated ratings (8 systems x 30 items) and scores: ``segm``
    per output, ``sysjudge`` per system only, ``only_a`` per output in study A only; and a
    criterion map for them."""
    root = tmp_path_factory.mktemp("dropped")
    for k, name in enumerate(["studyA", "studyB"]):
        rng = np.random.default_rng(10 + k)
        quality = {f"S{i}": rng.normal() for i in range(8)}
        ratings, scores = [], []
        for s, q in quality.items():
            for j in range(30):
                h = q + rng.normal()
                ratings.append({"system": s, "item": f"i{j}", "criterion": "quality",
                                "score": round(h, 3)})
                scores.append({"system": s, "item": f"i{j}", "metric": "segm",
                               "score": round(h + rng.normal(), 3)})
                if name == "studyA":
                    scores.append({"system": s, "item": f"i{j}", "metric": "only_a",
                                   "score": round(h + 2 * rng.normal(), 3)})
            scores.append({"system": s, "item": "", "metric": "sysjudge",
                           "score": round(q + 0.3 * rng.normal(), 3)})
        pd.DataFrame(ratings).to_csv(root / f"{name}_ratings.csv", index=False)
        pd.DataFrame(scores).to_csv(root / f"{name}_scores.csv", index=False)
        code = 0
        try:
            main(["validate", "--human", str(root / f"{name}_ratings.csv"), "--scores",
                  str(root / f"{name}_scores.csv"), "--metrics", "none", "--levels",
                  "segment,system", "--resamples", "0", "--permutations", "0", "--quiet",
                  "--out", str(root / name)])
        except SystemExit as exc:
            code = int(exc.code or 0)
        assert code == 0, f"validate {name} failed"
    (root / "map.csv").write_text("corpus,construct,criterion,task,language\n"
                                  "studyA_ratings,overall,quality,toy,en\n"
                                  "studyB_ratings,overall,quality,toy,en\n", encoding="utf-8")
    return {"A": root / "studyA", "B": root / "studyB", "map": root / "map.csv"}


def _pooled(res: dict) -> str:
    """The JSON without the notes and the inputs (which name the folders)."""
    return json.dumps({k: v for k, v in res.items() if k not in ("notes", "out", "inputs")},
                      sort_keys=True)


def test_a_system_level_only_metric_is_noted_at_segment_level(
        folders: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    levels = pd.read_csv(folders["A"] / "correlations.csv").groupby("metric")["level"].agg(set)
    assert levels.to_dict() == {"segm": {"segment", "system"}, "sysjudge": {"system"},
                                "only_a": {"segment", "system"}}
    args = ["meta-analyse", str(folders["A"]), str(folders["B"]), "--criterion-map",
            str(folders["map"])]
    code, out, err = run([*args, "--json"], capsys)
    assert code == 0, err
    res = json.loads(out)
    notes = res["notes"]
    for study in ("studyA", "studyB"):
        assert (f"{study}: sysjudge (segment): no Pearson correlation at the segment level "
                "(only at: system): left out") in notes
    assert "studyB: only_a (segment): no Pearson correlation in the study: left out" in notes
    assert not any(n.startswith("studyA: only_a") or ": segm " in n for n in notes)
    assert set(res["by_metric"]) == {"segm"}  # only_a: 1 study, not pooled (noted)
    assert any(n.startswith("only_a / overall: only 1 study (studyA") for n in notes)
    assert res["by_metric"]["segm"]["overall"]["k"] == 2
    # printed by the command (one line each, on stderr) with the same wording
    code, out, err = run(args, capsys)
    assert code == 0
    for study in ("studyA", "studyB"):
        assert (f"note: {study}: sysjudge (segment): no Pearson correlation at the segment "
                "level (only at: system): left out") in err.splitlines()


def test_nothing_pooled_changes(folders: dict[str, Path], tmp_path: Path,
                                capsys: pytest.CaptureFixture[str]) -> None:
    """The same run on copies of the folders whose correlations never had ``sysjudge`` gives
    the same JSON apart from the notes (and the folders' names)."""
    import shutil

    copies = []
    for key in ("A", "B"):
        dst = tmp_path / folders[key].name
        shutil.copytree(folders[key], dst)
        corr = pd.read_csv(dst / "correlations.csv")
        corr[corr["metric"] != "sysjudge"].to_csv(dst / "correlations.csv", index=False)
        copies.append(str(dst))
    base = ["--criterion-map", str(folders["map"]), "--json"]
    code, out, err = run(["meta-analyse", str(folders["A"]), str(folders["B"]), *base], capsys)
    assert code == 0, err
    with_sysjudge = json.loads(out)
    code, out, err = run(["meta-analyse", *copies, *base], capsys)
    assert code == 0, err
    without = json.loads(out)
    assert _pooled(with_sysjudge) == _pooled(without)
    assert [n for n in with_sysjudge["notes"] if "sysjudge" not in n] == without["notes"]


def test_system_level_pools_it_and_metrics_keep_their_notes(
        folders: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    base = ["meta-analyse", str(folders["A"]), str(folders["B"]), "--criterion-map",
            str(folders["map"]), "--json"]
    code, out, err = run([*base, "--level", "system"], capsys)
    assert code == 0, err
    res = json.loads(out)
    assert res["by_metric"]["sysjudge"]["overall"]["k"] == 2
    assert not any("sysjudge" in n for n in res["notes"])
    # with --metrics the named metrics are noted per criterion, as before; no others
    code, out, err = run([*base, "--metrics", "segm,sysjudge"], capsys)
    assert code == 0, err
    notes = json.loads(out)["notes"]
    assert [n for n in notes if "sysjudge" in n] == [
        f"{s}: sysjudge x quality (segment): no Pearson correlation in the study: left out"
        for s in ("studyA", "studyB")]
    assert not any("only_a" in n for n in notes)
