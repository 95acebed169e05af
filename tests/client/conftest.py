"""Client test fixtures: a real DOS server over HTTP in a background thread, and a config file
per test (``DOS_CLIENT_CONFIG``), so every ``dos-client`` command talks real HTTP."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from cli_helpers import Table, serve


@pytest.fixture
def server_url(tmp_path: Path) -> Iterator[str]:
    """A real server on a fresh SQLite database. A module whose commands touch what differs
    between the databases (locks, JSON columns, case rules) overrides it with
    :func:`serve` on ``db_url``, to run on PostgreSQL too."""
    yield from serve(f"sqlite:///{tmp_path / 'dos.sqlite3'}")


@pytest.fixture
def config_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "client" / "config.json"
    monkeypatch.setenv("DOS_CLIENT_CONFIG", str(path))
    # Never let the tester's own environment leak into the client.
    for name in ("DOS_SERVER", "DOS_PROFILE", "DOS_JSON", "DOS_DEBUG"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("NO_COLOR", "1")
    # English, whatever the tester's own language (a test asks for another with LANG).
    for name in ("LANGUAGE", "LC_ALL", "LC_MESSAGES"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("LANG", "C.UTF-8")
    return path


@pytest.fixture
def table(server_url: str, config_file: Path) -> Table:
    """A started two-seat game: Ann (profile ``default``, the host) and Bob (profile ``bob``)."""
    return Table(server_url, config_file)
