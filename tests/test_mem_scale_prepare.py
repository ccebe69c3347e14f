"""The faster steps of reading and preparing large score files give the same frames as the
code they replace (issue 29: 5 M scored outputs), kept here as the reference: names of typed
(categorical) columns turned into text, and the coverage of external metrics."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from nlgeval.report.prepare import _as_text
from nlgeval.scores import check_scores, combine_scores, tidy_scores


def _random_categorical(rng: np.random.Generator, n: int, missing: bool) -> pd.Series:
    names = [f" n{k}" if k % 7 == 0 else f"n{k:03d}" for k in range(int(rng.integers(1, 40)))]
    codes = rng.integers(-1 if missing else 0, len(names), size=n)
    cats = pd.Categorical.from_codes(codes, categories=pd.Index(names, dtype=str))
    return pd.Series(cats, index=rng.permutation(n) + 5, name="system")


@pytest.mark.parametrize("seed", range(6))
def test_as_text_equals_astype_str(seed: int) -> None:
    rng = np.random.default_rng(seed)
    for n in (0, 1, 50, 2_000):
        for missing in (False, True):
            col = _random_categorical(rng, n, missing)
            pd.testing.assert_series_equal(_as_text(col), col.astype(str))
    # numbers as categories, plain strings and objects go through astype(str) unchanged
    ints = pd.Series(pd.Categorical(rng.integers(0, 5, size=30)))
    pd.testing.assert_series_equal(_as_text(ints), ints.astype(str))
    text = pd.Series(rng.choice(["a", "b", "c"], size=30))
    pd.testing.assert_series_equal(_as_text(text), text.astype(str))


def _old_coverage(seg: pd.DataFrame, rated: pd.DataFrame, metric: str) -> float:
    """The coverage as computed per metric before (a Python tuple per output)."""
    ok = seg[(seg["metric"] == metric) & seg["score"].notna()]
    have = set(zip(ok["system"].astype(str), ok["item"].astype(str), strict=True))
    keys = rated[["system", "item"]].astype(str).drop_duplicates()
    hit = sum((s, i) in have for s, i in zip(keys["system"], keys["item"], strict=True))
    return hit / max(1, len(keys))


@pytest.mark.parametrize("seed", range(8))
def test_coverage_and_combined_metrics_equal_the_reference(seed: int) -> None:
    rng = np.random.default_rng(seed)
    systems = [f"s{k}" for k in range(int(rng.integers(2, 6)))]
    items = [f"i{k}" for k in range(int(rng.integers(3, 30)))]
    outputs = pd.DataFrame([(s, i) for s in systems for i in items], columns=["system", "item"])
    rated = outputs.sample(frac=float(rng.uniform(0.5, 1.0)), random_state=seed)
    rated = pd.concat([rated, rated.head(3)])  # a rated output twice (several raters)
    frames = []
    for m in ("m1", "m2", "m3"):
        scored = outputs.sample(frac=float(rng.uniform(0.6, 1.0)), random_state=seed + 1)
        score = rng.normal(size=len(scored))
        score[rng.random(len(scored)) < 0.2] = np.nan  # missing cells
        frames.append(tidy_scores(scored.assign(**{m: score})))
    scores = combine_scores(frames[::-1])
    assert pd.unique(scores["metric"]).tolist() == ["m3", "m2", "m1"]
    check = check_scores(scores, outputs, rated, min_coverage=0.0)
    seg = scores[scores["item"] != ""]
    for m in ("m1", "m2", "m3"):
        assert check.coverage[m] == _old_coverage(seg, rated, m)


@pytest.mark.parametrize("seed", range(6))
def test_stripped_identifiers_equal_the_reference(seed: int) -> None:
    from nlgeval.corpus._validate import _stripped_text

    rng = np.random.default_rng(seed)
    for n in (0, 1, 40, 3_000):
        names = pd.Index([" a", "b ", "c", " ", "x y", "1", " 2 ", "\tt"], dtype=str)
        names = names[: int(rng.integers(1, len(names) + 1))]
        col = pd.Series(pd.Categorical.from_codes(rng.integers(0, len(names), size=n),
                                                  categories=names),
                        index=rng.permutation(n) + 3, name="item")
        pd.testing.assert_series_equal(_stripped_text(col), col.astype(str).str.strip())
    ints = pd.Series(pd.Categorical(rng.integers(0, 4, size=25)))
    pd.testing.assert_series_equal(_stripped_text(ints), ints.astype(str).str.strip())
