"""Fixtures for the play-by-email tests: a migrated database per test (SQLite; PostgreSQL too
when TEST_DATABASE_URL is set), the real mail-in listener and a real SMTP sink on loopback."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from mailtest_helpers import MailWorld

from testkit import backend, db_url

__all__ = ["backend", "db_url", "world"]


@pytest.fixture
def world(db_url: str, tmp_path: Path) -> Iterator[MailWorld]:
    mail_world = MailWorld(db_url, tmp_path).start()
    try:
        yield mail_world
    finally:
        mail_world.stop()
