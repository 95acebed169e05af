"""The printed DOS rule (RULES.md 5) and the bonus_placement option (3.5) through the HTTP API.

Calls and catches come in or out of turn: the numbered legal actions of a seat whose turn it is
not list ``dos`` (when it is exposed) and ``catch N``; playing them bumps the game's version.
"""

from __future__ import annotations

from typing import Any

from flask import Flask
from flask.testing import FlaskClient
from server_helpers import assert_problem, auth, create, join, stored_state, stored_version

from dos_call_helpers import waiting_seat_holds_two


def _game(client: FlaskClient, **options: Any) -> tuple[str, dict[int, str]]:
    game = create(client, [{"name": "ann"}, {"name": "bob"}], **options)
    tokens = {}
    for invite in game["invites"]:
        tokens[invite["seat"]] = join(client, game["id"], invite=invite["invite"])["player_token"]
    return game["id"], tokens


def _listed(client: FlaskClient, game_id: str, token: str) -> dict[str, Any]:
    answer = client.get(f"/api/games/{game_id}/actions", headers=auth(token))
    assert answer.status_code == 200, answer.get_data(as_text=True)
    return dict(answer.get_json())


def test_5_new_games_follow_the_printed_dos_rule(app: Flask, client: FlaskClient) -> None:
    game_id, _ = _game(client, dos_call=True)
    options = stored_state(app, game_id).options
    assert options.dos_call
    assert options.dos_rule == "printed"


def test_5_1_call_out_of_turn_through_the_api(app: Flask, client: FlaskClient) -> None:
    game_id, tokens = _game(client, dos_call=True)
    waiting, current = waiting_seat_holds_two(app, game_id)
    listing = _listed(client, game_id, tokens[waiting])
    assert [a["action"] for a in listing["actions"]] == ["dos"]
    assert listing["your_turn"] is False
    assert f"catch {waiting}" in [a["action"] for a in _listed(client, game_id, tokens[current])
                                  ["actions"]]
    version = stored_version(app, game_id)
    refused = client.post(f"/api/games/{game_id}/actions", headers=auth(tokens[waiting]),
                          json={"version": version, "actions": ["draw"]})
    assert assert_problem(refused, 409)["type"].endswith("not-your-turn")
    answer = client.post(f"/api/games/{game_id}/actions", headers=auth(tokens[waiting]),
                         json={"version": version, "number": 1})
    assert answer.status_code == 200, answer.get_data(as_text=True)
    body = answer.get_json()
    assert body["applied"] == ["dos"]
    assert body["version"] == version + 1  # the tables changed
    assert [e["kind"] for e in body["events"]] == ["action", "dos_called"]
    assert body["game"]["view"]["dos_calls"][waiting] is True
    assert body["game"]["view"]["current"] == current
    assert f"catch {waiting}" not in [a["action"] for a in _listed(client, game_id,
                                                                   tokens[current])["actions"]]


def test_5_2_catch_through_the_api(app: Flask, client: FlaskClient) -> None:
    game_id, tokens = _game(client, dos_call=True)
    waiting, current = waiting_seat_holds_two(app, game_id)
    version = stored_version(app, game_id)
    answer = client.post(f"/api/games/{game_id}/actions", headers=auth(tokens[current]),
                         json={"version": version, "actions": [f"catch {waiting}"]})
    assert answer.status_code == 200, answer.get_data(as_text=True)
    body = answer.get_json()
    assert body["version"] == version + 1
    kinds = [(e["kind"], e["seat"]) for e in body["events"]]
    assert kinds == [("action", current), ("caught", waiting), ("drew", waiting)]
    assert body["game"]["view"]["hand_sizes"][waiting] == 4
    assert body["game"]["view"]["current"] == current  # a catch is not a turn
    again = client.post(f"/api/games/{game_id}/actions", headers=auth(tokens[current]),
                        json={"version": version + 1, "actions": [f"catch {waiting}"]})
    assert assert_problem(again, 422)["rule"] == "5.3"


def test_3_5_bonus_placement_option_through_the_api(app: Flask, client: FlaskClient) -> None:
    game_id, _ = _game(client, bonus_placement="mandatory")
    assert stored_state(app, game_id).options.bonus_placement == "mandatory"
    game_id, _ = _game(client)
    assert stored_state(app, game_id).options.bonus_placement == "optional"
    refused = client.post("/api/games", json={"seats": [{"name": "a"}, {"name": "b"}],
                                              "options": {"bonus_placement": "sometimes"}})
    assert_problem(refused, 422)
