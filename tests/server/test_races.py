"""Concurrent writes against a real multi-process server (gunicorn) give exactly
the outcomes some serial order allows, on SQLite and PostgreSQL, and no duplicate events.

Every write reads the game and its seats after it holds the lock and authenticates there, so
a request that waited for another writer sees that writer's committed rows.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import requests

from dos_server.extensions import db
from dos_server.models import EventRow, SeatRow
from testkit import ROOT, SECRET, build_app, dispose, free_port, race

BIN = Path(sys.executable).parent


class Live:
    def __init__(self, url: str, db_url: str) -> None:
        self.url = url
        self.db_url = db_url

    def post(self, path: str, token: str | None = None, **kwargs: Any) -> requests.Response:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        return requests.post(self.url + path, headers=headers, timeout=30, **kwargs)


@pytest.fixture
def live(db_url: str, tmp_path: Path) -> Iterator[Live]:
    """gunicorn with 3 worker processes of 4 threads on this test's (migrated) database."""
    dispose(build_app(db_url))
    port = free_port()
    env = {**os.environ, "PYTHONPATH": str(ROOT / "server"), "DATABASE_URL": db_url,
           "SECRET_KEY": SECRET, "DOS_RATELIMIT_ENABLED": "false"}
    log = tmp_path / "gunicorn.log"
    with log.open("w") as out:
        process = subprocess.Popen(
            [str(BIN / "gunicorn"), "-b", f"127.0.0.1:{port}", "-w", "3", "--threads", "4",
             "dos_server.wsgi:app"], cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 90  # a loaded 2-core machine starts gunicorn slowly
        while True:
            assert process.poll() is None, log.read_text()[-3000:]
            try:
                if requests.get(f"http://127.0.0.1:{port}/readyz", timeout=5).ok:
                    break
            except requests.RequestException:
                pass
            assert time.monotonic() < deadline, log.read_text()[-3000:]
            time.sleep(0.1)
        yield Live(f"http://127.0.0.1:{port}", db_url)
    finally:
        process.terminate()
        process.wait(timeout=20)
    assert "Traceback" not in log.read_text(), log.read_text()[-5000:]


def statuses(results: list[requests.Response]) -> Counter[int]:
    return Counter(r.status_code for r in results)


def create(live: Live, seats: list[dict[str, Any]], **body: Any) -> dict[str, Any]:
    answer = live.post("/api/games", json={"seats": seats, **body})
    assert answer.status_code == 201, answer.text
    return dict(answer.json())


def event_kinds(live: Live, game_id: str) -> Counter[str]:
    app = build_app(live.db_url)
    try:
        with app.app_context():
            kinds = Counter(db.session.execute(
                db.select(EventRow.kind).where(EventRow.game_id == game_id)).scalars())
            db.session.remove()
    finally:
        dispose(app)
    return kinds


def seat_rows(live: Live, game_id: str) -> list[SeatRow]:
    app = build_app(live.db_url)
    try:
        with app.app_context():
            seats = list(db.session.execute(db.select(SeatRow).where(
                SeatRow.game_id == game_id).order_by(SeatRow.index)).scalars())
            db.session.expunge_all()
            db.session.remove()
    finally:
        dispose(app)
    return seats


def _join_first_seat(live: Live, game: dict[str, Any]) -> None:
    """Seat 0 joins, so the race is for the seat whose claim deals."""
    answer = live.post(f"/api/games/{game['id']}/join", json={"invite": game["invites"][0]["invite"]})
    assert answer.status_code == 200, answer.text


def test_twelve_joins_of_one_open_seat_by_code(live: Live) -> None:
    game = create(live, [{"name": "host"}, {}])
    _join_first_seat(live, game)
    results = race(12, lambda i: live.post(f"/api/games/{game['id']}/join",
                                           json={"code": game["invite_code"], "name": f"p{i}"}))
    assert statuses(results)[200] == 1, [r.text for r in results]
    assert set(statuses(results)) <= {200, 409}
    winner = next(r.json() for r in results if r.status_code == 200)
    seats = seat_rows(live, game["id"])
    assert seats[1].name == winner["name"]
    for answer in results:  # only the winner's token opens the seat
        if answer.status_code == 200:
            me = requests.get(f"{live.url}/api/games/{game['id']}", timeout=10,
                              headers={"Authorization": f"Bearer {answer.json()['player_token']}"})
            assert me.json()["you"] == 1
    assert event_kinds(live, game["id"])["game_started"] == 1


def test_twelve_joins_with_one_invite(live: Live) -> None:
    game = create(live, [{"name": "host"}, {"name": "guest"}])
    _join_first_seat(live, game)
    invite = game["invites"][1]["invite"]
    results = race(12, lambda i: live.post(f"/api/games/{game['id']}/join",
                                           json={"invite": invite}))
    assert statuses(results) == Counter({200: 1, 409: 11})  # the claim spends the invite
    assert {r.json()["seat"] for r in results if r.status_code == 200} == {1}
    kinds = event_kinds(live, game["id"])
    assert kinds["game_started"] == 1


def _started(live: Live, people: int = 2) -> tuple[dict[str, Any], list[str]]:
    seats = [{"name": f"p{i}"} for i in range(people)] + [{"bot": "random"}]
    game = create(live, seats)
    players = [live.post(f"/api/games/{game['id']}/join", json={"invite": i["invite"]})
               .json()["player_token"] for i in game["invites"]]
    return game, players


def test_ten_resigns_of_one_seat(live: Live) -> None:
    game, players = _started(live)
    results = race(10, lambda i: live.post(f"/api/games/{game['id']}/resign", players[0]))
    assert statuses(results) == Counter({200: 1, 409: 9}), [r.text for r in results]
    assert event_kinds(live, game["id"])["resigned"] == 1


def test_eight_rotations_leave_exactly_one_valid_token(live: Live) -> None:
    game, _ = _started(live)
    results = race(8, lambda i: live.post(f"/api/games/{game['id']}/seats/0/token",
                                          game["host_token"]))
    assert statuses(results) == Counter({200: 8})
    valid = [r.json()["invite"] for r in results
             if live.post(f"/api/games/{game['id']}/join",
                          json={"invite": r.json()["invite"]}).status_code == 200]
    assert len(valid) == 1
    assert seat_rows(live, game["id"])[0].token_version == 1 + 8


def test_rotations_racing_the_seats_own_token(live: Live) -> None:
    """A token revoked by the request before it is refused, even if both were in flight."""
    game, players = _started(live)
    results = race(8, lambda i: live.post(f"/api/games/{game['id']}/seats/0/token", players[0]))
    assert statuses(results) == Counter({200: 1, 401: 7}), [r.text for r in results]


def test_six_removals_of_the_last_seat(live: Live) -> None:
    game = create(live, [{"name": "host"}, {}, {}, {}])
    results = race(6, lambda i: requests.delete(
        f"{live.url}/api/games/{game['id']}/seats/3", timeout=30,
        headers={"Authorization": f"Bearer {game['host_token']}"}))
    assert statuses(results)[200] == 1, [r.text for r in results]
    assert set(statuses(results)) <= {200, 403}
    assert len(seat_rows(live, game["id"])) == 3


def test_six_starts_and_six_cancels(live: Live) -> None:
    game = create(live, [{"name": "host"}, {"name": "guest"}, {}])
    results = race(6, lambda i: live.post(f"/api/games/{game['id']}/start", game["host_token"]))
    assert statuses(results) == Counter({200: 1, 409: 5}), [r.text for r in results]
    assert event_kinds(live, game["id"])["game_started"] == 1
    other = create(live, [{"name": "host"}, {}])
    results = race(6, lambda i: live.post(f"/api/games/{other['id']}/cancel", other["host_token"]))
    assert statuses(results) == Counter({200: 1, 409: 5}), [r.text for r in results]


def test_vacations_never_overdraw_the_allowance(live: Live) -> None:
    game = create(live, [{"name": "a"}, {"name": "b"}], vacation_days=14)
    token = live.post(f"/api/games/{game['id']}/join",
                      json={"invite": game["invites"][0]["invite"]}).json()["player_token"]
    results = race(6, lambda i: live.post(f"/api/games/{game['id']}/vacation", token,
                                          json={"days": 5}))
    assert statuses(results) == Counter({200: 2, 409: 4}), [r.text for r in results]
    assert seat_rows(live, game["id"])[0].vacation_used == 10


def test_notification_changes_land_whole(live: Live) -> None:
    game, players = _started(live)
    emails = [f"p{i}@example.org" for i in range(8)]
    results = race(8, lambda i: requests.put(
        f"{live.url}/api/games/{game['id']}/seats/0/notifications", timeout=30,
        json={"email": emails[i], "digest": i % 2 == 0},
        headers={"Authorization": f"Bearer {players[0]}"}))
    assert statuses(results) == Counter({200: 8})
    seat = seat_rows(live, game["id"])[0]
    assert seat.email in emails
    assert seat.digest == (emails.index(seat.email) % 2 == 0)  # one request's whole change
