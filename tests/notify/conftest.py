"""Fixtures for the notification tests: a migrated database per test (SQLite; PostgreSQL too
when ``TEST_DATABASE_URL`` is set, one schema per test), a real SMTP server and a real webhook
receiver on loopback. Every port is chosen free, so pytest-xdist workers never collide."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from flask import Flask

sys.path.insert(0, str(Path(__file__).parent))

from notify_helpers import Receiver, SmtpSink, build_app

from db_backends import dispose


@pytest.fixture
def make_app(db_url: str, tmp_path: Path) -> Iterator[Callable[..., Flask]]:
    apps: list[Flask] = []

    def make(**config: Any) -> Flask:
        app = build_app(db_url, tmp_path, migrate=not apps, **config)
        apps.append(app)
        return app

    yield make
    for app in apps:
        dispose(app)


@pytest.fixture
def smtp() -> Iterator[SmtpSink]:
    sink = SmtpSink().start()
    yield sink
    sink.stop()


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    server = Receiver().start()
    yield server
    server.stop()


@pytest.fixture
def mail_app(make_app: Callable[..., Flask], smtp: SmtpSink) -> Flask:
    return make_app(SMTP_HOST="127.0.0.1", SMTP_PORT=smtp.port, SMTP_SECURITY="none")
