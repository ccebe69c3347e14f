"""Benchmark: the main job's point statistics and the parent's stages (issue 29, goal 1).

Times, in one process with ``time.process_time`` (best of ``--repeats`` calls), the stages of
``nlgeval validate webnlg2020`` that are neither bootstrap nor permutation test -- the
criteria's matrices, the point correlations of every metric x criterion x level x
coefficient, the human references and the published WebNLG 2020 comparison -- on the main
job's settings. With ``--previous PATH`` (a checkout of the previous code, e.g. ``git worktree
add /tmp/prev 990d44c``) the same script runs there too, alternately with the current code, and
the ratio after / before is printed per stage.

It also prints the cost of one ``correlation()`` call next to the obvious alternative, scipy's
own ``pearsonr`` / ``spearmanr`` (which give the same p-values; nlgeval adds the missing-value
and degenerate-input handling), at n = 16 (system level) and n = 2,847 (segment level).

The machine is shared: the load average is printed before and after; compare CPU times.

    NLGEVAL_DATA=... python benchmarks/bench_point_stages.py [--repeats 3] [--previous PATH]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
import warnings

STAGES = ["criterion_matrices", "point correlations", "human_references", "published_table"]


def _best(f, repeats: int) -> float:
    best = float("inf")
    for _ in range(repeats):
        t = time.process_time()
        f()
        best = min(best, time.process_time() - t)
    return best


def stage_times(repeats: int) -> dict[str, float]:
    """CPU seconds of each stage on WebNLG 2020 with the main job's settings."""
    from nlgeval.corpora import load_corpus
    from nlgeval.report import ValidationSettings, stages, tables
    from nlgeval.report.prepare import prepare_scores

    warnings.simplefilter("ignore")
    corpus = load_corpus("webnlg2020")
    settings = ValidationSettings(statistics=["pearson", "spearman", "kendall"],
                                  backend="serial")
    prep = prepare_scores(corpus, settings)
    point = settings.replace(n_resamples=0, permutations=0)
    cms = [stages.criterion_matrices(prep, c) for c in prep.criteria]
    return {
        "criterion_matrices": _best(
            lambda: [stages.criterion_matrices(prep, c) for c in prep.criteria], repeats),
        "point correlations": _best(
            lambda: [stages.correlation_rows(cm, prep, point) for cm in cms], repeats),
        "human_references": _best(
            lambda: stages.human_references(corpus.ratings, prep, settings), repeats),
        "published_table": _best(lambda: tables.published_table(
            corpus, prep.segments, prep.systems, prep.metrics, prep.criteria,
            settings.normalise, prep.human), repeats),
    }


def call_times(repeats: int) -> None:
    """One correlation() call next to scipy's pearsonr / spearmanr on the same vectors."""
    import numpy as np
    from scipy import stats

    from nlgeval.correlation.coefficients import correlation

    rng = np.random.default_rng(0)
    for n in (16, 2847):
        x = rng.normal(size=n)
        y = x + rng.normal(size=n)
        for coef, ref in (("pearson", stats.pearsonr), ("spearman", stats.spearmanr)):
            ours = _best(lambda x=x, y=y, c=coef: [correlation(x, y, c) for _ in range(200)],
                         repeats) / 200
            theirs = _best(lambda x=x, y=y, f=ref: [f(x, y) for _ in range(200)], repeats) / 200
            print(f"correlation({coef}) n={n}: {ours * 1e6:7.0f} us   scipy alone "
                  f"{theirs * 1e6:7.0f} us   ratio {ours / theirs:.2f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--previous", help="a checkout of the previous code, run alternately")
    ap.add_argument("--json", action="store_true", help=argparse.SUPPRESS)  # child mode
    args = ap.parse_args()
    if args.json:
        print(json.dumps(stage_times(args.repeats)))
        return
    print(f"load average before: {os.getloadavg()}")
    runs: dict[str, list[dict[str, float]]] = {"now": [], "previous": []}
    for _ in range(2 if args.previous else 1):
        for label, path in (("now", None), ("previous", args.previous)):
            if label == "previous" and path is None:
                continue
            env = dict(os.environ)
            if path:
                env["PYTHONPATH"] = path
            out = subprocess.run([sys.executable, __file__, "--json", "--repeats",
                                  str(args.repeats)], env=env, check=True,
                                 capture_output=True, text=True).stdout
            runs[label].append(json.loads(out.strip().splitlines()[-1]))
    print(f"{'stage (ms of CPU)':24s} {'now':>10s} {'previous':>10s} {'ratio':>7s}")
    for stage in STAGES:
        now = min(r[stage] for r in runs["now"]) * 1e3
        prev = min(r[stage] for r in runs["previous"]) * 1e3 if runs["previous"] else None
        ratio = f"{now / prev:7.2f}" if prev else ""
        print(f"{stage:24s} {now:10.1f} {prev or float('nan'):10.1f} {ratio}")
    call_times(args.repeats)
    print(f"load average after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
