"""Benchmark: the WMT point statistics, nlgeval next to MTME's plain numpy (issue 29 section 3).

Times, on the same inputs, nlgeval's

* ``pairwise_accuracy_from_scores`` (system-level pairwise accuracy, Kocmi et al. 2021) vs
  MTME ``stats.Agreement``;
* ``soft_pairwise_accuracy`` (Thompson et al. 2024; 1,000 sign flips, seed 4, pairs in row
  order) vs MTME ``pce.compute_pairwise_p_values`` (human and metric) +
  ``pce.compute_one_minus_pce``;
* ``rank_clusters`` (the WMT rank clusters, Freitag et al. 2021) vs MTME ``data.AssignRanks``
  (read from ``data.py`` at run time: that module needs Apache Beam to import), and the
  DataFrame wrapper ``assign_ranks`` for reference;

checks that both give the same answer and prints ``ratio = MTME time / nlgeval time`` (>= 1:
nlgeval at least as fast) with the machine load. MTME is not bundled: point ``--mtme`` (or
``MTME_PATH``) at a checkout of google-research/mt-metrics-eval (the folder that holds
``mt_metrics_eval/``); without it the script says so and exits.

    MTME_PATH=~/src/mt-metrics-eval .venv/bin/python benchmarks/bench_wmt_point_stats.py
"""

from __future__ import annotations

import argparse
import ast
import math
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from nlgeval.correlation.pairwise import pairwise_accuracy_from_scores, soft_pairwise_accuracy
from nlgeval.correlation.ranking import assign_ranks, rank_clusters


def load_mtme(path: str) -> dict[str, Any]:
    """MTME's functions from a checkout: ``stats`` and ``pce`` imported, ``AssignRanks``
    compiled from the source of ``data.py`` (whose imports need Apache Beam)."""
    root = Path(path)
    sys.path.insert(0, str(root))
    from mt_metrics_eval import pce, stats  # type: ignore[import-not-found]

    tree = ast.parse((root / "mt_metrics_eval" / "data.py").read_text())
    fn = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "AssignRanks")
    ns: dict[str, Any] = {"np": np}
    exec(compile(ast.Module([fn], type_ignores=[]), "mt_metrics_eval/data.py", "exec"), ns)
    return {"Agreement": stats.Agreement, "pce": pce, "AssignRanks": ns["AssignRanks"]}


def _batch(fn: Callable[[], Any]) -> int:
    """Calls per timed batch: about 2 ms, short enough that most batches run unpreempted."""
    fn()
    n = 1
    while True:
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        if time.perf_counter() - t0 > 0.002 or n >= 4096:
            return n
        n *= 2


def paired_times(f: Callable[[], Any], g: Callable[[], Any], budget: float = 1.5
                 ) -> tuple[float, float]:
    """Best per-call times of ``f`` and ``g``, measured in alternating batches for about
    ``budget`` s (the minimum filters out the preemptions of a shared machine; alternating
    exposes both to the same load)."""
    nf, ng = _batch(f), _batch(g)
    bf = bg = math.inf
    end = time.perf_counter() + budget
    rounds = 0
    while time.perf_counter() < end or rounds < 5:
        for fn, n, is_f in ((f, nf, True), (g, ng, False)):
            t0 = time.perf_counter()
            for _ in range(n):
                fn()
            t = (time.perf_counter() - t0) / n
            if is_f:
                bf = min(bf, t)
            else:
                bg = min(bg, t)
        rounds += 1
    return bf, bg


def report(name: str, f: Callable[[], Any], g: Callable[[], Any], same: bool) -> float:
    """Time nlgeval's ``f`` next to MTME's ``g`` and print both and the ratio."""
    t_nlg, t_mtme = paired_times(f, g)
    ratio = t_mtme / t_nlg
    print(f"{name:<38} nlgeval {t_nlg * 1e6:10.1f} us  MTME {t_mtme * 1e6:10.1f} us  "
          f"ratio {ratio:6.2f}x  same answer: {same}")
    return ratio


