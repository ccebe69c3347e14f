"""Building blocks of the Latin-square designs in :mod:`nlgeval.human.design` (Kow & Belz
2012, LG-Eval section 3): random Latin squares, count checks, the block layout with k raters
per output, the left/right balance of relative trials, and the trial tables.

No library builds these (pingouin / statsmodels analyse designs, they do not generate them), so
the generator is a few lines of numpy, seeded by the caller's ``numpy.random.Generator``.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from nlgeval.errors import InputError


def _names(value: Sequence[str] | int, what: str, prefix: str) -> list[str]:
    if isinstance(value, bool):
        raise InputError(f"{what} must be a count or a list of names, got {value!r}")
    if isinstance(value, int | np.integer):
        if value < 1:
            raise InputError(f"the number of {what} must be at least 1, got {value}")
        return [f"{prefix}{i}" for i in range(1, int(value) + 1)]
    if isinstance(value, str):
        raise InputError(f"{what} must be a count or a list of names, got the string {value!r}")
    names = [str(v).strip() for v in value]
    if not names:
        raise InputError(f"no {what} given")
    if any(n == "" for n in names):
        raise InputError(f"empty name among the {what}")
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise InputError(f"duplicate {what}: {', '.join(dup)}")
    return names


def random_latin_square(n: int, rng: np.random.Generator) -> np.ndarray:
    """An n x n Latin square of symbols 0..n-1: a cyclic square with random row, column and
    symbol permutations (Kow & Belz 2012, section 3.1).

    Examples
    --------
    >>> import numpy as np
    >>> square = random_latin_square(4, np.random.default_rng(1))
    >>> is_latin_square(square), sorted(square[0].tolist())
    (True, [0, 1, 2, 3])
    """
    rows = rng.permutation(n)
    cols = rng.permutation(n)
    symbols = rng.permutation(n)
    return symbols[(rows[:, None] + cols[None, :]) % n]


def is_latin_square(square: np.ndarray) -> bool:
    """True when every row and every column of a square array holds each of its symbols once.

    Examples
    --------
    >>> is_latin_square([[0, 1], [1, 0]]), is_latin_square([[0, 1], [0, 1]])
    (True, False)
    """
    square = np.asarray(square)
    n = square.shape[0]
    if square.shape != (n, n):
        return False
    symbols = np.unique(square)
    if len(symbols) != n:
        return False
    rows_ok = all(len(np.unique(r)) == n for r in square)
    cols_ok = all(len(np.unique(c)) == n for c in square.T)
    return rows_ok and cols_ok


def _nearest_multiples(count: int, n: int) -> list[int]:
    low = (count // n) * n
    high = low + n
    return [c for c in (low, high) if c >= n]


def _check_counts(n_s: int, n_e: int, n: int, kind: str, *,
                  scenarios_per_evaluator: int | None, raters_per_output: int | None,
                  allow_incomplete: bool) -> list[str]:
    """Refuse counts that do not fit (proposing the nearest that do); notes for an
    incomplete design built on request."""
    m = scenarios_per_evaluator
    if m is not None or raters_per_output is not None:
        return _check_block_counts(n_s, n_e, n, kind, m or n_s, raters_per_output,
                                   allow_incomplete)
    problems = []
    for count, what in ((n_s, "scenarios"), (n_e, "evaluators")):
        if count % n:
            problems.append(f"{count} {what} is not a multiple of the {n} {kind}; nearest that "
                            "fit: " + " or ".join(map(str, _nearest_multiples(count, n))))
    if problems and not allow_incomplete:
        raise InputError(
            "the counts do not fit a Latin square: " + "; ".join(problems)
            + " (or pass allow_incomplete=True / --allow-incomplete for the most balanced "
            "incomplete design, whose imbalance the summary reports)")
    if problems:
        return ["incomplete design (counts do not fit a Latin square): " + "; ".join(problems)]
    return []


def _check_block_counts(n_s: int, n_e: int, n: int, kind: str, m: int, k: int | None,
                        allow_incomplete: bool) -> list[str]:
    """Counts of a block design: m scenarios per evaluator, k raters per output."""
    if allow_incomplete:
        raise InputError("--allow-incomplete cannot be combined with --scenarios-per-evaluator "
                         "or --raters-per-output: those designs are built complete")
    if isinstance(m, bool) or m < 1 or m % n or n_s % m:
        raise InputError(
            f"scenarios per evaluator must be a multiple of the {n} {kind} that divides the "
            f"{n_s} scenarios; got {m!r} (possible: "
            + (", ".join(str(v) for v in range(n, n_s + 1, n) if n_s % v == 0) or "none: "
               f"make the number of scenarios a multiple of {n}") + ")")
    blocks = n_s // m
    if k is not None and (isinstance(k, bool) or k < 1):
        raise InputError(f"raters per output must be at least 1, got {k!r}")
    need = None if k is None else blocks * k * n
    if need is not None and n_e != need:
        fits = (f" ({n_e} evaluators give {n_e // (blocks * n)} raters per output)"
                if n_e % (blocks * n) == 0 else "")
        raise InputError(
            f"{n_e} evaluators do not fit: {blocks} block(s) of {m} scenarios x {k} rater(s) "
            f"per output x {n} {kind} need exactly {need} evaluators; use {need}{fits}")
    if n_e % (blocks * n):
        target = max(blocks * n, n_e // (blocks * n) * blocks * n)
        raise InputError(
            f"{n_e} evaluators do not fit: {blocks} block(s) of {m} scenarios x k rater(s) per "
            f"output x {n} {kind} need a multiple of {blocks * n} evaluators; use {target}")
    return []


def block_layout(n: int, n_s: int, n_e: int, m: int, rng: np.random.Generator
                 ) -> tuple[np.ndarray, int]:
    """The (evaluators x scenarios) layout of symbols 0..n-1, -1 where an evaluator does not
    see a scenario, and the number of n x n squares used.

    Scenarios are split into ``n_s / m`` blocks of ``m`` columns; block b gets its own
    ``n_e / (n_s / m)`` evaluators, in groups of n, and each group a row of ``m / n``
    independent random Latin squares over the block's columns. So every evaluator judges m
    scenarios, each symbol ``m / n`` times; every output (scenario, symbol) is judged by one
    evaluator of each group, i.e. by ``k = n_e m / (n_s n)`` distinct evaluators, who share it for
    agreement. With ``m = n_s`` (one block) this is the classic grid of repeated squares
    (LG-Eval section 3.4); counts that do not fit (``allow_incomplete``) cut the last squares.

    Examples
    --------
    >>> import numpy as np
    >>> grid, squares = block_layout(2, 4, 4, 2, np.random.default_rng(0))
    >>> squares, (grid >= 0).sum(axis=1).tolist()
    (2, [2, 2, 2, 2])
    """
    blocks = max(1, n_s // m) if n_s % m == 0 else 1
    per_block = -(-n_e // blocks)
    br, bc = -(-per_block // n), -(-min(m, n_s) // n)  # squares per block: rows, columns
    grid = np.full((n_e, n_s), -1, dtype=np.int64)
    count = 0
    for blk in range(blocks):
        sub = np.empty((br * n, bc * n), dtype=np.int64)
        for a in range(br):
            for b in range(bc):
                sub[a * n:(a + 1) * n, b * n:(b + 1) * n] = random_latin_square(n, rng)
                count += 1
        rows = slice(blk * per_block, min((blk + 1) * per_block, n_e))
        cols = slice(blk * m, blk * m + min(m, n_s))
        grid[rows, cols] = sub[:rows.stop - rows.start, :cols.stop - cols.start]
    return grid, count


def _left_right(grid: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
    """Left/right order of relative trials (True: the pair's first system on the left).

    Balanced per pair: within each evaluator the order of its occurrences of a pair
    alternates, and every evaluator (in a random order) starts where the previous one left
    off, so each pair's overall counts differ by at most one."""
    left = np.zeros_like(grid, dtype=bool)
    for k in range(n):
        flip = bool(rng.integers(2))
        for i in rng.permutation(grid.shape[0]):
            cols = np.flatnonzero(grid[i] == k)
            cols = cols[rng.permutation(len(cols))]
            for c in cols:
                left[i, c] = flip
                flip = not flip
    return left


def _main_trials(grid: np.ndarray, left: np.ndarray, ev_names: list[str],
                 scen_order: list[str], symbols: list[str], pairs: list[tuple[str, str]],
                 practice: int, rng: np.random.Generator) -> pd.DataFrame:
    """Each evaluator's trials (the cells of its row that it judges) in its own random
    order (vectorised: argsort of uniforms, unseen cells sorted last and dropped)."""
    n_e, n_s = grid.shape
    keys = rng.random((n_e, n_s)) + (grid < 0) * 2.0
    order = np.argsort(keys, axis=1)
    per = (grid >= 0).sum(axis=1)
    rows_i = np.repeat(np.arange(n_e), per)
    cols_j = np.concatenate([order[i, :per[i]] for i in range(n_e)]) if n_e else order.ravel()
    sym_idx = grid[rows_i, cols_j]
    main = pd.DataFrame({
        "evaluator": np.asarray(ev_names, dtype=object)[rows_i],
        "position": np.concatenate([np.arange(1, p + 1) for p in per]) + practice,
        "scenario": np.asarray(scen_order, dtype=object)[cols_j],
    })
    if pairs:
        first = np.asarray([p[0] for p in pairs], dtype=object)[sym_idx]
        second = np.asarray([p[1] for p in pairs], dtype=object)[sym_idx]
        on_left = left[rows_i, cols_j]
        main["system"] = np.where(on_left, first, second)
        main["system_b"] = np.where(on_left, second, first)
    else:
        main["system"] = np.asarray(symbols, dtype=object)[sym_idx]
    main["practice"] = False
    return main


def _practice_trials(ev_names: list[str], scen_names: list[str],
                     practice_scenarios: Sequence[str] | None, practice: int,
                     symbols: list[str], pairs: list[tuple[str, str]],
                     rng: np.random.Generator) -> pd.DataFrame:
    """``practice`` trials per evaluator on practice scenarios, systems drawn at random."""
    p_names = ([f"practice-{i}" for i in range(1, practice + 1)] if practice_scenarios is None
               else _names(practice_scenarios, "practice scenarios", ""))
    overlap = sorted(set(p_names) & set(scen_names))
    if overlap:
        raise InputError("practice scenarios must not be main scenarios (an evaluator would "
                         f"see them twice): {', '.join(overlap)}")
    recs = []
    for e in ev_names:
        scen_p = [p_names[i % len(p_names)]
                  for i in rng.permutation(max(practice, len(p_names)))][:practice]
        for pos in range(practice):
            k = int(rng.integers(len(symbols)))
            rec = {"evaluator": e, "position": pos + 1, "scenario": scen_p[pos]}
            if pairs:
                a, b = pairs[k]
                if rng.integers(2):
                    a, b = b, a
                rec["system"], rec["system_b"] = a, b
            else:
                rec["system"] = symbols[k]
            rec["practice"] = True
            recs.append(rec)
    return pd.DataFrame(recs)
