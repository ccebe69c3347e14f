"""Reproduce the number-of-items study of González-Corbelle et al. (2023) on its profiles.

Runs nlgeval's fast study (bootstrap and resampling without replacement, sizes 2..245, 1,000
replications, discrete ANOVA with nboot = 500, alpha = 0.1) on the paper's five evaluator profiles
plus the aggregated 3-category distribution, writes the curves, the figure and Table 3, and compares
Table 3 with the paper's (see README.md for every assumption).

    .venv/bin/python experiments/items_2023/run.py [--out experiments/items_2023/results]
        [--replications 1000] [--nboot 500] [--seed 1] [--workers N]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import pandas as pd

from nlgeval.items.profiles import paper_profiles
from nlgeval.items.study import run_study
from nlgeval.tables import PaperTable

# The paper's Table 3 (profiles only; Eval_1..3 are real evaluators whose data are not published).
PAPER_TABLE3 = {
    #             bootstrap 10/5/1     rwor 10/5/1
    "positive": (23, 65, 210, 10, 44, 70),
    "negative": (17, 70, 220, 8, 38, 85),
    "polarized": (18, 80, 240, 9, 38, 85),
    "neutral": (24, 90, 245, 9, 36, 90),
    "random": (18, 55, 210, 8, 27, 65),
}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=str(Path(__file__).with_name("results")))
    ap.add_argument("--replications", type=int, default=1000)
    ap.add_argument("--nboot", type=int, default=500)
    ap.add_argument("--alpha", type=float, default=0.1)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--workers", type=int, default=None)
    args = ap.parse_args()

    t0 = time.perf_counter()
    res = run_study(paper_profiles(), replications=args.replications, n_resamples=args.nboot,
                    alpha=args.alpha, seed=args.seed, workers=args.workers)
    wall = time.perf_counter() - t0
    out = Path(args.out)
    res.write(out)

    ours = res.table3().set_index("distribution")
    rows = []
    cols = ["bootstrap 10%", "bootstrap 5%", "bootstrap 1%", "rwor 10%", "rwor 5%", "rwor 1%"]
    for name, paper in PAPER_TABLE3.items():
        for col, pv in zip(cols, paper, strict=True):
            ov = ours.loc[name, col]
            rows.append({"profile": name, "column": col, "paper": pv,
                         "nlgeval": None if pd.isna(ov) else int(ov)})
    comp = pd.DataFrame(rows)
    comp["difference"] = comp["nlgeval"] - comp["paper"]
    PaperTable(
        data=comp, caption="Table 3 of the paper vs nlgeval (smallest number of items from "
        "which the rejection share stays below the threshold).", label="tab:items-compare",
        digits=0,
    ).write(out, "table3_comparison")
    (out / "timing.txt").write_text(
        f"wall-clock seconds: {wall:.1f}\nbackend: {res.run['execution']['backend']}\n"
        f"workers: {res.run['execution']['workers']}\n"
        f"cells: {len(res.curves)}\n", encoding="utf-8")
    print(res.paper_table().to_markdown())
    print(f"study: {wall:.1f} s wall clock, {len(res.curves)} cells; results in {out}")


if __name__ == "__main__":
    main()
