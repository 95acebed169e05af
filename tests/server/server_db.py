"""Building apps on a test database: shared by conftest.py and the tests (a module with a
unique name, since several test folders have a conftest.py)."""

from __future__ import annotations

from typing import Any

import flask_migrate
from flask import Flask
from server_helpers import SECRET

from db_backends import dispose
from dos_server import create_app


def upgrade(app: Flask, revision: str = "head") -> None:
    """``flask db upgrade`` in-process."""
    with app.app_context():
        flask_migrate.upgrade(revision=revision)


def app_config(url: str, **config: Any) -> dict[str, Any]:
    return {
        "TESTING": True,
        "SECRET_KEY": SECRET,
        "SQLALCHEMY_DATABASE_URI": url,
        # Tests create many games from one address; the limits are not under test here.
        "RATELIMIT_ENABLED": False,
        "WEBHOOK_ALLOW_PRIVATE": True,  # no DNS look-ups for generated webhook URLs
        **config,
    }


def build_app(url: str, **config: Any) -> Flask:
    app = create_app(app_config(url, **config))
    upgrade(app)
    return app


__all__ = ["app_config", "build_app", "dispose", "upgrade"]
