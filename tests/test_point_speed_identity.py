"""The point statistics' fast paths give the numbers of the code they replace, bit for bit.

Each fast path (string codes computed once in :func:`~nlgeval.correlation.levels.score_matrices`,
the p-values of :func:`~nlgeval.correlation.coefficients.correlation` from scipy's formulas
without its wrappers, the per-rater coefficients of the leave-one-rater-out bound) is compared
with the code it replaced, kept here as the reference, or with scipy itself, with ``==`` (NaN in
the same places) on randomized inputs: ties, missing cells, constant and near-constant
vectors, n = 3, |r| = 1, values near 1e200 and 1e-200.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

from nlgeval.correlation.levels import ScoreMatrices, score_matrices
from nlgeval.errors import InputError


# ------------------------------------------------------------------ score_matrices (reference)
def _old_score_matrices(metric, human, *, systems=None, items=None):
    """score_matrices as it was before the string codes were computed once (commit 990d44c)."""
    codes = {}
    for name, df in (("metric", metric), ("human", human)):
        miss = [c for c in ("system", "item", "score") if c not in df.columns]
        if miss:
            raise InputError(f"{name} scores need columns system, item, score; missing {miss}")
        sys_s, item_s = df["system"].astype(str), df["item"].astype(str)
        sc, sys_u = pd.factorize(sys_s)
        ic, item_u = pd.factorize(item_s)
        key = sc.astype(np.int64) * max(1, len(item_u)) + ic
        uniq, first, counts = np.unique(key, return_index=True, return_counts=True)
        if (counts > 1).any():
            pos = np.flatnonzero(key == uniq[counts > 1][0])[1]
            raise InputError(
                f"{name} scores have more than one row for system '{sys_s.iloc[pos]}', item "
                f"'{item_s.iloc[pos]}' (aggregate per output first)"
            )
        codes[name] = (sys_s, item_s)
    if systems is None:
        systems = pd.unique(pd.concat([codes["metric"][0], codes["human"][0]])).tolist()
    if items is None:
        items = pd.unique(pd.concat([codes["metric"][1], codes["human"][1]])).tolist()
    systems = [str(s) for s in systems]
    items = [str(i) for i in items]
    sys_index, item_index = pd.Index(systems), pd.Index(items)

    def pivot(df, name):
        si = sys_index.get_indexer(codes[name][0])
        ii = item_index.get_indexer(codes[name][1])
        keep = (si >= 0) & (ii >= 0)
        out = np.full((len(systems), len(items)), np.nan)
        out[si[keep], ii[keep]] = pd.to_numeric(df["score"]).to_numpy(dtype=float)[keep]
        return out

    X, Y = pivot(metric, "metric"), pivot(human, "human")
    xm, ym = np.isfinite(X), np.isfinite(Y)
    missing = {"complete": int((xm & ym).sum()), "unrated": int((xm & ~ym).sum()),
               "unscored": int((~xm & ym).sum()),
               "nan_metric": int(metric["score"].isna().sum()),
               "nan_human": int(human["score"].isna().sum())}
    return ScoreMatrices(X, Y, tuple(systems), tuple(items), missing)


def _same_matrices(a: ScoreMatrices, b: ScoreMatrices) -> None:
    np.testing.assert_array_equal(a.metric, b.metric)  # NaN in the same places, values ==
    np.testing.assert_array_equal(a.human, b.human)
    assert a.systems == b.systems and a.items == b.items and a.missing == b.missing


def _random_frame(rng, n_sys, n_items, kind):
    cells = [(s, i) for s in range(n_sys) for i in range(n_items) if rng.random() < 0.8]
    rng.shuffle(cells)
    sys_names = [f"s{s}" for s, _ in cells]
    if kind == "int_items":
        items = [i for _, i in cells]
    elif kind == "mixed":  # ints and strings: 1 and "1" are the same output once as strings
        items = [i if rng.random() < 0.5 else str(i) for _, i in cells]
    elif kind == "category":
        items = pd.Categorical([f"i{i}" for _, i in cells])
    else:
        items = [f"i{i}" for _, i in cells]
    score = rng.normal(size=len(cells))
    score[rng.random(len(cells)) < 0.1] = np.nan
    df = pd.DataFrame({"system": sys_names, "item": items, "score": score})
    if kind == "object":
        df = df.astype({"system": object, "item": object})
    return df


@pytest.mark.parametrize("kind", ["str", "object", "int_items", "mixed", "category"])
def test_score_matrices_equals_the_old_code(kind):
    rng = np.random.default_rng(hash(kind) % 2**32)
    for _ in range(30):
        m = _random_frame(rng, int(rng.integers(1, 6)), int(rng.integers(1, 9)), kind)
        h = _random_frame(rng, int(rng.integers(1, 6)), int(rng.integers(1, 9)), kind)
        try:
            old = _old_score_matrices(m, h)
        except InputError as exc:  # 1 and "1": a duplicate once written as strings
            with pytest.raises(InputError) as new:
                score_matrices(m, h)
            assert str(new.value) == str(exc)
            continue
        _same_matrices(score_matrices(m, h), old)
        systems = ["s0", "s2", "s9"]
        items = ["i1", "0", "3", "i0", "2"]
        _same_matrices(score_matrices(m, h, systems=systems, items=items),
                       _old_score_matrices(m, h, systems=systems, items=items))


def test_score_matrices_duplicates_and_missing_names_as_the_old_code():
    m = pd.DataFrame({"system": ["a", "b", "a", None], "item": ["1", "1", "1", "2"],
                      "score": [1.0, 2.0, 3.0, 4.0]})
    with pytest.raises(InputError) as old:
        _old_score_matrices(m, m)
    with pytest.raises(InputError) as new:
        score_matrices(m, m)
    assert str(new.value) == str(old.value)
    ok = m.iloc[[0, 1, 3]]
    _same_matrices(score_matrices(ok, ok), _old_score_matrices(ok, ok))
    empty = ok.iloc[:0]
    _same_matrices(score_matrices(empty, ok), _old_score_matrices(empty, ok))
    with pytest.raises(InputError, match="missing"):
        score_matrices(ok.drop(columns="item"), ok)


def test_score_matrices_string_duplicates_as_the_old_code():
    rng = np.random.default_rng(5)
    for _ in range(20):
        m = _random_frame(rng, 3, 5, "mixed")
        h = _random_frame(rng, 3, 5, "str")
        row = m.iloc[[int(rng.integers(len(m)))]].copy()
        item = row["item"].iloc[0]
        row["item"] = str(item) if not isinstance(item, str) else int(item)  # 1 vs "1"
        both = pd.concat([m, row], ignore_index=True)
        for a, b in ((both, h), (h, both)):
            with pytest.raises(InputError) as old:
                _old_score_matrices(a, b)
            with pytest.raises(InputError) as new:
                score_matrices(a, b)
            assert str(new.value) == str(old.value)


def test_frame_codes_by_gives_each_groups_matrices():
    from nlgeval.correlation.levels import frame_codes, frame_codes_by

    rng = np.random.default_rng(7)
    frames = [_random_frame(rng, 4, 6, "str").assign(metric=m) for m in ("a", "b", "c")]
    long = pd.concat(frames, ignore_index=True).sample(frac=1.0, random_state=1)
    dup = pd.concat([long, long[long["metric"] == "c"].iloc[:1]], ignore_index=True)
    human = frame_codes(_random_frame(rng, 4, 6, "str"), "human")
    by = frame_codes_by(dup, "metric", ["b", "a", "c", "zz"])
    assert by["c"] is None  # a duplicated output: frame_codes of the group raises
    for m in ("a", "b", "zz"):
        sub = dup.loc[dup["metric"] == m, ["system", "item", "score"]]
        for systems, items in ((["s0", "s1", "s3"], ["i0", "i5", "i2"]), (["s2"], ["i1"])):
            _same_matrices(by[m].matrices(human, systems, items),
                           frame_codes(sub).matrices(human, systems, items))
    # the default rows and columns of a group: its own names in order of first appearance
    from nlgeval.correlation.levels import default_names

    hframe = _random_frame(rng, 5, 7, "object")
    hby = frame_codes_by(hframe.assign(criterion="q"), "criterion", ["q"], "human")
    for m in ("a", "b"):
        sub = dup.loc[dup["metric"] == m, ["system", "item", "score"]]
        for systems in (None, ["s1", "s0"]):
            got = by[m].matrices(hby["q"], *default_names(by[m], hby["q"], systems=systems))
            _same_matrices(got, _old_score_matrices(sub, hframe, systems=systems))


# ------------------------------------------------------------ correlation(): scipy's p-values
def _vectors(rng, k):
    """Hundreds of paired vectors: ties, n = 3, |r| = 1, large n, magnitudes 1e200 / 1e-200."""
    n = int(rng.choice([3, 3, 4, 5, 8, 16, 33, 34, 100, 2847, 25_000]))
    x = rng.normal(size=n)
    kind = k % 8
    if kind == 0:
        y = x + rng.normal(size=n) * rng.choice([0.01, 1.0, 10.0])
    elif kind == 1:  # heavy ties
        x, y = np.round(x * 2), np.round((x + rng.normal(size=n)) * 2)
    elif kind == 2:  # |r| = 1
        y = 3.0 * x + 1.0 if rng.random() < 0.5 else -2.0 * x
    elif kind == 3:
        x, y = x * 1e200, (x + rng.normal(size=n)) * 1e-200
    elif kind == 4:
        x, y = x * 1e-200, (x + rng.normal(size=n)) * 1e200
    elif kind == 5:  # near constant in scipy's sense, not in nlgeval's
        y = 1.0 + 1e-9 * rng.normal(size=n)
    elif kind == 6:  # integer ratings
        x, y = rng.integers(1, 6, n).astype(float), rng.integers(1, 6, n).astype(float)
    else:
        y = rng.permutation(x)
    return x, y


def _same(a: float, b: float) -> bool:
    return (np.isnan(a) and np.isnan(b)) or a == b


@pytest.mark.parametrize("alternative", ["two-sided", "less", "greater"])
def test_pearson_and_spearman_pvalues_equal_scipy(alternative):
    from scipy import stats

    from nlgeval.correlation.coefficients import near_constant, pearson_pvalue, spearman_pvalue

    rng = np.random.default_rng(["two-sided", "less", "greater"].index(alternative))
    checked = 0
    for k in range(400):
        x, y = _vectors(rng, k)
        if near_constant(x) or near_constant(y):
            continue
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            p_ref = stats.pearsonr(x, y, alternative=alternative).pvalue
            s_ref = stats.spearmanr(x, y, alternative=alternative).pvalue
        assert _same(pearson_pvalue(x, y, alternative), float(p_ref)), (k, x.size)
        assert _same(spearman_pvalue(stats.rankdata(x), stats.rankdata(y), alternative),
                     float(s_ref)), (k, x.size)
        checked += 1
    assert checked > 300


def test_correlation_equals_the_scipy_path():
    """correlation() now takes Pearson's and Spearman's p-values from the formulas above and
    Spearman's statistic from ranks computed once: the old path (batch_correlation for the
    statistic, scipy for the p-value) is the reference, with ==, NaN in the same places."""
    from scipy import stats

    from nlgeval.correlation.coefficients import batch_correlation, correlation

    rng = np.random.default_rng(11)
    for k in range(240):
        x, y = _vectors(rng, k)
        x = x.copy()
        if k % 5 == 0:
            x[rng.random(x.size) < 0.2] = np.nan  # missing cells are dropped first
        for coef in ("pearson", "spearman"):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                res = correlation(x, y, coef)
                ok = np.isfinite(x) & np.isfinite(y)
                xs, ys = x[ok], y[ok]
                if np.isnan(res.statistic):
                    continue
                r_ref = float(batch_correlation(xs, ys, coef))
                f = stats.pearsonr if coef == "pearson" else stats.spearmanr
                p_ref = float(f(xs, ys).pvalue)
            assert res.statistic == r_ref and _same(res.pvalue, p_ref), (k, coef, x.size)


def _old_batch_pearson(x, y):
    """batch_correlation(x, y, "pearson") as it was before the complete-vector path (990d44c)."""
    from nlgeval.correlation._constant import constant_from_extremes, extremes, overflow_safe
    from nlgeval.correlation.coefficients import _masked_pearson

    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    valid = np.isfinite(x) & np.isfinite(y)
    (hx, lx), (hy, ly) = extremes(x, valid), extremes(y, valid)
    const = constant_from_extremes(hx, lx) | constant_from_extremes(hy, ly)
    r = _masked_pearson(overflow_safe(x, hx, lx), overflow_safe(y, hy, ly), valid)
    return np.where(const, np.nan, r)


def test_complete_vector_pearson_equals_the_masked_path():
    from nlgeval.correlation.coefficients import batch_correlation

    rng = np.random.default_rng(3)
    for k in range(600):
        x, y = _vectors(rng, k)
        if k % 7 == 0:
            y = np.full_like(x, 0.1 + 0.2) + (rng.random(x.size) < 0.5) * 5.6e-17  # near const
        if k % 11 == 0:
            x, y = x[::2], y[::2]  # strided views
        if k % 13 == 0:
            x, y = x[:2], y[:2]  # too short
        new, old = batch_correlation(x, y, "pearson"), _old_batch_pearson(x, y)
        assert new.shape == old.shape == ()
        assert _same(float(new), float(old)), (k, x.size)
    assert np.isnan(batch_correlation(np.array([]), np.array([]), "pearson"))


# ------------------------------------------------------- human references (the old code kept)
def _old_rater_agreement(ratings, criterion):
    """rater_agreement_bound's per-rater coefficients as before (990d44c): a mask per rater."""
    from nlgeval.correlation.coefficients import near_constant

    r = ratings.loc[ratings["criterion"] == criterion, ["rater", "item", "system", "score"]]
    r = r[np.isfinite(r["score"].astype(float))]
    g = r.groupby(["system", "item"])["score"]
    total, count = g.transform("sum"), g.transform("count")
    keep = count >= 2
    one = r.loc[keep, "score"].to_numpy(float)
    rest = ((total - r["score"]) / (count - 1))[keep].to_numpy(float)
    per = []
    raters = r.loc[keep, "rater"].to_numpy()
    for rater in pd.unique(raters):
        sel = raters == rater
        if sel.sum() >= 3:
            x, y = one[sel], rest[sel]
            if near_constant(x) or near_constant(y):
                continue
            v = float(_old_batch_pearson(x, y))
            if np.isfinite(v):
                per.append(v)
    return float(np.mean(per)) if per else float("nan"), len(per)


