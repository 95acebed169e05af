"""Fixtures every database test shares, and a run-wide note about PostgreSQL."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from db_backends import BACKENDS, PG_URL, database_url


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if not PG_URL:
        terminalreporter.write_line(
            "PostgreSQL NOT tested: TEST_DATABASE_URL is unset", yellow=True, bold=True
        )


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    """Each database test runs on SQLite and, with TEST_DATABASE_URL, on PostgreSQL."""
    return str(request.param)


@pytest.fixture
def db_url(backend: str, tmp_path: Path) -> Iterator[str]:
    """A fresh database of the test's backend."""
    with database_url(backend, tmp_path) as url:
        yield url
