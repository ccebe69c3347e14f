"""Benchmark: the main job, ``nlgeval validate webnlg2020`` (``make run``), stage by stage
against its floor and against the previous stage times (issue 29).

Runs the real command (a subprocess, start-up included) several times with a warm score cache,
once without it (``--no-cache``) and once as the first run after a fresh install (empty numba,
score and matplotlib caches: every numba kernel compiles), and prints for every stage of
run.json the median now, the previous time, and the floor. The previous times are those of
``--previous PATH`` (a checkout of the previous code, e.g. ``git worktree add /tmp/prev
46f6fbf``), run alternately with the current code so that both see the same load; without it,
those recorded in ``main_job_previous.json`` (46f6fbf on the idle machine). The floors:

* start-up: ``python -c "import numpy, pandas, scipy.stats"`` (what any run needs to read the
  data and take scipy's p-values);
* correlations: the statistics' kernels alone on the same matrices (every bootstrap
  distribution from shared resample indices, every point estimate, every metric comparison),
  without the study's bookkeeping;
* figures: drawing the same PNGs one after the other in one process, matplotlib imported;
* report tables: formatting and writing the same tables.

The machine is shared: the load average is printed before and after, and the CPU time of each
run (all its processes) next to its wall time; compare CPU times when the load is high.

With the process backend the system tables, human references and Table 9 run in the main
process while the workers compute the correlations, and the report's tables and CSVs are
written while the figures are drawn: "start-up and the rest" is the wall time minus the stages
that do not overlap (load, scoring, correlations, figures; plus the three stages above when
they ran after the correlations, as in a serial run or the previous code).

    python benchmarks/bench_main_job.py [--runs 3] [--previous PATH] [--no-first-run]
                                        [--no-floors]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import corpora_dir  # noqa: E402

PREVIOUS = Path(__file__).with_name("main_job_previous.json")


def _load() -> str:
    return "load average " + " ".join(f"{x:.2f}" for x in os.getloadavg())


def _run(args: list[str], env: dict[str, str] | None = None) -> tuple[float, float]:
    """Wall and CPU (user + system, all child processes) seconds of one command."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.run(args, capture_output=True, text=True, env=env)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(args)} failed:\n{proc.stderr[-2000:]}")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


#: Stages inside "correlations" when they overlap it, and inside "report: figures" always.
MEANWHILE = ("tables", "human references", "significant differences")
WHILE_DRAWING = ("report: tables", "report: csv")


def _rest(wall: float, timings: dict[str, float], overlapped: bool) -> float:
    """Wall time not in a stage: start-up, glue, the page, exit (module docstring)."""
    inside = set(WHILE_DRAWING) | (set(MEANWHILE) if overlapped else set())
    return wall - sum(v for k, v in timings.items() if k not in inside)


def _job(out: Path, extra: list[str], env: dict[str, str],
         previous: str | None = None) -> dict[str, Any]:
    """One run of the command (``previous``: the checkout on PYTHONPATH instead), through a
    console script named ``nlgeval`` (:func:`_console_script`), as users run it."""
    if previous is not None:
        env = dict(env, PYTHONPATH=previous)
    wall, cpu = _run([_console_script(out.parent), "validate", "webnlg2020", "--out", str(out),
                      "-q", *extra], env)
    record = json.loads((out / "run.json").read_text())
    timings = record["timings"]
    backend = record["settings"].get("backend", "serial")
    # the current code overlaps on the process backend; the previous code never did
    timings["start-up and the rest"] = _rest(wall, timings,
                                             backend == "process" and previous is None)
    return {"wall": wall, "cpu": cpu, "timings": timings, "backend": backend,
            "load": os.getloadavg()[0]}


