"""Standing orders (services/orders.py) through the HTTP API: what each plays and when, in the
transaction of the move that made it apply, marked in the history, replayed from the record;
never a choice; ``standing_dos``; who catches when several could; bad input; privacy."""

from __future__ import annotations

import random
from datetime import timedelta
from typing import Any

from flask import Flask
from flask.testing import FlaskClient
from orders_helpers import arrange, history, marked, orders_game, set_orders
from server_helpers import assert_problem, auth, stored_state, stored_version

from dos_engine import CallDos, Catch, Game, GameRecord, Options, parse_action, replay
from dos_engine.wording import describe
from dos_server.extensions import db
from dos_server.models import utcnow
from dos_server.services import access, archive, notify
from dos_server.services.orders import turn_actions

# Nothing in these hands matches a 1 (no 1s, no wild cards; a double needs 2 or more).
NO_MATCH = ["R3", "G4", "B5", "Y6", "R7", "G8", "B9"]
ONES = ["R1", "G1"]
SHORT = ["R3", "G4", "B5"]  # nor a 10 (no 3 + 7, 4 + 6, 5 + 5)


def _get(client: FlaskClient, path: str, token: str | None) -> Any:
    return client.get(path, headers=auth(token))


def _legal(client: FlaskClient, game_id: str, token: str) -> list[str]:
    answer = _get(client, f"/api/games/{game_id}/actions", token)
    assert answer.status_code == 200, answer.get_data(as_text=True)
    return [a["action"] for a in answer.get_json()["actions"]]


def test_draw_order_draws_when_nothing_matches_and_leaves_the_choice(
        app: Flask, client: FlaskClient) -> None:
    game_id, tokens = orders_game(client)
    arrange(app, game_id, {0: NO_MATCH, 1: NO_MATCH[::-1]}, ONES, top=["B1"], current=0)
    version = stored_version(app, game_id)
    body = set_orders(client, game_id, 0, tokens[0], ["draw"])
    assert body["orders"] == ["draw"]
    assert body["version"] == version + 1  # it applied at once: a move
    rows = history(app, game_id)
    assert marked(rows) == [(0, "draw")]
    drew = rows[-1]
    assert (drew.kind, drew.seat, drew.version) == ("drew", 0, version + 1)
    assert drew.data["by_order"] is True
    # A choice follows (match the drawn B1, or add a card): the person makes it.
    state = stored_state(app, game_id)
    assert state.current == 0
    assert state.has_drawn
    legal = _legal(client, game_id, tokens[0])
    assert "m1 B1" in legal
    assert len(legal) > 1
    # The line says what was drawn, and by whom.
    seen = client.get(f"/api/games/{game_id}/events?after={drew.seq - 1}",
                      headers=auth(tokens[0])).get_json()["events"][0]
    assert describe(seen, ["ann", "bob"], 0) == "You drew 1 card (B1) (by standing order)"
    hidden = client.get(f"/api/games/{game_id}/events?after={drew.seq - 1}",
                        headers=auth(tokens[1])).get_json()["events"][0]
    assert describe(hidden, ["ann", "bob"], 1) == "ann drew 1 card (by standing order)"


def test_the_your_turn_notice_says_what_the_order_drew(app: Flask, client: FlaskClient) -> None:
    game_id, tokens = orders_game(client)
    arrange(app, game_id, {0: SHORT, 1: ["R10", "G10"]}, ONES, top=["B10", "Y1"], current=1)
    set_orders(client, game_id, 0, tokens[0], ["draw"])
    assert marked(history(app, game_id)) == []  # not ann's turn: nothing yet
    # bob draws B10 and adds R10 (ann cannot match a 10 either): ann's turn, nothing
    # matches, her order draws Y1 for her.
    version = stored_version(app, game_id)
    for turn in (["draw"], ["add R10"]):
        answer = client.post(f"/api/games/{game_id}/actions", headers=auth(tokens[1]),
                             json={"version": version, "actions": turn})
        assert answer.status_code == 200, answer.get_data(as_text=True)
        version = answer.get_json()["version"]
    rows = history(app, game_id)
    assert marked(rows) == [(0, "draw")]
    order_rows = [row for row in rows if row.version == version and row.kind == "action"]
    assert [(row.seat, row.data["action"]) for row in order_rows] == [(1, "add R10"), (0, "draw")]
    with app.app_context():
        game = access.get_game(game_id)
        lines = notify.since_last_turn(game, access.seat_of(game, 0))
        db.session.remove()
    assert "You drew 1 card (Y1) (by standing order)" in lines


