"""Small helpers shared by the frozen result dataclasses (scipy.stats style).

Result objects are ``@dataclass(frozen=True)`` with scipy-like attribute names
(``statistic``, ``pvalue``, ``confidence_interval()``) and derive from :class:`Result` (any
result) or :class:`StatResult` (a test or an estimate), which derive ``to_dict``/``to_frame``
from the fields and give scipy's unpacking ``statistic, pvalue = result``.
"""

from __future__ import annotations

import dataclasses
import json
import math
import operator
from collections.abc import Iterator, Mapping
from typing import Any, ClassVar, NamedTuple

import numpy as np
import pandas as pd


class ConfidenceInterval(NamedTuple):
    """A two-sided (or one-sided, with an infinite bound) confidence interval.

    Examples
    --------
    >>> ci = ConfidenceInterval(0.21, 0.68)
    >>> ci.low, ci.high
    (0.21, 0.68)
    >>> low, high = ci
    """

    low: float
    high: float


def jsonable(obj: Any) -> Any:
    """Convert results, numpy scalars, DataFrames and NaN into JSON-ready Python objects.

    NaN and infinities become ``None`` (JSON has no NaN); DataFrames become lists of records.

    Examples
    --------
    >>> import numpy as np
    >>> jsonable({"r": np.float64(0.5), "p": float("nan"), "n": np.int64(3), "ci": (0.1, 0.9)})
    {'r': 0.5, 'p': None, 'n': 3, 'ci': [0.1, 0.9]}
    """
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        if hasattr(obj, "to_dict"):
            return jsonable(obj.to_dict())
        return {f.name: jsonable(getattr(obj, f.name)) for f in dataclasses.fields(obj)}
    if isinstance(obj, pd.DataFrame):
        return [jsonable(r) for r in obj.to_dict(orient="records")]
    if isinstance(obj, pd.Series):
        return jsonable(obj.tolist())
    if isinstance(obj, dict):
        return {str(k): jsonable(v) for k, v in obj.items()}
    if isinstance(obj, tuple) and hasattr(obj, "_asdict"):
        return jsonable(obj._asdict())
    if isinstance(obj, list | tuple | set):
        return [jsonable(v) for v in obj]
    if isinstance(obj, np.ndarray):
        return jsonable(obj.tolist())
    if isinstance(obj, np.bool_ | bool):
        return bool(obj)
    if isinstance(obj, np.integer):
        return int(obj)
    if isinstance(obj, np.floating | float):
        f = float(obj)
        return f if math.isfinite(f) else None
    if obj is pd.NA or obj is pd.NaT:
        return None
    return obj


def dumps(obj: Any, indent: int | None = 2) -> str:
    """JSON text for any result (see :func:`jsonable`).

    Examples
    --------
    >>> print(dumps({"statistic": 0.5, "pvalue": float("nan")}, indent=None))
    {"statistic": 0.5, "pvalue": null}
    """
    return json.dumps(jsonable(obj), indent=indent, ensure_ascii=False)


