"""Benchmark: per-rater z-scores, ``Corpus.human_scores(normalise="z")``.

The obvious alternative, and the previous code: a ``groupby.transform`` with a lambda calling
``Series.std(ddof=1)`` once per rater and criterion. nlgeval computes the same standard
deviations, bit for bit, for all raters at once (``nlgeval.corpus.rater_sd``). Both are timed
(``time.process_time``, best of ``--repeats``) on WebNLG 2020's 42,265 ratings (440 rater x
criterion groups) and on generated crowd campaigns (1 M ratings by 2,000 or 20,000 raters, 3
criteria); the script checks that both give the same scores (``==``) and prints the ratio.

The machine is shared: the load average is printed before and after; compare CPU times.

    NLGEVAL_DATA=... python benchmarks/bench_human_z.py [--repeats 3] [--no-corpus]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from dataclasses import replace

import numpy as np
import pandas as pd

sys.path.insert(0, os.path.dirname(__file__))
from _common import corpora_dir  # noqa: E402


def previous(ratings: pd.DataFrame) -> pd.DataFrame:
    """The previous code (a Python function per rater and criterion)."""
    g = ratings.groupby(["rater", "criterion"])["score"]
    sd = g.transform(lambda s: s.std(ddof=1))
    r = ratings.assign(score=(ratings["score"] - g.transform("mean")) / sd)
    r = r[np.isfinite(r["score"])]
    return (r.groupby(["system", "item", "criterion"], sort=False)["score"]
            .agg(score="mean", n_raters="count").reset_index())


def crowd(n: int, raters: int, seed: int = 29) -> pd.DataFrame:
    """``n`` ratings on 1-100 by ``raters`` crowd workers of very different output (Zipf)."""
    rng = np.random.default_rng(seed)
    who = np.minimum(rng.zipf(1.3, n), raters) - 1
    return pd.DataFrame({"rater": who.astype(str), "item": rng.integers(0, n // 20, n)
                         .astype(str), "system": rng.integers(0, 20, n).astype(str),
                         "criterion": rng.choice(["adequacy", "fluency", "coherence"], n),
                         "score": rng.integers(1, 101, n).astype(float)})


def best(f, repeats: int) -> tuple[float, object]:  # type: ignore[no-untyped-def]
    out, t_best = None, float("inf")
    for _ in range(repeats):
        t = time.process_time()
        out = f()
        t_best = min(t_best, time.process_time() - t)
    return t_best, out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--no-corpus", action="store_true", help="generated ratings only")
    args = ap.parse_args()
    from nlgeval.corpus import toy_corpus

    print(f"load average before: {os.getloadavg()}")
    cases: list[tuple[str, pd.DataFrame]] = []
    if not args.no_corpus:
        from nlgeval.corpora import load_corpus

        cases.append(("webnlg2020", load_corpus("webnlg2020", corpora_dir()).ratings))
    cases += [("crowd 1 M ratings, 2,000 raters", crowd(1_000_000, 2_000)),
              ("crowd 1 M ratings, 20,000 raters", crowd(1_000_000, 20_000))]
    print(f"{'ratings':<34} {'groups':>7} {'previous s':>11} {'nlgeval s':>10} {'ratio':>7}")
    for name, ratings in cases:
        corpus = replace(toy_corpus(), ratings=ratings)
        t_old, old = best(lambda r=ratings: previous(r), args.repeats)
        t_new, new = best(lambda c=corpus: c.human_scores(normalise="z"), args.repeats)
        assert isinstance(old, pd.DataFrame) and isinstance(new, pd.DataFrame)
        pd.testing.assert_frame_equal(new, old, check_exact=True)
        groups = ratings.groupby(["rater", "criterion"]).ngroups
        print(f"{name:<34} {groups:>7,} {t_old:>11.3f} {t_new:>10.3f} {t_old / t_new:>6.1f}x")
    print(f"load average after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
