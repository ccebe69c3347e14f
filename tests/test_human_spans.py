"""Error spans (MQM, ESA): the span frame, MQM and ESA scores, span agreement, the CLI.

References: the WMT21 TED MQM repository's own per-segment averages (the span frame is built
here from the ``<v>...</v>`` markup of each error row: offsets into the plain output), hand
arithmetic written out in the tests, character sets compared in plain Python, Cohen's kappa
from scikit-learn (``cohen_kappa_score``), and Krippendorff's alpha from the coincidence-matrix
definition (Krippendorff 2011) written out here.
"""

from __future__ import annotations

import json
from collections import defaultdict
from itertools import combinations
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from nlgeval.cli import app
from nlgeval.corpora import wmt21_ted as W
from nlgeval.corpora.wmt21_ted import read_errors
from nlgeval.errors import InputError
from nlgeval.human import check_spans, esa_ratings, mqm_span_ratings, span_agreement

runner = CliRunner()
FOLDER = "wmt21_ted_mqm"


def _spans(rows: list[tuple]) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=["rater", "item", "system", "start", "end", "category",
                                       "severity"])


# ---------------------------------------------------------------- the span frame
def test_check_spans_names_row_and_column() -> None:
    ok = _spans([("r1", "1", "A", 0, 4, "Accuracy", "Major"), ("r1", "2", "A", None, None,
                                                                 "", "")])
    out = check_spans(ok)
    assert out["severity"].tolist() == ["major", "no-error"]
    assert out["start"].tolist() == [0, -1]
    again = check_spans(out.drop(columns="row"))  # a checked frame passes unchanged
    assert again[["start", "end", "severity"]].equals(out[["start", "end", "severity"]])
    bad = ok.copy()
    bad.loc[1, "severity"] = "Severe"
    bad.loc[1, "start"], bad.loc[1, "end"] = 1, 3
    with pytest.raises(InputError, match="unknown severity 'Severe'") as e:
        check_spans(bad)
    assert e.value.row == 2 and e.value.column == "severity"
    bad = ok.copy()
    bad.loc[0, "end"] = 0
    with pytest.raises(InputError, match="end must be greater than start"):
        check_spans(bad)
    bad = ok.astype({"start": object})
    bad.loc[0, "start"] = "x"
    with pytest.raises(InputError, match="start must be a character offset"):
        check_spans(bad)
    with pytest.raises(InputError, match="beyond the end"):
        check_spans(ok.assign(text=["abc", ""]))
    with pytest.raises(InputError, match="missing severity"):
        check_spans(ok.drop(columns="severity"))


SPANS_CSV = ("rater,item,system,start,end,category,severity\n"
             "r1,1,A,0,4,Accuracy/Omission,Major\n"
             "r1,2,A,,,,\n"
             "r2,1,A,7,12,Fluency/Grammar,minor\n")


@pytest.mark.parametrize("dtype", ["Int64", "Int32", "Float64", "UInt16"])
def test_check_spans_accepts_nullable_integer_offsets(dtype: str) -> None:
    """``pd.read_csv(..., dtype="Int64")`` (or a database export) gives start/end with
    ``pd.NA`` for the empty cells: the same cleaned frame as numpy's float64 with NaN."""
    import io

    plain = pd.read_csv(io.StringIO(SPANS_CSV))  # start/end float64 with NaN
    typed = pd.read_csv(io.StringIO(SPANS_CSV), dtype={"start": dtype, "end": dtype,
                                                        "item": "Int64"})
    assert str(typed["start"].dtype) == dtype and typed["start"].isna().sum() == 1
    want, got = check_spans(plain), check_spans(typed)
    pd.testing.assert_frame_equal(got[want.columns], want)
    assert got["start"].tolist() == [0, -1, 7] and got["item"].tolist() == ["1", "2", "1"]
    r = mqm_span_ratings(typed)
    assert r.loc[r["criterion"] == "MQM", "score"].tolist() == [-5.0, 0.0, -1.0]


