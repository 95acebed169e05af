"""A move is stale only when the table changed; games without people.

A change that alters no seat's table or legal actions (a token rotation, a vacation, a
notification setting, a second join with one invite) must not make a pending move stale.
A game whose last person resigns or is forfeited ends at once instead of being played out
by bots inside the request.
"""

from __future__ import annotations

from datetime import timedelta

from flask import Flask
from flask.testing import FlaskClient
from server_helpers import assert_problem, auth, create, join

from dos_engine import GameRecord, replay
from dos_server.extensions import db
from dos_server.models import EventRow, GameRow, utcnow
from dos_server.services import access, play


def _two_people(client: FlaskClient) -> tuple[str, dict[int, str], dict[str, str]]:
    game = create(client, [{"name": "ann"}, {"name": "bob"}])
    invites = {i["seat"]: i["invite"] for i in game["invites"]}
    players = {seat: join(client, game["id"], invite=invite)["player_token"]
               for seat, invite in invites.items()}
    return game["id"], players, {"host": game["host_token"], **{str(s): i for s, i in
                                                              invites.items()}}


def _pending(client: FlaskClient, game_id: str, players: dict[int, str]) -> tuple[int, dict]:
    body = client.get(f"/api/games/{game_id}").get_json()
    seat = body["view"]["current"]
    listing = client.get(f"/api/games/{game_id}/actions", headers=auth(players[seat])).get_json()
    return seat, {"version": listing["version"], "number": 1}


def test_changes_off_the_table_never_make_a_pending_move_stale(client: FlaskClient) -> None:
    game_id, players, other = _two_people(client)
    seat, move = _pending(client, game_id, players)
    idle = 1 - seat
    host = auth(other["host"])
    # The other player (and the host) change things that touch nobody's table.
    rotated = client.post(f"/api/games/{game_id}/seats/{idle}/token", headers=host).get_json()
    players[idle] = join(client, game_id, invite=rotated["invite"])["player_token"]
    assert client.post(f"/api/games/{game_id}/vacation", json={"days": 1},
                       headers=auth(players[idle])).status_code == 200
    assert client.put(f"/api/games/{game_id}/seats/{idle}/notifications",
                      json={"email": "x@example.org", "digest": True},
                      headers=auth(players[idle])).status_code == 200
    assert client.post(f"/api/games/{game_id}/join",  # a second join with one invite
                       json={"invite": rotated["invite"]}).status_code == 409
    # The pending move still applies, by the number the player saw.
    players[seat] = client.post(f"/api/games/{game_id}/seats/{seat}/token",
                                headers=auth(players[seat])).get_json()["player_token"]
    answer = client.post(f"/api/games/{game_id}/actions", json=move, headers=auth(players[seat]))
    assert answer.status_code == 200, answer.get_data(as_text=True)


def test_a_move_does_make_the_old_version_stale(client: FlaskClient) -> None:
    game_id, players, _ = _two_people(client)
    seat, move = _pending(client, game_id, players)
    assert client.post(f"/api/games/{game_id}/actions", json=move,
                       headers=auth(players[seat])).status_code == 200
    body = client.get(f"/api/games/{game_id}").get_json()
    now = body["view"]["current"]
    stale = client.post(f"/api/games/{game_id}/actions", json=move, headers=auth(players[now]))
    if body["version"] != move["version"]:
        assert assert_problem(stale, 409)["type"].endswith("stale-version")


def test_out_of_turn_by_number_is_not_your_turn_like_by_text(client: FlaskClient) -> None:
    game_id, players, _ = _two_people(client)
    seat, move = _pending(client, game_id, players)
    idle = players[1 - seat]
    by_number = assert_problem(client.post(f"/api/games/{game_id}/actions", json=move,
                                           headers=auth(idle)), 409)
    by_text = assert_problem(client.post(f"/api/games/{game_id}/actions",
                                         json={"version": move["version"], "turn": "draw"},
                                         headers=auth(idle)), 409)
    assert by_number["type"] == by_text["type"]
    assert by_number["type"].endswith("not-your-turn")
    assert by_number["detail"] == by_text["detail"]


# -- games without people -----------------------------------------------------------------


