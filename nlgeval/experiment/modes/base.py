"""The ``Mode`` protocol: everything one kind of trial owns, in one class.

A mode owns its config table (``[triangle]``, ``[mqm]``, ...) and its validation, the trial
allocation it supports (a Latin square over systems or system pairs, Kow & Belz 2012, or its
own design), the form it renders (a template part under ``templates/modes/`` and optional
static scripts), answer parsing and validation, the columns it exports, the attention checks
it supports and the analysis hook that turns its export into nlgeval's tidy
``rater, item, system, criterion, score`` frame (or pairwise judgements). The web app and
``create``/``export`` ask the mode (``get_mode(cfg.mode)``; ``cfg.mode_impl`` in the modules
below this package) instead of testing the mode's name.

Examples
--------
>>> m = Mode()
>>> m.name, m.template, m.check_kinds
('absolute', 'modes/absolute.html', ('repeat', 'degraded'))
>>> m.symbols(3), m.pairwise
(3, False)
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from nlgeval.errors import InputError

if TYPE_CHECKING:
    from nlgeval.experiment.config_tables import Reader
    from nlgeval.experiment.config_types import CriterionConfig, ExperimentConfig
    from nlgeval.experiment.trials import Materials

RATING_COLUMNS = ["rater", "item", "system", "criterion", "score"]


class Mode:
    """One kind of trial (the base behaviour is the absolute mode: one output, rated on each
    criterion's scale; a Latin square over the systems). Subclasses override what differs.

    Examples
    --------
    >>> Mode().export_columns()
    []
    """

    #: the name in ``experiment.toml`` (``mode = "..."``)
    name = "absolute"
    #: the mode's own config table (``[name]``), or None
    table: str | None = None
    #: the template part rendering the answer form (under ``templates/``)
    template = "modes/absolute.html"
    #: static scripts the form needs besides ``app.js`` (under ``static/``)
    scripts: tuple[str, ...] = ()
    #: the attention-check kinds it supports (``[checks]``)
    check_kinds: tuple[str, ...] = ("repeat", "degraded")
    #: trials show two outputs (a Latin square over system pairs)
    pairwise = False
    #: rating criteria: "required", "forbidden" or "optional"
    criteria = "required"
    #: VDS presets must be relative scales (True), absolute ones (False)
    relative_scales = False
    #: ``practice``/``practice_items`` and ``overlap`` apply
    latin_square = True
    #: the page shows the trial's texts above the form (span modes show their own widget)
    shows_texts = True

    # -- configuration -------------------------------------------------------------------

    def parse_options(self, r: Reader, directory: Path) -> Any:
        """The mode's config table (``r`` reads ``[table]``; empty when absent) -> its
        options (None: the mode has none)."""
        r.unknown(set())
        return None

    def check_criteria(self, r: Reader, criteria: tuple[CriterionConfig, ...]) -> None:
        """Refuse criteria the mode cannot use (``r`` reads the top level)."""
        if self.criteria == "required" and not criteria:
            raise r.fail("criteria", "at least one [[criteria]] entry is needed")

    def criterion_names(self, cfg: ExperimentConfig) -> list[str]:
        """The criteria its judgements are stored under."""
        return [c.name for c in cfg.criteria]

    def fingerprint_extra(self, cfg: ExperimentConfig) -> dict[str, Any] | None:
        """What, beyond the criteria, the stored judgements depend on (None: nothing)."""
        return None

    def check_scales(self, cfg: ExperimentConfig) -> dict[str, tuple[float, float]]:
        """The range ``(low, high)`` of each stored criterion the attention checks compare
        (:mod:`nlgeval.experiment.quality` scales answers by it): the criteria's scales."""
        return {c.name: (c.scale_min, c.scale_max) for c in cfg.criteria}

    # -- allocation ----------------------------------------------------------------------

    def symbols(self, n_systems: int) -> int:
        """The Latin square's symbols for ``n_systems`` systems (systems or system pairs)."""
        return n_systems * (n_systems - 1) // 2 if self.pairwise else n_systems

    def evaluator_count(self, cfg: ExperimentConfig, mat: Materials,
                        evaluators: int | None) -> int:
        """How many trial sets: ``overlap`` x the Latin square's symbols, else as configured."""
        n_ev = evaluators or cfg.evaluators
        if cfg.overlap is not None:
            n_sym = self.symbols(len(mat.systems))
            want = cfg.overlap * n_sym
            if n_ev and n_ev != want:
                raise InputError(
                    f"overlap = {cfg.overlap} means {want} evaluators ({cfg.overlap} x "
                    f"{n_sym} {'system pairs' if self.pairwise else 'systems'}: each "
                    f"output judged by {cfg.overlap}), but evaluators = {n_ev}",
                    file=cfg.path, key="overlap")
            n_ev = want
        if not n_ev:
            raise InputError("how many evaluators? set evaluators = N in the config or pass "
                             "--evaluators", file=cfg.path, key="evaluators")
        return n_ev

    def allocate(self, cfg: ExperimentConfig, mat: Materials, *, evaluators: int | None,
                 seed: int) -> tuple[pd.DataFrame, str]:
        """The trial sets (``evaluator, position, practice, item, system, system_b,
        details``) and a printable design summary."""
        from nlgeval.experiment.trials import check_outputs, latin_square_trials

        n_ev = self.evaluator_count(cfg, mat, evaluators)
        trials, summary = latin_square_trials(cfg, mat, evaluators=n_ev, seed=seed)
        check_outputs(mat, trials, cfg)
        return trials, summary

    # -- the form ------------------------------------------------------------------------

    def parse_form(self, x: Any, errors: dict[str, str]
                   ) -> tuple[dict[str, float], dict[str, bool]]:
        """The posted answer (inside a request): scores and VAS confirmations per stored
        criterion; missing answers go to ``errors``, impossible values raise
        :class:`nlgeval.experiment.views.BadForm`."""
        from flask import request

        from nlgeval.experiment.views import parse_criterion

        scores: dict[str, float] = {}
        confirmed: dict[str, bool] = {}
        for i, c in enumerate(x.cfg.criteria):
            v = parse_criterion(x, i, c, errors)
            if v is not None:
                scores[c.name] = v
                confirmed[c.name] = request.form.get(f"c{i}_confirm") == "1"
        return scores, confirmed

    # -- export and analysis -------------------------------------------------------------

    def export_columns(self) -> list[str]:
        """The columns after ``rater, item, system, criterion, score``."""
        return []

    def scored(self, r: Any, rank: dict[str, int],
               scale: dict[str, tuple[float, float]]) -> dict[str, Any]:
        """The mode-specific cells of one exported judgement ``r`` (a stored row)."""
        return {"score": float(r.response)}

    def export_rows(self, rows: list[Any], rank: dict[str, int],
                    scale: dict[str, tuple[float, float]]) -> list[tuple[Any, dict[str, Any]]]:
        """The exported rows: ``(stored row it stands for, its mode-specific cells)``; one
        per stored judgement unless a mode groups them."""
        return [(r, self.scored(r, rank, scale)) for r in rows]

    def finish_export(self, df: pd.DataFrame) -> pd.DataFrame:
        """Last touches on the exported frame."""
        return df

    def tidy(self, export: pd.DataFrame) -> pd.DataFrame:
        """The analysis hook: the export -> ``rater, item, system, criterion, score``."""
        return export[RATING_COLUMNS].reset_index(drop=True)