@pytest.mark.parametrize("dtype", ["Int64", "Int32", "float64", "object"])
@pytest.mark.parametrize("gap", ["start", "end"])
def test_offset_missing_on_one_side_names_row_and_column(dtype: str, gap: str) -> None:
    """An integer column with a missing value where the other offset is set is an InputError
    naming that row and the empty column, never a NaN passed on."""
    f = _spans([("r1", "1", "A", 0, 4, "Accuracy", "Major"), ("r1", "2", "A", None, None, "", ""),
                ("r1", "3", "A", 2, 5, "Fluency", "Minor")]).astype({"start": dtype,
                                                                      "end": dtype})
    f[gap] = f[gap].astype(object)
    f.loc[2, gap] = None
    f[gap] = f[gap].astype(dtype)
    with pytest.raises(InputError, match="needs both start and end") as e:
        check_spans(f)
    assert (e.value.row, e.value.column) == (3, gap)
    item = f.assign(item=pd.array([1, None, 3], dtype="Int64"))
    with pytest.raises(InputError, match="missing item identifier") as e:
        check_spans(item)
    assert (e.value.row, e.value.column) == (2, "item")


def _old_text(column: pd.Series, *, ids: bool) -> pd.Series:
    """The cleaning of the code before nullable dtypes were accepted (the reference)."""
    if ids:
        return column.fillna("").astype(str).str.strip()
    return column.where(column.notna(), "").astype(str).str.strip()


@pytest.mark.parametrize("seed", range(6))
def test_check_spans_equals_the_previous_cleaning_on_numpy_columns(seed: int) -> None:
    """Random frames with the column types the previous code accepted (int64, float64 with
    NaN, object with numbers and text, str, padded names): the same cleaned ids, offsets and
    labels as the previous expressions, written out here."""
    rng = np.random.default_rng(seed)
    n = 40
    start = rng.integers(0, 50, n).astype(float)
    end = start + rng.integers(1, 9, n)
    empty = rng.random(n) < 0.3
    start[empty], end[empty] = np.nan, np.nan
    sev = rng.choice(["Major", " minor", "NEUTRAL", "Critical "], n).astype(object)
    sev[empty] = rng.choice(["", "No-error"], int(empty.sum()))
    f = pd.DataFrame({
        "rater": rng.choice([" r1", "r2 ", "3"], n),
        "item": (rng.integers(0, 7, n) if seed % 2 else rng.integers(0, 7, n) + 0.5),
        "system": pd.Series(rng.choice(["A", "B"], n), dtype=object if seed % 3 else "str"),
        "start": start if seed % 2 else pd.Series(start, dtype=object),
        "end": end, "category": np.where(empty, None, "Accuracy"), "severity": sev})
    if seed >= 4:  # whole numbers as int64 (no empty offsets)
        f = f[~empty].astype({"start": "int64", "end": "int64"})
    out = check_spans(f)
    for c in ("rater", "item", "system"):
        assert out[c].tolist() == _old_text(f[c], ids=True).tolist()
    for c in ("start", "end"):
        raw = _old_text(f[c], ids=False)
        want = pd.to_numeric(raw.where(raw != "", None), errors="coerce").fillna(-1)
        assert out[c].tolist() == want.astype(int).tolist()
    sev_old = _old_text(f["severity"], ids=True).str.lower()
    none = (out["start"] == -1).to_numpy()
    assert out["severity"].tolist() == sev_old.where(~none, "no-error").tolist()
    cat = _old_text(f["category"], ids=True)
    assert out["category"].tolist() == cat.where(~none, "No-error").tolist()


