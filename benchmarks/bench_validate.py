"""Benchmark: the warm main job (``nlgeval validate webnlg2020``) in-process, by stage (issue 19).

Runs the default study (8 metrics, Pearson/Spearman/Kendall, segment and system level, 1,000
bootstrap resamples of systems and items, Deutsch et al. 2021; 1,000 permutations) with the
metric scores from the score cache (run ``make run`` once first), writes the report to a
temporary directory and prints the time of every stage (the run.json ``timings``) and the
total. Then one line per comparison, each a ratio of the obvious alternative over nlgeval's
code on the same data in this run, after checking both give the same numbers:

* segment-level Spearman / Kendall bootstrap: weighted-rank / weighted pair-count kernels vs a
  ``scipy.stats.spearmanr`` / ``kendalltau`` loop over the same resamples;
* system-level rank bootstrap: resampled system means per distinct system vs gathering the
  (resamples, systems, items) stack;
* PERM-BOTH Pearson comparisons of every metric pair: the mask contractions of all pairs in one
  matrix product vs one pair at a time (same numbers);
* figures: drawn by two forked processes vs one after the other here.

The machine is often shared: the CPU time of the study (all threads) is printed next to the
wall-clock stage timings, and is the better yardstick when other jobs run.

    python benchmarks/bench_validate.py [--data-dir DIR] [--loop-resamples 200]
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
import tempfile
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from scipy import stats

STATISTICS = ["pearson", "spearman", "kendall"]
LEVELS = ["segment", "system"]


def _timed(fn: Callable[[], Any]) -> tuple[Any, float]:
    t0 = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t0


def main_job(data_dir: str | None, out: Path) -> Any:
    """The warm main job in-process; prints the stage timings and returns the study."""
    from nlgeval.corpora import load_corpus
    from nlgeval.report import run_validation, write_report

    t0 = time.perf_counter()
    corpus = load_corpus("webnlg2020", data_dir, download=False)
    t_load = time.perf_counter() - t0
    c0 = time.process_time()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        study = run_validation(corpus, None, levels=LEVELS, statistics=STATISTICS)
    cpu = time.process_time() - c0
    study = dataclasses.replace(study, timings={"load corpus": t_load, **study.timings})
    write_report(study, out)
    total = time.perf_counter() - t0
    print("warm main job (in-process, after imports), seconds per stage:")
    for stage, sec in study.timings.items():
        print(f"  {stage:<26}{sec:8.2f}")
    print(f"  {'total':<26}{total:8.2f}")
    print(f"  {'CPU of run_validation':<26}{cpu:8.2f}  (all threads)")
    return study


def _matrices(data_dir: str | None) -> tuple[np.ndarray, np.ndarray]:
    """chrF++ and the Correctness ratings of WebNLG+ 2020 as (systems x items) matrices."""
    from nlgeval.corpora import load_corpus
    from nlgeval.correlation.levels import score_matrices
    from nlgeval.metrics.scoring import score_corpus
    from nlgeval.report.study import reference_systems

    corpus = load_corpus("webnlg2020", data_dir, download=False)
    excluded = reference_systems(corpus)
    corpus = corpus.subset(systems=[s for s in corpus.systems if s not in excluded])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        seg = score_corpus(corpus, ["chrf++"], rated_only=True).segments
    human = corpus.human_scores()
    sm = score_matrices(seg[["system", "item", "score"]],
                        human.loc[human.criterion == "Correctness", ["system", "item", "score"]])
    return sm.metric, sm.human


def _ratio(what: str, t_new: float, t_old: float, diff: float) -> None:
    print(f"{what:<58} nlgeval {t_new:7.3f} s  alternative {t_old:7.3f} s  "
          f"ratio {t_old / t_new:6.1f}x  max|diff| {diff:.1e}")


def rank_bootstraps(X: np.ndarray, Y: np.ndarray, B: int) -> bool:
    """Segment-level Spearman/Kendall and system-level rank bootstraps vs the obvious loops."""
    from nlgeval.correlation.bootstrap import bootstrap_distribution, resample_indices
    from nlgeval.correlation.levels import level_statistic

    si, ii = resample_indices(*X.shape, B, "both", seed=0)
    ok_all = True
    for coef, fn in (("spearman", stats.spearmanr), ("kendall", stats.kendalltau)):
        bootstrap_distribution(X, Y, "segment", coef, si[:2], ii[:2])  # compile outside timing
        new, t_new = _timed(lambda c=coef: bootstrap_distribution(X, Y, "segment", c, si, ii))

        def loop(fn: Callable[..., Any] = fn) -> np.ndarray:
            out = []
            for b in range(B):
                Xb, Yb = X[np.ix_(si[b], ii[b])], Y[np.ix_(si[b], ii[b])]
                ok = np.isfinite(Xb) & np.isfinite(Yb)
                out.append(fn(Xb[ok], Yb[ok]).statistic)
            return np.array(out)

        old, t_old = _timed(loop)
        diff = float(np.nanmax(np.abs(new - old)))
        ok_all &= diff < 1e-9
        _ratio(f"segment {coef} bootstrap ({B} resamples) vs scipy loop", t_new, t_old, diff)
    # the study asks for both rank coefficients on the same resamples: time the pair, with the
    # means computed afresh (empty cache) as for a new metric
    from nlgeval.correlation import bootstrap as bs

    def fresh(c: str) -> np.ndarray:
        if c == "spearman":
            bs._MEANS_CACHE.clear()
        return bootstrap_distribution(X, Y, "system", c, si, ii)

    new, t_new = _timed(lambda: [fresh(c) for c in ("spearman", "kendall")])
    old, t_old = _timed(lambda: [level_statistic(
        X[si[:, :, None], ii[:, None, :]], Y[si[:, :, None], ii[:, None, :]], "system", c)
        for c in ("spearman", "kendall")])
    diff = float(max(np.nanmax(np.abs(a - b)) for a, b in zip(new, old, strict=True)))
    ok_all &= diff == 0.0
    _ratio(f"system spearman+kendall bootstrap ({B}) vs (B,S,I) stack", t_new, t_old, diff)
    return ok_all


def pair_permutations(X: np.ndarray, Y: np.ndarray) -> bool:
    """Pearson PERM-BOTH deltas of 8 metrics' 28 pairs: batched contractions vs pair by pair."""
    from nlgeval.correlation.permutation import compare

    rng = np.random.default_rng(0)
    metrics = {f"m{k}": X + k * 0.1 * rng.normal(size=X.shape) for k in range(8)}
    masks = compare.swap_masks(X.shape, 1000, "both", seed=0).astype(float)
    names = list(metrics)
    pairs = [(a, b) for i, a in enumerate(names) for b in names[i + 1:]]
    ok = True
    for level in LEVELS:
        new, t_new = _timed(lambda lv=level: compare._all_pair_deltas(metrics, Y, lv, "pearson",
                                                                     masks))
        old, t_old = _timed(lambda lv=level: {
            (a, b): compare._permutation_deltas(metrics[a], metrics[b], Y, lv, "pearson", masks)
            for a, b in pairs})
        diff = max(float(np.nanmax(np.abs(new[k][2] - old[k][2]))) for k in new)
        ok &= diff == 0.0
        _ratio(f"{level} Pearson permutations, 28 pairs: batched vs per pair", t_new, t_old,
               diff)
    return ok


