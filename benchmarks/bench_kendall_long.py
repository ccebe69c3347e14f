"""Benchmark: Kendall's tau on long vectors, nlgeval's pair count vs ``scipy.stats.kendalltau``.

MTME (mt-metrics-eval) computes Kendall's tau with ``scipy.stats.kendalltau``: a stable sort by
(x, y), then a merge-sort count of the discordant pairs (Knight 1966), ties from run lengths.
Segment-level Kendall of a study with millions of scored outputs counts the pairs of vectors
that long once per metric and criterion. nlgeval's paths, all on the same pair counts:

* ``kernel``: ``_vector_counts`` with eps = 0 (C, D and the three tie counts), the step every
  tau of nlgeval takes; ``previous``: the count it used before for vectors beyond 40 values
  (two numba argsorts, tie sweeps, a Fenwick tree with a binary search per element;
  ``kernels._counts_sorted``, unchanged), which still counts the pairs when eps > 0;
* ``tau_b``: ``batch_correlation(x, y, "kendall")``, the statistic of ``correlation`` and of the
  batch paths (drops missing pairs, counts, tau-b);
* ``p``: ``kendall_pvalue`` (scipy's p-value from nlgeval's counts and tie-group sizes, the
  same float), a second count today;
* ``corr``: ``correlation(x, y, "kendall")``, the public point statistic (tau-b and p-value):
  beyond ``KENDALL_COUNTS_MAX`` pairs it takes the p-value from ``scipy.stats.kendalltau``
  itself, so it costs scipy's call plus the tau-b.

Data: ``continuous`` (metric and human both continuous), ``ties`` (both on a 5-point scale) and
``mixed`` (continuous metric, 5-point human scale). Prints CPU milliseconds per call
(``time.process_time``, best of 3 repeats), ratios ``scipy / tau_b`` and ``scipy / p`` (> 1:
nlgeval faster),
whether the counts equal the previous kernel's and tau-b / the p-value equal scipy's (``==``),
the machine load, and where the time goes at two sizes.

    .venv/bin/python benchmarks/bench_kendall_long.py            # n = 1e3 ... 1e6
    .venv/bin/python benchmarks/bench_kendall_long.py 1000 50000 # chosen sizes
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable

import numpy as np
from numba import njit
from scipy import stats

from nlgeval.correlation.coefficients import batch_correlation, correlation, kendall_pvalue
from nlgeval.correlation.kendall._exact_counts import _merge_count, _order_keys, _radix_sort
from nlgeval.correlation.kendall.kernels import _counts_sorted, _vector_counts


@njit
def _argsorts(x: np.ndarray, y: np.ndarray) -> int:
    """The two stable argsorts the previous count starts with (numba's merge sort)."""
    ox = np.argsort(x, kind="mergesort")
    oy = ox[np.argsort(y[ox], kind="mergesort")]
    return int(oy[0])


SIZES = (1_000, 10_000, 50_000, 200_000, 1_000_000)


def _ms(fn: Callable[[], object], n: int) -> float:
    calls = max(1, 100_000 // n)
    fn()
    best = np.inf
    for _ in range(3):
        t0 = time.process_time()
        for _ in range(calls):
            fn()
        best = min(best, (time.process_time() - t0) / calls)
    return best * 1e3


def _data(rng: np.random.Generator, n: int, kind: str) -> tuple[np.ndarray, np.ndarray]:
    x = rng.normal(size=n)
    y = x + rng.normal(size=n)
    if kind in ("ties", "mixed"):
        y = np.clip(np.round(3 + y), 1, 5)
    if kind == "ties":
        x = np.clip(np.round(3 + x), 1, 5)
    return x, y


def _row(n: int, kind: str, x: np.ndarray, y: np.ndarray) -> None:
    out = np.zeros(8, dtype=np.int64)
    _vector_counts(x, y, 0.0, 40, False, out)
    same = list(out[:5]) == list(_counts_sorted(x, y, 0.0))
    ref = stats.kendalltau(x, y)
    same &= float(batch_correlation(x, y, "kendall")) == ref.statistic
    same &= kendall_pvalue(x, y) == ref.pvalue
    t_scipy = _ms(lambda: stats.kendalltau(x, y), n)
    t_kernel = _ms(lambda: _vector_counts(x, y, 0.0, 40, False, out), n)
    t_tau = _ms(lambda: batch_correlation(x, y, "kendall"), n)
    t_p = _ms(lambda: kendall_pvalue(x, y), n)
    t_corr = _ms(lambda: correlation(x, y, "kendall"), n)
    t_prev = _ms(lambda: _counts_sorted(x, y, 0.0), n)
    print(f"{n:>9} {kind:>10} {t_scipy:>9.3f} {t_prev:>9.3f} {t_kernel:>9.3f} {t_tau:>9.3f} "
          f"{t_p:>9.3f} {t_corr:>9.3f} {t_scipy / t_tau:>6.2f} {t_scipy / t_p:>6.2f} "
          f"{str(same):>5}")


def _where(n: int, rng: np.random.Generator) -> None:
    x, y = _data(rng, n, "continuous")
    kx, ky = _order_keys(x), _order_keys(y)
    kb, pb, st = np.empty(n, np.int64), np.empty(n, np.int64), np.empty(n + 1, np.int64)
    sx, sy = kx.copy(), ky.copy()
    _radix_sort(sx, sy, kb, pb)
    t_all = _ms(lambda: _counts_sorted(x, y, 0.0), n)
    t_sort = _ms(lambda: _argsorts(x, y), n)
    print(f"  n = {n:,} continuous, previous count {t_all:.2f} ms: two numba argsorts "
          f"{t_sort:.2f} ms, tie sweeps + Fenwick tree (binary search and a random tree walk "
          f"per element) {t_all - t_sort:.2f} ms")
    t_keys = _ms(lambda: (_order_keys(x), _order_keys(y)), n)
    t_radix = _ms(lambda: _radix_sort(kx.copy(), ky.copy(), kb, pb), n)
    t_merge = _ms(lambda: _merge_count(sy.copy(), kb, st), n)
    t_new = _ms(lambda: _vector_counts(x, y, 0.0, 40, False, np.zeros(8, np.int64)), n)
    print(f"  n = {n:,} continuous, new count {t_new:.2f} ms: order keys {t_keys:.2f} ms, "
          f"radix sort by x carrying y {t_radix:.2f} ms, merge count {t_merge:.2f} ms "
          f"(numpy's own argsort of x: {_ms(lambda: np.argsort(x), n):.2f} ms)")


def main() -> None:
    sizes = tuple(int(a) for a in sys.argv[1:]) or SIZES
    rng = np.random.default_rng(0)
    x, y = _data(rng, 1000, "mixed")
    batch_correlation(x, y, "kendall")  # load / compile the kernels
    _counts_sorted(x, y, 0.0)
    _argsorts(x, y)
    print(f"load average at start: {' '.join(f'{v:.1f}' for v in os.getloadavg())}")
    print("CPU ms per call; r_tau = scipy / tau_b, r_p = scipy / p")
    print(f"{'n':>9} {'data':>10} {'scipy':>9} {'previous':>9} {'kernel':>9} {'tau_b':>9} "
          f"{'p':>9} {'corr':>9} {'r_tau':>6} {'r_p':>6} {'same':>5}")
    for n in sizes:
        for kind in ("continuous", "ties", "mixed"):
            _row(n, kind, *_data(rng, n, kind))
    print("where the time goes:")
    for n in (50_000, 1_000_000):
        if n <= max(sizes):
            _where(n, rng)
    print(f"load average at end: {' '.join(f'{v:.1f}' for v in os.getloadavg())}")


if __name__ == "__main__":
    main()
