"""Agreement coefficients and rater effects.

Independent references (with provenance):
* Shrout & Fleiss (1979), Psychological Bulletin 86(2), Table 2 data (6 targets x 4 judges) and
  their published ICCs: ICC(1,1) = .17, ICC(2,1) = .29, ICC(3,1) = .71, ICC(1,4) = .44,
  ICC(2,4) = .62, ICC(3,4) = .91;
* pingouin 0.7.0 ``intraclass_corr`` (ICC, F, df, p, CI rounded to 2 decimals by pingouin);
* Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability", section C: 4 observers x 12
  units with missing values; published alpha: nominal .743, ordinal .815, interval .849;
  plus the nominal alpha from its definition (coincidence matrix) computed here;
* the worked Fleiss' kappa example on Wikipedia ("Fleiss' kappa", 10 subjects, 14 raters,
  5 categories; kappa = 0.210), plus P-bar / P-e computed here from Fleiss (1971) eq. (2)-(9);
* scikit-learn 1.9 ``cohen_kappa_score`` (unweighted / linear / quadratic, same labels);
* ``scipy.stats.zscore(ddof=1)`` per rater for the WMT z-scores;
* statsmodels ``anova_lm`` one-way mean squares for the unbalanced ICC(1).
"""

from __future__ import annotations

from itertools import combinations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from nlgeval.errors import InputError
from nlgeval.human.agreement import (
    agreement_report,
    cohen_kappas,
    fleiss_kappa,
    icc,
    icc_complete,
    icc_oneway,
    krippendorff_alpha,
    pairwise_cohen_kappa,
    rater_summary,
    rater_zscores,
)

SF = np.array([[9, 2, 5, 8], [6, 1, 3, 2], [8, 4, 6, 8], [7, 1, 2, 6], [10, 5, 6, 9],
               [6, 2, 4, 7]], dtype=float)
SF_PUBLISHED = {"ICC(1,1)": 0.17, "ICC(2,1)": 0.29, "ICC(3,1)": 0.71, "ICC(1,k)": 0.44,
                "ICC(2,k)": 0.62, "ICC(3,k)": 0.91}

nan = np.nan
KRIPP = np.array([
    [1, 2, 3, 3, 2, 1, 4, 1, 2, nan, nan, nan],
    [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, nan, 3],
    [nan, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, nan],
    [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, nan],
])


def to_long(matrix: np.ndarray) -> pd.DataFrame:
    """raters x units matrix -> tidy ratings (units are items of one system)."""
    rows = []
    for r in range(matrix.shape[0]):
        for u in range(matrix.shape[1]):
            if not np.isnan(matrix[r, u]):
                rows.append({"rater": f"r{r}", "item": f"u{u:02d}", "system": "s",
                             "score": matrix[r, u]})
    return pd.DataFrame(rows)


def test_icc_shrout_fleiss_table2() -> None:
    res = {r.type: r for r in icc_complete(SF)}
    for k, v in SF_PUBLISHED.items():
        assert round(res[k].icc, 2) == v


def test_icc_vs_pingouin() -> None:
    pg = pytest.importorskip("pingouin")
    long = pd.DataFrame([(f"t{i}", f"j{j}", SF[i, j]) for i in range(6) for j in range(4)],
                        columns=["t", "r", "s"])
    ref = pg.intraclass_corr(long, targets="t", raters="r", ratings="s").set_index("Type")
    names = {"ICC(1,1)": "ICC(1,1)", "ICC(2,1)": "ICC(A,1)", "ICC(3,1)": "ICC(C,1)",
             "ICC(1,k)": "ICC(1,k)", "ICC(2,k)": "ICC(A,k)", "ICC(3,k)": "ICC(C,k)"}
    for r in icc_complete(SF):
        row = ref.loc[names[r.type]]
        assert r.icc == pytest.approx(row["ICC"], rel=1e-9)
        assert r.F == pytest.approx(row["F"], rel=1e-9)
        assert r.pvalue == pytest.approx(row["pval"], rel=1e-6)
        assert r.ci_low == pytest.approx(row["CI95"][0], abs=0.0051)
        assert r.ci_high == pytest.approx(row["CI95"][1], abs=0.0051)


def test_icc_dispatch_complete_vs_oneway() -> None:
    # complete: the S&F data as tidy ratings (targets = items, judges = raters)
    forms, design = icc(to_long(SF.T))
    assert design == "complete" and len(forms) == 6
    assert forms[2].icc == pytest.approx(icc_complete(SF)[2].icc)
    # balanced one-way equals S&F ICC(1,1) / ICC(1,k)
    one = icc_oneway([row for row in SF])
    assert one[0].icc == pytest.approx(icc_complete(SF)[0].icc)
    assert one[1].icc == pytest.approx(icc_complete(SF)[3].icc)