# ---------------------------------------------------------------- MQM on the WMT21 TED data
def _ted_spans(data_dir: Path, lp: str) -> pd.DataFrame:
    """The error file as a span frame: offsets of the <v>...</v> markup in the plain output;
    errors marked in the source (omissions) have no offsets; a <v> never closed (one row in
    each file) runs to the end of the output."""
    e = read_errors(data_dir / FOLDER, lp)
    marked = e["target_marked"]
    start = marked.str.find("<v>")
    close = marked.str.find("</v>")
    end = (close - 3).where(close >= 0, e["target"].str.len())
    has = start >= 0
    out = pd.DataFrame({"rater": e["rater"], "item": e["item"], "system": e["system"],
                        "start": start.where(has), "end": end.where(has),
                        "category": e["category"], "severity": e["severity"],
                        "text": e["target"]})
    # the offsets point at the marked words of the plain output
    row = int(np.flatnonzero(has.to_numpy())[0])
    inner = marked.iloc[row].split("<v>")[1].split("</v>")[0]
    assert e["target"].iloc[row][int(start.iloc[row]):int(end.iloc[row])] == inner
    return out


@pytest.mark.parametrize("lp", ["en-de", "zh-en"])
def test_mqm_from_spans_reproduces_wmt21_ted_averages(data_dir: Path, lp: str) -> None:
    spans = _ted_spans(data_dir, lp)
    r = mqm_span_ratings(spans)
    mqm = r[r["criterion"] == "MQM"]
    pub = W.read_published_scores(data_dir / FOLDER, lp).dropna(subset=["score"])
    merged = pub.merge(mqm, on=["system", "item"], how="outer", indicator=True)
    assert (merged["_merge"] == "both").all()  # every rated output, nothing extra
    assert np.abs(merged["score_x"] - merged["score_y"]).max() <= 1e-9
    # per-category criteria as the corpus, adding up to MQM
    corpus = W.load(data_dir / FOLDER, lp=lp, human_systems="all")
    cr = corpus.ratings
    keys = ["rater", "item", "system", "criterion"]
    both = cr[keys + ["score"]].merge(r[keys + ["score"]], on=keys, how="outer",
                                      indicator=True)
    assert (both["_merge"] == "both").all()
    assert np.abs(both["score_x"] - both["score_y"]).max() <= 1e-9
    wide = r.pivot_table(index=["rater", "item", "system"], columns="criterion",
                         values="score")
    parts = wide.drop(columns="MQM").sum(axis=1)
    assert np.allclose(parts, wide["MQM"])
    assert {"MQM-Accuracy", "MQM-Fluency", "MQM-Style", "MQM-Terminology"} <= set(wide.columns)


def test_mqm_weights_by_hand() -> None:
    s = _spans([("r", "1", "A", 0, 3, "Accuracy/Mistranslation", "Major"),
                ("r", "1", "A", 5, 6, "Fluency/Punctuation", "Minor"),
                ("r", "1", "A", 7, 9, "Style/Awkward", "Minor"),
                ("r", "2", "A", 0, 9, "Non-translation!", "Major"),
                ("r", "3", "A", 0, 2, "Fluency/Grammar", "Critical"),
                ("r", "4", "A", None, None, "", "")])
    r = mqm_span_ratings(s).set_index(["criterion", "item"])["score"]
    # Freitag et al. 2021: Major 5, Minor punctuation 0.1, Minor 1, Non-translation 25
    assert r[("MQM", "1")] == pytest.approx(-6.1)
    assert r[("MQM", "2")] == -25.0 and r[("MQM", "3")] == -5.0 and r[("MQM", "4")] == 0.0
    assert r[("MQM-Accuracy", "1")] == -5.0 and r[("MQM-Style", "1")] == -1.0
    assert mqm_span_ratings(s, weights={"major": 10}).set_index(
        ["criterion", "item"])["score"][("MQM", "1")] == pytest.approx(-11.1)


