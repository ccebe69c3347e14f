"""Dependent-correlation tests against the test suite of R cocor (Diedenhofen & Musch 2015).

Reference: cocor 1.1-4 (CRAN mirror cran/cocor, commit
3688b02c784b3d8f8a5f09b00f787c157204a280), ``tests/testthat/tests.r``. cocor's
``cocor.dep.groups.overlap(r.jk, r.jh, r.kh, n)`` compares r.jk with r.jh (variable j
shared); nlgeval's ``williams_test(r12, r13, r23, n)`` has the shared variable 1, so
``r12 = r.jk``, ``r13 = r.jh``, ``r23 = r.kh``. The values below are copied from cocor's tests,
which take them from depcor (Silver, Hittner & May 2006) and from Steiger (1980, Case A).
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from nlgeval.correlation import williams_test
from nlgeval.meta_analysis import dependent_difference_variance


def test_williams_matches_cocor_and_depcor() -> None:
    # test_that("Test williams1959"): cocor.dep.groups.overlap(.3, .4, .5, 100,
    # test="williams1959") -> t = -1.0767, p = 0.2843 (two-sided, t on n - 3 df)
    res = williams_test(0.3, 0.4, 0.5, 100, "two-sided")
    assert round(res.statistic, 4) == -1.0767
    assert round(res.pvalue, 4) == 0.2843
    assert res.df == 97
    # the one-sided p of the alternative "r12 < r13" is half of it
    assert williams_test(0.3, 0.4, 0.5, 100, "less").pvalue == pytest.approx(res.pvalue / 2)


@pytest.mark.parametrize(("r_jk", "r_jh", "r_kh", "n", "z", "places"), [
    # test_that("Test steiger1980"), Case A of Steiger (1980, p. 249): z = -0.8887185
    (0.4, 0.5, 0.1, 103, -0.8887185, 7),
    # depcor (Silver, Hittner & May 2006): z = -1.0718, p = 0.2838
    (0.3, 0.4, 0.5, 100, -1.0718, 4),
])
def test_steiger_dependent_difference_matches_cocor(r_jk: float, r_jh: float, r_kh: float,
                                                    n: int, z: float, places: int) -> None:
    var = dependent_difference_variance(r_jk, r_jh, r_kh, n)
    got = (np.arctanh(r_jk) - np.arctanh(r_jh)) / np.sqrt(var)
    assert round(float(got), places) == z
    if places == 4:
        assert round(float(2 * stats.norm.sf(abs(got))), 4) == 0.2838
