"""Scale and constancy of a variable: the two numerical rules every coefficient shares.

:func:`unit_scaled` scales by an exact power of two before summing, as scipy's ``pearsonr``
scales before summing (no overflow near 1e200, no underflow near 1e-200, the same r);
:func:`near_constant` is nlgeval's one degenerate-input rule (a variable whose values are all
equal or differ by rounding only is constant, for every coefficient), and
:func:`snap_near_constant` applies it to the statistics that are defined on constant input
(the Kendall variants count every pair of a constant group as tied). Re-exported by
:mod:`nlgeval.correlation.coefficients`, whose docstring states the rule.
"""

from __future__ import annotations

from typing import Any

import numpy as np

#: A variable whose spread (max - min) is at most this share of its largest magnitude is
#: constant (numerically constant: its values differ by rounding only), for every coefficient.
CONSTANT_RTOL = 1e-13


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
    x = np.asarray(x, dtype=float)
    ok = np.isfinite(x) if valid is None else (valid & np.isfinite(x))
    xs = unit_scaled(x, ok, axis)  # magnitudes below 1: the spread cannot overflow
    hi = np.where(ok, xs, -np.inf).max(axis=axis, initial=-np.inf)
    lo = np.where(ok, xs, np.inf).min(axis=axis, initial=np.inf)
    with np.errstate(invalid="ignore"):
        spread = hi - lo
        return np.asarray(~(spread > CONSTANT_RTOL * np.maximum(np.abs(hi), np.abs(lo))))


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
