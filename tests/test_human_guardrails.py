"""Guardrails of issue 14: never a confident number from a broken input.

References are the inputs themselves, built so the right answer is known by construction:
constant / near-constant ratings (no variance to analyse), a design whose dense matrix size is
arithmetic (n x p x 8 bytes), agreement data where a coefficient is 0 / 0, files written with
the delimiter / compression / encoding a spreadsheet or a shell would use (parsed back and
compared cell by cell with the plain comma-separated file), and the exact signed-rank test's
smallest attainable p-value, 2 / 2^n (all signs equal), checked against scipy.
"""

from __future__ import annotations

import bz2
import gzip
import lzma
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from typer.testing import CliRunner

from nlgeval.cli import app
from nlgeval.errors import InputError
from nlgeval.human.agreement import agreement_report
from nlgeval.human.compare import pairwise_wilcoxon
from nlgeval.human.glm import glm_tukey
from nlgeval.human.guards import (
    check_dense,
    check_variation,
    min_attainable_pvalue_signed_rank,
)
from nlgeval.human.mixed import mixed_model
from nlgeval.human.ordinal import ordinal_model
from nlgeval.human.ratings import read_ratings
from nlgeval.io import read_table

DATA = Path(__file__).parent / "data" / "human_lsed_ratings.csv"
NLGEVAL = Path(sys.executable).parent / "nlgeval"
runner = CliRunner()


@pytest.fixture(scope="module")
def accuracy() -> pd.DataFrame:
    return read_ratings(DATA, criterion="accuracy")


# ---------------------------------------------------------------- constant / near-constant


def test_constant_ratings_stop_every_model(accuracy: pd.DataFrame) -> None:
    const = accuracy.assign(score=5.0)
    for fit in (glm_tukey, mixed_model, ordinal_model):
        with pytest.raises(InputError, match="all 64 ratings are 5"):
            fit(const)


def test_near_constant_and_rounding_noise(accuracy: pd.DataFrame) -> None:
    near = accuracy.assign(score=5.0)
    near.loc[3, "score"] = 4.0  # one rating differs out of 64
    with pytest.raises(InputError, match="near-constant ratings: 63 of 64"):
        glm_tukey(near)
    two = near.copy()
    two.loc[10, "score"] = 6.0  # two differ: allowed (max(1, 1 % of 64) = 1)
    assert np.isfinite(glm_tukey(two).mse)
    noisy = accuracy.assign(score=5.0 + 1e-12 * np.arange(64))
    with pytest.raises(InputError, match="differ only by rounding"):
        glm_tukey(noisy)
    # the share grows with n: 1000 ratings, 10 differing -> near-constant; 11 -> analysed
    x = np.full(1000, 3.0)
    x[:10] = 4.0
    with pytest.raises(InputError, match="near-constant"):
        check_variation(x, analysis="x")
    x[10] = 2.0
    check_variation(x, analysis="x")


def test_exact_fit_is_refused() -> None:
    # every rating = system effect + rater effect exactly: zero residual
    rows = [{"system": s, "rater": r, "item": f"{s}{r}", "score": float(k + 2 * j)}
            for k, s in enumerate("abc") for j, r in enumerate("xyzw")]
    with pytest.raises(InputError, match="fits the ratings exactly"):
        glm_tukey(pd.DataFrame(rows), factors=("rater",))


def test_cli_constant_glm_exit_2_one_line(tmp_path: Path, accuracy: pd.DataFrame) -> None:
    p = tmp_path / "const.csv"
    accuracy.assign(score=4).to_csv(p, index=False)
    res = subprocess.run([str(NLGEVAL), "compare", str(p), "--criterion", "accuracy",
                          "--method", "glm-tukey", "--json"], capture_output=True, text=True,
                         timeout=120)
    assert res.returncode == 2 and res.stdout == ""
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and "all 64 ratings are 4" in lines[0]


# ---------------------------------------------------------------- dense design matrices


def test_dense_limit_names_size_and_option(accuracy: pd.DataFrame) -> None:
    # GLM: 64 rows x (1 + 3 + 7 + 7) = 18 columns = 9216 bytes
    with pytest.raises(InputError) as e:
        glm_tukey(accuracy, max_dense_bytes=9215)
    msg = str(e.value)
    assert "64 x 18" in msg and "--factors rater" in msg and "--max-dense-gib" in msg
    glm_tukey(accuracy, max_dense_bytes=9216)
    with pytest.raises(InputError, match="1,000,000 x 10,008 matrix \\(74.6 GiB"):
        check_dense(1_000_000, 10_008, analysis="the GLM", hint="use x")
    with pytest.raises(InputError, match="mixed model needs a dense"):
        mixed_model(accuracy, max_dense_bytes=1000)


