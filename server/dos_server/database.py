"""Database set-up that differs by backend, and the write-transaction helper.

SQLite: WAL journal, a busy timeout, and ``BEGIN IMMEDIATE`` for write transactions so two
writers queue on the database lock instead of failing at commit. PostgreSQL: the game row is
locked with ``SELECT ... FOR UPDATE`` by the services, every writer in the one order that
services/locks.py sets out (so that none deadlocks).
"""

from __future__ import annotations

import contextvars
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from flask import Flask
from sqlalchemy import event
from sqlalchemy.engine import Engine

from dos_server.extensions import db

_WRITE = contextvars.ContextVar("dos_write_transaction", default=False)


def configure_engine(app: Flask) -> None:
    engine: Engine = db.engine
    if engine.dialect.name != "sqlite":
        return
    busy_ms = int(float(app.config["SQLITE_BUSY_TIMEOUT_SECONDS"]) * 1000)

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: Any) -> None:
        dbapi_connection.isolation_level = None  # we issue BEGIN ourselves (below)
        cursor = dbapi_connection.cursor()
        cursor.execute(f"PRAGMA busy_timeout = {busy_ms}")
        cursor.execute("PRAGMA journal_mode = WAL")
        cursor.execute("PRAGMA foreign_keys = ON")
        cursor.execute("PRAGMA synchronous = NORMAL")
        cursor.close()

    @event.listens_for(engine, "begin")
    def _on_begin(connection: Any) -> None:
        connection.exec_driver_sql("BEGIN IMMEDIATE" if _WRITE.get() else "BEGIN")


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
