"""Benchmark: the experiment server under 50 concurrent evaluators (SQLite; PostgreSQL too).

Starts the server as a user would (``nlgeval serve DIR`` in its own process, on 127.0.0.1), then
drives N evaluators from this process, each in its own thread with its own cookie session:
personal link -> Start -> every trial (a valid random answer) -> questionnaire -> thank-you,
with an optional think time between pages (``--think-ms``; 0 = a closed loop, far harsher than
people). Everything is bounded: a step limit per evaluator and a wall-clock deadline.

Prints requests/s and p50/p95/p99 latency per database, and checks the database afterwards:
every acknowledged trial has exactly one judgement per criterion (0 lost, 0 duplicated).

PostgreSQL runs when ``--postgres URL`` (or ``NLGEVAL_BENCH_POSTGRES_URL``) is given, or a
throwaway cluster can be started from Debian's ``/usr/lib/postgresql/*/bin`` (as the
``postgres`` user when run as root); otherwise it is skipped with a note.

Run: .venv/bin/python benchmarks/bench_experiment_load.py [--evaluators 50] [--think-ms 0]
"""

from __future__ import annotations

import argparse
import glob
import html
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pandas as pd
import requests

ROOT = Path(__file__).resolve().parents[1]
CRITERIA = '''
[[criteria]]
name = "quality"
tool = "vds"
scale = "text5"

[[criteria]]
name = "fluency"
tool = "vas"
left_label = "not fluent"
right_label = "perfectly fluent"

[[questionnaire]]
name = "native"
question = "Is English your first language?"
type = "choice"
options = ["yes", "no"]
required = true
'''
_INPUT = re.compile(r"<input\b([^>]*)>", re.S)
_ATTR = re.compile(r'([\w-]+)="([^"]*)"')
_ACTION = re.compile(r'<form method="post" action="([^"]+)"')


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def write_experiment(d: Path, systems: int, items: int, evaluators: int) -> None:
    d.mkdir(parents=True)
    rows = [{"system": f"S{s}", "item": f"i{i}", "text": f"Output {s} for item {i}. " * 5}
            for i in range(1, items + 2) for s in range(1, systems + 1)]
    pd.DataFrame(rows).to_csv(d / "outputs.csv", index=False)
    (d / "experiment.toml").write_text(
        f'title = "load"\nevaluators = {evaluators}\npractice = 1\n'
        f'practice_items = ["i{items + 1}"]\nitems = {[f"i{i}" for i in range(1, items + 1)]}\n'
        .replace("'", '"') + CRITERIA, encoding="utf-8")


def answer(page: str, rng: np.random.Generator) -> tuple[str, dict[str, str]]:
    """The form's action and a complete valid answer (what a browser would send)."""
    action = html.unescape(_ACTION.search(page).group(1))  # type: ignore[union-attr]
    data: dict[str, str] = {}
    radios: dict[str, list[str]] = {}
    moved: list[str] = []
    for m in _INPUT.finditer(page):
        a = {k: html.unescape(v) for k, v in _ATTR.findall(m.group(1))}
        t, name = a.get("type"), a.get("name", "")
        if t == "hidden":
            data[name] = a.get("value", "")
        elif t == "radio":
            radios.setdefault(name, []).append(a["value"])
        elif t == "range":
            data[name] = str(int(rng.integers(int(float(a["min"])), int(float(a["max"])) + 1)))
            moved.append(name + "_moved")
    for name in moved:  # what the page's script does when a slider is moved
        data[name] = "1"
    for name, vals in radios.items():
        data[name] = vals[int(rng.integers(len(vals)))]
    return action, data


class Evaluator:
    def __init__(self, base: str, token: str, think_s: float, seed: int) -> None:
        self.base, self.token, self.think_s = base, token, think_s
        self.s = requests.Session()
        self.rng = np.random.default_rng(seed)
        self.lat: list[float] = []
        self.acked: list[int] = []
        self.error: str | None = None

    def req(self, method: str, url: str, **kw: object) -> requests.Response:
        t0 = time.perf_counter()
        r = self.s.request(method, url, timeout=60, allow_redirects=False, **kw)
        self.lat.append(time.perf_counter() - t0)
        return r

    def run(self, deadline: float) -> None:
        try:
            for _ in range(200):
                if time.monotonic() > deadline:
                    self.error = "deadline"
                    return
                if self.think_s:
                    time.sleep(self.rng.uniform(0.5, 1.5) * self.think_s)
                r = self.req("GET", f"{self.base}/e/{self.token}")
                if r.status_code != 200:
                    self.error = f"GET {r.status_code}"
                    return
                page = r.text
                if "completion" in page or "Thank you" in page and "<form" not in page:
                    return
                action, data = answer(page, self.rng)
                r = self.req("POST", self.base + action, data=data)
                if r.status_code != 303:
                    self.error = f"POST {action} -> {r.status_code}"
                    return
                if "/trial/" in action:
                    self.acked.append(int(action.rsplit("/", 1)[1]))
        except Exception as exc:  # report, do not hang
            self.error = repr(exc)


@contextmanager
def server(d: Path, threads: int, database: str | None) -> Iterator[str]:
    port = free_port()
    exe = Path(sys.executable).parent / "nlgeval"
    cmd = [str(exe)] if exe.exists() else [sys.executable, "-c",
                                            "from nlgeval.cli import main; main()"]
    cmd += ["serve", str(d), "--port", str(port), "--threads", str(threads)]
    if database:
        cmd += ["--database", database]
    log = open(d / "server.log", "w")  # noqa: SIM115
    proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, cwd=ROOT)
    base = f"http://127.0.0.1:{port}"
    try:
        end = time.monotonic() + 60
        while True:
            if proc.poll() is not None or time.monotonic() > end:
                raise RuntimeError((d / "server.log").read_text())
            try:
                if requests.get(base + "/healthz", timeout=1).status_code == 200:
                    break
            except requests.RequestException:
                time.sleep(0.1)
        yield base
    finally:
        proc.terminate()
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()


