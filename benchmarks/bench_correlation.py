"""Benchmark: vectorised bootstrap CIs vs the straightforward scipy loop (issue 3).

Workload: bootstrap CIs of Pearson's r with 1,000 resamples of systems and items ("both",
Deutsch et al. 2021) for 8 metrics x 5 criteria x 2 levels (system, segment) on WebNLG+ 2020
(16 systems x 178 rated items). The alternative resamples the (systems x items) matrix and calls
``scipy.stats.pearsonr`` once per resample. Both use the same index matrices (same seed), and
the script checks that they give the same intervals before printing the speed ratio.

Runs on the real corpus when it can be loaded (``$NLGEVAL_DATA`` or ``--data-dir``; metric
scores come from the score cache after the first run), otherwise on synthetic matrices of the
same shape (say which in the output).

    python benchmarks/bench_correlation.py [--data-dir DIR] [--resamples 1000] [--synthetic]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import warnings
from pathlib import Path

import numpy as np
from scipy import stats

from nlgeval.correlation.bootstrap import (
    bootstrap_correlation,
    percentile_interval,
    resample_indices,
)

METRICS = ("bleu", "chrf", "chrf++", "ter", "rouge1", "rouge2", "rougeL", "nist")
LEVELS = ("system", "segment")


def load_pairs(data_dir: str | None, synthetic: bool) -> tuple[str, list[tuple[str, np.ndarray,
                                                                            np.ndarray]]]:
    """[(label, X, Y)] for every metric x criterion, and a description of the data."""
    if not synthetic:
        try:
            from nlgeval.corpora import load_corpus
            from nlgeval.correlation.levels import score_matrices
            from nlgeval.metrics import available_metrics
            from nlgeval.metrics.scoring import score_corpus
            from nlgeval.report.study import reference_systems

            corpus = load_corpus("webnlg2020", data_dir, download=False)
            excluded = reference_systems(corpus)
            corpus = corpus.subset(systems=[s for s in corpus.systems if s not in excluded])
            mets = [m for m in METRICS if m in set(available_metrics())]
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                seg = score_corpus(corpus, mets, rated_only=True).segments
            human = corpus.human_scores()
            pairs = []
            for m in mets:
                for c in corpus.criteria:
                    sm = score_matrices(seg.loc[seg.metric == m, ["system", "item", "score"]],
                                        human.loc[human.criterion == c,
                                                  ["system", "item", "score"]])
                    pairs.append((f"{m}/{c}", sm.metric, sm.human))
            S, n_items = pairs[0][1].shape
            return f"WebNLG+ 2020 ({len(mets)} metrics, {S} systems x {n_items} items)", pairs
        except Exception as exc:  # no corpus here: fall back to the same shape
            print(f"(real corpus unavailable: {type(exc).__name__}: {exc}; using synthetic)",
                  file=sys.stderr)
    rng = np.random.default_rng(0)
    q = rng.normal(size=(16, 1)) * 10 + rng.normal(size=(16, 178)) * 15
    pairs = []
    for m in range(8):
        X = q + rng.normal(size=q.shape) * (5 + 5 * m)
        for c in range(5):
            Y = q + rng.normal(size=q.shape) * 10
            Y[rng.random(Y.shape) < 0.05] = np.nan  # some unrated outputs
            pairs.append((f"m{m}/c{c}", X, Y))
    return "synthetic (8 metrics x 5 criteria, 16 systems x 178 items)", pairs


def loop_interval(X: np.ndarray, Y: np.ndarray, level: str, sys_idx: np.ndarray,
                  item_idx: np.ndarray) -> tuple[float, float]:
    """The obvious implementation: one resample and one scipy.stats.pearsonr call at a time."""
    rs = []
    for b in range(sys_idx.shape[0]):
        Xb = X[np.ix_(sys_idx[b], item_idx[b])]
        Yb = Y[np.ix_(sys_idx[b], item_idx[b])]
        ok = np.isfinite(Xb) & np.isfinite(Yb)
        if level == "segment":
            x, y = Xb[ok], Yb[ok]
        else:
            cnt = ok.sum(axis=1)
            keep = cnt > 0
            x = np.where(ok, Xb, 0).sum(axis=1)[keep] / cnt[keep]
            y = np.where(ok, Yb, 0).sum(axis=1)[keep] / cnt[keep]
        if len(x) < 3 or np.ptp(x) == 0 or np.ptp(y) == 0:
            rs.append(np.nan)
            continue
        rs.append(stats.pearsonr(x, y).statistic)
    ci = percentile_interval(np.array(rs), 0.95)
    return ci.low, ci.high


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    shared = Path(__file__).resolve().parents[2] / "shared" / "corpora"
    ap.add_argument(
        "--data-dir",
        default=os.environ.get("NLGEVAL_DATA") or (str(shared) if shared.is_dir() else None),
    )
    ap.add_argument("--resamples", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--synthetic", action="store_true")
    args = ap.parse_args()
    what, pairs = load_pairs(args.data_dir, args.synthetic)
    B = args.resamples

    t0 = time.perf_counter()
    fast = {}
    for label, X, Y in pairs:
        for level in LEVELS:
            res = bootstrap_correlation(X, Y, level, "pearson", n_resamples=B, resample="both",
                                        seed=args.seed)
            fast[(label, level)] = res.confidence_interval()
    t_fast = time.perf_counter() - t0

    t0 = time.perf_counter()
    slow = {}
    for label, X, Y in pairs:
        sys_idx, item_idx = resample_indices(X.shape[0], X.shape[1], B, "both", args.seed)
        for level in LEVELS:
            slow[(label, level)] = loop_interval(X, Y, level, sys_idx, item_idx)
    t_loop = time.perf_counter() - t0

    diff = max(max(abs(fast[k][0] - slow[k][0]), abs(fast[k][1] - slow[k][1])) for k in fast)
    n = len(fast)
    print(f"data: {what}")
    print(f"workload: {n} bootstrap CIs (Pearson, {B} resamples of systems and items, "
          f"levels {', '.join(LEVELS)})")
    print(f"nlgeval vectorised : {t_fast:8.2f} s")
    print(f"scipy.pearsonr loop: {t_loop:8.2f} s")
    print(f"max |difference| between the intervals: {diff:.2e}")
    print(f"speed-up: {t_loop / t_fast:.1f}x")
    if not diff < 1e-9:
        print("FAIL: the two implementations disagree", file=sys.stderr)
        return 1
    return kendall_segment(pairs[:8], B, args.seed)


def kendall_segment(pairs: list, B: int, seed: int) -> int:
    """Segment-level Kendall tau-b bootstrap: weighted pair counts vs a kendalltau loop."""
    _, X0, Y0 = pairs[0]  # load the compiled kernel outside the timing
    bootstrap_correlation(X0, Y0, "segment", "kendall", n_resamples=2, seed=seed)
    t0 = time.perf_counter()
    fast = [bootstrap_correlation(X, Y, "segment", "kendall", n_resamples=B, resample="both",
                                  seed=seed).confidence_interval() for _, X, Y in pairs]
    t_fast = time.perf_counter() - t0
    t0 = time.perf_counter()
    slow = []
    for _, X, Y in pairs:
        sys_idx, item_idx = resample_indices(X.shape[0], X.shape[1], B, "both", seed)
        taus = []
        for b in range(B):
            Xb = X[np.ix_(sys_idx[b], item_idx[b])]
            Yb = Y[np.ix_(sys_idx[b], item_idx[b])]
            ok = np.isfinite(Xb) & np.isfinite(Yb)
            taus.append(stats.kendalltau(Xb[ok], Yb[ok]).statistic)
        slow.append(percentile_interval(np.array(taus), 0.95))
    t_loop = time.perf_counter() - t0
    diff = max(max(abs(a[0] - b[0]), abs(a[1] - b[1])) for a, b in zip(fast, slow, strict=True))
    print(f"\nworkload: {len(pairs)} segment-level Kendall tau-b CIs ({B} resamples)")
    print(f"nlgeval weighted pair counts: {t_fast:8.2f} s")
    print(f"scipy.kendalltau loop       : {t_loop:8.2f} s")
    print(f"max |difference| between the intervals: {diff:.2e}")
    print(f"speed-up: {t_loop / t_fast:.1f}x")
    if not diff < 1e-9:
        print("FAIL: the two implementations disagree", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
