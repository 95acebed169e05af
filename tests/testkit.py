"""What the server-side tests share (tests/server, notify, mail, client, e2e): the test secret,
free loopback ports, the test app's config and databases, a real server in a thread, and one
SMTP sink. ``tests`` is on pytest's path, so this is ``import testkit`` (a unique module name).

The engine tests never import this module: they need only the standard library, pytest and
hypothesis. The database fixtures ``backend`` and ``db_url`` are defined here and re-exported
by the conftest.py of each folder that uses them, not by the root conftest.py.

Every test gets its own database: a temporary SQLite file (the server uses WAL and ``BEGIN
IMMEDIATE``, which an in-memory database cannot share between connections) or, when
``TEST_DATABASE_URL`` is set, a fresh PostgreSQL schema (``search_path`` set through the URL),
so parallel xdist workers never share tables. The schema is always built by the real
migrations, never by ``create_all``.
"""

from __future__ import annotations

import email
import email.policy
import os
import secrets
import socket
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from email.message import EmailMessage
from pathlib import Path
from typing import Any, Self
from urllib.parse import quote

import flask_migrate
import pytest
import requests
import sqlalchemy as sa
from aiosmtpd.controller import Controller
from flask import Flask
from werkzeug.serving import make_server

from dos_server import create_app
from dos_server.config import normalize_database_url
from dos_server.extensions import db

SECRET = "test-secret"
ROOT = Path(__file__).resolve().parents[1]
# For a subprocess that imports our packages from this checkout (as pytest's pythonpath does).
PYTHONPATH = os.pathsep.join([str(ROOT / "server"), str(ROOT / "client")])


def free_port() -> int:
    """A loopback port nothing listens on (yet)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


# -- databases -------------------------------------------------------------------------------

PG_URL = os.environ.get("TEST_DATABASE_URL")
BACKENDS = ["sqlite", "postgresql"] if PG_URL else ["sqlite"]


@contextmanager
def pg_schema() -> Iterator[str]:
    """A fresh PostgreSQL schema; yields a URL whose connections use it, drops it after."""
    assert PG_URL
    base = normalize_database_url(PG_URL)
    name = "t_" + secrets.token_hex(6)
    admin = sa.create_engine(base, poolclass=sa.pool.NullPool)
    with admin.begin() as conn:
        conn.execute(sa.text(f'CREATE SCHEMA "{name}"'))
    sep = "&" if "?" in base else "?"
    try:
        yield f"{base}{sep}options={quote(f'-csearch_path={name}')}"
    finally:
        with admin.begin() as conn:
            conn.execute(sa.text(f'DROP SCHEMA IF EXISTS "{name}" CASCADE'))
        admin.dispose()


@contextmanager
def database_url(backend: str, tmp_path: Path) -> Iterator[str]:
    """A fresh database of ``backend`` ("sqlite" or "postgresql")."""
    if backend == "sqlite":
        yield f"sqlite:///{tmp_path / 'dos.sqlite3'}"
    else:
        with pg_schema() as url:
            yield url


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    """Each database test runs on SQLite and, with TEST_DATABASE_URL, on PostgreSQL."""
    return str(request.param)


@pytest.fixture
def db_url(backend: str, tmp_path: Path) -> Iterator[str]:
    """A fresh database of the test's backend."""
    with database_url(backend, tmp_path) as url:
        yield url


# -- the app -----------------------------------------------------------------------------------


def app_config(url: str, **config: Any) -> dict[str, Any]:
    """The test app's config on the database at ``url``; ``config`` adds or overrides."""
    return {
        "TESTING": True,
        "SECRET_KEY": SECRET,
        "SQLALCHEMY_DATABASE_URI": url,
        # Tests create many games from one address; the limits are not under test here.
        "RATELIMIT_ENABLED": False,
        "WEBHOOK_ALLOW_PRIVATE": True,  # receivers are on loopback; no DNS for test URLs
        **config,
    }


def upgrade(app: Flask, revision: str = "head") -> None:
    """``flask db upgrade`` in-process."""
    with app.app_context():
        flask_migrate.upgrade(revision=revision)


def build_app(url: str, migrate: bool = True, **config: Any) -> Flask:
    """The test app on ``url``, its database migrated to head unless ``migrate`` is false."""
    app = create_app(app_config(url, **config))
    if migrate:
        upgrade(app)
    return app


def dispose(app: Flask) -> None:
    with app.app_context():
        db.session.remove()
        db.engine.dispose()


@contextmanager
def app_factory(url: str, **defaults: Any) -> Iterator[Callable[..., Flask]]:
    """Builds apps on one database (several, e.g. with different keys): the first migrates it.
    Every app is disposed of at the end."""
    apps: list[Flask] = []

    def make(**config: Any) -> Flask:
        app = build_app(url, migrate=not apps, **{**defaults, **config})
        apps.append(app)
        return app

    try:
        yield make
    finally:
        for app in apps:
            dispose(app)


@contextmanager
def serving(app: Flask) -> Iterator[str]:
    """``app`` under werkzeug's threaded server on a free loopback port; yields its base URL."""
    server = make_server("127.0.0.1", 0, app, threaded=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}"
    finally:
        server.shutdown()
        thread.join(timeout=10)
        server.server_close()


# -- SMTP --------------------------------------------------------------------------------------


class SmtpSink:
    """aiosmtpd on loopback collecting what it is sent; ``messages`` are parsed with the standard
    ``email`` package. ``options`` go to aiosmtpd's ``Controller`` (TLS, an authenticator)."""

    def __init__(self, port: int | None = None, **options: Any) -> None:
        self.port = port or free_port()
        self.options = options
        self.raw: list[tuple[str, list[str], bytes]] = []
        self.lock = threading.Lock()
        self.controller: Controller | None = None

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:  # noqa: N802
        with self.lock:
            self.raw.append((envelope.mail_from, list(envelope.rcpt_tos), bytes(envelope.content)))
        return "250 OK"

    def start(self) -> Self:
        self.controller = Controller(self, hostname="127.0.0.1", port=self.port, **self.options)
        self.controller.start()
        return self

    def stop(self) -> None:
        if self.controller is not None:
            self.controller.stop()
            self.controller = None

    @property
    def messages(self) -> list[EmailMessage]:
        with self.lock:
            raw = [content for _, _, content in self.raw]
        return [parse_email(content) for content in raw]

    def to(self, address: str) -> list[EmailMessage]:
        """The messages whose envelope named ``address`` as a recipient, in order."""
        with self.lock:
            raw = [content for _, rcpts, content in self.raw if address in rcpts]
        return [parse_email(content) for content in raw]


def parse_email(content: bytes) -> EmailMessage:
    return email.message_from_bytes(content, policy=email.policy.default)


# -- races -------------------------------------------------------------------------------------


def race(count: int, send: Callable[[int], requests.Response]) -> list[requests.Response]:
    """``count`` requests released at once from their own threads; none may answer 5xx."""
    barrier = threading.Barrier(count)
    results: list[Any] = [None] * count

    def run(index: int) -> None:
        barrier.wait(15)
        try:
            results[index] = send(index)
        except Exception as error:  # shown by the assertion below
            results[index] = error

    threads = [threading.Thread(target=run, args=(i,)) for i in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(90)
    assert all(isinstance(r, requests.Response) for r in results), results
    assert all(r.status_code < 500 for r in results), [r.text for r in results]
    return results
