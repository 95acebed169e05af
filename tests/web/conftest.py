"""Web page fixtures: an app per test on a fresh database (SQLite and, with
``TEST_DATABASE_URL``, PostgreSQL), from testkit.py."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest
from flask import Flask

from testkit import app_factory, backend, db_url

__all__ = ["app", "backend", "db_url", "make_app"]


@pytest.fixture
def make_app(db_url: str) -> Iterator[Callable[..., Flask]]:
    with app_factory(db_url) as make:
        yield make


@pytest.fixture
def app(make_app: Callable[..., Flask]) -> Flask:
    return make_app()
