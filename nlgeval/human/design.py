"""Latin-square experimental designs (LSED) for human evaluations, as LG-Eval defines them.

Kow & Belz (2012), "LG-Eval: A Toolkit for Creating Online Language Evaluation Experiments",
section 3.1: an n x n Latin square allocates trials, rows = evaluators, columns = scenarios
(inputs), symbols = the n systems (or, for relative judgements, the n system *pairs*); cell
(i, j) = k means evaluator i judges system k's output for scenario j. When there are more
scenarios / evaluators than n, the design is a grid of independently randomised squares
(section 3.4, "repeated Latin squares"), generated afresh for every experiment. Each evaluator's
trial set is then shown in its own random order, after optional practice trials.

No library builds these (pingouin / statsmodels analyse designs, they do not generate them), so
the generator is a few lines of numpy: a cyclic square ``(i + j) mod n`` with random row and
column permutations and a random relabelling of the symbols, all from
``numpy.random.default_rng(seed)``. (This samples the isotopy class of the cyclic square, which
is what LG-Eval's generator does; every square it produces is a valid Latin square.)

Counts that do not fit (scenarios or evaluators not a multiple of n) are refused with an
:class:`~nlgeval.errors.InputError` that proposes the nearest counts that do fit; with
``allow_incomplete=True`` the most balanced design is built instead (the last squares are cut)
and its imbalance is reported by :meth:`LatinSquareDesign.summary`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import combinations
from typing import Any

import numpy as np
import pandas as pd

from nlgeval.errors import InputError
from nlgeval.human.design_layout import (
    _check_counts,
    _left_right,
    _main_trials,
    _names,
    _practice_trials,
    block_layout,
    is_latin_square,
    random_latin_square,
)
from nlgeval.results import Result

__all__ = ["PAIR_SEP", "DesignSummary", "LatinSquareDesign", "block_layout", "is_latin_square",
           "latin_square_design", "random_latin_square"]

PAIR_SEP = " vs "


@dataclass(frozen=True)
class DesignSummary(Result):
    """Counts that prove (or measure the lack of) balance of a design.

    ``evaluator_by_symbol`` / ``scenario_by_symbol``: how often each evaluator / scenario meets
    each symbol (a system, or a pair ``"A vs B"`` for relative designs) in the main trials;
    ``system_appearances``: per evaluator, how often each system appears (in either slot);
    ``left_right``: for relative designs, per pair how often each system was on the left.
    ``imbalance``: max - min of each count table (0 everywhere = perfectly balanced).

    Examples
    --------
    >>> s = latin_square_design(3, 3, 6, seed=1).summary()
    >>> s.balanced, s.raters_per_output
    (True, 2)
    """

    n_symbols: int
    n_squares: int
    evaluator_by_symbol: pd.DataFrame
    scenario_by_symbol: pd.DataFrame
    system_appearances: pd.DataFrame
    left_right: pd.DataFrame | None
    imbalance: dict[str, int]
    balanced: bool
    notes: tuple[str, ...] = field(default=())

    @property
    def raters_per_output(self) -> int:
        """Fewest evaluators judging one output (scenario x symbol); >= 2 allows agreement."""
        return int(self.scenario_by_symbol.to_numpy().min())

    def to_dict(self) -> dict[str, Any]:
        """Counts as records (index reset), so the keys of ``design --json`` stay flat."""
        out: dict[str, Any] = {
            "n_symbols": self.n_symbols,
            "n_squares": self.n_squares,
            "balanced": self.balanced,
            "raters_per_output": self.raters_per_output,
            "imbalance": dict(self.imbalance),
            "evaluator_by_symbol": self.evaluator_by_symbol.reset_index().to_dict("records"),
            "scenario_by_symbol": self.scenario_by_symbol.reset_index().to_dict("records"),
            "system_appearances": self.system_appearances.reset_index().to_dict("records"),
            "notes": list(self.notes),
        }
        if self.left_right is not None:
            out["left_right"] = self.left_right.to_dict("records")
        return out

    def to_text(self) -> str:
        """A printable summary (the tables a reviewer needs to see that the design balances)."""
        parts = [
            f"Latin-square design: {self.n_symbols} symbols, {self.n_squares} square(s); "
            + ("balanced" if self.balanced else "NOT balanced: " + ", ".join(
                f"{k} max-min = {v}" for k, v in self.imbalance.items() if v)),
            f"each output is judged by {self.raters_per_output} evaluator(s)"
            + ("" if self.raters_per_output >= 2 else " (agreement needs at least 2)"),
            "",
            "Trials per evaluator x " + ("pair" if self.left_right is not None else "system") + ":",
            self.evaluator_by_symbol.to_string(),
            "",
            "Trials per scenario x " + ("pair" if self.left_right is not None else "system") + ":",
            self.scenario_by_symbol.to_string(),
        ]
        if self.left_right is not None:
            parts += ["", "Left/right order per pair:", self.left_right.to_string(index=False)]
        parts += [f"note: {n}" for n in self.notes]
        return "\n".join(parts)

    def __str__(self) -> str:
        return self.to_text()


@dataclass(frozen=True)
class LatinSquareDesign(Result):
    """A Latin-square experimental design.

    ``trials``: one row per trial, columns ``evaluator, position, scenario, system,
    [system_b], practice`` (position is 1-based within the evaluator's session; practice trials
    come first). ``layout``: the LSED array itself (rows = evaluators, columns = scenarios,
    cells = system or pair), before each evaluator's random ordering.

    Examples
    --------
    >>> d = latin_square_design(["A", "B"], 4, 2, seed=1)
    >>> d.layout.shape, d.trials.columns.tolist()
    ((2, 4), ['evaluator', 'position', 'scenario', 'system', 'practice'])
    """

    trials: pd.DataFrame
    layout: pd.DataFrame
    systems: tuple[str, ...]
    scenarios: tuple[str, ...]
    evaluators: tuple[str, ...]
    symbols: tuple[str, ...]
    relative: bool
    seed: int
    n_squares: int
    practice: int
    notes: tuple[str, ...] = field(default=())

    def summary(self) -> DesignSummary:
        """Balance tables of the main (non-practice) trials."""
        main = self.trials[~self.trials["practice"]]
        if self.relative:
            sym = main["system"] + PAIR_SEP + main["system_b"]
            # the symbol is the unordered pair, named in the order of ``self.symbols``
            canon = {}
            for s in self.symbols:
                a, b = s.split(PAIR_SEP)
                canon[a + PAIR_SEP + b] = s
                canon[b + PAIR_SEP + a] = s
            sym = sym.map(canon)
        else:
            sym = main["system"]
        ev = pd.crosstab(main["evaluator"], sym).reindex(
            index=list(self.evaluators), columns=list(self.symbols), fill_value=0
        )
        sc = pd.crosstab(main["scenario"], sym).reindex(
            index=list(self.scenarios), columns=list(self.symbols), fill_value=0
        )
        ev.columns.name = sc.columns.name = "pair" if self.relative else "system"
        if self.relative:
            both = pd.concat(
                [main[["evaluator", "system"]],
                 main[["evaluator", "system_b"]].rename(columns={"system_b": "system"})]
            )
        else:
            both = main[["evaluator", "system"]]
        apps = pd.crosstab(both["evaluator"], both["system"]).reindex(
            index=list(self.evaluators), columns=list(self.systems), fill_value=0
        )
        imbalance = {
            "evaluator_by_symbol": int(ev.to_numpy().max() - ev.to_numpy().min()),
            "scenario_by_symbol": int(sc.to_numpy().max() - sc.to_numpy().min()),
            "system_appearances": int(apps.to_numpy().max() - apps.to_numpy().min()),
        }
        lr = _left_right_table(main, self.symbols) if self.relative else None
        if lr is not None:
            imbalance["left_right"] = int((lr["left_first"] - lr["left_second"]).abs().max())
        balanced = all(v == 0 for k, v in imbalance.items() if k != "left_right") and (
            lr is None or imbalance["left_right"] <= 1
        )
        return DesignSummary(
            n_symbols=len(self.symbols),
            n_squares=self.n_squares,
            evaluator_by_symbol=ev,
            scenario_by_symbol=sc,
            system_appearances=apps,
            left_right=lr,
            imbalance=imbalance,
            balanced=balanced,
            notes=self.notes,
        )

    def to_dict(self) -> dict[str, Any]:
        """The design with its balance summary (what ``design latin-square --json`` prints)."""
        return {
            "trials": self.trials.to_dict("records"),
            "systems": list(self.systems),
            "scenarios": list(self.scenarios),
            "evaluators": list(self.evaluators),
            "relative": self.relative,
            "seed": self.seed,
            "n_squares": self.n_squares,
            "practice": self.practice,
            "summary": self.summary().to_dict(),
            "notes": list(self.notes),
        }


def _left_right_table(main: pd.DataFrame, symbols: Sequence[str]) -> pd.DataFrame:
    """Per pair ``"A vs B"``: how often A (``left_first``) and B (``left_second``) was shown on
    the left in the main trials of a relative design."""
    rows = []
    for s in symbols:
        a, b = s.split(PAIR_SEP)
        n_a = int(((main["system"] == a) & (main["system_b"] == b)).sum())
        n_b = int(((main["system"] == b) & (main["system_b"] == a)).sum())
        rows.append({"pair": s, "left_first": n_a, "left_second": n_b})
    return pd.DataFrame(rows)


def latin_square_design(
    systems: Sequence[str] | int,
    scenarios: Sequence[str] | int,
    evaluators: int | Sequence[str],
    *,
    seed: int,
    relative: bool = False,
    practice: int = 0,
    practice_scenarios: Sequence[str] | None = None,
    allow_incomplete: bool = False,
    scenarios_per_evaluator: int | None = None,
    raters_per_output: int | None = None,
) -> LatinSquareDesign:
    """Build a randomised Latin-square experimental design (Kow & Belz 2012, section 3).

    Parameters
    ----------
    systems:
        System names, or their number (named ``S1..Sn``).
    scenarios:
        Scenario (input/item) ids, or their number (named ``1..m``). Must be a multiple of the
        number of symbols n (systems, or system pairs when ``relative``).
    evaluators:
        Number of evaluators (named ``1..e``) or their ids. Must be a multiple of n.
    seed:
        Seed for :func:`numpy.random.default_rng`; the same seed gives the same design.
    relative:
        Relative (pairwise) judgements: the square's symbols are the n(n-1)/2 unordered system
        pairs; the left/right order is balanced per pair (and within each evaluator as far as
        the counts allow). ``trials`` then has a ``system_b`` column (``system`` is on the left).
    practice:
        Number of practice trials put at the start of every evaluator's session
        (``practice=True``); they are not part of the square.
    practice_scenarios:
        Scenario ids for practice trials (cycled if fewer than ``practice``); default
        ``practice-1..practice-p``. Their systems are drawn at random, cycling through all.
    allow_incomplete:
        Build the most balanced design when the counts do not fit (cut squares), instead of
        raising; the imbalance is reported by :meth:`LatinSquareDesign.summary`.
    scenarios_per_evaluator:
        Each evaluator judges this many scenarios (a multiple of n dividing the number of
        scenarios) instead of all of them: the scenarios are split into blocks of this size,
        and each block gets its own groups of n evaluators, each group a row of Latin squares
        over the block (see :func:`block_layout`).
    raters_per_output:
        How many evaluators judge each output (scenario x system, or scenario x pair), so that
        agreement can be computed (k >= 2). The number of evaluators must then be
        blocks x k x n (the error says which number); default: whatever the evaluators give.

    Returns
    -------
    LatinSquareDesign
        The trials (one row per trial) and the Latin-square layout itself.

    Examples
    --------
    >>> d = latin_square_design(3, 6, 12, seed=1, scenarios_per_evaluator=3)
    >>> d.trials.groupby("evaluator").size().unique().tolist()  # 3 trials each
    [3]
    >>> d.trials.groupby(["scenario", "system"]).size().unique().tolist()  # 2 raters each
    [2]
    """
    names = _design_names(systems, scenarios, evaluators, relative=relative, practice=practice)
    n = len(names.symbols)
    notes = _check_counts(len(names.scenarios), len(names.evaluators), n,
                          "system pairs" if relative else "systems",
                          scenarios_per_evaluator=scenarios_per_evaluator,
                          raters_per_output=raters_per_output,
                          allow_incomplete=allow_incomplete)
    rng = np.random.default_rng(seed)
    grid, n_squares, scen_order, left = _allocate(names, scenarios_per_evaluator, rng)
    trials = _session_trials(names, grid, left, scen_order, practice_scenarios, rng)
    return LatinSquareDesign(
        trials=trials, layout=_layout_frame(grid, names, scen_order),
        systems=tuple(names.systems), scenarios=tuple(names.scenarios),
        evaluators=tuple(names.evaluators), symbols=tuple(names.symbols), relative=relative,
        seed=int(seed), n_squares=n_squares, practice=names.practice, notes=tuple(notes))


@dataclass(frozen=True)
class _DesignNames:
    """The validated names of a design: systems, scenarios, evaluators, the square's symbols
    (systems, or ``"A vs B"`` pairs when relative) with their pairs, and the practice count."""

    systems: list[str]
    scenarios: list[str]
    evaluators: list[str]
    pairs: list[tuple[str, str]]
    symbols: list[str]
    practice: int
    relative: bool


def _design_names(systems: Sequence[str] | int, scenarios: Sequence[str] | int,
                  evaluators: int | Sequence[str], *, relative: bool,
                  practice: int) -> _DesignNames:
    """Names of systems, scenarios, evaluators and symbols, checked (InputError otherwise)."""
    sys_names = _names(systems, "systems", "S")
    if len(sys_names) < 2:
        raise InputError("a design needs at least 2 systems to compare")
    scen_names = _names(scenarios, "scenarios", "")
    ev_names = _names(evaluators, "evaluators", "")
    if isinstance(practice, bool) or int(practice) < 0:
        raise InputError(f"practice must be a non-negative number of trials, got {practice!r}")
    pairs = list(combinations(sys_names, 2)) if relative else []
    symbols = [a + PAIR_SEP + b for a, b in pairs] if relative else list(sys_names)
    return _DesignNames(sys_names, scen_names, ev_names, pairs, symbols, int(practice),
                        relative)


def _allocate(names: _DesignNames, scenarios_per_evaluator: int | None,
              rng: np.random.Generator) -> tuple[np.ndarray, int, list[str], np.ndarray]:
    """The randomised squares (``grid``: evaluator x scenario column -> symbol, -1 = no trial)
    and their number, the scenario id of each column, and (relative) whether the first system
    of each cell's pair is shown on the left."""
    n, n_s = len(names.symbols), len(names.scenarios)
    grid, n_squares = block_layout(n, n_s, len(names.evaluators),
                                   scenarios_per_evaluator or n_s, rng)
    # random allocation of scenario ids to the square columns
    scen_order = [names.scenarios[i] for i in rng.permutation(n_s)]
    left = _left_right(grid, n, rng) if names.relative else np.zeros_like(grid, dtype=bool)
    return grid, n_squares, scen_order, left


