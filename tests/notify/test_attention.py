"""Notifications that respect attention (services/attention.py), on SQLite and PostgreSQL.

Looks are real reads of the game by the seat's token (API, table page) at the wall clock; the
worker's clock is injected and moved by the test, as for deadlines. ``ACTIVE_SECONDS`` is the
production default here (600 s) unless a test says otherwise, and every look is written
(``LOOK_EVERY_SECONDS`` 0) so that the test knows the last look exactly.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient
from notify_helpers import FakeClock, Receiver, auth, create, player_tokens, rows, run_worker
from sqlalchemy import event as sa_event

from dos_server.extensions import db
from dos_server.models import GameRow, NotificationRow, SeatRow
from dos_server.services import attention
from testkit import SmtpSink, text_of

ACTIVE = 600
ANN, BOB, DORA = "ann@example.org", "bob@example.org", "dora@example.org"


def _app(make_app: Callable[..., Flask], **config: Any) -> Flask:
    return make_app(**{"ACTIVE_SECONDS": ACTIVE, "LOOK_EVERY_SECONDS": 0, **config})


def _utc(moment: datetime | None) -> datetime:
    assert moment is not None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def _seat(app: Flask, game_id: str, index: int) -> SeatRow:
    with app.app_context():
        seat = db.session.execute(db.select(SeatRow).where(
            SeatRow.game_id == game_id, SeatRow.index == index)).scalar_one()
        db.session.expunge(seat)
        db.session.remove()
    return seat


def _game(app: Flask, game_id: str) -> GameRow:
    with app.app_context():
        game = db.session.get(GameRow, game_id)
        assert game is not None
        db.session.expunge(game)
        db.session.remove()
    return game


def _look(client: FlaskClient, game_id: str, token: str) -> dict[str, Any]:
    answer = client.get(f"/api/games/{game_id}", headers=auth(token))
    assert answer.status_code == 200, answer.get_data(as_text=True)
    return dict(answer.get_json())


def _finish_turn(client: FlaskClient, game_id: str, token: str) -> None:
    """The seat of ``token`` plays its first legal action until its turn is over (it reads
    only its own list: looks of its own)."""
    turn = _game_state(client.application, game_id)["turn_no"]
    for _ in range(20):
        listing = client.get(f"/api/games/{game_id}/actions", headers=auth(token))
        assert listing.status_code == 200, listing.get_data(as_text=True)
        body = listing.get_json()
        answer = client.post(f"/api/games/{game_id}/actions", headers=auth(token),
                             json={"version": body["version"], "number": 1})
        assert answer.status_code == 200, answer.get_data(as_text=True)
        if answer.get_json()["game"]["status"] != "active" \
                or _game_state(client.application, game_id)["turn_no"] != turn:
            return
    raise AssertionError("the turn did not end")


def _game_state(app: Flask, game_id: str) -> dict[str, Any]:
    state = _game(app, game_id).state
    assert state is not None
    return state


def _your_turn(app: Flask, game_id: str, seat: int, channel: str) -> list[NotificationRow]:
    return [r for r in rows(app, event="your_turn", channel=channel, game_id=game_id)
            if r.seats == [seat]]


def _two_people(make_app: Callable[..., Flask], receiver: Receiver,
                **config: Any) -> tuple[Flask, FlaskClient, str, dict[int, str]]:
    app = _app(make_app, **config)
    client = app.test_client()
    game = create(client, [{"name": "ann", "email": ANN, "webhook_url": receiver.url("/ann")},
                           {"name": "bob", "email": BOB, "webhook_url": receiver.url("/bob")}])
    tokens = player_tokens(client, game)
    run_worker(app, passes=5)  # the first turn's rows and the invitations go out
    return app, client, game["id"], tokens


def test_the_email_waits_while_the_player_looks(make_app: Callable[..., Flask],
                                                receiver: Receiver) -> None:
    app, client, gid, tokens = _two_people(make_app, receiver)
    mover = _game_state(app, gid)["current"]
    other = 1 - mover
    _look(client, gid, tokens[other])  # the other player watches the table
    looked = _utc(_seat(app, gid, other).last_seen_at)
    _finish_turn(client, gid, tokens[mover])
    assert _game_state(app, gid)["current"] == other
    held = _your_turn(app, gid, other, "email") + _your_turn(app, gid, other, "webhook")
    assert len(held) == 2
    for row in held:  # email and webhook alike wait for ACTIVE_SECONDS without a look
        assert _utc(row.next_attempt_at) == looked + timedelta(seconds=ACTIVE)
        assert row.payload["data"]["held"] is True
        assert row.status == "pending"

    due = looked + timedelta(seconds=ACTIVE)
    hook = f"/{['ann', 'bob'][other]}"
    sent_before = [r.json["type"] for r in receiver.at(hook)].count("game.your_turn")
    run_worker(app, FakeClock(due - timedelta(seconds=1)), passes=3)
    assert {_refresh(app, r).status for r in held} == {"pending"}
    run_worker(app, FakeClock(due), passes=3)
    assert {_refresh(app, r).status for r in held} == {"sent"}
    assert [r.json["type"] for r in receiver.at(hook)].count("game.your_turn") \
        == sent_before + 1


def _refresh(app: Flask, row: NotificationRow) -> NotificationRow:
    found = rows(app, id=row.id)
    assert len(found) == 1
    return found[0]


def test_a_look_meanwhile_pushes_it_back(make_app: Callable[..., Flask],
                                         receiver: Receiver) -> None:
    app, client, gid, tokens = _two_people(make_app, receiver)
    mover = _game_state(app, gid)["current"]
    other = 1 - mover
    _look(client, gid, tokens[other])
    first_look = _utc(_seat(app, gid, other).last_seen_at)
    _finish_turn(client, gid, tokens[mover])
    held = _your_turn(app, gid, other, "email") + _your_turn(app, gid, other, "webhook")
    _look(client, gid, tokens[other])  # still there, after the turn began
    again = _utc(_seat(app, gid, other).last_seen_at)
    assert again > first_look

    run_worker(app, FakeClock(first_look + timedelta(seconds=ACTIVE)), passes=3)
    for row in held:  # claimed, checked again, due later: not sent, no attempt made
        now = _refresh(app, row)
        assert now.status == "pending"
        assert now.attempts == 0
        assert _utc(now.next_attempt_at) == again + timedelta(seconds=ACTIVE)
        assert now.lease_owner is None
    run_worker(app, FakeClock(again + timedelta(seconds=ACTIVE)), passes=3)
    assert {_refresh(app, r).status for r in held} == {"sent"}


def test_dropped_when_the_player_moved_meanwhile(make_app: Callable[..., Flask],
                                                 receiver: Receiver) -> None:
    app, client, gid, tokens = _two_people(make_app, receiver)
    mover = _game_state(app, gid)["current"]
    other = 1 - mover
    _look(client, gid, tokens[other])
    looked = _utc(_seat(app, gid, other).last_seen_at)
    _finish_turn(client, gid, tokens[mover])
    held = _your_turn(app, gid, other, "email") + _your_turn(app, gid, other, "webhook")
    assert len(held) == 2
    _finish_turn(client, gid, tokens[other])  # they saw it was their turn, and played it
    sent_before = len(receiver.at(f"/{['ann', 'bob'][other]}"))
    run_worker(app, FakeClock(looked + timedelta(seconds=ACTIVE)), passes=5)
    for row in held:
        now = _refresh(app, row)
        assert now.status == "dropped"
        assert now.attempts == 0
    assert [r.json["type"] for r in receiver.at(f"/{['ann', 'bob'][other]}")][sent_before:] \
        .count("game.your_turn") == 0


def test_the_movers_own_looks_do_not_hold_the_next_seat(make_app: Callable[..., Flask],
                                                        receiver: Receiver) -> None:
    app, client, gid, tokens = _two_people(make_app, receiver)
    mover = _game_state(app, gid)["current"]
    other = 1 - mover
    _finish_turn(client, gid, tokens[mover])  # the mover read and played; the other is away
    rows_now = _your_turn(app, gid, other, "email") + _your_turn(app, gid, other, "webhook")
    assert rows_now
    assert all("held" not in r.payload["data"] for r in rows_now)
    run_worker(app, passes=3)
    assert {_refresh(app, r).status for r in rows_now} == {"sent"}


LIMIT = 4 * 3600


def _dora_and_a_bot(make_app: Callable[..., Flask], receiver: Receiver,
                    **config: Any) -> tuple[Flask, FlaskClient, str, str, str]:
    """Dora and a greedy bot, a 4-hour turn limit; returns the app, its client, the game, her
    token and the host's (a host's read is not her look)."""
    app = _app(make_app, **config)
    client = app.test_client()
    for _ in range(10):
        game = create(client, [{"name": "dora", "email": DORA,
                                "webhook_url": receiver.url("/dora")}, {"bot": "greedy"}],
                      turn_time_limit=LIMIT, options={"target_score": 10_000})
        if game["status"] == "active":
            break
    tokens = player_tokens(client, game)
    return app, client, game["id"], tokens[0], game["host_token"]


def _time_out(app: Flask, game_id: str) -> None:
    """The worker's clock at the current turn's deadline: the timeout policy plays it."""
    deadline = _utc(_game(app, game_id).turn_deadline)
    turn = _game_state(app, game_id)["turn_no"]
    run_worker(app, FakeClock(deadline), passes=3)
    assert _game_state(app, game_id)["turn_no"] > turn


def test_one_email_until_she_comes_back(make_app: Callable[..., Flask], receiver: Receiver,
                                        smtp: SmtpSink) -> None:
    app, client, gid, token, _host = _dora_and_a_bot(
        make_app, receiver, ACTIVE_SECONDS=0, SMTP_HOST="127.0.0.1", SMTP_PORT=smtp.port,
        SMTP_SECURITY="none")
    assert _game_state(app, gid)["current"] == 0  # the bot has played up to her
    assert len(_your_turn(app, gid, 0, "email")) == 1
    for missed in range(1, 4):  # the deadline plays three of her turns: no email after the first
        _time_out(app, gid)
        assert len(_your_turn(app, gid, 0, "email")) == 1
        assert len(_your_turn(app, gid, 0, "webhook")) == missed + 1  # programs: every turn
        assert _seat(app, gid, 0).turns_missed == missed
    _look(client, gid, token)  # she comes back, and leaves again
    _time_out(app, gid)
    emails = _your_turn(app, gid, 0, "email")
    assert len(emails) == 2
    assert emails[-1].payload["data"]["turns_missed"] == 4
    assert _seat(app, gid, 0).turns_missed == 0
    run_worker(app, FakeClock(_utc(_game(app, gid).turn_deadline)), passes=10)
    turns = [m for m in smtp.messages if m["X-DOS-Event"] == "your_turn"]
    assert len(turns) == 2
    assert "4 of your turns came and went" in text_of(turns[-1])
    assert "came and went" not in text_of(turns[0])


def test_a_held_email_dropped_by_the_deadline_leaves_the_next_turn_its_email(
        make_app: Callable[..., Flask], receiver: Receiver) -> None:
    active = LIMIT + 3600  # the deadline comes before the hold ends
    app, client, gid, token, _host = _dora_and_a_bot(make_app, receiver, ACTIVE_SECONDS=active)
    _finish_turn(client, gid, token)  # she plays, and her next turn begins while she looks
    held = _your_turn(app, gid, 0, "email")[-1]
    assert held.payload["data"]["held"] is True
    _time_out(app, gid)  # she went away: the deadline plays that turn
    emails = _your_turn(app, gid, 0, "email")
    assert emails[-1].id != held.id  # the new turn has its own email, not kept back
    assert emails[-1].payload["data"]["held"] is True
    assert emails[-1].payload["data"]["turns_missed"] == 1
    looked = _utc(_seat(app, gid, 0).last_seen_at)
    run_worker(app, FakeClock(looked + timedelta(seconds=active)), passes=5)
    assert _refresh(app, held).status == "dropped"
    assert _refresh(app, emails[-1]).status == "sent"  # exactly one email for the two turns
    assert _seat(app, gid, 0).turn_notified_at is not None


def test_a_move_by_her_is_coming_back(make_app: Callable[..., Flask],
                                      receiver: Receiver) -> None:
    app, client, gid, token, host = _dora_and_a_bot(make_app, receiver, ACTIVE_SECONDS=0)
    turn = _game_state(app, gid)["turn_no"]
    for _ in range(20):  # she plays without reading (the host's reads give the version)
        version = _look(client, gid, host)["version"]
        answer = client.post(f"/api/games/{gid}/actions", headers=auth(token),
                             json={"version": version, "number": 1})
        assert answer.status_code == 200, answer.get_data(as_text=True)
        if _game_state(app, gid)["turn_no"] != turn:
            break
    assert _game(app, gid).status == "active"
    assert _seat(app, gid, 0).last_seen_at is not None  # her move counted as a look
    assert len(_your_turn(app, gid, 0, "email")) == 2  # so her next turn has its email


def test_reminders_she_chose(make_app: Callable[..., Flask], receiver: Receiver) -> None:
    app, client, gid, token, host = _dora_and_a_bot(make_app, receiver)
    answer = client.put(f"/api/games/{gid}/seats/0/notifications", headers=auth(token),
                        json={"reminders": ["1h", "50%"]})
    assert answer.status_code == 200, answer.get_data(as_text=True)
    assert answer.get_json()["reminders"] == ["50%", "1h"]
    game = _game(app, gid)
    started, deadline = _utc(game.turn_started_at), _utc(game.turn_deadline)
    # she has not looked since the turn began (the invitation was read by the host)

    def reminders() -> list[NotificationRow]:
        return rows(app, event="reminder", game_id=gid, channel="email")

    run_worker(app, FakeClock(started + timedelta(seconds=LIMIT / 2 - 1)))
    assert reminders() == []
    clock = FakeClock(started + timedelta(seconds=LIMIT / 2))
    run_worker(app, clock)
    run_worker(app, clock)
    assert len(reminders()) == 1  # 50%, once
    clock.set(deadline - timedelta(seconds=3601))
    run_worker(app, clock)
    assert len(reminders()) == 1
    clock.set(deadline - timedelta(seconds=3600))
    run_worker(app, clock)
    run_worker(app, clock)
    assert len(reminders()) == 2  # 1h before the deadline, once
    assert _game(app, gid).reminders_sent == ["50%", "1h"]
    assert _look(client, gid, host)["status"] == "active"


def test_no_reminder_after_a_look(make_app: Callable[..., Flask], receiver: Receiver) -> None:
    app, client, gid, token, _host = _dora_and_a_bot(make_app, receiver)
    _finish_turn(client, gid, token)  # her next turn begins now, by the wall clock
    game = _game(app, gid)
    assert game.status == "active"  # nobody goes out in one turn with a target of 10 000
    _look(client, gid, token)  # she saw her turn come
    started = _utc(game.turn_started_at)
    assert _utc(_seat(app, gid, 0).last_seen_at) >= started
    run_worker(app, FakeClock(started + timedelta(seconds=0.8 * LIMIT)), passes=2)
    assert rows(app, event="reminder", game_id=gid) == []
    assert _game(app, gid).reminders_sent == ["80%"]  # its moment passed: never later


def test_reminders_off_and_default(make_app: Callable[..., Flask],
                                   receiver: Receiver) -> None:
    app, client, gid, token, _host = _dora_and_a_bot(make_app, receiver)
    url = f"/api/games/{gid}/seats/0/notifications"
    assert client.put(url, headers=auth(token), json={}).get_json()["reminders"] == ["80%"]
    assert client.put(url, headers=auth(token),
                      json={"reminders": []}).get_json()["reminders"] == []
    started = _utc(_game(app, gid).turn_started_at)
    run_worker(app, FakeClock(started + timedelta(seconds=0.9 * LIMIT)), passes=2)
    assert rows(app, event="reminder", game_id=gid) == []
    assert client.put(url, headers=auth(token),
                      json={"reminders": None}).get_json()["reminders"] == ["80%"]
    assert _seat(app, gid, 0).reminders is None


@pytest.mark.parametrize("bad", [["90"], ["0%"], ["100%"], ["1d"], ["h"], "50%", [50],
                                 ["1h", "2h", "3h", "4h", "5h", "6h", "7h"], ["x" * 5000]])
def test_bad_reminders_are_refused(make_app: Callable[..., Flask], receiver: Receiver,
                                   bad: Any) -> None:
    app, client, gid, token, _host = _dora_and_a_bot(make_app, receiver)
    answer = client.put(f"/api/games/{gid}/seats/0/notifications", headers=auth(token),
                        json={"reminders": bad})
    assert answer.status_code == 422, answer.get_data(as_text=True)
    assert answer.mimetype == "application/problem+json"
    assert "reminders" in answer.get_data(as_text=True)
    assert _seat(app, gid, 0).reminders is None  # nothing changed


def test_a_look_keeps_the_etag(make_app: Callable[..., Flask], receiver: Receiver) -> None:
    app, client, gid, tokens = _two_people(make_app, receiver)
    first = client.get(f"/api/games/{gid}", headers=auth(tokens[0]))
    assert _seat(app, gid, 0).last_seen_at is not None
    again = client.get(f"/api/games/{gid}", headers={**auth(tokens[0]),
                                                      "If-None-Match": first.headers["ETag"]})
    assert again.status_code == 304
    assert _game(app, gid).version == first.get_json()["version"]


def test_looks_are_throttled(make_app: Callable[..., Flask], receiver: Receiver) -> None:
    app, client, gid, tokens = _two_people(make_app, receiver, LOOK_EVERY_SECONDS=3600)
    _look(client, gid, tokens[0])
    first = _seat(app, gid, 0).last_seen_at
    for _ in range(3):
        _look(client, gid, tokens[0])
        client.get(f"/api/games/{gid}/actions", headers=auth(tokens[0]))
        client.get(f"/api/games/{gid}/events", headers=auth(tokens[0]))
    assert _seat(app, gid, 0).last_seen_at == first  # one write an hour


def test_a_look_does_not_wait_behind_a_writer(make_app: Callable[..., Flask],
                                              receiver: Receiver) -> None:
    """A look writes the seat's row on its own, outside the reader's transaction; on
    PostgreSQL a look at a seat whose row a writer holds is skipped instead of waiting (the
    next look writes it)."""
    app, client, gid, tokens = _two_people(make_app, receiver)
    with app.app_context():
        postgresql = db.engine.dialect.name == "postgresql"
    if postgresql:
        with app.app_context(), db.engine.connect() as writer:
            writer.execute(db.select(SeatRow.id).where(SeatRow.game_id == gid)
                           .with_for_update())
            # A look that waited for the writer would never end: the writer is this thread's.
            reader = threading.Thread(target=_look, args=(client, gid, tokens[0]), daemon=True)
            reader.start()
            reader.join(60)
            assert not reader.is_alive()
            assert _seat(app, gid, 0).last_seen_at is None
            writer.rollback()
    _look(client, gid, tokens[0])
    assert _seat(app, gid, 0).last_seen_at is not None  # committed by the look itself


def test_a_look_is_one_statement_without_a_transaction_around_it(
        make_app: Callable[..., Flask], receiver: Receiver) -> None:
    """On PostgreSQL the look's UPDATE runs in autocommit: no BEGIN and COMMIT round trips
    around it; the pooled connection is back in transaction mode for the next request."""
    app, client, gid, tokens = _two_people(make_app, receiver)
    with app.app_context():
        engine = db.engine
    looks: list[tuple[Any, bool]] = []  # (the driver's connection, in autocommit then)

    def seen(connection: Any, _cursor: Any, statement: str, *_: Any) -> None:
        if "last_seen_at" in statement and statement.lstrip().upper().startswith("UPDATE"):
            driver = connection.connection.driver_connection
            looks.append((driver, bool(getattr(driver, "autocommit", True))))

    sa_event.listen(engine, "before_cursor_execute", seen)
    try:
        _look(client, gid, tokens[0])
    finally:
        sa_event.remove(engine, "before_cursor_execute", seen)
    assert _seat(app, gid, 0).last_seen_at is not None
    [(driver, autocommit)] = looks
    if engine.dialect.name == "postgresql":
        assert autocommit
        assert not driver.autocommit  # back in transaction mode for the next request's writes


def test_parse_reminders() -> None:
    assert attention.parse_reminders("1h, 50%  80% 30m 50%") == ["50%", "80%", "1h", "30m"]
    assert attention.parse_reminders("off") == []
    assert attention.parse_reminders(["2H before"]) == ["2h"]
    start = datetime(2026, 1, 1, tzinfo=UTC)
    due = attention.due_reminders(["50%", "1h", "2h"], start, 3600.0,
                                  start + timedelta(seconds=3599))
    assert due == ["50%"]  # 1h and 2h fall at or before the turn's start in a 1-hour turn
