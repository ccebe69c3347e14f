"""Peak memory and time of `nlgeval validate` on text-free synthetic studies (issue 29 section 2).

For each size (systems x items; 3 metrics, 1 criterion, default statistics) the benchmark writes
a ratings file and a wide score file, runs `nlgeval validate --human H --scores S --metrics none
--json --quiet` in a fresh subprocess, and reads that process's peak resident memory
(its VmHWM from /proc/self/status, printed by the child as it exits: a child's ru_maxrss can
carry its parent's peak across exec). It prints wall time, the child's CPU time (user + sys,
from getrusage of the children: the machine is shared, so CPU seconds are the comparable
number), peak RSS, bytes per scored output (peak / (systems x items); a scored output has one
score per metric) and the estimate of `nlgeval.parallel.memory.estimate_study_memory` next to
the measurement, plus the load average before and after, and the stage times of run.json.

    .venv/bin/python benchmarks/bench_scale_memory.py                  # 20 x 50,000 (1 M scores)
    .venv/bin/python benchmarks/bench_scale_memory.py --sizes 20x10000,20x50000 --resamples 1000
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

from nlgeval.parallel.memory import estimate_study_memory, format_bytes

ROOT = Path(__file__).resolve().parents[1]


def write_study(folder: Path, systems: int, items: int, metrics: int = 3,
                criteria: int = 1) -> tuple[Path, Path]:
    """Ratings and a wide score file of a synthetic study (latent quality + noise)."""
    rng = np.random.default_rng(1)
    q = rng.normal(size=systems)[:, None] + rng.normal(size=(systems, items))
    system = np.repeat([f"s{i}" for i in range(systems)], items)
    item = np.tile([f"i{j:07d}" for j in range(items)], systems)
    human = pd.concat([pd.DataFrame({"system": system, "item": item, "criterion": f"c{c}",
                                     "score": np.round((q + rng.normal(size=q.shape)).ravel(),
                                                       3)})
                       for c in range(criteria)], ignore_index=True)
    scores = pd.DataFrame({"system": system, "item": item})
    for m in range(metrics):
        scores[f"m{m}"] = np.round((q + (m + 1) * rng.normal(size=q.shape)).ravel(), 4)
    h, s = folder / "ratings.csv", folder / "scores.csv"
    human.to_csv(h, index=False)
    scores.to_csv(s, index=False)
    return h, s


_CHILD = ("import atexit, sys\n"
          "from nlgeval.cli import main\n"
          "def peak():\n"
          "    for line in open('/proc/self/status'):\n"
          "        if line.startswith('VmHWM:'):\n"
          "            print('VmHWM', int(line.split()[1]) * 1024, file=sys.stderr)\n"
          "atexit.register(peak)\n"
          "sys.argv[0] = 'nlgeval'\n"
          "sys.exit(main())\n")


def run(h: Path, s: Path, out: Path, extra: list[str]) -> tuple[float, float, int, int]:
    """Wall seconds, CPU seconds (user + sys), peak RSS (bytes: the child's own VmHWM, printed
    as it exits) and exit status of one validate run in a subprocess; prints the user and
    system seconds and the minor page faults apart (system time is mostly page faults of large
    temporary arrays)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-c", _CHILD, "validate", "--human", str(h),
                           "--scores", str(s), "--metrics", "none", "--json", "--quiet",
                           "--out", str(out), *extra],
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                          check=False)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    print(f"  CPU {after.ru_utime - before.ru_utime:.1f} s user + "
          f"{after.ru_stime - before.ru_stime:.1f} s sys, "
          f"{after.ru_minflt - before.ru_minflt:,} minor page faults", flush=True)
    lines = proc.stderr.strip().splitlines()
    peak = next((int(x.split()[1]) for x in lines if x.startswith("VmHWM ")), 0)
    if proc.returncode:
        print("  stderr:", [x for x in lines if not x.startswith("VmHWM ")][-1:] or "")
    return wall, cpu, peak, proc.returncode


def _mib(n: int) -> str:
    """Bytes as MiB (to fit the memory model) and as the GB of the error messages."""
    return f"{n / 2**20:,.0f} MiB ({format_bytes(n)})"


def stage_times(out: Path) -> str:
    """The stage times (wall seconds) that run.json records, on one line."""
    try:
        timings = json.loads((out / "run.json").read_text())["timings"]
    except (OSError, KeyError, ValueError):
        return ""
    return ", ".join(f"{k} {v:.1f} s" for k, v in timings.items())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="20x50000", help="systems x items, comma-separated")
    ap.add_argument("--metrics", type=int, default=3)
    ap.add_argument("--resamples", type=int, default=None)
    args = ap.parse_args()
    extra = ["--resamples", str(args.resamples)] if args.resamples is not None else []
    print(f"load average {os.getloadavg()[0]:.1f}; {os.cpu_count()} cores")
    print("systems x items | scored outputs | wall | CPU (user+sys) | peak RSS | bytes/output | "
          "estimate | exit")
    sizes = sorted((tuple(int(v) for v in x.split("x")) for x in args.sizes.split(",")),
                   key=lambda t: t[0] * t[1])
    for systems, items in sizes:
        with tempfile.TemporaryDirectory() as tmp:
            h, s = write_study(Path(tmp), systems, items, args.metrics)
            load = os.getloadavg()[0]
            wall, cpu, peak, rc = run(h, s, Path(tmp) / "report", extra)
            stages = stage_times(Path(tmp) / "report")
        n = systems * items
        est = estimate_study_memory(systems, items, args.metrics, 1)
        print(f"{systems} x {items:,} | {n:,} | {wall:.1f} s (load {load:.1f} -> "
              f"{os.getloadavg()[0]:.1f}) | {cpu:.1f} s | {_mib(peak)} | "
              f"{peak / n:,.0f} | {_mib(est.bytes)} | {rc}", flush=True)
        if stages:
            print(f"  stages: {stages}", flush=True)
    print(f"load average after: {os.getloadavg()[0]:.1f}", file=sys.stderr)


if __name__ == "__main__":
    main()
