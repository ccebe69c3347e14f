"""``mode = "bws"``: best-worst scaling (Louviere et al. 2015; Kiritchenko & Mohammad 2017).

A trial shows a tuple of outputs of one item (4 by default) and the evaluator picks the best
and the worst. The tuples come from :func:`nlgeval.human.bws_design.bws_output_tuples`: per
item a balanced incomplete block design over the systems where one exists, else the
Kiritchenko & Mohammad procedure, so every output is in the same number of tuples
(``appearances``). Each tuple is judged by ``raters`` evaluators (dealt out in turn, so the
copies of a tuple go to different evaluators), in a seeded random order per evaluator.

The ``[bws]`` table: ``tuple_size`` (4), ``appearances`` (tuples per output; default: the
smallest count that fills the tuples), ``raters`` (evaluators per tuple, 1), ``question``
and ``criterion`` (the name of the scores, ``"quality"``).

The export (``nlgeval experiment export``) has one row per output shown in a tuple:
``tuple_id``, ``best`` and ``worst`` (1 for the output picked, else 0) and ``score = best -
worst``. The analysis hook (:meth:`BWS.tidy`, ``export --out FOLDER``'s ``ratings.csv``)
turns it into counting scores per rater and output (Kiritchenko & Mohammad 2017: times best
minus times worst over times shown), the tidy ``rater, item, system, criterion, score``
frame ``nlgeval validate --human`` and ``nlgeval compare`` read; the folder also gets the
choices (``choices.csv``, the layout of :func:`nlgeval.human.bws.read_bws`) and the counting
scores over all raters (``bws_scores.csv``).

Examples
--------
>>> from types import SimpleNamespace
>>> d = {"tuple_id": "w1-1", "sources": ["A", "B", "C", "D"], "items": ["w1"] * 4,
...      "criterion": "quality"}
>>> rows = [SimpleNamespace(criterion="best", response=2.0, details=d, name="1"),
...         SimpleNamespace(criterion="worst", response=4.0, details=d, name="1")]
>>> [(c["system"], c["score"]) for _r, c in BWS().export_rows(rows, {}, {})]
[('A', 0.0), ('B', 1.0), ('C', 0.0), ('D', -1.0)]
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from nlgeval.errors import InputError
from nlgeval.experiment.modes.base import RATING_COLUMNS, Mode

if TYPE_CHECKING:
    from nlgeval.experiment.config_tables import Reader
    from nlgeval.experiment.config_types import CriterionConfig, ExperimentConfig
    from nlgeval.experiment.trials import Materials

CHOICES = ("best", "worst")


@dataclass(frozen=True)
class BWSOptions:
    """The ``[bws]`` table (see the module docstring).

    Examples
    --------
    >>> BWSOptions().tuple_size, BWSOptions().criterion
    (4, 'quality')
    """

    tuple_size: int = 4
    appearances: int | None = None
    raters: int = 1
    question: str = "Which of these texts is the best, and which is the worst?"
    criterion: str = "quality"


def _appearances(opts: BWSOptions, n_systems: int) -> int:
    """``appearances``, or the smallest count that fills tuples of ``tuple_size``."""
    if opts.appearances is not None:
        return opts.appearances
    return next(a for a in range(1, opts.tuple_size + 1) if a * n_systems % opts.tuple_size == 0)


class BWS(Mode):
    """The best-worst scaling mode.

    Examples
    --------
    >>> BWS().check_kinds, BWS().latin_square, BWS().export_columns()
    ((), False, ['tuple_id', 'best', 'worst'])
    """

    name = "bws"
    table = "bws"
    template = "modes/bws.html"
    check_kinds: tuple[str, ...] = ()
    criteria = "forbidden"
    latin_square = False

    def parse_options(self, r: Reader, directory: Path) -> BWSOptions:
        r.unknown({"tuple_size", "appearances", "raters", "question", "criterion"})
        d = BWSOptions()
        k = r.int("tuple_size", d.tuple_size, minimum=2)
        return BWSOptions(tuple_size=k or d.tuple_size,
                          appearances=r.int("appearances", None, minimum=1),
                          raters=r.int("raters", d.raters, minimum=1) or d.raters,
                          question=r.str("question", d.question),
                          criterion=r.str("criterion", d.criterion).strip() or d.criterion)

    def check_criteria(self, r: Reader, criteria: tuple[CriterionConfig, ...]) -> None:
        if criteria:
            raise r.fail("criteria", "best-worst scaling has no rating criteria (the evaluator "
                         "picks the best and the worst text); remove [[criteria]]")

    def criterion_names(self, cfg: ExperimentConfig) -> list[str]:
        return list(CHOICES)

    def fingerprint_extra(self, cfg: ExperimentConfig) -> dict[str, Any] | None:
        o = self.options(cfg)
        return {"tuple_size": o.tuple_size, "criterion": o.criterion}

    @staticmethod
    def options(cfg: ExperimentConfig) -> BWSOptions:
        """The study's ``[bws]`` options (the defaults when the table is absent)."""
        o = getattr(cfg, "options", None)
        return o if isinstance(o, BWSOptions) else BWSOptions()

    def allocate(self, cfg: ExperimentConfig, mat: Materials, *, evaluators: int | None,
                 seed: int) -> tuple[pd.DataFrame, str]:
        """The tuples (module docstring) dealt out to ``evaluators`` trial sets."""
        from nlgeval.human.bws_design import bws_output_tuples

        o = self.options(cfg)
        n_ev = self.evaluator_count(cfg, mat, evaluators)
        systems = list(mat.systems)
        if len(systems) < o.tuple_size:
            raise InputError(f"tuples of {o.tuple_size} outputs need at least {o.tuple_size} "
                             f"systems; the study has {len(systems)}", file=cfg.path,
                             key="bws.tuple_size")
        if o.raters > n_ev:
            raise InputError(f"raters = {o.raters} per tuple needs at least as many "
                             f"evaluators (got {n_ev})", file=cfg.path, key="bws.raters")
        by_item = mat.corpus.outputs.groupby("item")["system"].agg(set)
        items = list(cfg.items) or [i for i in sorted(by_item.index)
                                    if set(systems) <= by_item[i]]
        a = _appearances(o, len(systems))
        t = bws_output_tuples(items, systems, seed=seed, tuple_size=o.tuple_size,
                              appearances=a)
        groups = list(t.groupby("tuple_id", sort=False))
        sets: list[list[dict[str, Any]]] = [[] for _ in range(n_ev)]
        for j, (tid, g) in enumerate(groups):
            g = g.sort_values("position")
            trial = {"practice": False, "item": str(g["item"].iloc[0]),
                     "system": str(g["system"].iloc[0]), "system_b": None,
                     "details": {"tuple_id": str(tid), "sources": g["system"].tolist(),
                                 "items": g["item"].tolist(), "criterion": o.criterion}}
            for c in range(o.raters):
                sets[(j * o.raters + c) % n_ev].append(dict(trial))
        rows = []
        for k, trials in enumerate(sets):
            order = np.random.default_rng([seed, k, 2017]).permutation(len(trials))
            rows += [dict(trials[i], evaluator=str(k + 1), position=p)
                     for p, i in enumerate(order, 1)]
        summary = (f"best-worst scaling: {len(groups)} tuples of {o.tuple_size} over "
                   f"{len(items)} item(s) x {len(systems)} systems, each output in {a} "
                   f"tuple(s), each tuple judged by {o.raters} evaluator(s)")
        cols = ["evaluator", "position", "practice", "item", "system", "system_b", "details"]
        return pd.DataFrame(rows, columns=cols), summary

    def parse_form(self, x: Any, errors: dict[str, str]
                   ) -> tuple[dict[str, float], dict[str, bool]]:
        from flask import request

        from nlgeval.experiment.views import BadForm

        out: dict[str, float] = {}
        n = self.options(x.cfg).tuple_size
        for name in CHOICES:
            raw = request.form.get(name, "").strip()
            if raw == "":
                errors[name] = (x._("Please pick the best text.") if name == "best"
                                else x._("Please pick the worst text."))
            elif not (raw.isdigit() and 1 <= int(raw) <= n):
                raise BadForm(f"{raw[:20]!r} is not a text of this tuple")
            else:
                out[name] = float(raw)
        if len(out) == 2 and out["best"] == out["worst"]:
            errors["worst"] = x._("The best and the worst text must be different texts.")
            return {}, {}
        return (out, {}) if len(out) == 2 else ({}, {})

    def export_columns(self) -> list[str]:
        return ["tuple_id", "best", "worst"]

    def export_rows(self, rows: list[Any], rank: dict[str, int],
                    scale: dict[str, tuple[float, float]]) -> list[tuple[Any, dict[str, Any]]]:
        """One row per output shown: its ``best``/``worst`` marks and ``score = best -
        worst`` (the two stored answers of a tuple, best then worst, come together)."""
        del rank, scale  # a choice has no scale and no orientation
        out: list[tuple[Any, dict[str, Any]]] = []
        picks: dict[str, int] = {}
        for r in rows:
            picks[r.criterion] = int(r.response)
            if len(picks) < 2:
                continue
            d = r.details or {}
            for k, (s, it) in enumerate(zip(d["sources"], d["items"], strict=True), 1):
                b, w = int(picks["best"] == k), int(picks["worst"] == k)
                out.append((r, {"item": it, "system": s,
                                "criterion": d.get("criterion", BWSOptions.criterion),
                                "score": float(b - w), "tuple_id": d.get("tuple_id", ""),
                                "best": b, "worst": w}))
            picks = {}
        return out

    def tidy(self, export: pd.DataFrame) -> pd.DataFrame:
        """Counting scores per rater and output (module docstring), with ``n`` (times
        shown) and the rater's ``qc_passed`` when the export has it."""
        from nlgeval.human.bws import bws_ratings

        if export.empty:
            return pd.DataFrame(columns=[*RATING_COLUMNS, "n"])
        out = bws_ratings(self.choices(export), criterion=str(export["criterion"].iloc[0]),
                          per_rater=True)
        if "qc_passed" in export.columns:
            passed = export.groupby(export["rater"].astype(str))["qc_passed"].all()
            out["qc_passed"] = out["rater"].map(passed).astype(bool)
        return out

    def export_tables(self, export: pd.DataFrame, *, logit_prior: float | None = None
                      ) -> dict[str, pd.DataFrame]:
        """The analysis files of ``export --out FOLDER``: ``ratings`` (:meth:`tidy`),
        ``choices`` (:meth:`choices`), ``bws_scores`` (counting over all raters) and, with
        ``logit_prior``, ``bws_logit``: the maxdiff-logit utilities per system (Marley &
        Louviere 2005; a Gaussian prior of that precision, 0 for maximum likelihood)."""
        from nlgeval.human.bws import bws_maxdiff, bws_ratings

        out = {"ratings": self.tidy(export)}
        if export.empty:
            return out
        choices = self.choices(export)
        out["choices"] = choices
        out["bws_scores"] = bws_ratings(choices, criterion=str(export["criterion"].iloc[0]))
        if logit_prior is not None:
            out["bws_logit"] = bws_maxdiff(choices, prior=logit_prior).ranking
        return out

    @staticmethod
    def choices(export: pd.DataFrame) -> pd.DataFrame:
        """The export's best-worst choices in the layout of
        :func:`nlgeval.human.bws.read_bws` (``rater, tuple_id, item, system, best,
        worst``)."""
        from nlgeval.human.bws import COLUMNS

        return export[list(COLUMNS)].astype({"rater": str, "tuple_id": str}).reset_index(
            drop=True)


MODE = BWS()
