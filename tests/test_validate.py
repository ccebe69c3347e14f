"""The validate study and report on a synthetic corpus, and the CLI (in-process and subprocess)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from _validate_synth import synthetic_corpus
from scipy import stats
from typer.testing import CliRunner

from nlgeval.cli import app
from nlgeval.errors import InputError
from nlgeval.report import reference_systems, run_validation, write_report

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def study():  # type: ignore[no-untyped-def]
    corpus, seg = synthetic_corpus()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return run_validation(corpus, segment_scores=seg, higher_is_better={"ter_like": False},
                              levels=["segment", "system", "item"], n_resamples=200,
                              permutations=200, seed=7)


def test_study_correlations_match_scipy(study) -> None:  # type: ignore[no-untyped-def]
    corpus, seg = synthetic_corpus()
    assert study.excluded_systems == ["REF"] and "REF" not in study.systems
    human = corpus.human_scores()
    h = human[(human.criterion == "quality") & (human.system != "REF")]
    m = seg[(seg.metric == "good") & (seg.system != "REF")]
    j = m.merge(h, on=["system", "item"], suffixes=("_m", "_h"))
    row = study.correlations.query(
        "metric == 'good' and criterion == 'quality' and level == 'segment' and "
        "statistic == 'pearson'").iloc[0]
    ref = stats.pearsonr(j.score_m, j.score_h)
    assert row.value == pytest.approx(ref.statistic) and row.pvalue == pytest.approx(ref.pvalue)
    assert row.n == len(j) == 120
    assert row.ci_low < row.value < row.ci_high
    sysm = j.groupby("system")[["score_m", "score_h"]].mean()
    row = study.correlations.query(
        "metric == 'good' and criterion == 'quality' and level == 'system' and "
        "statistic == 'kendall'").iloc[0]
    assert row.value == pytest.approx(stats.kendalltau(sysm.score_m, sysm.score_h).statistic)
    # the lower-is-better metric is negated: positive r, flagged as oriented
    ter = study.correlations.query("metric == 'ter_like' and level == 'segment'")
    assert (ter.value > 0).all() and ter.oriented.all()
    assert len(study.correlations) == 3 * 2 * 3 * 3


def test_study_comparisons_clusters_and_references(study) -> None:  # type: ignore[no-untyped-def]
    cl = study.clusters.query("criterion == 'quality' and level == 'segment'")
    best = cl.sort_values("value", ascending=False).iloc[0]
    assert best.metric == "good" and best.cluster == 1
    assert cl.set_index("metric").loc["noisy", "cluster"] > 1
    assert {"williams", "permutation-both"} <= set(study.comparisons["method"])
    assert set(study.rater_agreement["criterion"]) == {"quality", "fluency"}
    assert study.human_system_scores["reference"].sum() == 1
    assert study.human_system_scores["quality rank"].min() == 1


def test_study_is_reproducible_for_a_seed() -> None:
    corpus, seg = synthetic_corpus(n_systems=5, n_items=10)
    kw = dict(segment_scores=seg, levels=["system"], coefficients=["pearson"], n_resamples=100,
              permutations=50)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = run_validation(corpus, seed=3, **kw)
        b = run_validation(corpus, seed=3, **kw)
        c = run_validation(corpus, seed=4, **kw)
    pd.testing.assert_frame_equal(a.correlations, b.correlations)
    assert not np.allclose(a.correlations.ci_low, c.correlations.ci_low)


def test_degenerate_metric_gives_nan_and_a_note() -> None:
    corpus, seg = synthetic_corpus(n_systems=4, n_items=8)
    seg = seg.copy()
    seg.loc[seg.metric == "noisy", "score"] = 1.0  # constant metric
    with pytest.warns(Warning, match="constant"):
        st = run_validation(corpus, segment_scores=seg, levels=["segment"],
                            coefficients=["pearson"], n_resamples=50, permutations=0)
    row = st.correlations.query("metric == 'noisy'").iloc[0]
    assert np.isnan(row.value) and "constant" in row.note


def test_bad_options_raise_input_errors() -> None:
    corpus, seg = synthetic_corpus(n_systems=4, n_items=8)
    with pytest.raises(InputError, match="unknown criterion"):
        run_validation(corpus, segment_scores=seg, criteria=["clarity"])
    with pytest.raises(InputError, match="unknown correlation level"):
        run_validation(corpus, segment_scores=seg, levels=["document"])
    with pytest.raises(InputError, match="resampling scheme"):
        run_validation(corpus, segment_scores=seg, resample="outputs")
    assert reference_systems(corpus) == ["REF"]


def test_settings_are_checked_once_and_round_trip() -> None:
    from nlgeval.report import ValidationSettings

    s = ValidationSettings(levels=["seg", "system"], statistics=["tau_b", "wmt23"], seed=2,
                           epsilon={"bleu": 0.5})
    assert s.levels == ("segment", "system", "item")
    assert s.statistics == ("tau_b", "pairwise_accuracy", "pearson", "acc_eq")
    assert s.canonical_coefficients == ["kendall", "pearson"]
    assert s.meta_statistics == ["pairwise_accuracy", "acc_eq"]
    assert ValidationSettings(**s.to_dict()) == s
    for bad, match in (({"alpha": 0}, "alpha must be between 0 and 1"),
                       ({"confidence_level": 1.0}, "confidence_level must be between"),
                       ({"n_resamples": -1}, "n_resamples must be a whole number >= 0"),
                       ({"permutations": 2.5}, "permutations must be a whole number"),
                       ({"normalise": "rank"}, "normalise must be 'none' or 'z'"),
                       ({"min_coverage": 2}, "min_coverage must be between 0 and 1"),
                       ({"statistics": ["r2"]}, "unknown statistic 'r2'"),
                       ({"coefficients": []}, "no statistics to compute"),
                       ({"levels": []}, "name at least one level")):
        with pytest.raises(InputError, match=match):
            ValidationSettings(**bad)


def test_settings_object_and_keywords_give_the_same_study() -> None:
    from nlgeval.report import ValidationSettings

    corpus, seg = synthetic_corpus(n_systems=5, n_items=10)
    s = ValidationSettings(levels=["system"], coefficients=["pearson"], n_resamples=50,
                           permutations=20, seed=5, table9=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = run_validation(corpus, segment_scores=seg, settings=s)
        b = run_validation(corpus, segment_scores=seg, levels=["system"],
                           coefficients=["pearson"], n_resamples=50, permutations=20, seed=5,
                           table9=False)
        c = run_validation(corpus, segment_scores=seg, settings=s, seed=6)  # overrides
    pd.testing.assert_frame_equal(a.correlations, b.correlations)
    assert a.settings() == b.settings() and c.seed == 6 and a.significant_differences is None
    assert not np.allclose(a.correlations.ci_low, c.correlations.ci_low)
    with pytest.raises(InputError, match="settings are: metrics, criteria"):
        run_validation(corpus, segment_scores=seg, resample_count=3)


def test_report_directory(study, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    record = write_report(study, tmp_path / "rep")
    rep = tmp_path / "rep"
    for stem in ("metric_scores_by_system", "human_scores_by_system", "correlations_system",
                 "correlations_segment", "significance_clusters"):
        for ext in ("csv", "md", "tex"):
            assert (rep / "tables" / f"{stem}.{ext}").is_file(), (stem, ext)
    tex = (rep / "tables" / "correlations_system.tex").read_text()
    assert "\\toprule" in tex and "\\caption{" in tex
    assert (rep / "figures" / "scatter_quality.png").is_file()
    assert (rep / "figures" / "heatmap_segment.png").is_file()  # PDF only with figures="pdf"
    assert not (rep / "figures" / "heatmap_segment.pdf").exists()
    page = (rep / "report.html").read_text()
    assert "data:image/png;base64," in page
    # self-contained: no external stylesheets, scripts or images
    assert not re.search(r"""(src|href)=['"](https?:|//)""", page)
    run = json.loads((rep / "run.json").read_text())
    assert run["seeds"]["bootstrap"] == 7 and "numpy" in run["versions"]
    assert run["settings"]["resamples"] == 200 and "correlations" in run["timings"]
    assert {"report: tables", "report: figures"} <= set(run["timings"])  # report writing timed
    assert record["corpus"] == "synthetic"
    corr = pd.read_csv(rep / "correlations.csv")
    assert len(corr) == len(study.correlations)


# ----------------------------------------------------------------------------- CLI
def _user_corpus(tmp_path: Path) -> Path:
    """A tiny user corpus directory in the canonical format (no reference-copy system)."""
    rng = np.random.default_rng(0)
    d = tmp_path / "tiny"
    d.mkdir()
    words = "the cat sat on a mat with blue red green hat near dog".split()
    refs, outs, rats = [], [], []
    for i in range(12):
        ref = " ".join(rng.choice(words, 8))
        refs.append({"item": f"i{i}", "ref_id": "0", "text": ref})
        for s in range(5):
            toks = ref.split()
            keep = rng.random(len(toks)) > 0.12 * s
            out = " ".join(t for t, k in zip(toks, keep, strict=True) if k) or "the"
            outs.append({"system": f"s{s}", "item": f"i{i}", "text": out})
            for r in range(2):
                score = float(np.clip(6 - s + rng.normal(0, 0.7), 1, 6))
                rats.append({"rater": f"r{(i + r) % 3}", "item": f"i{i}", "system": f"s{s}",
                             "criterion": "quality", "score": round(score, 1)})
    pd.DataFrame(refs).to_csv(d / "references.csv", index=False)
    pd.DataFrame(outs).to_csv(d / "outputs.csv", index=False)
    pd.DataFrame(rats).to_csv(d / "ratings.csv", index=False)
    (d / "corpus.json").write_text(json.dumps(
        {"name": "tiny", "criteria": [{"name": "quality", "min": 1, "max": 6}]}))
    return d


def test_cli_json_contract(tmp_path: Path) -> None:
    corpus_dir = _user_corpus(tmp_path)
    out = tmp_path / "report"
    res = CliRunner().invoke(app, [
        "validate", str(corpus_dir), "--metrics", "bleu,chrf++", "--levels", "segment,system",
        "--coefficients", "pearson,spearman,kendall", "--resamples", "100", "--permutations",
        "50", "--out", str(out), "--json", "--quiet", "--no-cache"])
    assert res.exit_code == 0, res.output
    obj = json.loads(res.stdout)
    recs = obj["correlations"]
    assert len(recs) == 2 * 1 * 2 * 3
    keys = {"metric", "criterion", "level", "coefficient", "r", "p", "ci_low", "ci_high", "n",
            "epsilon"}
    # issue 26: the corrected p-value and the p-vs-interval flag come next to r and p
    assert all(set(r) == keys | {"p_corrected", "ci_disagrees"} for r in recs)
    assert all(r["epsilon"] is None for r in recs)  # no tie calibration for coefficients
    assert {r["criterion"] for r in recs} == {"quality"}
    # system s0 keeps every token, so its outputs are the references: excluded automatically
    assert obj["settings"]["excluded_systems"] == ["s0"]
    seg = [r for r in recs if r["level"] == "segment" and r["metric"] == "bleu"]
    assert seg[0]["n"] == 4 * 12
    assert (out / "report.html").is_file() and (out / "run.json").is_file()
    run = json.loads((out / "run.json").read_text())
    assert "bleu" in run["metric_signatures"]
    # issue 27: the CSV (like the frame) names the columns after what they hold; only the JSON
    # keeps the contract's short names, the same numbers under them
    csv = pd.read_csv(out / "correlations.csv")
    assert {"statistic", "value", "pvalue", "pvalue_corrected"} <= set(csv.columns)
    assert not {"coefficient", "r", "p", "p_corrected"} & set(csv.columns)
    back = pd.DataFrame(recs).rename(columns={"coefficient": "statistic", "r": "value",
                                              "p": "pvalue", "p_corrected": "pvalue_corrected"})
    key = ["metric", "criterion", "level", "statistic"]
    got = csv.set_index(key).loc[back.set_index(key).index]
    for col in ("value", "pvalue", "pvalue_corrected", "ci_low", "ci_high"):
        np.testing.assert_allclose(got[col].to_numpy(float),
                                   back[col].to_numpy(float), rtol=1e-15)


def test_cli_bad_input_exits_2_with_one_line(tmp_path: Path) -> None:
    corpus_dir = _user_corpus(tmp_path)
    exe = Path(sys.executable).parent / "nlgeval"
    cmd = [str(exe) if exe.exists() else sys.executable, *([] if exe.exists() else
                                                           ["-m", "nlgeval.cli"])]
    proc = subprocess.run(
        [*cmd, "validate", str(corpus_dir), "--levels", "segment,document", "--quiet",
         "--out", str(tmp_path / "r")],
        capture_output=True, text=True, timeout=300)
    assert proc.returncode == 2
    err = proc.stderr.strip().splitlines()
    assert len(err) == 1 and "unknown correlation level 'document'" in err[0]
    assert proc.stdout == ""


def test_cli_option_errors_name_the_option() -> None:
    res = CliRunner().invoke(app, ["validate", "any-corpus", "--confidence", "2", "--quiet"])
    assert isinstance(res.exception, InputError)
    assert str(res.exception) == "--confidence must be between 0 and 1, got 2.0"
    res = CliRunner().invoke(app, ["validate", "any-corpus", "--permutations", "-1"])
    assert "--permutations must be a whole number >= 0" in str(res.exception)
