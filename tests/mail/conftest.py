"""Fixtures for the play-by-email tests: a migrated database per test (SQLite; PostgreSQL too
when TEST_DATABASE_URL is set), the real mail-in listener and a real SMTP sink on loopback."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from mailtest_helpers import MailWorld


@pytest.fixture
def world(db_url: str, tmp_path: Path) -> Iterator[MailWorld]:
    mail_world = MailWorld(db_url, tmp_path).start()
    try:
        yield mail_world
    finally:
        mail_world.stop()
