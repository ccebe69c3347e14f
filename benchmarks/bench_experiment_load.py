"""Benchmark: the experiment server under 50 concurrent evaluators (SQLite; PostgreSQL too).

Starts the server as a user would (``nlgeval serve DIR --threads T --processes P`` in its own
process, on 127.0.0.1), then drives N evaluators from this process, each in its own thread
with its own cookie session and keep-alive connection: personal link -> Start -> every trial
(a valid random answer) -> questionnaire -> thank-you, with an optional think time between
pages (``--think-ms``; 0 = a closed loop, far harsher than people). Everything is bounded: a
step limit per evaluator and a wall-clock deadline.

Prints requests/s and p50/p95/p99 latency per database, and checks the database afterwards:
every acknowledged trial has exactly one judgement per criterion (0 lost, 0 duplicated).

Where the time goes, in the same table: ``server_cpu_ms`` and ``client_cpu_ms`` are the CPU
time of the server's processes and of this load generator per request (Linux ``/proc``);
``app_wall_ms``/``app_wall_p95``/``app_cpu_ms`` are the time a request spent inside the app
(mean, 95th percentile) and the CPU time its worker thread used there, recorded by the
server itself (``NLGEVAL_SERVER_TIMING``, :mod:`nlgeval.experiment.timing`). Client latency
minus app wall time is waiting for a worker thread and the server's I/O loop; app wall minus
app CPU is waiting inside the app (the GIL, the database).

The load generator shares the machine's cores with the server, so its own CPU cost is part
of what is measured. By default (``--client http``) it sends each request with the standard
library's ``http.client`` instead of ``requests``: the same method, path, headers
(``requests``' User-Agent, Accept, Accept-Encoding, Connection), cookie and form body, so the
server does the same work, at about a third of the client CPU time per request (measured:
1.4-2.2 ms -> 0.3-0.6 ms). ``--client requests`` runs the original generator.

Defaults are the issue's setting (50 evaluators, closed loop) on ``serve``'s default of 4
threads per process and two server processes (``--processes 2``, one per core of the 2-core
target machine; see docs/experiment.md, "Throughput").

PostgreSQL runs when ``--postgres URL`` (or ``NLGEVAL_BENCH_POSTGRES_URL``) is given, or a
throwaway cluster can be started from Debian's ``/usr/lib/postgresql/*/bin`` (as the
``postgres`` user when run as root); otherwise it is skipped with a note.

Run: .venv/bin/python benchmarks/bench_experiment_load.py [--evaluators 50] [--think-ms 0]
     [--processes 2] [--threads 4] [--client http]
"""

from __future__ import annotations

import argparse
import glob
import html
import http.client
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import urlencode

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


# what requests sends with every request; the http.client transport sends the same headers
HEADERS = {"User-Agent": f"python-requests/{requests.__version__}",
           "Accept-Encoding": "gzip, deflate", "Accept": "*/*", "Connection": "keep-alive"}


class Evaluator:
    """One evaluator: a cookie session over one keep-alive connection.

    ``client="http"`` (the default) sends each request with the standard library's
    ``http.client`` (the same method, path, headers, cookie and form body as ``requests``
    would send) because the load generator shares the CPU with the server: ``requests``
    costs about three times as much CPU per request on the client side, which the server's
    latency then pays for. ``client="requests"`` keeps the original generator."""

    def __init__(self, base: str, token: str, think_s: float, seed: int,
                 client: str = "http") -> None:
        self.base, self.token, self.think_s = base, token, think_s
        self.client = client
        self.s = requests.Session() if client == "requests" else None
        host, port = base.removeprefix("http://").split(":")
        self.conn = http.client.HTTPConnection(host, int(port), timeout=60)
        self.cookies: dict[str, str] = {}
        self.rng = np.random.default_rng(seed)
        self.lat: list[float] = []
        self.acked: list[int] = []
        self.error: str | None = None

    def req(self, method: str, path: str, data: dict[str, str] | None = None
            ) -> tuple[int, str]:
        """Send one request; return the status and the body (redirects are not followed)."""
        if self.s is not None:
            t0 = time.perf_counter()
            r = self.s.request(method, self.base + path, timeout=60, allow_redirects=False,
                               data=data)
            self.lat.append(time.perf_counter() - t0)
            return r.status_code, r.text
        headers = dict(HEADERS)
        body = None
        if data is not None:
            body = urlencode(data)
            headers["Content-Type"] = "application/x-www-form-urlencoded"
        if self.cookies:
            headers["Cookie"] = "; ".join(f"{k}={v}" for k, v in self.cookies.items())
        t0 = time.perf_counter()
        self.conn.request(method, path, body=body, headers=headers)
        r = self.conn.getresponse()
        payload = r.read()
        self.lat.append(time.perf_counter() - t0)
        for c in r.headers.get_all("Set-Cookie") or []:
            name, _eq, rest = c.partition("=")
            self.cookies[name.strip()] = rest.split(";", 1)[0]
        return r.status, payload.decode()

    def run(self, deadline: float) -> None:
        try:
            for _ in range(200):
                if time.monotonic() > deadline:
                    self.error = "deadline"
                    return
                if self.think_s:
                    time.sleep(self.rng.uniform(0.5, 1.5) * self.think_s)
                status, page = self.req("GET", f"/e/{self.token}")
                if status != 200:
                    self.error = f"GET {status}"
                    return
                if "completion" in page or "Thank you" in page and "<form" not in page:
                    return
                action, data = answer(page, self.rng)
                status, _page = self.req("POST", action, data=data)
                if status != 303:
                    self.error = f"POST {action} -> {status}"
                    return
                if "/trial/" in action:
                    self.acked.append(int(action.rsplit("/", 1)[1]))
        except Exception as exc:  # report, do not hang
            self.error = repr(exc)


