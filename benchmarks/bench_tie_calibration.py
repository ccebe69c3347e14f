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

Growth (issue 31, ``--growth``): one search with no grouping at 1,000, 10,000 and 100,000
cells (10 systems) of two synthetic studies -- the text-free scale study of
``bench_scale_memory.py`` (human scores to 3 decimals, few human ties: the best threshold is
isolated) and an MQM-like one (half the human scores 0: a flat maximum) -- for the current
search, the previous bucketed search (``_tie_search_previous.py``; skipped where its projected
time exceeds ``--old-budget`` seconds) and MTME's own ``tau_optimization`` with
``sample_rate=1`` (``--mtme DIR``: a checkout or bare clone of google-research/mt-metrics-eval;
only up to ``--mtme-max`` cells: it holds every pair as a Python object), checking that all give
the same epsilon.

    python benchmarks/bench_tie_calibration.py [--data-dir DIR] [--permutations 1000]
                                               [--synthetic]
    python benchmarks/bench_tie_calibration.py --growth [--mtme DIR] [--sizes 1000,10000,100000]
"""

from __future__ import annotations

import argparse
import gc
import math
import multiprocessing
import os
import resource
import sys
import time
import tracemalloc
import warnings
from pathlib import Path

import numpy as np

from nlgeval.correlation.kendall.tie_calibration import acc_eq_permutation_test, tie_calibration

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
    if grouping == "segment":
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
    tie_calibration(XA[:3, :4], Y[:3, :4], "segment")  # load the compiled kernels
    gc.collect()
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    tie_calibration(XA, Y, "segment")
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


def growth_data(kind: str, cells: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """(metric, human) matrices of 10 systems x cells/10 items of a synthetic study."""
    rng = np.random.default_rng(seed)
    S = 10
    q = rng.normal(size=S)[:, None] + rng.normal(size=(S, cells // S))
    if kind == "scale":  # as bench_scale_memory.write_study: few human ties
        Y = np.round(q + rng.normal(size=q.shape), 3)
        return np.round(q + rng.normal(size=q.shape), 4), Y
    Y = -np.round(np.maximum(0.0, rng.normal(size=q.shape) * 3 - q))  # MQM-like, many zeros
    return Y + rng.normal(size=Y.shape) * 2.0, Y


def _mtme_module(path: str | None):  # type: ignore[no-untyped-def]
    """MTME's tau_optimization module from a checkout or a bare clone (None if unavailable)."""
    import importlib.util
    import subprocess
    import tempfile

    if not path:
        return None
    src = Path(path) / "mt_metrics_eval" / "tau_optimization.py"
    if not src.is_file():
        text = subprocess.run(["git", f"--git-dir={path}", "show",
                               "HEAD:mt_metrics_eval/tau_optimization.py"], check=True,
                              capture_output=True, text=True).stdout
        src = Path(tempfile.mkdtemp()) / "tau_optimization.py"
        src.write_text(text, encoding="utf-8")
    spec = importlib.util.spec_from_file_location("mtme_tau_optimization", src)
    mod = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(mod)  # type: ignore[union-attr]
    return mod


def _timed(f, *args):  # type: ignore[no-untyped-def]
    t0 = time.perf_counter()
    out = f(*args)
    return out, time.perf_counter() - t0


