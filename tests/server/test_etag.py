"""``ETag`` / ``If-None-Match`` on a game's view and its legal actions.

A client that holds the current answer gets ``304 Not Modified`` (no body); any change it
could see gives ``200`` with a new tag; a tag is never good for another viewer, and a token
is checked before a 304 is ever answered (a revoked or foreign token gets its 401/403).
"""

from __future__ import annotations

from typing import Any

from flask import Flask
from flask.testing import FlaskClient
from server_helpers import assert_problem, auth, create, join, started_game

Seats = dict[int, str]  # seat index -> player token


def _get(client: FlaskClient, path: str, token: str | None, tag: str | None = None) -> Any:
    headers = auth(token)
    if tag is not None:
        headers["If-None-Match"] = tag
    return client.get(path, headers=headers)


def _move(client: FlaskClient, game_id: str, seats: Seats) -> None:
    """The seat to move plays its first legal action."""
    current = client.get(f"/api/games/{game_id}", headers=auth(seats[0])).get_json()
    token = seats[current["view"]["current"]]
    listed = client.get(f"/api/games/{game_id}/actions", headers=auth(token)).get_json()
    answer = client.post(f"/api/games/{game_id}/actions", headers=auth(token),
                         json={"version": listed["version"], "number": 1})
    assert answer.status_code == 200, answer.get_data(as_text=True)


def test_a_current_tag_gets_304_without_a_body(client: FlaskClient) -> None:
    game_id, _, seats = started_game(client)
    for path in (f"/api/games/{game_id}", f"/api/games/{game_id}/actions"):
        first = _get(client, path, seats[0])
        assert first.status_code == 200
        tag = first.headers["ETag"]
        assert tag.startswith('W/"')
        assert first.headers["Vary"] == "Authorization"
        again = _get(client, path, seats[0], tag)
        assert again.status_code == 304
        assert again.get_data() == b""
        assert again.headers["ETag"] == tag
        # A list of tags, and a strong comparison of the same opaque tag, match too.
        assert _get(client, path, seats[0], f'"other", {tag}').status_code == 304
        assert _get(client, path, seats[0], tag.removeprefix("W/")).status_code == 304
        assert _get(client, path, seats[0], 'W/"something-else"').status_code == 200


def test_a_change_gives_200_and_a_new_tag(client: FlaskClient) -> None:
    game_id, _, seats = started_game(client)
    paths = (f"/api/games/{game_id}", f"/api/games/{game_id}/actions")
    tags = {(path, seat): _get(client, path, token).headers["ETag"]
            for path in paths for seat, token in seats.items()}
    before = _get(client, paths[0], seats[0]).get_json()
    _move(client, game_id, seats)
    for (path, seat), tag in tags.items():
        answer = _get(client, path, seats[seat], tag)
        assert answer.status_code == 200, (path, seat)
        assert answer.headers["ETag"] != tag
        assert answer.get_json()["version"] == before["version"] + 1
        assert _get(client, path, seats[seat], answer.headers["ETag"]).status_code == 304


def test_a_tag_never_serves_another_viewer(client: FlaskClient) -> None:
    game_id, host, seats = started_game(client)
    path = f"/api/games/{game_id}"
    viewers: dict[str, str | None] = {"seat0": seats[0], "seat1": seats[1], "host": host,
                                      "spectator": None}
    tags = {name: _get(client, path, token).headers["ETag"] for name, token in viewers.items()}
    assert len(set(tags.values())) == len(tags)
    for name, token in viewers.items():
        for other, tag in tags.items():
            answer = _get(client, path, token, tag)
            if other == name:
                assert answer.status_code == 304
                continue
            assert answer.status_code == 200, (name, other)
            body = answer.get_json()
            # The full answer is this viewer's own: never the hand of the tag's owner.
            assert body["you"] == (int(name[-1]) if name.startswith("seat") else None)
    listed = {seat: _get(client, f"{path}/actions", token).headers["ETag"]
              for seat, token in seats.items()}
    assert listed[0] != listed[1]
    answer = _get(client, f"{path}/actions", seats[1], listed[0])
    assert answer.status_code == 200
    assert answer.get_json()["seat"] == 1


def test_no_304_before_the_token_is_checked(client: FlaskClient) -> None:
    game_id, host, seats = started_game(client)
    path = f"/api/games/{game_id}"
    tag = _get(client, path, seats[0]).headers["ETag"]
    actions_tag = _get(client, f"{path}/actions", seats[0]).headers["ETag"]
    rotated = client.post(f"{path}/seats/0/token", headers=auth(seats[0]))
    assert rotated.status_code == 200
    assert_problem(_get(client, path, seats[0], tag), 401)
    assert_problem(_get(client, f"{path}/actions", seats[0], actions_tag), 401)
    assert_problem(_get(client, path, "not-a-token", "*"), 401)
    # Host and spectators may not list a seat's actions: 403 whatever tag they send.
    assert_problem(_get(client, f"{path}/actions", host, "*"), 403)
    assert_problem(_get(client, f"{path}/actions", None, actions_tag), 403)
    # A token of another game is refused, never answered from this game's tags.
    other_id, _, other_seats = started_game(client)
    assert_problem(_get(client, path, other_seats[0], tag), 403)
    assert other_id != game_id
    fresh = rotated.get_json()["player_token"]
    assert _get(client, path, fresh, tag).status_code == 304  # the same seat, the same view


def test_seat_changes_without_a_new_version_change_the_tag(client: FlaskClient) -> None:
    """A host's rotation unclaims the seat without a new version: the view's tag moves on."""
    game_id, host, seats = started_game(client)
    path = f"/api/games/{game_id}"
    first = _get(client, path, seats[1])
    rotated = client.post(f"{path}/seats/0/token", headers=auth(host))
    assert rotated.status_code == 200
    answer = _get(client, path, seats[1], first.headers["ETag"])
    assert answer.status_code == 200
    assert answer.get_json()["version"] == first.get_json()["version"]
    assert answer.get_json()["seats"][0]["claimed"] is False


def test_not_started_and_missing_games(client: FlaskClient) -> None:
    created = create(client, [{"name": "ann"}, {}])  # an open seat: it waits for a player
    game_id = created["id"]
    joined = join(client, game_id, invite=created["invites"][0]["invite"])
    assert joined["game"]["status"] == "waiting"
    view = _get(client, f"/api/games/{game_id}", joined["player_token"])
    assert view.status_code == 200
    assert _get(client, f"/api/games/{game_id}", joined["player_token"],
                view.headers["ETag"]).status_code == 304
    assert_problem(_get(client, f"/api/games/{game_id}/actions", joined["player_token"], "*"),
                   409)
    assert_problem(_get(client, "/api/games/nosuchgame", None, "*"), 404)


def test_openapi_documents_304(app: Flask) -> None:
    document = app.test_client().get("/openapi.json").get_json()
    for path in ("/api/games/{game_id}", "/api/games/{game_id}/actions"):
        responses = document["paths"][path]["get"]["responses"]
        assert "304" in responses, path
        assert "ETag" in responses["200"]["headers"], path
