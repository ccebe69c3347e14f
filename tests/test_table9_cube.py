"""Table 9's score cube is numbered from codes, not from a string per row (a 5 M-output study
has 20 M names): the same cube, names and codes as the code it replaced (commit 990d44c, kept
here as the reference), on random frames with str, object, integer and categorical names,
missing scores, metrics missing from some rows and names that are equal as text only."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd
import pytest

from nlgeval.report import differences


def _old_score_cube(scored: pd.DataFrame, human: pd.DataFrame, metrics: Sequence[str],
                    higher_is_better: Mapping[str, bool]):
    """nlgeval.report.differences._score_cube at 990d44c."""
    sys_codes, systems = pd.factorize(pd.concat([scored["system"], human["system"]]).astype(str))
    item_codes, items = pd.factorize(pd.concat([scored["item"], human["item"]]).astype(str))
    n_seg = len(scored)
    X = np.full((len(metrics), len(items), len(systems)), np.nan)
    m_codes = pd.Categorical(scored["metric"].astype(str), categories=list(metrics)).codes
    X[m_codes, item_codes[:n_seg], sys_codes[:n_seg]] = scored["score"].to_numpy(float)
    signs = np.array([1.0 if higher_is_better.get(m, True) else -1.0 for m in metrics])
    X *= signs[:, None, None]
    return X, np.asarray(systems), item_codes[n_seg:], sys_codes[n_seg:]


def _frames(rng: np.random.Generator, kind: str):
    n_sys, n_item = int(rng.integers(2, 6)), int(rng.integers(2, 30))
    systems = [f"s{k}" for k in rng.permutation(n_sys)]
    items: list = [int(i) for i in rng.permutation(n_item)] if kind == "int" else \
        [f"i{i}" for i in rng.permutation(n_item)]
    rows = [(m, s, i) for m in ("b", "a", "c") for s in systems for i in items
            if rng.random() < 0.8]
    seg = pd.DataFrame(rows, columns=["metric", "system", "item"])
    seg["score"] = rng.normal(size=len(seg))
    seg.loc[rng.random(len(seg)) < 0.2, "score"] = np.nan
    seg = seg.sample(frac=1.0, random_state=int(rng.integers(1 << 30))).reset_index(drop=True)
    hum = seg[["system", "item"]].drop_duplicates().sample(
        frac=0.7, random_state=int(rng.integers(1 << 30))).reset_index(drop=True)
    hum["criterion"] = "q"
    hum["score"] = rng.normal(size=len(hum))
    if kind == "object-mixed":  # 3 and "3" are one name as text
        seg["item"] = seg["item"].astype(object)
        hum["item"] = [int(x[1:]) if k % 2 else x[1:] for k, x in enumerate(hum["item"])]
        seg["item"] = [x[1:] for x in seg["item"]]
    if kind == "categorical":
        for df in (seg, hum):
            for col in ("system", "item"):
                df[col] = df[col].astype("category")
        seg["metric"] = seg["metric"].astype("category")
    return seg, hum


@pytest.mark.parametrize("block", [1, 7, 1 << 20])
@pytest.mark.parametrize("kind", ["str", "int", "object-mixed", "categorical"])
def test_score_cube_equals_the_string_per_row_code(kind: str, block: int,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(differences, "_CUBE_BLOCK", block)
    rng = np.random.default_rng(["str", "int", "object-mixed", "categorical"].index(kind))
    for _ in range(20 if block == 1 else 60):
        seg, hum = _frames(rng, kind)
        finite = np.flatnonzero(np.isfinite(seg["score"].to_numpy(dtype=float)))
        scored = seg[np.isfinite(seg["score"].astype(float))]
        metrics = [str(m) for m in dict.fromkeys(scored["metric"])]
        assert metrics == [str(m) for m in seg["metric"].iloc[finite].unique()]
        hib = {"a": False}
        old = _old_score_cube(scored, hum, metrics, hib)
        new = differences._score_cube(seg, finite, hum, metrics, hib)
        np.testing.assert_array_equal(new[0], old[0])   # NaN in the same places
        assert new[1].tolist() == old[1].tolist()
        np.testing.assert_array_equal(new[2], old[2])
        np.testing.assert_array_equal(new[3], old[3])


def test_the_reference_can_tell_a_wrong_order() -> None:
    """The comparison above can fail: the rows in another order number the names otherwise."""
    seg, hum = _frames(np.random.default_rng(5), "str")
    finite = np.flatnonzero(np.isfinite(seg["score"].to_numpy(dtype=float)))
    scored = seg.iloc[finite]
    metrics = [str(m) for m in dict.fromkeys(scored["metric"])]
    old = _old_score_cube(scored, hum, metrics, {})
    new = differences._score_cube(seg, finite[::-1].copy(), hum, metrics, {})
    assert new[1].tolist() != old[1].tolist() or not np.array_equal(new[2], old[2])
