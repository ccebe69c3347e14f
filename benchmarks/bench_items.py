"""Benchmark: the number-of-items study, straightforward vs fast, on the same slice.

Straightforward: for every replication, resample the individual ratings (``rng.choice``), then
call the public ``nlgeval.items.disc_anova`` (numpy, vectorised over its ``nboot`` draws) and
compare its p-value with alpha. Fast: ``nlgeval.items.study.run_study`` (category counts,
compiled exact samplers, exact integer ties, exact + certified early stopping), serial here so
both run on one core. The slice is the Positive profile, both methods, sizes 2, 22, ..., 242.

A second baseline is a loop port of WRS2's discANOVA (one bootstrap draw per iteration, as the
R code does), timed on a few replications only because it is slow.

Prints the per-replication times, the ratios, the projected time of the full study (8
distributions x 2 methods x sizes 2..245 x 1,000 replications, nboot = 500) on 2 cores, and
checks that both give the same rejection shares within Monte Carlo error.

    .venv/bin/python benchmarks/bench_items.py [--naive-reps 60] [--fast-reps 1000]

Timings on a machine shared with other jobs are pessimistic; the ratio is measured in one run.
"""

from __future__ import annotations

import argparse
import math
import os
import time

import numpy as np

from nlgeval.items.discanova import disc_anova
from nlgeval.items.profiles import paper_profiles
from nlgeval.items.study import run_study, warm_up

SIZES = list(range(2, 246, 20))
FULL_TASKS = 8 * 2 * 244


def naive(counts: np.ndarray, sizes, reps: int, nboot: int, alpha: float, seed: int):
    ratings = np.repeat(np.arange(1, len(counts) + 1), counts)
    rng = np.random.default_rng(seed)
    shares = {}
    for method in ("bootstrap", "rwor"):
        for s in sizes:
            rejections = 0
            for _ in range(reps):
                sub = rng.choice(ratings, size=s, replace=(method == "bootstrap"))
                res = disc_anova([ratings, sub], n_resamples=nboot, seed=rng.integers(2**32))
                rejections += res.pvalue < alpha
            shares[(method, s)] = rejections / reps
    return shares


def wrs2_port_pvalue(groups: list[np.ndarray], nboot: int, rng: np.random.Generator) -> float:
    """A line-by-line Python port of WRS2::discANOVA: one bootstrap draw per loop iteration.

    This is the "done naively (or in R)" implementation: R's discANOVA loops over ``nboot``
    draws, resampling individual values with ``sample`` each time.
    """
    values = np.unique(np.concatenate(groups))

    def stat(gs: list[np.ndarray]) -> float:
        c = np.array([[np.mean(g == v) for g in gs] for v in values])
        return float(np.sum(np.var(c, axis=1, ddof=1)))

    t_obs = stat(groups)
    h = np.array([[np.mean(g == v) for g in groups] for v in values]).mean(axis=1)
    above = ties = 0
    for _ in range(nboot):
        t_b = stat([rng.choice(values, size=len(g), p=h) for g in groups])
        above += t_b > t_obs
        ties += t_b == t_obs
    return (above + 0.5 * ties) / nboot


def wrs2_port(counts: np.ndarray, sizes, reps: int, nboot: int, alpha: float, seed: int):
    ratings = np.repeat(np.arange(1, len(counts) + 1), counts)
    rng = np.random.default_rng(seed)
    for method in ("bootstrap", "rwor"):
        for s in sizes:
            for _ in range(reps):
                sub = rng.choice(ratings, size=s, replace=(method == "bootstrap"))
                wrs2_port_pvalue([ratings, sub], nboot, rng) < alpha  # noqa: B015


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--naive-reps", type=int, default=60)
    ap.add_argument("--fast-reps", type=int, default=1000)
    ap.add_argument("--wrs2-reps", type=int, default=2,
                    help="replications per (method, size) for the loop port of WRS2")
    ap.add_argument("--nboot", type=int, default=500)
    ap.add_argument("--alpha", type=float, default=0.1)
    args = ap.parse_args()
    os.environ.setdefault("NLGEVAL_QUIET", "1")
    dist = paper_profiles()[0]  # positive
    counts = np.asarray(dist.counts)
    warm_up()

    t0 = time.perf_counter()
    slow = naive(counts, SIZES, args.naive_reps, args.nboot, args.alpha, seed=1)
    t_naive = (time.perf_counter() - t0) / (2 * len(SIZES) * args.naive_reps)

    t0 = time.perf_counter()
    wrs2_port(counts, SIZES, args.wrs2_reps, args.nboot, args.alpha, seed=2)
    t_wrs2 = (time.perf_counter() - t0) / (2 * len(SIZES) * args.wrs2_reps)

    t0 = time.perf_counter()
    fast = run_study([dist], sizes=SIZES, replications=args.fast_reps, n_resamples=args.nboot,
                     alpha=args.alpha, seed=1, workers=1, backend="serial")
    t_fast = (time.perf_counter() - t0) / (2 * len(SIZES) * args.fast_reps)

    print(f"slice: profile '{dist.name}', sizes {SIZES[0]}..{SIZES[-1]} step 20, both methods, "
          f"nboot={args.nboot}, alpha={args.alpha}")
    print(f"straightforward: {t_naive * 1e3:8.3f} ms per replication ({args.naive_reps} reps)")
    print(f"fast           : {t_fast * 1e3:8.3f} ms per replication ({args.fast_reps} reps, "
          f"mean bootstrap draws {fast.curves['mean_draws'].mean():.1f} of {args.nboot})")
    print(f"WRS2 loop port : {t_wrs2 * 1e3:8.3f} ms per replication ({args.wrs2_reps} reps: "
          "one bootstrap draw per loop iteration, as R's discANOVA)")
    print(f"ratio vs vectorised disc_anova per replication: {t_naive / t_fast:8.1f}x")
    print(f"ratio vs the WRS2 loop port (target >= 100x) : {t_wrs2 / t_fast:8.1f}x")
    full_fast = t_fast * FULL_TASKS * 1000 / 2
    full_naive = t_naive * FULL_TASKS * 1000 / 2
    print(f"projected full study (8 x 2 x 244 x 1000, 2 cores): fast {full_fast / 60:.1f} min, "
          f"straightforward {full_naive / 3600:.1f} h, "
          f"WRS2 loop port {t_wrs2 * FULL_TASKS * 1000 / 2 / 86400:.1f} days")

    worst = 0.0
    pooled_slow = pooled_fast = 0.0
    for _, row in fast.curves.iterrows():
        a = row["reject_share"]
        b = slow[(row["method"], row["size"])]
        p = max((a + b) / 2, 1.0 / args.naive_reps)
        se = math.sqrt(p * (1 - p) * (1 / args.naive_reps + 1 / args.fast_reps))
        worst = max(worst, abs(a - b) / se)
        pooled_fast += a
        pooled_slow += b
    n = len(fast.curves)
    print(f"rejection shares: pooled fast {pooled_fast / n:.4f} vs straightforward "
          f"{pooled_slow / n:.4f}; largest per-size |z| = {worst:.2f}")
    p = pooled_slow / n
    se = math.sqrt(max(p * (1 - p), 1e-4) / (n * args.naive_reps))
    ok = abs(pooled_fast / n - p) <= 4 * se and worst <= 4.5
    print("agreement within Monte Carlo error:", "OK" if ok else "MISMATCH")
    if not ok:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
