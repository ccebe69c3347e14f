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
