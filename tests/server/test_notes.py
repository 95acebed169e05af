"""A seat's private notes through the API (``/api/games/<id>/seats/<n>/notes``), on both
backends: only the seat's own player reads and writes them (everyone else gets the seat
routes' "not your seat"), plain text of at most 10,000 characters, "" clears them, every
status of the game, and no version moves."""

from __future__ import annotations

from typing import Any

import pytest
import sqlalchemy as sa
from flask import Flask
from flask.testing import FlaskClient
from server_helpers import assert_problem, auth, create, join, joined_game

from dos_server.extensions import db
from dos_server.models import GameRow
from testkit import stored_notes


def _notes_url(game_id: str, seat: int) -> str:
    return f"/api/games/{game_id}/seats/{seat}/notes"


def _put(client: FlaskClient, game_id: str, seat: int, token: str | None, text: Any) -> Any:
    return client.put(_notes_url(game_id, seat), json={"text": text}, headers=auth(token))


def _host_game(client: FlaskClient) -> tuple[str, str, dict[int, str]]:
    created = create(client, [{"name": "ann"}, {"name": "bob"}])
    tokens = {}
    for invite in created["invites"]:
        joined = join(client, created["id"], invite=invite["invite"])
        tokens[joined["seat"]] = joined["player_token"]
    return created["id"], created["host_token"], tokens


def test_a_seat_writes_and_reads_its_own_notes(app: Flask, client: FlaskClient) -> None:
    game_id, tokens = joined_game(client, ["ann", "bob"])
    empty = client.get(_notes_url(game_id, 0), headers=auth(tokens[0]))
    assert empty.status_code == 200, empty.get_data(as_text=True)
    assert empty.get_json() == {"game_id": game_id, "seat": 0, "text": "",
                                "max_chars": 10_000}
    version = client.get(f"/api/games/{game_id}", headers=auth(tokens[0])).get_json()["version"]
    written = _put(client, game_id, 0, tokens[0], "  bob holds greens\r\n\tkeep the 10 \n")
    assert written.status_code == 200, written.get_data(as_text=True)
    assert written.get_json()["text"] == "bob holds greens\n\tkeep the 10"
    read = client.get(_notes_url(game_id, 0), headers=auth(tokens[0])).get_json()
    assert read["text"] == "bob holds greens\n\tkeep the 10"
    assert stored_notes(app, game_id) == {0: "bob holds greens\n\tkeep the 10", 1: None}
    # Notes are no move: the version stays, so a move chosen meanwhile still plays.
    assert client.get(f"/api/games/{game_id}",
                      headers=auth(tokens[0])).get_json()["version"] == version
    # Bob's notes are his own, beside Ann's.
    assert _put(client, game_id, 1, tokens[1], "ann plays fast").status_code == 200
    assert stored_notes(app, game_id) == {0: "bob holds greens\n\tkeep the 10", 1: "ann plays fast"}
    # "" clears them (nothing stored), and so does text of spaces alone.
    cleared = _put(client, game_id, 0, tokens[0], "")
    assert cleared.status_code == 200
    assert cleared.get_json()["text"] == ""
    assert stored_notes(app, game_id)[0] is None
    _put(client, game_id, 0, tokens[0], "again")
    assert _put(client, game_id, 0, tokens[0], " \n ").get_json()["text"] == ""
    assert stored_notes(app, game_id)[0] is None


