"""Benchmark: Kendall's point p-value from nlgeval's pair counts vs ``scipy.stats.kendalltau``.

``correlation(x, y, "kendall")`` took its p-value from ``scipy.stats.kendalltau(x, y).pvalue``,
which counts the pairs (its own sorts and merge count) behind scipy's per-call wrappers;
:func:`nlgeval.correlation.coefficients.kendall_pvalue` takes the same number (bit for bit,
tests/test_kendall_pvalue.py) from the tau kernel's pair counts and the tie-group
sizes, by scipy's formulas (the exact distribution, Kendall 1970, or the tie-corrected normal
approximation, Kendall 1945). Sizes: a system level (16 systems), one item's systems, a
WebNLG segment level (16 x 178 = 2,848 outputs) and a 50,000-output one; without ties and with
many (scores rounded to a 1-5 scale). ``correlation`` uses the pair counts only up to
``KENDALL_COUNTS_MAX`` pairs, where they are faster. Prints CPU microseconds per call
(``time.process_time``, best of 5 repeats), ``ratio = scipy / nlgeval`` (> 1: nlgeval
faster) and the machine load.

    .venv/bin/python benchmarks/bench_kendall_pvalue.py
"""

from __future__ import annotations

import os
import time
import warnings

import numpy as np
from scipy import stats

from nlgeval.correlation.coefficients import KENDALL_COUNTS_MAX, kendall_pvalue


def _per_call(fn, calls: int) -> float:
    best = np.inf
    for _ in range(5):
        t0 = time.process_time()
        for _ in range(calls):
            fn()
        best = min(best, (time.process_time() - t0) / calls)
    return best * 1e6


def main() -> None:
    rng = np.random.default_rng(0)
    warnings.simplefilter("ignore")
    kendall_pvalue(np.arange(5.0), np.arange(5.0)[::-1])  # compile / load the kernel
    print(f"load average at start: {os.getloadavg()[0]:.1f}")
    print(f"{'n':>7} {'ties':>5} {'scipy us':>10} {'nlgeval us':>11} {'ratio':>6}  same")
    for n in (8, 16, 60, 200, 400, 800, 2848, 50_000):
        for ties in (False, True):
            x = rng.normal(size=n)
            y = x + rng.normal(size=n)
            if ties:
                x, y = np.clip(np.round(3 + x), 1, 5), np.clip(np.round(3 + y), 1, 5)
            calls = max(3, 200_000 // n)
            ref = stats.kendalltau(x, y).pvalue
            same = kendall_pvalue(x, y) == ref
            t_scipy = _per_call(lambda: stats.kendalltau(x, y).pvalue, calls)  # noqa: B023
            t_ours = _per_call(lambda: kendall_pvalue(x, y), calls)  # noqa: B023
            print(f"{n:>7} {str(ties):>5} {t_scipy:>10.1f} {t_ours:>11.1f} "
                  f"{t_scipy / t_ours:>6.2f}  {same}")
    print(f"correlation() takes the p-value from kendall_pvalue up to n = {KENDALL_COUNTS_MAX} "
          "and from scipy beyond (the tau kernel's pair count is the slower one there)")
    print(f"load average at end: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