def growth(sizes: list[int], mtme_path: str | None, mtme_max: int, old_budget: float) -> int:
    """Time one ungrouped search per size with the current, previous and MTME algorithms."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import _tie_search_previous as previous

    import nlgeval.correlation.kendall.tie_search as ts
    from nlgeval.correlation.kendall import build_groups

    mtme = _mtme_module(mtme_path)
    warm = build_groups(*growth_data("mqm", 40), "segment")
    ts.calibrate_groups(warm)  # compile the numba kernels (cached on disk after the first run)
    previous.calibrate_groups(warm)
    print(f"load average {os.getloadavg()[0]:.1f}; one search, no grouping, 10 systems")
    print("study | cells | pairs | current | previous | MTME tau_optimization | epsilon")
    failed = 0
    for kind in ("scale", "mqm"):
        prev: tuple[int, float, float] | None = None
        for cells in sizes:
            X, Y = growth_data(kind, cells)
            groups = build_groups(X, Y, "segment")
            ts._SEARCHES.clear()
            new, t_new = _timed(ts.calibrate_groups, groups)
            projected = prev[2] * (cells / prev[0]) ** 2 if prev and prev[2] > 0 else 0.0
            if prev is None or projected <= old_budget:
                old, t_old = _timed(previous.calibrate_groups, groups)
                old_text = f"{t_old:.2f} s"
                failed += old.epsilon != new.epsilon
            else:
                t_old = math.nan
                old_text = f"skipped (projected {projected:.0f} s)"
            mt_text = "not run"
            if mtme is not None and cells <= mtme_max:
                res, t_mt = _timed(mtme.tau_optimization, X.reshape(1, -1), Y.reshape(1, -1),
                                   mtme.TauSufficientStats.acc_23)
                mt_text = f"{t_mt:.2f} s"
                failed += float(res.best_threshold) != new.epsilon
            pairs = cells * (cells - 1) // 2
            print(f"{kind} | {cells:,} | {pairs:,} | {t_new:.2f} s | {old_text} | {mt_text} | "
                  f"{new.epsilon:.6g}", flush=True)
            if prev is not None:
                k_new = math.log(t_new / prev[1]) / math.log(cells / prev[0])
                k_old = (math.log(t_old / prev[2]) / math.log(cells / prev[0])
                         if math.isfinite(t_old) and prev[2] > 0 else math.nan)
                print(f"  growth from {prev[0]:,} cells: current n^{k_new:.2f}, "
                      f"previous n^{k_old:.2f}")
            prev = (cells, t_new, t_old)
    if failed:
        print("FAIL: the implementations disagree", file=sys.stderr)
    return 1 if failed else 0


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
    ap.add_argument("--growth", action="store_true", help="the growth table instead")
    ap.add_argument("--sizes", default="1000,10000,100000")
    ap.add_argument("--mtme", default=None, help="google-research/mt-metrics-eval checkout")
    ap.add_argument("--mtme-max", type=int, default=2000)
    ap.add_argument("--old-budget", type=float, default=900.0)
    args = ap.parse_args()
    if args.growth:
        return growth([int(v) for v in args.sizes.split(",")], args.mtme, args.mtme_max,
                      args.old_budget)
    what, XA, XB, Y = load(args.data_dir, args.synthetic)
    ok = np.isfinite(XA) & np.isfinite(Y)
    n = int(ok.sum())

    t0 = time.perf_counter()  # compile the numba kernels (cached on disk after the first run)
    tie_calibration(XA[:3, :4], Y[:3, :4], "segment")
    acc_eq_permutation_test(XA[:3, :4], XB[:3, :4], Y[:3, :4], "segment", n_resamples=10)
    t_jit = time.perf_counter() - t0

    gc.collect()
    c0 = time.process_time()
    t0 = time.perf_counter()
    fast = tie_calibration(XA, Y, "segment")
    t_fast = time.perf_counter() - t0
    c_fast = time.process_time() - c0
    tracemalloc.start()
    tie_calibration(XA, Y, "segment")
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
    perm_none = acc_eq_permutation_test(XA, XB, Y, "segment", n_resamples=args.permutations,
                                        seed=args.seed)
    t_perm_none = time.perf_counter() - t0
    t0 = time.perf_counter()
    perm_item = acc_eq_permutation_test(XA, XB, Y, "item", n_resamples=args.permutations,
                                        seed=args.seed)
    t_perm_item = time.perf_counter() - t0

    c0 = time.process_time()
    t0 = time.perf_counter()
    slow_eps, slow_acc = mtme_style(XA, Y, "segment")
    t_slow = time.perf_counter() - t0
    c_slow = time.process_time() - c0

    print(f"data: {what}")
    print(f"workload: acc_eq tie calibration, no grouping, {n} outputs = "
          f"{n * (n - 1) // 2:,} pairs; numba compile/load {t_jit:.1f} s (not counted)")
    print(f"nlgeval (branch and bound): {t_fast:8.3f} s  epsilon={fast.epsilon!r} "
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
