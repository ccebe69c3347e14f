"""Words for triangle-test results: evidence bands, the conclusion sentence, a text report
(Gonzalez-Corbelle, Alonso & Bugarin, INLG 2020)."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    from nlgeval.triangle.analysis import TriangleResult

EVIDENCE_BANDS = ((0.001, "very strong"), (0.01, "strong"), (0.05, "moderate"), (0.2, "slight"))


def evidence_strength(pvalue: float) -> str | None:
    """The wording of González-Corbelle et al. (2020) for a p-value.

    One of 'very strong', 'strong', 'moderate', 'slight' or None.

    Examples:
        >>> evidence_strength(0.004)
        'strong'
        >>> evidence_strength(0.3) is None
        True
    """
    for limit, word in EVIDENCE_BANDS:
        if pvalue <= limit:
            return word
    return None


def _pct(x: float) -> str:
    return f"{100 * x:.1f}%"


def conclusion_text(r: dict[str, Any]) -> str:
    """The conclusion sentence of a triangle test from its result fields (a dict), in the
    wording of González-Corbelle et al. (2020).

    Examples:
        >>> from nlgeval.triangle import analyse
        >>> conclusion_text(analyse(13, 24).to_dict())[:44]
        '13 of 24 judges identified the odd text (pc '
    """
    x, n, test = r["correct"], r["n"], r["test"]
    head = f"{x} of {n} judges identified the odd text (pc = {r['pc']:.3f}, chance = 1/3). "
    if test == "difference":
        a = r["alpha"]
        if r["significant"]:
            return head + (
                f"Exact one-sided binomial p = {r['pvalue']:.3g} <= alpha = {a:g}: "
                f"{r['evidence']} evidence of a perceptible difference between the two sources. "
                f"With {100 * (1 - a):g}% confidence at least {_pct(r['pd_lower'])} of the "
                "population perceive it."
            )
        return head + (
            f"Exact one-sided binomial p = {r['pvalue']:.3g} > alpha = {a:g}: no evidence of a "
            "perceptible difference at this alpha. This does not show that the texts are "
            "similar; that needs a test of similarity."
        )
    b, pd0 = r["beta"], r["pd0"]
    level = f"{100 * (1 - b):g}%"
    limits = (
        f"with {level} confidence no more than {_pct(r['pd_upper'])} of the population "
        "perceive a difference (the normal approximation of González-Corbelle et al. 2020: "
        f"{_pct(r['pd_upper_normal'])})"
    )
    if r["significant"]:
        return head + (
            f"Test of similarity against pd = {_pct(pd0)}: p = {r['pvalue']:.3g} <= beta = {b:g}; "
            f"{limits}, which is below {_pct(pd0)}: {r['evidence']} evidence of similarity "
            "(the texts can be considered interchangeable at this pd)."
        )
    return head + (
        f"Test of similarity against pd = {_pct(pd0)}: p = {r['pvalue']:.3g} > beta = {b:g}; "
        f"{limits}, which is not below {_pct(pd0)}: similarity is not shown."
    )


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
