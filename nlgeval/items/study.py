"""The number-of-items resampling study (González-Corbelle et al. 2023, sections 4.4-4.5), fast.

For each score distribution S (counts per scale point over N items), each resampling method and
each subsample size s = 2..N-1: draw R subsamples S~ of s items - with replacement (``bootstrap``)
or without (``rwor``) - run WRS2's discrete ANOVA of S~ against S with ``nboot`` bootstrap draws,
and record the share of replications with p < alpha (the paper's Figure 3). The paper's Table 3 is
then, per threshold (10 %, 5 %, 1 %), the smallest size from which that share stays below it.

How it is fast (the naive study is ~2e9 bootstrap statistics):

* everything works on category counts: a subsample is a Multinomial(s, S/N) draw (bootstrap) or a
  multivariate hypergeometric draw (``rwor``), and every bootstrap replicate of the test is two
  multinomial count vectors, never individual ratings;
* the two-group statistic is computed exactly in integers, ``Q = sum_k (s X_k - N Y_k)^2``
  (``T = Q / (2 N^2 s^2)``, the same as WRS2's ``sum_k var``), so ties are exact;
* the bootstrap of a replication stops as soon as its decision is known: exactly (p >= alpha is
  reached) or certified (see :mod:`nlgeval.items.stopping`: the stopped decision differs from the
  full ``nboot``-draw one with probability <= ``eps`` = 1e-10 whatever the data);
* the sampler is compiled (:mod:`nlgeval.items._kernels`) and tasks (distribution x method x size)
  run on a pluggable backend (:mod:`nlgeval.parallel`: serial, a local process pool or a
  Dask cluster), sent to workers in chunks of cells. Each task has its own random stream,
  ``SeedSequence(seed)`` keyed by the distribution's name, the method and the size
  (:func:`nlgeval.items.cells.task_stream`), so a distribution's results are the same alone or
  beside other distributions, in any order, and identical, bit for bit, for any backend, number
  of workers or chunking;
* completed chunks can be appended to a checkpoint (:mod:`nlgeval.items.checkpoint`) so that an
  interrupted study resumes.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from nlgeval.deprecation import renamed_keyword
from nlgeval.errors import InputError
from nlgeval.items.cells import METHODS as METHODS
from nlgeval.items.cells import STREAMS, CellResult, _Chunk, _run_chunk
from nlgeval.items.cells import observed_subsamples as observed_subsamples
from nlgeval.items.cells import task_stream as task_stream
from nlgeval.items.cells import warm_up as warm_up
from nlgeval.items.profiles import ScoreDistribution
from nlgeval.items.stopping import certified_schedule
from nlgeval.parallel import ExecutionBackend, execution_record, get_backend
from nlgeval.progress import progress_bar
from nlgeval.provenance import run_record
from nlgeval.results import Result

THRESHOLDS = (0.10, 0.05, 0.01)


def min_items(sizes: np.ndarray, shares: np.ndarray, threshold: float) -> int | None:
    """Smallest size from which the rejection share stays strictly below ``threshold``
    (over the sizes studied); ``None`` when even the largest size is not below it (the
    paper's Table 3 rule, González-Corbelle et al. 2023).

    Examples
    --------
    >>> min_items(np.array([2, 3, 4, 5]), np.array([0.3, 0.04, 0.06, 0.02]), 0.05)
    5
    >>> min_items(np.array([2, 3]), np.array([0.3, 0.2]), 0.05) is None
    True
    """
    order = np.argsort(sizes)
    sizes, shares = np.asarray(sizes)[order], np.asarray(shares)[order]
    above = np.flatnonzero(shares >= threshold)
    if len(above) == 0:
        return int(sizes[0])
    last = above[-1]
    return int(sizes[last + 1]) if last + 1 < len(sizes) else None


def thresholds_table(curves: pd.DataFrame, thresholds: Sequence[float]) -> pd.DataFrame:
    """Table 3 in long form: ``distribution, method, threshold, min_items``.

    Parameters
    ----------
    curves : DataFrame
        Columns ``distribution, method, size, reject_share`` (the study's curves).
    thresholds : sequence of float
        Rejection shares the curve must stay strictly below.

    Returns
    -------
    DataFrame
        One row per distribution, method and threshold with its ``min_items``.

    Examples
    --------
    >>> curves = pd.DataFrame({"distribution": "d", "method": "rwor", "size": [2, 3, 4],
    ...                        "reject_share": [0.2, 0.07, 0.0]})
    >>> thresholds_table(curves, [0.1, 0.05])["min_items"].tolist()
    [3, 4]
    """
    rows = []
    for (dist, method), g in curves.groupby(["distribution", "method"], sort=False):
        for thr in thresholds:
            rows.append({"distribution": dist, "method": method, "threshold": float(thr),
                         "min_items": min_items(g["size"].to_numpy(),
                                                g["reject_share"].to_numpy(), thr)})
    return pd.DataFrame(rows, columns=["distribution", "method", "threshold", "min_items"])


@dataclass(frozen=True)
class StudyResult(Result):
    """Rejection-share curves (Figure 3) and minimum numbers of items (Table 3) of the
    resampling study of González-Corbelle et al. (2023); made by :func:`run_study`.

    Examples
    --------
    >>> from nlgeval.items.profiles import distribution_from_counts
    >>> res = run_study([distribution_from_counts("d", [3, 5, 4, 8])], sizes=[2, 10],
    ...                 replications=20, n_resamples=20, backend="serial")
    >>> sorted(res.to_dict())
    ['curves', 'distributions', 'parameters', 'run', 'seconds', 'thresholds']
    """

    curves: pd.DataFrame  # distribution, method, size, reject_share, replications, mean_draws
    thresholds: pd.DataFrame  # distribution, method, threshold, min_items
    distributions: tuple[ScoreDistribution, ...]
    parameters: dict[str, Any]
    seconds: float
    run: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "curves": self.curves[["distribution", "method", "size", "reject_share"]],
            "thresholds": self.thresholds,
            "distributions": [d.to_dict() for d in self.distributions],
            "parameters": self.parameters,
            "seconds": self.seconds,
            "run": self.run,
        }

    def table3(self) -> pd.DataFrame:
        """Wide Table 3: one row per distribution, columns ``<method> <threshold %>``."""
        t = self.thresholds.copy()
        t["column"] = t["method"] + " " + (t["threshold"] * 100).map(lambda v: f"{v:g}%")
        wide = t.pivot(index="distribution", columns="column", values="min_items")
        cols = [f"{m} {v * 100:g}%" for m in self.parameters["methods"]
                for v in self.parameters["thresholds"]]
        order = [d.name for d in self.distributions]
        wide = wide.reindex(index=order, columns=cols).reset_index()
        for c in cols:
            wide[c] = pd.to_numeric(wide[c], errors="coerce").astype(float)  # NaN = never
        return wide

    def paper_table(self):  # -> nlgeval.tables.PaperTable
        from nlgeval.tables import PaperTable

        p = self.parameters
        return PaperTable(
            data=self.table3(),
            caption=(
                f"Smallest number of items from which the share of replications rejecting "
                f"(discrete ANOVA, p < {p['alpha']:g}) stays below each threshold; "
                f"{p['replications']} replications, nboot = {p['nboot']}, seed {p['seed']}."
            ),
            label="tab:items-min",
            digits=0,
            notes=("-- : the share never stays below the threshold over the sizes studied.",),
        )

    def write(self, out_dir: str | Path) -> list[Path]:
        """Curves CSV, Table 3 (CSV/Markdown/LaTeX), the figure (PNG/PDF) and ``run.json``."""
        from nlgeval.items.plots import plot_curves
        from nlgeval.results import dumps

        out = Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        paths = [out / "curves.csv"]
        self.curves.to_csv(paths[0], index=False)
        paths += self.paper_table().write(out, "table3_min_items")
        paths += plot_curves(self.curves, out / "rejection_curves",
                             alpha=self.parameters["alpha"],
                             thresholds=self.parameters["thresholds"])
        (out / "run.json").write_text(dumps({**self.run, "parameters": self.parameters,
                                             "seconds": self.seconds}), encoding="utf-8")
        paths.append(out / "run.json")
        return paths


def run_study(
    distributions: Sequence[ScoreDistribution], *, methods: Sequence[str] = METHODS,
    sizes: Sequence[int] | None = None, replications: int = 1000, n_resamples: int = 500,
    alpha: float = 0.1, thresholds: Sequence[float] = THRESHOLDS, seed: int = 0,
    stopping: str = "certified", eps: float = 1e-10,
    backend: str | ExecutionBackend | None = None, workers: int | None = None,
    scheduler: str | None = None, chunk_size: int | None = None,
    checkpoint: str | Path | None = None, resume: bool = False, nboot: int | None = None,
) -> StudyResult:
    """Run the resampling study; see the module docstring.

    Parameters
    ----------
    distributions : sequence of ScoreDistribution
        Distributions to resample items from, named uniquely: a name keys the random streams
        (:func:`~nlgeval.items.cells.task_stream`), so others in the run never change its results.
    methods, sizes : sequence of str, sequence of int, optional
        Resampling methods; numbers of items (default 2..N-1 per distribution).
    replications, n_resamples, alpha, thresholds, seed : int, int, float, sequence, int
        Studies per cell, draws per test, level; rejection rates read off the curves; the seed.
    stopping, eps : str, float
        ``"certified"`` (default) or ``"exact"`` (only stops that cannot change the decision),
        and the certified stops' error bound.
    backend, workers, scheduler, chunk_size : optional
        Execution (none of it changes a number): ``"serial"``, ``"process"``, ``"dask"`` or a
        backend object (:mod:`nlgeval.parallel`); the Dask scheduler (``"local:N"`` or an
        address); cells sent to a worker at a time (default about 8 chunks per worker).
    checkpoint, resume, nboot : str or Path, bool, int
        A JSON-lines file of completed chunks; reuse its cells (:mod:`nlgeval.items.checkpoint`);
        the earlier name of ``n_resamples`` (deprecated).

    Returns
    -------
    StudyResult
        The rejection curves per distribution, method and size, with the run's parameters.

    Examples
    --------
    >>> from nlgeval.items.profiles import distribution_from_counts
    >>> d = distribution_from_counts("d", [3, 5, 4, 8])
    >>> kw = dict(sizes=[2, 5, 10], replications=40, n_resamples=40, seed=2)
    >>> a = run_study([d], backend="serial", **kw)
    >>> b = run_study([d], backend="process", workers=2, chunk_size=2, **kw)
    >>> a.curves["rejections"].tolist() == b.curves["rejections"].tolist()
    True
    """
    nboot = renamed_keyword("run_study", "nboot", nboot, "n_resamples", n_resamples)
    _check_arguments(distributions, methods, replications, nboot, alpha, stopping, chunk_size,
                     resume, checkpoint)
    eps_used = eps if stopping == "certified" else 0.0
    sched = certified_schedule(int(nboot), float(alpha), eps_used)
    keys, all_sizes = _cells(distributions, methods, sizes)
    study_id = {
        "distributions": [{"name": x.name, "counts": [int(c) for c in x.counts]}
                          for x in distributions],
        "methods": list(methods), "sizes": all_sizes, "replications": int(replications),
        "nboot": int(nboot), "alpha": float(alpha), "seed": int(seed), "stopping": stopping,
        "eps": float(eps_used), "streams": STREAMS,
    }
    be = get_backend(backend, workers, scheduler=scheduler)
    t0 = time.perf_counter()
    warm_up()
    template = _Chunk((), {}, int(seed), int(replications), int(nboot), float(alpha),
                      sched.step, sched.accept_at, sched.reject_at, sched.pz_min)
    results, execution = _run_cells(keys, distributions, template, be, chunk_size, checkpoint,
                                    study_id, resume)
    seconds = time.perf_counter() - t0
    curves = _curves(results, keys, distributions, methods)
    params = {
        "methods": list(methods), "replications": int(replications), "nboot": int(nboot),
        "alpha": float(alpha), "thresholds": [float(t) for t in thresholds], "seed": int(seed),
        "sizes": "2..N-1" if sizes is None else [int(s) for s in sizes],
        "stopping": stopping, "eps": eps_used, "streams": STREAMS,
    }
    return StudyResult(
        curves=curves, thresholds=thresholds_table(curves, thresholds),
        distributions=tuple(distributions), parameters=params, seconds=seconds,
        run=run_record(seed=int(seed), method="nlgeval.items.study.run_study",
                       numba_version=_numba_version(), execution=execution),
    )


def _check_arguments(
    distributions: Sequence[ScoreDistribution], methods: Sequence[str], replications: int,
    nboot: int, alpha: float, stopping: str, chunk_size: int | None, resume: bool,
    checkpoint: str | Path | None,
) -> None:
    """Reject bad arguments of :func:`run_study` before any work, naming the argument."""
    if not distributions:
        raise InputError("no score distributions given")
    for m in methods:
        if m not in METHODS:
            raise InputError(f"unknown resampling method {m!r}; use 'bootstrap' or 'rwor'")
    if replications < 1 or nboot < 1:
        raise InputError("replications and nboot must be positive")
    if not 0 < alpha < 1:
        raise InputError(f"alpha must lie in (0, 1), got {alpha}")
    if stopping not in ("certified", "exact"):
        raise InputError("stopping must be 'certified' or 'exact'")
    if chunk_size is not None and chunk_size < 1:
        raise InputError(f"chunk_size must be positive, got {chunk_size}")
    if resume and checkpoint is None:
        raise InputError("resume needs a checkpoint (the CLI: --resume needs --out)")
    seen: set[str] = set()
    for dist in distributions:
        if dist.name in seen:
            raise InputError(f"two distributions are named '{dist.name}'; give each its own "
                             "name (a name keys the distribution's random streams and its rows "
                             "of the output)")
        seen.add(dist.name)


def _cells(
    distributions: Sequence[ScoreDistribution], methods: Sequence[str],
    sizes: Sequence[int] | None,
) -> tuple[list[tuple[int, str, int]], list[list[int]]]:
    """Every (distribution position, method, size) cell, and the sizes of each distribution."""
    keys: list[tuple[int, str, int]] = []
    all_sizes = []
    for d, dist in enumerate(distributions):
        counts = np.asarray(dist.counts, dtype=np.int64)
        n = int(counts.sum())
        dist_sizes = list(range(2, n)) if sizes is None else [int(s) for s in sizes]
        for s in dist_sizes:
            if s < 2 or (s > n):
                raise InputError(f"size {s} is outside 2..{n} for distribution '{dist.name}'")
        all_sizes.append(dist_sizes)
        keys += [(d, m, s) for m in methods for s in dist_sizes]
    return keys, all_sizes


def _run_cells(
    keys: list[tuple[int, str, int]], distributions: Sequence[ScoreDistribution],
    template: _Chunk, be: ExecutionBackend, chunk_size: int | None,
    checkpoint: str | Path | None, study_id: dict[str, Any], resume: bool,
) -> tuple[dict[tuple[int, str, int], CellResult], dict[str, Any]]:
    """Run the cells not already in the checkpoint on ``be`` in chunks (``template`` holds the
    settings every chunk shares), appending completed chunks to the checkpoint; the results of
    every cell and the execution record."""
    from nlgeval.items.checkpoint import StudyCheckpoint

    results: dict[tuple[int, str, int], CellResult] = {}
    with contextlib.ExitStack() as stack:
        ckpt = None
        if checkpoint is not None:
            ckpt = stack.enter_context(StudyCheckpoint(checkpoint, study_id, resume=resume))
            wanted = set(keys)
            results.update({k: v for k, v in ckpt.done.items() if k in wanted})
        resumed = len(results)
        todo = [k for k in keys if k not in results]
        if isinstance(be, contextlib.AbstractContextManager) and todo:
            stack.enter_context(be)
        size = chunk_size or _auto_chunk_size(len(todo), be, template.replications)
        chunks = [
            replace(template, keys=tuple(part),
                    counts={d: np.asarray(distributions[d].counts, dtype=np.int64)
                            for d in sorted({k[0] for k in part})},
                    names={d: distributions[d].name for d in sorted({k[0] for k in part})})
            for part in (todo[i:i + size] for i in range(0, len(todo), size))
        ]
        be_name = getattr(be, "name", "")
        label = "items study" + ("" if be_name in ("", "serial") else f" ({be_name})")
        with progress_bar(len(keys), label) as bar:
            bar.advance(resumed)
            for cells in be.imap_unordered(_run_chunk, chunks):
                for cell in cells:
                    results[cell[0]] = cell
                if ckpt is not None:
                    ckpt.append(cells)
                bar.advance(len(cells))
        execution = execution_record(be, chunk_size=size, chunks=len(chunks),
                                     resumed_cells=resumed)
    return results, execution


def _curves(
    results: dict[tuple[int, str, int], CellResult], keys: list[tuple[int, str, int]],
    distributions: Sequence[ScoreDistribution], methods: Sequence[str],
) -> pd.DataFrame:
    """The rejection-share curves (Figure 3), one row per cell in (distribution, method, size)
    order."""
    rows = []
    order = {m: i for i, m in enumerate(methods)}
    for key in sorted(keys, key=lambda k: (k[0], order[k[1]], k[2])):
        (d, m, s), rejections, r, draws = results[key]
        rows.append({"distribution": distributions[d].name, "method": m, "size": s,
                     "reject_share": rejections / r, "rejections": rejections,
                     "replications": r, "mean_draws": draws})
    return pd.DataFrame(rows)


def _auto_chunk_size(n_cells: int, backend: ExecutionBackend, replications: int) -> int:
    """Cells per chunk: 1 in this process; elsewhere about 8 chunks per worker (load balance)
    and at most ~20,000 replications per chunk (progress, checkpoints, retries)."""
    if getattr(backend, "name", "") == "serial" or n_cells == 0:
        return 1
    per_worker = n_cells // (8 * max(1, backend.workers))
    return max(1, min(per_worker, 20_000 // max(1, replications)))


def _numba_version() -> str:
    from importlib import metadata

    try:
        return metadata.version("numba")
    except metadata.PackageNotFoundError:
        return "not installed"
