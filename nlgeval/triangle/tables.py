"""Tables 1-3 of González-Corbelle et al. (2020) for any ranges of n, alpha, beta and pd, long and
paper layouts.

* Table 1: number of judges for (alpha, pd, beta) -- first n and stable n (see planning).
* Table 2: minimum correct answers for a difference, by n and alpha.
* Table 3: maximum correct answers for similarity, by n, beta and pd.

``*_long`` functions return tidy frames (one row per cell); :func:`paper_tables` lays them out
as González-Corbelle et al. (2020) print them and wraps them in :class:`nlgeval.tables.PaperTable`
(CSV, Markdown,
LaTeX). A cell with no attainable critical value (e.g. n = 6, alpha = .001) is empty (CSV) or
"--" (Markdown/LaTeX), as their "-".
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from nlgeval.errors import InputError
from nlgeval.progress import track
from nlgeval.tables import PaperTable
from nlgeval.triangle.critical import (
    Method,
    TestType,
    check_method,
    check_n,
    max_correct_array,
    min_correct_array,
)
from nlgeval.triangle.planning import PAPER_ALPHAS, PAPER_BETAS, PAPER_PDS, sample_size

PAPER_TABLE2_N = tuple(range(6, 25))
PAPER_TABLE3_N = (18, 24, 30, 36)


def _ns(ns: Sequence[int]) -> np.ndarray:
    _nonempty(ns, "numbers of judges n")
    return np.array([check_n(n, "n") for n in ns], dtype=np.int64)


def _nonempty(values: Sequence[object], what: str) -> None:
    if len(values) == 0:
        raise InputError(f"give at least one value for the {what}")


def table1_long(
    alphas: Sequence[float] = PAPER_ALPHAS,
    betas: Sequence[float] = PAPER_BETAS,
    pds: Sequence[float] = PAPER_PDS,
    test: TestType = "difference",
) -> pd.DataFrame:
    """Number of judges per (alpha, pd, beta): columns ``alpha, pd, beta, judges,
    judges_stable, power, power_stable``.

    Examples:
        Table 1 of González-Corbelle et al. (2020), one cell:

        >>> table1_long([0.05], [0.2], [0.3])[["judges", "judges_stable"]].values.tolist()
        [[40, 42]]
    """
    for values, what in ((alphas, "alphas"), (betas, "betas"), (pds, "pds")):
        _nonempty(values, what)
    rows = []
    cells = [(pdv, a, b) for pdv in pds for a in alphas for b in betas]
    for pdv, a, b in track(cells, "Table 1: numbers of judges"):
        s = sample_size(a, b, pdv, test)
        rows.append(
            {"alpha": a, "pd": pdv, "beta": b, "judges": s.judges,
             "judges_stable": s.judges_stable, "power": s.power,
             "power_stable": s.power_stable}
        )
    return pd.DataFrame(rows)


def table2_long(
    ns: Sequence[int] = PAPER_TABLE2_N,
    alphas: Sequence[float] = PAPER_ALPHAS,
    method: Method = "exact",
) -> pd.DataFrame:
    """Minimum correct answers for a difference: ``n, alpha, min_correct`` (None = impossible).

    Examples:
        >>> table2_long([24], [0.05, 0.01])["min_correct"].tolist()
        [13, 15]
    """
    check_method(method)
    n = _ns(ns)
    _nonempty(alphas, "alphas")
    rows = []
    for a in alphas:
        x = min_correct_array(n, a, method)
        rows += [
            {"n": int(ni), "alpha": a, "min_correct": None if xi > ni else int(xi)}
            for ni, xi in zip(n, x, strict=True)
        ]
    return pd.DataFrame(rows).sort_values(["n"], kind="stable").reset_index(drop=True)


def table3_long(
    ns: Sequence[int] = PAPER_TABLE3_N,
    betas: Sequence[float] = PAPER_BETAS[::-1],
    pds: Sequence[float] = PAPER_PDS[::-1],
    method: Method = "exact",
) -> pd.DataFrame:
    """Maximum correct answers for similarity: ``n, beta, pd, max_correct`` (None = impossible).

    Examples:
        >>> table3_long([30], [0.05], [0.3])["max_correct"].tolist()
        [11]
    """
    check_method(method)
    n = _ns(ns)
    _nonempty(betas, "betas")
    _nonempty(pds, "pds")
    rows = []
    for b in betas:
        for pdv in pds:
            x = max_correct_array(n, b, pdv, method)
            rows += [
                {"n": int(ni), "beta": b, "pd": pdv, "max_correct": None if xi < 0 else int(xi)}
                for ni, xi in zip(n, x, strict=True)
            ]
    return (
        pd.DataFrame(rows)
        .sort_values(["n"], kind="stable")
        .reset_index(drop=True)
    )


def _label(v: float) -> str:
    return f"{v:g}"


def _pct(v: float) -> str:
    return f"{100 * v:g}%"


def _wide(
    df: pd.DataFrame, index: list[str], column: str, value: str, fmt
) -> pd.DataFrame:
    order = list(dict.fromkeys(df[column]))
    out = df.pivot_table(
        index=index, columns=column, values=value, aggfunc="first", sort=False, dropna=False
    )
    out = out.reindex(columns=order)
    out.columns = [f"{column}={fmt(c)}" if column != "pd" else fmt(c) for c in out.columns]
    out = out.reset_index()
    for c in out.columns[len(index):]:
        out[c] = pd.Series([None if pd.isna(v) else int(v) for v in out[c]], dtype=object)
    for c in index:
        if c in ("alpha", "beta"):
            out[c] = [_label(v) for v in out[c]]
    return out


def table1(
    alphas: Sequence[float] = PAPER_ALPHAS,
    betas: Sequence[float] = PAPER_BETAS,
    pds: Sequence[float] = PAPER_PDS,
    which: str = "first",
    test: TestType = "difference",
) -> pd.DataFrame:
    """Table 1 as printed: rows (pd, alpha), one column per beta; ``which`` = first | stable.

    Examples:
        >>> table1([0.05], [0.2], [0.3]).shape
        (1, 3)
    """
    if which not in ("first", "stable"):
        raise InputError(f"which must be 'first' or 'stable', got {which!r}")
    long = table1_long(alphas, betas, pds, test)
    value = "judges" if which == "first" else "judges_stable"
    long = long.assign(pd=[_pct(v) for v in long["pd"]])
    return _wide(long, ["pd", "alpha"], "beta", value, _label)


def table2(
    ns: Sequence[int] = PAPER_TABLE2_N,
    alphas: Sequence[float] = PAPER_ALPHAS,
    method: Method = "exact",
) -> pd.DataFrame:
    """Table 2 as printed: one row per n, one column per alpha.

    Examples:
        >>> table2([24], [0.05]).shape
        (1, 2)
    """
    return _wide(table2_long(ns, alphas, method), ["n"], "alpha", "min_correct", _label)


def table3(
    ns: Sequence[int] = PAPER_TABLE3_N,
    betas: Sequence[float] = PAPER_BETAS[::-1],
    pds: Sequence[float] = PAPER_PDS[::-1],
    method: Method = "exact",
) -> pd.DataFrame:
    """Table 3 as printed: rows (n, beta), one column per pd.

    Examples:
        >>> table3([30], [0.05], [0.3]).shape
        (1, 3)
    """
    long = table3_long(ns, betas, pds, method)
    return _wide(long, ["n", "beta"], "pd", "max_correct", lambda v: f"pd={_pct(v)}")


def paper_tables(
    *,
    ns2: Sequence[int] = PAPER_TABLE2_N,
    ns3: Sequence[int] = PAPER_TABLE3_N,
    alphas: Sequence[float] = PAPER_ALPHAS,
    betas: Sequence[float] = PAPER_BETAS,
    pds: Sequence[float] = PAPER_PDS,
    method: Method = "exact",
    which: str = "first",
) -> dict[str, PaperTable]:
    """The three tables as :class:`PaperTable` objects keyed ``table1``, ``table2``, ``table3``.

    Examples:
        >>> sorted(paper_tables(ns2=[24], ns3=[30], alphas=(0.05,), betas=(0.05,), pds=(0.3,)))
        ['table1', 'table2', 'table3']
    """
    # validate everything before the (slower) Table 1 computation
    _ns(ns2)
    _ns(ns3)
    for values, what in ((alphas, "alphas"), (betas, "betas"), (pds, "pds")):
        _nonempty(values, what)
    check_method(method)
    if which not in ("first", "stable"):
        raise InputError(f"which must be 'first' or 'stable', got {which!r}")
    how = ("exact binomial" if method == "exact"
           else "the normal approximation of González-Corbelle et al. (2020)")
    t1_note = (
        "First n whose exact power reaches 1 - beta (as printed by González-Corbelle et al. 2020)."
        if which == "first"
        else "Smallest n from which every larger n reaches power 1 - beta (stable n)."
    )
    return {
        "table1": PaperTable(
            data=table1(alphas, betas, pds, which),
            caption="Number of judges for the NLG triangle test (exact binomial).",
            label="tab:triangle-judges",
            digits=3,
            notes=(t1_note, "Same numbers for the test of similarity."),
        ),
        "table2": PaperTable(
            data=table2(ns2, alphas, method),
            caption=f"Minimum number of correct answers to conclude a perceptible difference "
            f"({how}).",
            label="tab:triangle-difference",
            notes=("-- : not attainable with n judges.",),
        ),
        "table3": PaperTable(
            data=table3(ns3, betas[::-1] if betas == PAPER_BETAS else betas,
                        pds[::-1] if pds == PAPER_PDS else pds, method),
            caption=f"Maximum number of correct answers to conclude that two samples are "
            f"similar ({how}).",
            label="tab:triangle-similarity",
            notes=("-- : similarity cannot be shown with n judges.",),
        ),
    }


def write_paper_tables(
    out_dir: str | Path, formats: Sequence[str] = ("csv", "md", "tex"), **kwargs
) -> list[Path]:
    """Write ``table1``, ``table2``, ``table3`` in each format into ``out_dir``.

    Examples:
        >>> import tempfile
        >>> with tempfile.TemporaryDirectory() as tmp:
        ...     paths = write_paper_tables(tmp, ["csv"], ns2=[24], ns3=[30], alphas=(0.05,),
        ...                                betas=(0.05,), pds=(0.3,))
        ...     print(sorted(p.name for p in paths))
        ['triangle_table1.csv', 'triangle_table2.csv', 'triangle_table3.csv']
    """
    paths: list[Path] = []
    for stem, table in paper_tables(**kwargs).items():
        paths += table.write(out_dir, f"triangle_{stem}", formats)
    return paths
