"""Best-worst scaling designs: which outputs go together in a tuple (Louviere et al. 2015).

Each tuple holds ``tuple_size`` (default 4) candidates; a rater picks the best and the worst.
Two constructions, both seeded with :func:`numpy.random.default_rng`:

* **Balanced incomplete block design** (Yates 1936) where a cyclic one exists: when the
  number of candidates ``v`` and the tuple size ``k`` admit a cyclic difference set (a base
  block ``B`` of ``Z_v`` whose differences cover every non-zero residue equally often, e.g.
  ``{0, 1, 3, 9}`` mod 13 or ``{0, 1, 2, 4}`` mod 7), the tuples are the ``v`` translates of
  ``B`` (and of its multiples ``m B`` for further rounds): every candidate is in the same
  number of tuples and every pair of candidates in the same number of tuples.
* Otherwise the **Kiritchenko & Mohammad (2016, 2017)** procedure: ``appearances * v / k``
  tuples (``2 v`` for the default 8 appearances and tuples of 4), each candidate in exactly
  ``appearances`` tuples, never twice in one tuple, and no pair together more often than
  needed: a random start (concatenated random permutations) improved by swaps between
  tuples (moving one candidate of an over-used pair) that never increase the excess of pair
  co-occurrences over ``ceil(lambda)``, ``lambda = b k (k - 1) / (v (v - 1))`` being the
  mean. The search is a heuristic: when it stops (``max_swaps``) with a pair above
  ``ceil(lambda)`` the design says so in ``notes`` and ``pair_max``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import combinations

import numpy as np
import pandas as pd

from nlgeval.errors import InputError
from nlgeval.results import Result


@dataclass(frozen=True)
class BWSDesign(Result):
    """Tuples of a best-worst scaling study and their balance.

    ``tuples``: one row per (tuple, position): ``tuple_id, position, candidate``;
    ``appearances``: tuples per candidate (the same for all); ``pair_min``/``pair_max``:
    fewest/most tuples shared by two candidates; ``bibd``: every pair shares the same number of
    tuples (a balanced incomplete block design).

    Examples
    --------
    >>> d = bws_design(7, seed=1, appearances=4)
    >>> d.method, d.n_tuples, d.appearances, d.bibd, (d.pair_min, d.pair_max)
    ('cyclic-bibd', 7, 4, True, (2, 2))
    """

    _omit = frozenset({"tuples"})

    tuples: pd.DataFrame
    candidates: tuple[str, ...]
    tuple_size: int
    n_tuples: int
    appearances: int
    pair_min: int
    pair_max: int
    bibd: bool
    method: str
    seed: int
    notes: tuple[str, ...] = field(default=())

    def matrix(self) -> np.ndarray:
        """(n_tuples, tuple_size) array of candidate labels."""
        return self.tuples["candidate"].to_numpy().reshape(self.n_tuples, self.tuple_size)


def _cyclic_base_block(v: int, k: int) -> tuple[int, ...] | None:
    """A (v, k, lambda) cyclic difference set containing 0, or None (brute force, v <= 40)."""
    if v > 40 or k >= v or (k * (k - 1)) % (v - 1):
        return None
    lam = k * (k - 1) // (v - 1)
    for rest in combinations(range(1, v), k - 1):
        block = (0, *rest)
        diffs = np.array([(a - b) % v for a in block for b in block if a != b])
        if np.all(np.bincount(diffs, minlength=v)[1:] == lam):
            return block
    return None


def _cyclic_tuples(v: int, k: int, rounds: int) -> np.ndarray | None:
    """``rounds`` developments of multiples ``m B`` of a base block, all tuples distinct."""
    base = _cyclic_base_block(v, k)
    if base is None:
        return None
    blocks: list[np.ndarray] = []
    seen: set[tuple[int, ...]] = set()
    for m in range(1, v):
        if np.gcd(m, v) != 1 or len(blocks) == rounds * v:
            continue
        dev = (np.array(base)[None, :] * m + np.arange(v)[:, None]) % v
        keys = {tuple(sorted(r)) for r in dev.tolist()}
        if keys & seen:
            continue
        seen |= keys
        blocks.extend(dev)
    return np.array(blocks) if len(blocks) == rounds * v else None


def _pair_counts(t: np.ndarray, v: int) -> np.ndarray:
    """(v, v) symmetric co-occurrence counts of candidates in tuples ``t`` (b, k)."""
    k = t.shape[1]
    i, j = np.triu_indices(k, 1)
    c = np.zeros((v, v), dtype=np.int64)
    np.add.at(c, (t[:, i].ravel(), t[:, j].ravel()), 1)
    return c + c.T


def _move(c: np.ndarray, cap: int, x: int, y: int, others: np.ndarray) -> int:
    """Replace ``x`` by ``y`` in a tuple with ``others``: update the pair counts ``c`` in place
    and return the change in excess co-occurrences (pairs with themselves do not count)."""
    before = np.maximum(c[x, others] - cap, 0).sum() + np.maximum(c[y, others] - cap, 0).sum()
    c[x, others] -= 1
    c[others, x] -= 1
    c[y, others] += 1
    c[others, y] += 1
    after = np.maximum(c[x, others] - cap, 0).sum() + np.maximum(c[y, others] - cap, 0).sum()
    return int(after - before)


def _dups(row: np.ndarray) -> int:
    return len(row) - len(np.unique(row))


def _offender(t: np.ndarray, c: np.ndarray, cap: int, rng: np.random.Generator
              ) -> tuple[int, int]:
    """A (tuple, position) to move: a repeated candidate, else one of a pair seen together
    more than ``cap`` times (a random one of each)."""
    s = np.sort(t, axis=1)
    dup_rows = np.flatnonzero((np.diff(s, axis=1) == 0).any(axis=1))
    if len(dup_rows):
        r = int(rng.choice(dup_rows))
        vals, cnt = np.unique(t[r], return_counts=True)
        return r, int(np.flatnonzero(t[r] == vals[cnt > 1][0])[-1])
    over = np.argwhere(np.triu(c > cap, 1))
    x, z = over[rng.integers(len(over))]
    rows = np.flatnonzero((t == x).any(axis=1) & (t == z).any(axis=1))
    r = int(rng.choice(rows))
    return r, int(np.flatnonzero(t[r] == (x if rng.random() < 0.5 else z))[0])


def _km_tuples(v: int, k: int, appearances: int, rng: np.random.Generator,
               max_swaps: int) -> np.ndarray:
    """Kiritchenko & Mohammad (2016): concatenated random permutations, improved by swaps
    that do not increase (1000 x repeated candidates + excess pair co-occurrences)."""
    b = appearances * v // k
    t = np.concatenate([rng.permutation(v) for _ in range(appearances)]).reshape(b, k)
    cap = int(np.ceil(b * k * (k - 1) / (v * (v - 1)) - 1e-12))
    c = _pair_counts(t, v)
    np.fill_diagonal(c, 0)
    cost = 1000 * sum(_dups(r) for r in t) + int(np.maximum(c - cap, 0).sum()) // 2
    for _ in range(max_swaps):
        if cost == 0:
            break
        r1, p1 = _offender(t, c, cap, rng)
        r2, p2 = int(rng.integers(b)), int(rng.integers(k))
        x, y = t[r1, p1], t[r2, p2]
        if r1 == r2 or x == y:
            continue
        o1, o2 = np.delete(t[r1], p1), np.delete(t[r2], p2)
        old = _dups(t[r1]) + _dups(t[r2])
        d = _move(c, cap, x, y, o1[o1 != y]) + _move(c, cap, y, x, o2[o2 != x])
        t[r1, p1], t[r2, p2] = y, x
        d += 1000 * (_dups(t[r1]) + _dups(t[r2]) - old)
        if d <= 0:
            cost += d
        else:
            t[r1, p1], t[r2, p2] = x, y
            _move(c, cap, x, y, o2[o2 != x])
            _move(c, cap, y, x, o1[o1 != y])
    if (np.diff(np.sort(t, axis=1), axis=1) == 0).any():
        raise InputError("could not build tuples without a repeated candidate; use more "
                         "candidates or fewer appearances")
    return t


def bws_design(
    candidates: int | Sequence[str],
    *,
    seed: int,
    tuple_size: int = 4,
    appearances: int = 8,
    max_swaps: int = 4000,
) -> BWSDesign:
    """Tuples for best-worst scaling (module docstring: a cyclic balanced incomplete block
    design when one exists, else the Kiritchenko & Mohammad 2016 procedure).

    ``candidates``: a count (labels ``"1"``, ``"2"``, ...) or labels (e.g. system names, or
    ``item|system`` keys of outputs). ``appearances``: tuples per candidate; it must make
    ``appearances * len(candidates)`` a multiple of ``tuple_size`` (the default 8 with tuples
    of 4 gives the 2N tuples of Kiritchenko & Mohammad 2017). Tuple order and positions
    within tuples are shuffled; labels are assigned to design points at random.

    Parameters
    ----------
    candidates : int or sequence of str
        A count of candidates, or their labels.
    seed : int
        Seed of ``numpy.random.default_rng``.
    tuple_size, appearances, max_swaps : int, default 4, 8, 4000
        Candidates per tuple, tuples per candidate, swap budget of the search.

    Returns
    -------
    BWSDesign
        ``tuples`` (``tuple_id, position, candidate``), the counts and pair balance.

    Examples
    --------
    >>> d = bws_design(["a", "b", "c", "d", "e", "f"], seed=3)
    >>> d.n_tuples, d.appearances, d.method
    (12, 8, 'kiritchenko-mohammad')
    >>> d.tuples.groupby("candidate").size().unique().tolist()  # each in 8 tuples
    [8]
    """
    labels = [str(i + 1) for i in range(candidates)] if isinstance(candidates, int) \
        else [str(c) for c in candidates]
    v, k = len(labels), int(tuple_size)
    if len(set(labels)) != v:
        raise InputError("candidate labels must be distinct")
    if k < 2 or v < k:
        raise InputError(f"tuples of {k} need at least {k} candidates (and k >= 2); got {v}")
    if appearances < 1 or (appearances * v) % k:
        ok = [a for a in range(1, 4 * k + 1) if (a * v) % k == 0][:3]
        raise InputError(f"appearances x candidates ({appearances} x {v}) must be a multiple "
                         f"of the tuple size {k}; appearances that fit: "
                         + ", ".join(map(str, ok)))
    rng = np.random.default_rng(seed)
    t = None
    if appearances % k == 0:
        t = _cyclic_tuples(v, k, appearances // k)
    method = "cyclic-bibd" if t is not None else "kiritchenko-mohammad"
    if t is None:
        t = _km_tuples(v, k, appearances, rng, max_swaps)
    t = t[rng.permutation(len(t))]
    t = np.array([row[rng.permutation(k)] for row in t])
    relabel = np.array(labels, dtype=object)[rng.permutation(v)]
    c = _pair_counts(t, v)[np.triu_indices(v, 1)]
    b = len(t)
    tuples = pd.DataFrame({"tuple_id": np.repeat(np.arange(1, b + 1), k),
                           "position": np.tile(np.arange(1, k + 1), b),
                           "candidate": relabel[t.ravel()]})
    bibd = bool(c.min() == c.max())
    cap = int(np.ceil(b * k * (k - 1) / (v * (v - 1)) - 1e-12))
    notes: tuple[str, ...] = () if bibd else (
        f"pairs share {c.min()} to {c.max()} tuples (no balanced incomplete block design "
        "found for these counts)",)
    if c.max() > cap:
        notes += (f"some pair shares {c.max()} tuples, more than the {cap} needed: the swap "
                  f"search stopped after {max_swaps} swaps (raise max_swaps or try another "
                  "seed)",)
    return BWSDesign(tuples=tuples, candidates=tuple(labels), tuple_size=k, n_tuples=b,
                     appearances=int(appearances), pair_min=int(c.min()),
                     pair_max=int(c.max()), bibd=bibd, method=method, seed=int(seed),
                     notes=notes)


def bws_output_tuples(
    items: Sequence[str],
    systems: Sequence[str],
    *,
    seed: int,
    tuple_size: int = 4,
    appearances: int = 8,
) -> pd.DataFrame:
    """Best-worst tuples of the outputs of each item: one :func:`bws_design` over the systems
    per item (each with its own child of ``numpy.random.SeedSequence(seed)``), so every output
    ``(item, system)`` is in ``appearances`` tuples and a tuple compares systems on one input
    (Kiritchenko & Mohammad 2017 build tuples the same way from one list of terms).

    Returns ``tuple_id`` (``<item>-<n>``), ``position``, ``item``, ``system``.

    Parameters
    ----------
    items, systems : sequence of str
        The items and the systems whose outputs are compared.
    seed : int
        Seed of the ``numpy.random.SeedSequence`` whose children design each item.
    tuple_size, appearances : int, default 4 and 8
        Outputs per tuple; tuples per output.

    Returns
    -------
    pandas.DataFrame
        One row per output in a tuple: the columns above.

    Examples
    --------
    >>> t = bws_output_tuples(["1", "2"], list("ABCDE"), seed=1, appearances=4)
    >>> len(t), t.groupby(["item", "system"]).size().unique().tolist()
    (40, [4])
    """
    items = [str(i) for i in items]
    if len(set(items)) != len(items):
        raise InputError("item ids must be distinct")
    children = np.random.SeedSequence(seed).spawn(len(items))
    parts = []
    for item, child in zip(items, children, strict=True):
        child_seed = int(child.generate_state(1)[0])
        d = bws_design(list(systems), seed=child_seed, tuple_size=tuple_size,
                       appearances=appearances)
        parts.append(pd.DataFrame({
            "tuple_id": item + "-" + d.tuples["tuple_id"].astype(str),
            "position": d.tuples["position"], "item": item,
            "system": d.tuples["candidate"]}))
    return pd.concat(parts, ignore_index=True)
