"""One vocabulary (issue 27): every result names its estimate ``statistic`` and its p-value
``pvalue``; a keyword renamed to ``n_resamples`` keeps its old name for now, with a
DeprecationWarning."""

from __future__ import annotations

import math
import warnings
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


def test_disc_anova_and_its_counts_form_take_n_resamples_and_the_old_nboot() -> None:
    from nlgeval.items import disc_anova, disc_anova_counts

    groups = {"A": [1, 2, 2, 3, 3, 3], "B": [3, 4, 4, 5, 5, 5]}
    new = disc_anova(groups, n_resamples=300, seed=4)
    with pytest.warns(DeprecationWarning, match="disc_anova\\(\\): the keyword 'nboot'"):
        old = disc_anova(groups, nboot=300, seed=4)
    assert (new.statistic, new.pvalue, new.nboot) == (old.statistic, old.pvalue, 300)
    table = np.array([[1, 0], [2, 0], [3, 1], [0, 2], [0, 3]])
    with pytest.warns(DeprecationWarning, match="disc_anova_counts"):
        counted = disc_anova_counts(table, nboot=300, seed=4)
    assert counted.pvalue == disc_anova_counts(table, n_resamples=300, seed=4).pvalue


def test_run_study_and_plan_items_take_n_resamples_and_the_old_nboot() -> None:
    from nlgeval.items import run_study
    from nlgeval.items.plan import plan_items
    from nlgeval.items.profiles import distribution_from_counts

    kw = dict(sizes=[2, 5], replications=20, seed=2, backend="serial")
    d = [distribution_from_counts("d", [3, 5, 4, 8])]
    new = run_study(d, n_resamples=30, **kw)
    with pytest.warns(DeprecationWarning, match="run_study"):
        old = run_study(d, nboot=30, **kw)
    assert new.curves.equals(old.curves)
    pilot = pd.DataFrame({"rater": ["a"] * 12, "score": [1, 2, 2, 3, 3, 3, 4, 4, 4, 4, 5, 5]})
    with pytest.warns(DeprecationWarning, match="plan_items"):
        p_old = plan_items(pilot, replications=20, nboot=30, seed=1, workers=1)
    p_new = plan_items(pilot, replications=20, n_resamples=30, seed=1, workers=1)
    assert p_old.per_evaluator.equals(p_new.per_evaluator)


def test_bootstrap_correlation_takes_n_resamples_and_the_old_resamples() -> None:
    from nlgeval.correlation import bootstrap_correlation

    rng = np.random.default_rng(0)
    H = rng.normal(size=(6, 20))
    M = H + rng.normal(size=(6, 20))
    new = bootstrap_correlation(M, H, "segment", "pearson", n_resamples=100, seed=1)
    with pytest.warns(DeprecationWarning, match="'resamples' is deprecated; use 'n_resamples'"):
        old = bootstrap_correlation(M, H, "segment", "pearson", resamples=100, seed=1)
    assert new.resamples == old.resamples == 100
    np.testing.assert_array_equal(new.distribution, old.distribution)


def test_validation_settings_take_n_resamples_and_the_old_resamples() -> None:
    from nlgeval.correlation.statistics import StatisticOptions
    from nlgeval.report import ValidationSettings

    new = ValidationSettings(n_resamples=50, levels=["system"])
    with pytest.warns(DeprecationWarning, match="'resamples' is deprecated; use 'n_resamples'"):
        old = ValidationSettings(resamples=50, levels=["system"])
    assert old == new and old.n_resamples == 50
    assert "resamples" not in new.to_dict() and new.to_dict()["n_resamples"] == 50
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the round trip and replace() do not warn
        assert ValidationSettings(**new.to_dict()) == new
        assert new.replace(seed=3).n_resamples == 50
        assert new.meta_settings().n_resamples == 50
    with pytest.warns(DeprecationWarning, match="StatisticOptions"):
        assert StatisticOptions(resamples=7) == StatisticOptions(n_resamples=7)


def test_run_corpus_study_and_meta_analysis_take_n_resamples() -> None:
    from nlgeval.meta_analysis import run_corpus_study, run_meta_analysis

    new = run_corpus_study("e2e", ["bleu"], ["system"], n_resamples=20)
    with pytest.warns(DeprecationWarning, match="run_corpus_study"):
        old = run_corpus_study("e2e", ["bleu"], ["system"], resamples=20)
    pd.testing.assert_frame_equal(new.correlations, old.correlations)
    assert new.correlations["ci_low"].notna().all()
    res_new, rec_new = run_meta_analysis(corpora=["e2e"], metrics=["bleu"], level="system",
                                         n_resamples=20)
    with pytest.warns(DeprecationWarning, match="run_meta_analysis"):
        res_old, rec_old = run_meta_analysis(corpora=["e2e"], metrics=["bleu"],
                                             level="system", resamples=20)
    assert rec_new == rec_old and rec_new["resamples"] == 20  # the record's key is unchanged
    pd.testing.assert_frame_equal(res_new.pooled, res_old.pooled)


