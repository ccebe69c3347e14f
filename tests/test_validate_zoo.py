"""Issue 26, correctness and verdict: a text-free study of many metrics given as score files.

A small synthetic study (6 systems + 1 human-written "system" x 40 items, 3 raters, several
criteria, several metrics; seeded) with known structure: human-written outputs that would
inflate the correlations if kept, external metrics named like nlgeval's own (BLEU, chrF), a
per-criterion judge, a lower-is-better metric, and a criterion the raters do not agree on.
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from statsmodels.stats.multitest import multipletests
from typer.testing import CliRunner

from nlgeval.cli import app, main
from nlgeval.errors import InputError
from nlgeval.report import run_validation, write_report
from nlgeval.report.corrections import adjust, correct_comparisons, mark
from nlgeval.report.verdict import rater_ceiling
from nlgeval.scores import check_scores, ratings_corpus, read_scores, tidy_scores

runner = CliRunner()
SYSTEMS = [f"sys{k}" for k in range(6)]


def zoo_study(tmp_path: Path, seed: int = 26, n_items: int = 40, human_flag: bool = False):
    """Ratings (long, 3 raters) and two score files (wide + long) of a text-free study.

    Latent quality q per output (system effect + noise); ``HUMAN`` outputs are best. Criteria:
    Coherence and Relevance follow q (raters agree), Disputed is rater noise only. Metrics
    (wide file): BLEU and chrF follow q and give HUMAN their maximum (its outputs are the
    references' kind of text), noise is noise, errors_raw falls with q (lower is better, not
    said). Long file: judge_rel follows Relevance (bound to it by a criterion column) and
    errors follows -q with higher_is_better = false.
    """
    rng = np.random.default_rng(seed)
    systems = [*SYSTEMS, "HUMAN"]
    effect = dict(zip(systems, [-1.0, -0.6, -0.2, 0.2, 0.6, 1.0, 2.0], strict=True))
    ratings, wide, long = [], [], []
    for s in systems:
        for i in range(n_items):
            item = f"i{i:02d}"
            q = effect[s] + rng.normal(0, 0.8)
            rel = q + rng.normal(0, 0.3)
            for k in range(3):
                for crit, mean, sd in (("Coherence", q, 0.6), ("Relevance", rel, 0.6),
                                       ("Disputed", 0.0, 1.0)):
                    row = {"rater": f"r{k}", "system": s, "item": item, "criterion": crit,
                           "score": round(mean + rng.normal(0, sd), 3)}
                    if human_flag:
                        row["human"] = "yes" if s == "HUMAN" else "no"
                    ratings.append(row)
            human = s == "HUMAN"
            wide.append({"system": s, "item": item,
                         "BLEU": 100.0 if human else round(30 + 2 * q + rng.normal(0, 8), 3),
                         "chrF": 100.0 if human else round(50 + 6 * q + rng.normal(0, 6), 3),
                         "noise": round(rng.normal(), 3),
                         "errors_raw": round(5 - q + rng.normal(0, 0.7), 3)})
            long.append({"system": s, "item": item, "metric": "judge_rel",
                         "score": round(rel + rng.normal(0, 0.5), 3), "criterion": "relevance",
                         "higher_is_better": ""})
            long.append({"system": s, "item": item, "metric": "errors",
                         "score": round(3 - q + rng.normal(0, 0.5), 3), "criterion": "",
                         "higher_is_better": "false"})
    hp, wp, lp = tmp_path / "ratings.csv", tmp_path / "wide.csv", tmp_path / "long.csv"
    pd.DataFrame(ratings).to_csv(hp, index=False)
    pd.DataFrame(wide).to_csv(wp, index=False)
    pd.DataFrame(long).to_csv(lp, index=False)
    return hp, wp, lp


FAST = ["--resamples", "200", "--permutations", "200", "--levels", "system,segment,item",
        "--coefficients", "pearson,kendall"]


def _cli(tmp_path: Path, *args: str):
    tmp_path.mkdir(parents=True, exist_ok=True)
    hp, wp, lp = zoo_study(tmp_path)
    res = runner.invoke(app, ["validate", "--human", str(hp), "--scores", str(wp), "--scores",
                              str(lp), "--metrics", "none", "--json", "--quiet",
                              "--out", str(tmp_path / "rep"), *FAST, *args])
    assert res.exit_code == 0, (res.output, res.exception)
    return json.loads(res.stdout)


@pytest.fixture(scope="module")
def zoo(tmp_path_factory):  # type: ignore[no-untyped-def]
    tmp = tmp_path_factory.mktemp("zoo")
    return tmp, _cli(tmp, "--exclude-systems", "HUMAN")


# ------------------------------------------------------------------ the issue's interface


def test_cli_contract_exclude_systems_json(zoo) -> None:  # type: ignore[no-untyped-def]
    tmp, data = zoo
    recs = data["correlations"]
    assert recs and all({"r", "p", "p_corrected"} <= set(r) for r in recs)
    s = data["settings"]
    assert s["excluded_systems"] == ["HUMAN"] and "HUMAN" not in s["systems"]
    assert s["exclusions"] == [{"system": "HUMAN", "reasons": ["asked"],
                                "why": "named with --exclude-systems"}]
    # never "none" when nothing could be checked: the check could not run without texts
    assert "could not run" in s["reference_check"] and "no texts" in s["reference_check"]
    assert s["correction"] == "holm"
    # BLEU and chrF are external names, accepted: no built-in metric is computed
    assert {"BLEU", "chrF"} <= {r["metric"] for r in recs}
    run = json.loads((tmp / "rep" / "run.json").read_text())
    assert run["settings"]["exclusions"][0]["system"] == "HUMAN"
    html = (tmp / "rep" / "report.html").read_text()
    assert "Left out of the metric-human correlations: HUMAN (named with --exclude-systems)" \
        in html and "could not run" in html


def test_correlations_are_on_the_systems_kept(zoo, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """Segment-level Pearson of BLEU = scipy on the 6 systems' outputs only, and keeping the
    human outputs would inflate it (the issue's BLEU-Coherence 0.11 -> 0.54)."""
    _, data = zoo
    hp, wp, _ = zoo_study(tmp_path)
    h = pd.read_csv(hp)
    h = h[h.criterion == "Coherence"].groupby(["system", "item"])["score"].mean()
    w = pd.read_csv(wp).set_index(["system", "item"])["BLEU"]
    j = pd.concat([w, h], axis=1, keys=["m", "h"]).reset_index()
    kept = j[j.system != "HUMAN"]
    got = next(r for r in data["correlations"] if r["metric"] == "BLEU" and r["level"] ==
               "segment" and r["criterion"] == "Coherence" and r["coefficient"] == "pearson")
    ref = stats.pearsonr(kept.m, kept.h)
    assert got["r"] == pytest.approx(ref.statistic, abs=1e-12)
    assert got["p"] == pytest.approx(ref.pvalue, rel=1e-9)
    assert got["n"] == len(kept) == 240
    assert stats.pearsonr(j.m, j.h).statistic > got["r"] + 0.05  # human outputs inflate


def test_human_systems_and_human_column(tmp_path) -> None:
    """--human-systems and a 'human' column both leave the human outputs out, show them as
    a ceiling and say why; kept by mistake, they are flagged as scoring like references."""
    data = _cli(tmp_path / "a", "--human-systems", "human")  # case-insensitive system name
    ex = data["settings"]["exclusions"]
    assert [e["system"] for e in ex] == ["HUMAN"] and ex[0]["reasons"] == ["human"]
    assert data["settings"]["human_systems"] == ["HUMAN"]
    assert any(n.startswith("human ceiling, Coherence: HUMAN") for n in data["notes"])
    (tmp_path / "b").mkdir(exist_ok=True)
    hp, wp, lp = zoo_study(tmp_path / "b", human_flag=True)
    res = runner.invoke(app, ["validate", "--human", str(hp), "--scores", str(wp), "--scores",
                              str(lp), "--json", "--quiet", "--out", str(tmp_path / "rb"),
                              *FAST])
    assert res.exit_code == 0, res.output
    flagged = json.loads(res.stdout)["settings"]
    assert flagged["human_systems"] == ["HUMAN"] and flagged["excluded_systems"] == ["HUMAN"]
    # not left out: BLEU and chrF at their maximum for HUMAN only -> a warning
    hp, wp = tmp_path / "a" / "ratings.csv", tmp_path / "a" / "wide.csv"  # no human column
    res = runner.invoke(app, ["validate", "--human", str(hp), "--scores", str(wp), "--json",
                              "--out", str(tmp_path / "rc"), *FAST, "--resamples", "0"])
    assert res.exit_code == 0, res.output
    assert "system 'HUMAN' scores like the references: BLEU, chrF" in res.stderr
    with pytest.raises(InputError, match="did you mean 'sys1'"):
        run_validation(ratings_corpus(hp), [], scores=read_scores(wp), exclude_systems=["sys_1"])


# ------------------------------------------------------------------ names


def test_external_names_clash_only_with_a_computed_metric(tmp_path, data_dir) -> None:  # type: ignore[no-untyped-def]
    wp = tmp_path / "w.csv"
    wp.write_text("system,item,sentBLEU,chrF\nA,1,0.5,0.1\nB,1,0.7,0.2\n")
    out = pd.DataFrame({"system": ["A", "B"], "item": ["1", "1"]})
    sc = read_scores(wp)
    assert check_scores(sc, out, out).metrics == ("sentBLEU", "chrF")  # nothing computed
    with pytest.raises(InputError) as ei:
        check_scores(sc, out, out, builtin=["chrf"])
    # a wide file has no 'metric' column: the error names the column header (row 1)
    assert ei.value.row == 1 and ei.value.column == "chrF" and "w.csv" in str(ei.value)
    lp = tmp_path / "l.csv"
    lp.write_text("system,item,metric,score\nA,1,BLEU,0.5\nB,1,BLEU,0.7\n")
    with pytest.raises(InputError) as ei:
        check_scores(read_scores(lp), out, out, builtin=["bleu"])
    assert ei.value.row == 2 and ei.value.column == "metric"
    # on a corpus with texts: external 'BLEU' next to computed chrF is fine, next to bleu not
    from nlgeval.corpora import load_corpus

    c = load_corpus("e2e", data_dir)
    c = c.subset(items=c.items[:10])
    ext = c.rated_outputs()[["system", "item"]].assign(BLEU=1.0)
    ext["BLEU"] = np.arange(len(ext), dtype=float)
    st = run_validation(c, ["chrf"], scores=ext, levels=["segment"], coefficients=["pearson"],
                        n_resamples=0, permutations=0, table9=False)
    assert {"chrf", "BLEU"} <= set(st.metrics)
    with pytest.raises(InputError, match="name of a metric nlgeval computes"):
        run_validation(c, ["bleu"], scores=ext, n_resamples=0, permutations=0, table9=False)


def test_criterion_names_case_insensitive_with_did_you_mean(tmp_path) -> None:
    data = _cli(tmp_path / "a", "--criteria", "coherence")
    assert {r["criterion"] for r in data["correlations"]} == {"Coherence"}
    hp, wp, _ = zoo_study(tmp_path)
    corpus = ratings_corpus(hp)
    with pytest.raises(InputError, match="did you mean 'Coherence'"):
        run_validation(corpus, [], scores=read_scores(wp), criteria=["Coherance"])


# ------------------------------------------------------------------ multiple comparisons


def test_p_corrected_is_holm_over_the_family_tested(zoo) -> None:  # type: ignore[no-untyped-def]
    _, data = zoo
    df = pd.DataFrame(data["correlations"])
    for _coef, sub in df.groupby("coefficient"):
        ok = sub["p"].notna()
        want = multipletests(sub.loc[ok, "p"].to_numpy(float), method="holm")[1]
        np.testing.assert_allclose(sub.loc[ok, "p_corrected"].to_numpy(float), want,
                                   rtol=1e-12)
        # the family is metric x criterion x level of one statistic
        assert ok.sum() == len(sub[["metric", "criterion", "level"]].drop_duplicates())


def test_holm_and_bh_by_hand() -> None:
    p = np.array([0.01, 0.04, 0.03, 0.005])
    # Holm: sorted 0.005, 0.01, 0.03, 0.04 times 4, 3, 2, 1, running maximum, capped at 1
    assert adjust(p, "holm").tolist() == pytest.approx([0.03, 0.06, 0.06, 0.02])
    # BH: p * m / rank, running minimum from the largest
    assert adjust(p, "bh").tolist() == pytest.approx([0.02, 0.04, 0.04, 0.02])
    # BY: BH times sum(1/k), k = 1..4
    c = 1 + 1 / 2 + 1 / 3 + 1 / 4
    assert adjust(p, "by").tolist() == pytest.approx([min(1, 0.02 * c), min(1, 0.04 * c),
                                                      min(1, 0.04 * c), min(1, 0.02 * c)])
    assert np.isnan(adjust([np.nan, 0.01], "holm")[0]) and adjust([np.nan, 0.01], "holm")[1] \
        == pytest.approx(0.01)  # NaN is not counted in the family


def test_correction_option_changes_only_p_corrected(tmp_path) -> None:
    a = pd.DataFrame(_cli(tmp_path / "a", "--correction", "bh")["correlations"])
    b = pd.DataFrame(_cli(tmp_path / "b", "--correction", "none")["correlations"])
    pd.testing.assert_series_equal(a["r"], b["r"])
    pd.testing.assert_series_equal(a["p"], b["p"])
    np.testing.assert_allclose(b["p_corrected"].dropna(), b["p"].dropna())
    for _, sub in a.groupby("coefficient"):
        ok = sub["p"].notna()
        np.testing.assert_allclose(sub.loc[ok, "p_corrected"],
                                   multipletests(sub.loc[ok, "p"], method="fdr_bh")[1])
    with pytest.raises(SystemExit) as ei:
        main(["validate", "--human", "x.csv", "--correction", "tukey"])
    assert ei.value.code == 2


def test_comparison_family_one_test_per_pair() -> None:
    c = pd.DataFrame({"metric_a": ["a", "b", "a", "c", "b", "c"],
                      "metric_b": ["b", "a", "c", "a", "c", "b"],
                      "pvalue": [0.01, 0.99, 0.02, 0.98, 0.3, 0.7], "criterion": "q",
                      "level": "system", "statistic": "pearson", "method": "williams"})
    got = correct_comparisons(c, "holm")["pvalue_corrected"].tolist()
    # three pairs, each in its observed direction: 0.01, 0.02, 0.3 -> Holm 0.03, 0.04, 0.3
    assert got == pytest.approx([0.03, 0.99, 0.04, 0.98, 0.3, 0.7])
    # an undefined test stays undefined and is not counted in the family
    c.loc[[4, 5], "pvalue"] = np.nan
    got = correct_comparisons(c, "holm")["pvalue_corrected"].tolist()
    assert got[:4] == pytest.approx([0.02, 0.99, 0.02, 0.98]) and np.isnan(got[4:]).all()


def test_significant_cells_with_an_interval_around_zero_are_flagged(zoo) -> None:  # type: ignore[no-untyped-def]
    tmp, data = zoo
    df = pd.DataFrame(data["correlations"])
    want = (df["p_corrected"] < 0.05) & (df["ci_low"] <= 0) & (df["ci_high"] >= 0)
    assert (df["ci_disagrees"].astype(bool) == want.fillna(False)).all()
    assert mark(0.11, 0.01, -0.004, 0.22, 0.05, 2) == "0.11*†"
    assert mark(0.11, 0.2, -0.004, 0.22, 0.05, 2) == "0.11"
    md = (tmp / "rep" / "tables" / "correlations_overview.md").read_text()
    assert "Holm (1979) correction" in md and "† = significant after correction" in md
    # the human reference at every level of the study
    ov = pd.read_csv(tmp / "rep" / "tables" / "correlations_overview.csv")
    ref = ov[ov["metric"].str.startswith("one rater vs the others")]
    assert set(ref["level"]) == {"system", "segment", "item"}


# ------------------------------------------------------------------ binding and direction


def test_judge_bound_to_its_criterion_and_direction_from_the_file(zoo) -> None:  # type: ignore[no-untyped-def]
    _, data = zoo
    df = pd.DataFrame(data["correlations"])
    assert set(df.loc[df.metric == "judge_rel", "criterion"]) == {"Relevance"}
    assert data["settings"]["bound"] == {"judge_rel": "Relevance"}
    assert "errors" in data["settings"]["lower_is_better"]
    assert (df.loc[(df.metric == "errors") & (df.criterion == "Coherence"), "r"] > 0).all()
    # errors_raw falls with quality and nobody said so: a warning, never |r|
    raw = df[(df.metric == "errors_raw") & (df.criterion == "Coherence")]
    assert (raw["r"] < 0).all()
    assert any("use --lower-is-better errors_raw" in n for n in data["notes"])


def test_bind_option_and_several_criteria_in_a_long_file(tmp_path) -> None:
    data = _cli(tmp_path / "a", "--bind", "noise=coherence", "--lower-is-better", "ERRORS_RAW")
    df = pd.DataFrame(data["correlations"])
    assert set(df.loc[df.metric == "noise", "criterion"]) == {"Coherence"}
    assert "errors_raw" in data["settings"]["lower_is_better"]
    long = tidy_scores(pd.DataFrame({"system": ["A", "A"], "item": ["1", "1"],
                                     "metric": ["judge", "judge"], "score": [1.0, 2.0],
                                     "criterion": ["Relevance", "Coherence"]}))
    assert long["metric"].tolist() == ["judge (Relevance)", "judge (Coherence)"]
    wide = tidy_scores(pd.DataFrame({"system": ["A", "A"], "item": ["1", "1"],
                                     "criterion": ["Relevance", "Coherence"],
                                     "judge": [1.0, 2.0]}))
    assert wide["metric"].tolist() == ["judge (Relevance)", "judge (Coherence)"]
    hp, wp, _ = zoo_study(tmp_path)
    with pytest.raises(InputError, match="did you mean 'Relevance'"):
        run_validation(ratings_corpus(hp), [], scores=read_scores(wp),
                       bind={"noise": "Relevanse"})
    bad = tmp_path / "bad.csv"
    bad.write_text("system,item,metric,score,higher_is_better\nA,1,m,1,true\nA,2,m,2,false\n")
    with pytest.raises(InputError) as ei:
        read_scores(bad)
    assert ei.value.row == 3 and ei.value.column == "higher_is_better"


# ------------------------------------------------------------------ the verdict


def test_verdict_per_level_with_cluster_size_and_withheld_reasons(zoo) -> None:  # type: ignore[no-untyped-def]
    _, data = zoo
    v = data["verdict"]
    assert {(e["criterion"], e["level"]) for e in v} == {
        (c, lv) for c in ("Coherence", "Relevance", "Disputed")
        for lv in ("system", "segment", "item")}
    # the raters do not agree on Disputed: no verdict there, at any level, and the reason
    for e in v:
        if e["criterion"] == "Disputed":
            assert not e["top"] and "raters do not agree on Disputed" in e["withheld"]
    seg = next(e for e in v if e["criterion"] == "Coherence" and e["level"] == "segment")
    assert not seg["withheld"] and seg["n_top"] == len(seg["top"]) >= 1
    assert seg["n"] == 240 and "240 outputs" in seg["line"]
    assert "noise" not in seg["top"]
    # the human ceiling at every level it can be computed
    assert all(np.isfinite(e["human_ceiling"]) for e in v if e["criterion"] == "Coherence")


def test_human_ceiling_against_the_closed_form() -> None:
    """One rater vs the mean of two others, scores q + e (var(q) = 1, var(e) = s2): the
    segment-level Pearson r is 1 / sqrt((1 + s2) (1 + s2 / 2)); raters who agree give 1."""
    rng = np.random.default_rng(5)
    n_sys, n_items, s2 = 20, 300, 0.5
    q = rng.normal(size=(n_sys, n_items))
    rows = [{"rater": f"r{k}", "system": f"s{s:02d}", "item": f"i{i}", "criterion": "c",
             "score": q[s, i] + rng.normal(scale=np.sqrt(s2))}
            for s in range(n_sys) for i in range(n_items) for k in range(3)]
    ratings = pd.DataFrame(rows)
    systems = sorted(ratings["system"].unique())
    got = rater_ceiling(ratings, "c", systems, ["segment", "system", "item"], seed=1)
    assert got["segment"] == pytest.approx(1 / np.sqrt((1 + s2) * (1 + s2 / 2)), abs=0.02)
    same = ratings.assign(score=np.repeat(q.ravel(), 3))
    assert all(v == pytest.approx(1.0) for v in
               rater_ceiling(same, "c", systems, ["segment", "system", "item"]).values())


def test_report_writes_the_new_columns(zoo, tmp_path) -> None:  # type: ignore[no-untyped-def]
    tmp, _ = zoo
    corr = pd.read_csv(tmp / "rep" / "correlations.csv")
    assert {"pvalue", "pvalue_corrected", "ci_disagrees"} <= set(corr.columns)
    comps = pd.read_csv(tmp / "rep" / "comparisons.csv")
    assert "pvalue_corrected" in comps.columns
    cl = pd.read_csv(tmp / "rep" / "tables" / "significance_clusters.csv")
    assert len(cl) and {"cluster", "cluster_corrected"} <= set(cl.columns)
    assert cl["cluster_corrected"].notna().all()


def test_level_glossary_in_help() -> None:
    res = runner.invoke(app, ["validate", "--help"], terminal_width=200)
    text = " ".join(res.stdout.split())
    for term in ("summary level", "story level", "document level", "overall", "pooled"):
        assert term in text


def test_python_api_study_and_report(tmp_path) -> None:
    hp, wp, lp = zoo_study(tmp_path)
    scores = pd.concat([read_scores(wp), read_scores(lp)], ignore_index=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        st = run_validation(ratings_corpus(hp), [], scores=scores, human_systems=["HUMAN"],
                            levels=["system"], coefficients=["pearson"], n_resamples=0,
                            permutations=0, table9=False)
    assert st.excluded_systems == ["HUMAN"] and st.human_systems == ["HUMAN"]
    hs = st.human_system_scores.set_index("system")
    assert hs.loc["HUMAN", "human-written"] and not hs.loc["sys0", "human-written"]
    write_report(st, tmp_path / "r")
    assert "human-written" in (tmp_path / "r" / "report.html").read_text()


def test_icc_of_the_raters_by_hand_and_in_the_reason(zoo, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """ICC(1,1) (Shrout & Fleiss 1979) from the one-way ANOVA mean squares, balanced design
    (3 ratings per output): (MSB - MSW) / (MSB + (k - 1) MSW)."""
    from nlgeval.report.verdict import rater_icc

    hp, _, _ = zoo_study(tmp_path)
    r = pd.read_csv(hp)
    for crit in ("Coherence", "Disputed"):
        sub = r[r.criterion == crit]
        g = sub.groupby(["system", "item"])["score"]
        k, n = 3, g.ngroups
        grand = sub["score"].mean()
        msb = k * ((g.mean() - grand) ** 2).sum() / (n - 1)
        msw = ((sub["score"] - g.transform("mean")) ** 2).sum() / (n * (k - 1))
        want = (msb - msw) / (msb + (k - 1) * msw)
        assert rater_icc(sub, crit)[0] == pytest.approx(want, rel=1e-10)
    # unbalanced (a third of the ratings dropped): the one-way form of nlgeval.human
    from nlgeval.human.intraclass import icc

    some = r[r.criterion == "Coherence"].sample(frac=0.67, random_state=3)
    forms, _ = icc(some[["rater", "item", "system", "score"]])
    want = next(f for f in forms if f.type == "ICC(1,1)")
    got = rater_icc(some, "Coherence")
    assert got[0] == pytest.approx(want.icc, rel=1e-10)
    assert got[1] == pytest.approx(want.pvalue, rel=1e-6)
    _, data = zoo
    disputed = [e for e in data["verdict"] if e["criterion"] == "Disputed"]
    assert all("ICC(1,1)" in e["withheld"] for e in disputed)


def test_tidy_scores_on_a_frame_with_a_repeated_index() -> None:
    """pd.concat of two frames repeats index labels: rows are read by position."""
    a = pd.DataFrame({"system": ["A", "B"], "item": ["1", "1"], "metric": "m",
                      "score": [0.1, 0.2]})
    b = pd.DataFrame({"system": ["A", "B"], "item": ["2", "2"], "metric": "m",
                      "score": [0.3, 0.4]})
    got = tidy_scores(pd.concat([a, b]))
    assert got["score"].tolist() == [0.1, 0.2, 0.3, 0.4] and got["_row"].tolist() == [2, 3, 4, 5]


def test_exclude_systems_add_to_the_automatic_check_on_a_corpus_with_texts() -> None:
    from _validate_synth import synthetic_corpus

    corpus, seg = synthetic_corpus(n_systems=4, n_items=8)
    kw = dict(segment_scores=seg, levels=["system"], coefficients=["pearson"], n_resamples=0,
              permutations=0, table9=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        st = run_validation(corpus, exclude_systems=["sys0"], **kw)
        kept = run_validation(corpus, exclude_systems=["sys0"], keep_reference_systems=True,
                              **kw)
    assert [(e["system"], e["reasons"]) for e in st.exclusions] == [("REF", ["reference"]),
                                                                    ("sys0", ["asked"])]
    assert "none found" not in st.reference_check and "REF" in st.reference_check
    assert kept.excluded_systems == ["sys0"] and "kept" in kept.reference_check


def test_verdict_rests_on_the_statistic_the_metrics_were_compared_on(tmp_path) -> None:
    hp, wp, _ = zoo_study(tmp_path)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        st = run_validation(ratings_corpus(hp), [], scores=read_scores(wp),
                            human_systems=["HUMAN"], levels=["segment", "system"],
                            coefficients=["kendall", "pearson"], n_resamples=0, permutations=0,
                            table9=False)
    # Williams' test compares the metrics on Pearson (the first Pearson/Spearman), so the
    # verdict is Pearson's even though Kendall comes first
    assert {v["statistic"] for v in st.verdict} == {"pearson"}
    seg = next(v for v in st.verdict if v["criterion"] == "Coherence"
               and v["level"] == "segment")
    assert not seg["withheld"] and seg["top"]


def test_verdict_says_when_rater_agreement_could_not_be_checked(tmp_path) -> None:
    hp, wp, _ = zoo_study(tmp_path)
    r = pd.read_csv(hp)
    agg = r.groupby(["system", "item", "criterion"], as_index=False)["score"].mean()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        st = run_validation(ratings_corpus(agg), [], scores=read_scores(wp),
                            human_systems=["HUMAN"], levels=["segment"],
                            coefficients=["pearson"], n_resamples=0, permutations=0,
                            table9=False)
    # Disputed is rater noise, but with one score per output nothing shows it: say so
    assert st.verdict and all("rater agreement unknown" in v["line"] for v in st.verdict)
