"""`days: 0` ends a vacation early: the clock runs again, whole unused days come back."""

from __future__ import annotations

from datetime import timedelta

from flask import Flask
from flask.testing import FlaskClient
from server_helpers import auth
from test_vacation_digest import _game, _row

from dos_server.models import as_utc


def test_ending_a_vacation_early_gives_back_days_and_time(app: Flask,
                                                           client: FlaskClient) -> None:
    game_id, tokens = _game(client, vacation_days=5)
    current = client.get(f"/api/games/{game_id}").get_json()["view"]["current"]
    before = _row(app, game_id)
    assert before.turn_deadline is not None
    client.post(f"/api/games/{game_id}/vacation", json={"days": 3}, headers=auth(tokens[current]))
    ended = client.post(f"/api/games/{game_id}/vacation", json={"days": 0},
                        headers=auth(tokens[current]))
    assert ended.status_code == 200, ended.get_data(as_text=True)
    body = ended.get_json()
    assert body["vacation_until"] is None
    assert body["days_left"] >= 4  # 2 whole days (and some hours) were not taken
    after = _row(app, game_id)
    assert after.turn_deadline is not None
    assert abs(as_utc(after.turn_deadline) - as_utc(before.turn_deadline)) < timedelta(minutes=1)
    seats = client.get(f"/api/games/{game_id}").get_json()["seats"]
    assert seats[current]["vacation_until"] is None
    # ending when not on vacation changes nothing
    again = client.post(f"/api/games/{game_id}/vacation", json={"days": 0},
                        headers=auth(tokens[current]))
    assert again.get_json()["days_left"] == body["days_left"]
