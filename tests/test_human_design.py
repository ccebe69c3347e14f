"""Latin-square designs (Kow & Belz 2012, LG-Eval section 3).

References: the definition of a Latin square (each symbol once per row and column), checked
directly on the layout; balance counts recomputed here with plain Python ``collections.Counter``
(independent of the pandas crosstabs the summary uses).
"""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from nlgeval.errors import InputError
from nlgeval.human.design import (
    PAIR_SEP,
    is_latin_square,
    latin_square_design,
    random_latin_square,
)


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5, 7])
def test_random_square_is_latin(n: int) -> None:
    rng = np.random.default_rng(n)
    for _ in range(20):
        sq = random_latin_square(n, rng)
        assert is_latin_square(sq)


def test_is_latin_square_can_fail() -> None:
    assert not is_latin_square(np.array([[0, 1], [0, 1]]))
    assert not is_latin_square(np.array([[0, 1, 2], [1, 2, 0]]))


def test_paper_example_is_latin() -> None:
    # the 4 x 4 example printed in LG-Eval section 3.1
    sq = np.array([[3, 1, 2, 4], [4, 2, 1, 3], [1, 4, 3, 2], [2, 3, 4, 1]])
    assert is_latin_square(sq)


@pytest.mark.parametrize("k_sys,k_scen,k_eval", [(4, 8, 8), (3, 3, 6), (5, 10, 5), (2, 6, 4)])
def test_absolute_design_balanced(k_sys: int, k_scen: int, k_eval: int) -> None:
    d = latin_square_design(k_sys, k_scen, k_eval, seed=7)
    t = d.trials
    assert list(t.columns) == ["evaluator", "position", "scenario", "system", "practice"]
    assert len(t) == k_scen * k_eval
    # each evaluator sees each scenario exactly once
    for _ev, g in t.groupby("evaluator"):
        assert sorted(g["scenario"]) == sorted(d.scenarios)
        assert sorted(g["position"]) == list(range(1, k_scen + 1))
        c = Counter(g["system"])
        assert set(c.values()) == {k_scen // k_sys} and len(c) == k_sys
    for _sc, g in t.groupby("scenario"):
        c = Counter(g["system"])
        assert set(c.values()) == {k_eval // k_sys} and len(c) == k_sys
    # every n x n block of the layout is a Latin square
    n = k_sys
    lay = d.layout.to_numpy()
    for a in range(0, k_eval, n):
        for b in range(0, k_scen, n):
            assert is_latin_square(lay[a:a + n, b:b + n])
    s = d.summary()
    assert s.balanced and all(v == 0 for v in s.imbalance.values())
    assert "balanced" in s.to_text()
    # all strings, as the contract says
    for col in ("evaluator", "scenario", "system"):
        assert all(isinstance(v, str) for v in t[col])


def test_seed_reproducible_and_fresh() -> None:
    a = latin_square_design(4, 8, 8, seed=1).trials
    b = latin_square_design(4, 8, 8, seed=1).trials
    c = latin_square_design(4, 8, 8, seed=2).trials
    assert a.equals(b)
    assert not a.equals(c)


def test_order_is_random_per_evaluator() -> None:
    d = latin_square_design(4, 16, 8, seed=3)
    orders = {tuple(g["scenario"]) for _, g in d.trials.groupby("evaluator")}
    assert len(orders) == 8  # all different orders (probability of a clash is negligible)


def test_relative_design_balanced_left_right() -> None:
    systems = ["a", "b", "c", "d"]  # 6 pairs
    d = latin_square_design(systems, 12, 12, seed=5, relative=True)
    t = d.trials
    assert "system_b" in t.columns
    assert (t["system"] != t["system_b"]).all()
    pair = [PAIR_SEP.join(sorted(p)) for p in zip(t["system"], t["system_b"], strict=True)]
    for _ev, g in t.assign(pair=pair).groupby("evaluator"):
        assert set(Counter(g["pair"]).values()) == {2}
    # left/right: every ordered pair appears equally often overall
    ordered = Counter(zip(t["system"], t["system_b"], strict=True))
    for a in systems:
        for b in systems:
            if a < b:
                assert abs(ordered[(a, b)] - ordered[(b, a)]) <= 1
                assert ordered[(a, b)] + ordered[(b, a)] == 24
    # within an evaluator a pair seen twice is shown once each way
    for _ev, g in t.groupby("evaluator"):
        c = Counter(zip(g["system"], g["system_b"], strict=True))
        for (a, b), k in c.items():
            assert k == 1 and c[(b, a)] == 1
    s = d.summary()
    assert s.balanced and s.left_right is not None


def test_practice_trials_first() -> None:
    d = latin_square_design(3, 6, 3, seed=1, practice=2, practice_scenarios=["p1", "p2", "p3"])
    t = d.trials
    for _ev, g in t.groupby("evaluator"):
        g = g.sort_values("position")
        assert list(g["practice"]) == [True, True] + [False] * 6
        assert set(g["scenario"].iloc[:2]) <= {"p1", "p2", "p3"}
        assert g["scenario"].iloc[:2].nunique() == 2
    assert d.summary().balanced  # practice trials are not counted


def test_practice_must_not_reuse_main_scenarios() -> None:
    with pytest.raises(InputError, match="practice scenarios"):
        latin_square_design(["a", "b"], ["x", "y"], 2, seed=1, practice=1,
                            practice_scenarios=["x"])


def test_counts_that_do_not_fit_propose_nearest() -> None:
    with pytest.raises(InputError) as exc:
        latin_square_design(4, 10, 8, seed=1)
    msg = str(exc.value)
    assert "10 scenarios" in msg and "8 or 12" in msg
    with pytest.raises(InputError, match="6 evaluators.*4 or 8"):
        latin_square_design(4, 8, 6, seed=1)
    # relative: 3 systems -> 3 pairs; 5 systems -> 10 pairs
    with pytest.raises(InputError, match="10 system pairs"):
        latin_square_design(5, 12, 10, seed=1, relative=True)


def test_allow_incomplete_reports_imbalance() -> None:
    d = latin_square_design(4, 10, 6, seed=1, allow_incomplete=True)
    s = d.summary()
    assert not s.balanced
    assert s.imbalance["evaluator_by_symbol"] == 1  # as balanced as possible
    assert s.imbalance["scenario_by_symbol"] == 1
    assert d.notes and "incomplete" in d.notes[0]
    # each evaluator still sees each scenario once
    for _ev, g in d.trials.groupby("evaluator"):
        assert g["scenario"].nunique() == 10


@pytest.mark.parametrize("kwargs,match", [
    ({"systems": 1, "scenarios": 2, "evaluators": 1}, "at least 2 systems"),
    ({"systems": ["a", "a"], "scenarios": 2, "evaluators": 2}, "duplicate systems"),
    ({"systems": 2, "scenarios": 0, "evaluators": 2}, "at least 1"),
    ({"systems": 2, "scenarios": 2, "evaluators": 2, "practice": -1}, "practice"),
])
def test_bad_arguments(kwargs: dict, match: str) -> None:
    with pytest.raises(InputError, match=match):
        latin_square_design(seed=1, **kwargs)


def test_names_and_to_dict() -> None:
    d = latin_square_design(["sys A", "sys B"], ["i1", "i2", "i3", "i4"], ["r1", "r2"], seed=0)
    assert set(d.trials["system"]) == {"sys A", "sys B"}
    assert set(d.trials["evaluator"]) == {"r1", "r2"}
    out = d.to_dict()
    assert len(out["trials"]) == 8 and out["summary"]["balanced"]


# Overlapping designs (k raters per output, m scenarios per evaluator): every balance property
# checked exhaustively over small designs with plain Counters.
@pytest.mark.parametrize("relative", [False, True])
@pytest.mark.parametrize("n_sys", [2, 3])
@pytest.mark.parametrize("blocks", [1, 2, 3])
@pytest.mark.parametrize("k", [1, 2, 3])
def test_block_designs_balanced_exhaustively(relative: bool, n_sys: int, blocks: int,
                                             k: int) -> None:
    n = n_sys * (n_sys - 1) // 2 if relative else n_sys
    for per_block_squares in (1, 2):
        m = n * per_block_squares
        n_s, n_e = blocks * m, blocks * k * n
        for seed in range(3):
            d = latin_square_design(n_sys, n_s, n_e, seed=seed, relative=relative,
                                    scenarios_per_evaluator=m, raters_per_output=k)
            t = d.trials
            sym = (t["system"] + "|" + t["system_b"]).map(
                lambda x: PAIR_SEP.join(sorted(x.split("|")))) if relative else t["system"]
            # each evaluator: m distinct scenarios, each symbol m / n times
            for _ev, g in t.groupby("evaluator"):
                assert len(g) == m and g["scenario"].nunique() == m
                assert sorted(g["position"]) == list(range(1, m + 1))
                c = Counter(sym[g.index])
                assert len(c) == n and set(c.values()) == {m // n}
            # each output (scenario, symbol) judged by exactly k distinct evaluators
            outputs = Counter(zip(t["scenario"], sym, strict=True))
            assert len(outputs) == n_s * n and set(outputs.values()) == {k}
            raters = t.groupby([t["scenario"], sym])["evaluator"].nunique()
            assert set(raters) == {k}
            s = d.summary()
            assert s.balanced and s.raters_per_output == k
            if relative:  # left/right per pair differ by at most one
                assert s.imbalance["left_right"] <= 1


def test_block_design_agreement_has_shared_outputs() -> None:
    # with k = 2 every output is shared by a pair of evaluators, so pairwise agreement
    # (Cohen's kappa) is defined for the evaluators of each group pair of a block
    from nlgeval.human.agreement import pairwise_cohen_kappa

    d = latin_square_design(3, 6, 12, seed=2, scenarios_per_evaluator=3, raters_per_output=2)
    t = d.trials.rename(columns={"evaluator": "rater", "scenario": "item"})
    t["score"] = np.random.default_rng(0).integers(1, 6, len(t)).astype(float)
    sharing = Counter()
    for _out, g in t.groupby(["item", "system"]):
        assert g["rater"].nunique() == 2
        sharing[tuple(sorted(g["rater"]))] += 1
    assert sum(sharing.values()) == 18  # 6 scenarios x 3 systems, each shared once
    ck = pairwise_cohen_kappa(t, scale=(1, 5), min_common=1)
    assert len(ck) == len(sharing)


def test_block_design_counts_refused_with_the_count_that_fits() -> None:
    with pytest.raises(InputError, match="use 18"):
        latin_square_design(3, 6, 12, seed=1, scenarios_per_evaluator=3, raters_per_output=3)
    with pytest.raises(InputError, match="possible: 3, 6"):
        latin_square_design(3, 6, 6, seed=1, scenarios_per_evaluator=4)
    with pytest.raises(InputError, match="cannot be combined"):
        latin_square_design(3, 6, 6, seed=1, scenarios_per_evaluator=3, allow_incomplete=True)


def test_raters_per_output_error_names_the_exact_count() -> None:
    # 60 evaluators are a multiple of 2 blocks x 3 systems, yet k = 2 needs exactly 12: the
    # message must not claim "a multiple of 6" (which 60 is) and says what 60 would give
    with pytest.raises(InputError) as err:
        latin_square_design(3, 30, 60, seed=1, scenarios_per_evaluator=15, raters_per_output=2)
    msg = str(err.value)
    assert "multiple of 6" not in msg
    assert "need exactly 12 evaluators; use 12" in msg and "give 10 raters per output" in msg
    # without k the evaluator count only has to be a multiple of blocks x systems
    with pytest.raises(InputError, match="need a multiple of 6 evaluators; use 6"):
        latin_square_design(3, 30, 8, seed=1, scenarios_per_evaluator=15)
    d = latin_square_design(3, 30, 12, seed=1, scenarios_per_evaluator=15, raters_per_output=2)
    assert d.summary().raters_per_output == 2


def test_one_block_is_the_classic_design() -> None:
    # the classic design equals one block with all scenarios: same trials for the same seed
    a = latin_square_design(4, 8, 8, seed=3)
    b = latin_square_design(4, 8, 8, seed=3, scenarios_per_evaluator=8)
    assert a.trials.equals(b.trials) and a.summary().raters_per_output == 2


def test_design_cli_raters_per_output() -> None:
    import json

    from typer.testing import CliRunner

    from nlgeval.cli import app

    res = CliRunner().invoke(app, ["design", "latin-square", "--systems", "3", "--scenarios",
                                   "6", "--evaluators", "12", "--seed", "1",
                                   "--scenarios-per-evaluator", "3", "--raters-per-output",
                                   "2", "--json"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert out["summary"]["raters_per_output"] == 2 and out["summary"]["balanced"]
    assert len(out["trials"]) == 12 * 3
