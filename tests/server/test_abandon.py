"""A way out of an abandoned game: when a seat timed out K turns in a row or its player has not
looked for D days, the other players still playing vote to hand it to a bot or to end the game;
a strict majority decides at once, the absent player is told, the history says what happened.
Votes on a seat whose player came back are dropped; two votes at once decide exactly once."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import requests
import sqlalchemy as sa
from flask import Flask
from flask.testing import FlaskClient
from server_helpers import assert_problem, auth, joined_game

from dos_engine.wording import describe
from dos_server import create_app, worker
from dos_server.config import ConfigError
from dos_server.extensions import db
from dos_server.models import EventRow, GameRow, NotificationRow, SeatRow, SeatVoteRow
from testkit import race, serving

NAMES = ["ann", "bob", "cid"]


def _game(client: FlaskClient, people: int = 3) -> tuple[str, dict[int, str]]:
    return joined_game(client, NAMES[:people], turn_time_limit=3600)


def _body(client: FlaskClient, game_id: str, token: str) -> dict[str, Any]:
    return dict(client.get(f"/api/games/{game_id}", headers=auth(token)).get_json())


def _vote(client: FlaskClient, game_id: str, token: str, seat: int, choice: str) -> Any:
    return client.post(f"/api/games/{game_id}/votes", json={"seat": seat, "choice": choice},
                       headers=auth(token))


def _set_seat(app: Flask, game_id: str, index: int, **values: Any) -> None:
    with app.app_context():
        db.session.execute(sa.update(SeatRow).where(SeatRow.game_id == game_id,
                                                    SeatRow.index == index).values(**values))
        db.session.commit()
        db.session.remove()


def _events(app: Flask, game_id: str, kind: str) -> list[EventRow]:
    with app.app_context():
        found = list(db.session.execute(sa.select(EventRow).where(
            EventRow.game_id == game_id, EventRow.kind == kind)).scalars())
        db.session.expunge_all()
        db.session.remove()
    return found


def _outbox(app: Flask, game_id: str, event: str) -> list[NotificationRow]:
    with app.app_context():
        found = list(db.session.execute(sa.select(NotificationRow).where(
            NotificationRow.game_id == game_id, NotificationRow.event == event)).scalars())
        db.session.expunge_all()
        db.session.remove()
    return found


def _votes(app: Flask, game_id: str) -> list[tuple[int, int, str]]:
    with app.app_context():
        found = [(v.target_seat, v.voter_seat, v.choice) for v in db.session.execute(
            sa.select(SeatVoteRow).where(SeatVoteRow.game_id == game_id)).scalars()]
        db.session.remove()
    return found


def _play_turn(client: FlaskClient, game_id: str, tokens: dict[int, str]) -> int:
    """The current seat's person plays its first legal moves until its turn ends."""
    seat = _body(client, game_id, tokens[0])["view"]["current"]
    while True:
        body = _body(client, game_id, tokens[seat])
        if body["status"] != "active" or body["view"]["current"] != seat:
            return seat
        answer = client.post(f"/api/games/{game_id}/actions", headers=auth(tokens[seat]),
                             json={"version": body["version"], "number": 1})
        assert answer.status_code == 200, answer.get_data(as_text=True)


def test_three_timeouts_in_a_row_and_a_majority_hand_the_seat_to_a_bot(
        app: Flask, client: FlaskClient) -> None:
    game_id, tokens = _game(client, people=2)
    absent = _body(client, game_id, tokens[0])["view"]["current"]
    other = 1 - absent
    for timeout in range(1, 4):  # the worker times out the absent seat's turn three times
        with app.app_context():
            assert worker.check_deadlines(datetime.now(UTC) + timedelta(days=2)) == 1
            db.session.remove()
        assert [e.data["timeouts"] for e in _events(app, game_id, "timed_out")][-1] == timeout
        if timeout == 1:  # not absent yet: a vote is refused and says what it needs
            refused = assert_problem(_vote(client, game_id, tokens[other], absent, "bot"), 409)
            assert refused["type"].endswith("/not-absent")
            assert "3 timeouts in a row or 7 days" in refused["detail"]
        if _body(client, game_id, tokens[0])["status"] != "active":
            return  # a timed-out turn may end the game; nothing left to vote on
        assert _play_turn(client, game_id, tokens) == other
    standing = client.get(f"/api/games/{game_id}/votes", headers=auth(tokens[other]))
    assert standing.status_code == 200, standing.get_data(as_text=True)
    [seat] = standing.get_json()["seats"]
    assert seat["seat"] == absent
    assert seat["absent"] is True
    assert seat["timeouts_in_a_row"] == 3
    assert (seat["voters"], seat["needed"]) == ([other], 1)
    version = _body(client, game_id, tokens[0])["version"]
    answer = _vote(client, game_id, tokens[other], absent, "bot")
    assert answer.status_code == 200, answer.get_data(as_text=True)
    assert answer.get_json()["decided"] == "bot"
    body = _body(client, game_id, tokens[other])
    assert body["version"] > version
    assert body["seats"][absent]["resigned"] is True
    if body["status"] == "active":  # it was the absent seat's turn: the bot played it at once
        assert body["view"]["current"] == other
    [handed] = _events(app, game_id, "seat_handed_to_bot")
    assert handed.seat == absent
    assert handed.data["choice"] == "bot"
    assert handed.data["votes"] == {str(other): "bot"}
    [told] = _outbox(app, game_id, "abandoned")
    assert told.seats == [absent]
    assert _votes(app, game_id) == []  # decided: the votes are spent


