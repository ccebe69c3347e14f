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

``--validate`` instead times a one-criterion validation study (synthetic, text-free: systems x
items, 3 metrics, default statistics, ``--resamples``/``--permutations``) serially and on
LocalClusters of 1 and 2 workers, where it is cut into tasks below the criterion (one metric
at one level, one level's comparisons; see docs/scale.md), checks the tables equal the serial
ones bit for bit, and prints the speed-up and the speed-up per worker:

    .venv/bin/python benchmarks/bench_dask.py --validate [--systems 20] [--items 5000]

On a machine shared with other jobs timings are noisy; each configuration is run ``--repeats``
times and the fastest run is kept.
"""

from __future__ import annotations

import argparse
import contextlib
import math
import os
import pickle
import time

import numpy as np
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


def validate_inputs(n_systems: int, n_items: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """One criterion, 3 metrics of decreasing quality: text-free synthetic scores."""
    rng = np.random.default_rng(1)
    q = rng.normal(size=n_systems)[:, None] + rng.normal(size=(n_systems, n_items))
    system = np.repeat([f"s{i}" for i in range(n_systems)], n_items)
    item = np.tile([f"i{j:06d}" for j in range(n_items)], n_systems)
    human = pd.DataFrame({"system": system, "item": item, "criterion": "mqm",
                          "score": (q + rng.normal(size=q.shape)).ravel()})
    scores = pd.concat([pd.DataFrame({"metric": f"m{m}", "system": system, "item": item,
                                      "score": (q + (m + 1) * rng.normal(size=q.shape)).ravel()})
                        for m in range(3)], ignore_index=True)
    return human, scores


def _timed_validate(corpus, opts: dict, kw: dict, be) -> tuple[float, float, object]:
    """Wall seconds, CPU seconds of the busiest process (this one or a worker), result."""
    from nlgeval.report import run_validation

    before = be.client.run(time.process_time) if be is not None else {}
    c0, t0 = time.process_time(), time.perf_counter()
    res = run_validation(corpus, **opts, **kw)
    wall, main_cpu = time.perf_counter() - t0, time.process_time() - c0
    after = be.client.run(time.process_time) if be is not None else {}
    busiest = max([main_cpu] + [after[w] - before.get(w, 0.0) for w in after])
    return wall, busiest, res


def bench_validate(args: argparse.Namespace) -> None:
    """Serial vs Dask local:1 vs local:2 on a one-criterion study, speed-up per worker."""
    from nlgeval.report import run_validation
    from nlgeval.scores import ratings_corpus

    human, scores = validate_inputs(args.systems, args.items)
    corpus = ratings_corpus(human, name="synthetic")
    opts = dict(metrics=[], scores=scores, n_resamples=args.resamples,
                permutations=args.permutations, table9=False)
    print(f"one-criterion validate study: {args.systems} systems x {args.items} items, 3 metrics, "
          f"default statistics, {args.resamples} resamples, {args.permutations} permutations; "
          f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    warm = {**opts, "n_resamples": 10, "permutations": 10}
    run_validation(corpus, **warm)  # compile the kernels
    best: dict[str, tuple[float, float]] = {}
    for label in ("serial", "local:1", "local:2"):
        with contextlib.ExitStack() as stack:
            kw: dict = {}
            be = None
            if label != "serial":  # a running, warmed cluster; its start-up printed apart
                t0 = time.perf_counter()
                be = stack.enter_context(DaskBackend(label))
                kw = {"backend": "dask", "scheduler": str(be.client.scheduler.address)}
                run_validation(corpus, **warm, **kw)
                print(f"  {label} start-up and warm-up {time.perf_counter() - t0:.1f} s")
            runs = [_timed_validate(corpus, opts, kw, be) for _ in range(args.repeats)]
        wall, busiest, res = min(runs, key=lambda r: r[0])
        if label == "serial":
            ref = res
        for name in ("correlations", "comparisons", "clusters"):
            pd.testing.assert_frame_equal(getattr(ref, name), getattr(res, name),
                                          check_exact=True)
        best[label] = (wall, busiest)
        workers = 1 if label == "serial" else int(label.split(":")[1])
        speed = best["serial"][0] / wall
        cpu_speed = best["serial"][1] / busiest
        print(f"{label:8s}: wall {wall:7.2f} s, speed-up {speed:.2f}x ({speed / workers:.2f} "
              f"per worker); busiest process {busiest:6.2f} CPU s, speed-up {cpu_speed:.2f}x "
              f"({cpu_speed / workers:.2f} per worker); load {os.getloadavg()[0]:.1f}")
    print("agreement: the Dask tables equal the serial ones bit for bit: OK")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--replications", type=int, default=300)
    ap.add_argument("--nboot", type=int, default=500)
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--validate", action="store_true", help="time a one-criterion validate study")
    ap.add_argument("--systems", type=int, default=20)
    ap.add_argument("--items", type=int, default=5000)
    ap.add_argument("--resamples", type=int, default=1000)
    ap.add_argument("--permutations", type=int, default=1000)
    args = ap.parse_args()
    os.environ.setdefault("NLGEVAL_QUIET", "1")
    if args.validate:
        bench_validate(args)
        return
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
