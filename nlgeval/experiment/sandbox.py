"""A throw-away experiment to try functions on: the example study of
:func:`~nlgeval.experiment.example.write_example`, created in a temporary folder and removed
afterwards. For docstring examples and tests of what reads an experiment database."""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Literal

from nlgeval.experiment.build import create_experiment
from nlgeval.experiment.config import ExperimentConfig, load_config
from nlgeval.experiment.example import write_example
from nlgeval.experiment.storage import Store


@contextmanager
def example_experiment(
    mode: Literal["absolute", "relative", "triangle"] = "absolute", *, evaluators: int = 3
) -> Iterator[tuple[Store, ExperimentConfig]]:
    """The example study (``mode``) created for ``evaluators`` evaluators in a temporary
    folder: yields its database and configuration, with nothing judged yet; the database is
    closed and the folder removed on leaving the ``with`` block.

    Examples
    --------
    >>> with example_experiment("relative") as (store, cfg):
    ...     print(cfg.mode, store.meta()["systems"])
    relative ["human", "neural", "template"]
    """
    with tempfile.TemporaryDirectory() as tmp:
        made = create_experiment(write_example(Path(tmp) / "study", mode),
                                 evaluators=evaluators)
        store = Store(made.database)
        try:
            yield store, load_config(made.directory)
        finally:
            store.dispose()
