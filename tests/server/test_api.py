"""The HTTP API end to end: create, join, start, play to a winner, and every error shape."""

from __future__ import annotations

import collections
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient
from server_helpers import (
    assert_problem,
    auth,
    create,
    join,
    play_game,
    stored_state,
    stored_version,
)

from dos_engine import GameRecord, Match, replay
from testkit import build_app, dispose


def _two_players(client: FlaskClient) -> tuple[str, dict[int, str]]:
    game = create(client, [{"name": "ann"}, {"name": "bob"}], target_score=1)
    tokens = {}
    for invite in game["invites"]:
        tokens[invite["seat"]] = join(client, game["id"], invite=invite["invite"])["player_token"]
    return game["id"], tokens


def _current(client: FlaskClient, game_id: str, tokens: dict[int, str]) -> tuple[int, int]:
    body = client.get(f"/api/games/{game_id}", headers=auth(tokens[0])).get_json()
    return body["view"]["current"], body["version"]


def _event_count(client: FlaskClient, game_id: str, token: str) -> int:
    body = client.get(f"/api/games/{game_id}/events?limit=500", headers=auth(token)).get_json()
    return len(body["events"])


def test_complete_game_with_bots_and_players(app: Flask, client: FlaskClient) -> None:
    game = create(client, [{"name": "ann"}, {"bot": "random"}, {"name": "bob"}, {"bot": "greedy"}],
                  target_score=25)
    assert game["status"] == "waiting"  # for ann and bob to join; the bots join at once
    assert game["host"] is True
    assert game["view"] is None  # nothing is dealt yet
    assert {i["seat"] for i in game["invites"]} == {0, 2}
    record = client.get(f"/api/games/{game['id']}/record")
    assert_problem(record, 409)

    tokens = {}
    for invite in game["invites"]:
        joined = join(client, game["id"], invite=invite["invite"])
        assert joined["seat"] == invite["seat"]
        assert joined["game"]["you"] == invite["seat"]
        tokens[joined["seat"]] = joined["player_token"]
    host_view = client.get(f"/api/games/{game['id']}", headers=auth(game["host_token"]))
    assert host_view.get_json()["status"] == "active"  # the last to join dealt
    assert host_view.get_json()["view"]["hand"] is None  # the host is no seat

    final = play_game(client, game["id"], tokens, seed=1)
    assert final["view"]["winner"] is not None
    assert max(final["view"]["scores"]) >= 25
    assert final["fairness"]["seed"] is not None  # revealed once over

    record = client.get(f"/api/games/{game['id']}/record")
    assert record.status_code == 200
    replayed = replay(GameRecord.from_dict(record.get_json()))
    assert replayed == stored_state(app, game["id"])
    assert replayed.is_over

    # Once over, no more moves.
    late = client.post(f"/api/games/{game['id']}/actions", headers=auth(tokens[0]),
                       json={"version": final["version"], "actions": ["draw"]})
    assert_problem(late, 409)


