"""Benchmark: PERM-BOTH tests of soft pairwise accuracy (issue 29 section 3).

A PERM-BOTH test of SPA (Thompson et al. 2024; Deutsch, Dror & Roth 2021) needs the sign-flip
p-value of every system pair under both swapped metrics in every draw (1,000 draws x 1,000 sign
flips). On a WebNLG 2020-sized study (16 systems x 178 items, one missing human score, 8 metrics
-> 28 metric pairs) this prints, with process CPU time next to wall time and the machine load:

* the straightforward array code (per chunk of draws, the sign-flip p-values of A* and of B*
  from their own matrix products, then SPA), on the first 100 draws of one pair, scaled to 1,000;
* ``soft_pairwise_accuracy_test`` on one pair (1,000 draws), and the same pair again (its
  metric-side counts are reused, as by a second criterion rated on the same outputs);
* all 28 pairs at once as ``nlgeval validate`` runs them (``prime_pairs``: one product per
  metric, then each pair's counts), per pair;

and checks that every way gives the same draws. One BLAS thread, as ``nlgeval validate`` runs
its criteria (several threads of a small product spin on a shared machine).

    .venv/bin/python benchmarks/bench_spa_perm.py
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from nlgeval.correlation import _spa_perm
from nlgeval.correlation._pairwise_kernels import (
    _prepare_masks,
    _sign_flip_pvalues,
    _SignFlipDesign,
    _spa_from_p,
)
from nlgeval.correlation.pairwise import sign_flip_masks, soft_pairwise_accuracy_test
from nlgeval.correlation.permutation.draws import iter_swap_masks, standardise

S, N, N_METRICS, K = 16, 178, 8, 1000


def timed(fn: Callable[[], Any]) -> tuple[Any, float, float]:
    w, c = time.perf_counter(), time.process_time()
    out = fn()
    return out, time.perf_counter() - w, time.process_time() - c


def straightforward(XA: np.ndarray, XB: np.ndarray, Y: np.ndarray, draws: int
                    ) -> tuple[np.ndarray, np.ndarray]:
    """Per chunk of draws: A* and B* swapped, each one's p-values from its own product."""
    ok = np.isfinite(XA) & np.isfinite(XB) & np.isfinite(Y)
    design = _SignFlipDesign.build(ok)
    keep = design.keep
    plan = _prepare_masks(design, sign_flip_masks(int(keep.sum()), K, 0))
    A0, B0 = (np.where(ok, standardise(np.where(ok, X, np.nan)), 0.0)[:, keep]
              for X in (XA, XB))
    ph = _sign_flip_pvalues(np.where(ok, Y, 0.0)[:, keep][None], design, plan)
    da, db = [], []
    for m in iter_swap_masks(ok.shape, draws, "both", 0, chunk=_spa_perm.chunk_draws(
            design, plan, S * N)):
        mk = m[:, :, keep]
        da.append(_spa_from_p(ph, _sign_flip_pvalues(np.where(mk, B0, A0), design, plan),
                              "both"))
        db.append(_spa_from_p(ph, _sign_flip_pvalues(np.where(mk, A0, B0), design, plan),
                              "both"))
    return np.concatenate(da), np.concatenate(db)


def main() -> int:
    rng = np.random.default_rng(0)
    Y = rng.normal(size=(S, 1)) + rng.normal(size=(S, N))
    Y[3, 7] = np.nan                                   # one missing human score, as WebNLG
    metrics = [Y + rng.normal(0, 0.5 + i / 4, (S, N)) for i in range(N_METRICS)]
    print(f"{S} systems x {N} items, {N_METRICS} metrics, {K} draws x {K} sign flips; "
          f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    (sa, sb), w0, c0 = timed(lambda: straightforward(metrics[0], metrics[1], Y, 100))
    print(f"straightforward array code, 1 pair : {10 * w0:8.2f} s wall {10 * c0:8.2f} s CPU "
          "(100 draws x 10)")
    _spa_perm._cache.clear()
    _spa_perm._pcache.clear()                          # remembered p-values too
    one, w1, c1 = timed(lambda: soft_pairwise_accuracy_test(metrics[0], metrics[1], Y))
    print(f"nlgeval, 1 pair                    : {w1:8.2f} s wall {c1:8.2f} s CPU   "
          f"ratio {10 * c0 / c1:6.1f}x (CPU)")
    _, w2, c2 = timed(lambda: soft_pairwise_accuracy_test(metrics[0], metrics[1], Y))
    print(f"nlgeval, same pair, other criterion: {w2:8.2f} s wall {c2:8.2f} s CPU")
    _spa_perm._cache.clear()
    _spa_perm._pcache.clear()                          # remembered p-values too
    pairs = [(a, b) for a in range(N_METRICS) for b in range(a + 1, N_METRICS)]

    def all_pairs() -> list[Any]:
        _spa_perm.prime_pairs(metrics, Y, n_resamples=K, seed=0, spa_permutations=K,
                              spa_seed=0)
        return [soft_pairwise_accuracy_test(metrics[a], metrics[b], Y) for a, b in pairs]

    res, w3, c3 = timed(all_pairs)
    n = len(pairs)
    print(f"nlgeval, all {n} pairs               : {w3:8.2f} s wall {c3:8.2f} s CPU   "
          f"({c3 / n:.2f} s CPU per pair, ratio {10 * c0 / (c3 / n):6.1f}x)")
    same = (np.array_equal(sa, one.draws_a[:100]) and np.array_equal(sb, one.draws_b[:100])
            and np.array_equal(res[0].draws_a, one.draws_a)
            and np.array_equal(res[0].draws_b, one.draws_b))
    print(f"same draws every way: {same}; load average {os.getloadavg()[0]:.2f} at the end")
    return 0 if same else 1


if __name__ == "__main__":
    from nlgeval.parallel import single_blas_thread

    with single_blas_thread():  # as `nlgeval validate` runs its criteria (threads spin)
        raise SystemExit(main())
