"""Effect sizes with intervals beside every pairwise comparison (issue 14).

References:

* matched-pairs rank-biserial r: pingouin 0.7.0 ``wilcoxon`` (its ``RBC``) for the point value;
  its Fisher-z interval against **R effectsize** 0.8.3 (``r-cran-effectsize`` 0.8.3+dfsg-1,
  R 4.2.2), computed once on the differences::

      a <- c(5, 6, 4, 7, 3, 5, 6, 2, 4, 5, 6, 7, 3, 4)
      b <- c(4, 6, 3, 5, 3, 4, 4, 2, 2, 4, 7, 5, 4, 1)
      rank_biserial(a - b, ci = 0.95)  # 0.787878787879 [0.378072791094, 0.939505529530]
      rank_biserial(a - b, ci = 0.90)  #                [0.466201983771, 0.925550164680]
      x <- c(1.2, -0.5, 2.3, 0.7, -1.1, 3.0, 0.4, 1.9, -0.2, 2.2)
      rank_biserial(x, mu = 0)         # 0.672727272727 [0.115961299081, 0.907810300200]

  (effectsize's two-vector call ``rank_biserial(a, b, paired = TRUE)`` counts the non-zero
  values of ``a`` rather than of the differences for the standard error, giving [0.439, 0.930]
  here; nlgeval follows the formula on the differences.)
* Tukey: d = diff / sqrt(MSE) and the Tukey interval divided by the same SD, so the interval
  excludes 0 exactly when the pair is significant.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from nlgeval.human.compare import pairwise_wilcoxon, rank_biserial_ci, signed_rank
from nlgeval.human.glm import glm_tukey
from nlgeval.human.ratings import read_ratings
from nlgeval.human.report import glm_tables, wilcoxon_table

DATA = Path(__file__).parent / "data" / "human_lsed_ratings.csv"
A = np.array([5, 6, 4, 7, 3, 5, 6, 2, 4, 5, 6, 7, 3, 4], dtype=float)
B = np.array([4, 6, 3, 5, 3, 4, 4, 2, 2, 4, 7, 5, 4, 1], dtype=float)
X = np.array([1.2, -0.5, 2.3, 0.7, -1.1, 3.0, 0.4, 1.9, -0.2, 2.2])


def test_rank_biserial_interval_matches_r_effectsize() -> None:
    res = signed_rank(A, B)
    assert res.effect_size == pytest.approx(0.787878787879, abs=1e-12)
    assert res.confidence_interval().low == pytest.approx(0.378072791094, abs=1e-11)
    assert res.confidence_interval().high == pytest.approx(0.939505529530, abs=1e-11)
    ci90 = signed_rank(A, B, confidence=0.90).confidence_interval()
    assert (ci90.low, ci90.high) == pytest.approx((0.466201983771, 0.925550164680), abs=1e-11)
    x = signed_rank(X, np.zeros_like(X))
    assert x.effect_size == pytest.approx(0.672727272727, abs=1e-12)
    assert (x.effect_size_low, x.effect_size_high) == pytest.approx(
        (0.115961299081, 0.907810300200), abs=1e-11)


def test_rank_biserial_point_matches_pingouin() -> None:
    pg = pytest.importorskip("pingouin")
    assert signed_rank(A, B).effect_size == pytest.approx(
        float(pg.wilcoxon(A, B)["RBC"].iloc[0]), abs=1e-12)


def test_rank_biserial_interval_at_the_boundary() -> None:
    # all differences positive: r = 1; the interval keeps 1 as its upper bound and has a
    # lower bound from r moved half a rank (maxw = 15, r' = 14/15): not the point [1, 1]
    ci = rank_biserial_ci(1.0, 5)
    se = np.sqrt((2 * 125 + 3 * 25 + 5) / 6) / 15
    assert ci.high == 1.0
    assert ci.low == pytest.approx(np.tanh(np.arctanh(14 / 15) - 1.959963984540054 * se))
    assert rank_biserial_ci(-1.0, 5).low == -1.0
    assert np.isnan(rank_biserial_ci(0.5, 0).low)


def test_wilcoxon_table_carries_the_intervals(tmp_path: Path) -> None:
    df = read_ratings(DATA, criterion="clarity")
    pairs = pairwise_wilcoxon(df, correction="holm")
    wide = df.groupby(["item", "system"])["score"].mean().unstack()
    for row in pairs.itertuples():
        d = (wide[row.system_a] - wide[row.system_b]).to_numpy()
        ci = rank_biserial_ci(row.effect_size, int((d != 0).sum()), 0.95)
        assert (row.effect_size_low, row.effect_size_high) == pytest.approx(tuple(ci))
    t = wilcoxon_table(pairs, criterion="clarity", correction="holm")
    assert "95% CI of r" in t.data.columns
    t.write(tmp_path, "w")
    assert "95\\% CI of r" in (tmp_path / "w.tex").read_text()


def test_tukey_standardised_difference_agrees_with_significance() -> None:
    for crit in ("accuracy", "clarity"):
        res = glm_tukey(read_ratings(DATA, criterion=crit))
        sd = np.sqrt(res.mse)
        t = res.tukey
        np.testing.assert_allclose(t["smd"], t["diff"] / sd)
        np.testing.assert_allclose(t["smd_low"], t["low"] / sd)
        excludes = (t["smd_low"] > 0) | (t["smd_high"] < 0)
        assert (excludes == t["reject"]).all()
    tables = glm_tables(res)
    assert {"d", "CI of d"} <= set(tables["tukey"].data.columns)


def test_holm_mismatch_between_ci_and_p_is_explained() -> None:
    # an interval that excludes 0 beside a non-significant corrected p gets a warning
    df = read_ratings(DATA, criterion="accuracy")
    pairs = pairwise_wilcoxon(df, correction="bonferroni")
    bad = pairs[((pairs["effect_size_low"] > 0) | (pairs["effect_size_high"] < 0))
                & ~pairs["significant"]]
    assert len(bad) > 0
    warns = " ".join(pairs.attrs["warnings"])
    for row in bad.itertuples():
        assert f"{row.system_a}-{row.system_b}" in warns
    assert isinstance(pairs, pd.DataFrame)