def test_icc_oneway_unbalanced_vs_statsmodels_anova() -> None:
    import statsmodels.formula.api as smf
    from statsmodels.stats.anova import anova_lm

    rng = np.random.default_rng(5)
    groups = [rng.normal(m, 1.0, size=k) for m, k in
              zip(rng.normal(0, 1, 12), [1, 2, 3, 2, 3, 3, 2, 1, 3, 2, 2, 3], strict=True)]
    df = pd.DataFrame([(f"g{i}", x) for i, g in enumerate(groups) for x in g],
                      columns=["g", "y"])
    a = anova_lm(smf.ols("y ~ C(g)", df).fit())
    msb, msw = a["mean_sq"].iloc[0], a["mean_sq"].iloc[1]
    sizes = np.array([len(g) for g in groups], float)
    big_n = sizes.sum()
    k0 = (big_n - (sizes ** 2).sum() / big_n) / (len(groups) - 1)
    res = icc_oneway(groups)
    assert res[0].icc == pytest.approx((msb - msw) / (msb + (k0 - 1) * msw))
    assert res[0].F == pytest.approx(a["F"].iloc[0])
    assert res[0].pvalue == pytest.approx(a["PR(>F)"].iloc[0])


def test_krippendorff_canonical_example() -> None:
    long = to_long(KRIPP)
    assert round(krippendorff_alpha(long, "nominal").statistic, 3) == 0.743
    assert round(krippendorff_alpha(long, "ordinal").statistic, 3) == 0.815
    assert round(krippendorff_alpha(long, "interval").statistic, 3) == 0.849


def nominal_alpha_by_definition(matrix: np.ndarray) -> float:
    """Krippendorff's alpha (nominal) from the coincidence matrix, written out directly."""
    values = np.unique(matrix[~np.isnan(matrix)])
    o = np.zeros((len(values), len(values)))
    for u in range(matrix.shape[1]):
        col = matrix[:, u][~np.isnan(matrix[:, u])]
        m = len(col)
        if m < 2:
            continue
        for i, j in combinations(range(m), 2):
            a, b = np.searchsorted(values, col[i]), np.searchsorted(values, col[j])
            o[a, b] += 1 / (m - 1)
            o[b, a] += 1 / (m - 1)
    n_c = o.sum(axis=1)
    n = n_c.sum()
    d_o = o.sum() - np.trace(o)
    d_e = (n * n - (n_c ** 2).sum()) / (n - 1)
    return 1 - d_o / d_e


def test_krippendorff_nominal_from_definition() -> None:
    rng = np.random.default_rng(2)
    m = rng.integers(1, 5, size=(5, 20)).astype(float)
    m[rng.random(m.shape) < 0.2] = np.nan
    assert krippendorff_alpha(to_long(m), "nominal").statistic == pytest.approx(
        nominal_alpha_by_definition(m), abs=1e-12)


WIKI_FLEISS = np.array([
    [0, 0, 0, 0, 14], [0, 2, 6, 4, 2], [0, 0, 3, 5, 6], [0, 3, 9, 2, 0], [2, 2, 8, 1, 1],
    [7, 7, 0, 0, 0], [3, 2, 6, 3, 0], [2, 5, 3, 2, 2], [6, 5, 2, 1, 0], [0, 2, 2, 3, 7],
])


def test_fleiss_worked_example() -> None:
    # expand the count table into tidy ratings: 14 raters per subject, categories 1..5
    rows = []
    for s, counts in enumerate(WIKI_FLEISS):
        vals = np.repeat(np.arange(1, 6), counts)
        for r, v in enumerate(vals):
            rows.append({"rater": f"r{r}", "item": f"s{s}", "system": "x", "score": v})
    res = fleiss_kappa(pd.DataFrame(rows), scale=(1, 5))
    assert round(res.kappa, 3) == 0.210
    n, k = 14, WIKI_FLEISS.sum()
    p_j = WIKI_FLEISS.sum(axis=0) / k
    p_i = ((WIKI_FLEISS ** 2).sum(axis=1) - n) / (n * (n - 1))
    p_bar, p_e = p_i.mean(), (p_j ** 2).sum()
    assert res.kappa == pytest.approx((p_bar - p_e) / (1 - p_e), abs=1e-12)
    assert res.n_units == 10 and res.ratings_per_unit == 14


def test_fleiss_drops_units_with_other_counts() -> None:
    m = KRIPP.copy()
    res = fleiss_kappa(to_long(m))
    # units with 4 ratings: columns 1..8 (0-based) -> 8 units... count directly
    counts = (~np.isnan(m)).sum(axis=0)
    counts = counts[counts >= 2]
    modal = np.bincount(counts).argmax()
    assert res.ratings_per_unit == modal
    assert res.n_units == int((counts == modal).sum())
    assert res.n_units_dropped == int(((~np.isnan(KRIPP)).sum(axis=0) != modal).sum())