def test_esa_scores_and_spans_exported_together() -> None:
    sc = pd.DataFrame({"rater": "r", "item": ["1", "2"], "system": "A", "score": [40, 100]})
    sp = _spans([("r", "1", "A", 0, 3, "", "major"), ("r", "1", "A", 4, 5, "", "minor"),
                 ("r", "1", "A", 6, 8, "", "major"), ("r", "2", "A", None, None, "", "")])
    out = esa_ratings(sc, sp).set_index(["criterion", "item"])
    assert out.loc[("ESA", "1"), "score"] == 40.0 and out.loc[("ESA", "2"), "score"] == 100.0
    assert out.loc[("ESA-spans", "1"), "score"] == -11.0  # 2 major x 5 + 1 minor
    assert out.loc[("ESA", "1"), "n_major"] == 2 and out.loc[("ESA", "1"), "n_minor"] == 1
    with pytest.raises(InputError, match="no span rows"):
        esa_ratings(sc, sp.iloc[:3])
    with pytest.raises(InputError, match="from 0 to 100"):
        esa_ratings(sc.assign(score=[40, 101]), sp)
    with pytest.raises(InputError, match="row 2 repeats"):
        esa_ratings(sc.assign(item=["1", "1"]), sp)


# ---------------------------------------------------------------- span agreement
def test_span_agreement_hand_example() -> None:
    """A marks [0, 4) major; B marks [2, 6) minor and [8, 10) major.
    |A| = 4, |B| = 6, |A & B| = 2 -> precision 2/6, recall 2/4, F1 = 4/10.
    Characters marked by anyone: 0-5, 8, 9 with labels (A, B) = (3,0) (3,0) (3,2) (3,2) (0,2)
    (0,2) (0,3) (0,3): every pair disagrees, Do = 1; values 0 x6, 2 x4, 3 x6 of n = 16,
    De = (256 - 36 - 16 - 36) / (16 * 15) = 0.7 -> alpha = 1 - 1 / 0.7 = -3/7."""
    s = _spans([("A", "1", "S", 0, 4, "", "major"), ("B", "1", "S", 2, 6, "", "minor"),
                ("B", "1", "S", 8, 10, "", "major")])
    res = span_agreement(s)
    p = res.pairs.iloc[0]
    assert (p["chars_a"], p["chars_b"], p["overlap"]) == (4, 6, 2)
    assert p["precision"] == pytest.approx(1 / 3) and p["recall"] == pytest.approx(0.5)
    assert res.f1_micro == pytest.approx(0.4) and res.f1_macro == pytest.approx(0.4)
    assert res.severity_alpha == pytest.approx(-3 / 7)


def test_micro_and_macro_differ_by_hand() -> None:
    """Unit 1: A [0, 10), B [0, 10) -> F1 1; unit 2: A [0, 2), B [1, 3) -> F1 1/2; unit 3:
    both judged, nobody marked -> no F1. Micro = 2 (10 + 1) / (12 + 12) = 11/12; macro = 3/4."""
    s = _spans([("A", "1", "S", 0, 10, "", "minor"), ("B", "1", "S", 0, 10, "", "minor"),
                ("A", "2", "S", 0, 2, "", "minor"), ("B", "2", "S", 1, 3, "", "major"),
                ("A", "3", "S", None, None, "", ""), ("B", "3", "S", None, None, "", ""),
                ("C", "4", "S", 0, 1, "", "minor")])
    res = span_agreement(s)
    assert res.f1_micro == pytest.approx(11 / 12) and res.f1_macro == pytest.approx(0.75)
    assert res.pairs["n_units"].tolist() == [3] and res.pairs["n_units_unmarked"].tolist() == [1]
    assert res.n_units == 3  # unit 4 has a single rater


def _alpha_nominal(values: list[list[int]]) -> float:
    """Krippendorff's alpha, nominal, from the coincidence matrix (Krippendorff 2011)."""
    o: dict[tuple[int, int], float] = defaultdict(float)
    for vals in values:
        m = len(vals)
        if m < 2:
            continue
        for i in range(m):
            for j in range(m):
                if i != j:
                    o[(vals[i], vals[j])] += 1 / (m - 1)
    n_c: dict[int, float] = defaultdict(float)
    for (c, _), v in o.items():
        n_c[c] += v
    n = sum(n_c.values())
    do = sum(v for (c, k), v in o.items() if c != k) / n
    de = sum(n_c[c] * n_c[k] for c in n_c for k in n_c if c != k) / (n * (n - 1))
    return 1 - do / de


