"""The PostgreSQL path against a real server: a throwaway cluster in a tmp dir.

Uses Debian's ``/usr/lib/postgresql/*/bin/initdb`` and ``pg_ctl`` (run as the ``postgres`` user
when the tests run as root) on a free localhost port, stopped afterwards. Skips with a reason
when the binaries are missing. ``NLGEVAL_TEST_POSTGRES_URL`` points the test at an existing
server instead.
"""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from experiment_helpers import (
    HttpEvaluator,
    free_port,
    join_as,
    race_submit,
    running_server,
    write_experiment,
    writers_order,
)
from typer.testing import CliRunner

pytestmark = pytest.mark.postgres


def _bin_dir() -> Path | None:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/pg_ctl"))
    return Path(found[-1]).parent if found else None


@pytest.fixture(scope="module")
def pg_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    env_url = os.environ.get("NLGEVAL_TEST_POSTGRES_URL")
    if env_url:
        yield env_url
        return
    bindir = _bin_dir()
    if bindir is None:
        pytest.skip("PostgreSQL binaries not found in /usr/lib/postgresql/*/bin (Debian package "
                    "'postgresql'; `make system-deps`)")
    pytest.importorskip("psycopg", reason="psycopg is not installed")
    root = os.geteuid() == 0
    if root and shutil.which("runuser") is None:
        pytest.skip("running as root without runuser: cannot start PostgreSQL as 'postgres'")
    # a fresh dir directly under the system tmp dir, so that 'postgres' can reach it
    base = Path(tempfile.mkdtemp(prefix="nlgeval-pg-"))
    data, sock = base / "data", base / "sock"
    sock.mkdir()
    prefix: list[str] = []
    if root:
        shutil.chown(base, "postgres")
        shutil.chown(sock, "postgres")
        prefix = ["runuser", "-u", "postgres", "--"]
    port = free_port()

    def run(*cmd: str) -> None:
        subprocess.run(prefix + list(cmd), check=True, capture_output=True, timeout=120)

    try:
        run(str(bindir / "initdb"), "-D", str(data), "-A", "trust", "-U", "postgres",
            "--no-sync", "-E", "UTF8")
        run(str(bindir / "pg_ctl"), "-D", str(data), "-l", str(base / "log"), "-w", "-t", "60",
            "-o", f"-p {port} -k {sock} -c listen_addresses=127.0.0.1", "start")
    except subprocess.CalledProcessError as exc:
        shutil.rmtree(base, ignore_errors=True)
        pytest.skip(f"could not start a throwaway PostgreSQL: {exc.stderr.decode()[-300:]}")
    try:
        yield f"postgresql+psycopg://postgres@127.0.0.1:{port}/postgres"
    finally:
        subprocess.run(prefix + [str(bindir / "pg_ctl"), "-D", str(data), "-m", "immediate",
                                 "-w", "stop"], capture_output=True, timeout=60)
        shutil.rmtree(base, ignore_errors=True)