def test_a_majority_of_three_ends_a_game_whose_player_has_not_looked_for_a_week(
        app: Flask, client: FlaskClient) -> None:
    game_id, tokens = _game(client)
    absent = next(seat for seat in range(3)
                  if seat != _body(client, game_id, tokens[0])["view"]["current"])
    voters = [seat for seat in range(3) if seat != absent]
    week_ago = datetime.now(UTC) - timedelta(days=8)
    with app.app_context():  # the game began more than a week ago, and so did the last look
        db.session.execute(sa.update(GameRow).where(GameRow.id == game_id)
                           .values(created_at=week_ago))
        db.session.execute(sa.update(EventRow).where(EventRow.game_id == game_id)
                           .values(created_at=week_ago))
        db.session.commit()
        db.session.remove()
    _set_seat(app, game_id, absent, last_seen_at=week_ago)
    first = _vote(client, game_id, tokens[voters[0]], absent, "end")
    assert first.status_code == 200, first.get_data(as_text=True)
    tally = first.get_json()
    assert (tally["decided"], tally["end"], tally["needed"]) == (None, 1, 2)
    assert tally["votes"] == {str(voters[0]): "end"}
    # One vote of two is no majority; a vote may be changed while it counts.
    changed = _vote(client, game_id, tokens[voters[0]], absent, "bot").get_json()
    assert (changed["bot"], changed["end"], changed["decided"]) == (1, 0, None)
    _vote(client, game_id, tokens[voters[0]], absent, "end")
    second = _vote(client, game_id, tokens[voters[1]], absent, "end")
    assert second.status_code == 200, second.get_data(as_text=True)
    assert second.get_json()["decided"] == "end"
    body = _body(client, game_id, tokens[voters[0]])
    assert body["status"] == "finished"
    [ended] = _events(app, game_id, "game_ended")
    assert ended.data["reason"] == "the other players voted to end the game"
    assert ended.data["seat"] == absent
    assert ended.data["votes"] == {str(voters[0]): "end", str(voters[1]): "end"}
    assert ended.data["scores"] == body["view"]["scores"]
    assert sorted(seat for row in _outbox(app, game_id, "game_over") for seat in row.seats) \
        == [0, 1, 2]
    [told] = _outbox(app, game_id, "abandoned")
    assert (told.seats, told.payload["data"]["choice"]) == ([absent], "end")
    history = client.get(f"/api/games/{game_id}/events?limit=500",
                         headers=auth(tokens[absent])).get_json()["events"]
    said = describe(history[-1], NAMES, absent)
    assert said is not None
    assert said.startswith("Game over: the other players voted to end the game. Final scores")
    assert describe(history[-1], NAMES, absent, "lo") != said  # the engine's catalog says it
    assert client.get(f"/api/games/{game_id}/record").status_code == 200
    assert_problem(_vote(client, game_id, tokens[voters[0]], absent, "end"), 409)


def test_a_seat_that_moves_drops_the_votes_on_it(app: Flask, client: FlaskClient) -> None:
    game_id, tokens = _game(client)
    absent = _body(client, game_id, tokens[0])["view"]["current"]
    voters = [seat for seat in range(3) if seat != absent]
    _set_seat(app, game_id, absent, timeouts=3)
    assert _vote(client, game_id, tokens[voters[0]], absent, "bot").status_code == 200
    assert _votes(app, game_id) == [(absent, voters[0], "bot")]
    assert _play_turn(client, game_id, tokens) == absent  # the person is back and moves
    with app.app_context():  # a move of the person's own starts the timeouts in a row again
        assert db.session.execute(sa.select(SeatRow.timeouts).where(
            SeatRow.game_id == game_id, SeatRow.index == absent)).scalar_one() == 0
        db.session.remove()
    refused = assert_problem(_vote(client, game_id, tokens[voters[1]], absent, "bot"), 409)
    assert "is not absent" in refused["detail"]
    assert _votes(app, game_id) == []
    assert _events(app, game_id, "seat_handed_to_bot") == []
    # Absent again later: the vote from before the return does not count.
    _set_seat(app, game_id, absent, timeouts=3)
    tally = _vote(client, game_id, tokens[voters[1]], absent, "bot").get_json()
    assert (tally["votes"], tally["decided"]) == ({str(voters[1]): "bot"}, None)


