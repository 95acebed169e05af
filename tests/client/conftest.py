"""Client test fixtures: a real DOS server over HTTP in a background thread, and a config file
per test (``DOS_CLIENT_CONFIG``), so every ``dos-client`` command talks real HTTP."""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator
from pathlib import Path

import flask_migrate
import pytest
from cli_helpers import Table
from werkzeug.serving import make_server

from dos_server import create_app
from dos_server.extensions import db


@pytest.fixture
def server_url(tmp_path: Path) -> Iterator[str]:
    """A real server on a free loopback port, on a fresh migrated SQLite database."""
    app = create_app({
        "TESTING": True,
        "SECRET_KEY": "client-test-secret",
        "SQLALCHEMY_DATABASE_URI": f"sqlite:///{tmp_path / 'dos.sqlite3'}",
        "RATELIMIT_ENABLED": False,
    })
    with app.app_context():
        flask_migrate.upgrade()
    logging.getLogger("werkzeug").setLevel(logging.WARNING)  # no access lines in the output
    httpd = make_server("127.0.0.1", 0, app, threaded=True)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_port}"
    finally:
        httpd.shutdown()
        thread.join(timeout=10)
        httpd.server_close()
        with app.app_context():
            db.session.remove()
            db.engine.dispose()


@pytest.fixture
def config_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "client" / "config.json"
    monkeypatch.setenv("DOS_CLIENT_CONFIG", str(path))
    # Never let the tester's own environment leak into the client.
    for name in ("DOS_SERVER", "DOS_PROFILE", "DOS_JSON", "DOS_DEBUG"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("NO_COLOR", "1")
    return path


@pytest.fixture
def table(server_url: str, config_file: Path) -> Table:
    """A started two-seat game: Ann (profile ``default``, the host) and Bob (profile ``bob``)."""
    return Table(server_url, config_file)
