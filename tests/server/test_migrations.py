"""The migrations build exactly the models' schema, and go down and up again cleanly."""

from __future__ import annotations

import os
import subprocess
import sys

import flask_migrate
import pytest
import sqlalchemy as sa
from flask import Flask

from dos_server import create_app
from dos_server.extensions import db
from testkit import ROOT, app_config, dispose, upgrade

TABLES = {"games", "seats", "game_events", "idempotency_keys"}


def _tables(app: Flask) -> set[str]:
    with app.app_context():
        names = set(sa.inspect(db.engine).get_table_names())
        db.session.remove()
    return names


def _check(app: Flask) -> None:
    """``flask db check``: no difference between the migrated database and the models."""
    with app.app_context():
        try:
            flask_migrate.check()
        except SystemExit as exit_:  # Flask-Migrate exits 1 when autogenerate finds changes
            pytest.fail(f"the models and the migrations differ (exit {exit_.code})")


def _downgrade(app: Flask) -> None:
    with app.app_context():
        flask_migrate.downgrade(revision="base")


def test_upgrade_downgrade_upgrade_check(db_url: str) -> None:
    app = create_app(app_config(db_url))
    try:
        assert not _tables(app) & TABLES
        upgrade(app)
        assert _tables(app) >= TABLES
        _check(app)
        # The schema works: a game can be stored.
        assert app.test_client().post(
            "/api/games", json={"seats": [{"name": "a"}, {"name": "b"}]}).status_code == 201
        _downgrade(app)
        assert not _tables(app) & TABLES
        upgrade(app)
        assert _tables(app) >= TABLES
        _check(app)
    finally:
        dispose(app)


def test_flask_db_cli_upgrade_and_check(db_url: str) -> None:
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT / "server"), os.environ.get("PYTHONPATH", "")]),
        "DATABASE_URL": db_url,
        "SECRET_KEY": "cli-test-secret",
        "DOS_RATELIMIT_ENABLED": "false",
    }
    flask = [sys.executable, "-m", "flask", "--app", "dos_server"]
    for command in (["db", "upgrade"], ["db", "check"]):  # down and up again: in-process above
        done = subprocess.run([*flask, *command], env=env, cwd=ROOT, capture_output=True,
                              text=True, timeout=120, check=False)
        assert done.returncode == 0, (command, done.stdout, done.stderr)
    assert "No new upgrade operations detected" in done.stdout + done.stderr