def test_open_seats_invite_code_and_host_start(app: Flask, client: FlaskClient) -> None:
    game = create(client, [{"name": "host"}, {}, {}, {"bot": "random"}], target_score=1)
    game_id, code = game["id"], game["invite_code"]
    assert game["status"] == "waiting"
    assert [s["open"] for s in game["seats"]] == [False, True, True, False]
    host = auth(game["host_token"])

    assert_problem(client.post(f"/api/games/{game_id}/join", json={"code": "nope", "name": "x"}),
                   403)
    assert_problem(client.post(f"/api/games/{game_id}/join", json={"code": code}), 422)
    assert_problem(client.post(f"/api/games/{game_id}/join", json={}), 422)
    assert_problem(client.post(f"/api/games/{game_id}/actions", headers=host,
                               json={"version": 1, "actions": ["draw"]}), 403)

    zed = join(client, game_id, code=code, name="zed")
    assert zed["seat"] == 1
    assert zed["game"]["status"] == "waiting"
    # Names are unique per game, case-insensitively.
    assert_problem(client.post(f"/api/games/{game_id}/join", json={"code": code, "name": "ZED"}),
                   422)
    assert_problem(client.get(f"/api/games/{game_id}/actions", headers=auth(zed["player_token"])),
                   409)  # not started
    # Only the host starts.
    assert_problem(client.post(f"/api/games/{game_id}/start", headers=auth(zed["player_token"])),
                   403)
    assert_problem(client.post(f"/api/games/{game_id}/start"), 403)

    started = client.post(f"/api/games/{game_id}/start", headers=host)
    assert started.status_code == 200, started.get_data(as_text=True)
    body = started.get_json()
    assert body["status"] == "active"
    assert [s["name"] for s in body["seats"]] == ["host", "zed", "random-bot-3"]
    assert [s["seat"] for s in body["seats"]] == [0, 1, 2]
    assert_problem(client.post(f"/api/games/{game_id}/start", headers=host), 409)
    assert_problem(client.post(f"/api/games/{game_id}/join", json={"code": code, "name": "late"}),
                   409)

    hosted = join(client, game_id, invite=game["invites"][0]["invite"])
    assert hosted["seat"] == 0
    tokens = {0: hosted["player_token"], 1: zed["player_token"]}
    # zed's token still names seat 1, which kept its index.
    assert client.get(f"/api/games/{game_id}", headers=auth(tokens[1])).get_json()["you"] == 1

    play_game(client, game_id, tokens, seed=2)
    record = client.get(f"/api/games/{game_id}/record").get_json()
    assert replay(GameRecord.from_dict(record)) == stored_state(app, game_id)


def test_filling_every_open_seat_starts_the_game(client: FlaskClient) -> None:
    game = create(client, [{}, {}])
    first = join(client, game["id"], code=game["invite_code"], name="a")
    assert first["game"]["status"] == "waiting"
    second = join(client, game["id"], code=game["invite_code"], name="b")
    assert second["game"]["status"] == "active"
    assert second["game"]["view"]["hand"] is not None
    assert_problem(client.post(f"/api/games/{game['id']}/join",
                               json={"code": game["invite_code"], "name": "c"}), 409)


def test_start_needs_two_filled_seats_one_a_person(client: FlaskClient) -> None:
    game = create(client, [{"name": "solo"}, {}])
    assert_problem(client.post(f"/api/games/{game['id']}/start", headers=auth(game["host_token"])),
                   409)


def test_legal_actions_and_the_three_ways_to_post(app: Flask, client: FlaskClient) -> None:
    game_id, tokens = _two_players(client)
    seat, version = _current(client, game_id, tokens)
    listing = client.get(f"/api/games/{game_id}/actions", headers=auth(tokens[seat])).get_json()
    assert listing["version"] == version
    assert listing["your_turn"] is True
    numbered = listing["actions"]
    assert [a["number"] for a in numbered] == list(range(1, len(numbered) + 1))
    assert all(a["description"] for a in numbered)
    state = stored_state(app, game_id)
    assert [a["action"] for a in numbered] == [a.text() for a in state.legal_actions(seat)]

    other = client.get(f"/api/games/{game_id}/actions", headers=auth(tokens[1 - seat])).get_json()
    assert other["your_turn"] is False

    # A number beyond the list is a 422, nothing applied.
    too_far = client.post(f"/api/games/{game_id}/actions", headers=auth(tokens[seat]),
                          json={"version": version, "number": len(numbered) + 1})
    assert_problem(too_far, 422)
    assert stored_version(app, game_id) == version

    # By number: "draw" is always listed at the start of a turn.
    draw = next(a for a in numbered if a["action"] == "draw")
    answer = client.post(f"/api/games/{game_id}/actions", headers=auth(tokens[seat]),
                         json={"version": version, "number": draw["number"]})
    assert answer.status_code == 200, answer.get_data(as_text=True)
    body = answer.get_json()
    assert body["applied"] == ["draw"]
    assert body["version"] == version + 1
    assert any(e["kind"] == "drew" and e["seat"] == seat for e in body["events"])

    # By `actions` list: finish the turn ("end" when listed, else the first listed action).
    for _ in range(20):
        state = stored_state(app, game_id)
        if state.current != seat or state.is_over:
            break
        legal = [a.text() for a in state.legal_actions(seat)]
        finish = "end" if "end" in legal else legal[0]
        answer = client.post(f"/api/games/{game_id}/actions", headers=auth(tokens[seat]),
                             json={"version": stored_version(app, game_id), "actions": [finish]})
        assert answer.status_code == 200, answer.get_data(as_text=True)
    assert stored_state(app, game_id).current != seat

    # By one-line `turn` text for the next player: draw and end in one request.
    seat2, version2 = _current(client, game_id, tokens)
    state = stored_state(app, game_id)
    trial = state.copy()
    trial.play(trial.parse_action("draw", seat2), seat2)
    rest = "end" if "end" in [a.text() for a in trial.legal_actions(seat2)] else None
    turn = "draw; end" if rest else "draw"
    answer = client.post(f"/api/games/{game_id}/actions", headers=auth(tokens[seat2]),
                         json={"version": version2, "turn": turn})
    assert answer.status_code == 200, answer.get_data(as_text=True)
    body = answer.get_json()
    assert body["version"] == version2 + 1  # a whole turn is one version
    assert body["applied"][0] == "draw"


