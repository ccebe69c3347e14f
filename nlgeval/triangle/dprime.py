"""Thurstonian d-prime for the triangle protocol.

Under the Thurstonian model each text gives a normal percept (variance 1); the two sources differ
in mean by ``d'``. A judge following the triangle decision rule picks correctly with probability
(Frijters 1979; Ennis 1993; sensR's ``psyfun(d, "triangle")``)::

    pc(d') = 2 * integral_0^inf phi(z) [Phi(-z sqrt3 + d' sqrt(2/3))
                                        + Phi(-z sqrt3 - d' sqrt(2/3))] dz

which equals ``P(F > 3)`` for ``F`` noncentral F(1, 1, ncp = 2 d'^2 / 3). We evaluate the
integral with a fixed 160-point Gauss-Legendre rule on [0, 10] (the integrand carries
``phi(z)``, negligible beyond 10), which is vectorised over ``d'`` and accurate to ~1e-13; the
noncentral F form (scipy.stats.ncf) is used only as an independent check in the tests. The
inverse is solved with Brent's method; ``pc <= 1/3`` maps to ``d' = 0`` and ``pc = 1`` to
``inf``, as in sensR.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import optimize, special

from nlgeval.triangle.critical import P_GUESS

_NODES, _WEIGHTS = np.polynomial.legendre.leggauss(160)
_UPPER = 10.0
_Z = 0.5 * _UPPER * (_NODES + 1.0)
_W = 0.5 * _UPPER * _WEIGHTS
_PHI_Z = np.exp(-0.5 * _Z**2) / math.sqrt(2.0 * math.pi)
_SQRT3 = math.sqrt(3.0)
_SQRT23 = math.sqrt(2.0 / 3.0)
_D_MAX = 40.0  # pc(40) == 1 to double precision


def pc_from_dprime(d_prime: float | np.ndarray) -> float | np.ndarray:
    """Probability of a correct triangle answer for a Thurstonian ``d'`` (>= 0).

    Parameters
    ----------
    d_prime : float or ndarray
        Thurstonian ``d'`` (>= 0).

    Returns
    -------
    float or ndarray
        Probability of a correct answer (same shape as ``d_prime``).

    Examples
    --------
    d' = 0 is guessing (pc = 1/3); d' = 1 gives pc = 0.418 (Ennis 1993, Table 1):

    >>> round(float(pc_from_dprime(0.0)), 4)
    0.3333
    >>> round(float(pc_from_dprime(1.0)), 3)
    0.418
    """
    d = np.asarray(d_prime, dtype=float)
    if np.any(d < 0) or np.any(np.isnan(d)):
        raise ValueError("d' must be >= 0")
    dd = np.where(np.isinf(d), _D_MAX, d)[..., None]
    integrand = _PHI_Z * (
        special.ndtr(-_Z * _SQRT3 + dd * _SQRT23) + special.ndtr(-_Z * _SQRT3 - dd * _SQRT23)
    )
    pc = np.clip(2.0 * integrand @ _W, P_GUESS, 1.0)
    pc = np.where(d == 0, P_GUESS, pc)
    return pc if np.ndim(d_prime) else float(pc)


def _dprime_scalar(pc: float) -> float:
    if math.isnan(pc):
        return math.nan
    if pc <= P_GUESS:
        return 0.0
    if pc >= 1.0:
        return math.inf
    hi = 1.0
    while pc_from_dprime(hi) < pc:
        hi *= 2.0
        if hi > _D_MAX:
            return math.inf
    return float(optimize.brentq(lambda d: pc_from_dprime(d) - pc, 0.0, hi, xtol=1e-12))


def dprime_from_pc(pc: float | np.ndarray) -> float | np.ndarray:
    """Thurstonian ``d'`` for the triangle protocol from a probability of a correct answer.

    ``pc <= 1/3`` gives 0 (no evidence of sensitivity), ``pc = 1`` gives ``inf``.

    Parameters
    ----------
    pc : float or ndarray
        Probability of a correct answer.

    Returns
    -------
    float or ndarray
        ``d'`` (same shape as ``pc``).

    Examples
    --------
    The inverse of pc_from_dprime:

    >>> round(float(dprime_from_pc(pc_from_dprime(1.5))), 6)
    1.5
    """
    arr = np.asarray(pc, dtype=float)
    if np.any((arr < 0) | (arr > 1)):
        raise ValueError("pc must lie in [0, 1]")
    out = np.vectorize(_dprime_scalar, otypes=[float])(arr)
    return out if np.ndim(pc) else float(out)
