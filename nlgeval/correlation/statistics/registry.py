"""Statistic name -> :class:`~nlgeval.correlation.statistics.base.Statistic`, open to plugins.

Built-in statistics are the ``STATISTICS`` tuples of the modules of
:mod:`nlgeval.correlation.statistics` (found by listing the package, so a new statistic is one
new module there). Other packages add statistics through the ``nlgeval.statistics``
entry-point group (``importlib.metadata.entry_points``)::

    [project.entry-points."nlgeval.statistics"]
    mystat = "my_package.module:MyStatistic"   # a Statistic subclass (or instance)

Names are matched case-insensitively with ``-`` read as ``_``; aliases (``tau`` for Kendall's
tau-b, ``spa`` for soft pairwise accuracy, ...) are declared by each statistic.
"""

from __future__ import annotations

import difflib
import importlib
import pkgutil
from importlib.metadata import entry_points
from pathlib import Path

from nlgeval.correlation.statistics.base import Statistic
from nlgeval.errors import InputError

ENTRY_POINT_GROUP = "nlgeval.statistics"
_PACKAGE = __name__.rsplit(".", 1)[0]
_NOT_BUILTIN = {"base", "registry"}
_builtin: dict[str, Statistic] = {}
_registered: dict[str, Statistic] = {}


def _key(name: str) -> str:
    return name.strip().lower().replace("-", "_")


def _builtins() -> dict[str, Statistic]:
    if not _builtin:
        found: list[Statistic] = []
        for mod in pkgutil.iter_modules([str(Path(__file__).parent)]):  # this package
            if mod.name not in _NOT_BUILTIN:
                module = importlib.import_module(f"{_PACKAGE}.{mod.name}")
                found += list(getattr(module, "STATISTICS", ()))
        _builtin.update({s.name: s for s in sorted(found, key=lambda s: (s.order, s.name))})
    return _builtin


def _as_statistic(obj: object, origin: str) -> Statistic:
    stat = obj() if isinstance(obj, type) and issubclass(obj, Statistic) else obj
    if not isinstance(stat, Statistic) or not stat.name:
        raise InputError(f"{origin} is not a nlgeval statistic (a subclass of "
                         "nlgeval.correlation.statistics.Statistic with a name)")
    return stat


def _plugins() -> dict[str, Statistic]:
    """Statistics of the ``nlgeval.statistics`` entry-point group (loaded on each call, so a
    package installed while Python runs is seen)."""
    out = {}
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        origin = f"entry point '{ep.name}' ({ep.value})"
        stat = _as_statistic(ep.load(), origin)
        if stat.coefficient:  # the correlation stage computes only the built-in coefficients
            raise InputError(f"{origin}: a plugin statistic cannot set coefficient = True")
        out[stat.name] = stat
    return out


def register_statistic(stat: Statistic | type[Statistic]) -> Statistic:
    """Register a statistic at run time (a class or an instance; usable as a class decorator
    returning the instance).

    Parameters
    ----------
    stat : Statistic or type[Statistic]
        The statistic, or its class (instantiated without arguments).

    Returns
    -------
    Statistic
        The registered instance.

    Examples
    --------
    >>> import numpy as np
    >>> from nlgeval.correlation.statistics import Statistic
    >>> @register_statistic
    ... class Cells(Statistic):
    ...     name = "n_cells"
    ...     def batch(self, Xs, Ys, level):
    ...         return np.isfinite(Xs + Ys).sum(axis=(-1, -2)).astype(float)
    >>> get_statistic("n-cells").value(np.ones((2, 3)), np.ones((2, 3)), "segment").statistic
    6.0
    """
    inst = _as_statistic(stat, repr(stat))
    _registered[inst.name] = inst
    return inst


def available_statistics(plugins: bool = True) -> dict[str, Statistic]:
    """Every statistic by canonical name: built-ins (in their order), registered, plugins.

    Parameters
    ----------
    plugins : bool
        Include statistics of installed plugins (default True).

    Returns
    -------
    dict of str to Statistic
        The statistics by canonical name.

    Examples
    --------
    >>> list(available_statistics())[:5]
    ['pearson', 'spearman', 'kendall', 'kendall_c', 'tau_a']
    """
    out = {**_builtins(), **_registered}
    if plugins:
        for name, stat in _plugins().items():
            out.setdefault(name, stat)
    return out


def _lookup(key: str, stats: dict[str, Statistic]) -> Statistic | None:
    if key in stats:
        return stats[key]
    for stat in stats.values():
        if key in stat.aliases:
            return stat
    return None


def get_statistic(name: str) -> Statistic:
    """The statistic called ``name`` (or one of its aliases); InputError with a suggestion.

    Parameters
    ----------
    name : str
        A canonical name or alias (any case; ``-`` reads as ``_``).

    Returns
    -------
    Statistic
        The statistic.

    Examples
    --------
    >>> get_statistic("Tau-B").name, get_statistic("spa").levels
    ('kendall', ('system',))
    """
    key = _key(name)
    found = _lookup(key, {**_builtins(), **_registered})
    if found is None:
        found = _lookup(key, available_statistics())
    if found is None:
        names = list(available_statistics())
        close = difflib.get_close_matches(key, names, n=1)
        hint = f" (did you mean '{close[0]}'?)" if close else ""
        raise InputError(f"unknown statistic '{name}'{hint}; use one of: {', '.join(names)}")
    return found