def test_nobody_else_reads_or_writes_a_seats_notes(app: Flask, client: FlaskClient) -> None:
    game_id, host, tokens = _host_game(client)
    assert _put(client, game_id, 0, tokens[0], "mine alone").status_code == 200
    other = create(client, [{"name": "cy"}, {"name": "di"}])
    foreign = join(client, other["id"], invite=other["invites"][0]["invite"])["player_token"]
    for token in (tokens[1], host, None):
        for answer in (client.get(_notes_url(game_id, 0), headers=auth(token)),
                       _put(client, game_id, 0, token, "overwritten")):
            problem = assert_problem(answer, 403)
            assert problem["type"].endswith("/not-your-seat"), problem
            assert "mine alone" not in answer.get_data(as_text=True)
    # Another game's token: the seat routes' 403 for a token of another game; a bad one: 401.
    assert_problem(client.get(_notes_url(game_id, 0), headers=auth(foreign)), 403)
    assert_problem(client.get(_notes_url(game_id, 0), headers=auth("not-a-token")), 401)
    assert_problem(_put(client, game_id, 0, "not-a-token", "x"), 401)
    # Your own token for a seat that is not yours, or no such seat: still not your seat.
    for seat in (1, 7):
        assert_problem(client.get(_notes_url(game_id, seat), headers=auth(tokens[0])), 403)
        assert_problem(_put(client, game_id, seat, tokens[0], "x"), 403)
    assert_problem(client.get(_notes_url("nosuchgame", 0), headers=auth(tokens[0])), 404)
    assert stored_notes(app, game_id) == {0: "mine alone", 1: None}


@pytest.mark.parametrize("text", ["x" * 10_001, "bell\x07", "esc\x1b[31m", "cr\x0bvt",
                                  "del\x7f", 5, None, ["a"], {"a": 1}])
def test_bad_notes_are_a_clear_problem_and_store_nothing(app: Flask, client: FlaskClient,
                                                         text: Any) -> None:
    game_id, tokens = joined_game(client, ["ann", "bob"])
    assert _put(client, game_id, 0, tokens[0], "kept").status_code == 200
    problem = assert_problem(_put(client, game_id, 0, tokens[0], text), 422)
    assert problem["type"].endswith("/invalid-input") or "errors" in problem, problem
    if isinstance(text, str):
        assert ("10000" in problem["detail"] and "10001" in problem["detail"]) or \
            "control character U+" in problem["detail"], problem
    assert stored_notes(app, game_id)[0] == "kept"
    assert_problem(client.put(_notes_url(game_id, 0), json={}, headers=auth(tokens[0])), 422)
    assert stored_notes(app, game_id)[0] == "kept"


def test_the_longest_notes_fit_in_any_script(app: Flask, client: FlaskClient) -> None:
    game_id, tokens = joined_game(client, ["ann", "bob"])
    for longest in ("x" * 10_000, "ລ" * 10_000, "🂡" * 10_000):
        # As json.dumps sends them (every character escaped): larger than the usual limit.
        answer = client.put(_notes_url(game_id, 0), data=__import__("json").dumps(
            {"text": longest}), content_type="application/json", headers=auth(tokens[0]))
        assert answer.status_code == 200, answer.get_data(as_text=True)[:300]
        assert stored_notes(app, game_id)[0] == longest
    assert_problem(_put(client, game_id, 0, tokens[0], "ລ" * 10_001), 422)
    # The larger limit is the notes' alone: elsewhere the usual one holds.
    big = client.post(f"/api/games/{game_id}/messages", data="x" * (128 * 1024),
                      content_type="application/json", headers=auth(tokens[0]))
    assert_problem(big, 413)


@pytest.mark.parametrize("status", ["waiting", "finished", "cancelled"])
def test_notes_work_in_every_status(app: Flask, client: FlaskClient, status: str) -> None:
    if status == "waiting":
        created = create(client, [{"name": "ann"}, {"name": "bob"}])
        game_id = created["id"]
        token = join(client, game_id, invite=created["invites"][0]["invite"])["player_token"]
    else:
        game_id, tokens = joined_game(client, ["ann", "bob"])
        token = tokens[0]
        with app.app_context():
            db.session.execute(sa.update(GameRow).where(GameRow.id == game_id)
                               .values(status=status))
            db.session.commit()
            db.session.remove()
    assert client.get(f"/api/games/{game_id}").get_json()["status"] == status
    written = _put(client, game_id, 0, token, f"notes while {status}")
    assert written.status_code == 200, written.get_data(as_text=True)
    assert client.get(_notes_url(game_id, 0),
                      headers=auth(token)).get_json()["text"] == f"notes while {status}"
