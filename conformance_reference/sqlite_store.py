"""SQLite plumbing shared by the stateful reference servers (MAP review, UW Markdown).

One file may be shared by many processes (stdio racers, the HTTP server, the fixture controller), so
connections use WAL and a generous busy timeout, and every decision runs in `BEGIN IMMEDIATE`: the write
lock is taken before the first read, which makes a compare-and-set atomic across processes.
"""

from __future__ import annotations

import contextlib
import sqlite3
import threading
import time
from collections.abc import Iterator
from typing import ClassVar, Final

BUSY_TIMEOUT_MS: Final = 15000


class FixtureError(Exception):
    """A fixture request a store cannot honour (an unknown review or deal, unsupported params); the
    fixture controller answers it as the hook error `code`."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


class SqliteStore:
    """A file (shared across processes) or in-memory database; subclasses name their tables (`SCHEMA`)
    and seed a new database (`_initialise`)."""

    #: The tables, as statements separated by `;`, each created if missing when a store opens.
    SCHEMA: ClassVar[str] = ""

    def __init__(self, path: str | None) -> None:
        self.path = path or ":memory:"
        self._local = threading.local()
        self._memory_lock = threading.RLock() if self.path == ":memory:" else None
        self._memory_conn: sqlite3.Connection | None = None
        # One write transaction: of the processes that open a new file at once, exactly one seeds it.
        with self.transaction() as conn:
            for statement in self.SCHEMA.split(";"):
                if statement.strip():
                    conn.execute(statement)
            self._initialise(conn)

    def _initialise(self, conn: sqlite3.Connection) -> None:
        """Seed a new database (subclasses), inside the transaction that created the tables."""

    def _open(self) -> sqlite3.Connection:
        conn = sqlite3.connect(
            self.path, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None, check_same_thread=False
        )
        conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        if self.path != ":memory:":
            for _ in range(50):  # another process may be switching the file to WAL right now
                try:
                    conn.execute("PRAGMA journal_mode = WAL")
                    break
                except sqlite3.OperationalError:
                    time.sleep(0.05)
            conn.execute("PRAGMA synchronous = NORMAL")
        return conn

    @contextlib.contextmanager
    def _connection(self) -> Iterator[sqlite3.Connection]:
        """One connection per thread on a file; one shared, lock-guarded connection in memory."""
        if self._memory_lock is not None:
            with self._memory_lock:
                if self._memory_conn is None:
                    self._memory_conn = self._open()
                yield self._memory_conn
            return
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = self._local.conn = self._open()
        yield conn

    def transaction(self) -> contextlib.AbstractContextManager[sqlite3.Connection]:
        """`BEGIN IMMEDIATE` ... `COMMIT`: the write lock is held from the first read to the commit."""
        return self._within("BEGIN IMMEDIATE")

    def snapshot(self) -> contextlib.AbstractContextManager[sqlite3.Connection]:
        """A read transaction: one consistent view across several reads, without the write lock."""
        return self._within("BEGIN")

    @contextlib.contextmanager
    def _within(self, begin: str) -> Iterator[sqlite3.Connection]:
        """One transaction opened with `begin`: committed, or rolled back when the body raises."""
        with self._connection() as conn:
            conn.execute(begin)
            try:
                yield conn
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")
