"""Benchmark: item-level permutation p-values, compiled draws vs the array code (issue 26).

The item-level p-value of ``nlgeval validate`` (``item_permutation_pvalue``: 1,000 shuffles
of the metric scores within each item, the mean per-item coefficient of each) is computed
for every metric x criterion x coefficient of a study. This script builds a criterion shaped
like the metric zoo of ``bench_metric_zoo.py`` (11 systems x 100 items, human means on a 1-5
scale with ties, ``--metrics`` metrics, some with missing cells) and times, per coefficient,
the draws of all its metrics two ways on the same shuffles:

* the array code (the obvious alternative, and what nlgeval ran before): the permuted
  (draws, items, systems) stack gathered with ``take_along_axis`` and the coefficient taken
  by ``fixed_y_statistic`` with numpy, then ``np.nanmean`` over the items;
* the compiled draws ``validate`` now runs (one numba loop over the shuffle indices).

It prints the CPU time per metric (``time.process_time``: all threads of the process), the
ratio, whether every draw is the same float (``np.array_equal``), the CPU time of a whole
``item_permutation_pvalue`` call and the load average::

    python benchmarks/bench_item_permutation.py [--metrics 24] [--permutations 1000]
"""

from __future__ import annotations

import argparse
import os
import warnings
from functools import partial

import numpy as np
from _common import cpu_timed, zoo_criterion

from nlgeval.correlation import levels
from nlgeval.correlation._item_permutation import permutation_means
from nlgeval.correlation.coefficients import fixed_y_statistic
from nlgeval.correlation.levels import item_permutation_pvalue


def _packed(X: np.ndarray, Y: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    ok = (np.isfinite(X) & np.isfinite(Y)).T
    order = np.argsort(~ok, axis=1, kind="stable")
    Xc = np.take_along_axis(np.where(ok, X.T, np.nan), order, axis=1)
    Yc = np.take_along_axis(np.where(ok, Y.T, np.nan), order, axis=1)
    return Xc, Yc, np.take_along_axis(ok, order, axis=1)


def _array_code(Xc: np.ndarray, Yc: np.ndarray, coef: str, chunks: list[np.ndarray]
                ) -> np.ndarray:
    stat = fixed_y_statistic(Xc, Yc, coef)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return np.concatenate([np.nanmean(stat(p), axis=-1) for p in chunks])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--metrics", type=int, default=24)
    ap.add_argument("--permutations", type=int, default=1000)
    args = ap.parse_args()
    human, metrics = zoo_criterion(args.metrics)
    cases = [_packed(M, human) for M in metrics]
    print(f"load average at start: {os.getloadavg()[0]:.1f}")
    print(f"{'coefficient':<11} {'array code':>12} {'compiled':>10} {'ratio':>6}  "
          f"{'same draws':>10} {'item_permutation_pvalue':>24}")
    for coef in ("pearson", "spearman", "kendall", "kendall_c"):
        times, same = {"array": 0.0, "compiled": 0.0}, 0
        permutation_means(*cases[0][:2], coef, levels._permutation_chunks(
            cases[0][2], args.permutations, 0))  # compile or load the kernels
        for Xc, Yc, okc in cases:
            chunks = levels._permutation_chunks(okc, args.permutations, 0)
            t, old = cpu_timed(partial(_array_code, Xc, Yc, coef, chunks))
            times["array"] += t
            t, new = cpu_timed(partial(permutation_means, Xc, Yc, coef, chunks))
            times["compiled"] += t
            same += int(new is not None and np.array_equal(old, new))
        call, _ = cpu_timed(lambda coef=coef: [item_permutation_pvalue(
            M, human, coef, n_resamples=args.permutations, seed=0) for M in metrics])
        call /= len(metrics)
        per = {k: v / len(cases) * 1e3 for k, v in times.items()}
        print(f"{coef:<11} {per['array']:>9.2f} ms {per['compiled']:>7.2f} ms "
              f"{per['array'] / per['compiled']:>5.1f}x  {same:>4} of {len(cases):<3} "
              f"{call * 1e3:>21.2f} ms")
    print(f"load average at end: {os.getloadavg()[0]:.1f} (CPU times per metric, "
          f"{args.permutations} permutations, 11 systems x 100 items)")


if __name__ == "__main__":
    main()
