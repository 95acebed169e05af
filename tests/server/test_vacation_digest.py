"""Vacation days pause a seat's clock; digest mode gathers your-turn emails into one a day."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from flask import Flask
from flask.testing import FlaskClient
from server_helpers import assert_problem, auth, join
from sqlalchemy import select

from dos_server import worker
from dos_server.extensions import db
from dos_server.models import GameRow, NotificationRow, as_utc


def _game(client: FlaskClient, **extra: Any) -> tuple[str, list[str]]:
    body = {"seats": [{"name": "ann", "email": "ann@example.org"},
                      {"name": "bob", "email": "bob@example.org"}],
            "turn_time_limit": 3600, **extra}
    created = client.post("/api/games", json=body).get_json()
    tokens = [join(client, created["id"], invite=i["invite"])["player_token"]
              for i in created["invites"]]
    return created["id"], tokens


def _row(app: Flask, game_id: str) -> GameRow:
    with app.app_context():
        row = db.session.get(GameRow, game_id)
        assert row is not None
        db.session.expunge(row)
        return row


def test_vacation_moves_the_deadline_of_the_current_turn(app: Flask, client: FlaskClient) -> None:
    game_id, tokens = _game(client, vacation_days=5)
    current = client.get(f"/api/games/{game_id}").get_json()["view"]["current"]
    before = _row(app, game_id)
    assert before.turn_deadline is not None
    answer = client.post(f"/api/games/{game_id}/vacation", json={"days": 2},
                         headers=auth(tokens[current]))
    assert answer.status_code == 200, answer.get_data(as_text=True)
    assert answer.get_json()["days_left"] == 3
    after = _row(app, game_id)
    assert after.turn_deadline is not None
    moved = as_utc(after.turn_deadline) - as_utc(before.turn_deadline)
    assert moved == timedelta(days=2)
    seats = client.get(f"/api/games/{game_id}").get_json()["seats"]
    assert seats[current]["vacation_until"] is not None
    # The allowance is per year: 3 days are left, 4 are refused and nothing changes.
    refused = client.post(f"/api/games/{game_id}/vacation", json={"days": 4},
                          headers=auth(tokens[current]))
    assert "3 vacation day(s) left" in assert_problem(refused, 409)["detail"]
    assert _row(app, game_id).turn_deadline == after.turn_deadline


def test_the_worker_does_not_time_out_a_player_on_vacation(app: Flask,
                                                            client: FlaskClient) -> None:
    game_id, tokens = _game(client)
    current = client.get(f"/api/games/{game_id}").get_json()["view"]["current"]
    client.post(f"/api/games/{game_id}/vacation", json={"days": 3},
                headers=auth(tokens[current]))
    version = client.get(f"/api/games/{game_id}").get_json()["version"]
    two_hours_later = datetime.now(UTC) + timedelta(hours=2)  # past the 1 h limit
    with app.app_context():
        worker.check_deadlines(two_hours_later)
        db.session.remove()
    assert client.get(f"/api/games/{game_id}").get_json()["version"] == version  # no timeout
    with app.app_context():
        assert worker.check_deadlines(two_hours_later + timedelta(days=3)) == 1
        db.session.remove()
    body = client.get(f"/api/games/{game_id}").get_json()
    assert body["version"] > version
    assert body["view"]["current"] != current


def test_vacation_needs_a_player_token(client: FlaskClient) -> None:
    game_id, _ = _game(client)
    assert_problem(client.post(f"/api/games/{game_id}/vacation", json={"days": 1}), 403)
    assert_problem(client.post(f"/api/games/{game_id}/vacation", json={"days": -1},
                               headers=auth("x")), 422)


def _queued(app: Flask, event: str, target: str | None = None) -> list[NotificationRow]:
    with app.app_context():
        query = select(NotificationRow).where(NotificationRow.event == event)
        if target:
            query = query.where(NotificationRow.target == target)
        rows = list(db.session.execute(query).scalars())
        db.session.remove()
        return rows


def test_digest_mode_sends_one_email_a_day_listing_waiting_games(
    app: Flask, client: FlaskClient
) -> None:
    games = []
    for _ in range(2):
        game_id, tokens = _game(client)
        current = client.get(f"/api/games/{game_id}").get_json()["view"]["current"]
        games.append((game_id, tokens, current))
    # Ann takes her turns as a digest in both games.
    for game_id, tokens, _ in games:
        answer = client.put(f"/api/games/{game_id}/seats/0/notifications",
                            json={"digest": True}, headers=auth(tokens[0]))
        assert answer.get_json()["digest"] is True
    waiting = [g for g in games if g[2] == 0]
    now = datetime.now(UTC)
    with app.app_context():
        queued = worker.digest.send_digests(now)
        again = worker.digest.send_digests(now + timedelta(hours=23))
        db.session.remove()
    digests = _queued(app, "digest", "ann@example.org")
    if waiting:
        assert queued == 1
        assert len(digests) == 1
        listed = {g["id"] for g in digests[0].payload["games"]}
        assert listed == {g[0] for g in waiting}
    else:
        assert queued == 0
    assert again == 0  # at most one a day
    with app.app_context():
        later = worker.digest.send_digests(now + timedelta(hours=25))
        db.session.remove()
    assert later == (1 if waiting else 0)


def test_digest_seats_get_no_separate_your_turn_email(app: Flask, client: FlaskClient) -> None:
    game_id, tokens = _game(client)
    for seat in (0, 1):
        client.put(f"/api/games/{game_id}/seats/{seat}/notifications", json={"digest": True},
                   headers=auth(tokens[seat]))
    before = len(_queued(app, "your_turn"))
    body = client.get(f"/api/games/{game_id}").get_json()
    current = body["view"]["current"]
    listing = client.get(f"/api/games/{game_id}/actions",
                         headers=auth(tokens[current])).get_json()
    # Play until the turn passes; no your_turn email may be queued for digest seats.
    version = listing["version"]
    while client.get(f"/api/games/{game_id}").get_json()["view"]["current"] == current:
        listing = client.get(f"/api/games/{game_id}/actions",
                             headers=auth(tokens[current])).get_json()
        texts = [a["action"] for a in listing["actions"]]
        choice = "draw" if "draw" in texts else texts[-1]
        answer = client.post(f"/api/games/{game_id}/actions",
                             json={"version": listing["version"], "actions": [choice]},
                             headers=auth(tokens[current]))
        assert answer.status_code == 200, answer.get_data(as_text=True)
    assert version < client.get(f"/api/games/{game_id}").get_json()["version"]
    emails = [r for r in _queued(app, "your_turn") if r.channel == "email"]
    assert len(emails) == before