def test_cohen_kappa_vs_sklearn() -> None:
    sk = pytest.importorskip("sklearn.metrics")
    rng = np.random.default_rng(8)
    a = rng.integers(1, 8, size=60).astype(float)
    b = np.clip(a + rng.integers(-2, 3, size=60), 1, 7).astype(float)
    cats = np.arange(1.0, 8.0)
    ours = cohen_kappas(a, b, cats)
    for name, w in (("unweighted", None), ("linear", "linear"), ("quadratic", "quadratic")):
        ref = sk.cohen_kappa_score(a, b, weights=w, labels=cats)
        assert ours[name] == pytest.approx(ref, abs=1e-12)


def test_cohen_kappa_unused_category_uses_declared_scale() -> None:
    sk = pytest.importorskip("sklearn.metrics")
    # nobody used 3 on a 1-5 scale: linear weights must be by value, i.e. labels 1..5
    a = np.array([1, 2, 4, 5, 5, 2, 1, 4], float)
    b = np.array([2, 2, 4, 4, 5, 1, 1, 5], float)
    long = pd.DataFrame({"rater": ["A"] * 8 + ["B"] * 8, "item": [str(i) for i in range(8)] * 2,
                         "system": "s", "score": np.r_[a, b]})
    res = pairwise_cohen_kappa(long, scale=(1, 5))
    ref = sk.cohen_kappa_score(a, b, weights="linear", labels=[1, 2, 3, 4, 5])
    assert res["linear"].iloc[0] == pytest.approx(ref)
    assert res["n"].iloc[0] == 8
    # without the declared scale, categories are the observed values {1,2,4,5}, weighted by
    # value (distance 2 between 2 and 4), which equals sklearn on the full 1..5 labels too
    res2 = pairwise_cohen_kappa(long)
    assert res2["linear"].iloc[0] == pytest.approx(ref)


def test_pairwise_cohen_pairs_and_min_common() -> None:
    long = to_long(KRIPP)
    res = pairwise_cohen_kappa(long, min_common=2)
    assert len(res) == 6
    present = ~np.isnan(KRIPP)
    assert res["n"].iloc[0] == int((present[0] & present[1]).sum())
    assert pairwise_cohen_kappa(long, min_common=100).empty


def test_zscores_vs_scipy() -> None:
    long = to_long(KRIPP)
    z = rater_zscores(long)
    for r, g in long.groupby("rater"):
        ref = stats.zscore(g["score"].to_numpy(), ddof=1)
        np.testing.assert_allclose(z.loc[z["rater"] == r, "z"].to_numpy(), ref)
    const = pd.DataFrame({"rater": ["a", "a", "b", "b", "c"], "item": list("12345"),
                          "system": "s", "score": [1, 1, 2, 3, 4]})
    z = rater_zscores(const)
    assert z.attrs["dropped_raters"] == ["a", "c"]
    assert set(z["rater"]) == {"b"}


def test_rater_summary() -> None:
    long = to_long(KRIPP)
    s = rater_summary(long, scale=(1, 5)).set_index("rater")
    g = long.groupby("rater")["score"]
    np.testing.assert_allclose(s["mean"], g.mean())
    np.testing.assert_allclose(s["sd"], g.std(ddof=1))
    assert s.loc["r0", "scale_used"] == pytest.approx(4 / 5)  # r0 used 1,2,3,4
    # bias of r0 on unit 0: 1 - mean(1, 1) = 0; by hand over all shared units
    m = KRIPP
    devs = []
    for u in range(m.shape[1]):
        if np.isnan(m[0, u]):
            continue
        others = m[1:, u][~np.isnan(m[1:, u])]
        if len(others):
            devs.append(m[0, u] - others.mean())
    assert s.loc["r0", "bias"] == pytest.approx(np.mean(devs))


def test_agreement_report_and_errors() -> None:
    rep = agreement_report(to_long(KRIPP), scale=(1, 5), criterion="q")
    d = rep.to_dict()
    assert set(d["krippendorff_alpha"]) == {"nominal", "ordinal", "interval"}
    assert round(d["krippendorff_alpha"]["interval"], 3) == 0.849
    assert isinstance(d["fleiss_kappa"], float)
    assert d["icc_design"] == "one-way"
    one = to_long(KRIPP[:1])
    with pytest.raises(InputError, match="at least 2 raters"):
        agreement_report(one)


def test_scale_violation_in_library_call() -> None:
    long = to_long(KRIPP)
    with pytest.raises(InputError, match="outside the declared scale"):
        pairwise_cohen_kappa(long, scale=(1, 4))


def test_old_import_paths_name_the_split_kernels() -> None:
    """The kernels moved to ``kappa_alpha`` / ``intraclass``; ``nlgeval.human.agreement`` still
    exports the very same objects (a pure refactor: old imports keep working)."""
    from nlgeval.human import agreement, intraclass, kappa_alpha

    for name in ("FleissResult", "categories_for", "cohen_kappa_table", "cohen_kappas",
                 "fleiss_kappa", "krippendorff_alpha", "pairwise_cohen_kappa"):
        assert getattr(agreement, name) is getattr(kappa_alpha, name), name
    for name in ("ICCResult", "icc", "icc_complete", "icc_oneway"):
        assert getattr(agreement, name) is getattr(intraclass, name), name