def test_removing_a_seat_may_not_leave_only_bots(client: FlaskClient) -> None:
    game = create(client, [{"name": "ann"}, {}, {"bot": "greedy"}, {"bot": "random"}])
    host = auth(game["host_token"])
    # Without ann an open seat is left, which a person can still take...
    assert client.delete(f"/api/games/{game['id']}/seats/0", headers=host).status_code == 200
    # ... but without that one only bots would be left to play a whole game.
    answer = client.delete(f"/api/games/{game['id']}/seats/0", headers=host)
    assert assert_problem(answer, 409)["type"].endswith("no-person-left")
    body = client.get(f"/api/games/{game['id']}").get_json()
    assert (body["status"], len(body["seats"])) == ("waiting", 3)


def _alone_with_bots(client: FlaskClient, **options: object) -> tuple[str, str]:
    game = create(client, [{"name": "ann"}, {"bot": "greedy"}, {"bot": "random"},
                           {"bot": "greedy"}], target_score=10_000, **options)  # 2 of a kind
    token = join(client, game["id"], invite=game["invites"][0]["invite"])["player_token"]
    return game["id"], token


def _assert_ended_without_people(app: Flask, client: FlaskClient, game_id: str,
                                 actions_before: int) -> None:
    body = client.get(f"/api/games/{game_id}").get_json()
    assert body["status"] == "finished"
    assert body["view"]["legal_actions"] == []
    assert body["fairness"]["seed"]  # the game is over: its seed is revealed
    with app.app_context():
        kinds = list(db.session.execute(db.select(EventRow.kind).where(
            EventRow.game_id == game_id).order_by(EventRow.seq)).scalars())
        db.session.remove()
    assert kinds[-1] == "game_ended"
    assert kinds.count("action") == actions_before  # no bot played on inside the request
    record = client.get(f"/api/games/{game_id}/record")
    assert record.status_code == 200
    replayed = replay(GameRecord.from_dict(record.get_json()))
    assert replayed.turn_no >= 1


def test_last_person_resigning_ends_the_game_at_once(app: Flask, client: FlaskClient) -> None:
    game_id, token = _alone_with_bots(client)
    history = client.get(f"/api/games/{game_id}/events?limit=500").get_json()["events"]
    actions = sum(1 for event in history if event["kind"] == "action")
    assert client.post(f"/api/games/{game_id}/resign", headers=auth(token)).status_code == 200
    _assert_ended_without_people(app, client, game_id, actions)
    again = client.post(f"/api/games/{game_id}/actions", json={"version": 99, "number": 1},
                        headers=auth(token))
    assert_problem(again, 409)


def test_last_person_forfeited_ends_the_game_at_once(app: Flask, client: FlaskClient) -> None:
    answer = client.post("/api/games", json={
        "seats": [{"name": "ann"}, {"bot": "greedy"}, {"bot": "random"}],
        "options": {"target_score": 10_000}, "turn_time_limit": 60, "forfeit_after": 1})
    game = answer.get_json()
    join(client, game["id"], invite=game["invites"][0]["invite"])
    with app.app_context():
        row = db.session.get(GameRow, game["id"])
        assert row is not None
        actions = db.session.execute(db.select(db.func.count()).where(
            EventRow.game_id == game["id"], EventRow.kind == "action")).scalar_one()
        db.session.remove()
    with app.app_context():
        locked = access.get_game(game["id"], for_update=True)
        play.apply_timeout(locked, utcnow() + timedelta(seconds=61))
        db.session.commit()
        db.session.remove()
    body = client.get(f"/api/games/{game['id']}").get_json()
    assert body["seats"][0]["resigned"] is True
    # The timeout policy played ann's one turn; then nobody was left and the game ended.
    with app.app_context():
        kinds = list(db.session.execute(db.select(EventRow.kind).where(
            EventRow.game_id == game["id"]).order_by(EventRow.seq)).scalars())
        db.session.remove()
    assert kinds[-1] == "game_ended"
    assert "forfeited" in kinds
    assert body["status"] == "finished"
    assert kinds.count("action") - actions <= 20  # ann's timed-out turn, not a whole game


def test_two_bots_of_one_strategy_and_people_remain(client: FlaskClient) -> None:
    game_id, _ = _alone_with_bots(client)
    body = client.get(f"/api/games/{game_id}").get_json()
    names = [seat["name"] for seat in body["seats"]]
    assert len(set(names)) == 4
    assert body["status"] == "active"
