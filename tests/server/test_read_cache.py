"""The hot reads' per-process shortcuts never change an answer.

A game's view and its legal actions are encoded once per process for what they show a viewer
(``read.EncodedAnswers``), and a token's signature is checked once per process
(``tokens._signed``). The token is still checked on every request against the rows it reads:
a revoked token is refused though its seat's answer is encoded, each viewer gets their own
hand, and a new version or a changed seat is never answered from an older entry.
"""

from __future__ import annotations

import json
import time
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient
from itsdangerous import TimestampSigner, URLSafeTimedSerializer
from server_helpers import assert_problem, auth, started_game, stored_state

from dos_server.services import read
from dos_server.services.read import EncodedAnswers
from dos_server.tokens import SALTS
from testkit import SECRET


def _answers(app: Flask) -> EncodedAnswers:
    with app.app_context():
        return read.encoded_answers()


def _hand(app: Flask, game_id: str, seat: int) -> list[Any]:
    state = stored_state(app, game_id)
    return state.view(seat).to_dict()["hand"]


def test_a_second_read_is_answered_from_the_encoded_answer(
        app: Flask, client: FlaskClient, monkeypatch: pytest.MonkeyPatch) -> None:
    game_id, _, seats = started_game(client)
    paths = (f"/api/games/{game_id}", f"/api/games/{game_id}/actions")
    first = {path: client.get(path, headers=auth(seats[0])) for path in paths}
    assert all(answer.status_code == 200 for answer in first.values())
    entries = len(_answers(app))

    def not_again(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("an encoded answer was made again")

    monkeypatch.setattr(read, "game_body", not_again)
    monkeypatch.setattr(read, "legal_actions_body", not_again)
    for path in paths:
        again = client.get(path, headers=auth(seats[0]))
        assert again.status_code == 200
        assert again.get_data() == first[path].get_data()
        assert again.mimetype == "application/json"
        assert again.headers["ETag"] == first[path].headers["ETag"]
    assert len(_answers(app)) == entries


def test_each_viewer_of_one_version_gets_their_own_hand(app: Flask, client: FlaskClient) -> None:
    game_id, host, seats = started_game(client)
    path = f"/api/games/{game_id}"
    for _ in range(2):  # the second round is answered from the encoded answers
        for seat, token in seats.items():
            body = client.get(path, headers=auth(token)).get_json()
            assert body["you"] == seat
            assert body["view"]["hand"] == _hand(app, game_id, seat)
            listed = client.get(f"{path}/actions", headers=auth(token)).get_json()
            assert listed["seat"] == seat
        for token in (host, None):
            body = client.get(path, headers=auth(token)).get_json()
            assert body["you"] is None
            assert body["view"]["hand"] is None
    zero = client.get(path, headers=auth(seats[0])).get_json()
    one = client.get(path, headers=auth(seats[1])).get_json()
    assert zero["view"]["hand"] != one["view"]["hand"]


def test_a_revoked_token_is_refused_though_its_answer_is_encoded(client: FlaskClient) -> None:
    game_id, host, seats = started_game(client)
    path = f"/api/games/{game_id}"
    before = client.get(path, headers=auth(seats[0]))
    listed = client.get(f"{path}/actions", headers=auth(seats[0]))
    assert before.status_code == listed.status_code == 200
    rotated = client.post(f"{path}/seats/0/token", headers=auth(seats[0]))
    assert rotated.status_code == 200
    assert_problem(client.get(path, headers=auth(seats[0])), 401)
    assert_problem(client.get(f"{path}/actions", headers=auth(seats[0])), 401)
    fresh = rotated.get_json()["player_token"]
    assert client.get(path, headers=auth(fresh)).get_json()["you"] == 0
    # The host's rotation unclaims the seat: seat 1's answer shows it (same version).
    seen = client.get(path, headers=auth(seats[1])).get_json()
    assert client.post(f"{path}/seats/0/token", headers=auth(host)).status_code == 200
    after = client.get(path, headers=auth(seats[1])).get_json()
    assert after["version"] == seen["version"]
    assert after["seats"][0]["claimed"] is False


def test_a_new_version_is_never_answered_from_an_older_one(client: FlaskClient) -> None:
    game_id, _, seats = started_game(client)
    path = f"/api/games/{game_id}"
    for _ in range(3):
        game = client.get(path, headers=auth(seats[0])).get_json()
        token = seats[game["view"]["current"]]
        listed = client.get(f"{path}/actions", headers=auth(token)).get_json()
        assert listed["version"] == game["version"]
        moved = client.post(f"{path}/actions", headers=auth(token),
                            json={"version": listed["version"], "number": 1})
        assert moved.status_code == 200, moved.get_data(as_text=True)
        now = client.get(path, headers=auth(seats[0])).get_json()
        assert now["version"] == game["version"] + 1
        assert now["view"]["hand"] == moved.get_json()["game"]["view"]["hand"] \
            or token != seats[0]
        relisted = client.get(f"{path}/actions", headers=auth(token)).get_json()
        assert relisted["version"] == now["version"]


def test_answers_are_per_app(make_app: Any) -> None:
    """Two apps in one process (tests run many, on other databases) never share answers."""
    first, second = make_app(), make_app()
    game_id, _, seats = started_game(first.test_client())
    first.test_client().get(f"/api/games/{game_id}", headers=auth(seats[0]))
    assert len(_answers(first)) == 1
    assert len(_answers(second)) == 0


def test_encoded_answers_keep_the_most_recently_used(app: Flask) -> None:
    answers = EncodedAnswers(size=2)
    made: list[str] = []

    def body(name: str) -> Any:
        return lambda: made.append(name) or {"name": name}

    with app.app_context():
        assert json.loads(answers.get(("a",), body("a"))) == {"name": "a"}
        answers.get(("b",), body("b"))
        answers.get(("a",), body("a"))  # used again: now the most recent
        answers.get(("c",), body("c"))  # evicts b
        answers.get(("a",), body("a"))
        answers.get(("b",), body("b"))
    assert made == ["a", "b", "c", "b"]
    assert len(answers) == 2


def _sign(payload: dict[str, Any], age: float) -> str:
    class Signer(TimestampSigner):
        def get_timestamp(self) -> int:
            return int(time.time() - age)

    return str(URLSafeTimedSerializer(SECRET, salt=SALTS["player"], signer=Signer)
               .dumps(payload))


def test_a_token_checked_before_still_expires(app: Flask, client: FlaskClient) -> None:
    """The signature is checked once per process; the age on every request."""
    game_id, _, seats = started_game(client)
    path = f"/api/games/{game_id}"
    payload = URLSafeTimedSerializer(SECRET, salt=SALTS["player"]).loads(seats[0])
    token = _sign(payload, age=2 * 86400)
    assert client.get(path, headers=auth(token)).status_code == 200
    app.config["TOKEN_MAX_AGE_DAYS"] = 1
    assert_problem(client.get(path, headers=auth(token)), 401)
    app.config["TOKEN_MAX_AGE_DAYS"] = 3
    assert client.get(path, headers=auth(token)).status_code == 200


def test_a_key_taken_out_of_the_list_no_longer_opens(make_app: Any) -> None:
    """The memo is per key list: a token of a retired key is refused once it is gone."""
    old = make_app(SECRET_KEY="old-key-old-key-old-key-old-key")
    game_id, _, seats = started_game(old.test_client())
    path = f"/api/games/{game_id}"
    rotated = make_app(SECRET_KEY="new-key-new-key-new-key-new-key",
                       SECRET_KEY_FALLBACKS=["old-key-old-key-old-key-old-key"])
    assert rotated.test_client().get(path, headers=auth(seats[0])).status_code == 200
    retired = make_app(SECRET_KEY="new-key-new-key-new-key-new-key")
    assert_problem(retired.test_client().get(path, headers=auth(seats[0])), 401)
