"""Fixtures for the play-by-email tests: a migrated database per test (SQLite; PostgreSQL too
when TEST_DATABASE_URL is set), the real mail-in listener and a real SMTP sink on loopback."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from mailtest_helpers import BACKENDS, MailWorld, database_url


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def world(backend: str, tmp_path: Path) -> Iterator[MailWorld]:
    with database_url(backend, tmp_path) as url:
        mail_world = MailWorld(url, tmp_path).start()
        try:
            yield mail_world
        finally:
            mail_world.stop()
