"""The database engine of an experiment: :class:`Store` (an SQLAlchemy engine, session factory,
group commit and SQLite's writer lock), the default URL and the schema's creation and upgrade.

SQLite (one file, ``experiment.db`` in the experiment directory, WAL journal, ``synchronous=FULL``
so a committed judgement survives a killed process and a power cut) by default; PostgreSQL by URL
(``postgresql+psycopg://user@host/db``) for bigger studies.
"""

from __future__ import annotations

import os
import queue
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager, nullcontext
from pathlib import Path
from typing import Any

from sqlalchemy import Connection, Engine, Row, create_engine, event, inspect, text
from sqlalchemy.orm import Session, sessionmaker

from nlgeval.errors import InputError
from nlgeval.experiment.storage.schema import Base, Meta

try:
    import fcntl
except ImportError:  # not POSIX: one server process only (see prefork.py)
    fcntl = None  # type: ignore[assignment]  # checked for None before use

DB_NAME = "experiment.db"
ADVISORY_KEY = 0x6E6C6765  # PostgreSQL advisory lock of serialize() ("nlge")
POOL_RECYCLE_S = 1800  # PostgreSQL: replace pooled connections after 30 minutes
#: a result row of any width (its columns are named in the docstring of the function)
AnyRow = Row[*tuple[Any, ...]]


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


class _WriterLock:
    """SQLite's writers, serialised: a thread lock within the process and, once
    :meth:`share` is called (``serve --processes``), an advisory file lock (``flock``) next to
    the database across the server's processes. SQLite's own lock would serialise them too,
    but a writer that finds it taken sleeps in steps of 1, 2, 5, 10 ... ms (``busy_timeout``)
    instead of waking when it is released, which fattened the latency tail under 50 evaluators
    on two processes; the kernel wakes a process blocked in ``flock`` at the release."""

    def __init__(self) -> None:
        self._thread = threading.Lock()
        self._path: Path | None = None
        self._fd: int | None = None
        self._pid = 0

    def locked(self) -> bool:  # a writer of this process holds it
        return self._thread.locked()

    def share(self, path: Path) -> None:
        if fcntl is not None:
            self._path = path

    def __enter__(self) -> None:
        self._thread.acquire()
        try:
            if self._path is not None:
                if self._fd is None or self._pid != os.getpid():  # a fork shares the lock
                    self._fd = os.open(self._path, os.O_RDWR | os.O_CREAT, 0o600)
                    self._pid = os.getpid()
                fcntl.flock(self._fd, fcntl.LOCK_EX)
        except BaseException:
            self._thread.release()
            raise

    def __exit__(self, *exc: object) -> None:
        try:
            if self._fd is not None and self._pid == os.getpid():
                fcntl.flock(self._fd, fcntl.LOCK_UN)
        finally:
            self._thread.release()

    def close(self) -> None:
        if self._fd is not None and self._pid == os.getpid():
            os.close(self._fd)
        self._fd, self._pid = None, 0


