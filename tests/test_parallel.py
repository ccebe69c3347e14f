"""The package-wide execution layer (nlgeval.parallel): task streams are numpy's spawned
SeedSequences, results come back in task order whatever order they finish in, the progress is
counted in task weights, and bad options are input errors naming the option. The Dask backend
itself is exercised by tests/test_items_dask.py, tests/test_score_dask.py and
tests/test_human_power.py."""

from __future__ import annotations

import time

import numpy as np
import pytest

from nlgeval.errors import InputError
from nlgeval.parallel import (
    ProcessPoolBackend,
    SerialBackend,
    chunks,
    execution_record,
    get_backend,
    map_tasks,
    parse_scheduler,
    task_seed,
)


def _slow_square(x: int) -> int:
    time.sleep(0.05 * (x % 3 == 0))  # make some tasks finish out of order
    return x * x


def _draw(key: tuple[int, int]) -> float:
    return float(np.random.default_rng(task_seed(5, *key)).random())


def test_task_seed_is_numpys_spawn_tree() -> None:
    for d, m in [(0, 0), (3, 1), (2, 7)]:
        root = np.random.SeedSequence(5)  # spawn() counts children: a fresh root each time
        spawned = root.spawn(d + 1)[d].spawn(m + 1)[m]
        assert np.array_equal(task_seed(5, d, m).generate_state(4),
                              spawned.generate_state(4))
    assert not np.array_equal(task_seed(5, 0, 1).generate_state(4),
                              task_seed(5, 1, 0).generate_state(4))


def test_map_tasks_keeps_task_order_and_counts_weights() -> None:
    tasks = list(range(12))
    done: list[float] = []
    out = map_tasks(_slow_square, tasks, ProcessPoolBackend(2), weights=[2.0] * 12,
                    advance=done.append)
    assert out == [x * x for x in tasks]
    assert sum(done) == 24.0 and len(done) == 12
    keys = [(i, j) for i in range(3) for j in range(4)]
    assert map_tasks(_draw, keys, "process") == map_tasks(_draw, keys, SerialBackend())
    with pytest.raises(ValueError, match="one entry per task"):
        map_tasks(_slow_square, tasks, "serial", weights=[1.0])


def test_options_and_errors() -> None:
    assert parse_scheduler(None) == ("local", None)
    assert parse_scheduler(" local ") == ("local", None)
    assert parse_scheduler("scheduler.json") == ("address", "scheduler.json")
    with pytest.raises(InputError, match="local:N"):
        parse_scheduler("local:two")
    with pytest.raises(InputError, match="at least 1 worker"):
        parse_scheduler("local:0")
    with pytest.raises(InputError, match="unknown backend 'ray'"):
        get_backend("ray")
    with pytest.raises(InputError, match="--scheduler is for the dask backend"):
        get_backend("process", scheduler="local:2")
    assert get_backend(workers=1).name == "serial"
    assert execution_record(ProcessPoolBackend(3)) == {"backend": "process", "workers": 3}
    assert chunks(0, 4) == [] and chunks(4, 4) == [range(0, 4)]
    with pytest.raises(InputError, match="chunk size"):
        chunks(3, 0)
