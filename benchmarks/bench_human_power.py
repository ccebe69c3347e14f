"""Benchmark: power by simulation (``nlgeval plan power``) -- vectorised vs one data set at a time.

Run: ``.venv/bin/python benchmarks/bench_human_power.py``

Workload: one grid cell of a typical plan, 40 items x 3 raters per output, 1-7 Likert ratings,
Wilcoxon signed-rank on per-item means, 1000 simulated experiments. The vectorised version draws
all experiments as one array and runs scipy's test along an axis; the loop version builds and
tests one experiment at a time (the obvious implementation). Both use the same model; the script
checks that their power estimates agree within Monte Carlo error before printing the ratio.
"""

from __future__ import annotations

import time

import numpy as np
from scipy import stats

from nlgeval.human.power import VarianceComponents, simulate_power

VC = VarianceComponents(rater=0.3, item=0.3, residual=0.9, mean=4.0)
EFFECT, N_ITEMS, K, N_SIMS = 0.4, 40, 3, 1000


def loop_version(seed: int) -> float:
    rng = np.random.default_rng(seed)
    hits = 0
    for _ in range(N_SIMS):
        u = rng.normal(0, np.sqrt(VC.rater), K)
        diffs = []
        for _i in range(N_ITEMS):
            v = rng.normal(0, np.sqrt(VC.item))
            a = np.clip(np.rint(VC.mean + EFFECT / 2 + v + u + rng.normal(0, np.sqrt(VC.residual),
                                                                           K)), 1, 7)
            b = np.clip(np.rint(VC.mean - EFFECT / 2 + v + u + rng.normal(0, np.sqrt(VC.residual),
                                                                           K)), 1, 7)
            diffs.append(a.mean() - b.mean())
        d = np.array(diffs)
        if (d != 0).any() and stats.wilcoxon(d, zero_method="wilcox").pvalue < 0.05:
            hits += 1
    return hits / N_SIMS


def main() -> None:
    t0 = time.perf_counter()
    fast = simulate_power(EFFECT, VC, items=(N_ITEMS,), raters_per_item=(K,), test="wilcoxon",
                          scale=(1, 7), n_sims=N_SIMS, seed=1)
    t_fast = time.perf_counter() - t0
    t0 = time.perf_counter()
    slow = loop_version(2)
    t_slow = time.perf_counter() - t0
    p_fast = float(fast.table["power"].iloc[0])
    se = np.sqrt(p_fast * (1 - p_fast) / N_SIMS) * np.sqrt(2)
    assert abs(p_fast - slow) < 4 * se + 1e-9, (p_fast, slow)
    print(f"power: vectorised {p_fast:.3f}, loop {slow:.3f} (MC SE of the difference {se:.3f})")
    print(f"vectorised {t_fast * 1000:.0f} ms, loop {t_slow * 1000:.0f} ms, "
          f"speed-up x{t_slow / t_fast:.0f}")


if __name__ == "__main__":
    main()
