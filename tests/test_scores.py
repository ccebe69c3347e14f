"""External metric scores (``nlgeval.scores``) and ``validate --human/--scores`` studies."""

from __future__ import annotations

import gzip
import json
import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from typer.testing import CliRunner

from nlgeval.cli import app, main
from nlgeval.errors import InputError
from nlgeval.report import run_validation
from nlgeval.scores import check_scores, ratings_corpus, read_scores, tidy_scores

runner = CliRunner()


def _synthetic(tmp_path, n_sys: int = 6, n_items: int = 30, seed: int = 3):
    """Human ratings (no rater column) and a wide score file with two per-output metrics."""
    rng = np.random.default_rng(seed)
    hum, sc = [], []
    for s in range(n_sys):
        for i in range(n_items):
            h = 0.4 * s + rng.normal()
            hum.append({"system": f"s{s}", "item": f"i{i}", "criterion": "quality", "score": h})
            sc.append({"system": f"s{s}", "item": f"i{i}", "comet": h + rng.normal(),
                       "mqm_errors": -h + 2 * rng.normal()})
    hp, sp = tmp_path / "human.csv", tmp_path / "scores.csv"
    pd.DataFrame(hum).to_csv(hp, index=False)
    pd.DataFrame(sc).to_csv(sp, index=False)
    return hp, sp, pd.DataFrame(hum), pd.DataFrame(sc)


# ------------------------------------------------------------------ reading


def test_wide_and_long_give_the_same_tidy_frame(tmp_path):
    wide = tmp_path / "w.csv"
    wide.write_text("system,item,comet,bleurt\nA,1,0.5,0.1\nA,2,None,0.2\nB,1,0.7,\n")
    long = tmp_path / "l.tsv"
    long.write_text("system\titem\tmetric\tscore\nA\t1\tcomet\t0.5\nA\t2\tcomet\tNone\n"
                    "B\t1\tcomet\t0.7\nA\t1\tbleurt\t0.1\nA\t2\tbleurt\t0.2\nB\t1\tbleurt\tnan\n")
    a = read_scores(wide).sort_values(["metric", "system", "item"]).reset_index(drop=True)
    b = read_scores(long).sort_values(["metric", "system", "item"]).reset_index(drop=True)
    cols = ["metric", "system", "item", "score"]
    pd.testing.assert_frame_equal(a[cols], b[cols])
    assert a["score"].isna().sum() == 2  # None and empty are missing, not errors
    assert list(a.loc[a["score"].isna(), "metric"]) == ["bleurt", "comet"]


@pytest.mark.parametrize("fmt", ["jsonl", "parquet", "csv.gz", "tsv.gz"])
def test_other_formats(tmp_path, fmt):
    df = pd.DataFrame({"system": ["A", "B"], "item": ["1", "1"], "m": [0.25, 0.5]})
    p = tmp_path / f"s.{fmt}"
    if fmt == "jsonl":
        p.write_text("\n".join(json.dumps(r) for r in df.to_dict(orient="records")) + "\n")
    elif fmt == "parquet":
        df.to_parquet(p)
    else:
        sep = "\t" if fmt.startswith("tsv") else ","
        p.write_bytes(gzip.compress(df.to_csv(index=False, sep=sep).encode()))
    got = read_scores(p)
    assert got["score"].tolist() == [0.25, 0.5]
    assert got["metric"].unique().tolist() == ["m"]


def test_system_level_rows(tmp_path):
    p = tmp_path / "sys.csv"
    p.write_text("system,llm_rank\nA,1.5\nB,2.5\n")  # no item column at all
    got = read_scores(p)
    assert (got["item"] == "").all()
    assert got["score"].tolist() == [1.5, 2.5]


@pytest.mark.parametrize(
    ("text", "row", "column", "words"),
    [
        ("system,item,comet\nA,1,0.5\nA,2,abc\n", 3, "comet", "not a finite number"),
        ("system,item,comet\nA,1,inf\n", 2, "comet", "infinite"),
        ("system,item,metric,score\nA,1,c,0.5\nA,1,c,0.6\n", 3, "item", "duplicate"),
        ("item,comet\n1,0.5\n", 1, None, "'system' column"),
        ("system,item,comet\n,1,0.5\n", 2, "system", "empty system"),
    ],
)
def test_bad_files_name_file_row_column(tmp_path, text, row, column, words):
    p = tmp_path / "bad.csv"
    p.write_text(text)
    with pytest.raises(InputError) as ei:
        read_scores(p)
    err = ei.value
    assert err.row == row and err.column == column and words in err.message
    assert str(p) in str(err)


