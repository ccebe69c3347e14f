"""``nlgeval meta-analyse`` on the bundled corpora, on study folders and on a user's table.

The interface the acceptance checks use (issue 30): ``--corpora a,b,c --metrics ... --json``
prints one JSON object with, per metric and construct, ``r_pooled, ci_low, ci_high, pi_low,
pi_high, tau2, i2, q, k`` and the per-study ``r`` and ``n``; ``--effects FILE --json`` pools
a table of ``study, r, n``; ``--tau2 dl|reml|pm`` picks the estimator. The per-study numbers
are checked against scipy's Pearson r on the studies' own per-output scores, the pooled ones
against the library on those per-study numbers, and a user table against metafor's published
``dat.molloy2014`` results (metafor 2.2.7 docs/reference/dat.molloy2014.html).
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from _cli import run_cli as run
from scipy import stats

from nlgeval.meta_analysis import random_effects

KEYS = {"r_pooled", "ci_low", "ci_high", "pi_low", "pi_high", "tau2", "i2", "q", "k"}
MOLLOY = pd.DataFrame({
    "study": [f"s{i}" for i in range(16)],
    "r": [0.187, 0.162, 0.34, 0.32, 0.27, 0.0, 0.175, 0.05, 0.26, 0.01, -0.09, 0.37, 0.0,
          0.15, 0.24, 0.04],
    "n": [109, 749, 55, 107, 72, 65, 174, 326, 58, 771, 56, 91, 116, 537, 158, 65]})




@pytest.fixture(scope="module")
def corpora_json() -> dict:
    """The command as the acceptance check runs it, in a subprocess: stdout must be exactly
    one JSON object."""
    import subprocess
    import sys

    proc = subprocess.run(
        [sys.executable, "-c",
         "from nlgeval.cli import main; main(['meta-analyse', '--corpora', "
         "'webnlg2020,e2e,novikova2017', '--metrics', 'bleu,chrf', '--json', '--quiet'])"],
        capture_output=True, text=True, timeout=600, check=False)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def test_corpora_json_interface(corpora_json: dict) -> None:
    results = corpora_json["results"]
    assert {(r["metric"], r["construct"]) for r in results} == {
        (m, c) for m in ("bleu", "chrf") for c in ("fluency", "adequacy", "overall")}
    for rec in results:
        assert KEYS <= set(rec)
        assert rec["k"] == len(rec["studies"])
        assert all({"study", "r", "n"} <= set(s) for s in rec["studies"])
        assert rec["ci_low"] < rec["r_pooled"] < rec["ci_high"]
        assert corpora_json["by_metric"][rec["metric"]][rec["construct"]]["k"] == rec["k"]
    fluency = corpora_json["by_metric"]["chrf"]["fluency"]
    # Novikova et al. (2017) are three data sets (criterion map: split_by dataset)
    assert [s["study"] for s in fluency["studies"]] == [
        "webnlg2020", "e2e", "novikova2017:BAGEL", "novikova2017:SFHOT", "novikova2017:SFRES"]
    assert [s["criterion"] for s in fluency["studies"]] == ["Fluency"] + ["naturalness"] * 4
    assert fluency["k"] == 5 and corpora_json["by_metric"]["chrf"]["adequacy"]["k"] == 4


def test_corpora_pooled_numbers_follow_from_the_per_study_numbers(corpora_json: dict) -> None:
    for rec in corpora_json["results"]:
        r = np.array([s["r"] for s in rec["studies"]])
        n = np.array([s["n"] for s in rec["studies"]])
        fit = random_effects(np.arctanh(r), 1 / (n - 3), method="reml")
        assert rec["r_pooled"] == pytest.approx(math.tanh(fit.statistic), rel=1e-10)
        assert rec["tau2"] == pytest.approx(fit.tau2, rel=1e-8, abs=1e-12)
        assert rec["q"] == pytest.approx(fit.q, rel=1e-10)


@pytest.fixture(scope="module")
def study_dirs(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    from nlgeval.corpora import load_corpus
    from nlgeval.report import run_validation, write_report

    dirs = []
    for name in ("e2e", "novikova2017"):
        study = run_validation(load_corpus(name), ["bleu", "chrf"], levels=["segment"],
                               coefficients=["pearson"], n_resamples=0, permutations=0,
                               table9=False)
        folder = tmp_path_factory.mktemp("studies") / name
        write_report(study, folder)
        dirs.append(folder)
    return dirs


def test_study_folders_pool_what_the_studies_measured(study_dirs: list[Path],
                                                      corpora_json: dict,
                                                      capsys: pytest.CaptureFixture[str]
                                                      ) -> None:
    code, out, err = run(["meta-analyse", *map(str, study_dirs), "--json", "--tau2", "dl"],
                         capsys)
    assert code == 0, err
    res = json.loads(out)
    rec = res["by_metric"]["chrf"]["fluency"]
    assert [s["study"] for s in rec["studies"]] == ["e2e", "novikova2017"]
    on_the_fly = {s["study"]: s for s in corpora_json["by_metric"]["chrf"]["fluency"]["studies"]}
    for study in rec["studies"]:  # the per-study r is Pearson's r on the study's own outputs
        folder = [d for d in study_dirs if d.name == study["study"]][0]
        seg = pd.read_csv(folder / "segments.csv").dropna(subset=["chrf", "naturalness"])
        assert study["r"] == pytest.approx(stats.pearsonr(seg["chrf"], seg["naturalness"])[0],
                                           rel=1e-10)
        assert study["n"] == len(seg)
        if study["study"] in on_the_fly:
            assert study["r"] == pytest.approx(on_the_fly[study["study"]]["r"], rel=1e-12)
    # each Novikova data set run on the fly = Pearson's r on that set's outputs
    seg = pd.read_csv(study_dirs[1] / "segments.csv").dropna(subset=["chrf", "naturalness"])
    for name in ("BAGEL", "SFHOT", "SFRES"):
        part = seg[seg["item"].str.startswith(name + "-")]
        split = on_the_fly[f"novikova2017:{name}"]
        assert split["n"] == len(part)
        assert split["r"] == pytest.approx(stats.pearsonr(part["chrf"], part["naturalness"])[0],
                                           rel=1e-10)
    assert res["settings"]["tau2"] == "dl"
    comp = [c for c in res["comparisons"] if c["construct"] == "fluency"]
    assert comp and comp[0]["metric_a"] == "bleu" and comp[0]["k"] == 2


def test_study_folder_with_the_earlier_column_names(study_dirs: list[Path],
                                                    tmp_path: Path) -> None:
    """A correlations.csv written before the columns were renamed (coefficient, r, p,
    p_corrected) is read as one with the current names, and pools the same effects."""
    import shutil

    from nlgeval.meta_analysis import load_criterion_map, read_study, study_effects

    new = study_dirs[0]
    old = tmp_path / new.name
    shutil.copytree(new, old)
    corr = pd.read_csv(new / "correlations.csv")
    assert {"statistic", "value", "pvalue", "pvalue_corrected"} <= set(corr.columns)
    corr.rename(columns={"statistic": "coefficient", "value": "r", "pvalue": "p",
                         "pvalue_corrected": "p_corrected"}).to_csv(old / "correlations.csv",
                                                                    index=False)
    a, b = read_study(new), read_study(old)
    pd.testing.assert_frame_equal(a.correlations, b.correlations)
    cmap = load_criterion_map()
    eff = study_effects([b], cmap)
    assert len(eff) > 0
    pd.testing.assert_frame_equal(study_effects([a], cmap), eff)


def test_effects_table_reproduces_metafor(tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "molloy.csv"
    MOLLOY.to_csv(path, index=False)
    code, out, err = run(["meta-analyse", "--effects", str(path), "--json", "--prediction",
                          "metafor"], capsys)
    assert code == 0, err
    rec = json.loads(out)["results"][0]
    assert (rec["r_pooled"], rec["ci_low"], rec["ci_high"]) == pytest.approx(
        (0.149, 0.088, 0.209), abs=5e-4)
    assert (rec["pi_low"], rec["pi_high"]) == pytest.approx((-0.037, 0.325), abs=5e-4)
    assert rec["tau2"] == pytest.approx(0.0081, abs=5e-5) and rec["k"] == 16
    assert rec["q"] == pytest.approx(38.1595, abs=5e-5)
    assert [s["n"] for s in rec["studies"]] == MOLLOY["n"].tolist()
    taus = {}
    for method in ("dl", "reml", "pm"):
        code, out, _ = run(["meta-analyse", "--effects", str(path), "--json", "--tau2", method],
                           capsys)
        taus[method] = json.loads(out)["results"][0]["tau2"]
    assert len(set(taus.values())) == 3


@pytest.mark.parametrize(("content", "where"), [
    ("study,r\na,0.5\n", "column 'n'"),
    ("study,r,n\na,0.5,40\nb,0.3,3\n", "row 3, column 'n'"),
    ("study,r,n\na,1.0,40\nb,0.3,30\n", "row 2, column 'r'"),
    ("study,r,n\na,0.5,40\nb,x,30\n", "row 3, column 'r'")])
def test_bad_effects_exit_2_naming_file_row_column(tmp_path: Path, content: str, where: str,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "bad.csv"
    path.write_text(content, encoding="utf-8")
    code, out, err = run(["meta-analyse", "--effects", str(path), "--json"], capsys)
    assert code == 2 and out == ""
    assert err.startswith("error: ") and str(path) in err and where in err
    assert len(err.strip().splitlines()) == 1


def test_bad_options_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "e.csv"
    MOLLOY.head(3).to_csv(path, index=False)
    for args in (["--tau2", "ml"], ["--level", "corpus"], ["--prediction", "exact"]):
        code, _, err = run(["meta-analyse", "--effects", str(path), *args], capsys)
        assert code == 2 and err.startswith("error: "), args
    code, _, err = run(["meta-analyse"], capsys)
    assert code == 2 and "nothing to pool" in err
    code, _, err = run(["meta-analyse", str(tmp_path)], capsys)
    assert code == 2 and "run.json" in err


def test_report_and_moderator(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    table = MOLLOY.assign(design=["cross"] * 4 + ["prospective"] * 12, metric="conscientious")
    path = tmp_path / "e.csv"
    table.to_csv(path, index=False)
    out_dir = tmp_path / "report"
    code, out, err = run(["meta-analyse", "--effects", str(path), "--moderator", "design",
                          "--out", str(out_dir), "--hartung-knapp"], capsys)
    assert code == 0, err
    assert "verdict: conscientious (all): pooled r" in out
    for name in ("report.html", "report.md", "run.json", "pooled.csv", "effects.csv",
                 "tables/pooled.tex", "tables/moderators.md",
                 "figures/forest_conscientious_all.png"):
        assert (out_dir / name).is_file(), name
    assert "data:image/png;base64" in (out_dir / "report.html").read_text(encoding="utf-8")
    record = json.loads((out_dir / "run.json").read_text(encoding="utf-8"))
    assert record["settings"]["hartung_knapp"] is True and record["command"] == "meta-analyse"


def test_item_level_takes_the_bootstrap_variance(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(["meta-analyse", "--corpora", "webnlg2020,e2e", "--metrics", "chrf",
                          "--level", "item", "--resamples", "30", "--json", "--quiet"], capsys)
    assert code == 0, err
    res = json.loads(out)
    rec = res["by_metric"]["chrf"]["fluency"]
    assert rec["k"] == 2 and rec["level"] == "item"
    assert res["inputs"]["resamples"] == 30


def test_criterion_map_and_system_level(tmp_path: Path,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    cmap = tmp_path / "map.csv"
    cmap.write_text("corpus,construct,criterion,task,language\n"
                    "e2e,overall,naturalness,restaurants,en\n"
                    "novikova2017,overall,quality,restaurants,en\n", encoding="utf-8")
    code, out, err = run(["meta-analyse", "--corpora", "e2e,novikova2017", "--metrics", "bleu",
                          "--level", "system", "--criterion-map", str(cmap), "--json",
                          "--quiet"], capsys)
    assert code == 0, err
    res = json.loads(out)
    # novikova2017 has 3 systems: n - 3 = 0, so its system-level r cannot be pooled
    assert res["results"] == []
    assert any("novikova2017" in n and "cannot be pooled" in n for n in res["notes"])
    assert any("only 1 study (e2e)" in n for n in res["notes"])
    bad = tmp_path / "bad.csv"
    bad.write_text("corpus,construct,criterion\ne2e,overall,quality\ne2e,overall,naturalness\n",
                   encoding="utf-8")
    code, _, err = run(["meta-analyse", "--corpora", "e2e", "--criterion-map", str(bad)],
                       capsys)
    assert code == 2 and "row 3, column 'construct'" in err and "twice" in err


def test_bootstrap_variance_comes_from_the_study_interval() -> None:
    from nlgeval.meta_analysis import Study, load_criterion_map, study_effects
    from nlgeval.meta_analysis.effects import variance_from_interval

    corr = pd.DataFrame({"metric": ["bleu"], "criterion": ["naturalness"],
                         "level": ["segment"], "coefficient": ["pearson"], "r": [0.05],
                         "n": [6006], "ci_low": [-0.007], "ci_high": [0.103]})
    study = Study("e2e", "e2e", corr, confidence_level=0.95)
    cmap = load_criterion_map()
    boot = study_effects([study], cmap, variance="bootstrap")
    assert boot["vi"].iloc[0] == pytest.approx(
        ((math.atanh(0.103) - math.atanh(-0.007)) / (2 * stats.norm.isf(0.025))) ** 2)
    assert boot["vi"].iloc[0] == pytest.approx(variance_from_interval(-0.007, 0.103))
    fisher = study_effects([study], cmap)
    assert fisher["vi"].iloc[0] == pytest.approx(1 / 6003)
    notes: list[str] = []
    none = study_effects([Study("e2e", "e2e", corr.drop(columns=["ci_low", "ci_high"]))],
                         cmap, variance="bootstrap", notes=notes)
    assert none.empty and "no bootstrap interval" in notes[0]


def test_dependence_rve_adds_the_related_criteria(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(["meta-analyse", "--corpora", "webnlg2020,novikova2017", "--metrics",
                          "chrf", "--dependence", "rve", "--no-split", "--json", "--quiet"],
                         capsys)
    assert code == 0, err
    rec = json.loads(out)["by_metric"]["chrf"]["adequacy"]
    assert rec["k"] == 2 and rec["n_effects"] == 4
    assert [s["criterion"] for s in rec["studies"]] == ["Correctness", "DataCoverage",
                                                        "Relevance", "informativeness"]
    assert rec["method"].startswith("rve")


def test_realsumm_litepyramid_is_adequacy(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(["meta-analyse", "--corpora", "webnlg2020,realsumm", "--metrics",
                          "chrf", "--json", "--quiet"], capsys)
    assert code == 0, err
    rec = json.loads(out)["by_metric"]["chrf"]["adequacy"]
    assert [(s["study"], s["criterion"], s["task"]) for s in rec["studies"]] == [
        ("webnlg2020", "Correctness", "data-to-text"),
        ("realsumm", "LitePyramid", "summarisation")]
    assert rec["studies"][1]["n"] == 2500


def test_effects_table_with_its_own_variances(tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "e.csv"
    path.write_text("study,r,n,vi\na,0.5,40,0.05\nb,0.3,100,0.02\nc,0.4,60,0.03\n",
                    encoding="utf-8")
    code, out, err = run(["meta-analyse", "--effects", str(path), "--json", "--tau2", "dl"],
                         capsys)
    assert code == 0, err
    fit = random_effects(np.arctanh([0.5, 0.3, 0.4]), [0.05, 0.02, 0.03], method="dl")
    assert json.loads(out)["results"][0]["r_pooled"] == pytest.approx(math.tanh(fit.statistic))
    path.write_text("study,r,n,vi\na,0.5,40,0.05\nb,0.3,100,-1\n", encoding="utf-8")
    code, _, err = run(["meta-analyse", "--effects", str(path)], capsys)
    assert code == 2 and "row 3, column 'vi'" in err


def test_small_sample_rve_is_the_library_fit_with_tiptons_corrections(
        capsys: pytest.CaptureFixture[str]) -> None:
    """``--dependence rve --small-sample`` pools with ``robust_variance(small_sample=True)``
    (Tipton 2015, robumeta's ``small = TRUE``): the same estimate as without it, a wider
    interval from the CR2 sandwich on Satterthwaite degrees of freedom, recomputed here from
    the effects the run reports; ``--small-sample`` without rve is refused."""
    import numpy as np

    from nlgeval.meta_analysis.robust import robust_variance

    base = ["meta-analyse", "--corpora", "webnlg2020,novikova2017", "--metrics", "chrf",
            "--dependence", "rve", "--no-split", "--json", "--quiet"]
    code, out, err = run(base, capsys)
    assert code == 0, err
    plain = json.loads(out)["by_metric"]["chrf"]["adequacy"]
    code, out, err = run([*base, "--small-sample"], capsys)
    assert code == 0, err
    small = json.loads(out)["by_metric"]["chrf"]["adequacy"]
    assert small["method"] == "rve (rho = 0.8, small-sample)"
    studies = small["studies"]
    yi = np.arctanh([s["r"] for s in studies])  # Fisher z, variance 1/(n - 3) (--variance
    vi = 1.0 / (np.array([s["n"] for s in studies]) - 3.0)  # fisher, the default)
    with pytest.warns(RuntimeWarning, match="Satterthwaite degrees of freedom"):  # 2 studies
        ref = robust_variance(yi, vi, [s["study"] for s in studies], rho=0.8,
                              small_sample=True)
    assert small["z_pooled"] == pytest.approx(ref.statistic, rel=1e-12)
    assert small["z_pooled"] == pytest.approx(plain["z_pooled"], rel=1e-12)
    assert np.tanh(ref.ci_low) == pytest.approx(small["ci_low"], rel=1e-12)
    assert small["ci_low"] < plain["ci_low"] and small["ci_high"] > plain["ci_high"]
    code, out, err = run(["meta-analyse", "--corpora", "webnlg2020,novikova2017", "--metrics",
                          "chrf", "--small-sample", "--no-split", "--quiet"], capsys)
    assert code == 2 and "--dependence rve" in err and len(err.strip().splitlines()) == 1


def test_the_same_study_twice_is_refused(study_dirs: list[Path], tmp_path: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    """Two folders with the same human judgements (one corpus validated twice, e.g. with other
    metrics) were pooled as two studies (k = 2 from one study's evidence): now one error line
    naming both; the E2E folder beside ``--corpora novikova2017`` (other judgements) pools."""
    import shutil

    from nlgeval.corpora import load_corpus
    from nlgeval.report import run_validation, write_report

    again = tmp_path / "e2e_rerun"  # the E2E study once more, with another metric
    write_report(run_validation(load_corpus("e2e"), ["ter"], levels=["segment"],
                                coefficients=["pearson"], n_resamples=0, permutations=0,
                                table9=False), again)
    code, out, err = run(["meta-analyse", str(study_dirs[0]), str(again), "--json"], capsys)
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    assert "hold the same human judgements" in err and "'e2e_rerun'" in err
    copy = tmp_path / "copied"
    shutil.copytree(study_dirs[1], copy)
    code, out, err = run(["meta-analyse", str(copy), "--corpora", "novikova2017",
                          "--metrics", "chrf", "--no-split", "--json"], capsys)
    assert code == 2 and "hold the same human judgements" in err, err
    code, out, err = run(["meta-analyse", str(study_dirs[0]), "--corpora", "novikova2017",
                          "--metrics", "chrf", "--no-split", "--json", "--quiet"], capsys)
    assert code == 0, err
    assert sorted(s["name"] for s in json.loads(out)["inputs"]["studies"]) == [
        "e2e", "novikova2017"]