def test_stale_version_is_409_and_changes_nothing(app: Flask, client: FlaskClient) -> None:
    game_id, tokens = _two_players(client)
    seat, version = _current(client, game_id, tokens)
    before = stored_state(app, game_id)
    events = _event_count(client, game_id, tokens[0])
    for stale in (version - 1, version + 1, 1):
        if stale == version or stale < 1:  # joins in play keep the version: it may still be 1
            continue
        answer = client.post(f"/api/games/{game_id}/actions", headers=auth(tokens[seat]),
                             json={"version": stale, "actions": ["draw"]})
        problem = assert_problem(answer, 409)
        assert problem["current_version"] == version
    assert stored_version(app, game_id) == version
    assert stored_state(app, game_id) == before
    assert _event_count(client, game_id, tokens[0]) == events


def test_illegal_action_names_the_rule(app: Flask, client: FlaskClient) -> None:
    game_id, tokens = _two_players(client)
    seat, version = _current(client, game_id, tokens)
    before = stored_state(app, game_id)
    for text in ("end", "m9 R1"):
        problem = assert_problem(
            client.post(f"/api/games/{game_id}/actions", headers=auth(tokens[seat]),
                        json={"version": version, "turn": text}), 422)
        assert problem["rule"], problem
    # Not the notation at all: 400, still a problem document.
    assert_problem(client.post(f"/api/games/{game_id}/actions", headers=auth(tokens[seat]),
                               json={"version": version, "turn": "zzz"}), 400)
    assert stored_version(app, game_id) == version
    assert stored_state(app, game_id) == before


def test_not_your_turn_is_409(app: Flask, client: FlaskClient) -> None:
    game_id, tokens = _two_players(client)
    seat, version = _current(client, game_id, tokens)
    problem = assert_problem(
        client.post(f"/api/games/{game_id}/actions", headers=auth(tokens[1 - seat]),
                    json={"version": version, "actions": ["draw"]}), 409)
    assert "turn" in problem["detail"].lower()
    assert stored_version(app, game_id) == version


def test_ambiguous_shorthand_lists_candidates(app: Flask, client: FlaskClient) -> None:
    for _ in range(60):
        game_id, tokens = _two_players(client)
        state = stored_state(app, game_id)
        seat = state.current
        by_position = collections.Counter(
            a.position for a in state.legal_actions(seat) if isinstance(a, Match))
        ambiguous = [pos for pos, n in by_position.items() if n > 1]
        if ambiguous:
            break
    else:
        pytest.fail("no deal with an ambiguous 'm<position>' in 60 games")
    version = stored_version(app, game_id)
    position = ambiguous[0]
    problem = assert_problem(
        client.post(f"/api/games/{game_id}/actions", headers=auth(tokens[seat]),
                    json={"version": version, "turn": f"m{position}"}), 422)
    expected = sorted(a.text() for a in state.legal_actions(seat)
                      if isinstance(a, Match) and a.position == position)
    assert sorted(problem["candidates"]) == expected
    assert stored_version(app, game_id) == version


