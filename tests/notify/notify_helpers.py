"""Real parts for the notification tests: a webhook receiver, a fake clock, the worker in-process
and as a process, API calls. The SMTP sink, ports and app config are testkit.py's."""

from __future__ import annotations

import json
import os
import secrets
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from flask import Flask
from flask.testing import FlaskClient
from standardwebhooks.webhooks import Webhook

from dos_server import worker
from dos_server.extensions import db
from dos_server.models import DeliveryAttemptRow, NotificationRow
from testkit import PYTHONPATH, SECRET

FLASK = str(Path(sys.executable).parent / "flask")


# -- the clock and the worker in-process ---------------------------------------------------


class FakeClock:
    """The worker's clock, moved by the test: ``clock()`` is now, ``clock.advance(s)``."""

    def __init__(self, start: datetime | None = None) -> None:
        self.now = start or datetime.now(UTC)

    def __call__(self) -> datetime:
        return self.now

    def advance(self, seconds: float) -> datetime:
        self.now += timedelta(seconds=seconds)
        return self.now

    def set(self, moment: datetime) -> datetime:
        self.now = moment if moment.tzinfo else moment.replace(tzinfo=UTC)
        return self.now


def real_clock() -> datetime:
    return datetime.now(UTC)


def run_worker(app: Flask, clock: Callable[[], datetime] = real_clock, passes: int = 1) -> int:
    """``passes`` worker passes in-process (stops early when one delivers nothing)."""
    total = 0
    with app.app_context():
        try:
            for _ in range(passes):
                delivered = worker.run_once(clock)
                total += delivered
                if not delivered:
                    break
        finally:
            db.session.remove()
    return total


def rows(app: Flask, **where: Any) -> list[NotificationRow]:
    with app.app_context():
        query = sa.select(NotificationRow).order_by(NotificationRow.id)
        for key, value in where.items():
            query = query.where(getattr(NotificationRow, key) == value)
        found = list(db.session.execute(query).scalars().all())
        db.session.expunge_all()
        db.session.remove()
    return found


def attempts(app: Flask, notification_id: int) -> list[DeliveryAttemptRow]:
    with app.app_context():
        found = list(db.session.execute(
            sa.select(DeliveryAttemptRow)
            .where(DeliveryAttemptRow.notification_id == notification_id)
            .order_by(DeliveryAttemptRow.id)).scalars().all())
        db.session.expunge_all()
        db.session.remove()
    return found


# -- API -------------------------------------------------------------------------------------


def auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def create(client: FlaskClient, seats: list[dict[str, Any]], **options: Any) -> dict[str, Any]:
    response = client.post("/api/games", json={"seats": seats, **options})
    assert response.status_code == 201, response.get_data(as_text=True)
    return dict(response.get_json())


def player_tokens(client: FlaskClient, game: dict[str, Any]) -> dict[int, str]:
    out = {}
    for invite in game["invites"]:
        response = client.post(f"/api/games/{game['id']}/join", json={"invite": invite["invite"]})
        assert response.status_code == 200, response.get_data(as_text=True)
        out[invite["seat"]] = response.get_json()["player_token"]
    return out


def current(client: FlaskClient, game_id: str, token: str) -> dict[str, Any]:
    response = client.get(f"/api/games/{game_id}", headers=auth(token))
    assert response.status_code == 200
    return dict(response.get_json())


def play_one(client: FlaskClient, game_id: str, tokens: dict[int, str]) -> dict[str, Any] | None:
    """The current seat plays its first legal move; None when the game is over."""
    body = current(client, game_id, next(iter(tokens.values())))
    if body["status"] != "active":
        return None
    seat = body["view"]["current"]
    listing = client.get(f"/api/games/{game_id}/actions", headers=auth(tokens[seat])).get_json()
    answer = client.post(f"/api/games/{game_id}/actions", headers=auth(tokens[seat]),
                         json={"version": listing["version"], "number": 1})
    assert answer.status_code == 200, answer.get_data(as_text=True)
    return dict(answer.get_json())


def play_to_end(client: FlaskClient, game_id: str, tokens: dict[int, str],
                limit: int = 3000) -> None:
    for _ in range(limit):
        if play_one(client, game_id, tokens) is None:
            return
    raise AssertionError("the game did not finish")


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
    """An HTTP server on loopback that records every POST.

    ``script[path]`` lists the answers for one ``webhook-id`` at that path in turn (the last
    one repeats); default 200. ``delay`` seconds before each answer.
    """

    delay: float = 0.0
    script: dict[str, list[Reply]] = field(default_factory=dict)
    received: list[Received] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    server: ThreadingHTTPServer | None = None
    thread: threading.Thread | None = None

    def url(self, path: str) -> str:
        assert self.server is not None
        return f"http://127.0.0.1:{self.server.server_address[1]}{path}"

    def start(self) -> Receiver:
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("content-length") or 0))
                if receiver.delay:
                    time.sleep(receiver.delay)
                with receiver.lock:
                    wid = self.headers.get("webhook-id")
                    seen = sum(1 for r in receiver.received
                               if r.path == self.path and r.headers.get("webhook-id") == wid)
                    answers = receiver.script.get(self.path) or [(200, {})]
                    status, headers = answers[min(seen, len(answers) - 1)]
                    receiver.received.append(Received(
                        self.path, {k.lower(): v for k, v in self.headers.items()}, body,
                        status, time.monotonic()))
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


# -- worker processes ------------------------------------------------------------------------


def worker_process(url: str, tmp_path: Path, **env: str) -> subprocess.Popen[bytes]:
    """``flask --app dos_server worker`` as a real process on ``url``."""
    environment = {
        **os.environ,
        "DATABASE_URL": url,
        "SECRET_KEY": SECRET,
        "DOS_INSTANCE_PATH": str(tmp_path / "instance"),
        "DOS_WORKER_POLL_SECONDS": "0.05",
        "DOS_WEBHOOK_ALLOW_PRIVATE": "true",
        "PYTHONPATH": PYTHONPATH,
        **env,
    }
    log = open(tmp_path / f"worker-{secrets.token_hex(3)}.log", "wb")  # noqa: SIM115
    try:
        return subprocess.Popen([FLASK, "--app", "dos_server", "worker"], env=environment,
                                stdout=log, stderr=subprocess.STDOUT, cwd=tmp_path)
    finally:
        log.close()


def wait_for(check: Callable[[], bool], timeout: float, what: str) -> None:
    ends = time.monotonic() + timeout
    while time.monotonic() < ends:
        if check():
            return
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def stop_process(process: subprocess.Popen[bytes]) -> None:
    """SIGTERM, then SIGKILL after 10 s."""
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
