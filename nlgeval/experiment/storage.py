"""Where an experiment keeps its state: a real database through SQLAlchemy.

SQLite (one file, ``experiment.db`` in the experiment directory, WAL journal, ``synchronous=FULL``
so a committed judgement survives a killed process and a power cut) by default; PostgreSQL by URL
(``postgresql+psycopg://user@host/db``) for bigger studies.

Tables (all prefixed ``nlgeval_`` so they cannot clash with others in a shared database):
``meta`` (researcher token, session secret, config fingerprint), ``evaluators`` (one per
trial set, with the unguessable personal token), ``outputs`` (the texts, copied at ``create`` so
what evaluators see cannot drift from what was designed), ``trials`` (one row per trial, in the
evaluator's order, practice flagged) and ``judgements`` (one row per trial and criterion; the
``UNIQUE (trial_id, criterion)`` constraint makes a duplicate judgement impossible whatever the
web layer does).
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from sqlalchemy import (
    Connection,
    Engine,
    create_engine,
    event,
    inspect,
)
from sqlalchemy.orm import Session, sessionmaker

from nlgeval.errors import InputError
from nlgeval.experiment.schema import Base as Base
from nlgeval.experiment.schema import Context as Context
from nlgeval.experiment.schema import Evaluator as Evaluator
from nlgeval.experiment.schema import Judgement as Judgement
from nlgeval.experiment.schema import Meta as Meta
from nlgeval.experiment.schema import Output as Output
from nlgeval.experiment.schema import Trial as Trial
from nlgeval.experiment.schema import utcnow as utcnow

DB_NAME = "experiment.db"


def default_url(directory: str | Path) -> str:
    """The default database: SQLite in the experiment directory.

    Examples
    --------
    >>> default_url("/data/study").endswith("/data/study/experiment.db")
    True
    """
    return f"sqlite:///{(Path(directory) / DB_NAME).resolve()}"


class _Job:
    __slots__ = ("done", "exc", "fn", "result")

    def __init__(self, fn: Callable[[Connection], Any]) -> None:
        self.fn = fn
        self.result: Any = None
        self.exc: BaseException | None = None
        self.done = threading.Event()


class Store:
    """An engine plus a session factory; ``write()`` serialises writers on SQLite.

    SQLite allows one writer at a time; a process-wide lock around write transactions avoids
    ``database is locked`` errors between the server's threads (PostgreSQL needs no lock: the
    conditional ``UPDATE`` and the unique constraint settle races there).

    The hot path (an evaluator's page and answer) uses SQLAlchemy Core through
    :meth:`connect` and :meth:`commit` rather than ORM sessions: profiled under the test client,
    the ORM's per-statement work (identity map, bulk-persistence path) doubled the CPU time of
    a judgement's transaction (2.6 -> 1.3 ms) and is not needed for a handful of column values.

    :meth:`commit` is the hot path's writer (a judgement): on SQLite, jobs that queue up while
    another transaction holds the write lock are run together in the next transaction and
    committed at once ("group commit"), so concurrent evaluators share one ``fsync`` instead
    of queueing for one each; every caller still returns only after *its* job is durably
    committed. A job that fails is retried alone (in its own transaction) so it cannot take
    others down.

    Examples
    --------
    >>> import tempfile
    >>> from sqlalchemy import text
    >>> tmp = tempfile.TemporaryDirectory()
    >>> store = Store(default_url(tmp.name))
    >>> store.exists()
    False
    >>> store.create_schema()
    >>> store.set_meta("mode", "absolute")
    >>> store.meta()
    {'mode': 'absolute'}
    >>> with store.connect() as c:
    ...     c.execute(text("SELECT count(*) FROM nlgeval_trials")).scalar()
    0
    >>> store.dispose()
    >>> tmp.cleanup()
    """

    def __init__(self, url: str, *, pool_size: int = 8) -> None:
        self.url = url
        self.is_sqlite = url.startswith("sqlite")
        kwargs: dict[str, Any] = {}
        if self.is_sqlite:
            kwargs["connect_args"] = {"check_same_thread": False, "timeout": 30}
            kwargs["pool_size"] = pool_size
            kwargs["max_overflow"] = pool_size
        else:
            kwargs["pool_size"] = pool_size
            kwargs["max_overflow"] = pool_size
            kwargs["pool_pre_ping"] = True
        try:
            self.engine: Engine = create_engine(url, **kwargs)
        except Exception as exc:  # bad URL, missing driver
            raise InputError(f"cannot use database URL {redact(url)!r}: {exc}") from None
        if self.is_sqlite:
            event.listen(self.engine, "connect", _sqlite_pragmas)
        self.sessions = sessionmaker(self.engine, expire_on_commit=False)
        self._lock = threading.Lock() if self.is_sqlite else None
        self._jobs: queue.Queue[_Job] = queue.Queue()
        self.batches = 0  # group commits done (for tests and benchmarks)
        self.batched_jobs = 0

    def commit(self, fn: Callable[[Connection], Any]) -> Any:
        """Run ``fn(connection)`` (a Core connection) in a write transaction and return its
        result once committed (grouped with concurrent callers' jobs on SQLite; see the class
        docstring)."""
        if self._lock is None:
            with self.engine.begin() as c:
                return fn(c)
        job = _Job(fn)
        self._jobs.put(job)
        # leader/follower group commit: whoever gets the write lock commits every job queued
        # so far (its own included, unless an earlier leader already committed it); the
        # others find theirs done when they get the lock. Uncontended, this is one plain
        # transaction; contended, one fsync serves a whole queue of evaluators.
        with self._lock:
            if not job.done.is_set():
                batch: list[_Job] = []
                while len(batch) < 256:
                    try:
                        batch.append(self._jobs.get_nowait())
                    except queue.Empty:
                        break
                self._run_batch(batch)
        if job.exc is not None:
            raise job.exc
        return job.result

    def _run_batch(self, batch: list[_Job]) -> None:
        """Commit ``batch`` in one transaction (the caller holds the write lock); a failure
        re-runs each job alone, so one bad job cannot take the others down."""
        try:
            with self.engine.begin() as c:
                results = [j.fn(c) for j in batch]
            for j, r in zip(batch, results, strict=True):
                j.result = r
            self.batches += 1
            self.batched_jobs += len(batch)
        except Exception:
            for j in batch:
                try:
                    with self.engine.begin() as c:
                        j.result = j.fn(c)
                except Exception as exc:
                    j.exc = exc
        for j in batch:
            j.done.set()

    @contextmanager
    def connect(self) -> Iterator[Connection]:
        """A Core connection for the hot path's reads (no ORM session; see the class
        docstring)."""
        with self.engine.connect() as c:
            yield c

    @contextmanager
    def read(self) -> Iterator[Session]:
        with self.sessions() as s:
            yield s

    @contextmanager
    def write(self) -> Iterator[Session]:
        """A session whose transaction commits on success and rolls back on error."""
        if self._lock is not None:
            self._lock.acquire()
        try:
            with self.sessions() as s, s.begin():
                yield s
        finally:
            if self._lock is not None:
                self._lock.release()

    def sqlite_path(self) -> Path | None:
        """The database file of a file-based SQLite URL (else ``None``)."""
        if not self.is_sqlite:
            return None
        from sqlalchemy.engine import make_url

        db = make_url(self.url).database
        if not db or db == ":memory:" or db.startswith("file:"):
            return None
        return Path(db)

    def exists(self) -> bool:
        """Whether the experiment's tables are there. A missing SQLite file is not created
        (connecting would create an empty one)."""
        path = self.sqlite_path()
        if path is not None and not path.is_file():
            return False
        try:
            return inspect(self.engine).has_table("nlgeval_trials")
        except Exception as exc:
            raise InputError(f"cannot connect to database {redact(self.url)!r}: {exc}") from None

    def create_schema(self, *, drop: bool = False) -> None:
        try:
            if drop:
                Base.metadata.drop_all(self.engine)
            Base.metadata.create_all(self.engine)
        except Exception as exc:
            raise InputError(f"cannot create tables in {redact(self.url)!r}: {exc}") from None

    def upgrade_schema(self) -> None:
        """Add columns that newer versions define to tables made by an older ``create``
        (all are nullable, so ``ALTER TABLE ... ADD COLUMN`` is enough; nothing is dropped)."""
        insp = inspect(self.engine)
        with self.engine.begin() as conn:
            for table in Base.metadata.sorted_tables:
                if not insp.has_table(table.name):
                    continue
                have = {c["name"] for c in insp.get_columns(table.name)}
                for col in table.columns:
                    if col.name in have:
                        continue
                    ddl = col.type.compile(dialect=self.engine.dialect)
                    conn.exec_driver_sql(
                        f'ALTER TABLE {table.name} ADD COLUMN "{col.name}" {ddl}')

    def meta(self) -> dict[str, str]:
        with self.read() as s:
            return {m.key: m.value for m in s.query(Meta)}

    def set_meta(self, key: str, value: str) -> None:
        with self.write() as s:
            s.merge(Meta(key=key, value=value))

    def dispose(self) -> None:
        self.engine.dispose()


def _sqlite_pragmas(dbapi_conn: Any, _record: Any) -> None:
    cur = dbapi_conn.cursor()
    cur.execute("PRAGMA journal_mode=WAL")
    cur.execute("PRAGMA synchronous=FULL")
    cur.execute("PRAGMA foreign_keys=ON")
    cur.execute("PRAGMA busy_timeout=30000")
    cur.close()


def redact(url: str) -> str:
    """A database URL without its password (for messages).

    Examples
    --------
    >>> redact("postgresql+psycopg://me:hunter2@db.example.org/study")
    'postgresql+psycopg://me:***@db.example.org/study'
    """
    from sqlalchemy.engine import make_url

    try:
        return make_url(url).render_as_string(hide_password=True)
    except Exception:
        return "<unparsable URL>"
