"""The sign-flip counts behind the PERM-BOTH test of soft pairwise accuracy (Thompson et al.
2024; Deutsch, Dror & Roth 2021) equal those of the previous code, kept here as the reference:
the per-pair count kernel on random inputs (ties, missingness patterns, pairs without a common
segment, constant and near-constant scores, values near 1e200 and 1e-200), and the batched
all-pairs loop against the previous loop written with that reference."""

from __future__ import annotations

import numpy as np
import pytest

from nlgeval.correlation import _spa_perm
from nlgeval.correlation._pairwise_kernels import _prepare_masks, _SignFlipDesign
from nlgeval.correlation.permutation.draws import iter_swap_masks
from nlgeval.correlation.soft_pairwise import sign_flip_masks


def _reference_counts(U, V, has_v, member, ii, jj, obs_a, null_sum, obs_sum, tol):
    """The previous kernel, in numpy: a pair's delta summed from 0.0 over its patterns in
    pattern order, ``(U_i + V_i) - (U_j + V_j)``, then the four counts."""
    G, _, c, K = U.shape
    out = np.zeros((4, c, ii.size), dtype=np.int64)
    for p, (i, j) in enumerate(zip(ii, jj, strict=True)):
        for d in range(c):
            na = np.zeros(K)
            for g in range(G):
                if member[g, p]:
                    if has_v:
                        na += (U[g, i, d] + V[g, i, d]) - (U[g, j, d] + V[g, j, d])
                    else:
                        na += U[g, i, d] - U[g, j, d]
            o, t = obs_a[p, d], tol[p]
            y = null_sum[p] - na
            ob = obs_sum[p] - o
            out[:, d, p] = [(na >= o - t).sum(), (na <= o + t).sum(), (y >= ob - t).sum(),
                            (y <= ob + t).sum()]
    return out


def _values(rng, shape, kind):
    if kind == "ties":
        return np.round(rng.normal(size=shape), 1)
    if kind == "constant":
        return np.full(shape, 0.5)
    if kind == "near-constant":
        return 0.5 + 1e-13 * rng.integers(-2, 3, size=shape)
    if kind == "huge":
        return 1e200 * np.round(rng.normal(size=shape), 1)
    if kind == "tiny":
        return 1e-200 * np.round(rng.normal(size=shape), 1)
    return rng.normal(size=shape)


@pytest.mark.parametrize("kind", ["ties", "constant", "near-constant", "huge", "tiny", "normal"])
def test_count_kernel_equals_previous_code(kind: str) -> None:
    rng = np.random.default_rng(abs(hash(kind)) % 2**32)
    for case in range(12):
        G, S, c, K = (int(rng.integers(1, 5)), int(rng.integers(2, 7)), int(rng.integers(1, 5)),
                      int(rng.integers(1, 40)))
        ii, jj = np.triu_indices(S, 1)
        U, V = _values(rng, (G, S, c, K), kind), _values(rng, (G, S, c, K), kind)
        member = rng.random((G, ii.size)) < [[0.9], [0.6], [0.5], [0.5]][:G]
        if case % 3 == 0:
            member[:, 0] = False                 # a pair without a common segment
        null_sum = _values(rng, (ii.size, K), kind)
        # observed deltas taken from the nulls now and then, so that ties at the threshold occur
        obs_a = _values(rng, (ii.size, c), kind)
        take = rng.random(obs_a.shape) < 0.5
        deltas = (U[0][ii] - U[0][jj])[:, :, 0]
        obs_a = np.where(take, deltas, obs_a)
        obs_sum = np.where(rng.random(ii.size) < 0.5, null_sum[:, 0], _values(rng, ii.size, kind))
        tol = rng.choice([0.0, 1e-12, 1e-3], size=ii.size) * np.abs(obs_sum)
        for has_v in (True, False):
            ref = _reference_counts(U, V, has_v, member, ii, jj, obs_a, null_sum, obs_sum, tol)
            got = np.full((4, c + 2, ii.size), -1, dtype=np.int16)
            _spa_perm._count_sums(U, V, has_v, member, ii, jj, obs_a, null_sum, obs_sum, tol,
                                  got, 2)
            np.testing.assert_array_equal(got[:, 2:], ref, err_msg=f"{kind} case {case}")
            assert (got[:, :2] == -1).all()                  # rows before ``start`` untouched