def _layout_frame(grid: np.ndarray, names: _DesignNames, scen_order: list[str]) -> pd.DataFrame:
    """The LSED array as a frame: rows = evaluators, columns = scenarios, cells = symbols
    (empty where an incomplete design leaves a cell out)."""
    symbols = np.asarray(names.symbols, dtype=object)
    cells = np.where(grid >= 0, symbols[np.maximum(grid, 0)], "")
    layout = pd.DataFrame(cells, index=names.evaluators, columns=scen_order)
    layout.index.name, layout.columns.name = "evaluator", "scenario"
    return layout


def _session_trials(names: _DesignNames, grid: np.ndarray, left: np.ndarray,
                    scen_order: list[str], practice_scenarios: Sequence[str] | None,
                    rng: np.random.Generator) -> pd.DataFrame:
    """Every evaluator's session: practice trials first, then the main trials in their random
    order; rows sorted by evaluator (in the given order) and position."""
    frames = [_main_trials(grid, left, names.evaluators, scen_order, names.symbols,
                           names.pairs, names.practice, rng)]
    if names.practice:  # drawn after the main trials (the order of the random draws)
        frames.insert(0, _practice_trials(names.evaluators, names.scenarios, practice_scenarios,
                                          names.practice, names.symbols, names.pairs, rng))
    trials = pd.concat(frames, ignore_index=True)
    rank = {e: i for i, e in enumerate(names.evaluators)}
    trials = trials.sort_values(["evaluator", "position"], key=lambda s: s.map(rank)
                                if s.name == "evaluator" else s,
                                kind="stable").reset_index(drop=True)
    pair_col = ["system_b"] if names.relative else []
    trials = trials[["evaluator", "position", "scenario", "system", *pair_col, "practice"]]
    trials["position"] = trials["position"].astype(int)
    trials["practice"] = trials["practice"].astype(bool)
    return trials