def test_run_validation_still_takes_the_old_resamples_keyword() -> None:
    from nlgeval.corpora import load_corpus
    from nlgeval.report import run_validation

    c = load_corpus("e2e")
    c = c.subset(items=c.items[:40])
    kw = dict(levels=["system"], coefficients=["pearson"], permutations=0, table9=False)
    new = run_validation(c, ["bleu"], n_resamples=20, **kw)
    with pytest.warns(DeprecationWarning, match="'resamples' is deprecated"):
        old = run_validation(c, ["bleu"], resamples=20, **kw)
    assert old.config == new.config and old.settings()["resamples"] == 20
    pd.testing.assert_frame_equal(old.correlations, new.correlations)


def _same(a: object, b: object) -> None:
    """``a`` and ``b`` equal field by field (arrays and frames exactly, NaN equal to NaN)."""
    if isinstance(a, pd.DataFrame):
        pd.testing.assert_frame_equal(a, b)
    elif isinstance(a, np.ndarray):
        np.testing.assert_array_equal(a, b)
    elif hasattr(a, "__dataclass_fields__"):
        for name in a.__dataclass_fields__:
            _same(getattr(a, name), getattr(b, name))
    elif isinstance(a, tuple):
        assert isinstance(b, tuple) and len(a) == len(b)
        for x, y in zip(a, b, strict=True):
            _same(x, y)
    elif isinstance(a, float) and math.isnan(a):
        assert isinstance(b, float) and math.isnan(b)
    else:
        assert a == b


def _draw_tests() -> dict[str, tuple]:
    """Each random-draw test whose ``permutations`` keyword became ``n_resamples``: the call
    (taking the count by keyword) and how many draws its result says it made."""
    import nlgeval.correlation as c

    rng = np.random.default_rng(11)
    H = rng.normal(size=(5, 8))
    A = H + 0.5 * rng.normal(size=(5, 8))
    B = rng.normal(size=(5, 8))
    def draws(r: object) -> int:
        return int(r.permutations)  # type: ignore[attr-defined]
    return {
        "permutation_test": (lambda **k: c.permutation_test(A, B, H, "segment", seed=1, **k),
                             draws),
        "comparison_matrix": (lambda **k: c.comparison_matrix(
            {"a": A, "b": B}, H, "segment", method="permutation", seed=1, **k), None),
        "kendall_permutation_test": (lambda **k: c.kendall_permutation_test(
            A, B, H, "tau_b", "item", seed=1, **k), draws),
        "acc_eq_permutation_test": (lambda **k: c.acc_eq_permutation_test(
            A, B, H, "item", seed=1, **k), draws),
        "pairwise_accuracy_test": (lambda **k: c.pairwise_accuracy_test(A, B, H, seed=1, **k),
                                   draws),
        "soft_pairwise_accuracy": (lambda **k: c.soft_pairwise_accuracy(A, H, seed=1, **k),
                                   draws),
        "soft_pairwise_accuracy_test": (lambda **k: c.soft_pairwise_accuracy_test(
            A, B, H, seed=1, spa_permutations=50, **k), draws),
        "sign_flip_masks": (lambda **k: c.sign_flip_masks(8, seed=1, **k), len),
        "item_permutation_pvalue": (lambda **k: c.item_permutation_pvalue(A, H, seed=1, **k),
                                    lambda r: r[1]),
        "level_correlation": (lambda **k: c.level_correlation(A, H, "item", seed=1, **k),
                              lambda r: int(r.note.split("p: ")[1].split()[0])),
    }


@pytest.mark.parametrize("name", sorted(_draw_tests()))
def test_random_draw_tests_take_n_resamples_and_still_take_permutations(name: str) -> None:
    call, count = _draw_tests()[name]
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        new = call(n_resamples=30)
    with pytest.warns(DeprecationWarning,
                      match=rf"{name}\(\): the keyword 'permutations' is deprecated; "
                            r"use 'n_resamples'"):
        old = call(permutations=30)
    _same(new, old)
    if count is not None:                           # the count reached the draws
        assert count(new) == 30
    else:                                           # comparison_matrix: p on a 1/(1 + 30) grid
        assert np.allclose(new["pvalue"] * 31, np.round(new["pvalue"] * 31))