def test_cli_dense_error_is_one_line(tmp_path: Path) -> None:
    res = subprocess.run([str(NLGEVAL), "compare", str(DATA), "--criterion", "accuracy",
                          "--method", "glm-tukey", "--max-dense-gib", "1e-7"],
                         capture_output=True, text=True, timeout=120)
    assert res.returncode == 2
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and "64 x 18" in lines[0] and "--factors" in lines[0]
    # and the suggested option works
    out = runner.invoke(app, ["compare", str(DATA), "--criterion", "accuracy", "--method",
                              "glm-tukey", "--factors", "rater", "--json"])
    assert out.exit_code == 0, out.output
    assert "item" not in {a["factor"] for a in __import__("json").loads(out.stdout)["anova"]}


# ---------------------------------------------------------------- agreement: NaN with reasons


def test_agreement_undefined_gives_nan_and_reasons(accuracy: pd.DataFrame) -> None:
    rep = agreement_report(accuracy.assign(score=5.0), scale=(1, 7))
    assert np.isnan(rep.fleiss.kappa)
    assert all(np.isnan(v) for v in rep.krippendorff.values())
    assert set(rep.undefined) >= {"fleiss_kappa", "krippendorff_alpha_interval", "icc",
                                  "cohen_kappa"}
    assert any("Fleiss' kappa is undefined (NaN)" in n for n in rep.notes)
    assert rep.raters["n"].sum() == 64  # the rest of the report is still there
    # every output rated once: nothing pairable, but no abort
    once = accuracy.drop_duplicates(["item", "system"])
    rep = agreement_report(once)
    assert rep.icc == [] and "icc" in rep.undefined and rep.cohen.empty
    d = rep.to_dict()
    assert d["fleiss_kappa"] != d["fleiss_kappa"] or d["fleiss_kappa"] is None  # NaN
    # a defined statistic next to undefined ones: raters agree on a binary scale for one unit
    # set, so the report keeps the defined coefficients
    ok = agreement_report(accuracy, scale=(1, 7))
    assert ok.undefined == {} and np.isfinite(ok.fleiss.kappa)


def test_agreement_cli_undefined_exit_0(tmp_path: Path, accuracy: pd.DataFrame) -> None:
    p = tmp_path / "c.csv"
    accuracy.assign(score=3).to_csv(p, index=False)
    res = runner.invoke(app, ["agreement", str(p), "--criterion", "accuracy", "--json"])
    assert res.exit_code == 0, res.output
    out = __import__("json").loads(res.stdout)
    assert out["fleiss_kappa"] is None and "fleiss_kappa" in out["undefined"]
    assert out["raters"]


# ---------------------------------------------------------------- few items / reliability


def test_min_attainable_signed_rank_p_matches_scipy() -> None:
    for n in range(1, 9):
        d = np.arange(1, n + 1, dtype=float)  # all positive, no ties: the extreme case
        ref = stats.wilcoxon(d, method="exact").pvalue
        assert min_attainable_pvalue_signed_rank(n) == pytest.approx(ref)


def test_wilcoxon_warns_when_pairs_cannot_reach_alpha(accuracy: pd.DataFrame) -> None:
    few = accuracy[accuracy["item"].isin(["date1", "date2", "date3", "date4"])]
    pairs = pairwise_wilcoxon(few, correction="bonferroni")
    warns = pairs.attrs["warnings"]
    # 4 items -> at most 4 non-zero differences -> p >= 2/16 > 0.05/6
    assert any("ever to reach 0.00833" in w for w in warns)
    # the bundled file: 8 items, 6-8 non-zero differences per pair: 2 / 2^6 = 0.031 can
    # reach 0.05 (Holm's last step) but not Bonferroni's 0.05 / 6
    out = __import__("json").loads(runner.invoke(app, [
        "compare", str(DATA), "--criterion", "accuracy", "--correction", "holm", "--json"]).stdout)
    assert all("ever to reach" not in w for w in out["warnings"])
    out = __import__("json").loads(runner.invoke(app, [
        "compare", str(DATA), "--criterion", "accuracy", "--json"]).stdout)
    wide = accuracy.groupby(["item", "system"])["score"].mean().unstack()
    expected = []
    for p in out["pairs"]:
        nnz = int(((wide[p["system_a"]] - wide[p["system_b"]]) != 0).sum())
        if 2 / 2 ** nnz > 0.05 / 6:
            expected.append(f"{p['system_a']}-{p['system_b']} (n = {nnz})")
    warn = [w for w in out["warnings"] if "ever to reach 0.00833" in w]
    assert expected and len(warn) == 1
    assert warn[0].startswith(f"{len(expected)} of 6 pairs")
    assert all(e in warn[0] for e in expected)


# ---------------------------------------------------------------- file formats


ROWS = "rater,item,system,criterion,score\na,1,s,q,3\nb,1,t,q,4\n"


def _plain(tmp_path: Path) -> pd.DataFrame:
    p = tmp_path / "plain.csv"
    p.write_text(ROWS, encoding="utf-8")
    return read_table(p)