def test_gzip_error_names_the_users_file(tmp_path):
    p = tmp_path / "bad.csv.gz"
    p.write_bytes(gzip.compress(b"system,item,comet\nA,1,x\n"))
    with pytest.raises(InputError) as ei:
        read_scores(p)
    assert str(ei.value.file) == str(p) and ei.value.row == 2


# ------------------------------------------------------------------ checks against a corpus


def _outputs(n_sys=3, n_items=4):
    return pd.DataFrame([{"system": f"s{s}", "item": f"i{i}", "text": ""}
                         for s in range(n_sys) for i in range(n_items)])


def test_unknown_system_and_item_are_listed():
    out = _outputs()
    bad_sys = tidy_scores(pd.DataFrame({"system": ["s0", "zz", "yy"], "item": ["i0"] * 3,
                                        "m": [1.0, 2.0, 3.0]}))
    with pytest.raises(InputError, match=r"2 unknown system\(s\).*'zz', 'yy'"):
        check_scores(bad_sys, out, out)
    bad_item = tidy_scores(pd.DataFrame({"system": ["s0", "s1"], "item": ["i0", "nope"],
                                         "m": [1.0, 2.0]}))
    with pytest.raises(InputError, match=r"1 \(system, item\) pair\(s\).*'nope'") as ei:
        check_scores(bad_item, out, out)
    assert ei.value.row == 3


def test_clash_with_builtin_and_coverage():
    out = _outputs()
    sc = tidy_scores(pd.DataFrame({"system": ["s0"], "item": ["i0"], "BLEU": [1.0]}))
    with pytest.raises(InputError, match="name of a metric nlgeval computes"):
        check_scores(sc, out, out, builtin=["bleu"])
    # 3 of 12 rated outputs scored = 25 % coverage
    sc = tidy_scores(pd.DataFrame({"system": ["s0"] * 3, "item": ["i0", "i1", "i2"],
                                   "m": [1.0, 2.0, 3.0]}))
    with pytest.raises(InputError, match=r"covers 25\.0% of the 12 rated outputs"):
        check_scores(sc, out, out, min_coverage=0.5)
    ok = check_scores(sc, out, out, min_coverage=0.2)
    assert ok.coverage["m"] == pytest.approx(3 / 12)
    assert any("covers 25.0%" in n for n in ok.notes)


def test_ratings_corpus_without_rater(tmp_path):
    p = tmp_path / "h.csv"
    p.write_text("system,item,criterion,score\nA,1,q,3\nB,1,q,4\nA,2,q,5\n")
    c = ratings_corpus(p)
    assert set(c.ratings["rater"]) == {"aggregate"}
    assert c.info.criterion("q").min == 3 and c.info.criterion("q").max == 5
    assert len(c.outputs) == 3 and c.references.empty
    p.write_text("system,item,criterion,score\nA,1,q,3\nB,1,q,\n")
    with pytest.raises(InputError) as ei:
        ratings_corpus(p)
    assert ei.value.row == 3 and ei.value.column == "score"


# ------------------------------------------------------------------ the study


def test_external_scores_match_scipy_and_orientation(tmp_path):
    hp, sp, hum, sc = _synthetic(tmp_path)
    corpus = ratings_corpus(hp)
    study = run_validation(corpus, [], scores=read_scores(sp), lower_is_better=["mqm_errors"],
                           n_resamples=0, permutations=0, table9=False)
    corr = study.correlations.set_index(["metric", "level", "statistic"])["value"]
    m = hum.merge(sc, on=["system", "item"])
    # segment level: every output pooled; the lower-is-better metric is negated, never |r|
    assert corr[("comet", "segment", "pearson")] == pytest.approx(
        stats.pearsonr(m["comet"], m["score"]).statistic, abs=1e-12)
    assert corr[("mqm_errors", "segment", "kendall")] == pytest.approx(
        stats.kendalltau(-m["mqm_errors"], m["score"]).statistic, abs=1e-12)
    sysm = m.groupby("system")[["comet", "score"]].mean()
    assert corr[("comet", "system", "spearman")] == pytest.approx(
        stats.spearmanr(sysm["comet"], sysm["score"]).statistic, abs=1e-12)
    assert study.settings()["lower_is_better"] == ["mqm_errors"]


