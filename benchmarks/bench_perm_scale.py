"""PERM-BOTH comparisons between metrics at scale: streamed vs chunk by chunk (issue 29 section 2).

`comparison_matrix(..., method="permutation")` on a synthetic study (systems x items, 3
metrics, Pearson, 1,000 permutations by default) at segment and system level, next to the
previous code path (the swap masks drawn chunk by chunk with `iter_swap_masks` and each chunk
handed to `_all_pair_deltas`, which prepares every metric and pair again per chunk). Prints
CPU time (user + sys of this process, all threads: the machine is shared, so CPU seconds are
the comparable number), wall time, the ratio and the load average, and checks that both give
the same deltas bit for bit (Deutsch, Dror & Roth 2021 for the test).

    .venv/bin/python benchmarks/bench_perm_scale.py                    # 20 x 10,000
    .venv/bin/python benchmarks/bench_perm_scale.py --items 50000      # 1 M outputs (~2 min)
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np

from nlgeval.correlation.permutation import _pair_stream, compare
from nlgeval.correlation.permutation.draws import iter_swap_masks


def study(systems: int, items: int, metrics: int = 3) -> tuple[dict[str, np.ndarray], np.ndarray]:
    """Human scores and ``metrics`` noisy metrics of a synthetic study."""
    rng = np.random.default_rng(1)
    quality = rng.normal(size=(systems, 1)) + rng.normal(size=(systems, items))
    H = np.round(quality + rng.normal(scale=0.7, size=quality.shape), 1)
    return {f"m{j}": quality + rng.normal(scale=0.5 + j, size=H.shape)
            for j in range(metrics)}, H


def previous(mets: dict, H: np.ndarray, level: str, n: int, seed: int) -> dict:
    """The chunk-by-chunk code path the streamed one replaced (the same chunks)."""
    size = max(1, compare._MASK_CELLS // H.size // compare._PERM_BLOCK) * compare._PERM_BLOCK
    parts = [compare._all_pair_deltas(mets, H, level, "pearson", m)
             for m in iter_swap_masks(H.shape, n, "both", seed, chunk=size)]
    return {k: (r_a, r_b, np.concatenate([p[k][2] for p in parts]))
            for k, (r_a, r_b, _) in parts[0].items()}


def streamed(mets: dict, H: np.ndarray, level: str, n: int, seed: int) -> dict:
    """The streamed code path of ``comparison_matrix``."""
    return compare._pearson_pair_deltas(mets, H, level, n, "both", seed)


def timed(fn, *args) -> tuple[dict, float, float]:  # type: ignore[no-untyped-def]
    c0, w0 = time.process_time(), time.perf_counter()
    out = fn(*args)
    return out, time.process_time() - c0, time.perf_counter() - w0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--systems", type=int, default=20)
    ap.add_argument("--items", type=int, default=10_000)
    ap.add_argument("--permutations", type=int, default=1000)
    args = ap.parse_args()
    mets, H = study(args.systems, args.items)
    small = {k: v[:, :50] for k, v in mets.items()}
    for level in ("segment", "system"):  # compile / load the kernels first
        streamed(small, H[:, :50], level, 20, 0)
        previous(small, H[:, :50], level, 20, 0)
    print(f"{args.systems} x {args.items:,} outputs, 3 metrics, {args.permutations} "
          f"permutations; load average {os.getloadavg()[0]:.1f}")
    print(f"{'level':<9}{'previous CPU':>14}{'streamed CPU':>14}{'ratio':>8}"
          f"{'previous wall':>15}{'streamed wall':>15}  identical")
    for level in ("segment", "system"):
        want, c_old, w_old = timed(previous, mets, H, level, args.permutations, 0)
        got, c_new, w_new = timed(streamed, mets, H, level, args.permutations, 0)
        same = all(got[k][:2] == want[k][:2] and np.array_equal(got[k][2], want[k][2])
                   for k in want)
        print(f"{level:<9}{c_old:>13.2f}s{c_new:>13.2f}s{c_old / c_new:>7.1f}x"
              f"{w_old:>14.2f}s{w_new:>14.2f}s  {same}")
    print(f"load average after: {os.getloadavg()[0]:.1f}; "
          f"masks drawn by numpy up to {_pair_stream._NUMPY_MASKS:,} cells")


if __name__ == "__main__":
    main()
