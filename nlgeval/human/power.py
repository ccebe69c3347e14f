"""How many items and raters? Power of a planned system comparison, by simulation.

Card et al. (2020), "With Little Power Comes Great Responsibility", show that typical NLP human
evaluations are badly underpowered and recommend simulating the planned analysis from pilot
data. This module does that for the comparison of two systems:

* the ratings model is the mixed model of :mod:`nlgeval.human.mixed`,
  ``score = mu + beta_system + u_rater + v_item + e``, with variance components taken from a
  pilot (REML fit) or stated directly (:func:`variance_components`), and the difference to
  detect, ``effect = beta_A - beta_B`` on the rating scale, stated by the user (a pilot's own
  estimate is too noisy to plan with: Card et al. 2020, section 5);
* a design is ``n_items`` items, each with both systems' outputs, each output rated by
  ``raters_per_item`` raters; ``design="paired"`` (both outputs of an item rated by the same
  raters, as in a rating form showing both) or ``"between"`` (different raters for the two
  outputs, as in a Latin square where a rater sees an item once), raters drawn from a pool of
  ``pool`` raters (default: as many as one item needs, i.e. every item is rated by the same
  raters), or ``design="independent"`` (each system on its own items: two-sample comparison);
* each simulated data set is analysed as ``nlgeval compare`` would: per-item means, then the
  paired t test / Wilcoxon signed-rank test (``independent``: Welch's t / Mann-Whitney U), at
  ``alpha / comparisons`` (Bonferroni over the planned number of pairs);
* scores are rounded and clipped to the scale's integer points when ``scale`` is given (Likert
  ratings), so ties behave as in real data.

Vectorised over replicates: a grid point draws all ``n_sims`` data sets as one array of
individual ratings (rater effects from the pool, item effects, residuals), reduces them to
per-item means and runs the test along an axis (scipy's tests are vectorised). Seeded with
``numpy.random.default_rng``; every grid point has its own stream,
``SeedSequence(seed, spawn_key=(n_items, raters_per_item))``, so a cell's result does not depend
on the rest of the grid, nor on where it runs: the grid points are tasks for a backend of
:mod:`nlgeval.parallel` (``backend="serial" | "process" | "dask"``), with the same answer on
every backend.

Checked against the closed forms where they exist (no rater variance, continuous scores):
power of the paired / one-sample t test and of the two-sample t test (noncentral t;
statsmodels ``TTestPower`` / ``TTestIndPower``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np
import pandas as pd
from scipy import stats

from nlgeval.errors import InputError
from nlgeval.parallel import ExecutionBackend, execution_record, get_backend, map_tasks, task_seed
from nlgeval.results import Result

Design = Literal["paired", "between", "independent"]
Test = Literal["t", "wilcoxon"]


@dataclass(frozen=True)
class VarianceComponents(Result):
    """Variances of the rater, item and residual terms (rating-scale units squared) of the
    crossed random-effects model of ratings (Card et al. 2020, section 5).

    Examples
    --------
    >>> VarianceComponents(rater=0.2, item=0.3, residual=1.0, mean=4.0).to_dict()
    {'rater': 0.2, 'item': 0.3, 'residual': 1.0, 'mean': 4.0}
    """

    rater: float
    item: float
    residual: float
    mean: float = 0.0


def components_from_pilot(ratings: pd.DataFrame) -> VarianceComponents:
    """REML variance components and grand mean from pilot ratings (mixed model of
    :mod:`nlgeval.human.mixed`; Card et al. 2020 recommend planning from a pilot).

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> u, v = rng.normal(0, 0.7, 4), rng.normal(0, 0.5, 10)  # rater and item effects
    >>> rows = [{"rater": f"r{r}", "item": f"i{i}", "system": s, "criterion": "q",
    ...          "score": float(np.clip(np.rint(3 + u[r] + v[i] + rng.normal(0, 0.8)), 1, 5))}
    ...         for r in range(4) for i in range(10) for s in ("a", "b")]
    >>> vc = components_from_pilot(pd.DataFrame(rows))
    >>> vc.item > vc.rater, vc.residual > 0
    (True, True)
    """
    from nlgeval.human.mixed import mixed_model

    res = mixed_model(ratings)
    v = res.variance
    return VarianceComponents(rater=float(v.get("rater", 0.0)), item=float(v.get("item", 0.0)),
                              residual=float(v["residual"]),
                              mean=float(pd.to_numeric(ratings["score"]).mean()))


def variance_components(
    pilot: pd.DataFrame | None = None,
    *,
    sd_rater: float | None = None,
    sd_item: float | None = None,
    sd_residual: float | None = None,
    mean: float | None = None,
    scale: str | Sequence[float] | None = None,
) -> VarianceComponents:
    """The variance components to plan with (Card et al. 2020, section 5): REML estimates from
    pilot ratings (:func:`components_from_pilot`, the mixed model of
    :mod:`nlgeval.human.mixed`), or stated as standard deviations (``sd_residual`` at least;
    a missing ``sd_rater`` or ``sd_item`` is 0). A stated SD replaces the pilot's component
    (squared), and ``mean`` the pilot's mean. Without a pilot the mean is ``mean``, else the
    middle of ``scale`` when one is given, else 0. ``nlgeval plan power`` calls this.

    Parameters
    ----------
    pilot : DataFrame, optional
        Pilot ratings of one criterion (``rater, item, system, criterion, score``).
    sd_rater, sd_item, sd_residual : float, optional
        Stated standard deviations of the rater, item and residual terms (rating-scale
        units); each replaces the pilot's estimate. Without a pilot ``sd_residual`` is needed.
    mean : float, optional
        Mean rating; replaces the pilot's mean.
    scale : str or (float, float), optional
        Rating scale ``"MIN,MAX"``; without a pilot or ``mean`` the mean is its middle.

    Returns
    -------
    VarianceComponents
        Variances (SDs squared) and mean of the ratings model.

    Examples
    --------
    >>> variance_components(sd_rater=0.5, sd_residual=1.0, scale="1,7").to_dict()
    {'rater': 0.25, 'item': 0.0, 'residual': 1.0, 'mean': 4.0}
    >>> rng = np.random.default_rng(0)
    >>> u, v = rng.normal(0, 0.7, 4), rng.normal(0, 0.5, 10)  # rater and item effects
    >>> pilot = pd.DataFrame([{"rater": f"r{r}", "item": f"i{i}", "system": s,
    ...                        "criterion": "q", "score": 3 + u[r] + v[i] + rng.normal(0, 0.8)}
    ...                       for r in range(4) for i in range(10) for s in ("a", "b")])
    >>> vc = variance_components(pilot, sd_item=0.5)
    >>> vc.item, vc.rater == components_from_pilot(pilot).rater
    (0.25, True)
    """
    stated = {"rater": sd_rater, "item": sd_item, "residual": sd_residual, "mean": mean}
    bad = {k: v for k, v in stated.items() if v is not None and not np.isfinite(v)}
    bad |= {k: v for k, v in stated.items() if k != "mean" and v is not None and v < 0}
    if bad:
        k = next(iter(bad))
        raise InputError(f"{'mean' if k == 'mean' else 'sd_' + k} must be a finite number"
                         f"{'' if k == 'mean' else ' >= 0'}, got {bad[k]!r}")
    if pilot is not None:
        vc = components_from_pilot(pilot)
    elif sd_residual is None:
        raise InputError("give pilot ratings, or at least --sd-residual (and --sd-rater, "
                         "--sd-item)")
    else:
        from nlgeval.human.ratings import parse_scale

        sc = parse_scale(scale)
        vc = VarianceComponents(rater=0.0, item=0.0, residual=0.0,
                                mean=0.0 if sc is None else (sc[0] + sc[1]) / 2)
    given = {k: (v if k == "mean" else v ** 2) for k, v in stated.items() if v is not None}
    return VarianceComponents(**{**vc.to_dict(), **given})


@dataclass(frozen=True)
class PowerResult(Result):
    """Simulated power for each (items, raters per item) of the grid (Card et al. 2020);
    made by :func:`simulate_power`. ``to_dict()`` is the ``plan power --json`` output.

    Examples
    --------
    >>> vc = VarianceComponents(rater=0.0, item=0.2, residual=1.0)
    >>> res = simulate_power(0.8, vc, items=(10, 40), raters_per_item=(2,), n_sims=200)
    >>> res.smallest()[["raters_per_item", "n_items"]].to_dict("records")
    [{'raters_per_item': 2, 'n_items': 40}]
    """

    table: pd.DataFrame
    effect: float
    components: VarianceComponents
    design: str
    test: str
    alpha: float
    comparisons: int
    n_sims: int
    seed: int
    scale: tuple[float, float] | None
    target: float
    notes: tuple[str, ...] = field(default=())
    execution: dict[str, Any] = field(default_factory=dict)

    def smallest(self, target: float | None = None) -> pd.DataFrame:
        """Per raters-per-item, the smallest number of items reaching ``target`` power
        (see the class example)."""
        t = self.target if target is None else target
        ok = self.table[self.table["power"] >= t]
        return ok.sort_values("n_items").groupby("raters_per_item", as_index=False).first()

    def to_dict(self) -> dict[str, Any]:
        """The documented ``--json`` keys (derived ones such as ``smd`` and ``smallest``
        included, the execution record left out: it never changes a number)."""
        return {
            "method": "power-simulation",
            "effect": self.effect,
            "smd": self.effect / np.sqrt(self.components.rater + self.components.item
                                         + self.components.residual),
            "components": self.components.to_dict(),
            "design": self.design,
            "test": self.test,
            "alpha": self.alpha,
            "comparisons": self.comparisons,
            "n_sims": self.n_sims,
            "seed": self.seed,
            "scale": list(self.scale) if self.scale else None,
            "target": self.target,
            "table": self.table.to_dict("records"),
            "smallest": self.smallest().to_dict("records"),
            "notes": list(self.notes),
        }


def _simulate_item_means(
    rng: np.random.Generator, n_sims: int, n_items: int, k: int, effect: float,
    vc: VarianceComponents, design: str, pool: int | None,
    scale: tuple[float, float] | None,
) -> tuple[np.ndarray, np.ndarray]:
    """(n_sims, n_items) per-item mean ratings of system A and of system B."""
    sd_r, sd_i, sd_e = (np.sqrt(max(x, 0.0)) for x in (vc.rater, vc.item, vc.residual))
    shape = (n_sims, n_items, k)
    need = k if design == "paired" else 2 * k
    p = max(int(pool or need), need)
    u = rng.normal(0.0, sd_r, size=(n_sims, p))
    # k distinct raters per output, drawn from the pool (ranks of uniforms = a random subset)
    order = np.argsort(rng.random((n_sims, n_items, p)), axis=2)
    rows = np.arange(n_sims)[:, None, None]
    raters_a = order[:, :, :k]
    raters_b = order[:, :, :k] if design == "paired" else order[:, :, k:2 * k]
    v_a = rng.normal(0.0, sd_i, size=(n_sims, n_items))
    v_b = v_a if design != "independent" else rng.normal(0.0, sd_i, size=(n_sims, n_items))
    xa = vc.mean + effect / 2 + v_a[..., None] + u[rows, raters_a] \
        + rng.normal(0.0, sd_e, size=shape)
    xb = vc.mean - effect / 2 + v_b[..., None] + u[rows, raters_b] \
        + rng.normal(0.0, sd_e, size=shape)
    if scale is not None:
        lo, hi = scale
        xa = np.clip(np.rint(xa), lo, hi)
        xb = np.clip(np.rint(xb), lo, hi)
    return xa.mean(axis=2), xb.mean(axis=2)


def signed_rank_pvalues(d: np.ndarray, *, chunk: int = 512) -> np.ndarray:
    """Two-sided Wilcoxon signed-rank p-value of each row of ``d`` (zeros dropped): what
    ``scipy.stats.wilcoxon(d, axis=1, zero_method="wilcox", method="auto").pvalue`` returns.

    With ties or zeros and at most 13 columns scipy runs an exact permutation test, one
    statistic per sign flip per row (seconds per thousand rows; rounded ratings have ties
    almost always); here the 2^n sign flips of every row are one matrix product, with
    scipy's counting, tolerance and two-sided rule, so the p-values are the same numbers.
    Otherwise scipy computes them (exact distribution or normal approximation).

    Parameters
    ----------
    d : ndarray
        (rows x n) paired differences; every row has a non-zero difference.
    chunk : int, default 512
        Rows per matrix product (bounds the memory: 2^n x chunk statistics).

    Returns
    -------
    ndarray
        One p-value per row.

    Examples
    --------
    >>> d = np.array([[1.0, 2.0, 2.0, -0.5, 3.0], [0.0, 1.0, 1.0, 1.0, 2.0]])
    >>> ref = stats.wilcoxon(d, axis=1, zero_method="wilcox", method="auto").pvalue
    >>> bool((signed_rank_pvalues(d) == ref).all())
    True
    """
    d = np.asarray(d, dtype=float)
    n = d.shape[1]
    zero = d == 0
    srt = np.sort(np.where(zero, np.nan, np.abs(d)), axis=1)
    ties = bool(np.any(srt[:, 1:] == srt[:, :-1]))
    if n > 13 or not (ties or zero.any()):
        return np.asarray(stats.wilcoxon(d, axis=1, zero_method="wilcox",
                                         method="auto").pvalue, dtype=float)
    ranks = stats.rankdata(np.where(zero, np.nan, np.abs(d)), axis=1, nan_policy="omit")
    ranks = np.where(zero, 0.0, ranks)
    flips = ((np.arange(2 ** n)[:, None] >> np.arange(n)) & 1).astype(float)
    eps = np.finfo(np.float64).eps * 100  # scipy's permutation_test tolerance
    out = np.empty(d.shape[0])
    for lo in range(0, d.shape[0], chunk):
        r = ranks[lo:lo + chunk]
        observed = np.sum((d[lo:lo + chunk] > 0).astype(float) * r, axis=1)
        null = flips @ r.T  # every rank sum is a multiple of 0.5: exact in any order
        gamma = np.abs(eps * observed)
        p_less = np.count_nonzero(null <= observed + gamma, axis=0).astype(float) / 2 ** n
        p_greater = np.count_nonzero(null >= observed - gamma, axis=0).astype(float) / 2 ** n
        out[lo:lo + chunk] = np.clip(np.minimum(p_less, p_greater) * 2, 0.0, 1.0)
    return out


def _pvalues(a: np.ndarray, b: np.ndarray, test: str, design: str) -> np.ndarray:
    with np.errstate(invalid="ignore", divide="ignore"):
        if design == "independent":
            if test == "t":
                p = stats.ttest_ind(a, b, axis=1, equal_var=False).pvalue
            else:
                p = stats.mannwhitneyu(a, b, axis=1, alternative="two-sided").pvalue
        else:
            d = a - b
            if test == "t":
                p = stats.ttest_1samp(d, 0.0, axis=1).pvalue
            else:
                nz = (d != 0).any(axis=1)
                p = np.ones(d.shape[0])
                if nz.any():
                    p[nz] = signed_rank_pvalues(d[nz])
    # a replicate with no variation at all (identical rounded ratings) is "not significant"
    return np.where(np.isfinite(p), p, 1.0)


def simulate_power(
    effect: float,
    components: VarianceComponents,
    *,
    items: Sequence[int] = (10, 20, 40, 80),
    raters_per_item: Sequence[int] = (1, 3, 5),
    design: Design = "paired",
    test: Test = "t",
    pool: int | None = None,
    alpha: float = 0.05,
    comparisons: int = 1,
    scale: tuple[float, float] | None = None,
    n_sims: int = 1000,
    seed: int = 0,
    target: float = 0.8,
    backend: str | ExecutionBackend | None = "serial",
    workers: int | None = None,
    scheduler: str | None = None,
) -> PowerResult:
    """Simulated power of detecting ``effect`` for each (items, raters per item); see the
    module docstring (Card et al. 2020). The table has ``n_items, raters_per_item, n_ratings,
    power, mc_se`` (``mc_se`` = sqrt(power (1 - power) / n_sims)). ``backend`` (``"serial"``,
    ``"process"`` with ``workers``, ``"dask"`` with ``scheduler`` ``"local:N"`` or an address,
    or a backend object of :mod:`nlgeval.parallel`) runs the grid points as tasks; it never
    changes a number.

    Parameters
    ----------
    effect, components : float, VarianceComponents; the difference and the variance components
    items, raters_per_item, design, test, pool, alpha, comparisons, scale : the planned study
    n_sims, seed, target, backend, workers, scheduler : the simulation (see above)
    Returns
    -------
    PowerResult

    Examples
    --------
    >>> vc = VarianceComponents(rater=0.3, item=0.3, residual=1.0)
    >>> kw = dict(items=(10, 20), raters_per_item=(1, 3), n_sims=100, seed=2)
    >>> a = simulate_power(0.5, vc, **kw)
    >>> b = simulate_power(0.5, vc, backend="process", workers=2, **kw)
    >>> a.table.equals(b.table), a.table["power"].tolist()
    (True, [0.16, 0.41, 0.45, 0.8])
    """
    if design not in ("paired", "between", "independent"):
        raise InputError(f"design must be paired, between or independent, got {design!r}")
    if test not in ("t", "wilcoxon"):
        raise InputError(f"test must be 't' or 'wilcoxon', got {test!r}")
    if not 0 < alpha < 1 or comparisons < 1:
        raise InputError("alpha must lie in (0, 1) and comparisons be at least 1")
    if n_sims < 10:
        raise InputError(f"n_sims must be at least 10, got {n_sims}")
    if min(items) < 2 or min(raters_per_item) < 1:
        raise InputError("items must be at least 2 and raters per item at least 1")
    if components.residual <= 0 and components.rater <= 0 and components.item <= 0:
        raise InputError("all variance components are 0: power is trivially 1")
    cells = max(items) * max(raters_per_item) * 2 * n_sims
    if cells > 5e7:
        raise InputError(f"the largest grid point simulates {cells:,.0f} ratings at once; "
                         "lower --sims or the largest --items / --raters-per-item")
    level = alpha / comparisons
    grid = [(int(n), int(k)) for k in dict.fromkeys(raters_per_item)
            for n in dict.fromkeys(items)]
    tasks = [_Cell(n, k, int(seed), int(n_sims), float(effect), components, design, pool,
                   scale, test, level) for n, k in grid]
    be = get_backend(backend, workers, scheduler=scheduler)
    rows = map_tasks(_power_cell, tasks, be, description="power simulation",
                     weights=[n * k for n, k in grid])
    notes = []
    if pool is not None and design != "independent":
        notes.append(f"raters drawn from a pool of {pool}")
    if scale is not None:
        notes.append(f"ratings rounded and clipped to the integer points of [{scale[0]:g}, "
                     f"{scale[1]:g}]")
    return PowerResult(
        table=pd.DataFrame(rows), effect=float(effect), components=components, design=design,
        test=test, alpha=alpha, comparisons=int(comparisons), n_sims=int(n_sims),
        seed=int(seed), scale=scale, target=float(target), notes=tuple(notes),
        execution=execution_record(be, tasks=len(tasks)),
    )


@dataclass(frozen=True)
class _Cell:
    """One grid point: everything its simulation needs (a task for a backend)."""

    n_items: int
    raters: int
    seed: int
    n_sims: int
    effect: float
    components: VarianceComponents
    design: str
    pool: int | None
    scale: tuple[float, float] | None
    test: str
    level: float


def _power_cell(c: _Cell) -> dict[str, float]:
    """Simulated power of one grid point, from its own stream ``task_seed(seed, n, k)``."""
    rng = np.random.default_rng(task_seed(c.seed, c.n_items, c.raters))
    a, b = _simulate_item_means(rng, c.n_sims, c.n_items, c.raters, c.effect, c.components,
                                c.design, c.pool, c.scale)
    power = float(np.mean(_pvalues(a, b, c.test, c.design) < c.level))
    return {"n_items": c.n_items, "raters_per_item": c.raters,
            "n_ratings": 2 * c.n_items * c.raters, "power": power,
            "mc_se": float(np.sqrt(power * (1 - power) / c.n_sims))}


def plot_power(res: PowerResult, stem: str | Path) -> list[Path]:
    """Power against the number of items, one line per raters-per-item; ``stem.png/.pdf``.

    Examples
    --------
    >>> import tempfile
    >>> vc = VarianceComponents(rater=0.0, item=0.2, residual=1.0)
    >>> res = simulate_power(0.8, vc, items=(10, 20), raters_per_item=(1,), n_sims=50)
    >>> [p.suffix for p in plot_power(res, Path(tempfile.mkdtemp()) / "power")]
    ['.png', '.pdf']
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.0, 4.2))
    for k, g in res.table.groupby("raters_per_item"):
        ax.errorbar(g["n_items"], g["power"], yerr=1.96 * g["mc_se"], marker="o",
                    linewidth=1.1, capsize=2, label=f"{k} rater(s) per output")
    ax.axhline(res.target, color="grey", linestyle=":", linewidth=0.8)
    ax.set_xscale("log")
    ticks = sorted(res.table["n_items"].unique())
    ax.set_xticks(ticks)
    ax.set_xticklabels([str(t) for t in ticks])
    ax.minorticks_off()
    ax.set_xlabel("number of items")
    ax.set_ylabel("power")
    ax.set_ylim(0, 1.02)
    ax.set_title(f"effect {res.effect:g}, {res.test} test, {res.design} design, "
                 f"alpha {res.alpha:g}/{res.comparisons}", fontsize=9)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    stem = Path(stem)
    stem.parent.mkdir(parents=True, exist_ok=True)
    paths = [stem.with_suffix(".png"), stem.with_suffix(".pdf")]
    for p in paths:
        fig.savefig(p, dpi=150)
    plt.close(fig)
    return paths
