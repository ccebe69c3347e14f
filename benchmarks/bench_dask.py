"""Benchmark: the number-of-items study on a Dask LocalCluster with 1 and 2 workers vs serial.

A reduced study (the paper's 6 distributions, both methods, sizes 2, 12, ..., 242, i.e. a tenth
of the sizes; ``--replications`` and ``--nboot`` as given) runs

* serially in this process (the reference),
* on the local process pool with 2 workers,
* on a LocalCluster (127.0.0.1 only) with 1 and then 2 single-threaded worker processes.

Each Dask timing is the study on an already running, already warmed cluster (what a user of a
running cluster pays); the cluster start-up and the first study (workers load the compiled
kernels) are printed separately. Every run's curves are checked equal, bit for bit, to the
serial ones. Printed: times, the Dask overhead at 1 worker (goal < 15 %), the speed-up at 2
workers, the per-cell cost, the bytes sent to the workers, and a projection for 16 and 64
workers (see docs/scale.md).

    .venv/bin/python benchmarks/bench_dask.py [--replications 300] [--nboot 500] [--repeats 2]

On a machine shared with other jobs timings are noisy; each configuration is run ``--repeats``
times and the fastest run is kept.
"""

from __future__ import annotations

import argparse
import math
import os
import pickle
import time

import pandas as pd

from nlgeval.items.profiles import paper_profiles
from nlgeval.items.study import run_study, warm_up
from nlgeval.parallel import DaskBackend

SIZES = list(range(2, 246, 10))


def timed(dists, backend, repeats: int, **kw):
    best, res = float("inf"), None
    for _ in range(repeats):
        t0 = time.perf_counter()
        res = run_study(dists, backend=backend, **kw)
        best = min(best, time.perf_counter() - t0)
    return best, res


def sent_bytes(dists, **kw) -> tuple[int, int, int]:
    """Pickled bytes of every chunk the study sends (at the auto chunk size for 2 workers),
    of one chunk, and of one chunk's result."""
    from nlgeval.items import study as st

    captured = []

    class Capture:
        name, workers = "capture", 2

        def imap_unordered(self, fn, tasks):
            for t in tasks:
                captured.append(t)
                yield fn(t)

    run_study(dists, backend=Capture(), **kw)
    sizes = [len(pickle.dumps(c, protocol=5)) for c in captured]
    result = len(pickle.dumps(st._run_chunk(captured[0]), protocol=5))
    return sum(sizes), sizes[0], result


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--replications", type=int, default=300)
    ap.add_argument("--nboot", type=int, default=500)
    ap.add_argument("--repeats", type=int, default=2)
    args = ap.parse_args()
    os.environ.setdefault("NLGEVAL_QUIET", "1")
    dists = paper_profiles()
    kw = dict(sizes=SIZES, replications=args.replications, n_resamples=args.nboot, seed=1)
    cells = len(dists) * 2 * len(SIZES)
    print(f"reduced study: {len(dists)} distributions x 2 methods x {len(SIZES)} sizes = "
          f"{cells} cells, {args.replications} replications, nboot {args.nboot}; "
          f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    warm_up()
    t_serial, ref = timed(dists, "serial", args.repeats, **kw)
    print(f"serial              : {t_serial:7.2f} s   ({t_serial / cells * 1e3:.1f} ms per cell, "
          f"{t_serial / cells / args.replications * 1e3:.3f} ms per replication)")
    t_proc, res = timed(dists, "process", args.repeats, workers=2, **kw)
    pd.testing.assert_frame_equal(ref.curves, res.curves, check_exact=True)
    print(f"process, 2 workers  : {t_proc:7.2f} s   speed-up {t_serial / t_proc:.2f}x")
    dask_times = {}
    for n in (1, 2):
        t0 = time.perf_counter()
        with DaskBackend(f"local:{n}") as be:
            t_start = time.perf_counter() - t0
            t0 = time.perf_counter()
            first = run_study(dists, backend=be, **kw)
            t_first = time.perf_counter() - t0
            t_dask, res = timed(dists, be, args.repeats, **kw)
            execution = res.run["execution"]
        for r in (first, res):
            pd.testing.assert_frame_equal(ref.curves, r.curves, check_exact=True)
        dask_times[n] = t_dask
        print(f"dask LocalCluster {n} : {t_dask:7.2f} s   speed-up {t_serial / t_dask:.2f}x "
              f"({execution['chunks']} tasks of {execution['chunk_size']} cells; cluster start "
              f"{t_start:.1f} s, first study incl. worker warm-up {t_first:.2f} s)")
    overhead = dask_times[1] / t_serial - 1
    print(f"Dask overhead at 1 worker: {overhead:+.1%} (goal < 15 %) -> "
          f"{'OK' if overhead < 0.15 else 'ABOVE GOAL'}")
    print(f"Dask speed-up 2 workers vs serial: {t_serial / dask_times[2]:.2f}x; "
          f"2 vs 1 worker: {dask_times[1] / dask_times[2]:.2f}x")
    total, one, result = sent_bytes(dists, **kw)
    print(f"sent to workers: {total / 1024:.0f} KiB in all (one chunk {one} B, its result "
          f"{result} B), plus the function by reference (the workers import nlgeval)")
    # projection: per-cell cost from the serial run (linear in replications), the measured
    # 1-worker overhead, and the granularity of the automatic chunking (the slowest worker runs
    # ceil(chunks / workers) chunks); cluster start-up and worker warm-up (~10 s) come on top
    per_cell_rep = t_serial / cells / args.replications
    paper_cells = len(dists) * 2 * 244
    for label, reps in (("paper study (1,000 replications)", 1000),
                        ("10x the paper (10,000 replications)", 10_000)):
        parts = []
        for w in (1, 16, 64):
            chunk = max(1, min(paper_cells // (8 * w), 20_000 // reps))
            n_chunks = math.ceil(paper_cells / chunk)
            t = math.ceil(n_chunks / w) * chunk * per_cell_rep * reps * (1 + max(overhead, 0))
            parts.append(f"{w} workers {t / 60:.1f} min")
        print(f"projection, {label}, nboot {args.nboot}: {', '.join(parts)}")
    print("agreement: every backend's curves equal the serial ones bit for bit: OK")


if __name__ == "__main__":
    main()
