"""criterion_matrices with one metric's codes alive at a time and the matrices oriented in place:
the same matrices, bit for bit, as the previous code (kept here as the reference), on random
studies with ties, missing cells, NaN scores, constant and near-constant rows, values near
1e200 and 1e-200, lower-is-better metrics and a metric bound to another criterion; both the
one-pass and the per-metric coding; and a smaller traced peak."""

from __future__ import annotations

import tracemalloc

import numpy as np
import pandas as pd
import pytest

from nlgeval.correlation.levels import frame_codes, frame_codes_by, score_matrices
from nlgeval.errors import InputError
from nlgeval.report import stages
from nlgeval.report.binding import metrics_for
from nlgeval.report.prepare import PreparedScores


def _old_criterion_matrices(prep, criterion):
    """criterion_matrices as it was (every metric's codes kept into the next, sign * X)."""
    hcrit = prep.human.loc[prep.human["criterion"] == criterion, ["system", "item", "score"]]
    metrics = metrics_for(criterion, prep.metrics, prep.bound)
    try:
        hcodes = frame_codes(hcrit, "human")
    except InputError:
        hcodes = None
    one_pass = bool(metrics) and len(prep.segments) <= stages.ONE_PASS_ROWS
    by = frame_codes_by(prep.segments, "metric", metrics) if one_pass else {}
    oriented, missing = {}, {}
    human = None
    for metric in metrics:
        mcodes = by.get(metric)
        if mcodes is None:
            seg = prep.segments
            mcodes = frame_codes(seg.loc[seg["metric"] == metric, ["system", "item", "score"]])
        mats = mcodes.matrices(hcodes or frame_codes(hcrit, "human"), prep.systems,
                               prep.rated_items)
        sign = 1.0 if prep.higher_is_better.get(metric, True) else -1.0
        oriented[metric] = sign * mats.metric
        missing[metric] = mats.missing
        human = mats.human
    if human is None:
        human = score_matrices(prep.segments.iloc[:0][["system", "item", "score"]], hcrit,
                               systems=prep.systems, items=prep.rated_items).human
    return stages.CriterionMatrices(criterion, oriented, human, missing)


def _study(rng, S, n_items, n_metrics=4):
    systems = [f"s{k}" for k in range(S)]
    items = [f"i{j:04d}" for j in range(n_items)]
    sys_col = np.repeat(systems, n_items)
    item_col = np.tile(items, S)
    H = rng.normal(size=S * n_items)
    frames = []
    for k in range(n_metrics):
        kind = k % 4
        x = H + rng.normal(size=H.size)
        if kind == 1:
            x = np.round(x)  # ties
        elif kind == 2:
            x = x * (1e200 if rng.random() < 0.5 else 1e-200)
        elif kind == 3:
            x = 1.0 + 1e-15 * np.round(x)  # near-constant
            x[: n_items] = 2.0  # a constant system
        x[rng.random(x.size) < 0.1] = np.nan  # NaN scores
        keep = rng.random(x.size) > 0.05  # unscored outputs (no row)
        frames.append(pd.DataFrame({"metric": f"m{k}", "system": sys_col[keep],
                                    "item": item_col[keep], "score": x[keep]}))
    seg = pd.concat(frames, ignore_index=True)
    seg["metric"] = seg["metric"].astype("category")
    seg["system"] = seg["system"].astype("str")
    seg["item"] = seg["item"].astype("str")
    hum = []
    for c in ("c0", "c1"):
        h = np.round(H + rng.normal(scale=0.3, size=H.size), 1)
        h[rng.random(h.size) < 0.05] = np.nan
        keep = rng.random(h.size) > 0.05  # unrated outputs
        hum.append(pd.DataFrame({"system": sys_col[keep], "item": item_col[keep],
                                 "criterion": c, "score": h[keep]}))
    human = pd.concat(hum, ignore_index=True)
    metrics = [f"m{k}" for k in range(n_metrics)]
    hib = {m: bool(rng.random() < 0.5) for m in metrics}
    bound = {metrics[-1]: "c1"} if n_metrics > 2 else {}
    return PreparedScores(seg, pd.DataFrame(), metrics, {}, hib, [], [], systems, [], human,
                          items, ["c0", "c1"], bound=bound)


def _bits(a: np.ndarray) -> bytes:
    return np.ascontiguousarray(a).tobytes()


@pytest.mark.parametrize("one_pass", [True, False])
def test_criterion_matrices_equal_the_old_code(one_pass: bool, monkeypatch) -> None:
    monkeypatch.setattr(stages, "ONE_PASS_ROWS", 2_000_000 if one_pass else 0)
    rng = np.random.default_rng(11)
    for _ in range(6):
        prep = _study(rng, int(rng.integers(2, 7)), int(rng.integers(3, 40)),
                      int(rng.integers(1, 6)))
        for crit in prep.criteria:
            new, old = stages.criterion_matrices(prep, crit), _old_criterion_matrices(prep, crit)
            assert _bits(new.human) == _bits(old.human)
            assert list(new.oriented) == list(old.oriented)
            for m in old.oriented:
                assert new.oriented[m].dtype == old.oriented[m].dtype
                assert _bits(new.oriented[m]) == _bits(old.oriented[m]), m
                assert new.missing[m] == old.missing[m]


def test_every_metric_bound_elsewhere_and_duplicates(monkeypatch) -> None:
    rng = np.random.default_rng(3)
    prep = _study(rng, 3, 9, 3)
    prep = PreparedScores(prep.segments, prep.corpus_scores, prep.metrics, {},
                          prep.higher_is_better, [], [], prep.systems, [], prep.human,
                          prep.rated_items, prep.criteria, bound=dict.fromkeys(prep.metrics, "c1"))
    new, old = stages.criterion_matrices(prep, "c0"), _old_criterion_matrices(prep, "c0")
    assert not new.oriented and _bits(new.human) == _bits(old.human)
    seg = prep.segments
    dup = pd.concat([seg, seg.iloc[[0]]], ignore_index=True)
    bad = PreparedScores(dup, prep.corpus_scores, prep.metrics, {}, prep.higher_is_better, [],
                         [], prep.systems, [], prep.human, prep.rated_items, prep.criteria)
    for rows in (0, 2_000_000):
        monkeypatch.setattr(stages, "ONE_PASS_ROWS", rows)
        with pytest.raises(InputError, match="more than one row"):
            stages.criterion_matrices(bad, "c0")


def _peak(f, *args) -> int:
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        f(*args)
        return tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize("one_pass", [True, False])
def test_smaller_peak_than_the_old_code(one_pass: bool, monkeypatch) -> None:
    """Traced allocations (tracemalloc counts numpy's buffers): per metric (a large study),
    the peak inside the call is below the old code's by more than one metric matrix (no codes
    kept into the next metric, no sign * X copy, one human matrix); the one pass peaks while
    coding all the metrics at once, as before."""
    monkeypatch.setattr(stages, "ONE_PASS_ROWS", 2_000_000 if one_pass else 0)
    rng = np.random.default_rng(5)
    prep = _study(rng, 10, 4000, 3)
    prep.higher_is_better.update(dict.fromkeys(prep.metrics, False))
    stages.criterion_matrices(prep, "c0")  # warm
    new = _peak(stages.criterion_matrices, prep, "c0")
    old = _peak(_old_criterion_matrices, prep, "c0")
    if one_pass:
        assert new <= old, (new, old)
    else:
        assert new < old - 8 * 10 * 4000, (new, old)
