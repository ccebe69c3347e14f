"""From inputs to a meta-analysis in one call: study folders, corpora or a table of effects.

:func:`run_meta_analysis` is what ``nlgeval meta-analyse`` calls: it gathers the studies
(report folders of ``nlgeval validate`` and/or corpora run now), harmonises their criteria
with the criterion map, builds the table of effects and the paired correlations for metric
comparisons, and pools them (:func:`nlgeval.meta_analysis.analysis.meta_analyse`; DerSimonian
& Laird 1986, Viechtbauer 2005). Or it pools a user's own table of ``study, r, n``.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from nlgeval.deprecation import renamed_keyword
from nlgeval.errors import InputError
from nlgeval.meta_analysis.analysis import MetaAnalysis, MetaSettings, meta_analyse, metric_pairs
from nlgeval.meta_analysis.criteria import load_criterion_map
from nlgeval.meta_analysis.studies import (
    LEVELS,
    Study,
    comparison_table,
    read_study,
    run_corpus_studies,
    study_effects,
)

__all__ = ["DEFAULT_CORPUS_METRICS", "VARIANCES", "read_effects", "run_meta_analysis"]

#: metrics a study run on the fly computes when none are named
DEFAULT_CORPUS_METRICS = ("bleu", "chrf")
#: where each correlation's sampling variance comes from
VARIANCES = ("fisher", "bootstrap")


def read_effects(path: str | Path) -> pd.DataFrame:
    """A user's table of effects (CSV, TSV, JSONL or Parquet): ``study, r, n`` and optional
    ``metric, construct`` and moderator columns, and ``vi``, a sampling variance of Fisher's
    z to use instead of ``1/(n - 3)`` (e.g. from a bootstrap interval); values checked by
    :func:`nlgeval.meta_analysis.effects.correlation_effects` (Fisher 1921).

    Parameters
    ----------
    path : str or Path
        The file of effects.

    Returns
    -------
    DataFrame
        The table as read (checked, not yet transformed).

    Examples
    --------
    >>> import tempfile, os
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     p = os.path.join(tmp, "effects.csv")
    ...     _ = open(p, "w").write("study,r,n\\nA,0.5,40\\nB,0.3,100\\n")
    ...     read_effects(p)[["study", "r", "n"]].to_dict("list")
    {'study': ['A', 'B'], 'r': [0.5, 0.3], 'n': [40, 100]}
    """
    from nlgeval.io import read_table
    from nlgeval.meta_analysis.effects import correlation_effects

    path = Path(path)
    if not path.is_file():
        raise InputError("file not found", file=path)
    table = read_table(path, ["study", "r", "n"])
    if "vi" in table.columns:
        from nlgeval.io import row_of

        vi = pd.to_numeric(table["vi"], errors="coerce").to_numpy(dtype=float)
        bad = np.flatnonzero(~(np.isfinite(vi) & (vi > 0)))
        if bad.size:
            raise InputError(f"vi must be a positive number, got {table['vi'].iloc[bad[0]]!r}",
                             file=path, row=row_of(table, int(bad[0])), column="vi")
        table["vi"] = vi
    out = correlation_effects(table, file=str(path)).drop(columns=["yi"])
    return out if "vi" in table.columns else out.drop(columns=["vi"])


def run_meta_analysis(
    *, corpora: Sequence[str] = (), study_dirs: Sequence[str | Path] = (),
    effects: str | Path | None = None, metrics: Sequence[str] | None = None,
    criterion_map: str | Path | None = None, level: str = "segment",
    variance: str = "fisher", n_resamples: int | None = None, seed: int = 0,
    data_dir: str | Path | None = None, settings: MetaSettings | None = None,
    split: bool = True, resamples: int | None = None, **options: Any,
) -> tuple[MetaAnalysis, dict[str, Any]]:
    """The meta-analysis and a record of its inputs (studies, criterion map, level).

    Exactly one kind of input: ``effects`` (a file of ``study, r, n``), or ``corpora``
    and/or ``study_dirs``. ``n_resamples`` (bootstrap resamples for studies run now) defaults
    to 0, or 200 when the variance comes from the bootstrap (``variance="bootstrap"`` or the
    item level); ``resamples`` is its earlier name (deprecated). ``split``: corpora with a
    ``split_by`` in the criterion map become one study per data set (Novikova et al. 2017's
    three sets).

    Parameters
    ----------
    corpora, study_dirs, effects, metrics, criterion_map, level, variance, split : see above
        Inputs; metrics to pool (default all, one a study lacks noted), map, level, variance.
    n_resamples, seed, resamples, data_dir : int, int, int, str or Path, optional
        Bootstrap resamples of studies run now, their seed, deprecated name, corpus folder.
    settings, **options : MetaSettings, optional; keyword options
        Options of :func:`meta_analyse`.
    Returns
    -------
    tuple of (MetaAnalysis, dict)

    Examples
    --------
    >>> import tempfile, os
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     p = os.path.join(tmp, "effects.csv")
    ...     _ = open(p, "w").write("study,r,n\\nA,0.5,40\\nB,0.3,100\\nC,0.4,60\\n")
    ...     res, inputs = run_meta_analysis(effects=p, tau2="dl")
    >>> int(res.pooled["k"].iloc[0]), inputs["kind"]
    (3, 'effects')
    """
    n_resamples = renamed_keyword("run_meta_analysis", "resamples", resamples, "n_resamples",
                                  n_resamples)
    settings = replace(settings, **options) if settings is not None else \
        MetaSettings(**options)
    if variance not in VARIANCES:
        raise InputError(f"unknown variance {variance!r}; choose one of {', '.join(VARIANCES)}")
    if level not in LEVELS:
        raise InputError(f"unknown level {level!r}; choose one of {', '.join(LEVELS)}")
    if effects is not None:
        if corpora or study_dirs:
            raise InputError("give either --effects FILE or studies (STUDY_DIR..., --corpora),"
                             " not both")
        table = read_effects(effects)
        if metrics is not None and "metric" in table.columns:
            table = table[table["metric"].isin(metrics)]
        return meta_analyse(table, settings, file=str(effects)), {"kind": "effects",
                                                                  "effects": str(effects)}
    if not corpora and not study_dirs:
        raise InputError("nothing to pool: name study folders, --corpora a,b,c or --effects "
                         "FILE")
    cmap = load_criterion_map(criterion_map)
    needs_boot = variance == "bootstrap" or level == "item"
    boot = n_resamples if n_resamples is not None else (200 if needs_boot else 0)
    studies = _at_level([read_study(d) for d in study_dirs], level)  # before any run
    run_metrics = list(metrics) if metrics else list(DEFAULT_CORPUS_METRICS)
    for c in corpora:
        entry = cmap.corpora.get(c)
        studies += run_corpus_studies(
            c, run_metrics, [level], split_by=entry.split_by if entry and split else None,
            data_dir=data_dir, n_resamples=boot, seed=seed,
            confidence_level=settings.confidence_level)
    _check_studies(studies, level)
    notes: list[str] = []
    eff = study_effects(studies, cmap, level=level, metrics=metrics, variance=variance,
                        related=settings.dependence == "rve", notes=notes)
    comps = _comparisons(studies, cmap, eff, level) if settings.compare else None
    record = {"kind": "studies", "studies": [{"name": s.name, "corpus": s.corpus,
                                              "source": s.source} for s in studies],
              "criterion_map": cmap.source, "level": level, "variance": variance,
              "resamples": boot, "seed": seed}
    return meta_analyse(eff, settings, comparisons=comps, notes=notes), record


def _check_studies(studies: Sequence[Study], level: str) -> None:
    """Unique names, distinct human judgements, and every study at ``level``
    (:func:`_at_level`)."""
    _check_unique_names(studies)
    _check_distinct_judgements(studies)
    _at_level(studies, level)


def _judgements_key(study: Study) -> tuple[str, ...] | None:
    """What identifies a study's human judgements: the hash of its per-output human scores
    (``system, item`` and the criteria its correlations name, rows in a fixed order), or
    None when the study has no per-output scores to compare (an older folder without
    ``segments.csv``)."""
    seg = study.segments
    if seg is None or not {"system", "item"} <= set(seg.columns):
        return None
    criteria = sorted(c for c in set(study.correlations["criterion"].astype(str))
                      if c in seg.columns)
    if not criteria:
        return None
    part = seg[["system", "item", *criteria]].astype({"system": str, "item": str})
    part = part.sort_values(["system", "item"], kind="mergesort").reset_index(drop=True)
    digest = pd.util.hash_pandas_object(part, index=False).to_numpy()
    return (*criteria, str(len(part)), hashlib.sha256(digest.tobytes()).hexdigest())


def _check_distinct_judgements(studies: Sequence[Study]) -> None:
    """Refuse two studies with the same human judgements (the same corpus validated twice, e.g.
    with other metrics, or a folder beside ``--corpora`` of its corpus): pooling them would
    count one study's evidence twice, narrowing the interval and inflating k."""
    seen: dict[tuple[str, ...], Study] = {}
    for s in studies:
        key = _judgements_key(s)
        if key is None:
            continue
        if key in seen:
            first = seen[key]
            raise InputError(
                f"studies {first.name!r} ({first.source}) and {s.name!r} ({s.source}) hold the "
                f"same human judgements (corpus {s.corpus!r}, {key[-2]} outputs): each study "
                "is pooled once; give one of them")
        seen[key] = s