def run_one(label: str, work: Path, n_ev: int, think_ms: float, threads: int,
            deadline_s: float, database: str | None) -> dict[str, object]:
    from sqlalchemy import func, select

    from nlgeval.experiment import create_experiment
    from nlgeval.experiment.storage import Judgement, Store

    d = work / label
    write_experiment(d, systems=5, items=10, evaluators=n_ev)
    made = create_experiment(d, database=database, force=True)
    with server(d, threads, None) as base:  # the database is remembered by create
        evs = [Evaluator(base, t, think_ms / 1000, k) for k, t in
               enumerate(made.evaluators["token"])]
        deadline = time.monotonic() + deadline_s
        ths = [threading.Thread(target=e.run, args=(deadline,)) for e in evs]
        t0 = time.perf_counter()
        for t in ths:
            t.start()
        for t in ths:
            t.join(deadline_s + 60)
        wall = time.perf_counter() - t0
    store = Store(made.database)
    try:
        with store.read() as s:
            stored = dict(s.execute(select(Judgement.trial_id, func.count())
                                    .group_by(Judgement.trial_id)).all())
    finally:
        store.dispose()
    acked = [t for e in evs for t in e.acked]
    lat = np.array([x for e in evs for x in e.lat]) * 1000
    p50, p95, p99 = np.percentile(lat, [50, 95, 99])
    return {
        "database": label, "evaluators": n_ev, "think_ms": think_ms, "threads": threads,
        "requests": len(lat), "wall_s": round(wall, 1), "req_per_s": round(len(lat) / wall),
        "p50_ms": round(p50, 1), "p95_ms": round(p95, 1), "p99_ms": round(p99, 1),
        "trials_acked": len(acked),
        "lost": len(set(acked) - set(stored)),
        "duplicated": len(acked) - len(set(acked)) + sum(n != 2 for n in stored.values()),
        "errors": sum(e.error is not None for e in evs),
        "first_error": next((e.error for e in evs if e.error), ""),
    }


@contextmanager
def throwaway_postgres() -> Iterator[str | None]:
    url = os.environ.get("NLGEVAL_BENCH_POSTGRES_URL")
    if url:
        yield url
        return
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/pg_ctl"))
    try:
        import psycopg  # noqa: F401
    except ImportError:
        found = []
    if not found:
        yield None
        return
    bindir = Path(found[-1]).parent
    base = Path(tempfile.mkdtemp(prefix="nlgeval-bench-pg-"))
    data, sock = base / "data", base / "sock"
    sock.mkdir()
    prefix: list[str] = []
    if os.geteuid() == 0:
        shutil.chown(base, "postgres")
        shutil.chown(sock, "postgres")
        prefix = ["runuser", "-u", "postgres", "--"]
    port = free_port()
    try:
        subprocess.run(prefix + [str(bindir / "initdb"), "-D", str(data), "-A", "trust", "-U",
                                 "postgres", "--no-sync", "-E", "UTF8"],
                       check=True, capture_output=True, timeout=120)
        subprocess.run(prefix + [str(bindir / "pg_ctl"), "-D", str(data), "-l",
                                 str(base / "log"), "-w", "-t", "60", "-o",
                                 f"-p {port} -k {sock} -c listen_addresses=127.0.0.1 "
                                 "-c max_connections=200", "start"],
                       check=True, capture_output=True, timeout=120)
    except (subprocess.CalledProcessError, OSError):
        shutil.rmtree(base, ignore_errors=True)
        yield None
        return
    try:
        yield f"postgresql+psycopg://postgres@127.0.0.1:{port}/postgres"
    finally:
        subprocess.run(prefix + [str(bindir / "pg_ctl"), "-D", str(data), "-m", "immediate",
                                 "-w", "stop"], capture_output=True, timeout=60)
        shutil.rmtree(base, ignore_errors=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--evaluators", type=int, default=50)
    ap.add_argument("--think-ms", type=float, default=0.0)
    ap.add_argument("--threads", type=int, default=16, help="server worker threads")
    ap.add_argument("--deadline", type=float, default=180.0, help="seconds per database")
    ap.add_argument("--no-postgres", action="store_true")
    ap.add_argument("--postgres", help="PostgreSQL URL (default: a throwaway cluster)")
    args = ap.parse_args()
    if args.postgres:
        os.environ["NLGEVAL_BENCH_POSTGRES_URL"] = args.postgres
    rows = []
    with tempfile.TemporaryDirectory(prefix="nlgeval-bench-") as tmp:
        work = Path(tmp)
        rows.append(run_one("sqlite", work, args.evaluators, args.think_ms, args.threads,
                            args.deadline, None))
        print(pd.DataFrame(rows).to_string(index=False), flush=True)
        if not args.no_postgres:
            with throwaway_postgres() as url:
                if url is None:
                    print("PostgreSQL: skipped (no server binaries or psycopg)")
                else:
                    rows.append(run_one("postgresql", work, args.evaluators, args.think_ms,
                                        args.threads, args.deadline, url))
    print()
    print(pd.DataFrame(rows).to_string(index=False))
    print("goal on the 2-core machine: p95 < 200 ms at 50 evaluators, 0 lost, 0 duplicated")


if __name__ == "__main__":
    main()
