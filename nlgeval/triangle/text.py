"""The text report of a triangle-test result (Gonzalez-Corbelle, Alonso & Bugarin, INLG 2020),
as ``nlgeval triangle analyse`` prints it. It reads a :class:`TriangleResult`, so it sits above
the analysis (which uses only the words of :mod:`nlgeval.triangle.wording`)."""

from __future__ import annotations

import math

from nlgeval.triangle.analysis import TriangleResult


def describe(result: TriangleResult) -> str:
    """A short multi-line text report of a :class:`TriangleResult`.

    Examples:
        >>> from nlgeval.triangle import analyse
        >>> print(describe(analyse(13, 24)).splitlines()[0])
        NLG triangle test of difference: 13 correct of 24
    """
    ci = result.confidence_interval()
    lines = [
        f"NLG triangle test of {result.test}: {result.correct} correct of {result.n}",
        f"  p-value (exact binomial): {result.pvalue:.4g}",
        f"  pc = {result.pc:.4f}  pd = {result.pd:.4f}  d' = {result.d_prime:.4f}",
        f"  {100 * result.confidence_level:g}% Clopper-Pearson: "
        f"pc [{ci.low:.4f}, {ci.high:.4f}], pd [{result.pd_ci.low:.4f}, {result.pd_ci.high:.4f}], "
        f"d' [{result.d_prime_ci.low:.4f}, {_fmt_inf(result.d_prime_ci.high)}]",
    ]
    if result.test == "difference":
        lines.append(
            f"  pd lower limit ({100 * (1 - result.alpha):g}%): exact {result.pd_lower:.4f}, "
            f"normal approx. {result.pd_lower_normal:.4f}; minimum correct: "
            f"{result.min_correct if result.min_correct is not None else 'impossible'}"
        )
    else:
        lines.append(
            f"  pd upper limit ({100 * (1 - result.beta):g}%): exact {result.pd_upper:.4f}, "
            f"normal approx. {result.pd_upper_normal:.4f}; maximum correct: "
            f"{result.max_correct if result.max_correct is not None else 'impossible'}"
        )
    lines.append("  " + result.conclusion)
    return "\n".join(lines)


def _fmt_inf(x: float) -> str:
    return "inf" if math.isinf(x) else f"{x:.4f}"
