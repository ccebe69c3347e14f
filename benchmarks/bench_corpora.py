"""Benchmark: loading a published corpus from the parsed (Parquet) cache vs parsing the raw files.

Run: ``NLGEVAL_DATA=/path/to/corpora .venv/bin/python benchmarks/bench_corpora.py``
Prints, per corpus, the median time of a fresh parse (``cache=False``), of a cached load, their
ratio, and checks that both give identical frames. Uses a temporary cache directory.
"""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
import time

import pandas as pd
from _common import corpora_dir

from nlgeval.corpora import load_corpus


def _median_time(fn, repeat: int = 3) -> float:
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def main() -> int:
    data_dir = corpora_dir()
    with tempfile.TemporaryDirectory() as cache:
        os.environ["NLGEVAL_CACHE"] = cache
        for name in ("webnlg2020", "e2e", "novikova2017"):
            fresh = load_corpus(name, data_dir, cache=False)
            load_corpus(name, data_dir)  # fill the cache
            cached = load_corpus(name, data_dir)
            for attr in ("outputs", "references", "ratings"):
                pd.testing.assert_frame_equal(getattr(fresh, attr), getattr(cached, attr))
            t_parse = _median_time(lambda n=name: load_corpus(n, data_dir, cache=False))
            t_cache = _median_time(lambda n=name: load_corpus(n, data_dir))
            print(
                f"{name:13s} parse {t_parse:6.2f} s   cached {t_cache:6.3f} s   "
                f"speed-up x{t_parse / t_cache:5.1f}   (identical frames)"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
