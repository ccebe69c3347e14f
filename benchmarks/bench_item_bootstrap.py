"""Benchmark: the item- and system-level bootstrap of the rank coefficients, compiled kernels
vs the array code (issue 26).

``nlgeval validate`` takes a percentile bootstrap (Deutsch, Dror & Roth 2021; 1,000 resamples
of systems and items) of every metric x criterion x level x coefficient. This script builds a
criterion shaped like the metric zoo of ``bench_metric_zoo.py`` (11 systems x 100 items, human
means on a 1-5 scale with ties, ``--metrics`` metrics, LLM-judge-like integer scores, some with
missing cells) and times, per metric, the bootstrap distribution two ways on the same indices:

* the array code (the obvious alternative, and what nlgeval ran before): every resample
  gathered as a (B, S, I) stack and ``level_statistic`` of it (item level); the resampled
  system means from the gathered stack and ``batch_correlation`` of their drawn rows (system
  level Spearman);
* the compiled kernels ``validate`` now runs (``bootstrap_distribution``).

It prints the CPU time per metric (``time.process_time``: all threads of the process), the
ratio, whether every resample's coefficient is the same float (``np.array_equal``) and the load
average::

    python benchmarks/bench_item_bootstrap.py [--metrics 24] [--resamples 1000]
"""

from __future__ import annotations

import argparse
import os
import warnings
from functools import partial

import numpy as np
from _common import cpu_timed, zoo_criterion

from nlgeval.correlation.bootstrap import bootstrap_distribution, resample_indices
from nlgeval.correlation.coefficients import batch_correlation
from nlgeval.correlation.levels import level_statistic


def _means(Z: np.ndarray, ok: np.ndarray, ii: np.ndarray) -> np.ndarray:
    """The previous resampled system means: the gathered (B, S, I) stack summed over items."""
    rows = np.arange(Z.shape[0])[None, :, None]
    Zz = np.where(ok, Z, 0.0)
    cnt = ok[rows, ii[:, None, :]].sum(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        mz = Zz[rows, ii[:, None, :]].sum(axis=-1) / cnt
    return np.where(cnt > 0, mz, np.nan)


def _array_code(X: np.ndarray, Y: np.ndarray, level: str, coef: str, si: np.ndarray,
                ii: np.ndarray, human_means: np.ndarray) -> np.ndarray:
    """The previous code: gathered (B, S, I) stacks in chunks of 200 resamples (item level);
    the metric's resampled system means and their drawn rows ranked by ``batch_correlation``
    (system level; the human means computed once per criterion, as the previous cache did)."""
    if level == "system":
        ok = np.isfinite(X) & np.isfinite(Y)
        r = np.arange(si.shape[0])[:, None]
        hm = human_means if ok.all() else _means(Y, ok, ii)  # on the metric's cells
        return batch_correlation(_means(X, ok, ii)[r, si], hm[r, si], coef)
    out = np.empty(si.shape[0])
    for b0 in range(0, si.shape[0], 200):
        s, i = si[b0:b0 + 200, :, None], ii[b0:b0 + 200, None, :]
        out[b0:b0 + 200] = level_statistic(X[s, i], Y[s, i], "item", coef)
    return out


def _timed(fn, metrics: list[np.ndarray]) -> tuple[float, list[np.ndarray]]:
    fn(metrics[0] + 1.0)  # compile / warm up (another matrix: nothing remembered for the rest)
    t, out = cpu_timed(lambda: [fn(m) for m in metrics])
    return t / len(metrics), out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--metrics", type=int, default=24)
    ap.add_argument("--resamples", type=int, default=1000)
    args = ap.parse_args()
    warnings.simplefilter("ignore", RuntimeWarning)
    human, metrics = zoo_criterion(args.metrics)
    si, ii = resample_indices(11, 100, args.resamples, "both", 0)
    # the human means of the previous system-level code (every metric complete where rated)
    hm = _means(human, np.isfinite(human), ii)
    print(f"11 systems x 100 items, {args.metrics} metrics, {args.resamples} resamples (both)")
    print(f"load average before: {os.getloadavg()}")
    for level, coef in [("item", "spearman"), ("item", "kendall"), ("item", "kendall_c"),
                        ("system", "spearman")]:
        t_old, old = _timed(partial(_array_code, Y=human, level=level, coef=coef, si=si, ii=ii,
                                    human_means=hm), metrics)
        t_new, new = _timed(partial(bootstrap_distribution, Y=human, level=level,
                                    coefficient=coef, sys_idx=si, item_idx=ii), metrics)
        same = all(np.array_equal(a, b, equal_nan=True) for a, b in zip(old, new, strict=True))
        print(f"{level:6s} {coef:9s}: array code {1e3 * t_old:7.2f} ms, compiled "
              f"{1e3 * t_new:6.2f} ms CPU per metric ({t_old / t_new:5.1f}x); identical: {same}")
    print(f"load average after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
