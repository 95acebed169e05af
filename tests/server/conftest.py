"""Server test fixtures: an app per test on a fresh, migrated database, on SQLite and (with
``TEST_DATABASE_URL``) PostgreSQL. The databases and app config are testkit.py's."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest
from flask import Flask
from flask.testing import FlaskClient

from testkit import app_factory, backend, db_url

__all__ = ["app", "backend", "client", "db_url", "make_app"]


@pytest.fixture
def make_app(db_url: str) -> Iterator[Callable[..., Flask]]:
    """Build apps on this test's database (several, e.g. with different keys)."""
    with app_factory(db_url) as make:
        yield make


@pytest.fixture
def app(make_app: Callable[..., Flask]) -> Flask:
    return make_app()


@pytest.fixture
def client(app: Flask) -> FlaskClient:
    return app.test_client()
