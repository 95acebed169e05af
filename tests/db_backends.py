"""The databases the tests run on: SQLite always, PostgreSQL when ``TEST_DATABASE_URL`` is set.

Every test gets its own database: a temporary SQLite file (the server uses WAL and ``BEGIN
IMMEDIATE``, which an in-memory database cannot share between connections) or a fresh
PostgreSQL schema (``search_path`` set through the URL), so parallel xdist workers never share
tables. Shared by tests/server, tests/notify and tests/mail (``tests`` is on pytest's path).
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import quote

import sqlalchemy as sa
from flask import Flask

from dos_server.config import normalize_database_url
from dos_server.extensions import db

PG_URL = os.environ.get("TEST_DATABASE_URL")
BACKENDS = ["sqlite", "postgresql"] if PG_URL else ["sqlite"]


@contextmanager
def pg_schema() -> Iterator[str]:
    """A fresh PostgreSQL schema; yields a URL whose connections use it, drops it after."""
    assert PG_URL
    base = normalize_database_url(PG_URL)
    name = "t_" + secrets.token_hex(6)
    admin = sa.create_engine(base, poolclass=sa.pool.NullPool)
    with admin.begin() as conn:
        conn.execute(sa.text(f'CREATE SCHEMA "{name}"'))
    sep = "&" if "?" in base else "?"
    try:
        yield f"{base}{sep}options={quote(f'-csearch_path={name}')}"
    finally:
        with admin.begin() as conn:
            conn.execute(sa.text(f'DROP SCHEMA IF EXISTS "{name}" CASCADE'))
        admin.dispose()


@contextmanager
def database_url(backend: str, tmp_path: Path) -> Iterator[str]:
    """A fresh database of ``backend`` ("sqlite" or "postgresql")."""
    if backend == "sqlite":
        yield f"sqlite:///{tmp_path / 'dos.sqlite3'}"
    else:
        with pg_schema() as url:
            yield url


def dispose(app: Flask) -> None:
    with app.app_context():
        db.session.remove()
        db.engine.dispose()
