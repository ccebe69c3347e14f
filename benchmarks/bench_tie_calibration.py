"""Benchmark: tie calibration (acc_eq) vs the straightforward MTME-style sweep (issue 13).

Workload: acc_eq with tie calibration (Deutsch, Foster & Freitag 2023) of one metric against
MQM on WMT21 TED en-de (13 MT systems x 529 segments, 6,877 rated outputs, ~23.6 M segment
pairs) with no grouping, which is where MTME's algorithm is slow: it enumerates every pair,
sorts all of them by metric difference and sweeps the thresholds in a Python loop. The
alternative here re-implements that algorithm (pairs enumerated with numpy, the sweep as in
``tau_optimization.py``); the script checks that both give the same epsilon and accuracy before
printing the speed ratio, and reports the peak memory of nlgeval's search. It also times the
item grouping (both ways) and MTME's ``perm_test='pairs'`` significance test for acc_eq between
two metrics with 1,000 permutations (no grouping and item grouping).

Metrics: sentence-level chrF and BLEU against the reference translation (nlgeval's sacrebleu
adapters, cached after the first run) when the corpus loads; otherwise the per-segment MQM file
is read directly and the metrics are MQM plus seeded Gaussian noise; with neither, synthetic
matrices of the same shape (the output says which).

    python benchmarks/bench_tie_calibration.py [--data-dir DIR] [--permutations 1000]
                                               [--synthetic]
"""

from __future__ import annotations

import argparse
import gc
import multiprocessing
import os
import resource
import sys
import time
import tracemalloc
import warnings
from pathlib import Path

import numpy as np

from nlgeval.correlation.tie_calibration import acc_eq_permutation_test, tie_calibration

TED_SCORES = Path("wmt21_ted_mqm") / "ende" / "mqm_ted_ende.avg_seg_scores.tsv"


