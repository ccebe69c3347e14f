"""``nlgeval serve --processes N``: several server processes on one port stay correct.

What could break when requests of one study are served by several processes: the open
sign-up link handing one trial set out twice (or one participant two sets), an answer
stored twice or lost, a worker left serving after its parent died. Each is checked against
the database (the one source of truth) on the real server, on SQLite (whose write lock is
the only thing serialising the processes' transactions). Bounded: step limits and
deadlines, loopback only.
"""

from __future__ import annotations

import json
import os
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest
import requests
from experiment_helpers import (
    HttpEvaluator,
    ServerProcess,
    join_as,
    race_submit,
    write_experiment,
    writers_order,
)
from sqlalchemy import func, select

from nlgeval.experiment import create_experiment
from nlgeval.experiment.prefork import run_workers
from nlgeval.experiment.storage import Evaluator, Judgement, Store, default_url

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork (POSIX)")

CROWD = '''
[crowd]
completion_code = "C0DE42"
join_limit = 0
'''


def _timed_server(d: Path, processes: int = 2) -> ServerProcess:
    """A server whose processes each report the requests they served (server timing)."""
    return ServerProcess(d, 0, threads=4, processes=processes,
                         env={"NLGEVAL_SERVER_TIMING": str(d / "timing.json")}).start()


def _served_per_process(d: Path) -> list[int]:
    return sorted(len(json.loads(f.read_text())["app_wall_ms"])
                  for f in d.glob("timing.json.*"))


def test_open_link_across_processes_hands_each_set_out_once(tmp_path: Path) -> None:
    d = write_experiment(tmp_path / "crowd", systems=3, items=3, evaluators=12, practice=0,
                         extra=CROWD)
    made = create_experiment(d)
    store = Store(default_url(d))
    try:
        jt = store.meta()["join_token"]
    finally:
        store.dispose()
    srv = _timed_server(d)
    try:
        # 20 participants race for 12 sets; then one participant from 8 browsers at once
        with ThreadPoolExecutor(20) as pool:
            got = list(pool.map(lambda k: join_as(srv.base, jt, f"p{k}"), range(20)))
            again = list(pool.map(lambda _k: join_as(srv.base, jt, "p3"), range(8)))
    finally:
        srv.stop()
    handed = [t for t in got if t]
    assert len(handed) == len(set(handed)) == 12  # every set once, none twice
    assert set(handed) == set(made.evaluators["token"])
    assert got.count("") == 8  # the rest found the study full
    assert set(again) == {got[3]}  # a participant seen before gets their own set back
    store = Store(default_url(d))
    try:
        with store.read() as s:
            owners = dict(s.execute(select(Evaluator.token, Evaluator.participant)).all())
    finally:
        store.dispose()
    assert {owners[t] for t in handed} == {f"p{k}" for k in range(20) if got[k]}
    served = _served_per_process(d)
    assert len(served) == 2 and min(served) > 0  # both processes served joins
    assert sum(served) == 2 * (20 + 8) + 1  # + the health check that saw the server up


@pytest.mark.slow
def test_50_evaluators_on_two_processes_no_lost_or_duplicated_judgements(tmp_path: Path) -> None:
    n_ev, n_trials = 50, 6  # 5 items + 1 practice
    d = write_experiment(tmp_path / "load", systems=5, items=5, evaluators=n_ev, practice=1)
    tokens = list(create_experiment(d).evaluators["token"])
    srv = _timed_server(d)
    try:
        evs = [HttpEvaluator(srv.base, t) for t in tokens]
        assert evs[0].step(np.random.default_rng(0)) == "start"
        # a frantic 8-fold submit of one trial, spread over the processes: stored once
        assert race_submit(evs[0], np.random.default_rng(0), 8) == [303] * 8
        errors: list[BaseException] = []
        deadline = time.monotonic() + 120

        def work(k: int) -> None:
            rng = np.random.default_rng([4, k])
            for _ in range(100):
                if time.monotonic() > deadline:
                    return
                try:
                    if evs[k].step(rng) == "done":
                        return
                except Exception as exc:
                    errors.append(exc)
                    return

        with ThreadPoolExecutor(n_ev) as pool:
            list(pool.map(work, range(n_ev)))
    finally:
        srv.stop()
    assert not errors, errors[:3]
    acked = [t for e in evs for t in e.acked]
    assert len(acked) == len(set(acked)) == n_ev * n_trials
    store = Store(default_url(d))
    try:
        with store.read() as s:
            stored = dict(s.execute(select(Judgement.trial_id, func.count())
                                    .group_by(Judgement.trial_id)).all())
    finally:
        store.dispose()
    assert set(stored) == set(acked)  # nothing lost, nothing extra
    assert set(stored.values()) == {2}  # nothing duplicated (2 criteria)
    served = _served_per_process(d)
    assert len(served) == 2 and min(served) > 0  # both processes served


def test_sqlite_writers_of_two_processes_are_serialised(tmp_path: Path) -> None:
    # two Stores on one file stand for two server processes (no shared thread lock); the
    # second's transaction must not start (and read) while the first's runs
    url = default_url(tmp_path)
    a, b = Store(url), Store(url)
    try:
        a.create_schema()
        for store in (a, b):
            store.share_writes()
        assert writers_order(a, b) == ["released", "a ends", "b in"]
    finally:
        a.dispose()
        b.dispose()


def test_worker_dying_stops_the_others_and_is_reported() -> None:
    def work(i: int) -> None:
        if i == 0:
            os._exit(3)
        time.sleep(60)  # stopped by the parent long before

    t0 = time.monotonic()
    assert run_workers(2, work) == 3
    assert time.monotonic() - t0 < 30


def test_workers_do_not_outlive_a_killed_parent(tmp_path: Path) -> None:
    d = write_experiment(tmp_path / "orphans", evaluators=3)
    create_experiment(d)
    srv = ServerProcess(d, 0, threads=2, processes=2).start()
    assert srv.proc is not None
    children = [int(p) for p in
                Path(f"/proc/{srv.proc.pid}/task/{srv.proc.pid}/children").read_text().split()
                ] if Path(f"/proc/{srv.proc.pid}/task").is_dir() else []
    srv.kill()  # SIGKILL: the parent cannot forward anything
    if not children:
        pytest.skip("no /proc children list on this system")
    end = time.monotonic() + 20
    alive = children
    while alive and time.monotonic() < end:
        time.sleep(0.1)
        alive = [p for p in alive if _alive(p)]
    assert not alive, f"worker(s) {alive} still running after the parent was killed"
    with pytest.raises(requests.ConnectionError):
        requests.get(srv.base + "/healthz", timeout=2)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # a zombie (exited, not yet reaped by init) counts as gone
    stat = Path(f"/proc/{pid}/stat")
    return not (stat.is_file() and stat.read_text().rsplit(")", 1)[1].split()[0] == "Z")


def test_one_process_serves_and_reports_its_timing(tmp_path: Path) -> None:
    d = write_experiment(tmp_path / "one", evaluators=3)
    create_experiment(d)
    srv = _timed_server(d, processes=1)
    try:
        assert requests.get(srv.base + "/healthz", timeout=30).text == "ok"
    finally:
        srv.stop()
    assert _served_per_process(d) == [2]  # the start-up health check and ours
