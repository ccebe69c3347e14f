"""One vocabulary (issue 27): every result names its estimate ``statistic`` and its p-value
``pvalue``; a keyword renamed to ``n_resamples`` keeps its old name for now, with a
DeprecationWarning."""

from __future__ import annotations

import math
from dataclasses import FrozenInstanceError

import krippendorff
import numpy as np
import pandas as pd
import pytest

from nlgeval.human.frames import units_matrix
from nlgeval.human.kappa_alpha import (
    FleissResult,
    KrippendorffResult,
    fleiss_kappa,
    krippendorff_alpha,
)
from nlgeval.results import StatResult


def _ratings(seed: int = 3) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    rows = [{"rater": f"r{r}", "item": str(i), "system": "a", "score": float(rng.integers(1, 6))}
            for i in range(12) for r in range(3)]
    return pd.DataFrame(rows)


def test_fleiss_result_has_statistic_and_keeps_kappa() -> None:
    res = fleiss_kappa(_ratings(), scale=(1, 5))
    assert isinstance(res, StatResult)
    assert res.kappa == res.statistic and math.isfinite(res.statistic)
    stat, p = res
    assert stat == res.statistic and math.isnan(p)
    d = res.to_dict()
    assert d["statistic"] == d["kappa"] == res.statistic
    # the number itself: statsmodels' Fleiss kappa on the counts table (Fleiss 1971)
    from statsmodels.stats.inter_rater import aggregate_raters
    from statsmodels.stats.inter_rater import fleiss_kappa as sm_fleiss

    table, _ = aggregate_raters(units_matrix(_ratings()).to_numpy().T)
    assert res.statistic == pytest.approx(sm_fleiss(table, method="fleiss"), abs=1e-12)


def test_fleiss_result_is_built_with_statistic() -> None:
    res = FleissResult(statistic=0.4, n_units=3, n_units_dropped=0, ratings_per_unit=2)
    assert res.kappa == 0.4
    with pytest.raises(TypeError):
        FleissResult(kappa=0.4, n_units=3, n_units_dropped=0,  # type: ignore[call-arg]
                     ratings_per_unit=2)


@pytest.mark.parametrize("level", ["nominal", "ordinal", "interval", "ratio"])
def test_krippendorff_alpha_returns_a_result_equal_to_the_package(level: str) -> None:
    df = _ratings()
    df.loc[[0, 7, 20], "score"] = np.nan
    df = df.dropna()
    res = krippendorff_alpha(df, level)
    assert isinstance(res, KrippendorffResult) and isinstance(res, StatResult)
    mat = units_matrix(df).to_numpy(dtype=float)
    # nlgeval's domain: the distinct observed scores (no scale given)
    kwargs = {"value_domain": np.unique(df["score"])} if level in ("nominal", "ordinal") else {}
    expected = krippendorff.alpha(reliability_data=mat, level_of_measurement=level, **kwargs)
    assert res.statistic == pytest.approx(expected, abs=1e-12)
    assert float(res) == res.statistic and math.isnan(res.pvalue)
    assert res.level == level and res.n_raters == 3 and res.n_units == 12
    assert res.to_dict()["statistic"] == res.statistic
    with pytest.raises(FrozenInstanceError):
        res.statistic = 0.0  # type: ignore[misc]


def _outcomes() -> pd.DataFrame:
    return pd.DataFrame({"system_a": ["A", "A", "B", "A", "B", "C", "A", "B"],
                         "system_b": ["B", "C", "C", "B", "C", "A", "C", "A"],
                         "outcome": [1, 1, 1, -1, 0, -1, 1, -1]})


def test_bradley_terry_takes_n_resamples_and_the_old_n_boot_with_a_warning() -> None:
    import warnings

    from nlgeval.human.pairwise import bradley_terry

    with warnings.catch_warnings():
        warnings.simplefilter("error")       # the new name gives no warning
        new = bradley_terry(_outcomes(), n_resamples=40, seed=5, prior=0.1)
    with pytest.warns(DeprecationWarning, match="'n_boot' is deprecated; use 'n_resamples'"):
        old = bradley_terry(_outcomes(), n_boot=40, seed=5, prior=0.1)
    assert new.n_boot == old.n_boot == 40
    pd.testing.assert_frame_equal(new.ranking, old.ranking)


def test_compare_systems_takes_n_resamples_and_the_old_n_boot_with_a_warning() -> None:
    from nlgeval.human import compare_systems

    df = pd.DataFrame({"system": list("aabbca"), "system_b": list("bccabc"),
                       "item": list("112233"), "rater": "r",
                       "score": [2.0, 1.0, -1.0, 2.0, 1.0, -2.0]})
    new = compare_systems(df, method="bradley-terry", scale=(-2, 2), n_resamples=30,
                          prior=0.1)
    with pytest.warns(DeprecationWarning, match="compare_systems"):
        old = compare_systems(df, method="bradley-terry", scale=(-2, 2), n_boot=30, prior=0.1)
    assert new.body["n_boot"] == old.body["n_boot"] == 30
    assert new.body["ranking"] == old.body["ranking"]