def bench_pairwise_accuracy(mtme: dict[str, Any], rng: np.random.Generator) -> list[float]:
    out = []
    for S in (5, 16, 40):
        gold = rng.normal(size=S)
        metric = gold + rng.normal(size=S)
        g, m = gold.tolist(), metric.tolist()  # MTME's callers pass lists of system scores
        a, p = mtme["Agreement"](g, m)
        same = pairwise_accuracy_from_scores(m, g).statistic == a / p
        out.append(report(f"pairwise accuracy ({S} systems)",
                          lambda m=m, g=g: pairwise_accuracy_from_scores(m, g),
                          lambda m=m, g=g: mtme["Agreement"](g, m), bool(same)))
    return out


def bench_spa(mtme: dict[str, Any], rng: np.random.Generator) -> list[float]:
    pce = mtme["pce"]
    out = []
    for S, n in ((16, 178), (15, 1300)):   # WebNLG 2020 size; a WMT language pair
        gold = rng.normal(size=(S, 1)) + rng.normal(size=(S, n))
        metric = gold + rng.normal(size=(S, n))

        def mtme_spa(gold: np.ndarray = gold, metric: np.ndarray = metric) -> float:
            return pce.compute_one_minus_pce(pce.compute_pairwise_p_values(gold),
                                             pce.compute_pairwise_p_values(metric))

        def nlg_spa(gold: np.ndarray = gold, metric: np.ndarray = metric) -> float:
            return soft_pairwise_accuracy(metric, gold, seed=4, orientation="given").statistic

        same = math.isclose(nlg_spa(), mtme_spa(), abs_tol=1e-12)
        out.append(report(f"soft pairwise accuracy ({S} x {n})", nlg_spa, mtme_spa, same))
    return out


def bench_ranks(mtme: dict[str, Any], rng: np.random.Generator) -> list[float]:
    out = []
    for n in (8, 32, 72):
        values = np.sort(rng.uniform(0.6, 0.9, n))[::-1].copy()
        gaps = values[:, None] - values[None, :]
        p = np.clip(0.5 - 8 * gaps + rng.normal(0, 0.05, (n, n)), 0, 1)   # p(row beats col)
        sig = np.triu(p, 1)                      # MTME: upper triangle, sorted best first
        names = [f"m{i:02d}" for i in range(n)]
        theirs = mtme["AssignRanks"](sig, 0.05)
        mine = rank_clusters(values, p, 0.05)
        pv = {(names[i], names[j]): float(p[i, j]) for i in range(n) for j in range(n)
              if i != j}
        frame = assign_ranks(dict(zip(names, values, strict=True)), pv, 0.05)
        same = list(mine) == list(theirs) and frame["rank"].tolist() == list(theirs)
        out.append(report(f"rank clusters ({n} metrics)",
                          lambda v=values, p=p: rank_clusters(v, p, 0.05),
                          lambda s=sig: mtme["AssignRanks"](s, 0.05), same))
        report(f"  assign_ranks, DataFrame out ({n})",
               lambda d=dict(zip(names, values, strict=True)), pv=pv: assign_ranks(d, pv, 0.05),
               lambda s=sig: mtme["AssignRanks"](s, 0.05), same)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mtme", default=os.environ.get("MTME_PATH"),
                    help="checkout of google-research/mt-metrics-eval (default: $MTME_PATH)")
    args = ap.parse_args()
    if not args.mtme or not (Path(args.mtme) / "mt_metrics_eval" / "stats.py").is_file():
        print("MTME checkout not found: pass --mtme PATH or set MTME_PATH to a checkout of "
              "google-research/mt-metrics-eval; skipping.")
        return 0
    mtme = load_mtme(args.mtme)
    print(f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    rng = np.random.default_rng(0)
    ratios = bench_pairwise_accuracy(mtme, rng) + bench_spa(mtme, rng) + bench_ranks(mtme, rng)
    print(f"smallest ratio {min(ratios):.2f}x (>= 1: nlgeval at least as fast as MTME; "
          "assign_ranks' DataFrame not counted)")
    print(f"load average {os.getloadavg()[0]:.2f} at the end")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
