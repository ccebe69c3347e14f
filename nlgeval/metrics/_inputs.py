"""Input checks and de-duplication for :class:`nlgeval.metrics.base.Metric`: the (hypothesis,
references) pairs are validated once and grouped by reference list, so references are prepared
once per item and identical pairs are scored once."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import numpy as np

from nlgeval.errors import InputError

#: how ``refs`` is laid out: ``per_hypothesis`` (``refs[i]`` = the references of ``hyps[i]``,
#: nlgeval's own layout) or ``streams`` (sacrebleu's: ``refs[j][i]`` = the j-th reference of
#: ``hyps[i]``, one list per reference set)
RefsLayout = Literal["per_hypothesis", "streams"]
LAYOUTS: tuple[str, ...] = ("per_hypothesis", "streams")


def _looks_like_streams(n: int, refs: Sequence[Sequence[str]]) -> bool:
    """Every element of ``refs`` is a non-string sequence of ``n`` items."""
    try:
        return bool(len(refs)) and all(
            not isinstance(r, str) and len(r) == n for r in refs)
    except TypeError:
        return False


def per_hypothesis_refs(hyps: Sequence[str], refs: Sequence[Sequence[str]],
                        layout: RefsLayout | None = None) -> Sequence[Sequence[str]]:
    """``refs`` as one list of references per hypothesis, from either layout.

    ``layout=None`` means ``per_hypothesis`` but refuses the one shape where the two layouts
    cannot be told apart and would mean different things: ``n > 1`` hypotheses and ``n`` lists
    of ``n`` references each (``n`` reference streams of sacrebleu, or ``n`` references for
    each hypothesis).

    Examples
    --------
    >>> hyps = ["a b", "c d"]
    >>> per_hypothesis_refs(hyps, [["a b", "c d"]], "streams")   # sacrebleu: one stream
    [['a b'], ['c d']]
    >>> per_hypothesis_refs(hyps, [["a b", "c d"], ["a c", None]], "streams")  # None: no ref
    [['a b', 'a c'], ['c d']]
    >>> try:
    ...     per_hypothesis_refs(hyps, [["a b", "x"], ["c d", "y"]])
    ... except InputError as err:
    ...     print(str(err)[:53])
    refs is ambiguous: 2 hypotheses and 2 lists of 2 refe
    """
    if layout == "per_hypothesis":
        return refs
    n = len(hyps) if isinstance(hyps, Sequence | np.ndarray) and not isinstance(hyps, str) else -1
    if layout == "streams":
        if isinstance(refs, str) or not _looks_like_streams(n, refs):
            raise InputError(
                f"refs_layout='streams' needs a list of reference streams, each with one "
                f"reference per hypothesis ({n}), as sacrebleu takes them")
        # sacrebleu's _cache_references: a None entry is a missing reference (how its
        # streams hold a varying number of references per segment); "" is a reference
        return [[x for x in r if x is not None] for r in zip(*refs, strict=True)]
    if layout is not None:
        raise InputError(f"refs_layout must be one of {', '.join(LAYOUTS)}, got {layout!r}")
    if n > 1 and not isinstance(refs, str) and len(refs) == n and _looks_like_streams(n, refs):
        raise InputError(
            f"refs is ambiguous: {n} hypotheses and {n} lists of {n} references could be "
            "one list of references per hypothesis (refs[i] for hyps[i], nlgeval's layout) or "
            "sacrebleu's reference streams (refs[j][i] for hyps[i]); say which with "
            "refs_layout='per_hypothesis' or refs_layout='streams'")
    return refs


def _validate_inputs(hyps: Sequence[str], refs: Sequence[Sequence[str]]) -> None:
    if isinstance(hyps, str) or not isinstance(hyps, Sequence | np.ndarray):
        raise InputError("hyps must be a sequence of strings (one hypothesis per segment)")
    if isinstance(refs, str) or not isinstance(refs, Sequence | np.ndarray):
        raise InputError(
            "refs must be a sequence of reference lists (refs[i] = references of hyps[i])"
        )
    if len(hyps) != len(refs):
        hint = ""
        if _looks_like_streams(len(hyps), refs):
            hint = (f"; this looks like sacrebleu's layout ({len(refs)} reference stream(s) of "
                    f"{len(hyps)}): pass refs_layout='streams'")
        raise InputError(
            f"{len(hyps)} hypotheses but {len(refs)} reference lists; refs[i] must hold the "
            "references of hyps[i]" + hint
        )
    # fast path: reference lists are usually shared objects (one per item); check each once
    seen: set[int] = set()
    ok = all(type(h) is str for h in hyps)
    if ok:
        for r in refs:
            if id(r) in seen:
                continue
            if isinstance(r, str) or not len(r) or not all(type(x) is str for x in r):
                ok = False
                break
            seen.add(id(r))
    if ok:
        return
    for i, (h, r) in enumerate(zip(hyps, refs, strict=True)):
        if not isinstance(h, str):
            raise InputError(f"hypothesis {i + 1} is {type(h).__name__}, expected a string")
        if isinstance(r, str):
            raise InputError(
                f"references of segment {i + 1} are a single string; pass a list of references "
                "(e.g. [[ref]] for one reference per segment)"
            )
        if len(r) == 0:
            raise InputError(f"segment {i + 1} has no reference")
        for x in r:
            if not isinstance(x, str):
                raise InputError(
                    f"a reference of segment {i + 1} is {type(x).__name__}, expected a string"
                )


Groups = list[tuple[tuple[str, ...], list[str]]]


def _group_pairs(
    hyps: Sequence[str], refs: Sequence[Sequence[str]]
) -> tuple[Groups, np.ndarray]:
    """Distinct reference lists -> their distinct hypotheses, and for every pair ``i`` its
    ``(group, position)`` in that structure (so each distinct pair is scored once)."""
    group_of: dict[tuple[str, ...], int] = {}
    group_hyps: list[dict[str, int]] = []
    where = np.empty((len(hyps), 2), dtype=np.int64)
    for i, (h, r) in enumerate(zip(hyps, refs, strict=True)):
        key = tuple(r)
        g = group_of.get(key)
        if g is None:
            g = group_of[key] = len(group_hyps)
            group_hyps.append({})
        hmap = group_hyps[g]
        j = hmap.get(h)
        if j is None:
            j = hmap[h] = len(hmap)
        where[i] = (g, j)
    groups: Groups = [(r, list(hm)) for r, hm in zip(group_of, group_hyps, strict=True)]
    return groups, where
