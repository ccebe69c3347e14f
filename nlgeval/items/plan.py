"""Plan a human evaluation from pilot ratings: how many items must each evaluator rate?

Runs the number-of-items study (:mod:`nlgeval.items.study`) on each pilot evaluator's score
distribution and turns the curves into the smallest number of items from which the share of
simulated subsets whose distribution discrete ANOVA tells apart from the evaluator's full pilot
distribution stays below a threshold (the paper's Table 3 criterion), with a plain-language
recommendation.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from nlgeval.deprecation import renamed_keyword
from nlgeval.errors import InputError
from nlgeval.io import header_row, read_table
from nlgeval.items.backends import ExecutionBackend
from nlgeval.items.profiles import distributions_from_ratings
from nlgeval.items.study import StudyResult, run_study
from nlgeval.results import Result


@dataclass(frozen=True)
class PlanResult(Result):
    """Per-evaluator minimum numbers of items and a recommendation (see :func:`plan_items`).

    Examples
    --------
    >>> import pandas as pd
    >>> pilot = pd.DataFrame({"rater": ["a"] * 12 + ["b"] * 12,
    ...                       "score": [1, 2, 2, 3, 3, 3, 4, 4, 4, 4, 5, 5] * 2})
    >>> plan = plan_items(pilot, replications=50, n_resamples=100, seed=1, workers=1)
    >>> plan.method, plan.threshold
    ('bootstrap', 0.1)
    >>> boot = plan.per_evaluator.query("method == 'bootstrap'")
    >>> plan.recommended_items == int(boot["min_items"].max()), 2 <= plan.recommended_items < 12
    (True, True)
    >>> sorted(plan.to_dict())[:4]
    ['curves', 'method', 'parameters', 'per_evaluator']
    """

    study: StudyResult
    per_evaluator: pd.DataFrame  # evaluator, n_items, method, threshold, min_items
    recommended_items: int | None
    method: str
    threshold: float
    recommendation: str

    def to_dict(self) -> dict[str, Any]:
        """The recommendation, the per-evaluator table and the study's curves (not derived
        from the fields: the nested study is reduced to what the report shows)."""
        return {
            "recommended_items": self.recommended_items,
            "method": self.method,
            "threshold": self.threshold,
            "recommendation": self.recommendation,
            "per_evaluator": self.per_evaluator,
            "curves": self.study.curves[["distribution", "method", "size", "reject_share"]],
            "thresholds": self.study.thresholds,
            "parameters": self.study.parameters,
            "run": self.study.run,
        }


def load_pilot(
    path: str | Path, *, score: str = "score", by: str = "rater", criterion: str | None = None
) -> pd.DataFrame:
    """Read a pilot ratings file (CSV/TSV/JSONL; one row per rating) and select one criterion.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> tmp = tempfile.TemporaryDirectory()
    >>> folder = pathlib.Path(tmp.name)
    >>> _ = (folder / "pilot.csv").write_text(
    ...     "rater,criterion,score\\na,fluency,4\\na,adequacy,2\\nb,fluency,5\\n")
    >>> load_pilot(folder / "pilot.csv", criterion="fluency")[["rater", "score"]]
      rater  score
    0     a      4
    2     b      5
    >>> tmp.cleanup()
    """
    df = read_table(path, [score, by])
    if "criterion" in df.columns:
        crits = sorted(df["criterion"].astype(str).unique())
        if criterion is None and len(crits) > 1:
            raise InputError(
                f"the file rates several criteria ({', '.join(crits)}); choose one with "
                "--criterion", file=path, column="criterion",
            )
        if criterion is not None:
            if criterion not in crits:
                raise InputError(f"criterion '{criterion}' not found (have: {', '.join(crits)})",
                                 file=path, column="criterion")
            df = df[df["criterion"].astype(str) == criterion]
    elif criterion is not None:
        raise InputError("--criterion given but the file has no 'criterion' column", file=path,
                         row=header_row(path))
    return df


def plan_items(
    ratings: pd.DataFrame,
    *,
    score: str = "score",
    by: str = "rater",
    method: str = "bootstrap",
    threshold: float = 0.10,
    replications: int = 1000,
    n_resamples: int = 500,
    alpha: float = 0.1,
    seed: int = 0,
    workers: int | None = None,
    file: str | None = None,
    backend: str | ExecutionBackend | None = None,
    scheduler: str | None = None,
    chunk_size: int | None = None,
    checkpoint: str | Path | None = None,
    resume: bool = False,
    nboot: int | None = None,
) -> PlanResult:
    """Run the study on each evaluator's pilot distribution and recommend a number of items.

    The recommendation is the largest per-evaluator minimum for ``method`` (``bootstrap``, the
    conservative choice the paper takes as reference, or ``rwor``) at ``threshold``.
    ``backend``, ``scheduler``, ``chunk_size``, ``checkpoint`` and ``resume`` are passed to
    :func:`nlgeval.items.study.run_study` (where to run; they never change a number), as is
    ``n_resamples`` (``nboot``: its earlier name, deprecated).
    The criterion (share of subsets told apart below ``threshold``) is Table 3 of
    González-Corbelle et al. (2023).

    Examples
    --------
    >>> import pandas as pd
    >>> pilot = pd.DataFrame({"rater": ["a"] * 12 + ["b"] * 12,
    ...                       "score": [1, 2, 2, 3, 3, 3, 4, 4, 4, 4, 5, 5] * 2})
    >>> plan = plan_items(pilot, replications=50, n_resamples=100, seed=1, workers=1)
    >>> plan.per_evaluator.drop(columns="min_items")
      evaluator  n_items     method  threshold
    0         a       12  bootstrap        0.1
    1         a       12       rwor        0.1
    2         b       12  bootstrap        0.1
    3         b       12       rwor        0.1
    >>> k = plan.recommended_items  # the largest bootstrap minimum, a size in 2..11
    >>> plan.recommendation.startswith(f"Ask each evaluator to rate at least {k} items")
    True
    """
    nboot = renamed_keyword("plan_items", "nboot", nboot, "n_resamples", n_resamples)
    if method not in ("bootstrap", "rwor"):
        raise InputError(f"method must be 'bootstrap' or 'rwor', got {method!r}")
    if not 0 < threshold < 1:
        raise InputError(f"threshold must lie in (0, 1), got {threshold}")
    dists = distributions_from_ratings(ratings, score=score, by=by, file=file)
    small = [d.name for d in dists if d.n < 4]
    if small:
        raise InputError(f"evaluator(s) {', '.join(small)} rated fewer than 4 items; a pilot "
                         "needs more ratings per evaluator", file=file, column=by)
    thresholds = sorted({0.10, 0.05, 0.01, float(threshold)}, reverse=True)
    study = run_study(dists, methods=("bootstrap", "rwor"), replications=replications,
                      n_resamples=nboot, alpha=alpha, thresholds=thresholds, seed=seed,
                      workers=workers, backend=backend, scheduler=scheduler,
                      chunk_size=chunk_size, checkpoint=checkpoint, resume=resume)
    t = study.thresholds
    rows = []
    for d in dists:
        for m in ("bootstrap", "rwor"):
            sel = t[(t["distribution"] == d.name) & (t["method"] == m)
                    & (t["threshold"] == float(threshold))]
            rows.append({"evaluator": d.name, "n_items": d.n, "method": m,
                         "threshold": float(threshold),
                         "min_items": sel["min_items"].iloc[0]})
    per = pd.DataFrame(rows)
    chosen = per[per["method"] == method]
    other = per[per["method"] != method]
    recommended = None if chosen["min_items"].isna().any() else int(chosen["min_items"].max())
    text = _recommendation(chosen, other, recommended, method, threshold, alpha)
    return PlanResult(study, per, recommended, method, float(threshold), text)


def _recommendation(chosen: pd.DataFrame, other: pd.DataFrame, k: int | None, method: str,
                    threshold: float, alpha: float) -> str:
    n_eval = len(chosen)
    pilot = int(chosen["n_items"].min())
    label = {"bootstrap": "resampling with replacement (bootstrap)",
             "rwor": "resampling without replacement"}
    if k is None:
        bad = ", ".join(chosen.loc[chosen["min_items"].isna(), "evaluator"].astype(str))
        return (
            f"No number of items up to the pilot size ({pilot}) keeps the share of simulated "
            f"subsets that differ from the full pilot distribution (discrete ANOVA, p < "
            f"{alpha:g}) below {threshold:.0%} for evaluator(s) {bad}; rate more pilot items or "
            "accept a higher threshold."
        )
    worst = chosen.loc[chosen["min_items"].idxmax(), "evaluator"]
    other_vals = other["min_items"].dropna()
    other_txt = ""
    if len(other_vals) == len(other) and len(other):
        other_txt = (f" With {label['rwor' if method == 'bootstrap' else 'bootstrap']} the "
                     f"answer would be {int(other_vals.max())}.")
    return (
        f"Ask each evaluator to rate at least {k} items. With {k} or more items, fewer than "
        f"{threshold:.0%} of {label[method]} subsets had a score distribution that discrete ANOVA "
        f"(p < {alpha:g}) tells apart from the evaluator's full pilot distribution, for all "
        f"{n_eval} evaluator(s) (the most demanding: {worst}).{other_txt} This is relative to the "
        f"pilot ({pilot} items for the smallest evaluator): it says how well a subset reproduces "
        "an evaluator's own score distribution, not how many items detect a difference between "
        "systems."
    )