def test_span_agreement_against_sets_sklearn_and_alpha_definition() -> None:
    from sklearn.metrics import cohen_kappa_score

    rng = np.random.default_rng(5)
    rows = []
    sev = ["minor", "major", "neutral"]
    for item in range(8):
        for rater in ("r1", "r2", "r3"):
            if rater == "r3" and item % 2:
                continue  # r3 judged half of the outputs
            for _ in range(int(rng.integers(0, 3))):
                a = int(rng.integers(0, 30))
                rows.append((rater, str(item), "S", a, a + int(rng.integers(1, 8)), "",
                             sev[int(rng.integers(0, 3))]))
            rows.append((rater, str(item), "S", None, None, "", ""))
    res = span_agreement(_spans(rows))
    df = check_spans(_spans(rows))
    code = {"neutral": 1, "minor": 2, "major": 3}
    label: dict[tuple[str, str], dict[int, int]] = defaultdict(dict)
    judged: dict[str, set[str]] = defaultdict(set)
    for r in df.itertuples():
        judged[r.item].add(r.rater)
        for c in range(r.start, r.end):
            label[(r.rater, r.item)][c] = max(label[(r.rater, r.item)].get(c, 0), code[r.severity])
    for p in res.pairs.itertuples():
        units = [i for i in judged if {p.rater_a, p.rater_b} <= judged[i]]
        sa = [set(label[(p.rater_a, i)]) for i in units]
        sb = [set(label[(p.rater_b, i)]) for i in units]
        ov = sum(len(x & y) for x, y in zip(sa, sb, strict=True))
        na, nb = sum(map(len, sa)), sum(map(len, sb))
        assert (p.overlap, p.chars_a, p.chars_b) == (ov, na, nb)
        assert p.f1_micro == pytest.approx(2 * ov / (na + nb))
        f1s = [2 * len(x & y) / (len(x) + len(y)) for x, y in zip(sa, sb, strict=True) if x | y]
        assert p.f1_macro == pytest.approx(np.mean(f1s))
        xa = [label[(p.rater_a, i)][c] for i, x, y in zip(units, sa, sb, strict=True)
              for c in sorted(x & y)]
        xb = [label[(p.rater_b, i)][c] for i, x, y in zip(units, sa, sb, strict=True)
              for c in sorted(x & y)]
        if len(set(xa) | set(xb)) > 1:
            assert p.severity_kappa == pytest.approx(cohen_kappa_score(xa, xb))
    values = []
    for i, raters in judged.items():
        marked = set().union(*(set(label[(r, i)]) for r in raters))
        values += [[label[(r, i)].get(c, 0) for r in sorted(raters)] for c in marked]
    assert res.severity_alpha == pytest.approx(_alpha_nominal(values))
    assert len(res.pairs) == len(list(combinations(["r1", "r2", "r3"], 2)))


def test_undefined_severity_kappa_is_explained() -> None:
    s = _spans([("A", "1", "S", 0, 4, "", "major"), ("B", "1", "S", 2, 6, "", "major")])
    res = span_agreement(s)
    assert np.isnan(res.severity_kappa) and np.isnan(res.pairs["severity_kappa"].iloc[0])
    assert any("chance agreement is 1" in n for n in res.notes)
    res = span_agreement(_spans([("A", "1", "S", 0, 2, "", "major"),
                                 ("B", "1", "S", 2, 6, "", "major")]))
    assert res.f1_micro == 0.0 and any("no character was marked by both" in n
                                       for n in res.notes)


def test_span_agreement_needs_two_raters() -> None:
    with pytest.raises(InputError, match="at least 2 raters"):
        span_agreement(_spans([("A", "1", "S", 0, 4, "", "major")]))


