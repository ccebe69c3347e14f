"""The NLG triangle test questionnaire: balanced triad orders over judges, matched items.

Gonzalez-Corbelle et al. (2020, sec. 4.1 step 3): with the texts of the first source tagged A
and those of the second B, there are six triad orders ``ABB ABA AAB BAA BAB BBA``. They are
"randomly distributed in groups of six among the judges, so that the first six judges evaluate
the six different triad combinations, the second group of six judges re-evaluate the six
possible triad combinations, and so on"; when the number of evaluations is not a multiple of six
the counts are as balanced as possible (64 judges: four orders 11 times and two orders 10 times;
98 judges: 16 4 + 17 2). Repeated evaluations by the same judge are allowed only in a test of
difference (the paper's expert panel: 4 judges x 6 triads = 24 evaluations, one of each order per
judge); a test of similarity refuses them.

The texts of a triad come from three *different* items (the paper shows three different
weather situations per question), drawn from a pool in which every item has a text from both
sources ("matched" items), so the odd text cannot be spotted by its content. Items are spread
evenly: each judge's items are the least-used ones so far (random tie-break), distinct within a
judge whenever the pool has at least 3 x (triads per judge) items.

Implementation note: this is a small constrained allocation written by hand because no
library provides triangle-test layouts; it uses only ``numpy.random.default_rng(seed)``.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from nlgeval.errors import InputError
from nlgeval.io import ROW, read_table
from nlgeval.triangle.critical import RECOMMENDED_MINIMUM, TestType, check_n, check_test

ORDERS: tuple[str, ...] = ("ABB", "ABA", "AAB", "BAA", "BAB", "BBA")
"""The six triad orders, in the order of González-Corbelle et al. (2020)."""

def odd_position(order: str) -> int:
    """1-based slot of the odd text in an order such as ``"ABB"`` (-> 1).

    Examples:
        >>> odd_position("ABB"), odd_position("AAB")
        (1, 3)
    """
    if len(order) != 3 or set(order) != {"A", "B"}:
        raise InputError(f"a triad order is three letters using both A and B, got {order!r}")
    for i, letter in enumerate(order):
        if order.count(letter) == 1:
            return i + 1
    raise InputError(f"order {order!r} has no odd text")  # pragma: no cover - unreachable


def _pool_items(
    pool: pd.DataFrame, source_a: str | None, source_b: str | None
) -> tuple[str, str, list[str], dict[tuple[str, str], str], list[str]]:
    src_col = "source" if "source" in pool.columns else "system"
    for col in (src_col, "item", "text"):
        if col not in pool.columns:
            raise InputError(
                f"the pool of texts needs columns 'source' (or 'system'), 'item', 'text'; "
                f"'{col}' is missing"
            )
    pool = pool.assign(**{src_col: pool[src_col].astype(str), "item": pool["item"].astype(str)})
    sources = list(dict.fromkeys(pool[src_col]))
    if source_a is None or source_b is None:
        if len(sources) != 2:
            raise InputError(
                f"the pool has {len(sources)} sources ({', '.join(sources[:6])}); name the two "
                "to compare with source_a and source_b"
            )
        source_a = source_a or next(s for s in sources if s != source_b)
        source_b = source_b or next(s for s in sources if s != source_a)
    for s in (source_a, source_b):
        if s not in sources:
            raise InputError(f"source {s!r} is not in the pool (sources: {', '.join(sources)})",
                             column=src_col)
    if source_a == source_b:
        raise InputError("source_a and source_b must differ")
    texts: dict[tuple[str, str], str] = {}
    for src, item, text in pool[[src_col, "item", "text"]].itertuples(index=False):
        if src in (source_a, source_b):
            texts.setdefault((src, item), str(text))
    items_a = {i for s, i in texts if s == source_a}
    items_b = {i for s, i in texts if s == source_b}
    matched = [i for i in dict.fromkeys(pool["item"]) if i in items_a and i in items_b]
    notes = []
    unmatched = len(items_a ^ items_b)
    if unmatched:
        notes.append(f"{unmatched} item(s) have a text from only one source and are not used")
    return source_a, source_b, matched, texts, notes


def read_pool(path: str | Path) -> pd.DataFrame:
    """A pool of texts for :func:`triangle_design` from a CSV/TSV/JSONL file with columns
    ``source`` (or ``system``), ``item`` and ``text``; errors name the file, row and column.

    Examples:
        >>> import tempfile
        >>> with tempfile.TemporaryDirectory() as tmp:
        ...     f = Path(tmp) / "pool.csv"
        ...     _ = f.write_text("system,item,text\\nA,1,a text\\nB,1,b text\\n")
        ...     print(read_pool(f).columns.tolist())
        ['system', 'item', 'text']
    """
    probe = read_table(path)
    src = "system" if "source" not in probe.columns and "system" in probe.columns else "source"
    return read_table(path, [src, "item", "text"]).drop(columns=[ROW])


def triangle_design(
    judges: int,
    *,
    seed: int,
    source_a: str | None = None,
    source_b: str | None = None,
    items: Sequence[str] | int | None = None,
    pool: pd.DataFrame | None = None,
    evaluations_per_judge: int = 1,
    test: TestType = "difference",
) -> pd.DataFrame:
    """Build a triangle-test questionnaire: one row per triad shown to a judge.

    Parameters
    ----------
    judges : int
        Number of judges (people).
    seed : int
        Seed for ``numpy.random.default_rng``; the same seed gives the same questionnaire.
    source_a, source_b : str, optional
        Names of the two sources compared (humans or systems). Default "A" and "B", or the two
        sources of ``pool``.
    items : sequence of str or int, optional
        Item identifiers (or a count, labelled ``"1"...``) with a text from both sources.
        Default: ``3 * evaluations_per_judge`` items, so each judge sees distinct items.
    pool : DataFrame, optional
        Optional tidy texts ``source`` (or ``system``), ``item``, ``text``; items with texts from
        both sources are used, and ``text_1..text_3`` columns are added for serving.
    evaluations_per_judge : int, default 1
        Triads per judge (> 1 only for a test of difference).
    test : {"difference", "similarity"}, default "difference"
        The test the questionnaire serves.

    Returns
    -------
    DataFrame
        Columns ``judge`` (string "1"...), ``position`` (1-based within the judge), ``trial``
        (1-based overall), ``block`` (group of six), ``item`` (the triad's items joined with ``|``),
        ``item_1..item_3`` (item shown in slot k), ``order`` ("ABB"...), ``source_1..3`` (source
        name shown in slot k), ``odd_position`` (1-based), ``odd_source``, ``test`` and, with a
        pool, ``text_1..text_3``. ``df.attrs`` holds the random seed, order counts and notes.

    Examples
    --------
    Six judges see each of the six orders once:

    >>> q = triangle_design(6, seed=1)
    >>> sorted(q["order"]) == sorted(ORDERS)
    True
    """
    judges = check_n(judges, "judges")
    reps = check_n(evaluations_per_judge, "evaluations_per_judge")
    test = _check_repeats(check_test(test), reps)
    source_a, source_b, item_list, texts, notes = _design_items(pool, source_a, source_b,
                                                                items, reps)
    notes += _check_items(item_list, judges, reps, test)
    rng = np.random.default_rng(seed)
    order_idx = _draw_orders(rng, judges * reps)  # before the items: keeps seeded designs stable
    triads = _draw_triads(rng, len(item_list), judges, reps)
    rows = _trial_rows(order_idx, triads, item_list, reps, {"A": source_a, "B": source_b},
                       test, texts)
    df = pd.DataFrame(rows)
    df.attrs.update({
        "seed": seed, "test": test, "judges": judges, "evaluations_per_judge": reps,
        "source_a": source_a, "source_b": source_b, "items": len(item_list),
        "order_counts": order_counts(df), "notes": notes,
    })
    return df


def _check_repeats(test: TestType, reps: int) -> TestType:
    """``test``, after refusing repeated evaluations in a test of similarity."""
    if test == "similarity" and reps > 1:
        raise InputError(
            "repeated evaluations are not allowed in a test of similarity (each judge evaluates "
            "one triad; Gonzalez-Corbelle et al. 2020, sec. 4.1); use more judges or a test of "
            "difference"
        )
    return test


def _design_items(
    pool: pd.DataFrame | None, source_a: str | None, source_b: str | None,
    items: Sequence[str] | int | None, reps: int,
) -> tuple[str, str, list[str], dict[tuple[str, str], str] | None, list[str]]:
    """The two sources, the items, the texts (with a pool) and notes on the pool."""
    if pool is None:
        return (*_plain_items(source_a, source_b, items, reps), None, [])
    source_a, source_b, item_list, texts, notes = _pool_items(pool, source_a, source_b)
    return source_a, source_b, _select_pool_items(item_list, items), texts, notes


def _select_pool_items(item_list: list[str], items: Sequence[str] | int | None) -> list[str]:
    """The pool's matched items, cut to a count or restricted to the requested ids."""
    if isinstance(items, int | np.integer):
        count = check_n(int(items), "items")
        if count > len(item_list):
            raise InputError(
                f"{count} items requested but the pool has {len(item_list)} matched items"
            )
        return item_list[:count]
    if items is not None:
        wanted = [str(i) for i in items]
        missing = [i for i in wanted if i not in set(item_list)]
        if missing:
            raise InputError(f"item(s) {', '.join(missing[:5])} lack a text from both sources")
        return wanted
    return item_list


def _plain_items(
    source_a: str | None, source_b: str | None, items: Sequence[str] | int | None, reps: int
) -> tuple[str, str, list[str]]:
    """Source names (default A and B) and item ids (a count becomes "1", "2", ...) without a
    pool of texts."""
    source_a = "A" if source_a is None else str(source_a)
    source_b = "B" if source_b is None else str(source_b)
    if source_a == source_b:
        raise InputError("source_a and source_b must differ")
    if items is None:
        items = 3 * reps
    if isinstance(items, int | np.integer):
        count = check_n(int(items), "items")
        width = len(str(count))
        return source_a, source_b, [str(i).zfill(width) for i in range(1, count + 1)]
    return source_a, source_b, [str(i) for i in items]


def _check_items(item_list: list[str], judges: int, reps: int, test: TestType) -> list[str]:
    """Refuse duplicate ids or fewer than 3 items; notes on repeated items and on fewer
    evaluations than ISO 4120 recommends."""
    if len(set(item_list)) != len(item_list):
        raise InputError("item identifiers must be unique")
    m = len(item_list)
    if m < 3:
        raise InputError(
            f"a triad shows three different items, so at least 3 matched items are needed "
            f"(got {m})"
        )
    notes = []
    if 3 * reps > m:
        notes.append(
            f"only {m} items for {reps} triads of 3 per judge: a judge may see an item twice"
        )
    total = judges * reps
    if total < RECOMMENDED_MINIMUM[test]:
        notes.append(
            f"{total} evaluations: ISO 4120 recommends at least {RECOMMENDED_MINIMUM[test]} "
            f"for a test of {test}"
        )
    return notes


def _draw_orders(rng: np.random.Generator, total: int) -> np.ndarray:
    """Order index per evaluation: consecutive groups of six get a random permutation of the
    six orders (González-Corbelle et al. 2020, sec. 4.1 step 3)."""
    n_blocks = -(-total // 6)
    return np.concatenate([rng.permutation(6) for _ in range(n_blocks)])[:total]


def _draw_triads(rng: np.random.Generator, m: int, judges: int, reps: int) -> list[np.ndarray]:
    """Three item indices per evaluation: least-used items first with a random tie-break (keeps
    usage counts within one of each other), distinct within a judge when there are enough."""
    usage = np.zeros(m, dtype=np.int64)
    triads: list[np.ndarray] = []
    for _ in range(judges):
        if 3 * reps <= m:
            chosen = np.argsort(usage + 0.5 * rng.random(m), kind="stable")[: 3 * reps]
            usage[chosen] += 1
            chosen = rng.permutation(chosen)
            triads.extend(chosen.reshape(reps, 3))
        else:
            for _ in range(reps):
                chosen = np.argsort(usage + 0.5 * rng.random(m), kind="stable")[:3]
                usage[chosen] += 1
                triads.append(rng.permutation(chosen))
    return triads


def _trial_rows(
    order_idx: np.ndarray,
    triads: list[np.ndarray],
    item_list: list[str],
    reps: int,
    names: dict[str, str],
    test: str,
    texts: dict[tuple[str, str], str] | None,
) -> list[dict[str, object]]:
    """One row per evaluation (the columns documented in :func:`triangle_design`)."""
    rows = []
    for t in range(len(order_idx)):
        order = ORDERS[int(order_idx[t])]
        odd = odd_position(order)
        its = [item_list[int(i)] for i in triads[t]]
        row: dict[str, object] = {
            "judge": str(t // reps + 1),
            "position": t % reps + 1,
            "trial": t + 1,
            "block": t // 6 + 1,
            "item": "|".join(its),
            "item_1": its[0],
            "item_2": its[1],
            "item_3": its[2],
            "order": order,
            "source_1": names[order[0]],
            "source_2": names[order[1]],
            "source_3": names[order[2]],
            "odd_position": odd,
            "odd_source": names[order[odd - 1]],
            "test": test,
        }
        if texts is not None:
            for k in range(3):
                row[f"text_{k + 1}"] = texts[(str(row[f"source_{k + 1}"]), its[k])]
        rows.append(row)
    return rows


def order_counts(questionnaire: pd.DataFrame) -> dict[str, int]:
    """How many times each of the six orders is evaluated (all six listed, in the order of
    González-Corbelle et al. 2020).

    Examples:
        >>> order_counts(triangle_design(12, seed=1))
        {'ABB': 2, 'ABA': 2, 'AAB': 2, 'BAA': 2, 'BAB': 2, 'BBA': 2}
    """
    counts = questionnaire["order"].value_counts()
    return {o: int(counts.get(o, 0)) for o in ORDERS}


def design_summary(questionnaire: pd.DataFrame) -> dict[str, Any]:
    """Counts a researcher checks before running the test (orders, items, judges).

    Examples:
        >>> s = design_summary(triangle_design(12, seed=1))
        >>> (s["judges"], s["evaluations"])
        (12, 12)
    """
    item_use = pd.concat(
        [questionnaire[f"item_{k}"] for k in (1, 2, 3)], ignore_index=True
    ).value_counts()
    return {
        "test": str(questionnaire["test"].iloc[0]),
        "judges": int(questionnaire["judge"].nunique()),
        "evaluations": len(questionnaire),
        "order_counts": order_counts(questionnaire),
        "items": int(item_use.size),
        "item_uses_min": int(item_use.min()),
        "item_uses_max": int(item_use.max()),
        "odd_source_counts": {
            str(k): int(v) for k, v in questionnaire["odd_source"].value_counts().items()
        },
        "seed": questionnaire.attrs.get("seed"),
        "notes": list(questionnaire.attrs.get("notes", [])),
    }
