"""Analysis of a triangle test: exact p-values, pc, pd, d' with intervals, plain-language verdict.

For ``x`` correct answers out of ``n`` (Gonzalez-Corbelle et al. 2020, sec. 4.2; ISO 4120;
sensR's ``discrim``):

* test of difference: p = P(X >= x | n, 1/3) (exact one-sided binomial); a difference is
  concluded when p <= alpha, i.e. x >= the Table 2 critical value;
* test of similarity: p = P(X <= x | n, pc(pd0)); similarity (fewer than ``pd0`` of the
  population perceive a difference) is concluded when p <= beta, i.e. x <= the Table 3 critical
  value, equivalently when the exact one-sided upper 100(1-beta)% limit of pd is below pd0;
* estimates pc = x/n, pd = 1.5 pc - 0.5 and the Thurstonian d' (clipped at 0 when pc < 1/3);
* a two-sided Clopper-Pearson interval on pc (``confidence_level``), mapped to pd and d'
  (monotone maps, so the mapped interval has the same coverage);
* one-sided exact limits ``pd_lower`` (level 1 - alpha) and ``pd_upper`` (level 1 - beta), and
  the normal-approximation limits of González-Corbelle et al. (2020) ``pd_lower_normal`` /
  ``pd_upper_normal`` with its
  2-decimal z values (98 judges, 36 correct, beta = .01: 0.221).

Evidence wording (González-Corbelle et al. 2020, sec. 3): a result significant at the
conventional risk 0.2, 0.05, 0.01 or 0.001 is "slight", "moderate", "strong" or "very strong"
evidence of difference (or of similarity). nlgeval uses the band of the smallest of these risks
the p-value reaches (p <= 0.001 very strong, <= 0.01 strong, <= 0.05 moderate, <= 0.2 slight),
and only words a result as evidence when it is significant at the user's own alpha (beta for
similarity).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import pandas as pd
from pandas import DataFrame
from scipy import stats

from nlgeval.errors import InputError
from nlgeval.io import ROW, header_row, row_of
from nlgeval.results import ConfidenceInterval, StatResult
from nlgeval.triangle.critical import (
    P_GUESS,
    TestType,
    check_correct,
    check_n,
    check_probability,
    check_test,
    max_correct,
    min_correct,
    pc_from_pd,
    pd_from_pc,
    pd_lower_normal,
    pd_upper_normal,
)
from nlgeval.triangle.dprime import dprime_from_pc
from nlgeval.triangle.wording import conclusion_text
from nlgeval.triangle.wording import evidence_strength as evidence_strength

CRITERION = "odd_one_out"


def clopper_pearson(
    correct: int, n: int, level: float, side: str = "two-sided"
) -> tuple[float, float]:
    """Exact (Clopper-Pearson) interval for a binomial proportion via beta quantiles.

    Examples:
        Equal to scipy's exact interval:

        >>> [round(v, 6) for v in clopper_pearson(5, 10, 0.95)]
        [0.187086, 0.812914]
        >>> ci = stats.binomtest(5, 10).proportion_ci(0.95, method="exact")
        >>> [round(ci.low, 6), round(ci.high, 6)]
        [0.187086, 0.812914]
    """
    a = 1.0 - level
    if side == "two-sided":
        lo_q, hi_q = a / 2, 1 - a / 2
    elif side == "lower":
        lo_q, hi_q = a, 1.0
    elif side == "upper":
        lo_q, hi_q = 0.0, 1 - a
    else:  # pragma: no cover - internal
        raise ValueError(side)
    low = 0.0
    if correct > 0 and lo_q > 0.0:
        low = float(stats.beta.ppf(lo_q, correct, n - correct + 1))
    high = 1.0
    if correct < n and hi_q < 1.0:
        high = float(stats.beta.ppf(hi_q, correct + 1, n - correct))
    return low, high


@dataclass(frozen=True)
class TriangleResult(StatResult):
    """Result of a triangle test (scipy-style: ``statistic`` = number correct, ``pvalue``).

    ``confidence_interval()`` is the two-sided Clopper-Pearson interval of pc
    (``ci_low``, ``ci_high``); ``pd_ci`` and ``d_prime_ci`` are the same interval on the pd and
    d' scales. In ``to_dict`` (``triangle analyse --json``) the interval of pc is the object
    ``confidence_interval: {low, high}``.

    Examples:
        Example 2 of González-Corbelle et al. (2020): 36 of 98 judges right, test of
        similarity at beta = 0.01 against pd = 30%:

        >>> r = analyse(36, 98, test="similarity", beta=0.01, pd=0.3)
        >>> stat, p = r
        >>> stat, round(r.pd_upper_normal, 3), r.significant
        (36, 0.221, True)
    """

    _aliases: ClassVar[Mapping[str, str]] = {"confidence_interval": "pc_ci"}
    _omit: ClassVar[frozenset[str]] = frozenset({"ci_low", "ci_high"})

    test: str
    correct: int
    n: int
    alpha: float
    beta: float
    pd0: float | None
    statistic: int
    pvalue: float
    """p-value of the test performed (difference: upper tail at 1/3; similarity: lower tail)."""
    pvalue_difference: float
    pvalue_similarity: float | None
    pc: float
    pd: float
    d_prime: float
    confidence_level: float
    ci_low: float
    """Two-sided Clopper-Pearson interval of pc: lower limit, not clipped at the guessing level
    1/3 (sensR's ``discrim`` prints it clipped; ``pd_ci`` and ``d_prime_ci`` are clipped at 0 in
    both)."""
    ci_high: float
    """Two-sided Clopper-Pearson interval of pc: upper limit."""
    pd_ci: ConfidenceInterval
    d_prime_ci: ConfidenceInterval
    pd_lower: float
    """Exact one-sided lower 100(1-alpha)% limit of pd."""
    pd_lower_normal: float
    """González-Corbelle et al.'s (2020) normal-approximation lower limit (sec. 4.2.1), clipped to
    [0, 1]."""
    pd_upper: float
    """Exact one-sided upper 100(1-beta)% limit of pd."""
    pd_upper_normal: float
    """González-Corbelle et al.'s (2020) normal-approximation upper limit (sec. 4.2.2), clipped to
    [0, 1]."""
    min_correct: int | None
    max_correct: int | None
    significant: bool
    """Difference test: difference shown. Similarity test: similarity shown."""
    evidence: str | None
    conclusion: str
    by_order: DataFrame | None = field(default=None, compare=False)  # `pd` is a field here

    @property
    def pc_ci(self) -> ConfidenceInterval:
        """The two-sided Clopper-Pearson interval of pc (same as ``confidence_interval()``)."""
        return self.confidence_interval()

    def to_dict(self) -> dict[str, Any]:
        """The derived dictionary in the documented ``triangle analyse --json`` layout: the
        interval of pc as ``confidence_interval`` where ``ci_low``/``ci_high`` stand, and no
        ``by_order`` when there is no breakdown."""
        derived = super().to_dict()
        out: dict[str, Any] = {}
        for key, value in derived.items():
            if key == "pd_ci":  # the field after ci_low/ci_high
                out["confidence_interval"] = derived["confidence_interval"]
            if key != "confidence_interval" and not (key == "by_order" and value is None):
                out[key] = value
        return out


def _checked(
    correct: int, n: int, test: str, alpha: float, beta: float, pd: float | None,
    confidence_level: float,
) -> tuple[int, int, TestType, float, float, float | None, float]:
    """The arguments of :func:`analyse`, validated (an :class:`InputError` names the bad one)."""
    n = check_n(n, "n (number of answers)")
    correct = check_correct(correct, n)
    test = check_test(test)
    alpha = check_probability("alpha", alpha)
    beta = check_probability("beta", beta)
    confidence_level = check_probability("confidence level", confidence_level)
    if pd is not None:
        pd = check_probability("pd", pd)
    elif test == "similarity":
        raise InputError("a test of similarity needs pd, the largest tolerable proportion of "
                         "judges perceiving a difference (e.g. 0.3)")
    return correct, n, test, alpha, beta, pd, confidence_level


def analyse(
    correct: int,
    n: int,
    *,
    test: TestType = "difference",
    alpha: float = 0.05,
    beta: float = 0.05,
    pd: float | None = None,
    confidence_level: float = 0.95,
    by_order: pd.DataFrame | None = None,
) -> TriangleResult:
    """Analyse ``correct`` right answers out of ``n`` triangle trials (see module docstring).

    ``pd`` (the largest tolerable proportion of discriminators, ``pd0``) is required for a test
    of similarity; for a test of difference it is optional and only adds the similarity p-value.

    Parameters
    ----------
    correct, n, test, alpha, beta, pd, confidence_level, by_order : int, int, ...
        ``correct`` answers out of ``n`` trials; the rest as in :func:`analyse_responses`.
    Returns
    -------
    TriangleResult

    Examples
    --------
    24 judges, 13 right: the critical value of Table 2 of González-Corbelle et al. (2020),
    so the difference is shown at alpha = 0.05:

    >>> r = analyse(13, 24)
    >>> (r.significant, round(r.pvalue, 4), r.min_correct)
    (True, 0.0284, 13)
    """
    correct, n, test, alpha, beta, pd, confidence_level = _checked(
        correct, n, test, alpha, beta, pd, confidence_level
    )
    p_diff = float(stats.binom.sf(correct - 1, n, P_GUESS))
    p_sim = None if pd is None else float(stats.binom.cdf(correct, n, pc_from_pd(pd)))
    pc = correct / n
    lo, hi = clopper_pearson(correct, n, confidence_level)
    pc_lower = clopper_pearson(correct, n, 1 - alpha, "lower")[0]
    pc_upper = clopper_pearson(correct, n, 1 - beta, "upper")[1]
    dp = np.asarray(dprime_from_pc(np.array([pc, lo, hi])))

    if test == "difference":
        pvalue, risk = p_diff, alpha
    else:
        assert p_sim is not None
        pvalue, risk = p_sim, beta
    significant = bool(pvalue <= risk)
    fields: dict[str, Any] = dict(
        test=test,
        correct=correct,
        n=n,
        alpha=alpha,
        beta=beta,
        pd0=pd,
        statistic=correct,
        pvalue=pvalue,
        pvalue_difference=p_diff,
        pvalue_similarity=p_sim,
        pc=pc,
        pd=float(pd_from_pc(pc)),
        d_prime=float(dp[0]),
        confidence_level=confidence_level,
        ci_low=lo,
        ci_high=hi,
        pd_ci=ConfidenceInterval(float(pd_from_pc(lo)), float(pd_from_pc(hi))),
        d_prime_ci=ConfidenceInterval(float(dp[1]), float(dp[2])),
        pd_lower=float(pd_from_pc(pc_lower)),
        pd_lower_normal=float(np.clip(pd_lower_normal(correct, n, alpha), 0.0, 1.0)),
        pd_upper=float(pd_from_pc(pc_upper)),
        pd_upper_normal=float(np.clip(pd_upper_normal(correct, n, beta), 0.0, 1.0)),
        min_correct=min_correct(n, alpha),
        max_correct=None if pd is None else max_correct(n, beta, pd),
        significant=significant,
        evidence=evidence_strength(pvalue) if significant else None,
    )
    fields["conclusion"] = conclusion_text(fields)
    return TriangleResult(**fields, by_order=by_order)


_TRUE = {"1", "1.0", "true", "yes", "y", "t"}
_FALSE = {"0", "0.0", "false", "no", "n", "f", ""}


def _as_binary(df: pd.DataFrame, column: str, file: str | Path | None, what: str) -> np.ndarray:
    vals = df[column].astype(str).str.strip().str.lower()
    ok = vals.isin(_TRUE | (_FALSE - {""}))
    if not ok.all():
        pos = int(np.flatnonzero(~ok.to_numpy())[0])
        shown = df[column].iloc[pos]
        shown = "an empty cell" if str(shown).strip() == "" else repr(shown)
        raise InputError(f"{shown} is not {what}", file=file, row=row_of(df, pos), column=column)
    return vals.isin(_TRUE).to_numpy().astype(np.int64)


def responses_to_correct(
    df: pd.DataFrame, *, file: str | Path | None = None, test: TestType = "difference"
) -> pd.DataFrame:
    """Normalise a response table to one row per answer with a 0/1 ``correct`` column.

    Accepts (contract 4) a table with a 0/1 ``correct`` column, or tidy ratings ``rater, item,
    system, criterion, score`` whose rows with ``criterion == "odd_one_out"`` carry ``score`` 1
    (correct) or 0; rows of other criteria are ignored. Rows marked ``practice`` (true/1/yes)
    are dropped. For a test of similarity each judge (``judge`` or ``rater`` column) may answer
    only once (González-Corbelle et al. 2020, sec. 4.1 step 3); a repeated judge is an error
    naming both rows.

    Examples:
        >>> df = pd.DataFrame({"judge": ["j1", "j2", "j3"], "correct": [1, 0, 1]})
        >>> responses_to_correct(df)["correct"].tolist()
        [1, 0, 1]
    """
    df = df.copy()
    if ROW not in df.columns:
        df[ROW] = np.arange(2, len(df) + 2)
    if "practice" in df.columns:
        df = df[_as_binary(df, "practice", file, "true/false (practice)") == 0]
    if "correct" in df.columns:
        df = df.assign(correct=_as_binary(df, "correct", file, "0 or 1 (correct)"))
    elif "criterion" in df.columns and "score" in df.columns:
        df = df[df["criterion"].astype(str).str.strip() == CRITERION]
        if df.empty:
            raise InputError(
                f"no ratings with criterion '{CRITERION}' (triangle answers) found",
                file=file,
                column="criterion",
            )
        df = df.assign(correct=_as_binary(df, "score", file, "0 or 1 (odd_one_out score)"))
    else:
        missing = "correct" if "criterion" not in df.columns else "score"
        found = ", ".join(c for c in df.columns if c != ROW) or "none"
        raise InputError(
            f"expected a 0/1 'correct' column or tidy ratings with 'criterion' and 'score' "
            f"(missing '{missing}'; found: {found})",
            file=file,
            row=header_row(file),
        )
    if df.empty:
        raise InputError("no triangle answers left after dropping practice trials", file=file)
    if test == "similarity":
        judge_col = next((c for c in ("judge", "rater") if c in df.columns), None)
        if judge_col is not None:
            dup = df.duplicated(subset=[judge_col], keep=False).to_numpy()
            if dup.any():
                idx = np.flatnonzero(dup)
                who = df[judge_col].iloc[idx[0]]
                rows = [row_of(df, i) for i in idx if df[judge_col].iloc[i] == who][:5]
                raise InputError(
                    f"judge {who!r} answered more than once (rows {', '.join(map(str, rows))}); "
                    "repeated evaluations are not allowed in a test of similarity",
                    file=file,
                    row=rows[1],
                    column=judge_col,
                )
    return df


def analyse_responses(
    df: pd.DataFrame,
    *,
    test: TestType = "difference",
    alpha: float = 0.05,
    beta: float = 0.05,
    pd: float | None = None,
    confidence_level: float = 0.95,
    file: str | Path | None = None,
) -> TriangleResult:
    """Analyse a response table (see :func:`responses_to_correct` for accepted formats).

    When an ``order`` column is present (the questionnaire's "ABB" etc.) the result carries a
    ``by_order`` table of answers and correct answers per triad order.

    Parameters
    ----------
    df : DataFrame
        One row per answer (formats of :func:`responses_to_correct`).
    test : {"difference", "similarity"}, default "difference"
        Test of difference, or of similarity (needs ``pd``).
    alpha, beta : float, default 0.05
        Risks of a type I and of a type II error.
    pd : float, optional
        Largest tolerable proportion of discriminators ``pd0``.
    confidence_level : float, default 0.95
        Level of the Clopper-Pearson interval.
    file : str or Path, optional
        Name of the source of ``df`` in error messages.

    Returns
    -------
    TriangleResult
        Number correct (``statistic``), p-value, interval, critical values and ``by_order``.

    Examples
    --------
    >>> df = pd.DataFrame({"judge": [f"j{i}" for i in range(24)],
    ...                    "correct": [1] * 13 + [0] * 11})
    >>> analyse_responses(df).statistic
    13
    """
    test = check_test(test)
    clean = responses_to_correct(df, file=file, test=test)
    correct = int(clean["correct"].sum())
    n = len(clean)
    by_order = None
    if "order" in clean.columns:
        by_order = (
            clean.groupby(clean["order"].astype(str))["correct"]
            .agg(n="size", correct="sum")
            .reset_index()
        )
        by_order["pc"] = by_order["correct"] / by_order["n"]
    return analyse(
        correct,
        n,
        test=test,
        alpha=alpha,
        beta=beta,
        pd=pd,
        confidence_level=confidence_level,
        by_order=by_order,
    )