def test_idempotent_retry(app: Flask, client: FlaskClient) -> None:
    game_id, tokens = _two_players(client)
    seat, version = _current(client, game_id, tokens)
    headers = {**auth(tokens[seat]), "Idempotency-Key": "retry-1"}
    post = {"version": version, "actions": ["draw"]}
    first = client.post(f"/api/games/{game_id}/actions", headers=headers, json=post)
    assert first.status_code == 200, first.get_data(as_text=True)
    events = _event_count(client, game_id, tokens[0])
    second = client.post(f"/api/games/{game_id}/actions", headers=headers, json=post)
    assert second.status_code == 200
    assert second.get_json() == first.get_json()
    assert stored_version(app, game_id) == version + 1
    assert _event_count(client, game_id, tokens[0]) == events

    reused = client.post(f"/api/games/{game_id}/actions", headers=headers,
                         json={"version": version + 1, "actions": ["end"]})
    assert_problem(reused, 422)
    assert stored_version(app, game_id) == version + 1


MALFORMED: list[tuple[str, Any, int]] = [
    ("not json", b"{not json", 400),
    ("array", b"[1, 2]", 422),
    ("string version", {"version": "1", "actions": ["draw"]}, 422),
    ("bool version", {"version": True, "actions": ["draw"]}, 422),
    ("float version", {"version": 1.5, "actions": ["draw"]}, 422),
    ("null version", {"version": None, "actions": ["draw"]}, 422),
    ("no version", {"actions": ["draw"]}, 422),
    ("zero version", {"version": 0, "actions": ["draw"]}, 422),
    ("huge version", {"version": 10**30, "actions": ["draw"]}, 409),
    ("two modes", {"version": 1, "actions": ["draw"], "turn": "draw"}, 422),
    ("no mode", {"version": 1}, 422),
    ("actions not a list", {"version": 1, "actions": "draw"}, 422),
    ("actions of ints", {"version": 1, "actions": [1]}, 422),
    ("empty actions", {"version": 1, "actions": []}, 422),
    ("bool number", {"version": 1, "number": True}, 422),
    ("string number", {"version": 1, "number": "1"}, 422),
    ("zero number", {"version": 1, "number": 0}, 422),
    ("unknown field", {"version": 1, "actions": ["draw"], "extra": 1}, 422),
    ("nul in turn", {"version": 1, "turn": "draw\x00"}, 400),
]


@pytest.mark.parametrize(("body", "status"), [(b, s) for _, b, s in MALFORMED],
                         ids=[name for name, _, _ in MALFORMED])
def test_malformed_actions_are_problems_not_500(client: FlaskClient, body: Any,
                                                status: int) -> None:
    game_id, tokens = _two_players(client)
    seat, version = _current(client, game_id, tokens)
    if isinstance(body, dict) and type(body.get("version")) is int and body["version"] == 1:
        body = {**body, "version": version}
    headers = auth(tokens[seat])
    if isinstance(body, bytes):
        answer = client.post(f"/api/games/{game_id}/actions", data=body,
                             headers={**headers, "Content-Type": "application/json"})
    else:
        answer = client.post(f"/api/games/{game_id}/actions", json=body, headers=headers)
    assert_problem(answer, status)


CREATE_BAD: list[tuple[str, Any]] = [
    ("no seats", {}),
    ("one seat", {"seats": [{"name": "a"}]}),
    ("five seats", {"seats": [{"name": str(i)} for i in range(5)]}),
    ("all bots", {"seats": [{"bot": "random"}, {"bot": "greedy"}]}),
    ("bad bot", {"seats": [{"name": "a"}, {"bot": "smart"}]}),
    ("duplicate names", {"seats": [{"name": "a"}, {"name": "A"}]}),
    ("name with ;", {"seats": [{"name": "a;b"}, {"name": "c"}]}),
    ("bool target", {"seats": [{"name": "a"}, {"name": "b"}], "options": {"target_score": True}}),
    ("str target", {"seats": [{"name": "a"}, {"name": "b"}], "options": {"target_score": "9"}}),
    ("unknown option", {"seats": [{"name": "a"}, {"name": "b"}], "options": {"x": 1}}),
    ("int dos_call", {"seats": [{"name": "a"}, {"name": "b"}], "options": {"dos_call": 1}}),
    ("seats not list", {"seats": "ab"}),
    ("short limit", {"seats": [{"name": "a"}, {"name": "b"}], "turn_time_limit": 5}),
    ("bad webhook", {"seats": [{"name": "a", "webhook_url": "ftp://x"}, {"name": "b"}]}),
    ("bad email", {"seats": [{"name": "a", "email": "nope"}, {"name": "b"}]}),
]


