"""The root conftest stays light: it imports nothing but pytest, so ``pytest tests/engine`` runs
with the standard library, pytest and hypothesis alone. The database fixtures live in
testkit.py and are loaded by the conftest.py of the folders that use them."""

from __future__ import annotations

import os
from typing import Any


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if not os.environ.get("TEST_DATABASE_URL"):
        terminalreporter.write_line(
            "PostgreSQL NOT tested: TEST_DATABASE_URL is unset", yellow=True, bold=True
        )
