"""Database set-up that differs by backend, and the write-transaction helper.

SQLite: WAL journal, a busy timeout, and ``BEGIN IMMEDIATE`` for write transactions so two
writers queue on the database lock instead of failing at commit; under gevent the queueing is
done in Python, outside the process's gate, so that a waiting writer never stops the other
requests of its process.
Rows a move writes in bulk (history, outbox) go in with :func:`insert_rows`; a row a Core
statement wrote is marked stored with :func:`mark_stored`.
PostgreSQL: the game row is locked with ``SELECT ... FOR UPDATE`` by the services, every
writer in the one order that services/locks.py sets out (so that none deadlocks).
"""

from __future__ import annotations

import contextvars
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any, TypeVar

from flask import Flask
from sqlalchemy import Insert, event, inspect
from sqlalchemy.engine import Engine

from dos_server import serving
from dos_server.extensions import db

_WRITE = contextvars.ContextVar("dos_write_transaction", default=False)
Row = TypeVar("Row")


def configure_engine(app: Flask) -> None:
    engine: Engine = db.engine
    if engine.dialect.name != "sqlite":
        return
    busy_seconds = float(app.config["SQLITE_BUSY_TIMEOUT_SECONDS"])
    # Under greenlets SQLite's own busy wait sleeps in C and would stop every greenlet of the
    # process, long-polls and reads with it.
    cooperative = serving.runs_greenlets()

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: Any) -> None:
        dbapi_connection.isolation_level = None  # we issue BEGIN ourselves (below)
        cursor = dbapi_connection.cursor()
        cursor.execute(f"PRAGMA busy_timeout = {int(busy_seconds * 1000)}")
        cursor.execute("PRAGMA journal_mode = WAL")
        cursor.execute("PRAGMA foreign_keys = ON")
        cursor.execute("PRAGMA synchronous = NORMAL")
        if cooperative:  # from here on only BEGIN IMMEDIATE waits, and it waits in Python
            cursor.execute("PRAGMA busy_timeout = 0")
        cursor.close()

    @event.listens_for(engine, "begin")
    def _on_begin(connection: Any) -> None:
        if not _WRITE.get():
            connection.exec_driver_sql("BEGIN")
        elif cooperative:
            _begin_immediate_cooperatively(connection, busy_seconds)
        else:
            connection.exec_driver_sql("BEGIN IMMEDIATE")


def _begin_immediate_cooperatively(connection: Any, timeout: float) -> None:
    """``BEGIN IMMEDIATE``, retried while another writer holds the database (SQLITE_BUSY at
    once, busy_timeout being 0): ``time.sleep`` is gevent's there, so the other greenlets run
    while this one waits. In WAL mode a transaction that began IMMEDIATE meets no other lock,
    so this is the one place a write waits."""
    from sqlalchemy.exc import OperationalError

    from dos_server import metrics

    ends = time.monotonic() + timeout
    pause = 0.001
    waiting = False
    try:
        while True:
            try:
                connection.exec_driver_sql("BEGIN IMMEDIATE")
                return
            except OperationalError as error:
                if "locked" not in str(error.orig) and "busy" not in str(error.orig):
                    raise
                if time.monotonic() + pause > ends:
                    raise
            if not waiting:
                waiting = True
                metrics.SQLITE_WRITE_WAITS.inc()
                # A writer waiting here holds no slot of the process's gate: the reads
                # behind it go on (dos_server/serving.py).
                serving.leave_gate()
            time.sleep(pause)
            pause = min(pause * 2, 0.05)
    finally:
        if waiting:
            metrics.SQLITE_WRITE_WAITS.dec()


def insert_rows(statement: Insert, rows: Sequence[dict[str, Any]]) -> None:
    """Run an INSERT of ``rows`` (one statement; none if there are none) on the session's
    connection, in its transaction. A row of this transaction still pending in the session (a
    new game the rows refer to) is flushed first; ``Session.execute`` would instead flush every
    change made so far, which a move's writes make again when its changes are complete."""
    if not rows:
        return
    flush_new_rows()
    db.session.connection().execute(statement, list(rows))


def flush_new_rows() -> None:
    """Flush the rows still pending in the session (a new game that rows about to be inserted
    by a statement of their own refer to), and nothing else."""
    if db.session.new:
        db.session.flush()


def row_holding(cls: type[Row], values: dict[str, Any]) -> Row:
    """A new instance of the mapped class ``cls`` holding ``values`` as its attributes, set
    without attribute events (nothing is recorded as changed): the declarative constructor's
    event for each attribute cost more than the rest of making a row."""
    instance: Row = cls.__mapper__.class_manager.new_instance()  # type: ignore[attr-defined]
    instance.__dict__.update(values)
    return instance


def mark_stored(row: object) -> None:
    """Mark ``row`` as holding what its table holds, once a Core statement has written its
    changes and ``set_committed_value`` has recorded each of them: the commit's flush then
    skips it instead of walking it for changes it no longer has (about 0.4 ms of a turn's
    CPU). A row with a change still pending keeps it, and the flush writes it.

    ``_commit_all`` is the step SQLAlchemy itself takes after it flushes or loads a row; no
    public call clears the "modified" mark. tests/server/test_turn_writes.py pins what it does.
    """
    state = inspect(row)
    if not state.committed_state:
        state._commit_all(state.dict, db.session.identity_map)


@contextmanager
def write_transaction() -> Iterator[None]:
    """One write transaction: commit on success, roll back on any error.

    Must be entered before the request's first query, so SQLite starts it IMMEDIATE.
    """
    db.session.rollback()  # end any read transaction this request already began
    token = _WRITE.set(True)
    try:
        yield
        db.session.commit()
    except BaseException:
        db.session.rollback()
        raise
    finally:
        _WRITE.reset(token)