@contextmanager
def server(d: Path, threads: int, database: str | None, processes: int | None = 1
           ) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    port = free_port()
    exe = Path(sys.executable).parent / "nlgeval"
    cmd = [str(exe)] if exe.exists() else [sys.executable, "-c",
                                            "from nlgeval.cli import main; main()"]
    cmd += ["serve", str(d), "--port", str(port), "--threads", str(threads)]
    if processes is not None:  # None: serve's default
        cmd += ["--processes", str(processes)]
    if database:
        cmd += ["--database", database]
    log = open(d / "server.log", "w")  # noqa: SIM115
    env = dict(os.environ, NLGEVAL_SERVER_TIMING=str(d / "server-timing.json"))
    proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, cwd=ROOT, env=env)
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
        yield base, proc
    finally:
        proc.send_signal(signal.SIGINT)  # stops serving and writes server-timing.json
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process and its children (the server's worker processes;
    Linux /proc, NaN elsewhere)."""
    total = 0.0
    for stat in glob.glob("/proc/[0-9]*/stat"):
        try:
            fields = Path(stat).read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if Path(stat).parent.name == str(pid) or fields[1] == str(pid):
            total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return total if total else float("nan")


def run_one(label: str, work: Path, n_ev: int, think_ms: float, threads: int,
            deadline_s: float, database: str | None, client: str = "http",
            processes: int = 1) -> dict[str, object]:
    from sqlalchemy import func, select

    from nlgeval.experiment import create_experiment
    from nlgeval.experiment.storage import Judgement, Store

    d = work / label
    write_experiment(d, systems=5, items=10, evaluators=n_ev)
    made = create_experiment(d, database=database, force=True)
    # the database is remembered by create
    with server(d, threads, None, processes) as (base, proc):
        evs = [Evaluator(base, t, think_ms / 1000, k, client) for k, t in
               enumerate(made.evaluators["token"])]
        deadline = time.monotonic() + deadline_s
        ths = [threading.Thread(target=e.run, args=(deadline,)) for e in evs]
        srv0, cli0 = cpu_seconds(proc.pid), time.process_time()
        t0 = time.perf_counter()
        for t in ths:
            t.start()
        for t in ths:
            t.join(deadline_s + 60)
        wall = time.perf_counter() - t0
        srv_cpu, cli_cpu = cpu_seconds(proc.pid) - srv0, time.process_time() - cli0
    app_wall, app_cpu = [], []
    for f in d.glob("server-timing.json.*"):  # one per server process
        t = json.loads(f.read_text())
        app_wall += t["app_wall_ms"]
        app_cpu += t["app_cpu_ms"]
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
        "processes": processes,
        "requests": len(lat), "wall_s": round(wall, 1), "req_per_s": round(len(lat) / wall),
        "p50_ms": round(p50, 1), "p95_ms": round(p95, 1), "p99_ms": round(p99, 1),
        "trials_acked": len(acked),
        "lost": len(set(acked) - set(stored)),
        "duplicated": len(acked) - len(set(acked)) + sum(n != 2 for n in stored.values()),
        "server_cpu_ms": round(srv_cpu * 1000 / len(lat), 2),
        "client_cpu_ms": round(cli_cpu * 1000 / len(lat), 2),
        "app_wall_ms": round(float(np.mean(app_wall)), 1) if app_wall else float("nan"),
        "app_wall_p95": (round(float(np.percentile(app_wall, 95)), 1) if app_wall
                         else float("nan")),
        "app_cpu_ms": round(float(np.mean(app_cpu)), 2) if app_cpu else float("nan"),
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
    ap.add_argument("--threads", type=int, default=4,
                    help="server worker threads per process (serve's default)")
    ap.add_argument("--deadline", type=float, default=180.0, help="seconds per database")
    ap.add_argument("--processes", type=int, default=2,
                    help="server processes (serve --processes)")
    ap.add_argument("--no-postgres", action="store_true")
    ap.add_argument("--client", choices=["http", "requests"], default="http",
                    help="load generator's HTTP client (same requests; http.client is cheaper)")
    ap.add_argument("--postgres", help="PostgreSQL URL (default: a throwaway cluster)")
    args = ap.parse_args()
    if args.postgres:
        os.environ["NLGEVAL_BENCH_POSTGRES_URL"] = args.postgres
    rows = []
    with tempfile.TemporaryDirectory(prefix="nlgeval-bench-") as tmp:
        work = Path(tmp)
        rows.append(run_one("sqlite", work, args.evaluators, args.think_ms, args.threads,
                            args.deadline, None, args.client, args.processes))
        print(pd.DataFrame(rows).to_string(index=False), flush=True)
        if not args.no_postgres:
            with throwaway_postgres() as url:
                if url is None:
                    print("PostgreSQL: skipped (no server binaries or psycopg)")
                else:
                    rows.append(run_one("postgresql", work, args.evaluators, args.think_ms,
                                        args.threads, args.deadline, url, args.client,
                                        args.processes))
    print()
    print(pd.DataFrame(rows).to_string(index=False))
    print(f"load generator: {args.client} client ("
          + ("http.client, the same requests as requests would send"
             if args.client == "http" else "requests") + "); server: "
          f"{args.processes} process(es) x {args.threads} threads")
    print("goal on the 2-core machine: p95 < 200 ms at 50 evaluators, 0 lost, 0 duplicated")


if __name__ == "__main__":
    main()
