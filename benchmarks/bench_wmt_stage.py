"""Benchmark: the WMT24 statistics stage of ``nlgeval validate`` on WebNLG 2020 (issue 29).

``--statistics pearson,spearman,kendall,wmt24`` adds, per criterion, soft pairwise accuracy
(Thompson et al. 2024) and item-grouped acc_eq (Deutsch, Foster & Freitag 2023) with PERM-BOTH
tests between every pair of the 8 default metrics (Deutsch, Dror & Roth 2021). This prints,
with CPU time (user+sys of the process) next to wall time and the load average:

* the draws of acc_eq's pairs test (Binomial(n, 1/2) per item and draw, 1,000 draws, on the
  agreement counts of two WebNLG metrics): numpy's ``Generator.binomial`` (the obvious way,
  and the previous code) against the compiled inversion sampler fed numpy's uniforms, checking
  that both give the same integers;
* the whole WMT stage (values, PERM-BOTH tests, clusters, leaderboards) criterion by
  criterion, in one process as the serial backend runs it: the first criterion computes the
  SPA sign-flip counts of the 28 metric pairs, the others reuse them.

    NLGEVAL_DATA=/path/to/corpora .venv/bin/python benchmarks/bench_wmt_stage.py
"""

from __future__ import annotations

import importlib
import os
import time
import warnings

import numpy as np

from nlgeval.corpora import load_corpus
from nlgeval.parallel import single_blas_thread
from nlgeval.report.prepare import prepare_scores
from nlgeval.report.settings import ValidationSettings
from nlgeval.report.stages import criterion_matrices, meta_evaluation

tc = importlib.import_module("nlgeval.correlation.kendall.tie_calibration")


def _clock() -> tuple[float, float]:
    return time.perf_counter(), time.process_time()


def binomial_draws(X_a: np.ndarray, X_b: np.ndarray, Y: np.ndarray) -> None:
    """numpy's sampler vs the compiled one on the item-level counts of one metric pair."""
    from nlgeval.correlation.kendall.results import build_groups
    from nlgeval.correlation.kendall.tie_search import group_weights

    ok = np.isfinite(X_a) & np.isfinite(X_b) & np.isfinite(Y)
    H = np.where(ok, Y, np.nan)
    ga, gb = (build_groups(np.where(ok, X, np.nan), H, "item") for X in (X_a, X_b))
    agree = tc._agreement(ga, gb, 0.0, 0.0)
    w = group_weights(ga.n_pairs)[0]
    active = (agree[:, 2] + agree[:, 3]) > 0
    args = (agree[active, 2], agree[active, 3], w[active], 1000, 0)
    reps = 20
    times = {}
    for name, compiled in (("numpy Generator.binomial", False), ("compiled sampler", True)):
        tc._drawn_totals(*args, compiled)
        t, c = _clock()
        for _ in range(reps):
            out = tc._drawn_totals(*args, compiled)
        times[name] = ((time.perf_counter() - t) / reps, (time.process_time() - c) / reps)
        print(f"  {name:26s} {times[name][0] * 1e3:7.2f} ms wall {times[name][1] * 1e3:7.2f} ms "
              f"CPU per test ({int(active.sum())} items x 1,000 draws)")
        if compiled:
            assert np.array_equal(out, tc._drawn_totals(*args, False)), "draws differ"
    ratio = times["numpy Generator.binomial"][1] / times["compiled sampler"][1]
    print(f"  same draws; numpy / compiled (CPU): {ratio:.1f}x")


def main() -> int:
    warnings.simplefilter("ignore")
    settings = ValidationSettings(statistics=["pearson", "spearman", "kendall", "wmt24"])
    prep = prepare_scores(load_corpus("webnlg2020"), settings)
    settings = settings.for_study(len(prep.criteria), len(prep.systems) * len(prep.rated_items),
                                  len(prep.metrics))
    print(f"WebNLG 2020: {len(prep.systems)} systems x {len(prep.rated_items)} items, "
          f"{len(prep.metrics)} metrics, {len(prep.criteria)} criteria; "
          f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    first = criterion_matrices(prep, prep.criteria[0])
    names = list(first.oriented)
    print("acc_eq pairs test, the draws:")
    binomial_draws(first.oriented[names[0]], first.oriented[names[1]], first.human)
    print("WMT stage (SPA + acc_eq values, PERM-BOTH tests, clusters, leaderboards):")
    total = [0.0, 0.0]
    with single_blas_thread():
        for crit in prep.criteria:
            cm = criterion_matrices(prep, crit)
            t, c = _clock()
            meta_evaluation(cm, prep, settings)
            wall, cpu = time.perf_counter() - t, time.process_time() - c
            total[0] += wall
            total[1] += cpu
            print(f"  {crit:14s} {wall:6.2f} s wall {cpu:6.2f} s CPU")
    print(f"  all criteria   {total[0]:6.2f} s wall {total[1]:6.2f} s CPU; "
          f"load average {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
