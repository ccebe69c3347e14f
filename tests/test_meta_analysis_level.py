"""``nlgeval meta-analyse --level L``: one correlation level for every study.

A meta-analysis must not mix levels: a system-level r (n = systems) and a segment-level r
(n = outputs) estimate different quantities. So corpora named with ``--corpora`` are run at
``--level``, never at the levels their paper reports and ``nlgeval validate`` defaults to
(REALSumm: system and item, following Bhandari et al. 2020), and a study folder without
Pearson correlations at ``--level`` is a one-line error (exit status 2) naming it, raised before
any corpus is run. Checked end to end with the command on the real corpora: study folders
written by ``nlgeval validate`` (REALSumm with its default levels, WebNLG+ 2020 with
segment and system), the pooled per-study r against each folder's own ``correlations.csv``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from _cli import run_cli as run

from nlgeval.cli import main
from nlgeval.errors import InputError


@pytest.fixture(scope="module")
def folders(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """``nlgeval validate`` report folders: realsumm with its default levels (system, item),
    webnlg2020 with segment and system; chrf only, no resampling (fast)."""
    root = tmp_path_factory.mktemp("level_studies")
    fast = ["--metrics", "chrf", "--resamples", "0", "--permutations", "0", "--quiet"]
    for name, extra in (("realsumm", []), ("webnlg2020", ["--levels", "segment,system"])):
        try:
            main(["validate", name, *fast, *extra, "--out", str(root / name)])
        except SystemExit as exc:
            assert not exc.code, f"validate {name} failed"
    return {"realsumm": root / "realsumm", "webnlg2020": root / "webnlg2020"}


def _pearson(folder: Path, metric: str, criterion: str, level: str) -> pd.Series:
    corr = pd.read_csv(folder / "correlations.csv")
    hit = corr[(corr["metric"] == metric) & (corr["criterion"] == criterion)
               & (corr["level"] == level) & (corr["statistic"] == "pearson")]
    assert len(hit) == 1
    return hit.iloc[0]


def test_validate_used_the_corpus_default_levels(folders: dict[str, Path]) -> None:
    levels = set(pd.read_csv(folders["realsumm"] / "correlations.csv")["level"])
    assert levels == {"system", "item"}  # Bhandari et al. 2020's levels, no segment


def test_folder_without_the_level_is_a_one_line_error(folders: dict[str, Path],
                                                      capsys: pytest.CaptureFixture[str],
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    dirs = [str(folders["webnlg2020"]), str(folders["realsumm"])]
    for extra in ([], ["--json"], ["--level", "segment", "--quiet"]):
        code, out, err = run(["meta-analyse", *dirs, *extra], capsys)
        assert code == 2 and out == ""
        lines = err.strip().splitlines()
        assert len(lines) == 1, err
        assert "correlations.csv, column 'level'" in lines[0]
        assert "study 'realsumm' has no Pearson correlation at the segment level" in lines[0]
        assert "only at: system, item" in lines[0] and "--levels segment" in lines[0]
    # checked before any corpus is run (a corpus run would fail here)
    import nlgeval.meta_analysis.run as run_module

    def no_run(*args: object, **kwargs: object) -> None:
        raise AssertionError("a corpus was run before the study folders were checked")

    monkeypatch.setattr(run_module, "run_corpus_studies", no_run)
    code, _, err = run(["meta-analyse", *dirs, "--corpora", "e2e"], capsys)
    assert code == 2 and "study 'realsumm'" in err


def test_folders_pool_the_level_they_share(folders: dict[str, Path],
                                           capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(["meta-analyse", str(folders["webnlg2020"]), str(folders["realsumm"]),
                          "--level", "system", "--metrics", "chrf", "--no-compare", "--json"],
                         capsys)
    assert code == 0, err
    res = json.loads(out)
    assert res["inputs"]["level"] == "system"
    rec = res["by_metric"]["chrf"]["adequacy"]
    assert rec["level"] == "system" and rec["k"] == 2
    for study in rec["studies"]:
        crit = {"realsumm": "LitePyramid", "webnlg2020": "Correctness"}[study["study"]]
        ref = _pearson(folders[study["study"]], "chrf", crit, "system")
        assert study["r"] == ref["value"] and study["n"] == ref["n"]
    # the item level is REALSumm's too, but not WebNLG's folder: an error again
    code, _, err = run(["meta-analyse", str(folders["webnlg2020"]), str(folders["realsumm"]),
                        "--level", "item"], capsys)
    assert code == 2 and "study 'webnlg2020' has no Pearson correlation at the item level" in err


def test_corpora_are_run_at_the_level_not_at_their_default(folders: dict[str, Path],
                                                          capsys: pytest.CaptureFixture[str]
                                                          ) -> None:
    code, out, err = run(["meta-analyse", "--corpora", "webnlg2020,realsumm", "--metrics",
                          "chrf", "--level", "system", "--no-compare", "--json"], capsys)
    assert code == 0, err
    res = json.loads(out)
    rec = res["by_metric"]["chrf"]["adequacy"]
    assert res["inputs"]["level"] == "system" and rec["level"] == "system"
    got = {s["study"]: s for s in rec["studies"]}
    ref = _pearson(folders["realsumm"], "chrf", "LitePyramid", "system")
    # realsumm run now at the system level = its validate folder's system-level r
    assert got["realsumm"]["r"] == pytest.approx(ref["value"], rel=1e-12)
    assert got["realsumm"]["n"] == ref["n"]
    # at the segment level (not one of realsumm's default levels) it is run at that level
    code, out, err = run(["meta-analyse", "--corpora", "webnlg2020,realsumm", "--metrics",
                          "chrf", "--no-compare", "--json"], capsys)
    assert code == 0, err
    seg = {s["study"]: s for s in
           json.loads(out)["by_metric"]["chrf"]["adequacy"]["studies"]}
    rs = pd.read_csv(folders["realsumm"] / "segments.csv").dropna(subset=["chrf",
                                                                          "LitePyramid"])
    assert seg["realsumm"]["n"] == len(rs) > ref["n"]


def test_a_study_with_no_pearson_correlation_at_all(tmp_path: Path) -> None:
    from nlgeval.meta_analysis import run_meta_analysis

    folder = tmp_path / "spearman_only"
    folder.mkdir()
    (folder / "run.json").write_text(json.dumps({"corpus": "e2e"}), encoding="utf-8")
    pd.DataFrame({"metric": ["bleu"], "criterion": ["quality"], "level": ["segment"],
                  "statistic": ["spearman"], "value": [0.3], "n": [100]}).to_csv(
        folder / "correlations.csv", index=False)
    with pytest.raises(InputError, match="none at any level"):
        run_meta_analysis(study_dirs=[folder])
