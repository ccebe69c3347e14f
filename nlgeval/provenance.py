"""What a report must record to be reproducible: package versions, seeds, timings."""

from __future__ import annotations

import platform
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from importlib import metadata
from typing import Any

_PACKAGES = (
    "nlgeval", "numpy", "scipy", "pandas", "statsmodels", "sacrebleu", "rouge-score", "nltk",
    "matplotlib", "krippendorff", "SQLAlchemy", "flask",
)


def package_versions(extra: tuple[str, ...] = ()) -> dict[str, str]:
    """Installed versions of the packages nlgeval's numbers depend on.

    Examples
    --------
    >>> versions = package_versions()
    >>> sorted(versions)[:3], versions["numpy"] != "not installed"
    (['SQLAlchemy', 'flask', 'krippendorff'], True)
    """
    out = {"python": sys.version.split()[0], "platform": platform.platform()}
    for name in _PACKAGES + extra:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = "not installed"
    return out


def run_record(**fields: Any) -> dict[str, Any]:
    """A dict for ``run.json``: UTC time, versions, plus whatever the caller adds (seeds...).

    Examples
    --------
    >>> record = run_record(seed=1, resamples=1000)
    >>> sorted(record)
    ['created_utc', 'resamples', 'seed', 'versions']
    """
    return {
        "created_utc": datetime.now(UTC).isoformat(timespec="seconds"),
        "versions": package_versions(),
        **fields,
    }


class Timings(dict[str, float]):
    """Named wall-clock timings in seconds: ``with timings.step("scoring"): ...``.

    Examples
    --------
    >>> timings = Timings()
    >>> with timings.step("scoring"):
    ...     total = sum(range(1000))
    >>> list(timings), timings["scoring"] >= 0
    (['scoring'], True)
    """

    @contextmanager
    def step(self, name: str) -> Iterator[None]:
        t0 = time.perf_counter()
        try:
            yield
        finally:
            self[name] = self.get(name, 0.0) + time.perf_counter() - t0