def _old_rater_icc(ratings, criterion, alpha=0.05):
    """rater_icc as before (990d44c): the ratings split into one array per output."""
    from nlgeval.human.intraclass import icc_oneway

    sub = ratings[ratings["criterion"] == criterion]
    score = sub["score"].to_numpy(float)
    ok = np.isfinite(score)
    codes = pd.MultiIndex.from_arrays([sub["system"].astype(str)[ok],
                                       sub["item"].astype(str)[ok]]).factorize()[0]
    order = np.argsort(codes, kind="stable")
    cuts = np.flatnonzero(np.diff(codes[order])) + 1
    try:
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            forms = icc_oneway(np.split(score[ok][order], cuts), alpha)
    except (InputError, ValueError, ZeroDivisionError):
        return float("nan"), float("nan")
    one = next(f for f in forms if f.type == "ICC(1,1)")
    return float(one.icc), float(one.pvalue)


def _ratings(rng, n_raters, n_items, kind):
    rows = []
    for i in range(n_items):
        for s in range(3):
            for k in rng.choice(n_raters, size=min(n_raters, int(rng.integers(1, 4))),
                                replace=False):
                score = float(rng.integers(1, 6)) if kind == "ties" else float(rng.normal())
                if kind == "constant":
                    score = 3.0
                rows.append({"rater": f"r{k}" if rng.random() > 0.02 else None, "system": f"s{s}",
                             "item": f"i{i}", "criterion": "q", "score": score})
    df = pd.DataFrame(rows)
    df.loc[rng.random(len(df)) < 0.05, "score"] = np.nan
    return df