def _console_script(folder: Path) -> str:
    """A copy of the ``nlgeval`` console script (the wrapper pip writes) in ``folder``: the
    command does what only the console script does (the quick exit, scipy.stats without its
    docstring notes, the frozen heap), for the current and the ``--previous`` code alike."""
    script = folder / "bin" / "nlgeval"
    if not script.exists():
        script.parent.mkdir(parents=True, exist_ok=True)
        script.write_text(f"#!{sys.executable}\nimport sys\nfrom nlgeval.cli import main\n"
                          "sys.argv[0] = 'nlgeval'\nsys.exit(main())\n")
        script.chmod(0o755)
    return str(script)


def _startup_floor() -> float:
    code = "import numpy, pandas, scipy.stats"
    return min(_run([sys.executable, "-c", code])[0] for _ in range(3))


def _kernel_floor(data_dir: str | None) -> tuple[dict[str, float], Any]:
    """The study in-process, then its statistics' kernels alone on the same matrices, its
    figures drawn serially, and its tables written (seconds each); returns the study too."""
    from nlgeval.corpora import load_corpus
    from nlgeval.correlation.bootstrap import bootstrap_distribution, resample_indices
    from nlgeval.correlation.levels import level_statistic
    from nlgeval.report import ValidationSettings, run_validation
    from nlgeval.report.prepare import prepare_scores
    from nlgeval.report.stages import _comparison_frames, criterion_matrices

    corpus = load_corpus("webnlg2020", data_dir, download=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        study = run_validation(corpus, None)
        s: ValidationSettings = study.config
        prep = prepare_scores(corpus, s)
        t0 = time.perf_counter()
        for crit in prep.criteria:
            cm = criterion_matrices(prep, crit)
            n_boot = getattr(s, "n_resamples", None) or s.resamples  # renamed field
            si, ii = resample_indices(*cm.human.shape, n_boot, s.resample, s.seed)
            for X in cm.oriented.values():
                for level in s.levels:
                    for coef in s.canonical_coefficients:
                        level_statistic(X, cm.human, level, coef)
                        bootstrap_distribution(X, cm.human, level, coef, si, ii)
            for level in s.levels:
                _comparison_frames(cm, prep, s, level, s.comparison_coefficient)
        floors = {"correlations": time.perf_counter() - t0}
    floors.update(_report_floors(study))
    return floors, study


def _report_floors(study: Any) -> dict[str, float]:
    """Drawing the report's PNGs serially (matplotlib imported first) and writing its tables."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from nlgeval.figures import save_figure
    from nlgeval.report.drawing import DRAW, save_options
    from nlgeval.report.paper_tables import study_tables
    from nlgeval.report.writer import _figure_specs

    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        for stem, kind, data in _figure_specs(study):
            save_figure(DRAW[kind](plt, data), tmp, stem, ("png",), **save_options(kind, data))
        t1 = time.perf_counter()
        for stem, table in study_tables(study).items():
            table.write(Path(tmp) / "tables", stem)
        t2 = time.perf_counter()
    return {"report: figures": t1 - t0, "report: tables": t2 - t1}


def _previous(prev_runs: list[dict[str, Any]] | None) -> dict[str, Any]:
    """The previous runs: measured in this run (``--previous``) or the recorded ones."""
    if prev_runs:
        return {"runs": prev_runs,
                "what": "--previous, alternating with the current code", "load": "same"}
    prev = json.loads(PREVIOUS.read_text())
    for r in prev["runs"]:
        r["timings"]["start-up and the rest"] = _rest(r["wall"], r["timings"], False)
    return {**prev, "load": prev["load_average_1min"]}


def _report(runs: list[dict[str, Any]], extra: dict[str, dict[str, Any]],
            floors: dict[str, float], prev_runs: list[dict[str, Any]] | None = None) -> None:
    prev = _previous(prev_runs)
    prev_t = {k: statistics.median(r["timings"].get(k, float("nan")) for r in prev["runs"])
              for k in prev["runs"][0]["timings"]}
    stages = list(dict.fromkeys([*runs[0]["timings"], *prev_t]))
    print(f"\n{'stage (seconds)':<28}{'now':>8}{'previous':>10}{'floor':>8}")
    for st in stages:
        now = statistics.median(r["timings"].get(st, float("nan")) for r in runs)
        floor = floors.get(st)
        print(f"  {st:<26}{now:8.2f}{prev_t.get(st, float('nan')):10.2f}"
              + (f"{floor:8.2f}" if floor is not None else f"{'':8}"))
    wall = statistics.median(r["wall"] for r in runs)
    cpu = statistics.median(r["cpu"] for r in runs)
    p_wall = statistics.median(r["wall"] for r in prev["runs"])
    p_cpu = statistics.median(r["cpu"] if "cpu" in r else r["cpu_user"] for r in prev["runs"])
    print(f"  {'warm total (wall)':<26}{wall:8.2f}{p_wall:10.2f}   goal <= 5 s; runs: "
          + ", ".join(f"{r['wall']:.1f}" for r in runs) + "; previous: "
          + ", ".join(f"{r['wall']:.1f}" for r in prev["runs"]))
    print(f"  {'warm CPU (all processes)':<26}{cpu:8.2f}{p_cpu:10.2f}   (previous: "
          f"{prev.get('commit', prev['what'])}, load {prev['load']}); correlations on the "
          f"{runs[0]['backend']} backend; 1-min load at each run: "
          + ", ".join(f"{r['load']:.1f}" for r in runs))
    for label, rs in (("now", runs), ("previous", prev["runs"])):
        print(f"  {label}: wall/CPU " + ", ".join(f"{r['wall']:.1f}/{r.get('cpu', 0):.1f}"
                                                  for r in rs))
    for name, goal in (("cold (--no-cache)", 15), ("first run (compiling)", 60)):
        if name in extra:
            r = extra[name]
            print(f"  {name:<26}{r['wall']:8.2f}{'':10}   goal < {goal} s; CPU {r['cpu']:.1f} s; "
                  + ", ".join(f"{k} {v:.1f}" for k, v in r["timings"].items()))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=3, help="warm runs (the median is printed)")
    ap.add_argument("--no-first-run", action="store_true",
                    help="skip the run with empty caches (numba compiles: about a minute)")
    ap.add_argument("--no-floors", action="store_true", help="skip the in-process floors")
    ap.add_argument("--previous", metavar="PATH",
                    help="checkout of the previous code, run alternately with this one")
    args = ap.parse_args()
    data_dir = corpora_dir()
    env = dict(os.environ, **({"NLGEVAL_DATA": data_dir} if data_dir else {}))
    print(f"{_load()} before; {os.cpu_count()} cores")
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        _job(base / "prime", [], env)  # fills the score cache if empty; not counted
        runs, prev_runs = [], []
        if args.previous:
            _job(base / "prime-previous", [], env, args.previous)  # its own kernel cache
        for i in range(args.runs):
            if args.previous:
                prev_runs.append(_job(base / f"previous{i}", [], env, args.previous))
            runs.append(_job(base / f"warm{i}", [], env))
        extra = {"cold (--no-cache)": _job(base / "cold", ["--no-cache"], env)}
        if not args.no_first_run:
            fresh = {k: str(base / k) for k in ("numba", "scores", "mpl")}
            env_fresh = dict(env, NUMBA_CACHE_DIR=fresh["numba"], NLGEVAL_CACHE=fresh["scores"],
                             MPLCONFIGDIR=fresh["mpl"])
            extra["first run (compiling)"] = _job(base / "fresh", [], env_fresh)
        floors = {"start-up and the rest": _startup_floor()}
        if not args.no_floors:
            floors.update(_kernel_floor(data_dir)[0])
    _report(runs, extra, floors, prev_runs)
    print(f"{_load()} after")
    return 0


if __name__ == "__main__":
    sys.exit(main())
