"""The one-way ICC's per-group sums without a Python loop (issue 29): the same floats as the
loop over groups it replaced, which is kept here as the reference."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from scipy import stats

from nlgeval.errors import InputError
from nlgeval.human.intraclass import group_means_and_squares, icc_oneway


def _loop_icc_oneway(groups, alpha=0.05):
    """icc_oneway before vectorising (commit 46f6fbf): one np.mean per group, twice."""
    groups = [np.asarray(g, dtype=float) for g in groups if len(g) > 0]
    g = len(groups)
    sizes = np.array([len(x) for x in groups], dtype=float)
    big_n = sizes.sum()
    if g < 2 or big_n - g < 1:
        raise InputError("too few")
    means = np.array([x.mean() for x in groups])
    grand = np.concatenate(groups).mean()
    msb = float((sizes * (means - grand) ** 2).sum() / (g - 1))
    msw = float(sum(((x - x.mean()) ** 2).sum() for x in groups) / (big_n - g))
    k0 = float((big_n - (sizes ** 2).sum() / big_n) / (g - 1))
    if msw == 0:
        raise InputError("zero within")
    f1, df1, df2 = msb / msw, g - 1, big_n - g
    q = 1 - alpha / 2
    fl, fu = f1 / stats.f.ppf(q, df1, df2), f1 * stats.f.ppf(q, df2, df1)
    p = float(stats.f.sf(f1, df1, df2))
    return [((msb - msw) / (msb + (k0 - 1) * msw), f1, df1, df2, p,
             (fl - 1) / (fl + k0 - 1), (fu - 1) / (fu + k0 - 1)),
            ((msb - msw) / msb, f1, df1, df2, p, 1 - 1 / fl, 1 - 1 / fu)]


SCALES = {"normal": 1.0, "big": 1e200, "tiny": 1e-200, "large": 1e150, "small": 1e-150}


def _groups(rng: np.random.Generator, kind: str) -> list[np.ndarray]:
    n_groups = int(rng.integers(2, 60))
    top = int(rng.choice([3, 9, 20, 300]))  # pairwise summation changes at 8 and 128 terms
    sizes = rng.integers(0 if kind == "ties" else 1, top + 1, size=n_groups)
    out = []
    for s in sizes:
        if kind == "ties":
            x = rng.integers(1, 6, size=s).astype(float)
        elif kind == "constant":
            x = np.full(s, float(rng.integers(1, 6)))
        elif kind == "near-constant":
            x = 3.0 + rng.normal(size=s) * 1e-15
        else:
            x = rng.normal(size=s) * SCALES[kind]
        out.append(x)
    if kind == "constant":  # one varying group so that the ICC is defined
        out.append(np.array([1.0, 2.0, 4.0]))
    return out


@pytest.mark.parametrize("kind", [*SCALES, "ties", "constant", "near-constant"])
def test_same_floats_as_the_loop(kind: str) -> None:
    rng = np.random.default_rng(len(kind))
    for _ in range(60):
        groups = _groups(rng, kind)
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            try:
                old = _loop_icc_oneway(groups)
            except (InputError, ZeroDivisionError) as err:  # the same error from both
                with pytest.raises(type(err)):
                    icc_oneway(groups)
                continue
            new = icc_oneway(groups)
        for ref, form in zip(old, new, strict=True):
            got = (form.icc, form.F, form.df1, form.df2, form.pvalue, form.ci_low, form.ci_high)
            np.testing.assert_array_equal(np.array(got, float), np.array(ref, float))


def test_group_sums_equal_numpy_per_group() -> None:
    rng = np.random.default_rng(7)
    sizes = rng.integers(1, 400, size=300)
    values = rng.standard_cauchy(size=int(sizes.sum()))  # heavy tails: order matters
    means, ss = group_means_and_squares(values, sizes)
    groups = np.split(values, np.cumsum(sizes)[:-1])
    assert means.tobytes() == np.array([x.mean() for x in groups]).tobytes()
    assert ss.tobytes() == np.array([((x - x.mean()) ** 2).sum() for x in groups]).tobytes()
