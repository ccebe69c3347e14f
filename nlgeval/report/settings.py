"""The settings of a metric-validation study, checked once: :class:`ValidationSettings`.

:func:`nlgeval.report.run_validation` and ``nlgeval validate`` build one
:class:`ValidationSettings`; every stage of the study (:mod:`nlgeval.report.stages`) reads its
options from it, and the resolved settings are written to ``run.json`` under ``settings``.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping, Sequence
from dataclasses import InitVar, dataclass, field
from typing import Any

from nlgeval.correlation.bootstrap import check_resample
from nlgeval.correlation.coefficients import check_coefficient
from nlgeval.correlation.levels import check_level
from nlgeval.deprecation import renamed_keyword
from nlgeval.errors import InputError
from nlgeval.parallel import BACKENDS
from nlgeval.report.meta_statistics import (
    PRESETS,
    STATISTICS,
    MetaSettings,
    check_statistic,
    expand_statistics,
    is_coefficient,
)
from nlgeval.results import Result

#: Multiple-comparison corrections (statsmodels ``multipletests`` methods): Holm (1979),
#: Benjamini & Hochberg (1995), Benjamini & Yekutieli (2001), Bonferroni, or none.
CORRECTIONS = ("holm", "bh", "by", "bonferroni", "none")
#: ``backend="auto"`` runs the criteria in worker processes from this much resampling work
#: ((n_resamples + permutations) x cells x metrics; WebNLG 2020 is 4.6e7): below it, starting
#: the workers costs more than the second core gives back
AUTO_PROCESS_WORK = 2_000_000
#: ... and up to this many scored outputs (cells x metrics) per criterion: every worker holds a
#: criterion's matrices and resampling chunks, so a larger study stays serial (the memory its
#: estimate checks before the statistics start)
AUTO_PROCESS_MAX_OUTPUTS = 1_000_000


def _names(value: Sequence[str] | str | None, what: str) -> tuple[str, ...] | None:
    if value is None:
        return None
    if isinstance(value, str):  # a bare string is one name, not a sequence of letters
        value = [value]
    try:
        return tuple(str(v) for v in value)
    except TypeError:
        raise InputError(f"{what} must be a list of names, got {value!r}") from None


@dataclass(frozen=True)
class ValidationSettings(Result):
    """Every option of the validation study of Reiter & Belz (2009), validated on creation.

    ``metrics=None``: nlgeval's default metric set (or every metric of given segment scores);
    ``criteria=None``: every rated criterion. ``statistics`` (overrides ``coefficients``): any
    coefficient plus the WMT meta-evaluation statistics of :mod:`nlgeval.report.meta`, or the
    presets ``wmt23``/``wmt24`` (which add the system and item levels). Each statistic is
    reported under the name given. The systems whose outputs are the references are left out
    of the metric-human correlations (automatic check; ``keep_reference_systems=True`` or
    ``exclude_systems=()`` keeps them), and so are ``exclude_systems`` and the human-written
    ``human_systems`` (rated as a human ceiling). ``bind`` maps a metric to the one criterion
    it is correlated with (a per-criterion judge). ``correction`` (``holm``, ``bh``, ``by``,
    ``bonferroni`` or ``none``; Holm 1979, Benjamini & Hochberg 1995, Benjamini & Yekutieli
    2001) corrects the correlation p-values across the family tested (metrics x criteria x
    levels, per statistic) and the metric comparisons behind the verdict. ``table9=False``
    skips the significant
    differences of the 2009 paper's Table 9. Bootstrap intervals follow Deutsch et al. (2021),
    the PERM-BOTH comparisons Deutsch, Dror & Roth (2021).

    ``n_resamples`` bootstrap resamples (``resamples``: its earlier name, deprecated, still
    accepted for one release with a :class:`DeprecationWarning`). After validation, ``levels``,
    ``coefficients`` and ``statistics`` hold the resolved, de-duplicated values (presets
    expanded), so ``ValidationSettings(**s.to_dict())`` equals ``s``.

    Examples
    --------
    >>> s = ValidationSettings(levels=["segment", "sys"], statistics=["pearson", "wmt24"])
    >>> s.levels, s.statistics, s.coefficients
    (('segment', 'system', 'item'), ('pearson', 'soft_pairwise_accuracy', 'acc_eq'), ('pearson',))
    >>> ValidationSettings(**s.to_dict()) == s
    True
    >>> ValidationSettings(alpha=1.5)
    Traceback (most recent call last):
    ...
    nlgeval.errors.InputError: alpha must be between 0 and 1, got 1.5
    """

    metrics: tuple[str, ...] | None = None
    criteria: tuple[str, ...] | None = None
    levels: tuple[str, ...] = ("segment", "system")
    coefficients: tuple[str, ...] = ("pearson", "spearman", "kendall")
    statistics: tuple[str, ...] | None = None
    n_resamples: int = 1000
    resample: str = "both"
    normalise: str = "none"
    seed: int = 0
    confidence_level: float = 0.95
    alpha: float = 0.05
    permutations: int = 1000
    spa_permutations: int = 1000
    epsilon: Mapping[str, float] = field(default_factory=dict)
    exclude_systems: tuple[str, ...] | None = None
    human_systems: tuple[str, ...] = ()
    keep_reference_systems: bool = False
    bind: Mapping[str, str] = field(default_factory=dict)
    correction: str = "holm"
    lower_is_better: tuple[str, ...] = ()
    min_coverage: float = 0.5
    table9: bool = True
    cache: bool = True
    cache_dir: str | None = None
    backend: str = "auto"
    workers: int | None = None
    scheduler: str | None = None
    #: the earlier name of ``n_resamples`` (deprecated; not a field, so not in ``to_dict``)
    resamples: InitVar[int | None] = None

    def __post_init__(self, resamples: int | None = None) -> None:
        put = object.__setattr__  # frozen: normalise the fields once, here
        put(self, "n_resamples", renamed_keyword("ValidationSettings", "resamples", resamples,
                                                 "n_resamples", self.n_resamples, stacklevel=4))
        for name in ("metrics", "criteria", "exclude_systems"):
            put(self, name, _names(getattr(self, name), name))
        put(self, "lower_is_better", _names(self.lower_is_better, "lower_is_better") or ())
        put(self, "human_systems", _names(self.human_systems, "human_systems") or ())
        put(self, "bind", {str(k): str(v) for k, v in dict(self.bind or {}).items()})
        levels = [check_level(v) for v in _names(self.levels, "levels") or ()]
        if not levels:
            raise InputError("levels: name at least one level (e.g. segment, system)")
        stats = _names(self.statistics, "statistics")
        if stats is not None:
            if any(n.strip().lower() in PRESETS for n in stats):
                stats = tuple(expand_statistics(stats))
                # the WMT leaderboards rest on system-level and item-grouped statistics
                levels += ["system", "item"]
            labels: dict[str, str] = {}
            for name in stats:  # the first spelling of each statistic is its label
                labels.setdefault(check_statistic(name), name.strip())
            put(self, "statistics", tuple(labels.values()))
            put(self, "coefficients", tuple(v for k, v in labels.items() if is_coefficient(k)))
        else:
            coefs = tuple(dict.fromkeys(check_coefficient(c) for c in
                                        _names(self.coefficients, "coefficients") or ()))
            put(self, "coefficients", coefs)
            put(self, "statistics", coefs)
        if not self.statistics:
            raise InputError("no statistics to compute")
        put(self, "levels", tuple(dict.fromkeys(levels)))
        self._check_names()
        put(self, "resample", check_resample(self.resample))
        put(self, "epsilon", {str(k): float(v) for k, v in dict(self.epsilon or {}).items()})
        self._check_numbers()

    def _check_names(self) -> None:
        """An empty criteria list, or a statistic defined at none of the levels, would give a
        study without a single correlation."""
        if self.criteria is not None and not self.criteria:
            raise InputError("criteria names no criterion (leave it out for every rated one)")
        for label in self.statistics or ():
            defined = STATISTICS[check_statistic(label)].levels
            if not set(defined) & set(self.levels):
                raise InputError(f"statistics: {label!r} is not defined at the level(s) asked "
                                 f"for ({', '.join(self.levels)}); it is at: "
                                 f"{', '.join(defined)} (add one to the levels)")

    def _check_numbers(self) -> None:
        if self.correction not in CORRECTIONS:
            raise InputError(f"correction must be one of {', '.join(CORRECTIONS)}, "
                             f"got {self.correction!r}")
        if self.normalise not in ("none", "z"):
            raise InputError(f"normalise must be 'none' or 'z', got {self.normalise!r}")
        for name in ("n_resamples", "permutations", "spa_permutations", "seed"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < 0:
                raise InputError(f"{name} must be a whole number >= 0, got {v!r}")
        for name in ("confidence_level", "alpha"):
            if not 0 < float(getattr(self, name)) < 1:
                raise InputError(f"{name} must be between 0 and 1, got {getattr(self, name)}")
        if self.scheduler is not None and self.backend != "dask":
            object.__setattr__(self, "backend", "dask")
        if self.backend not in ("auto", *BACKENDS):
            raise InputError(f"backend must be one of {', '.join(('auto', *BACKENDS))}, "
                             f"got {self.backend!r}")
        if self.workers is not None and (isinstance(self.workers, bool)
                                         or not isinstance(self.workers, int)
                                         or self.workers < 1):
            raise InputError(f"workers must be a whole number >= 1, got {self.workers!r}")
        if not 0 <= float(self.min_coverage) <= 1:
            raise InputError(f"min_coverage must be between 0 and 1, got {self.min_coverage}")

    # ------------------------------------------------------------------ derived views

    @property
    def labels(self) -> dict[str, str]:
        """Canonical statistic name -> the name it is reported under.

        >>> ValidationSettings(statistics=["tau_b", "acc23"]).labels
        {'kendall': 'tau_b', 'acc_23': 'acc23'}
        """
        return {check_statistic(s): s for s in self.statistics or ()}

    @property
    def canonical_coefficients(self) -> list[str]:
        """The correlation coefficients, canonical names (``kendall`` for ``tau_b``).

        >>> ValidationSettings(coefficients=["rho", "tau"]).canonical_coefficients
        ['spearman', 'kendall']
        """
        return [check_statistic(c) for c in self.coefficients]

    @property
    def meta_statistics(self) -> list[str]:
        """The WMT meta-evaluation statistics (canonical names), coefficients left out.

        >>> ValidationSettings(statistics=["wmt24"]).meta_statistics
        ['soft_pairwise_accuracy', 'acc_eq']
        """
        return [c for c in self.labels if not is_coefficient(c)]

    @property
    def comparison_coefficient(self) -> str:
        """The coefficient metrics are compared on: the first Pearson or Spearman, else the
        first coefficient (Pearson when there is none).

        >>> ValidationSettings(coefficients=["kendall", "spearman"]).comparison_coefficient
        'spearman'
        """
        coefs = self.canonical_coefficients
        return next((c for c in coefs if c in ("pearson", "spearman")),
                    coefs[0] if coefs else "pearson")

    def meta_settings(self) -> MetaSettings:
        """The options of the meta-evaluation stage (:mod:`nlgeval.report.meta`).

        >>> ValidationSettings(seed=3).meta_settings().seed
        3
        """
        return MetaSettings(permutations=self.permutations,
                            spa_permutations=self.spa_permutations,
                            n_resamples=self.n_resamples, resample=self.resample,
                            confidence_level=self.confidence_level, seed=self.seed,
                            epsilon=dict(self.epsilon) if self.epsilon else None)

    def for_study(self, n_criteria: int, n_cells: int, n_metrics: int) -> ValidationSettings:
        """The settings with ``backend="auto"`` resolved for a study of ``n_criteria`` criteria
        and ``n_metrics`` metrics on ``n_cells`` (systems x items) cells: ``process`` (one task
        per criterion on every core) when there are two or more cores and criteria and the
        resampling work is large enough to pay for the worker processes (about
        :data:`AUTO_PROCESS_WORK` resampled cells) and the data small enough to be held twice
        (:data:`AUTO_PROCESS_MAX_OUTPUTS`), else ``serial``. Either gives the same numbers;
        run.json records the one used.

        >>> s = ValidationSettings(n_resamples=20, permutations=0).for_study(5, 100, 2)
        >>> s.backend
        'serial'
        """
        if self.backend != "auto":
            return self
        work = (self.n_resamples + self.permutations) * n_cells * n_metrics
        many = n_criteria >= 2 and (os.cpu_count() or 1) >= 2 and work >= AUTO_PROCESS_WORK \
            and n_cells * n_metrics <= AUTO_PROCESS_MAX_OUTPUTS
        return self.replace(backend="process" if many else "serial")

    def replace(self, **changes: Any) -> ValidationSettings:
        """A copy with ``changes`` (validated again).

        >>> ValidationSettings().replace(seed=5).seed
        5
        """
        return dataclasses.replace(self, **changes)