def _at_level(studies: Sequence[Study], level: str) -> list[Study]:
    """``studies``, each checked to have Pearson correlations at ``level``: a meta-analysis
    pools one level for every study, so a study without it (a folder of ``nlgeval validate``
    run at other levels, e.g. REALSumm's default system and item levels) is an error naming
    it, never pooled at another level nor left out (which would change the studies pooled)."""
    for s in studies:
        corr = s.correlations  # current column names (read_study renames earlier ones)
        have = [str(v) for v in dict.fromkeys(corr.loc[corr["statistic"] == "pearson",
                                                       "level"])]
        if level in have:
            continue
        folder = Path(s.source) / "correlations.csv"
        rerun = f"rerun `nlgeval validate` with --levels {level}, " if folder.is_file() else ""
        raise InputError(
            f"study {s.name!r} has no Pearson correlation at the {level} level ("
            f"{'only at: ' + ', '.join(have) if have else 'none at any level'}); a "
            f"meta-analysis pools one level for every study: {rerun}choose another --level, "
            "or leave the study out",
            file=folder if folder.is_file() else None, column="level" if have else None)
    return list(studies)


def _check_unique_names(studies: Sequence[Study]) -> None:
    seen: dict[str, str] = {}
    for s in studies:
        if s.name in seen:
            raise InputError(f"two studies are called {s.name!r} ({seen[s.name]} and "
                             f"{s.source}): each study is pooled once")
        seen[s.name] = s.source


def _comparisons(studies: Sequence[Study], cmap: Any, eff: pd.DataFrame,
                 level: str) -> pd.DataFrame | None:
    metrics = list(dict.fromkeys(eff["metric"]))
    parts = []
    for a, b in metric_pairs(metrics):
        t = comparison_table(studies, cmap, a, b, level=level)
        if len(t):
            parts.append(t.assign(metric_a=a, metric_b=b))
    return pd.concat(parts, ignore_index=True) if parts else None