def figures(study: Any, out: Path) -> bool:
    from nlgeval.report.writer import study_figures

    par, t_par = _timed(lambda: study_figures(study, out / "par", workers=2))
    ser, t_ser = _timed(lambda: study_figures(study, out / "ser", workers=1))
    same = sorted(par) == sorted(ser)
    _ratio(f"figures ({len(par)} x PNG+PDF): 2 processes vs 1", t_par, t_ser, 0.0 if same else 1)
    return same


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    shared = Path(__file__).resolve().parents[2] / "shared" / "corpora"
    ap.add_argument(
        "--data-dir",
        default=os.environ.get("NLGEVAL_DATA") or (str(shared) if shared.is_dir() else None),
    )
    ap.add_argument("--loop-resamples", type=int, default=200,
                    help="resamples in the rank-bootstrap comparisons (the loops are slow)")
    args = ap.parse_args()
    print(f"load average before: {os.getloadavg()[0]:.2f}")
    with tempfile.TemporaryDirectory() as tmp:
        study = main_job(args.data_dir, Path(tmp) / "report")
        X, Y = _matrices(args.data_dir)
        ok = rank_bootstraps(X, Y, args.loop_resamples)
        ok &= pair_permutations(X, Y)
        ok &= figures(study, Path(tmp))
    print(f"load average after: {os.getloadavg()[0]:.2f}")
    if not ok:
        print("FAIL: nlgeval and the alternative disagree", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
