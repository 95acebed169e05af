"""Rematch as a standing challenge, and the score of a series, through the API on both
backends: one challenge per finished game (also when two players press at once, against a
real multi-process server), accepting by the same call, the deal when everyone is in, the
host's start with those who accepted, a series of three games numbered and scored, and the
refusals (an unfinished game, a spectator, a stranger, a second acceptance)."""

from __future__ import annotations

from typing import Any

from flask import Flask
from flask.testing import FlaskClient
from server_helpers import assert_problem, auth, joined_game
from test_races import Live, create, live, statuses

from dos_server.extensions import db
from dos_server.models import GameRow
from testkit import build_app, dispose, finish_game, race

__all__ = ["live"]


def press(client: FlaskClient, game_id: str, token: str | None) -> Any:
    return client.post(f"/api/games/{game_id}/rematch", headers=auth(token))


def view(client: FlaskClient, game_id: str, token: str | None = None) -> dict[str, Any]:
    answer = client.get(f"/api/games/{game_id}", headers=auth(token))
    assert answer.status_code == 200, answer.get_data(as_text=True)
    return dict(answer.get_json())


def _three(client: FlaskClient) -> tuple[str, dict[int, str]]:
    return joined_game(client, ["ann", "bob", "cid"])


def test_one_challenge_accepted_seat_by_seat_deals_when_everyone_is_in(
        app: Flask, client: FlaskClient) -> None:
    game_id, tokens = _three(client)
    assert view(client, game_id, tokens[0])["rematch"] is None
    assert view(client, game_id, tokens[0])["series"] is None
    finish_game(app, game_id, 1)
    first = press(client, game_id, tokens[0])
    assert first.status_code == 201, first.get_data(as_text=True)
    made = first.get_json()
    new_id = made["game_id"]
    assert new_id != game_id
    assert made["created"] is True
    assert made["host_token"]
    assert made["seat"] == 0
    assert made["player_token"]
    assert made["game"]["status"] == "waiting"
    assert [s["claimed"] for s in made["game"]["seats"]] == [True, False, False]
    # the finished game's answer shows the challenge and who accepted, to its seats
    old = view(client, game_id, tokens[2])
    assert old["rematch"]["game_id"] == new_id
    assert [(s["name"], s["accepted"]) for s in old["rematch"]["seats"]] == [
        ("ann", True), ("bob", False), ("cid", False)]
    assert old["series"] == {"id": game_id, "no": 1,
                             "score": [{"name": "ann", "wins": 0}, {"name": "bob", "wins": 1},
                                       {"name": "cid", "wins": 0}]}
    second = press(client, game_id, tokens[1])
    assert second.status_code == 200  # the same challenge, not a second game
    assert second.get_json()["game_id"] == new_id
    assert second.get_json()["created"] is False
    assert "host_token" not in second.get_json()
    bob = second.get_json()["player_token"]
    again = press(client, game_id, tokens[1])  # accepting twice changes nothing
    assert again.status_code == 200
    assert again.get_json()["seat"] == 1
    assert view(client, new_id, bob)["status"] == "waiting"
    assert view(client, new_id, bob)["you"] == 1
    third = press(client, game_id, tokens[2])
    assert third.status_code == 200
    new = view(client, new_id, third.get_json()["player_token"])
    assert new["status"] == "active"
    assert new["you"] == 2
    assert new["series"]["id"] == game_id
    assert new["series"]["no"] == 2
    assert [e["wins"] for e in new["series"]["score"]] == [0, 1, 0]
    with app.app_context():
        old_row = db.session.get(GameRow, game_id)
        assert old_row is not None
        assert (old_row.rematch_id, old_row.series_id, old_row.series_no) == (new_id, game_id, 1)
        assert db.session.query(GameRow).count() == 2
        db.session.remove()
    late = press(client, game_id, tokens[0])  # after the deal: still the same answer
    assert late.status_code == 200
    assert late.get_json()["game_id"] == new_id


def test_the_host_starts_with_those_who_accepted(app: Flask, client: FlaskClient) -> None:
    game_id, tokens = _three(client)
    finish_game(app, game_id, 0)
    made = press(client, game_id, tokens[2]).get_json()
    new_id, host = made["game_id"], made["host_token"]
    start = client.post(f"/api/games/{new_id}/start", headers=auth(host))
    assert_problem(start, 409)  # cid alone accepted: too few to play
    press(client, game_id, tokens[0])
    start = client.post(f"/api/games/{new_id}/start", headers=auth(host))
    assert start.status_code == 200, start.get_data(as_text=True)
    body = start.get_json()
    assert body["status"] == "active"
    assert [s["name"] for s in body["seats"]] == ["ann", "cid"]  # bob did not accept
    late = press(client, game_id, tokens[1])
    assert assert_problem(late, 409)["detail"]


def test_bots_accept_at_once_and_the_host_may_ask(app: Flask, client: FlaskClient) -> None:
    created = client.post("/api/games", json={"seats": [{"name": "ann"}, {"bot": "greedy"}]})
    game = created.get_json()
    ann = client.post(f"/api/games/{game['id']}/join",
                      json={"invite": game["invites"][0]["invite"]}).get_json()["player_token"]
    finish_game(app, game["id"], 1)
    by_host = press(client, game["id"], game["host_token"])
    assert by_host.status_code == 201
    made = by_host.get_json()
    assert made["seat"] is None
    assert made["player_token"] is None
    assert made["host_token"]
    assert [s["claimed"] for s in made["game"]["seats"]] == [False, True]
    accepted = press(client, game["id"], ann)
    assert accepted.status_code == 200
    assert view(client, made["game_id"], accepted.get_json()["player_token"])["status"] == "active"


