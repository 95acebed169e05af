"""Run-wide notes."""

from __future__ import annotations

from typing import Any

from db_backends import PG_URL


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if not PG_URL:
        terminalreporter.write_line(
            "PostgreSQL NOT tested: TEST_DATABASE_URL is unset", yellow=True, bold=True
        )
