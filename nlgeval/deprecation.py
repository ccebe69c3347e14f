"""Keywords renamed for one vocabulary (issue 27): the old name keeps working for a release,
with a :class:`DeprecationWarning` naming the new one.

Resample counts are ``n_resamples`` everywhere (earlier ``resamples``, ``nboot``, ``n_boot``).
"""

from __future__ import annotations

import warnings
from typing import TypeVar

T = TypeVar("T")


def renamed_keyword(function: str, old: str, old_value: T | None, new: str, new_value: T, *,
                    stacklevel: int = 3) -> T:
    """The value to use: ``new_value``, or ``old_value`` (with a DeprecationWarning) when the
    caller used the old keyword (``old_value`` is not None). ``stacklevel``: where the warning
    points, 3 (the default) being the caller of the function that calls this one; one more
    for a dataclass's ``__post_init__`` (called by the generated ``__init__``).

    Examples
    --------
    >>> renamed_keyword("f", "n_boot", None, "n_resamples", 1000)
    1000
    >>> import warnings
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     renamed_keyword("f", "n_boot", 50, "n_resamples", 1000)
    50
    >>> str(caught[0].message)
    "f(): the keyword 'n_boot' is deprecated; use 'n_resamples'"
    """
    if old_value is None:
        return new_value
    warnings.warn(f"{function}(): the keyword {old!r} is deprecated; use {new!r}",
                  DeprecationWarning, stacklevel=stacklevel)
    return old_value
