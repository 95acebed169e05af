"""The root conftest stays light: it imports nothing but pytest, so ``pytest tests/engine`` runs
with the standard library, pytest and hypothesis alone. The database fixtures live in
testkit.py and are loaded by the conftest.py of the folders that use them."""

from __future__ import annotations

import os
from typing import Any

# Figures a test records with ``record_property("figures", text)`` (the soak's throughput and
# recovery times): printed in the summary, also when the test ran in an xdist worker.
_FIGURES: list[str] = []


def pytest_runtest_logreport(report: Any) -> None:
    if report.when == "call":
        _FIGURES.extend(str(value) for name, value in report.user_properties if name == "figures")


def pytest_terminal_summary(terminalreporter: Any) -> None:
    for text in _FIGURES:
        terminalreporter.write_line(text, bold=True)
    if not os.environ.get("TEST_DATABASE_URL"):
        terminalreporter.write_line(
            "PostgreSQL NOT tested: TEST_DATABASE_URL is unset", yellow=True, bold=True
        )
