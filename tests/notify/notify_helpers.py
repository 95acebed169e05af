"""Real parts for the notification tests: a fake clock, the worker in-process and as a process,
API calls. The webhook receiver, SMTP sink, ports and app config are testkit.py's."""

from __future__ import annotations

import os
import secrets
import subprocess
import sys
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from flask import Flask
from flask.testing import FlaskClient

from dos_server.extensions import db
from dos_server.models import DeliveryAttemptRow, NotificationRow
from testkit import PYTHONPATH, SECRET, start_by_host

# Shared with the soak (tests/soak): they live in testkit.py; the notify tests import them here.
from testkit import Received as Received
from testkit import Receiver as Receiver
from testkit import Reply as Reply
from testkit import run_worker as testkit_run_worker
from testkit import stop_process as stop_process
from testkit import verify as verify
from testkit import wait_for as wait_for

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
    return testkit_run_worker(app, clock, passes)


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
    """A game the host started at once: its invited people play from the notifications (or
    join later)."""
    response = client.post("/api/games", json={"seats": seats, **options})
    assert response.status_code == 201, response.get_data(as_text=True)
    created = dict(response.get_json())
    if all(seat.get("name") or seat.get("bot") for seat in seats):
        created.update(start_by_host(client, created))
    return created


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