@dataclasses.dataclass(frozen=True)
class Result:
    """Base of every frozen result dataclass: serialisation derived from the fields.

    Subclasses are ``@dataclass(frozen=True)`` and only declare fields. :meth:`to_dict` and
    :meth:`to_frame` are derived from them, so a new field appears in ``--json`` output,
    tables and CSV files without further code. Two class attributes tune the output:

    * ``_aliases`` maps extra output keys to attribute names; it keeps the keys of
      published ``--json`` interfaces (``r``, ``p``) next to the canonical names.
    * ``_omit`` names fields left out of :meth:`to_dict` (bulky arrays, raw draws).

    Naming scheme (docs/api.md): ``statistic``, ``pvalue``, ``pvalue_adjusted``,
    ``ci_low``, ``ci_high``, ``confidence_level``, ``n``, ``method``; pairs of systems are
    ``system_a``/``system_b``.

    Examples
    --------
    >>> from dataclasses import dataclass
    >>> @dataclass(frozen=True)
    ... class Agreement(Result):
    ...     statistic: float
    ...     n: int
    ...     _aliases = {"r": "statistic"}       # keep a published JSON key
    >>> Agreement(0.8, 12).to_dict()
    {'statistic': 0.8, 'n': 12, 'r': 0.8}
    >>> Agreement(0.8, 12).to_frame()
       statistic   n    r
    0        0.8  12  0.8
    """

    _aliases: ClassVar[Mapping[str, str]] = {}
    _omit: ClassVar[frozenset[str]] = frozenset()

    def to_dict(self) -> dict[str, Any]:
        """The fields (minus ``_omit``) plus ``_aliases``, as JSON-ready Python objects.

        >>> from dataclasses import dataclass
        >>> @dataclass(frozen=True)
        ... class Mean(Result):
        ...     statistic: float
        ...     n: int
        >>> Mean(2.5, 4).to_dict()
        {'statistic': 2.5, 'n': 4}
        """
        out = {f.name: jsonable(getattr(self, f.name))
               for f in dataclasses.fields(self) if f.name not in self._omit}
        for key, attr in self._aliases.items():
            out[key] = jsonable(getattr(self, attr))
        return out

    def to_frame(self) -> pd.DataFrame:
        """A one-row DataFrame of the scalar entries of :meth:`to_dict`.

        Examples
        --------
        >>> from dataclasses import dataclass
        >>> @dataclass(frozen=True)
        ... class Mean(Result):
        ...     statistic: float
        ...     n: int
        ...     values: tuple = ()
        >>> Mean(2.5, 2, (2.0, 3.0)).to_frame()          # lists and dicts are left out
           statistic  n
        0        2.5  2
        """
        row = {k: v for k, v in self.to_dict().items() if not isinstance(v, dict | list)}
        return pd.DataFrame([row])


# the fields every StatResult subclass declares (not declared on the base: they would come first)
_STATISTIC_PVALUE = operator.attrgetter("statistic", "pvalue")


@dataclasses.dataclass(frozen=True)
class StatResult(Result):
    """Base of results of a statistical test or estimate, shaped like scipy.stats results.

    Subclasses declare at least ``statistic`` and ``pvalue`` fields (``pvalue`` may be NaN
    when the method has none) and, when there is an interval, ``ci_low``/``ci_high``
    (optionally ``confidence_level``). They get scipy's protocol for free:

    >>> from dataclasses import dataclass
    >>> @dataclass(frozen=True)
    ... class Test(StatResult):
    ...     statistic: float
    ...     pvalue: float
    ...     ci_low: float = float("nan")
    ...     ci_high: float = float("nan")
    >>> stat, p = Test(0.5, 0.01, 0.2, 0.7)
    >>> (stat, p)
    (0.5, 0.01)
    >>> Test(0.5, 0.01, 0.2, 0.7).confidence_interval()
    ConfidenceInterval(low=0.2, high=0.7)
    """

    def __iter__(self) -> Iterator[Any]:
        """Unpack as ``statistic, pvalue = result`` (as scipy.stats results do)."""
        yield from _STATISTIC_PVALUE(self)

    def __len__(self) -> int:
        return 2

    def __getitem__(self, index: int) -> Any:
        return _STATISTIC_PVALUE(self)[index]

    def confidence_interval(self, confidence_level: float | None = None) -> ConfidenceInterval:
        """The interval stored in ``ci_low``/``ci_high`` (NaN bounds when there is none).

        ``confidence_level`` is checked against the level the interval was computed at
        (when the result records one); intervals are not recomputed at another level.

        Examples
        --------
        >>> from dataclasses import dataclass
        >>> @dataclass(frozen=True)
        ... class Estimate(StatResult):
        ...     statistic: float
        ...     pvalue: float
        ...     ci_low: float
        ...     ci_high: float
        ...     confidence_level: float = 0.95
        >>> Estimate(0.5, 0.01, 0.2, 0.7).confidence_interval(0.95)
        ConfidenceInterval(low=0.2, high=0.7)
        >>> Estimate(0.5, 0.01, 0.2, 0.7).confidence_interval(0.9)
        Traceback (most recent call last):
            ...
        ValueError: this interval was computed at confidence_level=0.95;
            recompute the result to get 0.9
        """
        stored = getattr(self, "confidence_level", None)
        if (confidence_level is not None and stored is not None
                and not math.isclose(float(confidence_level), float(stored))):
            raise ValueError(
                f"this interval was computed at confidence_level={stored}; "
                f"recompute the result to get {confidence_level}")
        return ConfidenceInterval(float(getattr(self, "ci_low", math.nan)),
                                  float(getattr(self, "ci_high", math.nan)))
