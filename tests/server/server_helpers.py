"""Helpers shared by the server tests: API calls, whole games, and the secrecy checks."""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

from flask import Flask
from flask.testing import FlaskClient

from dos_engine import Game
from dos_server.extensions import db
from dos_server.models import EventRow, GameRow

PROBLEM_JSON = "application/problem+json"

Observer = Callable[[str, int | None, Any], None]


def auth(token: str | None) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"} if token else {}


def assert_problem(response: Any, status: int) -> dict[str, Any]:
    """An RFC 9457 answer with ``status``; returns its body."""
    assert response.status_code == status, (response.status_code, response.get_data(as_text=True))
    assert response.mimetype == PROBLEM_JSON, response.mimetype
    body = response.get_json()
    for key in ("type", "title", "status", "detail"):
        assert key in body, (key, body)
    assert body["status"] == status
    assert isinstance(body["detail"], str)
    assert body["detail"]
    return dict(body)


def create(client: FlaskClient, seats: list[dict[str, Any]], **options: Any) -> dict[str, Any]:
    response = client.post("/api/games", json={"seats": seats, "options": options})
    assert response.status_code == 201, response.get_data(as_text=True)
    return dict(response.get_json())


def join(client: FlaskClient, game_id: str, **body: Any) -> dict[str, Any]:
    response = client.post(f"/api/games/{game_id}/join", json=body)
    assert response.status_code == 200, response.get_data(as_text=True)
    return dict(response.get_json())


def started_game(client: FlaskClient) -> tuple[str, str, dict[int, str]]:
    """A started two-person game: its id, the host token and each seat's player token."""
    created = create(client, [{"name": "ann"}, {"name": "bob"}])
    seats: dict[int, str] = {}
    for invite in created["invites"]:
        joined = join(client, created["id"], invite=invite["invite"])
        seats[joined["seat"]] = joined["player_token"]
    return created["id"], created["host_token"], seats


def joined_game(client: FlaskClient, names: list[str],
                **extra: Any) -> tuple[str, dict[int, str]]:
    """A game of these people (each with an address at example.org), every seat joined, so it
    has started: its id and each seat's player token. ``extra``: more of the creation's body."""
    created = create_game(client, {"seats": [{"name": name, "email": f"{name}@example.org"}
                                             for name in names], **extra})
    tokens = {}
    for invite in created["invites"]:
        joined = join(client, created["id"], invite=invite["invite"])
        tokens[joined["seat"]] = joined["player_token"]
    return created["id"], tokens


def create_game(client: FlaskClient, body: dict[str, Any]) -> dict[str, Any]:
    response = client.post("/api/games", json=body)
    assert response.status_code == 201, response.get_data(as_text=True)
    return dict(response.get_json())


def stored_state(app: Flask, game_id: str) -> Game:
    with app.app_context():
        row = db.session.get(GameRow, game_id)
        assert row is not None
        assert row.state is not None
        state = Game.from_dict(row.state)
        db.session.remove()
    return state


def stored_version(app: Flask, game_id: str) -> int:
    with app.app_context():
        row = db.session.get(GameRow, game_id)
        assert row is not None
        version = row.version
        db.session.remove()
    return version


def stored_secrets(app: Flask, game_id: str) -> dict[int, tuple[int | None, dict[str, Any]]]:
    """seq -> (seat, secret) of every stored event that has secret data."""
    with app.app_context():
        rows = db.session.execute(
            db.select(EventRow).where(EventRow.game_id == game_id, EventRow.secret.is_not(None))
        ).scalars().all()
        out = {row.seq: (row.seat, dict(row.secret or {})) for row in rows}
        db.session.remove()
    return out


def play_game(
    client: FlaskClient,
    game_id: str,
    tokens: dict[int, str],
    *,
    seed: int = 0,
    observe: Observer | None = None,
    max_requests: int = 5000,
) -> dict[str, Any]:
    """Play to the end through the API, varying number / turn / actions; returns the last game."""
    rng = random.Random(seed)
    any_token = next(iter(tokens.values()))
    for request_no in range(max_requests):
        game = client.get(f"/api/games/{game_id}", headers=auth(any_token))
        assert game.status_code == 200
        body = game.get_json()
        if observe:
            observe("game", None, body)
        if body["status"] == "finished":
            return dict(body)
        assert body["status"] == "active"
        seat = body["view"]["current"]
        token = tokens[seat]
        listing = client.get(f"/api/games/{game_id}/actions", headers=auth(token))
        assert listing.status_code == 200
        actions = listing.get_json()
        if observe:
            observe("actions", seat, actions)
        assert actions["your_turn"] is True
        assert [a["number"] for a in actions["actions"]] == list(
            range(1, len(actions["actions"]) + 1))
        choice = rng.choice(actions["actions"])
        post: dict[str, Any] = {"version": actions["version"]}
        mode = request_no % 3
        if mode == 0:
            post["number"] = choice["number"]
        elif mode == 1:
            post["turn"] = choice["action"]
        else:
            post["actions"] = [choice["action"]]
        answer = client.post(f"/api/games/{game_id}/actions", json=post, headers=auth(token))
        assert answer.status_code == 200, answer.get_data(as_text=True)
        result = answer.get_json()
        assert result["version"] == actions["version"] + 1
        assert result["applied"] == [choice["action"]]
        if observe:
            observe("post", seat, result)
    raise AssertionError("the game did not finish")


def walk(value: Any, path: str = "") -> list[tuple[str, Any]]:
    """Every (path, value) in a JSON document, for key checks."""
    out = [(path, value)]
    if isinstance(value, dict):
        for key, item in value.items():
            out += walk(item, f"{path}.{key}")
    elif isinstance(value, list):
        for index, item in enumerate(value):
            out += walk(item, f"{path}[{index}]")
    return out