@pytest.mark.parametrize("kind", ["normal", "ties", "constant"])
def test_rater_agreement_and_icc_equal_the_old_code(kind):
    from nlgeval.correlation.human import rater_agreement_bound
    from nlgeval.report.verdict import rater_icc

    rng = np.random.default_rng(len(kind))
    for _ in range(12):
        df = _ratings(rng, int(rng.integers(2, 12)), int(rng.integers(2, 40)), kind)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            res = rater_agreement_bound(df, "q")
            mean_r, n_r = _old_rater_agreement(df, "q")
        assert _same(res.mean_rater_r, mean_r) and res.n_raters == n_r
        new_icc, old_icc = rater_icc(df, "q"), _old_rater_icc(df, "q")
        assert all(_same(a, b) for a, b in zip(new_icc, old_icc, strict=True))


def test_criterion_correlations_equal_the_old_pairing():
    """criterion_correlations codes each criterion once: the same table as correlating the
    old score_matrices of every pair (the reference)."""
    from nlgeval.correlation.human import criterion_correlations
    from nlgeval.correlation.levels import level_correlation

    rng = np.random.default_rng(2)
    frames = []
    for c in ("fluency", "adequacy", "coherence"):
        f = _random_frame(rng, 6, 12, "str").assign(criterion=c)
        frames.append(f.sample(frac=1.0, random_state=int(rng.integers(100))))
    human = pd.concat(frames, ignore_index=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = criterion_correlations(human, coefficients=["pearson", "kendall"])
        ref = []
        crits = ["fluency", "adequacy", "coherence"]
        cols = ["system", "item", "score"]
        for i, a in enumerate(crits):
            for b in crits[i + 1:]:
                m = _old_score_matrices(human.loc[human["criterion"] == a, cols],
                                        human.loc[human["criterion"] == b, cols])
                for level in ("segment", "system"):
                    for coef in ("pearson", "kendall"):
                        res = level_correlation(m.metric, m.human, level, coef)
                        ref.append((res.statistic, res.pvalue, res.n))
    assert len(got) == len(ref)
    for (r, p, n), row in zip(ref, got.itertuples(), strict=True):
        assert _same(row.r, r) and _same(row.p, p) and row.n == n


def _old_rater_ceiling(ratings, criterion, systems, levels, coefficient="pearson", seed=0):
    """rater_ceiling as before (990d44c): string keys and pandas group transforms."""
    from nlgeval.correlation.levels import level_correlation

    r = ratings[(ratings["criterion"] == criterion)
                & ratings["system"].astype(str).isin(list(systems))]
    r = r[np.isfinite(r["score"].astype(float))].sort_values(["system", "item", "rater"])
    key = r["system"].astype(str) + "\x00" + r["item"].astype(str)
    count = key.map(key.value_counts())
    r = r[count.to_numpy() >= 2]
    out = {lv: float("nan") for lv in levels}
    if r.empty:
        return out
    rng = np.random.default_rng(seed)
    r = r.assign(_key=key[r.index], _u=rng.random(len(r)))
    pick = r.groupby("_key")["_u"].transform("max") == r["_u"]
    one = r[pick]
    g = r.groupby("_key")["score"]
    rest_mean = (g.transform("sum") - r["score"]) / (g.transform("count") - 1)
    rest = r[pick].assign(score=rest_mean[pick])
    cols = ["system", "item", "score"]
    mats = _old_score_matrices(one[cols].astype({"system": str, "item": str}),
                               rest[cols].astype({"system": str, "item": str}),
                               systems=sorted(map(str, systems)))
    for lv in levels:
        out[lv] = float(level_correlation(mats.metric, mats.human, lv, coefficient,
                                          n_resamples=0).statistic)
    return out


@pytest.mark.parametrize("kind", ["normal", "ties", "constant"])
def test_rater_ceiling_equals_the_old_code(kind):
    from nlgeval.report.verdict import rater_ceiling

    rng = np.random.default_rng(10 + len(kind))
    levels = ["segment", "system", "item", "system-grouped"]
    for k in range(10):
        df = _ratings(rng, int(rng.integers(2, 8)), int(rng.integers(2, 30)), kind)
        df["score"] = df["score"] * rng.choice([1.0, 1e-3, 7.0])
        if k % 3 == 0:
            df.loc[rng.random(len(df)) < 0.05, "system"] = None  # unnamed outputs
        systems = ["s0", "s1", "s2"] if k % 2 else ["s2", "s0"]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            new = rater_ceiling(df, "q", systems, levels, "pearson", seed=k)
            old = _old_rater_ceiling(df, "q", systems, levels, "pearson", seed=k)
        assert all(_same(new[lv], old[lv]) for lv in levels), (k, new, old)


def test_average_ranks_equal_scipy_rankdata():
    from scipy import stats

    from nlgeval.correlation.coefficients import average_ranks

    rng = np.random.default_rng(4)
    for k in range(500):
        n = int(rng.choice([1, 2, 3, 16, 100, 2847, 25_000]))
        x = rng.normal(size=n) * rng.choice([1e-200, 1.0, 1e200])
        if k % 2:
            x = np.round(x / np.abs(x).max() * rng.choice([1, 3, 50])) if n else x  # ties
        got, ref = average_ranks(x), stats.rankdata(x)
        assert got.dtype == ref.dtype and np.array_equal(got, ref), (k, n)


# ------------------------------------------------------------------ criterion_matrices one pass
def test_criterion_matrices_one_pass_equals_per_metric(monkeypatch: pytest.MonkeyPatch) -> None:
    """A large study codes each metric on its own (a smaller peak): the same matrices as the
    one pass over all metrics, and the same error for a duplicated output."""
    import dataclasses

    from nlgeval.corpora import load_corpus
    from nlgeval.report import stages
    from nlgeval.report.prepare import prepare_scores
    from nlgeval.report.settings import ValidationSettings

    c = load_corpus("e2e")
    c = c.subset(items=c.items[:30])
    prep = prepare_scores(c, ValidationSettings(metrics=["bleu", "chrf"]))
    for crit in prep.criteria:
        one = stages.criterion_matrices(prep, crit)
        monkeypatch.setattr(stages, "ONE_PASS_ROWS", 0)
        each = stages.criterion_matrices(prep, crit)
        monkeypatch.setattr(stages, "ONE_PASS_ROWS", 2_000_000)
        np.testing.assert_array_equal(one.human, each.human)
        assert one.oriented.keys() == each.oriented.keys() == {"bleu", "chrf"}
        for m in one.oriented:
            np.testing.assert_array_equal(one.oriented[m], each.oriented[m])
            assert one.missing[m] == each.missing[m]
    seg = prep.segments
    dup = pd.concat([seg, seg.iloc[[0]]], ignore_index=True)
    for rows in (0, 2_000_000):
        monkeypatch.setattr(stages, "ONE_PASS_ROWS", rows)
        bad = dataclasses.replace(prep, segments=dup)
        with pytest.raises(InputError, match="more than one row"):
            stages.criterion_matrices(bad, prep.criteria[0])


@pytest.mark.parametrize("dtype", ["str", object])
def test_output_codes_number_pairs_like_factorize(dtype):
    """output_codes against the two ways it replaces: pd.factorize of joined strings
    (missing -> -1) and of a MultiIndex's tuples (missing counted as a name)."""
    from nlgeval.codes import pair_codes as output_codes  # moved from report.verdict

    rng = np.random.default_rng(7)
    for _ in range(200):
        n = int(rng.integers(1, 60))
        s = pd.Series(rng.choice(["a", "b", None, "c"], n), dtype=dtype).astype(str)
        i = pd.Series(rng.choice(["1", None, "2", "a"], n), dtype=dtype).astype(str)
        joined = pd.factorize(s + "\x00" + i)[0]
        tuples = pd.MultiIndex.from_arrays([s, i]).factorize()[0]
        assert np.array_equal(output_codes(s, i), joined)
        assert np.array_equal(output_codes(s, i, missing_as_name=True), tuples)