@pytest.mark.parametrize("body", [b for _, b in CREATE_BAD], ids=[n for n, _ in CREATE_BAD])
def test_bad_create_is_422(client: FlaskClient, body: Any) -> None:
    assert_problem(client.post("/api/games", json=body), 422)


def test_unknown_game_is_404_everywhere(client: FlaskClient) -> None:
    for method, path, body in [
        ("get", "/api/games/nosuchgame", None),
        ("get", "/api/games/nosuchgame/actions", None),
        ("get", "/api/games/nosuchgame/events", None),
        ("get", "/api/games/nosuchgame/record", None),
        ("post", "/api/games/nosuchgame/start", None),
        ("post", "/api/games/nosuchgame/join", {"code": "x", "name": "y"}),
        ("post", "/api/games/nosuchgame/actions", {"version": 1, "actions": ["draw"]}),
        ("get", "/no/such/route", None),
    ]:
        answer = getattr(client, method)(path, json=body)
        assert_problem(answer, 404)


def test_method_not_allowed_and_huge_body(app: Flask, client: FlaskClient) -> None:
    assert_problem(client.delete("/api/games"), 405)
    limit = app.config["MAX_CONTENT_LENGTH"]
    huge = b'{"seats": [{"name": "' + b"a" * limit + b'"}]}'
    answer = client.post("/api/games", data=huge, headers={"Content-Type": "application/json"})
    assert_problem(answer, 413)
    game_id, tokens = _two_players(client)
    answer = client.post(f"/api/games/{game_id}/actions", data=huge,
                         headers={**auth(tokens[0]), "Content-Type": "application/json"})
    assert_problem(answer, 413)


def test_history_paging_and_query_validation(client: FlaskClient) -> None:
    game_id, tokens = _two_players(client)
    page = client.get(f"/api/games/{game_id}/events?limit=2", headers=auth(tokens[0])).get_json()
    assert len(page["events"]) == 2
    assert page["more"] is True
    rest = client.get(f"/api/games/{game_id}/events?after={page['next_after']}",
                      headers=auth(tokens[0])).get_json()
    assert rest["events"][0]["seq"] == page["next_after"] + 1
    for query in ("limit=0", "limit=501", "after=-1", "limit=abc", "after=1.5",
                  f"after={2**31}", f"after={10**30}"):
        assert_problem(client.get(f"/api/games/{game_id}/events?{query}"), 422)


def test_health(client: FlaskClient, backend: str) -> None:
    assert client.get("/healthz").get_json() == {"status": "ok"}
    ready = client.get("/readyz").get_json()
    assert ready == {"status": "ready", "database": backend}


@pytest.mark.parametrize("url", [
    "postgresql+psycopg://postgres@127.0.0.1:1/nothing?connect_timeout=2",  # nobody listens
    "sqlite:////nonexistent-dir/dos.db",  # a file that cannot be opened
])
def test_readiness_says_503_when_the_database_does_not_answer(url: str) -> None:
    app = build_app(url, migrate=False)
    try:
        client = app.test_client()
        assert client.get("/healthz").get_json() == {"status": "ok"}  # the process is up
        for _ in range(2):  # and a failed check leaves nothing broken behind
            body = assert_problem(client.get("/readyz"), 503)
            assert body["type"].endswith("/not-ready")
            assert "Traceback" not in str(body)
    finally:
        dispose(app)
