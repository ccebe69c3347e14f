"""Table 9's signed-rank tests in blocks of pairs (issue 29: 7.6 GB at 250,000 items x 20
systems in one piece) give the same numbers, bit for bit, as the one-piece computation, which is
kept below as the reference, on random cases with ties, missing cells, constant items, few
items (the exact sign-flip path) and values near 1e200 and 1e-200."""

from __future__ import annotations

import warnings
from itertools import combinations

import numpy as np
import pytest
from scipy import stats

from nlgeval.human.compare import correct_pvalues
from nlgeval.report import differences
from nlgeval.report.differences import pairwise_signed_rank


def one_piece(W, alpha=0.05, correction="bonferroni"):  # noqa: ANN001, ANN201
    """The previous pairwise_signed_rank (all pairs at once), without its input check."""
    W = np.asarray(W, dtype=float)
    pairs = list(combinations(range(W.shape[1]), 2))
    a, b = (np.array(x, dtype=int) for x in zip(*pairs, strict=True))
    D = W[:, a] - W[:, b]
    paired = np.isfinite(D)
    n = paired.sum(axis=0)
    D = np.where(paired, D, 0.0).T
    absd = np.where(D != 0, np.abs(D), np.nan)
    ranks = stats.rankdata(absd, axis=1, nan_policy="omit")
    w_plus = np.nansum(np.where(D > 0, ranks, 0.0), axis=1)
    w_minus = np.nansum(np.where(D < 0, ranks, 0.0), axis=1)
    direction = np.sign(w_plus - w_minus).astype(int)
    nonzero = (D != 0).sum(axis=1)
    p = np.ones(len(pairs))
    big = (n > 50) & (nonzero > 0)
    if big.any():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            p[big] = stats.wilcoxon(D[big], zero_method="wilcox", method="asymptotic",
                                    axis=1).pvalue
    for j in np.flatnonzero(~big & (nonzero > 0)):
        x = D[j, paired[:, j]]
        nz = np.abs(x[x != 0])
        if x.size <= 13 and (nz.size < x.size or np.unique(nz).size < nz.size):
            p[j] = differences._sign_flip_pvalue(x)
        else:
            p[j] = stats.wilcoxon(x, zero_method="wilcox", method="auto").pvalue
    _, reject = correct_pvalues(p, correction, alpha)
    return direction, p, reject.astype(bool)


def _case(kind: str, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    n_items = {"few": 12, "mid": 40}.get(kind, 120)
    S = int(rng.integers(3, 9))
    W = rng.integers(0, 5, size=(n_items, S)).astype(float) + rng.normal(size=S) * 0.5
    if kind == "nan":
        W[rng.random(W.shape) < 0.2] = np.nan
    elif kind == "constant":
        W[:, 0] = W[:, 1]  # a pair with every difference zero
        W[: n_items // 2, :] = 2.0
    elif kind == "extreme":
        W = W * 1e200
        W[:, -1] = 1e-200
    elif kind == "continuous":
        W = rng.normal(size=W.shape)
    return W


@pytest.mark.parametrize("kind", ["ties", "nan", "constant", "extreme", "continuous", "few",
                                  "mid"])
@pytest.mark.parametrize("block_cells", [1, 50, 250, 2**22])
def test_blocks_of_pairs_give_the_one_piece_numbers(kind: str, block_cells: int,
                                                    monkeypatch) -> None:
    monkeypatch.setattr(differences, "PAIR_BLOCK_CELLS", block_cells)
    for seed in range(3):
        W = _case(kind, seed)
        got = pairwise_signed_rank(W)
        want = one_piece(W)
        for g, w in zip(got, want, strict=True):
            np.testing.assert_array_equal(g, w)
            assert g.dtype == w.dtype


def test_a_pair_without_common_items_is_named_from_any_block(monkeypatch) -> None:
    monkeypatch.setattr(differences, "PAIR_BLOCK_CELLS", 20)  # one pair per block
    W = np.ones((20, 4))
    W[:10, 2] = np.nan
    W[10:, 3] = np.nan
    with pytest.raises(Exception, match="systems 'c' and 'd' have no item in common"):
        pairwise_signed_rank(W, systems=["a", "b", "c", "d"])