@pytest.mark.parametrize("name,writer", [
    ("semi.csv", lambda t: t.replace(",", ";").encode()),
    ("tabs.csv", lambda t: t.replace(",", "\t").encode()),
    ("commas.tsv", lambda t: t.encode()),
    ("r.csv.gz", lambda t: gzip.compress(t.encode())),
    ("r.csv", lambda t: gzip.compress(t.encode())),  # gzip without the suffix
    ("r.csv.bz2", lambda t: bz2.compress(t.encode())),
    ("r.csv.xz", lambda t: lzma.compress(t.encode())),
    ("r.tsv.gz", lambda t: gzip.compress(t.replace(",", "\t").encode())),
    ("utf16.txt", lambda t: t.replace(",", "\t").encode("utf-16")),
    ("bom.csv", lambda t: ("\ufeff" + t).encode()),
])
def test_sniffed_formats_read_like_the_plain_file(tmp_path: Path, name: str, writer) -> None:  # noqa: ANN001
    p = tmp_path / name
    p.write_bytes(writer(ROWS))
    got = read_table(p, ["rater", "score"])
    pd.testing.assert_frame_equal(got, _plain(tmp_path))


def test_sniffing_keeps_comma_files_with_semicolons_in_text(tmp_path: Path) -> None:
    p = tmp_path / "x.csv"
    p.write_text('system,item,text\ns,1,"a; b; c"\n', encoding="utf-8")
    got = read_table(p)
    assert list(got.columns[:3]) == ["system", "item", "text"] and got["text"][0] == "a; b; c"


@pytest.mark.parametrize("name,data,match", [
    ("r.zip", None, "zip archive"),
    ("r.xlsx", None, "spreadsheet workbook"),
    ("r.xls", b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\0" * 32, "binary Excel"),
    ("r.csv.gz", b"\x1f\x8b\x08\x00broken", "gzip-compressed but cannot be decompressed"),
    ("pipe.csv", b"rater|item|system|criterion|score\na|1|s|q|3\n", "read as a single field"),
])
def test_unreadable_files_say_what_is_wrong(tmp_path: Path, name: str, data: bytes | None,
                                            match: str) -> None:
    p = tmp_path / name
    if data is None:
        with zipfile.ZipFile(p, "w") as z:
            z.writestr("xl/workbook.xml" if name.endswith("xlsx") else "r.csv", ROWS)
    else:
        p.write_bytes(data)
    with pytest.raises(InputError, match=match):
        read_table(p, ["rater", "score"])


def test_decimal_comma_is_named(tmp_path: Path) -> None:
    p = tmp_path / "dec.csv"
    p.write_text("rater;item;system;criterion;score\na;1;s;q;3,5\n", encoding="utf-8")
    with pytest.raises(InputError, match="row 2.*decimal comma\\? write 3.5"):
        read_ratings(p)


def test_cli_reads_semicolon_gzip_ratings(tmp_path: Path) -> None:
    text = DATA.read_text(encoding="utf-8").replace(",", ";")
    p = tmp_path / "ratings.csv.gz"
    p.write_bytes(gzip.compress(text.encode()))
    a = runner.invoke(app, ["compare", str(p), "--criterion", "accuracy", "--json"])
    b = runner.invoke(app, ["compare", str(DATA), "--criterion", "accuracy", "--json"])
    assert a.exit_code == 0, a.output
    ja, jb = (__import__("json").loads(x.stdout) for x in (a, b))
    assert ja["pairs"] == jb["pairs"]


# ---------------------------------------------------------------- issue 14 bullets, re-checked
def test_ordinal_dense_limit_and_sparse_categories_warn(accuracy: pd.DataFrame) -> None:
    # 64 rows x (1 + 3 + 7) columns x 4 copies x 8 bytes = 22,528 bytes
    with pytest.raises(InputError, match="ordinal model needs a dense 64 x 11"):
        ordinal_model(accuracy, max_dense_bytes=22_527)
    res = ordinal_model(accuracy, max_dense_bytes=22_528)
    # pCRU-random never gives a 7, SUMTIME never a 1 or 2, ...: the check says it is rough
    assert any("never occur" in w for w in res.warnings)


def test_few_levels_warn_in_cli_text_output(accuracy: pd.DataFrame, tmp_path: Path) -> None:
    few = accuracy[accuracy["rater"].isin(["subj1", "subj2", "subj3"])]
    path = tmp_path / "few.csv"
    few.to_csv(path, index=False)
    res = runner.invoke(app, ["compare", str(path), "--method", "mixed"])
    assert res.exit_code == 0, res.output
    assert "only 3 raters" in res.stdout  # a table note, visible next to the numbers
    rng = np.random.default_rng(4)
    small = pd.DataFrame({"rater": "r1", "item": np.repeat(np.arange(5), 3),
                          "system": list("abc") * 5, "criterion": "q",
                          "score": rng.integers(1, 6, 15).astype(float)})
    small.to_csv(path, index=False)
    res = runner.invoke(app, ["compare", str(path), "--method", "friedman"])
    assert res.exit_code == 0 and "only 5 complete items" in res.stderr