def test_only_order_plays_a_forced_line_and_stops_at_a_choice(
        app: Flask, client: FlaskClient) -> None:
    # ann holds one R10, the next card is another R10: the draw and then the add are forced.
    game_id, tokens = orders_game(client, options={})
    arrange(app, game_id, {0: ["R10"], 1: SHORT}, ONES, top=["R10", "G4"], current=0)
    set_orders(client, game_id, 1, tokens[1], ["only"])
    set_orders(client, game_id, 0, tokens[0], ["only"])
    # ann: draw, add R10 (her turn ends); bob: draw (forced), then G4 or a card to add: a choice.
    assert marked(history(app, game_id)) == [(0, "draw"), (0, "add R10"), (1, "draw")]
    state = stored_state(app, game_id)
    assert state.current == 1
    assert state.has_drawn
    assert len(_legal(client, game_id, tokens[1])) > 1


def test_dos_order_calls_and_protects_from_catch_orders(app: Flask, client: FlaskClient) -> None:
    game_id, tokens = orders_game(client)
    arrange(app, game_id, {0: NO_MATCH, 1: ["R3", "G4"]}, ONES, current=0)
    assert stored_state(app, game_id).dos_missed == [False, True]  # bob is exposed
    set_orders(client, game_id, 1, tokens[1], ["dos"])
    assert marked(history(app, game_id)) == [(1, "dos")]
    set_orders(client, game_id, 0, tokens[0], ["catch"])  # nobody left to catch
    assert marked(history(app, game_id)) == [(1, "dos")]
    assert stored_state(app, game_id).dos_calls[1] is True


def test_catch_order_catches_at_once(app: Flask, client: FlaskClient) -> None:
    game_id, tokens = orders_game(client)
    arrange(app, game_id, {0: NO_MATCH, 1: ["R3", "G4"]}, ONES, current=0)
    set_orders(client, game_id, 0, tokens[0], ["catch"])
    rows = history(app, game_id)
    assert marked(rows) == [(0, "catch 1")]
    caught = [row for row in rows if row.kind == "caught"][-1]
    assert caught.data["by_order"] is True
    assert caught.data["by"] == 0
    assert len(stored_state(app, game_id).hands[1]) == 4


def test_catch_order_catches_a_seat_the_move_exposed(app: Flask, client: FlaskClient) -> None:
    # ann matches down to two cards and ends her turn: bob's order catches her in that request.
    game_id, tokens = orders_game(client)
    arrange(app, game_id, {0: ["B1", "R3", "G4"], 1: NO_MATCH}, ONES, current=0)
    set_orders(client, game_id, 1, tokens[1], ["catch"])
    version = stored_version(app, game_id)
    answer = client.post(f"/api/games/{game_id}/actions", headers=auth(tokens[0]),
                         json={"version": version, "turn": "m1 B1; end"})
    assert answer.status_code == 200, answer.get_data(as_text=True)
    assert answer.get_json()["version"] == version + 1
    rows = history(app, game_id)
    assert marked(rows) == [(1, "catch 0")]
    assert {row.version for row in rows if row.seq > rows[-1].seq - 4} == {version + 1}
    assert len(stored_state(app, game_id).hands[0]) == 4


def test_standing_dos_off_keeps_the_race(app: Flask, client: FlaskClient) -> None:
    game_id, tokens = orders_game(client, standing_dos=False)
    assert _get(client, f"/api/games/{game_id}", tokens[0]).get_json()["standing_dos"] is False
    arrange(app, game_id, {0: NO_MATCH, 1: ["R3", "G4"]}, ONES, current=0)
    body = set_orders(client, game_id, 1, tokens[1], ["dos"])
    assert {o["order"]: o["applies"] for o in body["available"]} == {
        "draw": True, "only": True, "dos": False, "catch": False}
    set_orders(client, game_id, 0, tokens[0], ["catch", "draw"])
    # Neither the call nor the catch; the draw still plays.
    assert marked(history(app, game_id)) == [(0, "draw")]
    assert "dos" in _legal(client, game_id, tokens[1])  # bob may still call it himself


def test_when_several_catch_orders_apply_at_once_the_next_seat_catches(
        app: Flask, client: FlaskClient) -> None:
    """ann, cy and dee would all catch bob: cy, the seat after him in turn order, does, in
    whatever order the orders were set (two games arranged alike)."""
    for setting in ((0, 2, 3), (3, 2, 0)):
        game_id, tokens = orders_game(client, ("ann", "bob", "cy", "dee"))
        arrange(app, game_id, {0: ["R3", "G4", "B5"], 1: ["B1", "R6", "G6"],
                               2: ["Y3", "R4", "G5"], 3: ["B3", "Y4", "R5"]}, ONES, current=1)
        for seat in setting:
            set_orders(client, game_id, seat, tokens[seat], ["catch"])
        assert marked(history(app, game_id)) == []  # nobody is exposed yet
        # bob's own move exposes him.
        version = stored_version(app, game_id)
        answer = client.post(f"/api/games/{game_id}/actions", headers=auth(tokens[1]),
                             json={"version": version, "turn": "m1 B1; end"})
        assert answer.status_code == 200, answer.get_data(as_text=True)
        assert marked(history(app, game_id)) == [(2, "catch 1")], setting


