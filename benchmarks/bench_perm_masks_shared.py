"""Benchmark: PERM-BOTH swap masks drawn once per process and shared, vs drawn per request.

``iter_swap_masks`` keeps up to 16 MiB of masks per (shape, scheme, seed) and hands out copies,
so the segment, system and item levels of a comparison (Deutsch, Dror & Roth 2021's PERM-BOTH)
and the criteria of a study draw their masks once. This script runs the correlation stage of
``nlgeval validate webnlg2020 --statistics pearson,spearman,kendall,wmt24`` (5 criteria,
serially, in this process) with the store on and off (``_KEPT_MASK_CELLS = 0``: every request
draws, as before), alternating, and prints the CPU seconds of each run (``time.process_time``),
the wall time, the load average and ``ratio = off / on``; the tables are the same either way
(tests/test_perm_mask_sharing.py).

    NLGEVAL_DATA=DIR .venv/bin/python benchmarks/bench_perm_masks_shared.py [--repeats 3]
"""

from __future__ import annotations

import argparse
import os
import time
import warnings

from _common import corpora_dir


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    if corpora_dir():
        os.environ.setdefault("NLGEVAL_DATA", corpora_dir() or "")
    warnings.simplefilter("ignore")
    from nlgeval.corpora import load_corpus
    from nlgeval.correlation.permutation import draws
    from nlgeval.report.prepare import prepare_scores
    from nlgeval.report.settings import ValidationSettings
    from nlgeval.report.tasks import correlate_criteria

    corpus = load_corpus("webnlg2020")
    settings = ValidationSettings(statistics=["pearson", "spearman", "kendall", "wmt24"],
                                  backend="serial")
    prep = prepare_scores(corpus, settings)
    correlate_criteria(prep, settings)  # compile / load the kernels once
    cpu: dict[str, list[float]] = {"off": [], "on": []}
    for _ in range(args.repeats):
        for mode in ("off", "on"):
            draws._kept.clear()
            draws._KEPT_MASK_CELLS = 0 if mode == "off" else 1 << 24
            t0, w0 = time.process_time(), time.perf_counter()
            correlate_criteria(prep, settings)
            cpu[mode].append(time.process_time() - t0)
            print(f"masks {mode:>3}: cpu {cpu[mode][-1]:.2f} s, wall "
                  f"{time.perf_counter() - w0:.2f} s, load {os.getloadavg()[0]:.1f}")
    off, on = sum(cpu["off"]) / len(cpu["off"]), sum(cpu["on"]) / len(cpu["on"])
    print(f"mean cpu: drawn per request {off:.2f} s, shared {on:.2f} s, ratio {off / on:.3f}")


if __name__ == "__main__":
    main()