def _from_corpus(data_dir: str | None) -> tuple[str, np.ndarray, np.ndarray, np.ndarray]:
    from nlgeval.corpora import load_corpus
    from nlgeval.correlation.levels import score_matrices
    from nlgeval.metrics.scoring import score_corpus

    corpus = load_corpus("wmt21-ted-ende", data_dir, download=False)
    human = corpus.human_scores(criteria=["MQM"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        seg = score_corpus(corpus, ["chrf", "bleu"], rated_only=True).segments
    cols = ["system", "item", "score"]
    a = score_matrices(seg.loc[seg.metric == "chrf", cols], human[cols])
    b = score_matrices(seg.loc[seg.metric == "bleu", cols], human[cols],
                       systems=a.systems, items=a.items)
    S, n_items = a.human.shape
    what = (f"WMT21 TED en-de, MQM ({S} systems x {n_items} segments, "
            f"{int(a.complete.sum())} rated outputs); metrics: sentence chrF, sentence BLEU")
    return what, a.metric, b.metric, a.human


def _from_tsv(data_dir: str | None) -> tuple[str, np.ndarray, np.ndarray, np.ndarray]:
    """Per-segment MQM straight from the repository file; metrics = MQM + seeded noise."""
    if not data_dir:
        raise FileNotFoundError("no data folder")
    path = Path(data_dir) / TED_SCORES
    scores: dict[tuple[str, str], float] = {}
    with open(path, encoding="utf-8") as fh:
        next(fh)  # header separated by spaces; data lines mix tabs and spaces
        for line in fh:
            system, score, seg = line.split()
            if system.startswith("ref"):
                continue  # the human translation is not an MT system
            scores[(system, seg)] = np.nan if score == "None" else float(score)
    systems = sorted({s for s, _ in scores})
    segs = sorted({g for _, g in scores}, key=int)
    Y = np.array([[scores.get((s, g), np.nan) for g in segs] for s in systems])
    keep = np.isfinite(Y).any(axis=0)
    Y = Y[:, keep]
    rng = np.random.default_rng(0)
    XA = Y + rng.normal(size=Y.shape) * 2.0
    XB = Y + rng.normal(size=Y.shape) * 2.5
    what = (f"WMT21 TED en-de, MQM from the TSV ({Y.shape[0]} systems x {Y.shape[1]} segments, "
            f"{int(np.isfinite(Y).sum())} rated); metrics: MQM + N(0, 2^2), MQM + N(0, 2.5^2)")
    return what, XA, XB, Y


def _synthetic() -> tuple[str, np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    S, n_items = 13, 529
    q = rng.normal(size=(S, n_items))
    Y = -np.round(np.maximum(0.0, rng.normal(size=(S, n_items)) * 3 - q))  # MQM-like, many ties
    XA = Y + rng.normal(size=Y.shape) * 2.0
    XB = Y + rng.normal(size=Y.shape) * 2.5
    return "synthetic (13 systems x 529 segments, MQM-like ties)", XA, XB, Y


def load(data_dir: str | None, synthetic: bool) -> tuple[str, np.ndarray, np.ndarray,
                                                           np.ndarray]:
    if not synthetic:
        for source in (_from_corpus, _from_tsv):
            try:
                return source(data_dir)
            except Exception as exc:  # fall through to the next source
                print(f"({source.__name__}: {type(exc).__name__}: {exc})", file=sys.stderr)
    return _synthetic()


def _groups(X: np.ndarray, Y: np.ndarray, grouping: str) -> list[tuple[np.ndarray, np.ndarray]]:
    ok = np.isfinite(X) & np.isfinite(Y)
    if grouping == "none":
        rows = [(X[ok], Y[ok])]
    elif grouping == "item":
        rows = [(X[ok[:, i], i], Y[ok[:, i], i]) for i in range(X.shape[1])]
    else:
        rows = [(X[s, ok[s]], Y[s, ok[s]]) for s in range(X.shape[0])]
    return [(m, h) for m, h in rows if m.size >= 2]


CON, DIS, TH, TM, THM = range(5)


def mtme_style(X: np.ndarray, Y: np.ndarray, grouping: str) -> tuple[float, float]:
    """The straightforward algorithm (MTME ``tau_optimization``): every pair with its
    category before and after becoming a metric tie, all pairs sorted by |dm|, then a Python
    loop that moves one pair at a time to "metric tie" and re-evaluates the mean acc_23 at every
    distinct threshold (the first maximum wins, like ``np.nanargmax``)."""
    rows = _groups(X, Y, grouping)
    R = len(rows)
    row_of, diff, normal, tied, n_pairs, stats = [], [], [], [], [], []
    for r, (m, h) in enumerate(rows):
        i, j = np.triu_indices(m.size, 1)
        dm, dh = m[i] - m[j], h[i] - h[j]
        cat = np.where(dh == 0, np.where(dm == 0, THM, TH),
                       np.where(dm == 0, TM, np.where((dm > 0) == (dh > 0), CON, DIS)))
        row_of.append(np.full(i.size, r, dtype=np.int32))
        diff.append(np.abs(dm))
        normal.append(cat.astype(np.int8))
        tied.append(np.where(dh == 0, THM, TM).astype(np.int8))
        n_pairs.append(i.size)
        stats.append(np.bincount(cat, minlength=5).tolist())
    row_a, diff_a = np.concatenate(row_of), np.concatenate(diff)
    normal_a, tied_a = np.concatenate(normal), np.concatenate(tied)
    del row_of, diff, normal, tied
    total = sum((st[CON] + st[THM]) / n for st, n in zip(stats, n_pairs, strict=True))
    cur_t, cur_v = 0.0, total / R
    best_t, best_v = cur_t, cur_v
    order = np.argsort(diff_a, kind="stable")
    step = 1 << 20
    for s in range(0, order.size, step):
        o = order[s:s + step]
        for r, d, a, b in zip(row_a[o].tolist(), diff_a[o].tolist(), normal_a[o].tolist(),
                              tied_a[o].tolist(), strict=True):
            st, n = stats[r], n_pairs[r]
            total -= (st[CON] + st[THM]) / n
            st[a] -= 1
            st[b] += 1
            total += (st[CON] + st[THM]) / n
            if d != cur_t:
                if cur_v > best_v:
                    best_t, best_v = cur_t, cur_v
                cur_t = d
            cur_v = total / R
    if cur_v > best_v:
        best_t, best_v = cur_t, cur_v
    return best_t, best_v


def _rss_child(XA: np.ndarray, Y: np.ndarray, queue: multiprocessing.Queue) -> None:
    """In a fresh process: peak RSS before and after one tie calibration (KiB)."""
    tie_calibration(XA[:3, :4], Y[:3, :4], "none")  # load the compiled kernels
    gc.collect()
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    tie_calibration(XA, Y, "none")
    queue.put((before, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss))


def peak_rss_growth(XA: np.ndarray, Y: np.ndarray) -> tuple[float, float]:
    """(growth of the peak RSS caused by the calibration, peak RSS) in MiB, fresh process."""
    ctx = multiprocessing.get_context("spawn")
    queue = ctx.Queue()
    proc = ctx.Process(target=_rss_child, args=(XA, Y, queue))
    proc.start()
    before, after = queue.get(timeout=600)
    proc.join()
    return (after - before) / 1024, after / 1024


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    shared = Path(__file__).resolve().parents[2] / "shared" / "corpora"
    ap.add_argument(
        "--data-dir",
        default=os.environ.get("NLGEVAL_DATA") or (str(shared) if shared.is_dir() else None),
    )
    ap.add_argument("--permutations", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--synthetic", action="store_true")
    args = ap.parse_args()
    what, XA, XB, Y = load(args.data_dir, args.synthetic)
    ok = np.isfinite(XA) & np.isfinite(Y)
    n = int(ok.sum())

    t0 = time.perf_counter()  # compile the numba kernels (cached on disk after the first run)
    tie_calibration(XA[:3, :4], Y[:3, :4], "none")
    acc_eq_permutation_test(XA[:3, :4], XB[:3, :4], Y[:3, :4], "none", permutations=10)
    t_jit = time.perf_counter() - t0

    gc.collect()
    c0 = time.process_time()
    t0 = time.perf_counter()
    fast = tie_calibration(XA, Y, "none")
    t_fast = time.perf_counter() - t0
    c_fast = time.process_time() - c0
    tracemalloc.start()
    tie_calibration(XA, Y, "none")
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    rss_growth, rss_peak = peak_rss_growth(XA, Y)

    t0 = time.perf_counter()
    item_fast = tie_calibration(XA, Y, "item")
    t_item_fast = time.perf_counter() - t0
    t0 = time.perf_counter()
    item_slow = mtme_style(XA, Y, "item")
    t_item_slow = time.perf_counter() - t0

    t0 = time.perf_counter()
    perm_none = acc_eq_permutation_test(XA, XB, Y, "none", permutations=args.permutations,
                                        seed=args.seed)
    t_perm_none = time.perf_counter() - t0
    t0 = time.perf_counter()
    perm_item = acc_eq_permutation_test(XA, XB, Y, "item", permutations=args.permutations,
                                        seed=args.seed)
    t_perm_item = time.perf_counter() - t0

    c0 = time.process_time()
    t0 = time.perf_counter()
    slow_eps, slow_acc = mtme_style(XA, Y, "none")
    t_slow = time.perf_counter() - t0
    c_slow = time.process_time() - c0

    print(f"data: {what}")
    print(f"workload: acc_eq tie calibration, no grouping, {n} outputs = "
          f"{n * (n - 1) // 2:,} pairs; numba compile/load {t_jit:.1f} s (not counted)")
    print(f"nlgeval (bucketed search) : {t_fast:8.3f} s  epsilon={fast.epsilon!r} "
          f"acc_eq={fast.statistic!r}")
    print(f"MTME-style sort + sweep   : {t_slow:8.3f} s  epsilon={slow_eps!r} "
          f"acc_eq={slow_acc!r}")
    print(f"memory of the nlgeval search: peak RSS +{rss_growth:.0f} MiB in a fresh process "
          f"(peak {rss_peak:.0f} MiB incl. Python/numba), numpy allocations peak "
          f"{peak / 2**20:.1f} MiB")
    print(f"item grouping: nlgeval {t_item_fast:.3f} s, MTME-style {t_item_slow:.3f} s "
          f"(epsilon {item_fast.epsilon!r} vs {item_slow[0]!r})")
    print(f"PERM-BOTH acc_eq (pairs), {args.permutations} permutations: no grouping "
          f"{t_perm_none:.2f} s (p={perm_none.pvalue:.4f}), item grouping {t_perm_item:.2f} s "
          f"(p={perm_item.pvalue:.4f})")
    print(f"speed-up: {t_slow / t_fast:.1f}x wall clock ({c_slow / c_fast:.1f}x CPU time)")
    same = (fast.epsilon == slow_eps and abs(fast.statistic - slow_acc) < 1e-9
            and abs(item_fast.statistic - item_slow[1]) < 1e-9)
    if not same:
        print("FAIL: the two implementations disagree", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
