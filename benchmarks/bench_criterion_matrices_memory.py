"""Benchmark: ``criterion_matrices``' memory (stage 1 of the validation study) per scored output.

Builds a text-free study in memory (default 20 systems x 50,000 items = 1 M outputs, 3
metrics, one criterion; system and item names as pandas' text columns, as ``prepare_scores``
leaves them), then measures with ``tracemalloc`` (numpy's buffers; pandas' Arrow strings are
not traced) the peak inside one call, the result it keeps and the transient (peak - result),
in bytes per scored output, for the current code and for the previous one (kept below: every
metric's codes alive into the next metric's coding, ``sign * X``), and prints ``ratio =
previous transient / current transient`` with the machine load. The matrices are compared
bit for bit.

    .venv/bin/python benchmarks/bench_criterion_matrices_memory.py [--items 50000]
"""

from __future__ import annotations

import argparse
import os
import time
import tracemalloc

import numpy as np
import pandas as pd

from nlgeval.correlation.levels import frame_codes, frame_codes_by, score_matrices
from nlgeval.errors import InputError
from nlgeval.report import stages
from nlgeval.report.binding import metrics_for
from nlgeval.report.prepare import PreparedScores


def previous_criterion_matrices(prep: PreparedScores, criterion: str) -> stages.CriterionMatrices:
    """criterion_matrices before this change (the reference of the comparison)."""
    hcrit = prep.human.loc[prep.human["criterion"] == criterion, ["system", "item", "score"]]
    metrics = metrics_for(criterion, prep.metrics, prep.bound)
    try:
        hcodes = frame_codes(hcrit, "human")
    except InputError:
        hcodes = None
    one_pass = bool(metrics) and len(prep.segments) <= stages.ONE_PASS_ROWS
    by = frame_codes_by(prep.segments, "metric", metrics) if one_pass else {}
    oriented, missing = {}, {}
    human = None
    for metric in metrics:
        mcodes = by.get(metric)
        if mcodes is None:
            seg = prep.segments
            mcodes = frame_codes(seg.loc[seg["metric"] == metric, ["system", "item", "score"]])
        mats = mcodes.matrices(hcodes or frame_codes(hcrit, "human"), prep.systems,
                               prep.rated_items)
        sign = 1.0 if prep.higher_is_better.get(metric, True) else -1.0
        oriented[metric] = sign * mats.metric
        missing[metric] = mats.missing
        human = mats.human
    if human is None:
        human = score_matrices(prep.segments.iloc[:0][["system", "item", "score"]], hcrit,
                               systems=prep.systems, items=prep.rated_items).human
    return stages.CriterionMatrices(criterion, oriented, human, missing)


def study(S: int, n_items: int, n_metrics: int) -> PreparedScores:
    rng = np.random.default_rng(4)
    systems = [f"s{k}" for k in range(S)]
    items = [f"i{j:07d}" for j in range(n_items)]
    sys_col = pd.Series(np.repeat(systems, n_items), dtype="str")
    item_col = pd.Series(np.tile(items, S), dtype="str")
    h = rng.normal(size=S * n_items).round(3)
    seg = pd.concat([pd.DataFrame({"metric": f"m{k}", "system": sys_col, "item": item_col,
                                   "score": (h + rng.normal(scale=k + 1, size=h.size)).round(4)})
                     for k in range(n_metrics)], ignore_index=True)
    seg["metric"] = seg["metric"].astype("category")
    human = pd.DataFrame({"system": sys_col, "item": item_col, "criterion": "c0", "score": h})
    metrics = [f"m{k}" for k in range(n_metrics)]
    hib = {m: k % 2 == 0 for k, m in enumerate(metrics)}  # one lower-is-better metric
    return PreparedScores(seg, pd.DataFrame(), metrics, {}, hib, [], [], systems, [], human,
                          items, ["c0"])


def measure(fn, prep: PreparedScores) -> tuple[int, int, float, stages.CriterionMatrices]:
    fn(prep, "c0")  # warm
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        t0 = time.process_time()
        cm = fn(prep, "c0")
        cpu = time.process_time() - t0
        kept, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return peak - base, kept - base, cpu, cm


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--systems", type=int, default=20)
    ap.add_argument("--items", type=int, default=50_000)
    ap.add_argument("--metrics", type=int, default=3)
    args = ap.parse_args()
    prep = study(args.systems, args.items, args.metrics)
    n = args.systems * args.items
    print(f"{args.systems} x {args.items} = {n:,} outputs, {args.metrics} metrics, "
          f"{len(prep.segments):,} score rows; load {os.getloadavg()[0]:.1f}")
    results = {}
    for name, fn in (("previous", previous_criterion_matrices),
                     ("current", stages.criterion_matrices)):
        peak, kept, cpu, cm = measure(fn, prep)
        results[name] = (peak - kept, cm)
        print(f"{name:>8}: peak {peak / n:6.1f} B/output, result {kept / n:5.1f}, transient "
              f"{(peak - kept) / n:6.1f} B/output (traced), cpu {cpu:.2f} s")
    old, new = results["previous"][1], results["current"][1]
    same = old.human.tobytes() == new.human.tobytes() and all(
        old.oriented[m].tobytes() == new.oriented[m].tobytes() for m in old.oriented)
    ratio = results["previous"][0] / results["current"][0]
    print(f"ratio (previous / current transient) {ratio:.3f}; matrices identical: {same}; "
          f"load {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
