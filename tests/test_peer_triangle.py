"""The triangle test checked against values computed by the R package sensR itself.

Provenance: sensR 1.5.3 under R 4.4.0 (2024-04-24), as recorded by the sensPy project's golden
file ``tests/fixtures/golden_sensr.json`` (aigorahub/sensR, generated 2025-12-16 by
``tests/validate_against_sensR.R``; sensPy's ``tests/test_sensr_validation.py`` asserts its
own port against it): ``psyfun`` / ``psyinv`` for the triangle protocol (4 decimals),
``rescale`` for the triangle protocol, and ``discrim(correct, 100, method = "triangle")`` for
80, 60 and 40 correct: estimates, exact p-value and the 95 % "exact" (Clopper-Pearson)
intervals of pc, pd and d' (Christensen & Brockhoff's sensR; Ennis 1993 for the triangle
psychometric function).

Documented difference (docs/triangle.md, "What is computed, exactly"): sensR's interval of pc
never goes below the guessing probability 1/3 (40 of 100: [0.3333, 0.5028]); nlgeval's
``ci_low``/``ci_high`` is the plain Clopper-Pearson interval of the observed proportion
([0.3033, 0.5028]). The pd and d' intervals, clipped at 0, are the same in both.
"""

from __future__ import annotations

import numpy as np
import pytest

from nlgeval.triangle import (
    analyse,
    dprime_from_pc,
    pc_from_dprime,
    pc_from_pd,
    pd_from_pc,
    pvalue_difference,
)

PSYFUN_D = [0, 0.5, 1, 1.5, 2, 2.5, 3]
PSYFUN_PC = [0.3333, 0.3558, 0.418, 0.5065, 0.6048, 0.6993, 0.7814]
# sensR's psyinv inputs print as 0.3833, ...: they are 1/3 + 0.05, 1/3 + 0.15, ...
PSYINV_PC = [1 / 3 + 0.05 + 0.1 * k for k in range(6)]
PSYINV_D = [0.7551, 1.3779, 1.8912, 2.4114, 3.0129, 3.8408]


def test_psyfun_triangle_matches_sensr() -> None:
    got = np.array([float(pc_from_dprime(d)) for d in PSYFUN_D])
    np.testing.assert_allclose(got, PSYFUN_PC, atol=5e-5)


def test_psyinv_triangle_matches_sensr() -> None:
    # sensR inverts by root finding; its 4th decimal can differ by one unit (2.41145...)
    got = np.array([float(dprime_from_pc(pc)) for pc in PSYINV_PC])
    np.testing.assert_allclose(got, PSYINV_D, atol=1.5e-4)


@pytest.mark.parametrize(("given", "value", "pc", "pd", "d_prime"), [
    ("pc", 0.6, 0.6, 0.4, 1.9756),
    ("pc", 0.8, 0.8, 0.7, 3.1286),
    ("pd", 0.5, 0.6667, 0.5, 2.3214),
    ("d_prime", 1.5, 0.5065, 0.2597, 1.5),
])
def test_rescale_triangle_matches_sensr(given: str, value: float, pc: float, pd: float,
                                        d_prime: float) -> None:
    if given == "pc":
        got_pc = value
    elif given == "pd":
        got_pc = float(pc_from_pd(value))
    else:
        got_pc = float(pc_from_dprime(value))
    assert round(got_pc, 4) == pc
    assert round(float(pd_from_pc(got_pc)), 4) == pd
    assert round(float(dprime_from_pc(got_pc)), 4) == d_prime


# discrim(correct, 100, method = "triangle"): estimates, exact p, 95 % intervals
DISCRIM = {
    80: {"pc": 0.8, "pd": 0.7, "d": 3.1286, "p": 0.0, "pc_ci": (0.7082, 0.8733),
         "pd_ci": (0.5622, 0.81), "d_ci": (2.5498, 3.7386)},
    60: {"pc": 0.6, "pd": 0.4, "d": 1.9756, "p": 4.324e-08, "pc_ci": (0.4972, 0.6967),
         "pd_ci": (0.2458, 0.5451), "d_ci": (1.4516, 2.4853)},
    40: {"pc": 0.4, "pd": 0.1, "d": 0.8791, "p": 0.0966, "pc_ci": (0.3333, 0.5028),
         "pd_ci": (0.0, 0.2542), "d_ci": (0.0, 1.4809)},
}


@pytest.mark.parametrize("correct", sorted(DISCRIM))
def test_discrim_triangle_matches_sensr(correct: int) -> None:
    ref = DISCRIM[correct]
    r = analyse(correct, 100, test="difference", confidence_level=0.95)
    assert r.pc == pytest.approx(ref["pc"], abs=1e-12)
    assert r.pd == pytest.approx(ref["pd"], abs=1e-12)
    assert round(r.d_prime, 4) == ref["d"]
    # sensR prints p-values to 4 significant digits (or 0 below its display limit)
    assert r.pvalue == pytest.approx(ref["p"], rel=1e-3, abs=5e-5)
    assert r.pvalue == pvalue_difference(correct, 100)
    assert (round(r.pd_ci.low, 4), round(r.pd_ci.high, 4)) == ref["pd_ci"]
    # d' limits invert pc(d'); sensR's root finder stops near 1e-4 (80 correct: it prints
    # 2.5498 where pc(2.549745) already equals the Clopper-Pearson limit to 1e-16)
    np.testing.assert_allclose([r.d_prime_ci.low, r.d_prime_ci.high], ref["d_ci"], atol=1.5e-4)
    assert round(r.ci_high, 4) == ref["pc_ci"][1]
    # sensR's lower limit of pc is never below 1/3; nlgeval's is the plain Clopper-Pearson one
    assert round(max(r.ci_low, 1 / 3), 4) == ref["pc_ci"][0]


def test_pc_interval_below_chance_is_documented_not_clipped() -> None:
    r = analyse(40, 100)
    assert round(r.ci_low, 4) == 0.3033  # Clopper-Pearson, below the guessing level
    assert r.pd_ci.low == 0.0 and r.d_prime_ci.low == 0.0
