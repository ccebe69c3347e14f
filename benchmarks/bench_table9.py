"""Benchmark: the significant-differences stage (Reiter & Belz 2009, Table 9) on WebNLG+ 2020.

The default study's stage: 8 metrics x 5 criteria, 16 systems (120 pairs), Wilcoxon
signed-rank tests paired by item, Bonferroni-corrected. Compares
:func:`nlgeval.report.differences.significant_differences` (one vectorised scipy call per
score matrix, shared index) with the obvious alternative, the per-pair loop of
:func:`nlgeval.human.metric_agreement.significant_difference_agreement` per criterion, after
checking both give the same table. Metric scores come from the score cache (run ``make run``
once first, or this scores them).

    python benchmarks/bench_table9.py [--data-dir DIR] [--repeat 3]
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import corpora_dir  # noqa: E402


def _reference(seg: pd.DataFrame, human: pd.DataFrame, criteria: list[str],
               hib: dict[str, bool]) -> pd.DataFrame:
    from nlgeval.human.metric_agreement import significant_difference_agreement

    scored = seg[seg["score"].notna()]
    full = scored.groupby(["system", "item"])["metric"].nunique()
    keep = full[full == scored["metric"].nunique()].index
    frames, cache = [], {}
    for crit in criteria:
        h = human.loc[human["criterion"] == crit, ["system", "item", "score"]]
        h = h[pd.MultiIndex.from_frame(h[["system", "item"]]).isin(keep)]
        t = significant_difference_agreement(h, scored, higher_is_better=hib, cache=cache)
        frames.append(t.assign(criterion=crit))
    out = pd.concat(frames, ignore_index=True)
    return out[["criterion", *[c for c in out.columns if c != "criterion"]]]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data-dir", default=corpora_dir())
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    from nlgeval.corpora import load_corpus
    from nlgeval.report.differences import significant_differences
    from nlgeval.report.prepare import prepare_scores
    from nlgeval.report.settings import ValidationSettings

    warnings.simplefilter("ignore")
    corpus = load_corpus("webnlg2020", args.data_dir, download=False)
    p = prepare_scores(corpus, ValidationSettings())
    seg = p.segments[p.segments["system"].isin(p.systems)]
    human = p.human[p.human["system"].isin(p.systems)]
    fast_t, ref_t = [], []
    for _ in range(args.repeat):
        t0 = time.perf_counter()
        fast = significant_differences(seg, human, p.criteria, p.higher_is_better, 0.05, [])
        fast_t.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        ref = _reference(seg, human, p.criteria, p.higher_is_better)
        ref_t.append(time.perf_counter() - t0)
    assert fast is not None
    pd.testing.assert_frame_equal(fast, ref, check_dtype=False)
    print(f"Table 9, {len(p.metrics)} metrics x {len(p.criteria)} criteria, "
          f"{len(p.systems)} systems: identical tables")
    print(f"  per-pair loop (significant_difference_agreement): {min(ref_t):6.2f} s")
    print(f"  vectorised (significant_differences):             {min(fast_t):6.2f} s")
    print(f"  ratio: {min(ref_t) / min(fast_t):.1f}x")


if __name__ == "__main__":
    main()
