"""Correlations as effect sizes: Fisher's (1921) z transformation and its sampling variance.

A Pearson correlation ``r`` from ``n`` independent pairs is pooled on the scale of
``z = atanh(r)``, whose sampling variance is close to ``1 / (n - 3)`` whatever the true
correlation (Fisher 1921; Borenstein et al. 2009, ch. 6); results are transformed back with
``r = tanh(z)``. This is metafor's ``escalc(measure="ZCOR")`` and ``transf.ztor``
(Viechtbauer 2010).

When the pairs are not independent (segment-level correlations pool several outputs of the
same item and system), ``1 / (n - 3)`` is too small; :func:`variance_from_interval` turns a
bootstrap interval that resampled items and systems into a variance on the z scale instead.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats

from nlgeval.errors import InputError
from nlgeval.io import row_of

__all__ = ["correlation_effects", "fisher_z", "fisher_z_variance", "inverse_fisher_z",
           "variance_from_interval"]


def fisher_z(r: float | np.ndarray) -> float | np.ndarray:
    """Fisher's (1921) z of a correlation: ``atanh(r) = log((1 + r) / (1 - r)) / 2``.

    Parameters
    ----------
    r : float or ndarray
        Correlation(s) in (-1, 1).

    Returns
    -------
    float or ndarray
        Fisher's z (same shape as ``r``).

    Examples
    --------
    >>> round(float(fisher_z(0.5)), 6)
    0.549306
    """
    return np.arctanh(r)


def inverse_fisher_z(z: float | np.ndarray) -> float | np.ndarray:
    """Back to the correlation scale: ``tanh(z)`` (Fisher 1921; metafor's ``transf.ztor``).

    Parameters
    ----------
    z : float or ndarray
        Value(s) on Fisher's z scale.

    Returns
    -------
    float or ndarray
        The correlation(s) (same shape as ``z``).

    Examples
    --------
    >>> round(float(inverse_fisher_z(fisher_z(0.61))), 12)
    0.61
    """
    return np.tanh(z)


def fisher_z_variance(n: float | np.ndarray) -> float | np.ndarray:
    """Large-sample variance of Fisher's z from ``n`` independent pairs: ``1 / (n - 3)``.

    Parameters
    ----------
    n : float or ndarray
        Number of pairs (> 3).

    Returns
    -------
    float or ndarray
        ``1 / (n - 3)`` (same shape as ``n``).

    Examples
    --------
    >>> float(fisher_z_variance(103))
    0.01
    """
    return 1.0 / (np.asarray(n, dtype=float) - 3.0)


def variance_from_interval(low: float, high: float, confidence_level: float = 0.95) -> float:
    """Variance on the z scale implied by a (bootstrap) interval ``[low, high]`` of ``r``.

    ``se = (atanh(high) - atanh(low)) / (2 * z_{1 - alpha/2})``: the normal-theory reading of
    a percentile interval (Borenstein et al. 2009, ch. 3), used when ``1 / (n - 3)`` does not
    hold because the pairs are clustered.

    Parameters
    ----------
    low, high : float
        Ends of the interval of ``r``.
    confidence_level : float, default 0.95
        Level of that interval.

    Returns
    -------
    float
        The variance of Fisher's z.

    Examples
    --------
    >>> lo, hi = np.tanh(0.5 - 1.959963984540054 * 0.1), np.tanh(0.5 + 1.959963984540054 * 0.1)
    >>> round(variance_from_interval(lo, hi), 10)
    0.01
    """
    crit = stats.norm.isf((1.0 - confidence_level) / 2.0)
    se = (float(np.arctanh(high)) - float(np.arctanh(low))) / (2.0 * float(crit))
    return float(se * se)


def correlation_effects(table: pd.DataFrame, *, file: str | None = None,
                        r_column: str = "r", n_column: str = "n") -> pd.DataFrame:
    """Check a table of correlations and add Fisher's z (``yi``) and its variance (``vi``).

    Needs columns ``study``, ``r`` and ``n``; every ``r`` must lie strictly between -1 and 1
    and every ``n`` be a whole number above 3 (Fisher 1921: the variance is ``1/(n - 3)``).
    A bad value raises :class:`~nlgeval.errors.InputError` naming the file, the row as it
    appears in the file (the ``_row`` of :func:`nlgeval.io.read_table`: the header is row 1 of
    a CSV file, the first record row 1 of a JSONL or Parquet file; a frame without ``_row`` is
    numbered as a CSV file) and the column. Column names are case-sensitive: a missing column
    present in another case (``N`` for ``n``) is named in a "did you mean" hint. A ``vi``
    column already present (e.g. from a bootstrap interval) is kept.

    Parameters
    ----------
    table : DataFrame
        Columns ``study``, ``r`` and ``n`` (and optionally ``vi``).
    file : str, optional
        Name of the source of ``table`` in error messages.
    r_column, n_column : str, default "r", "n"
        Names of the correlation and sample-size columns.

    Returns
    -------
    DataFrame
        A copy of ``table`` with ``yi`` and ``vi`` added.

    Examples
    --------
    >>> t = pd.DataFrame({"study": ["a", "b"], "r": [0.5, 0.3], "n": [28, 103]})
    >>> correlation_effects(t)[["study", "yi", "vi"]].round(4)
      study      yi    vi
    0     a  0.5493  0.04
    1     b  0.3095  0.01
    >>> correlation_effects(t.assign(n=[3, 103]), file="mine.csv")
    Traceback (most recent call last):
    ...
    nlgeval.errors.InputError: mine.csv, row 2, column 'n': n must be a whole number above 3 \
(Fisher's z needs n - 3 > 0), got 3
    """
    missing = [c for c in ("study", r_column, n_column) if c not in table.columns]
    if missing:
        raise InputError(f"missing column(s) {', '.join(missing)}; a table of effects needs "
                         f"study, {r_column}, {n_column}{_case_hint(table, missing)}", file=file)
    out = table.copy()
    r = _numbers(out, r_column, file)
    n = _numbers(out, n_column, file)
    for i, (ri, ni) in enumerate(zip(r, n, strict=True)):
        if not -1.0 < ri < 1.0:
            raise InputError(f"r must lie strictly between -1 and 1, got {ri:g}", file=file,
                             row=row_of(out, i), column=r_column)
        if not (ni > 3 and float(ni).is_integer()):
            raise InputError(f"n must be a whole number above 3 (Fisher's z needs n - 3 > 0), "
                             f"got {ni:g}", file=file, row=row_of(out, i), column=n_column)
    for i, s in enumerate(out["study"]):
        if pd.isna(s) or not str(s).strip():
            raise InputError("study is empty", file=file, row=row_of(out, i), column="study")
    out["study"] = out["study"].astype(str)
    out[r_column], out[n_column] = r, n.astype(int)
    out["yi"] = fisher_z(r)
    if "vi" not in out.columns:
        out["vi"] = fisher_z_variance(n)
    return out


def _case_hint(table: pd.DataFrame, missing: list[str]) -> str:
    """"; did you mean 'N'?" for missing columns present in another case (names are
    case-sensitive, as everywhere in nlgeval's readers), else ""."""
    variants = [str(v) for c in missing for v in table.columns
                if str(v).casefold() == c.casefold()]
    if not variants:
        return ""
    return (f"; did you mean {', '.join(repr(v) for v in variants)}? (column names are "
            "case-sensitive)")


def _numbers(table: pd.DataFrame, name: str, file: str | None) -> np.ndarray:
    col = table[name]
    values = pd.to_numeric(col, errors="coerce").to_numpy(dtype=float)
    bad = np.flatnonzero(~np.isfinite(values))
    if bad.size:
        i = int(bad[0])
        raise InputError(f"{name} must be a finite number, got {col.iloc[i]!r}", file=file,
                         row=row_of(table, i), column=name)
    return values
