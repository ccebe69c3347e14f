"""Benchmark: the whole crowd path under a join burst (SQLite; PostgreSQL too).

50 participants arrive within a few seconds (``--burst-s``, uniformly at random) through the
open sign-up link, as a crowd platform sends them (``/join/<token>?PROLIFIC_PID=..&STUDY_ID=..
&SESSION_ID=..``): the sign-up page, the join (which claims a trial set in one serialised
transaction), the introduction with consent, every trial (a valid random answer), the exit
questionnaire and the thank-you page, each participant in its own thread with its own cookie
session and keep-alive connection, no think time (a closed loop, harsher than people). The
server is ``nlgeval serve`` started as a user would, with ``serve``'s defaults unless
``--processes``/``--threads`` say otherwise.

Prints p50/p95/p99 latency over all requests and over the join requests alone, requests/s,
the server's CPU time per request and the machine's load average (1 minute) before and after,
and checks the database afterwards: every acknowledged trial has exactly one judgement per
criterion (0 lost, 0 duplicated), every participant got a set of their own and no set was
handed out twice.

The study sets ``join_limit = 0``: every participant of the benchmark comes from 127.0.0.1,
and the per-address sign-up limit (10 per 10 minutes by default) would otherwise turn the
eleventh away, as it should for a real crowd arriving from one address; and
``min_trial_ms = 0``: these participants answer in milliseconds, and their completion codes
would otherwise be held back as too fast.

Run: .venv/bin/python benchmarks/bench_crowd_path.py [--participants 50] [--burst-s 3]
     [--processes 1] [--threads 4] [--no-postgres]
"""

from __future__ import annotations

import argparse
import html
import os
import re
import tempfile
import threading
import time
from pathlib import Path

import numpy as np
import pandas as pd
from bench_experiment_load import (
    CRITERIA,
    Evaluator,
    answer,
    cpu_seconds,
    server,
    throwaway_postgres,
)

CROWD = '''
[crowd]
consent = "You agree that your answers are stored."
completion_code = "BENCH1"
join_limit = 0
min_trial_ms = 0
'''
_CSRF = re.compile(r'name="csrf" value="([^"]+)"')


def write_study(d: Path, systems: int, items: int, participants: int) -> None:
    d.mkdir(parents=True)
    rows = [{"system": f"S{s}", "item": f"i{i}", "text": f"Output {s} for item {i}. " * 5}
            for i in range(1, items + 2) for s in range(1, systems + 1)]
    pd.DataFrame(rows).to_csv(d / "outputs.csv", index=False)
    items_list = str([f"i{i}" for i in range(1, items + 1)]).replace("'", '"')
    (d / "experiment.toml").write_text(
        f'title = "crowd"\nevaluators = {participants}\npractice = 1\n'
        f'practice_items = ["i{items + 1}"]\nitems = {items_list}\n' + CRITERIA + CROWD,
        encoding="utf-8")


class Participant(Evaluator):
    """A crowd participant: joins through the sign-up link, then works through the set."""

    def __init__(self, base: str, jt: str, k: int, delay_s: float) -> None:
        super().__init__(base, "", 0.0, k)
        self.jt, self.k, self.delay_s = jt, k, delay_s
        self.join_lat: list[float] = []

    def join(self) -> bool:
        q = f"PROLIFIC_PID=bench{self.k:03d}&STUDY_ID=st&SESSION_ID=se{self.k:03d}"
        status, page = self.req("GET", f"/join/{self.jt}?{q}")
        m = _CSRF.search(page)
        if status != 200 or m is None:
            self.error = f"join page {status}"
            return False
        data = {"csrf": html.unescape(m.group(1)), "PROLIFIC_PID": f"bench{self.k:03d}",
                "STUDY_ID": "st", "SESSION_ID": f"se{self.k:03d}"}
        self.conn.request("POST", f"/join/{self.jt}", body=_form(data),
                          headers=self._headers(form=True))
        t0 = time.perf_counter()
        r = self.conn.getresponse()
        r.read()
        self.lat.append(time.perf_counter() - t0)
        self.join_lat += self.lat[-2:]
        if r.status != 303:
            self.error = f"join {r.status}"
            return False
        self.token = r.headers["Location"].rsplit("/", 1)[1]
        return True

    def _headers(self, form: bool = False) -> dict[str, str]:
        from bench_experiment_load import HEADERS

        h = dict(HEADERS)
        if form:
            h["Content-Type"] = "application/x-www-form-urlencoded"
        if self.cookies:
            h["Cookie"] = "; ".join(f"{k}={v}" for k, v in self.cookies.items())
        return h

    def run(self, deadline: float) -> None:  # type: ignore[override]
        time.sleep(self.delay_s)
        try:
            if not self.join():
                return
            for _ in range(200):
                if time.monotonic() > deadline:
                    self.error = "deadline"
                    return
                status, page = self.req("GET", f"/e/{self.token}")
                if status != 200:
                    self.error = f"GET {status}"
                    return
                if "completion-code" in page or "<form" not in page:
                    if "completion-code" not in page:
                        self.error = "no completion code on the last page"
                    return
                action, data = answer(page, self.rng)
                if 'name="consent"' in page:
                    data["consent"] = "1"
                status, _page = self.req("POST", action, data=data)
                if status != 303:
                    self.error = f"POST {action} -> {status}"
                    return
                if "/trial/" in action:
                    self.acked.append(int(action.rsplit("/", 1)[1]))
        except Exception as exc:  # report, do not hang
            self.error = repr(exc)