def test_who_may_vote_and_what(app: Flask, client: FlaskClient) -> None:
    game_id, tokens = _game(client)
    created = _body(client, game_id, tokens[0])
    absent = created["view"]["current"]
    voters = [seat for seat in range(3) if seat != absent]
    _set_seat(app, game_id, absent, timeouts=5)
    own = assert_problem(_vote(client, game_id, tokens[absent], absent, "bot"), 403)
    assert own["type"].endswith("/not-a-voter")
    assert_problem(_vote(client, game_id, tokens[voters[0]], absent, "maybe"), 422)
    assert_problem(client.post(f"/api/games/{game_id}/votes", json={"seat": "1",
                               "choice": "bot"}, headers=auth(tokens[voters[0]])), 422)
    assert_problem(_vote(client, game_id, tokens[voters[0]], 9, "bot"), 403)
    assert_problem(client.post(f"/api/games/{game_id}/votes",
                               json={"seat": absent, "choice": "bot"}), 403)
    assert_problem(client.get(f"/api/games/{game_id}/votes"), 403)
    assert_problem(client.get("/api/games/nosuchgame/votes", headers=auth(tokens[0])), 404)
    _set_seat(app, game_id, voters[1], resigned=True)
    assert "you have resigned" in assert_problem(
        _vote(client, game_id, tokens[voters[1]], absent, "bot"), 403)["detail"]
    # With one voter left, one vote is the majority.
    assert _vote(client, game_id, tokens[voters[0]], absent, "end").get_json()["decided"] == "end"
    assert _votes(app, game_id) == []


def test_two_votes_at_once_decide_exactly_once(make_app: Callable[..., Flask]) -> None:
    app = make_app()
    client = app.test_client()
    game_id, tokens = _game(client)
    absent = _body(client, game_id, tokens[0])["view"]["current"]
    voters = [seat for seat in range(3) if seat != absent]
    _set_seat(app, game_id, absent, timeouts=3)
    with serving(app) as url:
        answers = race(2, lambda i: requests.post(
            f"{url}/api/games/{game_id}/votes", json={"seat": absent, "choice": "end"},
            headers=auth(tokens[voters[i]]), timeout=60))
    assert [a.status_code for a in answers] == [200, 200], [a.text for a in answers]
    assert sorted(str(a.json()["decided"]) for a in answers) == ["None", "end"]
    assert len(_events(app, game_id, "game_ended")) == 1
    assert len(_outbox(app, game_id, "abandoned")) == 1
    assert sorted(s for row in _outbox(app, game_id, "game_over") for s in row.seats) == [0, 1, 2]


def test_the_thresholds_come_from_the_config(make_app: Callable[..., Flask], tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    app = make_app(ABANDON_TIMEOUTS=2, ABANDON_DAYS=30)
    client = app.test_client()
    game_id, tokens = _game(client, people=2)
    absent = _body(client, game_id, tokens[0])["view"]["current"]
    _set_seat(app, game_id, absent, timeouts=2)
    standing = client.get(f"/api/games/{game_id}/votes",
                          headers=auth(tokens[1 - absent])).get_json()
    assert standing["thresholds"] == {"timeouts": 2, "days": 30}
    assert [seat["seat"] for seat in standing["seats"]] == [absent]
    monkeypatch.setenv("DOS_ABANDON_DAYS", "soon")
    with pytest.raises(ConfigError, match="ABANDON_DAYS must be a whole number"):
        create_app({"SQLALCHEMY_DATABASE_URI": f"sqlite:///{tmp_path}/db.sqlite3",
                    "INSTANCE_PATH": str(tmp_path / "instance")})
    monkeypatch.setenv("DOS_ABANDON_DAYS", "0")
    with pytest.raises(ConfigError, match="ABANDON_DAYS must be 1 or more"):
        create_app({"SQLALCHEMY_DATABASE_URI": f"sqlite:///{tmp_path}/db.sqlite3",
                    "INSTANCE_PATH": str(tmp_path / "instance")})