# ---------------------------------------------------------------- CLI
def test_cli_agreement_spans(tmp_path: Path) -> None:
    s = _spans([("A", "1", "S", 0, 4, "", "major"), ("B", "1", "S", 2, 6, "", "minor"),
                ("B", "1", "S", 8, 10, "", "major")])
    path = tmp_path / "spans.csv"
    s.to_csv(path, index=False)
    res = runner.invoke(app, ["agreement", str(path), "--spans", "--json"])
    assert res.exit_code == 0, (res.output, res.exception)
    data = json.loads(res.stdout)
    assert data["f1_micro"] == pytest.approx(0.4)
    assert data["severity_alpha"] == pytest.approx(-3 / 7)
    assert data["pairs"][0]["rater_a"] == "A" and data["pairs"][0]["precision"] == \
        pytest.approx(1 / 3)
    res = runner.invoke(app, ["agreement", str(path), "--spans", "--out-dir",
                              str(tmp_path / "t")])
    assert res.exit_code == 0 and "F1 micro 0.400" in res.stdout
    assert (tmp_path / "t" / "span_agreement.csv").exists()
    path.write_text("rater,item,system,start,end,category,severity\nA,1,S,3,2,,major\n")
    res = runner.invoke(app, ["agreement", str(path), "--spans"])
    assert isinstance(res.exception, InputError)
    assert (res.exception.row, res.exception.column) == (2, "end")
    assert str(res.exception.file).endswith("spans.csv")


def test_spans_score_cli(tmp_path: Path) -> None:
    s = _spans([("r", "1", "A", 0, 3, "Accuracy/Mistranslation", "Major"),
                ("r", "1", "A", 5, 6, "Fluency/Punctuation", "Minor"),
                ("r", "2", "A", None, None, "", ""), ("r", "1", "B", 0, 2, "Style", "Minor"),
                ("r", "2", "B", None, None, "", "")])
    path = tmp_path / "spans.csv"
    s.to_csv(path, index=False)
    out = tmp_path / "ratings.csv"
    res = runner.invoke(app, ["spans", "score", str(path), "--out", str(out), "--weight",
                              "major=10", "--json"])
    assert res.exit_code == 0, (res.output, res.exception)
    got = pd.read_csv(out, dtype={"item": str})
    lib = mqm_span_ratings(s, weights={"major": 10})
    pd.testing.assert_frame_equal(got, lib, check_dtype=False)
    means = {(m["criterion"], m["system"]): m["mean"] for m in json.loads(res.stdout)["means"]}
    assert means[("MQM", "A")] == pytest.approx(-10.1 / 2) and means[("MQM", "B")] == -0.5
    esa = tmp_path / "esa.csv"
    pd.DataFrame({"rater": "r", "item": ["1", "2", "1", "2"], "system": list("AABB"),
                  "score": [30, 90, 70, 95]}).to_csv(esa, index=False)
    res = runner.invoke(app, ["spans", "score", str(path), "--esa-scores", str(esa)])
    assert res.exit_code == 0, (res.output, res.exception)
    assert "ESA-spans" in res.stdout
    res = runner.invoke(app, ["spans", "score", str(path), "--weight", "major"])
    assert isinstance(res.exception, InputError) and "NAME=NUMBER" in str(res.exception)


def test_mqm_scores_feed_compare(tmp_path: Path) -> None:
    """Span-derived MQM scores are a ratings file for nlgeval compare (system B has more
    errors on every item)."""
    rows = []
    for item in range(12):
        for rater in ("r1", "r2"):
            rows.append((rater, str(item), "A", None, None, "", ""))
            rows.append((rater, str(item), "B", 0, 4, "Accuracy/Mistranslation", "Major"))
    path = tmp_path / "mqm.csv"
    mqm_span_ratings(_spans(rows)).to_csv(path, index=False)
    res = runner.invoke(app, ["compare", str(path), "--criterion", "MQM", "--json"])
    assert res.exit_code == 0, (res.output, res.exception)
    pair = json.loads(res.stdout)["pairs"][0]
    assert (pair["system_a"], pair["system_b"]) == ("A", "B") and pair["pvalue"] < 0.01
    assert pair["higher"] == "A" and (pair["mean_a"], pair["mean_b"]) == (0.0, -5.0)
