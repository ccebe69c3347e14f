"""Integer codes of name columns (systems, items, metrics, raters), from one factorize per column.

The report stages number the names of tidy frames many times: the outputs of the correlations
(:func:`nlgeval.correlation.levels.frame_codes`), the score cube of Table 9, the one-rater
ceiling and the rater ICC of the verdict, the wide per-output frame. The obvious ways --
``pd.factorize(column.astype(str))``, a joined ``system + item`` string or a ``(system, item)``
tuple per row, a pandas pivot -- make a string, a tuple or a group key per row: gigabytes for
the 20 M names of a 5 M-output study. The functions here factorize each raw column once and
work on its *distinct* values only, so a row costs one integer code.

They are hand-written because pandas has no "factorize as text": numbering the text of the
values (``astype(str)``, under which the int 1 and the string "1" are one name) otherwise needs
the column's text, one string per row. Each function says which pandas call it equals; the
tests (``tests/test_codes.py``) compare them with those calls and with the code they replaced.

Vocabulary: *raw codes* number the distinct values of a column (missing kept as a value) in
order of first appearance; *text ids* number the distinct texts; a *missing* name (None, NaN,
``pd.NA``) has code -1 unless a function says otherwise.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import pandas as pd

__all__ = [
    "TextCodes",
    "first_appearance",
    "is_text_dtype",
    "name_positions",
    "pair_codes",
    "raw_codes",
    "sort_codes",
    "sorted_names",
    "text_codes",
    "text_ids",
    "value_text",
]


def raw_codes(column: pd.Series, *, compact: bool = False) -> tuple[np.ndarray, pd.Series]:
    """Each row's code into the column's distinct values, and those values, from one
    ``pd.factorize(column, use_na_sentinel=False)`` (a missing value is a value of its own).

    Parameters
    ----------
    column : pandas.Series
        The names.
    compact : bool, default False
        Give the codes as int32 (half the memory of a 5 M-row column) when they fit.

    Returns
    -------
    codes : numpy.ndarray
        One code per row (intp, or int32 with ``compact``).
    distinct : pandas.Series
        The distinct values in order of first appearance, in the column's dtype.

    Examples
    --------
    >>> codes, distinct = raw_codes(pd.Series(["b", None, "b", 1]))
    >>> codes.tolist(), distinct.tolist()
    ([0, 1, 0, 2], ['b', nan, 1])
    """
    codes, uniques = pd.factorize(column, use_na_sentinel=False)
    if compact and len(uniques) < 2**31:
        codes = codes.astype(np.int32)
    return codes, pd.Series(uniques, dtype=column.dtype)


def is_text_dtype(dtype: object) -> bool:
    """Whether ``dtype`` is pandas' ``str`` dtype (a ``StringDtype`` whose missing value is
    NaN): its values are already their own text, ``astype(str)`` changes nothing.

    Parameters
    ----------
    dtype : object
        A pandas or numpy dtype.

    Returns
    -------
    bool
        True for pandas' ``str`` dtype.

    Examples
    --------
    >>> is_text_dtype(pd.Series(["a"], dtype="str").dtype), is_text_dtype(np.dtype(object))
    (True, False)
    """
    return isinstance(dtype, pd.StringDtype) and dtype.na_value is np.nan


def value_text(values: pd.Series) -> pd.Series:
    """``values.astype(str)``, or ``values`` itself when they are pandas' ``str`` dtype.
    Meant for the distinct values of a column (:func:`raw_codes`), never for a whole column.

    Parameters
    ----------
    values : pandas.Series
        Values, typically distinct.

    Returns
    -------
    pandas.Series
        Their text; a missing value stays missing (NaN).

    Examples
    --------
    >>> value_text(pd.Series([1, "1", None], dtype=object)).tolist()
    ['1', '1', nan]
    """
    return values if is_text_dtype(values.dtype) else values.astype(str)


def text_ids(*texts: pd.Series, distinct: bool = False) -> tuple[list[np.ndarray], pd.Index]:
    """The texts of one or more parts numbered together from 0 in order of first appearance,
    as ``pd.factorize(pd.concat(texts, ignore_index=True))`` numbers them, split back into
    one array per part; a missing text gets -1.

    Parameters
    ----------
    *texts : pandas.Series
        Texts (:func:`value_text` of each column's distinct values).
    distinct : bool, default False
        The caller knows that the one part's texts are distinct (the values of a ``str``
        column are their own text): they are numbered in order without a factorize.

    Returns
    -------
    ids : list of numpy.ndarray
        One id per text, one array per part.
    names : pandas.Index
        The distinct texts in the order of their ids.

    Examples
    --------
    >>> ids, names = text_ids(pd.Series(["1", "a"]), pd.Series(["b", None, "1"]))
    >>> [i.tolist() for i in ids], names.tolist()
    ([[0, 1], [2, -1, 0]], ['1', 'a', 'b'])
    """
    if distinct and len(texts) == 1:
        missing = texts[0].isna().to_numpy(dtype=bool)
        ids = np.where(missing, -1, np.cumsum(~missing) - 1)
        return [ids], pd.Index(texts[0][~missing])
    joined, names = pd.factorize(pd.concat(texts, ignore_index=True))
    bounds = np.cumsum([len(t) for t in texts])[:-1]
    return list(np.split(joined, bounds)), names


def text_codes(column: pd.Series) -> tuple[np.ndarray, np.ndarray, pd.Series]:
    """``pd.factorize(column.astype(str))[0]`` without the column's text: each row's text
    numbered from 0 in order of first appearance (-1: missing), from one factorize of the
    raw column; only the distinct values are turned into text, so two values with one text
    (1 and "1") get one code. Values that the factorize takes as one (the int 1 and the float
    1.0) have the text of the first of them.

    Parameters
    ----------
    column : pandas.Series
        The names.

    Returns
    -------
    codes : numpy.ndarray
        One code per row, numbering its text.
    raw : numpy.ndarray
        One code per row into ``texts`` (:func:`raw_codes`).
    texts : pandas.Series
        The text of each distinct raw value (NaN kept), in order of first appearance.

    Examples
    --------
    >>> codes, raw, texts = text_codes(pd.Series([1, "1", "b", None], dtype=object))
    >>> codes.tolist(), raw.tolist(), texts.tolist()
    ([0, 0, 1, -1], [0, 1, 2, 3], ['1', '1', 'b', nan])
    """
    raw, distinct = raw_codes(column)
    texts = value_text(distinct)
    (ids,), _ = text_ids(texts, distinct=is_text_dtype(column.dtype))
    return ids[raw], raw, texts


def first_appearance(blocks: Iterable[np.ndarray], n: int) -> np.ndarray:
    """The ids ``0 .. n-1`` in order of first appearance in the blocks read one after the
    other (-1, missing, skipped): the blocks of a long column can be made one at a time.

    Parameters
    ----------
    blocks : iterable of numpy.ndarray
        Integer ids in ``-1 .. n-1``.
    n : int
        How many ids there are.

    Returns
    -------
    numpy.ndarray
        The ids that appear, each once, first seen first.

    Examples
    --------
    >>> first_appearance([np.array([2, -1, 2]), np.array([0, 2])], 3).tolist()
    [2, 0]
    """
    seen = np.zeros(n + 1, dtype=bool)  # the last slot: missing (-1), never taken
    seen[-1] = True
    order: list[np.ndarray] = []
    for ids in blocks:
        first = pd.unique(ids)  # in order of appearance
        new = first[~seen[first]]
        seen[new] = True
        order.append(new)
    return np.concatenate(order) if order else np.empty(0, dtype=np.intp)


class TextCodes:
    """``pd.factorize(pd.concat([column.iloc[rows].astype(str), other.astype(str)]))``
    without a string or an int64 per row: one factorize of each raw column (its codes kept
    as int32), the text of the distinct values only (:func:`text_ids`), and the order of
    first appearance found ``block`` rows at a time (:func:`first_appearance`). Names are
    numbered from 0 in order of first appearance, the rows of ``column`` first; a missing
    name is -1. Used for Table 9's score cube, whose rows are a 5 M-output study's.

    Parameters
    ----------
    column : pandas.Series
        The names of which some rows are numbered.
    rows : numpy.ndarray
        The positions of those rows, in the order they are read.
    other : pandas.Series or None
        A second column whose every row is numbered after them (None: none).
    block : int, default 2**20
        Rows looked at at a time (memory only; the codes do not depend on it).

    Attributes
    ----------
    names : numpy.ndarray
        The names in the order of their codes (object array of str).

    Examples
    --------
    >>> tc = TextCodes(pd.Series(["b", "a", 1]), np.array([2, 0]), pd.Series(["a", "1"]))
    >>> tc.names.tolist(), tc.of_rows(np.array([0, 1, 2])).tolist(), tc.of_other().tolist()
    (['1', 'b', 'a'], [1, 2, 0], [2, 0])
    """

    def __init__(self, column: pd.Series, rows: np.ndarray, other: pd.Series | None,
                 block: int = 1 << 20) -> None:
        parts = [column] if other is None else [column, other]
        coded = [raw_codes(part, compact=True) for part in parts]
        self._raws = [raw for raw, _ in coded]
        ids, names = text_ids(*(value_text(distinct) for _, distinct in coded))
        self._ids = ids if other is not None else [ids[0], np.empty(0, dtype=np.intp)]
        chunks = [(0, rows[lo:lo + block]) for lo in range(0, len(rows), block)]
        if other is not None:
            chunks += [(1, np.arange(lo, min(lo + block, len(other))))
                       for lo in range(0, len(other), block)]
        order = first_appearance((self._ids[k][self._raws[k][c]] for k, c in chunks),
                                 len(names))
        self._renumber = np.full(len(names) + 1, -1, dtype=np.intp)  # last slot: missing
        self._renumber[order] = np.arange(len(order))
        self.names = np.asarray(names)[order].astype(object)

    def of_rows(self, rows: np.ndarray) -> np.ndarray:
        """The codes of some rows of ``column``.

        Parameters
        ----------
        rows : numpy.ndarray
            Row positions in ``column``.

        Returns
        -------
        numpy.ndarray
            One code per position.

        Examples
        --------
        >>> TextCodes(pd.Series(["b", "a"]), np.array([1, 0]), None).of_rows(np.array([0]))
        array([1])
        """
        return self._renumber[self._ids[0][self._raws[0][rows]]]

    def of_other(self) -> np.ndarray:
        """The codes of every row of ``other``.

        Returns
        -------
        numpy.ndarray
            One code per row of ``other``.

        Examples
        --------
        >>> TextCodes(pd.Series(["b"]), np.array([0]), pd.Series(["c", "b"])).of_other()
        array([1, 0])
        """
        return self._renumber[self._ids[1][self._raws[1]]]


def pair_codes(first: pd.Series, second: pd.Series, *, missing_as_name: bool = False
               ) -> np.ndarray:
    """The (first, second) pairs of the rows numbered from 0 in order of first appearance,
    as ``pd.factorize`` of the pairs would, from one factorize of each column: a 5 M-row
    ratings frame needs neither a joined string nor a tuple per row (gigabytes). Pairs of
    raw values: give the columns' text to number pairs of texts.

    A missing value gives -1, or with ``missing_as_name`` counts as a name of its own (as
    the tuples of a ``pd.MultiIndex`` do).

    Parameters
    ----------
    first, second : pandas.Series
        The two columns (a system and an item: an output), of equal length.
    missing_as_name : bool, default False
        Number a missing name like any other instead of giving the row -1.

    Returns
    -------
    numpy.ndarray
        One code per row (intp).

    Examples
    --------
    >>> pair_codes(pd.Series(["b", "a", "b", None]), pd.Series(["1", "1", "1", "2"])).tolist()
    [0, 1, 0, -1]
    """
    s = pd.factorize(first, use_na_sentinel=not missing_as_name)[0]
    i, names = pd.factorize(second, use_na_sentinel=not missing_as_name)
    pair = s.astype(np.int64) * max(1, len(names)) + i
    pair[(s < 0) | (i < 0)] = -1
    codes = np.full(len(pair), -1, dtype=np.intp)
    ok = pair >= 0
    codes[ok] = pd.factorize(pair[ok])[0]
    return codes


def sorted_names(*columns: pd.Series) -> pd.Index:
    """The distinct values of the columns in sorted order (missing left out), from one
    factorize of each column (not a string per row): the row or column labels a pandas
    pivot of the columns would sort.

    Parameters
    ----------
    *columns : pandas.Series
        One or more columns (at least one).

    Returns
    -------
    pandas.Index
        The sorted distinct values.

    Examples
    --------
    >>> sorted_names(pd.Series(["b", "a", None]), pd.Series(["c", "a"])).tolist()
    ['a', 'b', 'c']
    """
    names = pd.Index(pd.factorize(columns[0])[1])
    for column in columns[1:]:
        names = names.union(pd.Index(pd.factorize(column)[1]))
    return names.sort_values()


def name_positions(column: pd.Series, names: pd.Index) -> np.ndarray:
    """Each row's position in ``names`` (-1: missing or not there), from one factorize of
    the column: the distinct values are looked up, not the rows.

    Parameters
    ----------
    column : pandas.Series
        The names.
    names : pandas.Index
        The names to find (e.g. :func:`sorted_names`).

    Returns
    -------
    numpy.ndarray
        One position per row.

    Examples
    --------
    >>> name_positions(pd.Series(["b", None, "z", "b"]), pd.Index(["a", "b"])).tolist()
    [1, -1, -1, 1]
    """
    codes, uniques = pd.factorize(column)
    return np.append(names.get_indexer(uniques), -1)[codes]  # the last slot: missing


def sort_codes(column: pd.Series) -> np.ndarray:
    """The sort key pandas' ``sort_values`` uses for one of several columns: the codes of the
    column's ordered ``Categorical``, a missing value after every name. ``np.lexsort`` of
    these keys orders rows as ``frame.sort_values(columns)`` does, without sorting a copy.

    Parameters
    ----------
    column : pandas.Series
        One sort column.

    Returns
    -------
    numpy.ndarray
        One key per row.

    Examples
    --------
    >>> sort_codes(pd.Series(["b", None, "a", "b"])).tolist()
    [1, 2, 0, 1]
    """
    cat = pd.Categorical(column, ordered=True)
    return np.where(cat.codes == -1, len(cat.categories), cat.codes)
