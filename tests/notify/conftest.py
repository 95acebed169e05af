"""Fixtures for the notification tests: a migrated database per test (SQLite; PostgreSQL too
when ``TEST_DATABASE_URL`` is set, one schema per test), a real SMTP server and a real webhook
receiver on loopback. Every port is chosen free, so pytest-xdist workers never collide."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from flask import Flask
from notify_helpers import Receiver

from testkit import SmtpSink, app_factory, backend, db_url, smtp

__all__ = ["backend", "db_url", "mail_app", "make_app", "receiver", "smtp"]


@pytest.fixture
def make_app(db_url: str, tmp_path: Path) -> Iterator[Callable[..., Flask]]:
    with app_factory(db_url, INSTANCE_PATH=str(tmp_path / "instance")) as make:
        yield make


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    server = Receiver().start()
    yield server
    server.stop()


@pytest.fixture
def mail_app(make_app: Callable[..., Flask], smtp: SmtpSink) -> Flask:
    return make_app(SMTP_HOST="127.0.0.1", SMTP_PORT=smtp.port, SMTP_SECURITY="none")