def _previous_prime(metrics, Y, n_resamples, seed, spa_permutations):
    """The previous all-pairs loop (fresh arrays per chunk, the reference counts)."""
    ok = np.isfinite(Y)
    design = _SignFlipDesign.build(ok)
    M = sign_flip_masks(int(design.keep.sum()), spa_permutations, seed)
    plan = _prepare_masks(design, M)
    Z = [_spa_perm.zscored_kept(X, ok, design.keep) for X in metrics]
    pairs = [(a, b) for a in range(len(Z)) for b in range(a + 1, len(Z))]
    setups = {p: _spa_perm._pair_setup(Z[p[0]], Z[p[1]], design, plan, n_resamples)
              for p in pairs}
    full = [_spa_perm._group_sums(z[None], design, plan) for z in Z]
    G, S, K = len(plan.groups), design.n_systems, plan.K
    chunk = max(1, _spa_perm._CHUNK_ELEMENTS // (2 * len(Z) * G * S * K))
    done = 0
    for m in iter_swap_masks(ok.shape, n_resamples, "both", seed, chunk=chunk):
        V = [_spa_perm._group_sums(np.where(m[:, :, design.keep], z, 0.0), design, plan)
             for z in Z]
        U = [(f[0] - v[0], f[1] - v[1]) for f, v in zip(full, V, strict=True)]
        for a, b in pairs:
            tol, null_sum, obs_sum, member, out = setups[(a, b)]
            out[:, done:done + len(m)] = _reference_counts(
                U[a][0], V[b][0], True, member, design.ii, design.jj, U[a][1] + V[b][1],
                null_sum, obs_sum, tol)
        done += len(m)
    return [setups[p][4] for p in pairs]


@pytest.mark.parametrize("missing", [0, 1, 3])
def test_all_pairs_counts_equal_previous_loop(missing: int) -> None:
    rng = np.random.default_rng(missing)
    Y = np.round(rng.normal(size=(5, 1)) + rng.normal(size=(5, 40)), 1)
    for s, i in ((1, 3), (4, 0), (2, 7))[:missing]:
        Y[s, i] = np.nan
    metrics = [np.round(Y + rng.normal(0, s, Y.shape), 1) for s in (0.3, 0.6, 1.0)]
    metrics.append(np.where(np.isfinite(Y), 2.0, np.nan))           # a constant metric
    ref = _previous_prime(metrics, Y, 45, 3, 60)
    _spa_perm._cache.clear()
    assert _spa_perm.prime_pairs(metrics, Y, n_resamples=45, seed=3, spa_permutations=60,
                                 spa_seed=3) == len(ref)
    got = list(_spa_perm._cache.values())
    _spa_perm._cache.clear()
    for g, r in zip(got, ref, strict=True):
        np.testing.assert_array_equal(g, r)


def test_remembered_pvalues_equal_fresh_ones() -> None:
    from nlgeval.correlation._pairwise_kernels import _sign_flip_pvalues
    from nlgeval.correlation.pairwise import soft_pairwise_accuracy_test

    rng = np.random.default_rng(7)
    Y = np.round(rng.normal(size=(4, 1)) + rng.normal(size=(4, 30)), 1)
    Y[2, 5] = np.nan
    metrics = [np.round(Y + rng.normal(0, s, Y.shape), 1) for s in (0.2, 0.5, 1.0)]
    kw = {"n_resamples": 30, "seed": 1, "spa_permutations": 50, "spa_seed": 4}
    fresh = []
    for a, b in ((0, 1), (0, 2), (1, 2)):
        _spa_perm._cache.clear()
        _spa_perm._pcache.clear()
        fresh.append(soft_pairwise_accuracy_test(metrics[a], metrics[b], Y, **kw))
    for (a, b), ref in zip(((0, 1), (0, 2), (1, 2)), fresh, strict=True):
        got = soft_pairwise_accuracy_test(metrics[a], metrics[b], Y, **kw)   # warm caches
        assert (got.statistic_a, got.statistic_b, got.pvalue) == (
            ref.statistic_a, ref.statistic_b, ref.pvalue)
        np.testing.assert_array_equal(got.draws_a, ref.draws_a)
    # another human criterion on the same cells is not served the first one's p-values
    ok = np.isfinite(Y)
    design = _SignFlipDesign.build(ok)
    M = sign_flip_masks(int(design.keep.sum()), 50, 4)
    plan = _prepare_masks(design, M)
    for H in (Y, np.where(ok, Y[::-1], np.nan)):
        H0 = np.where(ok, H, 0.0)[:, design.keep]
        if not np.isfinite(H0).all():
            H0 = np.where(np.isfinite(H0), H0, 0.0)
        for want, got in zip(_sign_flip_pvalues(H0[None], design, plan),
                             _spa_perm.cached_pvalues(H0, design, plan, M), strict=True):
            np.testing.assert_array_equal(got, want)


def _reference_spa_draws(ph, counts, slot, K, has_pair, orientation, chunk):
    """The previous ``spa_draws``: one slot per call, its own loop over the chunks."""
    from nlgeval.correlation._pairwise_kernels import _spa_from_p

    out = np.empty(counts.shape[1])
    for s in range(0, out.size, chunk):
        pm = _spa_perm.pvalues_from_counts(counts[:, s:s + chunk], slot, K, has_pair)
        out[s:s + chunk] = _spa_from_p(ph, pm, orientation)
    return out


@pytest.mark.parametrize("orientation", ["both", "given"])
def test_spa_draws_of_both_slots_in_one_loop_equal_the_previous_two(orientation: str) -> None:
    rng = np.random.default_rng(11)
    for _ in range(60):
        pairs, draws, K = int(rng.integers(1, 40)), int(rng.integers(1, 90)), 50
        counts = rng.integers(0, K + 1, size=(4, draws, pairs)).astype(np.int16)
        has_pair = rng.random(pairs) < 0.9
        ph = tuple(np.where(has_pair, rng.integers(0, K + 1, pairs) / K, np.nan)
                   for _ in range(2))
        chunk = int(rng.integers(1, draws + 3))
        got = _spa_perm.spa_draws(ph, counts, K, has_pair, orientation, chunk)
        for slot in (0, 1):
            want = _reference_spa_draws(ph, counts, slot, K, has_pair, orientation, chunk)
            np.testing.assert_array_equal(got[slot], want)
