"""Memory a validation study needs, checked before the work starts (issues 29 and 31).

The study holds its scores a few times over (the file as read, the tidy long frame, the aligned
(systems x items) matrices of each criterion) and each statistic works on one chunk at a time:
the bootstrap draws its item indices in chunks of rows and computes Pearson in blocks of 32
resamples, the permutation tests draw their swap masks a few million cells at a time. So the
memory grows linearly with the number of scored outputs and not with the number of resamples:
:func:`estimate_study_memory` is a linear model of that: the lower of two lines fitted to the
peak resident memory of studies of 40,000 to 5 million scored outputs with 3 and 10 metrics
(``benchmarks/bench_scale_memory.py``; docs/scale.md). The peak grows more slowly beyond a
million outputs than below (the statistics' fixed-size chunks and the interpreter weigh less
and less), so one line through the small studies overstates a large one and one line through
the large studies overstates a small one; each line lies 10-15 % above the measured peaks it
was fitted to.
:func:`check_study_memory` refuses, in one line, a study that will not fit in the memory that
is free (or in ``NLGEVAL_MEMORY_LIMIT``, e.g. ``4GB``), naming the estimate and what would fit.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

from nlgeval.errors import InputError

#: bytes per value of the study (one metric's score or one criterion's human score of one
#: output: the file as read, the tidy frames, the aligned matrices and the statistics' chunks)
#: and the fixed part (interpreter, libraries); fitted to the peak resident memory (VmHWM) of
#: `nlgeval validate` (default statistics, 1 criterion) measured with
#: benchmarks/bench_scale_memory.py on 2026-11-26 at 09:20-09:46 (docs/scale.md, "The memory
#: model refitted"): the line through 1.15 x the peak of 20 x 2,000 outputs x (3 metrics + 1
#: criterion) = 0.16 M values (473 MiB) and 1.1 x that of 20 x 10,000 (0.8 M values, 662 MiB)
BYTES_PER_VALUE = 301
BASE_BYTES = 499 * 2**20

#: the second line, for large studies: through 1.1 x the peaks of 20 x 25,000 outputs with 10
#: metrics (5.5 M values, 1,462 MiB) and of 20 x 250,000 with 3 metrics (20 M values,
#: 3,262 MiB); it lies 7-16 % above the peaks of 20 x 50,000 and 20 x 125,000 (3 metrics), and
#: the small line 34 % above that of 20 x 10,000 with 10 metrics (2.2 M values, 841 MiB)
LARGE_BYTES_PER_VALUE = 144
LARGE_BASE_BYTES = 859 * 2**20

_UNITS = {"": 1, "b": 1, "k": 2**10, "kb": 2**10, "m": 2**20, "mb": 2**20, "g": 2**30,
          "gb": 2**30, "t": 2**40, "tb": 2**40}


@dataclass(frozen=True)
class MemoryEstimate:
    """Estimated peak memory (bytes) of a study of ``systems x items`` outputs.

    Examples
    --------
    >>> est = estimate_study_memory(20, 250_000, metrics=3, criteria=1)
    >>> est.scored_outputs, format_bytes(est.bytes)
    (5000000, '3.5 GB')
    """

    bytes: int
    systems: int
    items: int
    metrics: int
    criteria: int

    @property
    def scored_outputs(self) -> int:
        """Outputs scored: systems x items."""
        return self.systems * self.items


def estimate_study_memory(systems: int, items: int, metrics: int, criteria: int
                          ) -> MemoryEstimate:
    """The linear model of a validation study's peak memory (see the module docstring).

    Examples
    --------
    >>> format_bytes(estimate_study_memory(10, 1_000, 3, 2).bytes)
    '0.5 GB'
    """
    values = int(systems) * int(items) * (int(metrics) + max(1, int(criteria)))
    need = min(_line(BASE_BYTES, BYTES_PER_VALUE, values),
               _line(LARGE_BASE_BYTES, LARGE_BYTES_PER_VALUE, values))
    return MemoryEstimate(int(need), int(systems), int(items), int(metrics), int(criteria))


def _line(base: int, per_value: int, values: int) -> int:
    return base + values * per_value


def _values_within(free: int, base: int, per_value: int) -> int:
    """The most values a line keeps within ``free`` bytes (0 when none)."""
    return max(0, (free - base) // per_value)


def format_bytes(n: float) -> str:
    """Bytes in GB (GiB, one decimal), as the messages give them.

    Examples
    --------
    >>> format_bytes(3 * 2**30)
    '3.0 GB'
    """
    return f"{n / 2**30:.1f} GB"


def parse_bytes(text: str) -> int:
    """``"4GB"``, ``"512 MB"``, ``"1.5g"`` or a number of bytes -> bytes.

    Examples
    --------
    >>> parse_bytes("4GB"), parse_bytes("512 mb"), parse_bytes("1000")
    (4294967296, 536870912, 1000)
    """
    m = re.fullmatch(r"\s*([0-9]*\.?[0-9]+)\s*([a-zA-Z]*)\s*", str(text))
    if not m or m.group(2).lower() not in _UNITS:
        raise InputError(f"NLGEVAL_MEMORY_LIMIT: expected an amount such as 4GB or 512MB, "
                         f"got {text!r}")
    return int(float(m.group(1)) * _UNITS[m.group(2).lower()])


def available_memory() -> int | None:
    """Bytes this study may use: ``NLGEVAL_MEMORY_LIMIT`` if set, else the memory the
    operating system reports as available (``MemAvailable``; None where unknown).

    Examples
    --------
    >>> isinstance(available_memory(), (int, type(None)))
    True
    """
    limit = os.environ.get("NLGEVAL_MEMORY_LIMIT", "").strip()
    if limit:
        return parse_bytes(limit)
    try:
        with open("/proc/meminfo", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        return None
    return None


def check_study_memory(est: MemoryEstimate, available: int | None = None) -> None:
    """Raise :class:`InputError` (one line: the estimate and the options that fit) when the
    study's estimated memory exceeds ``available`` (default :func:`available_memory`).

    Examples
    --------
    >>> est = estimate_study_memory(20, 250_000, metrics=3, criteria=1)
    >>> try:
    ...     check_study_memory(est, available=3 * 2**30)
    ... except InputError as err:
    ...     print(str(err)[:62])
    this study needs an estimated 3.5 GB of memory (20 systems x 2
    """
    free = available_memory() if available is None else available
    if free is None or est.bytes <= free:
        return
    # the estimate is the lower line, so a study fits when either line does
    values = max(_values_within(free, BASE_BYTES, BYTES_PER_VALUE),
                 _values_within(free, LARGE_BASE_BYTES, LARGE_BYTES_PER_VALUE))
    fit_items = values // ((est.metrics + max(1, est.criteria)) * max(1, est.systems))
    sample = (f"validate a sample of at most {fit_items:,} items, " if fit_items > 0
              else "")  # below the fixed overhead no sample fits: do not suggest 0 items
    raise InputError(
        f"this study needs an estimated {format_bytes(est.bytes)} of memory ({est.systems} "
        f"systems x {est.items:,} items x {est.metrics} metrics x {est.criteria} criteria) "
        f"and {format_bytes(free)} are available: {sample}"
        "use fewer metrics per run, or run on a machine or Dask workers "
        "(--backend dask --scheduler ADDRESS) with more memory; the number of resamples does "
        "not change it")
