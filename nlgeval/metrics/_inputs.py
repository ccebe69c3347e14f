"""Input checks and de-duplication for :class:`nlgeval.metrics.base.Metric`: the (hypothesis,
references) pairs are validated once and grouped by reference list, so references are prepared
once per item and identical pairs are scored once."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from nlgeval.errors import InputError


def _validate_inputs(hyps: Sequence[str], refs: Sequence[Sequence[str]]) -> None:
    if isinstance(hyps, str) or not isinstance(hyps, Sequence | np.ndarray):
        raise InputError("hyps must be a sequence of strings (one hypothesis per segment)")
    if isinstance(refs, str) or not isinstance(refs, Sequence | np.ndarray):
        raise InputError(
            "refs must be a sequence of reference lists (refs[i] = references of hyps[i])"
        )
    if len(hyps) != len(refs):
        raise InputError(
            f"{len(hyps)} hypotheses but {len(refs)} reference lists; refs[i] must hold the "
            "references of hyps[i]"
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
