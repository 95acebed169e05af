"""The searching bot is offered wherever bots are: seats, the timeout policy, the client."""

from __future__ import annotations

import pytest
from flask import Flask
from flask.testing import FlaskClient
from server_helpers import assert_problem, create, join, play_game, stored_state

from dos_engine import GameRecord, replay
from dos_engine.search import LEVELS
from dos_server.services.lobby import BOT_STRATEGIES


def test_every_search_level_is_a_bot_the_server_offers() -> None:
    assert set(LEVELS) <= set(BOT_STRATEGIES)


@pytest.mark.parametrize("level", sorted(LEVELS))
def test_a_search_bot_seat_plays_a_game_through_the_api(
    app: Flask, client: FlaskClient, level: str
) -> None:
    game = create(client, [{"name": "ann"}, {"bot": level}], target_score=1)
    tokens = {0: join(client, game["id"], invite=game["invites"][0]["invite"])["player_token"]}
    final = play_game(client, game["id"], tokens, seed=3)
    assert final["view"]["winner"] is not None
    record = client.get(f"/api/games/{game['id']}/record").get_json()
    assert replay(GameRecord.from_dict(record)) == stored_state(app, game["id"])


def test_the_timeout_policy_may_be_a_search_level(client: FlaskClient) -> None:
    answer = client.post("/api/games", json={"seats": [{"name": "ann"}, {"name": "bob"}],
                                             "timeout_policy": "search-2"})
    assert answer.status_code == 201, answer.get_data(as_text=True)
    wrong = client.post("/api/games", json={"seats": [{"name": "ann"}, {"bot": "search-9"}]})
    assert_problem(wrong, 422)


def test_the_client_offers_the_same_bots() -> None:
    from dos_client.cli import BOT_CHOICES

    assert tuple(BOT_CHOICES) == BOT_STRATEGIES
