"""Fixtures of the operations tests (retention, backups): an app per test on a fresh migrated
database (SQLite; PostgreSQL too with TEST_DATABASE_URL) that mails through a real SMTP sink."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from flask import Flask

from testkit import MAIL_DOMAIN, SmtpSink, app_factory, backend, db_url, smtp

__all__ = ["backend", "db_url", "mail_app", "make_app", "smtp"]


@pytest.fixture
def make_app(db_url: str, tmp_path: Path, smtp: SmtpSink) -> Iterator[Callable[..., Flask]]:
    with app_factory(db_url, INSTANCE_PATH=str(tmp_path / "instance"), SMTP_HOST="127.0.0.1",
                     SMTP_PORT=smtp.port, SMTP_SECURITY="none", MAIL_DOMAIN=MAIL_DOMAIN) as make:
        yield make


@pytest.fixture
def mail_app(make_app: Callable[..., Flask]) -> Flask:
    return make_app()
