"""Words for triangle-test results: evidence bands and the conclusion sentence
(Gonzalez-Corbelle, Alonso & Bugarin, INLG 2020). They work on plain values, so the analysis
uses them; the multi-line text report of a result is in :mod:`nlgeval.triangle.text`."""

from __future__ import annotations

from typing import Any

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