def test_postgres_create_serve_concurrent_export(tmp_path: Path, pg_url: str) -> None:
    from nlgeval.cli import app as cli_app
    from nlgeval.experiment.storage import Store

    d = write_experiment(tmp_path / "pg", systems=3, items=3, evaluators=12, practice=1)
    runner = CliRunner()
    r = runner.invoke(cli_app, ["experiment", "create", str(d), "--database", pg_url,
                                "--json", "--force"])
    assert r.exit_code == 0, r.output
    import json

    made = json.loads(r.stdout)
    assert "postgresql" in made["database"] and not (d / "experiment.db").exists()
    tokens = [e["token"] for e in made["evaluators"]]
    with running_server(d, database=pg_url) as srv:
        evs = [HttpEvaluator(srv.base, t) for t in tokens]
        assert evs[0].step(np.random.default_rng(0)) == "start"
        assert race_submit(evs[0], np.random.default_rng(0), 8) == [303] * 8
        errors: list[BaseException] = []

        def work(k: int) -> None:
            rng = np.random.default_rng([5, k])
            try:
                for _ in range(50):
                    if evs[k].step(rng) == "done":
                        return
            except Exception as exc:
                errors.append(exc)

        threads = [threading.Thread(target=work, args=(k,)) for k in range(len(evs))]
        for t in threads:
            t.start()
        for t in threads:
            t.join(120)
        assert not errors, errors[:3]
    acked = [t for e in evs for t in e.acked]
    assert len(acked) == len(set(acked)) == 12 * 4
    out = tmp_path / "ratings.csv"
    r = runner.invoke(cli_app, ["experiment", "export", str(d), "--database", pg_url,
                                "--out", str(out), "--include-practice"])
    assert r.exit_code == 0, r.output
    df = pd.read_csv(out, dtype={"rater": str})
    assert len(df) == 12 * 4 * 2
    assert not df.duplicated(["rater", "item", "system", "criterion"]).any()
    # the answer's one statement also stored the signed display time and made the next
    # trial current (time on task needs both ends)
    assert df["time_ms"].notna().all() and df["time_on_task_ms"].notna().all()
    assert (df["time_on_task_ms"] >= 0).all()
    store = Store(pg_url)
    try:
        assert store.url.startswith("postgresql") and store.exists()
    finally:
        store.dispose()


def _fresh_database(pg_url: str, name: str) -> str:
    """An empty database ``name`` on the test server (dropped first if a run left it)."""
    from sqlalchemy import create_engine
    from sqlalchemy.engine import make_url

    engine = create_engine(pg_url, isolation_level="AUTOCOMMIT")
    try:
        with engine.connect() as c:
            c.exec_driver_sql(f"DROP DATABASE IF EXISTS {name}")
            c.exec_driver_sql(f"CREATE DATABASE {name}")
    finally:
        engine.dispose()
    return make_url(pg_url).set(database=name).render_as_string(hide_password=False)


def test_postgres_open_link_races_across_processes(tmp_path: Path, pg_url: str) -> None:
    """20 participants race for 12 sets through the open sign-up link of a server with two
    processes, then one participant joins from 8 browsers at once: every set is handed out
    once, and a participant seen before gets their own set back (PostgreSQL's conditional
    UPDATE alone would let two concurrent joins of one participant take two sets)."""
    from concurrent.futures import ThreadPoolExecutor

    from nlgeval.experiment import create_experiment
    from nlgeval.experiment.storage import Store

    if not hasattr(os, "fork"):
        pytest.skip("serve --processes needs os.fork")
    url = _fresh_database(pg_url, "nlgeval_crowd_race")
    d = write_experiment(tmp_path / "pgcrowd", systems=3, items=3, evaluators=12, practice=0,
                         extra='[crowd]\ncompletion_code = "C0DE42"\njoin_limit = 0\n',
                         database=url)
    made = create_experiment(d)
    store = Store(url)
    try:
        jt = store.meta()["join_token"]
    finally:
        store.dispose()
    with running_server(d, database=url, processes=2, threads=4) as srv:
        with ThreadPoolExecutor(20) as pool:
            got = list(pool.map(lambda k: join_as(srv.base, jt, f"p{k}"), range(20)))
            again = list(pool.map(lambda _k: join_as(srv.base, jt, "p3"), range(8)))
    handed = [t for t in got if t]
    assert len(handed) == len(set(handed)) == 12
    assert set(handed) == set(made.evaluators["token"]) and got.count("") == 8
    assert set(again) == {got[3]}


def test_postgres_serialize_makes_a_second_writer_wait(pg_url: str) -> None:
    from nlgeval.experiment.storage import Store

    a, b = Store(pg_url), Store(pg_url)  # two pools, like two server processes
    try:
        assert writers_order(a, b) == ["released", "a ends", "b in"]
    finally:
        a.dispose()
        b.dispose()