def test_a_series_of_three_games_is_numbered_and_scored(app: Flask,
                                                         client: FlaskClient) -> None:
    game_id, tokens = joined_game(client, ["ann", "bob"])
    ids = [game_id]
    for winner in (1, 1, None):  # the third ends level (by a vote): nobody's win
        finish_game(app, ids[-1], winner)
        if len(ids) == 3:
            break
        answers = [press(client, ids[-1], tokens[seat]) for seat in (0, 1)]
        tokens = {seat: answers[seat].get_json()["player_token"] for seat in (0, 1)}
        ids.append(answers[0].get_json()["game_id"])
    last = view(client, ids[2], tokens[0])
    assert last["series"] == {"id": game_id, "no": 3,
                              "score": [{"name": "ann", "wins": 0}, {"name": "bob", "wins": 2}]}
    assert view(client, ids[1])["series"]["no"] == 2  # spectators see the series too
    first = view(client, game_id)  # the first game's answer follows the series' score
    assert first["series"]["score"][1]["wins"] == 2
    with app.app_context():
        rows = {row.id: row for row in db.session.query(GameRow).all()}
        assert [(rows[i].series_id, rows[i].series_no) for i in ids] == [
            (game_id, 1), (game_id, 2), (game_id, 3)]
        assert [rows[i].rematch_id for i in ids] == [ids[1], ids[2], None]
        db.session.remove()


def test_refusals(app: Flask, client: FlaskClient) -> None:
    game_id, tokens = joined_game(client, ["ann", "bob"])
    assert_problem(press(client, game_id, tokens[0]), 409)  # not over yet
    other_id, other_tokens = joined_game(client, ["dan", "eve"])
    finish_game(app, game_id, 0)
    assert_problem(press(client, game_id, None), 403)  # a spectator
    assert_problem(press(client, game_id, other_tokens[0]), 403)  # a stranger's token
    assert_problem(press(client, game_id, "not-a-token"), 401)
    assert_problem(press(client, "nosuchgame", tokens[0]), 404)
    with app.app_context():
        assert db.session.query(GameRow).count() == 2  # nothing was made
        assert db.session.get(GameRow, game_id).rematch_id is None  # type: ignore[union-attr]
        db.session.remove()
    made = press(client, game_id, tokens[0]).get_json()
    client.post(f"/api/games/{made['game_id']}/cancel", headers=auth(made["host_token"]))
    anew = press(client, game_id, tokens[1])  # the rematch was cancelled: bob asks anew
    assert anew.status_code == 201
    assert anew.get_json()["game_id"] != made["game_id"]
    assert anew.get_json()["game"]["series"]["no"] == 2
    assert view(client, game_id)["rematch"]["game_id"] == anew.get_json()["game_id"]
    assert other_id


def test_two_players_pressing_at_once_get_one_challenge(live: Live) -> None:
    game = create(live, [{"name": "ann"}, {"name": "bob"}, {"name": "cid"}])
    tokens = []
    for invite in game["invites"]:
        joined = live.post(f"/api/games/{game['id']}/join", json={"invite": invite["invite"]})
        tokens.append(joined.json()["player_token"])
    app = build_app(live.db_url)
    try:
        finish_game(app, game["id"], 0)
    finally:
        dispose(app)
    results = race(6, lambda i: live.post(f"/api/games/{game['id']}/rematch", tokens[i % 3]))
    assert statuses(results) == {201: 1, 200: 5}, [r.text for r in results]
    assert len({r.json()["game_id"] for r in results}) == 1
    new = results[0].json()["game_id"]
    seen = requests_get(live, new, results[0].json()["player_token"])
    assert seen["status"] == "active"  # all three accepted: dealt once
    app = build_app(live.db_url)
    try:
        with app.app_context():
            assert db.session.query(GameRow).count() == 2
            db.session.remove()
    finally:
        dispose(app)


def requests_get(live: Live, game_id: str, token: str) -> dict[str, Any]:
    import requests

    answer = requests.get(f"{live.url}/api/games/{game_id}",
                          headers={"Authorization": f"Bearer {token}"}, timeout=30)
    assert answer.status_code == 200, answer.text
    return dict(answer.json())


def test_an_acceptance_changes_the_finished_games_etag(app: Flask, client: FlaskClient) -> None:
    game_id, tokens = joined_game(client, ["ann", "bob"])
    finish_game(app, game_id, 0)
    before = client.get(f"/api/games/{game_id}", headers=auth(tokens[1]))
    tag = before.headers["ETag"]
    same = client.get(f"/api/games/{game_id}", headers={**auth(tokens[1]), "If-None-Match": tag})
    assert same.status_code == 304
    press(client, game_id, tokens[0])  # the old game's row holds the challenge now
    made = client.get(f"/api/games/{game_id}", headers={**auth(tokens[1]), "If-None-Match": tag})
    assert made.status_code == 200
    assert made.get_json()["rematch"]["seats"][0]["accepted"] is True
    tag = made.headers["ETag"]
    press(client, game_id, tokens[1])  # only the new game's rows change
    accepted = client.get(f"/api/games/{game_id}",
                          headers={**auth(tokens[1]), "If-None-Match": tag})
    assert accepted.status_code == 200
    assert accepted.get_json()["rematch"]["status"] == "active"