class Store:
    """An engine plus a session factory; ``write()`` serialises writers on SQLite.

    SQLite allows one writer at a time; a process-wide lock around write transactions avoids
    ``database is locked`` errors between the server's threads (PostgreSQL needs no lock: the
    conditional ``UPDATE`` and the unique constraint settle races there). Between server
    processes, SQLite's own lock does it: write transactions begin ``IMMEDIATE`` and wait up
    to ``busy_timeout`` for it.

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
        kwargs: dict[str, Any] = {"pool_size": pool_size, "max_overflow": pool_size}
        if self.is_sqlite:
            kwargs["connect_args"] = {"check_same_thread": False, "timeout": 30}
        else:
            # no pre-ping: it costs a round trip per checkout (every request). Connections are
            # recycled before typical server/firewall idle limits instead, and a connection
            # found dead mid-request invalidates the pool (SQLAlchemy's "optimistic" disconnect
            # handling): that one request fails with the error page, the next reconnects.
            kwargs["pool_recycle"] = POOL_RECYCLE_S
        try:
            self.engine: Engine = create_engine(url, **kwargs)
        except Exception as exc:  # bad URL, missing driver
            raise InputError(f"cannot use database URL {redact(url)!r}: {exc}") from None
        if self.is_sqlite:
            event.listen(self.engine, "connect", _sqlite_pragmas)
        self.sessions = sessionmaker(self.engine, expire_on_commit=False)
        # reads of the hot path in autocommit mode: on PostgreSQL a read is then one round trip
        # (the SELECT) instead of three (BEGIN, SELECT, ROLLBACK when the connection goes back
        # to the pool); pysqlite runs SELECTs outside a transaction anyway
        self._reader = (self.engine if self.is_sqlite
                        else self.engine.execution_options(isolation_level="AUTOCOMMIT"))
        self._lock = _WriterLock() if self.is_sqlite else None
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
                self._begin_write(c)
                results = [j.fn(c) for j in batch]
            for j, r in zip(batch, results, strict=True):
                j.result = r
            self.batches += 1
            self.batched_jobs += len(batch)
        except Exception:
            for j in batch:
                try:
                    with self.engine.begin() as c:
                        self._begin_write(c)
                        j.result = j.fn(c)
                except Exception as exc:
                    j.exc = exc
        for j in batch:
            j.done.set()

    def execute_alone(self, statement: Any, params: dict[str, Any]) -> Any:
        """Run one statement as its own transaction (autocommit); return its scalar."""
        with self._reader.connect() as c:
            return c.execute(statement, params).scalar()

    def _begin_write(self, c: Connection) -> None:
        """On SQLite, take the write lock when the transaction begins (``BEGIN IMMEDIATE``),
        not at its first write: a transaction that reads and then writes (the open sign-up's
        "next free set", a participant seen before) is then serialised with every other
        writer, in other server processes too (``serve --processes``), and cannot fail with
        ``SQLITE_BUSY`` when it upgrades (pysqlite would otherwise begin it deferred, at the
        first write). PostgreSQL needs nothing: its conditional ``UPDATE`` re-checks the row."""
        if self.is_sqlite:
            c.exec_driver_sql("BEGIN IMMEDIATE")

    @contextmanager
    def connect(self) -> Iterator[Connection]:
        """A Core connection for the hot path's reads (no ORM session; see the class
        docstring), in autocommit mode: each statement sees the latest committed data, so
        do not write through it."""
        with self._reader.connect() as c:
            yield c

    @contextmanager
    def read(self) -> Iterator[Session]:
        with self.sessions() as s:
            yield s

    @contextmanager
    def write(self) -> Iterator[Session]:
        """A session whose transaction commits on success and rolls back on error."""
        with self._lock if self._lock is not None else nullcontext():
            with self.sessions() as s, s.begin():
                self._begin_write(s.connection())
                yield s

    def serialize(self, s: Session) -> None:
        """Inside a :meth:`write` transaction: wait until no other such transaction runs, for
        a read-then-write that a conditional ``UPDATE`` alone cannot protect ("this
        participant's set, else the next free one"). SQLite's writers are serialised already
        (``BEGIN IMMEDIATE``); on PostgreSQL a transaction-scoped advisory lock does it,
        across threads and server processes.

        Examples
        --------
        >>> import tempfile
        >>> tmp = tempfile.TemporaryDirectory()
        >>> store = Store(default_url(tmp.name)); store.create_schema()
        >>> with store.write() as s:
        ...     store.serialize(s)  # nothing to do on SQLite
        >>> store.dispose(); tmp.cleanup()
        """
        if self.engine.dialect.name == "postgresql":
            s.execute(text("SELECT pg_advisory_xact_lock(:k)"), {"k": ADVISORY_KEY})

    def share_writes(self) -> None:
        """Serialise SQLite writers across processes with a file lock (``DB + '.lock'``)
        before forking server processes (see :class:`_WriterLock`); nothing on PostgreSQL.

        Examples
        --------
        >>> import tempfile
        >>> tmp = tempfile.TemporaryDirectory()
        >>> store = Store(default_url(tmp.name)); store.create_schema()
        >>> store.share_writes(); store.set_meta("k", "v")
        >>> sorted(p.name for p in Path(tmp.name).glob("*.lock"))
        ['experiment.db.lock']
        >>> store.dispose(); tmp.cleanup()
        """
        path = self.sqlite_path()
        if self._lock is not None and path is not None:
            self._lock.share(path.with_name(path.name + ".lock"))

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
        """Create the tables (``drop``: afresh); a SQLite file is made owner-only (0600)
        before SQLite opens it, and its WAL and shared-memory files inherit that mode."""
        path = self.sqlite_path()
        if path is not None:
            from nlgeval.experiment.settings import make_private

            make_private(path)
        try:
            if drop:
                Base.metadata.drop_all(self.engine)
            Base.metadata.create_all(self.engine)
        except Exception as exc:
            raise InputError(f"cannot create tables in {redact(self.url)!r}: {exc}") from None

    def upgrade_schema(self) -> None:
        """Add columns that newer versions define to tables made by an older ``create``
        (all are nullable, so ``ALTER TABLE ... ADD COLUMN`` is enough; nothing is dropped)."""
        Base.metadata.create_all(self.engine)  # tables newer versions added
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
        if self._lock is not None:
            self._lock.close()


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
