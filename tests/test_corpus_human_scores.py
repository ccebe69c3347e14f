"""``Corpus.human_scores``: per-rater z-scores without a Python call per rater and criterion.

Reference: the previous implementation (a ``groupby.transform`` with a lambda calling pandas'
``Series.std(ddof=1)`` per rater and criterion), kept below as ``_old_human_scores``; the new
code must give the same frame bit for bit (``==``, NaN where NaN) on random ratings with ties,
missing scores, raters with one rating, constant raters (a spread of exactly 0 and one of a
rounding error), several criteria, and scores near 1e200 and 1e-200. A small case is also
worked out by hand (z of 1, 2, 3 is -1, 0, 1).
"""

from __future__ import annotations

import warnings
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest

from nlgeval.corpus import rater_sd, toy_corpus


def _old_human_scores(ratings: pd.DataFrame, normalise: str = "none",
                      criteria: list[str] | None = None) -> pd.DataFrame:
    """The code before vectorisation, verbatim apart from taking the ratings frame."""
    r = ratings
    if criteria is not None:
        r = r[r["criterion"].isin(list(criteria))]
    if normalise == "z":
        g = r.groupby(["rater", "criterion"])["score"]
        sd = g.transform(lambda s: s.std(ddof=1))
        r = r.assign(score=(r["score"] - g.transform("mean")) / sd)
        r = r[np.isfinite(r["score"])]
    return (r.groupby(["system", "item", "criterion"], sort=False)["score"]
            .agg(score="mean", n_raters="count").reset_index())


def _ratings(seed: int, scale: float = 1.0, n: int = 600) -> pd.DataFrame:
    """Random tidy ratings: 1-7 integer scores (many ties) or continuous ones, 10 % missing,
    one rater with a single rating per criterion, one constant rater at 4 (exact mean) and
    one at 0.1 (mean 0.1 + rounding), three criteria, raters of very different sizes."""
    rng = np.random.default_rng(seed)
    raters = np.array([f"r{k}" for k in range(12)])
    rater = raters[np.minimum(rng.geometric(0.25, n) - 1, 11)]
    score = (rng.integers(1, 8, n).astype(float) if seed % 2
             else rng.normal(50, 20, n))
    score[rng.random(n) < 0.1] = np.nan
    frame = pd.DataFrame({
        "rater": rater, "item": rng.integers(0, 40, n).astype(str),
        "system": rng.choice(["A", "B", "C", "D"], n),
        "criterion": rng.choice(["fluency", "adequacy", "grammar"], n), "score": score * scale})
    extra = pd.DataFrame({
        "rater": ["one"] * 3 + ["flat"] * 6 + ["tenth"] * 9,
        "item": [str(i) for i in range(3)] + [str(i) for i in range(6)]
        + [str(i) for i in range(9)],
        "system": "A", "criterion": ["fluency", "adequacy", "grammar"] * 6,
        "score": [3.0, 5.0, 2.0] + [4.0 * scale] * 6 + [0.1 * scale] * 9})
    return pd.concat([frame, extra], ignore_index=True)


def _assert_same(new: pd.DataFrame, old: pd.DataFrame) -> None:
    pd.testing.assert_frame_equal(new, old, check_exact=True)
    a, b = new["score"].to_numpy(), old["score"].to_numpy()
    assert np.array_equal(a, b, equal_nan=True)  # bit for bit, not within a tolerance


@pytest.mark.parametrize("scale", [1.0, 1e200, 1e-200])
@pytest.mark.parametrize("seed", range(4))
def test_z_scores_equal_the_previous_code(seed: int, scale: float) -> None:
    ratings = _ratings(seed, scale)
    corpus = replace(toy_corpus(), ratings=ratings)  # NaN scores: not through Corpus.build
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # 1e200 squared overflows in both
        new = corpus.human_scores(normalise="z")
        old = _old_human_scores(ratings, "z")
        _assert_same(new, old)
        _assert_same(corpus.human_scores(normalise="z", criteria=["grammar", "fluency"]),
                     _old_human_scores(ratings, "z", ["grammar", "fluency"]))
    _assert_same(corpus.human_scores(), _old_human_scores(ratings))
    # the cases the brief names are present and behave as before
    one = ratings[(ratings["rater"] == "one")]
    assert len(one) == 3 and one["criterion"].nunique() == 3
    assert not new["n_raters"].isna().any()


def test_integer_scores_equal_the_previous_code() -> None:
    """int64 scores in a frame set by hand (pandas' ``std`` casts them to float first)."""
    corpus = toy_corpus()
    ratings = pd.concat([corpus.ratings, corpus.ratings.assign(rater="r3", score=[5, 1, 3]),
                         corpus.ratings.assign(rater="r4", item="2", score=[2, 2, 2])],
                        ignore_index=True).astype({"score": "int64"})
    c = replace(corpus, ratings=ratings)
    assert ratings["score"].dtype.kind == "i"
    _assert_same(c.human_scores(normalise="z"), _old_human_scores(ratings, "z"))


def test_z_scores_by_hand() -> None:
    """Rater r1 gives 1, 2, 3 (mean 2, SD 1): z = -1, 0, 1; r2's single rating is dropped."""
    ratings = pd.DataFrame({"rater": ["r1", "r1", "r1", "r2"], "item": ["1", "2", "3", "1"],
                            "system": "A", "criterion": "fluency",
                            "score": [1.0, 2.0, 3.0, 5.0]})
    z = replace(toy_corpus(), ratings=ratings).human_scores(normalise="z")
    assert z[["item", "score", "n_raters"]].values.tolist() == [["1", -1.0, 1], ["2", 0.0, 1],
                                                                 ["3", 1.0, 1]]


@pytest.mark.parametrize("seed", range(5))
def test_rater_sd_equals_series_std_per_group(seed: int) -> None:
    """Group sizes from 1 to several hundred (numpy's pairwise sums split at 8 and 128),
    missing scores and rows without a group (-1)."""
    rng = np.random.default_rng(100 + seed)
    n = 3000
    groups = np.minimum(rng.geometric(0.02, n) - 1, 60)
    groups[rng.random(n) < 0.02] = -1
    x = rng.normal(0, 1, n) * 10.0 ** rng.integers(-5, 6, n)
    x[rng.random(n) < 0.05] = np.nan
    s = pd.Series(x)
    want = np.full(n, np.nan)
    for g in np.unique(groups[groups >= 0]):
        rows = np.flatnonzero(groups == g)
        want[rows] = s.iloc[rows].std(ddof=1)
    assert np.array_equal(rater_sd(x, groups), want, equal_nan=True)
    assert np.isnan(rater_sd(x, np.full(n, -1))).all()


def test_webnlg_z_scores_equal_the_previous_code(data_dir) -> None:
    from nlgeval.corpora import load_corpus

    webnlg = load_corpus("webnlg2020", data_dir)
    _assert_same(webnlg.human_scores(normalise="z"), _old_human_scores(webnlg.ratings, "z"))
