"""No input gets a 500 and nothing invalid is stored.

Every refusal is a 4xx problem+json naming the field, header or part of the path; the game
is unchanged after it. Each test runs on SQLite and, with TEST_DATABASE_URL, on PostgreSQL.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

import pytest
import sqlalchemy as sa
from flask import Flask
from flask.testing import FlaskClient
from server_helpers import assert_problem, auth, create, join, stored_state, stored_version

from dos_server.extensions import db
from dos_server.models import SeatRow

JSON = {"Content-Type": "application/json"}


def _two_players(client: FlaskClient, **create_args: Any) -> tuple[str, dict[int, str]]:
    response = client.post("/api/games", json={"seats": [{"name": "ann"}, {"name": "bob"}],
                                               "options": {"target_score": 1}, **create_args})
    assert response.status_code == 201, response.get_data(as_text=True)
    game = response.get_json()
    tokens = {invite["seat"]: join(client, game["id"], invite=invite["invite"])["player_token"]
              for invite in game["invites"]}
    return game["id"], tokens


def _current(app: Flask, game_id: str) -> tuple[int, int]:
    return stored_state(app, game_id).current, stored_version(app, game_id)


def _stored_names(app: Flask, game_id: str) -> list[str | None]:
    with app.app_context():
        names = list(db.session.execute(
            db.select(SeatRow.name).where(SeatRow.game_id == game_id).order_by(SeatRow.index)
        ).scalars())
        db.session.remove()
    return names


# -- names ------------------------------------------------------------------------------------

BLANK_NAMES = ["", " ", "\u00a0", "\t \u3000\n", "\u200b", "\u2028"]
BAD_NAMES = [
    *BLANK_NAMES,
    "a" * 41,
    "ann\x00",
    "a\x1bb",
    "a\u202eb",  # right-to-left override (a format character)
    "\ue000pua",  # private use
    "a;b",
]


@pytest.mark.parametrize("name", BAD_NAMES, ids=repr)
def test_bad_names_are_refused_at_create(client: FlaskClient, name: str) -> None:
    answer = client.post("/api/games", json={"seats": [{"name": "ann"}, {"name": name}]})
    problem = assert_problem(answer, 400 if "\x00" in name else 422)
    assert "name" in problem["detail"]


@pytest.mark.parametrize("name", BLANK_NAMES, ids=repr)
def test_blank_name_through_join_is_refused_and_the_game_still_starts(
        app: Flask, client: FlaskClient, name: str) -> None:
    game = create(client, [{"name": "host"}, {}, {}])
    game_id, code = game["id"], game["invite_code"]
    problem = assert_problem(
        client.post(f"/api/games/{game_id}/join", json={"code": code, "name": name}), 422)
    assert "name" in problem["detail"]
    assert _stored_names(app, game_id) == ["host", None, None]
    join(client, game_id, code=code, name="zed")
    started = client.post(f"/api/games/{game_id}/start", headers=auth(game["host_token"]))
    assert started.status_code == 200, started.get_data(as_text=True)
    assert [s["name"] for s in started.get_json()["seats"]] == ["host", "zed"]


def test_names_are_trimmed_normalized_and_unique_per_game(app: Flask,
                                                          client: FlaskClient) -> None:
    game = create(client, [{"name": "\u00a0 Ann \t"}, {"name": "Bj\u00f6rn  Borg"}, {}])
    assert [s["name"] for s in game["seats"]] == ["Ann", "Björn Borg", None]
    assert _stored_names(app, game["id"]) == ["Ann", "Björn Borg", None]
    # "o" + combining diaeresis is the same name as "ö" (NFC); case does not matter either.
    answer = client.post(f"/api/games/{game['id']}/join",
                         json={"code": game["invite_code"], "name": " BJO\u0308RN borg "})
    assert "name" in assert_problem(answer, 422)["detail"]
    answer = client.post("/api/games", json={"seats": [{"name": "ann"}, {"name": "ANN\u00a0"}]})
    assert_problem(answer, 422)
    forty = "x" * 40
    assert create(client, [{"name": f"  {forty}  "}, {"name": "b"}])["seats"][0]["name"] == forty


def test_two_bots_of_one_strategy_get_distinct_names(client: FlaskClient) -> None:
    game = create(client, [{"name": "ann"}, {"bot": "greedy"}, {"bot": "greedy"},
                           {"bot": "random"}])
    names = [s["name"] for s in game["seats"]]
    assert names[0] == "ann"
    assert len({n.lower() for n in names}) == 4
    assert game["status"] == "waiting"  # for ann; the bots joined
    # A person may not take a bot's name.
    answer = client.post("/api/games", json={"seats": [{"name": "greedy-bot-1"},
                                                       {"bot": "greedy"}]})
    assert_problem(answer, 422)


def test_non_ascii_invite_code_is_403(app: Flask, client: FlaskClient) -> None:
    game = create(client, [{"name": "host"}, {}])
    for code in ("\u00e9\u00e9\u00e9", "\U0001f0cf", game["invite_code"] + "\u00e9"):
        answer = client.post(f"/api/games/{game['id']}/join", json={"code": code, "name": "z"})
        assert assert_problem(answer, 403)["type"].endswith("/bad-invite-code")
    assert _stored_names(app, game["id"]) == ["host", None]


# -- JSON the parser must not choke on --------------------------------------------------------

HOSTILE_JSON: list[tuple[str, bytes, str]] = [
    ("deep array", b"[" * 20_000 + b"]" * 20_000, "deep"),
    ("deep object", b'{"seats": ' + b'{"a": ' * 8_000 + b"1" + b"}" * 8_001, "deep"),
    ("moderately deep", b'{"seats": ' + b"[" * 200 + b"]" * 200 + b"}", "deep"),
    ("huge integer", b'{"version": ' + b"9" * 5_000 + b', "number": 1}', "digits"),
    ("huge negative integer", b'{"version": -' + b"9" * 5_000 + b', "number": 1}', "digits"),
    ("lone surrogate", b'{"seats": [{"name": "\\ud800"}, {"name": "b"}]}', "surrogate"),
    ("lone low surrogate key", b'{"\\udc00": 1}', "surrogate"),
    ("NUL in a string", b'{"seats": [{"name": "a\\u0000"}, {"name": "b"}]}', "NUL"),
    ("NaN", b'{"version": NaN, "number": 1}', "NaN"),
    ("infinity", b'{"version": 1e999, "number": 1}', "finite"),
    ("not UTF-8", b'{"seats": [{"name": "\xff"}]}', "UTF-8"),
]


@pytest.mark.parametrize(("body", "word"), [(b, w) for _, b, w in HOSTILE_JSON],
                         ids=[n for n, _, _ in HOSTILE_JSON])
def test_hostile_json_is_400_everywhere(app: Flask, client: FlaskClient, body: bytes,
                                        word: str) -> None:
    game_id, tokens = _two_players(client)
    seat, version = _current(app, game_id)
    before = stored_state(app, game_id)
    for path, headers in [
        ("/api/games", {}),
        (f"/api/games/{game_id}/join", {}),
        (f"/api/games/{game_id}/actions", auth(tokens[seat])),
        (f"/api/games/{game_id}/vacation", auth(tokens[seat])),
    ]:
        problem = assert_problem(client.post(path, data=body, headers={**headers, **JSON}), 400)
        assert word.lower() in problem["detail"].lower(), problem
        assert problem["type"].endswith("/invalid-json")
    answer = client.put(f"/api/games/{game_id}/seats/0/notifications", data=body,
                        headers={**auth(tokens[0]), **JSON})
    assert_problem(answer, 400)
    assert stored_version(app, game_id) == version
    assert stored_state(app, game_id) == before


def test_a_surrogate_pair_is_a_fine_name(client: FlaskClient) -> None:
    body = b'{"seats": [{"name": "\\ud83c\\udccf joker"}, {"name": "b"}]}'
    answer = client.post("/api/games", data=body, headers=JSON)
    assert answer.status_code == 201, answer.get_data(as_text=True)
    assert answer.get_json()["seats"][0]["name"] == "\U0001f0cf joker"


# -- path parameters and headers --------------------------------------------------------------

@pytest.mark.parametrize("game_id", ["ab%00cd", "%00", "AB", "a" * 17, "ab%20cd", "%C3%A9t%C3%A9",
                                     "%ED%A0%80", "ab%FFcd"])
def test_a_game_id_that_cannot_exist_is_404(client: FlaskClient, game_id: str) -> None:
    for method, suffix, body in [("get", "", None), ("get", "/events", None),
                                 ("get", "/record", None), ("get", "/actions", None),
                                 ("post", "/join", {"code": "x", "name": "y"}),
                                 ("post", "/actions", {"version": 1, "number": 1}),
                                 ("post", "/start", None),
                                 ("put", "/seats/0/notifications", {"digest": True})]:
        answer = getattr(client, method)(f"/api/games/{game_id}{suffix}", json=body)
        assert assert_problem(answer, 404)["type"].endswith("/game-not-found"), (method, suffix)


@pytest.mark.parametrize("token", ["ab%00cd", "%C3%A9", "a%20b", "%7F"])
def test_a_path_token_that_is_not_printable_ascii_is_401(client: FlaskClient, token: str) -> None:
    for method in ("get", "post"):
        answer = getattr(client, method)(f"/api/unsubscribe/{token}")
        assert "token" in assert_problem(answer, 401)["detail"]


@pytest.mark.parametrize("key", ["k" * 129, "caf\u00e9", "a\tb", " ", ""])
def test_a_bad_idempotency_key_is_400_and_the_move_is_not_lost(app: Flask, client: FlaskClient,
                                                             key: str) -> None:
    game_id, tokens = _two_players(client)
    seat, version = _current(app, game_id)
    move = {"version": version, "actions": ["draw"]}
    answer = client.post(f"/api/games/{game_id}/actions", json=move,
                         headers={**auth(tokens[seat]), "Idempotency-Key": key})
    assert "Idempotency-Key" in assert_problem(answer, 400)["detail"]
    assert stored_version(app, game_id) == version
    # The client fixes its key and retries: the move is applied once.
    good = {**auth(tokens[seat]), "Idempotency-Key": "k" * 128}
    first = client.post(f"/api/games/{game_id}/actions", json=move, headers=good)
    assert first.status_code == 200, first.get_data(as_text=True)
    again = client.post(f"/api/games/{game_id}/actions", json=move, headers=good)
    assert again.get_json() == first.get_json()
    assert stored_version(app, game_id) == version + 1


# -- email addresses --------------------------------------------------------------------------

BAD_EMAILS = [
    '"a\x0bb"@example.org',
    '"a\x00b"@example.org',
    "ann@example.org\n",
    "ann\r\n@example.org",
    "ann@exam\x7fple.org",
    "ann@example.org\u200b",
    "ann@ex ample.org",
    "a@b@example.org",
    "ann@",
    "@example.org",
    "ann",
    "ann@-example.org",
    "ann@example..org",
    "a" * 245 + "@example.org",
    '"ann lee"@example.org',  # legal, but quoted local parts are not supported
    "j\u00f6rg@example.org",  # a non-ASCII local part needs SMTPUTF8
]


@pytest.mark.parametrize("email", BAD_EMAILS, ids=repr)
def test_bad_email_addresses_are_refused(app: Flask, client: FlaskClient, email: str) -> None:
    answer = client.post("/api/games", json={"seats": [{"name": "a", "email": email},
                                                       {"name": "b"}]})
    problem = assert_problem(answer, 400 if "\x00" in email else 422)
    assert "email" in problem["detail"]
    game_id, tokens = _two_players(client)
    answer = client.put(f"/api/games/{game_id}/seats/0/notifications", json={"email": email},
                        headers=auth(tokens[0]))
    problem = assert_problem(answer, 400 if "\x00" in email else 422)
    assert "email" in problem["detail"]
    with app.app_context():
        assert db.session.execute(db.select(SeatRow.email).where(
            SeatRow.email.is_not(None))).scalars().all() == []
        db.session.remove()


GOOD_EMAILS = [(e, e) for e in ("ann@example.org", "ann.lee+dos@mail.example.co.uk",
                                  "ann@localhost", "o'brien@[192.0.2.1]")]
# An internationalized domain is stored in its ASCII form (what SMTP needs).
GOOD_EMAILS.append(("ann@b\u00fccher.example", "ann@xn--bcher-kva.example"))


@pytest.mark.parametrize(("email", "stored"), GOOD_EMAILS)
def test_good_email_addresses_are_accepted(client: FlaskClient, email: str, stored: str) -> None:
    game = create(client, [{"name": "a", "email": email}, {"name": "b"}])
    assert game["seats"][0]["name"] == "a"
    answer = client.put(f"/api/games/{game['id']}/seats/0/notifications", json={"email": email},
                        headers=auth(game["host_token"]))
    assert answer.status_code == 200, answer.get_data(as_text=True)
    assert answer.get_json()["email"] == stored


# -- the rest of section 4 --------------------------------------------------------------------

def test_405_carries_allow(client: FlaskClient) -> None:
    for method, path, allowed in [("delete", "/api/games", {"POST", "OPTIONS"}),
                                  ("post", "/api/games/abc", {"GET", "HEAD", "OPTIONS"}),
                                  ("put", "/healthz", {"GET", "HEAD", "OPTIONS"})]:
        answer = getattr(client, method)(path)
        assert_problem(answer, 405)
        assert {m.strip() for m in answer.headers["Allow"].split(",")} == allowed, path


def _is_utc_iso(text: str) -> bool:
    moment = datetime.fromisoformat(text)
    return moment.utcoffset() is not None and moment.utcoffset().total_seconds() == 0  # type: ignore[union-attr]


def test_timestamps_carry_their_utc_offset(client: FlaskClient) -> None:
    game_id, tokens = _two_players(client, turn_time_limit=3600)
    game = client.get(f"/api/games/{game_id}", headers=auth(tokens[0])).get_json()
    assert game["turn_deadline"].endswith("+00:00")
    assert _is_utc_iso(game["turn_deadline"])
    events = client.get(f"/api/games/{game_id}/events", headers=auth(tokens[0])).get_json()
    assert events["events"]
    assert all(_is_utc_iso(event["at"]) for event in events["events"])
    vacation = client.post(f"/api/games/{game_id}/vacation", json={"days": 1},
                           headers=auth(tokens[0]))
    assert vacation.status_code == 200, vacation.get_data(as_text=True)
    assert _is_utc_iso(vacation.get_json()["vacation_until"])
    game = client.get(f"/api/games/{game_id}", headers=auth(tokens[0])).get_json()
    assert _is_utc_iso(game["seats"][0]["vacation_until"])


def test_every_datetime_column_is_utc_aware() -> None:
    from dos_server.models import UTCDateTime

    moments = [column for table in db.metadata.tables.values() for column in table.columns
               if isinstance(column.type, sa.DateTime | UTCDateTime)]
    assert len(moments) > 5
    assert all(isinstance(column.type, UTCDateTime) for column in moments), moments


def test_out_of_turn_by_number_is_409_like_by_text(app: Flask, client: FlaskClient) -> None:
    game_id, tokens = _two_players(client)
    seat, version = _current(app, game_id)
    other = auth(tokens[1 - seat])
    by_text = assert_problem(client.post(f"/api/games/{game_id}/actions", headers=other,
                                         json={"version": version, "turn": "draw"}), 409)
    for number in (1, 2, 99):
        by_number = assert_problem(client.post(f"/api/games/{game_id}/actions", headers=other,
                                               json={"version": version, "number": number}), 409)
        assert by_number["type"] == by_text["type"]
        assert by_number["type"].endswith("/not-your-turn")
        assert by_number["detail"] == by_text["detail"]
    assert stored_version(app, game_id) == version
    # In turn, a number past the list is still 422 (no such action).
    answer = client.post(f"/api/games/{game_id}/actions", headers=auth(tokens[seat]),
                         json={"version": version, "number": 999})
    assert assert_problem(answer, 422)["type"].endswith("/no-such-action")
