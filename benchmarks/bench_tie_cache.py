"""Tie calibration once per metric (issue 31): what a study's acc_eq statistics cost with the
search remembered by content against searching again in every acc_eq comparison (as before),
and how one search grows with the number of cells (grouping "segment": one pooled group).

For each size (systems x items; 3 metrics, human scores on a 0-100 scale in steps of 1, so
many human ties as in MQM/DA data) it times, with a cleared cache: acc_eq of the 3 metrics and
the 3 acc_eq permutation tests between them (each re-calibrating both metrics before), then the
same with the cache; and prints the growth exponent of one search between sizes.

    .venv/bin/python benchmarks/bench_tie_cache.py [--sizes 10x250,10x500,10x1000]
"""

from __future__ import annotations

import argparse
import math
import os
import time

import numpy as np

import nlgeval.correlation.kendall.tie_search as ts
from nlgeval.correlation.kendall.tie_calibration import acc_eq_permutation_test, tie_calibration


def study(Xs: list[np.ndarray], Y: np.ndarray, remember: bool) -> tuple[float, float]:
    """Seconds for the acc_eq statistics of a study, and for one search."""
    ts._SEARCHES.clear()
    t0 = time.perf_counter()
    tie_calibration(Xs[0], Y, "segment")
    one = time.perf_counter() - t0
    for X in Xs[1:]:
        tie_calibration(X, Y, "segment")
    for a in range(len(Xs)):
        for b in range(a + 1, len(Xs)):
            if not remember:
                ts._SEARCHES.clear()
            acc_eq_permutation_test(Xs[a], Xs[b], Y, "segment", n_resamples=100)
    return time.perf_counter() - t0, one


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="10x250,10x500,10x1000")
    args = ap.parse_args()
    print(f"load average {os.getloadavg()[0]:.1f}")
    print("systems x items | cells | one search | study, searching again | study, remembered "
          "| ratio")
    warm = np.random.default_rng(1).normal(size=(4, 10))
    study([warm, warm + 1.0], np.round(warm * 3), remember=True)  # numba compiles here
    prev = None
    for spec in args.sizes.split(","):
        S, n = (int(v) for v in spec.split("x"))
        rng = np.random.default_rng(0)
        q = rng.normal(size=(S, n))
        Y = np.round(50 + 10 * (q + rng.normal(size=q.shape)))
        Xs = [np.round(q + k * rng.normal(size=q.shape), 3) for k in (0.5, 1.0, 2.0)]
        old, one = study(Xs, Y, remember=False)
        new, _ = study(Xs, Y, remember=True)
        print(f"{S} x {n:,} | {S * n:,} | {one:.2f} s | {old:.2f} s | {new:.2f} s | "
              f"{old / new:.1f}x", flush=True)
        if prev is not None:
            k = math.log(one / prev[1]) / math.log(S * n / prev[0])
            print(f"  growth of one search: n^{k:.2f}")
        prev = (S * n, one)


if __name__ == "__main__":
    main()
