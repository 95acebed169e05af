"""Server test fixtures: an app per test on a fresh database, on SQLite and PostgreSQL.

SQLite always runs (a temporary file: the server uses WAL and ``BEGIN IMMEDIATE``, which an
in-memory database cannot share between connections). PostgreSQL runs when
``TEST_DATABASE_URL`` is set; every test gets its own schema (``search_path`` set through the
URL), so parallel xdist workers never share tables. The schema is always built by the real
migrations, never by ``create_all``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient
from server_db import app_config, build_app, dispose

from dos_server import create_app


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