def test_bad_input_and_privacy(app: Flask, client: FlaskClient) -> None:
    game_id, tokens = orders_game(client)
    path = f"/api/games/{game_id}/seats/0/orders"
    for body in ({"orders": ["draw", "win"]}, {"orders": "draw"}, {"orders": [1]}, {},
                 {"orders": ["draw"] * 11}, {"orders": ["x" * 21]}):
        answer = client.put(path, headers=auth(tokens[0]), json=body)
        assert assert_problem(answer, 422)
    assert stored_state(app, game_id) is not None
    assert _get(client, path, tokens[0]).get_json()["orders"] == []
    assert_problem(client.put(path, json={"orders": ["draw"]}), 403)  # no token: a spectator
    assert_problem(client.put(path, headers=auth("nonsense"), json={"orders": []}), 401)
    assert_problem(client.put(path, headers=auth(tokens[1]), json={"orders": ["draw"]}), 403)
    assert_problem(_get(client, path, tokens[1]), 403)
    assert_problem(_get(client, f"/api/games/{game_id}/seats/9/orders", tokens[0]), 403)
    first = _get(client, f"/api/games/{game_id}", tokens[0])
    assert first.get_json()["orders"] == []
    set_orders(client, game_id, 0, tokens[0], ["catch", "dos", "catch"])
    assert _get(client, path, tokens[0]).get_json()["orders"] == ["dos", "catch"]
    # The same version, but the game's answer (and its ETag) changed for that seat only.
    again = client.get(f"/api/games/{game_id}", headers={
        **auth(tokens[0]), "If-None-Match": first.headers["ETag"]})
    assert again.status_code == 200
    assert again.get_json()["version"] == first.get_json()["version"]
    mine = _get(client, f"/api/games/{game_id}", tokens[0]).get_json()
    theirs = _get(client, f"/api/games/{game_id}", tokens[1]).get_json()
    spectator = _get(client, f"/api/games/{game_id}", None).get_json()
    assert mine["orders"] == ["dos", "catch"]
    assert theirs["orders"] == []
    assert spectator["orders"] is None
    assert "dos" not in str(theirs["seats"])


def _play_out(client: FlaskClient, game_id: str, tokens: dict[int, str], seed: int) -> None:
    """Random choices for the people; the orders play what they play."""
    rng = random.Random(seed)
    for _request in range(3000):
        game = _get(client, f"/api/games/{game_id}", tokens[0]).get_json()
        if game["status"] == "finished":
            return
        seat = game["view"]["current"]
        listing = _get(client, f"/api/games/{game_id}/actions", tokens[seat]).get_json()
        choice = rng.choice(listing["actions"])
        answer = client.post(f"/api/games/{game_id}/actions", headers=auth(tokens[seat]),
                             json={"version": listing["version"], "number": choice["number"]})
        assert answer.status_code == 200, answer.get_data(as_text=True)
    raise AssertionError("the game did not finish")


def test_a_game_with_every_order_replays_exactly_from_its_record(
        app: Flask, client: FlaskClient) -> None:
    game_id, tokens = orders_game(client, ("ann", "bob", "cy"),
                                  options={"dos_call": True, "target_score": 40})
    for seat, token in tokens.items():
        set_orders(client, game_id, seat, token, [*["draw", "only", "dos", "catch"][seat:], "draw"])
    _play_out(client, game_id, tokens, seed=7)
    rows = history(app, game_id)
    by_order = marked(rows)
    assert by_order, "no order played in a whole game"
    record = client.get(f"/api/games/{game_id}/record").get_json()
    assert [(a["seat"], a["action"]) for a in record["actions"]] == [
        (row.seat, row.data["action"]) for row in rows if row.kind == "action"]
    replayed = replay(GameRecord.from_dict(record))
    assert replayed == stored_state(app, game_id)
    # Never a choice: each draw or forced move an order played was the turn's one legal
    # action when it was played (a call or a catch is the same whoever sends it).
    marks = [row.data.get("by") == "order" for row in rows if row.kind == "action"]
    state = Game.new(record["players"], record["seed"], Options.from_stored(record["options"]))
    for (seat, text), by_order in zip(GameRecord.from_dict(record).actions, marks, strict=True):
        action = parse_action(text)
        if by_order and not isinstance(action, (CallDos, Catch)):
            assert turn_actions(state, seat) == [action], (seat, text)
        state.play(action, seat)
    assert state == replayed
    # Archived, the history and the record read exactly as before, marks included.
    before = [client.get(f"/api/games/{game_id}/events?limit=500&after={after}",
                         headers=auth(tokens[0])).get_json() for after in (0, 500, 1000, 1500)]
    with app.app_context():
        assert archive.archive_due(utcnow() + timedelta(days=30)) == 1
        db.session.remove()
    after = [client.get(f"/api/games/{game_id}/events?limit=500&after={after}",
                        headers=auth(tokens[0])).get_json() for after in (0, 500, 1000, 1500)]
    assert after == before
    assert client.get(f"/api/games/{game_id}/record").get_json() == record
