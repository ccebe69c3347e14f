"""Scale and constancy of a variable: the two numerical rules every coefficient shares.

:func:`unit_scaled` scales by an exact power of two before summing, as scipy's ``pearsonr``
scales before summing (no overflow near 1e200, no underflow near 1e-200, the same r);
:func:`near_constant` is nlgeval's one degenerate-input rule (a variable whose values are all
equal or differ by rounding only is constant, for every coefficient), and
:func:`snap_near_constant` applies it to the statistics that are defined on constant input
(the Kendall variants count every pair of a constant group as tied). :data:`MIN_PAIRS`, the
fewest complete pairs of a defined coefficient, is here so that compiled kernels can read it
without importing :mod:`nlgeval.correlation.coefficients`. Re-exported by
:mod:`nlgeval.correlation.coefficients`, whose docstring states the rules.

Compiled kernels of other modules read :data:`MIN_PAIRS` and :data:`CONSTANT_RTOL` as constants
frozen into their machine code, and numba's on-disk cache of a kernel does not notice a change
to another file: after changing either value, clear the numba caches (the ``*.nbi``/``*.nbc``
files in the ``__pycache__`` folders under ``nlgeval/correlation``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

#: A variable whose spread (max - min) is at most this share of its largest magnitude is
#: constant (numerically constant: its values differ by rounding only), for every coefficient.
CONSTANT_RTOL = 1e-13

#: Fewer complete pairs than this make every coefficient undefined (NaN): the one rule.
MIN_PAIRS = 3


def unit_scaled(x: np.ndarray, valid: np.ndarray | None = None, axis: int | None = -1
                ) -> np.ndarray:
    """``x`` times a power of two that brings its largest valid magnitude into [0.5, 1).

    The scaling of scipy's ``pearsonr`` (divide by the largest magnitude before summing), done
    with a power of two so that it is exact: every sum, product and quotient of the Pearson
    kernels is then the same number as on the unscaled data, only free of overflow (values
    near 1e200, whose squares overflow) and underflow (near 1e-200). ``axis=None`` scales the
    whole array by one factor; NaN and infinite entries (and invalid ones) are left as they are.

    Examples
    --------
    >>> import numpy as np
    >>> unit_scaled(np.array([[3e200, -1e200], [1e-300, 0.0]])).round(4)
    array([[ 0.9798, -0.3266],
           [ 0.6697,  0.    ]])
    """
    x = np.asarray(x, dtype=float)
    ok = np.isfinite(x) if valid is None else (valid & np.isfinite(x))
    big = np.where(ok, np.abs(x), 0.0).max(axis=axis, keepdims=axis is not None, initial=0.0)
    _, exponent = np.frexp(big)
    return np.ldexp(x, -exponent)


def extremes(x: np.ndarray, valid: np.ndarray | None = None, axis: int | None = -1
             ) -> tuple[np.ndarray, np.ndarray]:
    """Largest and smallest valid value along ``axis`` (-inf and inf for an empty vector).

    Examples
    --------
    >>> import numpy as np
    >>> extremes(np.array([[1.0, np.nan, 3.0]]))
    (array([3.]), array([1.]))
    """
    x = np.asarray(x, dtype=float)
    ok = np.isfinite(x) if valid is None else (valid & np.isfinite(x))
    return (np.where(ok, x, -np.inf).max(axis=axis, initial=-np.inf),
            np.where(ok, x, np.inf).min(axis=axis, initial=np.inf))


def constant_from_extremes(hi: np.ndarray, lo: np.ndarray) -> np.ndarray:
    """The rule of :func:`near_constant` from a variable's largest and smallest value.

    Examples
    --------
    >>> import numpy as np
    >>> constant_from_extremes(np.array([0.1 + 0.2, 2.0]), np.array([0.3, 1.0])).tolist()
    [True, False]
    """
    with np.errstate(invalid="ignore", over="ignore"):  # an overflowing spread is not zero
        spread = hi - lo
        return np.asarray(~(spread > CONSTANT_RTOL * np.maximum(np.abs(hi), np.abs(lo))))


def near_constant(x: Any, valid: np.ndarray | None = None, axis: int | None = -1
                  ) -> np.ndarray:
    """True where a variable is constant under nlgeval's one rule (every coefficient).

    Constant: all valid values equal, or numerically constant relative to the data's own
    magnitude -- ``max - min <= CONSTANT_RTOL * max |x|`` (1e-13; values that differ only by
    rounding, such as 0.3 and 0.1 + 0.2). Scale-free, as scipy's constant-input checks: values
    between 1e-318 and 1e-170 are not constant (their spread is their magnitude). Empty
    vectors count as constant. ``axis=None``: the whole array is one variable.

    Examples
    --------
    >>> import numpy as np
    >>> near_constant(np.array([[0.3, 0.1 + 0.2, 0.3], [1e-318, 1e-200, 1e-170]])).tolist()
    [True, False]
    """
    return constant_from_extremes(*extremes(x, valid, axis))


#: Magnitudes between these need no scaling: no sum of squares, cross-product or product of
#: two sums of squares of up to 2^40 such values overflows or underflows.
_SAFE = (2.0 ** -100, 2.0 ** 100)


def overflow_safe(x: np.ndarray, hi: np.ndarray, lo: np.ndarray) -> np.ndarray:
    """``x`` (last axis = the variable) scaled as :func:`unit_scaled` where a vector's
    magnitude (from its :func:`extremes` ``hi``/``lo``) is outside [2^-100, 2^100], else ``x``
    itself: scaling by a power of two changes no result unless something would overflow or
    underflow, so it is only done where that can happen (a pass saved on ordinary data).

    Examples
    --------
    >>> import numpy as np
    >>> x = np.array([[1e200, 2e200], [1.0, 2.0]])
    >>> overflow_safe(x, *extremes(x)).round(3).tolist()  # each row into [0.5, 1)
    [[0.327, 0.653], [0.25, 0.5]]
    >>> overflow_safe(x[1:], *extremes(x[1:])).tolist()
    [[1.0, 2.0]]
    """
    big = np.maximum(np.abs(hi), np.abs(lo))
    big = np.where(np.isfinite(big), big, 0.0)
    if np.all((big == 0.0) | ((big >= _SAFE[0]) & (big <= _SAFE[1]))):
        return x
    _, exponent = np.frexp(big)
    return np.ldexp(x, -np.expand_dims(exponent, -1))


def snap_near_constant(x: Any, valid: np.ndarray | None = None, axis: int = -1) -> np.ndarray:
    """``x`` with every numerically constant vector (:func:`near_constant`) made exactly
    constant (its valid values set to their maximum); other vectors unchanged.

    How the statistics that are defined on constant input (the Kendall variants tau_23 and
    acc_23 count every pair as tied) apply the same rule as the coefficients.

    Examples
    --------
    >>> import numpy as np
    >>> snap_near_constant(np.array([[0.3, 0.1 + 0.2], [1.0, 2.0]])).tolist()
    [[0.30000000000000004, 0.30000000000000004], [1.0, 2.0]]
    """
    x = np.asarray(x, dtype=float)
    ok = np.isfinite(x) if valid is None else (valid & np.isfinite(x))
    const = np.expand_dims(near_constant(x, ok, axis), axis)
    top = np.where(ok, x, -np.inf).max(axis=axis, initial=-np.inf, keepdims=True)
    return np.where(ok & const, top, x)
