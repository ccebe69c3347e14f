"""The experiment modes: one module per kind of trial, each a :class:`Mode` (see
:mod:`nlgeval.experiment.modes.base` for what a mode owns).

A new mode is one module here defining ``MODE`` (an instance of a :class:`Mode` subclass),
its name added to :data:`BUILTIN` (defined as ``MODES`` in
:mod:`nlgeval.experiment.config_types`, which the config reads without importing the modes
back), and its form in ``templates/modes/<name>.html`` (plus a
script under ``static/`` when the form needs one).

Examples
--------
>>> get_mode("relative").pairwise, "triangle" in mode_names()
(True, True)
>>> get_mode("nope")
Traceback (most recent call last):
...
KeyError: 'nope'
"""

from __future__ import annotations

import importlib
from functools import cache

from nlgeval.experiment.config_types import MODES
from nlgeval.experiment.modes.base import RATING_COLUMNS, Mode

__all__ = ["BUILTIN", "RATING_COLUMNS", "Mode", "get_mode", "mode_names"]

#: the modes shipped with nlgeval, by module name (= the mode's name)
BUILTIN = MODES


@cache
def _registry() -> dict[str, Mode]:
    out: dict[str, Mode] = {}
    for name in BUILTIN:
        mode = importlib.import_module(f"nlgeval.experiment.modes.{name}").MODE
        out[mode.name] = mode
    return out


def get_mode(name: str) -> Mode:
    """The mode called ``name`` (KeyError when there is none).

    Parameters
    ----------
    name : str
        The mode's name, e.g. ``"triangle"``.

    Returns
    -------
    Mode
        The registered mode.

    Examples
    --------
    >>> get_mode("triangle").check_kinds
    ('known_answer',)
    """
    return _registry()[name]


def mode_names() -> tuple[str, ...]:
    """The names of every mode, in registry order.

    Returns
    -------
    tuple of str
        The mode names.

    Examples
    --------
    >>> mode_names()[:3]
    ('absolute', 'relative', 'triangle')
    """
    return tuple(_registry())
