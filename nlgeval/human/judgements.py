"""Pairwise (relative) judgements as outcomes: who won each comparison.

Input is what ``nlgeval experiment export`` writes in relative mode -- one row per judgement with
``system`` and ``system_b`` (the pair) and ``score``, the preference for ``system`` on the
criterion's scale (top = ``system`` much better; see :mod:`nlgeval.experiment.export`) -- or a
WMT / Chatbot-Arena style table (Chiang et al. 2024) with ``system``, ``system_b`` and
``winner`` (a system name, or ``tie``/``draw``/``both``/``neither``/empty for a tie). A
preference above the scale's midpoint is a win for ``system``, below it a win for
``system_b``, at it a tie. The midpoint is the middle of the declared scale, else 0 when some
preference is negative (the experiment's centred relative scales, e.g. -2..2 or -50..50);
otherwise the scale must be given.

The sign tests and the Bradley-Terry ranking of these outcomes are in
:mod:`nlgeval.human.pairwise`.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from nlgeval.errors import InputError

TIE_WORDS = {"tie", "draw", "both", "neither", "none", "equal", "same", "", "tie (bothbad)"}


def _clean(ratings: pd.DataFrame) -> pd.DataFrame:
    if not isinstance(ratings, pd.DataFrame):
        raise InputError(f"ratings must be a pandas DataFrame, got {type(ratings).__name__}")
    for c in ("system", "system_b"):
        if c not in ratings.columns:
            raise InputError(f"pairwise judgements need columns system and system_b; missing {c}")
    if "winner" not in ratings.columns and "score" not in ratings.columns:
        raise InputError("pairwise judgements need a score (preference for system) or a "
                         "winner column")
    if "criterion" in ratings.columns and ratings["criterion"].nunique() > 1:
        raise InputError("ratings hold several criteria ("
                         + ", ".join(map(str, ratings["criterion"].unique()))
                         + "); select one criterion first")
    df = ratings.copy()
    df["system"] = df["system"].astype(str).str.strip()
    df["system_b"] = df["system_b"].fillna("").astype(str).str.strip()
    if (df["system_b"] == "").any():
        pos = int(np.flatnonzero((df["system_b"] == "").to_numpy())[0])
        raise InputError(f"row {pos + 1} of the pairwise judgements has no system_b",
                         column="system_b")
    same = df["system"] == df["system_b"]
    if same.any():
        pos = int(np.flatnonzero(same.to_numpy())[0])
        raise InputError(f"a system compared with itself ('{df['system'].iloc[pos]}')",
                         column="system_b")
    return df


def preference_midpoint(scores: np.ndarray, scale: tuple[float, float] | None) -> float:
    """The no-preference value: the middle of ``scale``, else 0 for a centred scale (some
    negative preference); otherwise raise (the midpoint of e.g. a 1..5 scale is unknown).

    Examples
    --------
    >>> preference_midpoint([1, 5, 3], scale=(1, 5)), preference_midpoint([-2, 1], None)
    (3.0, 0.0)
    """
    s = np.asarray(scores, dtype=float)
    if scale is not None:
        return (float(scale[0]) + float(scale[1])) / 2.0
    if len(s) and s.min() < 0:
        return 0.0
    raise InputError(
        "every preference score is >= 0, so the no-preference midpoint is unknown; give the "
        "response scale (--scale MIN,MAX; the experiment's relative scales are centred on 0)",
        column="score")


def pairwise_outcomes(
    ratings: pd.DataFrame, *, scale: tuple[float, float] | None = None,
) -> pd.DataFrame:
    """One row per judgement: ``system_a, system_b`` (in the order the systems first appear),
    ``outcome`` (+1 A wins, 0 tie, -1 B wins), ``preference`` (signed distance from the
    midpoint, towards A; NaN for a ``winner`` table) and the ``item``/``rater`` columns when
    present.

    Parameters
    ----------
    ratings : pandas.DataFrame
        A relative table: ``system, system_b`` with ``score`` (signed preference) or ``winner``.
    scale : tuple of (float, float), optional
        The preference scale (min, max), whose midpoint is no preference.

    Returns
    -------
    pandas.DataFrame
        One row per judgement, columns above.

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"system": ["A", "A", "B"], "system_b": ["B", "B", "A"],
    ...                    "score": [2.0, 0.0, 1.0]})
    >>> pairwise_outcomes(df, scale=(-2, 2))[["system_a", "system_b", "outcome"]].values.tolist()
    [['A', 'B', 1], ['A', 'B', 0], ['A', 'B', -1]]
    """
    df = _clean(ratings)
    if "winner" in df.columns:
        w = df["winner"].fillna("").astype(str).str.strip()
        wl = w.str.lower()
        outcome = np.where(w == df["system"], 1, np.where(w == df["system_b"], -1, 0))
        unknown = (w != df["system"]) & (w != df["system_b"]) & ~wl.isin(TIE_WORDS) \
            & ~wl.isin({"a", "b", "model_a", "model_b"})
        if unknown.any():
            pos = int(np.flatnonzero(unknown.to_numpy())[0])
            raise InputError(f"winner {w.iloc[pos]!r} is neither system of its pair "
                             f"('{df['system'].iloc[pos]}', '{df['system_b'].iloc[pos]}') nor "
                             "a tie", column="winner")
        # a/b codes only where the winner names neither system: systems called "A" and "B"
        # (or "a", "b") are named, and the name decides
        code = ~((w == df["system"]) | (w == df["system_b"])).to_numpy()
        outcome = np.where(code & wl.isin({"a", "model_a"}), 1,
                           np.where(code & wl.isin({"b", "model_b"}), -1, outcome))
        pref = np.full(len(df), np.nan)
    else:
        score = pd.to_numeric(df["score"], errors="coerce").to_numpy(dtype=float)
        if np.isnan(score).any():
            pos = int(np.flatnonzero(np.isnan(score))[0])
            raise InputError(f"missing or non-numeric preference score in row {pos + 1}",
                             column="score")
        mid = preference_midpoint(score, scale)
        pref = score - mid
        outcome = np.sign(pref).astype(int)
    systems = _system_order(df["system"].to_numpy(), df["system_b"].to_numpy())
    rank = {s: i for i, s in enumerate(systems)}
    ra = df["system"].map(rank).to_numpy()
    rb = df["system_b"].map(rank).to_numpy()
    flip = ra > rb
    out = pd.DataFrame({
        "system_a": np.where(flip, df["system_b"], df["system"]),
        "system_b": np.where(flip, df["system"], df["system_b"]),
        "outcome": np.where(flip, -outcome, outcome).astype(int),
        "preference": np.where(flip, -pref, pref),
    })
    for c in ("item", "rater"):
        if c in df.columns:
            out[c] = df[c].astype(str).to_numpy()
    out.attrs["systems"] = systems
    return out


def _system_order(first: np.ndarray, second: np.ndarray) -> list[str]:
    """An order of the systems in which every pair keeps its orientation in the file, when
    one exists (an export lists each pair in the experiment's system order): Kahn's
    topological sort of the graph system -> system_b, ties broken by first appearance. When
    the orientations are cyclic (e.g. an arena log), the order of first appearance."""
    seen = list(dict.fromkeys(np.column_stack([first, second]).ravel().tolist()))
    pos = {s: i for i, s in enumerate(seen)}
    edges = set(zip(first.tolist(), second.tolist(), strict=True))
    indeg = dict.fromkeys(seen, 0)
    succ: dict[str, list[str]] = {s: [] for s in seen}
    for a, b in edges:
        succ[a].append(b)
        indeg[b] += 1
    ready = sorted((s for s in seen if indeg[s] == 0), key=pos.__getitem__)
    out = []
    while ready:
        s = ready.pop(0)
        out.append(s)
        for t in succ[s]:
            indeg[t] -= 1
            if indeg[t] == 0:
                ready.append(t)
        ready.sort(key=pos.__getitem__)
    return out if len(out) == len(seen) else seen


def _systems(outcomes: pd.DataFrame) -> list[str]:
    return list(outcomes.attrs.get("systems") or dict.fromkeys(
        np.concatenate([outcomes["system_a"], outcomes["system_b"]]).tolist()))
