"""What the server-side tests share (tests/server, notify, mail, client, e2e, soak): the test
secret, free loopback ports, the test app's config and databases, a real server in a thread,
one SMTP sink, processes, a webhook receiver and a player's mail client. ``tests`` is on
pytest's path, so this is ``import testkit`` (a unique module name).

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
import errno
import html
import http.client
import json
import os
import random
import re
import secrets
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from email.message import EmailMessage
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Self
from urllib.parse import quote

import flask_migrate
import pytest
import requests
import sqlalchemy as sa
from aiosmtpd.controller import Controller
from flask import Flask
from flask.testing import FlaskClient
from standardwebhooks.webhooks import Webhook
from werkzeug.serving import ThreadedWSGIServer, make_server

from dos_server import create_app
from dos_server.config import normalize_database_url
from dos_server.extensions import db

SECRET = "test-secret"
MAIL_DOMAIN = "play.test"  # the reply addresses of the play-by-email tests
ROOT = Path(__file__).resolve().parents[1]
# For a subprocess that imports our packages from this checkout (as pytest's pythonpath does).
PYTHONPATH = os.pathsep.join([str(ROOT / "server"), str(ROOT / "client")])


def _ephemeral_low() -> int:
    try:
        return int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768


# Listening ports come from below the kernel's ephemeral range: a port the kernel handed out
# (bind to 0) is also what it hands the next outgoing connection as its source port, so a
# listener started a moment later finds it taken.
LISTEN_PORTS = range(20000, max(20001, _ephemeral_low()))


def free_port() -> int:
    """A loopback port outside the ephemeral range that nothing listens on (yet)."""
    for _ in range(200):
        port = random.choice(LISTEN_PORTS)
        with socket.socket() as sock:
            try:
                sock.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    raise RuntimeError(f"no free loopback port in {LISTEN_PORTS}")


def listen(make: Callable[[int], Controller], port: int | None = None) -> Controller:
    """``make(port)`` started: on ``port``, or on a free port, picked again should another
    process take it between the look and the bind. A controller that fails to bind gets its
    event loop closed (aiosmtpd leaves it open)."""
    for attempt in range(5):
        controller = make(port or free_port())
        try:
            controller.start()
            return controller
        except OSError as error:
            if controller._thread is not None:
                controller._thread.join(timeout=5)
                controller._thread = None
            controller.loop.close()
            if port is not None or error.errno != errno.EADDRINUSE or attempt == 4:
                raise
    raise AssertionError("unreachable")


# -- databases -------------------------------------------------------------------------------

PG_URL = os.environ.get("TEST_DATABASE_URL")
# Redis, for the rate limits that several web instances share (the machine runs one).
REDIS_URL = os.environ.get("TEST_REDIS_URL", "redis://127.0.0.1:6379/0")
BACKENDS = ["sqlite", "postgresql"] if PG_URL else ["sqlite"]


@contextmanager
def sent_statements(engine: sa.Engine | None = None) -> Iterator[list[tuple[str, Any]]]:
    """The SQL statements ``engine`` (the app's, in its app context, by default) sends
    meanwhile, each with its parameters."""
    watched = engine if engine is not None else db.engine
    sent: list[tuple[str, Any]] = []

    def seen(_conn: Any, _cursor: Any, statement: str, parameters: Any, *_: Any) -> None:
        sent.append((statement, parameters))

    sa.event.listen(watched, "before_cursor_execute", seen)
    try:
        yield sent
    finally:
        sa.event.remove(watched, "before_cursor_execute", seen)


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


# For what only PostgreSQL has (its locks, its server's connections): the test's ``backend``
# is PostgreSQL alone. CI always sets TEST_DATABASE_URL (.ci/run), and so does ``make test``
# when a local PostgreSQL answers; without one, pytest reports the empty parameter set.
ON_POSTGRESQL = pytest.mark.parametrize("backend", ["postgresql"] if PG_URL else [],
                                        indirect=True)


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
        # Tests read a seat's game and expect its email at once: no holding while it looks
        # (tests/notify/test_attention.py and the soak set it themselves).
        "ACTIVE_SECONDS": 0,
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
def serving(app: Flask, *, finish_requests: bool = False) -> Iterator[str]:
    """``app`` under werkzeug's threaded server on a free loopback port; yields its base URL.

    ``finish_requests``: on leaving, wait for the requests still running (a page's long-poll
    answers within ``WEB_WAIT_SECONDS``), so none touches the database after it is gone.
    """
    server = make_server("127.0.0.1", 0, app, threaded=True)
    if finish_requests:
        assert isinstance(server, ThreadedWSGIServer)
        server.daemon_threads = False  # socketserver then joins them in server_close()
        server.block_on_close = True
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
        self.fixed_port = port
        self.port = port or 0  # known once started
        self.options = options
        self.raw: list[tuple[str, list[str], bytes]] = []
        self.lock = threading.Lock()
        self.controller: Controller | None = None

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:  # noqa: N802
        with self.lock:
            self.raw.append((envelope.mail_from, list(envelope.rcpt_tos), bytes(envelope.content)))
        return "250 OK"

    def start(self) -> Self:
        """Listen on the port named at construction, or on a free one (then ``self.port``)."""
        def make(port: int) -> Controller:
            self.port = port
            return Controller(self, hostname="127.0.0.1", port=port, **self.options)

        self.controller = listen(make, self.fixed_port)
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


@pytest.fixture
def smtp() -> Iterator[SmtpSink]:
    """A real SMTP server (aiosmtpd) on a free loopback port, for the test's app to mail to."""
    sink = SmtpSink().start()
    yield sink
    sink.stop()


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


# -- processes -------------------------------------------------------------------------------

BIN = Path(sys.executable).parent  # the venv's gunicorn and flask


def run_worker(app: Flask, clock: Callable[[], datetime] | None = None, passes: int = 1) -> int:
    """Up to ``passes`` worker passes in-process on ``clock`` (default: the real one), as the
    worker process runs them; stops early when one delivers nothing."""
    from dos_server import worker

    total = 0
    with app.app_context():
        try:
            for _ in range(passes):
                delivered = worker.run_once(clock) if clock is not None else worker.run_once()
                total += delivered
                if not delivered:
                    break
        finally:
            db.session.remove()
    return total


def wait_for(check: Callable[[], bool], timeout: float, what: str,
             log: Callable[[], str] | None = None) -> None:
    """Until ``check()``; else fail naming ``what`` (and the tail of ``log()``, if given)."""
    ends = time.monotonic() + timeout
    while time.monotonic() < ends:
        if check():
            return
        time.sleep(0.05)
    tail = f"\n{log()[-4000:]}" if log is not None else ""
    raise AssertionError(f"timed out waiting for {what}{tail}")


def stop_process(process: subprocess.Popen[bytes]) -> None:
    """SIGTERM, then SIGKILL after 10 s."""
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def http_ready(port: int, path: str = "/readyz") -> bool:
    """Whether a server on loopback ``port`` answers ``path`` with 200."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
    try:
        conn.request("GET", path)
        return conn.getresponse().status == 200
    except OSError:
        return False
    finally:
        conn.close()


def wait_ready(port: int, process: subprocess.Popen[bytes], log: Path,
               timeout: float = 30) -> None:
    """Until the server ``process`` (its output in ``log``) answers ``/readyz`` on ``port``."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            pytest.fail(f"the server exited ({process.returncode}):\n{log.read_text()[-3000:]}")
        if http_ready(port):
            return
        time.sleep(0.1)
    pytest.fail(f"the server was not ready within {timeout:.0f} s:\n{log.read_text()[-3000:]}")


# -- webhooks --------------------------------------------------------------------------------


@dataclass
class Received:
    path: str
    headers: dict[str, str]
    body: bytes
    status: int
    at: float

    @property
    def json(self) -> dict[str, Any]:
        return dict(json.loads(self.body))

    @property
    def webhook_id(self) -> str:
        return self.headers["webhook-id"]


Reply = tuple[int, dict[str, str]]


@dataclass
class Receiver:
    """An HTTP server on loopback that records every complete POST.

    ``script[path]`` lists the answers for one ``webhook-id`` at that path in turn (the last
    one repeats); default 200, or 500 at random with probability ``fail_rate`` (drawn from
    ``seed``). ``delay`` seconds before each answer. ``on_receive`` sees each request before
    it is answered.
    """

    delay: float = 0.0
    fail_rate: float = 0.0
    seed: int = 0
    on_receive: Callable[[Received], None] | None = None
    script: dict[str, list[Reply]] = field(default_factory=dict)
    received: list[Received] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    rng: random.Random = field(init=False)
    server: ThreadingHTTPServer | None = None
    thread: threading.Thread | None = None

    def url(self, path: str) -> str:
        assert self.server is not None
        return f"http://127.0.0.1:{self.server.server_address[1]}{path}"

    def start(self) -> Receiver:
        receiver = self
        self.rng = random.Random(self.seed)

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                expected = int(self.headers.get("content-length") or 0)
                body = self.rfile.read(expected)
                if len(body) < expected:
                    # The sender died mid-request; a real endpoint never acts on a cut-off body.
                    self.close_connection = True
                    return
                if receiver.delay:
                    time.sleep(receiver.delay)
                with receiver.lock:
                    wid = self.headers.get("webhook-id")
                    seen = sum(1 for r in receiver.received
                               if r.path == self.path and r.headers.get("webhook-id") == wid)
                    answers = receiver.script.get(self.path) or [
                        (500 if receiver.rng.random() < receiver.fail_rate else 200, {})]
                    status, headers = answers[min(seen, len(answers) - 1)]
                    receipt = Received(self.path, {k.lower(): v for k, v in self.headers.items()},
                                       body, status, time.monotonic())
                    receiver.received.append(receipt)
                    if receiver.on_receive is not None:
                        receiver.on_receive(receipt)
                self.send_response(status)
                for key, value in headers.items():
                    self.send_header(key, value)
                self.send_header("content-length", "0")
                self.end_headers()

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()
        return self

    def stop(self) -> None:
        if self.server is not None:
            self.server.shutdown()
            self.server.server_close()
            self.server = None

    def at(self, path: str) -> list[Received]:
        with self.lock:
            return [r for r in self.received if r.path == path]

    def all(self) -> list[Received]:
        with self.lock:
            return list(self.received)


def verify(received: Received, secret: str) -> dict[str, Any]:
    """Standard Webhooks verification (raises if the signature or timestamp is wrong)."""
    payload = Webhook(secret).verify(received.body, received.headers)
    return dict(payload)


# -- the player's mail client (play by email) -----------------------------------------------


def reply_to(message: EmailMessage) -> str:
    address = str(message["Reply-To"])
    assert address.startswith("play+"), address
    assert address.endswith("@" + MAIL_DOMAIN), address
    return address


def token_version(address: str) -> int:
    return int(address.split("@")[0].split(".")[2])


def text_of(message: EmailMessage) -> str:
    part = message.get_body(preferencelist=("plain",))
    assert part is not None
    return str(part.get_content())


def moves_of(message: EmailMessage) -> list[str]:
    return re.findall(r"^\s+\d+\. (\S+(?: \S+)?)", text_of(message).split("Your moves:")[-1],
                      re.M) if "Your moves:" in text_of(message) else []


STYLES = ("gmail", "outlook", "html", "qp", "base64")


def write_reply(style: str, original: EmailMessage, command: str, sender: str,
                name: str = "Bjørn Ødegård") -> EmailMessage:
    """A reply to ``original`` the way a real client writes it."""
    quoted = text_of(original)
    message = EmailMessage()
    message["From"] = f"{name} <{sender}>"
    message["To"] = reply_to(original)
    message["Subject"] = "Re: " + str(original["Subject"])
    message["Message-ID"] = f"<{secrets.token_hex(8)}@client.example>"
    message["In-Reply-To"] = str(original["Message-ID"])
    message["References"] = str(original["Message-ID"])
    wrote = f"On Mon, 1 Jan 2029 at 10:00, DOS by mail <dos@{MAIL_DOMAIN}>"
    # What a person typed, as mail clients put it in HTML: escaped, Gmail's lines split by
    # <br>, Apple Mail's each in a <div>.
    lines = [html.escape(line) for line in command.splitlines()] or [""]
    gmail_lines, apple_lines = "<br>".join(lines), "".join(f"<div>{line}</div>" for line in lines)
    if style == "gmail":
        body = (f"{command}\n\n{wrote}\nwrote:\n\n"
                + "".join(f"> {line}\n" for line in quoted.splitlines()))
        message.set_content(body)
        message.add_alternative(
            f'<div dir="ltr">{gmail_lines}</div><br><div class="gmail_quote">'
            f'<div class="gmail_attr">{wrote} wrote:<br></div>'
            f"<blockquote><pre>{quoted}</pre></blockquote></div>", subtype="html")
    elif style == "outlook":
        body = (f"{command}\r\n\r\n________________________________\r\n"
                f"From: DOS by mail <dos@{MAIL_DOMAIN}>\r\nSent: Monday, January 1, 2029 10:00 AM\r\n"
                f"To: {name} <{sender}>\r\nSubject: {original['Subject']}\r\n\r\n{quoted}")
        message.set_content(body)
    elif style == "html":
        message.set_content(
            f"<html><head><style>p {{margin: 0}}</style></head><body>{apple_lines}"
            f"<div>&nbsp;</div><div class=\"gmail_quote\">{wrote} wrote:<br>"
            f"<blockquote type=\"cite\"><pre>{quoted}</pre></blockquote></div></body></html>",
            subtype="html")
    elif style == "qp":
        message.set_content(f"{command}\n\nMerci, à bientôt\n-- \n{name}\nSent from my iPhone\n\n"
                            f"{wrote} wrote:\n> {quoted[:200]}", cte="quoted-printable")
    else:
        message.set_content(f"{command}\n\nSent from my Galaxy\n\n-----Original Message-----\n"
                            f"{quoted}", cte="base64")
    return message


def start_by_host(client: FlaskClient, created: dict[str, Any]) -> dict[str, Any]:
    """The host starts a game that waits for its invited people: they play from the emails.
    Returns the started game as the host sees it."""
    answer = client.post(f"/api/games/{created['id']}/start",
                         headers={"Authorization": f"Bearer {created['host_token']}"})
    assert answer.status_code == 200, answer.get_data(as_text=True)
    return dict(answer.get_json())


def stored_notes(app: Flask, game_id: str) -> dict[int, str | None]:
    """Each seat's private notes as stored, by seat."""
    from dos_server.models import SeatRow

    with app.app_context():
        rows = db.session.execute(sa.select(SeatRow.index, SeatRow.notes).where(
            SeatRow.game_id == game_id)).all()
        db.session.remove()
    return {index: notes for index, notes in rows}


def finish_game(app: Flask, game_id: str, winner: int | None, *, emails: bool = False) -> None:
    """End a started game as a winning move would leave it: ``winner`` reached the target
    (None: ended with the scores as they stand, as a vote does). ``emails``: the game-over
    notifications are queued too, as the move's transaction queues them."""
    from dos_engine import Game
    from dos_server.database import write_transaction
    from dos_server.services import access, notify, play

    # As the server writes: the game locked first (SQLite: BEGIN IMMEDIATE, which waits for
    # the server's writers; a read that turns into a write is refused while they write).
    with app.app_context():
        with write_transaction():
            row = access.get_game(game_id, for_update=True)
            assert row.state is not None
            state = Game.from_dict(row.state)
            if winner is not None:
                state.winner = winner
                state.scores[winner] = state.options.target_score
            row.state = state.to_dict()
            play.mark_finished(row)
            row.version += 1
            if emails:
                notify.after_change(row, state, new_turn=False, just_over=True, kinds=[])
        db.session.remove()
