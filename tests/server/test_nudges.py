"""Nudges: a player waiting on another nudges them at most once a day per game; the nudged
player gets one email (over real SMTP) and webhook naming who waits and since when; a player
can turn nudges off; a refused nudge says when the next one is allowed."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
import sqlalchemy as sa
from flask import Flask
from flask.testing import FlaskClient
from server_helpers import assert_problem, auth, join, joined_game

from dos_server import worker
from dos_server.extensions import db
from dos_server.models import EventRow, NotificationRow, SeatRow
from testkit import Receiver, SmtpSink, smtp, text_of, verify

__all__ = ["smtp"]


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    server = Receiver().start()
    yield server
    server.stop()


def _game(client: FlaskClient, people: int = 2) -> tuple[str, dict[int, str]]:
    return joined_game(client, ["ann", "bob", "cid"][:people], turn_time_limit=86400)


def _current(client: FlaskClient, game_id: str, token: str) -> dict[str, Any]:
    return dict(client.get(f"/api/games/{game_id}", headers=auth(token)).get_json())


def _nudge(client: FlaskClient, game_id: str, token: str) -> Any:
    return client.post(f"/api/games/{game_id}/nudge", headers=auth(token))


def _rows(app: Flask, game_id: str, event: str) -> list[NotificationRow]:
    with app.app_context():
        found = list(db.session.execute(sa.select(NotificationRow).where(
            NotificationRow.game_id == game_id, NotificationRow.event == event)
            .order_by(NotificationRow.id)).scalars())
        db.session.expunge_all()
        db.session.remove()
    return found


def _set_seat(app: Flask, game_id: str, index: int, **values: Any) -> None:
    with app.app_context():
        db.session.execute(sa.update(SeatRow).where(SeatRow.game_id == game_id,
                                                    SeatRow.index == index).values(**values))
        db.session.commit()
        db.session.remove()


def _kinds(app: Flask, game_id: str) -> list[str]:
    with app.app_context():
        kinds = list(db.session.execute(sa.select(EventRow.kind).where(
            EventRow.game_id == game_id).order_by(EventRow.seq)).scalars())
        db.session.remove()
    return kinds


def test_a_nudge_emails_the_player_to_move_once_a_day(make_app: Callable[..., Flask],
                                                       smtp: SmtpSink) -> None:
    app = make_app(SMTP_HOST="127.0.0.1", SMTP_PORT=smtp.port, SMTP_SECURITY="none")
    client = app.test_client()
    game_id, tokens = _game(client)
    body = _current(client, game_id, tokens[0])
    mover = body["view"]["current"]
    waiter = 1 - mover
    version = body["version"]
    answer = _nudge(client, game_id, tokens[waiter])
    assert answer.status_code == 200, answer.get_data(as_text=True)
    done = answer.get_json()
    assert done["nudged"] == mover
    allowed = datetime.fromisoformat(done["next_allowed_at"])
    assert timedelta(hours=23) < allowed - datetime.now(UTC) <= timedelta(hours=24)
    # A nudge changes no table: a move chosen (or emailed) at this version still plays.
    assert _current(client, game_id, tokens[0])["version"] == version
    assert _kinds(app, game_id)[-1] == "nudged"
    [row] = _rows(app, game_id, "nudge")
    assert row.seats == [mover]
    assert row.payload["data"]["by"] == waiter
    with app.app_context():
        assert worker.run_once() >= 1
        db.session.remove()
    names = ["ann", "bob"]
    [mail] = [m for m in smtp.to(f"{names[mover]}@example.org")
              if "waiting for your move" in str(m["Subject"])]
    assert names[waiter] in str(mail["Subject"])
    text = text_of(mail)
    assert f"{names[waiter]} nudged you: they have been waiting for your move since" in text
    assert "Your moves:" in text  # the nudge is a your-turn email too: it lists the moves
    # Again within the day: refused with when the next one is allowed; nothing more is sent.
    again = _nudge(client, game_id, tokens[waiter])
    problem = assert_problem(again, 429)
    assert problem["type"].endswith("/nudge-too-soon")
    assert problem["next_allowed_at"] == done["next_allowed_at"]
    assert "your next nudge is allowed at" in problem["detail"]
    assert 0 < int(again.headers["Retry-After"]) <= 86400
    assert len(_rows(app, game_id, "nudge")) == 1
    # A day later it is allowed again.
    _set_seat(app, game_id, waiter, last_nudged_at=datetime.now(UTC) - timedelta(hours=25))
    assert _nudge(client, game_id, tokens[waiter]).status_code == 200
    assert len(_rows(app, game_id, "nudge")) == 2


def test_the_nudge_webhook_names_who_waits_and_since_when(
        make_app: Callable[..., Flask], receiver: Receiver) -> None:
    app = make_app(WEBHOOK_ALLOW_PRIVATE=True)
    client = app.test_client()
    game_id, tokens = _game(client)
    mover = _current(client, game_id, tokens[0])["view"]["current"]
    hooked = client.put(f"/api/games/{game_id}/seats/{mover}/notifications",
                        json={"webhook_url": receiver.url("/hook")}, headers=auth(tokens[mover]))
    assert hooked.status_code == 200, hooked.get_data(as_text=True)
    secret = hooked.get_json()["webhook_secret"]
    assert _nudge(client, game_id, tokens[1 - mover]).status_code == 200
    with app.app_context():
        worker.run_once()
        db.session.remove()
    [delivery] = [r for r in receiver.at("/hook") if r.json["type"] == "game.nudge"]
    data = verify(delivery, secret)["data"]
    assert data["by"] == 1 - mover
    assert data["by_name"] == ["ann", "bob"][1 - mover]
    assert data["target"] == mover
    assert data["waiting_seconds"] >= 0
    assert datetime.fromisoformat(data["waiting_since"]) <= datetime.now(UTC)


def test_nudges_off_refuses_and_says_so(app: Flask, client: FlaskClient) -> None:
    game_id, tokens = _game(client)
    mover = _current(client, game_id, tokens[0])["view"]["current"]
    off = client.put(f"/api/games/{game_id}/seats/{mover}/notifications",
                     json={"nudges": False}, headers=auth(tokens[mover]))
    assert off.status_code == 200, off.get_data(as_text=True)
    assert off.get_json()["nudges"] is False
    refused = assert_problem(_nudge(client, game_id, tokens[1 - mover]), 409)
    assert refused["type"].endswith("/nudges-off")
    assert "has turned nudges off" in refused["detail"]
    assert _rows(app, game_id, "nudge") == []
    assert "nudged" not in _kinds(app, game_id)
    # A refused nudge does not count as the day's nudge: back on, it is allowed at once.
    client.put(f"/api/games/{game_id}/seats/{mover}/notifications", json={"nudges": True},
               headers=auth(tokens[mover]))
    assert _nudge(client, game_id, tokens[1 - mover]).status_code == 200
    # A string is no boolean: 422, nothing changes.
    assert_problem(client.put(f"/api/games/{game_id}/seats/{mover}/notifications",
                              json={"nudges": "no"}, headers=auth(tokens[mover])), 422)


def test_nobody_nudges_on_their_own_turn_or_a_bots(app: Flask, client: FlaskClient) -> None:
    game_id, tokens = _game(client, people=3)
    mover = _current(client, game_id, tokens[0])["view"]["current"]
    own = assert_problem(_nudge(client, game_id, tokens[mover]), 409)
    assert own["type"].endswith("/nothing-to-nudge")
    assert "your own turn" in own["detail"]
    _set_seat(app, game_id, mover, bot="random")
    other = (mover + 1) % 3
    bot = assert_problem(_nudge(client, game_id, tokens[other]), 409)
    assert "does not need a nudge" in bot["detail"]
    _set_seat(app, game_id, mover, bot=None)
    _set_seat(app, game_id, other, resigned=True)
    assert "you have resigned" in assert_problem(_nudge(client, game_id, tokens[other]),
                                                 409)["detail"]
    assert _rows(app, game_id, "nudge") == []


def test_a_nudge_needs_a_player_of_a_game_in_play(client: FlaskClient) -> None:
    created = client.post("/api/games", json={"seats": [{"name": "ann"}, {"name": "bob"}]})
    game = created.get_json()
    assert_problem(client.post(f"/api/games/{game['id']}/nudge",
                               headers=auth(game["host_token"])), 403)
    assert_problem(client.post(f"/api/games/{game['id']}/nudge"), 403)
    token = join(client, game["id"], invite=game["invites"][0]["invite"])["player_token"]
    assert_problem(client.post(f"/api/games/{game['id']}/nudge", headers=auth(token)), 409)
    assert_problem(client.post("/api/games/nosuchgame/nudge", headers=auth(token)), 404)
    assert_problem(client.post(f"/api/games/{game['id']}/nudge",
                               headers=auth("not-a-token")), 401)

