"""Racing requests against a real threaded server: one winner per version, one application
per Idempotency-Key, and the stored state always equals a replay of the stored actions."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from typing import Any

import pytest
import requests
from flask import Flask
from server_helpers import auth, create, join, stored_state, stored_version
from sqlalchemy import update
from sqlalchemy.orm.exc import StaleDataError

from dos_engine import GameRecord, replay
from dos_server.extensions import db
from dos_server.models import EventRow, GameRow
from dos_server.services import access, play
from testkit import race, serving


@pytest.fixture
def base_url(app: Flask) -> Iterator[str]:
    with serving(app) as url:
        yield url


def _game(app: Flask) -> tuple[str, dict[int, str]]:
    client = app.test_client()
    game = create(client, [{"name": "ann"}, {"bot": "random"}, {"name": "bob"}], target_score=1)
    tokens = {i["seat"]: join(client, game["id"], invite=i["invite"])["player_token"]
              for i in game["invites"]}
    return game["id"], tokens


def _assert_state_is_replay_of_actions(app: Flask, game_id: str) -> None:
    state = stored_state(app, game_id)
    with app.app_context():
        actions = db.session.execute(
            db.select(EventRow.seat, EventRow.data)
            .where(EventRow.game_id == game_id, EventRow.kind == "action")
            .order_by(EventRow.seq)
        ).all()
        db.session.remove()
    record = GameRecord(state.players, state.seed, state.options,
                        tuple((seat, data["action"]) for seat, data in actions))
    assert replay(record) == state


def _turn(app: Flask, game_id: str) -> tuple[int, int]:
    return stored_state(app, game_id).current, stored_version(app, game_id)


def test_one_of_twenty_identical_turns_wins(app: Flask, base_url: str) -> None:
    game_id, tokens = _game(app)
    for _ in range(2):  # two rounds of racing: a fresh version each time
        seat, version = _turn(app, game_id)
        state = stored_state(app, game_id)
        action = state.legal_actions(seat)[0].text()
        url = f"{base_url}/api/games/{game_id}/actions"

        def send(index: int, token: str = tokens[seat], url: str = url,
                 body: dict[str, Any] = {"version": version, "actions": [action]}) -> Any:  # noqa: B006
            return requests.post(url, json=body, headers=auth(token), timeout=60)

        results = race(20, send)
        statuses = Counter(r.status_code for r in results)
        assert statuses == {200: 1, 409: 19}, statuses
        for answer in results:
            if answer.status_code == 409:
                assert answer.headers["Content-Type"].startswith("application/problem+json")
                assert answer.json()["current_version"] == version + 1
        assert stored_version(app, game_id) == version + 1
        _assert_state_is_replay_of_actions(app, game_id)
        if stored_state(app, game_id).is_over:
            break


def test_racing_different_moves_of_both_players(app: Flask, base_url: str) -> None:
    """Both players race with every action each has listed: one request wins per version."""
    game_id, tokens = _game(app)
    seat, version = _turn(app, game_id)
    state = stored_state(app, game_id)
    sends = []
    for who, token in tokens.items():
        for action in state.legal_actions(who) or [state.legal_actions(seat)[0]]:
            sends.append((token, {"version": version, "turn": action.text()}))
    sends = (sends * 20)[:20]
    url = f"{base_url}/api/games/{game_id}/actions"
    def send(index: int) -> Any:
        token, body = sends[index]
        return requests.post(url, json=body, headers=auth(token), timeout=60)

    results = race(20, send)
    statuses = Counter(r.status_code for r in results)
    assert statuses[200] <= 1, statuses
    assert set(statuses) <= {200, 409}, statuses
    assert stored_version(app, game_id) == version + statuses[200]
    _assert_state_is_replay_of_actions(app, game_id)


def test_concurrent_retries_with_one_idempotency_key_apply_once(app: Flask, base_url: str) -> None:
    game_id, tokens = _game(app)
    seat, version = _turn(app, game_id)
    url = f"{base_url}/api/games/{game_id}/actions"
    headers = {**auth(tokens[seat]), "Idempotency-Key": "same-key"}

    def send(index: int) -> Any:
        return requests.post(url, json={"version": version, "actions": ["draw"]},
                             headers=headers, timeout=60)

    results = race(5, send)
    assert [r.status_code for r in results] == [200] * 5, [r.text for r in results]
    bodies = [r.json() for r in results]
    assert all(body == bodies[0] for body in bodies)
    assert stored_version(app, game_id) == version + 1
    with app.app_context():
        draws = db.session.execute(
            db.select(db.func.count()).select_from(EventRow)
            .where(EventRow.game_id == game_id, EventRow.kind == "action",
                   EventRow.version == version + 1)
        ).scalar_one()
        db.session.remove()
    assert draws >= 1
    assert bodies[0]["applied"] == ["draw"]
    _assert_state_is_replay_of_actions(app, game_id)


def test_a_move_is_not_written_over_a_version_it_did_not_read(app: Flask) -> None:
    """The move's own UPDATE (``play.write_game``) matches the version the game was read at,
    as the ORM's version check does: a row changed behind the reader's back is not overwritten
    (the backstop behind the lock)."""
    game_id, _ = _game(app)
    version = stored_version(app, game_id)
    with app.test_request_context():
        game = access.get_game(game_id)
        game.version += 1
        game.state = {**(game.state or {}), "overwritten": True}
        games = GameRow.__table__
        db.session.connection().execute(  # another writer, unseen by the loaded row
            update(games).where(games.c.id == game_id).values(version=games.c.version + 1))
        with pytest.raises(StaleDataError):
            play.write_game(game)
        db.session.rollback()
    assert stored_version(app, game_id) == version
    assert "overwritten" not in stored_state(app, game_id).to_dict()