def _form(data: dict[str, str]) -> str:
    from urllib.parse import urlencode

    return urlencode(data)


def _check(database: str, participants: list[Participant]) -> dict[str, int]:
    """Lost/duplicated judgements and sets handed out twice, from the database."""
    from sqlalchemy import func, select

    from nlgeval.experiment.storage import Evaluator as Ev
    from nlgeval.experiment.storage import Judgement, Store

    store = Store(database)
    try:
        with store.read() as s:
            stored = dict(s.execute(select(Judgement.trial_id, func.count())
                                    .group_by(Judgement.trial_id)).all())
            owners = s.execute(select(Ev.token, Ev.participant)
                               .where(Ev.claimed_at.is_not(None))).all()
    finally:
        store.dispose()
    acked = [t for p in participants for t in p.acked]
    tokens = [p.token for p in participants if p.token]
    return {
        "lost": len(set(acked) - set(stored)),
        "duplicated": len(acked) - len(set(acked)) + sum(n != 2 for n in stored.values()),
        "sets_twice": len(tokens) - len(set(tokens))
        + len(owners) - len({o.participant for o in owners}),
        "joined": len(set(tokens)),
    }


def run_one(label: str, work: Path, n: int, burst_s: float, threads: int,
            processes: int | None,
            database: str | None, deadline_s: float) -> dict[str, object]:
    from nlgeval.experiment import create_experiment
    from nlgeval.experiment.storage import Store

    d = work / label
    write_study(d, systems=5, items=10, participants=n)
    made = create_experiment(d, database=database, force=True)
    store = Store(made.database)
    jt = store.meta()["join_token"]
    store.dispose()
    rng = np.random.default_rng(7)
    load0 = os.getloadavg()[0]
    with server(d, threads, None, processes) as (base, proc):
        ps = [Participant(base, jt, k, float(rng.uniform(0, burst_s))) for k in range(n)]
        deadline = time.monotonic() + deadline_s
        ths = [threading.Thread(target=p.run, args=(deadline,)) for p in ps]
        srv0 = cpu_seconds(proc.pid)
        t0 = time.perf_counter()
        for t in ths:
            t.start()
        for t in ths:
            t.join(deadline_s + 60)
        wall = time.perf_counter() - t0
        srv_cpu = cpu_seconds(proc.pid) - srv0
    load1 = os.getloadavg()[0]
    lat = np.array([x for p in ps for x in p.lat]) * 1000
    jl = np.array([x for p in ps for x in p.join_lat]) * 1000
    p50, p95, p99 = np.percentile(lat, [50, 95, 99])
    return {
        "database": label, "participants": n, "processes": processes or "default",
        "threads": threads,
        "requests": len(lat), "req_per_s": round(len(lat) / wall), "wall_s": round(wall, 1),
        "p50_ms": round(p50, 1), "p95_ms": round(p95, 1), "p99_ms": round(p99, 1),
        "join_p95_ms": round(float(np.percentile(jl, 95)), 1) if len(jl) else float("nan"),
        "server_cpu_ms": round(srv_cpu * 1000 / len(lat), 2),
        "load_before": round(load0, 2), "load_after": round(load1, 2),
        **_check(made.database, ps),
        "errors": sum(p.error is not None for p in ps),
        "first_error": next((p.error for p in ps if p.error), ""),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--participants", type=int, default=50)
    ap.add_argument("--burst-s", type=float, default=3.0,
                    help="participants arrive uniformly within this many seconds")
    ap.add_argument("--threads", type=int, default=4, help="serve's default")
    ap.add_argument("--processes", type=int, default=None,
                    help="default: serve's default (one per core, at most 4)")
    ap.add_argument("--deadline", type=float, default=180.0, help="seconds per database")
    ap.add_argument("--no-postgres", action="store_true")
    args = ap.parse_args()
    rows = []
    with tempfile.TemporaryDirectory(prefix="nlgeval-bench-crowd-") as tmp:
        work = Path(tmp)
        rows.append(run_one("sqlite", work, args.participants, args.burst_s, args.threads,
                            args.processes, None, args.deadline))
        print(pd.DataFrame(rows).to_string(index=False), flush=True)
        if not args.no_postgres:
            with throwaway_postgres() as url:
                if url is None:
                    print("PostgreSQL: skipped (no server binaries or psycopg)")
                else:
                    rows.append(run_one("postgresql", work, args.participants, args.burst_s,
                                        args.threads, args.processes, url, args.deadline))
    print()
    print(pd.DataFrame(rows).to_string(index=False))
    from nlgeval.experiment.prefork import default_processes

    n_proc = args.processes or default_processes()
    print(f"server: {n_proc} process(es) x {args.threads} threads; "
          f"{os.cpu_count()} cores; participants arrive within {args.burst_s:g} s")
    print("goal on the 2-core machine: p95 < 200 ms at 50 participants including the join "
          "burst, 0 lost, 0 duplicated, 0 sets handed out twice")


if __name__ == "__main__":
    main()
