"""Benchmark: a text-free study of a metric zoo (issue 26, "Size and speed").

A seeded synthetic study shaped like today's metric papers: 11 systems x 100 items, 6 human
criteria rated by 3 raters on a 1-5 scale, and 72 metric score columns (lexical-overlap-like
metrics, embedding-like metrics, and per-criterion LLM judges giving integer scores with
many ties). It is written as two files, the ratings (``system, item, criterion, rater,
score``) and a wide score file (``system, item, <metric>...``), and run exactly as a user
would::

    nlgeval validate --human ratings.csv --scores scores.csv --metrics none \\
        --levels segment,item,system --out DIR

with the default statistics (Pearson, Spearman, Kendall), 1,000 bootstrap resamples and
1,000 PERM-BOTH permutations. The script prints the wall time, the CPU time of the run, the
per-stage timings from run.json, the size of report.html, whether every criterion x level got
its significance clusters, and the machine load; the goal is <= 60 s on the 2-core machine.

    python benchmarks/bench_metric_zoo.py [--systems 11] [--items 100] [--metrics 72]
        [--criteria 6] [--keep DIR] [--pair-metrics 24] [-- extra validate options]

First it times the metric-pair tests of one criterion (PERM-BOTH at the three levels and
Williams' test at two) for ``--pair-metrics`` metrics both ways -- all pairs batched, as
``validate`` runs them, and one pair at a time (the obvious alternative) -- and prints the
ratio and how many p-values are the same numbers.
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

CRITERIA = ["Relevance", "Coherence", "Empathy", "Surprise", "Engagement", "Complexity"]


def zoo_study(n_systems: int = 11, n_items: int = 100, n_metrics: int = 72,
              n_criteria: int = 6, n_raters: int = 3,
              seed: int = 0) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Ratings (long) and metric scores (wide) of a synthetic metric-zoo study.

    Every output has one latent quality per criterion (a system effect, an item effect and
    noise; the criteria share a common factor); raters see it through noise on a 1-5 scale;
    metric k is a noisy, monotone transform of one criterion's latent quality (or of their
    mean), with a noise level that grows with k so that the metrics really differ, and every
    sixth metric is an LLM-judge-like integer score with many ties.
    """
    rng = np.random.default_rng(seed)
    crits = (CRITERIA * ((n_criteria + len(CRITERIA) - 1) // len(CRITERIA)))[:n_criteria]
    crits = [c if i < len(CRITERIA) else f"{c}{i}" for i, c in enumerate(crits)]
    systems = [f"sys{s:02d}" for s in range(n_systems)]
    items = [f"story{i:03d}" for i in range(n_items)]
    common = rng.normal(size=(n_systems, n_items))
    sys_eff = rng.normal(scale=0.8, size=(n_systems, 1))
    latent = {c: 0.6 * common + sys_eff * rng.uniform(0.5, 1.5)
              + rng.normal(scale=0.4, size=(n_items,))[None, :]
              + rng.normal(scale=0.7, size=(n_systems, n_items)) for c in crits}
    sys_grid = np.repeat(systems, n_items)
    item_grid = np.tile(items, n_systems)
    rows = []
    for c in crits:
        for r in range(n_raters):
            noisy = latent[c] + rng.normal(scale=0.8, size=latent[c].shape)
            score = np.clip(np.round(3 + noisy), 1, 5)
            rows.append(pd.DataFrame({"system": sys_grid, "item": item_grid, "criterion": c,
                                      "rater": f"rater{r}", "score": score.ravel()}))
    ratings = pd.concat(rows, ignore_index=True)
    scores = pd.DataFrame({"system": sys_grid, "item": item_grid})
    mean_latent = np.mean([latent[c] for c in crits], axis=0)
    for k in range(n_metrics):
        own = crits[(k // 6) % n_criteria] if k % 6 == 5 else crits[k % n_criteria]
        target = latent[own] if k % 4 else mean_latent
        noise = 0.3 + 2.5 * k / max(1, n_metrics - 1)
        x = target + rng.normal(scale=noise, size=target.shape)
        if k % 6 == 5:   # an LLM judge: integers 1-10, many ties
            name = f"judge_{crits[(k // 6) % n_criteria].lower()}_{k:02d}"
            values = np.clip(np.round(5.5 + 1.5 * x), 1, 10)
        elif k % 3 == 0:  # overlap-like: bounded, skewed
            name = f"overlap_{k:02d}"
            values = 1 / (1 + np.exp(-x))
        else:             # embedding-like
            name = f"embed_{k:02d}"
            values = 0.8 + 0.05 * np.tanh(x)
        scores[name] = values.ravel()
    return ratings, scores


def _run(args: argparse.Namespace, folder: Path, extra: list[str]) -> dict:
    ratings, scores = zoo_study(args.systems, args.items, args.metrics, args.criteria,
                                seed=args.seed)
    h, s = folder / "ratings.csv", folder / "scores.csv"
    ratings.to_csv(h, index=False)
    scores.to_csv(s, index=False)
    out = folder / "report"
    exe = Path(sys.executable).with_name("nlgeval")
    cmd = [str(exe), "validate", "--human", str(h), "--scores", str(s), "--metrics", "none",
           "--levels", "segment,item,system", "--out", str(out), "--quiet", *extra]
    print(" ".join(["nlgeval", *cmd[1:]]).replace(str(folder), "DIR"))
    print(f"load average before: {os.getloadavg()[0]:.2f}")
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        print(proc.stderr[-3000:], file=sys.stderr)
        raise SystemExit(proc.returncode)
    record = json.loads((out / "run.json").read_text())
    record["_wall"] = wall
    record["_cpu"] = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    record["_rss_mb"] = after.ru_maxrss / 1024
    record["_html_mb"] = (out / "report.html").stat().st_size / 2**20
    record["_clusters"] = pd.read_csv(out / "tables" / "significance_clusters.csv") \
        if (out / "tables" / "significance_clusters.csv").is_file() else pd.DataFrame()
    return record


def pair_tests_ratio(n_metrics: int, n_systems: int, n_items: int, permutations: int,
                     seed: int) -> None:
    """Time the metric-pair tests of one criterion (PERM-BOTH at three levels, Williams at
    two) as ``nlgeval validate`` runs them (``comparison_matrix``: all pairs batched) and
    as the obvious alternative does (one pair at a time: ``permutation_test``'s draws and
    ``williams_from_scores`` per ordered pair), and print the ratio and whether the p-values
    are the same numbers."""
    from nlgeval.correlation.permutation import compare
    from nlgeval.correlation.williams import williams_from_scores

    ratings, scores = zoo_study(n_systems, n_items, n_metrics, 1, seed=seed)
    H = ratings.groupby(["system", "item"]).score.mean().unstack().to_numpy()
    mets = {c: scores[c].to_numpy().reshape(n_systems, n_items) for c in scores.columns[2:]}
    names = list(mets)
    t0 = time.process_time()
    frames = {}
    for level in ("segment", "item", "system"):
        if level != "item":
            frames[(level, "w")] = compare.comparison_matrix(mets, H, level, method="williams")
        frames[(level, "p")] = compare.comparison_matrix(
            mets, H, level, method="permutation", n_resamples=permutations, seed=0)
    batched = time.process_time() - t0
    t0 = time.process_time()
    same = total = 0
    masks = compare.swap_masks(H.shape, permutations, "both", 0)
    for level in ("segment", "item", "system"):
        for i, a in enumerate(names):
            for b in names[i + 1:]:
                r_a, r_b, d = compare._permutation_deltas(mets[a], mets[b], H, level,
                                                          "pearson", masks)
                p = compare._permutation_p(r_a - r_b, d, "greater")
                f = frames[(level, "p")]
                same += p == f.pvalue[(f.metric_a == a) & (f.metric_b == b)].iloc[0]
                total += 1
                if level != "item":
                    for x, y in ((a, b), (b, a)):
                        w = williams_from_scores(mets[x], mets[y], H, level)
                        f = frames[(level, "w")]
                        same += w.pvalue == f.pvalue[(f.metric_a == x)
                                                     & (f.metric_b == y)].iloc[0]
                        total += 1
    single = time.process_time() - t0
    print(f"metric-pair tests of one criterion, {n_metrics} metrics "
          f"({n_metrics * (n_metrics - 1) // 2} pairs), {permutations} permutations, CPU:")
    print(f"  one pair at a time {single:8.2f} s   all pairs batched {batched:8.2f} s   "
          f"ratio {single / max(batched, 1e-9):.1f}x   same p-values: {same} of {total}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--systems", type=int, default=11)
    ap.add_argument("--items", type=int, default=100)
    ap.add_argument("--metrics", type=int, default=72)
    ap.add_argument("--criteria", type=int, default=6)
    ap.add_argument("--seed", type=int, default=0, help="of the synthetic data")
    ap.add_argument("--keep", type=Path, help="keep the inputs and the report in this folder")
    ap.add_argument("--goal", type=float, default=60.0, help="seconds")
    ap.add_argument("--pair-metrics", type=int, default=24,
                    help="metrics of the batched vs one-pair-at-a-time timing (0: skip)")
    args, extra = ap.parse_known_args()
    extra = [e for e in extra if e != "--"]
    if args.pair_metrics > 1:
        pair_tests_ratio(args.pair_metrics, args.systems, args.items, 1000, args.seed)
    with tempfile.TemporaryDirectory() as tmp:
        folder = args.keep or Path(tmp)
        folder.mkdir(parents=True, exist_ok=True)
        rec = _run(args, folder, extra)
    print(f"{args.systems} systems x {args.items} items x {args.metrics} metrics x "
          f"{args.criteria} criteria x 3 levels, defaults ({rec['settings']['resamples']} "
          f"resamples, {rec['settings']['permutations']} permutations)")
    for stage, sec in rec["timings"].items():
        print(f"  {stage:<26}{sec:8.2f}")
    print(f"  {'wall (whole command)':<26}{rec['_wall']:8.2f}   goal <= {args.goal:.0f} s: "
          f"{'met' if rec['_wall'] <= args.goal else 'NOT met'}")
    print(f"  {'CPU (user + system)':<26}{rec['_cpu']:8.2f}   peak RSS {rec['_rss_mb']:.0f} MB")
    print(f"  report.html {rec['_html_mb']:.2f} MB (goal < 2 MB)")
    cl = rec["_clusters"]
    wanted = {(c, lv) for c in rec["settings"]["criteria"] for lv in rec["settings"]["levels"]}
    got = set(zip(cl.get("criterion", []), cl.get("level", []), strict=False))
    print(f"  significance clusters for {len(got & wanted)} of {len(wanted)} criterion x level"
          + ("" if got >= wanted else f"; missing: {sorted(wanted - got)}"))
    print(f"load average after: {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