def test_system_level_only_metric_is_used_at_system_level_only(tmp_path):
    hp, sp, hum, sc = _synthetic(tmp_path)
    sysp = tmp_path / "sys.csv"
    llm = {f"s{s}": float(v) for s, v in enumerate([3.0, 1.0, 2.0, 5.0, 4.0, 6.0])}
    pd.DataFrame({"system": list(llm), "item": "", "llm": list(llm.values())}).to_csv(
        sysp, index=False)
    corpus = ratings_corpus(hp)
    from nlgeval.scores import combine_scores

    study = run_validation(corpus, [], scores=combine_scores([read_scores(sp),
                                                              read_scores(sysp)]),
                           levels=["segment", "system"], n_resamples=0, permutations=20)
    rows = study.correlations[study.correlations["metric"] == "llm"]
    assert set(rows["level"]) == {"system"}
    hmeans = hum.groupby("system")["score"].mean()
    want = stats.pearsonr([llm[s] for s in hmeans.index], hmeans.to_numpy()).statistic
    got = rows.loc[rows["statistic"] == "pearson", "value"].iloc[0]
    assert got == pytest.approx(want, abs=1e-12)
    assert "llm" in study.system_only
    assert any("system-level scores only" in n for n in study.notes)
    # no cell-swapping permutation test for a metric without per-output scores
    perm = study.comparisons[study.comparisons["method"] != "williams"]
    assert not ({"llm"} & (set(perm["metric_a"]) | set(perm["metric_b"])))


def test_cli_human_only_contract(tmp_path):
    hp, sp, _, _ = _synthetic(tmp_path)
    out = tmp_path / "rep"
    res = runner.invoke(app, ["validate", "--human", str(hp), "--scores", str(sp), "--json",
                              "--quiet", "--resamples", "50", "--permutations", "50",
                              "--out", str(out)])
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)
    metrics = {c["metric"] for c in data["correlations"]}
    assert metrics == {"comet", "mqm_errors"}
    for c in data["correlations"]:
        assert {"metric", "criterion", "level", "coefficient", "r", "p", "ci_low", "ci_high",
                "n"} <= set(c)
    run = json.loads((out / "run.json").read_text())
    assert run["settings"]["external_scores"]["comet"]["source"] == "scores.csv"
    assert "external scores" in (out / "report.html").read_text()


def test_cli_bad_scores_exit_2_and_write_nothing(tmp_path, capsys):
    hp, _, _, _ = _synthetic(tmp_path)
    bad = tmp_path / "bad.csv"
    bad.write_text("system,item,comet\ns0,i0,0.1\nnobody,i0,0.2\n")
    out = tmp_path / "rep"
    with pytest.raises(SystemExit) as ei:
        main(["validate", "--human", str(hp), "--scores", str(bad), "--json", "--quiet",
              "--out", str(out)])
    assert ei.value.code == 2
    err = capsys.readouterr().err
    assert "unknown system" in err and "row 3" in err and "bad.csv" in err
    assert len(err.strip().splitlines()) == 1
    assert not out.exists()


def test_external_and_builtin_metrics_together(data_dir):
    """External scores join nlgeval's own metrics on a real corpus (E2E) and agree with them."""
    from nlgeval.corpora import load_corpus

    corpus = load_corpus("e2e", data_dir)
    rated = corpus.rated_outputs()
    # an "external" copy of sentence-BLEU computed by nlgeval itself must give the same r
    from nlgeval.metrics import get_metric
    from nlgeval.metrics.scoring import score_corpus

    res = score_corpus(corpus, [get_metric("chrf")], rated_only=True, cache=False)
    ext = res.segments.pivot_table(index=["system", "item"], columns="metric",
                                   values="score").reset_index()
    ext = ext.rename(columns={"chrf": "chrf_copy"})
    study = run_validation(corpus, ["chrf"], scores=ext, n_resamples=0, permutations=0,
                           table9=False, levels=["segment"], coefficients=["pearson"])
    r = study.correlations.set_index(["metric", "criterion"])["value"]
    for crit in study.criteria:
        assert r[("chrf_copy", crit)] == pytest.approx(r[("chrf", crit)], abs=1e-12)
        assert not math.isnan(r[("chrf", crit)])
    assert len(rated) > 0
