"""The fast Table 9 (Reiter & Belz 2009) against per-pair scipy and the reference implementation.

References: :func:`scipy.stats.wilcoxon` called once per pair of systems on the paired items
(the test of the 2009 paper), and :func:`nlgeval.human.metric_agreement.
significant_difference_agreement`, which loops over the pairs with
:func:`nlgeval.human.compare.pairwise_wilcoxon`.
"""

from __future__ import annotations

import warnings
from itertools import combinations

import numpy as np
import pandas as pd
import pytest
from _validate_synth import synthetic_corpus
from scipy import stats

from nlgeval.errors import InputError
from nlgeval.human.metric_agreement import significant_difference_agreement
from nlgeval.report import run_validation
from nlgeval.report.differences import pairwise_signed_rank, significant_differences


def _scipy_pairs(W: np.ndarray) -> tuple[list[int], list[float]]:
    """Direction (sign of W+ - W-) and scipy's two-sided p for every pair, one call each."""
    dirs, ps = [], []
    for a, b in combinations(range(W.shape[1]), 2):
        ok = np.isfinite(W[:, a]) & np.isfinite(W[:, b])
        d = W[ok, a] - W[ok, b]
        nz = d[d != 0]
        if nz.size == 0:
            dirs.append(0)
            ps.append(1.0)
            continue
        r = stats.rankdata(np.abs(nz))
        dirs.append(int(np.sign(r[nz > 0].sum() - r[nz < 0].sum())))
        ps.append(float(stats.wilcoxon(W[ok, a], W[ok, b], zero_method="wilcox",
                                       method="auto").pvalue))
    return dirs, ps


@pytest.mark.parametrize("n_items, decimals, missing", [
    (90, 0, 0.1),    # > 50 paired items, ties and zeros: normal approximation, in the batch
    (40, 6, 0.0),    # <= 50 items, no ties: exact null distribution
    (30, 0, 0.0),    # <= 50 items with ties: normal approximation per pair
    (12, 0, 0.25),   # <= 13 paired items with ties or zeros: permutation null
])
def test_pairwise_signed_rank_equals_scipy_per_pair(n_items, decimals, missing) -> None:
    rng = np.random.default_rng(n_items)
    W = np.round(rng.normal(0, 1.5, (n_items, 5)) + np.linspace(0, 1.2, 5), decimals)
    W[rng.random(W.shape) < missing] = np.nan
    W[:, 4] = W[:, 3]  # one pair with every difference zero: p = 1, no direction
    W[np.isnan(W[:, 3]), 4] = np.nan
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        dirs, ps = _scipy_pairs(W)
        d, p, sig = pairwise_signed_rank(W, alpha=0.05)
    assert d.tolist() == dirs
    np.testing.assert_allclose(p, ps, rtol=1e-12, atol=0)
    assert sig.tolist() == (np.minimum(np.array(ps) * len(ps), 1) <= 0.05).tolist()


def test_no_common_item_is_an_input_error() -> None:
    W = np.array([[1.0, np.nan], [np.nan, 2.0]])
    with pytest.raises(InputError, match="'A' and 'B' have no item in common"):
        pairwise_signed_rank(W, systems=["A", "B"])


def _reference(seg: pd.DataFrame, human: pd.DataFrame, criteria, hib) -> pd.DataFrame:
    frames = []
    for crit in criteria:
        h = human.loc[human["criterion"] == crit, ["system", "item", "score"]]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            t = significant_difference_agreement(h, seg, higher_is_better=hib, alpha=0.05)
        frames.append(t.assign(criterion=crit))
    out = pd.concat(frames, ignore_index=True)
    return out[["criterion", *[c for c in out.columns if c != "criterion"]]]


def test_table9_equals_the_reference_implementation() -> None:
    corpus, seg = synthetic_corpus(n_systems=7, n_items=60, seed=3, with_reference_system=False)
    human = corpus.human_scores()
    human = human.assign(system=human["system"].astype(str), item=human["item"].astype(str))
    seg = seg.assign(score=np.round(seg["score"], 0))  # ties and zero differences
    hib = {"ter_like": False}
    fast = significant_differences(seg, human, ["quality", "fluency"], hib, 0.05, [])
    ref = _reference(seg, human, ["quality", "fluency"], hib)
    pd.testing.assert_frame_equal(fast, ref, check_dtype=False)
    assert fast["human_significant"].gt(0).all()  # the test has something to agree on


def test_table9_of_the_study_and_its_note_on_unscored_outputs() -> None:
    corpus, seg = synthetic_corpus()
    seg = seg.drop(index=[5, 7])  # two outputs without a score from every metric
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        study = run_validation(corpus, segment_scores=seg, higher_is_better={"ter_like": False},
                               levels=["system"], coefficients=["pearson"], n_resamples=0,
                               permutations=0)
    keep = seg[seg["system"] != "REF"]
    full = keep.groupby(["system", "item"])["metric"].nunique()
    complete = full[full == 3].index
    human = corpus.human_scores()
    human = human[human["system"] != "REF"]
    human = human[pd.MultiIndex.from_frame(human[["system", "item"]]).isin(complete)]
    ref = _reference(keep, human, ["quality", "fluency"], {"ter_like": False})
    pd.testing.assert_frame_equal(study.significant_differences, ref, check_dtype=False)
    assert any("Table 9 for 'quality'" in n and "left out" in n for n in study.notes)
