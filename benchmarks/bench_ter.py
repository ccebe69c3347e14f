"""Benchmark: compiled TER (``ter``, engine=fast) vs sacrebleu's TER called per pair.

Workload: every rated output of WebNLG 2020 (about 3,000 outputs of 16 systems) against each of
its references (1-5), i.e. about 8,700 (hypothesis, reference) pairs.

Measured in one run, on the same machine, with identical numbers asserted:

1. per pair: ``sacrebleu.metrics.lib_ter.translation_edit_rate(h, r)`` for every pair vs
   ``nlgeval.metrics._ter_fast.pair_edits(hyps, refs)`` on the same tokenised words (the number
   of edits of every pair must be identical). The ratio of the two is the per-pair speed-up.
2. per segment (multi-reference, as scored): ``get_metric("ter:engine=sacrebleu")`` vs
   ``get_metric("ter")`` ``segment_stats`` with one process (identical edits and average
   reference lengths), tokenisation included.

The one-off cost of loading the compiled code (numba's on-disk cache; the first run ever also
compiles, 10-30 s) is printed separately and not part of the ratio.

Target (issue 19): >= 10x per (hypothesis, reference) pair.

Run:  .venv/bin/python benchmarks/bench_ter.py [--data-dir DIR] [--limit N]
(``--limit N`` keeps the rated outputs of the first N items only, for a quick look; DIR is a
folder laid out like the bundled corpora, default ``$NLGEVAL_DATA``.)
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numba
import numpy as np
from _common import corpora_dir
from sacrebleu.metrics import TER
from sacrebleu.metrics.lib_ter import translation_edit_rate

from nlgeval.corpora import load_corpus
from nlgeval.metrics import get_metric
from nlgeval.provenance import package_versions


def timed(fn):
    """(result, wall seconds, CPU seconds of this process)."""
    t0, c0 = time.perf_counter(), time.process_time()
    out = fn()
    return out, time.perf_counter() - t0, time.process_time() - c0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data-dir", default=corpora_dir(),
                    help="folder laid out like the bundled corpora (default: $NLGEVAL_DATA)")
    ap.add_argument("--limit", type=int, default=None, help="only the first N items")
    args = ap.parse_args()

    corpus = load_corpus("webnlg2020", args.data_dir, download=False)
    rated = corpus.rated_outputs()
    if args.limit:
        keep = list(dict.fromkeys(rated["item"]))[: args.limit]
        corpus = corpus.subset(items=keep)
        rated = corpus.rated_outputs()
    hyps = rated["text"].tolist()
    refs = corpus.reference_lists(rated["item"].tolist())
    pre = TER()._preprocess_segment
    pair_h = [pre(h).split() for h, rs in zip(hyps, refs, strict=True) for _ in rs]
    pair_r = [pre(r).split() for rs in refs for r in rs]
    n_pairs = len(pair_h)
    v = package_versions()
    print(
        f"WebNLG 2020 rated outputs: {len(hyps)} segments, {n_pairs} (hypothesis, reference) "
        f"pairs, up to {max(map(len, refs))} references; cores: {os.cpu_count()}; "
        f"sacrebleu {v['sacrebleu']}, numba {numba.__version__}"
    )

    from nlgeval.metrics import _ter_fast

    _, t_load, _ = timed(lambda: _ter_fast.pair_edits([["a", "b"]], [["b", "a"]]))
    _, t_load2, _ = timed(lambda: _ter_fast.min_edits([["a", "b"]], [[["b", "a"]]]))
    print(f"one-off: loading the compiled TER kernels {t_load + t_load2:.2f}s")

    ok = True
    expected, t_naive, c_naive = timed(
        lambda: np.array(
            [translation_edit_rate(h, r)[0] for h, r in zip(pair_h, pair_r, strict=True)]
        )
    )
    got, t_fast, c_fast = timed(lambda: _ter_fast.pair_edits(pair_h, pair_r))
    same = bool(np.array_equal(expected, got))
    ratio = t_naive / t_fast
    ok &= same and ratio >= 10
    print(
        f"{'TER/pair':<12} sacrebleu {t_naive:8.2f}s ({1e3 * t_naive / n_pairs:.2f} ms/pair)  "
        f"nlgeval {t_fast:6.3f}s ({1e3 * t_fast / n_pairs:.3f} ms/pair)  "
        f"speed-up {ratio:6.1f}x (target 10x)  identical: {same}  "
        f"[CPU {c_naive:.1f}s vs {c_fast:.2f}s: {c_naive / max(c_fast, 1e-9):.1f}x]",
        flush=True,
    )

    slow_m, fast_m = get_metric("ter:engine=sacrebleu"), get_metric("ter")
    s_expected, t_naive, c_naive = timed(lambda: slow_m.segment_stats(hyps, refs, n_jobs=1))
    s_got, t_fast, c_fast = timed(lambda: fast_m.segment_stats(hyps, refs, n_jobs=1))
    same = bool(np.array_equal(s_expected, s_got))
    ok &= same
    print(
        f"{'TER/segment':<12} engine=sacrebleu {t_naive:7.2f}s  engine=fast {t_fast:6.3f}s  "
        f"speed-up {t_naive / t_fast:6.1f}x  identical: {same}  (multi-reference statistics, "
        f"tokenisation included, one process)  "
        f"[CPU {c_naive:.1f}s vs {c_fast:.2f}s]"
    )
    print("ALL TARGETS MET" if ok else "SOME TARGET MISSED OR SCORES DIFFER")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
