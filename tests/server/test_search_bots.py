"""The searching bot is offered wherever bots are (seats, the timeout policy, the client), and
it moves in the worker, not inside a person's request."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient
from server_helpers import assert_problem, auth, create, join, stored_state

from dos_engine import GameRecord, replay
from dos_engine.search import LEVELS
from dos_engine.strategies import BOTS, STRATEGIES
from dos_server import worker
from dos_server.models import utcnow
from dos_server.services.lobby import BOT_STRATEGIES


def test_every_search_level_is_a_bot_the_server_offers() -> None:
    assert set(LEVELS) <= set(BOT_STRATEGIES)


def _post(client: FlaskClient, game_id: str, token: str) -> dict[str, Any]:
    """The person plays their first legal action; returns the answer's body."""
    listing = client.get(f"/api/games/{game_id}/actions", headers=auth(token)).get_json()
    answer = client.post(f"/api/games/{game_id}/actions", headers=auth(token),
                         json={"version": listing["version"], "number": 1})
    assert answer.status_code == 200, answer.get_data(as_text=True)
    return dict(answer.get_json())


@pytest.mark.parametrize("level", sorted(LEVELS))
def test_a_search_bot_moves_in_the_worker_not_in_the_request(
    app: Flask, client: FlaskClient, level: str
) -> None:
    """A person's request stops before the searching bot's turn; the worker's pass plays it."""
    def worker_pass(version: int) -> None:
        with app.app_context():  # the bot waits for the worker: a read changes nothing
            assert worker.play_bot_turns(utcnow()) == 1
            assert worker.play_bot_turns(utcnow()) == 0  # played once, not twice
        after = client.get(f"/api/games/{game_id}", headers=auth(token)).get_json()
        assert after["version"] == version + 1
        assert after["status"] == "finished" or after["view"]["current"] == 0

    game_id, token = _game(client, [{"name": "ann"}, {"bot": level}])
    assert _play_out(app, client, game_id, token, worker_pass) > 0


def _game(client: FlaskClient, seats: list[dict[str, str]]) -> tuple[str, str]:
    """A one-person game to 1 point: its id and the person's (seat 0) token."""
    game = create(client, seats, target_score=1)
    return game["id"], join(client, game["id"], invite=game["invites"][0]["invite"])["player_token"]


def _play_out(app: Flask, client: FlaskClient, game_id: str, token: str,
              worker_pass: Callable[[int], None]) -> int:
    """The person plays their first action at each turn, ``worker_pass(version)`` runs when a
    bot is left to move; until the game is over. Returns the worker's passes; the record
    replays to the stored state."""
    passes = 0
    for _ in range(2000):
        body = client.get(f"/api/games/{game_id}", headers=auth(token)).get_json()
        if body["status"] == "finished":
            break
        if body["view"]["current"] == 0:
            _post(client, game_id, token)
            continue
        worker_pass(body["version"])
        passes += 1
    else:
        raise AssertionError("the game did not finish")
    record = client.get(f"/api/games/{game_id}/record").get_json()
    assert replay(GameRecord.from_dict(record)) == stored_state(app, game_id)
    return passes


def test_the_timeout_policy_may_be_a_search_level(client: FlaskClient) -> None:
    answer = client.post("/api/games", json={"seats": [{"name": "ann"}, {"name": "bob"}],
                                             "timeout_policy": "search-2"})
    assert answer.status_code == 201, answer.get_data(as_text=True)
    wrong = client.post("/api/games", json={"seats": [{"name": "ann"}, {"bot": "search-9"}]})
    assert_problem(wrong, 422)


def test_the_client_offers_the_same_bots() -> None:
    import click

    from dos_client.cli import cli

    (bot,) = [p for p in cli.commands["new"].params if p.name == "bots"]
    assert isinstance(bot.type, click.Choice)
    assert tuple(bot.type.choices) == BOT_STRATEGIES


def test_every_bot_offered_is_a_strategy() -> None:
    assert list(BOTS) == list(STRATEGIES)
    assert tuple(BOTS) == BOT_STRATEGIES


def test_a_long_tail_of_bot_turns_is_cut_short_and_the_worker_plays_it_on(
    app: Flask, client: FlaskClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A request plays at most REQUEST_BOT_ACTIONS of bots after its move (then stops at a bot's
    turn); the worker plays the rest in bounded steps, and the record replays to the state."""
    from dos_server.services import play

    monkeypatch.setattr(play, "REQUEST_BOT_ACTIONS", 1)
    monkeypatch.setattr(play, "WORKER_BOT_ACTIONS", 1)
    def worker_pass(_version: int) -> None:
        with app.app_context():
            assert worker.play_bot_turns(utcnow()) == 1

    game_id, token = _game(client, [{"name": "ann"}, {"bot": "greedy"}, {"bot": "random"},
                                    {"bot": "greedy"}])
    assert _play_out(app, client, game_id, token, worker_pass) > 0  # bots left to the worker
