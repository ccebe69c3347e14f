"""Guardrails: refuse, or warn loudly, before a model turns a broken input into a confident number.

* :func:`check_variation` -- constant or near-constant ratings stop a GLM / ANOVA / mixed model
  with an :class:`~nlgeval.errors.InputError` (an F test on constant ratings divides rounding
  noise by rounding noise: the 2009-style GLM printed F = 2.7, p = 0.05 on 64 identical
  ratings). Near-constant means that all but at most ``max(1, 1 %)`` of the ratings share one
  value, or that the spread is at the level of floating-point rounding.
* :func:`check_exact_fit` -- a model whose residual sum of squares is rounding noise relative to
  the total (every rating explained exactly by the factors) has no error term to test with.
* :func:`check_dense` -- a model that needs a dense design matrix too large for memory fails
  with one line naming the matrix size and the option to use instead, not with numpy's
  "Unable to allocate 74.5 GiB" traceback.
* :func:`min_attainable_pvalue_signed_rank` and :func:`level_warnings` -- visible warnings where
  a statistic is unreliable: a pair with so few items that the exact Wilcoxon test can never
  reach the (corrected) significance level; variance components estimated from a handful of
  raters or items (the Wald tests of a mixed model are then anti-conservative: Luke 2017,
  "Evaluating significance in linear mixed-effects models in R").
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from nlgeval.errors import InputError

#: Largest share of ratings that may differ from the most common value for the ratings to count
#: as near-constant (at least one differing rating is always near-constant).
NEAR_CONSTANT_SHARE = 0.01
#: Default ceiling for one dense float64 design matrix (bytes).
DENSE_LIMIT_BYTES = 1 << 30
#: Fewer levels than this (raters, items) make a variance component unreliable.
MIN_LEVELS_VARIANCE = 5


def check_variation(
    scores: np.ndarray, *, analysis: str, file: str | None = None,
    near_constant_share: float = NEAR_CONSTANT_SHARE,
) -> None:
    """Raise :class:`InputError` when the ratings are constant or near-constant (see the
    module docstring); ``analysis`` names the model in the message.

    Examples
    --------
    >>> check_variation([1, 2, 3, 4], analysis="the GLM")
    >>> check_variation([3, 3, 3], analysis="the GLM")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    nlgeval.errors.InputError: column 'score': all 3 ratings are 3: the GLM has no variation ...
    """
    x = np.asarray(scores, dtype=float)
    n = len(x)
    if n == 0:
        raise InputError(f"{analysis}: no ratings", file=file, column="score")
    values, counts = np.unique(x, return_counts=True)
    mode = float(values[np.argmax(counts)])
    if len(values) == 1:
        raise InputError(
            f"all {n} ratings are {mode:g}: {analysis} has no variation to analyse (an F test "
            "on constant ratings compares rounding noise with rounding noise); check the "
            "export or the criterion", file=file, column="score")
    differing = int(n - counts.max())
    allowed = max(1, int(np.floor(near_constant_share * n)))
    if differing <= allowed:
        raise InputError(
            f"near-constant ratings: {n - differing} of {n} ratings are {mode:g} and only "
            f"{differing} differ(s); {analysis} would rest on {differing} rating(s) (count "
            "them instead, e.g. with a test of proportions)", file=file, column="score")
    scale = max(1.0, float(np.max(np.abs(x))))
    if float(x.max() - x.min()) <= 1e-9 * scale:
        raise InputError(
            f"the ratings differ only by rounding (range {x.max() - x.min():.3g}): "
            f"{analysis} has no variation to analyse", file=file, column="score")


def check_exact_fit(ss_resid: float, ss_total: float, *, analysis: str) -> None:
    """Raise when a model explains the ratings exactly (residual SS is rounding noise).

    Examples
    --------
    >>> check_exact_fit(4.0, 10.0, analysis="the GLM")
    >>> check_exact_fit(0.0, 10.0, analysis="the GLM")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    nlgeval.errors.InputError: the GLM fits the ratings exactly ...
    """
    if not np.isfinite(ss_resid) or ss_resid <= 1e-10 * max(ss_total, 1e-300):
        raise InputError(
            f"{analysis} fits the ratings exactly (residual variance {max(ss_resid, 0):.3g} "
            f"of a total {ss_total:.3g}): the factors determine every rating, so there is no "
            "error term to test with; the design is too small or the ratings are degenerate")


def check_dense(
    n_rows: int, n_cols: int, *, analysis: str, hint: str,
    limit_bytes: int | float | None = None, copies: int = 1,
) -> None:
    """Raise a one-line :class:`InputError` when ``copies`` dense float64 ``n_rows x n_cols``
    matrices would exceed ``limit_bytes`` (default :data:`DENSE_LIMIT_BYTES`).

    Examples
    --------
    >>> check_dense(1_000_000, 10_008, analysis="the GLM", hint="use --factors rater")
    ... # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    nlgeval.errors.InputError: the GLM needs a dense 1,000,000 x 10,008 matrix (74.6 GiB ...
    """
    limit = DENSE_LIMIT_BYTES if limit_bytes is None else float(limit_bytes)
    need = float(n_rows) * float(n_cols) * 8.0 * copies
    if need > limit:
        raise InputError(
            f"{analysis} needs a dense {n_rows:,} x {n_cols:,} matrix ({_gib(need)} as "
            f"float64), above the limit of {_gib(limit)} (--max-dense-gib); {hint}")


def check_model_size(
    n_rows: int, fixed_levels: Mapping[str, int], *, analysis: str, hint: str,
    random_levels: Mapping[str, int] | None = None, limit_bytes: int | float | None = None,
    copies: int = 1,
) -> int:
    """The one design-size guard of the ratings models (GLM, ordinal, mixed): the dense
    treatment-coded fixed-effects matrix (``n_rows`` x (1 + sum(levels - 1))) and, for a mixed
    model, the dense q x q matrix of the random effects (q = total random levels) must fit
    ``limit_bytes`` (``copies`` of each: the solvers keep a few). Returns the number of
    fixed-effect columns.

    Examples
    --------
    >>> check_model_size(100, {"system": 4, "rater": 10}, analysis="the GLM", hint="")
    13
    """
    n_cols = 1 + sum(max(int(k) - 1, 0) for k in fixed_levels.values())
    check_dense(n_rows, n_cols, analysis=analysis, hint=hint, limit_bytes=limit_bytes,
                copies=copies)
    if random_levels:
        q = sum(int(k) for k in random_levels.values())
        check_dense(q, q, analysis=analysis, hint=hint, limit_bytes=limit_bytes, copies=copies)
    return n_cols


def _gib(nbytes: float) -> str:
    return f"{nbytes / (1 << 30):.3g} GiB"


def min_attainable_pvalue_signed_rank(n_nonzero: int) -> float:
    """Smallest two-sided p-value the exact Wilcoxon signed-rank test can give with
    ``n_nonzero`` non-zero differences: all signs equal, p = 2 / 2^n.

    Examples
    --------
    >>> min_attainable_pvalue_signed_rank(4)  # 2 / 2^4
    0.125
    """
    return float(min(1.0, 2.0 * 0.5 ** max(int(n_nonzero), 0)))


def level_warnings(
    counts: Mapping[str, int], *, purpose: str,
    minimum: Mapping[str, int] | None = None,
) -> list[str]:
    """Warnings for factors with too few levels for ``purpose`` (e.g. ``{"rater": 3}`` with
    the default minimum of :data:`MIN_LEVELS_VARIANCE`).

    Examples
    --------
    >>> level_warnings({"rater": 3, "item": 40}, purpose="the rater variance")
    ['only 3 raters: the rater variance is unreliable with fewer than 5']
    """
    out = []
    for name, k in counts.items():
        need = (minimum or {}).get(name, MIN_LEVELS_VARIANCE)
        if 0 < k < need:
            out.append(f"only {k} {name}{'s' if k != 1 else ''}: {purpose} is unreliable with "
                       f"fewer than {need}")
    return out

