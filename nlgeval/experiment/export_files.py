"""``nlgeval experiment export DIR --out FOLDER``: everything a study collected, as files an
analysis reads directly.

``ratings.csv`` is the export of :func:`nlgeval.experiment.export.export_ratings`: the tidy
columns ``rater, item, system, criterion, score`` first (``nlgeval validate --human``,
``compare`` and ``agreement`` read them), then the mode's own columns and the timing and
quality-control columns. For relative (pairwise) judgements ``system`` and ``system_b`` are the
pair and ``score`` the preference for ``system`` (the shape ``nlgeval compare`` reads as
pairwise judgements). Span modes (MQM, ESA) also write ``spans.csv`` (one row per marked
error span: :func:`nlgeval.experiment.export.export_spans`), and MQM's ``ratings.csv`` also
has the per-category criteria ``MQM-Accuracy``, ``MQM-Fluency``, ... from the spans;
best-worst scaling writes its counting scores per rater and output as ``ratings.csv``, the
raw choices (``choices.csv``) and the counting scores over all raters (``bws_scores.csv``; see
:mod:`nlgeval.experiment.modes.bws`). Next to them: ``flags.csv`` (the quality flags per
evaluator) and, when the study has an exit questionnaire, ``questionnaire.csv``.

Examples
--------
>>> import tempfile
>>> from nlgeval.experiment.sandbox import example_experiment
>>> with example_experiment() as (store, cfg), tempfile.TemporaryDirectory() as tmp:
...     files = write_export(store, cfg, Path(tmp) / "out")
...     sorted(files)
['flags', 'questionnaire', 'ratings']
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from nlgeval.experiment.config import ExperimentConfig
from nlgeval.experiment.export import (
    RATING_COLUMNS,
    export_questionnaire,
    export_ratings,
    quality_flags,
)

__all__ = ["write_export"]


def _with_breakdown(raw: pd.DataFrame, spans: pd.DataFrame, cfg: ExperimentConfig
                    ) -> pd.DataFrame:
    """The MQM export plus the per-category criteria ``MQM-Accuracy``, ``MQM-Fluency``, ...
    of every rated output, from its spans (:func:`nlgeval.human.spans.mqm_span_ratings`
    with the study's weights; as the WMT21 TED corpus has them), each with its rater's
    quality-control columns. Attention-check rows get no breakdown (a repeat or a degraded
    copy of an output would be merged with the output itself)."""
    from nlgeval.human.spans import mqm_span_ratings

    if "qc_check" in spans:
        spans = spans[spans["qc_check"] == ""]
    if raw.empty or spans.empty:
        return raw
    cols = ["rater", "item", "system", "start", "end", "category", "severity"]
    weights = getattr(cfg.options, "weights", None) or None
    per = mqm_span_ratings(spans[cols].astype(object).where(spans[cols].notna(), ""),
                           weights=weights)
    per = per.loc[per["criterion"] != "MQM", RATING_COLUMNS]
    qc = raw.groupby("rater")[["qc_flags", "qc_passed", "participant"]].first()
    per = per.join(qc, on="rater").assign(practice=False, qc_check="")
    return pd.concat([raw, per], ignore_index=True)


def write_export(
    store: Any,
    cfg: ExperimentConfig,
    out: str | Path,
    *,
    include_practice: bool = False,
    include_checks: bool = False,
    logit_prior: float | None = None,
) -> dict[str, Path]:
    """Write the study's export files into the folder ``out`` (see the module docstring);
    returns the path of each table by name (``ratings``, ``flags``, ...). A mode with an
    ``export_tables(export, logit_prior=...)`` hook (best-worst scaling) makes its own
    ``ratings`` and analysis tables from the export; ``logit_prior`` asks it for its
    logit fit.

    Examples
    --------
    See the module docstring.
    """
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    from nlgeval.experiment.modes import get_mode
    from nlgeval.experiment.modes.spans import SpanMode

    raw = export_ratings(store, cfg, include_practice=include_practice,
                         include_checks=include_checks)
    mode = get_mode(cfg.mode)
    hook = getattr(mode, "export_tables", None)
    tables = dict(hook(raw, logit_prior=logit_prior)) if hook else {"ratings": raw}
    tables["flags"] = quality_flags(store, cfg)
    if cfg.questionnaire:
        tables["questionnaire"] = export_questionnaire(store)
    if isinstance(mode, SpanMode):
        from nlgeval.experiment.export import export_spans

        tables["spans"] = export_spans(store, include_practice=include_practice,
                                       include_checks=include_checks)
        if mode.name == "mqm":
            tables["ratings"] = _with_breakdown(raw, tables["spans"], cfg)
    paths = {}
    for name, df in tables.items():
        paths[name] = out / f"{name}.csv"
        df.to_csv(paths[name], index=False)
    return paths
