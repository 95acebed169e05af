"""Server test fixtures: an app per test on a fresh database, on SQLite and PostgreSQL.

SQLite always runs (a temporary file: the server uses WAL and ``BEGIN IMMEDIATE``, which an
in-memory database cannot share between connections). PostgreSQL runs when
``TEST_DATABASE_URL`` is set; every test gets its own schema (``search_path`` set through the
URL), so parallel xdist workers never share tables. The schema is always built by the real
migrations, never by ``create_all``.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
import sqlalchemy as sa
from flask import Flask
from flask.testing import FlaskClient
from server_db import app_config, build_app, dispose

from dos_server import create_app
from dos_server.config import normalize_database_url

PG_URL = os.environ.get("TEST_DATABASE_URL")
BACKENDS = ["sqlite", "postgresql"] if PG_URL else ["sqlite"]


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if not PG_URL:
        terminalreporter.write_line(
            "PostgreSQL NOT tested: TEST_DATABASE_URL is unset", yellow=True, bold=True
        )


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
    if backend == "sqlite":
        yield f"sqlite:///{tmp_path / 'dos.sqlite3'}"
    else:
        with pg_schema() as url:
            yield url





@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def db_url(backend: str, tmp_path: Path) -> Iterator[str]:
    with database_url(backend, tmp_path) as url:
        yield url


@pytest.fixture
def make_app(db_url: str) -> Iterator[Callable[..., Flask]]:
    """Build apps on this test's database (several, e.g. with different keys)."""
    apps: list[Flask] = []
    migrated = False

    def make(**config: Any) -> Flask:
        nonlocal migrated
        if migrated:
            app = create_app(app_config(db_url, **config))
        else:
            app = build_app(db_url, **config)
            migrated = True
        apps.append(app)
        return app

    yield make
    for app in apps:
        dispose(app)


@pytest.fixture
def app(make_app: Callable[..., Flask]) -> Flask:
    return make_app()


@pytest.fixture
def client(app: Flask) -> FlaskClient:
    return app.test_client()
